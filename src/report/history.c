/* history.c - nemoperf-parse --history and --compare over the results store.
 *
 * --history: two passes over the selected runs (by configuration and time to find change points with
 * np_compare_runs, then by time to list them with the change points marked), and a cairo plot of
 * throughput per GPU over time.  --compare: runs of a baseline and a candidate grouped by configuration,
 * each configuration judged by compare.c, written as a table, markdown, CSV or JSON (Jansson).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "nemoperf/report/plot.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/util/text.h"
#include "nemoperf/report/history.h"
#include "nemoperf/report/cairo_dyn.h"

#define HISTORY_BEFORE 20 /* runs before a candidate change point that count */
#define HISTORY_AFTER 3   /* runs from it on that count */

/* ---- configurations: a string-keyed table shared by --compare and the change points ---- */

struct history_side {
    double *x;             /* throughputs */
    long long *id, *t;     /* row ids and times (history) */
    size_t *cont;          /* index of the container tag (history) */
    size_t n, cap;
    double *samples;       /* compare: the first run's window (one run a side) */
    size_t nsamples;
    double per_step;       /* its throughput times its mean step time: steps/s -> the throughput's unit */
};

struct history_cfg {
    char *name;
    char *launch;          /* compare: the variables that launch more of its runs (REPEATS=N ...), or NULL */
    struct history_side s[2];
};

struct np_compare_set {
    struct history_cfg *c;
    size_t n, cap;
    size_t *slot;          /* open addressing: index + 1, 0 empty */
    size_t nslot;
    int tokens;            /* 1 once a throughput was tokens/s/GPU (the unit's name) */
    enum np_cmp_metric metric; /* --metric: what x holds (history_value) */
    char *sys_dir[2];      /* the run folder whose system stands for each side, NULL none (np_compare_set_system) */
    char **sys_diff;       /* the differences between them, in words */
    size_t nsys_diff;
    int sys_set;
    int busbw;             /* 1 once one was an nccl-tests step's peak bus bandwidth */
    unsigned kinds[2];     /* the run kinds each side holds (history_kinds' bits) */
};

/* The run kinds (store's "kind" column), one bit each; an unknown one is the last bit. */
static const char *const history_kinds[] = {"benchmark", "profile", "nccl-trace", "checkpoint-save",
                                            "checkpoint-load", "another kind"};
#define HISTORY_NKINDS (sizeof history_kinds / sizeof history_kinds[0])

static unsigned history_kind_bit(const char *kind)
{
    size_t i = 0;
    while (i + 1 < HISTORY_NKINDS && strcmp(history_kinds[i], kind[0] ? kind : "benchmark") != 0)
        i++;
    return 1u << i;
}

static uint64_t history_hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

struct np_compare_set *np_compare_set_new(void)
{
    return calloc(1, sizeof(struct np_compare_set));
}

static void history_side_free(struct history_side *s)
{
    free(s->x);
    free(s->id);
    free(s->t);
    free(s->cont);
    free(s->samples);
    memset(s, 0, sizeof *s);
}

void np_compare_set_free(struct np_compare_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++) {
        free(set->c[i].name);
        free(set->c[i].launch);
        history_side_free(&set->c[i].s[0]);
        history_side_free(&set->c[i].s[1]);
    }
    free(set->c);
    free(set->slot);
    free(set->sys_dir[0]);
    free(set->sys_dir[1]);
    for (size_t i = 0; i < set->nsys_diff; i++)
        free(set->sys_diff[i]);
    free(set->sys_diff);
    free(set);
}

/* The configuration named, added when new; NULL when out of memory. */
static struct history_cfg *history_cfg(struct np_compare_set *set, const char *name)
{
    if (set->n * 2 + 2 > set->nslot) {
        size_t ns = set->nslot ? set->nslot * 2 : 64;
        size_t *nt = calloc(ns, sizeof *nt);
        if (!nt)
            return NULL;
        for (size_t i = 0; i < set->n; i++) {
            size_t k = history_hash(set->c[i].name) & (ns - 1);
            while (nt[k])
                k = (k + 1) & (ns - 1);
            nt[k] = i + 1;
        }
        free(set->slot);
        set->slot = nt;
        set->nslot = ns;
    }
    size_t k = history_hash(name) & (set->nslot - 1);
    for (; set->slot[k]; k = (k + 1) & (set->nslot - 1))
        if (strcmp(set->c[set->slot[k] - 1].name, name) == 0)
            return &set->c[set->slot[k] - 1];
    if (set->n == set->cap) {
        size_t nc = set->cap ? set->cap * 2 : 16;
        struct history_cfg *ncfg = realloc(set->c, nc * sizeof *ncfg);
        if (!ncfg)
            return NULL;
        set->c = ncfg;
        set->cap = nc;
    }
    struct history_cfg *c = &set->c[set->n];
    memset(c, 0, sizeof *c);
    if (!(c->name = strdup(name)))
        return NULL;
    set->slot[k] = ++set->n;
    return c;
}

static int history_push(struct history_side *s, double x, long long id, long long t, size_t cont, int full)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 8;
        double *nx = realloc(s->x, nc * sizeof *nx);
        if (nx)
            s->x = nx;
        if (!nx)
            return -1;
        if (full) {
            long long *ni = realloc(s->id, nc * sizeof *ni);
            if (ni)
                s->id = ni;
            long long *nt = ni ? realloc(s->t, nc * sizeof *nt) : NULL;
            if (nt)
                s->t = nt;
            size_t *nk = nt ? realloc(s->cont, nc * sizeof *nk) : NULL;
            if (!nk)
                return -1;
            s->cont = nk;
        }
        s->cap = nc;
    }
    s->x[s->n] = x;
    if (full) {
        s->id[s->n] = id;
        s->t[s->n] = t;
        s->cont[s->n] = cont;
    }
    s->n++;
    return 0;
}

void np_compare_set_metric(struct np_compare_set *set, enum np_cmp_metric metric)
{
    set->metric = metric;
}

int np_compare_set_system(struct np_compare_set *set, const char *base_dir, const char *cand_dir)
{
    const char *d[2] = {base_dir, cand_dir};
    set->sys_set = 1;
    for (int k = 0; k < 2; k++) {
        free(set->sys_dir[k]);
        set->sys_dir[k] = d[k] && *d[k] ? strdup(d[k]) : NULL;
        if (d[k] && *d[k] && !set->sys_dir[k])
            return -1;
    }
    return 0;
}

int np_compare_set_system_diff(struct np_compare_set *set, const char *text)
{
    char **nv = realloc(set->sys_diff, (set->nsys_diff + 1) * sizeof *nv);
    if (!nv)
        return -1;
    set->sys_diff = nv;
    if (!(nv[set->nsys_diff] = strdup(text)))
        return -1;
    set->nsys_diff++;
    return 0;
}

/* The system lines after the verdicts (table, markdown): what differs, or why nothing can be said. */
static void history_system_text(const struct np_compare_set *set, enum np_format fmt, FILE *out)
{
    if (!set->sys_set)
        return;
    const char *li = fmt == NP_FMT_MARKDOWN ? "- " : "  ";
    if (!set->sys_dir[0] || !set->sys_dir[1]) {
        fprintf(out, "%ssystems: not compared (%s)\n", fmt == NP_FMT_MARKDOWN ? "\n" : "",
                !set->sys_dir[0] && !set->sys_dir[1] ? "no run of either side has a system snapshot"
                : !set->sys_dir[0]                    ? "no run of the baseline has a system snapshot"
                                                      : "no run of the candidate has a system snapshot");
        return;
    }
    fprintf(out, "%ssystems: %zu difference%s between a baseline run's and a candidate run's (%s, %s)%s\n",
            fmt == NP_FMT_MARKDOWN ? "\n" : "", set->nsys_diff, set->nsys_diff == 1 ? "" : "s", set->sys_dir[0],
            set->sys_dir[1], set->nsys_diff ? ":" : "");
    for (size_t i = 0; i < set->nsys_diff; i++)
        fprintf(out, "%s%s\n", li, set->sys_diff[i]);
}

