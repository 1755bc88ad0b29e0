/* plot.h - a picture of a scaling sweep: throughput per GPU and MFU against GPU count.
 *
 * Drawn with cairo into .svg, .png or .pdf (chosen by the file name's extension).
 * One series per configuration (recipe, size, dtype, GPU type, synthetic or not): the measured benchmark
 * runs, the published points of the same configuration when a reference table is given (never beside
 * runs of the synthetic workload, which are not compared),
 * and a line for perfect weak scaling (the per-GPU value of the smallest run held flat).
 * The x axis is log2 of the GPU count; the layout is exposed so tests can find the points.
 */
#ifndef NEMOPERF_PLOT_H
#define NEMOPERF_PLOT_H

#include <stdint.h>

#include "nemoperf/util/error.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/parse/run.h"

enum np_plot_kind { NP_PLOT_NONE = -1, NP_PLOT_SVG = 0, NP_PLOT_PNG, NP_PLOT_PDF };

/* The kind named by a file name's extension (.svg .png .pdf, any case), NP_PLOT_NONE otherwise. */
enum np_plot_kind np_plot_kind_of(const char *file);

/* Picture size in pixels (PNG) or points (SVG, PDF). */
#define NP_PLOT_WIDTH 1000
#define NP_PLOT_HEIGHT 760

enum { NP_PLOT_PANEL_TPUT = 0, NP_PLOT_PANEL_MFU = 1 };

/* Where the data goes: two panels sharing one log2 x range. */
struct np_plot_layout {
    double left, right;           /* x pixel span of both panels */
    double top[2], bottom[2];     /* y pixel span of each panel */
    double xlog_min, xlog_max;    /* log2(GPUs) at left, right */
    double ymax[2];               /* value at the top of each panel (bottom is 0) */
    int nseries;                  /* configurations drawn */
    int npoints;                  /* measured points drawn (both panels count once) */
    int mfu_panel;                /* 0: no run has an MFU (e.g. the synthetic workload): the MFU panel is left out
                                     and the throughput panel takes the height of both */
    int synthetic;                /* series of the synthetic workload drawn (title and legend say so) */
};

/* Compute the layout for res (and ref, may be NULL) without drawing.
 * NP_E_NOTFOUND when no run has a GPU count and a throughput per GPU. */
enum np_status np_plot_layout_compute(const struct np_parse_result *res, const struct np_ref_table *ref,
                                      struct np_plot_layout *lay, struct np_error *err);

/* Pixel position of (gpus, value) in a panel of lay. */
void np_plot_xy(const struct np_plot_layout *lay, int panel, double gpus, double value, double *x, double *y);

/* RGB (0..1) of series i, as drawn. */
void np_plot_series_rgb(int i, double rgb[3]);

/* Draw res into file (kind by extension), atomically: a temporary file in the same
 * folder renamed over file when complete.  ref may be NULL (no published points).
 * lay (may be NULL) receives the layout used.  NP_E_USAGE for an unknown extension,
 * NP_E_NOTFOUND when nothing can be drawn, NP_E_IO when writing fails. */
enum np_status np_plot_write(const char *file, const struct np_parse_result *res, const struct np_ref_table *ref,
                             struct np_plot_layout *lay, struct np_error *err);

/* Release the font caches cairo and fontconfig keep for the whole process (they would show as
 * leaks under LeakSanitizer).  Call once no more pictures will be drawn, from one thread. */
void np_plot_cleanup(void);

/* A message size histogram (nemoperf-parse --nccl --plot): one series per collective, counts[b] the
 * calls of [2^b, 2^(b+1)) bytes for b < nbuckets; grouped bars over a log2 size axis.  Written as
 * np_plot_write writes (a temporary file renamed over file). */
struct np_plot_hist {
    char label[48];
    const uint64_t *counts;
};
enum np_status np_plot_hist_write(const char *file, const char *title, const struct np_plot_hist *series,
                                  size_t n, int nbuckets, struct np_error *err);

#endif
