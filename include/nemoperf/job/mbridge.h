/* mbridge.h - the srun step of a Megatron-Bridge job (DFM's Wan recipe; MB's scripts/performance).
 *
 * One task per GPU in the staged container, rank and world from SLURM_PROCID/SLURM_NTASKS (MB reads them
 * itself), the pinned checkouts ./setup staged on PYTHONPATH, numactl per task as NVIDIA's executor binds,
 * nsys under the rank command when ENABLE_PROFILE, NCCL's own debug output when ENABLE_NCCLTRACE.  What each
 * workload kind runs (the rank command) comes from a descriptor table in mbridge.c: one builder per kind, each
 * in its own file (job/dfm.c).
 */
#ifndef NEMOPERF_JOB_MBRIDGE_H
#define NEMOPERF_JOB_MBRIDGE_H

#include <jansson.h>

#include "nemoperf/job/env.h"
#include "nemoperf/job/spec.h"
#include "nemoperf/util/shell.h"

/* The PYTHONPATH of the job: the checkouts in spec order, then the pip folder (when the spec has pip
 * packages); no trailing image path (the script appends ":$PYTHONPATH").  New string, caller frees. */
char *np_mbridge_pythonpath(const struct np_launch_config *c);

/* Tasks per node of the job: one per GPU, or one running torchrun (a torchrun kind, WORKLOAD=nemo). */
int np_mbridge_tasks_per_node(const struct np_launch_config *c);

/* numactl divisor: tasks per NUMA node, 2 on GB200/GB300, else 4 (MB 953aabf
 * scripts/performance/utils/executors.py:126-127). */
int np_mbridge_numa_divisor(const char *gpu_type);

/* sbatch --segment on 4-GPU (NVL72) nodes: the node count up to 18, else its largest divisor <= 18
 * (executors.py:114-124); 0 = no --segment. */
int np_mbridge_segment(const struct np_launch_config *c);

/* Append MB's NsysPlugin overrides (perf_plugins.py:67-76) when c->profile: profiling.use_nsys_profiler=true,
 * profile_step_start/end, profile_ranks=[0], record_shapes=false. */
void np_mbridge_profile_args(const struct np_launch_config *c, struct np_strv *s);

/* The rank command of c (its kind's builder; WORKLOAD=synthetic runs nemoperf-synth --log-format mbridge,
 * launch/script.c).  NULL-terminated, new (np_strv_free); NULL when out of memory. */
char **np_mbridge_command(const struct np_launch_config *c);

/* nemoperf-synth's --log-format for WORKLOAD=synthetic of c's row: "mbridge" (Megatron-Bridge's training log),
 * "dfm-automodel" (DFM's AutoModel loop, job/dfm_automodel_log.h).  Borrowed, static. */
const char *np_mbridge_synth_format(const struct np_launch_config *c);

/* nemoperf-synth's --step-tflops for WORKLOAD=synthetic of c's row: the model TFLOPs of one global step by the
 * kind's formula (perf rows: np_mbridge_perf_step_tflops), NAN when the kind has none (DFM's Wan: Megatron-
 * Bridge's LLM figure is wrong for it, docs/dfm.md). */
double np_mbridge_synth_step_tflops(const struct np_launch_config *c);

/* Render the srun step into b: --ntasks-per-node=GPUs per node, --mpi=pmix, the image and mounts
 * (--no-container-mount-home --container-writable, executors.py:86-89), the environment names, then
 * bash -c '[numactl ...] [nsys profile ...] "$@"' with argv.  log_prefix: the srun --output prefix (pattern-
 * escaped), the restart count and ".out" are appended.  0, or -1 (b->failed). */
int np_mbridge_render_step(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                           struct np_buf *b);

/* Stage what the job reads from the experiment folder (the row's config file), before submission. */
enum np_status np_mbridge_stage(const struct np_launch_config *c, struct np_error *err);

/* Refuse a launch whose checkouts / pip folder ./setup has not staged (preview: list them through
 * missing(ctx, what)).  NP_OK, or NP_E_INVALID naming what to run. */
typedef enum np_status (*np_mbridge_missing_fn)(void *ctx, const char *what);
enum np_status np_mbridge_check_staged(const struct np_launch_config *c, np_mbridge_missing_fn missing, void *ctx);

/* The "mbridge" object of --print-config and the manifest: every setting with its source.  New reference. */
json_t *np_mbridge_json(const struct np_launch_config *c);

#endif
