/* check_run.c - nemoperf-parse's pipeline on log trees built by the test.
 *
 * The acceptance case: for every published row of seeds 003/004 a tree laid
 * out as the recipes make it (warm-up steps, then the published step time as
 * the last step) must parse to the published throughput (+-1), MFU (+-0.2
 * points) and days (+-0.01), and the markdown report must reproduce the
 * seeds' tables cell for cell.  Then restarts, manifests, statuses, windows.
 */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/report/report.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/parse/scan.h"

static struct np_recipe_set recipes;
static struct np_ref_table ref;
static char root[64];

static void mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static void rmtree(const char *path)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
}

static void setup(void)
{
    struct np_error err;
    ck_assert(np_recipe_set_load_dir("recipes", &recipes, &err) == NP_OK);
    memset(&ref, 0, sizeof ref);
    ck_assert(np_ref_load_dir("share/nemoperf/reference", &ref, &err) == NP_OK);
    strcpy(root, "/tmp/np-run-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
    rmtree(root);
    np_recipe_set_free(&recipes);
    np_ref_free(&ref);
}

/* A NeMo 2.0 log: steps 0..n-1 of total, warm-up then steady, last step time `last`. */
static void write_log(const char *path, int nsteps, int final, int gbs, const char *last, const char *loss_last)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f, "%s: %s", path, strerror(errno));
    fprintf(f, "[NeMo I 2025-04-11 14:46:18 nemo_logging:393] Experiments will be logged at /nemo_run/code\n");
    for (int i = 0; i < nsteps; i++) {
        char t[32];
        if (i == nsteps - 1)
            snprintf(t, sizeof t, "%s", last);
        else
            snprintf(t, sizeof t, "%.4g", i < 3 ? 40.0 + i : atof(last) * 1.001);
        fprintf(f,
                "Training epoch 0, iteration %d/%d | lr: 7.496e-06 | global_batch_size: %d | global_step: %d | "
                "peak_memory_usage: 70833405952 | memory_allocated: 44271689728 | reduced_train_loss: %s | "
                "train_step_timing in s: %s | consumed_samples: %d\n",
                i, final, gbs, i, i == nsteps - 1 ? loss_last : "11.96", t, (i + 1) * gbs);
        fprintf(f, "[NeMo W 2025-04-11 14:46:19 nemo_logging:405] some warning %d\n", i);
    }
    fprintf(f, "[NeMo I 2025-04-11 14:58:02 nemo_logging:393] Async checkpoint finalize\n");
    fclose(f);
}

static char *run_dir(const char *exp, long ts, const char *variant)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/experiments/%s/%s_%ld/%s%s", root, exp, exp, ts, exp, variant);
    mkdirs(buf);
    return buf;
}

static void parse(const struct np_parse_opts *o, struct np_parse_result *res)
{
    char *paths[] = {root};
    ck_assert_int_eq(np_parse_paths(paths, 1, o, &recipes, &ref, res), NP_OK);
}

static int cell_num(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s;
}

START_TEST(test_every_published_row_and_markdown)
{
    int made = 0;
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_ref_row *p = &ref.rows[i];
        if (isnan(p->step_time_s) || strcmp(p->recipe, "automodel") == 0)
            continue; /* seed 000 publishes no step time; seed 001's AutoModel rows: check_amlog */
        const struct np_config_row *row = np_row_find(
            np_model_find(np_recipe_find(&recipes, p->recipe), p->model_size), p->gpu_type, p->dtype, p->gpus);
        ck_assert_ptr_nonnull(row);
        char exp[128], step[32], path[1200];
        snprintf(exp, sizeof exp, "pretrain_%s_%s_%s_%d", p->recipe, p->model_size, np_dtype_name(p->dtype, 0),
                 p->gpus);
        char *dir = run_dir(exp, 1744407969 + (long)i, "");
        snprintf(path, sizeof path, "%s/log-%s_%zu_0.out", dir, exp, 1000 + i);
        np_report_trim2(p->step_time_s, step, sizeof step); /* as the seed prints it */
        write_log(path, 50, 49, row->gbs, step, "11.96");
        snprintf(path, sizeof path, "%s/sbatch_%s_%zu.out", dir, exp, 1000 + i);
        FILE *f = fopen(path, "w");
        fputs("srun: job step done\n", f);
        fclose(f);
        made++;
    }
    ck_assert_int_eq(made, 58);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.reference = 1;
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 58);
    ck_assert_uint_eq(res.nerrors, 0);
    for (size_t i = 0; i < res.nruns; i++) {
        const struct np_run *r = &res.runs[i];
        ck_assert_msg(r->status == NP_RUN_OK, "%s: %s", r->path, np_run_status_name(r->status));
        ck_assert_ptr_nonnull(r->ref);
        ck_assert_msg(fabs(r->m.tokens_per_s - r->ref->tokens_per_s) <= 1.0, "%s: tokens/s %f vs %f", r->path,
                      r->m.tokens_per_s, r->ref->tokens_per_s);
        ck_assert_msg(fabs(r->m.mfu_percent - r->ref->mfu_percent) <= 0.2, "%s: MFU %f vs %f", r->path,
                      r->m.mfu_percent, r->ref->mfu_percent);
        if (!isnan(r->ref->days_1t))
            ck_assert_msg(fabs(r->m.days_to_train - r->ref->days_1t) <= 0.01, "%s: days %f vs %f", r->path,
                          r->m.days_to_train, r->ref->days_1t);
        ck_assert_msg(r->verdict == NP_VERDICT_PASS, "%s: %s (%f)", r->path, np_verdict_name(r->verdict),
                      r->ref_ratio);
        ck_assert_int_eq(r->window.count, 34); /* NVIDIA's iterations 11-44 of 50 */
        ck_assert_int_eq(r->window.first, 11);
        ck_assert_int_eq(r->window.last, 44);
        ck_assert_int_eq(r->complete, 1);
    }

    /* markdown: the seeds' tables, cell for cell */
    char *md = NULL;
    size_t mdlen = 0;
    FILE *mf = open_memstream(&md, &mdlen);
    o.reference = 0; /* the seeds' tables have no reference rows */
    ck_assert_int_eq(np_report_write(mf, NP_FMT_MARKDOWN, &res, &o), NP_OK);
    fclose(mf);
    FILE *ef = fopen("tests/data/published/seed-tables.md", "r");
    ck_assert_ptr_nonnull(ef);
    char want[1024];
    char *save = NULL, *got = strtok_r(md, "\n", &save);
    int lines = 0, cells = 0, exact = 0;
    while (fgets(want, sizeof want, ef)) {
        want[strcspn(want, "\n")] = '\0';
        if (!want[0])
            continue; /* blank separator lines: strtok skips them in the output too */
        ck_assert_msg(got != NULL, "markdown ends before: %s", want);
        lines++;
        if (strncmp(want, "Model flops", 11) && strncmp(want, "Throughput", 10) && strncmp(want, "Time to", 7)) {
            ck_assert_str_eq(got, want); /* header, separator and step-time rows: identical text */
            if (!strncmp(want, "Training", 8)) /* "label | a | b |": one cell per '|' after the first */
                for (const char *c = strchr(want, '|'); (c = strchr(c + 1, '|'));)
                    cells++, exact++;
        } else {
            /* numeric rows: same label, same number of cells, each within the acceptance tolerance */
            char wb[1024], gb[1024];
            strcpy(wb, want);
            strcpy(gb, got);
            char *ws, *gs, *wc = strtok_r(wb, "|", &ws), *gc = strtok_r(gb, "|", &gs);
            ck_assert_str_eq(wc, gc);
            double tol = !strncmp(want, "Model", 5) ? 0.2 : !strncmp(want, "Time", 4) ? 0.01 : 1.0;
            while ((wc = strtok_r(NULL, "|", &ws))) {
                gc = strtok_r(NULL, "|", &gs);
                ck_assert_ptr_nonnull(gc);
                double wv, gv;
                cells++;
                if (strcmp(wc, gc) == 0) {
                    exact++;
                    continue;
                }
                ck_assert_msg(cell_num(wc, &wv) && cell_num(gc, &gv), "cell '%s' vs '%s' in: %s", gc, wc, want);
                ck_assert_msg(fabs(wv - gv) <= tol + 1e-9, "cell '%s' vs published '%s' in: %s", gc, wc, want);
            }
            ck_assert_ptr_null(strtok_r(NULL, "|", &gs));
        }
        got = strtok_r(NULL, "\n", &save);
    }
    ck_assert_msg(got == NULL, "extra markdown line: %s", got);
    fclose(ef);
    printf("markdown: %d lines, %d cells, %d identical to the seeds', the rest within tolerance\n", lines, cells,
           exact);
    ck_assert_int_eq(lines, 60);
    free(md);
    np_parse_result_free(&res);
}
END_TEST

START_TEST(test_seed_tables_transcribed)
{
    /* tests/data/published/seed-tables.md must be the seeds' own lines (when the seeds are beside us) */
    const char *seeds[] = {"../shared/seeds/003_a73f50c75f1f041c.txt", "../shared/seeds/004_380b933fece10253.txt"};
    FILE *a = fopen(seeds[0], "r");
    if (!a) {
        printf("seeds not found beside the checkout: transcription check skipped\n");
        return;
    }
    fclose(a);
    FILE *ef = fopen("tests/data/published/seed-tables.md", "r");
    char want[1024];
    int found = 0;
    while (fgets(want, sizeof want, ef)) {
        if (want[0] == '\n')
            continue;
        char cmd[1400];
        want[strcspn(want, "\n")] = '\0';
        snprintf(cmd, sizeof cmd, "grep -qxF -- '%s' %s %s", want, seeds[0], seeds[1]);
        ck_assert_msg(system(cmd) == 0, "not in the seeds: %s", want);
        found++;
    }
    fclose(ef);
    ck_assert_int_eq(found, 60);
}
END_TEST

START_TEST(test_restarts_resolve_to_latest_attempt)
{
    char *dir = run_dir("pretrain_llama3.1_8b_fp8_16", 1744407000, "");
    char p[1200];
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_fp8_16_77_0.out", dir);
    write_log(p, 20, 49, 256, "9.9", "11.96"); /* first attempt died at step 19 */
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_fp8_16_77_1.out", dir);
    write_log(p, 50, 49, 256, "9.36", "11.96"); /* requeued, complete */
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_fp8_16_77_2.out", dir);
    FILE *f = fopen(p, "w"); /* third attempt started, no step yet */
    fputs("[NeMo I] starting\n", f);
    fclose(f);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 1);
    ck_assert_ptr_nonnull(strstr(res.runs[0].path, "_77_1.out"));
    ck_assert_uint_eq(res.runs[0].attempts, 3);
    ck_assert_int_eq(res.runs[0].status, NP_RUN_OK);
    ck_assert_double_eq_tol(res.runs[0].m.tokens_per_s, 224055, 1);
    np_parse_result_free(&res);
}
END_TEST

START_TEST(test_sbatch_companion)
{
    char p[1200];
    /* a srun log with steps: the batch output beside it is not a second run, even with step lines */
    char *d = run_dir("pretrain_llama3.1_8b_bf16_16", 9, "");
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_bf16_16_8_0.out", d);
    write_log(p, 50, 49, 256, "12.3", "11.96");
    snprintf(p, sizeof p, "%s/sbatch_pretrain_llama3.1_8b_bf16_16_8.out", d);
    write_log(p, 50, 49, 256, "12.3", "11.96");
    /* no srun log: the batch output is the run */
    d = run_dir("pretrain_llama3.1_8b_bf16_32", 10, "");
    snprintf(p, sizeof p, "%s/sbatch_pretrain_llama3.1_8b_bf16_32_9.out", d);
    write_log(p, 50, 49, 512, "12.32", "11.96");
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 2);
    ck_assert_ptr_nonnull(strstr(res.runs[0].path, "log-pretrain_llama3.1_8b_bf16_16_8_0.out"));
    ck_assert_ptr_nonnull(strstr(res.runs[1].path, "sbatch_pretrain_llama3.1_8b_bf16_32_9.out"));
    ck_assert_int_eq(res.runs[1].status, NP_RUN_OK);
    ck_assert_double_eq_tol(res.runs[1].m.tokens_per_s, 340447, 1);
    np_parse_result_free(&res);
}
END_TEST

