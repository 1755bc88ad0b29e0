/* check_finetune.c - seed 000's fine-tuning tables recomputed: every SFT/LoRA
 * row's model TFLOP/s/GPU from its tokens/s/GPU with the packed fine-tuning
 * FLOPs (flops.h) and the pack statistics of share/nemoperf/packs/squad.tsv;
 * 14 rows within 0.5 %, the one marked inconsistent exactly 2x off, as its
 * note's arithmetic says.  Also pins the formula and the data files' checks.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/flops_finetune.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"

START_TEST(test_every_finetune_row)
{
    struct np_recipe_set set = {0};
    struct np_ref_table ref = {0};
    struct np_pack_table packs = {0};
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_dir("recipes", &set, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_ref_load_dir("share/nemoperf/reference", &ref, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_pack_table_load("share/nemoperf/packs/squad.tsv", &packs, &err) == NP_OK, "%s", err.text);
    int rows = 0, within = 0, marked = 0;
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_ref_row *p = &ref.rows[i];
        if (strcmp(p->task, "pretrain") == 0 || strcmp(p->recipe, "automodel") == 0)
            continue; /* AutoModel's LoRA rows: step-time based, unpacked (check_published) */
        rows++;
        const struct np_recipe *r = np_recipe_find(&set, p->recipe);
        const struct np_model *m = r ? np_model_find(r, p->model_size) : NULL;
        ck_assert_msg(m, "%s:%d: no model %s %s", p->file, p->line, p->recipe, p->model_size);
        const struct np_pack_ref *pk = np_pack_table_find(&packs, p->pack_len);
        ck_assert_msg(pk, "%s:%d: no pack statistics for %d", p->file, p->line, p->pack_len);
        double got = np_finetune_tflops_per_gpu(m, p->task, p->pack_len, pk->tokens_per_pack, pk->sum_sq_per_pack,
                                                p->tokens_per_s_per_gpu);
        double ratio = p->model_tflops_per_gpu / got;
        printf("%-5s %-4s %-4s %5d GPUs P %5d: %6.0f tok/s/GPU -> %7.1f TFLOP/s/GPU, published %5.0f (%+.3f %%)%s\n",
               p->gpu_type, p->model_size, p->task, p->gpus, p->pack_len, p->tokens_per_s_per_gpu, got,
               p->model_tflops_per_gpu, (ratio - 1) * 100, p->consistent ? "" : "  [marked]");
        if (p->consistent) {
            ck_assert_msg(fabs(ratio - 1) <= 0.005, "%s:%d: %.1f vs published %.0f", p->file, p->line, got,
                          p->model_tflops_per_gpu);
            within++;
        } else {
            ck_assert_msg(p->note && strstr(p->note, "2.000"), "%s:%d: marked without its arithmetic", p->file,
                          p->line);
            ck_assert_msg(fabs(ratio - 2) <= 0.01, "%s:%d: marked 2x, ratio %.4f", p->file, p->line, ratio);
            marked++;
        }
    }
    ck_assert_int_eq(rows, 15);
    ck_assert_int_eq(within, 14);
    ck_assert_int_eq(marked, 1);
    /* the pre-training lookup never returns a fine-tuning row of the same key */
    const struct np_ref_row *pre = np_ref_find(&ref, "llama3", "8b", NP_DTYPE_FP8, "gb200", 8);
    const struct np_ref_row *sft = np_ref_find_task(&ref, "sft", "llama3", "8b", NP_DTYPE_FP8, "gb200", 8);
    ck_assert(pre && sft && pre != sft);
    ck_assert_double_eq(pre->tokens_per_s_per_gpu, 33099);
    ck_assert_double_eq(sft->tokens_per_s_per_gpu, 33437);
    ck_assert_int_eq(sft->pack_len, 16384);
    ck_assert_int_eq(sft->gbs, 8);
    np_pack_table_free(&packs);
    np_ref_free(&ref);
    np_recipe_set_free(&set);
}
END_TEST

/* Llama3 8B: L 32, h 4096, F 14336, A 32, G 8, V 128256. */
START_TEST(test_formula_pins)
{
    struct np_arch a = {.layers = 32, .hidden = 4096, .ffn_hidden = 14336, .heads = 32, .kv_groups = 8,
                        .vocab = 128256};
    const double linear = 32.0 * 4096 * 4096 * (12 + 12 * 8 / 32.0 + 18 * 14336 / 4096.0 + 6 * 128256 / (32.0 * 4096));
    ck_assert_double_eq_tol(linear, 45027950592.0, 1); /* 2^29 x (83 + 223/256) */
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&a, 0, 1, 1, 0), linear, 1);
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&a, 0, 2.0 / 3, 3, 0), 2 * linear, 1);
    /* the attention term is outside k: 12 L h sum s^2 */
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&a, 0, 2.0 / 3, 0, 1000), 12.0 * 32 * 4096 * 1000, 1e-3);
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&a, 0, 1, 0, 1000), 12.0 * 32 * 4096 * 1000, 1e-3);
    ck_assert(isnan(np_finetune_flops_per_pack(&a, 0, NAN, 1, 1)));
    ck_assert(isnan(np_finetune_k("pretrain")));
    ck_assert_double_eq(np_finetune_k("sft"), 1);
    ck_assert_double_eq_tol(np_finetune_k("lora"), 2.0 / 3, 1e-15);
}
END_TEST

