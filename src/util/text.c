/* text.c - clean and shorten text before it reaches a terminal.
 *
 * Messages and table cells carry folder names, environment values and log text; escape
 * sequences in them are replaced by '?' and very long values keep only their start and end
 * (issue 23).  Machine formats (JSON, CSV) keep their bytes: JSON escapes them itself.
 */
#include "nemoperf/util/text.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t np_text_clean(char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) {
            s[i] = '?';
            k++;
        } else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] <= 0x9f) {
            s[i] = s[i + 1] = '?'; /* U+0080..U+009F: CSI and friends in UTF-8 */
            i++;
            k += 2;
        }
    }
    return k;
}

long np_text_control_at(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return (long)(p - (const unsigned char *)s);
    return -1;
}

char *np_text_shorten(const char *s, size_t max, int *owned)
{
    *owned = 0;
    size_t n = strlen(s);
    if (max < 64)
        max = 64;
    if (n <= max)
        return (char *)s;
    char mid[64];
    /* the start says what it is about, the end often says why: keep three quarters of the start */
    size_t room = max - 48, head = room * 3 / 4, tail = room - head;
    int m = snprintf(mid, sizeof mid, " [... %zu bytes left out ...] ", n - head - tail);
    char *o = malloc(head + (size_t)m + tail + 1);
    if (!o)
        return NULL;
    memcpy(o, s, head);
    memcpy(o + head, mid, (size_t)m);
    memcpy(o + head + (size_t)m, s + n - tail, tail + 1);
    *owned = 1;
    return o;
}

/* The stream writes straight to the descriptor (no second buffer under its own), so that a
 * failed write (a full disk, a closed pipe) shows at the caller's fflush/ferror, errno kept. */
static ssize_t text_stream_write(void *cookie, const char *buf, size_t size)
{
    int fd = (int)(intptr_t)cookie;
    char tmp[8192];
    size_t done = 0;
    while (done < size) {
        size_t n = size - done < sizeof tmp ? size - done : sizeof tmp;
        memcpy(tmp, buf + done, n);
        np_text_clean(tmp, n); /* a C2 80..9F pair cut by a chunk's end passes: rare, and only C1 */
        for (size_t w = 0; w < n;) {
            ssize_t r = write(fd, tmp + w, n - w);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return done + w ? (ssize_t)(done + w) : -1;
            w += (size_t)r;
        }
        done += n;
    }
    return (ssize_t)size;
}

FILE *np_text_clean_stream(FILE *under)
{
    if (fflush(under) != 0)
        return NULL;
    cookie_io_functions_t io = {.write = text_stream_write};
    FILE *f = fopencookie((void *)(intptr_t)fileno(under), "w", io);
    if (f)
        setvbuf(f, NULL, isatty(fileno(under)) ? _IOLBF : _IOFBF, isatty(fileno(under)) ? BUFSIZ : 1 << 18);
    return f;
}

void np_text_csv_field(FILE *out, const char *s, int always)
{
    if (!s)
        s = "";
    if (!always && !strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}
