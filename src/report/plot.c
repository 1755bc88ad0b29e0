/* plot.c - nemoperf-parse --plot: a scaling sweep as a picture, drawn with cairo.
 *
 * Two panels over one log2 GPU-count axis: tokens/s per GPU and MFU.  One colour per
 * configuration (recipe, size, dtype, GPU type): measured runs as filled dots joined by a
 * line, published points (--reference) as hollow diamonds, and a dashed line for perfect
 * weak scaling (the smallest run's per-GPU value held flat).  Reads runs through run.h only.
 * Also --nccl's message size histogram: grouped bars of calls over a log2 size axis.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>


#include "nemoperf/report/plot.h"
#include "nemoperf/report/cairo_dyn.h"

#define PLOT_MAX_SERIES 64
#define PLOT_FONT "DejaVu Sans"

struct plot_point {
    double gpus, tput, mfu; /* mfu NAN when unknown */
};

struct plot_series {
    char recipe[64], size[64], gpu[16];
    char prec[12], container[16]; /* a family's own precision name and container (Megatron-Bridge), "" */
    enum np_dtype dtype;
    int synthetic;         /* runs of the synthetic CPU workload: said in the legend, no published points */
    struct plot_point *pts, *ref;
    size_t n, nref, cap, capref;
};

struct plot_data {
    struct plot_series s[PLOT_MAX_SERIES];
    int ns;
    int dropped; /* configurations beyond PLOT_MAX_SERIES */
};

enum np_plot_kind np_plot_kind_of(const char *file)
{
    const char *dot = file ? strrchr(file, '.') : NULL;
    if (!dot || strchr(dot, '/'))
        return NP_PLOT_NONE;
    if (strcasecmp(dot, ".svg") == 0)
        return NP_PLOT_SVG;
    if (strcasecmp(dot, ".png") == 0)
        return NP_PLOT_PNG;
    if (strcasecmp(dot, ".pdf") == 0)
        return NP_PLOT_PDF;
    return NP_PLOT_NONE;
}

void np_plot_series_rgb(int i, double rgb[3])
{
    /* distinct on white and for common colour-vision deficiencies (Okabe-Ito, then darker tones) */
    static const unsigned char pal[][3] = {{0, 114, 178}, {213, 94, 0},  {0, 158, 115}, {204, 121, 167},
                                           {86, 180, 233}, {230, 159, 0}, {120, 60, 160}, {100, 100, 100}};
    const unsigned char *c = pal[(i < 0 ? 0 : i) % (int)(sizeof pal / sizeof pal[0])];
    for (int k = 0; k < 3; k++)
        rgb[k] = c[k] / 255.0;
}

static int plot_push(struct plot_point **v, size_t *n, size_t *cap, struct plot_point p)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        struct plot_point *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = p;
    return 0;
}

static int plot_cmp_point(const void *a, const void *b)
{
    const struct plot_point *x = a, *y = b;
    return (x->gpus > y->gpus) - (x->gpus < y->gpus);
}

static void plot_data_free(struct plot_data *d)
{
    for (int i = 0; i < d->ns; i++) {
        free(d->s[i].pts);
        free(d->s[i].ref);
    }
    d->ns = 0;
}

static struct plot_series *plot_series_for(struct plot_data *d, const struct np_identity *id)
{
    for (int i = 0; i < d->ns; i++) {
        struct plot_series *s = &d->s[i];
        if (!strcmp(s->recipe, id->recipe) && !strcmp(s->size, id->model_size) && !strcmp(s->gpu, id->gpu_type) &&
            s->dtype == id->dtype && s->synthetic == id->synthetic && !strcmp(s->prec, id->precision) &&
            !strcmp(s->container, id->container))
            return s;
    }
    if (d->ns == PLOT_MAX_SERIES) {
        d->dropped++;
        return NULL;
    }
    struct plot_series *s = &d->s[d->ns++];
    memset(s, 0, sizeof *s);
    snprintf(s->recipe, sizeof s->recipe, "%s", id->recipe);
    snprintf(s->size, sizeof s->size, "%s", id->model_size);
    snprintf(s->gpu, sizeof s->gpu, "%s", id->gpu_type);
    snprintf(s->prec, sizeof s->prec, "%s", id->precision);
    snprintf(s->container, sizeof s->container, "%s", id->container);
    s->dtype = id->dtype;
    s->synthetic = id->synthetic;
    return s;
}

