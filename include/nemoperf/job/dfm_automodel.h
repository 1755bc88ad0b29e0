/* dfm_automodel.h - DFM's AutoModel pre-training of Wan 2.1 14B: the kind ("dfm", backend "automodel") of
 * job/mbridge.c's table that runs the AutoModel-backend rows of DFM's performance summary.
 *
 * Owned by src/job/dfm_automodel.c.  DFM pins no performance recipe for these rows: the job runs DFM's own
 * example (examples/automodel/pretrain/pretrain.py) with the shipped config file and the row's overrides.
 */
#ifndef NEMOPERF_JOB_DFM_AUTOMODEL_H
#define NEMOPERF_JOB_DFM_AUTOMODEL_H

#include <jansson.h>

#include "nemoperf/job/dfm.h"
#include "nemoperf/job/spec.h"

/* torchrun's rendezvous port: examples/automodel/README.md:125 (MASTER_PORT=29500). */
#define NP_DFM_AM_RDZV_PORT NP_DFM_RDZV_PORT

/* Where the job sees the staged Hub model: <this>/<hf_model>, the staged folder mounted there.  The model id
 * must not depend on STAGE_PATH: DFM 9eaace1 dfm/src/automodel/recipes/train.py:87-90 runs
 * NeMoWanPipeline.from_config (random weights) when the id contains "wan", else
 * NeMoAutoDiffusionPipeline.from_pretrained, so a STAGE_PATH like /lustre/swan_stage would change what runs. */
#define NP_DFM_AM_MODEL_ROOT "/nemoperf/hf"

/* The model id the job passes (NP_DFM_AM_MODEL_ROOT/<hf_model>), a new string, NULL when out of memory. */
char *np_dfm_am_model_id(const struct np_mbridge_spec *b);

/* The container mount of the staged model, "<stage>/hf/<hf_model>:<model id>" (unquoted), a new string. */
char *np_dfm_am_mounts(const struct np_launch_config *c);

/* What each node's task runs: torchrun --nproc-per-node=<GPUs per node> --nnodes=<nodes> --rdzv_backend=c10d
 * --rdzv_endpoint=$MASTER_ADDR:29500 <DFM>/examples/automodel/pretrain/pretrain.py -c <experiment>/code/<yaml>
 * then the "--a.b=c" overrides (np_dfm_am_overrides).  New vector (np_strv_free), NULL when out of memory. */
char **np_dfm_am_argv(const struct np_launch_config *c);

/* The overrides alone, in order: the staged model (np_dfm_am_model_id), the row's global/local batch size and DP,
 * num_epochs=1 and the mock data set's length MAX_STEPS x GBS (the step bound), the checkpoint switch and
 * folder.  New vector, NULL when out of memory. */
char **np_dfm_am_overrides(const struct np_launch_config *c);

/* The "mbridge" object's part of --print-config for these rows: every setting with its source, and that DFM
 * pins no performance recipe for them.  New reference, NULL when out of memory. */
json_t *np_dfm_am_json(const struct np_launch_config *c);

/* Copy the shipped config file (share/nemoperf/dfm/conf/<mbridge.automodel.yaml>) into <experiment>/code/. */
enum np_status np_dfm_am_stage(const struct np_launch_config *c, struct np_error *err);

/* The file that shows the Hub model is staged (<stage>/hf/<hf_model>/model_index.json: ./setup writes it
 * last), a new string; what (n bytes) names the model for a refusal.  NULL when out of memory. */
char *np_dfm_am_staged(const struct np_launch_config *c, char *what, size_t n);

/* The repos of the job's PYTHONPATH, in order (mbridge.automodel.pythonpath).  Borrowed. */
char *const *np_dfm_am_path_names(const struct np_mbridge_spec *b);

#endif
