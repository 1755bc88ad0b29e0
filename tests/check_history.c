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
#include <unistd.h>

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
    r->tokens_per_s_per_gpu = tpg;
    r->step_time_s = 1;
    r->tflops_per_gpu = r->mfu_percent = r->tokens_per_s = r->step_stdev_s = NAN;
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

int main(void)
{
    Suite *su = suite_create("history");
    TCase *tc = tcase_create("history");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_legend_every_configuration);
    tcase_add_test(tc, test_time_ticks_differ);
    tcase_add_test(tc, test_round_steps);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