START_TEST(test_statuses)
{
    char p[1200];
    /* incomplete */
    char *d = run_dir("pretrain_nemotron4_15b_bf16_16", 1, "");
    snprintf(p, sizeof p, "%s/log-pretrain_nemotron4_15b_bf16_16_5_0.out", d);
    write_log(p, 31, 49, 64, "2.66", "11.96");
    /* invalid: NaN loss in the window */
    d = run_dir("pretrain_nemotron4_15b_bf16_32", 2, "");
    snprintf(p, sizeof p, "%s/log-pretrain_nemotron4_15b_bf16_32_6_0.out", d);
    write_log(p, 50, 49, 128, "2.66", "nan");
    /* no steps */
    d = run_dir("pretrain_nemotron4_15b_bf16_64", 3, "");
    snprintf(p, sizeof p, "%s/log-pretrain_nemotron4_15b_bf16_64_7_0.out", d);
    FILE *f = fopen(p, "w");
    fputs("Traceback (most recent call last):\nRuntimeError: CUDA out of memory\n", f);
    fclose(f);
    /* unidentified: a plain folder */
    snprintf(p, sizeof p, "%s/misc", root);
    mkdirs(p);
    snprintf(p, sizeof p, "%s/misc/run.out", root);
    write_log(p, 50, 49, 128, "1.5", "11.96");
    /* unknown model size */
    d = run_dir("pretrain_llama3.1_13b_bf16_8", 4, "");
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_13b_bf16_8_9_0.out", d);
    write_log(p, 50, 49, 128, "1.5", "11.96");
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 5);
    int seen[5] = {0};
    for (size_t i = 0; i < res.nruns; i++) {
        const struct np_run *r = &res.runs[i];
        if (strstr(r->path, "_16_5_0")) {
            ck_assert_int_eq(r->status, NP_RUN_INCOMPLETE);
            ck_assert_int_eq(r->step, 30);
            ck_assert_int_eq(r->complete, 0);
            ck_assert(!isnan(r->m.tokens_per_s));
            seen[0] = 1;
        } else if (strstr(r->path, "_32_6_0")) {
            ck_assert_int_eq(r->status, NP_RUN_INVALID);
            seen[1] = 1;
        } else if (strstr(r->path, "_64_7_0")) {
            /* no steps, and the log ends in an error: failed, with that error as the reason */
            ck_assert_int_eq(r->status, NP_RUN_FAILED);
            ck_assert_uint_eq(r->steps_seen, 0);
            ck_assert_str_eq(r->why, "CUDA out of memory: RuntimeError: CUDA out of memory");
            ck_assert_str_eq(r->job_id, "7");
            seen[2] = 1;
        } else if (strstr(r->path, "misc/run.out")) {
            ck_assert_int_eq(r->status, NP_RUN_UNIDENTIFIED);
            /* computed without the model: tokens/s needs seq length, unknown here */
            ck_assert(isnan(r->m.mfu_percent));
            ck_assert_double_eq(r->step_time_s, 1.5);
            seen[3] = 1;
        } else if (strstr(r->path, "13b")) {
            ck_assert_int_eq(r->status, NP_RUN_UNIDENTIFIED);
            ck_assert_str_eq(r->why, "recipe llama3.1 has no model size \"13b\"");
            seen[4] = 1;
        }
    }
    ck_assert(seen[0] && seen[1] && seen[2] && seen[3] && seen[4]);
    np_parse_result_free(&res);

    /* options identify the plain folder's run; GBS from the log wins over --gbs */
    np_parse_opts_init(&o);
    strcpy(o.given.recipe, "llama3.1");
    strcpy(o.given.model_size, "8b");
    o.given.dtype = NP_DTYPE_BF16;
    o.given.gpus = 8;
    o.given.gbs = 999;
    snprintf(p, sizeof p, "%s/misc", root);
    char *paths[] = {p};
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &recipes, &ref, &res), NP_OK);
    ck_assert_uint_eq(res.nruns, 1);
    /* 1.5 s per step is 5x faster than an H100 can do llama3.1 8b at GBS 128 (MFU 512 %) */
    ck_assert_int_eq(res.runs[0].status, NP_RUN_IMPLAUSIBLE);
    ck_assert_ptr_nonnull(strstr(res.runs[0].why, "(MFU 512 %)"));
    ck_assert_str_eq(res.runs[0].id_source, "options");
    ck_assert_int_eq(res.runs[0].id.gbs, 128);
    ck_assert_double_eq_tol(res.runs[0].m.tokens_per_s, 8192 * 128 / 1.5, 1e-6);
    np_parse_result_free(&res);
}
END_TEST

START_TEST(test_unreadable_folder)
{
    /* a folder the user cannot read: in errors (nemoperf-parse exits 1); root reads anything, so
     * the check only means something for other users */
    if (geteuid() == 0)
        return;
    char p[1200];
    char *d = run_dir("pretrain_llama3.1_8b_bf16_8", 11, "");
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_bf16_8_1_0.out", d);
    write_log(p, 50, 49, 128, "12.27", "11.96");
    snprintf(p, sizeof p, "%s/experiments/closed", root);
    mkdirs(p);
    ck_assert_int_eq(chmod(p, 0), 0);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_parse_result res;
    parse(&o, &res);
    chmod(p, 0755);
    ck_assert_uint_eq(res.nruns, 1);
    ck_assert_uint_eq(res.nerrors, 1);
    ck_assert_ptr_nonnull(strstr(res.errors[0], "closed: Permission denied"));
    np_parse_result_free(&res);
}
END_TEST

START_TEST(test_manifest_identity_and_window)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/somewhere/job", root);
    mkdirs(p);
    snprintf(p, sizeof p, "%s/somewhere/nemoperf.json", root); /* in a parent folder */
    FILE *f = fopen(p, "w");
    fputs("{\"nemoperf_manifest\":1,\"config\":{\"recipe\":\"nemotron4\",\"model_size\":\"15b\",\"dtype\":\"fp8\","
          "\"gpu_type\":\"h100\",\"gpus\":16,\"seq_len\":4096,\"gbs\":64,\"max_steps\":50,"
          "\"experiment\":\"pretrain_nemotron4_15b_fp8_16\"}}",
          f);
    fclose(f);
    snprintf(p, sizeof p, "%s/somewhere/job/log-x_3_0.out", root);
    write_log(p, 50, 49, 64, "1.98", "11.96");
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.steps_first = 35;
    o.steps_last = 44;
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 1);
    const struct np_run *r = &res.runs[0];
    ck_assert_str_eq(r->id_source, "manifest");
    ck_assert_str_eq(r->id.experiment, "pretrain_nemotron4_15b_fp8_16");
    ck_assert_int_eq(r->status, NP_RUN_OK);
    ck_assert_double_eq_tol(r->m.tokens_per_s, 132396, 1);
    ck_assert_int_eq(r->window.first, 35);
    ck_assert_int_eq(r->window.last, 44);
    ck_assert_uint_eq(r->window.count, 10);
    ck_assert_double_eq_tol(r->window.mean_s, 1.98 * 1.001, 0.001);
    ck_assert_double_eq_tol(r->window.stdev_s, 0, 1e-9);
    np_parse_result_free(&res);
}
END_TEST

START_TEST(test_errors_go_on)
{
    char p[1200], q[1200];
    char *d = run_dir("pretrain_llama3.1_8b_bf16_8", 5, "");
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_bf16_8_1_0.out", d);
    write_log(p, 50, 49, 128, "12.27", "11.96");
    snprintf(p, sizeof p, "%s/experiments/loop", root); /* symlink loop */
    ck_assert_int_eq(symlink("..", p), 0);
    snprintf(p, sizeof p, "%s/dangling.out", root);
    ck_assert_int_eq(symlink("/nonexistent/file.out", p), 0);
    snprintf(q, sizeof q, "%s/missing-path", root);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_parse_result res;
    char *paths[] = {root, q};
    ck_assert_int_eq(np_parse_paths(paths, 2, &o, &recipes, &ref, &res), NP_OK);
    ck_assert_uint_eq(res.nruns, 1);
    ck_assert_int_eq(res.runs[0].status, NP_RUN_OK);
    int loop = 0, dangling = 0, missing = 0;
    for (size_t i = 0; i < res.nerrors; i++) {
        loop |= strstr(res.errors[i], "symbolic link loop") != NULL;
        dangling |= strstr(res.errors[i], "dangling.out: dangling symbolic link") != NULL;
        missing |= strstr(res.errors[i], "missing-path: No such file or directory") != NULL;
    }
    ck_assert_msg(loop && dangling && missing, "errors: %zu", res.nerrors);
    np_parse_result_free(&res);
}
END_TEST

/* A run written to the spill and read back is the same run: every byte of the struct (zero runs of
 * any length, including at the end and of fewer than 8 bytes), its five strings (one absent, one empty, the
 * system snapshot's JSON), several runs in a row, and a cut file is an error, not a run. */
START_TEST(test_spill_round_trip)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    struct np_run a[3];
    long first_end = 0;
    for (int k = 0; k < 3; k++) {
        memset(&a[k], 0, sizeof a[k]);
        unsigned char *p = (unsigned char *)&a[k];
        for (size_t i = 0; i < sizeof a[k]; i++) /* stretches of zeros of every length between bytes */
            p[i] = (i * 7 + (size_t)k) % (k == 2 ? 3 : 11) == 0 ? (unsigned char)(1 + i % 250) : 0;
        a[k].path = (char *)"/x/log-1.out";
        a[k].dir = k == 1 ? NULL : (char *)"/x";
        a[k].why = (char *)"";
        a[k].note = k == 0 ? NULL : (char *)"a note; another";
        a[k].system = k == 2 ? (char *)"{\"nodes\": []}" : NULL; /* the system snapshot's JSON */
        a[k].samples = (double *)&first_end; /* a window's step times are not carried: read back as NULL */
        ck_assert_int_eq(np_run_spill_put(f, &a[k]), NP_OK);
        if (k == 0)
            first_end = ftell(f);
    }
    rewind(f);
    for (int k = 0; k < 3; k++) {
        struct np_run b;
        ck_assert_int_eq(np_run_spill_get(f, &b), 1);
        struct np_run x = b, y = a[k];
        ck_assert_ptr_null(b.samples);
        x.path = x.dir = x.why = x.note = x.system = y.path = y.dir = y.why = y.note = y.system = NULL;
        y.samples = NULL;
        ck_assert_msg(memcmp(&x, &y, sizeof x) == 0, "run %d differs", k);
        ck_assert_str_eq(b.path, a[k].path);
        ck_assert_int_eq(b.dir == NULL, a[k].dir == NULL);
        ck_assert_str_eq(b.why, "");
        ck_assert_int_eq(b.note == NULL, a[k].note == NULL);
        if (k == 2)
            ck_assert_str_eq(b.system, "{\"nodes\": []}");
        else
            ck_assert_ptr_null(b.system);
        np_run_clear(&b);
    }
    struct np_run b;
    ck_assert_int_eq(np_run_spill_get(f, &b), 0);
    /* cut 40 bytes into the second run */
    rewind(f);
    fflush(f);
    ck_assert_int_eq(ftruncate(fileno(f), first_end + 40), 0);
    ck_assert_int_eq(np_run_spill_get(f, &b), 1);
    np_run_clear(&b);
    ck_assert_int_eq(np_run_spill_get(f, &b), -1);
    fclose(f);
}
END_TEST

START_TEST(test_identity_from_path)
{
    struct np_identity id;
    memset(&id, 0, sizeof id);
    ck_assert(np_identity_from_path("/x/experiments/pretrain_nemotron4_15b_bf16_16_nsys/"
                                    "pretrain_nemotron4_15b_bf16_16_nsys_1744407969/pretrain_nemotron4_15b_bf16_16_nsys/log.out",
                                    &id));
    ck_assert_str_eq(id.recipe, "nemotron4");
    ck_assert_str_eq(id.model_size, "15b");
    ck_assert_int_eq(id.dtype, NP_DTYPE_BF16);
    ck_assert_int_eq(id.gpus, 16);
    ck_assert_str_eq(id.variant, "nsys");
    memset(&id, 0, sizeof id);
    ck_assert(np_identity_from_path("pretrain_llama3.1_405b_fp8_2048_1744407969/log.out", &id));
    ck_assert_str_eq(id.recipe, "llama3.1");
    ck_assert_int_eq(id.gpus, 2048);
    ck_assert_str_eq(id.experiment, "pretrain_llama3.1_405b_fp8_2048");
    memset(&id, 0, sizeof id);
    ck_assert(!np_identity_from_path("/a/pretrain_llama3.1_8b_fp16_8/log.out", &id));
    ck_assert(!np_identity_from_path("/a/b/c.out", &id));
    ck_assert(!np_identity_from_path("", &id));
}
END_TEST

/* A NeMo 2.0 log of 50 steps (0..49 of 49, llama3.1 8b at GBS 128) whose step i takes 2 + i/100 s: every step
 * its own time, so a window's steps, their order and their statistics are known here without the parser. */
static void write_ramp_log(const char *path)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f, "%s: %s", path, strerror(errno));
    for (int i = 0; i < 50; i++)
        fprintf(f,
                "Training epoch 0, iteration %d/49 | lr: 7.496e-06 | global_batch_size: 128 | global_step: %d | "
                "reduced_train_loss: 11.96 | train_step_timing in s: %.2f | consumed_samples: %d\n",
                i, i, 2 + i / 100.0, (i + 1) * 128);
    fclose(f);
}

