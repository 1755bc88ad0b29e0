/* nccltests.c - read the result table NVIDIA's nccl-tests binaries print, every version.
 *
 * The columns are found by the header line, as each version printed it (NVIDIA/nccl-tests; the lines cited at
 * each reader below), so one reader serves v1.0.0 ("bytes N type op time algbw busbw res", time in ms), v2.0-v2.12
 * (per collective: redop or root or neither, the max-delta "error" column), v2.13 on (size count type redop root,
 * "#wrong"), and v2.18 on (the -R timestamp column, v2.19's per-iteration i_* columns).  Rank lines, the version
 * line and the footer (out of bounds values, average bus bandwidth) are read too.  Then the verdict.
 */
#include "nemoperf/parse/nccltests.h"
#include "nemoperf/util/fileio.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT_MAXTOK 64   /* a line with more whitespace-separated fields is no table row of any version */
#define NT_MAXLINE 4096
#define NT_MAXHOSTS 256

enum nt_col { NT_SKIP, NT_SIZE, NT_COUNT, NT_TYPE, NT_REDOP, NT_ROOT, NT_TIME, NT_ALGBW, NT_BUSBW, NT_WRONG,
              NT_ERROR, NT_STAMP };

/* Column names of the header lines of every version -> what the column holds.  v1.0.0 src/all_reduce.cu:12
 * "bytes N type op time algbw busbw res"; v2.0.0 src/all_reduce.cu:12 "size count type redop time algbw busbw
 * error", src/broadcast.cu:12 "... type root ..."; v2.13.0 src/common.cu:924 "size count type redop root time
 * algbw busbw #wrong"; v2.19.6 src/util.cu:747-758 "cputime" (-C), "i_min i_max i_p99 i_cv%" (per-iteration),
 * "timestamp" (-R, printed as "%Y-%m-%d %H:%M:%S": two fields, src/util.cu:54). */
static const struct nt_name {
    const char *name;
    enum nt_col col;
} nt_names[] = {
    {"size", NT_SIZE},   {"bytes", NT_SIZE},   {"count", NT_COUNT}, {"N", NT_COUNT},     {"type", NT_TYPE},
    {"redop", NT_REDOP}, {"op", NT_REDOP},     {"root", NT_ROOT},   {"time", NT_TIME},   {"cputime", NT_TIME},
    {"algbw", NT_ALGBW}, {"busbw", NT_BUSBW},  {"#wrong", NT_WRONG}, {"error", NT_ERROR}, {"res", NT_ERROR},
    {"timestamp", NT_STAMP},
};

struct nt_layout {
    int ncols;
    enum nt_col col[NT_MAXTOK];
    int half[NT_MAXTOK];  /* 0 out-of-place, 1 in-place (the columns after the second time column) */
    int fields_oop;       /* fields of a row that printed the out-of-place half only (v1.0.0 without in-place) */
    double time_scale;    /* to microseconds: 1000 for v1.0.0's milliseconds */
};

struct nt_state {
    struct np_nccl_result *r;
    size_t cap;
    struct nt_layout lay;
    int have_layout, tables, bad_rows, errors_seen, guessed;
    char (*hosts)[64];
    int nhosts;
    char first_bad[120];
};

static void nt_note(struct np_nccl_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nt_note(struct np_nccl_result *r, const char *fmt, ...)
{
    if (r->nnotes >= NP_NCCL_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->notes[r->nnotes++], sizeof r->notes[0], fmt, ap);
    va_end(ap);
}

static size_t nt_split(char *s, char **tok, size_t max)
{
    size_t n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (n == max)
            return max + 1;
        tok[n++] = s;
        while (*s && *s != ' ' && *s != '\t')
            s++;
        if (*s)
            *s++ = '\0';
    }
    return n;
}

