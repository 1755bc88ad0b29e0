/* fabric_check.c - name the slow node or link of a fabric check (parse/fabric_check.h).
 *
 * The steps of a FABRIC_CHECK=bisect job (job/nccltests.c): every node alone, then node pairs; each judged on its
 * own against the expected bus bandwidth.  A node alone below it is a slow node; a node all of whose pairs are
 * below it (two pairs or more, the other pairs fine) is slow on the network; any other pair below it is a slow
 * link; #wrong is a data error whatever the bandwidth.  What a user would otherwise work out by hand from the
 * outputs of a day of runs.
 */
#include "nemoperf/parse/fabric_check.h"

#include "nemoperf/model/nccltests.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/util/shell.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "busbw 212 GB/s, expected >= 429 (90 % of 477, H100 NVLink)" */
static void fabric_bw_text(const struct np_fabric_step *s, char *buf, size_t size)
{
    if (isnan(s->busbw))
        snprintf(buf, size, "no busbw");
    else if (isnan(s->expected) || s->expected <= 0)
        snprintf(buf, size, "busbw %.0f GB/s", s->busbw);
    else
        snprintf(buf, size, "busbw %.0f GB/s, expected >= %.0f (%.0f %% of %.0f, %s)", s->busbw,
                 NP_NCCL_PASS_SHARE * s->expected, 100.0 * NP_NCCL_PASS_SHARE, s->expected,
                 s->label[0] ? s->label : "the fabric table");
}

static int fabric_slow(const struct np_fabric_step *s)
{
    return s->ran && s->verdict == NP_NCCL_FAIL && s->wrong == 0;
}

static int fabric_is(const struct np_fabric_step *s, const char *scope)
{
    return strcmp(s->scope, scope) == 0;
}

struct fabric_out {
    struct np_fabric_finding *v;
    size_t n, cap;
};

static void fabric_add(struct fabric_out *o, enum np_fabric_kind k, const char *subject, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void fabric_add(struct fabric_out *o, enum np_fabric_kind k, const char *subject, const char *fmt, ...)
{
    if (o->n < o->cap) {
        struct np_fabric_finding *f = &o->v[o->n];
        f->kind = k;
        snprintf(f->subject, sizeof f->subject, "%s", subject);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(f->text, sizeof f->text, fmt, ap);
        va_end(ap);
    }
    o->n++;
}

static void fabric_pair_name(const struct np_fabric_step *s, char *buf, size_t size)
{
    snprintf(buf, size, "%s-%s", s->host[0], s->host[1]);
}

/* The nodes of the inter steps of one collective (distinct host names), at most cap. */
static size_t fabric_nodes(const struct np_fabric_step *steps, size_t n, const char *coll, const char (**out)[64],
                           size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!fabric_is(&steps[i], "inter") || strcmp(steps[i].collective, coll) != 0 || !steps[i].ran)
            continue;
        for (int h = 0; h < 2; h++) {
            size_t j = 0;
            while (j < k && strcmp(*out[j], steps[i].host[h]) != 0)
                j++;
            if (j == k && k < cap)
                out[k++] = &steps[i].host[h];
        }
    }
    return k;
}

