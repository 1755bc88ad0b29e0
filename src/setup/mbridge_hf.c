/* mbridge_hf.c - stage the Hugging Face files of a Megatron-Bridge row into its jobs' HF_HOME (setup).
 *
 * The rows come from model/mbhf.c (hf-files.tsv); every file goes through hf.c (resumable, verified, atomic) into
 * the snapshot folder huggingface_hub reads with HF_HUB_OFFLINE=1, the auto_map modules of a trust_remote_code
 * config after its config.json, and a branch's ref last.
 */
#include "nemoperf/setup/mbridge_hf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/layout.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

static enum np_status mbridge_hf_fetch(struct np_hf_client *c, const struct np_mbhf_entry *e, const char *commit,
                                       const char *name, int required, const char *snap, struct np_mbhf_staged *out,
                                       struct np_error *err)
{
    enum np_hf_fetch what;
    long long bytes = 0;
    enum np_status st = np_hf_fetch_file(c, e->repo, commit, name, snap, &what, &bytes, err);
    if (st != NP_OK)
        return st;
    switch (what) {
    case NP_HF_FETCHED:
        out->fetched++;
        np_notef("%s: downloaded %s (%lld bytes)", e->repo, name, bytes);
        break;
    case NP_HF_PRESENT:
        out->present++;
        break;
    case NP_HF_ABSENT:
        if (required)
            return np_error_set(err, NP_E_NOTFOUND, e->repo, 0, 0, "%s is not in the repository at %s (HTTP 404) "
                                                                   "but Megatron-Bridge reads it (%s)", name, commit,
                                e->source);
        out->absent++;
        break;
    }
    return NP_OK;
}

/* refs/<branch> = commit, through a temporary file renamed over the old one */
static enum np_status mbridge_hf_ref(const char *repo_dir, const char *branch, const char *commit,
                                     struct np_error *err)
{
    char dir[4096], tmp[4200], ref[4200];
    snprintf(dir, sizeof dir, "%s/refs", repo_dir);
    snprintf(ref, sizeof ref, "%s/%s", dir, branch);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, branch);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "cannot create: %s", strerror(errno));
    FILE *f = fopen(tmp, "w");
    if (!f)
        return np_error_set(err, NP_E_IO, tmp, 0, 0, "cannot write: %s", strerror(errno));
    int bad = fputs(commit, f) == EOF;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, ref) != 0) {
        int e = errno;
        unlink(tmp);
        return np_error_set(err, NP_E_IO, ref, 0, 0, "cannot write: %s", strerror(e));
    }
    return NP_OK;
}

static enum np_status mbridge_hf_row(struct np_hf_client *c, const struct np_mbhf_entry *e, const char *hf_home,
                                     struct np_mbhf_staged *out, struct np_error *err)
{
    char commit[41];
    int branch = strcmp(e->revision, "main") == 0 || strlen(e->revision) != 40;
    if (branch) {
        char *sha = NULL;
        enum np_status st = np_hf_check_access(c, e->repo, NULL, &sha, err);
        if (st != NP_OK)
            return st;
        if (!sha || strlen(sha) != 40) {
            free(sha);
            return np_error_set(err, NP_E_PARSE, e->repo, 0, 0, "the Hub reports no 40-hex commit for %s",
                                e->revision);
        }
        memcpy(commit, sha, 41);
        free(sha);
    } else {
        memcpy(commit, e->revision, 41);
    }
    char *repo_dir = np_hf_cache_repo_dir(hf_home, e->repo);
    if (!repo_dir)
        return np_error_set(err, NP_E_NOMEM, e->repo, 0, 0, "out of memory");
    char snap[4200];
    snprintf(snap, sizeof snap, "%s/snapshots/%s", repo_dir, commit);
    enum np_status st = NP_OK;
    for (size_t k = 0; k < e->nfiles && st == NP_OK; k++)
        st = mbridge_hf_fetch(c, e, commit, e->files[k].name, e->files[k].required, snap, out, err);
    if (st == NP_OK && e->auto_map) { /* trust_remote_code: the modules config.json's auto_map names */
        char cfg[4300], **mods = NULL;
        snprintf(cfg, sizeof cfg, "%s/config.json", snap);
        st = np_hf_auto_map_modules(cfg, &mods, err);
        for (char **m = mods; st == NP_OK && m && *m; m++)
            st = mbridge_hf_fetch(c, e, commit, *m, 1, snap, out, err);
        np_strv_free(mods);
    }
    if (st == NP_OK && branch)
        st = mbridge_hf_ref(repo_dir, e->revision, commit, err);
    if (st == NP_OK)
        out->repos++;
    free(repo_dir);
    return st;
}

