/* wait.h - follow the jobs of a launch until each has ended (nemoperf-launch --wait).
 *
 * A state machine over the scheduler's job states: np_wait_update() takes one answer
 * of the backend's query() (every job of the launch in one request) and moves each
 * job on; a job the controller no longer knows for NP_WAIT_VANISH_POLLS polls in a
 * row becomes NP_JOB_UNKNOWN (never a success).  np_wait_run() is the polling loop
 * (backoff, bounded run of failed queries) with injectable clock, sleep and progress
 * callback, so it runs in unit tests without a scheduler.  Nothing here prints.
 */
#ifndef NEMOPERF_WAIT_H
#define NEMOPERF_WAIT_H

#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/slurm/jobstate.h"

#define NP_WAIT_VANISH_POLLS 2      /* polls a job may be missing before it is "unknown" */
#define NP_WAIT_MAX_QUERY_FAILURES 5 /* failed queries in a row before np_wait_run gives up */
#define NP_WAIT_MIN_DELAY 1.0       /* seconds */
#define NP_WAIT_MAX_DELAY 30.0

struct np_wait_job {
    char *job_id;             /* owned */
    char *label;              /* owned: the job name shown in progress lines */
    enum np_job_state state;
    char *raw_state;          /* the scheduler's last word, owned, or NULL */
    char *reason;             /* the scheduler's last reason, owned, or NULL */
    int missing;              /* consecutive polls without this job */
    int requeues;             /* times it was seen REQUEUED or going back to PENDING after running */
    int ran;                  /* it was RUNNING/COMPLETING at some poll */
    double state_since;       /* when the state last changed */
};

struct np_wait {
    struct np_wait_job *jobs;
    size_t n;
    double start;             /* when waiting began */
    double delay;             /* next sleep */
    double min_delay, max_delay;
    int query_failures;       /* consecutive failed queries */
    int polls;
};

/* Set up for n jobs (ids and labels copied; labels may be NULL).  NP_E_NOMEM. */
enum np_status np_wait_init(struct np_wait *w, char *const *ids, char *const *labels, size_t n, double now);
void np_wait_free(struct np_wait *w);

/* Apply one query answer.  Returns the number of jobs whose state changed. */
size_t np_wait_update(struct np_wait *w, const struct np_job_list *obs, double now);
/* 1 when every job is in a final state. */
int np_wait_done(const struct np_wait *w);
/* 1 when every job COMPLETED. */
int np_wait_all_completed(const struct np_wait *w);
/* The sleep before the next poll: min_delay after a change, else the previous
 * delay times 1.5, at most max_delay.  Stores it in w->delay. */
double np_wait_next_delay(struct np_wait *w, size_t changed);

/* One line: "3 jobs, 1m05s: 101 pretrain_..._8 RUNNING 0:40 | 102 ... PENDING (Resources)";
 * a new string (caller frees), NULL when out of memory. */
char *np_wait_progress(const struct np_wait *w, double now);

/* "1h02m03s" / "4m05s" / "7s" into buf. */
void np_wait_format_elapsed(double seconds, char *buf, size_t size);

struct np_wait_opts {
    double min_delay, max_delay;   /* 0: NP_WAIT_MIN_DELAY / NP_WAIT_MAX_DELAY */
    double timeout;                /* give up after this many seconds; 0: never (see np_wait_default_timeout) */
    double (*now)(void);           /* NULL: CLOCK_MONOTONIC seconds */
    void (*sleep)(double seconds); /* NULL: nanosleep */
    /* Called after every poll (changed = jobs whose state changed) and once when a
     * query failed (changed = 0, err says why); may be NULL. */
    void (*progress)(void *ctx, const struct np_wait *w, size_t changed, const struct np_error *query_err);
    void *ctx;
};

/* The default limit of a wait for jobs with these time limits (seconds each): twice
 * their sum (every job may run once more after a requeue, one after the other) plus
 * NP_WAIT_QUEUE_ALLOWANCE seconds for queueing. */
#define NP_WAIT_QUEUE_ALLOWANCE 3600.0
double np_wait_default_timeout(const double *limits, size_t n);

/* Poll b->query until every job is final.  NP_OK when waiting ended normally (look
 * at the jobs' states for the outcome); NP_E_SLURM/NP_E_HTTP... with err after
 * NP_WAIT_MAX_QUERY_FAILURES failed queries in a row, NP_E_INVALID when the
 * backend cannot query, NP_E_SLURM "timed out" after opts->timeout. */
enum np_status np_wait_run(struct np_wait *w, struct np_backend *b, const struct np_wait_opts *opts,
                           struct np_error *err);

#endif