static int nt_ll(const char *s, long long *v)
{
    char *end;
    if (!*s || !(isdigit((unsigned char)*s) || *s == '-'))
        return 0;
    double d = strtod(s, &end); /* "%6g" prints a large #wrong as 1e+06 */
    if (*end || !isfinite(d) || d < -1e18 || d > 1e18)
        return 0;
    *v = (long long)d;
    return 1;
}

static int nt_num(const char *s, double *v)
{
    char *end;
    if (!*s)
        return 0;
    *v = strtod(s, &end);
    return *end == '\0';
}

static void nt_copy(char *dst, size_t sz, const char *src)
{
    snprintf(dst, sz, "%s", src);
}

/* Where the tool's text starts after a launcher's prefix: srun -l "  3: ", mpirun --tag-output
 * "[1,0]<stdout>:", pdsh/clush "node01: " (only before '#' or a digit, so a footer's "name : value" stays). */
static char *nt_unprefix(char *s)
{
    for (int round = 0; round < 2; round++) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '[') { /* [1,0]<stdout>: */
            char *e = strstr(s, "]<std");
            if (e && e - s < 32) {
                char *c = strchr(e, ':');
                if (c && c - e < 12) {
                    s = c + 1;
                    continue;
                }
            }
        }
        char *p = s;
        while (*p && *p != ' ' && *p != '\t' && *p != ':' && *p != '#' && p - s < 64)
            p++;
        if (p > s && *p == ':' && (p[1] == ' ' || p[1] == '\t')) {
            char *q = p + 1;
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q == '#' || isdigit((unsigned char)*q)) {
                s = q;
                continue;
            }
        }
        break;
    }
    return s;
}

/* "# size count type ..." -> the layout; 0 when the line is no column header. */
static int nt_header(char **tok, size_t n, struct nt_layout *lay)
{
    if (n < 4 || n > NT_MAXTOK)
        return 0;
    int busbw = 0, times = 0, f = 0;
    struct nt_layout l = {.time_scale = 1.0, .fields_oop = -1};
    if (strcmp(tok[0], "size") != 0 && strcmp(tok[0], "bytes") != 0)
        return 0;
    if (strcmp(tok[0], "bytes") == 0)
        l.time_scale = 1000.0; /* v1.0.0 src/common.cu:573: "%7.3f" of deltaSec * 1.0E3 */
    for (size_t i = 0; i < n; i++) {
        enum nt_col c = NT_SKIP;
        for (size_t k = 0; k < sizeof nt_names / sizeof nt_names[0]; k++)
            if (strcmp(tok[i], nt_names[k].name) == 0)
                c = nt_names[k].col;
        if (c == NT_TIME && ++times == 2)
            l.fields_oop = f;
        if (c == NT_BUSBW)
            busbw++;
        l.col[l.ncols] = c;
        l.half[l.ncols] = times >= 2;
        l.ncols++;
        f += c == NT_STAMP ? 2 : 1;
    }
    if (!busbw || !times)
        return 0;
    *lay = l;
    return 1;
}

/* A row without a header: 13 fields are v2.13's "size count type redop root" and two halves of "time algbw
 * busbw #wrong"; 12 v2.0-v2.12's with a redop (or a root, numeric) and the "error" column; 11 the same with
 * neither (all_gather).  Anything else is not guessed. */