enum np_status np_mbhf_stage(struct np_hf_client *c, const struct np_mbhf_set *s, const char *container,
                             const char *recipe, const char *task, const char *hf_home, struct np_mbhf_staged *out,
                             struct np_error *err)
{
    memset(out, 0, sizeof *out);
    int any = 0;
    for (size_t i = 0; s && i < s->n; i++) {
        if (!np_mbhf_matches(&s->v[i], container, recipe, task))
            continue;
        any = 1;
        if (np_mbhf_none(&s->v[i])) /* reads nothing from the Hub */
            continue;
        enum np_status st = mbridge_hf_row(c, &s->v[i], hf_home, out, err);
        if (st != NP_OK)
            return st;
    }
    if (!any)
        return np_error_set(err, NP_E_NOTFOUND, s && s->path ? s->path : "hf-files.tsv", 0, 0,
                            "no Hugging Face files listed for %s%s%s%s%s", recipe ? recipe : "-",
                            container ? " of " : "", container ? container : "", task ? " " : "", task ? task : "");
    return NP_OK;
}

/* Append name to a ", "-separated list unless it is there. */
static void mbridge_hf_list(char *list, size_t cap, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
            return;
    if (strlen(list) + n + 3 < cap)
        snprintf(list + strlen(list), cap - strlen(list), "%s%s", *list ? ", " : "", name);
}

int np_mbhf_setup(const char *stage, const char *recipe, const char *container, const char *task,
                  struct np_hf_client *c, int dry_run, FILE *out)
{
    struct np_mbhf_set set;
    struct np_error err = {0};
    if (np_mbhf_load(NULL, &set, &err) != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    int rc = 0;
    char containers[128] = "", tasks[128] = ""; /* what the data has for the recipe, for the messages */
    for (size_t i = 0; i < set.n; i++)
        if (np_mbhf_matches(&set.v[i], NULL, recipe, NULL)) {
            mbridge_hf_list(containers, sizeof containers, set.v[i].container);
            if (!container || strcmp(container, set.v[i].container) == 0)
                mbridge_hf_list(tasks, sizeof tasks, set.v[i].task);
        }
    if (!np_mbhf_newest_container(&set, recipe)) {
        np_errorf("RECIPE: '%s' has no Megatron-Bridge Hub files listed (%s)", recipe, set.path);
        rc = 2;
    } else if (container && !np_mbhf_count(&set, container, recipe, NULL)) {
        np_errorf("CONTAINER: '%s' has no row of %s (allowed: %s)", container, recipe, containers);
        rc = 2;
    } else if (!container) {
        container = np_mbhf_newest_container(&set, recipe);
    }
    if (!rc && task && !np_mbhf_count(&set, container, recipe, task)) {
        np_errorf("TASK: '%s' is not a task of %s in %s (allowed: %s)", task, recipe, container, tasks);
        rc = 2;
    }
    char *hf_home = rc ? NULL : np_stage_mbridge_hf_home(stage);
    if (!rc && !hf_home)
        rc = 1;
    for (size_t i = 0; !rc && i < set.n; i++) {
        const struct np_mbhf_entry *e = &set.v[i];
        if (!np_mbhf_matches(e, container, recipe, task))
            continue;
        char files[512] = "";
        for (size_t k = 0; k < e->nfiles; k++)
            snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s%s", k ? "," : "", e->files[k].name,
                     e->files[k].required ? "" : "?");
        if (np_mbhf_none(e)) {
            fprintf(out, "hf       nothing from the Hub (%s)\n", e->source);
            continue;
        }
        if (dry_run) {
            fprintf(out, "hf       %s@%s -> %s (%s%s; %s, %s)\n", e->repo, e->revision, hf_home, files,
                    e->auto_map ? ",auto_map" : "", e->use, e->source);
            continue;
        }
        struct np_mbhf_entry one = *e; /* stage this row only */
        struct np_mbhf_set single = {&one, 1, set.path};
        struct np_mbhf_staged sd;
        enum np_status st = np_mbhf_stage(c, &single, container, recipe, e->task, hf_home, &sd, &err);
        if (st != NP_OK) {
            np_error_print(&err);
            rc = 1;
        }
        fprintf(out, "hf       %s@%s -> %s (%s for %s %s %s: downloaded %d, already staged %d, not in repo %d%s)\n",
                e->repo, e->revision, hf_home, e->use, container, recipe, e->task, sd.fetched, sd.present, sd.absent,
                st != NP_OK ? ", FAILED" : "");
    }
    free(hf_home);
    np_mbhf_free(&set);
    return rc;
}