size_t np_fabric_name(const struct np_fabric_step *steps, size_t n, struct np_fabric_finding *out, size_t cap)
{
    struct fabric_out o = {out, 0, cap};
    char bw[200], subj[140];
    /* data errors first: they fail whatever the bandwidth */
    for (size_t i = 0; i < n; i++) {
        const struct np_fabric_step *s = &steps[i];
        if (!s->ran || s->wrong == 0)
            continue;
        if (fabric_is(s, "inter"))
            fabric_pair_name(s, subj, sizeof subj);
        else
            snprintf(subj, sizeof subj, "%s", s->host[0][0] ? s->host[0] : "all nodes");
        fabric_add(&o, NP_FABRIC_DATA_ERROR, subj, "%s: %s %s #wrong %lld (step %s) - data errors", subj,
                   s->collective, fabric_is(s, "intra") ? "intra-node" : fabric_is(s, "inter") ? "inter-node" : "over all nodes",
                   s->wrong, s->name);
    }
    /* nodes alone */
    for (size_t i = 0; i < n; i++) {
        const struct np_fabric_step *s = &steps[i];
        if (!fabric_is(s, "intra") || !fabric_slow(s))
            continue;
        fabric_bw_text(s, bw, sizeof bw);
        fabric_add(&o, NP_FABRIC_SLOW_NODE, s->host[0], "%s: %s intra-node %s - slow node", s->host[0],
                   s->collective, bw);
    }
    /* pairs, one collective at a time: a node all of whose pairs are slow, else each slow pair */
    for (size_t c = 0; c < n; c++) {
        const struct np_fabric_step *first = &steps[c];
        if (!fabric_is(first, "inter"))
            continue;
        size_t seen = 0;
        while (seen < c && !(fabric_is(&steps[seen], "inter") && strcmp(steps[seen].collective, first->collective) == 0))
            seen++;
        if (seen < c) /* this collective was done at an earlier step */
            continue;
        const char *coll = first->collective;
        size_t npairs = 0, nslow = 0;
        for (size_t i = 0; i < n; i++)
            if (fabric_is(&steps[i], "inter") && strcmp(steps[i].collective, coll) == 0 && steps[i].ran) {
                npairs++;
                nslow += fabric_slow(&steps[i]);
            }
        if (!nslow)
            continue;
        if (npairs > 1 && nslow == npairs) { /* every pair: the network, or a table that does not fit it */
            double lo = INFINITY, hi = 0;
            const struct np_fabric_step *any = NULL;
            for (size_t i = 0; i < n; i++)
                if (fabric_is(&steps[i], "inter") && strcmp(steps[i].collective, coll) == 0 && fabric_slow(&steps[i])) {
                    lo = fmin(lo, steps[i].busbw);
                    hi = fmax(hi, steps[i].busbw);
                    any = &steps[i];
                }
            fabric_bw_text(any, bw, sizeof bw);
            char *cut = strstr(bw, ", expected");
            fabric_add(&o, NP_FABRIC_SLOW_NETWORK, "every pair",
                       "every pair: %s inter-node busbw %.0f-%.0f GB/s%s - the network as a whole is slow (or the "
                       "expected table does not fit this fabric: NEMOPERF_FABRIC_TABLE)",
                       coll, lo, hi, cut ? cut : "");
            continue;
        }
        const char(*nodes[NP_NCCLT_MAX_NODES])[64];
        size_t nn = fabric_nodes(steps, n, coll, nodes, NP_NCCLT_MAX_NODES);
        char *named = calloc(nn ? nn : 1, 1); /* 1: the node is named slow on the network */
        if (!named)
            continue;
        for (size_t k = 0; k < nn; k++) {
            size_t mine = 0, slow = 0;
            char list[300] = "";
            const struct np_fabric_step *one = NULL;
            for (size_t i = 0; i < n; i++) {
                const struct np_fabric_step *s = &steps[i];
                if (!fabric_is(s, "inter") || strcmp(s->collective, coll) != 0 || !s->ran ||
                    (strcmp(s->host[0], *nodes[k]) != 0 && strcmp(s->host[1], *nodes[k]) != 0))
                    continue;
                mine++;
                if (fabric_slow(s)) {
                    slow++;
                    one = s;
                    size_t l = strlen(list);
                    snprintf(list + l, sizeof list - l, "%s%s-%s %.0f", l ? ", " : "", s->host[0], s->host[1], s->busbw);
                }
            }
            if (mine >= 2 && slow == mine) {
                named[k] = 1;
                fabric_bw_text(one, bw, sizeof bw);
                char *cut = strstr(bw, ", expected");
                fabric_add(&o, NP_FABRIC_SLOW_NODE_NET, *nodes[k],
                           "%s: %s inter-node, every pair with it is slow (%s GB/s)%s - slow node (network)",
                           *nodes[k], coll, list, cut ? cut : "");
            }
        }
        for (size_t i = 0; i < n; i++) {
            const struct np_fabric_step *s = &steps[i];
            if (!fabric_is(s, "inter") || strcmp(s->collective, coll) != 0 || !fabric_slow(s))
                continue;
            int explained = 0;
            for (size_t k = 0; k < nn; k++)
                explained |= named[k] && (strcmp(s->host[0], *nodes[k]) == 0 || strcmp(s->host[1], *nodes[k]) == 0);
            if (explained)
                continue;
            fabric_pair_name(s, subj, sizeof subj);
            fabric_bw_text(s, bw, sizeof bw);
            fabric_add(&o, NP_FABRIC_SLOW_LINK, subj, "%s: %s inter-node %s - slow link", subj, coll, bw);
        }
        free(named);
    }
    /* a full check over all nodes: below expected, but no node to name */
    for (size_t i = 0; i < n; i++) {
        const struct np_fabric_step *s = &steps[i];
        if (!fabric_is(s, "all") || !fabric_slow(s))
            continue;
        fabric_bw_text(s, bw, sizeof bw);
        snprintf(subj, sizeof subj, "%s", s->host[0][0] ? s->host[0] : "all nodes");
        fabric_add(&o, NP_FABRIC_SLOW_ALL, subj,
                   "%s: %s over %d nodes %s - below expected (FABRIC_CHECK=bisect names the node or link)", subj,
                   s->collective, s->nnodes, bw);
    }
    for (size_t i = 0; i < n; i++) {
        const struct np_fabric_step *s = &steps[i];
        if (s->ran)
            continue;
        if (fabric_is(s, "inter"))
            fabric_pair_name(s, subj, sizeof subj);
        else
            snprintf(subj, sizeof subj, "%s", s->host[0][0] ? s->host[0] : "all nodes");
        fabric_add(&o, NP_FABRIC_NOT_RUN, subj, "%s: step %s has no output (the job ended before it ran, or it could "
                                                "not start) - not checked",
                   subj, s->name);
    }
    return o.n;
}

