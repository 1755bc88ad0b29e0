/* mbridge_perf.h - the "perf" kind of Megatron-Bridge job: NVIDIA's scripts/performance rank command.
 *
 * Owned by src/job/mbridge_perf.c.  For a row of rows-<container>.json (c->mb): the release's entry point
 * (v0.6.0 bootstrap.py, v0.5.0 run_script.py) with the row's arguments, the environment NVIDIA's executor and
 * plugins give each task at that release, the B300 core binding, and the --print-config facts with sources.
 */
#ifndef NEMOPERF_JOB_MBRIDGE_PERF_H
#define NEMOPERF_JOB_MBRIDGE_PERF_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/job/spec.h"

/* How NVIDIA's launcher profiles at a release (--enable_nsys): NsysPlugin's steps (argument_parser.py's
 * --profiling_start_step/--profiling_stop_step defaults; v0.1.0rc3/v0.2.0 fixed in setup_experiment.py) and nsys's
 * -t (setup_experiment.py's cuda-sw,nvtx from v0.4.0; NeMo-Run's nvtx,cuda before).  -ms is not changed. */
struct np_mbperf_profile {
    const char *release;  /* "v0.6.0" */
    int start, stop;      /* profiling.profile_step_start / _end */
    const char *trace;    /* nsys -t */
    const char *source;   /* file:lines at the release */
};

/* The release's entry, or NULL (a release nemoperf has not read: the caller keeps NeMo-Run's defaults). */
const struct np_mbperf_profile *np_mbridge_perf_profile(const char *release);

/* nsys -t for c's row: its release's, else NeMo-Run's "nvtx,cuda".  Borrowed static text. */
const char *np_mbridge_perf_nsys_trace(const struct np_launch_config *c);

/* 0 when the row's release gives srun no --container-writable (r0.3.0 1f0cfc3), else 1. */
int np_mbridge_perf_writable(const struct np_launch_config *c);

/* What a LoRA row reads besides the checkout, as NVIDIA's reproduction runs it (exemplar-performance e249aa3
 * llama3/finetune/launch.sh:188-200: --pretrained_checkpoint, --data squad_packed, --dataset_root): the i-th
 * (0: the converted checkpoint <stage>/mbridge/checkpoints/<recipe>, 1: the SQuAD cache
 * <stage>/mbridge/datasets/rajpurkar___squad), a new string, what (n bytes) naming it and how NVIDIA makes it;
 * NULL with what "" past the last (every other row: at once), NULL otherwise when out of memory. */
char *np_mbridge_perf_staged(const struct np_launch_config *c, size_t i, char *what, size_t n);

/* What NVIDIA's executor runs in each task before the rank command at the row's release, or NULL: from v0.4.2
 * `bash /opt/Megatron-Bridge/docker/common/print_sha.sh /nemo_run/configs/repo_status.json` (v0.4.2
 * scripts/performance/utils/executors.py:136-137, v0.5.0 138-139, v0.6.0 179-180), rank 0 recording the image's
 * repositories' commits; here into the task's working folder, the experiment's.  Static text. */
const char *np_mbridge_perf_pre_cmd(const struct np_launch_config *c);

/* The rank command: python <checkout>/<entry> <row args, -ms MAX_STEPS> [--save_dir --save_interval]
 * [v0.5.0: PerfEnvPlugin's train.manual_gc overrides].  NULL-terminated, new (np_strv_free); NULL when c has
 * no row or out of memory.  job/mbridge.c appends the NsysPlugin overrides when profiling. */
char **np_mbridge_perf_argv(const struct np_launch_config *c);

/* The environment the release's launcher exports for the row, in NVIDIA's order: names[i]=values[i], and
 * origins[i] (when origins is not NULL) where it comes from (file:lines).  Borrowed (static text, row or config
 * data).  Returns the count (at most cap). */
size_t np_mbridge_perf_env(const struct np_launch_config *c, const char **names, const char **values,
                           const char **origins, size_t cap);

/* numactl's extra core binding on B300 (" -C $((SLURM_LOCALID * 16)),$((SLURM_LOCALID * 16 + 1))") unless the
 * release turns PCT binding off for the row; NULL otherwise.  Static string. */
const char *np_mbridge_perf_cpus(const struct np_launch_config *c);

/* The --print-config facts of the row (published row, release config, rank command, environment with origins)
 * and the identity nemoperf-parse reads ("recipe", "dtype", "gpu_type", "gpus", "container", "gbs", "seq_len",
 * "task").  New reference, NULL when out of memory. */
json_t *np_mbridge_perf_json(const struct np_launch_config *c);

/* The model TFLOPs of one global step of the row (Megatron-Bridge's formula at the row's release: FLOPs per token
 * x sequence length x GBS / 1e12), what WORKLOAD=synthetic passes nemoperf-synth as --step-tflops; NAN when
 * nemoperf has no formula for the row (DeepSeek V4 Flash, LoRA: model/flops_mbridge.h) or c has no row. */
double np_mbridge_perf_step_tflops(const struct np_launch_config *c);

#endif
