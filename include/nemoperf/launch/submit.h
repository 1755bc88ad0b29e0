/* submit.h - the submission protocol of a launch: backend, checks, record-then-submit, settling.
 *
 * Owned by src/launch/submit.c (submission, --reconcile) and src/launch/follow.c (--wait's polling).
 * Every job that reaches the queue is on record: a folder and a "submitting" manifest with a unique
 * tag exist before the backend is called, and the outcome is recorded before the next job starts;
 * SIGINT/SIGTERM/SIGHUP are deferred meanwhile.  Messages go through diag; the "job ID: folder" lines
 * a user (or a script) reads go to the caller's stream.
 */
#ifndef NEMOPERF_LAUNCH_SUBMIT_H
#define NEMOPERF_LAUNCH_SUBMIT_H

#include <stddef.h>
#include <stdio.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/util/error.h"

/* what to do when a job of this launch exists already (an earlier, interrupted launch) */
enum np_launch_rerun { NP_LAUNCH_RERUN_REFUSE = 0, NP_LAUNCH_RERUN_RESUBMIT, NP_LAUNCH_RERUN_SKIP };

struct np_launch_submit_opts {
    enum np_launch_rerun rerun;
    int wait;               /* --wait follows: unknown outcomes are settled (asked again) first */
    const char *launch_cmd; /* how the user runs nemoperf-launch, for hints (borrowed) */
    const char *parse_cmd;  /* how the user runs nemoperf-parse, for hints (borrowed) */
    FILE *out;              /* "job ID: folder" lines and the parse hint */
};

/* One submission that got a folder and a record (whatever became of it), in the order made. */
struct np_launch_attempt {
    size_t job;        /* index into the plan's jobs */
    int repeat;        /* 1..REPEATS */
    char *dir;         /* its folder (owned) */
    const char *state; /* NP_STATE_SUBMITTED, NP_STATE_NOT_SUBMITTED or NP_STATE_UNKNOWN (manifest.h) */
    long sub;          /* its index in ids/dirs below once queued, else -1 */
};

/* The jobs a submission queued, to follow with np_launch_follow.  Arrays of n, owned. */
struct np_launch_submitted {
    struct np_backend be; /* open while the struct lives */
    int have_be;
    char **ids, **dirs, **labels;
    double *limits; /* each job's time limit in seconds (0: none known) */
    char **end_states; /* after np_launch_follow: each job's end state ("COMPLETED"), else NULL */
    size_t n;
    struct np_launch_attempt *tried; /* every submission with a record (--format json), ntried of them */
    size_t ntried;
    int failed; /* some submission failed (said on stderr) */
    int signal; /* stopped by this signal after recording the current submission, else 0 */
};
void np_launch_submitted_free(struct np_launch_submitted *s);

/* A number of seconds in (0, max] from the environment variable name, or def when unset; -1 when bad
 * (said on stderr, naming the variable). */
double np_launch_env_seconds(const char *name, double def, double max);

/* NEMOPERF_SBATCH_TIMEOUT in seconds (default NP_SLURM_DEFAULT_TIMEOUT); -1 when bad (said). */
int np_launch_sbatch_timeout(void);

/* The backend SLURM_SUBMIT names (cli: sbatch; rest: slurmrestd at SLURMRESTD_URL, SLURM_JWT,
 * SLURM_USER).  On failure the message is said and NP_E_USAGE/NP_E_INVALID (bad environment) or a
 * runtime status returned. */
enum np_status np_launch_backend_open(struct np_backend *be, int timeout);

/* --dry-run: where sbatch is at hand, check each job as the real launch would (sbatch --test-only, nothing
 * submitted) and say on stderr what it would refuse; silent where it cannot be told. */
void np_launch_preview_check(const struct np_launch_plan *plan, const char *launch_cmd);

/* Submit every job of plan: refuse what can be refused before the first folder exists (scripts,
 * backend, preflight, jobs an earlier launch queued), then one record-submit-record per job (signals
 * deferred), the parse hint (without wait), and with wait the unknown outcomes settled.  NP_OK when
 * the loop ran (out->failed / out->signal say how it went); otherwise nothing was submitted. */
enum np_status np_launch_submit(struct np_launch_plan *plan, const struct np_launch_submit_opts *o,
                                struct np_launch_submitted *out);

/* --wait: follow s's jobs to their end, progress on stderr (redrawn on a terminal), one line per
 * job's end state on out.  NP_OK when every job COMPLETED; NP_E_SLURM when one did not (said);
 * NP_E_INVALID for a bad NEMOPERF_WAIT_* value. */
enum np_status np_launch_follow(struct np_launch_submitted *s, FILE *out);

/* --reconcile PATH...: settle every record at or below the paths; one line per record on out.
 * NP_OK when every record is settled. */
enum np_status np_launch_reconcile_paths(char *const *paths, size_t n, FILE *out);

#endif