/* Series from the runs (measured) and the reference rows of the same configurations. */
static enum np_status plot_collect(const struct np_parse_result *res, const struct np_ref_table *ref,
                                   struct plot_data *d)
{
    memset(d, 0, sizeof *d);
    for (size_t i = 0; res && i < res->nruns; i++) {
        const struct np_run *r = &res->runs[i];
        /* the steady window's mean, as EFF% and --reference (not the last step: one slow last step is no
         * scaling loss) */
        double t = r->steady.tokens_per_s_per_gpu;
        /* benchmark runs only: a profile, trace or checkpoint run is no point of a scaling curve */
        if (r->id.kind != NP_KIND_BENCHMARK || r->id.gpus <= 0 || !isfinite(t) || t <= 0)
            continue;
        struct plot_series *s = plot_series_for(d, &r->id);
        if (!s)
            continue;
        double mfu = isfinite(r->steady.mfu_percent) && r->steady.mfu_percent >= 0 ? r->steady.mfu_percent : NAN;
        if (plot_push(&s->pts, &s->n, &s->cap, (struct plot_point){r->id.gpus, t, mfu}) != 0)
            return NP_E_NOMEM;
        /* a row published in a layout of its own (Megatron-Bridge) is not in the reference tables: the run's */
        const struct np_ref_row *p = r->ref;
        int seen = 0;
        for (size_t k = 0; p && p->layout && k < s->nref && !seen; k++)
            seen = s->ref[k].gpus == p->gpus;
        if (ref && p && p->layout && !seen && isfinite(p->tokens_per_s_per_gpu) &&
            plot_push(&s->ref, &s->nref, &s->capref, (struct plot_point){p->gpus, p->tokens_per_s_per_gpu, NAN}) != 0)
            return NP_E_NOMEM;
    }
    for (int k = 0; ref && k < d->ns; k++) {
        struct plot_series *s = &d->s[k];
        for (size_t i = 0; !s->synthetic && i < ref->n; i++) {
            const struct np_ref_row *row = &ref->rows[i];
            if (!row->recipe || !row->model_size || !row->gpu_type || row->gpus <= 0 || row->dtype != s->dtype ||
                strcasecmp(row->recipe, s->recipe) || strcasecmp(row->model_size, s->size) ||
                strcasecmp(row->gpu_type, s->gpu))
                continue;
            double t = isfinite(row->tokens_per_s_per_gpu) ? row->tokens_per_s_per_gpu
                       : isfinite(row->tokens_per_s)      ? row->tokens_per_s / row->gpus
                                                          : NAN;
            if (!isfinite(t) || t <= 0)
                continue;
            double mfu = isfinite(row->mfu_percent) ? row->mfu_percent : NAN;
            if (plot_push(&s->ref, &s->nref, &s->capref, (struct plot_point){row->gpus, t, mfu}) != 0)
                return NP_E_NOMEM;
        }
    }
    for (int k = 0; k < d->ns; k++) {
        qsort(d->s[k].pts, d->s[k].n, sizeof *d->s[k].pts, plot_cmp_point);
        if (d->s[k].nref)
            qsort(d->s[k].ref, d->s[k].nref, sizeof *d->s[k].ref, plot_cmp_point);
    }
    return NP_OK;
}

