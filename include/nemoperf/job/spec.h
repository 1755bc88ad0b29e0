/* spec.h - one job as launch resolved it: what every workload kind, the script and the backends read.
 *
 * Filled by launch/config.c (np_launch_resolve) from the environment and the recipe data; read by
 * the job modules (src/job/), the batch script (launch/script.c) and the Slurm backends.  Kept in the
 * job layer so that what runs on the cluster does not depend on how a launch is validated.
 * np_workload_name is owned by src/job/spec.c.
 */
#ifndef NEMOPERF_JOB_SPEC_H
#define NEMOPERF_JOB_SPEC_H

#include "nemoperf/model/mbperf.h"
#include "nemoperf/model/nccltests.h"
#include "nemoperf/model/recipe.h"

/* Size the synthetic workload's checkpoint is budgeted at: 1 MiB + 64 KiB per GPU
 * (nemoperf-synth writes one 8 KiB shard per rank plus metadata). */
#define NP_SYNTH_CHECKPOINT_BYTES(gpus) (1048576.0 + 65536.0 * (gpus))

/* The largest file a job reads from its experiment folder's code/ (the NeMo driver, a DFM config). */
#define NP_JOB_STAGED_FILE_MAX (16u << 20)

enum np_workload { NP_WORKLOAD_NEMO = 0, NP_WORKLOAD_SYNTHETIC };

/* NEMOPERF_NUMA_BIND: how the tasks of a recipe with numactl (25.04) are bound.  NeMo's helper asked for
 * `numactl --cpunodebind=$((SLURM_LOCALID/4)) --membind=$((SLURM_LOCALID/4))` (NeMo v2.3.1
 * scripts/performance/utils.py l.82-85), but NeMo-Run does not quote srun arguments (`noquote` is `str`,
 * NeMo-Run v0.4.0 core/execution/slurm.py l.55, l.1002-1016), so the batch shell expanded it once, for every
 * task alike: what the published numbers ran (NVIDIA).  TASK binds each task to its own NUMA node (the intent). */
enum np_numa_bind { NP_NUMA_NVIDIA = 0, NP_NUMA_TASK, NP_NUMA_NONE };

/* "nemo" / "synthetic" */
const char *np_workload_name(enum np_workload w);

/* One job.  Pointers to recipe data are borrowed from the set passed to
 * np_launch_resolve (valid until it is freed); strings are owned. */
struct np_launch_config {
    const struct np_recipe *recipe;
    const struct np_model *model;
    const struct np_config_row *row;
    enum np_dtype dtype;
    enum np_workload workload;
    enum np_task task;           /* TASK: pretrain, or sft/lora (row from model->ft_rows; seq_len = pack length) */
    char gpu_type[32];           /* lower case, "h100" */
    int gpus, gpus_per_node, nodes;
    int tp, pp, cp, ep, dp, vp, mbs, gbs, ga, layers, seq_len, hidden; /* ep, vp: 0 = NA */
    int max_steps;
    int max_steps_explicit;      /* MAX_STEPS was set by the user */
    char time_limit[32];
    int profile, profile_start, profile_stop;
    int profile_ranks;           /* NsysCallback on ranks 0..profile_ranks-1 (NVIDIA's for the scripts generation) */
    int nccltrace;
    int checkpoint;              /* save a checkpoint at the end of the run */
    double checkpoint_bytes;     /* budgeted size of that checkpoint */
    int force_checkpoint;        /* NEMOPERF_FORCE_CHECKPOINT: skip the free-space check */
    char *load_checkpoint;       /* resolved LOAD_CHECKPOINT_PATH, or NULL */
    char *stage_path;            /* absolute, without trailing slashes */
    char *image;                 /* nemo: .sqsh path or image reference; NULL for synthetic */
    char *synth_path;            /* synthetic: nemoperf-synth; NULL for nemo */
    char *account, *partition, *gres_gpus; /* SBATCH_ACCOUNT/_PARTITION/_GPUS_PER_NODE or NULL */
    int hf_token;                /* HF_TOKEN is set (its value is never stored) */
    char experiment[160];        /* pretrain_<recipe>_<size>_<dtype>_<gpus>, finetune_<recipe>_<size>_<task>_<dtype>_<gpus> */
    char job_name[192];          /* experiment, plus _nsys or _nccltrace */
    long long timestamp;         /* the <unix-ts> of the folder */
    char *experiment_dir;        /* <stage>/experiments/<exp>/<exp>_<ts>/<job_name> */
    char *nsys_dir;              /* <experiment_dir>/nsys_profile: where nsys writes profile_<pid>.nsys-rep */
    /* the NeMo job (nemo.h); mbs, gbs, ga and vp above are the values that run
     * (a row's corrections applied), the row keeps the published ones */
    int etp;                     /* expert tensor parallel size, 0 = None */
    int fsdp, cuda_graphs;       /* Megatron FSDP, CUDA graphs */
    const char *fp8_recipe;      /* "delayed"/"current" for DTYPE=fp8, NULL for bf16; borrowed */
    char *tp_comm_overlap_cfg;   /* userbuffers config name, or NULL (the recipe's own) */
    char *tokenizer_dir;         /* staged Hugging Face tokenizer folder, or NULL (null tokenizer) */
    int retries;                 /* NEMOPERF_MAX_RETRIES: requeues after a failed step (0: --no-requeue) */
    char srun_mpi[32];           /* NEMOPERF_SRUN_MPI: srun --mpi of the NeMo step ("" = none) */
    enum np_numa_bind numa_bind; /* NEMOPERF_NUMA_BIND, for recipes with numactl */
    int snapshot;                /* SNAPSHOT (default on): each node's system snapshot before the workload (system.h) */
    int gpu_metrics;             /* ENABLE_GPU_METRICS: GPU telemetry while the workload runs */
    int gpu_metrics_ms;          /* NEMOPERF_GPU_METRICS_MS: its interval */
    char **missing;              /* preview only: what ./setup has not staged yet, NULL-terminated, or NULL */
    /* a Megatron-Bridge performance row (RECIPE=deepseek_v3 ...): recipe/model/row above are its shape
     * (model/mbperf.h), borrowed from the plan; NULL for every other job */
    const struct np_mbperf_row *mb;
    /* RECIPE=nccl-tests (model/nccltests.h): the check, its pairs, collectives and the binaries' folder; zero for
     * every other job */
    struct np_ncclt_choice ncclt;
};

#endif