/* What a run adds to its side: its throughput, or (energy) its tokens per joule, higher better either way, so
 * that one rule judges both (a log-scale difference: J/token's is the same with its sign turned); NAN none. */
static double history_value(const struct np_compare_set *set, const struct np_store_rec *rec)
{
    if (set->metric == NP_CMP_METRIC_ENERGY)
        return isfinite(rec->j_per_token) && rec->j_per_token > 0 ? 1 / rec->j_per_token : NAN;
    return np_store_rec_tput(rec);
}

/* The ./launch variables of a NeMo benchmark run's row (docs/launch.md "Repeats"), NULL for another kind or
 * family (their rows take other variables) or when out of memory. */
static char *history_launch_vars(const struct np_store_rec *rec)
{
    if (strcmp(rec->family, "nemo") != 0 || strcmp(rec->kind, "benchmark") != 0 || rec->variant[0] ||
        !rec->recipe[0] || !rec->size[0] || !rec->dtype[0] || !rec->gpu[0] || rec->gpus <= 0)
        return NULL;
    const char *name[] = {"RECIPE", "MODEL_SIZE", "DTYPE", "GPU_TYPE", "TASK", "WORKLOAD"};
    const char *val[] = {rec->recipe, rec->size, rec->dtype, rec->gpu,
                         strcmp(rec->task, "pretrain") != 0 ? rec->task : "", rec->workload};
    struct np_buf b;
    np_buf_init(&b);
    for (size_t i = 0; i < sizeof name / sizeof name[0]; i++)
        if (*val[i]) {
            np_buf_appendf(&b, "%s=", name[i]);
            if (strspn(val[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-+") == strlen(val[i]))
                np_buf_append(&b, val[i]);
            else /* what the store holds goes to a shell as one word */
                np_buf_append_shq(&b, val[i]);
            np_buf_append(&b, " ");
        }
    np_buf_appendf(&b, "JOB_TOTAL_GPUS=%d", rec->gpus);
    return np_buf_steal(&b);
}

int np_compare_set_add(struct np_compare_set *set, enum np_cmp_sidename side, const struct np_store_rec *rec)
{
    if (!np_store_rec_counts(rec) || !isfinite(history_value(set, rec)))
        return 0;
    struct history_cfg *c = history_cfg(set, rec->config);
    if (!c)
        return -1;
    if (!c->launch && c->s[0].n + c->s[1].n == 0)
        c->launch = history_launch_vars(rec);
    struct history_side *s = &c->s[side];
    set->kinds[side] |= history_kind_bit(rec->kind);
    double x = history_value(set, rec);
    if (isfinite(rec->tokens_per_s_per_gpu) && rec->tokens_per_s_per_gpu > 0)
        set->tokens = 1;
    if (isfinite(rec->busbw_gbs) && rec->busbw_gbs > 0)
        set->busbw = 1;
    /* one run a side: batch means over its step times (throughput only: no per-step energy is kept) */
    if (s->n == 0 && rec->samples && rec->nsamples && set->metric == NP_CMP_METRIC_THROUGHPUT) {
        if (!(s->samples = malloc(rec->nsamples * sizeof *s->samples)))
            return -1;
        memcpy(s->samples, rec->samples, rec->nsamples * sizeof *s->samples);
        s->nsamples = rec->nsamples;
        s->per_step = isfinite(rec->step_time_s) ? x * rec->step_time_s : 1;
    }
    return history_push(s, x, 0, 0, 0, 0) == 0 ? 1 : -1;
}

struct history_add {
    struct np_compare_set *set;
    enum np_cmp_sidename side;
};

static enum np_status history_add_row(void *ctx, const struct np_store_rec *rec)
{
    struct history_add *a = ctx;
    return np_compare_set_add(a->set, a->side, rec) < 0 ? NP_E_NOMEM : NP_OK;
}

enum np_status np_compare_set_from_store(struct np_compare_set *set, enum np_cmp_sidename side, struct np_store *s,
                                         const struct np_store_filter *f, struct np_error *err)
{
    struct history_add a = {set, side};
    return np_store_select(s, f, 1, NP_STORE_STATS, history_add_row, &a, err);
}

int np_compare_set_kinds_apart(const struct np_compare_set *set, char *buf, size_t size)
{
    buf[0] = '\0';
    if (!set->kinds[0] || !set->kinds[1] || (set->kinds[0] & set->kinds[1]))
        return 0;
    size_t len = 0;
    for (int side = 0; side < 2; side++) {
        int n = snprintf(buf + len, size - len, "%s", side ? "; the candidate's " : "the baseline's runs are ");
        len += n > 0 && (size_t)n < size - len ? (size_t)n : 0;
        const char *sep = "";
        for (size_t k = 0; k < HISTORY_NKINDS; k++)
            if (set->kinds[side] & (1u << k)) {
                n = snprintf(buf + len, size - len, "%s%s", sep, history_kinds[k]);
                len += n > 0 && (size_t)n < size - len ? (size_t)n : 0;
                sep = ", ";
            }
    }
    return 1;
}

/* ---- --compare's report ---- */

static int history_cmp_name(const void *a, const void *b)
{
    return strcmp((*(const struct history_cfg *const *)a)->name, (*(const struct history_cfg *const *)b)->name);
}

static void history_judge(const struct history_cfg *c, double min_effect, struct np_cmp_result *r)
{
    const struct history_side *b = &c->s[0], *k = &c->s[1];
    if (b->n == 1 && k->n == 1 && b->nsamples && k->nsamples) {
        np_compare_steps(b->samples, b->nsamples, k->samples, k->nsamples, min_effect, r);
        struct np_cmp_side *sd[2] = {&r->base, &r->cand};
        double f[2] = {b->per_step, k->per_step};
        for (int i = 0; i < 2; i++) { /* 1/step -> the throughput's unit (per-step work of that run) */
            sd[i]->mean *= f[i];
            sd[i]->lo *= f[i];
            sd[i]->hi *= f[i];
        }
        if (!r->why || r->base.n)
            return;
    }
    np_compare_runs(b->x, b->n, k->x, k->n, min_effect, r);
}

/* --metric energy: the result on tokens per joule said as J/token: each mean and interval inverted, the change
 * turned ((1 + d)^-1 - 1, its interval's ends swapped), FASTER (fewer joules a token) as LESS-ENERGY. */
static void history_energy_view(struct np_cmp_result *r)
{
    struct np_cmp_side *sd[2] = {&r->base, &r->cand};
    for (int i = 0; i < 2; i++) {
        double lo = sd[i]->lo, hi = sd[i]->hi;
        sd[i]->mean = 1 / sd[i]->mean;
        sd[i]->lo = 1 / hi;
        sd[i]->hi = 1 / lo;
    }
    double d = r->diff_pct, lo = r->diff_lo, hi = r->diff_hi;
    r->diff_pct = 100 * (100 / (100 + d) - 1);
    r->diff_lo = 100 * (100 / (100 + hi) - 1);
    r->diff_hi = 100 * (100 / (100 + lo) - 1);
}

static const char *history_verdict_name(const struct np_compare_set *set, enum np_cmp_verdict v)
{
    if (set->metric == NP_CMP_METRIC_ENERGY && (v == NP_CMP_FASTER || v == NP_CMP_SLOWER))
        return v == NP_CMP_FASTER ? "LESS-ENERGY" : "MORE-ENERGY";
    return np_cmp_verdict_name(v);
}

static void history_num(char *buf, size_t size, double v, int prec)
{
    if (isfinite(v))
        np_text_fixed(buf, size, v, prec); /* "%.*f", a million rows a --history */
    else
        snprintf(buf, size, "n/a");
}

static void history_more(const struct np_cmp_result *r, const char *launch, char *buf, size_t size)
{
    buf[0] = '\0';
    if (r->verdict != NP_CMP_INCONCLUSIVE)
        return;
    if (r->why)
        snprintf(buf, size, "%s", r->why);
    else if (r->more_runs > NP_CMP_MORE_MAX)
        snprintf(buf, size, "the change is at the margin: more than %d more runs a side", NP_CMP_MORE_MAX);
    else if (r->more_runs > 0)
        snprintf(buf, size, "about %ld more run%s a side would likely decide it; on each side: REPEATS=%ld %s "
                 "./launch", r->more_runs, r->more_runs == 1 ? "" : "s", r->more_runs < 100 ? r->more_runs : 100,
                 launch ? launch : "<the row's variables>");
}

static json_t *history_json_side(const struct np_cmp_side *s)
{
    return json_pack("{s:I,s:o,s:[oo]}", "n", (json_int_t)s->n, "mean", isfinite(s->mean) ? json_real(s->mean) : json_null(), "ci",
                     isfinite(s->lo) ? json_real(s->lo) : json_null(), isfinite(s->hi) ? json_real(s->hi) : json_null());
}

static json_t *history_json_num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

enum np_status np_compare_write(const struct np_compare_set *set, enum np_format fmt, double min_effect_pct,
                                FILE *out, size_t *nslower, size_t *ncompared)
{
    *nslower = *ncompared = 0;
    const struct history_cfg **v = malloc((set->n ? set->n : 1) * sizeof *v);
    json_t *root = fmt == NP_FMT_JSON ? json_object() : NULL, *arr = root ? json_array() : NULL;
    json_t *only[2] = {root ? json_array() : NULL, root ? json_array() : NULL};
    if (!v || (fmt == NP_FMT_JSON && (!root || !arr || !only[0] || !only[1]))) {
        free(v);
        json_decref(root);
        json_decref(arr);
        json_decref(only[0]);
        json_decref(only[1]);
        return NP_E_NOMEM;
    }
    for (size_t i = 0; i < set->n; i++)
        v[i] = &set->c[i];
    qsort(v, set->n, sizeof *v, history_cmp_name);
    int energy = set->metric == NP_CMP_METRIC_ENERGY;
    const char *unit = energy                      ? "J/token"
                       : set->tokens && set->busbw ? "tokens/s/GPU; nccl-tests steps: peak busbw GB/s"
                       : set->tokens                ? "tokens/s/GPU"
                       : set->busbw                 ? "peak busbw GB/s"
                                                    : "steps/s";
    int nomem = 0;
    size_t w = 13;
    for (size_t i = 0; i < set->n; i++)
        if (strlen(v[i]->name) > w)
            w = strlen(v[i]->name);
    if (fmt == NP_FMT_TABLE)
        fprintf(out, "%-*s  %-11s  %7s  %-28s  %-28s  %-24s  %s\n", (int)w, "CONFIGURATION", "METHOD", "RUNS",
                "BASELINE (95% CI)", "CANDIDATE (95% CI)", "CHANGE % (95% CI)", "VERDICT");
    else if (fmt == NP_FMT_MARKDOWN)
        fprintf(out, "| Configuration | Method | Runs | Baseline %s (95%% CI) | Candidate %s (95%% CI) | Change %% "
                     "(95%% CI) | Verdict |\n|---|---|---|---|---|---|---|\n",
                unit, unit);
    else if (fmt == NP_FMT_CSV)
        fprintf(out, "config,method,unit,base_n,base_mean,base_lo,base_hi,cand_n,cand_mean,cand_lo,cand_hi,"
                     "change_pct,change_lo_pct,change_hi_pct,verdict,more_runs,note\n");
    for (size_t i = 0; i < set->n; i++) {
        const struct history_cfg *c = v[i];
        if (!c->s[0].n || !c->s[1].n) {
            if (root)
                json_array_append_new(only[c->s[0].n ? 0 : 1], json_string(c->name));
            continue;
        }
        struct np_cmp_result r;
        history_judge(c, min_effect_pct, &r);
        if (energy)
            history_energy_view(&r);
        (*ncompared)++;
        if (r.verdict == NP_CMP_SLOWER)
            (*nslower)++;
        char more[640], bm[32], bl[32], bh[32], cm[32], cl[32], ch[32], d[32], dl[32], dh[32];
        history_more(&r, c->launch, more, sizeof more);
        int pr = energy ? 4 : 2; /* J/token: a few tenths of a joule */
        history_num(bm, sizeof bm, r.base.mean, pr);
        history_num(bl, sizeof bl, r.base.lo, pr);
        history_num(bh, sizeof bh, r.base.hi, pr);
        history_num(cm, sizeof cm, r.cand.mean, pr);
        history_num(cl, sizeof cl, r.cand.lo, pr);
        history_num(ch, sizeof ch, r.cand.hi, pr);
        history_num(d, sizeof d, r.diff_pct, 2);
        history_num(dl, sizeof dl, r.diff_lo, 2);
        history_num(dh, sizeof dh, r.diff_hi, 2);
        const char *verdict = history_verdict_name(set, r.verdict), *method = np_cmp_method_name(r.method);
        if (fmt == NP_FMT_JSON) {
            json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:[oo],s:o,s:s,s:o,s:o}", "config", c->name, "method",
                                  method, "unit", unit, "baseline", history_json_side(&r.base), "candidate",
                                  history_json_side(&r.cand), "change_pct", history_json_num(r.diff_pct),
                                  "change_ci_pct", history_json_num(r.diff_lo), history_json_num(r.diff_hi), "df",
                                  history_json_num(r.df), "verdict", verdict, "more_runs",
                                  r.verdict == NP_CMP_INCONCLUSIVE && r.more_runs > 0
                                      ? json_integer(r.more_runs)
                                      : json_null(),
                                  "note", *more ? json_string(more) : json_null());
            if (!o || json_array_append_new(arr, o) != 0)
                nomem = 1;
            continue;
        }
        char runs[48], bs[112], cs[112], ds[112];
        snprintf(runs, sizeof runs, "%zu/%zu", c->s[0].n, c->s[1].n);
        snprintf(bs, sizeof bs, "%s [%s, %s]", bm, bl, bh);
        snprintf(cs, sizeof cs, "%s [%s, %s]", cm, cl, ch);
        snprintf(ds, sizeof ds, "%s [%s, %s]", d, dl, dh);
        if (fmt == NP_FMT_TABLE) {
            fprintf(out, "%-*s  %-11s  %7s  %-28s  %-28s  %-24s  %s\n", (int)w, c->name, method, runs, bs, cs, ds,
                    verdict);
            if (*more)
                fprintf(out, "%-*s  (%s)\n", (int)w, "", more);
        } else if (fmt == NP_FMT_MARKDOWN) {
            fprintf(out, "| %s | %s | %s | %s | %s | %s | %s%s%s |\n", c->name, method, runs, bs, cs, ds, verdict,
                    *more ? ": " : "", more);
        } else {
            np_text_csv_field(out, c->name, 1);
            fprintf(out, ",%s,%s,%zu,%s,%s,%s,%zu,%s,%s,%s,%s,%s,%s,%s,", method, unit, r.base.n, bm, bl, bh,
                    r.cand.n, cm, cl, ch, d, dl, dh, verdict);
            if (r.verdict == NP_CMP_INCONCLUSIVE && r.more_runs > 0)
                fprintf(out, "%ld", r.more_runs);
            putc(',', out);
            np_text_csv_field(out, more, 1);
            putc('\n', out);
        }
    }
    enum np_status st = nomem ? NP_E_NOMEM : NP_OK;
    if (root) {
        json_object_set_new(root, "metric", json_string(energy ? "energy" : "throughput"));
        json_object_set_new(root, "min_effect_pct", json_real(min_effect_pct));
        json_object_set_new(root, "confidence", json_real(NP_CMP_CONFIDENCE));
        json_object_set_new(root, "methods",
                            json_pack("{s:s,s:s}", "welch-runs",
                                      "Welch's t over the runs' steady throughputs (log scale)", "batch-means",
                                      "one run a side: Welch's t over 4 batch means of the steady window's step "
                                      "times, variance at least an AR(1) model's of the steps"));
        json_object_set_new(root, "configurations", arr);
        json_object_set_new(root, "only_baseline", only[0]);
        json_object_set_new(root, "only_candidate", only[1]);
        json_object_set_new(root, "slower", json_integer((json_int_t)*nslower));
        if (set->sys_set) {
            json_t *d = json_array();
            for (size_t i = 0; d && i < set->nsys_diff; i++)
                json_array_append_new(d, json_string(set->sys_diff[i]));
            json_object_set_new(root, "system",
                                json_pack("{s:o,s:o,s:o}", "baseline_run",
                                          set->sys_dir[0] ? json_string(set->sys_dir[0]) : json_null(),
                                          "candidate_run", set->sys_dir[1] ? json_string(set->sys_dir[1]) : json_null(),
                                          "differences", d ? d : json_null()));
        }
        if (st == NP_OK && json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) != 0)
            st = NP_E_IO;
        fputc('\n', out);
        json_decref(root);
    } else if (fmt == NP_FMT_TABLE || fmt == NP_FMT_MARKDOWN) {
        fprintf(out, "%s%zu configuration%s compared (%s; 95%% intervals; --min-effect %g%%: %s when the "
                     "whole interval is beyond it, SAME when within it)\n",
                fmt == NP_FMT_MARKDOWN ? "\n" : "", *ncompared, *ncompared == 1 ? "" : "s", unit, min_effect_pct,
                energy ? "LESS-ENERGY/MORE-ENERGY" : "FASTER/SLOWER");
        for (size_t i = 0; i < set->n; i++)
            if (!v[i]->s[0].n || !v[i]->s[1].n)
                fprintf(out, "%s%s: only in the %s\n", fmt == NP_FMT_MARKDOWN ? "- " : "", v[i]->name,
                        v[i]->s[0].n ? "baseline" : "candidate");
        history_system_text(set, fmt, out);
    }
    free(v);
    if (st == NP_OK && (fflush(out) != 0 || ferror(out)))
        st = NP_E_IO;
    return st;
}

