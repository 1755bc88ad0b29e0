/* flops.c - model FLOPs formulas, GPU peak table and throughput metrics.
 *
 * The formulas are NeMo's flops_formulas conventions plus seed 004's older
 * printed one; which a model uses, and any override (405b with G = 16), is
 * data in recipes/<name>.json, never decided here.
 */
#include "nemoperf/model/flops.h"

#include <stddef.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* NeMo's flops_formulas conventions and seed 004's printed one (flops.h); x unused. */
static double flops_nemo(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                         int kv_groups, int causal, int seq_len)
{
    (void)x;
    if (!a || seq_len <= 0 || a->layers <= 0 || a->hidden <= 0 || a->heads <= 0)
        return NAN;
    const double S = seq_len, L = a->layers, h = a->hidden, F = a->ffn_hidden, A = a->heads;
    const double G = kv_groups > 0 ? kv_groups : a->kv_groups, V = a->vocab;
    const double c = causal ? 0.5 : 1.0;
    switch (conv) {
    case NP_FLOPS_LLAMA3:
        return S * L * h * h * (12 + 12 * G / A + 18 * F / h + 12 * c * S / h + 6 * V / (L * h));
    case NP_FLOPS_NEMOTRON:
        return S * L * h * h * (12 + 12 * G / A + 12 * F / h + 12 * c * S / h + 6 * V / (L * h));
    case NP_FLOPS_MIXTRAL: {
        const double k = a->top_k > 0 ? a->top_k : 1;
        return S * L * h * h * (12 + 12 * G / A + 18 * k * F / h + 12 * c * S / h + 6 * V / (L * h));
    }
    case NP_FLOPS_NEMOTRON_LEGACY:
        return S * (24 * L * h * h + 12 * c * L * h * S + 48 * L * h * h + 6 * V * h);
    case NP_FLOPS_GPT3:
        return (24 * S * h * h + 4 * c * S * S * h) * 3 * L + 6 * S * h * V;
    default: /* not a NeMo convention */
        break;
    }
    return NAN;
}

/* NeMo AutoModel's flops_utils.py families (flops_automodel.c) */
static double flops_am(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                       int kv_groups, int causal, int seq_len)
{
    (void)kv_groups;
    (void)causal;
    return np_flops_automodel(conv, a, x, seq_len);
}

/* Wan 2.1's video DiT (flops_dit.c) */
static double flops_dit(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                        int kv_groups, int causal, int seq_len)
{
    (void)conv;
    (void)kv_groups;
    (void)causal;
    return np_flops_dit(a, x, seq_len);
}

/* The families, in enum order.  per_sample, missing, lora, needs_vocab. */
static const struct np_flops_family flops_families[] = {
    {NP_FLOPS_LLAMA3, "llama3", flops_nemo, NULL, 0, 1},
    {NP_FLOPS_NEMOTRON, "nemotron", flops_nemo, NULL, 0, 1},
    {NP_FLOPS_NEMOTRON_LEGACY, "nemotron-legacy", flops_nemo, NULL, 0, 1},
    {NP_FLOPS_MIXTRAL, "mixtral", flops_nemo, NULL, 0, 1},
    {NP_FLOPS_GPT3, "gpt3", flops_nemo, NULL, 0, 1},
    {NP_FLOPS_AM_LLAMA, "automodel-llama", flops_am, np_flops_automodel_missing, 1, 1},
    {NP_FLOPS_AM_QWEN3, "automodel-qwen3", flops_am, np_flops_automodel_missing, 1, 1},
    {NP_FLOPS_AM_DEEPSEEKV3, "automodel-deepseekv3", flops_am, np_flops_automodel_missing, 1, 1},
    {NP_FLOPS_AM_GPTOSS, "automodel-gptoss", flops_am, np_flops_automodel_missing, 1, 1},
    {NP_FLOPS_AM_NEMOTRONH, "automodel-nemotronh", flops_am, np_flops_automodel_missing, 1, 1},
    {NP_FLOPS_DIT_WAN, "dit-wan", flops_dit, NULL, 0, 0},
};

#define FLOPS_NFAMILIES (sizeof flops_families / sizeof flops_families[0])

const struct np_flops_family *np_flops_family(enum np_flops_conv conv)
{
    for (size_t i = 0; i < FLOPS_NFAMILIES; i++)
        if (flops_families[i].conv == conv)
            return &flops_families[i];
    return NULL;
}

