/* straggler.c - Megatron-LM's and NeMo's straggler-detector reports: the slowest ranks and their nodes.
 *
 * The formats are those of the printing code (cited at each reader); the lines come from the NCCL
 * reader's one pass over the log (nccl.c finds them with its own needles), so reading them costs no
 * second pass.  The last report of each detector is kept; see straggler.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/straggler.h"
#include "nemoperf/util/text.h"

static const char *straggler_find(const char *s, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    return (size_t)(end - s) >= n ? memmem(s, (size_t)(end - s), needle, n) : NULL;
}

static int straggler_starts(const char *s, const char *end, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(end - s) >= n && memcmp(s, word, n) == 0;
}

/* A number at *p (spaces before it skipped) into *v, *p moved past it; 0 when there is none. */
static int straggler_num(const char **p, const char *end, double *v)
{
    char buf[40];
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    size_t n = 0;
    while (s + n < end && n < sizeof buf - 1 && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.' || s[n] == '-' ||
                                                s[n] == '+' || s[n] == 'e' || s[n] == 'E'))
        n++;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *e;
    double x = strtod(buf, &e);
    if (e == buf || !(x == x))
        return 0;
    *v = x;
    *p = s + (e - buf);
    return 1;
}

/* "3468.20ms/0": the value, its unit skipped, then "/rank". */
static int straggler_value_rank(const char *p, const char *end, double *v, int *rank)
{
    double r;
    if (!straggler_num(&p, end, v))
        return 0;
    while (p < end && *p != '/' && *p != ' ' && *p != '|')
        p++;
    if (p >= end || *p != '/')
        return 0;
    p++;
    if (!straggler_num(&p, end, &r) || r < 0 || r > 1e8)
        return 0;
    *rank = (int)r;
    return 1;
}

int np_straggler_needle(const char *hit, const char *end)
{
    return straggler_starts(hit, end, "/Rnk:") || straggler_starts(hit, end, "Etpt(TF):") ||
           straggler_starts(hit, end, "Rank=") || straggler_starts(hit, end, "performance:") ||
           straggler_starts(hit, end, "performing ") || straggler_starts(hit, end, "STRAGGLER DETECTION");
}

/* Megatron-LM megatron/core/utils.py (NVIDIA/Megatron-LM d98e8a64dd) StragglerDetector.report():
 * l.1820-1836 logger.info(f"{now} | MnRtt/Rnk: {o_dt.min_elapsed} | MxRtt/Rnk: {o_dt.max_elapsed} | ...
 * | MnEtpt/Rnk: {min_flops:.2f}TF/{min_frank} | MxEtpt/Rnk: {max_flops:.2f}TF/{max_frank}"), each
 * _ValueWithRank printed f"{value:.2f}{unit}/{rank}" (l.1449); l.1837-1846 the "^^^^ Bottom {N} Ranks
 * with lowest  Etpt(TF):" line, " {value:.2f}/{rank}," per rank (unit ""). */
static void straggler_megatron(struct np_straggler *g, const char *s, const char *end)
{
    const char *q;
    if ((q = straggler_find(s, end, "MnRtt/Rnk:"))) {
        struct np_straggler t = *g;
        const char *a = straggler_find(s, end, "MxRtt/Rnk:"), *b = straggler_find(s, end, "MnEtpt/Rnk:"),
                   *c = straggler_find(s, end, "MxEtpt/Rnk:");
        if (!straggler_value_rank(q + 10, end, &t.mn_rtt_ms, &t.mn_rtt_rank) || !a ||
            !straggler_value_rank(a + 10, end, &t.mx_rtt_ms, &t.mx_rtt_rank))
            return;
        t.mn_etpt = t.mx_etpt = -1;
        t.mn_etpt_rank = t.mx_etpt_rank = -1;
        if (!b || !straggler_value_rank(b + 11, end, &t.mn_etpt, &t.mn_etpt_rank) || !c ||
            !straggler_value_rank(c + 11, end, &t.mx_etpt, &t.mx_etpt_rank)) {
            t.mn_etpt = t.mx_etpt = -1;
            t.mn_etpt_rank = t.mx_etpt_rank = -1;
        }
        t.mg_reports++;
        *g = t;
        return;
    }
    if ((q = straggler_find(s, end, "Etpt(TF):")) && straggler_find(s, q, "Bottom ")) {
        size_t n = 0;
        const char *p = q + 9;
        while (n < NP_STRAGGLER_RANKS) {
            struct np_straggler_rank r = {0};
            if (!straggler_value_rank(p, end, &r.value, &r.rank))
                break;
            g->bottom[n++] = r;
            const char *comma = memchr(p, ',', (size_t)(end - p));
            if (!comma)
                break;
            p = comma + 1;
        }
        if (n)
            g->nbottom = n;
    }
}

/* nvidia-resiliency-ext src/nvidia_resiliency_ext/ptl_resiliency/straggler_det_callback.py (NVIDIA/
 * nvidia-resiliency-ext d8686d9): _format_gpu_scores l.133-149 " Worst performing {n}/{N} ranks:\n" then
 * "  Rank={r} Node={node} Score={s:.2f}\n" worst first, " Best performing ...", or every rank (worst
 * first) when there are few; l.161-162 logger.info(f"\nGPU relative performance:\n{...}") (l.171
 * "individual"); l.122-130 "STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance.
 * Affected ranks: {set of StragglerId(rank=.., node=..)}". */
