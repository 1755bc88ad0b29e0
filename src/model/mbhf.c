/* mbhf.c - the Hugging Face files of the Megatron-Bridge rows (hf-files.tsv) and the offline check of an HF_HOME.
 *
 * The data names, per container/recipe/task, the Hub repo, revision and files the release's recipe reads
 * (AutoBridge's config.json, the tokenizer of a HuggingFaceTokenizer recipe); the check looks for them where
 * huggingface_hub looks with HF_HUB_OFFLINE=1: <HF_HOME>/hub/models--org--name/snapshots/<commit>/<file>.
 */
#include "nemoperf/model/mbhf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nemoperf/model/layout.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/util/shell.h"

enum { MBHF_CONTAINER, MBHF_RELEASE, MBHF_RECIPE, MBHF_TASK, MBHF_USE, MBHF_REPO, MBHF_REV, MBHF_FILES, MBHF_SOURCE,
       MBHF_NCOL };
static const char *const mbhf_cols[MBHF_NCOL] = {"container", "mb_release", "recipe", "task", "use",
                                                 "repo", "revision", "files", "source"};

static void mbhf_entry_free(struct np_mbhf_entry *e)
{
    free(e->container);
    free(e->release);
    free(e->recipe);
    free(e->task);
    free(e->use);
    free(e->repo);
    free(e->revision);
    free(e->source);
    for (size_t i = 0; i < e->nfiles; i++)
        free(e->files[i].name);
    free(e->files);
}

void np_mbhf_free(struct np_mbhf_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        mbhf_entry_free(&s->v[i]);
    free(s->v);
    free(s->path);
    memset(s, 0, sizeof *s);
}

int np_hf_plain_name(const char *s)
{
    if (!*s || *s == '.' || strlen(s) > 200)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            return 0;
    return 1;
}

static int mbhf_hex40(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
            return 0;
    return n == 40;
}

/* "a,b?,auto_map" -> e->files / e->auto_map; -1 with *bad the offending item */
static int mbhf_files(struct np_mbhf_entry *e, char *list, const char **bad)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    if (!(e->files = calloc(cap, sizeof *e->files)))
        return *bad = "out of memory", -1;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (strcmp(t, "auto_map") == 0) {
            e->auto_map = 1;
            continue;
        }
        size_t n = strlen(t);
        int req = !(n && t[n - 1] == '?');
        if (!req)
            t[n - 1] = '\0';
        if (!np_hf_plain_name(t))
            return *bad = t, -1;
        if (!(e->files[e->nfiles].name = strdup(t)))
            return *bad = "out of memory", -1;
        e->files[e->nfiles++].required = req;
    }
    return e->nfiles ? 0 : (*bad = list, -1);
}

static enum np_status mbhf_row(struct np_mbhf_set *s, char **cell, int line, struct np_error *err)
{
    struct np_mbhf_entry *v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v)
        return np_error_set(err, NP_E_NOMEM, s->path, line, 1, "out of memory");
    s->v = v;
    struct np_mbhf_entry *e = &s->v[s->n++];
    memset(e, 0, sizeof *e);
    e->line = line;
    char **dst[] = {&e->container, &e->release, &e->recipe, &e->task, &e->use, &e->repo, &e->revision};
    for (int c = 0; c < MBHF_FILES; c++)
        if (!(*dst[c] = strdup(cell[c])))
            return np_error_set(err, NP_E_NOMEM, s->path, line, 1, "out of memory");
    if (!(e->source = strdup(cell[MBHF_SOURCE])))
        return np_error_set(err, NP_E_NOMEM, s->path, line, 1, "out of memory");
    if (strcmp(e->use, "none") == 0) { /* the row reads nothing from the Hub: no repo, revision or files */
        if (strcmp(e->repo, "-") != 0 || strcmp(e->revision, "-") != 0 || strcmp(cell[MBHF_FILES], "-") != 0)
            return np_error_set(err, NP_E_PARSE, s->path, line, 1, "use none: repo, revision and files must be '-'");
        return NP_OK;
    }
    const char *slash = strchr(e->repo, '/');
    if (!slash || strchr(slash + 1, '/') || slash == e->repo || !slash[1])
        return np_error_set(err, NP_E_PARSE, s->path, line, 1, "repo: '%s' is not an org/name Hub id", e->repo);
    if (strcmp(e->use, "config") != 0 && strcmp(e->use, "tokenizer") != 0)
        return np_error_set(err, NP_E_PARSE, s->path, line, 1, "use: '%s', expected config, tokenizer or none", e->use);
    if (strcmp(e->revision, "main") != 0 && !mbhf_hex40(e->revision))
        return np_error_set(err, NP_E_PARSE, s->path, line, 1, "revision: '%s', expected main or a 40-hex commit",
                            e->revision);
    const char *bad = NULL;
    if (mbhf_files(e, cell[MBHF_FILES], &bad) != 0)
        return np_error_set(err, NP_E_PARSE, s->path, line, 1, "files: '%s' is not a plain file name of the repo",
                            bad);
    return NP_OK;
}

