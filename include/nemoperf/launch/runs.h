/* runs.h - nemoperf-launch --runs: the runs launched under a STAGE_PATH (or folders) with the scheduler's state.
 *
 * Reads every nemoperf.json at or below the paths (reconcile.h's walk), asks the backend once for the
 * state of every recorded job id, and writes a table or one JSON array (share/nemoperf/schema/
 * launch-runs.schema.json) to out.  Writes nothing to the folders: an unsettled record is listed as it is
 * (--reconcile settles it).
 */
#ifndef NEMOPERF_LAUNCH_RUNS_H
#define NEMOPERF_LAUNCH_RUNS_H

#include <stddef.h>
#include <stdio.h>

#include "nemoperf/slurm/backend.h"
#include "nemoperf/util/error.h"

/* List the runs at or below paths, asking b (may be NULL: no scheduler state) for their jobs' states.
 * NP_OK when every manifest was read and the scheduler answered (or nothing was to be asked);
 * NP_E_SLURM when it could not be asked and NP_E_PARSE when a manifest could not be read (both said
 * through diag, the rest listed all the same); NP_E_NOTFOUND when a path holds no run (said). */
enum np_status np_launch_runs(char *const *paths, size_t n, struct np_backend *b, int json, FILE *out);

#endif
