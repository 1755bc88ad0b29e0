/* flops_automodel.c - NeMo AutoModel's model-FLOPs families, as seed 001's rows were computed.
 *
 * One function per family of nemo_automodel/components/utils/flops_utils.py
 * (NVIDIA-NeMo/Automodel, commit e45812012 = the seed), each with the lines
 * it follows, behind one descriptor table; plus benchmark.py's LoRA
 * multiplier.  Where the code changed after a row was published, the
 * published-era convention is kept and the change is named.
 */
#include "nemoperf/model/flops.h"

#include <math.h>
#include <stddef.h>

/* FLOPs per sample: every AutoModel formula is linear in gbs, so gbs = 1. */
typedef double (*flops_am_fn)(const struct np_arch *a, const struct np_arch_extra *x, double S);

/* llama2_flops, flops_utils.py l.51-78 (LlamaConfig): causal attention, SwiGLU. */
static double flops_am_llama(const struct np_arch *a, const struct np_arch_extra *x, double S)
{
    (void)x;
    const double L = a->layers, h = a->hidden, A = a->heads, G = a->kv_groups, F = a->ffn_hidden, V = a->vocab;
    return S * L * h * h * (12 + 12 * G / A + 18 * F / h + 12 * S / h * 0.5 + 6 * V / (L * h));
}

/* qwen3_flops, flops_utils.py l.172-233 (Qwen2Config, Qwen3Config, Qwen3MoeConfig): attention scaled
 * by r = head_dim * A / h (head_dim = h // A when the config has none, as Qwen2's), gated MLP with
 * moe_intermediate_size x top-k (intermediate_size x 1 when dense); no shared expert, no router. */
static double flops_am_qwen3(const struct np_arch *a, const struct np_arch_extra *x, double S)
{
    const double L = a->layers, h = a->hidden, A = a->heads, G = a->kv_groups, V = a->vocab;
    const double hd = x->head_dim > 0 ? x->head_dim : (double)(a->hidden / a->heads);
    const double r = hd * A / h;
    const double k = a->top_k > 0 ? a->top_k : 1;
    const double F = x->moe_ffn_hidden > 0 ? x->moe_ffn_hidden : a->ffn_hidden;
    const double attn = 6 * L * S * h * h * r * ((G / A * 2 + 1) + (S / h * 2 * 0.5) + 1);
    const double mlp = 6 * L * S * h * (1 + 2) * (F * k);
    return attn + mlp + 6 * S * h * V;
}

/* deepseekv3_flops, flops_utils.py l.423-526 (DeepSeek V3; Kimi K2 ships a DeepseekV3 config):
 * causal MLA attention, MLA projections with q_lora, every layer MoE (moe_layer_freq 1) with one
 * shared expert of moe_intermediate_size (the code's fixed choice), no MTP layers (the HF config
 * has no mtp_num_layers; counting DeepSeek V3's one MTP layer would add 4.1 % and not match). */
static double flops_am_deepseekv3(const struct np_arch *a, const struct np_arch_extra *x, double S)
{
    const double L = a->layers, h = a->hidden, A = a->heads, V = a->vocab, k = a->top_k;
    const double nope = x->qk_nope_head_dim, rope = x->qk_rope_head_dim, dv = x->v_head_dim;
    const double ql = x->q_lora_rank, kvl = x->kv_lora_rank, Fm = x->moe_ffn_hidden;
    const double bmm1 = 0.5 * (nope + rope) * A * S * S, bmm2 = 0.5 * dv * A * S * S;
    const double attn = 6 * (bmm1 + bmm2) * L;
    double mla = ql > 0 ? h * ql + ql * (nope + rope) * A : h * (nope + rope) * A; /* Q */
    mla += h * rope;                                                              /* K^R */
    mla += h * kvl + kvl * (nope + dv) * A;                                       /* K^C, V^C */
    mla += dv * A * h;                                                            /* output */
    const double ffn = L * (h * Fm * 3 + h * Fm * 3 * k); /* shared + selected experts */
    return attn + 6 * (mla * L + ffn) * S + 6 * V * h * S;
}

