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
    const struct np_flops_family *fam = np_flops_family(m->flops.conv); /* flops.c's table */
    if (!fam)
        return NAN;
    double f = fam->per_sample(m->flops.conv, &a, &m->xa, m->flops.kv_groups, m->flops.causal, seq_len);
    if (fam->lora && m->flops.lora_rank > 0)
        f *= np_flops_lora_multiplier(&a, &m->xa, m->flops.lora_rank, m->flops.lora_lm_head, NULL, NULL);
    return f;
}
