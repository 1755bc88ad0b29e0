/* env.h - the environment a job runs with: the variables its batch script exports.
 *
 * Owned by src/job/env.c: one list per family of kinds (np_script_vars, job/kind.h, picks the job's), read by
 * the script (launch/script.c), the slurmrestd job body (slurm/rest.c), the NeMo driver's manifest
 * (job/nemo.c) and the Megatron-Bridge step (job/mbridge.c), so they never disagree.
 */
#ifndef NEMOPERF_JOB_ENV_H
#define NEMOPERF_JOB_ENV_H

#include <stddef.h>

#include "nemoperf/job/spec.h"

#define NP_SCRIPT_MAX_VARS 48

/* NeMo-Run's nsys arguments besides -s none, -t and -o (NeMo-Run v0.10.0 nemo_run/core/execution/launcher.py:32-41,
 * Launcher.nsys_extra_args): every job that nsys profiles through MB's or NeMo's cudaProfilerApi range renders
 * them, the NeMo path (launch/script.c) and the Megatron-Bridge kinds (job/mbridge.c). */
#define NP_NSYS_NEMORUN_ARGS                                                                                         \
    "--force-overwrite=true --capture-range=cudaProfilerApi --capture-range-end=stop --cuda-graph-trace=node "    \
    "--cuda-event-trace=false"

/* One exported variable; name and value are borrowed (static text or strings of
 * the config), valid while the config lives. */
struct np_script_var {
    const char *name;
    const char *value;
};

/* The kinds' lists (np_script_vars of job/kind.h picks one): NeMo's (NeMo-Run defaults and PerfEnvPlugin; AutoModel too) and
 * Megatron-Bridge's (NVIDIA's executor PERF_ENV_VARS when the recipe asks for them, the recipe's env). */
size_t np_env_nemo_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap);
size_t np_env_mbridge_vars(const struct np_launch_config *c, struct np_script_var *vars, size_t cap);


/* CUDA_DEVICE_MAX_CONNECTIONS for c when TP or CP > 1 (the recipe's value for the
 * GPU type, "1" by default), NULL otherwise.  Borrowed (recipe data or static). */
const char *np_nemo_max_connections(const struct np_launch_config *c);

#endif
