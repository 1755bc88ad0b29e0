/* error.h - the one error enum of nemoperf and a positioned error record.
 *
 * Library functions return enum np_status; when they can say more they fill a
 * caller-provided struct np_error (may be NULL).  Only main() turns a status
 * into an exit code (np_exit_code).
 */
#ifndef NEMOPERF_ERROR_H
#define NEMOPERF_ERROR_H

#include <stddef.h>

enum np_status {
    NP_OK = 0,
    NP_E_USAGE,    /* bad option or argument */
    NP_E_INVALID,  /* bad input value (environment, recipe data, log) */
    NP_E_IO,       /* file system or process I/O */
    NP_E_PARSE,    /* syntax error in a data file */
    NP_E_NOMEM,    /* allocation failed */
    NP_E_NOTFOUND, /* a looked-up thing does not exist */
    NP_E_SLURM,    /* the scheduler refused or failed */
    NP_E_HTTP,     /* an HTTP exchange failed */
    NP_E_INTERNAL
};

/* Where and what.  source is a file name or "-"; line/column are 1-based,
 * 0 when unknown.  Printed as "source:line:col: text" or "source: text". */
struct np_error {
    char source[512];
    int line, column;
    char text[1024]; /* a longer message keeps its start and its end (np_error_set) */
};

/* Static string naming a status ("out of memory"); never NULL. */
const char *np_strerror(enum np_status st);

/* Exit code for a status: 0 ok, 2 usage/bad input, 1 anything else. */
int np_exit_code(enum np_status st);

/* Fill err (NULL-safe) and return st. */
enum np_status np_error_set(struct np_error *err, enum np_status st, const char *source, int line,
                            int column, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Render err into buf as "source:line:col: text" (or without the position). */
void np_error_format(const struct np_error *err, char *buf, size_t size);

#endif