static int nt_guess(char **tok, size_t n, struct nt_layout *lay)
{
    static const char *const v213[] = {"size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                                       "#wrong", "time", "algbw", "busbw", "#wrong"};
    const char *names[13];
    size_t k = 0;
    if (n == 13) {
        for (; k < 13; k++)
            names[k] = v213[k];
    } else if (n == 12 || n == 11) {
        names[k++] = "size";
        names[k++] = "count";
        names[k++] = "type";
        if (n == 12)
            names[k++] = isdigit((unsigned char)tok[3][0]) || tok[3][0] == '-' ? "root" : "redop";
        for (int h = 0; h < 2; h++) {
            names[k++] = "time";
            names[k++] = "algbw";
            names[k++] = "busbw";
            names[k++] = "error";
        }
    } else {
        return 0;
    }
    char *copy[13];
    for (size_t i = 0; i < k; i++)
        copy[i] = (char *)names[i];
    return nt_header(copy, k, lay);
}

static int nt_row_push(struct nt_state *st, const struct np_nccl_row *row)
{
    struct np_nccl_result *r = st->r;
    if (r->nrows == st->cap) {
        size_t nc = st->cap ? st->cap * 2 : 64;
        struct np_nccl_row *nr = realloc(r->rows, nc * sizeof *nr);
        if (!nr)
            return 0;
        r->rows = nr;
        st->cap = nc;
    }
    r->rows[r->nrows++] = *row;
    return 1;
}

/* A data row under the current layout; 0 when the fields do not fit it. */
static int nt_row(struct nt_state *st, char **tok, size_t n, struct np_nccl_row *row)
{
    const struct nt_layout *l = &st->lay;
    size_t full = 0;
    for (int i = 0; i < l->ncols; i++)
        full += l->col[i] == NT_STAMP ? 2 : 1;
    int oop_only = l->fields_oop > 0 && n == (size_t)l->fields_oop;
    if (n != full && !oop_only)
        return 0;
    *row = (struct np_nccl_row){.root = -1, .oop_wrong = -1, .ip_wrong = -1, .oop_time_us = NAN, .oop_algbw = NAN,
                                .oop_busbw = NAN, .ip_time_us = NAN, .ip_algbw = NAN, .ip_busbw = NAN,
                                .oop_error = NAN, .ip_error = NAN};
    int have_size = 0, have_bw = 0;
    size_t t = 0;
    for (int i = 0; i < l->ncols && t < n; i++) {
        const char *v = tok[t++];
        int ip = l->half[i];
        double d;
        long long ll;
        switch (l->col[i]) {
        case NT_SKIP:
            break;
        case NT_STAMP:
            t++; /* the time of day, the second field */
            break;
        case NT_SIZE:
            if (!nt_ll(v, &ll) || ll < 0)
                return 0;
            row->size = ll;
            have_size = 1;
            break;
        case NT_COUNT:
            if (!nt_ll(v, &ll) || ll < 0)
                return 0;
            row->count = ll;
            break;
        case NT_TYPE:
            nt_copy(row->type, sizeof row->type, v);
            break;
        case NT_REDOP:
            nt_copy(row->redop, sizeof row->redop, v);
            break;
        case NT_ROOT:
            if (!nt_ll(v, &ll) || ll < -1 || ll > 1 << 30)
                return 0;
            row->root = (int)ll;
            break;
        case NT_TIME:
            if (!nt_num(v, &d))
                return 0;
            *(ip ? &row->ip_time_us : &row->oop_time_us) = d * l->time_scale;
            break;
        case NT_ALGBW:
            if (!nt_num(v, &d))
                return 0;
            *(ip ? &row->ip_algbw : &row->oop_algbw) = d;
            break;
        case NT_BUSBW:
            if (!nt_num(v, &d))
                return 0;
            *(ip ? &row->ip_busbw : &row->oop_busbw) = d;
            have_bw = 1;
            break;
        case NT_WRONG:
            if (strcmp(v, "N/A") == 0)
                break;
            if (!nt_ll(v, &ll) || ll < 0)
                return 0;
            *(ip ? &row->ip_wrong : &row->oop_wrong) = ll;
            break;
        case NT_ERROR:
            if (strcmp(v, "N/A") == 0)
                break;
            if (!nt_num(v, &d))
                return 0;
            *(ip ? &row->ip_error : &row->oop_error) = d;
            break;
        }
    }
    return have_size && have_bw;
}

static void nt_host(struct nt_state *st, const char *h)
{
    for (int i = 0; i < st->nhosts; i++)
        if (strcmp(st->hosts[i], h) == 0)
            return;
    if (st->nhosts < NT_MAXHOSTS)
        nt_copy(st->hosts[st->nhosts++], sizeof st->hosts[0], h);
}

/* "#  Rank  0 Group  0 Pid 1234 on host device  0 [0000:07:00] NVIDIA H100 80GB HBM3" (v2.17.0
 * src/common.cu:1147), "#   Rank  0 Pid  1234 on host device  0 [0x07] Tesla V100" (v2.0.0 src/common.cu:737),
 * "#   Rank  0 on host device  0 [0x07] Tesla V100" (v1.0.0 src/common.cu:660).  line: after the '#'. */
static void nt_rank(struct nt_state *st, char *line)
{
    char *tok[NT_MAXTOK];
    char copy[NT_MAXLINE];
    nt_copy(copy, sizeof copy, line);
    size_t n = nt_split(copy, tok, NT_MAXTOK);
    if (n < 6 || n > NT_MAXTOK || strcmp(tok[0], "Rank") != 0)
        return;
    size_t i = 2;
    while (i + 1 < n && (strcmp(tok[i], "Group") == 0 || strcmp(tok[i], "Pid") == 0))
        i += 2;
    if (i + 4 > n || strcmp(tok[i], "on") != 0 || strcmp(tok[i + 2], "device") != 0)
        return;
    st->r->nranks++;
    nt_host(st, tok[i + 1]);
    if (!st->r->gpu[0]) {
        /* the name: what follows the bus id, spaces kept */
        const char *b = strchr(line, ']');
        if (b) {
            b++;
            while (*b == ' ')
                b++;
            nt_copy(st->r->gpu, sizeof st->r->gpu, b);
            size_t k = strlen(st->r->gpu);
            while (k && (st->r->gpu[k - 1] == ' ' || st->r->gpu[k - 1] == '\r'))
                st->r->gpu[--k] = '\0';
        }
    }
}

/* NCCL_VERSION_CODE: 2.9 on major*10000 + minor*100 + patch, before major*1000 + minor*100 + patch (nccl.h). */
static void nt_nccl_code(char *dst, size_t sz, long code)
{
    if (code >= 20900)
        snprintf(dst, sz, "%ld.%ld.%ld", code / 10000, code / 100 % 100, code % 100);
    else if (code >= 2000)
        snprintf(dst, sz, "%ld.%ld.%ld", code / 1000, code / 100 % 10, code % 100);
}

/* A '#' line (or v1.0.0's footer, printed without '#'). */
static void nt_comment(struct nt_state *st, char *s)
{
    struct np_nccl_result *r = st->r;
    const char *v;
    while (*s == ' ' || *s == '\t')
        s++;
    if (strncmp(s, "Rank ", 5) == 0) {
        nt_rank(st, s);
        return;
    }
    if ((v = strstr(s, "nccl-tests version ")) == s) { /* v2.17.0 src/common.cu: "# nccl-tests version %s ..." */
        char ver[32] = "";
        sscanf(v + 19, "%31s", ver);
        nt_copy(r->version, sizeof r->version, ver);
        const char *lib = strstr(s, "nccl-library=");
        if (lib && !r->nccl_version[0])
            nt_nccl_code(r->nccl_version, sizeof r->nccl_version, strtol(lib + 13, NULL, 10));
        return;
    }
    if (strncmp(s, "Collective test starting:", 25) == 0) {
        char name[32] = "";
        if (sscanf(s + 25, "%31s", name) == 1)
            nt_copy(r->collective, sizeof r->collective, name);
        return;
    }
    if (strncmp(s, "NCCL Tests compiled with NCCL ", 30) == 0 && !r->nccl_version[0]) { /* v1.0.0 :918 */
        char ver[32] = "";
        sscanf(s + 30, "%31s", ver);
        nt_copy(r->nccl_version, sizeof r->nccl_version, ver);
        return;
    }
    const char *colon = strchr(s, ':');
    if (!colon)
        return;
    if (strncmp(s, "Out of bounds values", 20) == 0) {
        long long ll;
        char num[32] = "";
        sscanf(colon + 1, "%31s", num);
        if (nt_ll(num, &ll) && ll >= 0 && ll < 1LL << 30)
            r->out_of_bounds = (int)ll;
    } else if (strncmp(s, "Avg bus bandwidth", 17) == 0) {
        double d;
        char num[32] = "";
        sscanf(colon + 1, "%31s", num);
        if (nt_num(num, &d))
            r->avg_busbw = d;
    }
}

/* Launchers that tag every write, not every line: "[0]" (or "[1,0]<stdout>:") where each of the three
 * printf calls of a row began (a pasted output of NVIDIA/nccl issue 1453).  Blanked in place, so the fields
 * stay apart. */
static void nt_untag(char *s)
{
    for (char *p = strchr(s, '['); p; p = strchr(p + 1, '[')) {
        char *q = p + 1;
        while (isdigit((unsigned char)*q) || (*q == ',' && q > p + 1))
            q++;
        if (q == p + 1 || *q != ']')
            continue;
        q++;
        if (strncmp(q, "<stdout>:", 9) == 0 || strncmp(q, "<stderr>:", 9) == 0)
            q += 9;
        memset(p, ' ', (size_t)(q - p));
    }
}

/* One line of the output, NUL-terminated, its end of line removed.  A '#' is optional on the lines that
 * have one: an output pasted into Markdown loses them (NVIDIA/nccl issue 583). */
static int nt_line(struct nt_state *st, char *line)
{
    struct np_nccl_result *r = st->r;
    char said[160]; /* the line as written, for a note */
    nt_copy(said, sizeof said, line);
    nt_untag(line);
    char *s = nt_unprefix(line);
    const char *nv = strstr(s, "NCCL version ");
    if (nv && !r->nccl_version[0] && (strstr(s, "NCCL INFO") || nv == s)) {
        char ver[32] = "";
        sscanf(nv + 13, "%31s", ver);
        nt_copy(r->nccl_version, sizeof r->nccl_version, ver);
        return 1;
    }
    if (!isdigit((unsigned char)*s)) {
        /* v1.0.0 src/common.cu:1027-1028 print the footer without '#' */
        char *c = *s == '#' ? s + 1 : s;
        char copy[NT_MAXLINE];
        char *tok[NT_MAXTOK + 1];
        nt_copy(copy, sizeof copy, c);
        size_t n = nt_split(copy, tok, NT_MAXTOK);
        struct nt_layout lay;
        if (n <= NT_MAXTOK && nt_header(tok, n, &lay)) {
            if (st->have_layout && r->nrows > 0)
                st->tables++;
            st->lay = lay;
            st->have_layout = 1;
            return 1;
        }
        if (*s == '#' || strncmp(c, "Rank ", 5) == 0 || strncmp(c, "Out of bounds values", 20) == 0 ||
            strncmp(c, "Avg bus bandwidth", 17) == 0 || strncmp(c, "nccl-tests version ", 19) == 0 ||
            strncmp(c, "Collective test starting:", 25) == 0) {
            nt_comment(st, c);
            return 1;
        }
    }
    if (isdigit((unsigned char)*s)) {
        char copy[NT_MAXLINE];
        char *tok[NT_MAXTOK + 1];
        nt_copy(copy, sizeof copy, s);
        size_t n = nt_split(copy, tok, NT_MAXTOK);
        struct np_nccl_row row;
        if (!st->have_layout) {
            /* rows pasted without their header: the layout from the field count, when it names one */
            struct nt_layout saved = st->lay;
            if (n <= NT_MAXTOK && nt_guess(tok, n, &st->lay) && nt_row(st, tok, n, &row)) {
                st->guessed++;
                st->lay = saved;
                return nt_row_push(st, &row) ? 1 : -1;
            }
            st->lay = saved;
            return 1;
        }
        if (n <= NT_MAXTOK && nt_row(st, tok, n, &row))
            return nt_row_push(st, &row) ? 1 : -1;
        if (st->bad_rows++ == 0)
            nt_copy(st->first_bad, sizeof st->first_bad, s);
        return 1;
    }
    /* the tool's own failure lines: "Test NCCL failure common.cu:891 'unhandled system error'" (src/common.h's
     * NCCLCHECK), "Test CUDA failure ...", " ... FAILED", and NCCL's warnings */
    if (strstr(s, "Test NCCL failure") || strstr(s, "Test CUDA failure") || strstr(s, "NCCL WARN") ||
        strstr(s, "Test failure")) {
        if (st->errors_seen++ < 3) {
            const char *t = said;
            while (*t == ' ')
                t++;
            nt_note(r, "the output said: %.130s", t);
        }
    }
    return 1;
}

void np_nccl_result_free(struct np_nccl_result *r)
{
    if (!r)
        return;
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}

static void nt_reset(struct np_nccl_result *r)
{
    *r = (struct np_nccl_result){.avg_busbw = NAN, .out_of_bounds = -1, .peak_index = -1, .peak_busbw = NAN};
}

/* The peak: the best busbw (out-of-place or in-place) of the rows within a factor 4 of the largest size (the
 * last three sizes of a doubling sweep), so that one noisy last point neither passes nor fails a check alone. */
static void nt_peak(struct np_nccl_result *r)
{
    long long max = -1;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].size > max)
            max = r->rows[i].size;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct np_nccl_row *w = &r->rows[i];
        if (w->size * 4 < max)
            continue;
        double b = w->oop_busbw;
        if (!isnan(w->ip_busbw) && (isnan(b) || w->ip_busbw > b))
            b = w->ip_busbw;
        if (!isnan(b) && (isnan(r->peak_busbw) || b > r->peak_busbw)) {
            r->peak_busbw = b;
            r->peak_index = (int)i;
        }
    }
}