/* ---- --history ---- */

struct history_change {
    long long id, t;
    size_t cfg;                   /* its configuration's index in set->c */
    char text[160];
};

/* --history --group: what one configuration's line says, besides its newest run's record (looked up by id) */
struct history_sum {
    size_t cfg;                   /* index in set->c */
    long long n, first_t, last_t, last_id;
    size_t nch, lastch;           /* its change points, the newest's index in pass->ch */
    int found;                    /* the newest run was looked up: */
    char family[12], kind[16];
    double step_s, tpg, mfu, busbw;
};

struct history_pass {
    struct np_compare_set *set;   /* the configurations of the selection */
    char **cont;                  /* container tags seen (interned), [0] = "" */
    size_t ncont, capcont;
    struct history_change *ch;
    size_t nch, capch;
    double min_effect;
    int keep;                     /* keep every configuration's series (for the plot) */
    struct history_sum *sum;      /* --group: a line per configuration, NULL without */
    size_t nsum, capsum;
    int group;
    char cur[320];
    size_t curc;                  /* its index in set->c */
    size_t lastc;                 /* the container the last run had (runs of a configuration share one) */
    int nomem;
};

static size_t history_intern(struct history_pass *p, const char *s)
{
    for (size_t i = 0; i < p->ncont; i++)
        if (strcmp(p->cont[i], s) == 0)
            return i;
    if (p->ncont == p->capcont) {
        size_t nc = p->capcont ? p->capcont * 2 : 16;
        char **n = realloc(p->cont, nc * sizeof *n);
        if (!n) {
            p->nomem = 1;
            return 0;
        }
        p->cont = n;
        p->capcont = nc;
    }
    if (!(p->cont[p->ncont] = strdup(s))) {
        p->nomem = 1;
        return 0;
    }
    return p->ncont++;
}

