/* check_nccl.c - Check suite for the NCCL/RCCL reader (src/parse/nccl.c) and its report (src/report/ncclreport.c).
 *
 * The golden cases are real NCCL and RCCL log excerpts from public issue threads and documents,
 * byte for byte (tests/data/nccl/<case>/{input.log,SOURCE,expected.json}: the source and the hand
 * count of each): every case is read whole, then again in chunks of every size from 1 to 97 bytes
 * (lines straddling chunks), and must give the hand-counted calls, lines, bytes and histogram,
 * the nodes, ranks, network, IB devices and warnings.  Then the datatype widths per version,
 * a generated log far larger than a generation of keys (bounded memory, exact counts), and the
 * report formats (JSON members, CSV fields, text); the reader on its own thread gives the same result as
 * inline, lines off NCCL's usual layout are read as before, and the rank and node sets stay exact past the
 * cache of prefixes.  Run from the repo root.
 */
#include "nemoperf/parse/anomaly.h"
#include "nemoperf/parse/nccl.h"
#include "nemoperf/parse/scan.h"
#include "nemoperf/report/ncclreport.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#define DATA "tests/data/nccl/"

static struct np_nccl *read_chunks(const char *buf, size_t len, size_t chunk)
{
    struct np_nccl *n = np_nccl_new();
    ck_assert_ptr_nonnull(n);
    for (size_t off = 0; off < len; off += chunk)
        ck_assert_int_eq(np_nccl_feed(n, buf + off, off + chunk > len ? len - off : chunk), NP_OK);
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    return n;
}

static const struct np_nccl_coll *find_coll(const struct np_nccl *n, int nranks, const char *op)
{
    size_t nc;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    for (size_t i = 0; i < nc; i++)
        if (c[i].nranks == nranks && strcmp(c[i].op, op) == 0)
            return &c[i];
    return NULL;
}

/* Everything expected.json states about the case holds for n. */
static void check_case(const char *name, const struct np_nccl *n, json_t *exp, size_t chunk)
{
    json_t *colls = json_object_get(exp, "colls"), *v;
    size_t nc, i;
    np_nccl_colls(n, &nc);
    ck_assert_msg(nc == json_array_size(colls), "%s (chunk %zu): %zu collectives, expected %zu", name, chunk, nc,
                  json_array_size(colls));
    json_array_foreach(colls, i, v) {
        int nr = (int)json_integer_value(json_object_get(v, "nranks"));
        const char *op = json_string_value(json_object_get(v, "op"));
        const struct np_nccl_coll *c = find_coll(n, nr, op);
        ck_assert_msg(c != NULL, "%s: no %s on %d ranks", name, op, nr);
        ck_assert_msg(c->calls == (uint64_t)json_integer_value(json_object_get(v, "calls")),
                      "%s (chunk %zu): %s/%d calls %llu", name, chunk, op, nr, (unsigned long long)c->calls);
        ck_assert_msg(c->bytes == (uint64_t)json_integer_value(json_object_get(v, "bytes")),
                      "%s (chunk %zu): %s/%d bytes %llu", name, chunk, op, nr, (unsigned long long)c->bytes);
        ck_assert_msg(c->lines == (uint64_t)json_integer_value(json_object_get(v, "lines")),
                      "%s: %s/%d lines %llu", name, op, nr, (unsigned long long)c->lines);
        json_t *h = json_object_get(v, "hist");
        if (h) {
            uint64_t sum = 0;
            for (int b = 0; b < NP_NCCL_HIST; b++) {
                char k[16];
                snprintf(k, sizeof k, "%d", b);
                json_t *e = json_object_get(h, k);
                ck_assert_msg(c->hist[b] == (uint64_t)(e ? json_integer_value(e) : 0), "%s: %s bucket 2^%d: %llu",
                              name, op, b, (unsigned long long)c->hist[b]);
                sum += c->hist[b];
            }
            ck_assert_uint_eq(sum, c->calls);
        }
    }
    const struct np_nccl_net *net = np_nccl_net(n);
    char warn[1024];
    size_t nw = np_nccl_warnings(n, warn, sizeof warn);
    if ((v = json_object_get(exp, "warnings")))
        ck_assert_msg(nw == (size_t)json_integer_value(v), "%s: %zu warnings (%s)", name, nw, warn);
    if ((v = json_object_get(exp, "warn_has")))
        ck_assert_msg(strstr(warn, json_string_value(v)) != NULL, "%s: warning '%s'", name, warn);
    if ((v = json_object_get(exp, "ranks_seen")))
        ck_assert_msg(np_nccl_ranks_seen(n) == (size_t)json_integer_value(v), "%s: %zu ranks seen", name,
                      np_nccl_ranks_seen(n));
    if ((v = json_object_get(exp, "nodes")))
        ck_assert_msg(np_nccl_nodes(n) == (int)json_integer_value(v), "%s: %d nodes", name, np_nccl_nodes(n));
    if ((v = json_object_get(exp, "max_nranks")))
        ck_assert_int_eq(net->max_nranks, (int)json_integer_value(v));
    if ((v = json_object_get(exp, "network")))
        ck_assert_str_eq(net->network, json_string_value(v));
    if ((v = json_object_get(exp, "version")))
        ck_assert_str_eq(net->version, json_string_value(v));
    if ((v = json_object_get(exp, "ib")))
        ck_assert_str_eq(net->ib, json_string_value(v));
    if ((v = json_object_get(exp, "plugin")))
        ck_assert_str_eq(net->plugin, json_string_value(v));
    if ((v = json_object_get(exp, "global_ranks")))
        ck_assert_str_eq(np_nccl_global_ranks(n), json_string_value(v));
}

START_TEST(test_golden_cases)
{
    DIR *d = opendir(DATA);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    int cases = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char p[512];
        snprintf(p, sizeof p, DATA "%s/expected.json", de->d_name);
        if (access(p, R_OK) != 0)
            continue;
        json_error_t je;
        json_t *exp = json_load_file(p, 0, &je);
        ck_assert_msg(exp != NULL, "%s: %s", p, je.text);
        snprintf(p, sizeof p, DATA "%s/input.log", de->d_name);
        size_t len;
        char *buf = np_test_read_all(p, &len);
        struct np_nccl *whole = np_nccl_new();
        struct np_error err;
        ck_assert_int_eq(np_nccl_read_path(whole, p, &err), NP_OK);
        check_case(de->d_name, whole, exp, 0);
        np_nccl_free(whole);
        for (size_t chunk = 1; chunk <= 97; chunk += 8) {
            struct np_nccl *n = read_chunks(buf, len, chunk);
            check_case(de->d_name, n, exp, chunk);
            np_nccl_free(n);
        }
        free(buf);
        json_decref(exp);
        cases++;
    }
    closedir(d);
    ck_assert_int_ge(cases, 10);
}
END_TEST

START_TEST(test_dtype_widths)
{
    /* NVIDIA/nccl src/nccl.h.in: 0-8 since 2.3, bfloat16 (9) from 2.10, float8 (10, 11) from 2.24 */
    ck_assert_int_eq(np_nccl_dtype_width(0, "2.4.2+cuda9.0", 0), 1);
    ck_assert_int_eq(np_nccl_dtype_width(6, "2.4.2+cuda9.0", 0), 2);
    ck_assert_int_eq(np_nccl_dtype_width(7, "", 0), 4);
    ck_assert_int_eq(np_nccl_dtype_width(8, "2.21.5", 0), 8);
    ck_assert_int_eq(np_nccl_dtype_width(9, "2.9.9", 0), 0);
    ck_assert_int_eq(np_nccl_dtype_width(9, "2.10.3", 0), 2);
    ck_assert_int_eq(np_nccl_dtype_width(10, "2.23.4", 0), 0);
    ck_assert_int_eq(np_nccl_dtype_width(10, "2.24.3", 0), 1);
    ck_assert_int_eq(np_nccl_dtype_width(11, "2.18.3", 1), 1); /* RCCL numbers fp8 10/11 as well */
    ck_assert_int_eq(np_nccl_dtype_width(12, "", 0), 0);
    ck_assert_int_eq(np_nccl_dtype_width(-1, "", 0), 0);
    ck_assert_int_eq(np_nccl_dtype_width(7, "1.3.4", 0), 0);
}
END_TEST

/* A log of 200,000 collectives from 8 ranks each, spread over many communicators and opCounts:
 * far more keys than a generation holds, and every count exact (each collective's 8 lines are
 * close together, as NCCL logs them). */
START_TEST(test_bounded_and_exact)
{
    struct np_nccl *n = np_nccl_new();
    char line[512];
    uint64_t want_bytes = 0;
    for (unsigned op = 0; op < 200000; op++) {
        unsigned count = 1000 + op % 4096;
        for (int r = 0; r < 8; r++) {
            int len = snprintf(line, sizeof line,
                               "node%d:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x7f recvbuff 0x7f count %u "
                               "datatype 9 op 0 root 0 comm 0x%x [nranks=8] stream 0x1\n",
                               r / 4, 100 + r, 200 + r, r % 4, op % 3 ? "AllReduce" : "AllGather", op, count,
                               0x5000 + r);
            ck_assert_int_eq(np_nccl_feed(n, line, (size_t)len), NP_OK);
        }
        want_bytes += (uint64_t)count * 2;
    }
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    const struct np_nccl_coll *ar = find_coll(n, 8, "AllReduce"), *ag = find_coll(n, 8, "AllGather");
    ck_assert_ptr_nonnull(ar);
    ck_assert_ptr_nonnull(ag);
    ck_assert_uint_eq(ar->calls + ag->calls, 200000);
    ck_assert_uint_eq(ar->lines + ag->lines, 1600000);
    ck_assert_uint_eq(ar->bytes + ag->bytes, want_bytes);
    ck_assert_uint_eq(np_nccl_ranks_seen(n), 8);
    ck_assert_int_eq(np_nccl_nodes(n), 2);
    np_nccl_free(n);
}
END_TEST