/* The window's edges: --steps from iteration 0 (a step numbered 0 is a window's step, the first one), the
 * default 11-44, each window's steps kept in log order for the results store (keep_samples). */
START_TEST(test_window_edges_and_samples)
{
    char p[1200];
    char *d = run_dir("pretrain_llama3.1_8b_bf16_8", 21, "");
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_bf16_8_21_0.out", d);
    write_ramp_log(p);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.steps_first = 0;
    o.steps_last = 4;
    o.keep_samples = 1;
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 1);
    const struct np_run *r = &res.runs[0];
    ck_assert_str_eq(r->window.rule, "--steps");
    ck_assert_int_eq(r->window.first, 0);
    ck_assert_int_eq(r->window.last, 4);
    ck_assert_uint_eq(r->window.count, 5);
    ck_assert_uint_eq(r->window.requested, 0);
    ck_assert_ptr_nonnull(r->samples);
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq_tol(r->samples[i], 2 + i / 100.0, 1e-12);
    ck_assert_double_eq_tol(r->window.mean_s, 2.02, 1e-12); /* (2.00 + ... + 2.04) / 5 */
    ck_assert_double_eq_tol(r->window.min_s, 2.00, 1e-12);
    ck_assert_double_eq_tol(r->window.max_s, 2.04, 1e-12);
    np_parse_result_free(&res);

    /* no --steps: NVIDIA's 11-44 of 50, 34 steps in log order */
    np_parse_opts_init(&o);
    o.keep_samples = 1;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 1);
    r = &res.runs[0];
    ck_assert_str_eq(r->window.rule, "iterations 11-44 of 50 (NVIDIA's parser)");
    ck_assert_int_eq(r->window.first, 11);
    ck_assert_int_eq(r->window.last, 44);
    ck_assert_uint_eq(r->window.count, 34);
    ck_assert_ptr_nonnull(r->samples);
    for (int i = 0; i < 34; i++)
        ck_assert_double_eq_tol(r->samples[i], 2 + (11 + i) / 100.0, 1e-12);
    ck_assert_double_eq_tol(r->window.mean_s, 2.275, 1e-12); /* (2.11 + 2.44) / 2 */
    np_parse_result_free(&res);
}
END_TEST

/* A spread of exactly 1e-9 of the mean is spread, not the mean's rounding noise: {a - d, a, a + d} has the
 * sample standard deviation d (d^2 + 0 + d^2 over n - 1 = 2), and with a = 0x1.dcd65p-1, d = 2^-30 the product
 * 1e-9 x a is d to the last bit (asserted first). */
START_TEST(test_window_stdev_at_the_noise_floor)
{
    const double a = 0x1.dcd65p-1, d = 0x1p-30;
    ck_assert(1e-9 * a == d);
    double v[3] = {a + d, a - d, a};
    struct np_window_stats w;
    np_window_stats_of(&w, v, 3);
    ck_assert_uint_eq(w.count, 3);
    ck_assert(w.mean_s == a);
    ck_assert_msg(w.stdev_s == d, "stdev %a, want %a", w.stdev_s, d);
    ck_assert(w.min_s == a - d && w.max_s == a + d && w.median_s == a);
    double same[3] = {a, a, a};
    np_window_stats_of(&w, same, 3);
    ck_assert(w.stdev_s == 0.0);
}
END_TEST

/* The reference verdict on its own: a run and a published row built here.  Tolerance 25 % so that the ratios
 * and bounds are exact in binary (0.75 and 1.25): exactly at -tolerance and +tolerance is PASS (NVIDIA's number
 * "within the tolerance"), past them FAIL and FAST.  The basis: the published total tokens/s when the row has
 * it (its per-GPU and TFLOP/s columns are rounded or derived), else tokens/s/GPU, else TFLOP/s/GPU (DFM). */
static enum np_verdict verdict_of(double pub_tps, double pub_tpg, double pub_tflops, double tps, double tpg,
                                  double tflops, double *ratio)
{
    struct np_ref_row row;
    memset(&row, 0, sizeof row);
    row.step_time_s = row.mfu_percent = row.days_1t = NAN;
    row.tokens_per_s = pub_tps;
    row.tokens_per_s_per_gpu = pub_tpg;
    row.model_tflops_per_gpu = pub_tflops;
    struct np_run run;
    memset(&run, 0, sizeof run);
    run.status = NP_RUN_OK;
    run.id.kind = NP_KIND_BENCHMARK;
    run.id.gpus = 8;
    run.ref = &row;
    run.steady.tokens_per_s = tps;
    run.steady.tokens_per_s_per_gpu = tpg;
    run.steady.model_tflops_per_gpu = tflops;
    run.m = run.steady;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.tolerance_pct = 25;
    o.tolerance_given = 1;
    np_run_verdict(&run, &o, NULL);
    *ratio = run.ref_ratio;
    return run.verdict;
}

/* The tolerance: --tolerance when given, for every family; else the family's own (Megatron-Bridge's 0.5 %, said
 * in its footer), else the default 5 %. */
START_TEST(test_tolerance_family)
{
    struct np_run run;
    memset(&run, 0, sizeof run);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    ck_assert_double_eq(np_run_tolerance(&run, &o), 5.0);
    run.family = np_run_family_find("mbridge");
    ck_assert_ptr_nonnull(run.family);
    ck_assert_double_eq(np_run_tolerance(&run, &o), run.family->tolerance_pct);
    ck_assert_double_eq(run.family->tolerance_pct, 0.5);
    o.tolerance_pct = 7;
    o.tolerance_given = 1;
    ck_assert_double_eq(np_run_tolerance(&run, &o), 7);
    run.family = NULL;
    ck_assert_double_eq(np_run_tolerance(&run, &o), 7);
}
END_TEST

START_TEST(test_verdict_boundaries_and_basis)
{
    double q;
    /* at the bounds, then a hair past them */
    ck_assert_int_eq(verdict_of(100, NAN, NAN, 75, NAN, NAN, &q), NP_VERDICT_PASS);
    ck_assert(q == 0.75);
    ck_assert_int_eq(verdict_of(100, NAN, NAN, 125, NAN, NAN, &q), NP_VERDICT_PASS);
    ck_assert(q == 1.25);
    ck_assert_int_eq(verdict_of(100, NAN, NAN, 74.99, NAN, NAN, &q), NP_VERDICT_FAIL);
    ck_assert_int_eq(verdict_of(100, NAN, NAN, 125.01, NAN, NAN, &q), NP_VERDICT_FAST);
    /* a published 0 (a cell that says nothing) is no figure to compare with: not compared, no infinite ratio */
    ck_assert_int_eq(verdict_of(0, NAN, NAN, 100, NAN, NAN, &q), NP_VERDICT_NOT_COMPARED);
    ck_assert(isnan(q));
    /* the total is compared when published, whatever the row's per-GPU or TFLOP/s column says */
    ck_assert_int_eq(verdict_of(1000, 200, NAN, 1000, 125, NAN, &q), NP_VERDICT_PASS);
    ck_assert(q == 1.0);
    ck_assert_int_eq(verdict_of(1000, NAN, 400, 1000, 125, 300, &q), NP_VERDICT_PASS);
    ck_assert(q == 1.0);
    /* no total: tokens/s/GPU; neither: TFLOP/s/GPU */
    ck_assert_int_eq(verdict_of(NAN, 200, 400, 1000, 125, 400, &q), NP_VERDICT_FAIL);
    ck_assert(q == 0.625);
    ck_assert_int_eq(verdict_of(NAN, NAN, 400, 1000, 125, 300, &q), NP_VERDICT_PASS);
    ck_assert(q == 0.75);
}
END_TEST

/* An AutoModel benchmark log whose iterations carry no time ("Max iter time" lines cut), its summary averaging
 * "all 20 iterations" (no warm-up): the window falls back to the last steps found, as after a warm-up of 10
 * (none timed either way), and says so; the summary's average is still the run's step time. */
START_TEST(test_automodel_untimed_window_rule)
{
    for (int warm = 0; warm <= 10; warm += 10) {
        char p[1200];
        snprintf(p, sizeof p, "%s/am%d", root, warm);
        mkdirs(p);
        snprintf(p, sizeof p, "%s/am%d/automodel_gptoss_20b_te_deepep_8.out", root, warm);
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fputs("2026-04-17 10:00:04 | INFO | __main__ | GA steps: 16, DP size: 8, Local batch size: 2, Global batch "
              "size: 256\n", f);
        for (int i = 0; i < 20; i++)
            fprintf(f, "2026-04-17 10:00:05 | INFO | __main__ | Rank 0 | Iteration %d\n", i);
        if (warm)
            fputs("2026-04-17 10:02:11 | INFO | __main__ | Average iteration time: 10.040 seconds (excluding first "
                  "10 warmup iterations)\n", f);
        else
            fputs("2026-04-17 10:02:11 | INFO | __main__ | Average iteration time: 10.040 seconds (all 20 "
                  "iterations)\n", f);
        fclose(f);
        snprintf(p, sizeof p, "%s/am%d", root, warm);
        char *paths[] = {p};
        struct np_parse_opts o;
        np_parse_opts_init(&o);
        struct np_parse_result res;
        ck_assert_int_eq(np_parse_paths(paths, 1, &o, &recipes, &ref, &res), NP_OK);
        ck_assert_uint_eq(res.nruns, 1);
        const struct np_run *r = &res.runs[0];
        ck_assert_msg(r->bench_summary && r->bench_warmup == warm, "warm-up %d: summary %d, %ld", warm,
                      r->bench_summary, r->bench_warmup);
        ck_assert_uint_eq(r->window.count, 0);
        ck_assert_ptr_nonnull(r->window.rule);
        ck_assert_msg(strcmp(r->window.rule, "last 10 steps") == 0, "warm-up %d: %s", warm, r->window.rule);
        ck_assert_uint_eq(r->window.requested, 10);
        np_parse_result_free(&res);
    }
}
END_TEST

/* Energy from Megatron's --log-energy figures (np_run_energy), each figure computed here: steps 0..9 of 8 GPUs,
 * sequence 4096, GBS 128, step i at 1000 + 10 i J/GPU and 500 + i W/GPU; step 2 without the figures, step 7 a
 * negative energy (a counter reset: not a reading, its power is) and step 8 exactly 0 J (a reading). */
static void energy_of(struct np_run *run, struct np_scan_result *scan, long first, long last, int gpus)
{
    static struct np_step steps[10];
    for (int i = 0; i < 10; i++) {
        memset(&steps[i], 0, sizeof steps[i]);
        steps[i].iteration = i;
        steps[i].step_time_s = 1.0;
        steps[i].energy_j_per_gpu = i == 2 ? NAN : i == 7 ? -5 : i == 8 ? 0 : 1000 + 10 * i;
        steps[i].power_w_per_gpu = i == 2 ? NAN : 500 + i;
    }
    memset(scan, 0, sizeof *scan);
    scan->steps = steps;
    scan->nsteps = 10;
    memset(run, 0, sizeof *run);
    run->id.gpus = gpus;
    run->id.seq_len = 4096;
    run->id.gbs = 128;
    run->train_tokens = 1e12;
    run->energy.w_per_gpu = run->energy.j_per_gpu_iter = run->energy.j_per_token = NAN;
    run->energy.tokens_per_kwh = run->energy.mwh_to_train = NAN;
    np_run_energy(run, scan, first, last);
}

