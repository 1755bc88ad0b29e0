/* check_run.c - nemoperf-parse's pipeline on log trees built by the test.
 *
 * The acceptance case: for every published row of seeds 003/004 a tree laid
 * out as the recipes make it (warm-up steps, then the published step time as
 * the last step) must parse to the published throughput (+-1), MFU (+-0.2
 * points) and days (+-0.01), and the markdown report must reproduce the
 * seeds' tables cell for cell.  Then restarts, manifests, statuses, windows.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