/* NCCL 2.27 on one node logs opCount 0 for every call: the lines of one key are then many calls. */
START_TEST(test_repeated_opcount)
{
    struct np_nccl *n = np_nccl_new();
    const char *l = "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1024 datatype 7 op 0 "
                    "root 0 comm 0x9 [nranks=2] stream 0x1\n"
                    "h:2:2 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1024 datatype 7 op 0 "
                    "root 0 comm 0xa [nranks=2] stream 0x1\n";
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(np_nccl_feed(n, l, strlen(l)), NP_OK);
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    const struct np_nccl_coll *c = find_coll(n, 2, "AllReduce");
    ck_assert_uint_eq(c->calls, 50);
    ck_assert_uint_eq(c->bytes, 50 * 4096);
    ck_assert_uint_eq(c->hist[12], 50);
    np_nccl_free(n);
}
END_TEST

/* Lines that look like NCCL's but are not collectives, and hostile input: nothing counted, no crash. */
START_TEST(test_not_collectives)
{
    struct np_nccl *n = np_nccl_new();
    static const char *const bad[] = {
        "x NCCL INFO AllReduce: opCount zz count 1 datatype 7 [nranks=2]\n",
        "x NCCL INFO AllReduce: opCount 1 count 1 datatype 7\n",                  /* no nranks */
        "x NCCL INFO AllReduce: opCount 1 count 1 [nranks=2]\n",                   /* no datatype */
        "x NCCL INFO AllReduce: opCount 1 count 99999999999999999999999 datatype 7 [nranks=2]\n",
        "x NCCL INFO AllReduce: opCount 1 count 1 datatype 7 [nranks=0]\n",
        "NCCL INFO\n", "NCCL\n", "CCL \n", "\n", "\0\0\0NCCL INFO opCount\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_int_eq(np_nccl_feed(n, bad[i], strlen(bad[i]) ? strlen(bad[i]) : 1), NP_OK);
    char big[20000];
    memset(big, 'A', sizeof big);
    ck_assert_int_eq(np_nccl_feed(n, big, sizeof big), NP_OK); /* a line longer than the reader's */
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    ck_assert_uint_eq(np_nccl_trace_lines(n), 0);
    size_t nc;
    np_nccl_colls(n, &nc);
    ck_assert_uint_eq(nc, 0);
    np_nccl_free(n);
}
END_TEST

START_TEST(test_checkpoint_lines)
{
    /* seed 003's examples (NVIDIA's Llama 3.1 recipe README) */
    const char *l = "[NeMo I 2025-04-11 14:48:45 nemo_logging:393] Global Checkpoint Save : Rank: 0 : Iteration: 50 : "
                    "Start time: 1744408121.151s : Save duration: 4.389s\n"
                    "[NeMo I 2025-04-11 14:46:18 nemo_logging:393] Global Checkpoint Load : Rank : 0 : Start time : "
                    "1744407969.270s : Time spent in load_checkpoint: 9.712s\n";
    struct np_nccl *n = read_chunks(l, strlen(l), 7);
    const struct np_nccl_ckpt *ck = np_nccl_ckpt(n);
    ck_assert_uint_eq(ck->saves, 1);
    ck_assert_uint_eq(ck->loads, 1);
    ck_assert_double_eq_tol(ck->save_s, 4.389, 1e-9);
    ck_assert_double_eq_tol(ck->load_max_s, 9.712, 1e-9);
    ck_assert(np_ncclreport_any(n));
    np_nccl_free(n);
}
END_TEST

START_TEST(test_report_formats)
{
    struct np_nccl *n = np_nccl_new();
    struct np_error err;
    ck_assert_int_eq(np_nccl_read_path(n, DATA "nccl-torchtitan-tp2/input.log", &err), NP_OK);
    json_t *j = np_ncclreport_json(n, 2);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "bytes")), 16777216 + 8 + 8388608);
    ck_assert_double_eq(json_real_value(json_object_get(j, "bytes_per_step")), (16777216 + 8 + 8388608) / 2.0);
    json_t *c0 = json_array_get(json_object_get(j, "collectives"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(c0, "op")), "AllGather");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(c0, "histogram_log2"), "23")), 2);
    json_decref(j);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    ck_assert_int_eq(np_ncclreport_csv_header(f), NP_OK);
    ck_assert_int_eq(np_ncclreport_csv(f, "run,1", n, 2), NP_OK);
    ck_assert_int_eq(np_ncclreport_text(f, "run1", n, 2, 0), NP_OK);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(text, "\"run,1\",2,AllGather,2,3,16777216,8388608.0,"));
    ck_assert_ptr_nonnull(strstr(text, "ReduceScatter"));
    ck_assert_ptr_nonnull(strstr(text, "2^23:2"));
    free(text);
    np_nccl_free(n);
}
END_TEST

/* Step anomalies (src/parse/anomaly.c): a clean run has none; a spike, a period, a trend and a
 * window inside the warm-up are each found, and nothing is claimed from fewer than 8 steps. */
START_TEST(test_anomalies)
{
    long it[60];
    double t[60];
    struct np_anomaly a;
    for (int i = 0; i < 60; i++) {
        it[i] = i;
        t[i] = 10.0 + 0.01 * (i % 3); /* noise */
    }
    t[0] = 40;
    ck_assert_int_eq(np_anomaly_find(it, t, 60, 11, 44, &a), 0);
    ck_assert_double_eq_tol(a.median_s, 10.01, 1e-9);
    t[33] = 20; /* one spike */
    ck_assert_int_eq(np_anomaly_find(it, t, 60, 11, 44, &a), 1);
    ck_assert_uint_eq(a.nspikes, 1);
    ck_assert_int_eq(a.spike_iter[0], 33);
    ck_assert_int_eq(a.period, 0);
    t[23] = t[43] = t[53] = 19; /* every 10 */
    ck_assert_int_eq(np_anomaly_find(it, t, 60, 11, 44, &a), 2);
    ck_assert_int_eq(a.period, 10);
    char text[512];
    np_anomaly_text(&a, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "recur every 10 iterations"));
    for (int i = 0; i < 60; i++)
        t[i] = 10.0 * (1 + 0.004 * i); /* +24% over 60 steps: throttling */
    ck_assert_int_eq(np_anomaly_find(it, t, 60, 11, 44, &a), 1);
    ck_assert(a.trend);
    ck_assert(a.trend_pct > 5);
    for (int i = 0; i < 60; i++)
        t[i] = i < 15 ? 14.0 : 10.0; /* warm-up until iteration 15, window from 11 */
    ck_assert_int_eq(np_anomaly_find(it, t, 60, 11, 44, &a), 1);
    ck_assert(a.window_in_warmup);
    ck_assert_int_eq(a.warmup_end, 15);
    ck_assert_int_eq(np_anomaly_find(it, t, 60, 20, 44, &a), 0);
    ck_assert_int_eq(np_anomaly_find(it, t, 5, 0, 4, &a), 0); /* an NCCL trace run's 5 steps */
}
END_TEST

/* Straggler-detector reports (straggler.c), read whole and in chunks of 1-97 bytes: Megatron-LM's from
 * NVIDIA's own README example (byte for byte), NeMo's callback from a reconstruction of its printing code
 * (tests/data/straggler/<case>/SOURCE says which and the hand reading); interleaved with NCCL collective
 * lines, which must still count. */
