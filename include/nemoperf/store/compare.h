/* compare.h - is a candidate faster or slower than a baseline, beyond the run-to-run noise?
 *
 * Throughput is compared on a log scale (a difference of logs is a ratio): the result is the
 * candidate's throughput change in percent with a 95 % confidence interval, and a verdict against
 * a minimum effect (--min-effect, default 2 %):
 *   FASTER  the whole interval lies above +min_effect      SLOWER  the whole interval lies below -min_effect
 *   SAME    the whole interval lies within +-min_effect    INCONCLUSIVE  none of these (more_runs says how
 *                                                            many more runs per side would likely decide it)
 * Two methods: several runs a side -> Welch's t over the runs (each run's steady throughput is one
 * sample); one run facing one run -> batch means over the steady window's step times (consecutive steps
 * are correlated: the window is cut into NP_CMP_BATCHES batches whose means are close to independent,
 * and Welch's t runs over the batch means).  Pure computation: no I/O, no allocation.
 */
#ifndef NEMOPERF_STORE_COMPARE_H
#define NEMOPERF_STORE_COMPARE_H

#include <stddef.h>

#define NP_CMP_CONFIDENCE 0.95
#define NP_CMP_BATCHES 4       /* batches of one window (one run vs one run) */
#define NP_CMP_MIN_STEPS 8     /* fewer steps in a window: no verdict from the steps */
#define NP_CMP_MORE_MAX 1000   /* more_runs above this: "more than 1000" */

enum np_cmp_verdict { NP_CMP_INCONCLUSIVE = 0, NP_CMP_SAME, NP_CMP_FASTER, NP_CMP_SLOWER };
const char *np_cmp_verdict_name(enum np_cmp_verdict v); /* "FASTER", ... static */

enum np_cmp_method { NP_CMP_NONE = 0, NP_CMP_WELCH_RUNS, NP_CMP_BATCH_MEANS };
const char *np_cmp_method_name(enum np_cmp_method m); /* "welch-runs", "batch-means", "none" */

struct np_cmp_side {
    size_t n;              /* samples the method used (runs, or batches) */
    double mean;           /* throughput (runs: mean of the runs; steps: 1/mean step time), NAN unknown */
    double lo, hi;         /* its 95 % interval */
};

struct np_cmp_result {
    enum np_cmp_method method;
    struct np_cmp_side base, cand;
    double diff_pct, diff_lo, diff_hi; /* candidate throughput vs baseline, percent; NAN when not computed */
    double df;             /* Welch-Satterthwaite degrees of freedom */
    double min_effect_pct;
    enum np_cmp_verdict verdict;
    long more_runs;        /* INCONCLUSIVE: about this many more runs a side would likely decide; -1 unknown,
                              NP_CMP_MORE_MAX + 1 for "more than NP_CMP_MORE_MAX"; 0 otherwise */
    const char *why;       /* static: why there is no interval (too few runs/steps), or NULL */
};

/* Several runs a side: tput are the runs' throughputs (any unit, > 0; others are skipped). */
void np_compare_runs(const double *base, size_t nb, const double *cand, size_t nc, double min_effect_pct,
                     struct np_cmp_result *out);
/* The change in percent np_compare_runs would state (out->diff_pct, computed the same way), NAN when a side has
 * no throughput: a change within +-min_effect can never be FASTER or SLOWER, whatever its interval, so a caller
 * testing many splits (--history's change points) skips the t quantile there. */
double np_compare_runs_change(const double *base, size_t nb, const double *cand, size_t nc);
/* The same from the throughputs' natural logs (NAN for a throughput np_compare_runs skips), to the last bit: a
 * caller testing every split of a long series takes each log once. */
double np_compare_logs_change(const double *lbase, size_t nb, const double *lcand, size_t nc);

/* One run a side: the steady window's step times (seconds, > 0, in log order). */
void np_compare_steps(const double *base, size_t nb, const double *cand, size_t nc, double min_effect_pct,
                      struct np_cmp_result *out);

/* Student's t: P(T <= t) with df degrees of freedom (df > 0), and its inverse for 0 < p < 1. */
double np_t_cdf(double t, double df);
double np_t_quantile(double p, double df);

#endif
