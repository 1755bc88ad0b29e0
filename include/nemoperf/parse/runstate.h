/* runstate.h - what became of a launched run that has no usable log, and why a run stopped.
 *
 * np_log_last_error() reads the end of a log and finds the last error a user would look
 * for: a Slurm CANCELLED/TIMEOUT message (slurmstepd's "*** JOB ... CANCELLED AT ... ***"),
 * CUDA out of memory, an NCCL error, or a Python exception line.  np_runs_ask_slurm()
 * asks the scheduler (either backend) about the runs whose logs say nothing final.
 */
#ifndef NEMOPERF_RUNSTATE_H
#define NEMOPERF_RUNSTATE_H

#include <stddef.h>

#include "nemoperf/util/error.h"

enum np_log_error {
    NP_LOGERR_NONE = 0,
    NP_LOGERR_PYTHON,   /* "RuntimeError: ..." at the start of a line */
    NP_LOGERR_NCCL,     /* "NCCL error", ncclSystemError, ... */
    NP_LOGERR_OOM,      /* "CUDA out of memory", OutOfMemoryError */
    NP_LOGERR_SLURM     /* slurmstepd "*** JOB|STEP ... CANCELLED AT ... [DUE TO TIME LIMIT] ***" */
};

/* The last error of buf (a log or its tail): a Slurm message wins over the others (it says
 * why the job stopped), else the last line of any other kind.  The line, cleaned of control
 * bytes and cut to fit, goes to out as "<kind>: <line>".  Returns its kind. */
enum np_log_error np_log_last_error_buf(const char *buf, size_t len, char *out, size_t size);

/* The same for the last 64 KiB of name, opened relative to dirfd (or AT_FDCWD). */
enum np_log_error np_log_last_error_at(int dirfd, const char *name, char *out, size_t size);

#endif
