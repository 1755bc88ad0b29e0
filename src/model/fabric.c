/* fabric.c - the expected nccl-tests bus bandwidth per GPU type, scope and collective, read from a table.
 *
 * share/nemoperf/fabric/fabric.tsv (or NEMOPERF_FABRIC_TABLE) holds one row per GPU type, scope and collective
 * set: the bottleneck link's nominal rate, whether it counts per GPU or per node, the fraction a healthy system
 * reaches, and the sources of both.  Strict like the reference tables: a bad cell names file:line:column.
 */
#include "nemoperf/model/fabric.h"
#include "nemoperf/model/recipe.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fab_col { FAB_GPU, FAB_MATCH, FAB_SCOPE, FAB_COLL, FAB_LINK, FAB_GBS, FAB_PER, FAB_FRACTION, FAB_SOURCE,
               FAB_NCOLS };
static const char *const fab_names[FAB_NCOLS] = {"gpu", "match", "scope", "collectives", "link", "gbs", "per",
                                                 "fraction", "source"};

struct fab_row {
    char gpu[32], match[128], scope[48], coll[160], link[32], source[256];
    double gbs, fraction;
    int per_node;
};

struct np_fabric_table {
    struct fab_row *rows;
    size_t n;
    char path[512];
};

void np_fabric_table_free(struct np_fabric_table *t)
{
    if (!t)
        return;
    free(t->rows);
    free(t);
}

static int fab_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && !errno && isfinite(*v) && *v > 0;
}

static enum np_status fab_row(struct np_fabric_table *t, char *line, int lineno, struct np_error *err)
{
    char *cell[FAB_NCOLS];
    size_t n = 0, col = 1;
    size_t cols[FAB_NCOLS];
    char *p = line;
    while (n < FAB_NCOLS) {
        cell[n] = p;
        cols[n] = col + (size_t)(p - line);
        n++;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    if (n != FAB_NCOLS || strchr(cell[FAB_NCOLS - 1], '\t'))
        return np_error_set(err, NP_E_PARSE, t->path, lineno, 1, "expected %d tab-separated cells", FAB_NCOLS);
    struct fab_row r = {0};
    double v;
    if (!fab_num(cell[FAB_GBS], &v))
        return np_error_set(err, NP_E_PARSE, t->path, lineno, (int)cols[FAB_GBS],
                            "gbs: expected a positive number of GB/s, got \"%s\"", cell[FAB_GBS]);
    r.gbs = v;
    if (!fab_num(cell[FAB_FRACTION], &v) || v > 2)
        return np_error_set(err, NP_E_PARSE, t->path, lineno, (int)cols[FAB_FRACTION],
                            "fraction: expected a number in (0, 2], got \"%s\"", cell[FAB_FRACTION]);
    r.fraction = v;
    if (strcmp(cell[FAB_PER], "gpu") != 0 && strcmp(cell[FAB_PER], "node") != 0)
        return np_error_set(err, NP_E_PARSE, t->path, lineno, (int)cols[FAB_PER],
                            "per: expected gpu or node, got \"%s\"", cell[FAB_PER]);
    r.per_node = strcmp(cell[FAB_PER], "node") == 0;
    static const size_t sizes[] = {sizeof r.gpu, sizeof r.match, sizeof r.scope, sizeof r.coll, sizeof r.link};
    char *dst[] = {r.gpu, r.match, r.scope, r.coll, r.link};
    for (int i = 0; i < 5; i++) {
        if (!cell[i][0] || strlen(cell[i]) >= sizes[i])
            return np_error_set(err, NP_E_PARSE, t->path, lineno, (int)cols[i], "%s: empty or longer than %zu",
                                fab_names[i], sizes[i] - 1);
        memcpy(dst[i], cell[i], strlen(cell[i]) + 1);
    }
    snprintf(r.source, sizeof r.source, "%s", cell[FAB_SOURCE]);
    struct fab_row *nr = realloc(t->rows, (t->n + 1) * sizeof *nr);
    if (!nr)
        return np_error_set(err, NP_E_NOMEM, t->path, lineno, 0, "out of memory");
    t->rows = nr;
    t->rows[t->n++] = r;
    return NP_OK;
}

static enum np_status fab_load(const char *path, struct np_fabric_table **out, struct np_error *err)
{
    struct np_fabric_table *t = calloc(1, sizeof *t);
    if (!t)
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    snprintf(t->path, sizeof t->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        np_fabric_table_free(t);
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot open the fabric table: %s", strerror(e));
    }
    char line[2048];
    int lineno = 0, header = 0;
    enum np_status st = NP_OK;
    while (st == NP_OK && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "line longer than %zu bytes", sizeof line - 2);
            break;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        if (!header) {
            char want[256] = "";
            for (int i = 0; i < FAB_NCOLS; i++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "\t" : "", fab_names[i]);
            if (strcmp(line, want) != 0)
                st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "expected the header: gpu match scope "
                                                                     "collectives link gbs per fraction source "
                                                                     "(tab-separated)");
            header = 1;
            continue;
        }
        st = fab_row(t, line, lineno, err);
    }
    fclose(f);
    if (st == NP_OK && t->n == 0)
        st = np_error_set(err, NP_E_PARSE, path, lineno, 0, "no row");
    if (st != NP_OK) {
        np_fabric_table_free(t);
        return st;
    }
    *out = t;
    return NP_OK;
}

