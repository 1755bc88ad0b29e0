/* dfm_automodel_log.c - write the log of DFM's AutoModel training loop (nemoperf-synth --log-format
 * dfm-automodel, test inputs): the two setup lines of DFM 9eaace1 dfm/src/automodel/recipes/train.py:358-359
 * and rank 0's tqdm bar (train.py:368-374, 426-435), as tqdm's format_meter (tqdm/std.py) renders it on a file
 * that is no terminal: each state "\r"-led, the bar 10 cells of Unicode eighth blocks.  parse/automodel_log.c
 * reads them back.
 */
#include "nemoperf/job/dfm_automodel_log.h"

#include <math.h>
#include <stdio.h>

void np_dfm_am_log_setup(struct np_buf *b, time_t when, int gbs, int lbs, int nodes, int dp)
{
    char t[32];
    struct tm tm;
    if (!localtime_r(&when, &tm) || strftime(t, sizeof t, "%Y-%m-%d %H:%M:%S", &tm) == 0)
        snprintf(t, sizeof t, "1970-01-01 00:00:00");
    np_buf_appendf(b, "%s | INFO | root | [INFO] Global Batch size: %d; Local Batch size: %d\n", t, gbs, lbs);
    np_buf_appendf(b, "%s | INFO | root | [INFO] Num nodes: %d; DP size: %d\n", t, nodes, dp);
}

/* tqdm.format_interval: "MM:SS", "H:MM:SS" from an hour on */
static void dfm_am_log_interval(struct np_buf *b, double t)
{
    long s = t > 0 && t < 1e12 ? (long)t : 0, m = s / 60, h = m / 60;
    if (h)
        np_buf_appendf(b, "%ld:%02ld:%02ld", h, m % 60, s % 60);
    else
        np_buf_appendf(b, "%02ld:%02ld", m, s % 60);
}

void np_dfm_am_log_bar(struct np_buf *b, const struct np_dfm_am_bar *bar)
{
    /* tqdm's Bar.UTF: " " then U+258F..U+2588 (one to eight eighths); 10 cells without a terminal */
    static const char *const cell[9] = {" ", "\xe2\x96\x8f", "\xe2\x96\x8e", "\xe2\x96\x8d", "\xe2\x96\x8c",
                                        "\xe2\x96\x8b", "\xe2\x96\x8a", "\xe2\x96\x89", "\xe2\x96\x88"};
    double frac = bar->total > 0 ? (double)bar->n / (double)bar->total : 0.0;
    np_buf_appendf(b, "\rEpoch %d/%d: %3.0f%%|", bar->epoch, bar->nepochs, frac * 100.0);
    int eighths = (int)(frac * 10 * 8), full = eighths / 8;
    for (int i = 0; i < full && i < 10; i++)
        np_buf_append(b, cell[8]);
    if (full < 10) {
        np_buf_append(b, cell[eighths % 8]);
        for (int i = full + 1; i < 10; i++)
            np_buf_append(b, cell[0]);
    }
    np_buf_appendf(b, "| %ld/%ld [", bar->n, bar->total);
    dfm_am_log_interval(b, bar->elapsed_s);
    np_buf_append(b, "<");
    if (bar->step_s > 0) {
        dfm_am_log_interval(b, (double)(bar->total - bar->n) * bar->step_s);
        if (bar->step_s > 1.0)
            np_buf_appendf(b, ", %5.2fs/it", bar->step_s);
        else
            np_buf_appendf(b, ", %5.2fit/s", 1.0 / bar->step_s);
    } else {
        np_buf_append(b, "?, ?it/s");
    }
    if (bar->postfix && *bar->postfix)
        np_buf_appendf(b, ", %s", bar->postfix);
    np_buf_append(b, "]");
}
