/* npy.h - pack statistics from NeMo's packed-sequence .npy files.
 *
 * NeMo 2.x writes a packed fine-tuning data set with np.save(path, list_of_dicts)
 * (nemo/collections/llm/gpt/data/packed_sequence.py, v2.3.0 l.83-86; the dicts come
 * from nemo/utils/sequence_packing_utils.py fill_packing_strategy, l.187-260):
 * one dict per pack, {'input_ids': [int...], 'loss_mask': [bool...],
 * 'seq_start_id': [int...]}.  An object array in .npy is a pickle, so this
 * module is a .npy header reader plus a small, bounded pickle interpreter for
 * the opcodes of protocols 2-5; it never executes anything it reads.
 */
#ifndef NEMOPERF_NPY_H
#define NEMOPERF_NPY_H

#include <stddef.h>

#include "nemoperf/util/error.h"

/* What the fine-tuning FLOPs need from a packed file.  Sub-sequence lengths are
 * s_i = seq_start_id[i+1] - seq_start_id[i] (the last one runs to the end of
 * input_ids); a pack's token count is N_tok = len(input_ids) = sum of s_i. */
struct np_pack_stats {
    size_t packs;      /* packed sequences (dicts) in the file */
    size_t sequences;  /* sub-sequences in all packs */
    double tokens;     /* sum over packs of N_tok */
    double sum_sq;     /* sum over packs of sum_i s_i^2 */
    long max_tokens;   /* the longest pack's N_tok */
    size_t dropped;    /* packs left out to make whole global batches (gbs > 0) */
};

/* Read a packed-sequence .npy file.  gbs > 0 counts only the first
 * floor(packs / gbs) * gbs packs, as Megatron-Bridge's calculate_avg_seqlen(...,
 * drop_remainder=True) does (data/packing/algorithms.py, HEAD 067f987df l.406-480).
 * Errors name the file and byte offset (line = 0, column = offset + 1) and say
 * what was expected. */
enum np_status np_npy_pack_stats(const char *path, int gbs, struct np_pack_stats *out, struct np_error *err);

/* The same on a buffer (borrowed; name is used in messages). */
enum np_status np_npy_pack_stats_mem(const unsigned char *buf, size_t len, const char *name, int gbs,
                                     struct np_pack_stats *out, struct np_error *err);

/* Per-pack means as Megatron-Bridge feeds them to its fine-tuning FLOPs: the EOS
 * token of every sub-sequence excluded (get_seqlen_list, algorithms.py l.381-403):
 * tokens = mean(N_tok - n_seq), sum_sq = mean(sum_i (s_i - 1)^2).  0 for no packs. */
void np_pack_means(const struct np_pack_stats *s, double *tokens_per_pack, double *sum_sq_per_pack);

#endif
