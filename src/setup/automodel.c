/* stage_automodel.c - what ./setup stages for an AutoModel benchmark model, from the Hub.
 *
 * from_config rows need config.json only, plus the Python modules its "auto_map" names when
 * the YAML sets trust_remote_code; from_pretrained rows need the weights: the safetensors index,
 * every shard it lists (resumed through hf.c's .part files), after checking that the folder's
 * file system holds what is still missing.  Downloads go through hf.c (libcurl).
 */
#include "nemoperf/setup/automodel.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nemoperf/model/mbhf.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/setup/stage.h"

#define STAGE_AM_MAX_FILES 512

/* Unique names, in first-seen order. */
struct stage_am_names {
    char *v[STAGE_AM_MAX_FILES];
    size_t n;
};

static int stage_am_add(struct stage_am_names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return 0;
    if (s->n == STAGE_AM_MAX_FILES)
        return -1;
    if (!(s->v[s->n] = strdup(name)))
        return -1;
    s->n++;
    return 0;
}

static void stage_am_names_free(struct stage_am_names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

static double stage_am_file_size(const char *dir, const char *name, const char *suffix)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s%s", dir, name, suffix);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) ? (double)st.st_size : -1;
}

static enum np_status stage_am_fetch(struct np_hf_client *c, const char *repo, const char *name, int required,
                                     const char *dir, struct np_automodel_staged *out, struct np_error *err)
{
    enum np_hf_fetch what;
    long long bytes = 0;
    enum np_status st = np_hf_fetch_file(c, repo, NULL, name, dir, &what, &bytes, err);
    if (st != NP_OK)
        return st;
    if (what == NP_HF_ABSENT) {
        if (required)
            return np_error_set(err, NP_E_NOTFOUND, repo, 0, 0, "%s is not in the repository (HTTP 404) but is "
                                                                 "required",
                                name);
        out->absent++;
    } else if (what == NP_HF_PRESENT) {
        out->present++;
    } else {
        out->fetched++;
        out->bytes += (double)bytes;
    }
    return NP_OK;
}

/* Module files of config.json's auto_map ("configuration_x.Class" -> configuration_x.py; model/mbhf.c). */
static enum np_status stage_am_remote_code(const char *dir, struct stage_am_names *mods, struct np_error *err)
{
    char p[4096], **v = NULL;
    snprintf(p, sizeof p, "%s/config.json", dir);
    enum np_status st = np_hf_auto_map_modules(p, &v, err);
    for (char **m = v; st == NP_OK && m && *m; m++)
        if (stage_am_add(mods, *m) != 0)
            st = np_error_set(err, NP_E_NOMEM, p, 0, 0, "out of memory");
    np_strv_free(v);
    return st;
}

enum np_status np_automodel_stage(struct np_hf_client *c, const struct np_model *m, const char *dir,
                                  int (*free_space)(const char *path, double *bytes),
                                  struct np_automodel_staged *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    if (!m || !m->automodel || !m->hf_repo)
        return np_error_set(err, NP_E_USAGE, "stage", 0, 0, "not an AutoModel benchmark model");
    const char *repo = m->hf_repo;
    enum np_status st = stage_am_fetch(c, repo, "config.json", 1, dir, out, err);
    struct stage_am_names names = {{NULL}, 0};
    if (st == NP_OK && m->automodel->trust_remote_code) {
        st = stage_am_remote_code(dir, &names, err);
        for (size_t i = 0; st == NP_OK && i < names.n; i++)
            st = stage_am_fetch(c, repo, names.v[i], 1, dir, out, err);
        out->code_files = (int)names.n;
        stage_am_names_free(&names);
    }
    if (st != NP_OK || !m->automodel->from_pretrained)
        return st;
    /* the weights: generation config and tokenizer files are small and optional */
    static const char *const extra[] = {"generation_config.json", "tokenizer.json", "tokenizer_config.json",
                                        "special_tokens_map.json"};
    for (size_t i = 0; st == NP_OK && i < sizeof extra / sizeof extra[0]; i++)
        st = stage_am_fetch(c, repo, extra[i], 0, dir, out, err);
    if (st == NP_OK)
        st = stage_am_fetch(c, repo, "model.safetensors.index.json", 1, dir, out, err);
    double total = -1;
    char **shards = NULL;
    size_t nshards = 0;
    if (st == NP_OK) {
        char p[4096];
        snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
        st = np_hf_weight_index(p, np_hf_plain_name, STAGE_AM_MAX_FILES, &shards, &total, err);
    }
    while (shards && shards[nshards])
        nshards++;
    if (st == NP_OK) {
        /* what is still to come: the index's total size minus the shards (and .part prefixes) on disk */
        double have = 0;
        for (size_t i = 0; i < nshards; i++) {
            double f = stage_am_file_size(dir, shards[i], "");
            double part = f < 0 ? stage_am_file_size(dir, shards[i], ".part") : -1;
            have += f >= 0 ? f : part > 0 ? part : 0;
        }
        double need = total > have ? total - have : 0, avail = 0;
        out->weights_total = total;
        if (need > 0 && (free_space ? free_space : np_stage_free_space)(dir, &avail) == 0 && avail < need * 1.02)
            st = np_error_set(err, NP_E_IO, dir, 0, 0,
                              "%s: the weights need %.1f GB more (%.1f GB in all, %zu shards) but only %.1f GB are "
                              "free there; free space or use another STAGE_PATH (what is downloaded is kept)",
                              repo, need / 1e9, total / 1e9, nshards, avail / 1e9);
    }
    for (size_t i = 0; st == NP_OK && i < nshards; i++)
        st = stage_am_fetch(c, repo, shards[i], 1, dir, out, err);
    out->shards = (int)nshards;
    np_strv_free(shards);
    return st;
}