START_TEST(test_stragglers)
{
    size_t len;
    char *mg = np_test_read_all("tests/data/straggler/megatron-readme/input.log", &len);
    for (size_t chunk = 1; chunk <= 98; chunk++) {
        struct np_nccl *n = read_chunks(mg, len, chunk == 98 ? len : chunk);
        const struct np_straggler *g = np_nccl_stragglers(n);
        ck_assert_uint_eq(g->mg_reports, 1);
        ck_assert_int_eq(g->mx_rtt_rank, 0);
        ck_assert_int_eq(g->mn_rtt_rank, 8);
        ck_assert(g->mx_rtt_ms > 3468.19 && g->mx_rtt_ms < 3468.21);
        ck_assert(g->mn_rtt_ms > 3453.07 && g->mn_rtt_ms < 3453.09);
        ck_assert_int_eq(g->mn_etpt_rank, 0);
        ck_assert_int_eq(g->mx_etpt_rank, 8);
        ck_assert_uint_eq(g->nbottom, 4);
        ck_assert_int_eq(g->bottom[0].rank, 0);
        ck_assert_int_eq(g->bottom[1].rank, 2);
        ck_assert_int_eq(g->bottom[2].rank, 1);
        ck_assert_int_eq(g->bottom[3].rank, 4);
        ck_assert_uint_eq(g->nv_reports, 0);
        char text[600];
        np_straggler_text(g, 8, text, sizeof text);
        ck_assert_msg(strstr(text, "slowest rank 0 (node 0) 3468.20 ms per iteration against 3453.08 ms on rank 8") &&
                          strstr(text, "lowest throughput ranks: 0, 2, 1, 4"), "%s", text);
        np_nccl_free(n);
    }
    free(mg);
    char *nv = np_test_read_all("tests/data/straggler/nemo-callback/input.log", &len);
    /* the same report with NCCL collective lines of 2 ranks between its blocks (a real log interleaves) */
    const char *coll = "h:1:2 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 "
                       "root 0 comm 0x3 [nranks=2] stream 0x4\n";
    size_t cl = strlen(coll);
    char *mixed = malloc(len + 2 * cl);
    ck_assert_ptr_nonnull(mixed);
    memcpy(mixed, coll, cl);
    memcpy(mixed + cl, nv, len);
    memcpy(mixed + cl + len, coll, cl);
    for (size_t chunk = 1; chunk <= 98; chunk++) {
        struct np_nccl *n = read_chunks(mixed, len + 2 * cl, chunk == 98 ? len + 2 * cl : chunk);
        const struct np_straggler *g = np_nccl_stragglers(n);
        ck_assert_uint_eq(g->nv_reports, 1);
        ck_assert_uint_eq(g->nworst, 3); /* the worst block only, not the best */
        ck_assert_int_eq(g->worst[0].rank, 13);
        ck_assert_str_eq(g->worst[0].node, "pool0-0183");
        ck_assert(g->worst[0].value > 0.785 && g->worst[0].value < 0.795);
        ck_assert_int_eq(g->worst[1].rank, 5);
        ck_assert_int_eq(g->worst[2].rank, 2);
        ck_assert_str_eq(g->worst[2].node, "pool0-0181");
        ck_assert_int_eq(g->nv_total, 16);
        ck_assert_str_eq(g->nv_warning, "{StragglerId(rank=13, node='pool0-0183')}");
        ck_assert_uint_eq(g->mg_reports, 0);
        const struct np_nccl_coll *c = find_coll(n, 2, "AllReduce");
        ck_assert_ptr_nonnull(c);
        ck_assert_uint_eq(c->lines, 2);
        np_nccl_free(n);
    }
    free(mixed);
    /* "Rank=" lines that do not follow a report's header are no report */
    const char *stray = "[NeMo I x] Rank=3 Node=a Score=0.10\n";
    struct np_nccl *n = read_chunks(stray, strlen(stray), strlen(stray));
    ck_assert_uint_eq(np_nccl_stragglers(n)->nworst, 0);
    np_nccl_free(n);
    free(nv);
}
END_TEST

/* A process's rank from NCCL's init lines (what names a profile run's profile_<pid>.nsys-rep): the srun-label
 * excerpt's "h100clust-worker-1:227602:... comm 0x.. rank 0 nRanks 24 nNodes 3" (hand reading: pid 227602 is rank
 * 0 of 24), and NCCL 2.4's one TensorFlow process driving both GPUs ("gpu1:11907:... comm .. rank 0 nranks 2" and
 * "rank 1 nranks 2" from pid 11907: several ranks, -2). */
START_TEST(test_pid_ranks)
{
    size_t len;
    char *a = np_test_read_all(DATA "nccl-srun-label-3node/input.log", &len);
    struct np_nccl *n = read_chunks(a, len, 7);
    ck_assert_int_eq(np_nccl_pid_rank(n, 227602), 0);
    ck_assert_int_eq(np_nccl_pid_rank(n, 227667), -1); /* a thread id, not a process */
    np_nccl_free(n);
    free(a);
    a = np_test_read_all(DATA "nccl-2.4-tf-init-1node/input.log", &len);
    n = read_chunks(a, len, len);
    ck_assert_int_eq(np_nccl_pid_rank(n, 11907), -2);
    np_nccl_free(n);
    free(a);
}
END_TEST

/* The reader's whole result as JSON text (the report's member, plus what it leaves out). */
static char *result_text(const struct np_nccl *n)
{
    json_t *j = np_ncclreport_json(n, 10);
    ck_assert_ptr_nonnull(j);
    char warn[1024];
    np_nccl_warnings(n, warn, sizeof warn);
    const struct np_nccl_ckpt *ck = np_nccl_ckpt(n);
    json_object_set_new(j, "t_warn", json_string(warn));
    json_object_set_new(j, "t_lines", json_integer((json_int_t)np_nccl_trace_lines(n)));
    json_object_set_new(j, "t_ranks", json_integer((json_int_t)np_nccl_ranks_seen(n)));
    json_object_set_new(j, "t_nodes", json_integer((json_int_t)np_nccl_nodes_seen(n)));
    json_object_set_new(j, "t_sat", json_integer(np_nccl_saturated(n)));
    json_object_set_new(j, "t_ckpt", json_real(ck->save_s + ck->load_s + (double)(ck->saves + ck->loads)));
    char strag[600];
    np_straggler_text(np_nccl_stragglers(n), 8, strag, sizeof strag);
    json_object_set_new(j, "t_strag", json_string(strag));
    size_t nc;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    for (size_t i = 0; i < nc; i++) { /* every field, the report's rounding aside */
        char k[64];
        snprintf(k, sizeof k, "t_%d_%s", c[i].nranks, c[i].op);
        json_t *a = json_array();
        json_array_append_new(a, json_integer((json_int_t)c[i].calls));
        json_array_append_new(a, json_integer((json_int_t)c[i].lines));
        json_array_append_new(a, json_integer((json_int_t)c[i].bytes));
        json_array_append_new(a, json_integer((json_int_t)c[i].unknown_calls));
        json_array_append_new(a, json_integer((json_int_t)c[i].min_bytes));
        json_array_append_new(a, json_integer((json_int_t)c[i].max_bytes));
        for (int b = 0; b < NP_NCCL_HIST; b++)
            json_array_append_new(a, json_integer((json_int_t)c[i].hist[b]));
        json_object_set_new(j, k, a);
    }
    char *t = json_dumps(j, JSON_SORT_KEYS);
    json_decref(j);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* fn on each golden case's log (its name, its bytes: fn's to keep or free); the number of cases. */
static int each_case(void (*fn)(const char *name, char *buf, size_t len, void *ctx), void *ctx)
{
    DIR *d = opendir(DATA);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    int cases = 0;
    while ((de = readdir(d))) {
        char p[512];
        snprintf(p, sizeof p, DATA "%s/input.log", de->d_name);
        if (de->d_name[0] == '.' || access(p, R_OK) != 0)
            continue;
        size_t len;
        char *buf = np_test_read_all(p, &len);
        fn(de->d_name, buf, len, ctx);
        cases++;
    }
    closedir(d);
    return cases;
}

/* buf read on the reader's own threads (np_nccl_async) in chunks of chunk bytes; lent: each chunk put where
 * np_nccl_lend says (as the scanner reads a large log, nemoperf-parse --nccl), at most the room it lends. */
static struct np_nccl *read_async_lent(const char *buf, size_t len, size_t chunk, int lent, int threads)
{
    struct np_nccl *n = np_nccl_new();
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(np_nccl_async(n, threads), NP_OK);
    for (size_t off = 0, take; off < len; off += take) {
        size_t room = 0;
        char *to = lent ? np_nccl_lend(n, &room) : NULL;
        take = off + chunk > len ? len - off : chunk;
        if (lent) {
            ck_assert_ptr_nonnull(to);
            ck_assert_uint_gt(room, 0);
            if (take > room)
                take = room;
            memcpy(to, buf + off, take);
        }
        ck_assert_int_eq(np_nccl_feed(n, lent ? to : buf + off, take), NP_OK);
    }
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    return n;
}

static struct np_nccl *read_async(const char *buf, size_t len, size_t chunk)
{
    return read_async_lent(buf, len, chunk, 0, 0);
}

/* Inline, on threads, and on threads reading into lent memory: the same result. */
static void same_async(const char *what, const char *buf, size_t len, size_t chunk)
{
    struct np_nccl *a = read_chunks(buf, len, len ? len : 1);
    char *ta = result_text(a);
    int avx2 = np_nccl_avx2(-1) == 1;
    for (int run = 0; run < 4 + avx2; run++) { /* one and two reader threads beside the feeder; SSE2 framing */
        int lent = run & 1, threads = 1 + (run / 2) % 2;
        np_nccl_avx2(run < 4);
        struct np_nccl *b = read_async_lent(buf, len, chunk, lent, threads);
        char *tb = result_text(b);
        ck_assert_msg(strcmp(ta, tb) == 0, "%s (chunk %zu%s, %d threads%s): inline %s\nthread %s", what, chunk,
                      lent ? ", lent" : "", threads, run < 4 && avx2 ? ", AVX2" : "", ta, tb);
        free(tb);
        np_nccl_free(b);
    }
    np_nccl_avx2(1);
    free(ta);
    np_nccl_free(a);
}

/* np_nccl_async (a large log in nemoperf-parse --nccl): the same result as inline, byte for byte, on every
 * golden case and on a log of many slots; a reader freed while its thread runs ends it. */
static void async_case(const char *name, char *buf, size_t len, void *ctx)
{
    (void)ctx;
    same_async(name, buf, len, 4093);
    same_async(name, buf, len, 5);
    free(buf);
}

START_TEST(test_async_same)
{
    ck_assert_int_ge(each_case(async_case, NULL), 10);
    /* 9 MB: nine slots of the ring, generations swapped on the way, lines across slot ends */
    size_t cap = 10u << 20, len = 0;
    char *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    for (unsigned op = 0; len + 512 < cap - (1u << 20); op++)
        for (int r = 0; r < 8; r++)
            len += (size_t)snprintf(big + len, cap - len,
                                    "node%d:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x7f recvbuff 0x7f count %u "
                                    "datatype %d op 0 root 0 comm 0x%x [nranks=%d] stream 0x1\n",
                                    r / 4, 100 + r, 200 + r, r % 4, op % 3 ? "AllReduce" : "Send", op,
                                    1000 + op % 4096, op % 10, 0x5000 + r, op % 3 ? 8 : 2);
    same_async("generated", big, len, 3u << 20);
    same_async("generated", big, len, 65537);
    struct np_nccl *n = np_nccl_new();
    ck_assert_int_eq(np_nccl_async(n, 2), NP_OK);
    ck_assert_int_eq(np_nccl_feed(n, big, len), NP_OK);
    np_nccl_free(n); /* no finish: the thread is told to stop and joined */
    free(big);
}
END_TEST

