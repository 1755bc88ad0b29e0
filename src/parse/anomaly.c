/* anomaly.c - step-time anomalies of one run (nemoperf-parse --nccl): spikes far above the median,
 * spikes that recur with a period (garbage collection, checkpoints), a trend across the window
 * (throttling) and a window that starts before the warm-up ends.
 * Robust statistics only (median, median absolute deviation), so one huge step cannot hide others.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/anomaly.h"

static int anomaly_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n) (v is sorted in place). */
static double anomaly_median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, anomaly_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int np_anomaly_find(const long *iter, const double *t, size_t n, long first, long last, struct np_anomaly *a)
{
    memset(a, 0, sizeof *a);
    a->trend_pct = NAN;
    a->warmup_end = -1;
    a->median_s = NAN;
    /* the first step (graph capture, compilation) is slow in every run: not an anomaly */
    size_t s0 = n > 1 ? 1 : 0, m = 0;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return 0;
    for (size_t i = s0; i < n; i++)
        if (isfinite(t[i]) && t[i] > 0)
            v[m++] = t[i];
    a->steps = m;
    if (m < 8) { /* too few steps to tell an anomaly from noise (an NCCL trace run has 5) */
        free(v);
        return 0;
    }
    double med = anomaly_median(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = fabs(v[i] - med);
    double mad = 1.4826 * anomaly_median(v, m);
    a->median_s = med;
    int found = 0;
    /* the median of the log's second half: where the steps settle */
    size_t k = 0;
    for (size_t i = n / 2; i < n; i++)
        if (isfinite(t[i]) && t[i] > 0)
            v[k++] = t[i];
    double late = anomaly_median(v, k);
    size_t j = s0; /* warm-up: the consecutive slow steps from the start */
    while (j < n && (!isfinite(t[j]) || t[j] > 1.10 * late))
        j++;
    a->warmup_end = j < n ? iter[j] : iter[n - 1];
    if (first >= 0 && a->warmup_end > first) {
        a->window_in_warmup = 1;
        found++;
    }
    /* spikes, after the warm-up */
    for (size_t i = s0; i < n; i++) {
        if (!isfinite(t[i]) || iter[i] < a->warmup_end)
            continue;
        if (t[i] >= 1.25 * med && t[i] - med > 6 * mad) {
            if (a->nspikes < NP_ANOMALY_LIST) {
                a->spike_iter[a->nspikes] = iter[i];
                a->spike_s[a->nspikes] = t[i];
            }
            a->nspikes++;
        }
    }
    if (a->nspikes)
        found++;
    if (a->nspikes >= 3 && a->nspikes <= NP_ANOMALY_LIST) {
        long p = a->spike_iter[1] - a->spike_iter[0];
        int same = p > 1;
        for (size_t i = 2; i < a->nspikes && same; i++)
            same = labs(a->spike_iter[i] - a->spike_iter[i - 1] - p) <= 1;
        if (same) {
            a->period = p;
            found++;
        }
    }
    /* a trend across the window (spikes left out): least squares of time over iteration */
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
    size_t c = 0;
    for (size_t i = s0; i < n; i++) {
        if (!isfinite(t[i]) || (first >= 0 && (iter[i] < first || iter[i] > last)))
            continue;
        if (mad > 0 && t[i] - med > 6 * mad && t[i] >= 1.25 * med)
            continue;
        double x = (double)iter[i], y = t[i];
        sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y;
        c++;
    }
    if (c >= 5) {
        double nx = (double)c, vx = sxx - sx * sx / nx, vy = syy - sy * sy / nx, cxy = sxy - sx * sy / nx;
        if (vx > 0 && sy > 0) {
            double slope = cxy / vx, mean = sy / nx, span = sqrt(12 * vx / nx); /* ~ the iterations covered */
            a->trend_pct = 100 * slope * span / mean;
            double r2 = vy > 0 ? cxy * cxy / (vx * vy) : 0;
            if (fabs(a->trend_pct) >= 5 && r2 >= 0.5) {
                a->trend = 1;
                found++;
            }
        }
    }
    free(v);
    return found;
}

void np_anomaly_text(const struct np_anomaly *a, char *buf, size_t size)
{
    size_t len = 0;
    if (!size)
        return;
    buf[0] = '\0';
#define ANOMALY_ADD(...)                                                                                        \
    do {                                                                                                        \
        if (len < size) {                                                                                       \
            int k_ = snprintf(buf + len, size - len, "%s", len ? "; " : "");                                    \
            if (k_ > 0 && (size_t)k_ < size - len)                                                              \
                len += (size_t)k_;                                                                              \
            k_ = snprintf(buf + len, size - len, __VA_ARGS__);                                                  \
            len = k_ > 0 && (size_t)k_ < size - len ? len + (size_t)k_ : size;                                  \
        }                                                                                                       \
    } while (0)
    if (a->nspikes) {
        char list[160] = "";
        size_t ll = 0;
        for (size_t i = 0; i < a->nspikes && i < NP_ANOMALY_LIST; i++) {
            int k = snprintf(list + ll, sizeof list - ll, "%s%ld (%.3g s)", i ? ", " : "", a->spike_iter[i],
                             a->spike_s[i]);
            if (k < 0 || (size_t)k >= sizeof list - ll)
                break;
            ll += (size_t)k;
        }
        ANOMALY_ADD("%zu step spike%s far above the median %.3g s: iteration %s%s", a->nspikes,
                    a->nspikes == 1 ? "" : "s", a->median_s, list, a->nspikes > NP_ANOMALY_LIST ? ", ..." : "");
    }
    if (a->period > 0)
        ANOMALY_ADD("the slow steps recur every %ld iterations (garbage collection, checkpoints?)", a->period);
    if (a->trend)
        ANOMALY_ADD("step time %s %.1f%% across the window (throttling?)", a->trend_pct > 0 ? "rises" : "falls",
                    fabs(a->trend_pct));
    if (a->window_in_warmup)
        ANOMALY_ADD("the window starts before the warm-up ends (steps settle at iteration %ld)", a->warmup_end);
#undef ANOMALY_ADD
}
