/* check_ftparse.c - nemoperf-parse on fine-tuning runs: for every fine-tuning row of
 * seed 000 a NeMo 25.04 log is written (step time = the pack length x GBS NVIDIA ran over
 * the published tokens/s/GPU x GPUs) in its finetune_<recipe>_<size>_<task>_<dtype>_<gpus>
 * folder and parsed with --gpu: it must read back the published tokens/s/GPU and, with the
 * fine-tuning FLOPs, the published model TFLOP/s/GPU (the row marked inconsistent: 2x, as
 * its note says) and PASS --reference.  A manifest naming a packed .npy written by real
 * NumPy makes the pack statistics measured instead of taken from the table.
 * Stand-in: the logs are written here (no GPU); their line format is 25.04's ProgressPrinter.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/flops_finetune.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/parse/npy.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/report/report.h"
#include "nemoperf/parse/run.h"

static char root[] = "/tmp/np-ftparse.XXXXXX";
static struct np_recipe_set set;
static struct np_ref_table ref;

static void setup(void)
{
    struct np_error err;
    ck_assert_ptr_nonnull(mkdtemp(root));
    ck_assert_msg(np_recipe_set_load_dir("recipes", &set, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_ref_load_dir("share/nemoperf/reference", &ref, &err) == NP_OK, "%s", err.text);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", root);
    strcpy(root, "/tmp/np-ftparse.XXXXXX");
    np_recipe_set_free(&set);
    np_ref_free(&ref);
}

/* 50 steps of step_s seconds, as 25.04's ProgressPrinter prints them. */
static void write_log(const char *dir, const char *exp, int gbs, double step_s)
{
    char path[1024];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(path), 0);
    snprintf(path, sizeof path, "%s/log-%s_4242_0.out", dir, exp);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 50; i++)
        fprintf(f,
                "Training epoch 0, iteration %d/49 | lr: 1e-05 | global_batch_size: %d | global_step: %d | "
                "peak_memory_usage: 70833405952 | reduced_train_loss: 1.234 | train_step_timing in s: %.6g | "
                "consumed_samples: %d\n",
                i, gbs, i, step_s, (i + 1) * gbs);
    fclose(f);
}

static void parse_one(const char *dir, const char *gpu, struct np_parse_result *res)
{
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.reference = 1;
    o.jobs = 1;
    if (gpu)
        snprintf(o.given.gpu_type, sizeof o.given.gpu_type, "%s", gpu);
    char *paths[] = {(char *)dir};
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &set, &ref, res), NP_OK);
    ck_assert_uint_eq(res->nruns, 1);
}

START_TEST(test_every_row_parses_back)
{
    int rows = 0;
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_ref_row *p = &ref.rows[i];
        if (strcmp(p->task, "pretrain") == 0 || strcmp(p->recipe, "automodel") == 0)
            continue; /* seed 001's LoRA rows: check_amlog */
        rows++;
        enum np_task t;
        ck_assert_int_eq(np_task_parse(p->task, &t), 0);
        const struct np_model *m = np_model_find(np_recipe_find(&set, p->recipe), p->model_size);
        ck_assert_ptr_nonnull(m);
        const struct np_config_row *row = np_row_find_task(m, t, p->gpu_type, p->dtype, p->gpus);
        ck_assert_msg(row, "no launchable row for %s %s %s %d", p->model_size, p->task, p->gpu_type, p->gpus);
        /* what NVIDIA ran (a correction may differ from the published cell) */
        int pack = np_row_value(row, "seq_len", row->seq_len, NULL), gbs = np_row_value(row, "gbs", row->gbs, NULL);
        double step = (double)pack * gbs / (p->tokens_per_s_per_gpu * p->gpus);
        char exp[128], dir[600];
        snprintf(exp, sizeof exp, "finetune_%s_%s_%s_fp8_%d", p->recipe, p->model_size, p->task, p->gpus);
        snprintf(dir, sizeof dir, "%s/%s/%s/%s_1750000000/%s", root, p->gpu_type, exp, exp, exp);
        write_log(dir, exp, gbs, step);
        struct np_parse_result res;
        parse_one(dir, p->gpu_type, &res);
        const struct np_run *r = &res.runs[0];
        ck_assert_msg(r->status == NP_RUN_OK, "%s: %s (%s)", exp, np_run_status_name(r->status), r->why ? r->why : "");
        ck_assert_str_eq(r->id.task, p->task);
        ck_assert_int_eq(r->id.seq_len, pack);
        ck_assert_str_eq(r->pack_source, "table");
        ck_assert_msg(fabs(r->m.tokens_per_s_per_gpu - p->tokens_per_s_per_gpu) <= 1, "%s: %.1f tok/s/GPU, published %.0f",
                      exp, r->m.tokens_per_s_per_gpu, p->tokens_per_s_per_gpu);
        double ratio = p->model_tflops_per_gpu / r->m.model_tflops_per_gpu;
        if (p->consistent)
            ck_assert_msg(fabs(ratio - 1) <= 0.005, "%s: %.1f TFLOP/s/GPU, published %.0f", exp,
                          r->m.model_tflops_per_gpu, p->model_tflops_per_gpu);
        else
            ck_assert_msg(fabs(ratio - 2) <= 0.02, "%s (marked 2x): %.1f TFLOP/s/GPU, published %.0f", exp,
                          r->m.model_tflops_per_gpu, p->model_tflops_per_gpu);
        ck_assert_msg(r->ref == p, "%s: compared with another row", exp);
        ck_assert_msg(r->verdict == NP_VERDICT_PASS, "%s: verdict %s (%s)", exp, np_verdict_name(r->verdict),
                      r->ref_why);
        ck_assert_msg(r->m.mfu_percent > 10 && r->m.mfu_percent < 100, "%s: MFU %.1f", exp, r->m.mfu_percent);
        np_parse_result_free(&res);
    }
    ck_assert_int_eq(rows, 15);
}
END_TEST

