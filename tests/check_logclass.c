/* check_logclass.c - the four classes of real-log defects of issue 25, one test each.
 *
 * Lines built from their writers' format strings (cited at each test and in src/parse/scan.c): NeMo 2.0
 * step lines without train_step_timing, every NaN/Inf spelling a writer prints, AMD Primus' two times in one
 * Megatron field, and progress bars whose count is not the optimizer step.  Each test fails without its fix
 * (the scanner before issue 25 reports "no steps", keeps a finite loss, drops the time, or takes the bar).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/parse/scan.h"

static void logclass_scan(const char *buf, struct np_scan_result *r)
{
    struct np_error e = {0};
    ck_assert_int_eq(np_scan_buffer(buf, strlen(buf), 0, r, &e), NP_OK);
}

/* The run nemoperf-parse makes of a scan, identified as check_real does (the shipped recipes, Llama 3.1 8B
 * BF16 on 8 GPUs): the reason is given to an identified run. */
static void logclass_analyse(const struct np_scan_result *r, struct np_run *run)
{
    struct np_parse_opts o;
    struct np_recipe_set recipes;
    struct np_error e;
    np_parse_opts_init(&o);
    memset(run, 0, sizeof *run);
    memset(&recipes, 0, sizeof recipes);
    ck_assert_int_eq(np_recipe_set_load_dir("recipes", &recipes, &e), NP_OK);
    strcpy(run->id.recipe, "llama3.1");
    strcpy(run->id.model_size, "8b");
    run->id.dtype = np_dtype_parse("bf16");
    run->id.gpus = 8;
    np_run_analyse(run, r, &o, &recipes, NULL);
    np_recipe_set_free(&recipes);
}

static void logclass_run_free(struct np_run *run)
{
    free(run->why);
    free(run->note);
}

/* NeMo 2.0 ProgressPrinter with the timing callback off (NVIDIA/NeMo nemo/lightning/pytorch/callbacks/
 * progress_printer.py:114-140 @8cfedd7: f"Training epoch {e}, iteration {n-1}/{total-1} | " + "k: v" joined by
 * " | "): 100 steps, loss, GBS and completeness are read; the run says it has no step time, not "no steps". */
START_TEST(test_nemo2_steps_without_timing)
{
    size_t cap = 100 * 160 + 1, len = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int i = 0; i < 100; i++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "Training epoch 0, iteration %d/99 | lr: 1.961e-06 | global_batch_size: 64 | "
                                "global_step: %d | reduced_train_loss: %.3f | consumed_samples: %d\n",
                                i, i, 2.0 - i * 0.01, (i + 1) * 64);
    struct np_scan_result r;
    logclass_scan(buf, &r);
    ck_assert_uint_eq(r.nsteps, 100);
    const struct np_step *last = &r.steps[99];
    ck_assert_int_eq(last->gen, NP_GEN_NEMO2);
    ck_assert_int_eq(last->iteration, 99);
    ck_assert_int_eq(last->total, 99);
    ck_assert_int_eq(last->global_batch_size, 64);
    ck_assert(fabs(last->loss - 1.01) < 1e-12);
    ck_assert(isnan(last->step_time_s));
    struct np_run run;
    logclass_analyse(&r, &run);
    ck_assert_int_ne(run.status, NP_RUN_NO_STEPS);
    ck_assert_int_eq(run.status, NP_RUN_INVALID);
    ck_assert_int_eq(run.complete, 1);
    ck_assert_msg(run.why && strstr(run.why, "NeMo 2.0 step lines without train_step_timing") &&
                      strstr(run.why, "100 steps") && strstr(run.why, "no step time"),
                  "why: %s", run.why ? run.why : "(null)");
    logclass_run_free(&run);
    np_scan_result_free(&r);

    /* tail-first (the default) finds the same last step */
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    fflush(f);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fileno(f));
    struct np_error e = {0};
    ck_assert_int_eq(np_scan_file(path, NULL, &r, &e), NP_OK);
    ck_assert_uint_ge(r.nsteps, 1);
    ck_assert_int_eq(r.steps[r.nsteps - 1].iteration, 99);
    np_scan_result_free(&r);
    fclose(f);

    /* "global_step:" outside a step line is no step */
    logclass_scan("restored global_step: 99 from the checkpoint\n", &r);
    ck_assert_uint_eq(r.nsteps, 0);
    np_scan_result_free(&r);
    free(buf);
}
END_TEST

