/* recipe.h - workloads as data: recipes/<name>.json read with Jansson into typed structs.
 *
 * A recipe file describes one published recipe (e.g. "llama3.1", seed 003):
 * container, models (architecture, FLOPs convention, checkpoint facts) and
 * every published parallel-config row.  Loading validates keys, types,
 * presence and arithmetic; syntax errors carry Jansson's line:column,
 * semantic errors name the field path ("models.8b.configs[3].tp").
 */
#ifndef NEMOPERF_RECIPE_H
#define NEMOPERF_RECIPE_H

#include <stddef.h>
#include <string.h>

#include "nemoperf/model/arch.h" /* enum np_dtype, np_task, np_flops_conv; struct np_arch, np_flops_spec */
#include "nemoperf/util/error.h"

struct np_checkpoint_info {
    int known;          /* 0 when the seeds say nothing */
    double size_bytes;  /* approximate size of one checkpoint */
    int save_min_gpus, save_max_gpus; /* supported save scales */
    int load_min_gpus;  /* minimum tested load scale */
};

/* A correction of a published cell: what NVIDIA actually ran.  The published
 * value stays in the row (the published tables are reproduced from it); a
 * launch uses the corrected one. */
struct np_correction {
    char *field;        /* "mbs", "gbs", "ga", "vp" or "seq_len" (a fine-tuning pack length) */
    int value;          /* the value NVIDIA ran */
    char *source;       /* repo/ref/file/lines that show it */
    char *reason;       /* why the published cell is not what ran */
};

/* One published parallel-config row.  Integers are >= 1 except vp and fsdp
 * (0 = not used / "NA" in the seed).  Key: (gpu_type, dtype, gpus). */
struct np_config_row {
    char *gpu_type;     /* "h100", "b200", "gb200" */
    char *system;       /* "DGX-H100" or NULL */
    unsigned dtypes;    /* bitmask of enum np_dtype */
    int gpus, seq_len, layers, tp, pp, cp, ep, dp, vp, mbs, gbs, ga, fsdp;
    int lbs;            /* AutoModel local batch size (GBS = LBS x DP x GA), 0 = not published */
    int proxy;          /* 1: reduced-layer proxy of the full model */
    char *inconsistent; /* reason the published row is not self-consistent, or NULL */
    char *source;       /* e.g. "seed 003" */
    char *note;         /* free text, or NULL */
    char *yaml;         /* AutoModel: this row's own benchmark YAML (else the model's), or NULL */
    /* what the NeMo job runs for this row (the recipe file's configs[i]) */
    int gpus_per_node;  /* NVIDIA's GPUs per node on this system (8; GB200 4) */
    int etp;            /* expert tensor parallel size, 0 = None */
    int cuda_graphs;    /* 1: CUDA graphs on */
    char *tp_comm_overlap_cfg; /* userbuffers config name ("{dtype}" = bf16|fp8), NULL: the recipe's */
    char **model_config; /* extra model.config settings "name\0json", NULL-terminated, or NULL (np_setting_value) */
    struct np_correction *corrections;
    size_t ncorrections;
    /* Megatron-Bridge workloads (np_model.mbridge) */
    int sp;             /* sequence parallel (published SP column) */
    char *backend;      /* "mcore" (default) or "automodel" (DFM's AutoModel backend), NULL for other recipes */
    /* fine-tuning rows (np_model.ft_rows) only; seq_len is the packed sequence length */
    enum np_task task;  /* NP_TASK_PRETRAIN for the rows of np_model.rows */
};

/* LoRA as the model's NeMo finetune_recipe(peft_scheme="lora", performance_mode=True) sets it. */
struct np_lora {
    int dim, alpha;
    char **targets;     /* target_modules, NULL-terminated ("linear_qkv") */
};

/* How NeMo AutoModel's benchmark recipe runs a model (recipes/automodel.json). */
struct np_automodel_spec {
    char *yaml;            /* examples/llm_benchmark/<yaml> */
    int from_pretrained;   /* 1: full weights (from_pretrained); 0: config.json only (from_config) */
    int trust_remote_code; /* the config needs the repo's Python code */
    int gated;             /* the Hub repo needs an accepted licence and HF_TOKEN */
    int warmup_steps, max_steps; /* benchmark.warmup_steps of step_scheduler.max_steps */
};

/* A source checkout a Megatron-Bridge job puts on PYTHONPATH, pinned to one commit. */
struct np_mbridge_repo {
    char *name;            /* folder name under $STAGE_PATH/src and in PYTHONPATH order: "DFM" */
    char *github;          /* "NVIDIA-NeMo/DFM" */
    char *commit;          /* 40 lower-case hex digits */
    char *replaces;        /* NULL, or the image's folder the checkout is mounted over ("/opt/Megatron-Bridge") */
};