enum np_status np_mbhf_load(const char *dir, struct np_mbhf_set *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    char *d = dir ? strdup(dir) : np_data_path("megatron-bridge");
    out->path = d ? np_stage_join(d, "hf-files.tsv") : NULL;
    free(d);
    if (!out->path)
        return np_error_set(err, NP_E_NOMEM, "hf-files.tsv", 0, 0, "out of memory (or no data directory)");
    FILE *f = fopen(out->path, "r");
    if (!f) {
        enum np_status st = np_error_set(err, NP_E_IO, out->path, 0, 0, "cannot read the Megatron-Bridge Hub files "
                                                                        "list");
        np_mbhf_free(out);
        return st;
    }
    char buf[2048];
    int line = 0, header = 0;
    enum np_status st = NP_OK;
    while (st == NP_OK && fgets(buf, sizeof buf, f)) {
        line++;
        size_t n = strlen(buf);
        if (n && buf[n - 1] == '\n')
            buf[--n] = '\0';
        else if (!feof(f)) {
            st = np_error_set(err, NP_E_PARSE, out->path, line, 1, "line longer than %zu bytes", sizeof buf - 2);
            break;
        }
        if (buf[0] == '#' || buf[0] == '\0')
            continue;
        char *cell[MBHF_NCOL + 1];
        int nc = 0;
        for (char *p = buf; nc <= MBHF_NCOL;) {
            cell[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (nc != MBHF_NCOL) {
            st = np_error_set(err, NP_E_PARSE, out->path, line, 1, "%d columns, expected %d", nc, MBHF_NCOL);
            break;
        }
        if (!header) {
            for (int c = 0; c < MBHF_NCOL && st == NP_OK; c++)
                if (strcmp(cell[c], mbhf_cols[c]) != 0)
                    st = np_error_set(err, NP_E_PARSE, out->path, line, 1, "header: column %d is '%s', expected "
                                                                           "'%s'", c + 1, cell[c], mbhf_cols[c]);
            header = 1;
            continue;
        }
        st = mbhf_row(out, cell, line, err);
    }
    fclose(f);
    if (st == NP_OK && !out->n)
        st = np_error_set(err, NP_E_PARSE, out->path, line, 1, "no rows");
    if (st != NP_OK)
        np_mbhf_free(out);
    return st;
}

int np_mbhf_matches(const struct np_mbhf_entry *e, const char *container, const char *recipe, const char *task)
{
    return recipe && strcmp(e->recipe, recipe) == 0 && (!container || strcmp(e->container, container) == 0) &&
           (!task || strcmp(e->task, task) == 0);
}

size_t np_mbhf_count(const struct np_mbhf_set *s, const char *container, const char *recipe, const char *task)
{
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        n += (size_t)np_mbhf_matches(&s->v[i], container, recipe, task);
    return n;
}

const char *np_mbhf_newest_container(const struct np_mbhf_set *s, const char *recipe)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (np_mbhf_matches(&s->v[i], NULL, recipe, NULL))
            return s->v[i].container;
    return NULL;
}

int np_mbhf_commit(const char *hf_home, const struct np_mbhf_entry *e, char commit[41])
{
    if (mbhf_hex40(e->revision)) {
        memcpy(commit, e->revision, 41);
        return 0;
    }
    char *repo = np_hf_cache_repo_dir(hf_home, e->repo);
    if (!repo)
        return -1;
    char p[4096];
    snprintf(p, sizeof p, "%s/refs/%s", repo, e->revision);
    free(repo);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    char buf[64] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    if (!mbhf_hex40(buf))
        return -1;
    memcpy(commit, buf, 41);
    return 0;
}

enum np_status np_hf_auto_map_modules(const char *config_path, char ***mods, struct np_error *err)
{
    *mods = NULL;
    json_error_t je;
    json_t *cfg = json_load_file(config_path, 0, &je);
    if (!cfg)
        return np_error_set(err, NP_E_PARSE, config_path, je.line, je.column, "%s", je.text);
    struct np_strv v = {0};
    json_t *am = json_object_get(cfg, "auto_map");
    const char *key;
    json_t *val;
    enum np_status st = NP_OK;
    json_object_foreach(am, key, val) {
        size_t n = json_is_array(val) ? json_array_size(val) : 1;
        for (size_t i = 0; i < n && st == NP_OK; i++) {
            json_t *e = json_is_array(val) ? json_array_get(val, i) : val;
            if (!json_is_string(e))
                continue;
            const char *ref = json_string_value(e), *dot = strrchr(ref, '.');
            if (strstr(ref, "--")) /* "org/repo--module.Class": code of another repo; not ours to stage */
                continue;
            char mod[256];
            if (!dot || (size_t)(dot - ref) >= sizeof mod - 3)
                continue;
            snprintf(mod, sizeof mod, "%.*s.py", (int)(dot - ref), ref);
            if (!np_hf_plain_name(mod)) {
                st = np_error_set(err, NP_E_PARSE, config_path, 0, 0, "auto_map.%s: \"%s\" is not a module of this "
                                                                      "repo", key, ref);
                break;
            }
            int dup = 0;
            for (size_t k = 0; k < v.n; k++)
                dup |= strcmp(v.v[k], mod) == 0;
            if (!dup)
                np_strv_push(&v, mod);
        }
    }
    json_decref(cfg);
    char **out = np_strv_steal(&v);
    if (st == NP_OK && !out)
        st = np_error_set(err, NP_E_NOMEM, config_path, 0, 0, "out of memory");
    if (st != NP_OK) {
        np_strv_free(out);
        return st;
    }
    *mods = out;
    return NP_OK;
}

static int mbhf_have(const char *snap, const char *file)
{
    char p[4096];
    struct stat st;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", snap, file) >= sizeof p)
        return 0;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int np_mbhf_none(const struct np_mbhf_entry *e)
{
    return strcmp(e->use, "none") == 0;
}

int np_mbhf_missing(const struct np_mbhf_set *s, const char *container, const char *recipe, const char *task,
                    const char *hf_home, char *what, size_t cap)
{
    int any = 0;
    for (size_t i = 0; s && i < s->n; i++) {
        const struct np_mbhf_entry *e = &s->v[i];
        if (!np_mbhf_matches(e, container, recipe, task))
            continue;
        any = 1;
        if (np_mbhf_none(e))
            continue;
        char commit[41], snap[4096];
        char *repo = np_hf_cache_repo_dir(hf_home, e->repo);
        if (!repo || np_mbhf_commit(hf_home, e, commit) != 0) {
            size_t k = 0; /* the first file the row needs: launch names it */
            while (k + 1 < e->nfiles && !e->files[k].required)
                k++;
            snprintf(what, cap, "%s@%s: %s (not staged: no %s/refs/%s)", e->repo, e->revision,
                     e->nfiles ? e->files[k].name : "?", repo ? repo : "?", e->revision);
            free(repo);
            return 1;
        }
        snprintf(snap, sizeof snap, "%s/snapshots/%s", repo, commit);
        free(repo);
        for (size_t k = 0; k < e->nfiles; k++)
            if (e->files[k].required && !mbhf_have(snap, e->files[k].name)) {
                snprintf(what, cap, "%s@%s: %s", e->repo, e->revision, e->files[k].name);
                return 1;
            }
        if (e->auto_map) {
            char cfg[4200], **mods = NULL;
            struct np_error err = {0};
            snprintf(cfg, sizeof cfg, "%s/config.json", snap);
            if (np_hf_auto_map_modules(cfg, &mods, &err) != NP_OK) {
                snprintf(what, cap, "%s@%s: config.json's auto_map: %s", e->repo, e->revision, err.text);
                return 1;
            }
            for (char **m = mods; *m; m++)
                if (!mbhf_have(snap, *m)) {
                    snprintf(what, cap, "%s@%s: %s", e->repo, e->revision, *m);
                    np_strv_free(mods);
                    return 1;
                }
            np_strv_free(mods);
        }
    }
    return any ? 0 : -1;
}

int np_mbhf_staged(const char *stage, const char *container, const char *recipe, const char *task, char *missing,
                   size_t cap)
{
    struct np_mbhf_set set;
    struct np_error err = {0};
    if (np_mbhf_load(NULL, &set, &err) != NP_OK) {
        snprintf(missing, cap, "%s", err.text);
        return -1;
    }
    char *hf_home = np_stage_mbridge_hf_home(stage);
    int r = hf_home ? np_mbhf_missing(&set, container, recipe, task, hf_home, missing, cap) : -1;
    if (r == -1)
        snprintf(missing, cap, "%s", hf_home ? "no Hugging Face files listed for this row" : "out of memory");
    free(hf_home);
    np_mbhf_free(&set);
    return r == 0 ? 1 : r == 1 ? 0 : -1;
}
