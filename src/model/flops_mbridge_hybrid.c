/* flops_mbridge_hybrid.c - Megatron-Bridge's hybrid Mamba FLOPs family (Nemotron 3 Nano / 3.5 Lightning /
 * Super / Ultra): flop_utils.py's hybrid_flops over the layer counts of the model's hybrid pattern.
 *
 * One descriptor per model (the release's recipe/provider constants, cited), one formula: the same at
 * every release that published a hybrid row (v0.3.1 .. v0.6.0, see np_mbf_hybrid_per_token's comment).
 */
#include "nemoperf/model/flops_mbridge.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

struct mbf_hybrid {
    const char *recipe;
    const char *pattern;     /* main decoder: M Mamba, * attention, - MLP, E MoE */
    const char *mtp_pattern; /* one MTP depth ("" none) */
    int mtp;                 /* MTP depths (pattern copies and extra logits) */
    int hidden, heads, groups, kv_channels, ffn, moe_ffn, shared_ffn, top_k, moe_latent;
    int mamba_state, mamba_head_dim, mamba_groups, mamba_heads;
    int vocab;
};

/* Sources (Megatron-Bridge = MB, Megatron-LM = MLM):
 * - Nemotron 3 Nano: MB@v0.6.0 src/megatron/bridge/recipes/nemotronh/h100/nemotron_3_nano.py:78-126
 *   (HybridModelProvider(...)); the same constants at v0.4.0/v0.5.0 recipes/nemotronh/nemotron_3_nano.py:43-63
 *   and v0.3.1 models/nemotronh/nemotron_h_provider.py:153-173 (Nemotron3NanoProvider); mamba_num_groups 8
 *   (:100), mamba_state_dim 128 (:85); no gated linear unit (squared ReLU, :102).
 * - Nemotron 3.5 Lightning: the Nano provider plus mtp_num_layers 2, mtp_hybrid_override_pattern "*E",
 *   mtp_use_repeated_layer (MB@v0.6.0 recipes/nemotronh/h100/nemotron_3_nano.py:256-276); the provider joins
 *   main, then "*E" twice (MB@v0.6.0 models/hybrid/hybrid_provider.py:196-209) and flop_utils counts every MTP copy.
 * - Nemotron 3 Super / Ultra: the recipe loads the Hugging Face config through AutoBridge (MB@v0.6.0
 *   recipes/nemotronh/h100/nemotron_3_super.py:44, nemotron_3_ultra.py:39; v0.4.0 nemotron_3_super.py:41) and
 *   sets mtp_num_layers 2 with repeated layers (super :98-102, ultra :61-64); the HF config (MTP "*E", one
 *   nextn layer, MB@v0.6.0 models/nemotronh/nemotron_h_bridge.py:252-303) is not in any stored source, the
 *   same architecture is in MLM@d98e8a6 examples/post_training/modelopt/conf/nvidia/
 *   NVIDIA-Nemotron-3-Super-120B-A12B-BF16.sh:12-62 and NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16.sh:11-59
 *   (no --moe-ffn-hidden-size: MoE experts use ffn_hidden_size; Mamba state 128 and 8 groups: defaults).
 * - Vocabulary 131072: the Nemotron 3 tokenizer (MB@v0.6.0 tests/unit_tests/models/nemotronh/
 *   test_nemotron_h_bridge.py:62,91, Nano's config); Super's recipe uses Nano's tokenizer
 *   (recipes/nemotronh/h100/nemotron_3_super.py:59); Ultra's own tokenizer assumed the same. */
static const struct mbf_hybrid mbf_hybrids[] = {
    {"nemotron_3_nano", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", "", 0, 2688, 32, 2, 128, 1856, 1856,
     3712, 6, 0, 128, 64, 8, 64, 131072},
    {"nemotron_3_5_lightning", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", "*E", 2, 2688, 32, 2, 128,
     1856, 1856, 3712, 6, 0, 128, 64, 8, 64, 131072},
    {"nemotron_3_super", "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
     "*E", 2, 4096, 32, 2, 128, 2688, 2688, 5376, 22, 1024, 128, 64, 8, 128, 131072},
    {"nemotron_3_ultra",
     "MEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
     "*E", 2, 8192, 64, 2, 128, 5120, 5120, 10240, 22, 2048, 128, 64, 8, 256, 131072},
};

static void flops_mbridge_hybrid_count(const char *pattern, int copies, double n[4])
{
    static const char kinds[] = "M*-E";
    for (const char *p = pattern; *p; p++) {
        const char *k = strchr(kinds, *p);
        if (k)
            n[k - kinds] += copies;
    }
}

/* Per token, MB@v0.6.0 src/megatron/bridge/training/utils/flop_utils.py: mlp_layer_flops :509-512,
 * moe_layer_flops :514-538, attn_layer_flops :540-556 (core_attn_seq_factor = s: 2 s h p s, i.e. the
 * causal s/2 of v0.4.0 :106-115 and v0.5.0 :211-220), mamba_layer_flops :607-628, hybrid_flops :655-751
 * (logits over the padded vocabulary x (1 + MTP), x 3 for forward and backward), counts :489-500 (the
 * MTP pattern counted once per depth, v0.5.0 :141-162), entry :1200-1268. No Nemotron 3 model sets
 * window_size (the v0.6.0 sliding-window terms :558-605 stay 0) or a gated linear unit (scale 1). v0.3.1
 * (26.02.01) counts no MTP layers and no MTP logits (flop_utils.py :36-43, :181): its only hybrid row,
 * Nano, has none. */
double np_mbf_hybrid_per_token(const char *recipe, int seq_len, int tp, int *owned)
{
    *owned = 0;
    for (size_t i = 0; i < sizeof mbf_hybrids / sizeof mbf_hybrids[0]; i++) {
        const struct mbf_hybrid *m = &mbf_hybrids[i];
        if (strcmp(recipe, m->recipe) != 0)
            continue;
        *owned = 1;
        double n[4] = {0, 0, 0, 0}; /* Mamba, attention, MLP, MoE */
        flops_mbridge_hybrid_count(m->pattern, 1, n);
        flops_mbridge_hybrid_count(m->mtp_pattern, m->mtp, n);
        const double s = seq_len, h = m->hidden;
        const double p = (double)m->kv_channels * m->heads / h;
        const double attn = 4 * s * h * p * (h + h * m->groups / m->heads + s / 2);
        const double mlp = 4 * ((double)m->ffn / h) * s * h * h;
        const double din = 2 * h;
        const double mamba = 2 * s * h * (2 * din + 2.0 * m->mamba_groups * m->mamba_state + m->mamba_heads) +
                             7 * s * din * m->mamba_state + 2 * s * din * h;
        double moe;
        if (m->moe_latent > 0)
            moe = 4 * s * m->moe_latent * (double)m->moe_ffn * m->top_k + 4 * s * h * m->moe_latent;
        else
            moe = 4 * s * h * (double)m->moe_ffn * m->top_k;
        moe += 4 * s * h * m->shared_ffn;
        const double logits = 2 * s * h * np_mbf_padded_vocab(m->vocab, tp) * (1 + m->mtp);
        return 3 * (n[1] * attn + n[2] * mlp + n[0] * mamba + n[3] * moe + logits) / s;
    }
    return NAN;
}
