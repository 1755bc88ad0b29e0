/* check_telemetry.c - GPU telemetry read by nvidia-smi's own CSV header: nounits and units, [N/A] and
 * [Not Supported], reasons as words and as NVML's bitmask, the older clocks_throttle_reasons names, a time window,
 * timestamps, hostile input; dcgmi dmon's output.  Stand-ins: tests/data/system/ (its make.py, in the real format, cited there).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/system.h"
#include "testutil.h"

#define D "tests/data/system/"
#define EPS 1e-9

static size_t read_csv(const char *path, double t0, double t1, struct np_gpu_telemetry **out, char **notes)
{
    size_t len, n = 0;
    char *t = np_test_read_all(path, &len);
    *out = NULL;
    *notes = NULL;
    ck_assert_int_eq(np_telemetry_read(t, len, "nX", t0, t1, out, &n, notes), NP_OK);
    free(t);
    return n;
}

START_TEST(test_time)
{
    double a = np_telemetry_time("2026/11/29 06:00:00.500", 23);
    double b = np_telemetry_time("[2026-11-29 06:00:01] iteration 5", 33);
    ck_assert(!isnan(a) && !isnan(b));
    ck_assert_double_eq_tol(b - a, 0.5, EPS);
    ck_assert_double_eq_tol(np_telemetry_time("1970/01/02 00:00:00", 19), 86400.0, EPS);
    ck_assert(isnan(np_telemetry_time("2026/13/29 06:00:00", 19)));
    ck_assert(isnan(np_telemetry_time("2026/11/29 06:00", 16)));
    ck_assert(isnan(np_telemetry_time("iteration 5/50", 14)));
    ck_assert(isnan(np_telemetry_time("2026-11/29 06:00:00", 19)));
}
END_TEST

START_TEST(test_whole_file)
{
    struct np_gpu_telemetry *t;
    char *notes;
    size_t n = read_csv(D "run4/telemetry/n3.csv", NAN, NAN, &t, &notes);
    ck_assert_uint_eq(n, 8);
    ck_assert_ptr_null(notes);
    const struct np_gpu_telemetry *g = &t[5];
    ck_assert_int_eq(g->index, 5);
    ck_assert_str_eq(g->node, "nX");
    ck_assert_uint_eq(g->samples, 30);
    /* samples 10..22 (06:00:20 to 06:00:44) in HW slowdown at 1410 MHz, the other 17 at 1980 */
    ck_assert_double_eq_tol(g->hw_slowdown, 13.0 / 30, EPS);
    ck_assert_double_eq_tol(g->mean_sm_mhz, (13 * 1410.0 + 17 * 1980.0) / 30, EPS);
    ck_assert_double_eq(g->max_sm_mhz, 1980.0);
    ck_assert_double_eq(g->power_limit_w, 700.0);
    ck_assert_double_eq_tol(g->sw_power_cap, 0.0, EPS);
    ck_assert_double_eq_tol(g->thermal, 0.0, EPS);
    ck_assert_double_eq_tol(g->power_brake, 0.0, EPS);
    ck_assert_double_eq_tol(g->mean_temp_c, 63.0, EPS); /* 61 + 5 % 3 */
    /* power 652 + g % 4 + s % 5 over s = 0..29: 652 + 1 + 2 */
    ck_assert_double_eq_tol(g->mean_power_w, 655.0, EPS);
    ck_assert_double_eq_tol(t[0].hw_slowdown, 0.0, EPS);
    ck_assert_double_eq(t[0].mean_sm_mhz, 1980.0);
    free(t);
}
END_TEST

START_TEST(test_window)
{
    struct np_gpu_telemetry *t;
    char *notes;
    double t0 = np_telemetry_time("2026/11/29 06:00:20", 19), t1 = np_telemetry_time("2026/11/29 06:00:45", 19);
    size_t n = read_csv(D "run4/telemetry/n3.csv", t0, t1, &t, &notes);
    ck_assert_uint_eq(n, 8);
    ck_assert_uint_eq(t[5].samples, 13);
    ck_assert_double_eq_tol(t[5].hw_slowdown, 1.0, EPS);
    ck_assert_double_eq_tol(t[5].mean_sm_mhz, 1410.0, EPS);
    ck_assert(t[5].t_first >= t0 && t[5].t_last <= t1);
    free(t);
    free(notes);
    /* a window no sample falls in */
    n = read_csv(D "run4/telemetry/n3.csv", t1 + 3600, NAN, &t, &notes);
    ck_assert_uint_eq(n, 0);
    free(t);
    free(notes);
}
END_TEST

/* Units in the values, clocks_throttle_reasons.*, the active reasons as a bitmask beside a reason's own column,
 * [N/A] and [Not Supported], a line that is not nvidia-smi's. */