const char *np_fabric_summary(const struct np_fabric_step *steps, size_t n)
{
    size_t judged = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        judged += steps[i].ran && steps[i].verdict != NP_NCCL_NONE;
        bad += !steps[i].ran || steps[i].verdict == NP_NCCL_FAIL;
    }
    return bad ? "FAIL" : judged ? "PASS" : "-";
}

void np_fabric_step_judge(struct np_fabric_step *s, const char *path, const struct np_fabric_table *t,
                          const char *gpu_type, int gpus_per_node)
{
    s->busbw = s->expected = NAN;
    s->wrong = 0;
    s->ran = 0;
    s->verdict = NP_NCCL_NONE;
    s->label[0] = '\0';
    struct np_nccl_result r;
    struct np_error err;
    if (np_nccltests_read(path, &r, &err) != NP_OK || r.nrows == 0) {
        np_nccl_result_free(&r);
        return;
    }
    s->ran = 1;
    s->busbw = r.peak_busbw;
    s->wrong = r.wrong_total + (r.out_of_bounds > 0 && r.wrong_total == 0 ? r.out_of_bounds : 0);
    struct np_fabric_expectation e;
    if (t && gpu_type && np_fabric_expect(t, gpu_type, s->scope, s->collective, gpus_per_node, &e, &err) == NP_OK) {
        s->expected = e.gbs;
        char g[32];
        size_t k = 0;
        for (; e.gpu[k] && k + 1 < sizeof g; k++)
            g[k] = (char)toupper((unsigned char)e.gpu[k]);
        g[k] = '\0';
        snprintf(s->label, sizeof s->label, "%s %s", g, strcmp(e.link, "nvlink") == 0 ? "NVLink" : e.link);
    }
    s->verdict = np_nccl_verdict(&r, s->expected, NULL, 0);
    np_nccl_result_free(&r);
}

/* "H100 NVLink": the GPU type upper case and the link of its expectation */
static void fabric_label(const struct np_fabric_table *t, const char *gpu, const struct np_fabric_step *s, int gpn,
                         char *buf, size_t size)
{
    struct np_fabric_expectation e;
    struct np_error err;
    buf[0] = '\0';
    if (!t || !gpu[0] || np_fabric_expect(t, gpu, s->scope, s->collective, gpn, &e, &err) != NP_OK)
        return;
    char g[32];
    size_t k = 0;
    for (; e.gpu[k] && k + 1 < sizeof g; k++)
        g[k] = (char)toupper((unsigned char)e.gpu[k]);
    g[k] = '\0';
    snprintf(buf, size, "%s %s", g, strcmp(e.link, "nvlink") == 0 ? "NVLink" : e.link);
}

void np_fabric_step_of_run(const struct np_run *r, const struct np_fabric_table *t, struct np_fabric_step *s)
{
    const struct np_run_nccl *c = &r->nccl;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", c->step);
    snprintf(s->collective, sizeof s->collective, "%s", c->collective);
    snprintf(s->scope, sizeof s->scope, "%s", c->scope);
    const char *comma = fabric_is(s, "all") ? NULL : strchr(c->hosts, ','); /* all: the whole list */
    snprintf(s->host[0], sizeof s->host[0], "%.*s", comma ? (int)(comma - c->hosts) : (int)strlen(c->hosts), c->hosts);
    if (comma && fabric_is(s, "inter"))
        snprintf(s->host[1], sizeof s->host[1], "%.*s", (int)strcspn(comma + 1, ","), comma + 1);
    s->nnodes = c->gpus_per_node > 0 && r->id.gpus > 0 ? r->id.gpus / c->gpus_per_node : fabric_is(s, "inter") ? 2 : 1;
    s->ran = r->status != NP_RUN_NO_LOG && !isnan(c->peak_busbw);
    s->verdict = (enum np_nccl_verdict)c->verdict;
    s->busbw = c->peak_busbw;
    s->expected = c->expected_gbs;
    s->wrong = c->wrong + (c->wrong == 0 && c->out_of_bounds > 0 ? c->out_of_bounds : 0);
    fabric_label(t, r->id.gpu_type, s, c->gpus_per_node, s->label, sizeof s->label);
}