/* The change points of one configuration's series (in time order). */
static void history_detect(struct history_pass *p, struct history_cfg *c)
{
    struct history_side *s = &c->s[0];
    size_t seg = 0;
    double *lg = s->n >= 4 ? malloc(s->n * sizeof *lg) : NULL; /* each run's log once, not once a split */
    if (s->n >= 4 && !lg) {
        p->nomem = 1;
        return;
    }
    for (size_t i = 0; lg && i < s->n; i++)
        lg[i] = s->x[i] > 0 && isfinite(s->x[i]) ? log(s->x[i]) : NAN;
    for (size_t i = 2; i + 2 <= s->n;) {
        size_t from = i - seg > HISTORY_BEFORE ? i - HISTORY_BEFORE : seg;
        size_t to = i + HISTORY_AFTER < s->n ? i + HISTORY_AFTER : s->n;
        struct np_cmp_result r;
        /* a change within the margin is never FASTER or SLOWER: no interval (no t quantile) needed */
        if (!(fabs(np_compare_logs_change(lg + from, i - from, lg + i, to - i)) > p->min_effect)) {
            i++;
            continue;
        }
        np_compare_runs(s->x + from, i - from, s->x + i, to - i, p->min_effect, &r);
        if (r.verdict != NP_CMP_FASTER && r.verdict != NP_CMP_SLOWER) {
            i++;
            continue;
        }
        /* the split that separates best among the next few: the change starts there */
        size_t best = i;
        double best_t = 0;
        for (size_t j = i; j < i + HISTORY_AFTER && j + 2 <= s->n; j++) {
            size_t f = j - seg > HISTORY_BEFORE ? j - HISTORY_BEFORE : seg;
            size_t e = j + HISTORY_AFTER < s->n ? j + HISTORY_AFTER : s->n;
            struct np_cmp_result q;
            if (!(fabs(np_compare_logs_change(lg + f, j - f, lg + j, e - j)) > p->min_effect))
                continue; /* never FASTER or SLOWER */
            np_compare_runs(s->x + f, j - f, s->x + j, e - j, p->min_effect, &q);
            double hw = (q.diff_hi - q.diff_lo) / 2, tt = hw > 0 ? fabs(q.diff_pct) / hw : fabs(q.diff_pct) * 1e9;
            if (isfinite(tt) && tt > best_t && (q.verdict == NP_CMP_FASTER || q.verdict == NP_CMP_SLOWER)) {
                best_t = tt;
                best = j;
                r = q;
            }
        }
        if (p->nch == p->capch) {
            size_t nc = p->capch ? p->capch * 2 : 16;
            struct history_change *n = realloc(p->ch, nc * sizeof *n);
            if (!n) {
                p->nomem = 1;
                free(lg);
                return;
            }
            p->ch = n;
            p->capch = nc;
        }
        struct history_change *hc = &p->ch[p->nch++];
        hc->id = s->id[best];
        hc->t = s->t[best];
        hc->cfg = (size_t)(c - p->set->c);
        const char *a = p->cont[s->cont[best - 1]], *b = p->cont[s->cont[best]];
        int n = snprintf(hc->text, sizeof hc->text, "%s %+.1f%% [%+.1f, %+.1f]", np_cmp_verdict_name(r.verdict),
                         r.diff_pct, r.diff_lo, r.diff_hi);
        if (strcmp(a, b) != 0 && n > 0 && (size_t)n < sizeof hc->text)
            snprintf(hc->text + n, sizeof hc->text - (size_t)n, " container %s -> %s", *a ? a : "?", *b ? b : "?");
        seg = best;
        i = best + 2;
    }
    free(lg);
}

