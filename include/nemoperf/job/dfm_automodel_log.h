/* dfm_automodel_log.h - the log lines of DFM's AutoModel training loop, written (synthetic runs, test inputs).
 *
 * Owned by src/job/dfm_automodel_log.c.  DFM 9eaace1 dfm/src/automodel/recipes/train.py logs no step time
 * and no TFLOP/s: its one per-step timing is rank 0's tqdm bar over the data loader (train.py:368-374,
 * set_postfix loss/avg/lr/gn every log_every steps, 426-435), whose "[elapsed<remaining, X.XXs/it]" is the
 * time per loader batch.  parse/automodel_log.c reads them back.
 */
#ifndef NEMOPERF_JOB_DFM_AUTOMODEL_LOG_H
#define NEMOPERF_JOB_DFM_AUTOMODEL_LOG_H

#include <time.h>

#include "nemoperf/util/shell.h"

/* One state of the bar: tqdm(desc=f"Epoch {epoch + 1}/{num_epochs}") at n of total loader batches. */
struct np_dfm_am_bar {
    int epoch, nepochs;  /* 1-based, as the desc prints it */
    long n, total;
    double elapsed_s;    /* since the bar was created */
    double step_s;       /* seconds per batch (tqdm's smoothed rate, inverted); <= 0: not known yet ("?") */
    const char *postfix; /* "loss=0.1234, avg=0.1300, lr=5.00e-05, gn=1.23", or NULL */
};

/* The two setup lines of run_train_validation_loop (train.py:358-359) through Automodel's log format
 * ("%Y-%m-%d %H:%M:%S | INFO | root | ...", Automodel a5f0652 components/loggers/log_utils.py:69-73):
 * "[INFO] Global Batch size: G; Local Batch size: L" and "[INFO] Num nodes: N; DP size: D". */
void np_dfm_am_log_setup(struct np_buf *b, time_t when, int gbs, int lbs, int nodes, int dp);

/* "\r" and the bar as tqdm's format_meter prints it on a file that is no terminal (10 bar cells; tqdm/std.py
 * format_meter, l_bar '{desc}: {percentage:3.0f}%|', r_bar '| {n}/{total} [{elapsed}<{remaining},
 * {rate_fmt}{postfix}]', rate_fmt '{:5.2f}s/it' above one second a batch, else '{:5.2f}it/s'); no newline
 * (tqdm writes one when the bar closes). */
void np_dfm_am_log_bar(struct np_buf *b, const struct np_dfm_am_bar *bar);

#endif
