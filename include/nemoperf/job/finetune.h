/* ftjob.h - what a fine-tuning job (TASK=sft|lora, seed 000) needs on $STAGE_PATH and
 * tells its in-container driver.
 *
 * Layout under $STAGE_PATH (NEMO_HOME of the job), NeMo's own (v2.3.1):
 *   models/<org>/<name>/                       llm.import_ckpt output (nemo://<org>/<name>,
 *                                              nemo/lightning/io/api.py, recipes/finetune_default.py l.83)
 *   datasets/squad/{training,validation,test}.jsonl   SquadDataModule (gpt/data/squad.py l.102-145)
 *   datasets/squad/packed/<org>--<name>/training_<P>.npy, validation_<P>.npy, <P>_metadata.jsonl
 *                                              (gpt/data/fine_tuning.py l.274-312)
 *   datasets/squad-parquet/plain_text/{train,validation}-00000-of-00001.parquet
 *                                              the Hub files ./setup downloads (rajpurkar/squad)
 * Strings returned here are new (caller frees), NULL when out of memory.
 */
#ifndef NEMOPERF_FTJOB_H
#define NEMOPERF_FTJOB_H

#include <jansson.h>

#include "nemoperf/job/spec.h"
#include "nemoperf/util/shell.h"

#define NP_FT_SQUAD_REPO "rajpurkar/squad"   /* the Hub data set behind datasets.load_dataset("squad") */
#define NP_FT_SQUAD_REV "main"
#define NP_FT_SQUAD_DIR "datasets/squad"     /* NEMO_HOME/datasets/squad: get_dataset_root("squad") */
#define NP_FT_PARQUET_DIR "datasets/squad-parquet"

/* <stage>/models/<hf_repo> */
char *np_ft_model_dir(const char *stage, const char *hf_repo);
/* "<org>--<name>": the packed folder name NeMo derives from an HF tokenizer id
 * (fine_tuning.py l.348-350), also passed as packed_sequence_specs.tokenizer_model_name. */
char *np_ft_tokenizer_model_name(const char *hf_repo);
/* <stage>/datasets/squad/packed/<org>--<name>/<split>_<P>.npy (split: "training", "validation") */
char *np_ft_packed_path(const char *stage, const char *hf_repo, const char *split, int pack_len);
/* <stage>/datasets/squad/packed/<org>--<name>/<P>_metadata.jsonl */
char *np_ft_pack_metadata_path(const char *stage, const char *hf_repo, int pack_len);

/* Append the fine-tuning arguments of the driver for c (c->task != pretrain) to a:
 * --pack-len, --lora-dim/--lora-alpha/--lora-target, --tokenizer-model-name, --dataset-root
 * (the checkpoint is the recipe's own nemo://<org>/<name> under NEMO_HOME). */
void np_ft_driver_args(const struct np_launch_config *c, struct np_strv *a);

/* The "finetune" object of --print-config and the manifest (task, pack length, LoRA,
 * the staged checkpoint and the packed .npy path); a new reference, or json null
 * for pre-training; NULL when out of memory. */
json_t *np_ft_json(const struct np_launch_config *c);

#endif
