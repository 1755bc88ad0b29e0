/* compare.c - the noise-aware verdict of nemoperf-parse --compare and of --history's change points.
 *
 * Welch's t over runs (several runs a side), batch means over the steady window's step times (one
 * run a side: consecutive steps are correlated, so the window's steps are averaged in a few batches
 * and the batches are the samples), Student's t from the regularised incomplete beta function.
 * Everything on a log scale: the verdict is about a ratio of throughputs.  See docs/history.md.
 */
#include <math.h>
#include <stddef.h>

#include "nemoperf/store/compare.h"

const char *np_cmp_verdict_name(enum np_cmp_verdict v)
{
    switch (v) {
    case NP_CMP_SAME: return "SAME";
    case NP_CMP_FASTER: return "FASTER";
    case NP_CMP_SLOWER: return "SLOWER";
    default: return "INCONCLUSIVE";
    }
}

const char *np_cmp_method_name(enum np_cmp_method m)
{
    return m == NP_CMP_WELCH_RUNS ? "welch-runs" : m == NP_CMP_BATCH_MEANS ? "batch-means" : "none";
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double compare_betacf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? 1 / tiny : 1 / d;
        c = 1 + aa / c;
        if (fabs(c) < tiny)
            c = tiny;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < tiny ? 1 / tiny : 1 / d;
        c = 1 + aa / c;
        if (fabs(c) < tiny)
            c = tiny;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return h;
}

/* Regularised incomplete beta I_x(a, b). */
static double compare_ibeta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1) / (a + b + 2))
        return exp(lbt) * compare_betacf(a, b, x) / a;
    return 1 - exp(lbt) * compare_betacf(b, a, 1 - x) / b;
}

double np_t_cdf(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    double tail = 0.5 * compare_ibeta(df / 2, 0.5, df / (df + t * t));
    return t > 0 ? 1 - tail : tail;
}

/* Student's t density. */
static double compare_t_pdf(double t, double df)
{
    return exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI) - (df + 1) / 2 * log1p(t * t / df));
}