/* A round number >= v*1.1 that splits into at most 6 round steps; *step gets the step. */
static double plot_nice_max(double v, double *step)
{
    if (!(v > 0))
        v = 1;
    double raw = v * 1.1, mag = pow(10, floor(log10(raw / 6)));
    static const double mult[] = {1, 2, 2.5, 5, 10};
    double st = mag * 10;
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
        if (raw / (mag * mult[i]) <= 6) {
            st = mag * mult[i];
            break;
        }
    *step = st;
    return ceil(raw / st) * st;
}

static void plot_layout_from(const struct plot_data *d, struct np_plot_layout *lay)
{
    double gmin = INFINITY, gmax = 0, ymax[2] = {0, 0};
    int npts = 0;
    for (int k = 0; k < d->ns; k++) {
        const struct plot_series *s = &d->s[k];
        for (int pass = 0; pass < 2; pass++) {
            const struct plot_point *p = pass ? s->ref : s->pts;
            size_t n = pass ? s->nref : s->n;
            for (size_t i = 0; i < n; i++) {
                gmin = fmin(gmin, p[i].gpus);
                gmax = fmax(gmax, p[i].gpus);
                ymax[0] = fmax(ymax[0], p[i].tput);
                if (isfinite(p[i].mfu))
                    ymax[1] = fmax(ymax[1], p[i].mfu);
                npts += !pass;
            }
        }
    }
    double lo = floor(log2(gmin)), hi = ceil(log2(gmax));
    if (hi - lo < 2) { /* at least three powers of two on the axis */
        double need = 2 - (hi - lo);
        lo -= floor(need / 2);
        hi += need - floor(need / 2);
    }
    double step;
    lay->mfu_panel = ymax[1] > 0;
    lay->synthetic = 0;
    for (int k = 0; k < d->ns; k++)
        lay->synthetic |= d->s[k].synthetic;
    lay->left = 96;
    lay->right = NP_PLOT_WIDTH - 280;
    lay->top[0] = 64;
    lay->bottom[0] = lay->mfu_panel ? 356 : 690;
    lay->top[1] = lay->mfu_panel ? 420 : 690;
    lay->bottom[1] = 690;
    lay->xlog_min = lo - 0.35;
    lay->xlog_max = hi + 0.35;
    lay->ymax[0] = plot_nice_max(ymax[0], &step);
    lay->ymax[1] = plot_nice_max(ymax[1] > 0 ? ymax[1] : 50, &step);
    lay->nseries = d->ns;
    lay->npoints = npts;
}

void np_plot_xy(const struct np_plot_layout *lay, int panel, double gpus, double value, double *x, double *y)
{
    panel = panel == NP_PLOT_PANEL_MFU;
    double fx = (log2(gpus) - lay->xlog_min) / (lay->xlog_max - lay->xlog_min);
    double fy = value / lay->ymax[panel];
    *x = lay->left + fx * (lay->right - lay->left);
    *y = lay->bottom[panel] - fy * (lay->bottom[panel] - lay->top[panel]);
}

enum np_status np_plot_layout_compute(const struct np_parse_result *res, const struct np_ref_table *ref,
                                      struct np_plot_layout *lay, struct np_error *err)
{
    struct plot_data d;
    enum np_status st = plot_collect(res, ref, &d);
    if (st != NP_OK) {
        plot_data_free(&d);
        return np_error_set(err, st, "--plot", 0, 0, "out of memory");
    }
    int none = d.ns == 0;
    if (!none)
        plot_layout_from(&d, lay);
    plot_data_free(&d);
    if (none)
        return np_error_set(err, NP_E_NOTFOUND, "--plot", 0, 0,
                            "no run has a GPU count and a throughput to plot");
    return NP_OK;
}

/* ---- drawing ---- */

static void plot_text(cairo_t *cr, double x, double y, double size, int bold, double align, const char *s)
{
    cairo_select_font_face(cr, PLOT_FONT, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - align * e.x_advance, y);
    cairo_show_text(cr, s);
}