enum np_status np_nccltests_parse(const char *text, size_t len, struct np_nccl_result *out)
{
    nt_reset(out);
    struct nt_state st = {.r = out};
    st.hosts = calloc(NT_MAXHOSTS, sizeof *st.hosts);
    if (!st.hosts)
        return NP_E_NOMEM;
    char line[NT_MAXLINE];
    size_t i = 0;
    int rc = 1, long_lines = 0;
    while (i < len && rc > 0) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t n = j - i;
        if (n >= sizeof line) {
            long_lines++; /* no line of the table is this long */
        } else {
            memcpy(line, text + i, n);
            line[n] = '\0';
            if (memchr(line, '\0', n)) /* a NUL inside: read up to it, as a C string would */
                n = strlen(line);
            while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
                line[--n] = '\0';
            rc = nt_line(&st, line);
        }
        i = j + 1;
    }
    out->nhosts = st.nhosts;
    free(st.hosts);
    if (rc < 0) {
        np_nccl_result_free(out);
        return NP_E_NOMEM;
    }
    int all_na = out->nrows > 0;
    for (size_t k = 0; k < out->nrows; k++) {
        const struct np_nccl_row *w = &out->rows[k];
        if (w->oop_wrong > 0)
            out->wrong_total += w->oop_wrong;
        if (w->ip_wrong > 0)
            out->wrong_total += w->ip_wrong;
        if (w->oop_wrong >= 0 || w->ip_wrong >= 0 || !isnan(w->oop_error) || !isnan(w->ip_error))
            all_na = 0;
    }
    out->check_off = all_na;
    nt_peak(out);
    if (st.tables)
        nt_note(out, "%d tables printed (a header again after rows): the rows of all are kept", st.tables + 1);
    if (st.guessed)
        nt_note(out, "%d row%s without a column header: columns taken from the field count", st.guessed,
                st.guessed == 1 ? "" : "s");
    if (st.bad_rows)
        nt_note(out, "%d line%s under the header did not fit its columns, the first: %.60s", st.bad_rows,
                st.bad_rows == 1 ? "" : "s", st.first_bad);
    if (long_lines)
        nt_note(out, "%d line%s longer than %d bytes skipped", long_lines, long_lines == 1 ? "" : "s", NT_MAXLINE - 1);
    if (!st.have_layout && !st.guessed)
        nt_note(out, "no result table header (\"# size count type ...\") found");
    else if (out->nrows == 0)
        nt_note(out, "a result table header but no row under it (the run stopped before its first size)");
    else if (isnan(out->avg_busbw))
        nt_note(out, "no \"Avg bus bandwidth\" line: the run did not finish its sweep");
    if (out->check_off)
        nt_note(out, "#wrong N/A on every row: data not checked (-c 0)");
    if (st.errors_seen > 3)
        nt_note(out, "%d more failure or warning lines", st.errors_seen - 3);
    return NP_OK;
}

