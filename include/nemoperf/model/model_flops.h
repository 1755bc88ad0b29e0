/* model_flops.h - the model FLOPs of a recipe's model and row, by its family.
 *
 * Owned by src/model/model_flops.c: picks the family's formula (flops.h) for a loaded model
 * (recipe.h).  Kept apart from both so recipe.c can ask flops.c what a family needs while flops.c
 * knows nothing of recipes.
 */
#ifndef NEMOPERF_MODEL_MODEL_FLOPS_H
#define NEMOPERF_MODEL_MODEL_FLOPS_H

#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"

/* Same, from a model's spec and a config row (row layer count wins; row may be NULL); AutoModel
 * families include the LoRA multiplier when the spec has a lora_rank. */
double np_model_flops_row(const struct np_model *m, const struct np_config_row *row, int seq_len);

#endif