/* Tick label; "1.25M" on an axis that reaches a million, "12k" on one that reaches 10000. */
static void plot_fmt(char *buf, size_t size, double v, double axis_max)
{
    if (axis_max >= 1e6 && v > 0)
        snprintf(buf, size, "%gM", v / 1e6);
    else if (axis_max >= 10000 && v > 0 && fmod(v, 100) == 0)
        snprintf(buf, size, "%gk", v / 1000);
    else
        snprintf(buf, size, "%g", v);
}

static void plot_axes(cairo_t *cr, const struct np_plot_layout *lay, int panel, const char *title)
{
    double step, top = lay->top[panel], bot = lay->bottom[panel];
    plot_nice_max(lay->ymax[panel] / 1.1, &step);
    char buf[32];
    cairo_set_line_width(cr, 1);
    for (double v = 0; v <= lay->ymax[panel] + step / 2; v += step) {
        double x, y;
        np_plot_xy(lay, panel, pow(2, lay->xlog_min), v, &x, &y);
        y = floor(y) + 0.5;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, lay->left, y);
        cairo_line_to(cr, lay->right, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        plot_fmt(buf, sizeof buf, v, lay->ymax[panel]);
        plot_text(cr, lay->left - 8, y + 4, 12, 0, 1, buf);
    }
    for (double k = ceil(lay->xlog_min); k <= lay->xlog_max; k++) {
        double x, y;
        np_plot_xy(lay, panel, pow(2, k), 0, &x, &y);
        x = floor(x) + 0.5;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bot);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        snprintf(buf, sizeof buf, "%.0f", pow(2, k));
        plot_text(cr, x, bot + 18, 12, 0, 0.5, buf);
    }
    /* the axes: 2 px wide, covering the pixel rows/columns just inside left and bottom */
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 2);
    cairo_move_to(cr, lay->left, top);
    cairo_line_to(cr, lay->left, bot);
    cairo_line_to(cr, lay->right, bot);
    cairo_stroke(cr);
    cairo_save(cr);
    cairo_move_to(cr, 0, 0);
    cairo_translate(cr, 28, (top + bot) / 2);
    cairo_rotate(cr, -M_PI / 2);
    plot_text(cr, 0, 0, 14, 0, 0.5, title);
    cairo_restore(cr);
}

static void plot_marker(cairo_t *cr, double x, double y, int hollow)
{
    if (hollow) { /* published: a hollow diamond */
        cairo_move_to(cr, x, y - 7);
        cairo_line_to(cr, x + 7, y);
        cairo_line_to(cr, x, y + 7);
        cairo_line_to(cr, x - 7, y);
        cairo_close_path(cr);
        cairo_set_line_width(cr, 2);
        cairo_stroke(cr);
        return;
    }
    cairo_arc(cr, x, y, 5.5, 0, 2 * M_PI);
    cairo_fill(cr);
}

static void plot_series_label(const struct plot_series *s, char *buf, size_t size)
{
    if (!*s->recipe && !*s->size)
        snprintf(buf, size, "unidentified runs");
    else if (*s->prec) /* Megatron-Bridge: the -mr name carries the size; its precision and container */
        snprintf(buf, size, "%s %s %s%s%s%s", s->recipe, s->prec, *s->gpu ? s->gpu : "?", *s->container ? " " : "",
                 s->container, s->synthetic ? " (synthetic)" : "");
    else
        snprintf(buf, size, "%s %s %s %s%s", *s->recipe ? s->recipe : "?", *s->size ? s->size : "?",
                 s->dtype ? np_dtype_name(s->dtype, 1) : "?", *s->gpu ? s->gpu : "?",
                 s->synthetic ? " (synthetic)" : "");
}

