/* mbridge_md.c - Megatron-Bridge markdown: a container version's summary table with measured figures.
 *
 * Reads the version's layout file (written by extract-mbridge.py) and writes its sections, "Model:" or
 * "System:" groups and tables as Megatron-Bridge's docs/performance-summary*.md print them, the published
 * configuration cells verbatim and the two throughput cells from the measurements.
 */
#include "nemoperf/report/mbridge_md.h"
#include "nemoperf/util/fileio.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* column name in the layout file -> published header cell (extract-mbridge.py HEADER) */
static const char *const mbridge_md_header[][2] = {
    {"system", "System"},       {"model", "Model"},  {"gpus", "#-GPUs"},  {"precision", "Precision"},
    {"gbs", "GBS"},             {"mbs", "MBS"},      {"seq_len", "Sequence Length"},
    {"fsdp", "FSDP"},           {"tp", "TP"},        {"pp", "PP"},        {"cp", "CP"},
    {"vp", "VP"},               {"ep", "EP"},        {"ga", "GA"},
    {"tokens_per_s_per_gpu", "Tokens / sec / GPU"}, {"model_tflops_per_gpu", "Model TFLOP / sec / GPU"},
};

static const char *const mbridge_md_section[][2] = {
    {"pretrain", "Pre-Training Performance"}, {"sft", "SFT Performance"}, {"lora", "LoRA Performance"}};

static const char *mbridge_md_lookup(const char *const (*tab)[2], size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(tab[i][0], key) == 0)
            return tab[i][1];
    return NULL;
}

static void mbridge_md_num(char *buf, size_t cap, double v)
{
    if (isnan(v))
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%.0f", v);
}

/* The measured cell for a published cell: "a" or "a (b)" with measured values in place of published ones
 * where a measurement exists (published kept otherwise). */
static void mbridge_md_cell(char *out, size_t cap, const char *published, const struct np_mb_measured *first,
                            const struct np_mb_measured *second, int tokens)
{
    char a[64], b[64];
    const char *open = strchr(published, '(');
    if (open) {
        size_t la = (size_t)(open - published);
        while (la > 0 && published[la - 1] == ' ')
            la--;
        snprintf(a, sizeof a, "%.*s", (int)la, published);
        snprintf(b, sizeof b, "%s", open + 1);
        char *close = strchr(b, ')');
        if (close)
            *close = '\0';
    } else {
        snprintf(a, sizeof a, "%s", published);
        b[0] = '\0';
    }
    if (first)
        mbridge_md_num(a, sizeof a, tokens ? first->tokens_per_s_per_gpu : first->tflops_per_gpu);
    if (second && open)
        mbridge_md_num(b, sizeof b, tokens ? second->tokens_per_s_per_gpu : second->tflops_per_gpu);
    if (open)
        snprintf(out, cap, "%s (%s)", a, b);
    else
        snprintf(out, cap, "%s", a);
}

enum np_status np_mb_md_render(FILE *out, const char *layout_tsv, const char *container,
                               const struct np_mb_measured *m, size_t n, int all_rows, struct np_error *err)
{
    FILE *f = fopen(layout_tsv, "r");
    if (!f)
        return np_error_set(err, NP_E_IO, layout_tsv, 0, 0, "cannot open: %s", strerror(errno));
    char *line = NULL, *cells[40], hdr_buf[1024] = "", *hdr[40];
    size_t cap = 0, nhdr = 0;
    ssize_t len;
    int lineno = 0;
    enum np_status st = NP_OK;
    char section[32] = "", group[160] = "";
    fprintf(out, "## %s NeMo Container\n", container);
    while (st == NP_OK && (len = np_file_next_line(f, &line, &cap, &lineno)) >= 0) {
        size_t nc = 0;
        for (char *p = line; nc < 40;) {
            cells[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (!nhdr) {
            if (nc < 5 || strcmp(cells[0], "line") != 0 || strcmp(cells[nc - 1], "footnote") != 0 ||
                strlen(line) >= sizeof hdr_buf) {
                st = np_error_set(err, NP_E_PARSE, layout_tsv, lineno, 1,
                                  "expected a header: line section group <columns> footnote");
                break;
            }
            /* keep the header's names (cells point into line, which getline reuses) */
            size_t off = 0;
            for (size_t i = 0; i < nc; i++) {
                size_t l = strlen(cells[i]);
                memcpy(hdr_buf + off, cells[i], l + 1);
                hdr[i] = hdr_buf + off;
                off += l + 1;
            }
            nhdr = nc;
            continue;
        }
        if (nc != nhdr) {
            st = np_error_set(err, NP_E_PARSE, layout_tsv, lineno, 1, "%zu cells, the header has %zu", nc, nhdr);
            break;
        }
        int src = atoi(cells[0]);
        const struct np_mb_measured *first = NULL, *second = NULL;
        for (size_t i = 0; i < n; i++)
            if (m[i].line == src) {
                if (m[i].second)
                    second = &m[i];
                else
                    first = &m[i];
            }
        if (!first && !second && !all_rows)
            continue;
        if (strcmp(section, cells[1]) != 0) {
            const char *title = mbridge_md_lookup(mbridge_md_section, 3, cells[1]);
            fprintf(out, "\n### %s\n", title ? title : cells[1]);
            snprintf(section, sizeof section, "%s", cells[1]);
            group[0] = '\0';
        }
        if (strcmp(group, cells[2]) != 0) {
            snprintf(group, sizeof group, "%s", cells[2]);
            fprintf(out, "\n#### %s\n\n|", group);
            for (size_t i = 3; i + 1 < nhdr; i++) {
                const char *h = mbridge_md_lookup(mbridge_md_header, 16, hdr[i]);
                fprintf(out, " %s |", h ? h : hdr[i]);
            }
            fputs("\n|", out);
            for (size_t i = 3; i + 1 < nhdr; i++)
                fputs("---|", out);
            fputc('\n', out);
        }
        const char *foot = cells[nhdr - 1];
        fputc('|', out);
        for (size_t i = 3; i + 1 < nhdr; i++) {
            char cell[160];
            if (strcmp(hdr[i], "tokens_per_s_per_gpu") == 0)
                mbridge_md_cell(cell, sizeof cell, cells[i], first, second, 1);
            else if (strcmp(hdr[i], "model_tflops_per_gpu") == 0)
                mbridge_md_cell(cell, sizeof cell, cells[i], first, second, 0);
            else
                snprintf(cell, sizeof cell, "%s", cells[i]);
            fprintf(out, " %s", cell);
            if (i + 2 == nhdr && strcmp(foot, "-") != 0) /* the tags sit on the last cell as published */
                for (const char *t = foot; *t;) {
                    size_t l = strcspn(t, ",");
                    fprintf(out, "[^%.*s]", (int)l, t);
                    t += l + (t[l] == ',');
                }
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    free(line);
    fclose(f);
    if (st == NP_OK && ferror(out))
        st = np_error_set(err, NP_E_IO, "<output>", 0, 0, "write error: %s", strerror(errno));
    return st;
}
