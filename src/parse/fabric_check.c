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
            snprintf(subj, sizeof subj, "%s", fabric_is(s, "intra") ? s->host[0] : "all nodes");
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
        fabric_add(&o, NP_FABRIC_SLOW_ALL, "all nodes",
                   "%d nodes: %s %s - below expected over all nodes (FABRIC_CHECK=bisect names the node or link)",
                   s->nnodes, s->collective, bw);
    }
    for (size_t i = 0; i < n; i++) {
        const struct np_fabric_step *s = &steps[i];
        if (s->ran)
            continue;
        if (fabric_is(s, "inter"))
            fabric_pair_name(s, subj, sizeof subj);
        else
            snprintf(subj, sizeof subj, "%s", fabric_is(s, "intra") ? s->host[0] : "all nodes");
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
