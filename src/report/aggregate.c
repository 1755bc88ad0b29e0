/* aggregate.c - weak-scaling efficiency and --group: passes that need every run.
 *
 * Kept apart from report.c so the per-run output can be written one run at a time; these
 * passes run once on the finished result.  Arithmetic: sample stdev (n - 1), efficiency =
 * tokens/s/GPU / tokens/s/GPU of the smallest GPU count (mean of its repeats).
 */
#include "nemoperf/report/aggregate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int aggregate_counted(const struct np_run *r)
{
    return np_run_status_good(r->status) && r->id.recipe[0] && r->id.gpus > 0 && !isnan(r->window.mean_s);
}

/* The same model of the same family: recipe and size (a Megatron-Bridge -mr name carries its size), the
 * family's own precision name, container and -cv (every family's runs are one record: parse/run.h). */
static int aggregate_same_model(const struct np_identity *a, const struct np_identity *b)
{
    return strcmp(a->recipe, b->recipe) == 0 && strcmp(a->model_size, b->model_size) == 0 &&
           strcmp(a->family, b->family) == 0 && strcmp(a->precision, b->precision) == 0 &&
           strcmp(a->container, b->container) == 0 && strcmp(a->config_variant, b->config_variant) == 0;
}

static double aggregate_tpg(const struct np_run *r)
{
    return isnan(r->steady.tokens_per_s_per_gpu) ? r->m.tokens_per_s_per_gpu : r->steady.tokens_per_s_per_gpu;
}

/* Same configuration (scale aside). */
static int aggregate_same_config(const struct np_run *a, const struct np_run *b)
{
    return aggregate_same_model(&a->id, &b->id) && a->id.dtype == b->id.dtype && strcasecmp(a->id.gpu_type, b->id.gpu_type) == 0 &&
           a->id.seq_len == b->id.seq_len && a->id.kind == b->id.kind &&
           a->id.synthetic == b->id.synthetic;
}

void np_runs_scaling_efficiency(struct np_parse_result *res)
{
    /* the per-configuration sums of the streamed form: one pass, not one over every pair of runs (100,000 runs
     * took minutes that way); the same sums in the same order, so the same figures */
    struct np_scaling s = {0};
    size_t n = 0;
    while (n < res->nruns && np_scaling_add(&s, &res->runs[n]) == NP_OK)
        n++;
    if (n == res->nruns) {
        for (size_t i = 0; i < res->nruns; i++)
            res->runs[i].scaling_eff = np_scaling_eff(&s, &res->runs[i]);
        np_scaling_free(&s);
        return;
    }
    np_scaling_free(&s); /* out of memory: the pass over pairs, which needs none */
    for (size_t i = 0; i < res->nruns; i++) {
        struct np_run *r = &res->runs[i];
        r->scaling_eff = NAN;
        if (!aggregate_counted(r) || isnan(aggregate_tpg(r)))
            continue;
        int smallest = r->id.gpus, scales = 0, other = 0;
        for (size_t k = 0; k < res->nruns; k++) {
            const struct np_run *o = &res->runs[k];
            if (!aggregate_counted(o) || !aggregate_same_config(r, o) || isnan(aggregate_tpg(o)))
                continue;
            if (o->id.gpus != r->id.gpus)
                other = 1;
            if (o->id.gpus < smallest)
                smallest = o->id.gpus;
        }
        if (!other)
            continue; /* one scale only: no sweep to compare with */
        double sum = 0;
        for (size_t k = 0; k < res->nruns; k++) {
            const struct np_run *o = &res->runs[k];
            if (aggregate_counted(o) && aggregate_same_config(r, o) && o->id.gpus == smallest &&
                !isnan(aggregate_tpg(o))) {
                sum += aggregate_tpg(o);
                scales++;
            }
        }
        if (scales && sum > 0)
            r->scaling_eff = aggregate_tpg(r) / (sum / scales);
    }
}

