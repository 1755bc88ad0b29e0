/* check_history.c - the --history plot (src/report/history.c) read back as pixels, and its axes: nine
 * configurations (and a checkpoint-save run of one of them) stored in a SQLite store over eight hours, drawn as PNG,
 * decoded with cairo: every configuration has a legend entry of its own colour (the plot before drew 8 of 9 and gave
 * the ninth the first one's colour); the time axis ticks read differently (hours within a day, dates over weeks:
 * before, every tick of an eight-hour history read the same day); the y ticks are round numbers.  No stand-in.
 */
#include <cairo.h>
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nemoperf/report/history.h"
#include "nemoperf/report/plot.h"
#include "nemoperf/store/store.h"

static void rec(struct np_store_rec *r, int i, const char *config, const char *kind, double tpg, long long t)
{
    memset(r, 0, sizeof *r);
    snprintf(r->run_key, sizeof r->run_key, "test:/runs/%d", i);
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->config_hash, sizeof r->config_hash, "%016x", i);
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    strcpy(r->family, "nemo");
    strcpy(r->status, "ok");
    strcpy(r->cluster, "test");
    r->gpus = 8;
    r->t = t;
    time_t tt = (time_t)t;
    struct tm tm;
    strftime(r->ended, sizeof r->ended, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tt, &tm)); /* as the store writes it */
    r->tokens_per_s_per_gpu = tpg;
    r->step_time_s = 1;
    r->tflops_per_gpu = r->mfu_percent = r->tokens_per_s = r->step_stdev_s = r->busbw_gbs = NAN;
}

static void pixel(cairo_surface_t *s, int x, int y, int rgb[3])
{
    unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    ck_assert(x >= 0 && y >= 0 && x < cairo_image_surface_get_width(s) && y < cairo_image_surface_get_height(s));
    uint32_t v = *(uint32_t *)(void *)(data + (size_t)y * (size_t)stride + (size_t)x * 4);
    rgb[0] = (int)((v >> 16) & 255);
    rgb[1] = (int)((v >> 8) & 255);
    rgb[2] = (int)(v & 255);
}

