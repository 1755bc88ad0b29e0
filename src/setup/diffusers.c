/* diffusers.c - stage a Diffusers pipeline from the Hub for a job that reads it offline (DFM's AutoModel rows).
 *
 * DFM 9eaace1 dfm/src/automodel/recipes/train.py:87-99 loads the whole pipeline (DiffusionPipeline /
 * WanPipeline.from_pretrained of _diffusers/auto_diffusion_pipeline.py:111-200: text encoder, tokenizer, VAE,
 * scheduler, transformer), from the folder model_index.json describes.  So: the repo's file list, model_index.json
 * (its components are its keys whose value is a [library, class] pair), every file under those components'
 * folders, then model_index.json in place, last.  Downloads go through hf.c (libcurl, .part files resumed).
 */
#include "nemoperf/setup/diffusers.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/setup/stage.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

/* Fetch <repo>/<path> into final (its folder made first); counts into out. */
static enum np_status diffusers_fetch(struct np_hf_client *c, const char *repo, const char *path, const char *final,
                                      struct np_diffusers_staged *out, struct np_error *err)
{
    char *url = NULL, *folder = NULL, *label = NULL;
    if (asprintf(&url, "%s/%s/resolve/%s/%s", np_hf_endpoint(c), repo, NP_HF_DEFAULT_REVISION, path) < 0)
        url = NULL;
    if (asprintf(&label, "%s/%s", repo, path) < 0)
        label = NULL;
    const char *slash = strrchr(final, '/');
    folder = slash ? strndup(final, (size_t)(slash - final)) : NULL;
    enum np_status st = !url || !label || !folder ? np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory")
                                                  : np_stage_mkdirs(folder, err);
    enum np_hf_fetch what = NP_HF_ABSENT;
    long long bytes = 0;
    if (st == NP_OK)
        st = np_hf_fetch_url(c, url, label, final, &what, &bytes, err);
    if (st == NP_OK && what == NP_HF_ABSENT)
        st = np_error_set(err, NP_E_HTTP, label, 0, 0, "listed by the Hub but not served (HTTP 404)");
    if (st == NP_OK && what == NP_HF_FETCHED) {
        out->fetched++;
        out->bytes += bytes;
        np_notef("%s: downloaded %s (%lld bytes)", repo, path, bytes);
    } else if (st == NP_OK) {
        out->present++;
    }
    free(url);
    free(folder);
    free(label);
    return st;
}

/* 1 when path lies under one of the components' folders. */
static int diffusers_in_component(json_t *index, const char *path)
{
    const char *slash = strchr(path, '/'), *key;
    json_t *v;
    if (!slash)
        return 0;
    json_object_foreach(index, key, v) {
        if (json_is_array(v) && json_array_size(v) == 2 && json_is_string(json_array_get(v, 0)) &&
            strlen(key) == (size_t)(slash - path) && strncmp(key, path, (size_t)(slash - path)) == 0)
            return 1;
    }
    return 0;
}

enum np_status np_diffusers_stage(struct np_hf_client *c, const char *repo, const char *dir,
                                  struct np_diffusers_staged *out, struct np_error *err)
{
    struct np_diffusers_staged local;
    if (!out)
        out = &local;
    memset(out, 0, sizeof *out);
    char *final = NULL, *tmp = NULL;
    if (asprintf(&final, "%s/model_index.json", dir) < 0)
        final = NULL;
    if (asprintf(&tmp, "%s/.nemoperf-model_index.json", dir) < 0)
        tmp = NULL;
    if (!final || !tmp) {
        free(final);
        free(tmp);
        return np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory");
    }
    enum np_status st = NP_OK;
    if (access(final, F_OK) == 0) { /* written last: the folder is whole */
        out->present = 1;
        free(final);
        free(tmp);
        return NP_OK;
    }
    char **files = NULL;
    json_t *index = NULL;
    st = np_hf_list_files(c, repo, &files, err);
    if (st == NP_OK)
        st = diffusers_fetch(c, repo, "model_index.json", tmp, out, err);
    if (st == NP_OK) {
        json_error_t je;
        index = json_load_file(tmp, 0, &je);
        if (!json_is_object(index))
            st = np_error_set(err, NP_E_PARSE, tmp, je.line, je.column, "model_index.json: %s",
                              index ? "expected an object" : je.text);
    }
    size_t ncomp = 0;
    for (size_t i = 0; st == NP_OK && files && files[i]; i++)
        if (diffusers_in_component(index, files[i])) {
            char *dest = NULL;
            if (asprintf(&dest, "%s/%s", dir, files[i]) < 0)
                st = np_error_set(err, NP_E_NOMEM, repo, 0, 0, "out of memory");
            else
                st = diffusers_fetch(c, repo, files[i], dest, out, err);
            free(dest);
            ncomp++;
        } else if (strcmp(files[i], "model_index.json") != 0) {
            out->skipped++;
        }
    if (st == NP_OK && ncomp == 0)
        st = np_error_set(err, NP_E_HTTP, repo, 0, 0,
                          "model_index.json names no component folder the repository holds files in");
    if (st == NP_OK && rename(tmp, final) != 0)
        st = np_error_set(err, NP_E_IO, final, 0, 0, "cannot rename %s into place: %s", tmp, strerror(errno));
    json_decref(index);
    np_strv_free(files);
    free(final);
    free(tmp);
    return st;
}
