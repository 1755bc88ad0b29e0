/* reconcile.c - settle "submitting"/"unknown" launch records by asking the scheduler.
 *
 * The job carries its manifest's tag as its comment; the backend's find() lists the
 * jobs with that tag, and the folder's sbatch_<job>_<id>.out (written when the job ran)
 * is evidence too.  The settled record is written through np_manifest_store (atomic, or
 * in place on a full disk).  np_reconcile_existing finds a launch's earlier live jobs.
 */
#include "nemoperf/launch/reconcile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/launch/lock.h"
#include "nemoperf/launch/manifest.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/launch/wait.h"

#define RECONCILE_DEPTH 4

void np_reconcile_free(struct np_reconcile *r)
{
    if (!r)
        return;
    free(r->dir);
    free(r->state);
    free(r->job_id);
    free(r->job_state);
    free(r->job_name);
    free(r->message);
    memset(r, 0, sizeof *r);
}

static char *reconcile_dup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static void reconcile_say(struct np_reconcile *r, enum np_reconcile_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reconcile_say(struct np_reconcile *r, enum np_reconcile_outcome o, const char *fmt, ...)
{
    r->outcome = o;
    free(r->message);
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&r->message, fmt, ap) < 0)
        r->message = NULL;
    va_end(ap);
}

/* The id of the job whose output file sbatch_<job_name>_<id>.out is in dir (the lowest
 * id when several), or NULL. */
static char *reconcile_output_id(const char *dir, const char *job_name)
{
    if (!job_name)
        return NULL;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t pl = strlen("sbatch_") + strlen(job_name) + 1;
    char *best = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, "sbatch_", 7) != 0 || strncmp(n + 7, job_name, strlen(job_name)) != 0 || n[pl - 1] != '_')
            continue;
        const char *id = n + pl;
        size_t k = 0;
        while (isdigit((unsigned char)id[k]))
            k++;
        if (k == 0 || k > 20 || strcmp(id + k, ".out") != 0)
            continue;
        if (!best || strlen(best) > k || (strlen(best) == k && strncmp(id, best, k) < 0)) {
            free(best);
            best = strndup(id, k);
        }
    }
    closedir(d);
    return best;
}

/* Write the settled record: state, submitted, job_id, and how it was settled. */
static enum np_status reconcile_record(json_t *m, const char *dir, const char *state, const char *job_id,
                                       const char *how, struct np_reconcile *r, struct np_error *err)
{
    const char *was = np_manifest_state(m);
    /* the record may have been settled meanwhile (its launch finished): never overwrite that */
    json_t *now_rec = NULL;
    if (np_manifest_load(dir, &now_rec, err) != NP_OK)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "the record changed while it was reconciled: %s", err->text);
    int same = strcmp(np_manifest_state(now_rec), was) == 0;
    json_decref(now_rec);
    if (!same)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "the record was settled meanwhile by its launch; left as it is");
    json_t *rec = json_object();
    char when[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int bad = !rec;
    if (!bad) {
        bad |= json_object_set_new(rec, "time", json_string(when));
        bad |= json_object_set_new(rec, "was", json_string(was));
        bad |= json_object_set_new(rec, "how", json_string(how));
        json_t *e = json_object_get(m, "error");
        if (json_is_string(e)) /* what the submission said is kept here */
            bad |= json_object_set(rec, "error", e);
        bad |= json_object_set_new(m, "state", json_string(state));
        bad |= json_object_set_new(m, "submitted", json_boolean(strcmp(state, NP_STATE_SUBMITTED) == 0));
        bad |= json_object_set_new(m, "job_id", job_id ? json_string(job_id) : json_null());
        if (job_id)
            bad |= json_object_set_new(m, "error", json_null());
        else
            bad |= json_object_set_new(m, "error", json_string(how));
        bad |= json_object_set_new(m, "reconciled", rec);
        rec = NULL;
        json_object_del(m, "launcher");
    }
    json_decref(rec);
    if (bad)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    return np_manifest_store(dir, m, 0, &r->in_place, err);
}

