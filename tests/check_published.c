/* check_published.c - recompute every published number from recipes + one input.
 *
 * Seeds 003/004: from the published step time recompute throughput (+-1
 * token/s), MFU (+-0.2 points) and days to train 1T tokens (+-0.01).  Seed
 * 000: from tokens/s/GPU recompute model TFLOP/s/GPU (+-0.5 %).  A cell that
 * cannot match must be listed in share/nemoperf/reference/unmatched.txt with
 * its reason; a listed cell that does match fails too (stale list).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/flops.h"
#include "nemoperf/model/model_flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"

static struct np_recipe_set set;
static struct np_ref_table ref;

struct unmatched {
    char key[160], column[40], reason[600];
    int used;
};
static struct unmatched um[64];
static size_t num;

static void load_unmatched(void)
{
    FILE *f = fopen("share/nemoperf/reference/unmatched.txt", "r");
    ck_assert_msg(f != NULL, "share/nemoperf/reference/unmatched.txt must exist (run tests from the repo root)");
    char line[1024];
    int first = 1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (first || line[0] == '#' || !line[0]) {
            first = 0;
            continue;
        }
        char *k = strtok(line, "\t"), *c = strtok(NULL, "\t"), *r = strtok(NULL, "\t");
        ck_assert_msg(k && c && r, "unmatched.txt: need key, column, reason");
        ck_assert(num < 64);
        snprintf(um[num].key, sizeof um[num].key, "%s", k);
        snprintf(um[num].column, sizeof um[num].column, "%s", c);
        snprintf(um[num].reason, sizeof um[num].reason, "%s", r);
        num++;
    }
    fclose(f);
}

static struct unmatched *find_unmatched(const char *key, const char *col)
{
    for (size_t i = 0; i < num; i++)
        if (strcmp(um[i].key, key) == 0 && strcmp(um[i].column, col) == 0)
            return &um[i];
    return NULL;
}

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_dir("recipes", &set, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_ref_load_dir("share/nemoperf/reference", &ref, &err) == NP_OK, "%s:%d: %s", err.source,
                  err.line, err.text);
    load_unmatched();
}

static void teardown(void)
{
    np_recipe_set_free(&set);
    np_ref_free(&ref);
    num = 0;
}

static int checked, listed, failures, blanks;
static int am_rows;
static double am_worst_tps, am_worst_tflops;

/* Compare one cell; returns 1 when it passes or is listed as unmatchable. */
static void cell(const char *key, const char *col, double got, double want, double tol, int relative,
                 const char *arith)
{
    if (isnan(want)) {
        /* A blank/"n/a" cell of a column the publication has: it must be explained. */
        struct unmatched *b = find_unmatched(key, col);
        if (b) {
            b->used = 1;
            blanks++;
        } else {
            fprintf(stderr, "BLANK %s %s: published cell is empty and not listed in unmatched.txt (computed %.6g)\n",
                    key, col, got);
            failures++;
        }
        return;
    }
    checked++;
    double diff = fabs(got - want);
    int ok = relative ? diff <= tol * want : diff <= tol;
    struct unmatched *u = find_unmatched(key, col);
    if (u) {
        u->used = 1;
        if (ok) {
            fprintf(stderr, "STALE unmatched entry: %s %s now matches (%s)\n", key, col, arith);
            failures++;
        } else {
            listed++;
        }
        return;
    }
    if (!ok) {
        fprintf(stderr, "MISMATCH %s %s: published %.6g, computed %.6g (%s)\n", key, col, want, got, arith);
        failures++;
    }
}

