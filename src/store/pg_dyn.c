/* pg_dyn.c - the table of libpq and its loader (pg_dyn.h, util/dynlib.h). */
#define NP_PG_DYN_TABLE
#include "nemoperf/store/pg_dyn.h"

#include <dlfcn.h>

NP_DYNLIB_DEFINE(pg, NP_PG_FUNCS, "libpq.so.5", "libpq5", "the PostgreSQL results store")

enum np_status np_pg_load(struct np_error *err)
{
    return np_dynlib_load(&np_pg_lib, err);
}