enum np_status np_reconcile_dir(struct np_backend *b, const char *dir, struct np_reconcile *r)
{
    memset(r, 0, sizeof *r);
    if (!(r->dir = strdup(dir)))
        return NP_E_NOMEM;
    json_t *m = NULL;
    struct np_error err;
    enum np_status st = np_manifest_load(dir, &m, &err);
    if (st != NP_OK) {
        char t[sizeof err.source + sizeof err.text + 32];
        np_error_format(&err, t, sizeof t);
        reconcile_say(r, NP_RECONCILE_FAILED, "%s", t);
        return r->message ? NP_OK : NP_E_NOMEM;
    }
    const char *state = np_manifest_state(m);
    const char *tag = json_string_value(json_object_get(m, "tag"));
    const char *id = json_string_value(json_object_get(m, "job_id"));
    r->job_name = reconcile_dup(json_string_value(json_object_get(json_object_get(m, "config"), "job_name")));
    r->job_id = reconcile_dup(id);
    r->state = reconcile_dup(state);
    int unsettled = strcmp(state, NP_STATE_SUBMITTING) == 0 || strcmp(state, NP_STATE_UNKNOWN) == 0;
    if (!unsettled) {
        reconcile_say(r, NP_RECONCILE_RECORDED, "recorded already: %s%s%s", state, id ? ", job " : "", id ? id : "");
        json_decref(m);
        return r->message ? NP_OK : NP_E_NOMEM;
    }
    if (strcmp(state, NP_STATE_SUBMITTING) == 0 && np_manifest_launcher_alive(m)) {
        reconcile_say(r, NP_RECONCILE_UNREACHABLE, "still submitting: nemoperf-launch (pid %lld) is submitting it now",
                      (long long)json_integer_value(json_object_get(json_object_get(m, "launcher"), "pid")));
        json_decref(m);
        return r->message ? NP_OK : NP_E_NOMEM;
    }
    /* the launch is gone, but the sbatch it started may still run (it holds the experiment's
     * lock): the job may reach the queue after this look (issue 23) */
    const json_t *cfg = json_object_get(m, "config");
    const char *sp = json_string_value(json_object_get(cfg, "stage_path"));
    const char *ex = json_string_value(json_object_get(cfg, "experiment"));
    char lwhy[800];
    if (strcmp(state, NP_STATE_SUBMITTING) == 0 && sp && ex && np_launch_lock_busy(sp, ex, lwhy, sizeof lwhy)) {
        reconcile_say(r, NP_RECONCILE_UNREACHABLE, "still submitting: its launch is gone but %s; reconcile again "
                      "once it has ended", lwhy);
        json_decref(m);
        return r->message ? NP_OK : NP_E_NOMEM;
    }
    /* ask the scheduler for the job carrying the tag */
    struct np_job_list found = {0};
    enum np_status fst = NP_E_INVALID;
    struct np_error ferr = {{0}, 0, 0, {0}};
    if (!tag)
        np_error_set(&ferr, NP_E_INVALID, "", 0, 0, "the record has no tag to look for");
    else if (b && b->find)
        fst = b->find(b, tag, r->job_name, &found, &ferr);
    else
        np_error_set(&ferr, NP_E_INVALID, "", 0, 0, "no scheduler to ask");
    char *out_id = reconcile_output_id(dir, r->job_name);
    const char *new_id = NULL, *how = NULL;
    char how_buf[600];
    if (fst == NP_OK && found.n > 0) {
        size_t best = 0; /* the lowest id when a tag is carried twice (never seen) */
        for (size_t i = 1; i < found.n; i++)
            if (strlen(found.jobs[i].job_id) < strlen(found.jobs[best].job_id) ||
                (strlen(found.jobs[i].job_id) == strlen(found.jobs[best].job_id) &&
                 strcmp(found.jobs[i].job_id, found.jobs[best].job_id) < 0))
                best = i;
        new_id = found.jobs[best].job_id;
        r->job_state = reconcile_dup(found.jobs[best].state);
        snprintf(how_buf, sizeof how_buf, "the scheduler has job %s (%s) carrying tag %s%s", new_id,
                 found.jobs[best].state, tag, found.n > 1 ? " (and more jobs with it: see squeue)" : "");
    } else if (out_id) {
        new_id = out_id;
        snprintf(how_buf, sizeof how_buf, "the job's output file sbatch_%s_%s.out is in the folder (the scheduler %s)",
                 r->job_name, out_id, fst == NP_OK ? "no longer lists it" : "could not be asked");
    } else if (fst == NP_OK) {
        snprintf(how_buf, sizeof how_buf, "no job carrying tag %s is known to the scheduler and the folder has no "
                 "output of one: not submitted", tag);
    }
    how = how_buf;
    if (fst != NP_OK && !out_id) {
        reconcile_say(r, NP_RECONCILE_UNREACHABLE, "still %s: cannot ask the scheduler: %s%s%s", state, ferr.source,
                      ferr.source[0] ? ": " : "", ferr.text);
    } else {
        st = reconcile_record(m, dir, new_id ? NP_STATE_SUBMITTED : NP_STATE_NOT_SUBMITTED, new_id, how, r, &err);
        if (st == NP_OK) { /* state pointed into the old record: r->state holds a copy */
            char *was = r->state;
            r->state = strdup(new_id ? NP_STATE_SUBMITTED : NP_STATE_NOT_SUBMITTED);
            free(r->job_id);
            r->job_id = reconcile_dup(new_id);
            reconcile_say(r, new_id ? NP_RECONCILE_FOUND : NP_RECONCILE_ABSENT, "was %s; %s", was ? was : "?", how);
            free(was);
        } else {
            char t[sizeof err.source + sizeof err.text + 32];
            np_error_format(&err, t, sizeof t);
            reconcile_say(r, NP_RECONCILE_FAILED, "%s; but the record could not be rewritten: %s", how, t);
            if (new_id) { /* the caller prints it: the id must not be lost */
                free(r->job_id);
                r->job_id = strdup(new_id);
            }
        }
    }
    free(out_id);
    np_job_list_free(&found);
    json_decref(m);
    return r->message ? NP_OK : NP_E_NOMEM;
}