START_TEST(test_every_published_number)
{
    int rows = 0;
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_ref_row *p = &ref.rows[i];
        if (strcmp(p->task, "pretrain") != 0 && strcmp(p->recipe, "automodel") != 0)
            continue; /* fine-tuning rows: check_finetune.c */
        if (strcmp(p->recipe, "wan2.1") == 0)
            continue; /* DFM publishes TFLOP/s/GPU alone (and a superseded version): check_dfm.c */
        const struct np_recipe *r = np_recipe_find(&set, p->recipe);
        ck_assert_msg(r, "%s:%d: recipe %s not in recipes/", p->file, p->line, p->recipe);
        const struct np_model *m = np_model_find(r, p->model_size);
        ck_assert_msg(m, "%s:%d: model %s not in recipe %s", p->file, p->line, p->model_size, p->recipe);
        const struct np_config_row *row = np_row_find(m, p->gpu_type, p->dtype, p->gpus);
        ck_assert_msg(row, "%s:%d: no parallel config for %s %s %s %s x%d", p->file, p->line, p->recipe,
                      p->model_size, np_dtype_name(p->dtype, 0), p->gpu_type, p->gpus);
        rows++;
        char key[160];
        snprintf(key, sizeof key, "%s/%s/%s/%s/%d", p->recipe, p->model_size, np_dtype_name(p->dtype, 0),
                 p->gpu_type, p->gpus);
        double flops = np_model_flops_row(m, row, row->seq_len);
        double peak = np_gpu_peak_tflops(p->gpu_type, p->dtype);
        double step = p->step_time_s;
        if (isnan(step))
            step = np_step_from_tokens_per_gpu(p->tokens_per_s_per_gpu, row->seq_len, row->gbs, row->gpus);
        ck_assert_msg(!isnan(step), "%s: neither step time nor tokens/s/GPU published", key);
        struct np_metrics mt;
        np_metrics_from_step(step, row->seq_len, row->gbs, row->gpus, flops, peak, 1e12, &mt);
        char arith[400];
        snprintf(arith, sizeof arith, "%d x %d / %g s = %.1f tok/s; %d x %.4e / %g / %d / %g T = %.2f%%",
                 row->seq_len, row->gbs, step, mt.tokens_per_s, row->gbs, flops, step, row->gpus, peak,
                 mt.mfu_percent);
        if (!isnan(p->step_time_s) && !isnan(p->tokens_per_s_per_gpu)) {
            /* seed 001 (AutoModel) publishes "Time per Global Step", tokens/s/GPU and model TFLOP/s/GPU:
             * both recomputed from the step time within 1 %, the FLOPs per the model's family (and LoRA) */
            cell(key, "tokens_per_s_per_gpu", mt.tokens_per_s_per_gpu, p->tokens_per_s_per_gpu, 0.01, 1, arith);
            cell(key, "model_tflops_per_gpu", mt.model_tflops_per_gpu, p->model_tflops_per_gpu, 0.01, 1, arith);
            am_rows++;
            double e1 = fabs(mt.tokens_per_s_per_gpu / p->tokens_per_s_per_gpu - 1);
            double e2 = fabs(mt.model_tflops_per_gpu / p->model_tflops_per_gpu - 1);
            am_worst_tps = e1 > am_worst_tps ? e1 : am_worst_tps;
            am_worst_tflops = e2 > am_worst_tflops ? e2 : am_worst_tflops;
        } else if (!isnan(p->step_time_s)) { /* seeds 003/004 publish step time, throughput, MFU, days */
            cell(key, "tokens_per_s", mt.tokens_per_s, p->tokens_per_s, 1.0, 0, arith);
            cell(key, "mfu_percent", mt.mfu_percent, p->mfu_percent, 0.2, 0, arith);
            cell(key, "days_1t", mt.days_to_train, p->days_1t, 0.01, 0, arith);
        } else { /* seed 000 publishes tokens/s/GPU and model TFLOP/s/GPU */
            cell(key, "model_tflops_per_gpu", mt.model_tflops_per_gpu, p->model_tflops_per_gpu, 0.005, 1, arith);
        }
    }
    for (size_t i = 0; i < num; i++)
        if (!um[i].used) {
            fprintf(stderr, "unmatched.txt lists %s %s, which is not a published cell\n", um[i].key, um[i].column);
            failures++;
        }
    printf("seed 001: %d rows, worst tokens/s/GPU %.3f %%, worst TFLOP/s/GPU %.3f %%\n", am_rows,
           100 * am_worst_tps, 100 * am_worst_tflops);
    ck_assert_int_eq(am_rows, 15);
    printf("published: %d rows, %d cells recomputed (%d listed as unmatchable), %d blank cells explained in "
           "unmatched.txt, %d failures\n",
           rows, checked, listed, blanks, failures);
    ck_assert_int_eq(failures, 0);
    /* seeds 003/004: 58 rows x 3 cells - 6 n/a days; seed 000: 24 TFLOP cells - 3 blank */
    ck_assert_int_eq(checked, 58 * 3 - 6 + 21 + 15 * 2);
    ck_assert_int_eq(blanks, 6 + 3);
}
END_TEST

/* Every parallel-config row of the recipes has a published reference row and vice versa. */
START_TEST(test_rows_match_reference)
{
    size_t nrows = 0, missing = 0;
    for (size_t i = 0; i < set.n; i++) {
        const struct np_recipe *r = &set.recipes[i];
        for (size_t m = 0; m < r->nmodels; m++)
            for (size_t k = 0; k < r->models[m].nrows; k++) {
                const struct np_config_row *row = &r->models[m].rows[k];
                for (unsigned d = NP_DTYPE_BF16; d <= NP_DTYPE_FP8; d <<= 1) {
                    if (!(row->dtypes & d))
                        continue;
                    nrows++;
                    if (!np_ref_find_task(&ref, np_model_task(&r->models[m]), r->name, r->models[m].size,
                                          (enum np_dtype)d, row->gpu_type, row->gpus)) {
                        fprintf(stderr, "recipe row without published numbers: %s %s %s %s x%d\n", r->name,
                                r->models[m].size, np_dtype_name((enum np_dtype)d, 0), row->gpu_type, row->gpus);
                        missing++;
                    }
                }
            }
    }
    /* seed 003: 23 rows (x2 dtypes where BF16/FP8) -> 5x2 + 6 + 6 + 6x2 = 34 results;
     * seed 004: 12 rows x2 = 24; seed 000: 8 models x 3 systems = 24; seed 001 (AutoModel): 9 pre-training
     * rows and 6 LoRA rows, both recomputed above (the LoRA ones are found under task "lora"); DFM (seed 002):
     * 6 rows, its superseded 2025-11-19 rows not counted (no recipe row: np_ref_find skips them). */
    size_t npre = 0, nam_lora = 0;
    for (size_t i = 0; i < ref.n; i++) {
        npre += strcmp(ref.rows[i].task, "pretrain") == 0 && !ref.rows[i].superseded;
        nam_lora += strcmp(ref.rows[i].task, "lora") == 0 && strcmp(ref.rows[i].recipe, "automodel") == 0;
    }
    printf("recipes: %zu (row, dtype) pairs, reference: %zu pre-training rows + %zu AutoModel LoRA rows\n", nrows,
           npre, nam_lora);
    ck_assert_uint_eq(missing, 0);
    ck_assert_uint_eq(nrows, npre + nam_lora);
    ck_assert_uint_eq(npre, 34 + 24 + 24 + 9 + 6); /* + DFM's newest: 4 Megatron-Core and 2 AutoModel rows */
    ck_assert_uint_eq(nam_lora, 6);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("published");
    TCase *tc = tcase_create("published");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_every_published_number);
    tcase_add_test(tc, test_rows_match_reference);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
