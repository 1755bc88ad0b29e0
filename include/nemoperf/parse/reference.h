/* reference.h - NVIDIA's published numbers (share/nemoperf/reference/<name>.tsv).
 *
 * Each file starts with a header line naming its tab-separated columns;
 * columns are found by name, so their order is free.  "-" (or "n/a") means
 * the publication has no value there.  Key: recipe, size, dtype, GPU, count.
 */
#ifndef NEMOPERF_REFERENCE_H
#define NEMOPERF_REFERENCE_H

#include <stddef.h>

#include "nemoperf/util/error.h"
#include "nemoperf/model/recipe.h"

struct np_ref_row {
    char *recipe, *model_size, *gpu_type, *source;
    char *task;         /* "pretrain" (the default when the file has no task column), "sft", "lora" */
    char *note;         /* why the row is marked, or NULL */
    char *superseded;   /* the table version it belongs to was superseded ("2025-11-19"), or NULL: np_ref_find
                         * skips such rows */
    int consistent;     /* 0: the publication's columns contradict each other (kept as published) */
    /* optional published configuration columns; 0 when the file has none */
    int gbs, mbs, pack_len, tp, pp, vp, ga;
    enum np_dtype dtype;
    int gpus;
    /* NAN where the publication has no value */
    double step_time_s, tokens_per_s, mfu_percent, days_1t, tokens_per_s_per_gpu, model_tflops_per_gpu;
    char *file; /* which .tsv */
    int line;   /* 1-based line in it */
    /* a row published in a table of its own layout (Megatron-Bridge's summaries, report/mbridge_md.h): the
     * container whose layout file holds it, its line there and which of an "a (b)" pair it is; NULL/0 otherwise */
    const char *layout;
    int layout_line, layout_second;
};

struct np_ref_table {
    struct np_ref_row *rows;
    size_t n;
};

/* Load one file / every *.tsv of a folder (sorted) / the installed data.  Appends to t. */
enum np_status np_ref_load_file(const char *path, struct np_ref_table *t, struct np_error *err);
enum np_status np_ref_load_dir(const char *dir, struct np_ref_table *t, struct np_error *err);
enum np_status np_ref_load_default(struct np_ref_table *t, struct np_error *err);

/* Borrowed pointer valid until np_ref_free, or NULL.  np_ref_find looks among
 * pre-training rows; np_ref_find_task among rows of the given task. */
const struct np_ref_row *np_ref_find_task(const struct np_ref_table *t, const char *task, const char *recipe,
                                          const char *size, enum np_dtype dtype, const char *gpu_type, int gpus);
const struct np_ref_row *np_ref_find(const struct np_ref_table *t, const char *recipe, const char *size,
                                     enum np_dtype dtype, const char *gpu_type, int gpus);

void np_ref_free(struct np_ref_table *t);

#endif
