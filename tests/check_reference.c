/* check_reference.c - the published-table reader: lookups and precise errors. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/parse/reference.h"

static const char *tmp = "/tmp/np-ref-test.tsv";

static enum np_status load_text(const char *text, struct np_ref_table *t, struct np_error *err)
{
    FILE *f = fopen(tmp, "w");
    ck_assert(f);
    fputs(text, f);
    fclose(f);
    memset(t, 0, sizeof *t);
    enum np_status st = np_ref_load_file(tmp, t, err);
    unlink(tmp);
    return st;
}

START_TEST(test_shipped_tables)
{
    struct np_ref_table t = {0};
    struct np_error err;
    ck_assert_int_eq(np_ref_load_dir("share/nemoperf/reference", &t, &err), NP_OK);
    const struct np_ref_row *r = np_ref_find(&t, "llama3.1", "70b", NP_DTYPE_FP8, "h100", 1024);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->step_time_s, 10.08);
    ck_assert_double_eq(r->tokens_per_s, 1664406);
    ck_assert_double_eq(r->mfu_percent, 39.50);
    ck_assert_double_eq(r->days_1t, 6.95);
    ck_assert(isnan(r->tokens_per_s_per_gpu));
    r = np_ref_find(&t, "llama3.1", "405b", NP_DTYPE_BF16, "H100", 32);
    ck_assert(isnan(r->days_1t)); /* n/a in the seed */
    r = np_ref_find(&t, "mixtral", "8x22b", NP_DTYPE_FP8, "gb200", 256);
    ck_assert_double_eq(r->tokens_per_s_per_gpu, 2731);
    ck_assert_double_eq(r->model_tflops_per_gpu, 1008);
    ck_assert_str_eq(r->source, "seed 000");
    ck_assert_ptr_null(np_ref_find(&t, "mixtral", "8x22b", NP_DTYPE_BF16, "gb200", 256));
    np_ref_free(&t);
    np_ref_free(&t);
    np_ref_free(NULL);
}
END_TEST

static const char *hdr = "recipe\tmodel_size\tdtype\tgpu_type\tgpus\tstep_time_s\ttokens_per_s\tmfu_percent\tdays_1t\t"
                         "tokens_per_s_per_gpu\tmodel_tflops_per_gpu\n";

START_TEST(test_errors_have_position)
{
    struct np_ref_table t;
    struct np_error err;
    char buf[2048];
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1.5\tfast\t-\t-\t-\t-\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_int_eq(err.column, 22);
    ck_assert_str_eq(err.text, "tokens_per_s: \"fast\" is not a number or -");
    np_ref_free(&t);
    snprintf(buf, sizeof buf, "%sx\t8b\tfp16\th100\t8\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "dtype: expected bf16 or fp8");
    np_ref_free(&t);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "6 cells, the header has 11");
    np_ref_free(&t);
    ck_assert_int_eq(load_text("recipe\tdtype\n", &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "header lacks column \"model_size\"");
    ck_assert_int_eq(load_text("", &t, &err), NP_E_PARSE);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t-3\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "gpus: expected a positive integer");
    np_ref_free(&t);
}
END_TEST

/* the row to compare with: a superseded row never (the current one, or nothing), every key must match;
 * rows the reader must refuse: an extra cell, 0 GPUs, an inconsistent row without its reason, a bad flag */