/* The lines of every golden case, in a pool (each with its newline). */
struct pool {
    char **line;
    size_t n;
};

static void pool_case(const char *name, char *buf, size_t len, void *ctx)
{
    struct pool *pl = ctx;
    (void)name;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t l = nl ? (size_t)(nl - (buf + at)) + 1 : len - at;
        pl->line = realloc(pl->line, (pl->n + 1) * sizeof *pl->line);
        ck_assert_ptr_nonnull(pl->line);
        char *c = malloc(l + 2);
        ck_assert_ptr_nonnull(c);
        memcpy(c, buf + at, l);
        c[l] = '\n'; /* a last line without one gets it */
        c[l + (nl == NULL)] = '\0';
        pl->line[pl->n++] = c;
        at += l;
    }
    free(buf);
}

static char **golden_pool(size_t *count)
{
    struct pool pl = {NULL, 0};
    each_case(pool_case, &pl);
    *count = pl.n;
    return pl.line;
}

/* The threads cut the log into slots at line ends: a log built to hit every way of it reads the same as inline
 * (whole), fed in chunks of several sizes.  Stand-in: a generated log (no real log holds all of these at once):
 * the golden cases' lines shuffled (init, version, checkpoint and straggler lines between collective lines of
 * many ranks), 100 collective names (more than the reader's table: "other"), lines of 9 KB (cut at 8 KiB) and of
 * 3 MB (longer than a slot) with and without a collective at their start, and a last line without a newline. */
START_TEST(test_async_mixed)
{
    size_t npool;
    char **pool = golden_pool(&npool);
    ck_assert_uint_gt(npool, 50);
    size_t cap = 12u << 20, len = 0;
    char *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    uint64_t rnd = 0x9E3779B97F4A7C15ULL;
    for (unsigned i = 0; len + (4u << 20) < cap; i++) {
        rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned pick = (unsigned)(rnd >> 33);
        if (i % 97 == 0) { /* a collective of 4 ranks under one of 100 names */
            for (int r = 0; r < 4; r++)
                len += (size_t)snprintf(big + len, cap - len,
                                        "h%d:%d:%d [%d] NCCL INFO Coll%u: opCount %x sendbuff 0x1 recvbuff 0x2 count %u "
                                        "datatype 7 op 0 root 0 comm 0x9 [nranks=4] stream 0x1\n",
                                        r / 2, 10 + r, 20 + r, r, pick % 100, i, 1000 + pick % 7);
        } else if (i % 1999 == 0 || i % 2003 == 0) { /* 9 KB, a collective at its start when i % 1999 == 0 */
            len += (size_t)snprintf(big + len, cap - len,
                                    "%s [0] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x2 count 64 "
                                    "datatype 7 op 0 root 0 comm 0x9 [nranks=1] stream 0x1 ",
                                    i % 1999 ? "x:1:1 [0] noise" : "h:1:1", i);
            memset(big + len, i % 2 ? 'x' : ' ', 9000);
            len += 9000;
            big[len++] = '\n';
        } else if (i % 151 == 0) { /* straggler reports and checkpoint lines, whole */
            const char *f = i % 302 ? "tests/data/straggler/megatron-readme/input.log"
                                     : "tests/data/straggler/nemo-callback/input.log";
            size_t l;
            char *b = np_test_read_all(f, &l);
            memcpy(big + len, b, l);
            len += l;
            free(b);
            len += (size_t)snprintf(big + len, cap - len, "[NeMo I 2025-04-11 14:48:45 nemo_logging:393] Global "
                                    "Checkpoint Save : Rank: 0 : Iteration: 50 : Start time: 1.1s : Save duration: "
                                    "%u.5s\n", i % 10);
        } else if (i == 5000 || i == 20011) { /* 3 MB, longer than a slot */
            len += (size_t)snprintf(big + len, cap - len, "h:1:1 [0] NCCL INFO Using network IB ");
            memset(big + len, 'y', 3u << 20);
            len += 3u << 20;
            big[len++] = '\n';
        } else {
            size_t l = strlen(pool[pick % npool]);
            memcpy(big + len, pool[pick % npool], l);
            len += l;
        }
    }
    len += (size_t)snprintf(big + len, cap - len, "h:1:1 [0] NCCL INFO AllGather: opCount 1 sendbuff 0x1 recvbuff "
                                                  "0x2 count 9 datatype 7 op 0 root 0 comm 0x9 [nranks=1]");
    size_t chunks[] = {(1u << 20) + 3, 65537, 4093, 1u << 22};
    for (size_t c = 0; c < sizeof chunks / sizeof *chunks; c++)
        same_async("mixed", big, len, chunks[c]);
    /* the reader's table of names: the log's first 63 names, every later one under "other" (counted, not lost) */
    struct np_nccl *n = read_chunks(big, len, len);
    ck_assert_ptr_nonnull(find_coll(n, 4, "other"));
    size_t nc, named = 0;
    const struct np_nccl_coll *c = np_nccl_colls(n, &nc);
    for (size_t i = 0; i < nc; i++) {
        int first = strcmp(c[i].op, "other") != 0;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(c[j].op, c[i].op) != 0;
        named += first;
    }
    ck_assert_uint_eq(named, 63);
    np_nccl_free(n);
    for (size_t i = 0; i < npool; i++)
        free(pool[i]);
    free(pool);
    free(big);
}
END_TEST

/* A straggler report (NeMo's callback: its sections read as one when their lines follow each other) across the
 * threads' slot end (1 MiB, white box): the same report as inline, for starts a byte to a whole report before
 * the end. */
START_TEST(test_async_slot_ends)
{
    size_t rl;
    char *rep = np_test_read_all("tests/data/straggler/nemo-callback/input.log", &rl);
    size_t cap = 3u << 20;
    char *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    const size_t shifts[] = {1, 50, 200, 400, 585};
    for (size_t k = 0; k < sizeof shifts / sizeof *shifts; k++) {
        size_t len = 0, at = (1u << 20) - shifts[k];
        for (unsigned op = 0; len + 300 < at; op++)
            len += (size_t)snprintf(big + len, cap - len,
                                    "h:1:1 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x2 count 8 "
                                    "datatype 7 op 0 root 0 comm 0x9 [nranks=1] stream 0x1\n", op);
        memset(big + len, 'f', at - len - 1); /* a filler line up to the report */
        big[at - 1] = '\n';
        len = at;
        memcpy(big + len, rep, rl);
        len += rl;
        for (unsigned op = 0; len + 300 < (2u << 20); op++)
            len += (size_t)snprintf(big + len, cap - len, "h:1:1 [0] NCCL INFO Send: opCount %x sendbuff 0x1 recvbuff "
                                    "0x2 count 8 datatype 7 op 0 root 0 comm 0x9 [nranks=2] stream 0x1\n", op);
        same_async("report at a slot end", big, len, 65536);
        struct np_nccl *n = read_async(big, len, 65536);
        ck_assert_uint_eq(np_nccl_stragglers(n)->nv_reports, 1);
        np_nccl_free(n);
    }
    free(big);
    free(rep);
}
END_TEST

static enum np_status defer_sink(void *ctx, const char *bytes, size_t n)
{
    return bytes ? np_nccl_feed(ctx, bytes, n) : np_nccl_finish(ctx);
}

static char *defer_lend(void *ctx, size_t *room)
{
    return np_nccl_lend(ctx, room);
}

static enum np_status defer_offer(void *ctx, void (*scan)(void *, const char *, size_t, uint64_t), void *scan_ctx)
{
    return np_nccl_defer_scan(ctx, scan, scan_ctx);
}

/* path scanned as nemoperf-parse --nccl reads a large log: the NCCL reader on threads doing the step scanner's
 * search too (np_nccl_defer_scan); run 0: one reader thread beside the feeder, 1: two, 2: one with the SSE2
 * framing.  The reader, finished; the steps in *b. */
static struct np_nccl *defer_scan(const char *path, int run, size_t chunk, struct np_scan_result *b)
{
    np_nccl_avx2(run < 2);
    struct np_nccl *n = np_nccl_new();
    ck_assert_ptr_nonnull(n);
    ck_assert_int_eq(np_nccl_async(n, run == 1 ? 2 : 1), NP_OK);
    struct np_scan_opts o = {.all_steps = 1, .read_chunk = chunk, .sink = defer_sink, .sink_buf = defer_lend,
                             .sink_defer = defer_offer, .sink_ctx = n};
    struct np_error e = {0};
    ck_assert_msg(np_scan_file(path, &o, b, &e) == NP_OK, "%s", e.text);
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    np_nccl_avx2(1); /* the framing is chosen when a slot is read: back to the CPU's for the next reader */
    return n;
}

static int has_iteration(const struct np_scan_result *r, int it)
{
    for (size_t i = 0; i < r->nsteps; i++)
        if (r->steps[i].iteration == it)
            return 1;
    return 0;
}