static void plot_panel(cairo_t *cr, const struct np_plot_layout *lay, const struct plot_data *d, int panel)
{
    static const double dash[] = {7, 5};
    for (int k = 0; k < d->ns; k++) {
        const struct plot_series *s = &d->s[k];
        double rgb[3], x, y, x2, y2;
        np_plot_series_rgb(k, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        /* perfect weak scaling: the smallest measured run's per-GPU value, flat */
        const struct plot_point *base = NULL;
        for (size_t i = 0; i < s->n && !base; i++)
            if (panel == 0 || isfinite(s->pts[i].mfu))
                base = &s->pts[i];
        double gmax = s->n ? s->pts[s->n - 1].gpus : 0;
        if (s->nref)
            gmax = fmax(gmax, s->ref[s->nref - 1].gpus);
        if (base && gmax > base->gpus) {
            double v = panel ? base->mfu : base->tput;
            np_plot_xy(lay, panel, base->gpus, v, &x, &y);
            np_plot_xy(lay, panel, gmax, v, &x2, &y2);
            cairo_set_dash(cr, dash, 2, 0);
            cairo_set_line_width(cr, 1.5);
            cairo_move_to(cr, x, y);
            cairo_line_to(cr, x2, y2);
            cairo_stroke(cr);
            cairo_set_dash(cr, NULL, 0, 0);
        }
        for (size_t i = 0; i < s->nref; i++) {
            double v = panel ? s->ref[i].mfu : s->ref[i].tput;
            if (!isfinite(v))
                continue;
            np_plot_xy(lay, panel, s->ref[i].gpus, v, &x, &y);
            plot_marker(cr, x, y, 1);
        }
        int started = 0;
        cairo_set_line_width(cr, 2);
        for (size_t i = 0; i < s->n; i++) {
            double v = panel ? s->pts[i].mfu : s->pts[i].tput;
            if (!isfinite(v))
                continue;
            np_plot_xy(lay, panel, s->pts[i].gpus, v, &x, &y);
            if (started)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y);
            started = 1;
        }
        if (started)
            cairo_stroke(cr);
        for (size_t i = 0; i < s->n; i++) {
            double v = panel ? s->pts[i].mfu : s->pts[i].tput;
            if (!isfinite(v))
                continue;
            np_plot_xy(lay, panel, s->pts[i].gpus, v, &x, &y);
            plot_marker(cr, x, y, 0);
        }
    }
}

static void plot_legend(cairo_t *cr, const struct np_plot_layout *lay, const struct plot_data *d, int with_ref)
{
    static const double dash[] = {7, 5};
    double x = lay->right + 30, y = lay->top[0] + 6;
    char buf[200];
    cairo_set_source_rgb(cr, 0, 0, 0);
    plot_text(cr, x, y, 13, 1, 0, "configuration");
    y += 24;
    for (int k = 0; k < d->ns && y < NP_PLOT_HEIGHT - 150; k++) {
        double rgb[3];
        np_plot_series_rgb(k, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_set_line_width(cr, 2);
        cairo_move_to(cr, x, y - 4);
        cairo_line_to(cr, x + 24, y - 4);
        cairo_stroke(cr);
        plot_marker(cr, x + 12, y - 4, 0);
        cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        plot_series_label(&d->s[k], buf, sizeof buf);
        plot_text(cr, x + 32, y, 12, 0, 0, buf);
        y += 20;
    }
    if (d->dropped) {
        snprintf(buf, sizeof buf, "(%d more not drawn)", d->dropped);
        plot_text(cr, x, y, 11, 0, 0, buf);
        y += 20;
    }
    y += 14;
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    plot_marker(cr, x + 12, y - 4, 0);
    plot_text(cr, x + 32, y, 12, 0, 0, "measured run");
    y += 22;
    if (with_ref) {
        plot_marker(cr, x + 12, y - 4, 1);
        plot_text(cr, x + 32, y, 12, 0, 0, "published (NVIDIA)");
        y += 22;
    }
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_line_width(cr, 1.5);
    cairo_move_to(cr, x, y - 4);
    cairo_line_to(cr, x + 24, y - 4);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    plot_text(cr, x + 32, y, 12, 0, 0, "perfect weak scaling");
    plot_text(cr, x + 32, y + 16, 11, 0, 0, "(smallest run's value per GPU)");
}

static void plot_draw(cairo_t *cr, const struct np_plot_layout *lay, const struct plot_data *d, int with_ref)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    /* the title names the model (one configuration) and says what cannot be read as a GPU figure */
    char title[240], label[160];
    if (d->ns == 1)
        plot_series_label(&d->s[0], label, sizeof label);
    else
        snprintf(label, sizeof label, "%d configurations", d->ns);
    snprintf(title, sizeof title, "%s: tokens/s per GPU%s against GPU count", label, lay->mfu_panel ? " and MFU" : "");
    plot_text(cr, lay->left, 26, 17, 1, 0, title);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    plot_text(cr, lay->left, 46, 12, 0, 0,
              lay->synthetic ? "synthetic workload: CPU work standing in for GPU jobs, not GPU throughput; no MFU"
              : lay->mfu_panel ? "benchmark runs only"
                               : "benchmark runs only; no MFU: model FLOPs or GPU peak unknown");
    plot_axes(cr, lay, 0, "tokens/s per GPU (steady-window mean)");
    plot_panel(cr, lay, d, 0);
    if (lay->mfu_panel) {
        plot_axes(cr, lay, 1, "MFU (%, steady-window mean)");
        plot_panel(cr, lay, d, 1);
    }
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    plot_text(cr, (lay->left + lay->right) / 2, NP_PLOT_HEIGHT - 30, 14, 0, 0.5, "GPUs (log2 scale)");
    plot_legend(cr, lay, d, with_ref);
}

