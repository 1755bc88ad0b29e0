/* sbatch_env.h - the user's SBATCH_* settings on the way to Slurm.
 *
 * sbatch reads SBATCH_* input variables itself, so the CLI backend passes every
 * one the user set through unchanged (slurm_cli.c keeps them in sbatch's
 * environment).  slurmrestd reads none: each must become a field of the REST job
 * description, and one that has no field is refused by name before anything is
 * created.  ACCOUNT, PARTITION and GPUS_PER_NODE are validated by config.c and
 * written as fields there; the table here maps the others.
 */
#ifndef NEMOPERF_SBATCH_ENV_H
#define NEMOPERF_SBATCH_ENV_H

#include <jansson.h>

#include "nemoperf/util/env.h"
#include "nemoperf/util/error.h"

/* REST job field of an SBATCH_* variable name ("SBATCH_QOS" -> "qos"); "" for the
 * three config.c handles; NULL when it has none. */
const char *np_sbatch_rest_field(const char *name);

/* Check every SBATCH_* of the environment (env/ctx as np_launch_resolve; the
 * variables are enumerated from ctx for np_env_list, else from environ):
 * NP_E_INVALID naming the first one slurmrestd cannot be given. */
enum np_status np_sbatch_rest_check(np_env_fn env, void *ctx, struct np_error *err);

/* Check, for every backend and before anything is created, the SBATCH_* settings Slurm reads
 * as names (account, partition, QOS, reservation, constraint, wckey, job name): NP_E_INVALID
 * naming the first one longer than Slurm accepts or holding a control byte (env/ctx as
 * np_launch_resolve; NULL env is getenv).  Used by launch and setup alike. */
enum np_status np_sbatch_env_check(np_env_fn env, void *ctx, struct np_error *err);

/* Add the mapped SBATCH_* values to the REST job object (string fields).
 * NP_E_INVALID as np_sbatch_rest_check, NP_E_NOMEM. */
enum np_status np_sbatch_rest_fields(np_env_fn env, void *ctx, json_t *job, struct np_error *err);

#endif
