/* config.h - the launch configuration: environment + recipe data -> validated jobs.
 *
 * np_launch_resolve() reads the variables of the original launch.sh (DTYPE,
 * MODEL_SIZE, JOB_TOTAL_GPUS, STAGE_PATH, ...) through an accessor, so tests
 * inject an environment without setenv, and resolves them against the recipe
 * set into one np_launch_config per job (several for a JOB_TOTAL_GPUS sweep).
 * Every validation failure is NP_E_INVALID with a message naming the variable,
 * its value and what is allowed; nothing is created or submitted here.
 */
#ifndef NEMOPERF_CONFIG_H
#define NEMOPERF_CONFIG_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "nemoperf/util/error.h"
#include "nemoperf/model/recipe.h"

/* The one version string of the toolkit. */
#include "nemoperf/util/version.h" /* NP_VERSION */

#define NP_LAUNCH_MAX_RETRIES_LIMIT 100    /* NEMOPERF_MAX_RETRIES at most (default 0: no requeue, as NeMo-Run) */
#define NP_LAUNCH_DEFAULT_SRUN_MPI "pmix"  /* NEMOPERF_SRUN_MPI: srun --mpi of the NeMo step, as NeMo-Run */
#define NP_LAUNCH_DEFAULT_TIME_LIMIT "00:30:00"
#define NP_LAUNCH_NCCLTRACE_TIME_LIMIT "00:15:00"
#define NP_LAUNCH_NCCLTRACE_STEPS 5
#define NP_LAUNCH_DEFAULT_MAX_STEPS 50
#define NP_LAUNCH_DEFAULT_PROFILE_START 20
#define NP_LAUNCH_DEFAULT_PROFILE_STOP 25
#define NP_LAUNCH_DEFAULT_GPUS_PER_NODE 8
#define NP_LAUNCH_DEFAULT_GPU_TYPE "h100"
/* Size the synthetic workload's checkpoint is budgeted at: 1 MiB + 64 KiB per GPU
 * (nemoperf-synth writes one 8 KiB shard per rank plus metadata). */
#define NP_SYNTH_CHECKPOINT_BYTES(gpus) (1048576.0 + 65536.0 * (gpus))

enum np_workload { NP_WORKLOAD_NEMO = 0, NP_WORKLOAD_SYNTHETIC };

/* NEMOPERF_NUMA_BIND: how the tasks of a recipe with numactl (25.04) are bound.  NeMo's helper asked for
 * `numactl --cpunodebind=$((SLURM_LOCALID/4)) --membind=$((SLURM_LOCALID/4))` (NeMo v2.3.1
 * scripts/performance/utils.py l.82-85), but NeMo-Run does not quote srun arguments (`noquote` is `str`,
 * NeMo-Run v0.4.0 core/execution/slurm.py l.55, l.1002-1016), so the batch shell expanded it once, for every
 * task alike: what the published numbers ran (NVIDIA).  TASK binds each task to its own NUMA node (the intent). */
enum np_numa_bind { NP_NUMA_NVIDIA = 0, NP_NUMA_TASK, NP_NUMA_NONE };

/* "nemo" / "synthetic" */
const char *np_workload_name(enum np_workload w);

/* Environment accessor: value of `name` or NULL when unset.  An empty value
 * counts as unset (as ${VAR:-default} in the original scripts). */
typedef const char *(*np_env_fn)(void *ctx, const char *name);
/* getenv(); ctx unused. */
const char *np_env_getenv(void *ctx, const char *name);
/* ctx is a NULL-terminated array of "NAME=VALUE" strings (const char *const *). */
const char *np_env_list(void *ctx, const char *name);

/* Booleans: true/false/1/0/yes/no in any case.  0 ok, -1 not a boolean. */
int np_parse_bool(const char *s, int *out);
/* Slurm time limits: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S (minutes and seconds < 60,
 * hours < 24 after a day count), not all zero.  1 valid, 0 not. */
/* The longest time limit Slurm holds: its time parser returns minutes in an int
 * (SchedMD/slurm src/common/parse_time.h, time_str2mins); longer ones wrap around. */
#define NP_TIME_LIMIT_MAX_MINUTES 2147483646
int np_time_limit_valid(const char *s);

struct np_launch_opts {
    time_t now;                 /* experiment timestamp; 0: time(NULL) */
    const char *synth_path;     /* absolute path of nemoperf-synth; NULL refuses WORKLOAD=synthetic */
    const char *setup_cmd;      /* how messages name the setup tool (its real path); NULL: "./setup" */
    /* Free bytes of the file system holding path; 0 ok.  NULL: statvfs(). */
    int (*free_space)(const char *path, double *bytes);
    /* 1 for --dry-run/--print-config: what ./setup stages (STAGE_PATH folder,
     * container image, tokenizer files) may be missing; it is listed in
     * np_launch_config.missing instead of refused. */
    int preview;
};

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
    char **missing;              /* preview only: what ./setup has not staged yet, NULL-terminated, or NULL */
};

struct np_launch_plan {
    struct np_launch_config *jobs; /* one per JOB_TOTAL_GPUS entry, in the order given */
    size_t n;
};

/* Validate the environment against the recipe set and fill *out (caller frees
 * with np_launch_plan_free, also after a failure).  NP_E_INVALID with err
 * naming the variable on bad input; NP_E_NOMEM. */
enum np_status np_launch_resolve(const struct np_recipe_set *set, np_env_fn env, void *env_ctx,
                                 const struct np_launch_opts *opts, struct np_launch_plan *out,
                                 struct np_error *err);
void np_launch_plan_free(struct np_launch_plan *p);

/* Set the folder timestamp and recompute experiment_dir.  NP_E_NOMEM. */
enum np_status np_launch_config_set_timestamp(struct np_launch_config *c, long long ts);

/* The configuration as a JSON object (keys of --print-config and of the manifest's
 * "config"); a new reference, NULL when out of memory. */
json_t *np_launch_config_json(const struct np_launch_config *c);

/* Every launchable row of the set as an aligned text table, inconsistent rows
 * marked; returns a new string (caller frees) or NULL when out of memory. */
char *np_launch_list_text(const struct np_recipe_set *set);
/* --list [--recipe R] [--gpu G] [--format json]: the rows whose recipe and GPU type match
 * (NULL or "" matches all; any case); json: an array of objects keyed by the lower-case
 * column names, numbers as numbers, NA and empty notes as null.  A new string, caller frees. */
struct np_list_filter {
    const char *recipe;
    const char *gpu_type;
};
char *np_launch_list(const struct np_recipe_set *set, const struct np_list_filter *filter, int json);

#endif
