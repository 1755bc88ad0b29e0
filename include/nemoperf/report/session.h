/* session.h - one nemoperf-parse invocation: the options a front end read, run to an exit status.
 *
 * The front end (src/cmd/parse.c) reads its options into a struct np_session (the values through
 * np_session_int, np_session_double and np_session_given, which say what is wrong with one), then calls
 * np_session_run: the parse streamed or in memory (--slurm, --group, --plot, --nccl), the store
 * (--store, --history, --compare), the report, and the exit status.  Everything is said through diag.
 */
#ifndef NEMOPERF_REPORT_SESSION_H
#define NEMOPERF_REPORT_SESSION_H

#include "nemoperf/parse/run.h"
#include "nemoperf/report/report.h"

struct np_backend; /* the scheduler (slurm/backend.h): built by the front end, report/ does not call slurm/ */

struct np_session {
    struct np_parse_opts opts;
    enum np_format fmt;
    int quiet, no_progress;
    int slurm, nccl, strict;      /* --slurm, --nccl, --strict (strict implies nccl) */
    int store, history, compare;  /* at most one (np_session_run says so) */
    const char *plot;             /* --plot FILE, or NULL */
    const char *db, *cluster;     /* --db, --cluster, or NULL (the defaults) */
    double min_effect;            /* --min-effect, percent */
    int energy;                   /* --metric energy: --compare judges J/token (report/history.h) */
    char *const *args;            /* the operands: paths, --history's selectors, --compare's two sides */
    size_t nargs;
    /* --slurm: makes the scheduler backend once the arguments are checked, before anything is read; 0 with
     * *be set (the front end frees it after np_session_run), else the exit code (said). */
    int (*backend)(void *ctx, struct np_backend **be);
    void *backend_ctx;
};

/* The defaults: np_parse_opts_init, table, --min-effect 2. */
void np_session_init(struct np_session *s);

/* One option's value, checked; 1 when it holds, else 0 (said, naming the option: a usage error).
 * np_session_int: an integer in [1, max].  np_session_double: a number in [min, max]. */
int np_session_int(const char *opt, const char *arg, long max, long *out);
int np_session_double(const char *opt, const char *arg, double min, double max, double *out);

/* An identity option (name as in the option table, no dashes: recipe, size, model, dtype, container, gpus,
 * gpu, seq-len, gbs, system, task) into s->opts.given; 1, else 0 (said).  -1: not an identity option. */
int np_session_given(struct np_session *s, const char *name, const char *arg);

/* Run it: the exit status (0 every run ok or synthetic, no --reference FAIL or FAST, every folder read;
 * 1 otherwise, when no log was found or anything is SLOWER; 2 a usage error). */
int np_session_run(struct np_session *s);

#endif