enum np_status np_reconcile_dirs(struct np_backend *b, char *const *dirs, size_t n, struct np_reconcile *r)
{
    for (size_t i = 0; i < n; i++)
        memset(&r[i], 0, sizeof r[i]);
    for (size_t i = 0; i < n; i++)
        if (np_reconcile_dir(b, dirs[i], &r[i]) != NP_OK)
            return NP_E_NOMEM;
    return NP_OK;
}

/* Append dir to v (count *n) when it holds a manifest; then its subfolders (sorted). */
static int reconcile_walk(const char *dir, int depth, char ***v, size_t *n)
{
    char mp[4200];
    struct stat st;
    if (snprintf(mp, sizeof mp, "%s/%s", dir, NP_MANIFEST_NAME) < (int)sizeof mp && lstat(mp, &st) == 0) {
        char **nv = realloc(*v, (*n + 2) * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        if (!(nv[*n] = strdup(dir)))
            return -1;
        nv[++*n] = NULL;
        return 0; /* a job folder: nothing of ours below it */
    }
    if (depth >= RECONCILE_DEPTH)
        return 0;
    struct dirent **names = NULL;
    int k = scandir(dir, &names, NULL, alphasort);
    int rc = 0;
    for (int i = 0; i < k; i++) {
        const char *nm = names[i]->d_name;
        if (rc == 0 && nm[0] != '.') {
            char sub[4200];
            if (snprintf(sub, sizeof sub, "%s/%s", dir, nm) < (int)sizeof sub && lstat(sub, &st) == 0 &&
                S_ISDIR(st.st_mode))
                rc = reconcile_walk(sub, depth + 1, v, n);
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

enum np_status np_reconcile_collect(char *const *paths, size_t n, char ***out, struct np_error *err)
{
    *out = NULL;
    char **v = calloc(1, sizeof *v);
    size_t count = 0;
    if (!v)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            np_strv_free(v);
            return np_error_set(err, NP_E_NOTFOUND, paths[i], 0, 0, "%s", strerror(errno));
        }
        if (!S_ISDIR(st.st_mode)) {
            np_strv_free(v);
            return np_error_set(err, NP_E_NOTFOUND, paths[i], 0, 0,
                                "not a folder; allowed: a launch folder holding %s, or a folder above such folders",
                                NP_MANIFEST_NAME);
        }
        size_t before = count;
        if (reconcile_walk(paths[i], 0, &v, &count) != 0) {
            np_strv_free(v);
            return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
        }
        if (count == before) {
            np_strv_free(v);
            return np_error_set(err, NP_E_NOTFOUND, paths[i], 0, 0,
                                "no %s in it or in the %d folder levels below it: not a folder made by nemoperf-launch",
                                NP_MANIFEST_NAME, RECONCILE_DEPTH);
        }
    }
    *out = v;
    return NP_OK;
}

enum np_status np_reconcile_existing(struct np_backend *b, const char *stage_path, const char *experiment,
                                     const char *job_name, struct np_reconcile **out, size_t *n,
                                     struct np_error *err)
{
    *out = NULL;
    *n = 0;
    struct np_buf pb;
    np_buf_init(&pb);
    np_buf_appendf(&pb, "%s/experiments/%s", stage_path, experiment);
    char *top = np_buf_steal(&pb);
    if (!top)
        return np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    struct dirent **names = NULL;
    int k = scandir(top, &names, NULL, alphasort);
    struct np_reconcile *res = NULL;
    size_t nres = 0;
    enum np_status st = NP_OK;
    for (int i = 0; i < k; i++) {
        const char *nm = names[i]->d_name;
        char dir[4200], mp[4300];
        struct stat sb;
        if (st == NP_OK && nm[0] != '.' &&
            snprintf(dir, sizeof dir, "%s/%s/%s", top, nm, job_name) < (int)sizeof dir &&
            snprintf(mp, sizeof mp, "%s/%s", dir, NP_MANIFEST_NAME) < (int)sizeof mp && lstat(mp, &sb) == 0) {
            struct np_reconcile *nr = realloc(res, (nres + 1) * sizeof *nr);
            if (!nr) {
                st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
            } else {
                res = nr;
                if (np_reconcile_dir(b, dir, &res[nres]) != NP_OK)
                    st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
                nres++;
            }
        }
        free(names[i]);
    }
    free(names);
    free(top);
    /* which of the recorded jobs are still alive: one query for all of them */
    char **ids = calloc(nres + 1, sizeof *ids);
    size_t nids = 0;
    if (!ids && st == NP_OK)
        st = np_error_set(err, NP_E_NOMEM, "", 0, 0, "out of memory");
    for (size_t i = 0; ids && i < nres; i++)
        if (res[i].job_id && res[i].state && strcmp(res[i].state, NP_STATE_SUBMITTED) == 0)
            ids[nids++] = res[i].job_id;
    struct np_job_list alive = {0};
    enum np_status qst = NP_E_INVALID;
    struct np_error qerr = {{0}, 0, 0, {0}};
    if (st == NP_OK && nids > 0 && b && b->query)
        qst = b->query(b, ids, nids, &alive, &qerr);
    size_t keep = 0;
    for (size_t i = 0; i < nres; i++) {
        int live = 0;
        struct np_reconcile *r = &res[i];
        if (r->outcome == NP_RECONCILE_UNREACHABLE || r->outcome == NP_RECONCILE_FAILED) {
            live = 1; /* cannot tell: the job may exist */
        } else if (r->job_id && r->state && strcmp(r->state, NP_STATE_SUBMITTED) == 0) {
            if (qst != NP_OK) {
                live = nids > 0 && st == NP_OK;
                if (live && !r->job_state)
                    reconcile_say(r, r->outcome, "job %s: cannot ask the scheduler whether it still runs: %s", r->job_id,
                                  qerr.text);
            }
            for (size_t j = 0; qst == NP_OK && j < alive.n; j++)
                if (strcmp(alive.jobs[j].job_id, r->job_id) == 0) {
                    free(r->job_state);
                    r->job_state = strdup(alive.jobs[j].state);
                    live = !np_job_state_final(np_job_state_parse(alive.jobs[j].state));
                }
        }
        if (live && st == NP_OK)
            res[keep++] = *r;
        else
            np_reconcile_free(r);
    }
    np_job_list_free(&alive);
    free(ids);
    if (st != NP_OK) {
        for (size_t i = 0; i < keep; i++)
            np_reconcile_free(&res[i]);
        free(res);
        return st;
    }
    if (keep == 0) {
        free(res);
        res = NULL;
    }
    *out = res;
    *n = keep;
    return NP_OK;
}