static cairo_status_t plot_write_fn(void *closure, const unsigned char *data, unsigned int length)
{
    return fwrite(data, 1, length, closure) == length ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* Draw into f with draw(cr, ctx); cairo status of the surface. */
static cairo_status_t plot_render(FILE *f, enum np_plot_kind kind, void (*draw)(cairo_t *, const void *),
                                  const void *ctx)
{
    cairo_surface_t *sf;
    if (kind == NP_PLOT_PNG)
        sf = cairo_image_surface_create(CAIRO_FORMAT_RGB24, NP_PLOT_WIDTH, NP_PLOT_HEIGHT);
    else if (kind == NP_PLOT_SVG)
        sf = cairo_svg_surface_create_for_stream(plot_write_fn, f, NP_PLOT_WIDTH, NP_PLOT_HEIGHT);
    else
        sf = cairo_pdf_surface_create_for_stream(plot_write_fn, f, NP_PLOT_WIDTH, NP_PLOT_HEIGHT);
    cairo_t *cr = cairo_create(sf);
    draw(cr, ctx);
    cairo_status_t cst = cairo_status(cr);
    cairo_destroy(cr);
    if (cst == CAIRO_STATUS_SUCCESS && kind == NP_PLOT_PNG)
        cst = cairo_surface_write_to_png_stream(sf, plot_write_fn, f);
    cairo_surface_finish(sf);
    if (cst == CAIRO_STATUS_SUCCESS)
        cst = cairo_surface_status(sf);
    cairo_surface_destroy(sf);
    return cst;
}

/* Render into a temporary file beside file, renamed over it when complete. */
static enum np_status plot_file(const char *file, enum np_plot_kind kind, void (*draw)(cairo_t *, const void *),
                                const void *ctx, struct np_error *err)
{
    enum np_status lst = np_cairo_load(err); /* every plot is drawn here */
    if (lst != NP_OK)
        return lst;
    size_t len = strlen(file);
    char *tmp = malloc(len + 32);
    if (!tmp)
        return np_error_set(err, NP_E_NOMEM, file, 0, 0, "out of memory");
    const char *slash = strrchr(file, '/');
    size_t dirlen = slash ? (size_t)(slash - file) + 1 : 0;
    snprintf(tmp, len + 32, "%.*s.%s.tmp.XXXXXX", (int)dirlen, file, file + dirlen);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return np_error_set(err, NP_E_IO, file, 0, 0, "cannot create a file in its folder: %s", strerror(e));
    }
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    FILE *f = fdopen(fd, "wb");
    cairo_status_t cst = f ? plot_render(f, kind, draw, ctx) : CAIRO_STATUS_WRITE_ERROR;
    int ioerr = !f || ferror(f);
    if (f ? fclose(f) != 0 : close(fd) != 0)
        ioerr = 1;
    if (cst != CAIRO_STATUS_SUCCESS || ioerr || rename(tmp, file) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        if (cst != CAIRO_STATUS_SUCCESS)
            return np_error_set(err, NP_E_IO, file, 0, 0, "drawing failed: %s", cairo_status_to_string(cst));
        return np_error_set(err, NP_E_IO, file, 0, 0, "cannot write: %s", strerror(e));
    }
    free(tmp);
    return NP_OK;
}

