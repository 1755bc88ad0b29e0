/* diagnose.c - from FAIL to why: the diagnostics of every run of a parse (nemoperf-parse --nccl).
 *
 * Reads each run's log once, streamed: the step scanner reads every step (for the anomalies) and
 * hands the same bytes to the NCCL reader (breakdown, network facts, checkpoint durations, straggler
 * reports); then drift from the published row and the .nsys-rep files of the run's folder.  Findings that
 * need attention are appended to the run's note, which every report format shows.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/parse/diagnose.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/parse/scan.h"

#define DIAGNOSE_ASYNC_MIN ((off_t)16 << 20) /* smaller logs are read inline: a thread costs more than it saves */
/* the scanner's reads for --nccl: one slot of the NCCL reader's ring, small enough that the scanner, the copy
 * and the reader find the bytes in cache (4 MiB reads: about a quarter more of the scanning thread's CPU time
 * under perf, 3 MB more resident) */
#define DIAGNOSE_CHUNK ((size_t)1 << 20)

static int diagnose_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.nsys-rep files of dir/sub (sub "" or a folder under dir; regular files only: listed, never opened), named
 * "sub/name", appended to *v (n of them so far, NULL-terminated); the count. */
static size_t diagnose_nsys_in(const char *dir, const char *sub, char ***v, size_t n)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s%s%s", dir, *sub ? "/" : "", sub) >= (int)sizeof path)
        return n;
    DIR *d = opendir(path);
    if (!d)
        return n;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        struct stat sb;
        if (l <= 9 || strcmp(de->d_name + l - 9, ".nsys-rep") != 0 ||
            (de->d_type != DT_REG && (de->d_type != DT_UNKNOWN && de->d_type != DT_LNK)) ||
            (de->d_type != DT_REG && (fstatat(dirfd(d), de->d_name, &sb, 0) != 0 || !S_ISREG(sb.st_mode))))
            continue;
        char **nv = realloc(*v, (n + 2) * sizeof *nv);
        if (!nv)
            break;
        *v = nv;
        if (asprintf(&nv[n], "%s%s%s", sub, *sub ? "/" : "", de->d_name) < 0) {
            nv[n] = NULL;
            break;
        }
        nv[++n] = NULL;
    }
    closedir(d);
    return n;
}

/* The *.nsys-rep files of a run: beside its log and where nemoperf's jobs write them (the NeMo job's and the
 * synthetic workload's nsys -o <experiment>/nsys_profile/profile_%p, job/nemo.h NP_NEMO_NSYS_DIR), sorted, or NULL. */
static char **diagnose_nsys(const char *dir)
{
    char **v = NULL;
    if (!dir)
        return NULL;
    size_t n = diagnose_nsys_in(dir, "", &v, 0);
    n = diagnose_nsys_in(dir, NP_NEMO_NSYS_DIR, &v, n);
    if (v && n)
        qsort(v, n, sizeof *v, diagnose_cmp);
    return v;
}

/* The rank of a report named by its process ("profile_<pid>.nsys-rep": nsys -o ..._%p, as nemoperf's
 * script and the synthetic workload write it) from NCCL's init lines; -1 unknown, -2 several. */
static int diagnose_nsys_rank(const struct np_nccl *n, const char *name)
{
    const char *dot = strstr(name, ".nsys-rep"), *d = dot;
    while (d > name && d[-1] >= '0' && d[-1] <= '9')
        d--;
    if (d == dot || dot - d > 10 || (d > name && d[-1] != '_'))
        return -1;
    return np_nccl_pid_rank(n, strtoull(d, NULL, 10));
}

/* Append "; what: text" (or "what: text") to the run's note. */
static int diagnose_note(struct np_run *r, const char *what, const char *text)
{
    size_t old = r->note ? strlen(r->note) : 0, need = old + strlen(what) + strlen(text) + 5;
    char *n = realloc(r->note, need);
    if (!n)
        return -1;
    snprintf(n + old, need - old, "%s%s: %s", old ? "; " : "", what, text);
    r->note = n;
    return 0;
}

static enum np_status diagnose_sink(void *ctx, const char *bytes, size_t n)
{
    return bytes ? np_nccl_feed(ctx, bytes, n) : np_nccl_finish(ctx); /* NULL: the scanner's end (sink_defer) */
}

static enum np_status diagnose_defer(void *ctx, void (*scan)(void *, const char *, size_t, uint64_t), void *scan_ctx)
{
    return np_nccl_defer_scan(ctx, scan, scan_ctx);
}

static char *diagnose_lend(void *ctx, size_t *room)
{
    return np_nccl_lend(ctx, room);
}