static void straggler_nemo(struct np_straggler *g, const char *s, const char *hit, const char *end, int follows)
{
    const char *q;
    if (straggler_starts(hit, end, "STRAGGLER DETECTION")) {
        if (straggler_find(hit, end, "relative performance") && (q = straggler_find(hit, end, "Affected ranks: "))) {
            q += 16;
            size_t n = (size_t)(end - q);
            if (n >= sizeof g->nv_warning)
                n = sizeof g->nv_warning - 1;
            memcpy(g->nv_warning, q, n);
            g->nv_warning[n] = '\0';
            np_text_clean(g->nv_warning, n);
        }
        return;
    }
    if (straggler_starts(hit, end, "performance:")) {
        if (straggler_find(s, hit, "GPU relative ")) {
            g->section = 1;
            g->nv_reports++;
            g->nworst = 0;
            g->nv_total = 0;
        } else
            g->section = straggler_find(s, hit, "GPU individual ") ? 2 : 0;
        g->block = 0;
        return;
    }
    if (!follows || !g->section) {
        g->section = 0;
        return;
    }
    if (straggler_starts(hit, end, "performing ")) {
        double total;
        g->block = straggler_find(s, hit, "Worst") ? 1 : straggler_find(s, hit, "Best") ? 2 : 0;
        if (g->section == 1 && g->block == 1 && (q = memchr(hit, '/', (size_t)(end - hit))) &&
            (q++, straggler_num(&q, end, &total)) && total > 0 && total < 1e8)
            g->nv_total = (int)total;
        return;
    }
    /* "  Rank=12 Node=node-a Score=0.94" */
    if (g->section != 1 || g->block == 2 || g->nworst >= NP_STRAGGLER_RANKS)
        return;
    struct np_straggler_rank r = {0};
    double rank;
    const char *p = hit + 5, *node = straggler_find(hit, end, " Node="), *score = straggler_find(hit, end, " Score=");
    if (!straggler_num(&p, end, &rank) || rank < 0 || rank > 1e8 || !node || !score || score < node)
        return;
    p = score + 7;
    if (!straggler_num(&p, end, &r.value))
        return;
    r.rank = (int)rank;
    size_t n = (size_t)(score - (node + 6));
    if (n >= sizeof r.node)
        n = sizeof r.node - 1;
    memcpy(r.node, node + 6, n);
    r.node[n] = '\0';
    np_text_clean(r.node, n);
    g->worst[g->nworst++] = r;
}

void np_straggler_line(struct np_straggler *g, const char *s, const char *hit, const char *end, int follows)
{
    if (straggler_starts(hit, end, "/Rnk:") || straggler_starts(hit, end, "Etpt(TF):"))
        straggler_megatron(g, s, end);
    else
        straggler_nemo(g, s, hit, end, follows);
}

void np_straggler_text(const struct np_straggler *g, int gpus_per_node, char *buf, size_t size)
{
    size_t len = 0;
    if (!size)
        return;
    buf[0] = '\0';
#define STRAGGLER_ADD(...)                                                                                       \
    do {                                                                                                         \
        int k_ = snprintf(buf + len, size - len, __VA_ARGS__);                                                   \
        if (k_ < 0 || (size_t)k_ >= size - len)                                                                  \
            return;                                                                                              \
        len += (size_t)k_;                                                                                       \
    } while (0)
    if (g->mg_reports) {
        STRAGGLER_ADD("Megatron straggler detector (%llu reports), the last: slowest rank %d", 
                      (unsigned long long)g->mg_reports, g->mx_rtt_rank);
        if (gpus_per_node > 0)
            STRAGGLER_ADD(" (node %d)", g->mx_rtt_rank / gpus_per_node);
        STRAGGLER_ADD(" %.2f ms per iteration against %.2f ms on rank %d (+%.1f%%)", g->mx_rtt_ms, g->mn_rtt_ms,
                      g->mn_rtt_rank, g->mn_rtt_ms > 0 ? 100.0 * (g->mx_rtt_ms / g->mn_rtt_ms - 1) : 0.0);
        if (g->mn_etpt_rank >= 0)
            STRAGGLER_ADD("; lowest throughput rank %d", g->mn_etpt_rank);
        if (g->mn_etpt_rank >= 0 && gpus_per_node > 0)
            STRAGGLER_ADD(" (node %d)", g->mn_etpt_rank / gpus_per_node);
        if (g->mn_etpt_rank >= 0)
            STRAGGLER_ADD(" %.2f TF against %.2f TF on rank %d", g->mn_etpt, g->mx_etpt, g->mx_etpt_rank);
        for (size_t i = 0; i < g->nbottom; i++)
            STRAGGLER_ADD("%s%d", i ? ", " : "; lowest throughput ranks: ", g->bottom[i].rank);
    }
    if (g->nv_reports && g->nworst) {
        STRAGGLER_ADD("%sNeMo straggler detection (%llu reports), the last's worst GPU relative performance:",
                      len ? "; " : "", (unsigned long long)g->nv_reports);
        for (size_t i = 0; i < g->nworst; i++)
            STRAGGLER_ADD("%s rank %d on %s (%.2f)", i ? "," : "", g->worst[i].rank,
                          g->worst[i].node[0] ? g->worst[i].node : "?", g->worst[i].value);
        if (g->nv_total)
            STRAGGLER_ADD(" of %d ranks", g->nv_total);
    }
    if (g->nv_warning[0])
        STRAGGLER_ADD("%sstragglers flagged: %s", len ? "; " : "", g->nv_warning);
#undef STRAGGLER_ADD
}
