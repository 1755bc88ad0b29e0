/* text.h - text that reaches a terminal: no control sequences, no endless values.
 *
 * Folder names, environment values and log lines end up in messages and table cells; an
 * ESC in one of them would drive the user's terminal, a 100 KB value would flood it
 * (issue 23).  One cleaning rule and one shortening rule, used by diag and the reports.
 * Owned by src/util/text.c.
 */
#ifndef NEMOPERF_TEXT_H
#define NEMOPERF_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Replace, in place, every byte of s[0..n) a terminal could take as a control: C0 controls
 * other than tab and newline, DEL, and the C1 controls as UTF-8 (C2 80..C2 9F), each byte by
 * '?' (the width stays, so table columns stay aligned).  Returns how many bytes it replaced. */
size_t np_text_clean(char *s, size_t n);

/* Byte offset of the first control byte of s (any C0 control, tab and newline included, DEL, or
 * a C1 control as UTF-8), or -1 when there is none: a value that names something (an image, an
 * account, a folder) and reaches a script, a file name or JSON must not carry one. */
long np_text_control_at(const char *s);

/* s when it is at most max bytes (max >= 64), else a new string of its first and last bytes
 * around " [... N bytes left out ...] ", at most max bytes; *owned says whether the caller
 * frees the result.  NULL only when out of memory. */
char *np_text_shorten(const char *s, size_t max, int *owned);

/* One CSV field (RFC 4180) to out: s (NULL: empty), each byte np_text_clean replaces written as '?'
 * (CSV has no escape: the table's rule), between double quotes with each quote doubled when it holds a
 * comma, a quote or LF, or when always is set.  The reports' one writer. */
void np_text_csv_field(FILE *out, const char *s, int always);
/* The same field into buf (NUL-terminated, cut at size - 1 bytes: 2 * strlen(s) + 3 always fits); its length. */
size_t np_text_csv_cell(char *buf, size_t size, const char *s, int always);

/* snprintf(buf, size, "%.*f", prec, v), byte for byte, without printf for the usual values (prec 0..6, |v| below
 * about 4e12 / 10^prec, not near a half in the last digit): a million-row report's numbers.  Returns the length. */
int np_text_fixed(char *buf, size_t size, double v, int prec);

/* A stream over under's descriptor for JSON text: every C1 control (UTF-8 C2 80..9F) written as its escape
 * \u0080..\u009f and DEL as \u007f (Jansson escapes C0 controls itself and leaves these raw), the same JSON
 * value.  under is flushed first and never closed; fclose the stream to flush.  NULL when that fails. */
FILE *np_text_json_stream(FILE *under);

/* The one rule for a report on under: np_text_json_stream for JSON (json 1), np_text_clean_stream for the
 * table, markdown and CSV.  NULL when that fails. */
FILE *np_text_out_stream(FILE *under, int json);

/* A stream writing through np_text_clean to under's descriptor (under is flushed first and
 * never closed; nothing else should write to it meanwhile).  Its own buffer: a line on a
 * terminal, 256 KiB otherwise; fclose it to flush.  NULL when that fails. */
FILE *np_text_clean_stream(FILE *under);

/* Append a note to *notes, a malloc'd string (NULL: none yet), "; " between notes; the note printf-formatted and cut
 * at 511 bytes.  0, or -1 out of memory (*notes unchanged). */
int np_text_notef(char **notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