struct plot_sweep {
    const struct np_plot_layout *lay;
    const struct plot_data *d;
    int with_ref;
};

static void plot_draw_sweep(cairo_t *cr, const void *ctx)
{
    const struct plot_sweep *sw = ctx;
    plot_draw(cr, sw->lay, sw->d, sw->with_ref);
}

void np_plot_cleanup(void)
{
    if (!np_dynlib_ready(&np_cairo_lib))
        return; /* no plot drawn: cairo was never opened */
    cairo_debug_reset_static_data();
    FcFini();
}

enum np_status np_plot_write(const char *file, const struct np_parse_result *res, const struct np_ref_table *ref,
                             struct np_plot_layout *lay, struct np_error *err)
{
    enum np_plot_kind kind = np_plot_kind_of(file);
    if (kind == NP_PLOT_NONE)
        return np_error_set(err, NP_E_USAGE, "--plot", 0, 0, "'%s': the name must end in .svg, .png or .pdf",
                            file ? file : "");
    struct plot_data d;
    enum np_status st = plot_collect(res, ref, &d);
    if (st != NP_OK) {
        plot_data_free(&d);
        return np_error_set(err, st, file, 0, 0, "out of memory");
    }
    if (d.ns == 0) { /* --plot applies to none of the runs: say why of each (the first three) */
        char why[400] = "";
        size_t at = 0;
        for (size_t i = 0; res && i < res->nruns && i < 3 && at < sizeof why; i++) {
            const struct np_run *r = &res->runs[i];
            const char *b = r->path ? strrchr(r->path, '/') : NULL;
            int k = snprintf(why + at, sizeof why - at, "%s%s: %s", i ? "; " : "", b ? b + 1 : r->path ? r->path : "?",
                             r->id.kind != NP_KIND_BENCHMARK ? np_run_kind_why(r->id.kind)
                             : r->id.gpus <= 0             ? "GPU count unknown"
                                                           : "no steady-window throughput (its status)");
            at += k > 0 ? (size_t)k : 0;
        }
        return np_error_set(err, NP_E_NOTFOUND, file, 0, 0, "no run can be drawn: a sweep shows benchmark runs with a GPU count and a steady-window throughput (%zu run%s: %s%s)",
                            res ? res->nruns : 0, res && res->nruns == 1 ? "" : "s", why,
                            res && res->nruns > 3 ? "; ..." : "");
    }
    struct np_plot_layout l;
    plot_layout_from(&d, &l);
    if (lay)
        *lay = l;

    int with_ref = 0; /* the legend names published points only where some are drawn */
    for (int k = 0; k < d.ns; k++)
        with_ref |= d.s[k].nref > 0;
    struct plot_sweep sw = {&l, &d, with_ref};
    st = plot_file(file, kind, plot_draw_sweep, &sw, err);
    plot_data_free(&d);
    return st;
}

/* ---- the NCCL message size histogram ---- */