/* gpt_oss_flops, flops_utils.py l.677-808: even layers full causal attention, odd layers a sliding
 * window (w(w+1)/2 + (S-w)w non-zero mask elements), MoE with gated fc1; kv_channels c = h // A as
 * the code had when the rows were published (6e5d52b5b, 2026-07-15, switched to head_dim 64: +7 %). */
static double flops_am_gptoss(const struct np_arch *a, const struct np_arch_extra *x, double S)
{
    const double h = a->hidden, A = a->heads, G = a->kv_groups, V = a->vocab, k = a->top_k;
    const double F = x->moe_ffn_hidden > 0 ? x->moe_ffn_hidden : a->ffn_hidden;
    const double c = (double)(a->hidden / a->heads), w = x->sliding_window;
    double total = 0;
    for (int i = 0; i < a->layers; i++) {
        const double nz = i % 2 == 0 ? S * (S + 1) / 2 : w * (w + 1) / 2 + (S - w) * w;
        total += 6 * (S * h * (c * (A + G * 2)) + S * h * (c * A) + A * (nz * c) * 2); /* attention */
        total += 6 * (S * k * h * F * 2 + S * k * F * h);                                /* MoE MLP */
    }
    return total + 6 * S * h * V;
}

/* nemotronh_flops, flops_utils.py l.529-674 (NemotronHConfig), layer counts from
 * hybrid_override_pattern: attention 6Sh(h + 2hG/A + S + h); Mamba in/out projections plus the SSD
 * scan at factor 6 (the published era; 6cb5804c8, 2026-04-06, raised it to 7 x 3 = 21); relu^2 MoE
 * (2 projections) over the latent size when set, shared expert, router and latent projections;
 * gated MLP layers (none in the published models). */
static double flops_am_nemotronh(const struct np_arch *a, const struct np_arch_extra *x, double S)
{
    const double h = a->hidden, A = a->heads, G = a->kv_groups, V = a->vocab, k = a->top_k;
    const double attn = 6 * S * h * (h + G / A * h * 2 + S / 2 * 2 + h);
    const double nh = x->mamba_heads, din = nh * x->mamba_head_dim, N = x->mamba_state, g = x->mamba_groups;
    const double mamba = 6 * S * h * (2 * din + 2 * g * N + nh) + 6 * S * din * N + 6 * S * din * h;
    const double e = x->moe_latent > 0 ? x->moe_latent : h;
    double moe = 6 * S * k * e * x->moe_ffn_hidden * 2 + 6 * S * h * x->shared_ffn_hidden * 2 + 6 * S * h * a->experts;
    if (x->moe_latent > 0)
        moe += 6 * S * h * x->moe_latent * 2;
    const double mlp = 6 * S * h * a->ffn_hidden * 3;
    return 6 * S * h * V + x->n_attention * attn + x->n_mamba * mamba + x->n_mlp * mlp + x->n_moe * moe;
}

/* Fields a family cannot do without (offsets into np_arch_extra, -1 ends). */
#define FLOPS_AM_NEED(f) ((int)offsetof(struct np_arch_extra, f))
struct flops_am_family {
    enum np_flops_conv conv;
    flops_am_fn fn;
    int moe;           /* needs experts and top_k */
    int need[8];
    const char *names[8];
};

