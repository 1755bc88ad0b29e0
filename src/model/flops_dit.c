/* flops_dit.c - model FLOPs of the Wan 2.1 video DiT (NeMo DFM), counted from the model code, per sample.
 *
 * NVIDIA's table used one calculator (1.65907e11 FLOPs per video token, b96cf8f: 787.59e12 / 4747.17) that
 * DFM does not publish, and MB's own figure is an LLM formula that does not fit Wan (docs/dfm.md).  So this
 * file counts the DiT's matrix products as DFM 9eaace1 builds them, 2 FLOPs a multiply-add, x 3 for forward
 * + backward (weight and input gradients), biases and norms left out, as every nemoperf family does.
 */
#include <math.h>

#include "nemoperf/model/flops.h"

/* Forward FLOPs of one sample of s video tokens (each a patch of the latent video) and T text tokens.
 * Sources: NVIDIA-NeMo/DFM@9eaace1 dfm/src/megatron/model/... */
static double flops_dit_forward(const struct np_arch *a, const struct np_arch_extra *x, double s)
{
    const double h = a->hidden, f = a->ffn_hidden, L = a->layers;
    const double T = x->text_len, c = x->crossattn_emb > 0 ? x->crossattn_emb : a->hidden;
    const double patch = (double)x->patch_t * x->patch_h * x->patch_w;
    double layer = 0;
    /* self-attention: linear_qkv h -> 3h, linear_proj h -> h (wan/wan_layer_spec.py:274-280) */
    layer += 2 * s * h * 3 * h + 2 * s * h * h;
    /* its core, Q K^T and A V over the whole sample: AttnMaskType.padding, no causal mask
     * (wan_layer_spec.py:266; wan_step.py:34-70 packs samples with cu_seqlens, so attention stays inside
     * each sample: s is the sample's length, not a packed sequence's) */
    layer += 2 * 2 * s * s * h;
    /* cross-attention: linear_q h -> h, linear_kv crossattn_emb -> 2h over the T text tokens, linear_proj
     * (wan_layer_spec.py:285-292; common/dit_attention.py:241-245) */
    layer += 2 * s * h * h + 2 * T * c * 2 * h + 2 * s * h * h;
    /* its core: s queries against T keys, scores and values */
    layer += 2 * 2 * s * T * h;
    /* MLP: linear_fc1 h -> f, GELU, linear_fc2 f -> h; not gated (wan_layer_spec.py:297-301;
     * wan/wan_provider.py:37-38 gated_linear_unit False) */
    layer += 2 * s * h * f * 2;
    /* adaLN adds a per-layer parameter to the timestep embedding: no product (wan_layer_spec.py:57-74) */
    double outside = 0;
    /* patch_embedding: Conv3d in_channels -> h with kernel = stride = patch (wan/wan_model.py:133-135) */
    outside += 2 * s * x->in_channels * patch * h;
    /* text_embedding: text_dim -> crossattn_emb -> crossattn_emb over T tokens (wan_model.py:137-141) */
    outside += 2 * T * ((double)x->text_dim * c + c * c);
    /* time_embedder freq_dim -> h -> h, time_proj h -> 6h: once per sample (wan_model.py:144-149) */
    outside += 2 * ((double)x->freq_dim * h + h * h) + 2 * h * 6 * h;
    /* head: h -> prod(patch) x out_channels per token (wan_model.py:53-62,166) */
    outside += 2 * s * h * patch * x->out_channels;
    return L * layer + outside;
}

double np_flops_dit(const struct np_arch *a, const struct np_arch_extra *x, int seq_len)
{
    if (!a || !x || a->layers <= 0 || a->hidden <= 0 || a->ffn_hidden <= 0 || x->text_len <= 0 ||
        x->text_dim <= 0 || x->in_channels <= 0 || x->out_channels <= 0 || x->patch_t <= 0 || x->patch_h <= 0 ||
        x->patch_w <= 0 || x->freq_dim <= 0 || seq_len <= 0)
        return NAN;
    return 3 * flops_dit_forward(a, x, seq_len);
}