static void history_flush(struct history_pass *p)
{
    if (!p->cur[0])
        return;
    struct history_cfg *c = history_cfg(p->set, p->cur);
    if (!c) {
        p->nomem = 1;
        return;
    }
    history_detect(p, c);
    if (p->group && c->s[0].n) {
        if (p->nsum == p->capsum) {
            size_t nc = p->capsum ? p->capsum * 2 : 16;
            struct history_sum *ns = realloc(p->sum, nc * sizeof *ns);
            if (!ns) {
                p->nomem = 1;
                return;
            }
            p->sum = ns;
            p->capsum = nc;
        }
        const struct history_side *sd = &c->s[0];
        struct history_sum *u = &p->sum[p->nsum++];
        memset(u, 0, sizeof *u);
        u->cfg = (size_t)(c - p->set->c);
        u->n = (long long)sd->n;
        u->first_t = sd->t[0];
        u->last_t = sd->t[sd->n - 1];
        u->last_id = sd->id[sd->n - 1];
    }
    if (!p->keep)
        history_side_free(&c->s[0]);
}

static enum np_status history_pass1_row(void *ctx, const struct np_store_point *pt)
{
    struct history_pass *p = ctx;
    if (strcmp(p->cur, pt->config) != 0) {
        history_flush(p);
        snprintf(p->cur, sizeof p->cur, "%s", pt->config);
        struct history_cfg *nc = history_cfg(p->set, pt->config);
        if (!nc)
            return NP_E_NOMEM;
        p->curc = (size_t)(nc - p->set->c); /* an index: the table moves as it grows */
    }
    struct history_cfg *c = &p->set->c[p->curc];
    size_t k = strcmp(p->cont[p->lastc], pt->container) == 0 ? p->lastc : history_intern(p, pt->container);
    p->lastc = k;
    if (p->nomem || history_push(&c->s[0], pt->x, pt->id, pt->t, k, 1) != 0)
        return NP_E_NOMEM;
    return NP_OK;
}

static int history_cmp_change(const void *a, const void *b)
{
    long long x = ((const struct history_change *)a)->id, y = ((const struct history_change *)b)->id;
    return (x > y) - (x < y);
}

struct history_list {
    FILE *out;
    enum np_format fmt;
    const struct history_pass *p;
    long long n;
    json_t *arr;
    int bad;
};

static enum np_status history_list_row(void *ctx, const struct np_store_rec *r)
{
    struct history_list *l = ctx;
    if (np_store_rec_counts(r) && r->tokens_per_s_per_gpu > 0)
        l->p->set->tokens = 1; /* the plot's unit: a counted run's throughput was tokens/s/GPU */
    struct history_change key = {r->id, 0, 0, ""};
    const struct history_change *hc =
        l->p->nch ? bsearch(&key, l->p->ch, l->p->nch, sizeof *l->p->ch, history_cmp_change) : NULL;
    const char *change = hc ? hc->text : "";
    char st[32], tpg[32], mfu[32], bw[32];
    history_num(st, sizeof st, r->step_time_s, 3);
    history_num(tpg, sizeof tpg, r->tokens_per_s_per_gpu, 1);
    history_num(mfu, sizeof mfu, r->mfu_percent, 2);
    history_num(bw, sizeof bw, r->busbw_gbs, 1); /* an nccl-tests step's peak bus bandwidth, n/a other runs */
    const char *cont = r->container_tag[0] ? r->container_tag : r->container[0] ? r->container : "-";
    l->n++;
    switch (l->fmt) {
    case NP_FMT_TABLE:
        fprintf(l->out, "%-20s  %-9s  %-15s  %-50s  %-12s  %-10s  %-12s  %-10s  %8s  %16s  %11s  %10s  %s\n",
                r->ended[0] ? r->ended : "-", r->family[0] ? r->family : "-", r->kind[0] ? r->kind : "-", r->config,
                r->cluster, r->job_id[0] ? r->job_id : "-", cont, r->status, st, tpg, mfu, bw, change);
        break;
    case NP_FMT_MARKDOWN:
        fprintf(l->out, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->ended, r->family,
                r->kind, r->config, r->cluster, r->job_id, cont, r->status, st, tpg, mfu, bw, change);
        break;
    case NP_FMT_CSV: { /* one line, one write: a million rows */
        const char *const cell[] = {r->ended, r->family, r->kind, r->config, r->cluster, r->job_id, r->container,
                                    r->container_tag, r->status, st, tpg, mfu, bw, change};
        const unsigned quoted = 1u << 3 | 1u << 4 | 1u << 6 | 1u << 13; /* the rest as they are */
        char line[4096]; /* a record's fixed-size fields, the quoted ones doubled at most */
        size_t n = 0;
        for (size_t i = 0; i < sizeof cell / sizeof cell[0]; i++) {
            if (i)
                line[n++] = ',';
            if (quoted >> i & 1)
                n += np_text_csv_cell(line + n, sizeof line - 1 - n, cell[i], 1);
            else {
                size_t k = strnlen(cell[i], sizeof line - 2 - n);
                memcpy(line + n, cell[i], k);
                n += k;
            }
        }
        line[n++] = '\n';
        fwrite(line, 1, n, l->out);
        break;
    }
    case NP_FMT_JSON: {
        json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:I,s:o}", "id",
                              (json_int_t)r->id, "ended", r->ended, "config", r->config, "config_hash",
                              r->config_hash, "family", r->family, "kind", r->kind, "cluster", r->cluster, "job_id", r->job_id,
                              "container", r->container, "container_tag", r->container_tag, "gpus", r->gpus, "status",
                              r->status, "nemoperf_version", r->nemoperf_version, "steady_step_time_s",
                              history_json_num(r->step_time_s), "steady_tokens_per_s_per_gpu",
                              history_json_num(r->tokens_per_s_per_gpu), "steady_mfu_percent",
                              history_json_num(r->mfu_percent), "busbw_gbs", history_json_num(r->busbw_gbs), "verdict",
                              r->verdict[0] ? json_string(r->verdict) : json_null(), "steps", (json_int_t)r->steps,
                              "change", hc ? json_string(change) : json_null());
        /* one object a line inside the array: the list streams */
        char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
        json_decref(o);
        if (!txt)
            return NP_E_NOMEM;
        fprintf(l->out, "%s\n    %s", l->n > 1 ? "," : "", txt);
        free(txt);
        break;
    }
    }
    return ferror(l->out) ? NP_E_IO : NP_OK;
}

/* ---- the plot: throughput per GPU over time, one line per configuration, container changes marked ---- */

/* Series i's colour: the plots' eight, then eight darker tones of them, then hues a golden angle apart: every
 * configuration its own. */