static const struct flops_am_family flops_am_families[] = {
    {NP_FLOPS_AM_LLAMA, flops_am_llama, 0, {-1}, {NULL}},
    {NP_FLOPS_AM_QWEN3, flops_am_qwen3, 0, {-1}, {NULL}},
    {NP_FLOPS_AM_DEEPSEEKV3, flops_am_deepseekv3, 1,
     {FLOPS_AM_NEED(moe_ffn_hidden), FLOPS_AM_NEED(kv_lora_rank), FLOPS_AM_NEED(qk_nope_head_dim),
      FLOPS_AM_NEED(qk_rope_head_dim), FLOPS_AM_NEED(v_head_dim), -1},
     {"moe_ffn_hidden", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", NULL}},
    {NP_FLOPS_AM_GPTOSS, flops_am_gptoss, 1, {FLOPS_AM_NEED(sliding_window), -1}, {"sliding_window", NULL}},
    {NP_FLOPS_AM_NEMOTRONH, flops_am_nemotronh, 1,
     {FLOPS_AM_NEED(moe_ffn_hidden), FLOPS_AM_NEED(shared_ffn_hidden), FLOPS_AM_NEED(mamba_heads),
      FLOPS_AM_NEED(mamba_head_dim), FLOPS_AM_NEED(mamba_state), FLOPS_AM_NEED(mamba_groups), -1},
     {"moe_ffn_hidden", "shared_ffn_hidden", "mamba_heads", "mamba_head_dim", "mamba_state", "mamba_groups",
      NULL}},
};

static const struct flops_am_family *flops_am_find(enum np_flops_conv conv)
{
    for (size_t i = 0; i < sizeof flops_am_families / sizeof flops_am_families[0]; i++)
        if (flops_am_families[i].conv == conv)
            return &flops_am_families[i];
    return NULL;
}

const char *np_flops_automodel_missing(enum np_flops_conv conv, const struct np_arch *a,
                                       const struct np_arch_extra *x, const char *pattern)
{
    const struct flops_am_family *f = flops_am_find(conv);
    if (!f)
        return NULL;
    if (f->moe && (a->experts <= 0 || a->top_k <= 0))
        return "experts and top_k";
    for (int i = 0; i < 8 && f->need[i] >= 0; i++)
        if (*(const int *)(const void *)((const char *)x + f->need[i]) <= 0)
            return f->names[i];
    if (conv == NP_FLOPS_AM_NEMOTRONH && !pattern)
        return "hybrid_pattern";
    return NULL;
}

double np_flops_automodel(enum np_flops_conv conv, const struct np_arch *a, const struct np_arch_extra *x,
                          int seq_len)
{
    const struct flops_am_family *f = flops_am_find(conv);
    if (!f || !a || !x || seq_len <= 0 || a->layers <= 0 || a->hidden <= 0 || a->heads <= 0 ||
        np_flops_automodel_missing(conv, a, x, conv == NP_FLOPS_AM_NEMOTRONH ? "" : NULL))
        return NAN;
    return f->fn(a, x, seq_len);
}

/* benchmark.py l.152-181: TFLOPs x (2 + lora/frozen) / 3, the parameters counted by
 * print_trainable_parameters on the dense decoder (Llama, Qwen2) with LoRA of rank r on every
 * linear layer (q, k, v, o, gate, up, down; lm_head with match_all_linear): r x (in + out) each. */
double np_flops_lora_multiplier(const struct np_arch *a, const struct np_arch_extra *x, int rank, int lm_head,
                                double *lora_params, double *frozen_params)
{
    if (!a || !x || rank <= 0 || a->heads <= 0 || a->experts > 0)
        return NAN;
    const double h = a->hidden, F = a->ffn_hidden, V = a->vocab, L = a->layers, r = rank;
    const double hd = x->head_dim > 0 ? x->head_dim : (double)(a->hidden / a->heads);
    const double q = a->heads * hd, kv = a->kv_groups * hd;
    const double in_out[7][2] = {{h, q}, {h, kv}, {h, kv}, {q, h}, {h, F}, {h, F}, {F, h}};
    double weights = 0, lora = 0;
    for (int i = 0; i < 7; i++) {
        weights += in_out[i][0] * in_out[i][1];
        lora += r * (in_out[i][0] + in_out[i][1]);
    }
    const double per_layer = weights + (x->qkv_bias ? q + 2 * kv : 0) + 2 * h; /* + 2 RMSNorm */
    double total = L * per_layer + V * h + h + (x->tied_embeddings ? 0 : V * h);
    lora *= L;
    if (lm_head)
        lora += r * (h + V);
    const double frozen = total; /* the base model's weights; the adapters are on top */
    if (lora_params)
        *lora_params = lora;
    if (frozen_params)
        *frozen_params = frozen;
    return (2 + lora / frozen) / 3;
}