const struct np_flops_family *np_flops_family_named(const char *name)
{
    for (size_t i = 0; name && i < FLOPS_NFAMILIES; i++)
        if (strcmp(flops_families[i].name, name) == 0)
            return &flops_families[i];
    return NULL;
}

const char *np_flops_conv_name(enum np_flops_conv c)
{
    const struct np_flops_family *f = np_flops_family(c);
    return f ? f->name : "?";
}

void np_flops_conv_names(char *buf, size_t size)
{
    size_t n = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < FLOPS_NFAMILIES && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", !i ? "" : i + 1 < FLOPS_NFAMILIES ? ", " : " or ",
                              flops_families[i].name);
}

double np_model_flops(enum np_flops_conv conv, const struct np_arch *a, int kv_groups, int causal, int seq_len)
{
    const struct np_flops_family *f = np_flops_family(conv);
    return f && f->per_sample == flops_nemo ? flops_nemo(conv, a, NULL, kv_groups, causal, seq_len) : NAN;
}

double np_finetune_flops_per_pack(const struct np_arch *a, int kv_groups, double k, double tokens, double sum_sq)
{
    if (!a || a->layers <= 0 || a->hidden <= 0 || a->heads <= 0 || !(k > 0) || !(tokens >= 0) || !(sum_sq >= 0))
        return NAN;
    const double L = a->layers, h = a->hidden, F = a->ffn_hidden, A = a->heads, V = a->vocab;
    const double G = kv_groups > 0 ? kv_groups : a->kv_groups;
    const double linear = L * h * h * (12 + 12 * G / A + 18 * F / h + 6 * V / (L * h));
    return k * linear * tokens + 12 * L * h * sum_sq;
}

struct flops_peak {
    const char *gpu;
    double bf16, fp8;
};

/* Dense TFLOP/s, as NVIDIA's MFU figures use them. */
static const struct flops_peak flops_peaks[] = {
    {"h100", 989, 1979}, {"h200", 989, 1979}, {"b200", 2250, 4500}, {"b300", 2250, 4500},
    {"gb200", 2450, 4900}, {"gb300", 2450, 4900}, {"a100", 312, 0},
};

static const char *const flops_gpu_names[] = {"h100", "h200", "b200", "b300", "gb200", "gb300", "a100", NULL};

const char *const *np_gpu_types(void) { return flops_gpu_names; }

double np_gpu_peak_tflops(const char *gpu_type, enum np_dtype dtype)
{
    if (!gpu_type)
        return 0;
    for (size_t i = 0; i < sizeof flops_peaks / sizeof flops_peaks[0]; i++)
        if (strcasecmp(flops_peaks[i].gpu, gpu_type) == 0)
            return dtype == NP_DTYPE_FP8 ? flops_peaks[i].fp8 : dtype == NP_DTYPE_BF16 ? flops_peaks[i].bf16 : 0;
    return 0;
}

void np_metrics_from_step(double step, int seq_len, int gbs, int gpus, double flops, double peak_tflops,
                          double train_tokens, struct np_metrics *out)
{
    out->tokens_per_s = out->tokens_per_s_per_gpu = NAN;
    out->model_tflops_per_gpu = out->mfu_percent = out->days_to_train = NAN;
    if (!(step > 0) || !isfinite(step) || seq_len <= 0 || gbs <= 0)
        return;
    out->tokens_per_s = (double)seq_len * gbs / step;
    if (gpus > 0)
        out->tokens_per_s_per_gpu = out->tokens_per_s / gpus;
    if (train_tokens > 0)
        out->days_to_train = train_tokens / out->tokens_per_s / 86400.0;
    if (gpus > 0 && flops > 0 && isfinite(flops)) {
        out->model_tflops_per_gpu = gbs * flops / step / gpus / 1e12;
        if (peak_tflops > 0)
            out->mfu_percent = 100.0 * out->model_tflops_per_gpu / peak_tflops;
    }
}

double np_step_from_tokens_per_gpu(double tpg, int seq_len, int gbs, int gpus)
{
    if (!(tpg > 0) || seq_len <= 0 || gbs <= 0 || gpus <= 0)
        return NAN;
    return (double)seq_len * gbs / (tpg * gpus);
}