/* nemoperf-parse --nccl on a large log: the step scanner's search runs on the reader threads (np_nccl_defer_scan,
 * np_scan_opts.sink_defer) and finds the steps the scanner finds alone, the NCCL result the inline reader's.
 * Stand-in: a generated 20 MB log (no real log holds all of these): NeMo step lines between collective lines,
 * step lines after 9,000 and 1,000,000 bytes of one line (past what a slot keeps of a line: the rest reaches the
 * scanner from the feeder), CRLF step lines, a 1.2 MB line holding a step (longer than a step line can be), an
 * unterminated last step line, and collective lines holding a step and a checkpoint message (the lines the reader
 * leaves out of the scanner's share are those without a mark of the scanner's, np_scan_marked). */
START_TEST(test_deferred_scan)
{
    char path[] = "/tmp/np-check-defer.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
#define STEP_LINE                                                                                               \
    "Training epoch 0, iteration %d/9999 | lr: 1e-05 | global_batch_size: 128 | global_step: %d | "               \
    "reduced_train_loss: 11.5 | train_step_timing in s: %d.%03d | consumed_samples: %d"
    long size = 0;
    int it = 0, long_it = -1, big_it = -1, coll_it = -1;
    for (int blk = 0; size < (20L << 20); blk++) {
        for (int k = 0; k < 120; k++)
            fprintf(f, "node%d:%d:%d [%d] NCCL INFO AllReduce: opCount %x sendbuff 0x7f00 recvbuff 0x7f01 count %d "
                       "datatype 7 op 0 root 0 comm 0x55%02x [nranks=8] stream 0x9\n",
                    k / 8, 100 + k % 8, 200 + k % 8, k % 8, blk, 1024 + blk % 7, k % 8);
        if (blk % 40 == 7) { /* the step past 9,000 bytes of its line */
            for (int x = 0; x < 9000; x++)
                fputc('x', f);
            fputc(' ', f);
            long_it = it;
        }
        if (blk == 300) { /* a step line of 1,000,000 bytes (one can be 1 MiB long), its fields 330 KB apart */
            fprintf(f, "Training epoch 0, iteration %d/9999 | lr: 1e-05 |", it);
            const char *field[] = {" global_batch_size: 256 |", " reduced_train_loss: 9.25 |"};
            for (int k = 0; k < 2; k++) {
                for (int x = 0; x < 330000; x++)
                    fputc(' ', f);
                fputs(field[k], f);
            }
            for (int x = 0; x < 330000; x++)
                fputc(' ', f);
            fprintf(f, " global_step: %d | train_step_timing in s: 13.5 | consumed_samples: %d\n", it, (it + 1) * 128);
            big_it = it++;
        }
        if (blk % 50 == 11) { /* a collective line that is a step line too (the reader leaves out of the scanner's
                                 share only the lines without a mark of the scanner's: this one has some) */
            fprintf(f, "node0:100:200 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x7f00 recvbuff 0x7f01 count 8 "
                       "datatype 7 op 0 root 0 comm 0x5500 [nranks=8] stream 0x9 " STEP_LINE "\n",
                    blk + 100000, it, it, 12, 500, (it + 1) * 128);
            coll_it = it++;
        }
        if (blk == 200) /* a checkpoint message on a collective line */
            fprintf(f, "node0:100:200 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x7f00 recvbuff 0x7f01 count 8 "
                       "datatype 7 op 0 root 0 comm 0x5500 [nranks=8] stream 0x9 Global Checkpoint Save : Rank : 0 "
                       ": Start time : 1.0s : Time spent in save_checkpoint: 2.5s\n", blk + 200000);
        if (blk == 500) /* a 1.2 MB line with a step: never a step line (SCAN_LINE_MAX) */
            for (int x = 0; x < (12 << 17); x++)
                fputc('z', f);
        fprintf(f, STEP_LINE, it, it, 12 + it % 3, it % 1000, (it + 1) * 128);
        fputs(blk % 70 == 3 ? "\r\n" : "\n", f);
        it++;
        size = ftell(f);
    }
    fprintf(f, STEP_LINE, it, it, 12, 0, (it + 1) * 128); /* no newline: not a step */
    ck_assert_int_eq(fclose(f), 0);

    struct np_scan_opts plain = {.all_steps = 1, .read_chunk = 1u << 20};
    struct np_scan_result a, b;
    struct np_error e = {0};
    ck_assert_int_eq(np_scan_file(path, &plain, &a, &e), NP_OK);
    ck_assert_int_ge(long_it, 0);
    ck_assert_msg(has_iteration(&a, long_it) && has_iteration(&a, big_it), "the long lines' steps are steps");
    ck_assert_msg(coll_it >= 0 && has_iteration(&a, coll_it), "the collective line's step is a step");
    ck_assert_int_eq(a.saw_checkpoint_save, 1);
    for (size_t i = 0; i < a.nsteps; i++) /* the 1 MB line read whole: its fields from all over it */
        if (a.steps[i].iteration == big_it)
            ck_assert(a.steps[i].global_batch_size == 256 && a.steps[i].loss == 9.25 && a.steps[i].step_time_s == 13.5);
    for (int run = 0; run < 3; run++) {
        struct np_nccl *n = defer_scan(path, run, 1u << 20, &b);
        ck_assert_uint_eq(a.nsteps, b.nsteps);
        ck_assert_uint_eq(a.runs, b.runs);
        ck_assert_uint_eq(a.bytes_read, b.bytes_read);
        ck_assert_int_eq(b.saw_checkpoint_save, 1);
        for (size_t i = 0; i < a.nsteps; i++) {
            ck_assert_int_eq(a.steps[i].iteration, b.steps[i].iteration);
            ck_assert_uint_eq(a.steps[i].offset, b.steps[i].offset);
            ck_assert(a.steps[i].step_time_s == b.steps[i].step_time_s);
            ck_assert(a.steps[i].loss == b.steps[i].loss);
            ck_assert_int_eq(a.steps[i].global_batch_size, b.steps[i].global_batch_size);
            ck_assert(a.steps[i].consumed_samples == b.steps[i].consumed_samples);
        }
        size_t len;
        char *buf = np_test_read_all(path, &len);
        struct np_nccl *in = read_chunks(buf, len, len);
        char *ta = result_text(in), *tb = result_text(n);
        ck_assert_str_eq(ta, tb);
        free(ta);
        free(tb);
        free(buf);
        np_nccl_free(in);
        np_nccl_free(n);
        np_scan_result_free(&b);
    }
    np_scan_result_free(&a);
    unlink(path);
}
END_TEST

/* A needle of the step scanner's at every place of a line's last 32 bytes (the framing's last step) and
 * further up: the reader hands the line to the scanner each time (one log a place: the checkpoint message is
 * seen or not), with both framings and one and two threads.  Stand-in: generated collective lines ending in
 * NeMo's checkpoint message (no real log puts one there). */
START_TEST(test_deferred_marks_at_end)
{
    char path[] = "/tmp/np-check-marks.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    for (int pad = 0; pad < 40; pad++) {
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        for (int k = 0; k < 200; k++) /* lines without a mark around it */
            fprintf(f, "node0:1:2 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x7f recvbuff 0x7f count 8 datatype 7 "
                       "op 0 root 0 comm 0x1 [nranks=8] stream 0x9\n", k);
        fprintf(f, "node0:1:2 [0] NCCL INFO AllReduce: opCount 999 sendbuff 0x7f recvbuff 0x7f count 8 datatype 7 op 0 "
                   "root 0 comm 0x%0*d [nranks=8] stream 0x9 Global Checkpoint Save\n", pad + 1, 7);
        for (int k = 0; k < 200; k++)
            fprintf(f, "node1:1:2 [1] NCCL INFO AllReduce: opCount %x sendbuff 0x7f recvbuff 0x7f count 8 datatype 7 "
                       "op 0 root 0 comm 0x2 [nranks=8] stream 0x9\n", k);
        ck_assert_int_eq(fclose(f), 0);
        struct np_scan_opts plain = {.all_steps = 1};
        struct np_scan_result a, b;
        ck_assert_int_eq(np_scan_file(path, &plain, &a, NULL), NP_OK);
        ck_assert_int_eq(a.saw_checkpoint_save, 1);
        for (int run = 0; run < 3; run++) {
            struct np_nccl *n = defer_scan(path, run, 0, &b);
            ck_assert_msg(b.saw_checkpoint_save == 1, "pad %d, run %d: the message not seen", pad, run);
            ck_assert_uint_eq(np_nccl_trace_lines(n), 401);
            np_nccl_free(n);
            np_scan_result_free(&b);
        }
        np_scan_result_free(&a);
    }
    unlink(path);
}
END_TEST

/* Collective lines off NCCL's usual layout take the key-value loop, and a usual head followed by more
 * words reads those words too: hand-counted. */
/* An init line whose value is empty or only blanks ("Using network " at the line's end, a version of spaces)
 * says nothing: an empty field, never the bytes after it. */
/* The network facts of several ranks' init lines: the largest communicator's node count (a one-node
 * sub-communicator logged after it does not hide a multi-node run), GPU Direct RDMA off on one rank stays off
 * when another says Enabled, and sockets warned about only between nodes (one node: NVLink/shared memory). */