START_TEST(test_old_units)
{
    struct np_gpu_telemetry *t;
    char *notes;
    size_t n = read_csv(D "old-units.csv", NAN, NAN, &t, &notes);
    ck_assert_uint_eq(n, 2);
    const struct np_gpu_telemetry *g = &t[0];
    ck_assert_uint_eq(g->samples, 4);
    ck_assert_double_eq_tol(g->mean_power_w, (250.12 + 260.12 + 270.12) / 3, EPS); /* [N/A] left out */
    ck_assert_double_eq_tol(g->max_power_w, 270.12, EPS);
    ck_assert_double_eq_tol(g->mean_sm_mhz, (1410.0 + 1200 + 705) / 3, EPS);   /* [Not Supported] left out */
    ck_assert_double_eq(g->max_sm_mhz, 1410.0);
    ck_assert_double_eq_tol(g->hw_slowdown, 2.0 / 4, EPS);   /* 0x88 and 0x48 carry 0x8 */
    ck_assert_double_eq_tol(g->power_brake, 1.0 / 4, EPS);   /* 0x88 */
    ck_assert_double_eq_tol(g->sw_power_cap, 1.0 / 4, EPS);  /* 0x4 */
    ck_assert_double_eq_tol(g->thermal, 1.0 / 4, EPS);       /* the sw column and 0x40 in the same sample */
    ck_assert_uint_eq(t[1].samples, 1);
    ck_assert_int_eq(t[1].index, 1);
    ck_assert_ptr_nonnull(notes);
    ck_assert_str_eq(notes, "nX: 1 telemetry line not read");
    free(t);
    free(notes);
}
END_TEST

START_TEST(test_hostile)
{
    static const char *const bad[] = {
        "",
        "0, 1, 2\n",                                         /* no header */
        "timestamp, index\n",                                /* a header only */
        "timestamp, index, power.draw [W]\n,,\n, , \n",      /* empty fields */
        "index, power.draw [W]\n99999999999, 5\n-3, 1e999\n0x, nan\n", /* out of range */
        "timestamp, clocks_event_reasons.active\n2026/11/29 06:00:00, 0xZZ\n2026/11/29 06:00:01, 0xFFFFFFFFFFFFFFFFFF\n",
        "index\n\0\0\0\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct np_gpu_telemetry *t = NULL;
        char *notes = NULL;
        size_t n = 0, len = i == 6 ? 10 : strlen(bad[i]);
        ck_assert_int_eq(np_telemetry_read(bad[i], len, "h", NAN, NAN, &t, &n, &notes), NP_OK);
        free(t);
        free(notes);
    }
    struct np_gpu_telemetry *t = NULL;
    char *notes = NULL;
    size_t n = 0;
    ck_assert_int_eq(np_telemetry_read("0, 1, 2\n", 8, "h", NAN, NAN, &t, &n, &notes), NP_OK);
    ck_assert_str_eq(notes, "h: telemetry without nvidia-smi's CSV header (not read)");
    free(notes);
    free(t);
    /* 5,000 GPUs in one file: the first 1024 kept, the rest said */
    size_t cap = 5000 * 32 + 64, o = 0;
    char *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    o += (size_t)snprintf(big, cap, "index, power.draw [W]\n");
    for (int i = 0; i < 5000; i++)
        o += (size_t)snprintf(big + o, cap - o, "%d, 100\n", i);
    t = NULL, notes = NULL, n = 0;
    ck_assert_int_eq(np_telemetry_read(big, o, "h", NAN, NAN, &t, &n, &notes), NP_OK);
    ck_assert_uint_eq(n, 1024);
    ck_assert_ptr_nonnull(strstr(notes, "3976 telemetry lines not read"));
    free(big);
    free(t);
    free(notes);
}
END_TEST

/* dcgmi dmon: DCGM's short names, the header again mid-file, N/A, the reasons' bitmask, a line of another kind. */
START_TEST(test_dcgm)
{
    size_t len, n = 0;
    char *text = np_test_read_all(D "dmon.dcgm", &len), *notes = NULL;
    struct np_gpu_telemetry *t = NULL;
    ck_assert_int_eq(np_telemetry_read_dcgm(text, len, "d1", &t, &n, &notes), NP_OK);
    free(text);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(t[0].node, "d1");
    ck_assert_int_eq(t[0].index, 0);
    ck_assert_uint_eq(t[0].samples, 4);
    ck_assert_double_eq_tol(t[0].mean_power_w, (650.125 + 651.125 + 652.125) / 3, EPS); /* N/A left out */
    ck_assert_double_eq_tol(t[0].sw_power_cap, 0.25, EPS);                             /* 4 once */
    ck_assert_double_eq_tol(t[0].hw_slowdown, 0.0, EPS);
    ck_assert_int_eq(t[1].index, 1);
    ck_assert_double_eq_tol(t[1].hw_slowdown, 0.5, EPS);         /* 8 and 72 (0x48) */
    ck_assert_double_eq_tol(t[1].thermal, 0.25, EPS);            /* 72 carries 0x40 */
    ck_assert_double_eq_tol(t[1].mean_sm_mhz, (1980.0 + 1410 + 1410 + 1980) / 4, EPS);
    ck_assert_double_eq_tol(t[1].mean_temp_c, (62.0 + 70 + 71 + 64) / 4, EPS);
    ck_assert(isnan(t[1].max_sm_mhz)); /* dcgmi was not asked for it: the snapshot's fills it */
    ck_assert_str_eq(notes, "d1: 1 dcgmi dmon line not read");
    free(t);
    free(notes);
    /* no header: said, nothing read */
    t = NULL, notes = NULL, n = 0;
    ck_assert_int_eq(np_telemetry_read_dcgm("GPU 0 1 2\n", 10, "d2", &t, &n, &notes), NP_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_str_eq(notes, "d2: dcgmi dmon output without its #Entity header (not read)");
    free(t);
    free(notes);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("telemetry");
    TCase *tc = tcase_create("telemetry");
    tcase_add_test(tc, test_time);
    tcase_add_test(tc, test_whole_file);
    tcase_add_test(tc, test_window);
    tcase_add_test(tc, test_old_units);
    tcase_add_test(tc, test_hostile);
    tcase_add_test(tc, test_dcgm);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