/* ---- collected checks ---- */

struct fabric_item {
    char exp[160], job[32], gpu[32];
    struct np_fabric_step step;
    int gpn;
};

struct np_fabric_checks {
    struct fabric_item *v;
    size_t n, cap;
};

struct np_fabric_checks *np_fabric_checks_new(void)
{
    return calloc(1, sizeof(struct np_fabric_checks));
}

void np_fabric_checks_free(struct np_fabric_checks *c)
{
    if (!c)
        return;
    free(c->v);
    free(c);
}

enum np_status np_fabric_checks_add(struct np_fabric_checks *c, const struct np_run *r)
{
    if (r->id.kind != NP_KIND_NCCLTESTS || !r->nccl.step[0])
        return NP_OK;
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 16;
        void *nv = realloc(c->v, nc * sizeof *c->v);
        if (!nv)
            return NP_E_NOMEM;
        c->v = nv;
        c->cap = nc;
    }
    struct fabric_item *it = &c->v[c->n++];
    snprintf(it->exp, sizeof it->exp, "%s", r->id.experiment);
    snprintf(it->job, sizeof it->job, "%s", r->job_id);
    snprintf(it->gpu, sizeof it->gpu, "%s", r->id.gpu_type);
    it->gpn = r->nccl.gpus_per_node;
    np_fabric_step_of_run(r, NULL, &it->step); /* labelled when the text is made */
    return NP_OK;
}

char *np_fabric_checks_text(const struct np_fabric_checks *c, const struct np_fabric_table *t, int markdown)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "");
    size_t n = c ? c->n : 0;
    char *done = calloc(n ? n : 1, 1);
    struct np_fabric_step *steps = calloc(n ? n : 1, sizeof *steps);
    if (!done || !steps)
        b.failed = 1;
    for (size_t i = 0; done && steps && i < n; i++) {
        if (done[i])
            continue;
        const struct fabric_item *first = &c->v[i];
        size_t k = 0; /* the steps of the same check: its experiment and job */
        for (size_t j = i; j < n; j++)
            if (!done[j] && strcmp(c->v[j].exp, first->exp) == 0 && strcmp(c->v[j].job, first->job) == 0) {
                done[j] = 1;
                steps[k] = c->v[j].step;
                fabric_label(t, c->v[j].gpu, &steps[k], c->v[j].gpn, steps[k].label, sizeof steps[k].label);
                k++;
            }
        struct np_fabric_finding f[64];
        size_t nf = np_fabric_name(steps, k, f, sizeof f / sizeof f[0]);
        np_buf_appendf(&b, "%sfabric check %s (job %s): %s, %zu step%s%s\n", markdown ? "\n" : "", first->exp,
                       first->job[0] ? first->job : "-", np_fabric_summary(steps, k), k, k == 1 ? "" : "s",
                       nf ? ":" : "");
        if (markdown && nf)
            np_buf_append(&b, "\n");
        for (size_t m = 0; m < nf && m < sizeof f / sizeof f[0]; m++)
            np_buf_appendf(&b, "%s%s\n", markdown ? "- " : "  ", f[m].text);
        if (nf > sizeof f / sizeof f[0])
            np_buf_appendf(&b, "%s... and %zu more\n", markdown ? "- " : "  ", nf - sizeof f / sizeof f[0]);
    }
    free(done);
    free(steps);
    return np_buf_steal(&b);
}

char *np_fabric_check_report(const struct np_run *runs, size_t n, const struct np_fabric_table *t)
{
    struct np_fabric_checks *c = np_fabric_checks_new();
    int oom = !c;
    for (size_t i = 0; c && i < n; i++)
        oom |= np_fabric_checks_add(c, &runs[i]) != NP_OK;
    char *text = oom ? NULL : np_fabric_checks_text(c, t, 0);
    np_fabric_checks_free(c);
    return text;
}