START_TEST(test_net_facts_across_ranks)
{
    const char *two = "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
                      "a:1:1 [0] NCCL INFO Using network Socket\n"
                      "a:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
                      "b:2:2 [0] NCCL INFO GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n"
                      "a:1:1 [0] NCCL INFO comm 0x2 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n";
    struct np_nccl *n = read_chunks(two, strlen(two), strlen(two));
    ck_assert_int_eq(np_nccl_nodes(n), 2);
    ck_assert_int_eq(np_nccl_net(n)->gdr, NP_NCCL_NO);
    char buf[2048];
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 2);
    ck_assert_ptr_nonnull(strstr(buf, "TCP sockets between 2 nodes"));
    ck_assert_ptr_nonnull(strstr(buf, "GPU Direct RDMA disabled"));
    np_nccl_free(n);
    /* no "Using network" line (cut from the log): channels via NET/Socket between two nodes still say it */
    const char *ch = "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
                     "a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n";
    n = read_chunks(ch, strlen(ch), strlen(ch));
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 1);
    ck_assert_ptr_nonnull(strstr(buf, "TCP sockets between 2 nodes"));
    np_nccl_free(n);
    const char *one = "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n"
                      "a:1:1 [0] NCCL INFO Using network Socket\n";
    n = read_chunks(one, strlen(one), strlen(one));
    ck_assert_int_eq(np_nccl_nodes(n), 1);
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 0);
    np_nccl_free(n);
}
END_TEST

START_TEST(test_init_values_blank)
{
    const char *l = "h:1:1 [0] NCCL INFO Using network \n"
                    "h:1:1 [0] NCCL INFO NCCL version  \t\r\n"
                    "h:1:1 [0] NCCL INFO NET/IB : Using ;\n"
                    "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n";
    for (size_t chunk = 1; chunk <= strlen(l); chunk += chunk < 8 ? 1 : 37) {
        struct np_nccl *n = read_chunks(l, strlen(l), chunk);
        const struct np_nccl_net *net = np_nccl_net(n);
        ck_assert_msg(net->network[0] == '\0', "chunk %zu: network \"%s\"", chunk, net->network);
        ck_assert_msg(net->version[0] == '\0', "chunk %zu: version \"%s\"", chunk, net->version);
        ck_assert_msg(net->ib[0] == '\0', "chunk %zu: ib \"%s\"", chunk, net->ib);
        np_nccl_free(n);
    }
}
END_TEST

START_TEST(test_layout_variants)
{
    const char *l =
        "h:1:1 [0] NCCL INFO A1: opCount 1 sendbuff 0x1 recvbuff 0x1 count 12abc datatype 7 op 0 root 0 comm 0x9 "
        "[nranks=1] stream 0x1\n" /* count 12: 48 bytes */
        "h:1:1 [0] NCCL INFO A2: opCount 1 sendbuff 0x1 recvbuff 0x1 count  1024 datatype 7 op 0 root 0 comm 0x9 "
        "[nranks=1] stream 0x1\n" /* two spaces: 4096 */
        "h:1:1 [0] NCCL INFO A3: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0x9 "
        "[nranks=1]x stream 0x1\n" /* 32 */
        "h:1:1 [0] NCCL INFO A4: opCount 1 datatype 8 count 3 sendbuff 0x1 [nranks=1]\n" /* reordered: 24 */
        "h:1:1 [0] NCCL INFO A5: opCount 1 sendbuff 0x1 recvbuff 0x1 count 5 datatype 7 op 0 root 0 comm 0x9 "
        "[nranks=1] stream 0x1 count 7\n" /* the last count: 28 */
        "h:1:1 [0] NCCL INFO A6: opCount 1 sendbuff 0x1 recvbuff 0x1 count 5 datatype 65535 op 0 root 0 comm 0x9 "
        "[nranks=1] stream 0x1 datatype 2\n" /* 65535 is no datatype: the later one, 20 */
        "h:1:1 [0] NCCL INFO A7: opCount 1 sendbuff 0x1 recvbuff 0x1 count 6 datatype 0 op 0 root 0 comm 0x9 "
        "[nranks=1] stream 0x1 task 0 globalrank 3\n"; /* 6, global rank 3 */
    static const struct { const char *op; uint64_t bytes; } want[] = {
        {"A1", 48}, {"A2", 4096}, {"A3", 32}, {"A4", 24}, {"A5", 28}, {"A6", 20}, {"A7", 6},
    };
    for (size_t chunk = 1; chunk <= strlen(l); chunk += chunk < 16 ? 1 : 61) {
        struct np_nccl *n = read_chunks(l, strlen(l), chunk);
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            const struct np_nccl_coll *c = find_coll(n, 1, want[i].op);
            ck_assert_msg(c != NULL, "%s missing (chunk %zu)", want[i].op, chunk);
            ck_assert_msg(c->calls == 1 && c->bytes == want[i].bytes, "%s (chunk %zu): %llu calls, %llu bytes",
                          want[i].op, chunk, (unsigned long long)c->calls, (unsigned long long)c->bytes);
        }
        ck_assert_str_eq(np_nccl_global_ranks(n), "3");
        np_nccl_free(n);
    }
}
END_TEST

/* Collective names read as the previous line's when its bytes and a ':' follow (nccl_trace_read's table): names
 * that begin with the previous one (Reduce, ReduceScatter), a name of 23 bytes then ones of 24 and 25 that begin
 * with it (a name of 24 is kept as its first 23 bytes, one of 25 makes no collective line), NCCL 2.3's nameless
 * lines, and more names than the table
 * holds (the later ones under "other", with a line naming "other" itself): the hand counts below, inline and on
 * threads alike. */
START_TEST(test_op_names)
{
    static const char *seq[] = {"Reduce", "ReduceScatter", "Reduce", "AllReduce", "AllReduce", "AllReduceX",
                                "ABCDEFGHIJKLMNOPQRSTUVW", "ABCDEFGHIJKLMNOPQRSTUVWX", "ABCDEFGHIJKLMNOPQRSTUVWXY",
                                "ABCDEFGHIJKLMNOPQRSTUVW", NULL};
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    unsigned opc = 0;
#define OPLINE(fmt, ...)                                                                                          \
    for (int r = 0; r < 2; r++)                                                                                   \
        len += (size_t)snprintf(buf + len, cap - len,                                                             \
                                "node0:%d:%d [%d] NCCL INFO " fmt "opCount %x sendbuff 0x7f recvbuff 0x7f count 4 " \
                                "datatype 7 op 0 root 0 comm 0x1 [nranks=2] stream 0x1\n",                        \
                                100 + r, 200 + r, r, __VA_ARGS__, opc);                                           \
    opc++
    for (size_t i = 0; seq[i]; i++) {
        OPLINE("%s: ", seq[i]);
    }
    OPLINE("%s", ""); /* NCCL 2.3: "NCCL INFO opCount 9 ...": "unknown" */
    for (int i = 0; i < 70; i++) {
        OPLINE("Op%02d: ", i);
    }
    OPLINE("%s: ", "Reduce");
    OPLINE("%s: ", "other");
#undef OPLINE
    struct np_nccl *n = read_chunks(buf, len, len);
    static const struct { const char *op; uint64_t calls; } want[] = {
        {"Reduce", 3}, {"ReduceScatter", 1}, {"AllReduce", 2}, {"AllReduceX", 1}, {"ABCDEFGHIJKLMNOPQRSTUVW", 3},
        {"unknown", 1}, {"Op56", 1}, {"other", 14}, {"ABCDEFGHIJKLMNOPQRSTUVWX", 0}, {"Op57", 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct np_nccl_coll *c = find_coll(n, 2, want[i].op);
        ck_assert_msg(want[i].calls ? c && c->calls == want[i].calls && c->bytes == 16 * want[i].calls : !c,
                      "%s: %llu calls, %llu bytes, want %llu calls", want[i].op, c ? (unsigned long long)c->calls : 0,
                      c ? (unsigned long long)c->bytes : 0, (unsigned long long)want[i].calls);
    }
    np_nccl_free(n);
    same_async("op names", buf, len, 4093);
    same_async("op names", buf, len, 97);
    free(buf);
}
END_TEST

/* The ranks and nodes sets behind the cache of prefixes already read: 3,000 ranks on 375 nodes, in rounds
 * (more ranks than the cache holds, so its slots are taken over), and prefixes longer than it keeps. */
START_TEST(test_many_ranks)
{
    struct np_nccl *n = np_nccl_new();
    char line[512];
    for (int round = 0; round < 3; round++)
        for (int r = 0; r < 3000; r++) {
            int len = snprintf(line, sizeof line,
                               "%snode%03d:%d:%d [%d] NCCL INFO AllReduce: opCount %x sendbuff 0x7f recvbuff 0x7f "
                               "count 4 datatype 7 op 0 root 0 comm 0x1 [nranks=3000] stream 0x1\n",
                               r % 7 ? "" : "a-long-srun-or-ray-label-longer-than-the-cache-keeps: ", r / 8,
                               10000 + r, 20000 + r, r % 8, round);
            ck_assert_int_eq(np_nccl_feed(n, line, (size_t)len), NP_OK);
        }
    ck_assert_int_eq(np_nccl_finish(n), NP_OK);
    ck_assert_uint_eq(np_nccl_ranks_seen(n), 3000);
    ck_assert_uint_eq(np_nccl_nodes_seen(n), 375);
    const struct np_nccl_coll *c = find_coll(n, 3000, "AllReduce");
    ck_assert_uint_eq(c->calls, 3);
    ck_assert_uint_eq(c->bytes, 3 * 16);
    np_nccl_free(n);
}
END_TEST

/* The rank and host sets start small and double (a thread's set merged reads its own slots only): 70,000
 * ranks on 8,750 nodes fill them past every size to the cap, 65,536 values, and the ranks saturate there (the
 * report says "at least"); inline and on threads, the same. */
START_TEST(test_sets_grow)
{
    size_t cap = (size_t)2 * 70000 * 160, len = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int round = 0; round < 2; round++) /* every rank twice: one lost when a set grows would count again */
        for (int r = 0; r < 70000; r++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "node%05d:%d:%d [%d] NCCL INFO AllReduce: opCount %d sendbuff 0x7f recvbuff "
                                    "0x7f count 4 datatype 7 op 0 root 0 comm 0x1 [nranks=70000] stream 0x1\n",
                                    r / 8, 100000 + r, 200000 + r, r % 8, round);
    struct np_nccl *n = read_chunks(buf, len, len);
    ck_assert_uint_eq(np_nccl_ranks_seen(n), 65536);
    ck_assert_int_eq(np_nccl_saturated(n), 1);
    ck_assert_uint_eq(np_nccl_nodes_seen(n), 8750);
    ck_assert_uint_eq(np_nccl_trace_lines(n), 140000);
    np_nccl_free(n);
    same_async("70,000 ranks", buf, len, 1 << 16);
    /* fewer than the cap: every one counted, not saturated */
    size_t half = 0;
    for (int i = 0; i < 30000; i++)
        half += (size_t)(strchr(buf + half, '\n') - (buf + half)) + 1;
    n = read_chunks(buf, half, half);
    ck_assert_uint_eq(np_nccl_ranks_seen(n), 30000);
    ck_assert_int_eq(np_nccl_saturated(n), 0);
    ck_assert_uint_eq(np_nccl_nodes_seen(n), 3750);
    np_nccl_free(n);
    same_async("30,000 ranks", buf, half, 1 << 16);
    free(buf);
}
END_TEST