struct plot_hist_ctx {
    const char *title;
    const struct np_plot_hist *s;
    size_t n;
    int b0, b1;       /* buckets shown */
    double ymax, step;
};

static void plot_hist_draw(cairo_t *cr, const void *ctx)
{
    const struct plot_hist_ctx *h = ctx;
    const double L = 90, R = NP_PLOT_WIDTH - 30, T = 70, B = NP_PLOT_HEIGHT - 90;
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    plot_text(cr, NP_PLOT_WIDTH / 2.0, 36, 18, 1, 0.5, h->title);
    char buf[32];
    cairo_set_line_width(cr, 1);
    for (double v = 0; v <= h->ymax + h->step / 2; v += h->step) { /* grid and y ticks */
        double y = B - (B - T) * v / h->ymax;
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85);
        cairo_move_to(cr, L, y);
        cairo_line_to(cr, R, y);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        plot_fmt(buf, sizeof buf, v, h->ymax);
        plot_text(cr, L - 8, y + 4, 12, 0, 1, buf);
    }
    plot_text(cr, 20, T - 12, 13, 0, 0, "calls");
    int nb = h->b1 - h->b0 + 1;
    double slot = (R - L) / nb, bw = slot * 0.8 / (double)(h->n ? h->n : 1);
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    for (int b = h->b0; b <= h->b1; b++) {
        double x0 = L + slot * (b - h->b0);
        snprintf(buf, sizeof buf, "%d %s", 1 << (b % 10), unit[b / 10 < 7 ? b / 10 : 6]);
        cairo_set_source_rgb(cr, 0, 0, 0);
        if ((b - h->b0) % ((nb + 15) / 16) == 0) /* at most 16 labels */
            plot_text(cr, x0 + slot / 2, B + 18, 11, 0, 0.5, buf);
        for (size_t i = 0; i < h->n; i++) {
            double v = (double)h->s[i].counts[b], rgb[3];
            if (v <= 0)
                continue;
            np_plot_series_rgb((int)i, rgb);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            double y = B - (B - T) * v / h->ymax;
            cairo_rectangle(cr, x0 + slot * 0.1 + bw * (double)i, y, bw, B - y);
            cairo_fill(cr);
        }
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_move_to(cr, L, B);
    cairo_line_to(cr, R, B);
    cairo_move_to(cr, L, B);
    cairo_line_to(cr, L, T);
    cairo_stroke(cr);
    plot_text(cr, (L + R) / 2, B + 44, 13, 0, 0.5, "message size (count x datatype width), power-of-two buckets");
    for (size_t i = 0; i < h->n && i < 16; i++) { /* legend */
        double rgb[3], y = T + 8 + 18 * (double)i;
        np_plot_series_rgb((int)i, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, R - 230, y - 10, 12, 12);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        plot_text(cr, R - 212, y, 12, 0, 0, h->s[i].label);
    }
}

enum np_status np_plot_hist_write(const char *file, const char *title, const struct np_plot_hist *series,
                                  size_t n, int nbuckets, struct np_error *err)
{
    enum np_plot_kind kind = np_plot_kind_of(file);
    if (kind == NP_PLOT_NONE)
        return np_error_set(err, NP_E_USAGE, "--plot", 0, 0, "'%s': the name must end in .svg, .png or .pdf",
                            file ? file : "");
    struct plot_hist_ctx h = {title, series, n, nbuckets, -1, 0, 0};
    double top = 0;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < nbuckets; b++)
            if (series[i].counts[b]) {
                h.b0 = b < h.b0 ? b : h.b0;
                h.b1 = b > h.b1 ? b : h.b1;
                top = (double)series[i].counts[b] > top ? (double)series[i].counts[b] : top;
            }
    if (h.b1 < 0)
        return np_error_set(err, NP_E_NOTFOUND, file, 0, 0, "no NCCL collective to plot");
    h.ymax = plot_nice_max(top, &h.step);
    return plot_file(file, kind, plot_hist_draw, &h, err);
}
