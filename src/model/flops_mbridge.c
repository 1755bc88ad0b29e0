/* flops_mbridge.c - Megatron-Bridge's FLOPs (num_floating_point_operations): the family dispatch and the
 * transformer family.
 *
 * A table of families (transformer here, hybrid Mamba in flops_mbridge_hybrid.c), the transformer's model
 * descriptors and its formula with Megatron-Bridge's two conventions (see flops_mbridge.h). DeepSeek V4's
 * hybrid sparse attention and the packed LoRA path are not implemented: np_mbf_flops_per_token says why.
 */
#include "nemoperf/model/flops_mbridge.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Architecture as the release's recipe gets it: AutoBridge.from_hf_pretrained(<hf id>) (e.g.
 * MB@v0.6.0 src/megatron/bridge/recipes/llama/h100/llama3.py:242 (8B), :724 (70B), :1207 (3.1 405B),
 * recipes/qwen/h100/qwen3_moe.py:28 (30B-A3B), :238 (235B-A22B), recipes/deepseek/h100/deepseek_v3.py:99,
 * recipes/gpt_oss/h100/gpt_oss.py:170, recipes/kimi/h100/kimi_k2.py:100); values from those config.json
 * files (recipes/automodel.json keeps the same numbers for DeepSeek V3, Kimi K2, Qwen3 30B-A3B, GPT-OSS 120B
 * and Llama 3 70B). */
struct mbf_model {
    const char *recipe;
    const char *hf_id;
    int layers, hidden, ffn, heads, groups, kv_channels, vocab;
    int experts, top_k, moe_ffn, shared_ffn, first_dense; /* MoE: first_dense leading dense layers */
    int silu;                                              /* GLU activation is SiLU (legacy counts 3/2 only then) */
    int window, window_skip;                               /* sliding window: every window_skip-th layer is full */
    int mla, q_lora, kv_lora, qk_head, qk_pos, v_head;     /* multi-latent attention */
    int mtp;                                               /* MTP layers */
};

static const struct mbf_model mbf_models[] = {
    {"llama3_8b", "meta-llama/Meta-Llama-3-8B", 32, 4096, 14336, 32, 8, 128, 128256, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
     0, 0, 0, 0, 0},
    {"llama3_70b", "meta-llama/Meta-Llama-3-70B", 80, 8192, 28672, 64, 8, 128, 128256, 0, 0, 0, 0, 0, 1, 0, 0, 0,
     0, 0, 0, 0, 0, 0},
    {"llama31_405b", "meta-llama/Meta-Llama-3.1-405B", 126, 16384, 53248, 128, 8, 128, 128256, 0, 0, 0, 0, 0, 1, 0, 0,
     0, 0, 0, 0, 0, 0, 0},
    {"qwen3_30b_a3b", "Qwen/Qwen3-30B-A3B", 48, 2048, 6144, 32, 4, 128, 151936, 128, 8, 768, 0, 0, 1, 0, 0, 0, 0,
     0, 0, 0, 0, 0},
    {"qwen3_235b_a22b", "Qwen/Qwen3-235B-A22B", 94, 4096, 12288, 64, 4, 128, 151936, 128, 8, 1536, 0, 0, 1, 0, 0,
     0, 0, 0, 0, 0, 0, 0},
    /* GPT-OSS: GLU with a clamped SwiGLU, not F.silu (legacy counts 2 projections); sliding window 128 on
     * every other layer (window_attn_skip_freq 2) */
    {"gpt_oss_120b", "openai/gpt-oss-120b", 36, 2880, 2880, 64, 8, 64, 201088, 128, 4, 2880, 0, 0, 0, 128, 2, 0, 0,
     0, 0, 0, 0, 0},
    /* DeepSeek V3: first 3 layers dense, 1 shared expert, MLA, one MTP layer */
    {"deepseek_v3", "deepseek-ai/DeepSeek-V3", 61, 7168, 18432, 128, 128, 128, 129280, 256, 8, 2048, 2048, 3, 1, 0,
     0, 1, 1536, 512, 128, 64, 128, 1},
    {"kimi_k2", "moonshotai/Kimi-K2-Instruct", 61, 7168, 18432, 64, 64, 128, 163840, 384, 8, 2048, 2048, 1, 1, 0, 0,
     1, 1536, 512, 128, 64, 128, 0},
};

