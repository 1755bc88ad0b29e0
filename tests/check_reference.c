/* check_reference.c - the published-table reader: lookups and precise errors. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
    Suite *s = suite_create("reference");
    TCase *tc = tcase_create("reference");
    tcase_add_test(tc, test_shipped_tables);
    tcase_add_test(tc, test_errors_have_position);
    tcase_add_test(tc, test_find_and_refuse);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
