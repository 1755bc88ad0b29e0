/* flops.h - model FLOPs per sample, GPU peak table, and metrics from a step time.
 *
 * Conventions (S = sequence length, L layers, h hidden, F ffn hidden, A heads,
 * G query groups, V vocab, k top-k experts, c = 1/2 when causal else 1):
 *   llama3:          S L h^2 (12 + 12G/A + 18F/h + 12 c S/h + 6V/(L h))
 *   nemotron:        the same with 12F/h          (NeMo flops_formulas; seed 000)
 *   nemotron-legacy: S (24 L h^2 + 12 c L h S + 48 L h^2 + 6 V h)   (seed 004's printed formula)
 *   mixtral:         llama3 with 18 k F/h
 *   gpt3:            (24 S h^2 + 4 c S^2 h) 3 L + 6 S h V
 *   automodel-*:     NeMo AutoModel's flops_utils.py families (seed 001), in flops_automodel.c
 *   dit-wan:         Wan 2.1's video DiT (NeMo DFM), per sample of seq_len latent patches, in flops_dit.c
 */
#ifndef NEMOPERF_FLOPS_H
#define NEMOPERF_FLOPS_H

#include <stddef.h>

#include "nemoperf/model/arch.h"

/* One FLOPs family, named by a recipe's flops.convention.  A new family is a function (its own file when it
 * is more than a line) and a row of the table in flops.c. */
struct np_flops_family {
    enum np_flops_conv conv;
    const char *name;  /* the recipes' flops.convention */
    /* FLOPs of one sample of seq_len tokens, forward + backward; NAN when a field it needs is 0 */
    double (*per_sample)(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                         int kv_groups, int causal, int seq_len);
    /* the first field a/x lack for this family (pattern: the hybrid pattern or NULL), or NULL; NULL hook: none */
    const char *(*missing)(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                           const char *pattern);
    int lora;        /* AutoModel's LoRA multiplier applies (flops.lora_rank) */
    int needs_vocab; /* a language model: the logits layer counts, arch.vocab required */
};

/* The family of conv, or of a convention name; NULL when unknown. */
const struct np_flops_family *np_flops_family(enum np_flops_conv conv);
const struct np_flops_family *np_flops_family_named(const char *name);
/* Convention name of c ("llama3"); "?" when unknown. */
const char *np_flops_conv_name(enum np_flops_conv c);
/* Every convention name in table order into buf ("a, b or c"; cut at size). */
void np_flops_conv_names(char *buf, size_t size);

/* Model FLOPs for one sample of seq_len tokens (forward + backward) of a NeMo convention (llama3, nemotron,
 * nemotron-legacy, mixtral, gpt3); NAN for the others (they need np_arch_extra: np_model_flops_row). */
double np_model_flops(enum np_flops_conv conv, const struct np_arch *arch, int kv_groups, int causal,
                      int seq_len);

/* AutoModel family conv (automodel-*) for one sample; NAN when a field it needs is 0. */
double np_flops_automodel(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                          int seq_len);
/* Name of the first field conv needs that a/x lack (pattern: the hybrid pattern or NULL), or NULL. */
const char *np_flops_automodel_missing(enum np_flops_conv conv, const struct np_arch *a,
                                       const struct np_arch_extra *x, const char *pattern);
/* AutoModel's LoRA multiplier (2 + lora/frozen)/3 for a dense decoder with rank-`rank` adapters on
 * every linear layer (and lm_head); the counts go to lora_params and frozen_params when not NULL.
 * NAN for a mixture of experts or rank <= 0. */
double np_flops_lora_multiplier(const struct np_arch *a, const struct np_arch_extra *x, int rank, int lm_head,
                                double *lora_params, double *frozen_params);

/* Wan 2.1 DiT FLOPs (forward + backward) of one sample of seq_len video tokens, bidirectional attention within
 * the sample, cross-attention over x->text_len text tokens; NAN when a field it needs is 0 (flops_dit.c). */
double np_flops_dit(const struct np_arch *a, const struct np_arch_extra *x, int seq_len);


/* Fine-tuning FLOPs of one packed sequence of `tokens` real tokens whose
 * sub-sequence lengths s_i have sum_i s_i^2 = sum_sq (forward + backward):
 *   F = k L h^2 (12 + 12G/A + 18F/h + 6V/(L h)) tokens + 12 L h sum_sq
 * attention counted in full (non-causal) and outside k; k = 1 for SFT, 2/3 for
 * LoRA (forward + dgrad of the frozen weights, no wgrad; adapter FLOPs ignored).
 * Megatron-Bridge fa4a01b79 src/megatron/bridge/training/utils/flop_utils.py
 * l.190-218 (LoRA), generalised to SFT with k = 1 as seed 000's columns need
 * (facts/seed000.md, "FLOPs behind ...").  kv_groups > 0 overrides arch's. */
double np_finetune_flops_per_pack(const struct np_arch *arch, int kv_groups, double k, double tokens,
                                  double sum_sq);

/* Dense peak TFLOP/s of one GPU ("h100", any case) for dtype; 0 when unknown
 * (including A100 FP8, which does not exist). */
double np_gpu_peak_tflops(const char *gpu_type, enum np_dtype dtype);
/* NULL-terminated list of known GPU types (lower case). */
const char *const *np_gpu_types(void);

struct np_metrics {
    double tokens_per_s;
    double tokens_per_s_per_gpu;
    double model_tflops_per_gpu; /* NAN when flops unknown */
    double mfu_percent;          /* NAN when flops or peak unknown */
    double days_to_train;        /* NAN when tokens <= 0 */
};

/* Metrics from a step time: tokens/s = seq x GBS / step; TFLOP/s/GPU =
 * GBS x flops / step / gpus; MFU = that / peak; days = tokens / tokens_per_s / 86400.
 * flops_per_sample <= 0 or peak <= 0 give NAN for the dependent fields. */
void np_metrics_from_step(double step_time_s, int seq_len, int gbs, int gpus, double flops_per_sample,
                          double peak_tflops, double train_tokens, struct np_metrics *out);

/* Inverse: the step time that gives tokens_per_s_per_gpu (for seed 000 rows). */
double np_step_from_tokens_per_gpu(double tokens_per_s_per_gpu, int seq_len, int gbs, int gpus);

#endif