/* How a Megatron-Bridge based job runs a model (recipes/wan2.1.json "mbridge"; job/mbridge.h). */
struct np_mbridge_spec {
    char *kind;            /* rank-command builder: "dfm" (job/dfm.c) */
    char *source;          /* where the settings come from */
    char *script;          /* entry point, "<repo name>/<path in the checkout>" */
    char **args;           /* fixed script flags, NULL-terminated, or NULL */
    char *conf_source;     /* where the rows' config files come from, or NULL */
    struct np_mbridge_repo *repos;
    size_t nrepos;
    char **pythonpath;     /* repo names in PYTHONPATH order, NULL-terminated */
    char **pip;            /* extra pip requirements staged under STAGE_PATH, NULL-terminated, or NULL */
    char **pip_upgrade;    /* installed first with --upgrade (only those), NULL-terminated, or NULL */
    char **env;            /* "NAME\0VALUE" the recipe adds, NULL-terminated, or NULL */
    char *env_source;
    int train_iters_default; /* the recipe's own train.train_iters (reported by --print-config) */
    int executor_env;      /* 1: NVIDIA's executor PERF_ENV_VARS under env (job/env.c); DFM's runs had none */
    /* the rows with backend "automodel" (job/dfm_automodel.c): DFM's AutoModel pre-training script, its config
     * file in share/nemoperf/dfm/conf/ and where that comes from, the Hub model, the PYTHONPATH repos */
    char *am_script, *am_yaml, *am_yaml_source, *am_hf_model, *am_note;
    char **am_pythonpath;
};

/* Where ./setup unpacks (setup/archive.c) and the job reads (job/mbridge.c) a pinned checkout: <stage>/src/<name>-<commit>.  New string, caller frees; NULL: no memory. */
char *np_mbridge_checkout_dir(const char *stage_path, const struct np_mbridge_repo *repo);
/* A spec's "<repo name>/<path>" (its script, am_script) -> <the staged checkout of that repo>/<path>.  New
 * string, caller frees; NULL when script is NULL, names no repo of b, or out of memory. */
char *np_mbridge_script_path(const char *stage_path, const struct np_mbridge_spec *b, const char *script);
/* Where ./setup installs the spec's pip packages: <stage>/pip/<recipe>-<size>.  New string, caller frees. */
char *np_mbridge_pip_dir(const char *stage_path, const char *recipe, const char *size);
/* What the job puts on PYTHONPATH: <that folder>/site-packages (a link setup makes to where pip installed into
 * the prefix).  New string, caller frees. */
char *np_mbridge_pip_site(const char *stage_path, const char *recipe, const char *size);

/* The tokenizer NVIDIA's script gave the recipe. */
struct np_tokenizer {
    char *hf;           /* Hugging Face id (AutoTokenizer, files staged by ./setup), or NULL */
    int null_vocab;     /* NullTokenizer vocab size when hf is NULL */
    int on_model;       /* 1: also model.tokenizer (Nemotron4 340b) */
};

struct np_model {
    char *size;         /* key, lower case: "8b", "8x7b" */
    char *label;        /* as the seed prints it: "8b", "LLAMA3-8B" */
    struct np_arch arch;
    struct np_arch_extra xa;   /* AutoModel families only; zero otherwise */
    char *pattern;      /* Nemotron-H hybrid_override_pattern, or NULL */
    struct np_flops_spec flops;
    char *hf_repo;      /* gated Hugging Face repo, or NULL */
    char *factory;      /* NeMo recipe factory, e.g. "llama3_8b"; NULL for AutoModel */
    struct np_automodel_spec *automodel; /* owned, or NULL (not an AutoModel benchmark) */
    struct np_mbridge_spec *mbridge;     /* owned, or NULL (not a Megatron-Bridge job) */
    struct np_checkpoint_info checkpoint;
    struct np_tokenizer tokenizer;
    char **env;         /* extra job environment "NAME\0VALUE", NULL-terminated, or NULL */
    int token_drop;     /* recipe adds MegatronTokenDropCallback (performance mode) */
    int gc_interval;    /* GarbageCollectionCallback interval of the recipe, 0 = none */
    struct np_config_row *rows;
    size_t nrows;
    /* seed 000's fine-tuning rows ("finetune" block), key (task, gpu_type, dtype, gpus) */
    struct np_config_row *ft_rows;
    size_t nft_rows;
    struct np_lora lora;   /* dim 0 when the model has no LoRA rows */
    char *ft_source;       /* repo/ref/files the fine-tuning block follows, or NULL */
};

