/* follow.c - --wait: follow the jobs of one launch to their end, with progress on stderr.
 *
 * The polling itself is wait.c's (np_wait_run: backoff, query failures, requeues); this file draws
 * the progress (one line per job redrawn in place on a terminal, else a line per state change) and
 * says each job's end state (moved from src/cmd/launch.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/launch/submit.h"
#include "nemoperf/launch/wait.h"
#include "nemoperf/util/diag.h"

/* --wait progress: on a terminal, one line per job redrawn in place; otherwise a
 * line whenever a job changes state. */
struct follow_progress {
    int tty;
    size_t drawn;        /* lines drawn last time (tty) */
    enum np_job_state *last;
};

static double follow_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void follow_progress_cb(void *ctx, const struct np_wait *w, size_t changed, const struct np_error *qerr)
{
    struct follow_progress *p = ctx;
    double now = follow_now();
    char el[32], sel[32];
    if (qerr) {
        if (p->tty && p->drawn)
            fputc('\n', stderr);
        p->drawn = 0;
        np_warnf("cannot ask for the job states (attempt %d): %s: %s", w->query_failures, qerr->source, qerr->text);
        return;
    }
    np_wait_format_elapsed(now - w->start, el, sizeof el);
    if (p->tty) {
        if (p->drawn)
            fprintf(stderr, "\033[%zuA", p->drawn);
        fprintf(stderr, "\r\033[Kwaiting for %zu job%s, %s\n", w->n, w->n == 1 ? "" : "s", el);
        for (size_t i = 0; i < w->n; i++) {
            const struct np_wait_job *j = &w->jobs[i];
            np_wait_format_elapsed(now - j->state_since, sel, sizeof sel);
            fprintf(stderr, "\r\033[K  %-8s %-13s %-8s %.80s%s%.60s%s%s\n", j->job_id, np_job_state_name(j->state),
                    sel, j->label, j->reason ? " (" : "", j->reason ? j->reason : "", j->reason ? ")" : "",
                    j->requeues ? " [requeued]" : "");
        }
        p->drawn = w->n + 1;
        fflush(stderr);
        return;
    }
    if (!changed)
        return;
    for (size_t i = 0; i < w->n; i++) {
        const struct np_wait_job *j = &w->jobs[i];
        if (p->last[i] == j->state)
            continue;
        p->last[i] = j->state;
        fprintf(stderr, "%s: [%s] job %s %s: %s%s%.60s%s\n", np_progname(), el, j->job_id, j->label,
                np_job_state_name(j->state), j->reason ? " (" : "", j->reason ? j->reason : "", j->reason ? ")" : "");
    }
    fflush(stderr);
}

enum np_status np_launch_follow(struct np_launch_submitted *s, FILE *out)
{
    size_t n = s->n;
    char **dirs = s->dirs;
    double default_timeout = np_wait_default_timeout(s->limits, n);
    double maxd = np_launch_env_seconds("NEMOPERF_WAIT_MAX_DELAY", NP_WAIT_MAX_DELAY, 3600);
    double tmo = np_launch_env_seconds("NEMOPERF_WAIT_TIMEOUT", default_timeout, 365 * 86400.0);
    if (maxd < 0 || tmo < 0)
        return NP_E_INVALID;
    struct np_wait w;
    if (np_wait_init(&w, s->ids, s->labels, n, follow_now()) != NP_OK) {
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    struct follow_progress prog = {.tty = isatty(2), .last = calloc(n ? n : 1, sizeof *prog.last)};
    struct np_wait_opts wo = {.min_delay = maxd < NP_WAIT_MIN_DELAY ? maxd : NP_WAIT_MIN_DELAY, .max_delay = maxd,
                              .timeout = tmo, .progress = prog.last ? follow_progress_cb : NULL, .ctx = &prog};
    struct np_error err;
    enum np_status st = np_wait_run(&w, &s->be, &wo, &err);
    free(prog.last);
    int rc = 0;
    if (st != NP_OK) {
        np_error_print(&err);
        rc = 1;
    }
    double now = follow_now();
    if (!s->end_states)
        s->end_states = calloc(n ? n : 1, sizeof *s->end_states);
    for (size_t i = 0; i < w.n; i++) {
        const struct np_wait_job *j = &w.jobs[i];
        if (s->end_states && i < n && !s->end_states[i])
            s->end_states[i] = strdup(np_job_state_name(j->state));
        char el[32];
        np_wait_format_elapsed(now - w.start, el, sizeof el);
        fprintf(out, "job %s %s%s%s%s: %s\n", j->job_id, np_job_state_name(j->state),
               j->state == NP_JOB_UNKNOWN ? " (no longer known to the controller)" : "",
               j->requeues ? " after a requeue" : "", j->requeues > 1 ? "s" : "", dirs[i]);
        if (j->state == NP_JOB_HELD || j->state == NP_JOB_SPECIAL_EXIT)
            np_errorf("job %s is held (%.60s) and will not run again by itself: stopped waiting for it; "
                      "`scontrol release %s` lets it run, `scancel %s` ends it", j->job_id,
                      j->reason ? j->reason : j->raw_state ? j->raw_state : np_job_state_name(j->state), j->job_id,
                      j->job_id);
        else if (j->state == NP_JOB_REVOKED)
            np_errorf("job %s was revoked (it runs on another cluster of the federation, if anywhere): "
                      "stopped waiting for it", j->job_id);
        if (j->state != NP_JOB_COMPLETED)
            rc = 1;
    }
    fflush(out);
    np_wait_free(&w);
    return rc ? NP_E_SLURM : NP_OK;
}
