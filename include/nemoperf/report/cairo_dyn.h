/* cairo_dyn.h - cairo and fontconfig: the plots of nemoperf-parse --plot and --history --plot (plot.c, history.c), opened on first use (util/dynlib.h).
 *
 * A module calling the library includes this header instead of the library's: its calls go through the
 * table, which np_cairo_load fills (the entry points call it first, so that a missing library is an error of
 * their command; a call before it opens the library or exits naming it).  cairo_dyn.c defines
 * NP_CAIRO_DYN_TABLE to see the functions' own names.
 */
#ifndef NEMOPERF_REPORT_CAIRO_DYN_H
#define NEMOPERF_REPORT_CAIRO_DYN_H

#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <fontconfig/fontconfig.h>

#include "nemoperf/util/dynlib.h"

/* libcairo.so.2: the functions nemoperf calls */
#define NP_CAIRO_FUNCS(X) \
    X(cairo_arc) X(cairo_close_path) X(cairo_create) X(cairo_debug_reset_static_data) X(cairo_destroy) \
    X(cairo_fill) X(cairo_image_surface_create) X(cairo_line_to) X(cairo_move_to) X(cairo_paint) \
    X(cairo_pdf_surface_create) X(cairo_pdf_surface_create_for_stream) X(cairo_rectangle) X(cairo_restore) \
    X(cairo_rotate) X(cairo_save) X(cairo_select_font_face) X(cairo_set_dash) X(cairo_set_font_size) \
    X(cairo_set_line_width) X(cairo_set_source_rgb) X(cairo_show_text) X(cairo_status) X(cairo_status_to_string) \
    X(cairo_stroke) X(cairo_surface_destroy) X(cairo_surface_finish) X(cairo_surface_flush) \
    X(cairo_surface_status) X(cairo_surface_write_to_png) X(cairo_surface_write_to_png_stream) \
    X(cairo_svg_surface_create) X(cairo_svg_surface_create_for_stream) X(cairo_text_extents) X(cairo_translate)
NP_DYNLIB_DECLARE(cairo, NP_CAIRO_FUNCS)

/* libfontconfig.so.1: the functions nemoperf calls */
#define NP_FC_FUNCS(X) \
    X(FcFini)
NP_DYNLIB_DECLARE(fc, NP_FC_FUNCS)

/* Open the libraries (once): NP_E_NOTFOUND with the reason (which library, for what, which package) in err. */
enum np_status np_cairo_load(struct np_error *err);

#ifndef NP_CAIRO_DYN_TABLE
#define cairo_arc (np_cairo_fns()->cairo_arc)
#define cairo_close_path (np_cairo_fns()->cairo_close_path)
#define cairo_create (np_cairo_fns()->cairo_create)
#define cairo_debug_reset_static_data (np_cairo_fns()->cairo_debug_reset_static_data)
#define cairo_destroy (np_cairo_fns()->cairo_destroy)
#define cairo_fill (np_cairo_fns()->cairo_fill)
#define cairo_image_surface_create (np_cairo_fns()->cairo_image_surface_create)
#define cairo_line_to (np_cairo_fns()->cairo_line_to)
#define cairo_move_to (np_cairo_fns()->cairo_move_to)
#define cairo_paint (np_cairo_fns()->cairo_paint)
#define cairo_pdf_surface_create (np_cairo_fns()->cairo_pdf_surface_create)
#define cairo_pdf_surface_create_for_stream (np_cairo_fns()->cairo_pdf_surface_create_for_stream)
#define cairo_rectangle (np_cairo_fns()->cairo_rectangle)
#define cairo_restore (np_cairo_fns()->cairo_restore)
#define cairo_rotate (np_cairo_fns()->cairo_rotate)
#define cairo_save (np_cairo_fns()->cairo_save)
#define cairo_select_font_face (np_cairo_fns()->cairo_select_font_face)
#define cairo_set_dash (np_cairo_fns()->cairo_set_dash)
#define cairo_set_font_size (np_cairo_fns()->cairo_set_font_size)
#define cairo_set_line_width (np_cairo_fns()->cairo_set_line_width)
#define cairo_set_source_rgb (np_cairo_fns()->cairo_set_source_rgb)
#define cairo_show_text (np_cairo_fns()->cairo_show_text)
#define cairo_status (np_cairo_fns()->cairo_status)
#define cairo_status_to_string (np_cairo_fns()->cairo_status_to_string)
#define cairo_stroke (np_cairo_fns()->cairo_stroke)
#define cairo_surface_destroy (np_cairo_fns()->cairo_surface_destroy)
#define cairo_surface_finish (np_cairo_fns()->cairo_surface_finish)
#define cairo_surface_flush (np_cairo_fns()->cairo_surface_flush)
#define cairo_surface_status (np_cairo_fns()->cairo_surface_status)
#define cairo_surface_write_to_png (np_cairo_fns()->cairo_surface_write_to_png)
#define cairo_surface_write_to_png_stream (np_cairo_fns()->cairo_surface_write_to_png_stream)
#define cairo_svg_surface_create (np_cairo_fns()->cairo_svg_surface_create)
#define cairo_svg_surface_create_for_stream (np_cairo_fns()->cairo_svg_surface_create_for_stream)
#define cairo_text_extents (np_cairo_fns()->cairo_text_extents)
#define cairo_translate (np_cairo_fns()->cairo_translate)
#define FcFini (np_fc_fns()->FcFini)
#endif

#endif
