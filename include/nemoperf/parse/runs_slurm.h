/* runs_slurm.h - ask the scheduler about runs whose logs are not final.  Owned by src/parse/runs_slurm.c. */
#ifndef NEMOPERF_PARSE_RUNS_SLURM_H
#define NEMOPERF_PARSE_RUNS_SLURM_H

#include "nemoperf/parse/run.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/util/error.h"

/* Ask b for the state of every run launch submitted whose logs are not final (no log, no
 * steps, incomplete, failed), one query for all, and update their status and reason:
 * PENDING -> pending, RUNNING -> running, FAILED/CANCELLED/TIMEOUT/... -> failed (the log's
 * error kept).  NP_OK when there was nothing to ask; the backend's error otherwise. */
enum np_status np_runs_ask_slurm(struct np_parse_result *res, struct np_backend *b, struct np_error *err);

#endif
