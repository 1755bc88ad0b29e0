/* dfm.h - NeMo DFM's Wan pre-training as a Megatron-Bridge job kind ("dfm" in job/mbridge.c's table). */
#ifndef NEMOPERF_JOB_DFM_H
#define NEMOPERF_JOB_DFM_H

#include <jansson.h>

#include "nemoperf/job/spec.h"

/* torchrun's rendezvous port on several nodes, the Megatron-Core rows' and the AutoModel rows'
 * (DFM 9eaace1 examples/automodel/README.md:125, MASTER_PORT=29500). */
#define NP_DFM_RDZV_PORT 29500

/* Is row an AutoModel-backend row (DFM's AutoModel recipe, not pretrain_wan.py)? */
int np_dfm_row_automodel(const struct np_config_row *row);

/* The rank command: python <DFM checkout>/examples/megatron/recipes/wan/pretrain_wan.py --mock --training-mode
 * pretrain --config-file <experiment>/code/<row yaml> train.train_iters=<MAX_STEPS> checkpoint.save=null (or the
 * experiment's checkpoints folder with ENABLE_CHECKPOINT); job/mbridge.c adds the profiling overrides.  New vector. */
char **np_dfm_argv(const struct np_launch_config *c);

/* The "mbridge" object's DFM part of --print-config: config file, overrides, parallelism and batch sizes, each
 * with its source.  New reference, NULL when out of memory. */
json_t *np_dfm_json(const struct np_launch_config *c);

/* Copy the row's config file (share/nemoperf/dfm/conf/<yaml>) into <experiment>/code/. */
enum np_status np_dfm_stage(const struct np_launch_config *c, struct np_error *err);

/* Copy share/nemoperf/dfm/conf/<name> into <experiment>/code/<name> (atomically). */
enum np_status np_dfm_stage_conf(const struct np_launch_config *c, const char *name, struct np_error *err);

/* Path of share/nemoperf/dfm/conf/<name>, NULL when not found (or name NULL).  Caller frees. */
char *np_dfm_conf_path(const char *name);

/* {"value": v (stolen; NULL: null), "source": source}: a --print-config setting.  New reference. */
json_t *np_dfm_sourced(json_t *v, const char *source);

/* Path of the shipped config file of row (share/nemoperf/dfm/conf/<yaml>), NULL when not found.  Caller frees. */
char *np_dfm_conf_source(const struct np_config_row *row);

#endif
