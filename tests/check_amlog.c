/* check_amlog.c - AutoModel benchmark logs: golden logs per seed-001 row parse to the published numbers.
 *
 * tests/data/amlog/<config>_<gpus>/ holds the rank-0 stdout/stderr of benchmark.py, written by
 * make-golden.py from the format strings of Automodel e45812012 (odd cases as .out + .err, even
 * ones merged), with a launch manifest.  Each must parse ok, identified from the manifest, with the
 * summary's average as the step time and tokens/s/GPU and TFLOP/s/GPU within 1 % of the seed.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/automodel.h"
#include "nemoperf/run.h"

#define DATA "tests/data/amlog"

static struct np_recipe_set set;
static struct np_ref_table ref;

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_dir("recipes", &set, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(np_ref_load_dir("share/nemoperf/reference", &ref, &err) == NP_OK, "%s", err.text);
}

static void teardown(void)
{
    np_recipe_set_free(&set);
    np_ref_free(&ref);
}

static void parse_one(const char *dir, const struct np_parse_opts *o, struct np_parse_result *res)
{
    char *paths[] = {(char *)dir};
    ck_assert_int_eq(np_parse_paths(paths, 1, o, &set, &ref, res), NP_OK);
    ck_assert_msg(res->nerrors == 0, "%s: %s", dir, res->nerrors ? res->errors[0] : "");
    ck_assert_msg(res->nruns == 1, "%s: %zu runs", dir, res->nruns);
}

START_TEST(test_golden_rows_reproduce_seed001)
{
    DIR *d = opendir(DATA);
    ck_assert(d != NULL);
    struct dirent *e;
    int cases = 0, split = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strchr(e->d_name, '.'))
            continue;
        char dir[512];
        snprintf(dir, sizeof dir, DATA "/%s", e->d_name);
        struct np_parse_opts o;
        np_parse_opts_init(&o);
        o.jobs = 1;
        o.reference = 1;
        struct np_parse_result res;
        parse_one(dir, &o, &res);
        const struct np_run *r = &res.runs[0];
        ck_assert_msg(r->status == NP_RUN_OK, "%s: %s (%s)", dir, np_run_status_name(r->status), r->why);
        ck_assert_str_eq(r->id_source, "manifest");
        ck_assert_int_eq(r->gen, NP_GEN_AMBENCH);
        ck_assert_ptr_nonnull(r->ref);
        const struct np_ref_row *p = r->ref;
        /* the summary's average is the headline: exactly the published "Time per Global Step" */
        ck_assert_msg(fabs(r->step_time_s - p->step_time_s) < 1e-9, "%s: step %g vs %g", dir, r->step_time_s,
                      p->step_time_s);
        ck_assert_msg(fabs(r->m.tokens_per_s_per_gpu / p->tokens_per_s_per_gpu - 1) <= 0.01, "%s: %g tok/s/GPU vs %g",
                      dir, r->m.tokens_per_s_per_gpu, p->tokens_per_s_per_gpu);
        ck_assert_msg(fabs(r->m.model_tflops_per_gpu / p->model_tflops_per_gpu - 1) <= 0.01, "%s: %g TFLOP/s vs %g",
                      dir, r->m.model_tflops_per_gpu, p->model_tflops_per_gpu);
        ck_assert_double_eq_tol(r->m.mfu_percent, r->m.model_tflops_per_gpu / 989 * 100, 1e-9);
        /* the log's own figures agree: setup TFLOPs over GPUs and time, and its Average MFU */
        ck_assert_msg(fabs(r->logged_tflops_per_gpu / r->m.model_tflops_per_gpu - 1) < 0.001, "%s: logged %g", dir,
                      r->logged_tflops_per_gpu);
        ck_assert_double_eq_tol(r->logged_mfu_percent, r->m.mfu_percent, 0.01);
        /* every iteration was read; the window is the last 10 of them */
        ck_assert_int_eq(r->complete, 1);
        ck_assert_uint_eq(r->steps_seen, (size_t)(r->total + 1));
        ck_assert(r->total == 29 || r->total == 9);
        /* the window is what the summary averages: every iteration after the warm-up (10 of 30, 5 of 10) */
        long warm = r->total == 29 ? 10 : 5;
        ck_assert_uint_eq(r->window.count, (size_t)(r->total + 1 - warm));
        ck_assert_int_eq(r->window.first, warm);
        ck_assert_int_eq(r->window.last, r->total);
        ck_assert_msg(fabs(r->window.mean_s - p->step_time_s) < 1e-6 * p->step_time_s, "%s: window mean %g", dir,
                      r->window.mean_s); /* the golden times are symmetric around the average */
        ck_assert_double_eq_tol(r->steady.tokens_per_s_per_gpu, r->m.tokens_per_s_per_gpu, 1e-9);
        ck_assert_double_eq_tol(r->peak_memory_bytes, (61.23 + 0.01 * r->total) * 1073741824.0, 1e3);
        ck_assert_int_eq(r->verdict, NP_VERDICT_PASS);
        char err_file[700];
        snprintf(err_file, sizeof err_file, "%s", r->path);
        ck_assert(strlen(err_file) > 4);
        memcpy(err_file + strlen(err_file) - 4, ".err", 4);
        split += access(err_file, F_OK) == 0;
        cases++;
        np_parse_result_free(&res);
    }
    closedir(d);
    ck_assert_int_eq(cases, 15);
    ck_assert_int_eq(split, 7); /* both layouts covered */
}
END_TEST

