/* lock.h - one launch at a time per experiment, and what its submissions leave running.
 *
 * $STAGE_PATH/experiments/.<experiment>.lock is made at a private name, holding its owner
 * (host, pid, process start time) and its flock(), then linked into place (atomic on local
 * file systems, NFS and Lustre, where STAGE_PATH lives), so it never exists unlocked.  Its descriptor
 * is inherited by sbatch: while a submission a launch started may still run (even after
 * the launch was killed), the flock is held and the lock is live.  A lock whose flock is
 * free on its host is stale and is taken over; one of another host is only named.
 * Owned by src/launch/lock.c.
 */
#ifndef NEMOPERF_LAUNCH_LOCK_H
#define NEMOPERF_LAUNCH_LOCK_H

#include "nemoperf/util/error.h"

struct np_launch_lock {
    char *path; /* owned; NULL when not held */
    int fd;     /* -1 when not held; inherited by children (sbatch) on purpose */
    int made_top; /* 1: the experiments folder was created for it (removed again when empty) */
};

/* Take the lock of experiment under stage_path.  NP_OK; NP_E_INVALID when another launch
 * holds it (err names its owner and the file); NP_E_IO when it cannot be made. */
enum np_status np_launch_lock_take(const char *stage_path, const char *experiment, struct np_launch_lock *l,
                                   struct np_error *err);

/* Release (NULL-safe, idempotent): the file removed, the descriptor closed. */
void np_launch_lock_release(struct np_launch_lock *l);

/* 1 when the lock of experiment exists and is held by a live process here (a launch or the
 * sbatch it started) or on another host (cannot be told); its description in why. */
int np_launch_lock_busy(const char *stage_path, const char *experiment, char *why, size_t size);

#endif