START_TEST(test_energy_per_token)
{
    struct np_run run;
    struct np_scan_result scan;
    /* the window 3-6: J 1030..1060 (mean 1045), W 503..506 (504.5), 4 steps */
    energy_of(&run, &scan, 3, 6, 8);
    ck_assert_uint_eq(run.energy.steps, 4);
    ck_assert_double_eq_tol(run.energy.j_per_gpu_iter, 1045, 1e-9);
    ck_assert_double_eq_tol(run.energy.w_per_gpu, 504.5, 1e-9);
    double jt = 1045.0 * 8 / (4096.0 * 128); /* J/token: J/iter/GPU x GPUs over the tokens of a step */
    ck_assert_double_eq_tol(run.energy.j_per_token, jt, 1e-15);
    ck_assert_double_eq_tol(run.energy.tokens_per_kwh, 3.6e6 / jt, 1e-3); /* 1 kWh = 3.6e6 J */
    ck_assert_double_eq_tol(run.energy.mwh_to_train, jt * 1e12 / 3.6e9, 1e-9); /* 1 MWh = 3.6e9 J */
    ck_assert_ptr_nonnull(run.note);
    ck_assert_msg(strstr(run.note, "energy (the log's --log-energy, 4 steps): 504.5 W/GPU, 1045.0 J/iter/GPU") != NULL,
                  "%s", run.note);
    free(run.note);
    /* from step 0 (a window that starts at the first step): 0, 1, 3 (no figures at 2): J 1000, 1010, 1030 */
    energy_of(&run, &scan, 0, 3, 8);
    ck_assert_uint_eq(run.energy.steps, 3);
    ck_assert_double_eq_tol(run.energy.j_per_gpu_iter, 3040 / 3.0, 1e-9);
    ck_assert_double_eq_tol(run.energy.w_per_gpu, (500 + 501 + 503) / 3.0, 1e-9);
    free(run.note);
    /* 6-8: 1060, the counter reset of 7 left out, 0 J of 8 counted; every step's power: 3 readings, 3 steps */
    energy_of(&run, &scan, 6, 8, 8);
    ck_assert_uint_eq(run.energy.steps, 3);
    ck_assert_double_eq_tol(run.energy.j_per_gpu_iter, 1060 / 2.0, 1e-9);
    ck_assert_double_eq_tol(run.energy.w_per_gpu, (506 + 507 + 508) / 3.0, 1e-9);
    free(run.note);
    /* a window with no figure at all (step 2 only): every step's instead: 8 energy readings (7's reset left out), 9 of power */
    energy_of(&run, &scan, 2, 2, 8);
    ck_assert_uint_eq(run.energy.steps, 9);
    ck_assert_double_eq_tol(run.energy.j_per_gpu_iter, (1000 + 1010 + 1030 + 1040 + 1050 + 1060 + 0 + 1090) / 8.0, 1e-9);
    free(run.note);
    /* no window (first -1): every step */
    energy_of(&run, &scan, -1, -1, 8);
    ck_assert_uint_eq(run.energy.steps, 9);
    free(run.note);
    /* step 8 alone: 0 J a step, 0 J/token, no tokens per kWh (not an infinite number) */
    energy_of(&run, &scan, 8, 8, 8);
    ck_assert_uint_eq(run.energy.steps, 1);
    ck_assert_double_eq(run.energy.j_per_gpu_iter, 0);
    ck_assert_double_eq(run.energy.j_per_token, 0);
    ck_assert(isnan(run.energy.tokens_per_kwh));
    free(run.note);
    /* GPUs unknown: the J/iter/GPU is said, nothing per token */
    energy_of(&run, &scan, 3, 6, 0);
    ck_assert_double_eq_tol(run.energy.j_per_gpu_iter, 1045, 1e-9);
    ck_assert(isnan(run.energy.j_per_token) && isnan(run.energy.tokens_per_kwh) && isnan(run.energy.mwh_to_train));
    free(run.note);
    /* no training tokens asked: no MWh */
    energy_of(&run, &scan, 3, 6, 8);
    free(run.note);
    run.note = NULL;
    run.train_tokens = 0;
    run.energy.steps = 0;
    run.energy.mwh_to_train = NAN;
    np_run_energy(&run, &scan, 3, 6);
    ck_assert(!isnan(run.energy.j_per_token) && isnan(run.energy.mwh_to_train));
    free(run.note);
}
END_TEST

/* np_run_analyse on a scan built here (no log, no folder): steps 0..n-1 of `total` at t s each, NeMo 2.0 lines, the
 * run named llama3.1 8b bf16 on 8 H100s (a published row: GBS 128, sequence 8192).  The status ladder, the window
 * rules and the notes are read from what np_run_analyse stores; each expected text and figure is written here. */
static struct np_step ana_steps[128];

static void ana_init(struct np_run *run, struct np_scan_result *scan, size_t n, long total, double t)
{
    ck_assert_uint_le(n, sizeof ana_steps / sizeof ana_steps[0]);
    for (size_t i = 0; i < n; i++) {
        struct np_step *s = &ana_steps[i];
        memset(s, 0, sizeof *s);
        s->iteration = (long)i;
        s->total = total;
        s->step_time_s = t;
        s->loss = 2.0;
        s->global_batch_size = -1;
        s->peak_memory_bytes = s->tflops_per_gpu = s->consumed_samples = s->tokens_per_s = NAN;
        s->tokens_per_s_per_gpu = s->energy_j_per_gpu = s->power_w_per_gpu = NAN;
        s->gen = NP_GEN_NEMO2;
    }
    memset(scan, 0, sizeof *scan);
    scan->steps = ana_steps;
    scan->nsteps = n;
    scan->runs = 1;
    memset(run, 0, sizeof *run);
    strcpy(run->id.recipe, "llama3.1");
    strcpy(run->id.model_size, "8b");
    run->id.dtype = NP_DTYPE_BF16;
    run->id.gpus = 8;
    strcpy(run->id.gpu_type, "h100");
    run->id_source = "folder";
}

static void ana_go(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o)
{
    np_run_analyse(run, scan, o, &recipes, &ref);
}

static void ana_free(struct np_run *run)
{
    free(run->why);
    free(run->note);
    free(run->samples);
    run->why = run->note = NULL;
    run->samples = NULL;
}

/* analyse, then the status and why (none when why is NULL) */
static void ana_status_at(int line, struct np_run *run, const struct np_scan_result *scan,
                          const struct np_parse_opts *o, enum np_run_status st, const char *why)
{
    ana_go(run, scan, o);
    ck_assert_msg(run->status == st, "line %d: status %s, want %s (why %s)", line, np_run_status_name(run->status),
                  np_run_status_name(st), run->why ? run->why : "-");
    if (why)
        ck_assert_msg(run->why && strcmp(run->why, why) == 0, "line %d: why \"%s\", want \"%s\"", line,
                      run->why ? run->why : "(null)", why);
    else
        ck_assert_msg(!run->why, "line %d: why \"%s\", want none", line, run->why);
    ana_free(run);
}
#define ANA_STATUS(run, scan, o, st, why) ana_status_at(__LINE__, &(run), &(scan), &(o), st, why)

START_TEST(test_analyse_status_ladder)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    const char *nan_why = "NaN or infinite loss, grad norm or step time";
    /* the run as it should be: ok, complete, NVIDIA's window */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ck_assert_ptr_null(run.why);
    ck_assert_int_eq(run.complete, 1);
    ck_assert_int_eq(run.step, 49);
    ck_assert_int_eq(run.total, 49);
    ck_assert_double_eq(run.step_time_s, 10.0);
    ck_assert_int_eq(run.window.first, 11);
    ck_assert_int_eq(run.window.last, 44);
    ck_assert_uint_eq(run.window.count, 34);
    ck_assert_int_eq(run.id.gbs, 128);      /* the published row's: the log says none */
    ck_assert_int_eq(run.id.seq_len, 8192); /* the row's */
    ck_assert_str_eq(run.gpu_source, "option"); /* a GPU type named, not by a manifest */
    ck_assert_double_eq_tol(run.m.tokens_per_s, 8192.0 * 128 / 10.0, 1e-9);
    ana_free(&run);
    /* a contradiction between options and the folder: invalid, said as is */
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.conflict, "--gpus 16 contradicts the folder's 8");
    ANA_STATUS(run, scan, o, NP_RUN_INVALID, "--gpus 16 contradicts the folder's 8");
    /* a NaN in the window (11-44, both ends) is invalid; one before or after it is not, one on the last step is */
    static const struct {
        long at;
        enum np_run_status st;
    } nan_at[] = {{10, NP_RUN_OK}, {11, NP_RUN_INVALID}, {44, NP_RUN_INVALID}, {45, NP_RUN_OK}, {49, NP_RUN_INVALID}};
    for (size_t k = 0; k < sizeof nan_at / sizeof nan_at[0]; k++) {
        ana_init(&run, &scan, 50, 49, 10.0);
        ana_steps[nan_at[k].at].nan_seen = 1;
        ANA_STATUS(run, scan, o, nan_at[k].st, nan_at[k].st == NP_RUN_OK ? NULL : nan_why);
    }
    /* the last step time: infinite, 0 and negative are invalid; the least positive is a step (implausibly fast) */
    const double bad_t[] = {INFINITY, 0.0, -1.0};
    for (size_t k = 0; k < 3; k++) {
        ana_init(&run, &scan, 50, 49, 10.0);
        ana_steps[49].step_time_s = bad_t[k];
        ANA_STATUS(run, scan, o, NP_RUN_INVALID, nan_why);
    }
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].step_time_s = 1e-300;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_IMPLAUSIBLE);
    ana_free(&run);
    /* a step time of a year exactly is a (slow) step; a hair more is a corrupt log, on the last step or in the window */
    const double year = 365.0 * 86400;
    ana_init(&run, &scan, 50, 49, year);
    ANA_STATUS(run, scan, o, NP_RUN_OK, NULL);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].step_time_s = nextafter(year, INFINITY);
    ANA_STATUS(run, scan, o, NP_RUN_INVALID, "step time 3.1536e+07 s is out of range (more than a year): the log is corrupt");
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[20].step_time_s = 4e7;
    ANA_STATUS(run, scan, o, NP_RUN_INVALID, "step time 4e+07 s is out of range (more than a year): the log is corrupt");
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[5].step_time_s = 4e7; /* a warm-up step: outside the window */
    ANA_STATUS(run, scan, o, NP_RUN_OK, NULL);
    /* the last line without a step number ("iteration -1/49") */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].iteration = -1;
    ana_go(&run, &scan, &o);
    ck_assert(isnan(run.step_time_s));
    ck_assert_int_eq(run.status, NP_RUN_INVALID);
    ck_assert_str_eq(run.why, "the last step line has no valid iteration number: its step time is not used");
    ana_free(&run);
    /* unidentified, each reason */
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "nosuch");
    ANA_STATUS(run, scan, o, NP_RUN_UNIDENTIFIED, "unknown recipe \"nosuch\"");
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id.recipe[0] = '\0';
    ANA_STATUS(run, scan, o, NP_RUN_UNIDENTIFIED,
               "no manifest, no pretrain_<recipe>_<size>_<dtype>_<gpus> folder, no --recipe/--size options");
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id.dtype = NP_DTYPE_NONE; /* llama3.1 8b is published in bf16 and fp8: not guessed */
    ANA_STATUS(run, scan, o, NP_RUN_UNIDENTIFIED, "dtype unknown (--dtype)");
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id.gpus = 0;
    ANA_STATUS(run, scan, o, NP_RUN_UNIDENTIFIED, "GPU count unknown (--gpus)");
    /* a model published in one precision: that is its dtype (llama3 8b: fp8 only) */
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "llama3");
    run.id.dtype = NP_DTYPE_NONE;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.id.dtype, NP_DTYPE_FP8);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ana_free(&run);
    /* the synthetic workload: no GPU figures, so no step is implausibly fast */
    ana_init(&run, &scan, 50, 49, 1e-3);
    run.id.synthetic = 1;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_SYNTHETIC);
    ck_assert(isnan(run.m.mfu_percent));
    ck_assert_ptr_nonnull(strstr(run.note, "synthetic workload: CPU work standing in for the GPU job"));
    ana_free(&run);
}
END_TEST

/* The plausibility floor: GBS x FLOPs per sample over every GPU at its peak, computed here from the run's FLOPs
 * and the GPU's peak.  A step exactly at it is plausible, a hair under it is not; the window's fastest step counts
 * (not a warm-up step's); a GPU type unknown is judged at the fastest GPU known for the dtype. */
START_TEST(test_analyse_implausible_floor)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_go(&run, &scan, &o);
    double fps = run.flops_per_sample, peak = np_gpu_peak_tflops("h100", NP_DTYPE_BF16);
    ck_assert(fps > 0 && peak > 0);
    ck_assert_double_eq(run.peak_tflops, peak);
    ana_free(&run);
    double floor_s = 128 * fps / (8 * peak * 1e12);
    ana_init(&run, &scan, 50, 49, floor_s);
    ANA_STATUS(run, scan, o, NP_RUN_OK, NULL);
    double under = nextafter(floor_s, 0);
    ana_init(&run, &scan, 50, 49, under);
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_IMPLAUSIBLE);
    char want[320];
    snprintf(want, sizeof want, "step time %.4g s is below the %.4g s the model's FLOPs need on 8 H100 at %.0f "
             "TFLOP/s (MFU %.0f %%)", under, floor_s, peak, 100.0 * floor_s / under);
    ck_assert_str_eq(run.why, want);
    ana_free(&run);
    /* half the floor: MFU 200 % */
    ana_init(&run, &scan, 50, 49, floor_s / 2);
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_IMPLAUSIBLE);
    ck_assert_ptr_nonnull(strstr(run.why, "(MFU 200 %)"));
    ana_free(&run);
    /* the last step slow, one step of the window too fast: implausible; a warm-up step too fast: not */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[30].step_time_s = floor_s / 2;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_IMPLAUSIBLE);
    ck_assert_double_eq(run.window.min_s, floor_s / 2);
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[3].step_time_s = floor_s / 2;
    ANA_STATUS(run, scan, o, NP_RUN_OK, NULL);
    /* no GPU type (llama3 8b is published on three): judged at the fastest GPU known for fp8 */
    double best = 0;
    const char *bestg = NULL;
    for (const char *const *g = np_gpu_types(); *g; g++)
        if (np_gpu_peak_tflops(*g, NP_DTYPE_FP8) > best) {
            best = np_gpu_peak_tflops(*g, NP_DTYPE_FP8);
            bestg = *g;
        }
    ck_assert_ptr_nonnull(bestg);
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "llama3");
    run.id.dtype = NP_DTYPE_FP8;
    run.id.gpu_type[0] = '\0';
    ana_steps[49].global_batch_size = 128; /* no row without the GPU type: the log's GBS */
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ck_assert_ptr_null(run.gpu_source);
    ck_assert_ptr_nonnull(strstr(run.note, "GPU type unknown (no manifest, the folder name carries none, no --gpu"));
    fps = run.flops_per_sample;
    ana_free(&run);
    floor_s = 128 * fps / (8 * best * 1e12);
    ana_init(&run, &scan, 50, 49, floor_s / 4);
    strcpy(run.id.recipe, "llama3");
    run.id.dtype = NP_DTYPE_FP8;
    run.id.gpu_type[0] = '\0';
    ana_steps[49].global_batch_size = 128;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_IMPLAUSIBLE);
    char up[16];
    size_t i = 0;
    for (; bestg[i] && i + 1 < sizeof up; i++)
        up[i] = (char)toupper((unsigned char)bestg[i]);
    up[i] = '\0';
    snprintf(want, sizeof want, "on 8 %s (the fastest GPU known) at %.0f TFLOP/s (MFU 400 %%)", up, best);
    ck_assert_msg(strstr(run.why, want) != NULL, "%s", run.why);
    ana_free(&run);
    /* a recipe published for one GPU type only (llama3.1: H100): that is the run's GPU */
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id.gpu_type[0] = '\0';
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.id.gpu_type, "h100");
    ck_assert_str_eq(run.gpu_source, "recipe");
    ana_free(&run);
}
END_TEST

