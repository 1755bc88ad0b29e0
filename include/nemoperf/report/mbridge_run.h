/* mbridge_run.h - nemoperf-parse for Megatron-Bridge performance runs.
 *
 * Each path is a log file or a run folder (its nemoperf.json manifest, if any, and its newest .out or .log file).
 * Identity: the manifest's "mbridge" object (recipe, dtype, gpu_type, gpus, container, gbs, seq_len, task),
 * then the options for what it lacks, then the published row (GBS, sequence length, TP, release).
 */
#ifndef NEMOPERF_REPORT_MBRIDGE_RUN_H
#define NEMOPERF_REPORT_MBRIDGE_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "nemoperf/parse/mbridge.h"
#include "nemoperf/report/report.h"

struct np_mb_opts {
    char recipe[64], gpu[16], container[16], task[12];
    enum np_mb_dtype dtype; /* NP_MB_DTYPE_NONE: not given */
    int gpus, gbs, seq_len;
    long first, last; /* --steps A-B; -1: llmb's 35-44 */
    long window;      /* --window N: the last N iterations; 0: not given */
    int reference;    /* --reference: compare tokens/s/GPU with the published row */
    double tolerance; /* percent, for --reference */
};

void np_mb_opts_init(struct np_mb_opts *o);

/* Analyse every path and write the report (table, markdown in the container's layout, CSV, JSON) to out.
 * Returns 0 when every run was analysed (and, with --reference, passed), 1 otherwise; what went wrong is
 * said through diag. */
int np_mb_parse_paths(char *const *paths, size_t n, const struct np_mb_opts *o, const struct np_mb_ref *ref,
                      enum np_format fmt, FILE *out);

#endif
