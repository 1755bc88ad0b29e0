/* mbridge_log.c - write Megatron-Bridge's training-log lines (nemoperf-synth --log-format mbridge, test inputs).
 *
 * Byte for byte the f-strings of NVIDIA-NeMo/Megatron-Bridge 953aabf src/megatron/bridge/training/utils/
 * train_utils.py: training_log's rank-0 "Step Time" line (579-583), the last rank's iteration line (598-643;
 * optional fields only when their switch is on) and the one-off memory report (649-653) with report_memory's
 * GB keys (63-74, 660-711).  parse/scan.c reads them back.
 */
#include "nemoperf/job/mbridge_log.h"

#include <stdio.h>
#include <string.h>

void np_mbridge_log_iteration(struct np_buf *b, const struct np_mbridge_iter *it)
{
    char when[32];
    struct tm tm;
    if (!localtime_r(&it->when, &tm) || strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(when, sizeof when, "1970-01-01 00:00:00");
    np_buf_appendf(b, " [%s] iteration %8ld/%8ld | consumed samples: %12lld | elapsed time per iteration (ms): %.1f |",
                   when, it->iteration, it->train_iters, it->consumed_samples, it->elapsed_ms);
    if (it->tflops >= 0)
        np_buf_appendf(b, " throughput per GPU (TFLOP/s/GPU): %.1f |", it->tflops);
    np_buf_appendf(b, " learning rate: %.6E | global batch size: %5d |", it->lr, it->gbs);
    if (it->loss > 0.0) /* train_utils.py:624: a zero average is left out */
        np_buf_appendf(b, " lm loss: %.6E |", it->loss);
    np_buf_appendf(b, " loss scale: %.1f |", it->loss_scale);
    if (it->grad_norm >= 0)
        np_buf_appendf(b, " grad norm: %.3f |", it->grad_norm);
    np_buf_appendf(b, " number of skipped iterations: %3d | number of nan iterations: %3d |\n", it->skipped, it->nan);
}

void np_mbridge_log_step_time(struct np_buf *b, double step_s, double tflops)
{
    np_buf_appendf(b, "Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n", step_s, tflops);
}

/* Python's str() of report_memory's value: rounded to 5 significant digits, a float always shows a '.' */
static void mbridge_log_gb(struct np_buf *b, const char *key, double gb)
{
    char v[40];
    snprintf(v, sizeof v, "%.5g", gb);
    np_buf_appendf(b, " | %s: %s%s", key, v, strpbrk(v, ".e") ? "" : ".0");
}

void np_mbridge_log_memory(struct np_buf *b, int rank, long after, double alloc_gb, double max_alloc_gb)
{
    /* MEMORY_KEYS order (train_utils.py:63-74), bytes -> gigabytes (696-711) */
    np_buf_appendf(b, "[Rank %d] (after %ld iterations) memory (GB)", rank, after);
    mbridge_log_gb(b, "mem-allocated-gigabytes", alloc_gb);
    mbridge_log_gb(b, "mem-active-gigabytes", alloc_gb);
    mbridge_log_gb(b, "mem-inactive-gigabytes", 0.0);
    mbridge_log_gb(b, "mem-reserved-gigabytes", max_alloc_gb);
    mbridge_log_gb(b, "mem-max-allocated-gigabytes", max_alloc_gb);
    mbridge_log_gb(b, "mem-max-active-gigabytes", max_alloc_gb);
    mbridge_log_gb(b, "mem-max-inactive-gigabytes", 0.0);
    mbridge_log_gb(b, "mem-max-reserved-gigabytes", max_alloc_gb);
    np_buf_append(b, " | mem-alloc-retires: 0 | mem-allocated-count: 4096\n");
}