/* The net plugin and GPU Direct RDMA lines, each as NCCL 2.1x prints it: a plugin that failed to load (not a
 * missing libnccl-net.so, which is NCCL's internal transport: "none"), the plugin's name from each of its lines
 * ("Loaded net plugin", "Plugin Path", "P2P plugin" only when no other named one), RCCL's version line, GDR from
 * its line or a GDRDMA channel (never over a "Disabled"), and the warnings with their exact words. */
static struct np_nccl *net_of(const char *lines)
{
    return read_chunks(lines, strlen(lines), strlen(lines));
}

START_TEST(test_net_plugin_and_gdr_lines)
{
    struct np_nccl *n;
    char buf[2048];
    /* a plugin found and failing: said, with the line */
    n = net_of("h:1:1 [0] NCCL INFO NET/Plugin: Plugin load (libnccl-net.so) returned 11 : undefined symbol: ncclNetPlugin_v8\n");
    ck_assert_int_eq(np_nccl_net(n)->plugin_failed, 1);
    ck_assert_str_eq(np_nccl_net(n)->plugin_error,
                     "NET/Plugin: Plugin load (libnccl-net.so) returned 11 : undefined symbol: ncclNetPlugin_v8");
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "NCCL net plugin failed to load: NET/Plugin: Plugin load (libnccl-net.so) returned 11 : "
                          "undefined symbol: ncclNetPlugin_v8");
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.\n");
    ck_assert_int_eq(np_nccl_net(n)->plugin_failed, 1);
    np_nccl_free(n);
    /* no libnccl-net.so: not a failure; "No plugin found": the internal transport */
    n = net_of("h:1:1 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object "
               "file: No such file or directory\n"
               "h:1:1 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so), using internal implementation\n");
    ck_assert_int_eq(np_nccl_net(n)->plugin_failed, 0);
    ck_assert_str_eq(np_nccl_net(n)->plugin, "none");
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    np_nccl_free(n);
    /* the plugin's name: from "NET/Plugin: Loaded net plugin", "Plugin Path", "Loaded net plugin" */
    n = net_of("h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin AWS Libfabric (v6)\n");
    ck_assert_str_eq(np_nccl_net(n)->plugin, "AWS Libfabric (v6)");
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO Plugin Path : /opt/amazon/ofi-nccl/lib/libnccl-net.so\n");
    ck_assert_str_eq(np_nccl_net(n)->plugin, "/opt/amazon/ofi-nccl/lib/libnccl-net.so");
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO Loaded net plugin NCCL RDMA Plugin v7 (v7)\n");
    ck_assert_str_eq(np_nccl_net(n)->plugin, "NCCL RDMA Plugin v7 (v7)");
    np_nccl_free(n);
    /* "P2P plugin": the name when none or only the internal one was said, never over a named plugin */
    n = net_of("h:1:1 [0] NCCL INFO P2P plugin IBext_v8\n");
    ck_assert_str_eq(np_nccl_net(n)->plugin, "IBext_v8");
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so\n"
               "h:1:1 [0] NCCL INFO P2P plugin IBext_v8\n");
    ck_assert_str_eq(np_nccl_net(n)->plugin, "IBext_v8");
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO Loaded net plugin Libfabric\n"
               "h:1:1 [0] NCCL INFO P2P plugin IBext_v8\n"
               "h:1:1 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\n");
    ck_assert_str_eq(np_nccl_net(n)->plugin, "Libfabric");
    np_nccl_free(n);
    /* RCCL's version line */
    n = net_of("h:1:1 [0] NCCL INFO RCCL version 2.18.3+hip6.0 HEAD:2e3de4d\n");
    ck_assert_int_eq(np_nccl_net(n)->rccl, 1);
    ck_assert_str_eq(np_nccl_net(n)->version, "2.18.3+hip6.0 HEAD:2e3de4d");
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n");
    ck_assert_int_eq(np_nccl_net(n)->rccl, 0);
    ck_assert_str_eq(np_nccl_net(n)->version, "2.21.5+cuda12.4");
    np_nccl_free(n);
    /* GDR: unknown without a line; Enabled; a GDRDMA channel; a channel over NET/IB without it says nothing */
    n = net_of("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n");
    ck_assert_int_eq(np_nccl_net(n)->gdr, NP_NCCL_UNKNOWN);
    ck_assert_int_eq(np_nccl_net(n)->socket_channels, 0);
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\n");
    ck_assert_int_eq(np_nccl_net(n)->gdr, NP_NCCL_YES);
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n");
    ck_assert_int_eq(np_nccl_net(n)->gdr, NP_NCCL_YES);
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
               "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n");
    ck_assert_int_eq(np_nccl_net(n)->gdr, NP_NCCL_NO);
    np_nccl_free(n);
    /* the GDR warning: "on the IB devices" when IB devices are in use, not when NET/IB found none */
    n = net_of("h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>\n"
               "h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n");
    ck_assert_str_eq(np_nccl_net(n)->ib, "[0]mlx5_0:1/IB [1]mlx5_1:1/IB");
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "NCCL: GPU Direct RDMA disabled on the IB devices (nvidia-peermem / dma-buf?): inter-node "
                          "traffic goes through host memory");
    np_nccl_free(n);
    /* sockets between nodes with NET/IB finding no device: said; every warning at once, in order */
    n = net_of("h:1:1 [0] NCCL INFO NET/IB : No device found.\n"
               "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
               "h:1:1 [0] NCCL INFO Using network Socket\n"
               "h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
               "h:1:1 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin symbol\n");
    ck_assert_str_eq(np_nccl_net(n)->ib, "none");
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 3);
    ck_assert_str_eq(buf, "NCCL uses TCP sockets between 2 nodes (\"Using network Socket\", NET/IB: no device found): "
                          "collectives are many times slower than over IB/RoCE (check the net plugin, NCCL_IB_HCA, "
                          "NCCL_NET); NCCL: GPU Direct RDMA disabled (nvidia-peermem / dma-buf?): inter-node traffic "
                          "goes through host memory; NCCL net plugin failed to load: NET/Plugin: Failed to find "
                          "ncclNetPlugin symbol");
    /* a buffer too small for every warning: never written past, ended within it */
    struct {
        char buf[200];
        char canary[1024];
    } sm;
    memset(sm.canary, 'x', sizeof sm.canary);
    ck_assert_uint_eq(np_nccl_warnings(n, sm.buf, sizeof sm.buf), 3);
    ck_assert_uint_lt(strlen(sm.buf), sizeof sm.buf);
    for (size_t i = 0; i < sizeof sm.canary; i++)
        ck_assert_int_eq(sm.canary[i], 'x');
    np_nccl_free(n);
    /* a node count of a million or more is no node count */
    n = net_of("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 999999 localRanks 8 localRank 0 MNNVL 0\n");
    ck_assert_int_eq(np_nccl_net(n)->nnodes, 999999);
    np_nccl_free(n);
    n = net_of("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 1000000 localRanks 8 localRank 0 MNNVL 0\n");
    ck_assert_int_eq(np_nccl_net(n)->nnodes, 0);
    np_nccl_free(n);
    /* two nodes over IB: no socket warning even with a socket channel set up before ("Using network IB") */
    n = net_of("h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
               "h:1:1 [0] NCCL INFO Using network IB\n"
               "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n");
    ck_assert_int_eq(np_nccl_net(n)->socket_channels, 1);
    ck_assert_uint_eq(np_nccl_warnings(n, buf, sizeof buf), 0);
    np_nccl_free(n);
}
END_TEST

/* The rank a process holds: its largest communicator's (the world's), whichever order the init lines come in; one
 * process with two ranks of the same size holds several (-2); the same line twice is one rank. */
