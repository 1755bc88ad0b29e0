/* mbridge_lora.h - ./setup's staging of what a Megatron-Bridge LoRA row reads besides its Hub files.
 *
 * Owned by src/setup/mbridge_lora.c.  The 26.06 LoRA rows train on packed SQuAD from a converted checkpoint
 * (job/mbridge_perf.h np_mbridge_perf_staged says where the launch looks); setup downloads the base model and
 * SQuAD with the Hub client, then one one-node job makes the data set cache, its rajpurkar___squad link and the
 * Megatron-Bridge checkpoint there, with NVIDIA's commands.
 */
#ifndef NEMOPERF_SETUP_MBRIDGE_LORA_H
#define NEMOPERF_SETUP_MBRIDGE_LORA_H
#include <signal.h>
#include <stdio.h>
#include "nemoperf/model/mbperf.h"
#include "nemoperf/setup/finetune_prep.h"
#include "nemoperf/setup/hf.h"

#define NP_MBLORA_TIME "00:55:00" /* exemplar-performance e249aa3 llama3/finetune/download_ckpt_dataset.sh:71 */

struct np_mblora {
    const char *stage;        /* borrowed */
    const char *recipe;       /* the row's recipe (borrowed) */
    const char *hf_repo;      /* the base model on the Hub (the table in mbridge_lora.c) */
    char *model_dir, *squad_dir; /* the downloads: <stage>/mbridge/repos/<name>, .../squad */
    char *datasets, *link;    /* <stage>/mbridge/datasets and its rajpurkar___squad */
    char *ckpt, *ckpt_tmp;    /* <stage>/mbridge/checkpoints/<recipe>, and the name it is made under */
    char *checkout;           /* the row's Megatron-Bridge checkout (convert_checkpoints.py) */
    int have_ckpt, have_data; /* already where the launch looks */
    double weight_bytes;      /* the index's total_size once fetched, else an estimate */
};

/* The plan for row: 1 when the row is a LoRA row whose inputs setup makes (p filled, free with np_mblora_free),
 * 0 when it reads none, -1 out of memory or a LoRA row with no base model in the table (said). */
int np_mblora_plan(const char *stage, const struct np_mbperf_row *row, struct np_mblora *p);
void np_mblora_free(struct np_mblora *p);
/* Slurm's answer to the job's request (one node, a GPU, SBATCH_* as given) through sbatch --test-only: 2 and
 * an error naming the partition and the GPU when it can never run (a warning under dry_run), else 0. */
int np_mblora_check_slurm(const struct np_mblora *p, const struct np_ftprep_job_opts *o, int dry_run);
/* The job's sbatch argv (new, np_strv_free), only the steps not yet done; NULL out of memory. */
char **np_mblora_job_argv(const struct np_mblora *p, const struct np_ftprep_job_opts *o);
/* The plan as --dry-run prints it (the downloads, the job). */
void np_mblora_dry_run(const struct np_mblora *p, const struct np_ftprep_job_opts *o, const char *endpoint, FILE *out);
/* Download the base model (when the checkpoint is missing) and SQuAD (when the data is), the free space checked
 * after the index and before the shards; then the job; then the result checked.  "already staged" when both
 * are there.  Result lines on out; the number of failures (each said). */
int np_mblora_stage(struct np_mblora *p, struct np_hf_client *c, const struct np_ftprep_job_opts *o, FILE *out);
#endif
