/* automodel.h - the NeMo AutoModel benchmark workload (seed 001): what a job runs, and its log.
 *
 * Launch side (workload_automodel.c): the torchrun command of one task per node that runs
 * nemo_automodel/recipes/llm/benchmark.py -c examples/llm_benchmark/<yaml> with the overrides
 * that reproduce a published row, and the --list table.  Log side (amlog.c): the benchmark
 * recipe's rank-0 lines on stdout and stderr, read into the scanner's step records.
 */
#ifndef NEMOPERF_AUTOMODEL_H
#define NEMOPERF_AUTOMODEL_H

#include <jansson.h>
#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/setup/hf.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/scan.h"
#include "nemoperf/util/shell.h" /* np_strv_free */

#define NP_AUTOMODEL_WORKDIR "/opt/Automodel"
#define NP_AUTOMODEL_RDZV_PORT 13742 /* Automodel's slurm.sub */

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

struct np_list_filter;
/* The AutoModel rows of the set that match filter (NULL: all; see np_launch_list) as an aligned table
 * after a blank line (a new string, caller frees); "" when none, NULL when out of memory. */
char *np_automodel_list_text(const struct np_recipe_set *set, const struct np_list_filter *filter);

/* ---- ./setup (stage_automodel.c) ---- */

struct np_automodel_staged {
    int fetched, present, absent; /* files downloaded now / already there / optional and not in the repo */
    int code_files;               /* remote-code modules named by config.json's auto_map */
    int shards;                   /* weight shards (from_pretrained) */
    double bytes;                 /* downloaded now */
    double weights_total;         /* the index's metadata.total_size, or -1 / 0 */
};

/* Stage model m's files from the Hub into dir ($STAGE_PATH/hf/<repo>): config.json and, with
 * trust_remote_code, the modules its auto_map names; for from_pretrained models also the
 * safetensors index and every shard, after checking that free_space(dir) (NULL: statvfs) holds
 * what is missing (NP_E_IO naming the sizes otherwise; nothing is deleted).  Re-running resumes
 * (.part files) and skips what is complete.  Errors from hf.c pass through. */
enum np_status np_automodel_stage(struct np_hf_client *c, const struct np_model *m, const char *dir,
                                  int (*free_space)(const char *path, double *bytes),
                                  struct np_automodel_staged *out, struct np_error *err);

/* ---- the benchmark log ---- */

/* What the benchmark recipe prints besides the iterations (NAN / -1 when absent). */
struct np_amlog_summary {
    double avg_step_time_s;  /* "Average iteration time: X seconds" = seed 001's "Time per Global Step" */
    double avg_mfu_percent;  /* "Average MFU: Y%" */
    long warmup_steps;       /* "(excluding first N warmup iterations)" */
    long timed_steps;        /* "Total iteration time (N steps)" */
    double step_tflops;      /* "TFLOPs/GPU: Z": the whole global step on all GPUs (LoRA multiplier included) */
    double lora_multiplier;  /* "TFLOPS multiplier for PEFT: (2 + r) / 3 = m" */
    long gbs, lbs, ga, dp;   /* "GA steps: .., DP size: .., Local batch size: .., Global batch size: .." */
    long max_train_steps;    /* the setup header's "- Max train steps: N" (the steps' total is then N-1) */
    int seen;                /* 1 when any AutoModel benchmark line was found */
    enum np_status companion_status; /* np_amlog_read: NP_OK, or why the .err companion could not be read */
    struct np_error companion;       /* its message; the .out is then read alone */
};

/* Read an AutoModel benchmark log: path, plus its stderr companion (same name ending in .err
 * instead of .out) when that exists, or one merged file.  Steps (iteration, "Max iter time",
 * memory, loss) go to out->steps with gen NP_GEN_AMBENCH; out is reset first.  A file that is not
 * such a log gives NP_OK with no steps and sum->seen 0.  NP_E_IO for an unreadable path; an unreadable
 * companion is not fatal: path is read alone and sum->companion says why. */
enum np_status np_amlog_read(const char *path, struct np_scan_result *out, struct np_amlog_summary *sum,
                             struct np_error *err);
/* The same over memory: stdout and stderr texts (either may be NULL). */
enum np_status np_amlog_buffers(const char *out_text, size_t out_len, const char *err_text, size_t err_len,
                                struct np_scan_result *out, struct np_amlog_summary *sum, struct np_error *err);

/* An AutoModel training-loop log (the scanner's NP_GEN_AUTOMODEL "step N | epoch E | ..." lines)
 * prints its step total only once, in the setup header "- Max train steps: N".  When res's last
 * step is such a step without a total, the header is read from the start of dirfd/name (up to the
 * first step line) and its steps get total N-1, or N when the first step printed after the header
 * is 1 (Automodel before 2025-10-13 counted steps from 1).  No header, or an unreadable file:
 * res unchanged.  res->bytes_read counts the bytes read. */
void np_amlog_header_total(int dirfd, const char *name, struct np_scan_result *res);

#endif
