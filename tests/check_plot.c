/* check_plot.c - nemoperf-parse --plot: a 3-point sweep rendered with cairo, then read back as pixels.
 *
 * The PNG is decoded with cairo itself and checked where the layout says things are: the axes are
 * dark, each measured point has its series colour in both panels, a published point is a hollow
 * diamond, nothing is drawn where no data is.  SVG/PDF by extension; bad names and empty input refused.
 */
#include <cairo.h>
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/report/plot.h"
#include "nemoperf/util/dynlib.h"

static struct np_run runs[3];
static struct np_parse_result res;
static char dir[64];
static const int gpus[3] = {8, 16, 32};
static const double tput[3] = {10000, 9000, 7500};
static const double mfu[3] = {60, 54, 45};

static void setup(void)
{
    memset(runs, 0, sizeof runs);
    for (int i = 0; i < 3; i++) {
        struct np_run *r = &runs[i];
        strcpy(r->id.recipe, "llama3.1");
        strcpy(r->id.model_size, "8b");
        strcpy(r->id.gpu_type, "h100");
        r->id.dtype = NP_DTYPE_BF16;
        r->id.gpus = gpus[i];
        r->steady.tokens_per_s_per_gpu = tput[i]; /* the plotted basis: the steady window's mean */
        r->steady.mfu_percent = mfu[i];
        r->m.tokens_per_s_per_gpu = tput[i] * 0.75; /* a slow last step: no point of the curve */
        r->m.mfu_percent = mfu[i] * 0.75;
    }
    res = (struct np_parse_result){.runs = runs, .nruns = 3};
    strcpy(dir, "/tmp/np-check-plot.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    np_plot_cleanup();
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

static size_t files_in_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

/* RGB of pixel (x, y) of an RGB24/ARGB32 image surface. */
static void pixel(cairo_surface_t *s, double fx, double fy, int rgb[3])
{
    int x = (int)floor(fx), y = (int)floor(fy);
    unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    ck_assert(x >= 0 && y >= 0 && x < cairo_image_surface_get_width(s) && y < cairo_image_surface_get_height(s));
    uint32_t px = *(uint32_t *)(data + (size_t)y * stride + (size_t)x * 4);
    rgb[0] = (px >> 16) & 255;
    rgb[1] = (px >> 8) & 255;
    rgb[2] = px & 255;
}

static int near_rgb(const int got[3], const double want[3], int tol)
{
    for (int k = 0; k < 3; k++)
        if (abs(got[k] - (int)lround(want[k] * 255)) > tol)
            return 0;
    return 1;
}

static int dark(const int p[3]) { return p[0] < 80 && p[1] < 80 && p[2] < 80; }
static int white(const int p[3]) { return p[0] > 245 && p[1] > 245 && p[2] > 245; }

START_TEST(png_sweep_pixels)
{
    char file[128];
    snprintf(file, sizeof file, "%s/sweep.png", dir);
    struct np_plot_layout lay;
    struct np_error err;
    ck_assert_int_eq(np_plot_write(file, &res, NULL, &lay, &err), NP_OK);
    ck_assert_int_eq(lay.nseries, 1);
    ck_assert_int_eq(lay.npoints, 3);
    ck_assert_uint_eq(files_in_dir(), 1); /* no temporary file left */

    cairo_surface_t *s = cairo_image_surface_create_from_png(file);
    ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    ck_assert_int_eq(cairo_image_surface_get_width(s), NP_PLOT_WIDTH);
    ck_assert_int_eq(cairo_image_surface_get_height(s), NP_PLOT_HEIGHT);
    int p[3];
    double rgb[3], x, y, x2, y2;
    np_plot_series_rgb(0, rgb);
    for (int panel = 0; panel < 2; panel++) {
        /* y axis at the left edge, x axis at the bottom edge: dark pixels along both */
        for (double f = 0.1; f < 1; f += 0.2) {
            pixel(s, lay.left - 0.5, lay.top[panel] + f * (lay.bottom[panel] - lay.top[panel]), p);
            ck_assert_msg(dark(p), "panel %d: y axis missing at %.0f%% (%d,%d,%d)", panel, f * 100, p[0], p[1], p[2]);
            pixel(s, lay.left + f * (lay.right - lay.left), lay.bottom[panel] - 0.5, p);
            ck_assert_msg(dark(p), "panel %d: x axis missing at %.0f%%", panel, f * 100);
        }
        /* every measured point in the series colour, at equal log2 spacing */
        for (int i = 0; i < 3; i++) {
            np_plot_xy(&lay, panel, gpus[i], panel ? mfu[i] : tput[i], &x, &y);
            pixel(s, x, y, p);
            ck_assert_msg(near_rgb(p, rgb, 8), "panel %d point %d at (%.1f,%.1f): (%d,%d,%d)", panel, i, x, y, p[0],
                          p[1], p[2]);
        }
        np_plot_xy(&lay, panel, 8, 0, &x, &y);
        np_plot_xy(&lay, panel, 16, 0, &x2, &y2);
        double dx = x2 - x;
        np_plot_xy(&lay, panel, 32, 0, &x, &y);
        ck_assert(fabs((x - x2) - dx) < 1e-9 && dx > 50);
        /* a higher value is higher up; 16 GPUs at 0.3 of the panel's range: empty */
        np_plot_xy(&lay, panel, 16, lay.ymax[panel] * 0.3, &x, &y);
        pixel(s, x + 9, y, p); /* beside the vertical grid line */
        ck_assert_msg(white(p), "panel %d: something drawn where no data is (%d,%d,%d)", panel, p[0], p[1], p[2]);
    }
    /* perfect weak scaling: the dashed line at the 8-GPU value continues over 32 GPUs, above the point */
    np_plot_xy(&lay, 0, 32, tput[0], &x, &y);
    int hit = 0;
    for (int dxp = -12; dxp <= 12 && !hit; dxp++) {
        pixel(s, x + dxp, y, p);
        hit = near_rgb(p, rgb, 40);
    }
    ck_assert_msg(hit, "no perfect-scaling line at the 8-GPU value over 32 GPUs");
    cairo_surface_destroy(s);
}
END_TEST

START_TEST(png_reference_points)
{
    struct np_ref_row rows[2];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 2; i++) {
        rows[i].recipe = (char *)"llama3.1";
        rows[i].model_size = (char *)"8b";
        rows[i].gpu_type = (char *)"h100";
        rows[i].dtype = NP_DTYPE_BF16;
        rows[i].gpus = i ? 64 : 16;
        rows[i].tokens_per_s = NAN;
        rows[i].tokens_per_s_per_gpu = 11000;
        rows[i].mfu_percent = 65;
    }
    struct np_ref_table ref = {rows, 2};
    char file[128];
    snprintf(file, sizeof file, "%s/ref.png", dir);
    struct np_plot_layout lay;
    struct np_error err;
    ck_assert_int_eq(np_plot_write(file, &res, &ref, &lay, &err), NP_OK);
    cairo_surface_t *s = cairo_image_surface_create_from_png(file);
    ck_assert_int_eq(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
    double rgb[3], x, y;
    int p[3];
    np_plot_series_rgb(0, rgb);
    /* the published 64-GPU point widens the axis beyond the runs and is a hollow diamond */
    ck_assert(lay.xlog_max > 6);
    np_plot_xy(&lay, 0, 64, 11000, &x, &y);
    pixel(s, x + 3, y, p); /* inside, beside the vertical grid line through its centre */
    ck_assert_msg(white(p), "diamond centre not hollow (%d,%d,%d)", p[0], p[1], p[2]);
    pixel(s, x, y - 6.5, p);
    ck_assert_msg(near_rgb(p, rgb, 60), "diamond top vertex missing (%d,%d,%d)", p[0], p[1], p[2]);
    np_plot_xy(&lay, 1, 64, 65, &x, &y);
    pixel(s, x - 6.5, y, p);
    ck_assert_msg(near_rgb(p, rgb, 60), "MFU diamond left vertex missing (%d,%d,%d)", p[0], p[1], p[2]);
    cairo_surface_destroy(s);
}
END_TEST

static void head(const char *file, char *buf, size_t n)
{
    FILE *f = fopen(file, "rb");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

START_TEST(svg_and_pdf_by_extension)
{
    char file[128], buf[256];
    struct np_error err;
    snprintf(file, sizeof file, "%s/a.SVG", dir);
    ck_assert_int_eq(np_plot_write(file, &res, NULL, NULL, &err), NP_OK);
    head(file, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, "<svg"));
    snprintf(file, sizeof file, "%s/a.pdf", dir);
    ck_assert_int_eq(np_plot_write(file, &res, NULL, NULL, &err), NP_OK);
    head(file, buf, 6);
    ck_assert_str_eq(buf, "%PDF-");
    ck_assert_uint_eq(files_in_dir(), 2);
}
END_TEST

START_TEST(refused_before_writing)
{
    char file[128];
    struct np_error err;
    ck_assert_int_eq(np_plot_kind_of("x.png"), NP_PLOT_PNG);
    ck_assert_int_eq(np_plot_kind_of("x.jpeg"), NP_PLOT_NONE);
    ck_assert_int_eq(np_plot_kind_of("dir.png/x"), NP_PLOT_NONE);
    ck_assert_int_eq(np_plot_kind_of("png"), NP_PLOT_NONE);
    snprintf(file, sizeof file, "%s/a.jpg", dir);
    ck_assert_int_eq(np_plot_write(file, &res, NULL, NULL, &err), NP_E_USAGE);
    ck_assert_ptr_nonnull(strstr(err.text, ".svg, .png or .pdf"));
    /* no run has a throughput: nothing to draw, nothing written */
    for (int i = 0; i < 3; i++)
        runs[i].steady.tokens_per_s_per_gpu = NAN;
    snprintf(file, sizeof file, "%s/a.png", dir);
    ck_assert_int_eq(np_plot_write(file, &res, NULL, NULL, &err), NP_E_NOTFOUND);
    /* a folder that does not exist */
    runs[0].steady.tokens_per_s_per_gpu = 1;
    ck_assert_int_eq(np_plot_write("/nonexistent-np/a.png", &res, NULL, NULL, &err), NP_E_IO);
    ck_assert_uint_eq(files_in_dir(), 0);
}
END_TEST

/* the sweep is drawn on the steady window's basis, as EFF% and --reference: runs with a last step and no steady
 * window are no points (a plot of the last steps would draw them) */
START_TEST(steady_basis)
{
    for (int i = 0; i < 3; i++)
        runs[i].steady.tokens_per_s_per_gpu = NAN;
    char file[128];
    struct np_error err;
    snprintf(file, sizeof file, "%s/basis.png", dir);
    ck_assert_int_eq(np_plot_write(file, &res, NULL, NULL, &err), NP_E_NOTFOUND);
    runs[1].steady.tokens_per_s_per_gpu = 9000;
    struct np_plot_layout lay;
    ck_assert_int_eq(np_plot_write(file, &res, NULL, &lay, &err), NP_OK);
    ck_assert_int_eq(lay.npoints, 1);
}
END_TEST

START_TEST(unknown_mfu_and_many_series)
{
    /* MFU unknown for every run: the picture is still drawn; one run alone still gets a 3-octave axis */
    runs[0].steady.mfu_percent = runs[1].steady.mfu_percent = runs[2].steady.mfu_percent = NAN;
    runs[1].id.gpus = runs[2].id.gpus = 8;
    strcpy(runs[1].id.model_size, "70b");
    strcpy(runs[2].id.recipe, "");
    char file[128];
    struct np_plot_layout lay;
    struct np_error err;
    snprintf(file, sizeof file, "%s/m.png", dir);
    ck_assert_int_eq(np_plot_write(file, &res, NULL, &lay, &err), NP_OK);
    ck_assert_int_eq(lay.nseries, 3);
    ck_assert(lay.xlog_min < 3 && lay.xlog_max > 3 && lay.xlog_max - lay.xlog_min >= 2);
}
END_TEST

/* issue 24: a synthetic sweep says so and draws no published point nor an empty MFU panel; only benchmark
 * runs are points of the curve (a profile run at 64 GPUs is left out) */
START_TEST(synthetic_and_kinds)
{
    for (int i = 0; i < 3; i++) {
        runs[i].id.synthetic = 1;
        runs[i].steady.mfu_percent = NAN;
    }
    struct np_run more[4];
    memcpy(more, runs, sizeof runs);
    more[3] = runs[0];
    more[3].id.gpus = 64;
    more[3].id.kind = NP_KIND_PROFILE;
    struct np_parse_result r4 = {.runs = more, .nruns = 4};
    struct np_ref_row row;
    memset(&row, 0, sizeof row);
    row.recipe = (char *)"llama3.1";
    row.model_size = (char *)"8b";
    row.gpu_type = (char *)"h100";
    row.dtype = NP_DTYPE_BF16;
    row.gpus = 128;
    row.tokens_per_s = NAN;
    row.tokens_per_s_per_gpu = 11000;
    row.mfu_percent = 65;
    struct np_ref_table ref = {&row, 1};
    char file[128];
    snprintf(file, sizeof file, "%s/synth.png", dir);
    struct np_plot_layout lay;
    struct np_error err;
    ck_assert_int_eq(np_plot_write(file, &r4, &ref, &lay, &err), NP_OK);
    ck_assert_int_eq(lay.npoints, 3);   /* the profile run is no point */
    ck_assert(lay.xlog_max < 6);        /* neither it (64) nor the published 128 widens the axis */
    ck_assert_int_eq(lay.synthetic, 1);
    ck_assert_int_eq(lay.mfu_panel, 0); /* no empty MFU panel: the throughput takes the height */
    ck_assert(lay.bottom[0] > 600);
    /* a real run's sweep keeps its MFU panel */
    runs[0].id.synthetic = runs[1].id.synthetic = runs[2].id.synthetic = 0;
    runs[0].steady.mfu_percent = 60;
    ck_assert_int_eq(np_plot_layout_compute(&res, NULL, &lay, &err), NP_OK);
    ck_assert_int_eq(lay.mfu_panel, 1);
    ck_assert_int_eq(lay.synthetic, 0);
}
END_TEST

static const char *bind_none(void *h)
{
    (void)h;
    return NULL;
}

static const char *bind_missing(void *h)
{
    (void)h;
    return "np_no_such_function";
}

/* A library opened on first use (util/dynlib.c) that is not there, or lacks a function: the error names the
 * library, what needs it and the Debian package; asked again, the same answer (opened once, not retried). */
START_TEST(lazy_library_missing)
{
    struct np_dynlib absent = NP_DYNLIB_INIT("libnemoperf-absent.so.9", "nemoperf-absent9", "a test", bind_none);
    struct np_error err = {0};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(np_dynlib_load(&absent, &err), NP_E_NOTFOUND);
        ck_assert_str_eq(err.source, "libnemoperf-absent.so.9");
        ck_assert_msg(strstr(err.text, "cannot load libnemoperf-absent.so.9 (") &&
                          strstr(err.text, "), needed for a test: install the Debian package nemoperf-absent9"),
                      "%s", err.text);
        ck_assert(!np_dynlib_ready(&absent));
        memset(&err, 0, sizeof err);
    }
    struct np_dynlib old = NP_DYNLIB_INIT("libm.so.6", "libc6", "a test", bind_missing);
    ck_assert_int_eq(np_dynlib_load(&old, &err), NP_E_NOTFOUND);
    ck_assert_str_eq(err.text, "libm.so.6 has no np_no_such_function, needed for a test: the Debian package libc6 is "
                               "too old");
    struct np_dynlib there = NP_DYNLIB_INIT("libm.so.6", "libc6", "a test", bind_none);
    ck_assert_int_eq(np_dynlib_load(&there, NULL), NP_OK);
    ck_assert(np_dynlib_ready(&there));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("plot");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, png_sweep_pixels);
    tcase_add_test(tc, png_reference_points);
    tcase_add_test(tc, svg_and_pdf_by_extension);
    tcase_add_test(tc, refused_before_writing);
    tcase_add_test(tc, unknown_mfu_and_many_series);
    tcase_add_test(tc, steady_basis);
    tcase_add_test(tc, synthetic_and_kinds);
    tcase_add_test(tc, lazy_library_missing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
