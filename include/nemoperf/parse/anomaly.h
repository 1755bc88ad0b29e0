/* anomaly.h - step-time anomalies of one run: spikes, periodic slow steps, a trend, warm-up.
 *
 * Pure functions over the step times of a log (in iteration order) and the steady-state window
 * the report uses; nothing is allocated.
 */
#ifndef NEMOPERF_PARSE_ANOMALY_H
#define NEMOPERF_PARSE_ANOMALY_H

#include <stddef.h>

#define NP_ANOMALY_LIST 8

struct np_anomaly {
    size_t steps;                       /* steps looked at (after the first, always slow, one) */
    double median_s;                    /* of those steps */
    size_t nspikes;                     /* steps far above the median (>= 1.25x and > 6 robust sigma) */
    long spike_iter[NP_ANOMALY_LIST];   /* the first of them */
    double spike_s[NP_ANOMALY_LIST];
    long period;                        /* > 0: the spikes recur every `period` iterations (GC, checkpoints) */
    double trend_pct;                   /* change of the step time across the window (linear fit), NAN none */
    int trend;                          /* 1: |trend_pct| >= 5 and the fit explains >= half the variance */
    long warmup_end;                    /* first iteration from which steps stay within 10% of the final
                                           median; -1 unknown */
    int window_in_warmup;               /* 1: the window starts before warmup_end */
};

/* iter[i], t[i]: the log's steps in order (n of them); window [first, last] in iterations (-1: none).
 * Fills a; returns how many anomalies it found (spikes, period, trend, warm-up count one each). */
int np_anomaly_find(const long *iter, const double *t, size_t n, long first, long last, struct np_anomaly *a);

/* The anomalies in words, "; "-separated, into buf ("" none). */
void np_anomaly_text(const struct np_anomaly *a, char *buf, size_t size);

#endif
