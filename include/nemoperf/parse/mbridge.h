/* mbridge.h - Megatron-Bridge performance runs: NVIDIA's published rows, the log, the metrics.
 *
 * Reference: share/nemoperf/reference/megatron-bridge/runs.tsv (every published measurement of every
 * container version, Megatron-Bridge's -mr/-c/-g names) and share/nemoperf/megatron-bridge/peaks.tsv.
 * Log: the last rank's " iteration i/N | ... elapsed time per iteration (ms): x | ... global batch size: g |"
 * lines and rank 0's "Step Time : s GPU utilization: t MODEL_TFLOP/s/GPU" lines (train_utils.py); the log
 * prints no tokens/s, so tokens/s/GPU = seq x GBS / (step x GPUs).
 */
#ifndef NEMOPERF_MBRIDGE_H
#define NEMOPERF_MBRIDGE_H

#include <stddef.h>
#include <stdio.h>

#include "nemoperf/model/mbdtype.h" /* enum np_mb_dtype, np_mb_dtype_parse/name/label */
#include "nemoperf/util/error.h"

struct np_ref_row;

/* One published measurement (runs.tsv line).  Integers are 0 where the table has "-" or "n/a". */
struct np_mb_row {
    char container[12], task[12], recipe[48], family[24], model[48], variant[24], precision[24], gpu_type[8];
    char published_as[8], footnote[64], mb_release[16], source[64];
    enum np_mb_dtype dtype;
    int gpus, gbs, mbs, seq_len, fsdp, tp, pp, cp, vp, ep, ga;
    double tokens_per_s_per_gpu, model_tflops_per_gpu;
    int line; /* in runs.tsv */
    char cited[160]; /* "Megatron-Bridge performance summary, 26.08 (docs/performance-summary.md:45)" */
};

struct np_mb_ref {
    struct np_mb_row *rows;
    size_t n;
    char peak_gpu[16][8];
    double peak[16][NP_MB_NDTYPES]; /* 0 = not supported */
    size_t npeaks;
    struct np_ref_row *published; /* rows[i] as --reference reads a published row (parse/reference.h), n of them;
                                     its strings borrowed from rows[i] */
};

/* Load runs.tsv and peaks.tsv (errors carry file:line:column).  _default finds them with np_data_path. */
enum np_status np_mb_ref_load(const char *runs_tsv, const char *peaks_tsv, struct np_mb_ref *ref,
                              struct np_error *err);
enum np_status np_mb_ref_load_default(struct np_mb_ref *ref, struct np_error *err);
void np_mb_ref_free(struct np_mb_ref *ref);

/* Dense peak TFLOP/s of gpu for dtype; 0 when unknown or unsupported (NVFP4 on H100). */
double np_mb_peak(const struct np_mb_ref *ref, const char *gpu, enum np_mb_dtype dtype);

/* Versions newest first ("26.08", "26.06.01", ...): 1 if a is newer than b. */
int np_mb_container_newer(const char *a, const char *b);

/* The published row for a run: container NULL or "" = the newest version that has one; gbs/seq_len 0 = any;
 * task NULL = "pretrain".  Among several matches the first published.  Borrowed pointer or NULL. */
const struct np_mb_row *np_mb_ref_find(const struct np_mb_ref *ref, const char *container, const char *task,
                                       const char *recipe, enum np_mb_dtype dtype, const char *gpu, int gpus,
                                       int gbs, int seq_len);
/* Is recipe one of Megatron-Bridge's published -mr names? */
int np_mb_ref_has_recipe(const struct np_mb_ref *ref, const char *recipe);

/* What a Megatron-Bridge log says. */
struct np_mb_log {
    long *iter;       /* iteration numbers, in log order */
    double *ms;       /* elapsed time per iteration (ms) */
    int *gbs;         /* global batch size of each iteration line */
    size_t n, cap;
    long train_iters; /* N of "iteration i/N" (last seen), 0 unknown */
    double *util;     /* rank 0's MODEL_TFLOP/s/GPU figures, in log order */
    size_t nutil, ucap;
    int nan_grad;     /* a "grad norm: nan" was seen (llmb refuses such runs) */
};

/* Read a whole log (file or stream).  Appends to log; np_mb_log_free releases it. */
enum np_status np_mb_log_read(FILE *f, const char *name, struct np_mb_log *log, struct np_error *err);
void np_mb_log_free(struct np_mb_log *log);

/* Steady window: first..last iteration numbers (inclusive).  NVIDIA's llmb parser averages iterations
 * 35-44 of 50 (exemplar-performance cli/llmb-run/src/llmb_run/pretrain_log_parser.py:31-39,210-281). */
#define NP_MB_WINDOW_FIRST 35
#define NP_MB_WINDOW_LAST 44

struct np_mb_result {
    long first, last;              /* the window used */
    size_t steps;                  /* iteration lines averaged */
    double step_s;                 /* mean elapsed time per iteration */
    int gbs;                       /* from the log (0: none printed) */
    double tokens_per_s_per_gpu;
    double flops_per_token;        /* NAN: family not implemented (why_flops says why) */
    double model_tflops_per_gpu;   /* from the formula, NAN when not implemented */
    double logged_tflops_per_gpu;  /* mean of rank 0's figures paired with the window's lines, NAN if none */
    double tflops_disagreement;    /* logged / formula - 1, NAN when either is missing */
    double mfu_percent;            /* of the figure reported (formula, else logged) against the dtype's peak */
    const char *why_flops;
    char problem[200];             /* "" or why the window is not usable */
};

/* Metrics of a log for a run of recipe/task/variant at seq_len x gbs on gpus GPUs of gpu with dtype, tp
 * (vocabulary padding) and Megatron-Bridge release (formula convention).  window first/last < 0: the llmb
 * window, or, when the run has fewer iterations, its last 10.  Returns 0, or -1 with r->problem set. */
int np_mb_analyse(const struct np_mb_log *log, const struct np_mb_ref *ref, const char *recipe, const char *task,
                  const char *variant, const char *mb_release, enum np_mb_dtype dtype, const char *gpu, int gpus,
                  int gbs, int seq_len, int tp, long first, long last, struct np_mb_result *r);

#endif