/* All 15 runs in one tree: `--format markdown` prints seed 000's fine-tuning tables, one per system, with
 * each published row's cells (Model | Task | #-GPUs | GBS | MBS | Packed Sequence Length | TP | PP | VP | GA |
 * Tokens / sec / GPU | Model TFLOP / sec / GPU) as the seed prints them; the marked row differs where NVIDIA
 * ran it otherwise (packs of 2048, GBS 64, GA 32) and in its TFLOP/s/GPU (half the published 1804). */
START_TEST(test_markdown_tables)
{
    FILE *seed = fopen("../shared/seeds/000_ec64a32f1de53ab8.txt", "r");
    ck_assert_msg(seed != NULL, "../shared/seeds (beside the checkout) is needed");
    fclose(seed);
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_ref_row *p = &ref.rows[i];
        if (strcmp(p->task, "pretrain") == 0 || strcmp(p->recipe, "automodel") == 0)
            continue;
        enum np_task t;
        np_task_parse(p->task, &t);
        const struct np_model *m = np_model_find(np_recipe_find(&set, p->recipe), p->model_size);
        const struct np_config_row *row = np_row_find_task(m, t, p->gpu_type, p->dtype, p->gpus);
        int pack = np_row_value(row, "seq_len", row->seq_len, NULL), gbs = np_row_value(row, "gbs", row->gbs, NULL);
        char exp[128], dir[600], sys[16];
        snprintf(exp, sizeof exp, "finetune_%s_%s_%s_fp8_%d", p->recipe, p->model_size, p->task, p->gpus);
        snprintf(sys, sizeof sys, "%s", p->gpu_type);
        snprintf(dir, sizeof dir, "%s/md/%s/%s", root, sys, exp);
        write_log(dir, exp, gbs, (double)pack * gbs / (p->tokens_per_s_per_gpu * p->gpus));
        /* the system from a manifest, as launch writes it */
        char mf[700];
        snprintf(mf, sizeof mf, "%s/nemoperf.json", dir);
        FILE *f = fopen(mf, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "{\"submitted\": true, \"config\": {\"recipe\": \"%s\", \"model_size\": \"%s\", \"dtype\": \"fp8\", "
                   "\"gpu_type\": \"%s\", \"gpus\": %d, \"seq_len\": %d, \"gbs\": %d, \"task\": \"%s\"}}\n",
                p->recipe, p->model_size, p->gpu_type, p->gpus, pack, gbs, p->task);
        fclose(f);
    }
    char top[600];
    snprintf(top, sizeof top, "%s/md", root);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    struct np_parse_result res;
    char *paths[] = {top};
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &set, &ref, &res), NP_OK);
    ck_assert_uint_eq(res.nruns, 15);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ck_assert_int_eq(np_report_write(mem, NP_FMT_MARKDOWN, &res, &o), NP_OK);
    fclose(mem);
    /* the seed's rows, cell for cell (its cells are separated by " |" line breaks: joined here) */
    static const char *const want[] = {
        "LLAMA3-8B | SFT | 8 | 8 | 1 | 16384 | 1 | 1 | 1 | 1 | 33437 | 1515 |",
        "LLAMA3-70B | SFT | 32 | 32 | 1 | 4096 | 2 | 4 | 5 | 8 | 3977 | 1658 |",
        "LLAMA3-8B | LoRA | 8 | 8 | 1 | 16384 | 1 | 1 | 1 | 1 | 44281 | 1342 |",
        "LLAMA3-70B | LoRA | 8 | 64 | 1 | 2048 | 1 | 4 | 20 | 32 | 3238 | 898 |", /* as NVIDIA ran it */
        "LLAMA3-405B | LoRA | 32 | 32 | 1 | 2048 | 4 | 4 | 4 | 16 | 966 | 1568 |",
        "LLAMA3-8B | SFT | 8 | 8 | 1 | 16384 | 1 | 1 | 1 | 1 | 30913 | 1401 |",
        "LLAMA3-70B | SFT | 32 | 32 | 1 | 4096 | 2 | 4 | 5 | 8 | 3657 | 1525 |",
        "LLAMA3-8B | LoRA | 8 | 8 | 1 | 16384 | 1 | 1 | 1 | 1 | 42010 | 1274 |",
        "LLAMA3-70B | LoRA | 8 | 32 | 1 | 4096 | 1 | 4 | 20 | 16 | 5611 | 1563 |",
        "LLAMA3-405B | LoRA | 32 | 32 | 1 | 2048 | 4 | 4 | 4 | 16 | 678 | 1101 |",
        "LLAMA3-8B | SFT | 8 | 32 | 1 | 4096 | 1 | 1 | 1 | 4 | 16222 | 733 |",
        "LLAMA3-70B | SFT | 32 | 32 | 1 | 4096 | 4 | 4 | 5 | 16 | 1619 | 675 |",
        "LLAMA3-8B | LoRA | 8 | 32 | 1 | 4096 | 1 | 1 | 1 | 4 | 22141 | 669 |",
        "LLAMA3-70B | LoRA | 8 | 32 | 1 | 4096 | 2 | 4 | 20 | 32 | 2621 | 730 |",
        "LLAMA3-405B | LoRA | 32 | 32 | 1 | 2048 | 4 | 8 | 8 | 32 | 496 | 805 |"};
    const char *at = text;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const char *hit = strstr(at, want[k]);
        ck_assert_msg(hit, "row %zu not found in order: %s\n%s", k, want[k], text);
        at = hit + strlen(want[k]);
    }
    ck_assert_msg(strstr(text, "Fine-tuning, System: DGX-GB200 (FP8)") &&
                      strstr(text, "Fine-tuning, System: DGX-B200 (FP8)") && strstr(text, "Fine-tuning, System: DGX-H100 (FP8)"),
                  "%s", text);
    free(text);
    np_parse_result_free(&res);
}
END_TEST