static void history_rgb(size_t i, double rgb[3])
{
    if (i < 16) {
        np_plot_series_rgb((int)(i % 8), rgb);
        for (int k = 0; k < 3 && i >= 8; k++)
            rgb[k] *= 0.55;
        return;
    }
    double h = fmod((double)i * 0.618033988749895, 1.0) * 6, f = h - floor(h), v = 0.75, sat = 0.8;
    double pq[6][3] = {{1, f, 0}, {1 - f, 1, 0}, {0, 1, f}, {0, 1 - f, 1}, {f, 0, 1}, {1, 0, 1 - f}};
    for (int k = 0; k < 3; k++)
        rgb[k] = v * (1 - sat + sat * pq[(int)h % 6][k]);
}

double np_history_round_step(double span, int n)
{
    if (!(span > 0) || !isfinite(span) || n < 1)
        return 1;
    double raw = span / n, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}

size_t np_history_time_ticks(double t0, double t1, double *at, char (*label)[24], size_t max)
{
    /* a step whose labels differ: hours within a day or two ("11-29 06:00"), else days, weeks, months (dates) */
    static const double step[] = {600,        1800,       3600,        3 * 3600,    6 * 3600,     12 * 3600,
                                  86400,      2 * 86400,  7 * 86400,   14 * 86400,  30 * 86400,   91 * 86400,
                                  182 * 86400, 365 * 86400};
    if (!(t1 > t0) || !isfinite(t0) || !isfinite(t1))
        return 0;
    size_t i = 0;
    while (i + 1 < sizeof step / sizeof step[0] && (t1 - t0) / step[i] > 6)
        i++;
    size_t n = 0;
    for (double t = ceil(t0 / step[i]) * step[i]; t <= t1 && n < max; t += step[i]) {
        time_t tt = (time_t)t;
        struct tm tm;
        label[n][0] = '\0';
        if (gmtime_r(&tt, &tm))
            strftime(label[n], sizeof label[n], step[i] < 86400 ? "%m-%d %H:%M" : "%Y-%m-%d", &tm);
        at[n++] = t;
    }
    return n;
}

/* Text centred on x, kept inside [lo, hi]. */
static void history_text_at(cairo_t *cr, const char *text, double x, double y, double lo, double hi)
{
    cairo_text_extents_t e;
    cairo_text_extents(cr, text, &e);
    double x0 = x - e.x_advance / 2;
    if (x0 + e.x_advance > hi)
        x0 = hi - e.x_advance;
    if (x0 < lo)
        x0 = lo;
    cairo_move_to(cr, x0, y);
    cairo_show_text(cr, text);
}

static enum np_status history_plot(const struct history_pass *p, const char *file, struct np_error *err)
{
    enum np_status lst = np_cairo_load(err);
    if (lst != NP_OK)
        return lst;
    enum np_plot_kind kind = np_plot_kind_of(file);
    size_t nser = 0;
    for (size_t i = 0; i < p->set->n; i++)
        nser += p->set->c[i].s[0].n > 0;
    /* every configuration in the legend, two columns: the picture grows with them */
    size_t rows = (nser + 1) / 2;
    const double W = NP_PLOT_WIDTH, L = 100, R = W - 30, T = 40, B = 420, LEG = B + 62, H = LEG + 16.0 * (double)rows + 16;
    cairo_surface_t *sf = kind == NP_PLOT_SVG   ? cairo_svg_surface_create(file, W, H)
                          : kind == NP_PLOT_PDF ? cairo_pdf_surface_create(file, W, H)
                                                : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)W, (int)H);
    if (cairo_surface_status(sf) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(sf);
        return np_error_set(err, NP_E_IO, file, 0, 0, "cannot create the plot");
    }
    cairo_t *cr = cairo_create(sf);
    double t0 = INFINITY, t1 = -INFINITY, ymax = 0;
    for (size_t i = 0; i < p->set->n; i++) {
        const struct history_side *s = &p->set->c[i].s[0];
        for (size_t k = 0; k < s->n; k++) {
            t0 = fmin(t0, (double)s->t[k]);
            t1 = fmax(t1, (double)s->t[k]);
            ymax = fmax(ymax, s->x[k]);
        }
    }
    if (!(t1 > t0)) {
        t0 = isfinite(t0) ? t0 - 43200 : 0;
        t1 = t0 + 86400;
    }
    double pad = (t1 - t0) * 0.03; /* the first and last runs off the frame */
    t0 -= pad;
    t1 += pad;
    /* y: round ticks from 0 */
    double ystep = np_history_round_step(ymax > 0 ? ymax : 1, 5), y1 = ystep * ceil((ymax > 0 ? ymax * 1.05 : 1) / ystep);
    double tat[16];
    char tlab[16][24];
    size_t ntick = np_history_time_ticks(t0, t1, tat, tlab, 16);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 13);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, L, T - 14);
    cairo_show_text(cr, "Throughput per GPU over time, steady window (dashed: container changed)");
    cairo_set_font_size(cr, 11);
    for (double v = 0; v <= y1 + ystep / 2; v += ystep) {
        char lab[64];
        double y = B - (B - T) * v / y1;
        snprintf(lab, sizeof lab, ystep < 1 ? "%.2f" : ystep < 10 && fmod(ystep, 1) ? "%.1f" : "%.0f", v);
        cairo_text_extents_t e;
        cairo_text_extents(cr, lab, &e);
        cairo_move_to(cr, L - 6 - e.x_advance, y + 4);
        cairo_show_text(cr, lab);
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, L, y);
        cairo_line_to(cr, R, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
    }
    for (size_t k = 0; k < ntick; k++) {
        double x = L + (R - L) * (tat[k] - t0) / (t1 - t0);
        cairo_move_to(cr, x, B);
        cairo_line_to(cr, x, B + 4);
        cairo_stroke(cr);
        history_text_at(cr, tlab[k], x, B + 17, 2, W - 2);
    }
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, L, T, R - L, B - T);
    cairo_stroke(cr);
    history_text_at(cr, "end of the run (UTC)", (L + R) / 2, B + 36, L, R);
    {
        const char *ylab = p->set->tokens ? "tokens/s/GPU (steady window)" : "steps/s (steady window)";
        cairo_text_extents_t e;
        cairo_text_extents(cr, ylab, &e);
        cairo_save(cr);
        cairo_translate(cr, 18, (T + B) / 2 + e.x_advance / 2);
        cairo_rotate(cr, -M_PI / 2);
        cairo_move_to(cr, 0, 0);
        cairo_show_text(cr, ylab);
        cairo_restore(cr);
    }
    size_t shown = 0;
    for (size_t i = 0; i < p->set->n; i++) {
        const struct history_side *s = &p->set->c[i].s[0];
        if (!s->n)
            continue;
        double rgb[3];
        history_rgb(shown, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_set_line_width(cr, 1.5);
        /* one configuration a line: its kind is part of it, so runs of different kinds are never joined */
        for (size_t k = 0; k < s->n; k++) {
            double x = L + (R - L) * ((double)s->t[k] - t0) / (t1 - t0), y = B - (B - T) * s->x[k] / y1;
            if (k == 0)
                cairo_move_to(cr, x, y);
            else
                cairo_line_to(cr, x, y);
        }
        cairo_stroke(cr);
        for (size_t k = 0; k < s->n; k++) {
            double x = L + (R - L) * ((double)s->t[k] - t0) / (t1 - t0), y = B - (B - T) * s->x[k] / y1;
            cairo_arc(cr, x, y, 2.5, 0, 2 * M_PI);
            cairo_fill(cr);
            if (k && s->cont[k] != s->cont[k - 1]) {
                static const double dash[] = {4, 3};
                cairo_set_dash(cr, dash, 2, 0);
                cairo_set_line_width(cr, 1);
                cairo_move_to(cr, x, T);
                cairo_line_to(cr, x, B);
                cairo_stroke(cr);
                cairo_set_dash(cr, NULL, 0, 0);
                cairo_move_to(cr, x + 3, T + 12);
                cairo_show_text(cr, p->cont[s->cont[k]][0] ? p->cont[s->cont[k]] : "?");
            }
        }
        shown++;
    }
    shown = 0;
    for (size_t i = 0; i < p->set->n; i++) { /* the legend: every configuration, its colour */
        if (!p->set->c[i].s[0].n)
            continue;
        double rgb[3], x = shown % 2 ? (W + 20) / 2 : 20, y = LEG + 16.0 * (double)(shown / 2);
        history_rgb(shown, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_set_line_width(cr, 2.5);
        cairo_move_to(cr, x, y - 4);
        cairo_line_to(cr, x + 22, y - 4);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, x + 28, y);
        cairo_show_text(cr, p->set->c[i].name);
        shown++;
    }
    cairo_destroy(cr);
    cairo_surface_flush(sf);
    cairo_status_t cs = kind == NP_PLOT_PNG ? cairo_surface_write_to_png(sf, file) : CAIRO_STATUS_SUCCESS;
    cairo_surface_finish(sf);
    if (cs == CAIRO_STATUS_SUCCESS)
        cs = cairo_surface_status(sf);
    cairo_surface_destroy(sf);
    return cs == CAIRO_STATUS_SUCCESS ? NP_OK
                                      : np_error_set(err, NP_E_IO, file, 0, 0, "cannot write the plot: %s",
                                                     cairo_status_to_string(cs));
}

