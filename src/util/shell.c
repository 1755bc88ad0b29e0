/* shell.c - quoting for generated shell and sbatch text, and the np_buf builder.
 *
 * The batch script nemoperf-launch writes interpolates user-controlled values
 * (STAGE_PATH, image paths, recipe command templates); every one goes through
 * np_buf_append_shq or np_sbatch_quote so that nothing in a value is ever
 * interpreted by the job's shell or by sbatch.
 */
#include "nemoperf/util/shell.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_buf_init(struct np_buf *b)
{
    memset(b, 0, sizeof *b);
}

void np_buf_free(struct np_buf *b)
{
    if (!b)
        return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int shell_buf_reserve(struct np_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) {
        if (cap > ((size_t)-1) / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

int np_buf_appendn(struct np_buf *b, const char *s, size_t n)
{
    if (shell_buf_reserve(b, n) != 0)
        return -1;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int np_buf_append(struct np_buf *b, const char *s)
{
    return np_buf_appendn(b, s, strlen(s));
}

int np_buf_appendf(struct np_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return -1;
    }
    if (shell_buf_reserve(b, (size_t)n) != 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int np_buf_append_shq(struct np_buf *b, const char *s)
{
    if (np_buf_append(b, "'") != 0)
        return -1;
    for (const char *p = s; *p; p++) {
        if (*p == '\'') {
            if (np_buf_append(b, "'\\''") != 0)
                return -1;
        } else if (np_buf_appendn(b, p, 1) != 0) {
            return -1;
        }
    }
    return np_buf_append(b, "'");
}

int np_buf_append_shqf(struct np_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return -1;
    }
    int rc = np_buf_append_shq(b, text);
    free(text);
    return rc;
}

char *np_buf_steal(struct np_buf *b)
{
    if (b->failed) {
        np_buf_free(b);
        return NULL;
    }
    char *s = b->data ? b->data : strdup("");
    memset(b, 0, sizeof *b);
    return s;
}

char *np_shell_quote(const char *s)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append_shq(&b, s);
    return np_buf_steal(&b);
}

char *np_sbatch_quote(const char *s)
{
    if (strchr(s, '\n') || strchr(s, '\r'))
        return NULL;
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "\"");
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\')
            np_buf_append(&b, "\\");
        np_buf_appendn(&b, p, 1);
    }
    np_buf_append(&b, "\"");
    return np_buf_steal(&b);
}

char *np_slurm_pattern_escape(const char *s)
{
    struct np_buf b;
    np_buf_init(&b);
    np_buf_append(&b, "");
    for (const char *p = s; *p; p++)
        np_buf_append(&b, *p == '%' ? "%%" : (char[2]){*p, '\0'});
    return np_buf_steal(&b);
}

void np_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

void np_strv_push(struct np_strv *s, const char *str)
{
    if (s->failed)
        return;
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 32;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->failed = 1;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(str))) {
        s->failed = 1;
        return;
    }
    s->v[++s->n] = NULL;
}

void np_strv_pushf(struct np_strv *s, const char *fmt, ...)
{
    char buf[4096 + 512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof buf) {
        np_strv_push(s, buf);
        return;
    }
    char *big = NULL; /* longer than the stack buffer: a --wrap script under a long STAGE_PATH */
    va_start(ap, fmt);
    if (n < 0 || vasprintf(&big, fmt, ap) < 0)
        big = NULL;
    va_end(ap);
    if (!big) {
        s->failed = 1;
        return;
    }
    np_strv_push(s, big);
    free(big);
}

char **np_strv_steal(struct np_strv *s)
{
    char **v = s->v;
    if (s->failed) {
        np_strv_free(v);
        v = NULL;
    } else if (!v) {
        v = calloc(1, sizeof *v);
    }
    memset(s, 0, sizeof *s);
    return v;
}