/* Complete or not (np_run_analyse_start): the step total from the log, else the manifest's max_steps, else
 * Lightning's "max_steps=N reached"; that message makes a run complete whatever the bar drew; a short bar without
 * it does not.  The untimed runs (no train_step_timing) and a last line without a time. */
START_TEST(test_analyse_complete_and_untimed)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    ana_init(&run, &scan, 49, 49, 10.0); /* steps 0-48 of 0-49: one short */
    ANA_STATUS(run, scan, o, NP_RUN_INCOMPLETE, "stopped at iteration 48 of 49");
    ana_init(&run, &scan, 50, -1, 10.0); /* no total in the lines: the manifest's max_steps 50 */
    run.id.max_steps = 50;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.total, 49);
    ck_assert_int_eq(run.complete, 1);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ana_free(&run);
    ana_init(&run, &scan, 50, -1, 10.0);
    run.id.max_steps = 51;
    ANA_STATUS(run, scan, o, NP_RUN_INCOMPLETE, "stopped at iteration 49 of 50");
    ana_init(&run, &scan, 1, -1, 10.0); /* max_steps 1: the one step 0 is the last */
    run.id.max_steps = 1;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.total, 0);
    ck_assert_int_eq(run.complete, 1);
    ck_assert_int_eq(run.status, NP_RUN_OK); /* iteration 0 is a step */
    ana_free(&run);
    ana_init(&run, &scan, 31, -1, 10.0); /* "`max_steps=31` reached" */
    scan.max_steps_reached = 31;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.total, 30);
    ck_assert_int_eq(run.complete, 1);
    ana_free(&run);
    ana_init(&run, &scan, 31, 49, 10.0); /* the bar at 30/49, but the trainer says it reached max_steps */
    scan.max_steps_reached = 50;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.total, 49);
    ck_assert_int_eq(run.complete, 1);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ana_free(&run);
    ana_init(&run, &scan, 31, -1, 10.0); /* a bar short of its end, no total, no stop message */
    ana_steps[30].bar_short = 1;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.complete, 0);
    ck_assert_int_eq(run.status, NP_RUN_INCOMPLETE);
    ck_assert_str_eq(run.why, "stopped at iteration 30 of -1");
    ana_free(&run);
    ana_init(&run, &scan, 31, -1, 10.0); /* no total, no bar: completeness unknown, not incomplete */
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.complete, -1);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ana_free(&run);
    /* untimed NeMo 2.0 and 1.0 lines: invalid, or incomplete saying so; Megatron-like lines without a time are not
     * "untimed" (no timing callback to name): no step time */
    ana_init(&run, &scan, 50, 49, NAN);
    ANA_STATUS(run, scan, o, NP_RUN_INVALID,
               "NeMo 2.0 step lines without train_step_timing (timing callback off): 50 steps, last step 49, no step time");
    ana_init(&run, &scan, 50, 49, NAN);
    for (int i = 0; i < 50; i++)
        ana_steps[i].gen = NP_GEN_NEMO1;
    ANA_STATUS(run, scan, o, NP_RUN_INVALID,
               "NeMo 1.0 progress bar without train_step_timing (timing callback off): 50 steps, last step 49, no step "
               "time");
    ana_init(&run, &scan, 31, 49, NAN);
    ANA_STATUS(run, scan, o, NP_RUN_INCOMPLETE,
               "stopped at iteration 30 of 49; its step lines carry no train_step_timing (timing callback off): no step "
               "time");
    ana_init(&run, &scan, 50, 49, NAN);
    for (int i = 0; i < 50; i++)
        ana_steps[i].gen = NP_GEN_DELTA;
    ANA_STATUS(run, scan, o, NP_RUN_INVALID, "no step time in the last step line");
    ana_init(&run, &scan, 50, 49, 10.0); /* timed steps, the last one without: not untimed */
    ana_steps[49].step_time_s = NAN;
    ANA_STATUS(run, scan, o, NP_RUN_INVALID, "no step time in the last step line");
    ana_init(&run, &scan, 50, 49, NAN); /* one timed step before the window: the lines are timed */
    ana_steps[2].step_time_s = 10.0;
    ANA_STATUS(run, scan, o, NP_RUN_INVALID, "no step time in the last step line");
    /* no time but the throughput: the step time is sequence x GBS over tokens/s */
    ana_init(&run, &scan, 50, 49, NAN);
    ana_steps[49].tokens_per_s = 8192.0 * 128 / 12.5;
    ana_go(&run, &scan, &o);
    ck_assert_double_eq_tol(run.step_time_s, 12.5, 1e-12);
    ck_assert_int_eq(run.status, NP_RUN_OK);
    ana_free(&run);
    /* the newest known peak memory and loss (a step without them says nothing) */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].loss = NAN;
    ana_steps[48].loss = 1.5;
    ana_steps[48].peak_memory_bytes = NAN;
    ana_steps[47].peak_memory_bytes = 7e10;
    ana_steps[10].peak_memory_bytes = 5e10;
    ana_go(&run, &scan, &o);
    ck_assert_double_eq(run.loss, 1.5);
    ck_assert_double_eq(run.peak_memory_bytes, 7e10);
    ana_free(&run);
    /* the log's tokens/s stands in only when none is computed (AutoModel without sequence or GBS) */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].tokens_per_s = 1234.0;
    ana_go(&run, &scan, &o);
    ck_assert_double_eq_tol(run.m.tokens_per_s, 8192.0 * 128 / 10.0, 1e-9);
    ana_free(&run);
    /* AMD Primus' two times: the first is used, and the note says so */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].two_times = 1;
    ana_go(&run, &scan, &o);
    ck_assert_ptr_nonnull(run.note);
    ck_assert_ptr_nonnull(strstr(run.note, "step time: the first of the two times of \"elapsed time per iteration"));
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_go(&run, &scan, &o);
    ck_assert(run.note == NULL || strstr(run.note, "two times") == NULL);
    ana_free(&run);
}
END_TEST

/* The global batch: the newest step that logs one, unless absurd (10^8 or more: the row's); the manifest against
 * the log (GBS, max_steps): the log's values are used and the disagreement is a note; a manifest marked bad says
 * nothing. */
START_TEST(test_analyse_gbs_and_manifest_notes)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    static const struct {
        long newest, older;
        int want;
    } g[] = {{-1, 64, 64}, {0, 64, 64}, {256, 64, 256}, {99999999, 64, 99999999}, {100000000, 64, 128}};
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++) {
        ana_init(&run, &scan, 50, 49, 10.0);
        ana_steps[48].global_batch_size = g[k].newest;
        ana_steps[10].global_batch_size = g[k].older;
        ana_go(&run, &scan, &o);
        ck_assert_msg(run.id.gbs == g[k].want, "logged %ld: GBS %d, want %d", g[k].newest, run.id.gbs, g[k].want);
        ana_free(&run);
    }
    /* the manifest's GBS and max_steps against the log's */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].global_batch_size = 128;
    run.launch.present = 1;
    run.launch.gbs = 64;
    run.launch.max_steps = 100;
    ana_go(&run, &scan, &o);
    ck_assert_ptr_nonnull(run.note);
    ck_assert_str_eq(run.note, "the manifest's GBS 64 contradicts the log's 128 (the log's is used); the manifest's "
                               "max_steps 100 contradicts the log's 50 steps (the log's are used)");
    ck_assert_int_eq(run.id.gbs, 128);
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].global_batch_size = 128;
    run.launch.present = 1;
    run.launch.gbs = 128;
    run.launch.max_steps = 50;
    ana_go(&run, &scan, &o);
    ck_assert_ptr_null(run.note);
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].global_batch_size = 128;
    run.launch.present = 1;
    run.launch.gbs = 64;
    run.launch.max_steps = 100;
    strcpy(run.launch.bad, "config.gbs is a string");
    ana_go(&run, &scan, &o);
    ck_assert_ptr_null(run.note);
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0); /* no GBS in the log: nothing to contradict */
    run.launch.present = 1;
    run.launch.gbs = 64;
    ana_go(&run, &scan, &o);
    ck_assert_ptr_null(run.note);
    ana_free(&run);
}
END_TEST

/* The window rules np_run_analyse reports: NVIDIA's 11-44 of 50 (whole or in part, with its note), the last 10
 * steps when none of 11-44 was read (and why), --window, AutoModel's summary window. */
START_TEST(test_analyse_window_rules)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    /* steps 30-49 of 49 read: 30-44 of NVIDIA's window, said */
    ana_init(&run, &scan, 20, 49, 10.0);
    for (int i = 0; i < 20; i++)
        ana_steps[i].iteration = 30 + i;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.window.first, 30);
    ck_assert_int_eq(run.window.last, 44);
    ck_assert_uint_eq(run.window.count, 15);
    ck_assert_str_eq(run.note, "steady-state window holds 15 of NVIDIA's 34 steps (iterations 30-44; the log has no "
                               "others)");
    ana_free(&run);
    ana_init(&run, &scan, 20, 49, 10.0);
    for (int i = 0; i < 20; i++)
        ana_steps[i].iteration = 30 + i;
    scan.truncated_start = 1;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.note, "steady-state window holds 15 of NVIDIA's 34 steps (iterations 30-44; the others are "
                               "before the part of the log read: --all-steps reads them)");
    ana_free(&run);
    /* the whole window: no note; one NaN time in it: 33 steps, and the note */
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[11].step_time_s = NAN;
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.window.first, 12);
    ck_assert_uint_eq(run.window.count, 33);
    ck_assert_ptr_nonnull(strstr(run.note, "holds 33 of NVIDIA's 34 steps (iterations 12-44;"));
    ana_free(&run);
    /* steps 45-49 only: the last 10 steps (5 here), and why */
    ana_init(&run, &scan, 5, 49, 10.0);
    for (int i = 0; i < 5; i++)
        ana_steps[i].iteration = 45 + i;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.window.rule, "last 10 steps (the log has none of iterations 11-44)");
    ck_assert_int_eq(run.window.first, 45);
    ck_assert_int_eq(run.window.last, 49);
    ck_assert_uint_eq(run.window.count, 5);
    ck_assert_uint_eq(run.window.requested, 10);
    ana_free(&run);
    ana_init(&run, &scan, 5, 49, 10.0);
    for (int i = 0; i < 5; i++)
        ana_steps[i].iteration = 45 + i;
    scan.truncated_start = 1;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.window.rule, "last 10 steps (iterations 11-44 are before the part of the log read: "
                                      "--all-steps reads them)");
    ana_free(&run);
    /* not a 50-step run: the last 10 steps, a step line without its number left out */
    ana_init(&run, &scan, 100, 99, 10.0);
    ana_steps[95].iteration = -1;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.window.rule, "last 10 steps");
    ck_assert_int_eq(run.window.first, 90);
    ck_assert_int_eq(run.window.last, 99);
    ck_assert_uint_eq(run.window.count, 9);
    ana_free(&run);
    /* --window 5 (strict): the last 5 even of a 50-step run */
    ana_init(&run, &scan, 50, 49, 10.0);
    o.window = 5;
    o.window_strict = 1;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.window.rule, "--window");
    ck_assert_int_eq(run.window.first, 45);
    ck_assert_uint_eq(run.window.count, 5);
    ck_assert_uint_eq(run.window.requested, 5);
    ana_free(&run);
    np_parse_opts_init(&o);
    /* AutoModel's summary: every iteration from its warm-up on */
    ana_init(&run, &scan, 50, 49, 10.0);
    run.bench_summary = 1;
    run.bench_warmup = 5;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.window.rule, "iterations after the warm-up (AutoModel's summary)");
    ck_assert_int_eq(run.window.first, 5);
    ck_assert_int_eq(run.window.last, 49);
    ck_assert_uint_eq(run.window.count, 45);
    ana_free(&run);
    /* an even count's median: the mean of the middle two; the sample standard deviation (n - 1) */
    double v[4] = {10, 1, 3, 2};
    struct np_window_stats w;
    np_window_stats_of(&w, v, 4);
    ck_assert_double_eq(w.median_s, 2.5);
    ck_assert_double_eq(w.mean_s, 4.0);
    ck_assert_double_eq_tol(w.stdev_s, sqrt((9.0 + 4 + 1 + 36) / 3), 1e-12);
    ck_assert_double_eq(w.min_s, 1.0);
    ck_assert_double_eq(w.max_s, 10.0);
    /* 65 and 64 times (over 64 another sort), in a scrambled order: 1..n, median (n + 1) / 2, min 1, max n */
    for (size_t n = 64; n <= 65; n++) {
        double big[65];
        for (size_t i = 0; i < n; i++)
            big[i] = (double)((i * 37) % n + 1);
        np_window_stats_of(&w, big, n);
        ck_assert_double_eq(w.min_s, 1);
        ck_assert_double_eq(w.max_s, (double)n);
        ck_assert_double_eq(w.median_s, (n + 1) / 2.0);
        ck_assert_double_eq(w.mean_s, (n + 1) / 2.0);
        for (size_t i = 1; i < n; i++)
            ck_assert(big[i - 1] < big[i]); /* sorted in place, ascending */
    }
    double one[1] = {7};
    np_window_stats_of(&w, one, 1);
    ck_assert(w.median_s == 7 && w.stdev_s == 0 && w.min_s == 7 && w.max_s == 7);
}
END_TEST

