/* reference.c - read the published tables transcribed from the seeds.
 *
 * Strict: every data line must have as many cells as the header, numbers must
 * parse completely, and errors name file:line:column.  Used by the tests that
 * recompute every published number and by nemoperf-parse --reference.
 */
#include "nemoperf/parse/reference.h"
#include "nemoperf/util/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum ref_col {
    REF_RECIPE, REF_SIZE, REF_DTYPE, REF_GPU, REF_GPUS, REF_STEP, REF_TPS, REF_MFU, REF_DAYS, REF_TPSG,
    REF_TFLOPS, REF_SOURCE,
    /* optional from here on */
    REF_TASK, REF_CONSISTENT, REF_NOTE, REF_GBS, REF_MBS, REF_PACK, REF_TP, REF_PP, REF_VP, REF_GA, REF_SUPERSEDED,
    REF_NCOLS
};
#define REF_FIRST_OPTIONAL REF_SOURCE

static const char *const ref_col_names[REF_NCOLS] = {
    "recipe", "model_size", "dtype", "gpu_type", "gpus", "step_time_s", "tokens_per_s", "mfu_percent",
    "days_1t", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "source", "task", "consistent", "note", "gbs",
    "mbs", "pack_len", "tp", "pp", "vp", "ga", "superseded"};

/* Split line in place at tabs; returns the number of cells (at most max). */
static size_t ref_split(char *line, char **cells, size_t max, size_t *cols)
{
    size_t n = 0;
    char *p = line;
    while (n < max) {
        cells[n] = p;
        cols[n] = (size_t)(p - line) + 1;
        n++;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

static int ref_number(const char *s, double *out)
{
    if (strcmp(s, "-") == 0 || strcasecmp(s, "n/a") == 0 || *s == '\0') {
        *out = NAN;
        return 1;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < 0)
        return 0;
    *out = v;
    return 1;
}

static void ref_row_free(struct np_ref_row *r)
{
    free(r->recipe);
    free(r->model_size);
    free(r->gpu_type);
    free(r->source);
    free(r->task);
    free(r->note);
    free(r->superseded);
    free(r->file);
}

enum np_status np_ref_load_file(const char *path, struct np_ref_table *t, struct np_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, have_header = 0;
    int map[REF_NCOLS];
    size_t ncells_hdr = 0;
    enum np_status st = NP_OK;
    while (st == NP_OK && (len = np_file_next_line(f, &line, &cap, &lineno)) >= 0) {
        if (strlen(line) != (size_t)len) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "NUL byte in line");
            break;
        }
        char *cells[64];
        size_t cols[64];
        size_t n = ref_split(line, cells, 64, cols);
        if (!have_header) {
            for (int c = 0; c < REF_NCOLS; c++) {
                map[c] = -1;
                for (size_t i = 0; i < n; i++)
                    if (strcmp(cells[i], ref_col_names[c]) == 0)
                        map[c] = (int)i;
                if (map[c] < 0 && c < REF_FIRST_OPTIONAL) {
                    st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "header lacks column \"%s\"",
                                      ref_col_names[c]);
                    break;
                }
            }
            ncells_hdr = n;
            have_header = 1;
            continue;
        }
        if (n != ncells_hdr) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "%zu cells, the header has %zu", n, ncells_hdr);
            break;
        }
        struct np_ref_row r;
        memset(&r, 0, sizeof r);
        r.line = lineno;
        r.dtype = np_dtype_parse(cells[map[REF_DTYPE]]);
        if (r.dtype == NP_DTYPE_NONE) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, (int)cols[map[REF_DTYPE]], "dtype: expected bf16 or fp8");
            break;
        }
        char *end;
        long g = strtol(cells[map[REF_GPUS]], &end, 10);
        if (*end || g <= 0 || g > 1000000) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, (int)cols[map[REF_GPUS]],
                              "gpus: expected a positive integer");
            break;
        }
        r.gpus = (int)g;
        double *num[] = {&r.step_time_s, &r.tokens_per_s, &r.mfu_percent, &r.days_1t, &r.tokens_per_s_per_gpu,
                         &r.model_tflops_per_gpu};
        for (int c = REF_STEP; c <= REF_TFLOPS && st == NP_OK; c++)
            if (!ref_number(cells[map[c]], num[c - REF_STEP]))
                st = np_error_set(err, NP_E_PARSE, path, lineno, (int)cols[map[c]],
                                  "%s: \"%s\" is not a number or -", ref_col_names[c], cells[map[c]]);
        int *ints[] = {&r.gbs, &r.mbs, &r.pack_len, &r.tp, &r.pp, &r.vp, &r.ga};
        for (int c = REF_GBS; c <= REF_GA && st == NP_OK; c++) {
            if (map[c] < 0 || strcmp(cells[map[c]], "-") == 0)
                continue;
            long v = strtol(cells[map[c]], &end, 10);
            if (*end || end == cells[map[c]] || v < 0 || v > 100000000)
                st = np_error_set(err, NP_E_PARSE, path, lineno, (int)cols[map[c]],
                                  "%s: expected a non-negative integer or -", ref_col_names[c]);
            else
                *ints[c - REF_GBS] = (int)v;
        }
        r.consistent = 1;
        if (st == NP_OK && map[REF_CONSISTENT] >= 0) {
            const char *v = cells[map[REF_CONSISTENT]];
            if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
                st = np_error_set(err, NP_E_PARSE, path, lineno, (int)cols[map[REF_CONSISTENT]],
                                  "consistent: expected yes or no");
            r.consistent = strcmp(v, "no") != 0;
        }
        if (st != NP_OK)
            break;
        const char *task = map[REF_TASK] >= 0 ? cells[map[REF_TASK]] : "pretrain";
        if (strcmp(task, "pretrain") != 0 && strcmp(task, "sft") != 0 && strcmp(task, "lora") != 0) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, (int)cols[map[REF_TASK]],
                              "task: expected pretrain, sft or lora");
            break;
        }
        const char *note = map[REF_NOTE] >= 0 ? cells[map[REF_NOTE]] : "-";
        if (!r.consistent && strcmp(note, "-") == 0) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "a row marked inconsistent needs its reason in note");
            break;
        }
        const char *sup = map[REF_SUPERSEDED] >= 0 ? cells[map[REF_SUPERSEDED]] : "-";
        if (strcmp(sup, "-") != 0 && *sup && !(r.superseded = strdup(sup))) {
            st = np_error_set(err, NP_E_NOMEM, path, lineno, 0, "out of memory");
            break;
        }
        r.task = strdup(task);
        if (strcmp(note, "-") != 0 && !(r.note = strdup(note))) {
            free(r.task);
            free(r.superseded);
            st = np_error_set(err, NP_E_NOMEM, path, lineno, 0, "out of memory");
            break;
        }
        r.recipe = strdup(cells[map[REF_RECIPE]]);
        r.model_size = strdup(cells[map[REF_SIZE]]);
        r.gpu_type = strdup(cells[map[REF_GPU]]);
        r.source = strdup(map[REF_SOURCE] >= 0 ? cells[map[REF_SOURCE]] : "");
        r.file = strdup(path);
        struct np_ref_row *nr = realloc(t->rows, (t->n + 1) * sizeof *nr);
        if (!r.recipe || !r.model_size || !r.gpu_type || !r.source || !r.file || !r.task || !nr) {
            ref_row_free(&r);
            if (nr)
                t->rows = nr;
            st = np_error_set(err, NP_E_NOMEM, path, lineno, 0, "out of memory");
            break;
        }
        t->rows = nr;
        t->rows[t->n++] = r;
    }
    if (st == NP_OK && !have_header)
        st = np_error_set(err, NP_E_PARSE, path, 0, 0, "empty file: expected a header line");
    free(line);
    fclose(f);
    return st;
}