START_TEST(test_find_and_refuse)
{
    struct np_ref_table t;
    struct np_error err;
    const char *h2 = "recipe\tmodel_size\tdtype\tgpu_type\tgpus\tstep_time_s\ttokens_per_s\tmfu_percent\tdays_1t\t"
                     "tokens_per_s_per_gpu\tmodel_tflops_per_gpu\ttask\tconsistent\tnote\tsuperseded\n";
    char buf[4096];
    snprintf(buf, sizeof buf,
             "%sllama3\t8b\tbf16\th100\t8\t2.0\t1\t1\t1\t100\t1\tpretrain\tyes\t-\t24.09\n"
             "llama3\t8b\tbf16\th100\t8\t1.5\t1\t1\t1\t200\t1\tpretrain\tyes\t-\t-\n"
             "llama3\t70b\tfp8\th100\t64\t3.0\t1\t1\t1\t300\t1\tpretrain\tno\tslow node\t-\n"
             "mixtral\t8x7b\tbf16\tb200\t16\t4.0\t1\t1\t1\t400\t1\tpretrain\tyes\t-\t25.02\n"
             "llama3\t8b\tbf16\th100\t8\t1.0\t1\t1\t1\t500\t1\tlora\tyes\t-\t-\n",
             h2);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_int_eq((int)t.n, 5);
    const struct np_ref_row *r = np_ref_find(&t, "llama3", "8b", NP_DTYPE_BF16, "h100", 8);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->tokens_per_s_per_gpu, 200); /* the current row, not the superseded one before it */
    ck_assert_int_eq(r->line, 3);
    ck_assert_ptr_null(np_ref_find(&t, "mixtral", "8x7b", NP_DTYPE_BF16, "b200", 16)); /* only superseded */
    r = np_ref_find_task(&t, "lora", "LLAMA3", "8B", NP_DTYPE_BF16, "H100", 8);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(r->tokens_per_s_per_gpu, 500);
    r = np_ref_find(&t, "llama3", "70b", NP_DTYPE_FP8, "h100", 64);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->consistent, 0);
    ck_assert_str_eq(r->note, "slow node");
    /* one key off: nothing */
    ck_assert_ptr_null(np_ref_find(&t, "llama3", "8b", NP_DTYPE_BF16, "h100", 16));
    ck_assert_ptr_null(np_ref_find(&t, "llama3", "8b", NP_DTYPE_FP8, "h100", 8));
    ck_assert_ptr_null(np_ref_find(&t, "llama3", "70b", NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find(&t, "llama3", "8b", NP_DTYPE_BF16, "b200", 8));
    ck_assert_ptr_null(np_ref_find(&t, "nemotron", "8b", NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find_task(&t, "sft", "llama3", "8b", NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find(NULL, "llama3", "8b", NP_DTYPE_BF16, "h100", 8));
    np_ref_free(&t);
    /* columns found by name in any order (the note first); an empty line is skipped, not the table's end */
    snprintf(buf, sizeof buf,
             "note\tconsistent\t%sreason one\tno\tllama3\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_int_eq((int)t.n, 1);
    ck_assert_str_eq(t.rows[0].note, "reason one");
    ck_assert_int_eq(t.rows[0].consistent, 0);
    np_ref_free(&t);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\n\ny\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_int_eq((int)t.n, 2);
    ck_assert_int_eq(t.rows[1].line, 4);
    np_ref_free(&t);
    /* an extra cell */
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\textra\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "12 cells, the header has 11");
    np_ref_free(&t);
    /* 0 GPUs */
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t0\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "gpus: expected a positive integer");
    np_ref_free(&t);
    /* an inconsistent row with no reason; a consistent flag that is neither yes nor no */
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\tpretrain\tno\t-\t-\n", h2);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "a row marked inconsistent needs its reason in note");
    np_ref_free(&t);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\tpretrain\tmaybe\tr\t-\n", h2);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "consistent: expected yes or no");
    np_ref_free(&t);
    /* a zero and a '-' figure are read (0 and NAN), a negative one refused */
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t0\t-\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_double_eq(t.rows[0].step_time_s, 0);
    ck_assert(isnan(t.rows[0].tokens_per_s));
    ck_assert_double_eq(t.rows[0].model_tflops_per_gpu, 1);
    np_ref_free(&t);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t-2\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    np_ref_free(&t);
}
END_TEST

static void write_bytes(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    ck_assert(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* one data line under hdr, its cell k (0-based) replaced by cell: the row's text and that cell's column */
static int row_with(char *buf, size_t size, const char *head, int k, const char *cell)
{
    static const char *const base[] = {"x", "8b", "bf16", "h100", "8", "1.5", "1000", "40", "10", "125", "300"};
    size_t n = (size_t)snprintf(buf, size, "%s", head);
    int col = 0;
    for (int i = 0; i < 11; i++) {
        if (i == k)
            col = (int)(n - strlen(head)) + (i ? 1 : 0) + 1;
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? "\t" : "", i == k ? cell : base[i]);
    }
    snprintf(buf + n, size - n, "\n");
    return col;
}

/* the reader's edges, each answer written here: a file or folder that cannot be opened, a NUL byte, empty and n/a
 * figures (none) against infinite, out-of-range (over and under) and trailing-text ones (refused, at their column),
 * the GPU count's limits (1000000 read, 1000001 refused), the configuration columns each in its own field and their
 * limits, the task, source, consistent and superseded cells, more than 64 cells, a folder's tables in name order
 * (hidden files and other names skipped, an error in a later table kept), the installed folder found or not, a
 * lookup missing a key */
START_TEST(test_reader_edges)
{
    struct np_ref_table t;
    struct np_error err;
    char buf[8192];
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(np_ref_load_file("/nonexistent-np/ref.tsv", &t, &err), NP_E_IO);
    ck_assert_str_eq(err.source, "/nonexistent-np/ref.tsv");
    snprintf(buf, sizeof buf, "cannot open: %s", strerror(ENOENT));
    ck_assert_str_eq(err.text, buf);
    ck_assert_uint_eq(t.n, 0);
    /* a NUL byte in a data line */
    int len = snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\n", hdr);
    buf[strlen(hdr) + 1] = '\0';
    write_bytes(tmp, buf, (size_t)len);
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(np_ref_load_file(tmp, &t, &err), NP_E_PARSE);
    unlink(tmp);
    ck_assert_str_eq(err.text, "NUL byte in line");
    ck_assert_int_eq(err.line, 2);
    ck_assert_int_eq(err.column, 1);
    np_ref_free(&t);
    /* a NUL byte in the header line: that, not an empty file */
    write_bytes(tmp, "recipe\0\n", 8);
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(np_ref_load_file(tmp, &t, &err), NP_E_PARSE);
    unlink(tmp);
    ck_assert_str_eq(err.text, "NUL byte in line");
    ck_assert_int_eq(err.line, 1);
    /* each of the eleven required columns missing, or named in another case: the header names it */
    static const char *const req[] = {"recipe", "model_size", "dtype", "gpu_type", "gpus", "step_time_s",
                                      "tokens_per_s", "mfu_percent", "days_1t", "tokens_per_s_per_gpu",
                                      "model_tflops_per_gpu"};
    for (int c = 0; c < 11; c++)
        for (int upper = 0; upper < 2; upper++) {
            char h[512] = "";
            for (int i = 0; i < 11; i++)
                if (i != c || upper)
                    snprintf(h + strlen(h), sizeof h - strlen(h), "%s%s", h[0] ? "\t" : "",
                             i == c ? "Recipe_or_Upper" : req[i]);
            snprintf(buf, sizeof buf, "%s\n", h);
            if (upper) { /* the column in capitals */
                char up[64];
                snprintf(up, sizeof up, "%s", req[c]);
                up[0] = (char)(up[0] - 'a' + 'A');
                char *at = strstr(buf, "Recipe_or_Upper");
                snprintf(h, sizeof h, "%.*s%s%s", (int)(at - buf), buf, up, at + strlen("Recipe_or_Upper"));
                snprintf(buf, sizeof buf, "%s", h);
            }
            ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
            char want[100];
            snprintf(want, sizeof want, "header lacks column \"%s\"", req[c]);
            ck_assert_str_eq(err.text, want);
            ck_assert_int_eq(err.line, 1);
            np_ref_free(&t);
        }
    /* figures: '' and n/a are none; inf, nan, 1e999 and 12x are refused at their cell */
    static const char *const none[] = {"", "n/a", "N/A", "-"};
    for (int i = 0; i < 4; i++)
        for (int k = 5; k <= 10; k++) {
            row_with(buf, sizeof buf, hdr, k, none[i]);
            ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
            const double *v[] = {&t.rows[0].step_time_s, &t.rows[0].tokens_per_s, &t.rows[0].mfu_percent,
                                 &t.rows[0].days_1t, &t.rows[0].tokens_per_s_per_gpu, &t.rows[0].model_tflops_per_gpu};
            static const double want[] = {1.5, 1000, 40, 10, 125, 300};
            for (int j = 0; j < 6; j++)
                if (j == k - 5)
                    ck_assert_msg(isnan(*v[j]), "'%s' in column %d read as %g", none[i], k, *v[j]);
                else
                    ck_assert_msg(*v[j] == want[j], "column %d: %g, want %g", j + 5, *v[j], want[j]);
            np_ref_free(&t);
        }
    static const char *const names[] = {"step_time_s", "tokens_per_s", "mfu_percent", "days_1t",
                                        "tokens_per_s_per_gpu", "model_tflops_per_gpu"};
    static const char *const bad[] = {"inf", "nan", "1e999", "1e-400", "12x", "-0.5"}; /* 1e-400: out of range too */
    for (int i = 0; i < 6; i++)
        for (int k = 5; k <= 10; k++) {
            int col = row_with(buf, sizeof buf, hdr, k, bad[i]);
            ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
            char want[200];
            snprintf(want, sizeof want, "%s: \"%s\" is not a number or -", names[k - 5], bad[i]);
            ck_assert_str_eq(err.text, want);
            ck_assert_int_eq(err.line, 2);
            ck_assert_int_eq(err.column, col);
            np_ref_free(&t);
        }
    /* the GPU count */
    static const char *const gbad[] = {"8x", "", "1000001", "0", "-8"};
    for (int i = 0; i < 5; i++) {
        int col = row_with(buf, sizeof buf, hdr, 4, gbad[i]);
        ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
        ck_assert_str_eq(err.text, "gpus: expected a positive integer");
        ck_assert_int_eq(err.column, col);
        np_ref_free(&t);
    }
    row_with(buf, sizeof buf, hdr, 4, "1000000");
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_int_eq(t.rows[0].gpus, 1000000);
    np_ref_free(&t);
    row_with(buf, sizeof buf, hdr, 4, "1");
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_int_eq(t.rows[0].gpus, 1);
    ck_assert_str_eq(t.rows[0].task, "pretrain"); /* no task column */
    ck_assert_str_eq(t.rows[0].source, "");       /* no source column */
    ck_assert_ptr_null(t.rows[0].note);
    ck_assert_ptr_null(t.rows[0].superseded);
    ck_assert_int_eq(t.rows[0].consistent, 1);
    ck_assert_str_eq(t.rows[0].file, tmp);
    ck_assert(t.rows[0].gbs == 0 && t.rows[0].mbs == 0 && t.rows[0].pack_len == 0 && t.rows[0].tp == 0 &&
              t.rows[0].pp == 0 && t.rows[0].vp == 0 && t.rows[0].ga == 0);
    np_ref_free(&t);
    /* the configuration columns: each in its own field; '-' is none (0); the limits */
    char hc[512];
    snprintf(hc, sizeof hc, "%.*s\tsource\tgbs\tmbs\tpack_len\ttp\tpp\tvp\tga\ttask\tsuperseded\n", (int)strlen(hdr) - 1, hdr);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\tseed 9\t512\t1\t4096\t4\t2\t3\t100000000\tsft\t\n", hc);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    const struct np_ref_row *r = &t.rows[0];
    ck_assert(r->gbs == 512 && r->mbs == 1 && r->pack_len == 4096 && r->tp == 4 && r->pp == 2 && r->vp == 3 &&
              r->ga == 100000000);
    ck_assert_str_eq(r->task, "sft");
    ck_assert_str_eq(r->source, "seed 9");
    ck_assert_ptr_null(r->superseded); /* an empty superseded cell: a current row */
    ck_assert_ptr_eq(np_ref_find_task(&t, "sft", "x", "8b", NP_DTYPE_BF16, "h100", 8), r);
    ck_assert_ptr_null(np_ref_find(&t, "x", "8b", NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find_task(&t, NULL, "x", "8b", NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find_task(&t, "sft", NULL, "8b", NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find_task(&t, "sft", "x", NULL, NP_DTYPE_BF16, "h100", 8));
    ck_assert_ptr_null(np_ref_find_task(&t, "sft", "x", "8b", NP_DTYPE_BF16, NULL, 8));
    np_ref_free(&t);
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\t-\t-\t-\t-\t-\t-\t-\t-\tlora\t2025-01-01\n", hc);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert(t.rows[0].gbs == 0 && t.rows[0].ga == 0 && t.rows[0].tp == 0);
    ck_assert_str_eq(t.rows[0].superseded, "2025-01-01");
    ck_assert_ptr_null(np_ref_find_task(&t, "lora", "x", "8b", NP_DTYPE_BF16, "h100", 8));
    np_ref_free(&t);
    static const char *const ibad[] = {"", "12x", "-1", "100000001", "x"};
    static const char *const inames[] = {"gbs", "mbs", "pack_len", "tp", "pp", "vp", "ga"};
    for (int i = 0; i < 5; i++)
        for (int c = 0; c < 7; c++) {
            char cells[7][16];
            for (int j = 0; j < 7; j++)
                snprintf(cells[j], sizeof cells[j], "%s", j == c ? ibad[i] : "1");
            int n = snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\ts\t", hc);
            int col = n - (int)strlen(hc) + 1;
            for (int j = 0; j < 7; j++) {
                if (j < c)
                    col += (int)strlen(cells[j]) + 1;
                n += snprintf(buf + n, sizeof buf - (size_t)n, "%s\t", cells[j]);
            }
            snprintf(buf + n, sizeof buf - (size_t)n, "pretrain\t-\n");
            ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
            char want[100];
            snprintf(want, sizeof want, "%s: expected a non-negative integer or -", inames[c]);
            ck_assert_str_eq(err.text, want);
            ck_assert_int_eq(err.line, 2);
            ck_assert_int_eq(err.column, col);
            np_ref_free(&t);
        }
    /* a task that is none of the three, at its column */
    snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\ts\t1\t1\t1\t1\t1\t1\t1\tpretraining\t-\n", hc);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "task: expected pretrain, sft or lora");
    ck_assert_int_eq(err.column, (int)strlen("x\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\ts\t1\t1\t1\t1\t1\t1\t1\t") + 1);
    np_ref_free(&t);
    /* the consistent flag first */
    snprintf(buf, sizeof buf, "consistent\tnote\t%sno\tslow node\tx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_int_eq(t.rows[0].consistent, 0);
    ck_assert_str_eq(t.rows[0].note, "slow node");
    np_ref_free(&t);
    /* the source column first */
    snprintf(buf, sizeof buf, "source\t%sseed 7\tx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1\n", hdr);
    ck_assert_int_eq(load_text(buf, &t, &err), NP_OK);
    ck_assert_str_eq(t.rows[0].source, "seed 7");
    ck_assert_str_eq(t.rows[0].recipe, "x");
    np_ref_free(&t);
    /* more than 64 cells: 64 counted */
    int n = snprintf(buf, sizeof buf, "%sx\t8b\tbf16\th100\t8\t1\t1\t1\t1\t1\t1", hdr);
    for (int i = 0; i < 60; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "\t%d", i);
    snprintf(buf + n, sizeof buf - (size_t)n, "\n");
    ck_assert_int_eq(load_text(buf, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.text, "64 cells, the header has 11");
    np_ref_free(&t);

    /* a folder: its *.tsv in name order; hidden files and other names skipped */
    char dir[256], ref[300], p[400];
    snprintf(dir, sizeof dir, "%s/np-ref-dir.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(ref, sizeof ref, "%s/reference", dir);
    ck_assert_int_eq(mkdir(ref, 0700), 0);
    memset(&t, 0, sizeof t);
    ck_assert_int_eq(np_ref_load_dir(ref, &t, &err), NP_E_NOTFOUND);
    ck_assert_str_eq(err.text, "no reference tables (*.tsv) in this folder");
    ck_assert_str_eq(err.source, ref);
    static const char *const skipped[] = {".hidden.tsv", "notes.txt", "tsv", "b.tsv.bak", "c.TSV"};
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", ref, skipped[i]);
        write_bytes(p, "not a table\n", 12);
    }
    ck_assert_int_eq(np_ref_load_dir(ref, &t, &err), NP_E_NOTFOUND);
    row_with(buf, sizeof buf, hdr, 0, "second");
    snprintf(p, sizeof p, "%s/b.tsv", ref);
    write_bytes(p, buf, strlen(buf));
    row_with(buf, sizeof buf, hdr, 0, "first");
    snprintf(p, sizeof p, "%s/a.tsv", ref);
    write_bytes(p, buf, strlen(buf));
    ck_assert_int_eq(np_ref_load_dir(ref, &t, &err), NP_OK);
    ck_assert_uint_eq(t.n, 2);
    ck_assert_str_eq(t.rows[0].recipe, "first");
    ck_assert_str_eq(t.rows[0].file, p);
    ck_assert_str_eq(t.rows[1].recipe, "second");
    np_ref_free(&t);
    /* the installed folder: NEMOPERF_DATADIR names it, or nothing is found */
    setenv("NEMOPERF_DATADIR", dir, 1);
    ck_assert_int_eq(np_ref_load_default(&t, &err), NP_OK);
    ck_assert_uint_eq(t.n, 2);
    np_ref_free(&t);
    snprintf(p, sizeof p, "%s/nothing-here", dir);
    setenv("NEMOPERF_DATADIR", p, 1);
    ck_assert_int_eq(np_ref_load_default(&t, &err), NP_E_NOTFOUND);
    ck_assert_str_eq(err.text, "reference folder not found (set NEMOPERF_DATADIR to the folder holding reference/)");
    unsetenv("NEMOPERF_DATADIR");
    /* a later table's error is the answer, naming that table */
    row_with(buf, sizeof buf, hdr, 2, "fp16");
    snprintf(p, sizeof p, "%s/c.tsv", ref);
    write_bytes(p, buf, strlen(buf));
    ck_assert_int_eq(np_ref_load_dir(ref, &t, &err), NP_E_PARSE);
    ck_assert_str_eq(err.source, p);
    ck_assert_str_eq(err.text, "dtype: expected bf16 or fp8");
    np_ref_free(&t);
    snprintf(p, sizeof p, "%s/nothing-here", dir);
    ck_assert_int_eq(np_ref_load_dir(p, &t, &err), NP_E_IO);
    snprintf(buf, sizeof buf, "cannot open: %s", strerror(ENOENT));
    ck_assert_str_eq(err.text, buf);
    snprintf(buf, sizeof buf, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(buf), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reference");
    TCase *tc = tcase_create("reference");
    tcase_add_test(tc, test_shipped_tables);
    tcase_add_test(tc, test_errors_have_position);
    tcase_add_test(tc, test_find_and_refuse);
    tcase_add_test(tc, test_reader_edges);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
