/* cairo_dyn.c - the table of cairo and fontconfig and its loader (cairo_dyn.h, util/dynlib.h). */
#define NP_CAIRO_DYN_TABLE
#include "nemoperf/report/cairo_dyn.h"

#include <dlfcn.h>

NP_DYNLIB_DEFINE(cairo, NP_CAIRO_FUNCS, "libcairo.so.2", "libcairo2", "plots (--plot)")

NP_DYNLIB_DEFINE(fc, NP_FC_FUNCS, "libfontconfig.so.1", "libfontconfig1", "plots (--plot)")

enum np_status np_cairo_load(struct np_error *err)
{
    enum np_status st = np_dynlib_load(&np_cairo_lib, err);
    return st == NP_OK ? np_dynlib_load(&np_fc_lib, err) : st;
}