enum np_status np_ref_load_dir(const char *dir, struct np_ref_table *t, struct np_error *err)
{
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    if (n < 0)
        return np_error_set(err, NP_E_IO, dir, 0, 0, "cannot open: %s", strerror(errno));
    enum np_status st = NP_OK;
    int found = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        size_t l = strlen(nm);
        if (st == NP_OK && nm[0] != '.' && l > 4 && strcmp(nm + l - 4, ".tsv") == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dir, nm);
            st = np_ref_load_file(path, t, err);
            found++;
        }
        free(list[i]);
    }
    free(list);
    if (st == NP_OK && !found)
        st = np_error_set(err, NP_E_NOTFOUND, dir, 0, 0, "no reference tables (*.tsv) in this folder");
    return st;
}

enum np_status np_ref_load_default(struct np_ref_table *t, struct np_error *err)
{
    char *dir = np_data_path("reference");
    if (!dir)
        return np_error_set(err, NP_E_NOTFOUND, "reference", 0, 0,
                            "reference folder not found (set NEMOPERF_DATADIR to the folder holding reference/)");
    enum np_status st = np_ref_load_dir(dir, t, err);
    free(dir);
    return st;
}

const struct np_ref_row *np_ref_find(const struct np_ref_table *t, const char *recipe, const char *size,
                                     enum np_dtype dtype, const char *gpu_type, int gpus)
{
    return np_ref_find_task(t, "pretrain", recipe, size, dtype, gpu_type, gpus);
}

const struct np_ref_row *np_ref_find_task(const struct np_ref_table *t, const char *task, const char *recipe,
                                          const char *size, enum np_dtype dtype, const char *gpu_type, int gpus)
{
    if (!t || !task || !recipe || !size || !gpu_type)
        return NULL;
    for (size_t i = 0; i < t->n; i++) {
        const struct np_ref_row *r = &t->rows[i];
        if (r->superseded) /* an older version of a table: kept as data, never the row to compare with */
            continue;
        if (r->gpus == gpus && r->dtype == dtype && strcmp(r->task, task) == 0 && strcasecmp(r->recipe, recipe) == 0 &&
            strcasecmp(r->model_size, size) == 0 && strcasecmp(r->gpu_type, gpu_type) == 0)
            return r;
    }
    return NULL;
}

void np_ref_free(struct np_ref_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        ref_row_free(&t->rows[i]);
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}