/* The manifest names the packed training file: the statistics are measured from it. */
START_TEST(test_manifest_measured_packs)
{
    char cmd[1200], dir[600], npy[700];
    const char *py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    snprintf(cmd, sizeof cmd, "mkdir -p %s/npy && %s tests/data/npy/make.py %s/npy", root, py, root);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(npy, sizeof npy, "%s/npy/big.npy", root); /* 37 packs of up to 16384 tokens */
    struct np_pack_stats ps;
    ck_assert_int_eq(np_npy_pack_stats(npy, 8, &ps, NULL), NP_OK);
    double tok, sq;
    np_pack_means(&ps, &tok, &sq);
    const char *exp = "finetune_llama3_8b_lora_fp8_8";
    snprintf(dir, sizeof dir, "%s/m/%s", root, exp);
    write_log(dir, exp, 8, 16384.0 * 8 / (42010.0 * 8));
    snprintf(cmd, sizeof cmd, "%s/nemoperf.json", dir);
    FILE *f = fopen(cmd, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"format\": 2, \"submitted\": true, \"job_id\": \"4242\", \"config\": {\"recipe\": \"llama3\", "
            "\"model_size\": \"8b\", \"dtype\": \"fp8\", \"gpu_type\": \"b200\", \"system\": \"DGX-B200\", \"gpus\": 8, "
            "\"seq_len\": 16384, \"gbs\": 8, \"max_steps\": 50, \"task\": \"lora\", \"pack_len\": 16384, "
            "\"workload\": \"nemo\", \"finetune\": {\"task\": \"lora\", \"pack_len\": 16384, \"packed_train\": \"%s\"}}}\n",
            npy);
    fclose(f);
    struct np_parse_result res;
    parse_one(dir, NULL, &res);
    const struct np_run *r = &res.runs[0];
    ck_assert_msg(r->status == NP_RUN_OK, "%s (%s)", np_run_status_name(r->status), r->why ? r->why : "");
    ck_assert_str_eq(r->pack_source, "measured");
    const struct np_model *m = np_model_find(np_recipe_find(&set, "llama3"), "8b");
    double want = np_finetune_flops_per_pack(&m->arch, m->flops.kv_groups, 2.0 / 3.0, tok, sq);
    ck_assert_double_eq_tol(r->flops_per_sample, want, want * 1e-12);
    ck_assert_double_eq_tol(r->m.model_tflops_per_gpu, want / 16384 * r->m.tokens_per_s_per_gpu / 1e12, 1e-6);
    np_parse_result_free(&res);
    /* a packed file that cannot be read: the table, and a note saying why */
    snprintf(cmd, sizeof cmd, "sed -i 's#big.npy#nope.npy#' %s/nemoperf.json", dir);
    ck_assert_int_eq(system(cmd), 0);
    parse_one(dir, NULL, &res);
    r = &res.runs[0];
    ck_assert_str_eq(r->pack_source, "table");
    ck_assert_msg(r->note && strstr(r->note, "nope.npy") && strstr(r->note, "from the table"), "%s",
                  r->note ? r->note : "(no note)");
    np_parse_result_free(&res);
    /* issue 23: a FIFO in its place is refused at once, not waited on (open would block) */
    snprintf(npy, sizeof npy, "%s/npy/nope.npy", root);
    unlink(npy);
    ck_assert_int_eq(mkfifo(npy, 0644), 0);
    alarm(20); /* a hang fails the test */
    parse_one(dir, NULL, &res);
    alarm(0);
    r = &res.runs[0];
    ck_assert_str_eq(r->pack_source, "table");
    ck_assert_msg(r->note && strstr(r->note, "not a regular file (a FIFO)"), "%s", r->note ? r->note : "(no note)");
    np_parse_result_free(&res);
    unlink(npy);
}
END_TEST