/* Recipes Megatron-Bridge counts by a path nemoperf cannot reproduce (docs/megatron-bridge.md says why). */
static const struct {
    const char *recipe, *why;
} mbf_missing[] = {
    /* MB@v0.6.0 flop_utils.py:878-968 needs the per-layer csa_compress_ratios, o_lora_rank, o_groups and the
     * indexer's heads/top-k, which the recipe takes from deepseek-ai/DeepSeek-V4-Flash's config.json
     * (recipes/deepseek/h100/deepseek_v4.py:68, AutoBridge): no stored source holds that file */
    {"deepseek_v4_flash", "DeepSeek V4 hybrid sparse attention (flop_utils.py dsv4_hybrid): its per-layer "
                          "compress ratios are in the Hugging Face config, which nemoperf does not have"},
};

enum np_mbf_conv np_mbf_conv_of_release(const char *r)
{
    int major = 0, minor = 0;
    if (r && (r[0] == 'v' || r[0] == 'r'))
        r++;
    if (!r || sscanf(r, "%d.%d", &major, &minor) != 2)
        return NP_MBF_CURRENT;
    return (major == 0 && minor < 5) ? NP_MBF_LEGACY : NP_MBF_CURRENT;
}

/* calculate_padded_vocab_size: multiple of make_vocab_size_divisible_by (128) x TP */
double np_mbf_padded_vocab(int vocab, int tp)
{
    long m = 128L * (tp > 0 ? tp : 1);
    return (double)(((long)vocab + m - 1) / m * m);
}

/* Per token, MB@v0.6.0 flop_utils.py:753-1184 (current) / MB@v0.4.0 flop_utils.py:201-482 (legacy). */
static double flops_mbridge_transformer(const struct mbf_model *m, int mtp, enum np_mbf_conv conv, double s, int tp)
{
    double h = m->hidden;
    int nl = m->layers + mtp;
    /* dense vs MoE layers; MTP layers take the last layer's kind (flop_utils.py:840-847) */
    double n_moe = 0, n_dense = nl;
    if (m->experts > 0) {
        n_moe = m->layers - m->first_dense + mtp;
        n_dense = m->first_dense;
    }
    /* GLU: 3 projections (current: always for GLU models, :860; legacy: only SiLU, 3/2 of 2, v0.4.0 :296-298) */
    double glu = (conv == NP_MBF_CURRENT || m->silu) ? 3.0 : 2.0;
    double mlp = 6.0 * h *
                 (m->ffn * glu * n_dense + (double)m->moe_ffn * m->top_k * glu * n_moe + m->shared_ffn * glu * n_moe);
    double attn;
    if (m->mla) {
        /* :970-1014 (the same at v0.4.0 :324-366 with seq_length for the core factor) */
        double H = m->heads, qk = m->qk_head, pe = m->qk_pos, v = m->v_head;
        double q = m->q_lora * (h + H * (qk + pe) + 1);
        double kv = m->kv_lora * (h + H * (qk + v) + 1) + h * pe;
        attn = 6.0 * nl * (q + kv + H * v * h + s * H * (qk + pe) / 2 + s * H * v / 2);
    } else {
        double qp = (double)m->kv_channels * m->heads, kvp = (double)m->kv_channels * m->groups;
        double proj = h * (qp + 2 * kvp) + qp * h;
        double full = proj + qp * s; /* q.s/2 x 2 (QK^T and AV), :1074 */
        if (m->window > 0 && conv == NP_MBF_CURRENT) {
            /* :1027-1072: average causal window context; every window_skip-th layer is full */
            double w = m->window;
            double ctx = w < s ? w - w * (w - 1) / (2 * s) : s / 2;
            int n_full = 0;
            for (int i = 0; i < nl; i++)
                n_full += (i + 1) % m->window_skip == 0;
            attn = 6.0 * (n_full * full + (nl - n_full) * (proj + qp * ctx * 2));
        } else {
            attn = 6.0 * nl * full;
        }
    }
    double mtp_extra = 6.0 * mtp * (3 * h + 2 * h * h);                            /* :1171-1180 */
    double logits = 6.0 * h * np_mbf_padded_vocab(m->vocab, tp) * (mtp + 1); /* :1137-1142, :1181-1182 */
    return mlp + attn + mtp_extra + logits;
}