struct np_recipe {
    char *name;         /* "llama3.1"; experiments are pretrain_<name>_<size>_<dtype>_<gpus> */
    char *title;        /* "Llama 3.1" as in the seeds' table headers */
    char *path;         /* file it was loaded from */
    char *source;       /* "seed 003" */
    int infer;          /* 1: may be chosen when RECIPE is unset and MODEL_SIZE is unique among infer recipes */
    char *framework_version; /* "25.02.01" */
    char *image;        /* "nvcr.io#nvidia/nemo:25.02.01" */
    char *default_size;
    enum np_dtype default_dtype;
    int default_gpus;
    char **command;     /* NULL-terminated argv template with {placeholders}, or NULL */
    /* how NVIDIA's scripts/performance of this container ran it ("nemo" block) */
    char *nemo_scripts; /* "25.02" / "25.04" */
    char *nemo_source;  /* repo/ref/files the block follows */
    char *fp8_recipe;   /* "delayed" / "current" */
    int numactl;        /* srun under numactl --cpunodebind/--membind=$((SLURM_LOCALID/4)) */
    int segment;        /* sbatch --segment on 4-GPU nodes beyond 18 nodes */
    int cross_entropy_te; /* model.config.cross_entropy_fusion_impl = "te" */
    int flops_callback; /* FLOPsMeasurementCallback (pre-training) */
    int profile_names_experiment; /* ENABLE_PROFILE appends _nsys to the experiment name, not only the job's */
    char **max_connections; /* "gpu\0N": CUDA_DEVICE_MAX_CONNECTIONS when TP or CP > 1, NULL-terminated */
    struct np_model *models;
    size_t nmodels;
};

struct np_recipe_set {
    struct np_recipe *recipes;
    size_t n;
    char **notes;       /* loader reports (inconsistent published rows), NULL-terminated */
    size_t nnotes;
};

/* Parse "bf16"/"fp8" (any case); NP_DTYPE_NONE when unknown. */
enum np_dtype np_dtype_parse(const char *s);
/* "bf16"/"fp8"; "BF16"/"FP8" with upper = 1. */
const char *np_dtype_name(enum np_dtype d, int upper);
/* "pretrain"/"sft"/"lora" (any case) -> 0 and *out; -1 when unknown. */
int np_task_parse(const char *s, enum np_task *out);
/* "pretrain"/"sft"/"lora" */
const char *np_task_name(enum np_task t);

/* Load one file into *out (caller frees with np_recipe_free). */
enum np_status np_recipe_load_file(const char *path, struct np_recipe *out, struct np_error *err);
/* Load every *.json of dir (sorted by name); recipe names must be unique. */
enum np_status np_recipe_set_load_dir(const char *dir, struct np_recipe_set *out, struct np_error *err);
/* Load from the data directory found by np_data_path("recipes"). */
enum np_status np_recipe_set_load_default(struct np_recipe_set *out, struct np_error *err);

void np_recipe_free(struct np_recipe *r);
void np_recipe_set_free(struct np_recipe_set *s);

/* Lookups: borrowed pointers valid until the set is freed; NULL when absent. */
const struct np_recipe *np_recipe_find(const struct np_recipe_set *s, const char *name);
const struct np_model *np_model_find(const struct np_recipe *r, const char *size);
const struct np_config_row *np_row_find(const struct np_model *m, const char *gpu_type,
                                        enum np_dtype dtype, int gpus);

/* The row of task t: np_row_find for NP_TASK_PRETRAIN, else a fine-tuning row.  Borrowed. */
const struct np_config_row *np_row_find_task(const struct np_model *m, enum np_task t, const char *gpu_type,
                                             enum np_dtype dtype, int gpus);
/* The rows of task t (pre-training: m->rows; fine-tuning: the ft_rows of that task are
 * among m->ft_rows, filter on row->task); *n gets the array length.  Borrowed. */
const struct np_config_row *np_model_rows(const struct np_model *m, enum np_task t, size_t *n);

/* The published cell of a correctable field ("mbs", "gbs", "ga", "vp", "seq_len"). */
int np_row_published(const struct np_config_row *row, const char *field);

/* The reference-table task a model's rows are published under: "lora" for AutoModel's LoRA
 * benchmarks (flops.lora_rank), else "pretrain".  Static string. */
const char *np_model_task(const struct np_model *m);

/* The value a launch uses for field ("mbs", "gbs", "ga", "vp"): the correction
 * if the row has one, else published; *corr (may be NULL) gets the correction or NULL. */
int np_row_value(const struct np_config_row *row, const char *field, int published,
                 const struct np_correction **corr);

/* The value of a "name\0value" setting (model env, model_config, max_connections). */
static inline const char *np_setting_value(const char *s)
{
    return s + strlen(s) + 1;
}

/* Architecture of a row: the model's, with the row's layer count. */
struct np_arch np_row_arch(const struct np_model *m, const struct np_config_row *row);

/* Locate a data folder ("recipes" or "reference"): $NEMOPERF_DATADIR/<sub>,
 * then beside the executable (source tree or installed share/nemoperf), then
 * the compiled-in NP_DATADIR.  Returns a new string (caller frees) or NULL. */
char *np_data_path(const char *sub);

/* Which rows a listing shows (NULL or "" matches all; any case): recipe, GPU type, dtype (a Megatron-Bridge -c
 * name or published label matches its rows; NeMo's bf16/fp8), task; container (Megatron-Bridge rows only: a
 * NeMo recipe's rows are left out when it is set). */
struct np_list_filter {
    const char *recipe;
    const char *gpu_type;
    const char *dtype;
    const char *task;
    const char *container;
};

#endif
