/* mbridge_md.h - a Megatron-Bridge summary table in the layout of its container version.
 *
 * The layout is the version's own file, share/nemoperf/reference/megatron-bridge/<container>.tsv
 * (published columns in order, rows in published order, their source lines); measured figures replace
 * the published Tokens / sec / GPU and Model TFLOP / sec / GPU cells.
 */
#ifndef NEMOPERF_REPORT_MBRIDGE_MD_H
#define NEMOPERF_REPORT_MBRIDGE_MD_H

#include <stddef.h>
#include <stdio.h>

#include "nemoperf/util/error.h"

/* One measured run placed on a published row: the row's source line in the version's layout file,
 * which of an "a (b)" pair (0 first or only, 1 second), and its figures (NAN: "-"). */
struct np_mb_measured {
    int line;
    int second;
    double tokens_per_s_per_gpu, tflops_per_gpu;
};

/* Write "## <container> NeMo Container", its sections, groups and tables, with the rows that have a
 * measurement (every row when all_rows, published figures where none was measured), in published
 * order.  Returns NP_OK or an error naming layout_tsv:line. */
enum np_status np_mb_md_render(FILE *out, const char *layout_tsv, const char *container,
                               const struct np_mb_measured *m, size_t n, int all_rows, struct np_error *err);

#endif
