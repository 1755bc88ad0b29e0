/* finetune.h - fine-tuning (SFT, LoRA on packed sequences) FLOPs and the pack
 * statistics they need: per pack length from share/nemoperf/packs/<data>.tsv,
 * or measured from the run's packed .npy files (npy.h).
 */
#ifndef NEMOPERF_FINETUNE_H
#define NEMOPERF_FINETUNE_H

#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/model/recipe.h"

/* Per-pack means (EOS excluded, see np_pack_means) for one pack length. */
struct np_pack_ref {
    int pack_len;
    double tokens_per_pack, sum_sq_per_pack;
    char source[200];
};

struct np_pack_table {
    struct np_pack_ref *rows;
    size_t n;
};

/* Load a pack-statistics table (tab-separated: pack_len tokens_per_pack
 * sum_sq_per_pack source; '#' comments).  Errors carry file:line:column. */
enum np_status np_pack_table_load(const char *path, struct np_pack_table *t, struct np_error *err);
/* The installed share/nemoperf/packs/squad.tsv. */
enum np_status np_pack_table_load_default(struct np_pack_table *t, struct np_error *err);
/* Borrowed pointer valid until np_pack_table_free, or NULL. */
const struct np_pack_ref *np_pack_table_find(const struct np_pack_table *t, int pack_len);
void np_pack_table_free(struct np_pack_table *t);

/* k of the FLOPs formula: 1 for "sft", 2/3 for "lora"; NAN otherwise. */
double np_finetune_k(const char *task);

/* Model TFLOP/s per GPU of a fine-tuning run: F / P x tokens/s/GPU / 1e12, where
 * F is np_finetune_flops_per_pack of the model (its FLOPs spec's kv_groups
 * override applies) and tokens/s counts P tokens per pack.  NAN when unknown. */
double np_finetune_tflops_per_gpu(const struct np_model *m, const char *task, int pack_len, double tokens_per_pack,
                                  double sum_sq_per_pack, double tokens_per_s_per_gpu);

#endif