/* The transformer family: the recipe's descriptor in mbf_models, DeepSeek V3 "w/o MTP" without its layer. */
static double flops_mbridge_transformer_family(const char *recipe, const char *variant, enum np_mbf_conv conv,
                                               int seq_len, int tp, int *owned)
{
    *owned = 0;
    for (size_t i = 0; i < sizeof mbf_models / sizeof mbf_models[0]; i++) {
        const struct mbf_model *m = &mbf_models[i];
        if (strcmp(recipe, m->recipe) != 0)
            continue;
        *owned = 1;
        int mtp = m->mtp;
        if (variant && strstr(variant, "w/o MTP"))
            mtp = 0;
        return flops_mbridge_transformer(m, mtp, conv, seq_len, tp);
    }
    return NAN;
}

/* The hybrid Mamba family is the same at every release that published a row (flops_mbridge_hybrid.c). */
static double flops_mbridge_hybrid_family(const char *recipe, const char *variant, enum np_mbf_conv conv,
                                          int seq_len, int tp, int *owned)
{
    (void)variant;
    (void)conv;
    return np_mbf_hybrid_per_token(recipe, seq_len, tp, owned);
}

/* One row per FLOPs family: the first that owns the recipe answers. */
static const struct {
    const char *name;
    double (*per_token)(const char *recipe, const char *variant, enum np_mbf_conv conv, int seq_len, int tp,
                        int *owned);
} mbf_families[] = {
    {"transformer", flops_mbridge_transformer_family},
    {"hybrid", flops_mbridge_hybrid_family},
};

double np_mbf_flops_per_token(const char *recipe, const char *task, const char *variant, enum np_mbf_conv conv,
                              int seq_len, int tp, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    *why = NULL;
    if (!recipe || seq_len <= 0) {
        *why = "no recipe or sequence length";
        return NAN;
    }
    if (task && strcmp(task, "lora") == 0) {
        /* MB@v0.5.0 flop_utils.py:372-396 (v0.6.0 :789-813): LoRA of Llama 3 70B on packed SQuAD counts
         * frozen x 2/3 + unfrozen attention from the packed file's average tokens and average squared
         * sequence length (calculate_avg_seqlen over the .npy/.parquet), which a log does not carry */
        *why = "LoRA: Megatron-Bridge counts it from the packed dataset's sequence statistics (flop_utils.py "
               "LoRA path), which nemoperf does not have";
        return NAN;
    }
    for (size_t i = 0; i < sizeof mbf_missing / sizeof mbf_missing[0]; i++)
        if (strcmp(recipe, mbf_missing[i].recipe) == 0) {
            *why = mbf_missing[i].why;
            return NAN;
        }
    for (size_t i = 0; i < sizeof mbf_families / sizeof mbf_families[0]; i++) {
        int owned = 0;
        double f = mbf_families[i].per_token(recipe, variant, conv, seq_len, tp, &owned);
        if (owned)
            return f;
    }
    *why = "no Megatron-Bridge model descriptor for this recipe";
    return NAN;
}
