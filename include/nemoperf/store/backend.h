/* backend.h - what a results-store backend provides (store/sqlite.c, store/pg.c), for store.c only.
 *
 * store.c writes the SQL once, with $1..$N parameters, and hands it to the backend with typed values;
 * a backend binds them, runs the statement and hands typed columns back.  Like the Slurm backends:
 * one descriptor of functions per backend, chosen at open.
 */
#ifndef NEMOPERF_STORE_BACKEND_H
#define NEMOPERF_STORE_BACKEND_H

#include <stddef.h>

#include "nemoperf/util/error.h"

enum np_sval_type { NP_SV_NULL = 0, NP_SV_INT, NP_SV_REAL, NP_SV_TEXT, NP_SV_BLOB };

/* One parameter or column value.  text/blob borrowed (a column's until the row callback returns). */
struct np_sval {
    enum np_sval_type type;
    long long i;
    double r;
    const char *s;       /* TEXT (NUL-terminated) or BLOB bytes */
    size_t len;          /* BLOB length */
};

/* A row: ncol values of the types asked for (NULL when the column is NULL). */
typedef int (*np_sbe_row_fn)(void *ctx, const struct np_sval *cols, size_t ncol);

struct np_store_be {
    const char *name;
    const char *id_type;  /* the DDL of an auto-numbered primary key */
    const char *begin_sql; /* the statement that starts a writing transaction */
    /* Run sql with params (keep: sql is a string that lives as long as the handle and is run again: the
     * backend may keep it prepared, keyed by its address); for a query, call row for each row with the columns typed as types[0..ncol)
     * (row returns 0 to go on, else stops; the caller keeps why).
     * *changes (may be NULL): rows the statement changed.  Errors fill err (no password in it). */
    enum np_status (*exec)(void *h, const char *sql, int keep, const struct np_sval *params, size_t nparams,
                           const enum np_sval_type *types, size_t ncol, np_sbe_row_fn row, void *ctx,
                           long long *changes, struct np_error *err);
    void (*close)(void *h);
};

/* Open a backend handle (*h) for the location (its own syntax); NP_E_IO / NP_E_INVALID with err. */
enum np_status np_store_sqlite_open(const char *path, void **h, const struct np_store_be **be, struct np_error *err);
enum np_status np_store_pg_open(const char *conninfo, void **h, const struct np_store_be **be, struct np_error *err);

#endif
