/* ftprep.h - what `TASK=sft|lora nemoperf-setup` stages for fine-tuning, after the image and
 * the tokenizer files: the model weights and SQuAD (downloaded here with the libcurl Hub
 * client, resumable and atomic, so neither the job nor the compute nodes need a network or
 * the token), then one one-node job per model (sbatch --wait, srun in the NeMo container)
 * that runs share/nemoperf/driver/nemoperf_ftprep.py: llm.import_ckpt into
 * $STAGE_PATH/models/<org>/<name> and NeMo's own SQuAD preparation and packing for every
 * pack length the model's rows run (layout: ftjob.h).  Disk needed is estimated up front
 * and checked against the free space before the weights are downloaded.
 */
#ifndef NEMOPERF_FTPREP_H
#define NEMOPERF_FTPREP_H

#include <signal.h>
#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/setup/hf.h"
#include "nemoperf/model/recipe.h"

#define NP_FTPREP_SCRIPT "nemoperf_ftprep.py"   /* share/nemoperf/driver/, copied to $STAGE_PATH/setup/ */
#define NP_FTPREP_TIME "04:00:00"               /* the job's time limit (405B: ~800 GB to convert) */
#define NP_FTPREP_DATA_BYTES 1073741824.0       /* SQuAD parquet + jsonl + packed files, rounded up */

/* The two SQuAD files (NP_FT_SQUAD_REPO, plain_text config) the preparation reads. */
extern const char *const np_ftprep_squad_files[];

struct np_ftprep_model {
    const struct np_recipe *recipe;   /* borrowed from the recipe set */
    const struct np_model *model;
    int packs[8];                     /* the pack lengths the model's rows of the task run */
    size_t npacks;
    int imported;                     /* $STAGE_PATH/models/<repo>/context exists */
    int prepared;                     /* every pack length's metadata file exists */
};

struct np_ftprep_plan {
    enum np_task task;
    const char *stage;                /* borrowed */
    struct np_ftprep_model models[8];
    size_t n;
    double need_bytes;                /* estimate of what is not staged yet (np_ftprep_need) */
};

/* bf16 weights of a model from its architecture (embedding and output untied): 2 bytes a
 * parameter; Llama3 8B 16.1e9, 70B 141e9, 405B 811e9 bytes. */
double np_ftprep_weight_bytes(const struct np_model *m);

/* The models of recipe (NULL: every recipe) with rows of task, limited to sizes (comma list,
 * NULL: all), with what each needs.  NP_E_INVALID naming TASK / RECIPE / MODEL_SIZE when
 * nothing matches. */
enum np_status np_ftprep_resolve(const struct np_recipe_set *set, const char *recipe, const char *sizes,
                                 enum np_task task, const char *stage, struct np_ftprep_plan *p,
                                 struct np_error *err);

/* Bytes the plan still needs on STAGE_PATH: per model not imported, the Hub weights
 * (weights_bytes[i] when > 0, e.g. the index's total_size, else the estimate) plus the
 * NeMo checkpoint of the same size; NP_FTPREP_DATA_BYTES when some data is unprepared. */
double np_ftprep_need(const struct np_ftprep_plan *p, const double *weights_bytes);

/* Download into $STAGE_PATH/hf/<repo>/ the weights of every model not yet imported
 * (model.safetensors.index.json and the shards it names, or model.safetensors), and SQuAD's
 * parquet files into $STAGE_PATH/datasets/squad-parquet/plain_text/.  Before the shards,
 * the space they and the checkpoint need is compared with the free space of STAGE_PATH
 * (free_space NULL: statvfs): NP_E_IO naming both when short.  Failures are printed;
 * returns the number of failed steps. */
int np_ftprep_download(const struct np_ftprep_plan *p, struct np_hf_client *c,
                       int (*free_space)(const char *, double *), volatile sig_atomic_t *cancel);

struct np_ftprep_job_opts {
    const char *sqsh;                 /* the staged container image */
    const char *sbatch_prog;          /* NULL: "sbatch" from PATH */
    const char *account, *partition;  /* or NULL */
    const char *log_dir;              /* job output: <log_dir>/setup-ftprep_%j.out */
    volatile sig_atomic_t *cancel;
};

/* The sbatch command of model m's job (new NULL-terminated argv, np_strv_free), NULL when out
 * of memory. */
char **np_ftprep_job_argv(const struct np_ftprep_plan *p, const struct np_ftprep_model *m,
                          const struct np_ftprep_job_opts *o);

/* Copy the in-container script to $STAGE_PATH/setup/ and run the job of every model not
 * imported or not prepared; checks the results afterwards.  Failures are printed; returns
 * the number of failed models. */
int np_ftprep_run(struct np_ftprep_plan *p, const struct np_ftprep_job_opts *o);

#endif