enum np_status np_fabric_table_load(const char *path, struct np_fabric_table **out, struct np_error *err)
{
    *out = NULL;
    if (!path || !*path)
        path = getenv("NEMOPERF_FABRIC_TABLE");
    if (path && *path)
        return fab_load(path, out, err);
    char *dir = np_data_path("fabric");
    if (!dir)
        return np_error_set(err, NP_E_NOTFOUND, "fabric", 0, 0,
                            "fabric table not found (set NEMOPERF_DATADIR to the folder holding fabric/, or "
                            "NEMOPERF_FABRIC_TABLE to a table)");
    char p[4096];
    snprintf(p, sizeof p, "%s/fabric.tsv", dir);
    free(dir);
    return fab_load(p, out, err);
}

/* whether the comma-separated list holds word ("*" any) */
static int fab_in(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if ((l == 1 && *p == '*') || (l == wl && strncmp(p, word, l) == 0))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* whether a GPU name (lowercased) fits a row's match list: parts, "=x" exactly */
static int fab_match(const char *list, const char *name)
{
    char part[128];
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l && l < sizeof part) {
            memcpy(part, p, l);
            part[l] = '\0';
            if (part[0] == '=' ? strcmp(part + 1, name) == 0 : strstr(name, part) != NULL)
                return 1;
        }
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

enum np_status np_fabric_expect(const struct np_fabric_table *t, const char *gpu_type, const char *scope,
                                const char *collective, int gpus_per_node, struct np_fabric_expectation *out,
                                struct np_error *err)
{
    memset(out, 0, sizeof *out);
    out->gbs = out->nominal_gbs = out->fraction = NAN;
    if (!t)
        return np_error_set(err, NP_E_INVALID, "fabric", 0, 0, "no fabric table");
    char gpu[96], coll[64];
    size_t i = 0;
    for (; gpu_type && gpu_type[i] && i < sizeof gpu - 1; i++)
        gpu[i] = (char)tolower((unsigned char)gpu_type[i]);
    gpu[i] = '\0';
    while (i && gpu[i - 1] == ' ')
        gpu[--i] = '\0';
    snprintf(coll, sizeof coll, "%s", collective ? collective : "");
    size_t cl = strlen(coll);
    if (cl > 5 && strcmp(coll + cl - 5, "_perf") == 0)
        coll[cl - 5] = '\0';
    if (!scope || !*scope)
        scope = "all";
    if (gpus_per_node <= 0)
        gpus_per_node = 8;
    int gpu_known = 0;
    for (size_t k = 0; k < t->n; k++) {
        const struct fab_row *r = &t->rows[k];
        if (!fab_match(r->match, gpu))
            continue;
        gpu_known = 1;
        if (!fab_in(r->scope, scope) || !fab_in(r->coll, coll))
            continue;
        out->nominal_gbs = r->gbs * (r->per_node ? gpus_per_node : 1);
        out->fraction = r->fraction;
        out->gbs = out->nominal_gbs * r->fraction;
        snprintf(out->gpu, sizeof out->gpu, "%s", r->gpu);
        snprintf(out->link, sizeof out->link, "%s", r->link);
        snprintf(out->source, sizeof out->source, "%s", r->source);
        snprintf(out->table, sizeof out->table, "%s", t->path);
        return NP_OK;
    }
    if (!gpu_known)
        return np_error_set(err, NP_E_NOTFOUND, t->path, 0, 0, "no row for the GPU \"%s\" (give your own table: "
                            "NEMOPERF_FABRIC_TABLE)", gpu_type ? gpu_type : "");
    return np_error_set(err, NP_E_NOTFOUND, t->path, 0, 0, "no row for %s, scope %s, collective %s", gpu, scope,
                        coll[0] ? coll : "(none)");
}
