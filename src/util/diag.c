/* diag.c - diagnostics to stderr with the program's name as prefix.
 *
 * The one place that formats error and warning messages for humans; the
 * library never prints any other way.
 */
#include "nemoperf/util/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *diag_progname = "nemoperf";
static int diag_quiet;

void np_set_progname(const char *argv0)
{
    if (!argv0 || !*argv0)
        return;
    const char *slash = strrchr(argv0, '/');
    diag_progname = slash ? slash + 1 : argv0;
}

const char *np_progname(void) { return diag_progname; }

void np_set_quiet(int quiet) { diag_quiet = quiet; }

static void diag_vprint(const char *kind, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "%s: %s%s\n", diag_progname, kind, msg);
}

void np_errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vprint("", fmt, ap);
    va_end(ap);
}

void np_warnf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_vprint("warning: ", fmt, ap);
    va_end(ap);
}

void np_notef(const char *fmt, ...)
{
    if (diag_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    diag_vprint("", fmt, ap);
    va_end(ap);
}

void np_error_print(const struct np_error *err)
{
    char buf[1024];
    np_error_format(err, buf, sizeof buf);
    np_errorf("%s", buf);
}

int np_stream_check(FILE *f, const char *name)
{
    int before = errno;
    errno = 0;
    if (fflush(f) == 0 && !ferror(f))
        return 0;
    int e = errno ? errno : before;
    np_errorf("cannot write to %s: %s", name, e ? strerror(e) : "write error");
    return 1;
}

int np_stdout_check(void)
{
    return np_stream_check(stdout, "standard output");
}