double np_t_quantile(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return NAN;
    if (p < 0.5)
        return -np_t_quantile(1 - p, df);
    if (p == 0.5)
        return 0;
    /* a start from the normal quantile (Acklam's rational approximation of its tail is not needed: Newton
     * on the normal cdf from 0 is cheap) corrected by the Cornish-Fisher expansion (Abramowitz-Stegun
     * 26.7.5), then Newton's method on the t cdf; bisection when Newton strays */
    double z = 0;
    for (int i = 0; i < 60; i++) {
        double f = 0.5 * erfc(-z / M_SQRT2) - p, d = exp(-z * z / 2) / sqrt(2 * M_PI);
        double step = f / d;
        z -= step;
        if (fabs(step) < 1e-14 * (1 + fabs(z)))
            break;
    }
    double z2 = z * z;
    double x = z + (z2 + 1) * z / (4 * df) + ((5 * z2 + 16) * z2 + 3) * z / (96 * df * df) +
               (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / (384 * df * df * df);
    if (!(x > 0) || !isfinite(x))
        x = z > 0 ? z : 1;
    for (int i = 0; i < 50; i++) {
        double f = np_t_cdf(x, df) - p, d = compare_t_pdf(x, df);
        if (!(d > 0))
            break;
        double nx = x - f / d;
        if (!(nx > 0) || !isfinite(nx))
            break;
        if (fabs(nx - x) < 1e-13 * nx)
            return nx;
        x = nx;
    }
    double lo = 0, hi = 1; /* the slow and sure way */
    while (np_t_cdf(hi, df) < p && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (np_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

struct compare_moments {
    size_t n;
    double mean, var; /* of the logs; var is the sample variance (NAN for n < 2) */
};

static void compare_moments_of(const double *y, size_t n, struct compare_moments *m)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += y[i];
    m->n = n;
    m->mean = n ? s / (double)n : NAN;
    for (size_t i = 0; i < n; i++)
        ss += (y[i] - m->mean) * (y[i] - m->mean);
    m->var = n > 1 ? ss / (double)(n - 1) : NAN;
}

/* A side's interval, from the logs' moments: exp(mean +- t s/sqrt(n)) scaled to the unit. */
static void compare_side(const struct compare_moments *m, struct np_cmp_side *s)
{
    s->n = m->n;
    s->mean = exp(m->mean);
    if (m->n > 1) {
        double h = np_t_quantile(0.5 + NP_CMP_CONFIDENCE / 2, (double)(m->n - 1)) * sqrt(m->var / (double)m->n);
        s->lo = exp(m->mean - h);
        s->hi = exp(m->mean + h);
    } else {
        s->lo = s->hi = NAN;
    }
}

static void compare_reset(struct np_cmp_result *out, double min_effect_pct)
{
    out->method = NP_CMP_NONE;
    out->base.n = out->cand.n = 0;
    out->base.mean = out->base.lo = out->base.hi = NAN;
    out->cand = out->base;
    out->diff_pct = out->diff_lo = out->diff_hi = out->df = NAN;
    out->min_effect_pct = min_effect_pct;
    out->verdict = NP_CMP_INCONCLUSIVE;
    out->more_runs = -1;
    out->why = NULL;
}

/* Welch's t over the two sets of logs (n_runs: runs a side behind them, for more_runs). */
static void compare_welch(const struct compare_moments *b, const struct compare_moments *c, double n_runs,
                          struct np_cmp_result *out)
{
    double vb = b->var, vc = c->var;
    if (b->n < 2 && c->n >= 2) /* one run against several: it is given the others' spread */
        vb = vc;
    if (c->n < 2 && b->n >= 2)
        vc = vb;
    compare_side(b, &out->base);
    compare_side(c, &out->cand);
    if (b->n + c->n < 3 || isnan(vb) || isnan(vc)) {
        out->why = "too few samples for an interval";
        return;
    }
    double qb = vb / (double)b->n, qc = vc / (double)c->n, se = sqrt(qb + qc);
    double df;
    if (qb + qc <= 0)
        df = (double)(b->n + c->n - 2);
    else {
        double den = (b->n > 1 ? qb * qb / (double)(b->n - 1) : 0) + (c->n > 1 ? qc * qc / (double)(c->n - 1) : 0);
        df = den > 0 ? (qb + qc) * (qb + qc) / den : (double)(b->n + c->n - 2);
    }
    if (df < 1)
        df = 1;
    double t = np_t_quantile(0.5 + NP_CMP_CONFIDENCE / 2, df);
    double d = c->mean - b->mean;
    out->df = df;
    out->diff_pct = expm1(d) * 100;
    out->diff_lo = expm1(d - t * se) * 100;
    out->diff_hi = expm1(d + t * se) * 100;
    double m = out->min_effect_pct;
    if (out->diff_lo > m)
        out->verdict = NP_CMP_FASTER;
    else if (out->diff_hi < -m)
        out->verdict = NP_CMP_SLOWER;
    else if (out->diff_lo >= -m && out->diff_hi <= m)
        out->verdict = NP_CMP_SAME;
    else
        out->verdict = NP_CMP_INCONCLUSIVE;
    if (out->verdict != NP_CMP_INCONCLUSIVE) {
        out->more_runs = 0;
        return;
    }
    /* the half-width that would decide: the distance from the estimate to the nearer margin it must clear */
    double lm = log1p(m / 100), need = fabs(fabs(d) - lm);
    if (se <= 0 || need <= 0) {
        out->more_runs = NP_CMP_MORE_MAX + 1;
        return;
    }
    double z = np_t_quantile(0.5 + NP_CMP_CONFIDENCE / 2, df + 2 * n_runs); /* more runs, more df */
    double n_need = n_runs * (z * se / need) * (z * se / need);
    double more = ceil(n_need - n_runs);
    out->more_runs = more < 1 ? 1 : more > NP_CMP_MORE_MAX ? NP_CMP_MORE_MAX + 1 : (long)more;
}

void np_compare_runs(const double *base, size_t nb, const double *cand, size_t nc, double min_effect_pct,
                     struct np_cmp_result *out)
{
    compare_reset(out, min_effect_pct);
    out->method = NP_CMP_WELCH_RUNS;
    struct compare_moments mb = {0, NAN, NAN}, mc = {0, NAN, NAN};
    double sb = 0, sc = 0, qb = 0, qc = 0; /* two passes over positive values, no allocation */
    for (size_t i = 0; i < nb; i++)
        if (base[i] > 0 && isfinite(base[i])) {
            mb.n++;
            sb += log(base[i]);
        }
    for (size_t i = 0; i < nc; i++)
        if (cand[i] > 0 && isfinite(cand[i])) {
            mc.n++;
            sc += log(cand[i]);
        }
    if (!mb.n || !mc.n) {
        out->why = !mb.n ? "no baseline run with a throughput" : "no candidate run with a throughput";
        out->base.n = mb.n;
        out->cand.n = mc.n;
        return;
    }
    mb.mean = sb / (double)mb.n;
    mc.mean = sc / (double)mc.n;
    for (size_t i = 0; i < nb; i++)
        if (base[i] > 0 && isfinite(base[i]))
            qb += (log(base[i]) - mb.mean) * (log(base[i]) - mb.mean);
    for (size_t i = 0; i < nc; i++)
        if (cand[i] > 0 && isfinite(cand[i]))
            qc += (log(cand[i]) - mc.mean) * (log(cand[i]) - mc.mean);
    mb.var = mb.n > 1 ? qb / (double)(mb.n - 1) : NAN;
    mc.var = mc.n > 1 ? qc / (double)(mc.n - 1) : NAN;
    double nr = (double)(mb.n < mc.n ? mb.n : mc.n);
    compare_welch(&mb, &mc, nr, out); /* one run a side: "too few samples" (history.c compares step times then) */
}

double np_compare_runs_change(const double *base, size_t nb, const double *cand, size_t nc)
{
    double sb = 0, sc = 0; /* as np_compare_runs sums them: the same mean to the last bit */
    size_t n_b = 0, n_c = 0;
    for (size_t i = 0; i < nb; i++)
        if (base[i] > 0 && isfinite(base[i])) {
            n_b++;
            sb += log(base[i]);
        }
    for (size_t i = 0; i < nc; i++)
        if (cand[i] > 0 && isfinite(cand[i])) {
            n_c++;
            sc += log(cand[i]);
        }
    if (!n_b || !n_c)
        return NAN;
    return expm1(sc / (double)n_c - sb / (double)n_b) * 100;
}

double np_compare_logs_change(const double *lbase, size_t nb, const double *lcand, size_t nc)
{
    double sb = 0, sc = 0; /* the order and the values np_compare_runs_change sums */
    size_t n_b = 0, n_c = 0;
    for (size_t i = 0; i < nb; i++)
        if (!isnan(lbase[i])) {
            n_b++;
            sb += lbase[i];
        }
    for (size_t i = 0; i < nc; i++)
        if (!isnan(lcand[i])) {
            n_c++;
            sc += lcand[i];
        }
    if (!n_b || !n_c)
        return NAN;
    return expm1(sc / (double)n_c - sb / (double)n_b) * 100;
}

/* The batch means of -log(step time) (throughput's log): NP_CMP_BATCHES batches of n / NP_CMP_BATCHES
 * consecutive steps, the first n % NP_CMP_BATCHES steps (the earliest, nearest the warm-up) left out. */
static size_t compare_batches(const double *x, size_t n, double *bm)
{
    size_t len = n / NP_CMP_BATCHES, skip = n - len * NP_CMP_BATCHES, k = 0;
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0 && isfinite(x[i])))
            return 0;
    if (len == 0)
        return 0;
    for (size_t b = 0; b < NP_CMP_BATCHES; b++) {
        double s = 0;
        for (size_t i = 0; i < len; i++)
            s -= log(x[skip + b * len + i]);
        bm[k++] = s / (double)len;
    }
    return k;
}

/* The variance of the mean of -log(x) for an AR(1) process: s^2/n (1+r)/(1-r), r the lag-1 autocorrelation
 * corrected for its bias (r + (1+4r)/n, Marriott and Pope 1954), kept within [0, 0.95]. */
static double compare_ar1_var(const double *x, size_t n)
{
    double m = 0, c0 = 0, c1 = 0;
    for (size_t i = 0; i < n; i++)
        m += log(x[i]);
    m /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double d = log(x[i]) - m;
        c0 += d * d;
        if (i)
            c1 += d * (log(x[i - 1]) - m);
    }
    if (c0 <= 0)
        return 0;
    double r = c1 / c0;
    r += (1 + 4 * r) / (double)n;
    r = r < 0 ? 0 : r > 0.95 ? 0.95 : r;
    return c0 / (double)(n - 1) / (double)n * (1 + r) / (1 - r);
}