/* ---- --history --group: a line per configuration (one pass: no run listed) ---- */

struct history_look {
    struct history_sum *sum;
    size_t n;
    struct np_compare_set *set;
};

static enum np_status history_look_row(void *ctx, const struct np_store_rec *r)
{
    struct history_look *lk = ctx;
    for (size_t i = 0; i < lk->n; i++) {
        struct history_sum *u = &lk->sum[i];
        if (u->last_id != r->id)
            continue;
        u->found = 1;
        snprintf(u->family, sizeof u->family, "%s", r->family);
        snprintf(u->kind, sizeof u->kind, "%s", r->kind);
        u->step_s = r->step_time_s;
        u->tpg = r->tokens_per_s_per_gpu;
        u->mfu = r->mfu_percent;
        u->busbw = r->busbw_gbs;
        if (isfinite(r->tokens_per_s_per_gpu) && r->tokens_per_s_per_gpu > 0)
            lk->set->tokens = 1; /* the plot's unit */
    }
    return NP_OK;
}

/* Each configuration's newest run's record, NP_STORE_FILTER_MAX ids a query. */
static enum np_status history_look_up(struct history_pass *p, struct np_store *s, struct np_error *err)
{
    for (size_t i = 0; i < p->nsum; i += NP_STORE_FILTER_MAX) {
        struct np_store_filter f;
        memset(&f, 0, sizeof f);
        struct history_look lk = {p->sum + i, p->nsum - i < NP_STORE_FILTER_MAX ? p->nsum - i : NP_STORE_FILTER_MAX,
                                  p->set};
        for (size_t k = 0; k < lk.n; k++)
            f.ids[f.nids++] = lk.sum[k].last_id;
        enum np_status st = np_store_select(s, &f, 0, NP_STORE_LIST, history_look_row, &lk, err);
        if (st != NP_OK)
            return st;
    }
    return NP_OK;
}

static void history_date(long long t, char *buf, size_t size, int day)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t > 0 && gmtime_r(&tt, &tm))
        strftime(buf, size, day ? "%Y-%m-%d" : "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(buf, size, "-");
}

static enum np_status history_group_write(struct history_pass *p, enum np_format fmt, FILE *out)
{
    long long runs = 0;
    size_t *at = p->set->n ? calloc(p->set->n, sizeof *at) : NULL; /* configuration -> its line + 1 */
    if (p->set->n && !at)
        return NP_E_NOMEM;
    for (size_t i = 0; i < p->nsum; i++)
        at[p->sum[i].cfg] = i + 1;
    for (size_t i = 0; i < p->nch; i++) /* in detection order: a configuration's newest last */
        if (p->ch[i].cfg < p->set->n && at[p->ch[i].cfg]) {
            struct history_sum *u = &p->sum[at[p->ch[i].cfg] - 1];
            u->nch++;
            u->lastch = i;
        }
    free(at);
    if (fmt == NP_FMT_TABLE)
        fprintf(out, "%-50s  %-9s  %-15s  %7s  %-20s  %-20s  %8s  %16s  %11s  %10s  %7s  %s\n", "CONFIGURATION",
                "FAMILY", "KIND", "RUNS", "FIRST", "NEWEST", "STEADY_S", "STEADY_TOK/S/GPU", "STEADY_MFU%",
                "BUSBW_GB/S", "CHANGES", "NEWEST_CHANGE");
    else if (fmt == NP_FMT_MARKDOWN)
        fprintf(out, "| Configuration | Family | Kind | Runs | First | Newest | Steady step s | Steady tokens/s/GPU | "
                     "Steady MFU %% | Peak busbw GB/s | Changes | Newest change |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    else if (fmt == NP_FMT_CSV)
        fprintf(out, "config,family,kind,runs,first,newest,newest_steady_step_time_s,newest_steady_tokens_per_s_per_gpu,"
                     "newest_steady_mfu_percent,newest_busbw_gbs,change_points,newest_change_at,newest_change\n");
    else
        fprintf(out, "{\n  \"configurations\": [");
    for (size_t i = 0; i < p->nsum; i++) {
        const struct history_sum *u = &p->sum[i];
        const char *cfg = p->set->c[u->cfg].name;
        const struct history_change *hc = u->nch ? &p->ch[u->lastch] : NULL;
        char first[32], last[32], chat[32] = "", st[32], tpg[32], mfu[32], bw[32], chg[200];
        history_date(u->first_t, first, sizeof first, 0);
        history_date(u->last_t, last, sizeof last, 0);
        if (hc)
            history_date(hc->t, chat, sizeof chat, 1);
        history_num(st, sizeof st, u->found ? u->step_s : NAN, 3);
        history_num(tpg, sizeof tpg, u->found ? u->tpg : NAN, 1);
        history_num(mfu, sizeof mfu, u->found ? u->mfu : NAN, 2);
        history_num(bw, sizeof bw, u->found ? u->busbw : NAN, 1);
        snprintf(chg, sizeof chg, "%s%s%s", chat, hc ? " " : "", hc ? hc->text : "");
        const char *fam = u->family[0] ? u->family : "-", *kind = u->kind[0] ? u->kind : "-";
        runs += u->n;
        switch (fmt) {
        case NP_FMT_TABLE:
            fprintf(out, "%-50s  %-9s  %-15s  %7lld  %-20s  %-20s  %8s  %16s  %11s  %10s  %7zu  %s\n", cfg, fam, kind,
                    u->n, first, last, st, tpg, mfu, bw, u->nch, hc ? chg : "-");
            break;
        case NP_FMT_MARKDOWN:
            fprintf(out, "| %s | %s | %s | %lld | %s | %s | %s | %s | %s | %s | %zu | %s |\n", cfg, fam, kind, u->n,
                    first, last, st, tpg, mfu, bw, u->nch, hc ? chg : "");
            break;
        case NP_FMT_CSV: {
            char q[4][700];
            np_text_csv_cell(q[0], sizeof q[0], cfg, 1);
            np_text_csv_cell(q[1], sizeof q[1], u->family, 1);
            np_text_csv_cell(q[2], sizeof q[2], u->kind, 1);
            np_text_csv_cell(q[3], sizeof q[3], hc ? hc->text : "", 1);
            fprintf(out, "%s,%s,%s,%lld,%s,%s,%s,%s,%s,%s,%zu,%s,%s\n", q[0], q[1], q[2], u->n, first, last, st, tpg,
                    mfu, bw, u->nch, chat, q[3]);
            break;
        }
        case NP_FMT_JSON: {
            json_t *ch = hc ? json_pack("{s:s,s:s}", "at", chat, "text", hc->text) : json_null();
            json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:s,s:s,s:o,s:o,s:o,s:o,s:I,s:o}", "config", cfg, "family",
                                  u->family, "kind", u->kind, "runs", (json_int_t)u->n, "first", first, "newest", last,
                                  "newest_steady_step_time_s", history_json_num(u->found ? u->step_s : NAN),
                                  "newest_steady_tokens_per_s_per_gpu", history_json_num(u->found ? u->tpg : NAN),
                                  "newest_steady_mfu_percent", history_json_num(u->found ? u->mfu : NAN),
                                  "newest_busbw_gbs", history_json_num(u->found ? u->busbw : NAN), "change_points",
                                  (json_int_t)u->nch, "newest_change", ch);
            char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
            json_decref(o);
            if (!txt)
                return NP_E_NOMEM;
            fprintf(out, "%s\n    %s", i ? "," : "", txt);
            free(txt);
            break;
        }
        }
    }
    if (fmt == NP_FMT_JSON)
        fprintf(out, "%s],\n  \"runs\": %lld,\n  \"change_points\": %zu\n}\n", p->nsum ? "\n  " : "", runs, p->nch);
    else if (fmt == NP_FMT_TABLE || fmt == NP_FMT_MARKDOWN)
        fprintf(out, "%s%zu configuration%s, %lld run%s with a steady throughput, %zu change point%s (--min-effect %g%%); "
                     "the steady figures are each configuration's newest run's\n",
                fmt == NP_FMT_MARKDOWN ? "\n" : "", p->nsum, p->nsum == 1 ? "" : "s", runs, runs == 1 ? "" : "s", p->nch,
                p->nch == 1 ? "" : "s", p->min_effect);
    return ferror(out) ? NP_E_IO : NP_OK;
}