enum np_status np_nccltests_read(const char *path, struct np_nccl_result *out, struct np_error *err)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    nt_reset(out);
    enum np_status st = np_file_read_all(path, 64u << 20, &buf, &len, err);
    if (st != NP_OK)
        return st;
    st = np_nccltests_parse((const char *)buf, len, out);
    free(buf);
    if (st != NP_OK)
        np_error_set(err, st, path, 0, 0, "%s", np_strerror(st));
    return st;
}

const char *np_nccl_verdict_name(enum np_nccl_verdict v)
{
    static const char *const names[] = {"-", "PASS", "FAIL"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "-";
}

enum np_nccl_verdict np_nccl_verdict(const struct np_nccl_result *r, double expected_gbs, char *why, size_t whysz)
{
    char tmp[8];
    if (!why || !whysz) {
        why = tmp;
        whysz = sizeof tmp;
    }
    why[0] = '\0';
    if (!r) {
        snprintf(why, whysz, "no result row");
        return NP_NCCL_NONE;
    }
    /* a data error FAILs whatever else: also the footer's count of an output whose rows were cut away */
    if (r->wrong_total > 0) {
        snprintf(why, whysz, "%lld wrong values (#wrong): data corrupted", r->wrong_total);
        return NP_NCCL_FAIL;
    }
    if (r->out_of_bounds > 0) {
        snprintf(why, whysz, "%d out of bounds values", r->out_of_bounds);
        return NP_NCCL_FAIL;
    }
    if (r->nrows == 0) {
        snprintf(why, whysz, "no result row");
        return NP_NCCL_NONE;
    }
    if (isnan(expected_gbs) || expected_gbs <= 0) {
        snprintf(why, whysz, "no expected bandwidth for this system");
        return NP_NCCL_NONE;
    }
    const struct np_nccl_row *p = r->peak_index >= 0 ? &r->rows[r->peak_index] : NULL;
    if (!p || isnan(r->peak_busbw)) {
        snprintf(why, whysz, "no busbw at the largest sizes");
        return NP_NCCL_NONE;
    }
    /* nccl-tests' own check of -G: FAILED below 0.9 x the given bandwidth (src/util.cu:778 @v2.19.6) */
    double floor = NP_NCCL_PASS_SHARE * expected_gbs;
    if (r->peak_busbw < floor) {
        snprintf(why, whysz, "busbw %.2f GB/s at %lld B is %.0f%% of the %.2f GB/s expected (below %.0f%%)",
                 r->peak_busbw, p->size, 100.0 * r->peak_busbw / expected_gbs, expected_gbs,
                 100.0 * NP_NCCL_PASS_SHARE);
        return NP_NCCL_FAIL;
    }
    snprintf(why, whysz, "busbw %.2f GB/s at %lld B is %.0f%% of the %.2f GB/s expected", r->peak_busbw, p->size,
             100.0 * r->peak_busbw / expected_gbs, expected_gbs);
    return NP_NCCL_PASS;
}