/* Why a run is not compared, each reason in its order; a compared run's ratio is its steady tokens/s over the
 * published row's. */
START_TEST(test_analyse_reference_reasons)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.reference = 1;
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id_source = "manifest";
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.gpu_source, "manifest");
    ck_assert_ptr_nonnull(run.ref);
    ck_assert(run.ref->tokens_per_s > 0);
    ck_assert_double_eq_tol(run.ref_ratio, 8192.0 * 128 / 10.0 / run.ref->tokens_per_s, 1e-12);
    ck_assert_int_ne(run.verdict, NP_VERDICT_NOT_COMPARED);
    ana_free(&run);
    ana_init(&run, &scan, 31, 49, 10.0);
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.verdict, NP_VERDICT_NOT_COMPARED);
    ck_assert_str_eq(run.ref_why, "run is incomplete: not compared");
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id.gpus = 9;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.ref_why, "nothing published for llama3.1 8b bf16 on 9 h100");
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "llama3");
    run.id.gpu_type[0] = '\0';
    run.id.dtype = NP_DTYPE_FP8;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.ref_why, "GPU type unknown (no manifest, no --gpu): not compared");
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    run.id.kind = NP_KIND_PROFILE;
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.ref_why, np_run_kind_why(NP_KIND_PROFILE));
    ck_assert_int_eq(run.verdict, NP_VERDICT_NOT_COMPARED);
    ana_free(&run);
    ana_init(&run, &scan, 0, 49, 10.0); /* no steps: not compared, with the reason the status gives */
    ana_go(&run, &scan, &o);
    ck_assert_int_eq(run.status, NP_RUN_NO_STEPS);
    ck_assert_str_eq(run.why, "no training-step line in the logs");
    ck_assert_int_eq(run.verdict, NP_VERDICT_NOT_COMPARED);
    ck_assert_str_eq(run.ref_why, "nothing published for llama3.1 8b bf16 on 8 h100"); /* no table asked */
    ana_free(&run);

    /* the "nothing published" line names what is known: a precision without a model size once, neither as "?" */
    memset(&run, 0, sizeof run);
    run.id.gpus = 4;
    strcpy(run.id.gpu_type, "gb200");
    strcpy(run.id.recipe, "qwen3");
    strcpy(run.id.precision, "fp8_mx");
    np_run_verdict(&run, &o, NULL);
    ck_assert_str_eq(run.ref_why, "nothing published for qwen3 fp8_mx on 4 gb200");
    run.id.precision[0] = '\0';
    np_run_verdict(&run, &o, NULL);
    ck_assert_str_eq(run.ref_why, "nothing published for qwen3 ? ? on 4 gb200");
    run.id.recipe[0] = '\0';
    run.id.dtype = NP_DTYPE_FP8;
    np_run_verdict(&run, &o, NULL);
    ck_assert_str_eq(run.ref_why, "nothing published for ? ? fp8 on 4 gb200");
    run.id.synthetic = 1;
    np_run_verdict(&run, &o, "not this reason");
    ck_assert_str_eq(run.ref_why, "synthetic workload (CPU work standing in for a GPU job): nothing published to compare");
    run.id.synthetic = 0;
    np_run_verdict(&run, &o, "the caller's reason");
    ck_assert_str_eq(run.ref_why, "the caller's reason");
    ck_assert_int_eq(run.verdict, NP_VERDICT_NOT_COMPARED);
    ck_assert(isnan(run.ref_ratio));
    /* --verdict last: the last step's throughput, not the window's; each says when it has none */
    struct np_ref_row row;
    memset(&row, 0, sizeof row);
    row.tokens_per_s = 100;
    row.tokens_per_s_per_gpu = row.model_tflops_per_gpu = NAN;
    memset(&run, 0, sizeof run);
    run.id.gpus = 8;
    run.ref = &row;
    run.status = NP_RUN_OK;
    run.steady.tokens_per_s = 100;
    run.m.tokens_per_s = 50;
    np_run_verdict(&run, &o, NULL);
    ck_assert_int_eq(run.verdict, NP_VERDICT_PASS);
    ck_assert(run.ref_ratio == 1.0);
    o.verdict_last = 1;
    np_run_verdict(&run, &o, NULL);
    ck_assert_int_eq(run.verdict, NP_VERDICT_FAIL);
    ck_assert(run.ref_ratio == 0.5);
    run.m.tokens_per_s = NAN;
    np_run_verdict(&run, &o, NULL);
    ck_assert_str_eq(run.ref_why, "no throughput for the last step");
    o.verdict_last = 0;
    run.steady.tokens_per_s = NAN;
    np_run_verdict(&run, &o, NULL);
    ck_assert_str_eq(run.ref_why, "no steady-state throughput (empty window)");
    ck_assert_int_eq(run.verdict, NP_VERDICT_NOT_COMPARED);
    /* a run that is not good (failed, synthetic is good) */
    run.steady.tokens_per_s = 100;
    run.status = NP_RUN_FAILED;
    np_run_verdict(&run, &o, NULL);
    ck_assert_str_eq(run.ref_why, "run is failed: not compared");
    run.status = NP_RUN_SYNTHETIC;
    np_run_verdict(&run, &o, NULL);
    ck_assert_int_eq(run.verdict, NP_VERDICT_PASS);
}
END_TEST

/* A fine-tuning run (llama3 8b SFT and LoRA, FP8 on 8 H100, packs of 4096, GBS 32 from the row): its FLOPs per
 * pack from the pack statistics of share/nemoperf/packs/squad.tsv (no packed .npy at hand, or one that cannot be
 * read: said), checked against seed 000's published columns: TFLOP/s/GPU = FLOPs per pack / 4096 x tokens/s/GPU,
 * SFT 733 at 16222 tokens/s/GPU, LoRA (2/3 of the forward-backward) 669 at 22141, each within 1 (published whole).
 * A pack length the table does not have: no FLOPs, said. */
START_TEST(test_analyse_finetune_flops)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    static const struct {
        const char *task;
        double tpg, tflops;
    } ft[] = {{"sft", 16222, 733}, {"lora", 22141, 669}};
    for (size_t k = 0; k < 2; k++) {
        ana_init(&run, &scan, 50, 49, 10.0);
        strcpy(run.id.recipe, "llama3");
        run.id.dtype = NP_DTYPE_FP8;
        strcpy(run.id.task, ft[k].task);
        ana_go(&run, &scan, &o);
        ck_assert_ptr_nonnull(run.row);
        ck_assert_int_eq(run.id.seq_len, 4096);
        ck_assert_int_eq(run.id.gbs, 32);
        ck_assert_str_eq(run.pack_source, "table");
        double tflops = run.flops_per_sample / 4096 * ft[k].tpg / 1e12;
        ck_assert_msg(fabs(tflops - ft[k].tflops) < 1.0, "%s: %.2f TFLOP/s/GPU, published %.0f", ft[k].task, tflops,
                      ft[k].tflops);
        ck_assert_ptr_null(run.note);
        ana_free(&run);
    }
    /* the manifest names a packed file that is not there: the table's statistics, said */
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "llama3");
    run.id.dtype = NP_DTYPE_FP8;
    strcpy(run.id.task, "sft");
    snprintf(run.id.packed_train, sizeof run.id.packed_train, "%s/none/packed_4096.npy", root);
    ana_go(&run, &scan, &o);
    ck_assert_str_eq(run.pack_source, "table");
    ck_assert(run.flops_per_sample > 0);
    ck_assert_ptr_nonnull(run.note);
    char want[700];
    snprintf(want, sizeof want, "packed data %s not read (", run.id.packed_train);
    ck_assert_msg(strncmp(run.note, want, strlen(want)) == 0, "%s", run.note);
    ck_assert_ptr_nonnull(strstr(run.note, "): pack statistics from the table"));
    ana_free(&run);
    /* packs of 8192: not in the table, no FLOPs */
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "llama3");
    run.id.dtype = NP_DTYPE_FP8;
    strcpy(run.id.task, "sft");
    run.id.seq_len = 8192;
    ana_go(&run, &scan, &o);
    ck_assert(isnan(run.flops_per_sample));
    ck_assert_ptr_null(run.pack_source);
    ck_assert_str_eq(run.note, "no pack statistics for packs of 8192 tokens (neither the packed .npy nor "
                               "share/nemoperf/packs/squad.tsv): no fine-tuning FLOPs, no MFU");
    ana_free(&run);
    /* a task no row knows is pretraining's: llama3 8b's pretraining FLOPs, no pack statistics */
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "llama3");
    run.id.dtype = NP_DTYPE_FP8;
    strcpy(run.id.task, "nosuch");
    ana_go(&run, &scan, &o);
    ck_assert_ptr_null(run.pack_source);
    ck_assert_int_eq(run.id.gbs, 128);
    ck_assert(run.flops_per_sample > 0);
    ana_free(&run);
}
END_TEST

/* Megatron-Bridge's logged TFLOP/s/GPU of a Wan 2.1 run (DFM) is its LLM formula: dropped, said; a run of another
 * model keeps its logged figure. */
START_TEST(test_analyse_wan_logged_tflops)
{
    struct np_run run;
    struct np_scan_result scan;
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    ana_init(&run, &scan, 50, 49, 10.0);
    strcpy(run.id.recipe, "wan2.1");
    strcpy(run.id.model_size, "14b");
    ana_steps[49].tflops_per_gpu = 123.4;
    ana_go(&run, &scan, &o);
    ck_assert(isnan(run.logged_tflops_per_gpu));
    ck_assert_ptr_nonnull(run.note);
    ck_assert_ptr_nonnull(strstr(run.note, "Megatron-Bridge's logged TFLOP/s/GPU (123.4) is its LLM formula, wrong "
                                           "for Wan at the pinned MB: ignored (docs/dfm.md)"));
    ana_free(&run);
    ana_init(&run, &scan, 50, 49, 10.0);
    ana_steps[49].tflops_per_gpu = 123.4;
    ana_steps[20].tflops_per_gpu = 99.0;
    ana_go(&run, &scan, &o);
    ck_assert_double_eq(run.logged_tflops_per_gpu, 123.4); /* the newest */
    ana_free(&run);
}
END_TEST

/* The status and why of the one run of a folder `name` under root (a 50-step log at 10 s a step, GBS 128), with
 * nemoperf.json's config object `config` beside the log (NULL: none), parsed with o. */