/* Every NaN/Inf spelling a writer produces: Python/PyTorch ("nan", "inf", "-inf"), glibc printf ("-nan"),
 * JSON/JavaScript ("NaN", "Infinity"), Megatron's "{:.6E}" ("NAN", "INF"), Lightning's padded postfix
 * ("nan.0", "inf.0", "-inf.": tqdm_progress.py Tqdm.format_num, _PAD_SIZE = 5) and MSVC ("1.#QNAN",
 * "-1.#IND", "1.#INF", "1.#QNAN0").  After a finite step the run must be flagged, in each generation. */
/* The last step of head + value + tail ("\n"-ended): its NaN flag (1, 0) and whether its loss is a number. */
static int logclass_value(const char *head, const char *value, const char *tail, int *loss_set)
{
    char buf[1024];
    struct np_scan_result r;
    snprintf(buf, sizeof buf, "%s%s%s\n", head, value, tail);
    logclass_scan(buf, &r);
    ck_assert_msg(r.nsteps >= 1, "no step in %s", buf);
    int flag = r.steps[r.nsteps - 1].nan_seen;
    *loss_set = !isnan(r.steps[r.nsteps - 1].loss);
    if (flag) { /* nemoperf-parse's verdict on the run */
        struct np_run run;
        logclass_analyse(&r, &run);
        ck_assert_msg(run.status == NP_RUN_INVALID && run.why && strstr(run.why, "NaN"), "%s: status %d", value,
                      run.status);
        logclass_run_free(&run);
    }
    np_scan_result_free(&r);
    return flag;
}

START_TEST(test_nonfinite_spellings)
{
    static const char *const bad[] = {"nan",  "nan.0", "NaN",    "-nan",     "inf",     "-inf",   "Infinity",
                                      "1.#QNAN", "NAN", "INF",  "inf.0",    "-inf.",   "nan.000", "-1.#IND",
                                      "1.#INF", "1.#QNAN0", "-Infinity", "+nan", "1.#SNAN"};
    static const char *const where[][2] = {
        /* NeMo 1.0 bar (the postfix "key=value"), after a finite step */
        {"Epoch 0: :  40%|####      | 6/15 [05:25<08:08, reduced_train_loss=11.60, global_step=5.000, "
         "train_step_timing in s=49.40]\n"
         "Epoch 0: :  47%|####      | 7/15 [06:19<07:13, reduced_train_loss=",
         ", global_step=6.000, train_step_timing in s=49.50]"},
        /* NeMo 2.0 ProgressPrinter ("key: value") */
        {"Training epoch 0, iteration 0/9 | global_step: 0 | reduced_train_loss: 11.96 | train_step_timing in s: "
         "12.39\nTraining epoch 0, iteration 1/9 | global_step: 1 | reduced_train_loss: ",
         " | train_step_timing in s: 12.40"},
        /* Megatron-LM ("key: value |"), in the grad norm */
        {" iteration        1/      50 | elapsed time per iteration (ms): 12390.1 | lm loss: 1.196000E+01 |"
         " grad norm: ",
         " | number of nan iterations:   0 |"},
    };
    int loss_set;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        for (size_t w = 0; w < sizeof where / sizeof where[0]; w++)
            ck_assert_msg(logclass_value(where[w][0], bad[i], where[w][1], &loss_set) == 1, "%s not flagged in "
                          "writer %zu", bad[i], w);
    /* not numbers: no flag, no value */
    static const char *const good[] = {"nana", "nan.1", "1.#QNANx", "inf.5", "nan(1)", "na", "-", "1.#"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ck_assert_msg(logclass_value(where[1][0], good[i], where[1][1], &loss_set) == 0 && !loss_set,
                      "\"%s\" read as a number", good[i]);
    }
}
END_TEST

/* AMD Primus: "elapsed time per iteration (ms): {inst:.1f}/{avg:.1f}" and the same for TFLOP/s/GPU
 * (AMD-AGI/Primus primus/backends/megatron/patches/training_log/print_rank_last_patches.py l.363-393 @fd1eeab).
 * The step's own time is taken, and the run says so. */
