/* automodel.h - the NeMo AutoModel benchmark workload (seed 001): what a job runs.
 *
 * Owned by src/job/automodel.c: the torchrun command of one task per node that runs
 * nemo_automodel/recipes/llm/benchmark.py -c examples/llm_benchmark/<yaml> with the overrides
 * that reproduce a published row, and the --list table.  What ./setup stages for it:
 * setup/automodel.h; its log: parse/automodel_log.h.
 */
#ifndef NEMOPERF_JOB_AUTOMODEL_H
#define NEMOPERF_JOB_AUTOMODEL_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/util/shell.h" /* np_strv_free */

#define NP_AUTOMODEL_WORKDIR "/opt/Automodel"
#define NP_AUTOMODEL_RDZV_PORT 13742 /* Automodel's slurm.sub */
/* The rendezvous word of a torchrun argv ("<this>:<port>"): np_automodel_render_argv lets the job's shell
 * expand $MASTER_ADDR in it. */
#define NP_AUTOMODEL_RDZV_WORD "--rdzv_endpoint=$MASTER_ADDR"

/* The YAML a row runs (its own, else the model's); borrowed. */
const char *np_automodel_yaml(const struct np_model *m, const struct np_config_row *row);

/* The benchmark.py overrides that reproduce the row, one "--key=value" per entry, NULL-terminated:
 * batch sizes, max_steps and warmup (the model's published 30/10 or 10/5 when max_steps <= 0);
 * model_path (the staged config/weights folder, or NULL for the Hub repo) is passed as the model's
 * pretrained_model_name_or_path.  Returns a new vector (free with np_strv_free) or NULL. */
char **np_automodel_overrides(const struct np_model *m, const struct np_config_row *row, int max_steps, int warmup,
                              const char *model_path);

struct np_launch_config;
struct np_buf;
/* Warm-up iterations of a job: the model's, or a third of MAX_STEPS when that is not above it. */
int np_automodel_warmup(const struct np_launch_config *c);
/* The job's AutoModel facts (yaml, load kind, warm-up, LBS, torchrun shape, staged model path) for
 * --print-config and the manifest; a new reference, NULL when out of memory. */
json_t *np_automodel_json(const struct np_launch_config *c);
/* GPUs per node of the job (torchrun --nproc-per-node): GPUS_PER_NODE, fewer on a partial node. */
int np_automodel_nproc(const struct np_launch_config *c);
/* What each node's task runs for WORKLOAD=nemo: torchrun ... benchmark.py -c <yaml> <overrides>, the
 * rendezvous word naming $MASTER_ADDR (np_automodel_render_step lets the job's shell expand it).
 * A new NULL-terminated vector (np_strv_free) or NULL when out of memory. */
char **np_automodel_command(const struct np_launch_config *c);
/* Append the job's step for an AutoModel model: MASTER_ADDR from the node list, then one srun task
 * per node (stdout to <log_prefix><restart>.out, stderr to .err) running argv: for WORKLOAD=nemo
 * np_automodel_command() in the container from /opt/Automodel (the model path is the folder ./setup
 * stages under $STAGE_PATH/hf), for WORKLOAD=synthetic nemoperf-synth in torchrun's place.
 * log_prefix is already a Slurm file pattern.  0, or -1 when out of memory / not an AutoModel model. */
int np_automodel_render_step(const struct np_launch_config *c, const char *log_prefix, char *const *argv,
                             struct np_buf *b);

/* "MASTER_ADDR=<first node of the allocation>; export MASTER_ADDR" lines of a torchrun job. */
void np_automodel_master_addr(struct np_buf *b);
/* Append argv to an srun line: " \\\n    'word'" each, an option and its value on one line, the
 * NP_AUTOMODEL_RDZV_WORD word as --rdzv_endpoint="$MASTER_ADDR"':port'. */
void np_automodel_render_argv(struct np_buf *b, char *const *argv);

struct np_list_filter;
/* The AutoModel rows of the set that match filter (NULL: all; see np_launch_list) as an aligned table
 * after a blank line (a new string, caller frees); "" when none, NULL when out of memory. */
char *np_automodel_list_text(const struct np_recipe_set *set, const struct np_list_filter *filter);

#endif
