/* text.c - clean and shorten text before it reaches a terminal.
 *
 * Messages and table cells carry folder names, environment values and log text; escape
 * sequences in them are replaced by '?' and very long values keep only their start and end
 * (issue 23).  One rule for every output format: a control byte never reaches a terminal or file raw —
 * the table, markdown and CSV show it as '?', JSON as its \u escape (Jansson writes C0's; the JSON stream
 * here C1's and DEL, which Jansson leaves raw).
 */
#include "nemoperf/util/text.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 for a byte np_text_clean may replace (C0 controls but tab and newline, DEL, C2 the first byte of a C1
 * control) and for '"' (2: the CSV writer's other byte): the plain bytes between are skipped a lookup each. */
static const unsigned char text_special[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 2, [0x7f] = 1, [0xc2] = 1,
};

size_t np_text_clean(char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
        uint64_t w;
        /* eight bytes at a time while none is below ' ' or above '~' (a report's usual text) */
        while (i + 8 <= n && (memcpy(&w, s + i, 8), !((((w - ones * 0x20) & ~w) | ((w + ones) | w)) & highs)))
            i += 8;
        if (i >= n)
            break;
        unsigned char c = (unsigned char)s[i];
        if (text_special[c] != 1)
            continue;
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

/* A byte of s at i that np_text_clean replaces: 0 none, else how many (1, or 2 for a C1 pair). */
static size_t text_control_len(const unsigned char *s, size_t i)
{
    unsigned char c = s[i];
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
        return 1;
    return c == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f ? 2 : 0;
}

/* Where a CSV field goes: a stream, or a bounded buffer. */
struct text_sink {
    FILE *out;
    char *buf;
    size_t size, len; /* buf: its size, what is written (a write past size - 1 is cut) */
};

static void text_put(struct text_sink *k, const void *p, size_t n)
{
    if (k->out) {
        fwrite(p, 1, n, k->out);
        return;
    }
    size_t room = k->size - 1 - k->len;
    memcpy(k->buf + k->len, p, n < room ? n : room);
    k->len += n < room ? n : room;
    k->buf[k->len] = '\0';
}

/* u to k, each byte np_text_clean replaces as '?' and (quoted) each '"' doubled: the runs between such bytes in
 * one write each (a million-row --history writes its fields here). */
static void text_csv_span(struct text_sink *k, const unsigned char *u, int quoted)
{
    for (size_t i = 0, start = 0;; i++) {
        while (u[i] && !text_special[u[i]])
            i++;
        size_t c = u[i] ? text_control_len(u, i) : 0;
        if (u[i] && !c && !(quoted && u[i] == '"'))
            continue;
        text_put(k, u + start, i - start);
        if (!u[i])
            return;
        if (c) {
            text_put(k, "??", c);
            i += c - 1;
        } else
            text_put(k, "\"\"", 2);
        start = i + 1;
    }
}

static void text_csv(struct text_sink *k, const char *s, int always)
{
    if (!s)
        s = "";
    const unsigned char *u = (const unsigned char *)s;
    if (!always && !strpbrk(s, ",\"\n")) { /* the table's rule: a control byte is '?' (CSV has no escape for it) */
        text_csv_span(k, u, 0);
        return;
    }
    text_put(k, "\"", 1);
    text_csv_span(k, u, 1);
    text_put(k, "\"", 1);
}

void np_text_csv_field(FILE *out, const char *s, int always)
{
    struct text_sink k = {out, NULL, 0, 0};
    text_csv(&k, s, always);
}

size_t np_text_csv_cell(char *buf, size_t size, const char *s, int always)
{
    if (!size)
        return 0;
    struct text_sink k = {NULL, buf, size, 0};
    buf[0] = '\0';
    text_csv(&k, s, always);
    return k.len;
}

int np_text_fixed(char *buf, size_t size, double v, int prec)
{
    static const double scale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    double a = fabs(v), y = prec >= 0 && prec <= 6 ? a * scale[prec] : 0, r = floor(y + 0.5);
    /* y is within an ulp of v's exact decimal times 10^prec: rounded the same as printf rounds that value unless
     * it is near a half (a tie, or too close to tell: printf itself then); big values, NaN and inf too */
    if (size < 32 || !(y < 4e12) || prec < 0 || prec > 6 || fabs(y - floor(y) - 0.5) < 1e-3)
        return snprintf(buf, size, "%.*f", prec, v);
    unsigned long long d = (unsigned long long)r, ip = d, fp = 0;
    for (int i = 0; i < prec; i++)
        ip /= 10;
    fp = d - ip * (unsigned long long)scale[prec];
    char tmp[32];
    size_t n = 0;
    for (int i = 0; i < prec; i++, fp /= 10)
        tmp[n++] = (char)('0' + fp % 10);
    if (prec)
        tmp[n++] = '.';
    do
        tmp[n++] = (char)('0' + ip % 10);
    while (ip /= 10);
    if (signbit(v))
        tmp[n++] = '-';
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return (int)n;
}

/* The JSON stream: a C1 control (C2 80..9F, kept raw by Jansson's UTF-8 output) as \u0080..\u009f and DEL as
 * \u007f, the escapes JSON has for them, so the text means the same and no such byte reaches a terminal or file.
 * Outside strings JSON holds neither.  A C2 that ends one write waits for the next. */
struct text_json {
    int fd;
    int c2; /* a C2 held back from the last write */
};

static int text_json_put(int fd, const char *b, size_t n)
{
    for (size_t w = 0; w < n;) {
        ssize_t r = write(fd, b + w, n - w);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        w += (size_t)r;
    }
    return 0;
}

static ssize_t text_json_write(void *cookie, const char *buf, size_t size)
{
    struct text_json *j = cookie;
    char tmp[8192 + 8];
    size_t n = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (j->c2) {
            j->c2 = 0;
            if (c >= 0x80 && c <= 0x9f) {
                n += (size_t)snprintf(tmp + n, 7, "\\u%04x", c);
                goto flush;
            }
            tmp[n++] = (char)0xc2;
        }
        if (c == 0xc2)
            j->c2 = 1;
        else if (c == 0x7f)
            n += (size_t)snprintf(tmp + n, 7, "\\u007f");
        else
            tmp[n++] = (char)c;
    flush:
        if (n >= 8192) {
            if (text_json_put(j->fd, tmp, n))
                return i ? (ssize_t)i : -1;
            n = 0;
        }
    }
    if (n && text_json_put(j->fd, tmp, n))
        return -1;
    return (ssize_t)size;
}

static int text_json_close(void *cookie)
{
    struct text_json *j = cookie;
    int rc = j->c2 ? text_json_put(j->fd, "\xc2", 1) : 0;
    free(j);
    return rc;
}

FILE *np_text_json_stream(FILE *under)
{
    if (fflush(under) != 0)
        return NULL;
    struct text_json *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->fd = fileno(under);
    cookie_io_functions_t io = {.write = text_json_write, .close = text_json_close};
    FILE *f = fopencookie(j, "w", io);
    if (!f) {
        free(j);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 18);
    return f;
}

FILE *np_text_out_stream(FILE *under, int json)
{
    return json ? np_text_json_stream(under) : np_text_clean_stream(under);
}

int np_text_notef(char **notes, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t old = *notes ? strlen(*notes) : 0, add = strlen(buf);
    char *p = realloc(*notes, old + add + 3);
    if (!p)
        return -1;
    if (old) {
        memcpy(p + old, "; ", 2);
        old += 2;
    }
    memcpy(p + old, buf, add + 1);
    *notes = p;
    return 0;
}
