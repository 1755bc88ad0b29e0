/* check_real.c - the real-log corpus: excerpts of other people's NeMo, Megatron and AutoModel logs.
 *
 * tests/data/real/expected.tsv holds, per excerpt, the values read BY HAND from it (README.md there cites
 * each source).  Every excerpt is scanned whole (--all-steps) and tail-first (the default), analysed as
 * nemoperf-parse does, and every expected value is compared; one failing row names the file and the field.
 */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/automodel_log.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/parse/scan.h"

#define REAL "tests/data/real/"
#define NCOL 12

static int real_num(const char *s, double *v) /* "-" -> 0 (not printed) */
{
    if (strcmp(s, "-") == 0)
        return 0;
    char *end;
    *v = strtod(s, &end);
    ck_assert_msg(*end == '\0', "expected.tsv: bad number \"%s\"", s);
    return 1;
}

static void real_check_double(const char *file, const char *field, const char *want, double got)
{
    double w;
    if (!real_num(want, &w)) {
        ck_assert_msg(isnan(got), "%s: %s = %.17g, want none", file, field, got);
        return;
    }
    ck_assert_msg(!isnan(got) && fabs(got - w) <= 1e-9 * fabs(w) + 1e-12, "%s: %s = %.17g, want %s", file, field,
                  got, want);
}

static void real_check_long(const char *file, const char *field, const char *want, long got)
{
    double w;
    long wl = real_num(want, &w) ? (long)w : -1;
    ck_assert_msg(got == wl, "%s: %s = %ld, want %s", file, field, got, want);
}

