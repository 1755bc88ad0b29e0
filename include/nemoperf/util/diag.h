/* diag.h - the only place nemoperf prints diagnostics.
 *
 * Messages go to stderr prefixed with "progname: "; formats carry no
 * trailing newline.  Library code reports through these or returns errors.
 */
#ifndef NEMOPERF_DIAG_H
#define NEMOPERF_DIAG_H

#include <stdio.h>

#include "nemoperf/util/error.h"

/* Call first in main(): a closed standard descriptor (0, 1, 2) gets /dev/null opened
 * read-only in its place, so that no file the program opens takes its number and writes to
 * a closed stdout or stderr fail instead of landing in that file (issue 23). */
void np_std_fds_reserve(void);

/* Borrowed pointer, must stay valid for the program's life (argv[0] is fine). */
void np_set_progname(const char *argv0);
const char *np_progname(void);

void np_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void np_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line; suppressed after np_set_quiet(1). */
void np_notef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Flush stdout: 0 when everything written to it got there; else 1, said on stderr
 * ("cannot write to standard output: No space left on device").  Call it right after
 * the writes (a failed buffered write left its errno). */
/* The same for any stream f, named name in the message ("standard output"). */
int np_stream_check(FILE *f, const char *name);
int np_stdout_check(void);
void np_set_quiet(int quiet);

/* Print an np_error as "progname: source:line:col: text". */
void np_error_print(const struct np_error *err);

#endif
