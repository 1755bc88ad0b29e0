/* diag.c - diagnostics to stderr with the program's name as prefix.
 *
 * The one place that formats error and warning messages for humans; the
 * library never prints any other way.
 */
#include "nemoperf/util/diag.h"
#include "nemoperf/util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *diag_progname = "nemoperf";
static int diag_quiet;

void np_std_fds_reserve(void)
{
    /* a closed 0, 1 or 2 would be taken by the next open (a temporary file, a log): the report
     * or warnings would go there, exit 0 (issue 23).  /dev/null read-only in its place: a write
     * to a closed stdout or stderr fails (EBADF) and is reported as such. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int n = open("/dev/null", O_RDONLY);
            if (n >= 0 && n != fd) /* only when a lower one was open: n is fd otherwise */
                close(n);
        }
}

void np_set_progname(const char *argv0)
{
    if (!argv0 || !*argv0)
        return;
    const char *slash = strrchr(argv0, '/');
    diag_progname = slash ? slash + 1 : argv0;
}

const char *np_progname(void) { return diag_progname; }

void np_set_quiet(int quiet) { diag_quiet = quiet; }

/* A message at most this long: a longer one keeps its start and its end (np_text_shorten). */
#define DIAG_MAX 2000

/* Values in messages come from folder names, the environment and logs: their control bytes
 * are replaced ('?'), a huge one is shortened, before the terminal sees them (issue 23). */
static void diag_vprint(const char *kind, const char *fmt, va_list ap)
{
    char *msg = NULL, fallback[DIAG_MAX + 1];
    if (vasprintf(&msg, fmt, ap) < 0) {
        msg = NULL;
        snprintf(fallback, sizeof fallback, "%s", "(out of memory formatting a message)");
    }
    int owned = 0;
    char *text = msg ? np_text_shorten(msg, DIAG_MAX, &owned) : fallback;
    if (!text)
        text = msg;
    np_text_clean(text, strlen(text));
    fprintf(stderr, "%s: %s%s\n", diag_progname, kind, text);
    if (owned)
        free(text);
    free(msg);
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
