/* redact.c - the one redactor of connection strings (redact.h): a URI's userinfo password, a password= value,
 * and whatever libpq made of the password of the string it was given (quoted back whole, cut or decoded),
 * replaced by "***" in any message before it is shown.  It works on the text alone, so a string libpq could not
 * parse (no PQconninfo then) is masked as well as one it could.
 */
#include "nemoperf/util/redact.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REDACT_MASK "***"
#define REDACT_MAX_SECRETS 16

struct redact_buf {
    char *s;
    size_t len;
};

/* Replace s[from, to) by the mask. */
static int redact_mask(struct redact_buf *b, size_t from, size_t to)
{
    size_t ml = sizeof REDACT_MASK - 1, nl = b->len - (to - from) + ml;
    char *n = malloc(nl + 1);
    if (!n)
        return -1;
    memcpy(n, b->s, from);
    memcpy(n + from, REDACT_MASK, ml);
    memcpy(n + from + ml, b->s + to, b->len - to + 1);
    free(b->s);
    b->s = n;
    b->len = nl;
    return 0;
}

static int redact_stop(char c)
{
    return c == '\0' || isspace((unsigned char)c) || c == '"' || c == '\'';
}

/* The password span of the URI whose "://" is at s + at: [*from, *to), 0 when it has none. */
static int redact_uri_span(const char *s, size_t at, size_t *from, size_t *to)
{
    size_t u = at + 3, end = u, last_at = 0;
    int has_at = 0;
    while (!redact_stop(s[end])) {
        if (s[end] == '@') {
            last_at = end;
            has_at = 1;
        }
        end++;
    }
    if (!has_at)
        return 0;
    const char *colon = memchr(s + u, ':', last_at - u);
    if (!colon)
        return 0;
    *from = (size_t)(colon - s) + 1;
    *to = last_at;
    return *to > *from;
}

/* The value span of a "...password" key at s + k (k: the key's 'p'), [*from, *to), 0 when it is not a key. */
static int redact_kv_span(const char *s, size_t k, size_t *from, size_t *to)
{
    size_t p = k + 8;
    while (s[p] == ' ' || s[p] == '\t')
        p++;
    if (s[p] != '=')
        return 0;
    p++;
    while (s[p] == ' ' || s[p] == '\t')
        p++;
    *from = p;
    if (s[p] == '\'') { /* libpq's quoted value: \' and \\ inside */
        p++;
        while (s[p] && s[p] != '\'')
            p += s[p] == '\\' && s[p + 1] ? 2 : 1;
        *from += 1;
        *to = p;
        return 1;
    }
    while (!redact_stop(s[p]) && s[p] != '&')
        p++;
    *to = p;
    return *to > *from;
}

/* Mask every URI password and password= value of b (the structural rules). */
static int redact_structure(struct redact_buf *b)
{
    for (size_t i = 0; i + 3 <= b->len; i++) {
        size_t from, to;
        if (memcmp(b->s + i, "://", 3) == 0 && redact_uri_span(b->s, i, &from, &to)) {
            if (redact_mask(b, from, to))
                return -1;
            i = from + sizeof REDACT_MASK - 2;
        } else if (i + 8 <= b->len && strncasecmp(b->s + i, "password", 8) == 0 &&
                   redact_kv_span(b->s, i, &from, &to)) {
            if (to > from && redact_mask(b, from, to))
                return -1;
            i = from;
        }
    }
    return 0;
}

static int redact_hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The secrets conninfo holds (raw and percent-decoded), as new strings into v; their count. */
static size_t redact_secrets(const char *c, char **v, size_t max)
{
    size_t n = 0, len = strlen(c);
    for (size_t i = 0; i < len && n + 2 <= max; i++) {
        size_t from, to;
        int hit = (i + 3 <= len && memcmp(c + i, "://", 3) == 0 && redact_uri_span(c, i, &from, &to)) ||
                  (i + 8 <= len && strncasecmp(c + i, "password", 8) == 0 && redact_kv_span(c, i, &from, &to) &&
                   to > from);
        if (!hit)
            continue;
        char *raw = strndup(c + from, to - from), *dec = strndup(c + from, to - from);
        if (!raw || !dec) {
            free(raw);
            free(dec);
            break;
        }
        size_t w = 0;
        for (size_t r = 0; raw[r]; r++) {
            int h1, h2;
            if (raw[r] == '%' && (h1 = redact_hex(raw[r + 1])) >= 0 && (h2 = redact_hex(raw[r + 2])) >= 0) {
                dec[w++] = (char)(h1 * 16 + h2);
                r += 2;
            } else
                dec[w++] = raw[r];
        }
        dec[w] = '\0';
        v[n++] = raw;
        if (strcmp(dec, raw) != 0 && *dec)
            v[n++] = dec;
        else
            free(dec);
        i = to;
    }
    return n;
}

/* Mask each secret wherever it is, and each double-quoted token that is part of one or holds one. */
static int redact_known(struct redact_buf *b, char *const *v, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        size_t l = strlen(v[k]);
        for (char *p = l ? strstr(b->s, v[k]) : NULL; p;) {
            size_t at = (size_t)(p - b->s);
            if (redact_mask(b, at, at + l))
                return -1;
            p = strstr(b->s + at + sizeof REDACT_MASK - 1, v[k]);
        }
    }
    for (size_t i = 0; i < b->len; i++) {
        if (b->s[i] != '"')
            continue;
        char *close = strchr(b->s + i + 1, '"');
        if (!close)
            break;
        size_t from = i + 1, to = (size_t)(close - b->s), tl = to - from;
        int hit = 0;
        for (size_t k = 0; k < n && !hit && tl; k++) {
            char *tok = strndup(b->s + from, tl);
            if (!tok)
                return -1;
            hit = strcmp(tok, REDACT_MASK) != 0 && (strstr(v[k], tok) || strstr(tok, v[k]));
            free(tok);
        }
        if (hit && redact_mask(b, from, to))
            return -1;
        i = hit ? from + sizeof REDACT_MASK - 1 : to;
    }
    return 0;
}

void np_redact(const char *text, const char *conninfo, char *out, size_t size)
{
    if (!size)
        return;
    out[0] = '\0';
    struct redact_buf b = {strdup(text ? text : ""), 0};
    if (!b.s)
        return; /* out of memory: nothing shown rather than a secret */
    b.len = strlen(b.s);
    char *v[REDACT_MAX_SECRETS];
    size_t n = conninfo ? redact_secrets(conninfo, v, REDACT_MAX_SECRETS) : 0;
    int bad = redact_known(&b, v, n) || redact_structure(&b);
    for (size_t k = 0; k < n; k++)
        free(v[k]);
    if (!bad)
        snprintf(out, size, "%s", b.s);
    free(b.s);
}
