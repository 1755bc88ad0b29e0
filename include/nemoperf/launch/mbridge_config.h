/* mbridge_config.h - which Megatron-Bridge performance rows a launch asks for (RECIPE=deepseek_v3 ...).
 *
 * Owned by src/launch/mbridge_config.c; called by launch/config.c.  Reads RECIPE (+ MODEL_SIZE), CONTAINER,
 * DTYPE, GPU_TYPE, TASK, CONFIG_VARIANT, JOB_TOTAL_GPUS, GPUS_PER_NODE and the cells GBS, MBS and SEQ_LEN
 * against rows-<container>.json (model/mbperf.h) and picks one row per requested scale; each refusal names the
 * variable and lists what exists.
 */
#ifndef NEMOPERF_LAUNCH_MBRIDGE_CONFIG_H
#define NEMOPERF_LAUNCH_MBRIDGE_CONFIG_H

#include "nemoperf/model/mbperf.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/util/env.h"
#include "nemoperf/util/error.h"

#define NP_MB_CONFIG_MAX 64

struct np_mb_choice {
    const struct np_mbperf_row *rows[NP_MB_CONFIG_MAX]; /* one per scale, in JOB_TOTAL_GPUS order; borrowed */
    int gpus[NP_MB_CONFIG_MAX];
    size_t n;
    int gpus_per_node;       /* GPUS_PER_NODE, 0 = each row's (4 on GB200/GB300, else 8) */
};

/* --print-config with CONTAINER a published container nemoperf does not launch: replace the set by one that also
 * holds that container's rows (each "launchable": false, with why).  NP_OK otherwise too. */
enum np_status np_mb_config_unlaunched(struct np_mbperf_set *mb, np_env_fn env, void *env_ctx, struct np_error *err);

/* 1 when the launch names a Megatron-Bridge row: CONTAINER is set, or RECIPE (with MODEL_SIZE appended as
 * "_<size>") is no recipe of set but a Megatron-Bridge recipe name.  Loads the rows into *mb when it returns 1
 * (caller frees with np_mbperf_free); -1 with err set when the rows cannot be read. */
int np_mb_config_wanted(const struct np_recipe_set *set, np_env_fn env, void *env_ctx, struct np_mbperf_set *mb,
                        struct np_error *err);

/* Resolve the rows of task.  NP_E_INVALID naming the variable and listing what exists.  Where a container
 * publishes a request more than once (config variants), CONFIG_VARIANT or the cells choose; unset, the
 * release's own default (-cv omitted) is taken and said.  A cell contradicting the row is refused. */
enum np_status np_mb_config_pick(const struct np_mbperf_set *mb, np_env_fn env, void *env_ctx, enum np_task task,
                                 struct np_mb_choice *out, struct np_error *err);

/* NP_E_INVALID when a variable that only chooses among Megatron-Bridge rows (CONFIG_VARIANT, GBS, MBS,
 * SEQ_LEN) is set for a launch that is not one (never ignored); NP_OK otherwise. */
enum np_status np_mb_config_not_mb(np_env_fn env, void *env_ctx, struct np_error *err);

/* Append item to a ", "-separated list in buf (once); config.c's messages use it too. */
void np_mb_config_join(char *buf, size_t cap, const char *item);

#endif
