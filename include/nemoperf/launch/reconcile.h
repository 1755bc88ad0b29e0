/* reconcile.h - settle the record of a launch whose submission outcome is not known.
 *
 * A manifest left "submitting" (the launch died while sbatch ran) or "unknown" (no
 * answer after the request may have reached the scheduler) is settled by asking the
 * scheduler for the job carrying the manifest's tag (backend find()), or, failing that,
 * by the job's own output file in the folder (sbatch_<job>_<id>.out, written by slurmd
 * when the job ran).  Found: "submitted" with the job id; the scheduler answered and
 * knows no such job and no output exists: "not_submitted"; the scheduler could not be
 * asked: left as it was.  Used by nemoperf-launch --reconcile and --wait, and meant for
 * nemoperf-parse --slurm.  Nothing here prints.
 */
#ifndef NEMOPERF_RECONCILE_H
#define NEMOPERF_RECONCILE_H

#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/slurm/backend.h"

enum np_reconcile_outcome {
    NP_RECONCILE_RECORDED = 0, /* the record was settled already (submitted or not_submitted); nothing changed */
    NP_RECONCILE_FOUND,        /* a job carries the tag: now recorded "submitted" with its id */
    NP_RECONCILE_ABSENT,       /* the scheduler knows no job with the tag: now "not_submitted" */
    NP_RECONCILE_UNREACHABLE,  /* the scheduler could not be asked: record unchanged (try again later) */
    NP_RECONCILE_FAILED        /* no usable manifest, or it could not be rewritten (message says which) */
};

/* The result for one folder; strings owned, free with np_reconcile_free. */
struct np_reconcile {
    char *dir;
    enum np_reconcile_outcome outcome;
    char *state;     /* the record's state afterwards ("submitted", ...), or NULL */
    char *job_id;    /* the recorded job id, or NULL */
    char *job_state; /* the scheduler's word for it when it was asked ("PENDING"...), or NULL */
    char *job_name;  /* from the manifest's config, or NULL */
    char *message;   /* one line saying what was found or what went wrong */
    int in_place;    /* 1: the record was rewritten in place (no room for a second copy) */
};

void np_reconcile_free(struct np_reconcile *r);

/* Settle the record in dir (a folder holding nemoperf.json).  b may be NULL (then only
 * the output-file evidence is used and an unsettled record stays as it is).  Fills r
 * (reset first); returns NP_OK or NP_E_NOMEM. */
enum np_status np_reconcile_dir(struct np_backend *b, const char *dir, struct np_reconcile *r);

/* The same for each of n folders; r is an array of n results. */
enum np_status np_reconcile_dirs(struct np_backend *b, char *const *dirs, size_t n, struct np_reconcile *r);

/* Folders holding nemoperf.json at or below each of paths (depth <= 4, symlinks not
 * followed below the given paths), in order.  A new NULL-terminated array (np_strv_free)
 * in *out; NP_E_NOTFOUND with err naming a path that is not a folder or holds no
 * manifest at all. */
enum np_status np_reconcile_collect(char *const *paths, size_t n, char ***out, struct np_error *err);

/* Earlier records of the job named job_name under <stage_path>/experiments/<experiment>/
 * whose job may still exist: unsettled ones are reconciled first (with b), then the ones
 * with a job id are asked for (b->query); kept are the records whose job is not in a
 * final state, or that could not be settled.  A new array of results in *out (*n of
 * them; free each with np_reconcile_free, then the array). */
enum np_status np_reconcile_existing(struct np_backend *b, const char *stage_path, const char *experiment,
                                     const char *job_name, struct np_reconcile **out, size_t *n,
                                     struct np_error *err);

#endif