START_TEST(test_legend_every_configuration)
{
    char dir[] = "/tmp/np-history.XXXXXX", db[256], png[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/r.db", dir);
    snprintf(png, sizeof png, "%s/h.png", dir);
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(db, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    int k = 0;
    for (int c = 0; c < 9; c++)
        for (int j = 0; j < 3; j++) {
            struct np_store_rec r;
            char cfg[64];
            snprintf(cfg, sizeof cfg, "cfg %d", c);
            rec(&r, k++, cfg, "benchmark", 1000 + 100 * c + j, 1795132800LL + j * 4 * 3600 + c * 60);
            ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
        }
    struct np_store_rec r;
    rec(&r, k++, "cfg 0 checkpoint-save", "checkpoint-save", 1000, 1795132800LL + 3 * 3600);
    ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    struct np_store_filter all;
    memset(&all, 0, sizeof all);
    FILE *out = tmpfile();
    long long n = 0;
    ck_assert_msg(np_history_write(s, &all, NP_FMT_CSV, 2.0, png, out, &n, &err) == NP_OK, "%s", err.text);
    fclose(out);
    np_store_close(s);
    np_plot_cleanup(); /* fontconfig's caches: LeakSanitizer counts them otherwise (make sanitize) */
    ck_assert_int_eq(n, 28);
    cairo_surface_t *img = cairo_image_surface_create_from_png(png);
    ck_assert_int_eq(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
    /* the legend: two columns under the frame, a 22-pixel swatch then the name, one row every 16 pixels from 482 */
    int seen[10][3];
    for (int i = 0; i < 10; i++) {
        int x = i % 2 ? (1000 + 20) / 2 + 11 : 20 + 11, y = 482 + 16 * (i / 2) - 4;
        pixel(img, x, y, seen[i]);
        ck_assert_msg(!(seen[i][0] > 240 && seen[i][1] > 240 && seen[i][2] > 240),
                      "legend entry %d of 10 missing (white at %d,%d)", i + 1, x, y);
        for (int j = 0; j < i; j++)
            ck_assert_msg(abs(seen[i][0] - seen[j][0]) + abs(seen[i][1] - seen[j][1]) + abs(seen[i][2] - seen[j][2]) > 40,
                          "legend entries %d and %d share a colour (%d,%d,%d)", j + 1, i + 1, seen[i][0], seen[i][1],
                          seen[i][2]);
    }
    cairo_surface_destroy(img);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_time_ticks_differ)
{
    double at[16];
    char lab[16][24];
    struct {
        double t0, t1;
        const char *first;
    } c[] = {
        {1795132800.0 - 600, 1795132800.0 + 8 * 3600 + 600, "11-20 00:00"}, /* eight hours of one day */
        {1795132800.0, 1795132800.0 + 40 * 86400.0, NULL},                 /* forty days: dates */
        {1795132800.0, 1795132800.0 + 3 * 365 * 86400.0, NULL},           /* three years */
        {1795132800.0 + 100, 1795132800.0 + 700, NULL},                   /* ten minutes */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = np_history_time_ticks(c[i].t0, c[i].t1, at, lab, 16);
        ck_assert_msg(n >= 1 && n <= 7, "case %zu: %zu ticks", i, n);
        if (c[i].first)
            ck_assert_str_eq(lab[0], c[i].first);
        for (size_t k = 0; k < n; k++) {
            ck_assert(at[k] >= c[i].t0 && at[k] <= c[i].t1);
            for (size_t j = 0; j < k; j++)
                ck_assert_msg(strcmp(lab[j], lab[k]) != 0, "case %zu: two ticks read %s", i, lab[k]);
        }
        ck_assert_msg(i == 3 || n >= 2, "case %zu: one tick", i);
        ck_assert_uint_eq(strlen(lab[0]), i == 1 || i == 2 ? 10 : 11); /* "2026-11-26" or "11-20 00:00" */
    }
    ck_assert_int_eq(np_history_time_ticks(5, 5, at, lab, 16), 0);
}
END_TEST

START_TEST(test_round_steps)
{
    ck_assert(fabs(np_history_round_step(11083.0, 5) - 2500) < 1e-9);
    ck_assert(fabs(np_history_round_step(12345.0, 5) - 2500) < 1e-9);
    ck_assert(fabs(np_history_round_step(9.3, 5) - 2) < 1e-9);
    ck_assert(fabs(np_history_round_step(0.37, 5) - 0.1) < 1e-9);
    ck_assert(fabs(np_history_round_step(700, 5) - 200) < 1e-9);
    ck_assert(fabs(np_history_round_step(0, 5) - 1) < 1e-9);
}
END_TEST

/* Read the CSV file f back: up to max lines of up to 16 cells (no quoted comma in these cases but the change). */
static size_t csv_lines(FILE *f, char line[][1024], size_t max)
{
    rewind(f);
    size_t n = 0;
    while (n < max && fgets(line[n], 1024, f)) {
        line[n][strcspn(line[n], "\n")] = '\0';
        n++;
    }
    return n;
}

/* --history --group: one line per configuration that has a counted run, from the same change points as the listing.
 * "cfg a": 12 runs at 1000 tokens/s/GPU then 6 at 900 (10 % slower) from a container change; "cfg b": two
 * counted runs and a newer failed one (not counted: its figures never stand for the configuration); "cfg c": a
 * failed run only (no line).  Each run's step time differs, so the line's figures say which run they are. */
START_TEST(test_group_one_line_per_configuration)
{
    char dir[] = "/tmp/np-history.XXXXXX", db[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/r.db", dir);
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(db, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    const long long t0 = 1795132800LL; /* 2026-11-20T00:00:00Z */
    int k = 0;
    for (int j = 0; j < 18; j++) {
        struct np_store_rec r;
        rec(&r, k++, "cfg a", "benchmark", (j < 12 ? 1000 : 900) + (j % 3) - 1, t0 + j * 86400LL);
        r.step_time_s = 10 + j;
        strcpy(r.container_tag, j < 12 ? "25.02" : "25.04");
        ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
    }
    for (int j = 0; j < 3; j++) {
        struct np_store_rec r;
        rec(&r, k++, "cfg b", "checkpoint-save", 500 + j, t0 + 3600LL * (j + 1));
        r.step_time_s = 2 + j;
        if (j == 2)
            strcpy(r.status, "failed");
        ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
    }
    struct np_store_rec r;
    rec(&r, k++, "cfg c", "benchmark", 700, t0);
    strcpy(r.status, "failed");
    ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    struct np_store_filter all;
    memset(&all, 0, sizeof all);
    FILE *g = tmpfile(), *l = tmpfile();
    long long n = 0, nl = 0;
    ck_assert_msg(np_history_write_group(s, &all, NP_FMT_CSV, 2.0, NULL, g, &n, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_history_write(s, &all, NP_FMT_CSV, 2.0, NULL, l, &nl, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(n, 20); /* the counted runs: 18 + 2 */
    ck_assert_int_eq(nl, 22); /* the listing: every run selected */
    static char line[32][1024];
    size_t nline = csv_lines(g, line, 32);
    ck_assert_uint_eq(nline, 3);
    ck_assert_str_eq(line[0], "config,family,kind,runs,first,newest,newest_steady_step_time_s,"
                              "newest_steady_tokens_per_s_per_gpu,newest_steady_mfu_percent,newest_busbw_gbs,"
                              "change_points,newest_change_at,newest_change");
    /* cfg a: 18 runs, 2026-11-20 .. 2026-12-07, the newest run's step time (27 s) and throughput (900 + 17 % 3 - 1) */
    const char *a = "\"cfg a\",\"nemo\",\"benchmark\",18,2026-11-20T00:00:00Z,2026-12-07T00:00:00Z,27.000,901.0,n/a,n/a,1,"
                    "2026-12-02,\"SLOWER ";
    ck_assert_msg(strncmp(line[1], a, strlen(a)) == 0, "%s", line[1]);
    ck_assert_msg(strstr(line[1], " container 25.02 -> 25.04\"") != NULL, "%s", line[1]);
    /* cfg b: the failed newest run does not count; the line's figures are the second run's */
    ck_assert_str_eq(line[2], "\"cfg b\",\"nemo\",\"checkpoint-save\",2,2026-11-20T01:00:00Z,2026-11-20T02:00:00Z,3.000,"
                              "501.0,n/a,n/a,0,,\"\"");
    /* the listing's change point is the same one, on the run the group line dates */
    char chg[300];
    const char *q = strstr(line[1], ",\"SLOWER ");
    ck_assert_ptr_nonnull(q);
    snprintf(chg, sizeof chg, "%s", q + 1);
    nline = csv_lines(l, line, 32);
    ck_assert_uint_eq(nline, 23);
    int found = 0;
    for (size_t i = 1; i < nline; i++)
        if (strstr(line[i], ",\"SLOWER ")) {
            found++;
            ck_assert_msg(strncmp(line[i], "2026-12-02T", 11) == 0, "%s", line[i]);
            ck_assert_msg(strcmp(strstr(line[i], ",\"SLOWER ") + 1, chg) == 0, "%s against %s", line[i], chg);
        }
    ck_assert_int_eq(found, 1);
    fclose(g);
    fclose(l);
    /* JSON: the same lines, one document */
    char *buf = NULL;
    size_t len = 0;
    FILE *j = open_memstream(&buf, &len);
    ck_assert_int_eq(np_history_write_group(s, &all, NP_FMT_JSON, 2.0, NULL, j, &n, &err), NP_OK);
    fclose(j);
    json_error_t je;
    json_t *d = json_loads(buf, 0, &je);
    ck_assert_msg(d != NULL, "%s: %s", je.text, buf);
    ck_assert_int_eq(json_integer_value(json_object_get(d, "runs")), 20);
    ck_assert_int_eq(json_integer_value(json_object_get(d, "change_points")), 1);
    json_t *c = json_object_get(d, "configurations");
    ck_assert_uint_eq(json_array_size(c), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(c, 1), "kind")), "checkpoint-save");
    ck_assert(json_is_null(json_object_get(json_array_get(c, 1), "newest_change")));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(c, 0), "newest_change"), "at")),
                     "2026-12-02");
    json_decref(d);
    free(buf);
    /* a selection without a counted run: no line, 0 runs */
    all.config = "cfg c";
    FILE *e = tmpfile();
    ck_assert_int_eq(np_history_write_group(s, &all, NP_FMT_CSV, 2.0, NULL, e, &n, &err), NP_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_uint_eq(csv_lines(e, line, 32), 1);
    fclose(e);
    np_store_close(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("history");
    TCase *tc = tcase_create("history");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_legend_every_configuration);
    tcase_add_test(tc, test_time_ticks_differ);
    tcase_add_test(tc, test_round_steps);
    tcase_add_test(tc, test_group_one_line_per_configuration);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
