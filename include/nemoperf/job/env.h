/* env.h - the environment a job runs with: the variables its batch script exports.
 *
 * Owned by src/job/env.c.  One list for the script (launch/script.c), the slurmrestd job body
 * (slurm/rest.c) and the NeMo driver's manifest (job/nemo.c), so the three never disagree.
 */
#ifndef NEMOPERF_JOB_ENV_H
#define NEMOPERF_JOB_ENV_H

#include <stddef.h>

#include "nemoperf/job/spec.h"

#define NP_SCRIPT_MAX_VARS 48

/* One exported variable; name and value are borrowed (static text or strings of
 * the config), valid while the config lives. */
struct np_script_var {
    const char *name;
    const char *value;
};

/* The variables the script exports for c, in script order; returns the count
 * (at most cap). */
size_t np_script_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap);


/* CUDA_DEVICE_MAX_CONNECTIONS for c when TP or CP > 1 (the recipe's value for the
 * GPU type, "1" by default), NULL otherwise.  Borrowed (recipe data or static). */
const char *np_nemo_max_connections(const struct np_launch_config *c);

#endif