/* One row: scan (both modes), analyse, compare. */
static void real_row(char **c)
{
    const char *file = c[0];
    char path[512];
    struct np_scan_result all, tail, lean;
    struct np_error err;
    struct np_scan_opts ao = {.all_steps = 1, .window = 10}, to = {.window = 10, .keep = 10},
                        lo = {.window = 10, .keep = 10, .lean = 1};
    snprintf(path, sizeof path, REAL "%s", file);
    ck_assert_msg(np_scan_file(path, &ao, &all, &err) == NP_OK, "%s: %s", file, err.text);
    ck_assert_msg(np_scan_file(path, &to, &tail, &err) == NP_OK, "%s: %s", file, err.text);
    ck_assert_msg(np_scan_file(path, &lo, &lean, &err) == NP_OK, "%s: %s", file, err.text);
    /* as nemoperf-parse (run.c) completes a scan: AutoModel's step total from its setup header */
    np_amlog_header_total(AT_FDCWD, path, &all);
    np_amlog_header_total(AT_FDCWD, path, &tail);
    np_amlog_header_total(AT_FDCWD, path, &lean);
    np_scan_stop_message(AT_FDCWD, path, &all); /* Lightning's "`max_steps=N` reached" */
    np_scan_stop_message(AT_FDCWD, path, &tail);
    np_scan_stop_message(AT_FDCWD, path, &lean);
    ck_assert_msg(all.nsteps > 0, "%s: no step found", file);
    ck_assert_msg(tail.nsteps > 0, "%s: no step found tail-first", file);
    const struct np_step *last = &all.steps[all.nsteps - 1], *tlast = &tail.steps[tail.nsteps - 1];
    ck_assert_msg(strcmp(np_log_gen_name(last->gen), c[1]) == 0, "%s: generation %s, want %s", file,
                  np_log_gen_name(last->gen), c[1]);
    real_check_long(file, "steps", c[8], (long)all.nsteps);
    real_check_long(file, "runs", c[9], (long)all.runs);
    for (size_t i = 0; i < all.nsteps; i++)
        ck_assert_msg(!all.steps[i].side, "%s: a side line left as a step", file);
    /* tail-first reading finds the same last step */
    ck_assert_msg(tlast->iteration == last->iteration && tlast->total == last->total, "%s: tail-first last step %ld/%ld, "
                  "whole file %ld/%ld", file, tlast->iteration, tlast->total, last->iteration, last->total);
    ck_assert_msg((isnan(tlast->step_time_s) && isnan(last->step_time_s)) || tlast->step_time_s == last->step_time_s,
                  "%s: tail-first step time differs", file);

    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_run run;
    memset(&run, 0, sizeof run);
    double ms;
    if (real_num(c[10], &ms))
        run.id.max_steps = (int)ms;
    struct np_recipe_set recipes;
    int identified = strcmp(c[11], "-") != 0; /* a reason is only given to an identified run */
    memset(&recipes, 0, sizeof recipes);
    if (identified) {
        ck_assert(np_recipe_set_load_dir("recipes", &recipes, &err) == NP_OK);
        strcpy(run.id.recipe, "llama3.1");
        strcpy(run.id.model_size, "8b");
        run.id.dtype = np_dtype_parse("bf16");
        run.id.gpus = 8;
    }
    np_run_analyse(&run, &all, &o, identified ? &recipes : NULL, NULL);
    real_check_long(file, "step", c[2], run.step);
    real_check_long(file, "total", c[3], run.total);
    real_check_long(file, "complete", c[4], run.complete);
    real_check_double(file, "step time", c[5], run.step_time_s);
    real_check_double(file, "loss", c[6], run.loss);
    real_check_double(file, "peak memory", c[7], run.peak_memory_bytes);
    /* what the columns show agrees: a window names steps it holds, a reason never calls a number unreadable, an
     * invalid run for want of a step number shows no step time */
    ck_assert_msg(run.window.count == 0 || (run.window.first >= 0 && run.window.last >= run.window.first),
                  "%s: window [%ld-%ld] of %zu steps", file, run.window.first, run.window.last, run.window.count);
    ck_assert_msg(!run.why || !strstr(run.why, "unreadable"), "%s: reason \"%s\"", file, run.why);
    ck_assert_msg(run.step >= 0 || isnan(run.step_time_s), "%s: no step, step time %g", file, run.step_time_s);
    if (strcmp(c[11], "-") != 0)
        ck_assert_msg(run.why && strstr(run.why, c[11]), "%s: reason \"%s\" lacks \"%s\"", file,
                      run.why ? run.why : "", c[11]);
    free(run.why);
    free(run.note);

    /* nemoperf-parse's default mode parses the steps before the last lean: the analysis is the same */
    struct np_run rt, rl;
    memset(&rt, 0, sizeof rt);
    memset(&rl, 0, sizeof rl);
    rt.id = rl.id = run.id;
    np_run_analyse(&rt, &tail, &o, identified ? &recipes : NULL, NULL);
    np_run_analyse(&rl, &lean, &o, identified ? &recipes : NULL, NULL);
    ck_assert_msg(rl.step == rt.step && rl.total == rt.total && rl.window.count == rt.window.count &&
                  rl.window.first == rt.window.first && rl.window.last == rt.window.last && rl.status == rt.status,
                  "%s: lean scan analysed differently", file);
    const double lv[] = {rl.step_time_s, rl.loss, rl.peak_memory_bytes, rl.logged_tflops_per_gpu, rl.window.mean_s,
                         rl.window.median_s, rl.window.stdev_s, rl.m.tokens_per_s, rl.steady.tokens_per_s};
    const double tv[] = {rt.step_time_s, rt.loss, rt.peak_memory_bytes, rt.logged_tflops_per_gpu, rt.window.mean_s,
                         rt.window.median_s, rt.window.stdev_s, rt.m.tokens_per_s, rt.steady.tokens_per_s};
    for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++)
        ck_assert_msg((isnan(lv[i]) && isnan(tv[i])) || lv[i] == tv[i], "%s: lean figure %zu: %g, not %g", file, i,
                      lv[i], tv[i]);
    ck_assert_msg((rl.why == NULL) == (rt.why == NULL) && (!rl.why || strcmp(rl.why, rt.why) == 0),
                  "%s: lean reason differs", file);
    free(rt.why);
    free(rl.why);
    free(rt.note);
    free(rl.note);
    if (identified)
        np_recipe_set_free(&recipes);
    np_scan_result_free(&all);
    np_scan_result_free(&tail);
    np_scan_result_free(&lean);
}

START_TEST(test_corpus)
{
    FILE *f = fopen(REAL "expected.tsv", "r");
    ck_assert_msg(f != NULL, "cannot open " REAL "expected.tsv");
    char line[1024];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *c[NCOL], *save = NULL, *p = line;
        int n = 0;
        for (char *t; n < NCOL && (t = strtok_r(p, "\t", &save)) != NULL; p = NULL)
            c[n++] = t;
        ck_assert_msg(n == NCOL, "expected.tsv: row %d has %d columns, want %d", rows + 1, n, NCOL);
        real_row(c);
        rows++;
    }
    fclose(f);
    ck_assert_msg(rows >= 30, "the corpus has %d excerpts, want 30 or more", rows);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("real");
    TCase *tc = tcase_create("corpus");
    tcase_add_test(tc, test_corpus);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