/* Without a manifest: --recipe automodel --model <config> --gpus N (dtype from the row). */
START_TEST(test_identity_from_options)
{
    char tmp[] = "/tmp/np-amlog-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp " DATA "/qwen3_moe_30b_te_deepep_8/*.out " DATA "/qwen3_moe_30b_te_deepep_8/*.err %s/",
             tmp);
    ck_assert_int_eq(system(cmd), 0);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    struct np_parse_result res;
    parse_one(tmp, &o, &res);
    ck_assert_int_eq(res.runs[0].status, NP_RUN_UNIDENTIFIED); /* before: no way to know the model */
    ck_assert_double_eq_tol(res.runs[0].step_time_s, 21.773, 1e-9);
    np_parse_result_free(&res);
    strcpy(o.given.recipe, "automodel");
    strcpy(o.given.model_size, "qwen3_moe_30b_te_deepep");
    o.given.gpus = 8;
    parse_one(tmp, &o, &res);
    const struct np_run *r = &res.runs[0];
    ck_assert_int_eq(r->status, NP_RUN_OK);
    ck_assert_str_eq(r->id_source, "options");
    ck_assert_int_eq(r->id.dtype, NP_DTYPE_BF16);
    ck_assert_int_eq(r->id.gbs, 512); /* from the "GA steps ..., Global batch size: 512" line */
    ck_assert(fabs(r->m.model_tflops_per_gpu - 277) < 0.01 * 277);
    np_parse_result_free(&res);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)len + 1);
    ck_assert(b && fread(b, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    b[len] = '\0';
    *n = (size_t)len;
    return b;
}

#define Q3 DATA "/qwen3_moe_30b_te_deepep_8/automodel_qwen3_moe_30b_te_deepep_8"

/* stdout alone still gives the iterations (timer blocks); stderr alone gives everything. */
START_TEST(test_stdout_stderr_split)
{
    size_t on, en;
    char *out = slurp(Q3 ".out", &on), *err = slurp(Q3 ".err", &en);
    struct np_scan_result r;
    struct np_amlog_summary s;
    struct np_error e;
    ck_assert_int_eq(np_amlog_buffers(out, on, NULL, 0, &r, &s, &e), NP_OK);
    ck_assert(s.seen);
    ck_assert_uint_eq(r.nsteps, 30);
    ck_assert(isnan(s.avg_step_time_s)); /* the summary is on stderr */
    ck_assert_double_eq_tol(r.steps[29].step_time_s, 21.773 + 2 * 0.004 * 21.773, 0.006);
    np_scan_result_free(&r);
    ck_assert_int_eq(np_amlog_buffers(NULL, 0, err, en, &r, &s, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 30);
    ck_assert_double_eq_tol(s.avg_step_time_s, 21.773, 1e-12);
    ck_assert_double_eq_tol(s.avg_mfu_percent, 28.008, 0.01);
    ck_assert_int_eq(s.warmup_steps, 10);
    ck_assert_int_eq(s.timed_steps, 20);
    ck_assert_double_eq_tol(s.step_tflops, 48247.67, 0.01);
    ck_assert(isnan(s.lora_multiplier));
    ck_assert_int_eq(s.gbs, 512);
    ck_assert_int_eq(s.lbs, 4);
    ck_assert_int_eq(s.ga, 16);
    ck_assert_int_eq(s.dp, 8);
    ck_assert_double_eq_tol(r.steps[0].loss, 12.0, 1e-9);
    np_scan_result_free(&r);
    free(out);
    free(err);
}
END_TEST

START_TEST(test_lora_line_and_prefix_variants)
{
    static const char txt[] =
        "2026-04-17 10:00:02 | \x1b[32mINFO\x1b[0m | __main__ | TFLOPS multiplier for PEFT: (2 + 0.0055) / 3 = 0.6685\n"
        "0: 2026-04-17 10:00:03 | INFO | __main__ | TFLOPs/GPU: 4227.643785\n"
        "2026-04-17 10:00:04 | INFO | __main__ | Rank 0 | Iteration 0\r\n"
        "2026-04-17 10:00:05 | INFO | __main__ | Max iter time: 18.9 seconds\r\n"
        "2026-04-17 10:00:06 | INFO | __main__ | Rank 0 | Iteration 1 | num_label_tokens=1 | Max Memory Allocated: 1.00 "
        "GB | loss=nan\n"
        "2026-04-17 10:00:07 | INFO | __main__ | Max iter time: 10.5 seconds\n"
        "2026-04-17 10:00:08 | INFO | __main__ | Average iteration time: 10.500 seconds (all 2 iterations)\n"
        "2026-04-17 10:00:09 | INFO | __main__ | Rank 0 | Iteration 7 | partial line without terminator";
    struct np_scan_result r;
    struct np_amlog_summary s;
    struct np_error e;
    ck_assert_int_eq(np_amlog_buffers(NULL, 0, txt, sizeof txt - 1, &r, &s, &e), NP_OK);
    ck_assert_double_eq_tol(s.lora_multiplier, 0.6685, 1e-12);
    ck_assert_double_eq_tol(s.step_tflops, 4227.643785, 1e-9);
    ck_assert_int_eq(s.warmup_steps, 0);
    ck_assert_uint_eq(r.nsteps, 2); /* the unterminated last line is not read */
    ck_assert_double_eq_tol(r.steps[0].step_time_s, 18.9, 1e-12);
    ck_assert(r.steps[1].nan_seen);
    np_scan_result_free(&r);
    /* a restart appended to the same file: only the last run is kept */
    static const char two[] = "Rank 0 | Iteration 0\nMax iter time: 5 seconds\nRank 0 | Iteration 1\nMax iter time: 6 "
                              "seconds\nRank 0 | Iteration 0\nMax iter time: 7 seconds\n";
    ck_assert_int_eq(np_amlog_buffers(two, sizeof two - 1, NULL, 0, &r, &s, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 1);
    ck_assert_uint_eq(r.runs, 2);
    ck_assert_double_eq_tol(r.steps[0].step_time_s, 7, 1e-12);
    np_scan_result_free(&r);
    /* not an AutoModel log at all */
    static const char other[] = "hello\nMFU is great\nTFLOPs/GPU\n";
    ck_assert_int_eq(np_amlog_buffers(other, sizeof other - 1, NULL, 0, &r, &s, &e), NP_OK);
    ck_assert(!s.seen);
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_ptr_null(r.steps);
}
END_TEST

/* A job that died before the summary: incomplete against the manifest's max_steps, last-step time. */
START_TEST(test_truncated_run_is_incomplete)
{
    char tmp[] = "/tmp/np-amlog-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cp " DATA "/qwen3_moe_30b_te_deepep_8/nemoperf.json %s/ && cp " Q3 ".out %s/a.out && "
             "sed '/Iteration 20$/,$d' " Q3 ".err > %s/a.err",
             tmp, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    struct np_parse_result res;
    parse_one(tmp, &o, &res);
    const struct np_run *r = &res.runs[0];
    ck_assert_int_eq(r->status, NP_RUN_INCOMPLETE);
    ck_assert_int_eq(r->step, 19);
    ck_assert_int_eq(r->total, 29);
    ck_assert(isnan(r->logged_mfu_percent));
    np_parse_result_free(&res);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* An unreadable stderr companion (a symlink loop) is reported, and the run is still read from stdout. */
START_TEST(test_unreadable_companion)
{
    char tmp[] = "/tmp/np-amlog-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cp " DATA "/qwen3_moe_30b_te_deepep_8/nemoperf.json %s/ && cp " Q3 ".out %s/b.out && ln -s b.err %s/b.err",
             tmp, tmp, tmp);
    ck_assert_int_eq(system(cmd), 0);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    struct np_parse_result res;
    char *paths[] = {tmp};
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &set, &ref, &res), NP_OK);
    int named = 0; /* the walk also reports the dangling link; the reader says it could not open it */
    for (size_t i = 0; i < res.nerrors; i++)
        named += strstr(res.errors[i], "b.err: cannot open") != NULL;
    ck_assert_int_eq(named, 1);
    ck_assert_uint_eq(res.nruns, 1);
    const struct np_run *r = &res.runs[0];
    ck_assert_uint_eq(r->steps_seen, 30); /* from stdout's timer blocks */
    ck_assert_int_eq(r->status, NP_RUN_OK);
    ck_assert(isnan(r->logged_mfu_percent)); /* the summary was on stderr */
    np_parse_result_free(&res);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("amlog");
    TCase *tc = tcase_create("amlog");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_golden_rows_reproduce_seed001);
    tcase_add_test(tc, test_identity_from_options);
    tcase_add_test(tc, test_stdout_stderr_split);
    tcase_add_test(tc, test_lora_line_and_prefix_variants);
    tcase_add_test(tc, test_truncated_run_is_incomplete);
    tcase_add_test(tc, test_unreadable_companion);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
