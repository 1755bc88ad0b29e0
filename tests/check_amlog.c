/* check_amlog.c - AutoModel benchmark logs: golden logs per seed-001 row parse to the published numbers.
 *
 * tests/data/amlog/<config>_<gpus>/ holds the rank-0 stdout/stderr of benchmark.py, written by
 * make-golden.py from the format strings of Automodel e45812012 (odd cases as .out + .err, even
 * ones merged), with a launch manifest.  Each must parse ok, identified from the manifest, with the
 * summary's average as the step time and tokens/s/GPU and TFLOP/s/GPU within 1 % of the seed.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/parse/automodel_log.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/parse/scan.h"

#include "testutil.h"

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

#define Q3 DATA "/qwen3_moe_30b_te_deepep_8/automodel_qwen3_moe_30b_te_deepep_8"

/* stdout alone still gives the iterations (timer blocks); stderr alone gives everything. */
START_TEST(test_stdout_stderr_split)
{
    size_t on, en;
    char *out = np_test_read_all(Q3 ".out", &on), *err = np_test_read_all(Q3 ".err", &en);
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

/* A training-loop log (train_ft.py, not benchmark.py) in dir/name, built from Automodel's format
 * strings @36044ad3 (no such log with both a header and 0-based steps is public): the setup header
 * of base_recipe.py l.663-679 (f"- {k}: {v}") through logging's "date | LEVEL | logger | msg" form
 * (or "INFO:root:"), then train_ft.py l.1567's step lines for steps first..last. */
static void write_train_log(const char *dir, const char *name, long max_steps, long first, long last, int root_form,
                            size_t long_line)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    const char *pre = root_form ? "INFO:root:" : "2026-03-02 10:00:01 | INFO | root | ";
    for (size_t i = 0; i < long_line; i++) /* a model print on one line, say */
        fputc(i % 7 ? 'x' : ' ', f);
    if (long_line)
        fputs("\r\n", f);
    fprintf(f, "%sStep scheduler:\n%s- Gradient accumulation steps: 4\n%s- Checkpoint every steps: 1000\n", pre, pre,
            pre);
    if (max_steps > 0)
        fprintf(f, "%s- Max train steps: %ld\n", pre, max_steps);
    for (long k = first; k <= last; k++)
        fprintf(f, "%sstep %ld | epoch 0 | loss %.4f | grad_norm %.4f | lr %.2e | mem %.2f GiB | tps %.2f(%.2f/gpu) | "
                "num_label_tokens %d\n", pre, k, 2.5 - 0.01 * (double)k, 0.5, 1e-4, 60.0, 100000.0, 12500.0, 1048576);
    ck_assert_int_eq(fclose(f), 0);
}

static void check_train_run(const char *dir, long step, long total, int complete)
{
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.jobs = 1;
    struct np_parse_result res;
    char *paths[] = {(char *)dir};
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &set, &ref, &res), NP_OK);
    ck_assert_uint_eq(res.nruns, 1);
    const struct np_run *r = &res.runs[0];
    ck_assert_int_eq(r->gen, NP_GEN_AUTOMODEL);
    ck_assert_int_eq(r->step, step);
    ck_assert_int_eq(r->total, total);
    ck_assert_int_eq(r->complete, complete);
    np_parse_result_free(&res);
}

/* The step total of a training-loop log comes from its setup header "- Max train steps: N": the
 * last step is N-1 (steps printed from 0, Automodel since ebd03b025, 2025-10-13), or N when the
 * first step printed is 1 (before); no header, no total. */
START_TEST(test_train_log_header_total)
{
    char tmp[] = "/tmp/np-amlog-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    write_train_log(tmp, "r.out", 20, 0, 19, 0, 0);
    check_train_run(tmp, 19, 19, 1);
    write_train_log(tmp, "r.out", 20, 0, 11, 0, 0);
    check_train_run(tmp, 11, 19, 0);
    write_train_log(tmp, "r.out", 0, 0, 11, 0, 0); /* no header */
    check_train_run(tmp, 11, -1, -1);
    write_train_log(tmp, "r.out", 10, 1, 10, 1, 0); /* counted from 1, "INFO:root:" form */
    check_train_run(tmp, 10, 10, 1);
    write_train_log(tmp, "r.out", 10, 1, 9, 1, 0);
    check_train_run(tmp, 9, 10, 0);
    /* 300 KiB of one line before the header (read in 64 KiB pieces), 5000 steps after it */
    write_train_log(tmp, "r.out", 5000, 0, 4998, 0, 300000);
    check_train_run(tmp, 4998, 4999, 0);
    /* the scan result alone: untouched when the steps carry a total or are not AutoModel's */
    struct np_scan_result res;
    struct np_error err;
    char path[600];
    snprintf(path, sizeof path, "%s/r.out", tmp);
    ck_assert_int_eq(np_scan_file(path, NULL, &res, &err), NP_OK);
    ck_assert_uint_gt(res.nsteps, 0);
    res.steps[res.nsteps - 1].total = 7;
    np_amlog_header_total(AT_FDCWD, path, &res);
    ck_assert_int_eq(res.steps[res.nsteps - 1].total, 7);
    res.steps[res.nsteps - 1].total = -1;
    res.steps[res.nsteps - 1].gen = NP_GEN_NEMO2;
    np_amlog_header_total(AT_FDCWD, path, &res);
    ck_assert_int_eq(res.steps[res.nsteps - 1].total, -1);
    res.steps[res.nsteps - 1].gen = NP_GEN_AUTOMODEL;
    np_amlog_header_total(AT_FDCWD, path, &res);
    ck_assert_int_eq(res.steps[res.nsteps - 1].total, 4999);
    np_amlog_header_total(AT_FDCWD, "/nonexistent/r.out", &res); /* unreadable: unchanged, no crash */
    np_scan_result_free(&res);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A benchmark log cut before its summary: the header still gives the total (iterations are 0..N-1). */
START_TEST(test_bench_header_total)
{
    static const char err_text[] = "2026-03-02 10:00:01 | INFO | root | - Max train steps: 30\n"
                                   "2026-03-02 10:00:09 | INFO | root | Rank 0 | Iteration 0\n"
                                   "2026-03-02 10:00:09 | INFO | root | Max iter time: 12.5 seconds\n"
                                   "2026-03-02 10:00:21 | INFO | root | Rank 0 | Iteration 1\n"
                                   "2026-03-02 10:00:21 | INFO | root | Max iter time: 11.9 seconds\n";
    struct np_scan_result res;
    struct np_amlog_summary sum;
    struct np_error err;
    ck_assert_int_eq(np_amlog_buffers(NULL, 0, err_text, sizeof err_text - 1, &res, &sum, &err), NP_OK);
    ck_assert_int_eq(sum.max_train_steps, 30);
    ck_assert_uint_eq(res.nsteps, 2);
    ck_assert_int_eq(res.steps[1].iteration, 1);
    ck_assert_int_eq(res.steps[1].total, 29);
    np_scan_result_free(&res);
    ck_assert_int_eq(np_amlog_buffers(NULL, 0, err_text + 58, sizeof err_text - 59, &res, &sum, &err), NP_OK);
    ck_assert_int_eq(sum.max_train_steps, -1);
    ck_assert_int_eq(res.steps[1].total, -1);
    np_scan_result_free(&res);
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
    tcase_add_test(tc, test_train_log_header_total);
    tcase_add_test(tc, test_bench_header_total);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
