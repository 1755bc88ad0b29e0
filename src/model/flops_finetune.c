/* finetune.c - the model FLOPs of SFT and LoRA fine-tuning on packed sequences,
 * and the table of pack statistics per pack length they fall back on when the
 * run's packed .npy files are not at hand (share/nemoperf/packs/squad.tsv).
 * Formula and sources: flops.h (np_finetune_flops_per_pack).
 */
#include "nemoperf/model/flops_finetune.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/flops.h"

static int finetune_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0)
        return 0;
    *out = v;
    return 1;
}

enum np_status np_pack_table_load(const char *path, struct np_pack_table *t, struct np_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return np_error_set(err, NP_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    char line[1024];
    int lineno = 0, header = 0;
    enum np_status st = NP_OK;
    while (st == NP_OK && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        if (!header) {
            if (strcmp(line, "pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource") != 0)
                st = np_error_set(err, NP_E_PARSE, path, lineno, 1,
                                  "header must be: pack_len tokens_per_pack sum_sq_per_pack source (tab-separated)");
            header = 1;
            continue;
        }
        char *cell[4], *save = NULL;
        int n = 0;
        for (char *c = strtok_r(line, "\t", &save); c && n < 4; c = strtok_r(NULL, "\t", &save))
            cell[n++] = c;
        struct np_pack_ref r = {0};
        double len;
        if (n != 4 || !finetune_number(cell[0], &len) || len < 1 || len > 1e7 || len != floor(len) ||
            !finetune_number(cell[1], &r.tokens_per_pack) || !finetune_number(cell[2], &r.sum_sq_per_pack)) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1,
                              "expected a pack length, two non-negative numbers and a source");
            break;
        }
        r.pack_len = (int)len;
        if (r.tokens_per_pack > len) {
            st = np_error_set(err, NP_E_PARSE, path, lineno, 1, "tokens_per_pack %g exceeds the pack length %d",
                              r.tokens_per_pack, r.pack_len);
            break;
        }
        snprintf(r.source, sizeof r.source, "%s", cell[3]);
        struct np_pack_ref *nr = realloc(t->rows, (t->n + 1) * sizeof *nr);
        if (!nr) {
            st = np_error_set(err, NP_E_NOMEM, path, lineno, 0, "out of memory");
            break;
        }
        t->rows = nr;
        t->rows[t->n++] = r;
    }
    if (st == NP_OK && !header)
        st = np_error_set(err, NP_E_PARSE, path, 0, 0, "empty file: expected a header line");
    fclose(f);
    return st;
}

enum np_status np_pack_table_load_default(struct np_pack_table *t, struct np_error *err)
{
    char *dir = np_data_path("packs");
    if (!dir)
        return np_error_set(err, NP_E_NOTFOUND, "packs", 0, 0,
                            "pack statistics not found (set NEMOPERF_DATADIR to the folder holding packs/)");
    size_t n = strlen(dir) + sizeof "/squad.tsv";
    char *p = malloc(n);
    enum np_status st = p ? NP_OK : np_error_set(err, NP_E_NOMEM, "packs", 0, 0, "out of memory");
    if (p) {
        snprintf(p, n, "%s/squad.tsv", dir);
        st = np_pack_table_load(p, t, err);
    }
    free(p);
    free(dir);
    return st;
}

const struct np_pack_ref *np_pack_table_find(const struct np_pack_table *t, int pack_len)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (t->rows[i].pack_len == pack_len)
            return &t->rows[i];
    return NULL;
}

void np_pack_table_free(struct np_pack_table *t)
{
    if (!t)
        return;
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

double np_finetune_k(const char *task)
{
    if (task && strcmp(task, "sft") == 0)
        return 1.0;
    if (task && strcmp(task, "lora") == 0)
        return 2.0 / 3.0;
    return NAN;
}

double np_finetune_tflops_per_gpu(const struct np_model *m, const char *task, int pack_len, double tokens_per_pack,
                                  double sum_sq_per_pack, double tokens_per_s_per_gpu)
{
    if (!m || pack_len <= 0 || !(tokens_per_s_per_gpu > 0))
        return NAN;
    double f = np_finetune_flops_per_pack(&m->arch, m->flops.kv_groups, np_finetune_k(task), tokens_per_pack,
                                          sum_sq_per_pack);
    return f / pack_len * tokens_per_s_per_gpu / 1e12;
}