static enum np_status load_text(const char *text, struct np_pack_table *t, struct np_error *err)
{
    char path[] = "/tmp/np-packs.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    enum np_status st = np_pack_table_load(path, t, err);
    remove(path);
    return st;
}

START_TEST(test_pack_table_errors)
{
    struct np_pack_table t = {0};
    struct np_error err;
    ck_assert_int_eq(load_text("# only a comment\n", &t, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "empty"), "%s", err.text);
    ck_assert_int_eq(load_text("len\tx\n", &t, &err), NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "header"), "%s", err.text);
    ck_assert_int_eq(load_text("pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource\n4096\t5000\t1\tx\n", &t, &err),
                     NP_E_PARSE);
    ck_assert_msg(strstr(err.text, "exceeds") && err.line == 2, "%d %s", err.line, err.text);
    ck_assert_int_eq(load_text("pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource\n4096\tmany\t1\tx\n", &t, &err),
                     NP_E_PARSE);
    ck_assert_int_eq(load_text("pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource\n2048\t2030\t488991\tMB\n", &t,
                               &err),
                     NP_OK);
    ck_assert_ptr_nonnull(np_pack_table_find(&t, 2048));
    ck_assert_ptr_null(np_pack_table_find(&t, 4096));
    np_pack_table_free(&t);
    /* a pack filled to the last token (tokens_per_pack = the length) is a pack, not an error */
    ck_assert_int_eq(load_text("pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource\n4096\t4096\t16777216\tx\n", &t,
                               &err),
                     NP_OK);
    ck_assert_double_eq(np_pack_table_find(&t, 4096)->tokens_per_pack, 4096);
    np_pack_table_free(&t);
    /* each cell's bounds: a length from 1 to 10^7, whole; non-negative finite numbers; four cells; the line named */
    static const struct {
        const char *row;
        int ok;
    } rows[] = {
        {"1\t1\t1\tx", 1},          {"0\t0\t0\tx", 0},         {"10000000\t1\t1\tx", 1},
        {"10000001\t1\t1\tx", 0},   {"4096.5\t1\t1\tx", 0},    {"4096\t1\t-1\tx", 0},
        {"4096\t-1\t1\tx", 0},      {"4096\tinf\t1\tx", 0},    {"4096\t1\tnan\tx", 0},
        {"4096\t1\t1", 0},           {"4096\t12x\t1\tx", 0},    {"4096\t0\t0\tx", 1},
        {"-4096\t1\t1\tx", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource\n# c\n%s\n", rows[i].row);
        memset(&err, 0, sizeof err);
        enum np_status st = load_text(text, &t, &err);
        ck_assert_msg((st == NP_OK) == rows[i].ok, "row %zu (%s): %d %s", i, rows[i].row, st, err.text);
        if (rows[i].ok)
            ck_assert_uint_eq(t.n, 1);
        else {
            ck_assert_int_eq(err.line, 3);
            ck_assert_msg(strstr(err.text, "expected a pack length, two non-negative numbers and a source"), "row %zu: %s",
                          i, err.text);
        }
        np_pack_table_free(&t);
    }
    /* a header and no rows: an empty table; no file: said */
    ck_assert_int_eq(load_text("pack_len\ttokens_per_pack\tsum_sq_per_pack\tsource\n", &t, &err), NP_OK);
    ck_assert_uint_eq(t.n, 0);
    ck_assert_ptr_null(np_pack_table_find(&t, 4096));
    np_pack_table_free(&t);
    ck_assert_int_eq(np_pack_table_load("/nonexistent/squad.tsv", &t, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "cannot open"), "%s", err.text);
    /* TFLOP/s/GPU: FLOPs per pack over the pack length x tokens/s/GPU; nothing without a model, a length or a speed */
    struct np_arch a = {32, 4096, 14336, 32, 8, 128256, 0, 0};
    struct np_model m;
    memset(&m, 0, sizeof m);
    m.arch = a;
    double f = np_finetune_flops_per_pack(&a, 0, 1.0, 4080.4352, 827392);
    ck_assert_double_eq_tol(np_finetune_tflops_per_gpu(&m, "sft", 4096, 4080.4352, 827392, 16222),
                            f / 4096 * 16222 / 1e12, 1e-9);
    ck_assert(isnan(np_finetune_tflops_per_gpu(NULL, "sft", 4096, 4080.4352, 827392, 16222)));
    ck_assert(isnan(np_finetune_tflops_per_gpu(&m, "sft", 0, 4080.4352, 827392, 16222)));
    ck_assert(isnan(np_finetune_tflops_per_gpu(&m, "sft", 4096, 4080.4352, 827392, 0)));
    ck_assert(isnan(np_finetune_tflops_per_gpu(&m, "pretrain", 4096, 4080.4352, 827392, 16222)));
    ck_assert(isnan(np_finetune_k(NULL)));
    /* the installed (here: source tree) table is found from the program's place */
    ck_assert_msg(np_pack_table_load_default(&t, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(t.n, 3);
    np_pack_table_free(&t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("finetune");
    TCase *tc = tcase_create("finetune");
    tcase_add_test(tc, test_every_finetune_row);
    tcase_add_test(tc, test_formula_pins);
    tcase_add_test(tc, test_pack_table_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