START_TEST(test_pid_rank_of_largest_comm)
{
    const char *l = "h:100:100 [0] NCCL INFO comm 0x2 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3 MNNVL 0\n"
                    "h:100:100 [0] NCCL INFO comm 0x1 rank 5 nRanks 16 nNodes 2 localRanks 8 localRank 5 MNNVL 0\n"
                    "h:101:101 [0] NCCL INFO comm 0x1 rank 6 nRanks 16 nNodes 2 localRanks 8 localRank 6 MNNVL 0\n"
                    "h:101:101 [0] NCCL INFO comm 0x2 rank 2 nRanks 8 nNodes 1 localRanks 8 localRank 2 MNNVL 0\n"
                    "h:102:102 [0] NCCL INFO comm 0x3 rank 1 nRanks 8 nNodes 1 localRanks 8 localRank 1 MNNVL 0\n"
                    "h:102:102 [1] NCCL INFO comm 0x4 rank 2 nRanks 8 nNodes 1 localRanks 8 localRank 2 MNNVL 0\n"
                    "h:103:103 [0] NCCL INFO comm 0x5 rank 4 nRanks 8 nNodes 1 localRanks 8 localRank 4 MNNVL 0\n"
                    "h:103:103 [0] NCCL INFO comm 0x5 rank 4 nRanks 8 nNodes 1 localRanks 8 localRank 4 MNNVL 0\n";
    struct np_nccl *n = read_chunks(l, strlen(l), strlen(l));
    ck_assert_int_eq(np_nccl_pid_rank(n, 100), 5);
    ck_assert_int_eq(np_nccl_pid_rank(n, 101), 6);
    ck_assert_int_eq(np_nccl_pid_rank(n, 102), -2);
    ck_assert_int_eq(np_nccl_pid_rank(n, 103), 4);
    ck_assert_int_eq(np_nccl_pid_rank(n, 104), -1);
    ck_assert_int_eq(np_nccl_nodes(n), 2);
    ck_assert_int_eq(np_nccl_net(n)->max_nranks, 16);
    np_nccl_free(n);
}
END_TEST

/* RCCL's globalrank: the ranks seen as runs ("0-3,5,7-8"), a run up to the bitmap's last (2^20 - 1) too; a larger
 * number is no rank. */
START_TEST(test_global_rank_ranges)
{
    static const unsigned long g[] = {8, 0, 2, 1, 3, 5, 7, 1048575, 1048576, 2, 1048574};
    char l[4096];
    size_t len = 0;
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        len += (size_t)snprintf(l + len, sizeof l - len,
                                "h:%lu:%lu [0] NCCL INFO AllReduce: opCount %zx sendbuff 0x1 recvbuff 0x1 count 4 "
                                "datatype 7 op 0 root 0 comm 0x9 [nranks=8] stream 0x1 task 0 globalrank %lu\n",
                                1000 + i, 1000 + i, i + 1, g[i]);
    struct np_nccl *n = read_chunks(l, len, 61);
    ck_assert_str_eq(np_nccl_global_ranks(n), "0-3,5,7-8,1048574-1048575");
    np_nccl_free(n);
    /* 200 ranks apart (0, 2, ... 398): a text longer than the first buffer, whole */
    static char many[200 * 200];
    char want[2000] = "";
    len = 0;
    for (unsigned i = 0; i < 200; i++) {
        len += (size_t)snprintf(many + len, sizeof many - len,
                                "h:%u:%u [0] NCCL INFO AllReduce: opCount %x sendbuff 0x1 recvbuff 0x1 count 4 "
                                "datatype 7 op 0 root 0 comm 0x9 [nranks=8] stream 0x1 task 0 globalrank %u\n",
                                1000 + i, 1000 + i, i + 1, 2 * i);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%u", i ? "," : "", 2 * i);
    }
    n = read_chunks(many, len, len);
    ck_assert_str_eq(np_nccl_global_ranks(n), want);
    np_nccl_free(n);
    const char *one = "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 4 datatype 7 op 0 root "
                      "0 comm 0x9 [nranks=8] stream 0x1 task 0 globalrank 4\n";
    n = read_chunks(one, strlen(one), strlen(one));
    ck_assert_str_eq(np_nccl_global_ranks(n), "4");
    np_nccl_free(n);
    const char *none = "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 4 datatype 7 op 0 root "
                       "0 comm 0x9 [nranks=8] stream 0x1\n";
    n = read_chunks(none, strlen(none), strlen(none));
    ck_assert_str_eq(np_nccl_global_ranks(n), "");
    np_nccl_free(n);
}
END_TEST

/* A collective logged by one rank, then more than a generation of other collectives (32,768 keys), then by its
 * other rank: still one call of two lines (carried from the old generation), not two.  A datatype without a width
 * in the log's NCCL version, or a count whose bytes overflow: calls without bytes (unknown_calls).  RCCL's own
 * "RCCL INFO" prefix is a trace line too. */
START_TEST(test_generation_carry_and_unknown_widths)
{
    const size_t others = 33000;
    size_t cap = (others + 4) * 200, len = 0;
    char *l = malloc(cap);
    ck_assert_ptr_nonnull(l);
    const char *k = "h:1:1 [0] NCCL INFO AllGather: opCount 0 sendbuff 0x1 recvbuff 0x1 count 256 datatype 7 op 0 root 0 "
                    "comm 0x9 [nranks=2] stream 0x1\n";
    len += (size_t)snprintf(l + len, cap - len, "%s", k);
    for (size_t i = 0; i < others; i++)
        len += (size_t)snprintf(l + len, cap - len,
                                "h:1:1 [0] NCCL INFO AllReduce: opCount %zx sendbuff 0x1 recvbuff 0x1 count 2 datatype 7 "
                                "op 0 root 0 comm 0x8 [nranks=1] stream 0x1\n", i + 1);
    len += (size_t)snprintf(l + len, cap - len,
                            "h:2:2 [1] NCCL INFO AllGather: opCount 0 sendbuff 0x1 recvbuff 0x1 count 256 datatype 7 op "
                            "0 root 0 comm 0xa [nranks=2] stream 0x1\n");
    struct np_nccl *n = read_chunks(l, len, 1 << 16);
    const struct np_nccl_coll *c = find_coll(n, 2, "AllGather");
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->lines, 2);
    ck_assert_uint_eq(c->calls, 1);
    ck_assert_uint_eq(c->bytes, 1024);
    c = find_coll(n, 1, "AllReduce");
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->calls, others);
    ck_assert_uint_eq(c->bytes, others * 8);
    np_nccl_free(n);
    free(l);
    /* widths: datatype 99 has none; bfloat16 (9) has none before NCCL 2.10; a count of 2^62 floats overflows */
    const char *w = "h:1:1 [0] NCCL INFO NCCL version 2.9.9+cuda11.0\n"
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 10 datatype 99 op 0 root 0 "
                    "comm 0x9 [nranks=1] stream 0x1\n"
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 10 datatype 9 op 0 root 0 "
                    "comm 0x9 [nranks=1] stream 0x1\n"
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x1 count 4611686018427387904 "
                    "datatype 7 op 0 root 0 comm 0x9 [nranks=1] stream 0x1\n"
                    "h:1:1 [0] NCCL INFO AllReduce: opCount 5 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 root 0 "
                    "comm 0x9 [nranks=1] stream 0x1\n"
                    "h:1:1 [0] RCCL INFO AllReduce: opCount 6 sendbuff 0x1 recvbuff 0x1 count 12 datatype 7 op 0 root 0 "
                    "comm 0x9 [nranks=1] stream 0x1\n";
    n = read_chunks(w, strlen(w), strlen(w));
    c = find_coll(n, 1, "AllReduce");
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->calls, 5);
    ck_assert_uint_eq(c->unknown_calls, 3);
    ck_assert_uint_eq(c->bytes, 40 + 48);
    ck_assert_uint_eq(c->min_bytes, 40);
    ck_assert_uint_eq(c->max_bytes, 48);
    np_nccl_free(n);
    /* the largest count whose bytes fit: 2^62 - 1 floats, 2^64 - 4 bytes */
    const char *big = "h:1:1 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x1 count 4611686018427387903 "
                      "datatype 7 op 0 root 0 comm 0x9 [nranks=1] stream 0x1\n";
    n = read_chunks(big, strlen(big), strlen(big));
    c = find_coll(n, 1, "AllReduce");
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->unknown_calls, 0);
    ck_assert_uint_eq(c->bytes, 0xfffffffffffffffcULL);
    np_nccl_free(n);
}
END_TEST

static Suite *nccl_suite(void)
{
    Suite *s = suite_create("nccl");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_golden_cases);
    tcase_add_test(tc, test_dtype_widths);
    tcase_add_test(tc, test_bounded_and_exact);
    tcase_add_test(tc, test_repeated_opcount);
    tcase_add_test(tc, test_not_collectives);
    tcase_add_test(tc, test_checkpoint_lines);
    tcase_add_test(tc, test_report_formats);
    tcase_add_test(tc, test_anomalies);
    tcase_add_test(tc, test_stragglers);
    tcase_add_test(tc, test_pid_ranks);
    tcase_add_test(tc, test_async_same);
    tcase_add_test(tc, test_async_mixed);
    tcase_add_test(tc, test_async_slot_ends);
    tcase_add_test(tc, test_deferred_scan);
    tcase_add_test(tc, test_deferred_marks_at_end);
    tcase_add_test(tc, test_layout_variants);
    tcase_add_test(tc, test_init_values_blank);
    tcase_add_test(tc, test_net_facts_across_ranks);
    tcase_add_test(tc, test_op_names);
    tcase_add_test(tc, test_many_ranks);
    tcase_add_test(tc, test_sets_grow);
    tcase_add_test(tc, test_net_plugin_and_gdr_lines);
    tcase_add_test(tc, test_pid_rank_of_largest_comm);
    tcase_add_test(tc, test_global_rank_ranges);
    tcase_add_test(tc, test_generation_carry_and_unknown_widths);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(nccl_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