static enum np_run_status folder_status(const char *name, const char *config, const struct np_parse_opts *o, char *why,
                                        size_t size)
{
    static int seq;
    char dir[1200], p[1400];
    snprintf(dir, sizeof dir, "%s/c%d/%s", root, ++seq, name);
    mkdirs(dir);
    if (config) {
        snprintf(p, sizeof p, "%s/nemoperf.json", dir);
        FILE *f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "{\"nemoperf_manifest\":1,\"config\":%s}", config);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/log-%s_7_0.out", dir, name);
    write_log(p, 50, 49, 128, "10.0", "11.96");
    char *paths[] = {dir};
    struct np_parse_result res;
    ck_assert_int_eq(np_parse_paths(paths, 1, o, &recipes, &ref, &res), NP_OK);
    ck_assert_uint_eq(res.nruns, 1);
    enum np_run_status st = res.runs[0].status;
    snprintf(why, size, "%s", res.runs[0].why ? res.runs[0].why : "");
    np_parse_result_free(&res);
    return st;
}

/* An option against the folder name or the manifest, and the manifest against the folder name: invalid, each said
 * in its words; an option that agrees (a size in capitals, the same GPU type) or that neither names is no conflict. */
START_TEST(test_identity_conflicts)
{
    const char *folder = "pretrain_llama3.1_8b_bf16_8";
    const char *cfg = "{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\",\"gpu_type\":\"h100\","
                      "\"gpus\":8,\"seq_len\":8192,\"gbs\":128,\"task\":\"pretrain\"}";
    char why[400];
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    ck_assert_int_eq(folder_status(folder, NULL, &o, why, sizeof why), NP_RUN_OK);
    ck_assert_int_eq(folder_status("job", cfg, &o, why, sizeof why), NP_RUN_OK);
    static const struct {
        int manifest;
        const char *recipe, *size;
        enum np_dtype dtype;
        int gpus, seq, gbs;
        const char *gpu, *task, *want;
    } c[] = {
        {0, "llama3", "", 0, 0, 0, 0, "", "", "--recipe llama3 contradicts the folder name (llama3.1)"},
        {0, "", "70b", 0, 0, 0, 0, "", "", "--size 70b contradicts the folder name (8b)"},
        {0, "", "8B", 0, 0, 0, 0, "", "", NULL},
        {0, "", "", NP_DTYPE_FP8, 0, 0, 0, "", "", "--dtype fp8 contradicts the folder name (bf16)"},
        {0, "", "", 0, 16, 0, 0, "", "", "--gpus 16 contradicts the folder name (8 GPUs)"},
        {0, "", "", 0, 0, 4096, 256, "b200", "", NULL}, /* the folder name says none of these */
        {0, "", "", 0, 0, 0, 0, "", "sft", "--task sft contradicts the folder name (pretrain)"},
        {1, "llama3", "", 0, 0, 0, 0, "", "", "--recipe llama3 contradicts the manifest (llama3.1)"},
        {1, "", "", 0, 0, 4096, 0, "", "", "--seq-len 4096 contradicts the manifest (8192)"},
        {1, "", "", 0, 0, 0, 256, "", "", "--gbs 256 contradicts the manifest (128)"},
        {1, "", "", 0, 0, 0, 0, "b200", "", "--gpu b200 contradicts the manifest (h100)"},
        {1, "", "", 0, 0, 0, 0, "H100", "", NULL},
        {1, "", "", 0, 0, 0, 0, "", "sft", "--task sft contradicts the manifest (pretrain)"},
        {1, "", "", 0, 0, 8192, 128, "h100", "pretrain", NULL},
    };
    /* --system against the manifest's, in any case */
    const char *cfg_sys = "{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\",\"gpus\":8,"
                          "\"system\":\"DGX-H100\"}";
    np_parse_opts_init(&o);
    strcpy(o.given.system, "DGX-B200");
    ck_assert_int_eq(folder_status("job", cfg_sys, &o, why, sizeof why), NP_RUN_INVALID);
    ck_assert_str_eq(why, "--system DGX-B200 contradicts the manifest (DGX-H100)");
    strcpy(o.given.system, "dgx-h100");
    folder_status("job", cfg_sys, &o, why, sizeof why);
    ck_assert_msg(strstr(why, "contradicts") == NULL, "%s", why);
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        np_parse_opts_init(&o);
        strcpy(o.given.recipe, c[k].recipe);
        strcpy(o.given.model_size, c[k].size);
        o.given.dtype = c[k].dtype;
        o.given.gpus = c[k].gpus;
        o.given.seq_len = c[k].seq;
        o.given.gbs = c[k].gbs;
        strcpy(o.given.gpu_type, c[k].gpu);
        strcpy(o.given.task, c[k].task);
        enum np_run_status st = folder_status(c[k].manifest ? "job" : folder, c[k].manifest ? cfg : NULL, &o, why,
                                              sizeof why);
        if (c[k].want) {
            ck_assert_msg(st == NP_RUN_INVALID, "case %zu: %s (%s)", k, np_run_status_name(st), why);
            ck_assert_msg(strcmp(why, c[k].want) == 0, "case %zu: \"%s\"", k, why);
        } else {
            ck_assert_msg(strstr(why, "contradicts") == NULL, "case %zu: %s", k, why);
        }
    }
    /* the manifest against the folder name */
    static const struct {
        const char *cfg, *want;
    } m[] = {
        {"{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\",\"gpus\":16}",
         "nemoperf.json says 16 GPUs, the folder name 8"},
        {"{\"recipe\":\"llama3\",\"model_size\":\"8b\",\"dtype\":\"bf16\",\"gpus\":8}",
         "nemoperf.json says recipe llama3, the folder name llama3.1"},
        {"{\"recipe\":\"llama3.1\",\"model_size\":\"70b\",\"dtype\":\"bf16\",\"gpus\":8}",
         "nemoperf.json says model size 70b, the folder name 8b"},
        {"{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"fp8\",\"gpus\":8}",
         "nemoperf.json says fp8, the folder name bf16"},
        {"{\"recipe\":\"llama3.1\",\"model_size\":\"8B\",\"dtype\":\"bf16\",\"gpus\":8}", NULL},
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        np_parse_opts_init(&o);
        enum np_run_status st = folder_status(folder, m[k].cfg, &o, why, sizeof why);
        if (m[k].want) {
            ck_assert_msg(st == NP_RUN_INVALID, "manifest %zu: %s (%s)", k, np_run_status_name(st), why);
            ck_assert_msg(strcmp(why, m[k].want) == 0, "manifest %zu: \"%s\"", k, why);
        } else {
            ck_assert_msg(strstr(why, "nemoperf.json says") == NULL, "manifest %zu: %s", k, why);
        }
    }
}
END_TEST

/* Several jobs in one run folder: the newest job by number (100 after 99, not as text), and within a job the newest
 * restart by number (10 after 3); an attempt without steps gives way to the next newest that has them. */
START_TEST(test_newest_job_and_restart)
{
    char *dir = run_dir("pretrain_llama3.1_8b_bf16_8", 1744407100, "");
    char p[1200];
    static const struct {
        const char *name, *step;
    } logs[] = {{"99_3", "10.5"}, {"99_10", "10.25"}, {"100_0", "10.0"}};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_bf16_8_%s.out", dir, logs[i].name);
        write_log(p, 50, 49, 128, logs[i].step, "11.96");
    }
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    struct np_parse_result res;
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 1);
    ck_assert_msg(strstr(res.runs[0].path, "_100_0.out") != NULL, "%s", res.runs[0].path);
    ck_assert_double_eq(res.runs[0].step_time_s, 10.0);
    ck_assert_uint_eq(res.runs[0].attempts, 3);
    ck_assert_str_eq(res.runs[0].job_id, "100");
    np_parse_result_free(&res);
    /* job 100's log has no step: job 99's newest restart, 10 */
    snprintf(p, sizeof p, "%s/log-pretrain_llama3.1_8b_bf16_8_100_0.out", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[NeMo I] starting\n", f);
    fclose(f);
    parse(&o, &res);
    ck_assert_uint_eq(res.nruns, 1);
    ck_assert_msg(strstr(res.runs[0].path, "_99_10.out") != NULL, "%s", res.runs[0].path);
    ck_assert_double_eq(res.runs[0].step_time_s, 10.25);
    ck_assert_str_eq(res.runs[0].job_id, "99");
    np_parse_result_free(&res);
}
END_TEST

/* np_manifest_read on manifests written here: every field of a launch's manifest read back; each kind of wrong
 * field named in its words (its path, what it is, what it should be), then nothing of the manifest used; the counts'
 * bounds (1 to 10^8 - 1); the format; a duplicate key; the run kinds, the workloads, Megatron-Bridge's object. */
static int man_read(const char *json, struct np_identity *id, struct np_launch_info *li)
{
    char p[200];
    snprintf(p, sizeof p, "%s/m.json", root);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(json, f);
    fclose(f);
    memset(id, 0, sizeof *id);
    return np_manifest_read(p, id, li);
}

#define MAN_CFG "\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\",\"gpus\":8"