START_TEST(test_primus_two_times)
{
    static const char log[] =
        "[20251202 09:12:08][rank-7/8][INFO ] [--------trainer.py:2560] : iteration 126/ 5000 | consumed samples: "
        "16128 | elapsed time per iteration (ms): 13372.8/13364.7 | throughput per GPU (TFLOP/s/GPU): 567.6/568.0 | "
        "global batch size: 128 | lm loss: 6.548988E-03 | number of nan iterations: 0 |\n"
        "[20251202 09:12:21][rank-7/8][INFO ] [--------trainer.py:2560] : iteration 127/ 5000 | consumed samples: "
        "16256 | elapsed time per iteration (ms): 13350.0/13362.5 | throughput per GPU (TFLOP/s/GPU): 568.5/568.1 | "
        "global batch size: 128 | lm loss: 6.5E-03 | number of nan iterations: 0 |\n";
    struct np_scan_result r;
    logclass_scan(log, &r);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_int_eq(r.steps[0].iteration, 125);
    ck_assert(fabs(r.steps[0].step_time_s - 13.3728) < 1e-12);
    ck_assert(fabs(r.steps[1].step_time_s - 13.35) < 1e-12);
    ck_assert(fabs(r.steps[1].tflops_per_gpu - 568.5) < 1e-12);
    ck_assert_int_eq(r.steps[1].two_times, 1);
    ck_assert_int_eq(r.steps[1].nan_seen, 0);
    struct np_run run;
    logclass_analyse(&r, &run);
    ck_assert(fabs(run.step_time_s - 13.35) < 1e-12);
    ck_assert_msg(run.note && strstr(run.note, "first of the two times"), "note: %s", run.note ? run.note : "");
    logclass_run_free(&run);
    np_scan_result_free(&r);
    /* a plain Megatron time is no "first of two"; a second figure that is no number is refused whole */
    logclass_scan(" iteration        2/      50 | elapsed time per iteration (ms): 12390.1 | lm loss: 1.0 |\n"
                  " iteration        3/      50 | elapsed time per iteration (ms): 12390.1/abc | lm loss: 1.0 |\n",
                  &r);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_int_eq(r.steps[0].two_times, 0);
    ck_assert(isnan(r.steps[1].step_time_s));
    np_scan_result_free(&r);
}
END_TEST

/* A bar's count k is Lightning's batch count (TQDMProgressBar.on_train_batch_end: n = batch_idx + 1):
 * micro-batches under gradient accumulation, and validation batches in the same count on Lightning < 1.6.
 * With global_step in the postfix, that is the step; the bar stands for it only within the postfix's lag. */
/* The step and the step total one progress-bar line gives. */
static void logclass_bar(const char *line, long step, long total)
{
    struct np_scan_result r;
    logclass_scan(line, &r);
    ck_assert_uint_eq(r.nsteps, 1);
    ck_assert_msg(r.steps[0].iteration == step && r.steps[0].total == total, "%s: step %ld of %ld, want %ld of %ld",
                  line, r.steps[0].iteration, r.steps[0].total, step, total);
    np_scan_result_free(&r);
}

START_TEST(test_bar_is_not_the_step)
{
    /* gradient accumulation 20: batch 81 of 43800, 4 optimizer steps; 43800 counts batches, not steps */
    logclass_bar("Epoch 0:   0%|          | 81/43800 [04:53<43:57:28,  3.62s/it, loss=2.31, v_num=0, "
                 "global_step=4.000]\n",
                 4, -1);
    /* NeMo 1.0 on Lightning < 1.6: two validations of 10 batches counted in the bar */
    logclass_bar("Epoch 0: : 100%|##########| 120/120 [10:00<00:00, reduced_train_loss=1.230, global_step=99.00, "
                 "train_step_timing in s=1.200]\n",
                 99, -1);
    /* a postfix lagging the bar by one or two stays the bar's (the rounding documented in scan.c) */
    logclass_bar("Epoch 0: :  47%|####      | 7/15 [06:19<07:13, reduced_train_loss=11.50, global_step=5.000, "
                 "train_step_timing in s=49.50]\n",
                 6, 14);
    /* a resumed run whose bar restarted (behind global_step) still counts to max_steps */
    logclass_bar("Epoch 0: :  10%|#         | 5/50 [00:50<07:30, reduced_train_loss=3.100, global_step=30.00, "
                 "train_step_timing in s=10.00]\n",
                 30, 49);
}
END_TEST

static Suite *logclass_suite(void)
{
    Suite *s = suite_create("logclass");
    TCase *tc = tcase_create("issue25");
    tcase_add_test(tc, test_nemo2_steps_without_timing);
    tcase_add_test(tc, test_nonfinite_spellings);
    tcase_add_test(tc, test_primus_two_times);
    tcase_add_test(tc, test_bar_is_not_the_step);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    struct np_error e;
    if (np_scan_init(&e) != NP_OK) {
        fprintf(stderr, "check_logclass: %s\n", e.text);
        return 1;
    }
    SRunner *sr = srunner_create(logclass_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
