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
#include "nemoperf/job/spec.h"       /* struct np_launch_config, enum np_workload */
#include "nemoperf/slurm/timelimit.h" /* np_time_limit_valid */
#include "nemoperf/util/env.h"        /* np_env_fn, np_parse_bool */

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
    /* 1 for --print-config: a Megatron-Bridge row of a published container nemoperf does not launch is shown
     * (with "launchable": false and why) instead of refused. */
    int config_only;
};

struct np_launch_plan {
    struct np_launch_config *jobs; /* one per JOB_TOTAL_GPUS entry, in the order given */
    size_t n;
    struct np_mbperf_set *mb;      /* Megatron-Bridge rows the jobs point into (owned), or NULL */
    int repeats;                   /* REPEATS: identical jobs of each, each its own folder (1..NP_LAUNCH_MAX_REPEATS) */
};
#define NP_LAUNCH_MAX_REPEATS 100

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
char *np_launch_list(const struct np_recipe_set *set, const struct np_list_filter *filter, int json);

#endif
