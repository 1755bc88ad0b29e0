/* model_flops.c - the model FLOPs of a recipe's model and row: the row's architecture (layers of a
 * proxy row, ...) through the model's family (NeMo conventions in flops.c, AutoModel families in
 * flops_automodel.c, with the LoRA multiplier where the model has one; Wan's DiT in flops_dit.c).
 */
#include "nemoperf/model/model_flops.h"

#include <math.h>

double np_model_flops_row(const struct np_model *m, const struct np_config_row *row, int seq_len)
{
    if (!m)
        return NAN;
    struct np_arch a = np_row_arch(m, row);
    if (m->flops.conv == NP_FLOPS_DIT_WAN) /* Wan's video DiT, flops_dit.c */
        return np_flops_dit(&a, &m->xa, seq_len);
    if (NP_FLOPS_IS_AUTOMODEL(m->flops.conv)) {
        double f = np_flops_automodel(m->flops.conv, &a, &m->xa, seq_len);
        if (m->flops.lora_rank > 0)
            f *= np_flops_lora_multiplier(&a, &m->xa, m->flops.lora_rank, m->flops.lora_lm_head, NULL, NULL);
        return f;
    }
    return np_model_flops(m->flops.conv, &a, m->flops.kv_groups, m->flops.causal, seq_len);
}
