/* mbperf.h - Megatron-Bridge's performance rows as launchable recipe data (rows-<container>.json).
 *
 * Owned by src/model/mbperf.c.  Each row of share/nemoperf/megatron-bridge/rows-<container>.json (written by
 * extract-recipes.py from the pinned release) becomes one typed np_mbperf_row, and, so the launch pipeline reads
 * it as any other job, one np_recipe holding one np_model holding one np_config_row, with the Megatron-Bridge
 * spec (kind "perf": job/mbridge_perf.c) of the row's release.  Everything is owned by the set.
 */
#ifndef NEMOPERF_MODEL_MBPERF_H
#define NEMOPERF_MODEL_MBPERF_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/model/mbdtype.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/util/error.h"

/* The containers nemoperf launches, newest first: those whose release's launcher job/mbridge_perf.c renders
 * (extract-recipes.py LAUNCHERS; a row of any other container has "launch": {"launchable": false}). */
extern const char *const np_mbperf_containers[];
extern const size_t np_mbperf_ncontainers;
/* Every container Megatron-Bridge publishes rows of (a rows-<container>.json each), newest first. */
extern const char *const np_mbperf_published[];
extern const size_t np_mbperf_npublished;

struct np_mbperf_row {
    char *container, *release, *commit;   /* "26.08", "v0.6.0", 40 hex */
    char *task, *family, *recipe, *gpu_type; /* "pretrain", "deepseek", "deepseek_v3", "gb300" */
    enum np_mb_dtype dtype;
    int gpus, gpus_per_node;
    int seq_len, tp, pp, cp, vp, ep, gbs, mbs; /* published; 0 = none ("-", n/a) */
    char *published_source;                 /* "docs/performance-summary.md:45" (at the reference commit) */
    char *variant;                          /* published variant ("w/o MTP"), "-" when none */
    char *config, *config_source;           /* release config (function or WorkloadBaseConfig name), file:lines */
    char *config_variant;                   /* -cv, or NULL */
    char **args;                            /* the rank command's arguments as shipped (-ms 50), NULL-terminated */
    char **env;                             /* v0.6.0: the recipe's cfg.env_vars "NAME\0VALUE", or NULL */
    /* v0.5.0: the WorkloadBaseConfig fields PerfEnvPlugin reads (perf_plugins.py:283-351, 495-574) */
    char *flex_backend;                     /* moe_flex_dispatcher_backend, or NULL */
    int moe_a2a_overlap, cutedsl_fused_grouped_mlp, nccl_ub, use_megatron_fsdp;
    int cuda_graph_full_iteration;          /* cuda_graph_impl full_iteration, or local with scope full_iteration */
    /* "launcher": the environment ("NAME\0VALUE") and task overrides the release's own slurm_executor() and
     * PerfEnvPlugin.setup() give the row (extract-recipes.py runs them: launcher-env.py), and where from */
    char **launcher_env, **launcher_args, *launcher_source;
    /* releases before v0.3.0 ("launcher".rank: launcher-env.py --main ran their setup_experiment.py): the rank
     * command's script (relative to the checkout) and arguments as the release builds them, with @CHECKOUT@,
     * @ACCOUNT@ and @PARTITION@ left for the launch; NULL for the others */
    char *rank_script, **rank_args;
    int numa_divisor;                       /* the executor's numactl divisor ("launcher".pre_cmds), 0: the usual */
    int segment_beyond_rack;                /* the executor adds --segment only beyond 18 nodes (v0.1/v0.2) */
    int train_iters;                        /* the release config's run length when its parser has no -ms, or 0 */
    int launchable;                         /* "launch".launchable: 0 for a container nemoperf does not launch */
    char *why_not;                          /* "launch".why_not "; "-joined, or NULL */
    json_t *json;                           /* the row as shipped (print-config reads resolved/published) */
    /* the row as a recipe (pointers into this row): as_recipe.models = &model, model.rows = &cfg */
    struct np_recipe as_recipe;
    struct np_model model;
    struct np_config_row cfg;
    struct np_mbridge_spec spec;
    struct np_mbridge_repo repo;
    char *pythonpath[3];
    void *owned;                            /* the strings of that shape (mbperf.c) */
};

struct np_mbperf_set {
    struct np_mbperf_row *rows;             /* newest container first, each file in its order */
    size_t n;
};

/* Load the rows-<container>.json of every launched container of dir (NULL: np_data_path("megatron-bridge")).
 * NP_E_PARSE with the file and field on bad data; the set is empty and needs no free then. */
enum np_status np_mbperf_load(const char *dir, struct np_mbperf_set *out, struct np_error *err);
/* The same, and the rows of extra when it is a published container nemoperf does not launch (--print-config
 * shows such a row and why it is not launched); extra NULL: np_mbperf_load. */
enum np_status np_mbperf_load_ex(const char *dir, const char *extra, struct np_mbperf_set *out, struct np_error *err);
void np_mbperf_free(struct np_mbperf_set *s);

/* 1 when name (any case) is a recipe of the set (in container when not NULL). */
int np_mbperf_has_recipe(const struct np_mbperf_set *s, const char *name, const char *container);

/* 1 when container is one of np_mbperf_containers. */
int np_mbperf_container_known(const char *container);

/* The rank command's entry point of a release, relative to the checkout: "scripts/performance/bootstrap.py"
 * (v0.6.0 setup_experiment.py:67,591) or "scripts/performance/run_script.py" (v0.5.0 setup_experiment.py:63,518). */
const char *np_mbperf_entry(const char *release);

#endif
