/* flops_mbridge.h - model FLOPs as Megatron-Bridge counts them, per family and release.
 *
 * Families (one table row each in flops_mbridge.c): transformer (dense, MoE, MLA, MTP, sliding window)
 * and hybrid Mamba (flops_mbridge_hybrid.c).  Transformer: one descriptor per published model
 * (architecture from the Hugging Face config.json the release's recipe loads), one formula per
 * Megatron-Bridge convention:
 *   NP_MBF_LEGACY  v0.1.0rc3 .. v0.4.x: "12 = 3x2x2" form, GLU counted as 3 projections only for SiLU,
 *                  no sliding-window term (MB@v0.4.0 flop_utils.py:201-482)
 *   NP_MBF_CURRENT v0.5.0 and later: GLU always 3 projections, causal sliding-window context
 *                  (MB@v0.6.0 flop_utils.py:753-1184)
 * Both: 2 FLOPs per MAC x 3 (forward, dgrad, wgrad), causal core attention (s/2), logits over the
 * vocabulary padded to a multiple of 128 x TP, x (1 + MTP layers).
 */
#ifndef NEMOPERF_FLOPS_MBRIDGE_H
#define NEMOPERF_FLOPS_MBRIDGE_H

enum np_mbf_conv { NP_MBF_LEGACY = 0, NP_MBF_CURRENT };

/* The convention of a Megatron-Bridge release tag ("v0.4.1", "v0.6.0"). */
enum np_mbf_conv np_mbf_conv_of_release(const char *mb_release);

/* Model FLOPs per token (forward + backward) of recipe ("llama3_70b", Megatron-Bridge's -mr name) for
 * one sequence of seq_len tokens, tensor parallel size tp (vocabulary padding), published variant
 * ("w/o MTP" drops DeepSeek V3's MTP layer; "" or "-" otherwise).  Returns NAN when nemoperf has no
 * formula for the recipe/task; *why (may be NULL) then points to a static reason. */
double np_mbf_flops_per_token(const char *recipe, const char *task, const char *variant, enum np_mbf_conv conv,
                              int seq_len, int tp, const char **why);

/* calculate_padded_vocab_size: vocab rounded up to a multiple of 128 x tp (tp < 1 counts as 1). */
double np_mbf_padded_vocab(int vocab, int tp);

/* The hybrid Mamba family (Nemotron 3 Nano / 3.5 Lightning / Super / Ultra): FLOPs per token of recipe;
 * *owned = 1 when the family has the recipe, else 0 and NAN. */
double np_mbf_hybrid_per_token(const char *recipe, int seq_len, int tp, int *owned);

#endif