void np_compare_steps(const double *base, size_t nb, const double *cand, size_t nc, double min_effect_pct,
                      struct np_cmp_result *out)
{
    compare_reset(out, min_effect_pct);
    out->method = NP_CMP_BATCH_MEANS;
    if (nb < NP_CMP_MIN_STEPS || nc < NP_CMP_MIN_STEPS) {
        out->why = "fewer than 8 steps in a window: no interval from the steps";
        return;
    }
    double bb[NP_CMP_BATCHES], bc[NP_CMP_BATCHES];
    size_t kb = compare_batches(base, nb, bb), kc = compare_batches(cand, nc, bc);
    if (!kb || !kc) {
        out->why = "a step time that is not a positive number";
        return;
    }
    struct compare_moments mb, mc;
    compare_moments_of(bb, kb, &mb);
    compare_moments_of(bc, kc, &mc);
    /* a short window's few batches are still correlated: the variance of the mean is at least what an
     * AR(1) process with the steps' lag-1 autocorrelation gives (bias-corrected, Marriott-Pope), over the
     * steps the batch means use (the earliest n % NP_CMP_BATCHES left out: one slow first step would
     * otherwise widen the interval of a window whose means never see it) */
    size_t sb = nb % NP_CMP_BATCHES, sc = nc % NP_CMP_BATCHES;
    double ab = compare_ar1_var(base + sb, nb - sb), ac = compare_ar1_var(cand + sc, nc - sc);
    if (ab * (double)kb > mb.var)
        mb.var = ab * (double)kb;
    if (ac * (double)kc > mc.var)
        mc.var = ac * (double)kc;
    compare_welch(&mb, &mc, 1, out);
}