static enum np_status history_write(struct np_store *s, const struct np_store_filter *f, enum np_format fmt,
                                    double min_effect_pct, const char *plot, int group, FILE *out, long long *nrows,
                                    struct np_error *err)
{
    struct history_pass p;
    memset(&p, 0, sizeof p);
    p.min_effect = min_effect_pct;
    p.keep = plot != NULL;
    p.group = group;
    *nrows = 0;
    if (!(p.set = np_compare_set_new()) || history_intern(&p, "") != 0 || p.nomem) {
        np_compare_set_free(p.set);
        return np_error_set(err, NP_E_NOMEM, "--history", 0, 0, "out of memory");
    }
    enum np_status st = np_store_series(s, f, history_pass1_row, &p, err);
    if (st == NP_OK) {
        history_flush(&p);
        if (p.nomem)
            st = np_error_set(err, NP_E_NOMEM, "--history", 0, 0, "out of memory");
    }
    if (st == NP_OK && group) {
        st = history_look_up(&p, s, err);
        if (st == NP_OK && (st = history_group_write(&p, fmt, out)) == NP_OK && (fflush(out) != 0 || ferror(out)))
            st = NP_E_IO;
        if (st == NP_E_IO)
            np_error_set(err, st, "standard output", 0, 0, "cannot write the history");
        else if (st == NP_E_NOMEM)
            np_error_set(err, st, "--history", 0, 0, "out of memory");
        for (size_t i = 0; i < p.nsum; i++)
            *nrows += p.sum[i].n;
    }
    if (st == NP_OK && p.nch && !group)
        qsort(p.ch, p.nch, sizeof *p.ch, history_cmp_change);
    struct history_list l = {out, fmt, &p, 0, NULL, 0};
    if (st == NP_OK && !group) {
        if (fmt == NP_FMT_TABLE)
            fprintf(out, "%-20s  %-9s  %-15s  %-50s  %-12s  %-10s  %-12s  %-10s  %8s  %16s  %11s  %10s  %s\n", "ENDED",
                    "FAMILY", "KIND", "CONFIGURATION", "CLUSTER", "JOB", "CONTAINER", "STATUS", "STEADY_S",
                    "STEADY_TOK/S/GPU", "STEADY_MFU%", "BUSBW_GB/S", "CHANGE");
        else if (fmt == NP_FMT_MARKDOWN)
            fprintf(out, "| Ended | Family | Kind | Configuration | Cluster | Job | Container | Status | Steady step s | "
                         "Steady tokens/s/GPU | Steady MFU %% | Peak busbw GB/s | Change |\n"
                         "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        else if (fmt == NP_FMT_CSV)
            fprintf(out, "ended,family,kind,config,cluster,job_id,container,container_tag,status,steady_step_time_s,"
                         "steady_tokens_per_s_per_gpu,steady_mfu_percent,busbw_gbs,change\n");
        else
            fprintf(out, "{\n  \"runs\": [");
        st = np_store_select(s, f, 0, fmt == NP_FMT_JSON ? NP_STORE_LIST_JSON : NP_STORE_LIST, history_list_row, &l, err);
        if (st == NP_E_IO)
            np_error_set(err, st, "standard output", 0, 0, "cannot write the history");
        else if (st == NP_E_NOMEM)
            np_error_set(err, st, "--history", 0, 0, "out of memory");
        if (st == NP_OK && fmt == NP_FMT_JSON)
            fprintf(out, "%s],\n  \"change_points\": %zu\n}\n", l.n ? "\n  " : "", p.nch);
        else if (st == NP_OK && (fmt == NP_FMT_TABLE || fmt == NP_FMT_MARKDOWN))
            fprintf(out, "%s%lld run%s, %zu change point%s (--min-effect %g%%)\n", fmt == NP_FMT_MARKDOWN ? "\n" : "",
                    l.n, l.n == 1 ? "" : "s", p.nch, p.nch == 1 ? "" : "s", min_effect_pct);
        if (st == NP_OK && (fflush(out) != 0 || ferror(out)))
            st = np_error_set(err, NP_E_IO, "standard output", 0, 0, "cannot write the history");
    }
    if (!group)
        *nrows = l.n;
    if (st == NP_OK && plot)
        st = history_plot(&p, plot, err);
    for (size_t i = 0; i < p.ncont; i++)
        free(p.cont[i]);
    free(p.cont);
    free(p.ch);
    free(p.sum);
    np_compare_set_free(p.set);
    return st;
}

enum np_status np_history_write(struct np_store *s, const struct np_store_filter *f, enum np_format fmt,
                                double min_effect_pct, const char *plot, FILE *out, long long *nrows,
                                struct np_error *err)
{
    return history_write(s, f, fmt, min_effect_pct, plot, 0, out, nrows, err);
}

enum np_status np_history_write_group(struct np_store *s, const struct np_store_filter *f, enum np_format fmt,
                                      double min_effect_pct, const char *plot, FILE *out, long long *nrows,
                                      struct np_error *err)
{
    return history_write(s, f, fmt, min_effect_pct, plot, 1, out, nrows, err);
}
