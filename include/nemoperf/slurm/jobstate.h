/* jobstate.h - the scheduler's job states, as one enum.
 *
 * Owned by src/slurm/jobstate.c.  Read by launch --wait (launch/wait.h) and by the parser's view of
 * runs without a final log (parse/runstate.h).
 */
#ifndef NEMOPERF_SLURM_JOBSTATE_H
#define NEMOPERF_SLURM_JOBSTATE_H

enum np_job_state {
    NP_JOB_SUBMITTED = 0, /* not reported yet */
    NP_JOB_PENDING,
    NP_JOB_RUNNING,
    NP_JOB_COMPLETING,
    NP_JOB_REQUEUED,      /* requeued: will be PENDING again */
    NP_JOB_SUSPENDED,
    NP_JOB_OTHER,         /* a word we do not know, not final (CONFIGURING, RESIZING, ...) */
    /* final states from here on */
    NP_JOB_COMPLETED,
    NP_JOB_FAILED,
    NP_JOB_TIMEOUT,
    NP_JOB_CANCELLED,
    NP_JOB_PREEMPTED,
    NP_JOB_NODE_FAIL,
    NP_JOB_OUT_OF_MEMORY,
    NP_JOB_BOOT_FAIL,
    NP_JOB_DEADLINE,
    NP_JOB_SPECIAL_EXIT,  /* requeued in a special exit hold: it will not run again by itself */
    NP_JOB_REVOKED,       /* revoked by a federation sibling */
    NP_JOB_HELD,          /* REQUEUE_HOLD, or pending held (after a requeue, by user or admin): waiting
                             ends (scontrol release to go on) */
    NP_JOB_UNKNOWN        /* vanished from the controller: outcome unknown */
};

/* "RUNNING", ..., "UNKNOWN"; never NULL. */
const char *np_job_state_name(enum np_job_state s);
/* The scheduler's word (any case; "CANCELLED by 0", "CANCELLED+", "COMPLETING"...)
 * to a state; NP_JOB_OTHER when not known, NULL/empty too. */
enum np_job_state np_job_state_parse(const char *s);
/* 1 when a pending job's reason says it is held (after a requeue, by its user or an
 * admin): np_wait_update() makes such a job NP_JOB_HELD. */
int np_job_reason_held(const char *reason);
/* 1 for states a job does not leave (COMPLETED ... UNKNOWN). */
int np_job_state_final(enum np_job_state s);

#endif
