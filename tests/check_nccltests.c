/* check_nccltests.c - Check suite for the nccl-tests result reader and verdict (src/parse/nccltests.c).
 *
 * Outputs are built here with the very format strings each version's source prints (cited per case), so a
 * layout the reader mistakes fails here; tests/data/nccl-tests/ holds real outputs of other people's runs with
 * their hand-read values (the corpus test).  Then launcher prefixes, a cut-off run, hostile input, the verdict.
 * Run from the repo root.
 */
#include "nemoperf/model/fabric.h"
#include "nemoperf/parse/nccltests.h"
#include "nemoperf/parse/run.h"

#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

struct buf {
    char s[65536];
    size_t n;
};

static void add(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
    va_end(ap);
    ck_assert(k >= 0 && (size_t)k < sizeof b->s - b->n);
    b->n += (size_t)k;
}

static void parse(const struct buf *b, struct np_nccl_result *r)
{
    ck_assert_int_eq(np_nccltests_parse(b->s, b->n, r), NP_OK);
}

/* v2.13.0 (bc5f7cf) src/common.cu: header 923-926, row 577 + 533/535 twice, footer 997-998. */
static void v213(struct buf *b, int check, long long wrong_at_last)
{
    add(b, "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
           "validation: %d graph: 0\n#\n# Using devices\n", check);
    for (int i = 0; i < 8; i++)
        add(b, "#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s\n", i, 1000 + i, "dgx01", i, 7 + i,
            "NVIDIA H100 80GB HBM3");
    add(b, "#\n");
    add(b, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "",
        "", "");
    add(b, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
        "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    add(b, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
        "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    long long size = 1LL << 20;
    double busbw[] = {80.5, 200.25, 350.0, 420.1, 455.3, 470.0, 468.2, 471.9, 469.5, 470.3, 472.8};
    for (int i = 0; i < 11; i++, size *= 2) {
        double t = (double)size / (busbw[i] * 1e3 * 8 / 14);
        add(b, "%12lli  %12lli  %8s  %6s  %6s", size, size / 4, "float", "sum", "-1");
        long long w = i == 10 ? wrong_at_last : 0;
        for (int ip = 0; ip < 2; ip++) {
            char ts[10];
            snprintf(ts, sizeof ts, "%7.1f", t);
            if (check)
                add(b, "  %7s  %6.2f  %6.2f  %5g", ts, busbw[i] * 8 / 14, busbw[i] - ip, (double)w);
            else
                add(b, "  %7s  %6.2f  %6.2f  %5s", ts, busbw[i] * 8 / 14, busbw[i] - ip, "N/A");
        }
        add(b, "\n");
    }
    add(b, "# Out of bounds values : %d %s\n", wrong_at_last ? 1 : 0, wrong_at_last ? "FAILED" : "OK");
    add(b, "# Avg bus bandwidth    : %g %s\n", 381.66, "");
    add(b, "#\n");
}

START_TEST(test_v213)
{
    static struct buf b;
    b.n = 0;
    v213(&b, 1, 0);
    struct np_nccl_result r;
    parse(&b, &r);
    ck_assert_uint_eq(r.nrows, 11);
    ck_assert_int_eq(r.nranks, 8);
    ck_assert_int_eq(r.nhosts, 1);
    ck_assert_str_eq(r.gpu, "NVIDIA H100 80GB HBM3");
    ck_assert_int_eq(r.rows[10].size, 1LL << 30);
    ck_assert_int_eq(r.rows[10].count, 1LL << 28);
    ck_assert_str_eq(r.rows[10].type, "float");
    ck_assert_str_eq(r.rows[10].redop, "sum");
    ck_assert_int_eq(r.rows[10].root, -1);
    ck_assert_double_eq_tol(r.rows[10].oop_busbw, 472.80, 1e-9);
    ck_assert_double_eq_tol(r.rows[10].ip_busbw, 471.80, 1e-9);
    ck_assert_int_eq(r.rows[10].oop_wrong, 0);
    ck_assert(isnan(r.rows[10].oop_error));
    ck_assert_double_eq_tol(r.avg_busbw, 381.66, 1e-9);
    ck_assert_int_eq(r.out_of_bounds, 0);
    ck_assert_int_eq(r.wrong_total, 0);
    /* the peak: the best of the three largest sizes (469.5, 470.3, 472.8 out-of-place) */
    ck_assert_int_eq(r.peak_index, 10);
    ck_assert_double_eq_tol(r.peak_busbw, 472.8, 1e-9);
    char why[160];
    ck_assert_int_eq(np_nccl_verdict(&r, 520.0, why, sizeof why), NP_NCCL_PASS); /* 472.8 >= 0.9 x 520 = 468 */
    ck_assert_int_eq(np_nccl_verdict(&r, 530.0, why, sizeof why), NP_NCCL_FAIL); /* 472.8 < 477 */
    ck_assert_msg(strstr(why, "472.80") && strstr(why, "530.00") && strstr(why, "89%"), "%s", why);
    ck_assert_int_eq(np_nccl_verdict(&r, NAN, why, sizeof why), NP_NCCL_NONE);
    np_nccl_result_free(&r);
    np_nccl_result_free(&r); /* idempotent */

    b.n = 0;
    v213(&b, 1, 3); /* three wrong elements at the last size, in both halves */
    parse(&b, &r);
    ck_assert_int_eq(r.wrong_total, 6);
    ck_assert_int_eq(r.out_of_bounds, 1);
    ck_assert_int_eq(np_nccl_verdict(&r, 1.0, why, sizeof why), NP_NCCL_FAIL);
    ck_assert_int_eq(np_nccl_verdict(&r, NAN, why, sizeof why), NP_NCCL_FAIL); /* whatever the expectation */
    ck_assert_msg(strstr(why, "6 wrong"), "%s", why);
    np_nccl_result_free(&r);

    b.n = 0;
    v213(&b, 0, 0); /* -c 0 */
    parse(&b, &r);
    ck_assert_uint_eq(r.nrows, 11);
    ck_assert_int_eq(r.rows[3].oop_wrong, -1);
    ck_assert_int_eq(r.rows[3].ip_wrong, -1);
    ck_assert_int_eq(r.check_off, 1);
    np_nccl_result_free(&r);
}
END_TEST

/* v2.0.0 (0f8c785): all_gather has no redop column (src/all_gather.cu:11-19), broadcast a root and no redop
 * (src/broadcast.cu:11-19); the error column is the max delta "%5.0le" (src/common.cu:462/464). */
START_TEST(test_v200_columns)
{
    static struct buf b;
    b.n = 0;
    add(&b, "# %10s  %12s  %6s            out-of-place                       in-place          \n", "", "", "");
    add(&b, "# %10s  %12s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "size", "count", "type", "time", "algbw",
        "busbw", "error", "time", "algbw", "busbw", "error");
    add(&b, "# %10s  %12s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "(us)", "(GB/s)",
        "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    add(&b, "%12li  %12li  %6s", 268435456L, 8388608L, "float");
    add(&b, "  %7s  %6.2f  %6.2f  %5.0le", "  12345", 21.74, 19.02, 0.0);
    add(&b, "  %7s  %6.2f  %6.2f  %5.0le\n", "  12400", 21.65, 18.94, 2e-7);
    add(&b, "# Out of bounds values : %d %s\n", 0, "OK");
    add(&b, "# Avg bus bandwidth    : %g %s\n", 19.02, "");
    struct np_nccl_result r;
    parse(&b, &r);
    ck_assert_uint_eq(r.nrows, 1);
    ck_assert_str_eq(r.rows[0].type, "float");
    ck_assert_str_eq(r.rows[0].redop, "");
    ck_assert_double_eq_tol(r.rows[0].oop_busbw, 19.02, 1e-9);
    ck_assert_double_eq_tol(r.rows[0].ip_time_us, 12400, 1e-9);
    ck_assert_int_eq(r.rows[0].oop_wrong, -1);
    ck_assert_double_eq_tol(r.rows[0].ip_error, 2e-7, 1e-12);
    ck_assert_int_eq(r.check_off, 0);
    np_nccl_result_free(&r);

    b.n = 0;
    add(&b, "# %10s  %12s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "size", "count", "type", "root", "time",
        "algbw", "busbw", "error", "time", "algbw", "busbw", "error");
    add(&b, "%12li  %12li  %6s  %6i", 1048576L, 262144L, "float", 3);
    add(&b, "  %7s  %6.2f  %6.2f  %5s", "  55.10", 19.03, 19.03, "N/A");
    add(&b, "  %7s  %6.2f  %6.2f  %5s\n", "  54.90", 19.10, 19.10, "N/A");
    parse(&b, &r);
    ck_assert_uint_eq(r.nrows, 1);
    ck_assert_int_eq(r.rows[0].root, 3);
    ck_assert_int_eq(r.check_off, 1);
    ck_assert(isnan(r.avg_busbw));
    ck_assert_int_eq(r.out_of_bounds, -1);
    np_nccl_result_free(&r);
}
END_TEST

/* v1.0.0 (dcf8189) src/all_reduce.cu:11-17: "bytes N type op ... res", time "%7.3f" in ms (src/common.cu:573-576),
 * rows of the out-of-place half only when in-place is off, the footer without '#' (:1027-1028). */
START_TEST(test_v100)
{
    static struct buf b;
    b.n = 0;
    add(&b, "# NCCL Tests compiled with NCCL %d.%d\n# Using devices\n", 2, 1);
    add(&b, "#   Rank %2d on %10s device %2d [0x%02x] %s\n", 0, "host-a", 0, 4, "Tesla P100-SXM2-16GB");
    add(&b, "#   Rank %2d on %10s device %2d [0x%02x] %s\n", 1, "host-b", 0, 4, "Tesla P100-SXM2-16GB");
    add(&b, "\n");
    add(&b, "# %10s  %12s  %6s  %6s        out-of-place                    in-place\n", "", "", "", "");
    add(&b, "# %10s  %12s  %6s  %6s  %7s  %5s  %5s  %7s  %7s  %5s  %5s  %7s\n", "bytes", "N", "type", "op", "time",
        "algbw", "busbw", "res", "time", "algbw", "busbw", "res");
    add(&b, "%12li  %12li  %6s  %6s", 33554432L, 8388608L, "float", "sum");
    add(&b, "  %7.3f  %5.2f  %5.2f  %7.0le", 3.125, 10.74, 10.74, 0.0);
    add(&b, "  %7.3f  %5.2f  %5.2f  %7.0le\n", 3.2, 10.49, 10.49, 0.0);
    add(&b, "%12li  %12li  %6s  %6s", 67108864L, 16777216L, "float", "sum");
    add(&b, "  %7.3f  %5.2f  %5.2f  \tN/A\n", 6.0, 11.18, 11.18);
    add(&b, " Out of bounds values : %d %s\n", 0, "OK");
    add(&b, " Avg bus bandwidth    : %g %s\n", 10.8, "");
    struct np_nccl_result r;
    parse(&b, &r);
    ck_assert_uint_eq(r.nrows, 2);
    ck_assert_str_eq(r.nccl_version, "2.1");
    ck_assert_int_eq(r.nranks, 2);
    ck_assert_int_eq(r.nhosts, 2);
    ck_assert_str_eq(r.gpu, "Tesla P100-SXM2-16GB");
    ck_assert_double_eq_tol(r.rows[0].oop_time_us, 3125.0, 1e-6);
    ck_assert_str_eq(r.rows[0].redop, "sum");
    ck_assert(isnan(r.rows[1].ip_busbw));
    ck_assert_double_eq_tol(r.rows[1].oop_busbw, 11.18, 1e-9);
    ck_assert_double_eq_tol(r.avg_busbw, 10.8, 1e-9);
    ck_assert_int_eq(r.out_of_bounds, 0);
    np_nccl_result_free(&r);
}
END_TEST

/* v2.19.6 (a0b82b2) src/util.cu: the version line (623), "Collective test starting" (624), the rank line (687),
 * getFloatStr's "%6g" #wrong (507), -R's timestamp (608-610, two fields) and the per-iteration columns (746-750). */
START_TEST(test_v219)
{
    static struct buf b;
    b.n = 0;
    add(&b, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", "2.19.6", 22807, 22807);
    add(&b, "# Collective test starting: %s\n", "reduce_scatter_perf");
    add(&b, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", 0, 0, 4242, "gb-node-07", 0, 0,
        0x18, 0, "NVIDIA GB200");
    add(&b, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
        "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 19, "timestamp");
    add(&b, "%12lli  %12lli  %8s  %6s  %6s", 4294967296LL, 134217728LL, "float", "sum", "-1");
    add(&b, "  %7s  %6s  %6s  %6g", "  12000", "357.91", "335.54", 0.0);
    add(&b, "  %7s  %6s  %6s  %6g", "  12010", "357.61", "335.26", 1e6);
    add(&b, "%21s\n", "2026-11-29 06:01:02");
    add(&b, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
    add(&b, "# %-20s : %g %s\n", "Avg bus bandwidth", 335.4, "");
    struct np_nccl_result r;
    parse(&b, &r);
    ck_assert_str_eq(r.version, "2.19.6");
    ck_assert_str_eq(r.nccl_version, "2.28.7");
    ck_assert_str_eq(r.collective, "reduce_scatter_perf");
    ck_assert_str_eq(r.gpu, "NVIDIA GB200");
    ck_assert_uint_eq(r.nrows, 1);
    ck_assert_int_eq(r.rows[0].ip_wrong, 1000000);
    ck_assert_double_eq_tol(r.rows[0].ip_busbw, 335.26, 1e-9);
    ck_assert_double_eq_tol(r.avg_busbw, 335.4, 1e-9);
    ck_assert_int_eq(r.wrong_total, 1000000);
    np_nccl_result_free(&r);

    b.n = 0; /* -I: per-iteration columns after each #wrong */
    add(&b, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  "
            "%7s %*s\n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99",
        "i_cv%", "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%", 0, "");
    add(&b, "%12lli  %12lli  %8s  %6s  %6s  %7s  %6s  %6s  %6g  %7s  %7s  %7s  %7s  %7s  %6s  %6s  %6g  %7s  %7s  %7s  "
            "%7s\n",
        8LL, 2LL, "float", "sum", "-1", "  20.11", "  0.00", "  0.00", 0.0, "  19.00", "  25.00", "  24.00", "   3.10",
        "  19.80", "  0.00", "  0.00", 0.0, "  19.10", "  24.00", "  23.90", "   2.90");
    parse(&b, &r);
    ck_assert_uint_eq(r.nrows, 1);
    ck_assert_double_eq_tol(r.rows[0].ip_time_us, 19.80, 1e-9);
    ck_assert_int_eq(r.rows[0].ip_wrong, 0);
    np_nccl_result_free(&r);
}
END_TEST

/* Launchers' prefixes: srun -l, mpirun --tag-output, pdsh; "[0]" tags at each write (NVIDIA/nccl issue 1453);
 * '#' lost to Markdown (NVIDIA/nccl issue 583). */
START_TEST(test_prefixes)
{
    static struct buf b, p;
    b.n = 0;
    v213(&b, 1, 0);
    const char *prefixes[] = {"  0: ", "[1,0]<stdout>:", "node01: ", "0: "};
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++) {
        p.n = 0;
        for (const char *s = b.s, *e; *s; s = e + 1) {
            e = strchr(s, '\n');
            add(&p, "%s%.*s\n", prefixes[k], (int)(e - s), s);
        }
        struct np_nccl_result r;
        parse(&p, &r);
        ck_assert_msg(r.nrows == 11, "prefix \"%s\": %zu rows", prefixes[k], r.nrows);
        ck_assert_double_eq_tol(r.avg_busbw, 381.66, 1e-9);
        ck_assert_int_eq(r.nranks, 8);
        np_nccl_result_free(&r);
    }
    p.n = 0; /* '#' removed */
    for (const char *s = b.s, *e; *s; s = e + 1) {
        e = strchr(s, '\n');
        add(&p, "%.*s\n", (int)(e - s), *s == '#' ? s + 1 : s);
    }
    struct np_nccl_result r;
    parse(&p, &r);
    ck_assert_uint_eq(r.nrows, 11);
    ck_assert_int_eq(r.nranks, 8);
    ck_assert_double_eq_tol(r.avg_busbw, 381.66, 1e-9);
    np_nccl_result_free(&r);
    p.n = 0;
    add(&p, "[0]# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
        "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    add(&p, "[0]      1048576        262144     float     sum      -1[0]    1626.5    0.64    1.24      0[0]    2302.3"
            "    0.46    0.87      0\n");
    parse(&p, &r);
    ck_assert_uint_eq(r.nrows, 1);
    ck_assert_double_eq_tol(r.rows[0].ip_busbw, 0.87, 1e-9);
    np_nccl_result_free(&r);
}
END_TEST

START_TEST(test_cut_and_failures)
{
    static struct buf b;
    b.n = 0;
    v213(&b, 1, 0);
    /* cut in the middle of the 6th row: 5 rows, no footer, the half row not taken */
    const char *sixth = b.s;
    for (int i = 0; i < 5; i++)
        sixth = strstr(sixth, "float") + 1;
    sixth = strstr(sixth, "float");
    struct np_nccl_result r;
    ck_assert_int_eq(np_nccltests_parse(b.s, (size_t)(sixth - b.s) + 20, &r), NP_OK);
    ck_assert_uint_eq(r.nrows, 5);
    ck_assert(isnan(r.avg_busbw));
    int said = 0;
    for (int i = 0; i < r.nnotes; i++)
        said |= strstr(r.notes[i], "did not finish") != NULL;
    ck_assert(said);
    np_nccl_result_free(&r);

    const char *fail = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor)\n"
                       "node2: Test NCCL failure common.cu:1005 'unhandled system error'\n"
                       " .. node2 pid 1234: Test failure common.cu:891\n";
    ck_assert_int_eq(np_nccltests_parse(fail, strlen(fail), &r), NP_OK);
    ck_assert_uint_eq(r.nrows, 0);
    said = 0;
    for (int i = 0; i < r.nnotes; i++)
        said |= strstr(r.notes[i], "unhandled system error") != NULL;
    ck_assert(said);
    char why[128];
    ck_assert_int_eq(np_nccl_verdict(&r, 10, why, sizeof why), NP_NCCL_NONE);
    np_nccl_result_free(&r);

    /* the footer's data error without a row (an output whose table was cut away): FAIL all the same (found by
     * fuzz/nccltests_fuzz.c: the verdict said no row first) */
    const char *foot = "# Out of bounds values : 2 FAILED\n# Avg bus bandwidth    : 12.5\n";
    ck_assert_int_eq(np_nccltests_parse(foot, strlen(foot), &r), NP_OK);
    ck_assert_uint_eq(r.nrows, 0);
    ck_assert_int_eq(np_nccl_verdict(&r, NAN, why, sizeof why), NP_NCCL_FAIL);
    ck_assert_msg(strstr(why, "out of bounds"), "%s", why);
    np_nccl_result_free(&r);
}
END_TEST

/* Hostile input: never read past len, lines of any length, NULs, a header of 64+ columns. */
START_TEST(test_hostile)
{
    size_t n = 1 << 20;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        const char alphabet[] = "# 0123456789.\n\t\r-N/Aesizbuwtaglp[]:";
        s[i] = alphabet[(x >> 16) % (sizeof alphabet - 1)];
    }
    struct np_nccl_result r;
    ck_assert_int_eq(np_nccltests_parse(s, n, &r), NP_OK);
    np_nccl_result_free(&r);
    memset(s, 'x', n); /* one line of 1 MiB, no newline: len respected (no NUL at the end) */
    ck_assert_int_eq(np_nccltests_parse(s, n, &r), NP_OK);
    ck_assert_uint_eq(r.nrows, 0);
    np_nccl_result_free(&r);
    static struct buf b;
    b.n = 0;
    add(&b, "# size count type time algbw busbw");
    for (int i = 0; i < 80; i++)
        add(&b, " busbw");
    add(&b, "\n1 1 float 1 1 1\n");
    ck_assert_int_eq(np_nccltests_parse(b.s, b.n, &r), NP_OK);
    ck_assert_uint_eq(r.nrows, 0);
    np_nccl_result_free(&r);
    free(s);
    np_nccl_result_free(NULL);
}
END_TEST

/* The shipped table: each row's arithmetic, the GPU names nccl-tests prints, a user's table, bad tables. */
START_TEST(test_fabric)
{
    struct np_fabric_table *t = NULL;
    struct np_error err = {0};
    unsetenv("NEMOPERF_FABRIC_TABLE");
    ck_assert_msg(np_fabric_table_load(NULL, &t, &err) == NP_OK, "%s", err.text);
    struct np_fabric_expectation e;
    /* H100 over NVLink: 450 GB/s one way x 0.82 (NCCL's 370 GB/s), all_reduce too (NVIDIA's recipe: no NVLS) */
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA H100 80GB HBM3", "intra", "all_gather_perf", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 369.0, 1e-9);
    ck_assert_str_eq(e.link, "nvlink");
    ck_assert_int_eq(np_fabric_expect(t, "h100", "intra", "all_reduce", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 369.0, 1e-9);
    /* across nodes: ring collectives the node's 8 x 50 GB/s, alltoall a GPU's own NIC */
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA H100 80GB HBM3", "inter", "all_reduce_perf", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 368.0, 1e-9);
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA H100 80GB HBM3", "inter", "all_reduce_perf", 4, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 184.0, 1e-9);
    ck_assert_int_eq(np_fabric_expect(t, "h100", "all", "alltoall_perf", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 46.0, 1e-9);
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA B200", "intra", "all_reduce_perf", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 738.0, 1e-9);
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA GB200", "inter", "all_reduce_perf", 4, &e, &err), NP_OK);
    ck_assert_str_eq(e.gpu, "gb200"); /* not b200's row */
    ck_assert_int_eq(np_fabric_expect(t, "b300", "inter", "sendrecv_perf", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 92.0, 1e-9);
    ck_assert_int_eq(np_fabric_expect(t, "gb300", "intra", "alltoall", 4, &e, &err), NP_OK);
    ck_assert_int_eq(np_fabric_expect(t, "h200", "intra", "reduce_scatter", 8, &e, &err), NP_OK);
    ck_assert(e.source[0] != '\0');
    /* a GPU with no row: said, with the way out */
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA H100 PCIe", "intra", "all_reduce", 8, &e, &err), NP_E_NOTFOUND);
    ck_assert_msg(strstr(err.text, "NEMOPERF_FABRIC_TABLE"), "%s", err.text);
    ck_assert(isnan(e.gbs));
    np_fabric_table_free(t);

    char dir[] = "/tmp/np-fabric-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/mine.tsv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("# our cluster\ngpu\tmatch\tscope\tcollectives\tlink\tgbs\tper\tfraction\tsource\n"
          "h100\th100\t*\t*\tnvlink\t400\tgpu\t0.5\tmeasured by us\n", f);
    fclose(f);
    setenv("NEMOPERF_FABRIC_TABLE", path, 1);
    ck_assert_msg(np_fabric_table_load(NULL, &t, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_fabric_expect(t, "NVIDIA H100 PCIe", "intra", "all_reduce", 8, &e, &err), NP_OK);
    ck_assert_double_eq_tol(e.gbs, 200.0, 1e-9);
    ck_assert_str_eq(e.table, path);
    np_fabric_table_free(t);
    unsetenv("NEMOPERF_FABRIC_TABLE");
    f = fopen(path, "w");
    fputs("gpu\tmatch\tscope\tcollectives\tlink\tgbs\tper\tfraction\tsource\n"
          "h100\th100\t*\t*\tnvlink\tfast\tgpu\t0.5\tx\n", f);
    fclose(f);
    ck_assert_int_eq(np_fabric_table_load(path, &t, &err), NP_E_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_msg(strstr(err.text, "gbs") && strstr(err.text, "fast"), "%s", err.text);
    f = fopen(path, "w");
    fputs("gpu\tmatch\n", f);
    fclose(f);
    ck_assert_int_eq(np_fabric_table_load(path, &t, &err), NP_E_PARSE);
    unlink(path);
    ck_assert_int_eq(np_fabric_table_load(path, &t, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "fabric table"), "%s", err.text);
    rmdir(dir);
}
END_TEST

/* The real outputs of tests/data/nccl-tests/ against their hand-read values (expected.tsv; README.md cites each). */
static void corpus_num(const char *file, const char *field, const char *want, double got)
{
    if (strcmp(want, "-") == 0) {
        ck_assert_msg(isnan(got), "%s: %s = %g, want none", file, field, got);
        return;
    }
    double w = strtod(want, NULL);
    ck_assert_msg(fabs(got - w) <= 1e-9 * fabs(w) + 1e-12, "%s: %s = %.17g, want %s", file, field, got, want);
}

static void corpus_str(const char *file, const char *field, const char *want, const char *got)
{
    ck_assert_msg(strcmp(want, "-") == 0 ? got[0] == '\0' : strcmp(want, got) == 0, "%s: %s = \"%s\", want %s", file,
                  field, got, want);
}

START_TEST(test_corpus)
{
    size_t len;
    char *tsv = np_test_read_all("tests/data/nccl-tests/expected.tsv", &len);
    int rows = 0;
    char *save = NULL;
    for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "file\t", 5) == 0)
            continue;
        char *c[13];
        int n = 0;
        for (char *p = line; n < 13; n++) {
            c[n] = p;
            char *tab = strchr(p, '\t');
            if (!tab) {
                n++;
                break;
            }
            *tab = '\0';
            p = tab + 1;
        }
        ck_assert_msg(n == 13, "expected.tsv: %s has %d cells", c[0], n);
        char path[256];
        snprintf(path, sizeof path, "tests/data/nccl-tests/%s", c[0]);
        size_t flen;
        char *text = np_test_read_all(path, &flen);
        struct np_nccl_result r;
        ck_assert_int_eq(np_nccltests_parse(text, flen, &r), NP_OK);
        const char *f = c[0];
        ck_assert_msg(r.nrows == (size_t)atoi(c[1]), "%s: %zu rows, want %s", f, r.nrows, c[1]);
        long long max = -1;
        const struct np_nccl_row *at = NULL;
        for (size_t i = 0; i < r.nrows; i++)
            if (r.rows[i].size > max) {
                max = r.rows[i].size;
                at = &r.rows[i];
            }
        corpus_num(f, "max_size", c[2], at ? (double)max : NAN);
        corpus_num(f, "oop_busbw_at_max", c[3], at ? at->oop_busbw : NAN);
        corpus_num(f, "peak_busbw", c[4], r.peak_busbw);
        corpus_num(f, "avg_busbw", c[5], r.avg_busbw);
        corpus_num(f, "wrong", c[6], (double)r.wrong_total);
        corpus_num(f, "out_of_bounds", c[7], r.out_of_bounds < 0 ? NAN : r.out_of_bounds);
        corpus_str(f, "version", c[8], r.version);
        corpus_str(f, "nccl_version", c[9], r.nccl_version);
        ck_assert_msg(r.nranks == atoi(c[10]), "%s: %d ranks, want %s", f, r.nranks, c[10]);
        corpus_str(f, "gpu", c[11], r.gpu);
        corpus_str(f, "collective", c[12], r.collective);
        /* the verdict: a data error always FAILs; otherwise against what the reader found itself */
        char why[160];
        enum np_nccl_verdict v = np_nccl_verdict(&r, 1.0, why, sizeof why);
        if (r.out_of_bounds > 0 || r.wrong_total > 0)
            ck_assert_msg(v == NP_NCCL_FAIL, "%s: %s", f, why);
        else if (r.nrows && r.peak_busbw >= 0.9)
            ck_assert_msg(v == NP_NCCL_PASS, "%s: %s", f, why);
        /* read again through a file, and cut at every 97th byte: never more rows than whole */
        for (size_t cut = 0; cut < flen; cut += 97) {
            struct np_nccl_result part;
            ck_assert_int_eq(np_nccltests_parse(text, cut, &part), NP_OK);
            ck_assert_msg(part.nrows <= r.nrows, "%s: cut at %zu gives %zu rows", f, cut, part.nrows);
            np_nccl_result_free(&part);
        }
        np_nccl_result_free(&r);
        free(text);
        rows++;
    }
    free(tsv);
    ck_assert_msg(rows >= 15, "the corpus has %d outputs, want 15 or more", rows);
}
END_TEST

/* Run folders as RECIPE=nccl-tests jobs leave them (tests/data/nccl-tests-runs/, gen.py): one run per step of
 * the steps file, the slow node, the slow link and the #wrong step FAIL, the step the job never ran has no log. */
static const struct np_run *runs_find(const struct np_parse_result *res, const char *step)
{
    for (size_t i = 0; i < res->nruns; i++)
        if (strcmp(res->runs[i].nccl.step, step) == 0)
            return &res->runs[i];
    ck_abort_msg("no run of step %s", step);
    return NULL;
}

START_TEST(test_runs)
{
    unsetenv("NEMOPERF_FABRIC_TABLE");
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    char *paths[] = {(char *)"tests/data/nccl-tests-runs"};
    struct np_parse_result res;
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, NULL, NULL, &res), NP_OK);
    ck_assert_msg(res.nruns == 14, "%zu runs", res.nruns);
    ck_assert_uint_eq(res.nerrors, 0);
    static const struct {
        const char *step;
        enum np_verdict v;
        int gpus;
        const char *why;
    } want[] = {
        {"all_reduce_perf-n1", NP_VERDICT_PASS, 8, "of the 369.00 GB/s expected"},
        {"all_reduce_perf-n3", NP_VERDICT_FAIL, 8, "below 90%"},
        {"all_reduce_perf-n1-n2", NP_VERDICT_PASS, 16, "of the 368.00 GB/s expected"},
        {"all_reduce_perf-n2-n4", NP_VERDICT_FAIL, 16, "below 90%"},
        {"all_gather_perf-all", NP_VERDICT_FAIL, 16, "wrong values"},
        {"alltoall_perf-all", NP_VERDICT_PASS, 16, "of the 46.00 GB/s expected"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct np_run *r = runs_find(&res, want[i].step);
        ck_assert_int_eq(r->id.kind, NP_KIND_NCCLTESTS);
        ck_assert_str_eq(r->id.family, "nccl-tests");
        ck_assert_str_eq(r->id.gpu_type, "h100");
        ck_assert_msg(r->verdict == want[i].v, "%s: %s, want %s (%s)", want[i].step, np_verdict_name(r->verdict),
                      np_verdict_name(want[i].v), r->nccl.why);
        ck_assert_msg(r->id.gpus == want[i].gpus, "%s: %d GPUs", want[i].step, r->id.gpus);
        ck_assert_msg(strstr(r->nccl.why, want[i].why), "%s: %s", want[i].step, r->nccl.why);
        ck_assert_int_eq(r->status, NP_RUN_OK);
        ck_assert_str_eq(r->job_id, strstr(want[i].step, "-all") ? "4102" : "4101");
    }
    const struct np_run *slow = runs_find(&res, "all_reduce_perf-n3");
    ck_assert_msg(slow->nccl.peak_busbw > 211 && slow->nccl.peak_busbw < 213, "%g", slow->nccl.peak_busbw);
    ck_assert_str_eq(slow->nccl.hosts, "n3");
    ck_assert_str_eq(runs_find(&res, "all_reduce_perf-n2-n4")->nccl.hosts, "n2,n4");
    ck_assert_int_eq(runs_find(&res, "all_reduce_perf-n2-n4")->nccl.nranks, 16);
    const struct np_run *wrong = runs_find(&res, "all_gather_perf-all");
    ck_assert_int_eq(wrong->nccl.out_of_bounds, 30); /* 15 sizes from 1 MiB to 16 GiB, both halves */
    ck_assert_int_eq(wrong->nccl.wrong, 90);
    const struct np_run *none = runs_find(&res, "sendrecv_perf-all");
    ck_assert_int_eq(none->status, NP_RUN_NO_LOG);
    ck_assert_msg(strstr(none->why, "sendrecv_perf-all"), "%s", none->why);
    np_parse_result_free(&res);
}
END_TEST

static Suite *nccltests_suite(void)
{
    Suite *s = suite_create("nccltests");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_v213);
    tcase_add_test(tc, test_v200_columns);
    tcase_add_test(tc, test_v100);
    tcase_add_test(tc, test_v219);
    tcase_add_test(tc, test_prefixes);
    tcase_add_test(tc, test_cut_and_failures);
    tcase_add_test(tc, test_hostile);
    tcase_add_test(tc, test_fabric);
    tcase_add_test(tc, test_corpus);
    tcase_add_test(tc, test_runs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(nccltests_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