START_TEST(test_manifest_read_fields)
{
    struct np_identity id;
    struct np_launch_info li;
    ck_assert_int_eq(man_read("{\"nemoperf_manifest\":1,\"config\":{\"recipe\":\"llama3.1\",\"model_size\":\"8b\","
                              "\"dtype\":\"bf16\",\"gpu_type\":\"H100\",\"gpus\":8,\"seq_len\":8192,\"gbs\":128,"
                              "\"max_steps\":50,\"task\":\"pretrain\",\"system\":\"DGX-H100\"},\"submitted\":true,"
                              "\"job_id\":123,\"submit_time\":\"2026-11-29T08:00:00Z\",\"state\":\"submitted\"}",
                              &id, &li), 1);
    ck_assert_str_eq(id.recipe, "llama3.1");
    ck_assert_str_eq(id.model_size, "8b");
    ck_assert_int_eq(id.dtype, NP_DTYPE_BF16);
    ck_assert_str_eq(id.gpu_type, "h100");
    ck_assert_str_eq(id.system, "DGX-H100");
    ck_assert_int_eq(id.gpus, 8);
    ck_assert_int_eq(id.seq_len, 8192);
    ck_assert_int_eq(id.gbs, 128);
    ck_assert_int_eq(id.max_steps, 50);
    ck_assert_int_eq(id.kind, NP_KIND_BENCHMARK);
    ck_assert_int_eq(id.synthetic, 0);
    ck_assert_int_eq(li.present, 1);
    ck_assert_int_eq(li.submitted, 1);
    ck_assert_str_eq(li.job_id, "123");
    ck_assert_str_eq(li.submit_time, "2026-11-29T08:00:00Z");
    ck_assert_int_eq(li.gbs, 128);
    ck_assert_int_eq(li.max_steps, 50);
    ck_assert_str_eq(li.bad, "");
    /* a job id as text; "state": "submitted" alone is submitted, "submitting" is not; the scheduler's error kept */
    ck_assert_int_eq(man_read("{\"config\":{" MAN_CFG "},\"job_id\":\"456\",\"state\":\"submitted\"}", &id, &li), 1);
    ck_assert_str_eq(li.job_id, "456");
    ck_assert_int_eq(li.submitted, 1);
    ck_assert_int_eq(man_read("{\"config\":{" MAN_CFG "},\"state\":\"submitting\",\"error\":\"timed out\"}", &id, &li), 1);
    ck_assert_int_eq(li.submitted, 0);
    ck_assert_str_eq(li.state, "submitting");
    ck_assert_str_eq(li.error, "timed out");
    /* the fields without "config" (the oldest format): the root's */
    ck_assert_int_eq(man_read("{" MAN_CFG "}", &id, &li), 1);
    ck_assert_int_eq(id.gpus, 8);
    /* a count: 1 to 99999999; null is absent */
    ck_assert_int_eq(man_read("{\"config\":{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\","
                              "\"gpus\":99999999}}", &id, &li), 1);
    ck_assert_int_eq(id.gpus, 99999999);
    ck_assert_int_eq(man_read("{\"config\":{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\","
                              "\"gpus\":1}}", &id, &li), 1);
    ck_assert_int_eq(id.gpus, 1);
    ck_assert_int_eq(man_read("{\"config\":{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"bf16\","
                              "\"gpus\":null}}", &id, &li), 0); /* no GPU count: not an identity, not bad */
    ck_assert_str_eq(li.bad, "");
    ck_assert_int_eq(li.present, 1);
    static const struct {
        const char *json, *bad;
    } bad[] = {
        {"{\"config\":{" MAN_CFG ",\"gbs\":100000000}}", "field \"config.gbs\": implausibly large, not a positive count"},
        {"{\"config\":{" MAN_CFG ",\"gbs\":0}}", "field \"config.gbs\": zero or negative, not a positive count"},
        {"{\"config\":{" MAN_CFG ",\"seq_len\":-5}}", "field \"config.seq_len\": zero or negative, not a positive count"},
        {"{\"config\":{" MAN_CFG ",\"max_steps\":\"50\"}}", "field \"config.max_steps\": a string, not a positive integer"},
        {"{\"config\":{" MAN_CFG ",\"gbs\":128.0}}", "field \"config.gbs\": a real number, not a positive integer"},
        {"{\"config\":{" MAN_CFG ",\"task\":5}}", "field \"config.task\": an integer, not a string"},
        {"{\"config\":{" MAN_CFG ",\"gpu_type\":[\"h100\"]}}", "field \"config.gpu_type\": an array, not a string"},
        {"{\"config\":{" MAN_CFG ",\"system\":true}}", "field \"config.system\": a boolean, not a string"},
        {"{\"config\":{" MAN_CFG ",\"experiment\":{}}}", "field \"config.experiment\": an object, not a string"},
        {"{\"config\":{" MAN_CFG ",\"profile\":\"yes\"}}", "field \"config.profile\": a string, not true or false"},
        {"{\"config\":{" MAN_CFG ",\"finetune\":3}}", "field \"config.finetune\": an integer, not an object"},
        {"{\"config\":{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"dtype\":\"fp9\",\"gpus\":8}}",
         "field \"config.dtype\": not a data type nemoperf knows"},
        {"{\"config\":{" MAN_CFG "},\"submitted\":1}", "field \"submitted\": an integer, not true or false"},
        {"{\"config\":[1]}", "field \"config\": an array, not an object"},
        {"{\"config\":{" MAN_CFG "},\"mbridge\":\"x\"}", "field \"mbridge\": a string, not an object"},
        {"{\"config\":{" MAN_CFG "},\"nccl_tests\":[]}", "field \"nccl_tests\": an array, not an object"},
        {"{\"config\":{" MAN_CFG "},\"workload\":7}", "field \"workload\": an integer, not a string"},
        {"{\"mbridge\":{\"recipe\":\"deepseek_v3\",\"dtype\":\"fp9\",\"gpu_type\":\"gb300\",\"gpus\":256}}",
         "field \"mbridge.dtype\": not a Megatron-Bridge compute dtype"},
        {"{\"nemoperf_manifest\":2,\"config\":{" MAN_CFG "}}",
         "field \"nemoperf_manifest\": format 2, not one this nemoperf reads (1)"},
        {"{\"nemoperf_manifest\":\"1\",\"config\":{" MAN_CFG "}}",
         "field \"nemoperf_manifest\": format \"1\", not one this nemoperf reads (1)"},
        /* the first wrong field is the one named */
        {"{\"config\":{" MAN_CFG ",\"gbs\":0,\"seq_len\":\"x\"}}",
         "field \"config.seq_len\": a string, not a positive integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = man_read(bad[i].json, &id, &li);
        ck_assert_msg(r == 0, "case %zu: read as an identity", i);
        ck_assert_msg(strcmp(li.bad, bad[i].bad) == 0, "case %zu: \"%s\"", i, li.bad);
        ck_assert_int_eq(li.present, 1);
    }
    /* a bad manifest: nothing of it is used, not its job id either */
    ck_assert_int_eq(man_read("{\"config\":{" MAN_CFG ",\"gbs\":0},\"job_id\":99,\"submitted\":true}", &id, &li), 0);
    ck_assert_str_eq(li.job_id, "");
    ck_assert_int_eq(li.submitted, 0);
    ck_assert_int_eq(li.gbs, 0);
    /* a repeated key: named with its line */
    ck_assert_int_eq(man_read("{\"config\":{" MAN_CFG "},\n\"job_id\":1,\n\"job_id\":2}", &id, &li), 0);
    ck_assert_msg(strncmp(li.bad, "line 3: ", 8) == 0 && strstr(li.bad, "duplicate"), "%s", li.bad);
    ck_assert_int_eq(li.present, 1);
    /* not JSON at all: no manifest (nothing said here; the folder's status says it) */
    ck_assert_int_eq(man_read("{\"config\":", &id, &li), 0);
    ck_assert_int_eq(li.present, 0);
    ck_assert_str_eq(li.bad, "");
    /* null fields are absent fields (older formats, optional settings) */
    ck_assert_int_eq(man_read("{\"config\":{" MAN_CFG ",\"system\":null,\"profile\":null,\"gbs\":null},"
                              "\"submitted\":null,\"workload\":null,\"mbridge\":null}", &id, &li), 1);
    ck_assert_str_eq(li.bad, "");
    ck_assert_int_eq(li.submitted, 0);
    /* a Megatron-Bridge manifest's config may carry its own dtype name ("fp8_mx"): not a NeMo dtype, not bad */
    ck_assert_int_eq(man_read("{\"config\":{\"dtype\":\"fp8_mx\"},\"mbridge\":{\"recipe\":\"deepseek_v3\","
                              "\"dtype\":\"fp8_mx\",\"gpu_type\":\"gb300\",\"gpus\":256}}", &id, &li), 1);
    ck_assert_str_eq(li.bad, "");
    /* the format absent or null: read */
    ck_assert_int_eq(man_read("{\"nemoperf_manifest\":null,\"config\":{" MAN_CFG "}}", &id, &li), 1);
    /* not an identity without a size, a known dtype or GPUs (a NeMo manifest) */
    ck_assert_int_eq(man_read("{\"config\":{\"recipe\":\"llama3.1\",\"dtype\":\"bf16\",\"gpus\":8}}", &id, &li), 0);
    ck_assert_int_eq(man_read("{\"config\":{\"recipe\":\"llama3.1\",\"model_size\":\"8b\",\"gpus\":8}}", &id, &li), 0);
    ck_assert_int_eq(man_read("{\"config\":{\"model_size\":\"8b\",\"dtype\":\"bf16\",\"gpus\":8}}", &id, &li), 0);
    /* the kinds: profile over nccltrace, then a checkpoint load (a non-empty path), then a checkpoint save */
    static const struct {
        const char *extra;
        enum np_run_kind kind;
        const char *variant;
    } kinds[] = {
        {",\"profile\":true,\"nccltrace\":true", NP_KIND_PROFILE, "nsys"},
        {",\"nccltrace\":true,\"checkpoint\":true", NP_KIND_NCCLTRACE, "nccltrace"},
        {",\"load_checkpoint\":\"/ckpt\",\"checkpoint\":true", NP_KIND_CKPT_LOAD, ""},
        {",\"load_checkpoint\":\"\",\"checkpoint\":true", NP_KIND_CKPT_SAVE, ""},
        {",\"load_checkpoint\":\"\",\"profile\":false", NP_KIND_BENCHMARK, ""},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char j[400];
        snprintf(j, sizeof j, "{\"config\":{" MAN_CFG "%s}}", kinds[i].extra);
        ck_assert_int_eq(man_read(j, &id, &li), 1);
        ck_assert_msg(id.kind == kinds[i].kind, "kind case %zu: %s", i, np_run_kind_name(id.kind));
        ck_assert_str_eq(id.variant, kinds[i].variant);
    }
    /* the synthetic workload, at the root or in config */
    ck_assert_int_eq(man_read("{\"workload\":\"synthetic\",\"config\":{" MAN_CFG "}}", &id, &li), 1);
    ck_assert_int_eq(id.synthetic, 1);
    ck_assert_int_eq(man_read("{\"config\":{" MAN_CFG ",\"workload\":\"synthetic\"}}", &id, &li), 1);
    ck_assert_int_eq(id.synthetic, 1);
    ck_assert_int_eq(man_read("{\"workload\":\"nemo\",\"config\":{" MAN_CFG ",\"workload\":\"synthetic\"}}", &id, &li),
                     1);
    ck_assert_int_eq(id.synthetic, 0);
    /* an nccl-tests run: its family and recipe, never synthetic, an identity without size or dtype */
    ck_assert_int_eq(man_read("{\"workload\":\"nccl-tests\",\"config\":{\"gpus\":16}}", &id, &li), 1);
    ck_assert_str_eq(id.family, "nccl-tests");
    ck_assert_str_eq(id.recipe, "nccl-tests");
    ck_assert_int_eq(id.kind, NP_KIND_NCCLTESTS);
    /* Megatron-Bridge's object: its identity, its own dtype names, the GPU type in lower case, no NeMo size */
    ck_assert_int_eq(man_read("{\"config\":{\"model_size\":\"8b\"},\"mbridge\":{\"recipe\":\"deepseek_v3\","
                              "\"dtype\":\"fp8_mx\",\"gpu_type\":\"GB300\",\"gpus\":256,\"container\":\"26.08\","
                              "\"task\":\"sft\",\"variant\":\"v2\",\"gbs\":4096,\"seq_len\":8192}}", &id, &li), 1);
    ck_assert_str_eq(id.family, "mbridge");
    ck_assert_str_eq(id.recipe, "deepseek_v3");
    ck_assert_str_eq(id.precision, "fp8_mx");
    ck_assert_int_eq(id.dtype, NP_DTYPE_FP8);
    ck_assert_str_eq(id.gpu_type, "gb300");
    ck_assert_int_eq(id.gpus, 256);
    ck_assert_str_eq(id.container, "26.08");
    ck_assert_str_eq(id.task, "sft");
    ck_assert_str_eq(id.config_variant, "v2");
    ck_assert_int_eq(id.gbs, 4096);
    ck_assert_int_eq(id.seq_len, 8192);
    ck_assert_str_eq(id.model_size, "");
    ck_assert_str_eq(li.foreign, "mbridge");
    ck_assert_int_eq(man_read("{\"mbridge\":{\"recipe\":\"llama3_70b\",\"dtype\":\"bf16\",\"gpu_type\":\"h100\","
                              "\"gpus\":64}}", &id, &li), 1);
    ck_assert_int_eq(id.dtype, NP_DTYPE_BF16);
    ck_assert_str_eq(id.task, "");
}
END_TEST

/* Every status, verdict and kind has its name (the report, JSON and the store print them). */
START_TEST(test_names)
{
    static const char *const st[] = {"ok", "no-steps", "invalid", "incomplete", "unidentified", "implausible",
                                     "synthetic", "not-submitted", "pending", "running", "failed", "no-log"};
    for (int s = NP_RUN_OK; s <= NP_RUN_NO_LOG; s++)
        ck_assert_str_eq(np_run_status_name((enum np_run_status)s), st[s]);
    for (int s = NP_RUN_OK; s <= NP_RUN_NO_LOG; s++)
        ck_assert_int_eq(np_run_status_good((enum np_run_status)s), s == NP_RUN_OK || s == NP_RUN_SYNTHETIC);
    ck_assert_str_eq(np_run_status_name((enum np_run_status)99), "?");
    ck_assert_str_eq(np_verdict_name(NP_VERDICT_PASS), "PASS");
    ck_assert_str_eq(np_verdict_name(NP_VERDICT_FAIL), "FAIL");
    ck_assert_str_eq(np_verdict_name(NP_VERDICT_FAST), "FAST");
    ck_assert_str_eq(np_verdict_name(NP_VERDICT_NOT_COMPARED), "n/a");
    ck_assert_str_eq(np_verdict_name(NP_VERDICT_NONE), "-");
    static const char *const kind[] = {"benchmark", "profile", "nccl-trace", "checkpoint-load", "checkpoint-save",
                                       "nccl-tests"};
    for (int k = NP_KIND_BENCHMARK; k <= NP_KIND_NCCLTESTS; k++) {
        ck_assert_str_eq(np_run_kind_name((enum np_run_kind)k), kind[k]);
        ck_assert_int_eq(np_run_kind_why((enum np_run_kind)k)[0] == '\0', k == NP_KIND_BENCHMARK);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("run");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_every_published_row_and_markdown);
    tcase_add_test(tc, test_seed_tables_transcribed);
    tcase_add_test(tc, test_restarts_resolve_to_latest_attempt);
    tcase_add_test(tc, test_statuses);
    tcase_add_test(tc, test_sbatch_companion);
    tcase_add_test(tc, test_manifest_identity_and_window);
    tcase_add_test(tc, test_unreadable_folder);
    tcase_add_test(tc, test_errors_go_on);
    tcase_add_test(tc, test_identity_from_path);
    tcase_add_test(tc, test_spill_round_trip);
    tcase_add_test(tc, test_window_edges_and_samples);
    tcase_add_test(tc, test_window_stdev_at_the_noise_floor);
    tcase_add_test(tc, test_verdict_boundaries_and_basis);
    tcase_add_test(tc, test_tolerance_family);
    tcase_add_test(tc, test_automodel_untimed_window_rule);
    tcase_add_test(tc, test_energy_per_token);
    tcase_add_test(tc, test_analyse_status_ladder);
    tcase_add_test(tc, test_analyse_implausible_floor);
    tcase_add_test(tc, test_analyse_complete_and_untimed);
    tcase_add_test(tc, test_analyse_gbs_and_manifest_notes);
    tcase_add_test(tc, test_analyse_window_rules);
    tcase_add_test(tc, test_analyse_reference_reasons);
    tcase_add_test(tc, test_analyse_finetune_flops);
    tcase_add_test(tc, test_analyse_wan_logged_tflops);
    tcase_add_test(tc, test_identity_conflicts);
    tcase_add_test(tc, test_newest_job_and_restart);
    tcase_add_test(tc, test_manifest_read_fields);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
