/* automodel_log.h - read NeMo AutoModel's benchmark log (seed 001) into the scanner's step records.
 *
 * Owned by src/parse/automodel_log.c: the benchmark recipe's rank-0 lines on stdout and stderr.
 */
#ifndef NEMOPERF_PARSE_AUTOMODEL_LOG_H
#define NEMOPERF_PARSE_AUTOMODEL_LOG_H

#include <stddef.h>

#include "nemoperf/parse/scan.h"
#include "nemoperf/util/error.h"

/* What the benchmark recipe prints besides the iterations (NAN / -1 when absent). */
struct np_amlog_summary {
    double avg_step_time_s;  /* "Average iteration time: X seconds" = seed 001's "Time per Global Step" */
    double avg_mfu_percent;  /* "Average MFU: Y%" */
    long warmup_steps;       /* "(excluding first N warmup iterations)" */
    long timed_steps;        /* "Total iteration time (N steps)" */
    double step_tflops;      /* "TFLOPs/GPU: Z": the whole global step on all GPUs (LoRA multiplier included) */
    double lora_multiplier;  /* "TFLOPS multiplier for PEFT: (2 + r) / 3 = m" */
    long gbs, lbs, ga, dp;   /* "GA steps: .., DP size: .., Local batch size: .., Global batch size: .." */
    long max_train_steps;    /* the setup header's "- Max train steps: N" (the steps' total is then N-1) */
    int seen;                /* 1 when any AutoModel benchmark line was found */
    enum np_status companion_status; /* np_amlog_read: NP_OK, or why the .err companion could not be read */
    struct np_error companion;       /* its message; the .out is then read alone */
};

/* Read an AutoModel benchmark log: path, plus its stderr companion (same name ending in .err
 * instead of .out) when that exists, or one merged file.  Steps (iteration, "Max iter time",
 * memory, loss) go to out->steps with gen NP_GEN_AMBENCH; out is reset first.  A file that is not
 * such a log gives NP_OK with no steps and sum->seen 0.  NP_E_IO for an unreadable path; an unreadable
 * companion is not fatal: path is read alone and sum->companion says why. */
enum np_status np_amlog_read(const char *path, struct np_scan_result *out, struct np_amlog_summary *sum,
                             struct np_error *err);
/* The same over memory: stdout and stderr texts (either may be NULL). */
enum np_status np_amlog_buffers(const char *out_text, size_t out_len, const char *err_text, size_t err_len,
                                struct np_scan_result *out, struct np_amlog_summary *sum, struct np_error *err);

/* An AutoModel training-loop log (the scanner's NP_GEN_AUTOMODEL "step N | epoch E | ..." lines)
 * prints its step total only once, in the setup header "- Max train steps: N".  When res's last
 * step is such a step without a total, the header is read from the start of dirfd/name (up to the
 * first step line) and its steps get total N-1, or N when the first step printed after the header
 * is 1 (Automodel before 2025-10-13 counted steps from 1).  No header, or an unreadable file:
 * res unchanged.  res->bytes_read counts the bytes read. */
void np_amlog_header_total(int dirfd, const char *name, struct np_scan_result *res);

#endif
