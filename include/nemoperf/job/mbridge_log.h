/* mbridge_log.h - Megatron-Bridge's training-log lines, written (synthetic runs, test inputs).
 *
 * The formats of MB 953aabf src/megatron/bridge/training/utils/train_utils.py: the last rank's iteration line
 * (598-643), rank 0's "Step Time" line (579-583) and the memory report (649-653, 164-177).  Each writer appends
 * one '\n'-terminated line to b.
 */
#ifndef NEMOPERF_JOB_MBRIDGE_LOG_H
#define NEMOPERF_JOB_MBRIDGE_LOG_H

#include <time.h>

#include "nemoperf/util/shell.h"

struct np_mbridge_iter {
    time_t when;                 /* the line's timestamp (local time, as MB's datetime.now()) */
    long iteration, train_iters; /* 1-based iteration of train_iters */
    long long consumed_samples;
    double elapsed_ms;           /* elapsed time per iteration (ms) */
    double tflops;               /* "throughput per GPU (TFLOP/s/GPU)": printed when >= 0 (log_throughput) */
    double lr;
    int gbs;
    double loss, loss_scale, grad_norm; /* grad_norm < 0: field absent */
    int skipped, nan;
};

/* " [YYYY-mm-dd HH:MM:SS] iteration        i/       N | consumed samples: ... | ... |" */
void np_mbridge_log_iteration(struct np_buf *b, const struct np_mbridge_iter *it);
/* "Step Time : 13.80s GPU utilization:  17.7MODEL_TFLOP/s/GPU" */
void np_mbridge_log_step_time(struct np_buf *b, double step_s, double tflops);
/* "[Rank r] (after k iterations) memory (GB) | mem-allocated-gigabytes: ... | mem-max-allocated-gigabytes: ..." */
void np_mbridge_log_memory(struct np_buf *b, int rank, long after, double alloc_gb, double max_alloc_gb);

#endif