static enum np_status diagnose_run(struct np_run *r, struct np_diag *g)
{
    struct stat sb;
    g->logged_gbs = -1;
    if (!r->path || stat(r->path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NP_OK;
    struct np_error err = {0};
    if (!(g->nccl = np_nccl_new()))
        return NP_E_NOMEM;
    /* a large log: the NCCL reader on the other cores while the scanner reads the steps (same result) */
    if (sb.st_size >= DIAGNOSE_ASYNC_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1 && np_nccl_async(g->nccl, 0) != NP_OK) {
        np_nccl_free(g->nccl);
        g->nccl = NULL;
        return NP_E_NOMEM;
    }
    /* one pass: the scanner reads every step (anomalies) and hands the same bytes to the NCCL reader */
    struct np_scan_opts so = {.all_steps = 1, .read_chunk = DIAGNOSE_CHUNK, .sink = diagnose_sink,
                              .sink_buf = diagnose_lend, .sink_defer = diagnose_defer, .sink_ctx = g->nccl};
    struct np_scan_result sr = {0};
    if (np_scan_file(r->path, &so, &sr, &err) != NP_OK || np_nccl_finish(g->nccl) != NP_OK) {
        if (!err.text[0])
            np_error_set(&err, NP_E_NOMEM, r->path, 0, 0, "%s", np_strerror(NP_E_NOMEM));
        np_error_format(&err, g->error, sizeof g->error);
        np_nccl_free(g->nccl);
        g->nccl = NULL;
        np_scan_result_free(&sr);
        return NP_OK;
    }
    if (sr.nsteps) {
        long *it = malloc(sr.nsteps * sizeof *it);
        double *t = malloc(sr.nsteps * sizeof *t);
        if (it && t) {
            for (size_t i = 0; i < sr.nsteps; i++) {
                it[i] = sr.steps[i].iteration;
                t[i] = sr.steps[i].step_time_s;
            }
            g->nanomalies = np_anomaly_find(it, t, sr.nsteps, r->window.count ? r->window.first : -1,
                                            r->window.count ? r->window.last : -1, &g->anomaly);
        }
        free(it);
        free(t);
        g->steps = sr.nsteps;
        g->logged_gbs = sr.steps[sr.nsteps - 1].global_batch_size;
    }
    np_scan_result_free(&sr);
    np_drift_find(r, g->logged_gbs, np_nccl_net(g->nccl)->max_nranks, &g->drift);
    g->nsys = diagnose_nsys(r->dir);
    size_t nn = 0;
    while (g->nsys && g->nsys[nn])
        nn++;
    if (nn && (g->nsys_rank = malloc(nn * sizeof *g->nsys_rank)))
        for (size_t i = 0; i < nn; i++)
            g->nsys_rank[i] = diagnose_nsys_rank(g->nccl, g->nsys[i]);
    char buf[1400];
    int bad = 0;
    if ((g->nnet_warnings = np_nccl_warnings(g->nccl, buf, sizeof buf)))
        bad |= diagnose_note(r, "NCCL", buf);
    if (g->nanomalies) {
        np_anomaly_text(&g->anomaly, buf, sizeof buf);
        bad |= diagnose_note(r, "steps", buf);
    }
    const struct np_nccl_net *net = np_nccl_net(g->nccl);
    int gpn = net->nnodes > 0 && net->max_nranks >= net->nnodes ? net->max_nranks / net->nnodes
              : r->row ? r->row->gpus_per_node : 0;
    np_straggler_text(np_nccl_stragglers(g->nccl), gpn, buf, sizeof buf);
    if (buf[0])
        bad |= diagnose_note(r, "stragglers", buf);
    g->gpus_per_node = gpn;
    if (g->drift.n) {
        np_drift_text(&g->drift, buf, sizeof buf);
        bad |= diagnose_note(r, "differs from the published row", buf);
    }
    return bad ? NP_E_NOMEM : NP_OK;
}

enum np_status np_diag_runs(struct np_parse_result *res, struct np_diag **out)
{
    *out = NULL;
    struct np_diag *d = calloc(res->nruns ? res->nruns : 1, sizeof *d);
    if (!d)
        return NP_E_NOMEM;
    for (size_t i = 0; i < res->nruns; i++) {
        enum np_status st = diagnose_run(&res->runs[i], &d[i]);
        if (st != NP_OK) {
            np_diag_free(d, res->nruns);
            return st;
        }
    }
    *out = d;
    return NP_OK;
}

void np_diag_free(struct np_diag *d, size_t n)
{
    if (!d)
        return;
    for (size_t i = 0; i < n; i++) {
        np_nccl_free(d[i].nccl);
        for (char **p = d[i].nsys; p && *p; p++)
            free(*p);
        free(d[i].nsys);
        free(d[i].nsys_rank);
    }
    free(d);
}