static void aggregate_stats(const double *v, size_t n, double *mean, double *sd, double *mn, double *mx)
{
    double s = 0;
    *mn = *mx = v[0];
    for (size_t i = 0; i < n; i++) {
        s += v[i];
        if (v[i] < *mn)
            *mn = v[i];
        if (v[i] > *mx)
            *mx = v[i];
    }
    *mean = s / n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

enum np_status np_groups_build(const struct np_parse_result *res, struct np_groups *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = res->nruns ? res->nruns : 1;
    out->g = calloc(cap, sizeof *out->g);
    size_t *owner = calloc(cap, sizeof *owner);
    double *a = calloc(cap, sizeof *a), *b = calloc(cap, sizeof *b);
    if (!out->g || !owner || !a || !b) {
        free(owner);
        free(a);
        free(b);
        np_groups_free(out);
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < res->nruns; i++) {
        const struct np_run *r = &res->runs[i];
        if (!aggregate_counted(r)) {
            out->left_out++;
            owner[i] = (size_t)-1;
            continue;
        }
        size_t k = 0;
        while (k < out->n && !(aggregate_same_config(out->g[k].first, r) && out->g[k].first->id.gpus == r->id.gpus &&
                               out->g[k].first->id.gbs == r->id.gbs))
            k++;
        if (k == out->n)
            out->g[out->n++].first = r;
        out->g[k].n++;
        owner[i] = k;
    }
    for (size_t k = 0; k < out->n; k++) {
        struct np_group *g = &out->g[k];
        size_t n = 0;
        double eff = 0;
        size_t neff = 0;
        for (size_t i = 0; i < res->nruns; i++)
            if (owner[i] == k) {
                a[n] = res->runs[i].window.mean_s;
                b[n] = isnan(res->runs[i].steady.tokens_per_s) ? res->runs[i].m.tokens_per_s
                                                                : res->runs[i].steady.tokens_per_s;
                if (!isnan(res->runs[i].scaling_eff)) {
                    eff += res->runs[i].scaling_eff;
                    neff++;
                }
                n++;
            }
        aggregate_stats(a, n, &g->step_mean_s, &g->step_stdev_s, &g->step_min_s, &g->step_max_s);
        aggregate_stats(b, n, &g->tps_mean, &g->tps_stdev, &g->tps_min, &g->tps_max);
        g->scaling_eff = neff ? eff / neff : NAN;
    }
    free(owner);
    free(a);
    free(b);
    return NP_OK;
}

void np_groups_free(struct np_groups *g)
{
    if (!g)
        return;
    free(g->g);
    memset(g, 0, sizeof *g);
}

/* ---- the streamed form ---- */

struct np_scaling_cfg {
    struct np_identity id;        /* the first run's: its model (aggregate_same_model) */
    enum np_dtype dtype;
    char gpu_type[sizeof ((struct np_identity *)0)->gpu_type];
    int seq_len, synthetic;
    enum np_run_kind kind;
    int min_gpus, max_gpus;
    double sum;                   /* tokens/s/GPU of the runs at min_gpus */
    size_t count;
};

static struct np_scaling_cfg *aggregate_cfg(const struct np_scaling *s, const struct np_run *r)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct np_scaling_cfg *c = &s->c[i];
        if (aggregate_same_model(&c->id, &r->id) && c->dtype == r->id.dtype && strcasecmp(c->gpu_type, r->id.gpu_type) == 0 &&
            c->seq_len == r->id.seq_len && c->kind == r->id.kind && c->synthetic == r->id.synthetic)
            return &s->c[i];
    }
    return NULL;
}

enum np_status np_scaling_add(struct np_scaling *s, const struct np_run *r)
{
    long at;
    double tpg;
    return np_scaling_add_at(s, r, &at, &tpg);
}

enum np_status np_scaling_add_at(struct np_scaling *s, const struct np_run *r, long *at, double *tpg)
{
    *at = -1;
    *tpg = NAN;
    if (!aggregate_counted(r) || isnan(aggregate_tpg(r)))
        return NP_OK;
    struct np_scaling_cfg *c = aggregate_cfg(s, r);
    if (!c) {
        if (s->n == s->cap) {
            size_t nc = s->cap ? s->cap * 2 : 16;
            struct np_scaling_cfg *a = realloc(s->c, nc * sizeof *a);
            if (!a)
                return NP_E_NOMEM;
            s->c = a;
            s->cap = nc;
        }
        c = &s->c[s->n++];
        memset(c, 0, sizeof *c);
        c->id = r->id;
        c->dtype = r->id.dtype;
        memcpy(c->gpu_type, r->id.gpu_type, sizeof c->gpu_type);
        c->seq_len = r->id.seq_len;
        c->synthetic = r->id.synthetic;
        c->kind = r->id.kind;
        c->min_gpus = c->max_gpus = r->id.gpus;
    }
    if (r->id.gpus > c->max_gpus)
        c->max_gpus = r->id.gpus;
    if (r->id.gpus < c->min_gpus) {
        c->min_gpus = r->id.gpus;
        c->sum = 0;
        c->count = 0;
    }
    if (r->id.gpus == c->min_gpus) {
        c->sum += aggregate_tpg(r);
        c->count++;
    }
    *at = (long)(c - s->c);
    *tpg = aggregate_tpg(r);
    return NP_OK;
}

double np_scaling_eff(const struct np_scaling *s, const struct np_run *r)
{
    if (!aggregate_counted(r) || isnan(aggregate_tpg(r)))
        return NAN;
    const struct np_scaling_cfg *c = aggregate_cfg(s, r);
    return c ? np_scaling_eff_at(s, (long)(c - s->c), aggregate_tpg(r)) : NAN;
}

double np_scaling_eff_at(const struct np_scaling *s, long at, double tpg)
{
    if (at < 0 || (size_t)at >= s->n || isnan(tpg))
        return NAN;
    const struct np_scaling_cfg *c = &s->c[at];
    if (c->min_gpus == c->max_gpus || !c->count || !(c->sum > 0))
        return NAN; /* one scale only: no sweep to compare with */
    return tpg / (c->sum / (double)c->count);
}

void np_scaling_free(struct np_scaling *s)
{
    if (!s)
        return;
    free(s->c);
    memset(s, 0, sizeof *s);
}