/* finetune_ folders need a task, pretrain_ folders have none; --task is checked against them. */
START_TEST(test_folder_names)
{
    struct np_identity id;
    memset(&id, 0, sizeof id);
    ck_assert(np_identity_from_path("/x/finetune_llama3_70b_sft_fp8_32/y.out", &id));
    ck_assert_str_eq(id.task, "sft");
    ck_assert_str_eq(id.model_size, "70b");
    ck_assert_int_eq(id.gpus, 32);
    memset(&id, 0, sizeof id);
    ck_assert(!np_identity_from_path("/x/finetune_llama3_70b_fp8_32/y.out", &id));
    ck_assert(!np_identity_from_path("/x/pretrain_llama3_70b_lora_fp8_32/y.out", &id));
    ck_assert(np_identity_from_path("/x/pretrain_llama3_70b_fp8_32_nsys/y.out", &id));
    ck_assert_str_eq(id.task, "pretrain");
    ck_assert_str_eq(id.variant, "nsys");
    /* --task lora on an sft folder: a contradiction, the run is invalid */
    const char *exp = "finetune_llama3_8b_sft_fp8_8";
    char dir[600];
    snprintf(dir, sizeof dir, "%s/c/%s", root, exp);
    write_log(dir, exp, 32, 1.0);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    snprintf(o.given.task, sizeof o.given.task, "lora");
    struct np_parse_result res;
    char *paths[] = {dir};
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &set, &ref, &res), NP_OK);
    ck_assert_int_eq(res.runs[0].status, NP_RUN_INVALID);
    ck_assert_msg(strstr(res.runs[0].why, "--task lora contradicts"), "%s", res.runs[0].why);
    np_parse_result_free(&res);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ftparse");
    TCase *tc = tcase_create("ftparse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_row_parses_back);
    tcase_add_test(tc, test_manifest_measured_packs);
    tcase_add_test(tc, test_markdown_tables);
    tcase_add_test(tc, test_folder_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
