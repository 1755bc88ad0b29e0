/* error.c - status names, exit codes and the positioned error record.
 *
 * Every module reports failure as an enum np_status plus, where useful, a
 * struct np_error that names the file, position and what was wrong.
 */
#include "nemoperf/util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *np_strerror(enum np_status st)
{
    switch (st) {
    case NP_OK: return "success";
    case NP_E_USAGE: return "usage error";
    case NP_E_INVALID: return "invalid input";
    case NP_E_IO: return "input/output error";
    case NP_E_PARSE: return "parse error";
    case NP_E_NOMEM: return "out of memory";
    case NP_E_NOTFOUND: return "not found";
    case NP_E_SLURM: return "Slurm error";
    case NP_E_HTTP: return "HTTP error";
    case NP_E_INTERNAL: return "internal error";
    }
    return "unknown error";
}

int np_exit_code(enum np_status st)
{
    switch (st) {
    case NP_OK: return 0;
    case NP_E_USAGE:
    case NP_E_INVALID:
    case NP_E_PARSE: return 2;
    default: return 1;
    }
}

enum np_status np_error_set(struct np_error *err, enum np_status st, const char *source, int line,
                            int column, const char *fmt, ...)
{
    if (!err)
        return st;
    char src[sizeof err->source]; /* source may be err->source itself */
    snprintf(src, sizeof src, "%s", source ? source : "");
    memcpy(err->source, src, sizeof src);
    err->line = line;
    err->column = column;
    /* a message longer than text keeps its start and its end (the reason comes last:
     * "NAME=<long value>: what is wrong; allowed: ..."), the middle elided */
    char big[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(big, sizeof big, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof big ? (size_t)n : sizeof big - 1;
    if (len < sizeof err->text) {
        memcpy(err->text, big, len + 1);
    } else {
        size_t head = 96, tail = sizeof err->text - head - 4;
        while (tail > 0 && (big[len - tail] & 0xC0) == 0x80) /* not inside a UTF-8 sequence */
            tail--;
        while (head > 0 && (big[head] & 0xC0) == 0x80)
            head--;
        memcpy(err->text, big, head);
        memcpy(err->text + head, "...", 3);
        memcpy(err->text + head + 3, big + len - tail, tail + 1);
    }
    return st;
}

void np_error_format(const struct np_error *err, char *buf, size_t size)
{
    if (!buf || size == 0)
        return;
    if (!err) {
        buf[0] = '\0';
        return;
    }
    if (err->source[0] && err->line > 0)
        snprintf(buf, size, "%s:%d:%d: %s", err->source, err->line, err->column, err->text);
    else if (err->source[0])
        snprintf(buf, size, "%s: %s", err->source, err->text);
    else
        snprintf(buf, size, "%s", err->text);
}
