/* check_store.c - the results store and its statistics: verdicts on generated runs of known distributions
 * (seeded), a simulation of autocorrelated steps, and the store itself (idempotence, a killed store,
 * concurrent stores, corrupt file, newer schema, network file system refusal, redaction, selectors,
 * change points; parsed runs keyed by cluster and folder and stored again a second later, the schema 1
 * migration, a store opened while another writes, the default location).  The store suite runs on a SQLite file here and, when NP_TEST_PG_URI names a server
 * (tests/e2e/60-store.sh starts a real one), on PostgreSQL too.  Stand-in: the NFS/Lustre refusal is
 * driven by NEMOPERF_TEST_FS_MAGIC (no network file system exists on this machine).
 */
#include <check.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "nemoperf/model/recipe.h"
#include "nemoperf/store/compare.h"
#include "nemoperf/report/history.h"
#include "nemoperf/store/store.h"
#include "nemoperf/util/redact.h"

/* ---- a seeded normal generator (xorshift64*, Box-Muller) ---- */

static unsigned long long rng_state;
static double urand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}
static double nrand(void)
{
    double u = urand(), v = urand();
    if (u < 1e-300)
        u = 1e-300;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* n runs of mean throughput m with relative run-to-run noise sd */
static void gen_runs(double *x, size_t n, double m, double sd)
{
    for (size_t i = 0; i < n; i++)
        x[i] = m * (1 + sd * nrand());
}

/* a run's throughput from a window of steps with relative step noise sd (iid): 1/mean step */
static double gen_run_from_steps(size_t steps, double step_s, double sd)
{
    double s = 0;
    for (size_t i = 0; i < steps; i++)
        s += step_s * (1 + sd * nrand());
    return steps / s;
}

/* AR(1) step times around step_s: relative noise sd, lag-1 correlation phi */
static void gen_ar1(double *x, size_t n, double step_s, double sd, double phi)
{
    double e = sd * nrand();
    for (size_t i = 0; i < n; i++) {
        e = phi * e + sqrt(1 - phi * phi) * sd * nrand();
        x[i] = step_s * exp(e);
    }
}

START_TEST(test_t_distribution)
{
    ck_assert_double_eq_tol(np_t_quantile(0.975, 10), 2.228139, 1e-5);
    ck_assert_double_eq_tol(np_t_quantile(0.975, 1), 12.706205, 1e-4);
    ck_assert_double_eq_tol(np_t_quantile(0.95, 6), 1.943180, 1e-5);
    ck_assert_double_eq_tol(np_t_quantile(0.975, 1e6), 1.959966, 1e-4);
    ck_assert_double_eq_tol(np_t_cdf(0, 5), 0.5, 1e-12);
    ck_assert_double_eq_tol(np_t_cdf(-2.015048, 5), 0.05, 1e-5);
    ck_assert_double_eq_tol(np_t_quantile(0.025, 10), -2.228139, 1e-5);
}
END_TEST

/* 3 % slower with 0.5 % step noise, 4+4 runs of NVIDIA's 34-step window: SLOWER every time */
START_TEST(test_slowdown_steps_noise)
{
    rng_state = 28;
    for (int t = 0; t < 200; t++) {
        double b[4], c[4];
        for (int i = 0; i < 4; i++) {
            b[i] = gen_run_from_steps(34, 1.0, 0.005);
            c[i] = gen_run_from_steps(34, 1.0 / 0.97, 0.005);
        }
        struct np_cmp_result r;
        np_compare_runs(b, 4, c, 4, 2.0, &r);
        ck_assert_int_eq(r.method, NP_CMP_WELCH_RUNS);
        ck_assert_msg(r.verdict == NP_CMP_SLOWER, "trial %d: %s (%.2f [%.2f, %.2f])", t, np_cmp_verdict_name(r.verdict),
                      r.diff_pct, r.diff_lo, r.diff_hi);
        ck_assert(r.diff_pct < -2.5 && r.diff_pct > -3.5);
    }
}
END_TEST

/* 3 % slower with 0.5 % run-to-run noise, 4+4 runs: never FASTER or SAME; SLOWER most of the time (the rest
 * INCONCLUSIVE: with 4 runs a side the 95 % interval is +-0.9 % wide, so -3 % clears -2 % only when the
 * estimate lands below about -2.9 %) */
START_TEST(test_slowdown_run_noise)
{
    rng_state = 2803;
    int slower = 0;
    for (int t = 0; t < 200; t++) {
        double b[4], c[4];
        gen_runs(b, 4, 1000, 0.005);
        gen_runs(c, 4, 970, 0.005);
        struct np_cmp_result r;
        np_compare_runs(b, 4, c, 4, 2.0, &r);
        ck_assert(r.verdict == NP_CMP_SLOWER || r.verdict == NP_CMP_INCONCLUSIVE);
        if (r.verdict == NP_CMP_INCONCLUSIVE)
            ck_assert(r.more_runs > 0);
        slower += r.verdict == NP_CMP_SLOWER;
    }
    fprintf(stderr, "check_store: 3%% slower, 0.5%% run noise, 4+4 runs: SLOWER in %d of 200\n", slower);
    ck_assert_int_ge(slower, 100);
    /* the same with 8+8 runs decides nearly always */
    slower = 0;
    for (int t = 0; t < 200; t++) {
        double b[8], c[8];
        gen_runs(b, 8, 1000, 0.005);
        gen_runs(c, 8, 970, 0.005);
        struct np_cmp_result r;
        np_compare_runs(b, 8, c, 8, 2.0, &r);
        slower += r.verdict == NP_CMP_SLOWER;
    }
    fprintf(stderr, "check_store: 3%% slower, 0.5%% run noise, 8+8 runs: SLOWER in %d of 200\n", slower);
    ck_assert_int_ge(slower, 180);
}
END_TEST

/* 0.3 % change with 2 % noise: never FASTER or SLOWER */
START_TEST(test_small_change_noisy)
{
    rng_state = 3;
    for (size_t n = 4; n <= 16; n *= 2)
        for (int t = 0; t < 200; t++) {
            double b[16], c[16];
            gen_runs(b, n, 1000, 0.02);
            gen_runs(c, n, 1003, 0.02);
            struct np_cmp_result r;
            np_compare_runs(b, n, c, n, 2.0, &r);
            ck_assert_msg(r.verdict != NP_CMP_FASTER && r.verdict != NP_CMP_SLOWER, "n=%zu trial %d: %s", n, t,
                          np_cmp_verdict_name(r.verdict));
            /* step noise of 2 % over 34-step windows */
            for (size_t i = 0; i < n; i++) {
                b[i] = gen_run_from_steps(34, 1.0, 0.02);
                c[i] = gen_run_from_steps(34, 1.0 / 1.003, 0.02);
            }
            np_compare_runs(b, n, c, n, 2.0, &r);
            ck_assert(r.verdict != NP_CMP_FASTER && r.verdict != NP_CMP_SLOWER);
        }
}
END_TEST

/* identical distributions, 200 seeded trials: with --min-effect 0 a FASTER/SLOWER verdict is a 95 % interval
 * missing the truth (5 % stated); the count must stay within 3 standard deviations of the binomial */
START_TEST(test_identical_error_rate)
{
    rng_state = 200;
    int wrong0 = 0, wrong2 = 0;
    for (int t = 0; t < 200; t++) {
        double b[5], c[5];
        gen_runs(b, 5, 1000, 0.01);
        gen_runs(c, 5, 1000, 0.01);
        struct np_cmp_result r;
        np_compare_runs(b, 5, c, 5, 0, &r);
        wrong0 += r.verdict == NP_CMP_FASTER || r.verdict == NP_CMP_SLOWER;
        np_compare_runs(b, 5, c, 5, 2.0, &r);
        wrong2 += r.verdict == NP_CMP_FASTER || r.verdict == NP_CMP_SLOWER;
    }
    double bound = 200 * 0.05 + 3 * sqrt(200 * 0.05 * 0.95);
    fprintf(stderr, "check_store: identical runs, 200 trials: FASTER/SLOWER %d (min-effect 0), %d (2 %%); bound %.1f\n",
            wrong0, wrong2, bound);
    ck_assert(wrong0 <= bound);
    ck_assert(wrong2 <= wrong0);
    ck_assert_int_eq(wrong2, 0);
}
END_TEST

/* one run against one run, AR(1) steps: the verdict is not overconfident (simulation: 4000 identical pairs
 * with lag-1 correlation 0.5 over 34 steps); an analysis that treats the steps as independent is, so the
 * check can fail */
START_TEST(test_autocorrelated_one_vs_one)
{
    rng_state = 1234;
    int wrong = 0, naive_wrong = 0, n = 4000;
    for (int t = 0; t < n; t++) {
        double a[34], b[34];
        gen_ar1(a, 34, 1.0, 0.01, 0.5);
        gen_ar1(b, 34, 1.0, 0.01, 0.5);
        struct np_cmp_result r;
        np_compare_steps(a, 34, b, 34, 0, &r);
        ck_assert_int_eq(r.method, NP_CMP_BATCH_MEANS);
        wrong += r.verdict == NP_CMP_FASTER || r.verdict == NP_CMP_SLOWER;
        double ia[34], ib[34]; /* the naive way: every step a sample */
        for (int i = 0; i < 34; i++) {
            ia[i] = 1 / a[i];
            ib[i] = 1 / b[i];
        }
        np_compare_runs(ia, 34, ib, 34, 0, &r);
        naive_wrong += r.verdict == NP_CMP_FASTER || r.verdict == NP_CMP_SLOWER;
    }
    double bound = n * 0.05 + 3 * sqrt(n * 0.05 * 0.95);
    fprintf(stderr, "check_store: AR(1) 0.5, 34 steps, one vs one: wrong %d of %d (bound %.0f); steps as "
                    "independent samples: %d\n",
            wrong, n, bound, naive_wrong);
    ck_assert(wrong <= bound);
    ck_assert(naive_wrong > bound);
    /* and it still sees a real 3 % slowdown in one run against one */
    int slower = 0;
    for (int t = 0; t < 200; t++) {
        double a[34], b[34];
        gen_ar1(a, 34, 1.0, 0.005, 0.5);
        gen_ar1(b, 34, 1.0 / 0.97, 0.005, 0.5);
        struct np_cmp_result r;
        np_compare_steps(a, 34, b, 34, 2.0, &r);
        ck_assert(r.verdict != NP_CMP_FASTER && r.verdict != NP_CMP_SAME);
        slower += r.verdict == NP_CMP_SLOWER;
    }
    fprintf(stderr, "check_store: one vs one, 3%% slower, 0.5%% AR(1) step noise: SLOWER in %d of 200\n", slower);
    ck_assert_int_ge(slower, 150);
    struct np_cmp_result r;
    double few[5] = {1, 1, 1, 1, 1};
    np_compare_steps(few, 5, few, 5, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_ptr_nonnull(r.why);
    /* one side short is enough: 40 steady steps against 5, however alike, give no interval from the steps */
    double many[40];
    for (size_t i = 0; i < 40; i++)
        many[i] = 1 + 0.001 * (double)(i % 3);
    np_compare_steps(many, 40, few, 5, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_ptr_nonnull(r.why);
    ck_assert_ptr_nonnull(strstr(r.why, "fewer than 8 steps"));
    np_compare_steps(few, 5, many, 40, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
}
END_TEST

/* INCONCLUSIVE says how many more runs; running them mostly decides */
/* --compare's INCONCLUSIVE names the launch that adds runs: REPEATS=N and the row's variables for a NeMo
 * benchmark row, a placeholder for a family whose rows take other variables (docs/launch.md "Repeats") */
static void cmp_rec(struct np_store_rec *r, const char *family, double tput)
{
    memset(r, 0, sizeof *r);
    snprintf(r->config, sizeof r->config, "%s", "llama3.1 8b pretrain bf16 h100x8 seq8192 gbs128 synthetic");
    snprintf(r->family, sizeof r->family, "%s", family);
    snprintf(r->kind, sizeof r->kind, "benchmark");
    snprintf(r->recipe, sizeof r->recipe, "llama3.1");
    snprintf(r->size, sizeof r->size, "8b");
    snprintf(r->dtype, sizeof r->dtype, "bf16");
    snprintf(r->gpu, sizeof r->gpu, "h100");
    snprintf(r->task, sizeof r->task, "pretrain");
    snprintf(r->workload, sizeof r->workload, "synthetic");
    snprintf(r->status, sizeof r->status, "synthetic");
    r->gpus = 8;
    r->step_time_s = NAN;
    r->tokens_per_s_per_gpu = tput;
}

START_TEST(test_inconclusive_names_launch)
{
    static const double base[] = {1000, 1030, 970}, cand[] = {990, 1020, 960};
    for (int mb = 0; mb < 2; mb++) {
        struct np_compare_set *set = np_compare_set_new();
        ck_assert_ptr_nonnull(set);
        struct np_store_rec r;
        for (int i = 0; i < 3; i++) {
            cmp_rec(&r, mb ? "mbridge" : "nemo", base[i]);
            ck_assert_int_eq(np_compare_set_add(set, NP_CMP_BASE, &r), 1);
            cmp_rec(&r, mb ? "mbridge" : "nemo", cand[i]);
            ck_assert_int_eq(np_compare_set_add(set, NP_CMP_CAND, &r), 1);
        }
        char *buf = NULL;
        size_t len = 0, nslower, ncmp;
        FILE *m = open_memstream(&buf, &len);
        ck_assert_int_eq(np_compare_write(set, NP_FMT_JSON, 2.0, m, &nslower, &ncmp), NP_OK);
        fclose(m);
        json_t *root = json_loads(buf, 0, NULL);
        ck_assert_ptr_nonnull(root);
        json_t *c0 = json_array_get(json_object_get(root, "configurations"), 0);
        ck_assert_str_eq(json_string_value(json_object_get(c0, "verdict")), "INCONCLUSIVE");
        json_int_t more = json_integer_value(json_object_get(c0, "more_runs"));
        ck_assert(more > 0 && more <= 1000);
        char want[512];
        snprintf(want, sizeof want, "about %lld more run%s a side would likely decide it; on each side: REPEATS=%lld %s",
                 (long long)more, more == 1 ? "" : "s", (long long)(more < 100 ? more : 100),
                 mb ? "<the row's variables> ./launch"
                    : "RECIPE=llama3.1 MODEL_SIZE=8b DTYPE=bf16 GPU_TYPE=h100 WORKLOAD=synthetic JOB_TOTAL_GPUS=8 "
                      "./launch");
        ck_assert_str_eq(json_string_value(json_object_get(c0, "note")), want);
        json_decref(root);
        free(buf);
        np_compare_set_free(set);
    }
}
END_TEST


/* --metric energy: the same noise-aware rule on J/token.  Four runs a side of the same throughput, the candidate's
 * J/token 5 % higher (5 % more power at the same speed): MORE-ENERGY, +5 % within its interval, counted as slower
 * (exit 1); 5 % lower: LESS-ENERGY, not counted; throughput on the same runs: SAME.  A run without energy is left
 * out of an energy comparison (not of a throughput one). */
START_TEST(test_compare_energy)
{
    static const double noise[] = {1.000, 1.003, 0.997, 1.001};
    for (int sign = -1; sign <= 1; sign += 2)
        for (int metric = 0; metric < 2; metric++) {
            struct np_compare_set *set = np_compare_set_new();
            ck_assert_ptr_nonnull(set);
            np_compare_set_metric(set, metric ? NP_CMP_METRIC_ENERGY : NP_CMP_METRIC_THROUGHPUT);
            struct np_store_rec r;
            for (int i = 0; i < 4; i++) {
                cmp_rec(&r, "mbridge", 1000 * noise[i]);
                r.j_per_token = 0.5 * noise[(i + 1) % 4];
                r.w_per_gpu = 600 * noise[(i + 1) % 4];
                ck_assert_int_eq(np_compare_set_add(set, NP_CMP_BASE, &r), 1);
                cmp_rec(&r, "mbridge", 1000 * noise[(i + 2) % 4]);
                r.j_per_token = 0.5 * (1 + sign * 0.05) * noise[(i + 3) % 4];
                r.w_per_gpu = 600 * (1 + sign * 0.05) * noise[(i + 3) % 4];
                ck_assert_int_eq(np_compare_set_add(set, NP_CMP_CAND, &r), 1);
            }
            cmp_rec(&r, "mbridge", 1000); /* no energy */
            r.j_per_token = NAN;
            ck_assert_int_eq(np_compare_set_add(set, NP_CMP_CAND, &r), metric ? 0 : 1);
            char *buf = NULL;
            size_t len = 0, nslower, ncmp;
            FILE *m = open_memstream(&buf, &len);
            ck_assert_int_eq(np_compare_write(set, NP_FMT_JSON, 2.0, m, &nslower, &ncmp), NP_OK);
            fclose(m);
            json_t *root = json_loads(buf, 0, NULL);
            ck_assert_ptr_nonnull(root);
            json_t *c0 = json_array_get(json_object_get(root, "configurations"), 0);
            const char *v = json_string_value(json_object_get(c0, "verdict"));
            ck_assert_uint_eq(ncmp, 1);
            if (!metric) {
                ck_assert_str_eq(v, "SAME");
                ck_assert_uint_eq(nslower, 0);
            } else {
                ck_assert_str_eq(v, sign > 0 ? "MORE-ENERGY" : "LESS-ENERGY");
                ck_assert_uint_eq(nslower, sign > 0);
                ck_assert_str_eq(json_string_value(json_object_get(c0, "unit")), "J/token");
                ck_assert_str_eq(json_string_value(json_object_get(root, "metric")), "energy");
                double d = json_real_value(json_object_get(c0, "change_pct"));
                json_t *ci = json_object_get(c0, "change_ci_pct");
                double lo = json_real_value(json_array_get(ci, 0)), hi = json_real_value(json_array_get(ci, 1));
                ck_assert_msg(fabs(d - sign * 5.0) < 0.3 && lo < d && d < hi, "change %g [%g, %g]", d, lo, hi);
                double bm = json_real_value(json_object_get(json_object_get(c0, "baseline"), "mean"));
                ck_assert_msg(fabs(bm - 0.5) < 0.005, "baseline J/token %g", bm);
            }
            json_decref(root);
            free(buf);
            np_compare_set_free(set);
        }
}
END_TEST

/* np_compare_runs_change is np_compare_runs' diff_pct to the last bit (--history skips the interval where it is
 * within the margin: that must never hide a FASTER or SLOWER) */
START_TEST(test_change_prefilter)
{
    unsigned seed = 7;
    for (int trial = 0; trial < 2000; trial++) {
        double a[24], b[24];
        size_t na = 1 + (size_t)(rand_r(&seed) % 20), nb = 1 + (size_t)(rand_r(&seed) % 4);
        double shift = 1 + ((rand_r(&seed) % 200) - 100) / 1000.0;
        for (size_t i = 0; i < na; i++)
            a[i] = 1000 * (1 + 0.01 * ((rand_r(&seed) % 200) - 100) / 100.0);
        for (size_t i = 0; i < nb; i++)
            b[i] = 1000 * shift * (1 + 0.01 * ((rand_r(&seed) % 200) - 100) / 100.0);
        struct np_cmp_result r;
        np_compare_runs(a, na, b, nb, 2.0, &r);
        double c = np_compare_runs_change(a, na, b, nb);
        if (isfinite(r.diff_pct))
            ck_assert_msg(c == r.diff_pct, "trial %d: %.17g != %.17g", trial, c, r.diff_pct);
        if (!(fabs(c) > 2.0))
            ck_assert(r.verdict != NP_CMP_FASTER && r.verdict != NP_CMP_SLOWER);
    }
    double none[] = {-1, NAN};
    ck_assert(isnan(np_compare_runs_change(none, 2, none, 2)));
}
END_TEST

START_TEST(test_more_runs)
{
    rng_state = 77;
    int decided = 0, asked = 0;
    for (int t = 0; t < 100; t++) {
        double b[400], c[400];
        gen_runs(b, 3, 1000, 0.02);
        gen_runs(c, 3, 960, 0.02);
        struct np_cmp_result r;
        np_compare_runs(b, 3, c, 3, 2.0, &r);
        if (r.verdict != NP_CMP_INCONCLUSIVE)
            continue;
        ck_assert(r.more_runs > 0);
        if (r.more_runs > 100)
            continue;
        asked++;
        size_t n = 3 + (size_t)r.more_runs;
        gen_runs(b + 3, n - 3, 1000, 0.02);
        gen_runs(c + 3, n - 3, 960, 0.02);
        np_compare_runs(b, n, c, n, 2.0, &r);
        decided += r.verdict != NP_CMP_INCONCLUSIVE;
    }
    fprintf(stderr, "check_store: more runs asked for %d times, decided %d\n", asked, decided);
    ck_assert_int_gt(asked, 10);
    ck_assert_int_ge(decided * 2, asked);
    /* the advice is symmetric: a candidate slower by x needs as many more runs as one faster by x (the distance
     * from the estimate to the margin it must clear, |d| - margin, on either side) */
    const double base[] = {1000, 1021, 979, 1008}, cand[] = {985, 1004, 965, 992};
    struct np_cmp_result ab, ba;
    np_compare_runs(base, 4, cand, 4, 2.0, &ab);
    np_compare_runs(cand, 4, base, 4, 2.0, &ba);
    ck_assert_int_eq(ab.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_int_eq(ba.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_msg(ab.more_runs > 0 && ab.more_runs == ba.more_runs, "slower: %ld more runs, faster: %ld", ab.more_runs,
                  ba.more_runs);
}
END_TEST

/* ---- the store, on SQLite and (NP_TEST_PG_URI) PostgreSQL ---- */

static char tmpdir[256];
static char loc[1024];

static void store_loc(int pg)
{
    if (pg) {
        snprintf(loc, sizeof loc, "%s", getenv("NP_TEST_PG_URI"));
        /* a clean database: drop what an earlier test left */
        PGconn *c = PQconnectdb(loc);
        ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
        PQclear(PQexec(c, "SET client_min_messages = warning; DROP TABLE IF EXISTS runs; "
                          "DROP TABLE IF EXISTS nemoperf_meta"));
        PQfinish(c);
    } else {
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/check_store.XXXXXX", t && *t ? t : "/tmp");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
        snprintf(loc, sizeof loc, "%s/results.db", tmpdir);
    }
}

static void store_cleanup(int pg)
{
    if (!pg) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        ck_assert_int_eq(system(cmd), 0);
    }
}

static void make_rec(struct np_store_rec *r, int i, const char *config, double tpg, long long t, const char *tag)
{
    memset(r, 0, sizeof *r);
    snprintf(r->run_key, sizeof r->run_key, "test:/runs/%d", i);
    snprintf(r->config, sizeof r->config, "%s", config);
    snprintf(r->config_hash, sizeof r->config_hash, "%016x", i);
    strcpy(r->kind, "nemo");
    strcpy(r->recipe, "llama3.1");
    strcpy(r->size, "8b");
    strcpy(r->dtype, "bf16");
    strcpy(r->gpu, "h100");
    strcpy(r->task, "pretrain");
    r->gpus = 8;
    r->seq_len = 8192;
    r->gbs = 128;
    r->nodes = 1;
    strcpy(r->cluster, "test");
    snprintf(r->job_id, sizeof r->job_id, "%d", 1000 + i);
    r->t = t;
    snprintf(r->container, sizeof r->container, "nvcr.io/nvidia/nemo:%s", tag);
    snprintf(r->container_tag, sizeof r->container_tag, "%s", tag);
    strcpy(r->status, "ok");
    r->steps = 50;
    r->window_first = 11;
    r->window_last = 44;
    r->tokens_per_s_per_gpu = tpg;
    r->step_time_s = 8192.0 * 128 / 8 / tpg;
    r->tokens_per_s = tpg * 8;
    r->tflops_per_gpu = r->mfu_percent = NAN;
    r->step_stdev_s = 0.01;
    r->samples = malloc(34 * sizeof *r->samples);
    r->nsamples = 34;
    for (int k = 0; k < 34; k++)
        r->samples[k] = r->step_time_s * (1 + 0.001 * (k % 5));
    strcpy(r->nemoperf_version, "test");
    snprintf(r->path, sizeof r->path, "/runs/%d/log.out", i);
}

static long long count_runs(void)
{
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    long long n = -1;
    ck_assert_int_eq(np_store_count(s, &n, &err), NP_OK);
    np_store_close(s);
    return n;
}

/* store n runs from first, in one transaction; the outcomes counted */
static void put_runs(int first, int n, int *added, int *updated, int *same)
{
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    for (int i = first; i < first + n; i++) {
        struct np_store_rec r;
        make_rec(&r, i, "cfg a", 1000 + i % 7, 1700000000LL + i * 3600, "25.04");
        enum np_store_outcome oc;
        ck_assert_msg(np_store_put(s, &r, &oc, &err) == NP_OK, "%s", err.text);
        np_store_rec_clear(&r);
        if (added)
            *added += oc == NP_STORE_ADDED;
        if (updated)
            *updated += oc == NP_STORE_UPDATED;
        if (same)
            *same += oc == NP_STORE_SAME;
    }
    ck_assert_msg(np_store_commit(s, &err) == NP_OK, "%s", err.text);
    np_store_close(s);
}

static void run_idempotent(int pg)
{
    store_loc(pg);
    int a = 0, u = 0, sm = 0;
    put_runs(0, 100, &a, &u, &sm);
    ck_assert_int_eq(a, 100);
    ck_assert_int_eq(count_runs(), 100);
    a = u = sm = 0;
    put_runs(0, 100, &a, &u, &sm);
    ck_assert_int_eq(sm, 100);
    ck_assert_int_eq(a + u, 0);
    ck_assert_int_eq(count_runs(), 100);
    /* a run that changed (more steps) is updated, not added; its samples come back as stored */
    struct np_store *s;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    struct np_store_rec r;
    make_rec(&r, 5, "cfg a", 1005, 1700000000LL + 5 * 3600, "25.04");
    r.steps = 60;
    r.samples[3] = 9.25;
    enum np_store_outcome oc;
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_UPDATED);
    np_store_rec_clear(&r);
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    np_store_close(s);
    ck_assert_int_eq(count_runs(), 100);
    store_cleanup(pg);
}

/* a store killed before its commit leaves the previous state */
static void run_killed(int pg)
{
    store_loc(pg);
    put_runs(0, 10, NULL, NULL, NULL);
    pid_t p = fork();
    ck_assert_int_ge(p, 0);
    if (p == 0) {
        struct np_store *s;
        struct np_error err;
        if (np_store_open(loc, &s, &err) != NP_OK || np_store_begin(s, &err) != NP_OK)
            _exit(3);
        for (int i = 10; i < 500; i++) {
            struct np_store_rec r;
            make_rec(&r, i, "cfg a", 1000, 1700000000LL + i, "25.04");
            if (np_store_put(s, &r, NULL, &err) != NP_OK)
                _exit(4);
            np_store_rec_clear(&r);
        }
        raise(SIGKILL); /* mid-way: after the puts, before the commit */
        _exit(5);
    }
    int ws;
    ck_assert_int_eq(waitpid(p, &ws, 0), p);
    ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    ck_assert_int_eq(count_runs(), 10);
    put_runs(10, 5, NULL, NULL, NULL); /* and the store still works */
    ck_assert_int_eq(count_runs(), 15);
    store_cleanup(pg);
}

/* two stores at once lose nothing (300 runs each, 100 of them the same) */
static void run_concurrent(int pg)
{
    store_loc(pg);
    count_runs(); /* the schema, so both children find it */
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            struct np_store *s;
            struct np_error err;
            for (int batch = 0; batch < 6; batch++) { /* several transactions, interleaving */
                if (np_store_open(loc, &s, &err) != NP_OK || np_store_begin(s, &err) != NP_OK) {
                    fprintf(stderr, "child %d: %s\n", k, err.text);
                    _exit(3);
                }
                for (int i = 0; i < 50; i++) {
                    int id = batch < 2 ? 10000 + batch * 50 + i : k * 1000 + batch * 50 + i;
                    struct np_store_rec r;
                    make_rec(&r, id, "cfg a", 1000, 1700000000LL + id, "25.04");
                    if (np_store_put(s, &r, NULL, &err) != NP_OK) {
                        fprintf(stderr, "child %d: %s\n", k, err.text);
                        _exit(4);
                    }
                    np_store_rec_clear(&r);
                }
                if (np_store_commit(s, &err) != NP_OK) {
                    fprintf(stderr, "child %d: %s\n", k, err.text);
                    _exit(5);
                }
                np_store_close(s);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int ws;
        ck_assert_int_eq(waitpid(kids[k], &ws, 0), kids[k]);
        ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "child %d failed", k);
    }
    ck_assert_int_eq(count_runs(), 2 * 200 + 100);
    store_cleanup(pg);
}

/* SQL straight to the test's store, around nemoperf (taking a store back to an older schema's shape) */
static void store_raw(int pg, const char *sql)
{
    if (pg) {
        PGconn *c = PQconnectdb(loc);
        ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
        PGresult *r = PQexec(c, sql);
        ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql,
                      PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
    } else {
        sqlite3 *db;
        ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
        char *msg = NULL;
        ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
        sqlite3_close(db);
    }
}

static void run_newer_schema(int pg)
{
    store_loc(pg);
    count_runs();
    store_raw(pg, "UPDATE nemoperf_meta SET value = '99' WHERE key = 'schema_version'");
    struct np_store *s = NULL;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_E_INVALID);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(err.text, "schema version 99, newer than this nemoperf"));
    store_cleanup(pg);
}

/* A schema version no nemoperf writes ("abc", "-1", "", "1x", " 3", "2.0"): refused (NP_E_INVALID, exit 2), the
 * version named, the store left as it was; the tree before took "abc" for 0 and migrated it ("table runs already
 * exists" on SQLite). */
static void run_bad_schema(int pg)
{
    static const char *const bad[] = {"abc", "-1", "", "1x", " 3", "2.0", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        store_loc(pg);
        count_runs();
        char sql[160];
        snprintf(sql, sizeof sql, "UPDATE nemoperf_meta SET value = '%s' WHERE key = 'schema_version'", bad[i]);
        store_raw(pg, sql);
        struct np_store *s = NULL;
        struct np_error err;
        ck_assert_int_eq(np_store_open(loc, &s, &err), NP_E_INVALID);
        ck_assert_ptr_null(s);
        char want[80];
        snprintf(want, sizeof want, "schema version is '%s', which no nemoperf writes", bad[i]);
        ck_assert_msg(strstr(err.text, want), "%s: %s", bad[i], err.text);
        ck_assert_int_eq(np_exit_code(NP_E_INVALID), 2);
        store_cleanup(pg);
    }
}

/* selectors and the rows they pick */
static enum np_status count_row(void *ctx, const struct np_store_rec *r)
{
    (*(int *)ctx)++;
    ck_assert(r->id > 0);
    return NP_OK;
}

static int select_count(struct np_store *s, const char *sel)
{
    char buf[512];
    struct np_store_filter f;
    struct np_error err;
    ck_assert_msg(np_store_filter_parse(sel, buf, sizeof buf, &f, &err) == NP_OK, "%s", err.text);
    int n = 0;
    ck_assert_msg(np_store_select(s, &f, 0, NP_STORE_ALL, count_row, &n, &err) == NP_OK, "%s", err.text);
    return n;
}

/* np_store_select_sides: each run once, with the sides it is on; the same runs as two np_store_select calls */
struct sides_count {
    int n[4];
    int samples;
};

static enum np_status sides_row(void *ctx, const struct np_store_rec *r, unsigned sides)
{
    struct sides_count *c = ctx;
    ck_assert_uint_lt(sides, 4);
    c->n[sides]++;
    c->samples += r->nsamples == 34 && r->config[0] && r->status[0] && isfinite(r->tokens_per_s_per_gpu);
    return NP_OK;
}

static void sides_check(struct np_store *s, const char *a, const char *b, int only_a, int only_b, int both)
{
    char ba[512], bb[512];
    struct np_store_filter fa, fb;
    struct np_error err;
    ck_assert(np_store_filter_parse(a, ba, sizeof ba, &fa, &err) == NP_OK);
    ck_assert(np_store_filter_parse(b, bb, sizeof bb, &fb, &err) == NP_OK);
    struct sides_count c = {{0, 0, 0, 0}, 0};
    ck_assert_msg(np_store_select_sides(s, &fa, &fb, sides_row, &c, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(c.n[1] == only_a && c.n[2] == only_b && c.n[3] == both && c.n[0] == 0,
                  "%s | %s: %d only a, %d only b, %d both", a, b, c.n[1], c.n[2], c.n[3]);
    ck_assert_int_eq(c.samples, only_a + only_b + both);
    ck_assert_int_eq(select_count(s, a), only_a + both);
    ck_assert_int_eq(select_count(s, b), only_b + both);
}

static void store_series(struct np_store *s)
{
    struct np_error err;
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    /* 12 runs a day apart from 2026-11-01; a 5 % drop from the 7th, when the container changed */
    for (int i = 0; i < 12; i++) {
        struct np_store_rec r;
        double noise = 1 + 0.002 * ((i * 7) % 5 - 2);
        make_rec(&r, i, "cfg a", (i < 6 ? 1000 : 950) * noise, 1793491200LL + i * 86400LL + 3600,
                 i < 6 ? "25.04" : "26.06");
        ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
        np_store_rec_clear(&r);
    }
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
}

static void run_selectors_history(int pg)
{
    store_loc(pg);
    struct np_store *s;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    store_series(s);
    ck_assert_int_eq(select_count(s, ""), 12);
    ck_assert_int_eq(select_count(s, "db:container=26.06"), 6);
    ck_assert_int_eq(select_count(s, "container=nvcr.io/nvidia/nemo:25.04"), 6);
    ck_assert_int_eq(select_count(s, "db:since=2026-11-03,until=2026-11-04"), 2);
    ck_assert_int_eq(select_count(s, "db:job=1002,1005,1011"), 3);
    ck_assert_int_eq(select_count(s, "recipe=llama3.1,size=8b,gpus=8,dtype=bf16"), 12);
    ck_assert_int_eq(select_count(s, "gpus=16"), 0);
    sides_check(s, "db:container=25.04", "db:container=26.06", 6, 6, 0);
    sides_check(s, "db:cluster=test", "db:since=2026-11-03,until=2026-11-04", 10, 0, 2);
    sides_check(s, "db:job=1002,1005,1011", "db:container=nvcr.io/nvidia/nemo:26.06,gpus=8", 2, 5, 1);
    sides_check(s, "db:recipe=llama3.1,size=8b,dtype=bf16,gpu=h100,kind=nemo,status=ok,config=cfg a", "db:gpus=16", 12, 0,
                0);
    /* --history: the change point is the 7th run, with the container that changed */
    FILE *f = tmpfile();
    long long n = 0;
    struct np_store_filter all;
    memset(&all, 0, sizeof all);
    ck_assert_int_eq(np_history_write(s, &all, NP_FMT_CSV, 2.0, NULL, f, &n, &err), NP_OK);
    ck_assert_int_eq(n, 12);
    rewind(f);
    char line[1024];
    int row = -1, marked = -1, nmarked = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "SLOWER")) {
            marked = row;
            nmarked++;
            ck_assert_ptr_nonnull(strstr(line, "container 25.04 -> 26.06"));
        }
        row++;
    }
    fclose(f);
    ck_assert_int_eq(nmarked, 1);
    ck_assert_int_eq(marked, 6);
    /* --compare db:container=25.04 db:container=26.06: SLOWER, in JSON with a verdict */
    struct np_compare_set *set = np_compare_set_new();
    char b1[256], b2[256];
    struct np_store_filter fb, fc;
    ck_assert_int_eq(np_store_filter_parse("db:container=25.04", b1, sizeof b1, &fb, &err), NP_OK);
    ck_assert_int_eq(np_store_filter_parse("db:container=26.06", b2, sizeof b2, &fc, &err), NP_OK);
    ck_assert_int_eq(np_compare_set_from_store(set, NP_CMP_BASE, s, &fb, &err), NP_OK);
    ck_assert_int_eq(np_compare_set_from_store(set, NP_CMP_CAND, s, &fc, &err), NP_OK);
    char *buf = NULL;
    size_t len = 0, nslower, ncmp;
    FILE *m = open_memstream(&buf, &len);
    ck_assert_int_eq(np_compare_write(set, NP_FMT_JSON, 2.0, m, &nslower, &ncmp), NP_OK);
    fclose(m);
    ck_assert_int_eq(nslower, 1);
    ck_assert_int_eq(ncmp, 1);
    json_t *root = json_loads(buf, 0, NULL);
    ck_assert_ptr_nonnull(root);
    json_t *c0 = json_array_get(json_object_get(root, "configurations"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(c0, "verdict")), "SLOWER");
    ck_assert_str_eq(json_string_value(json_object_get(c0, "method")), "welch-runs");
    ck_assert(json_real_value(json_object_get(c0, "change_pct")) < -4);
    json_decref(root);
    free(buf);
    np_compare_set_free(set);
    np_store_close(s);
    store_cleanup(pg);
}

/* np_store_series computes each run's throughput and what counts in SQL (--history's change-point pass): the same
 * answer as np_store_rec_tput and history's rule in C, to the bit, for every kind of value each of the three
 * columns can hold (positive, 0, negative, unknown; a non-finite one is stored as unknown), and the container
 * (the tag, else the image).  Configurations "c00".."c13" name the cases, so the order (config, t, id) is theirs. */
struct series_seen {
    double x[16];
    int n[16];
    char cont[16][64];
};

static enum np_status series_row(void *ctx, const struct np_store_point *pt)
{
    struct series_seen *ss = ctx;
    int i = atoi(pt->config + 1);
    ck_assert(i >= 0 && i < 16);
    ss->x[i] = pt->x;
    ss->n[i]++;
    snprintf(ss->cont[i], sizeof ss->cont[i], "%s", pt->container);
    return NP_OK;
}

static enum np_status tput_row(void *ctx, const struct np_store_rec *r)
{
    double *x = ctx; /* [i]: the stored tput of the run of configuration c<i> */
    int i = atoi(r->config + 1);
    ck_assert(i >= 0 && i < 16);
    x[i] = r->tput;
    return NP_OK;
}

static void run_series_tput(int pg)
{
    static const struct {
        double busbw, tpg, step;
        const char *status, *tag;
    } c[] = {
        {50, 1000, 2, "ok", "26.06"},          {NAN, 1000, 2, "ok", "26.06"},  {0, 0, 2, "ok", ""},
        {-1, -5, 4, "ok", "25.04"},            {NAN, NAN, NAN, "ok", "25.04"}, {NAN, 1000, 0, "ok", "25.04"},
        {NAN, 1000, 2, "failed", "25.04"},     {NAN, 1000, 2, "synthetic", ""}, {NAN, NAN, -2, "ok", "25.04"},
        {NAN, INFINITY, 3, "ok", "25.04"},     {INFINITY, NAN, 8, "ok", "25.04"}, {NAN, 0, 0, "ok", "25.04"},
        {NAN, NAN, 0.3, "incomplete", "25.04"}, {1e-300, 2, 4, "ok", "25.04"},
    };
    const size_t nc = sizeof c / sizeof c[0];
    store_loc(pg);
    struct np_store *s;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    struct np_store_rec rec[16];
    for (size_t i = 0; i < nc; i++) {
        char cfg[8];
        snprintf(cfg, sizeof cfg, "c%02zu", i);
        make_rec(&rec[i], (int)i, cfg, 1000, 1795132800LL + (long long)i, c[i].tag);
        if (!*c[i].tag) /* no tag: the image stands for it */
            snprintf(rec[i].container, sizeof rec[i].container, "registry.example/img%zu", i);
        rec[i].busbw_gbs = c[i].busbw;
        rec[i].tokens_per_s_per_gpu = c[i].tpg;
        rec[i].step_time_s = c[i].step;
        snprintf(rec[i].status, sizeof rec[i].status, "%s", c[i].status);
        ck_assert_int_eq(np_store_put(s, &rec[i], NULL, &err), NP_OK);
    }
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    struct np_store_filter all;
    memset(&all, 0, sizeof all);
    /* round 0: tput written by np_store_put (C); round 1: the store taken back to schema 4's shape and opened
     * again, tput made by the migration's SQL for the runs stored before: the same values, bit for bit */
    for (int round = 0; round < 2; round++) {
        if (round) {
            np_store_close(s);
            store_raw(pg, "DROP INDEX runs_series; ALTER TABLE runs DROP COLUMN tput; "
                          "UPDATE nemoperf_meta SET value = '4' WHERE key = 'schema_version'");
            ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
        }
        struct series_seen ss;
        memset(&ss, 0, sizeof ss);
        ck_assert_msg(np_store_series(s, &all, series_row, &ss, &err) == NP_OK, "%s", err.text);
        double stored[16]; /* the tput column itself (docs/history.md: empty when the run does not count) */
        for (size_t i = 0; i < 16; i++)
            stored[i] = -1;
        ck_assert_msg(np_store_select(s, &all, 0, NP_STORE_ALL, tput_row, stored, &err) == NP_OK, "%s", err.text);
        for (size_t i = 0; i < nc; i++) {
            /* the store keeps a non-finite value as unknown: C's rule on what it reads back */
            struct np_store_rec back = rec[i];
            back.busbw_gbs = isfinite(c[i].busbw) ? c[i].busbw : NAN;
            back.tokens_per_s_per_gpu = isfinite(c[i].tpg) ? c[i].tpg : NAN;
            double want = np_store_rec_tput(&back);
            int counts = (strcmp(c[i].status, "ok") == 0 || strcmp(c[i].status, "synthetic") == 0) && isfinite(want);
            ck_assert_msg(ss.n[i] == counts, "round %d case %zu: seen %d times, want %d", round, i, ss.n[i], counts);
            ck_assert_msg(counts ? stored[i] == want : isnan(stored[i]), "round %d case %zu: tput stored %.17g", round, i,
                          stored[i]);
            if (counts) {
                ck_assert_msg(ss.x[i] == want, "round %d case %zu: %.17g, want %.17g", round, i, ss.x[i], want);
                ck_assert_str_eq(ss.cont[i], *c[i].tag ? c[i].tag : rec[i].container);
            }
        }
        /* the answers themselves, written out: the rule's order (busbw, tokens/s/GPU, 1 / step time) */
        ck_assert(ss.x[0] == 50 && ss.x[1] == 1000 && ss.x[2] == 0.5 && ss.x[3] == 0.25 && ss.x[7] == 1000 &&
                  ss.x[5] == 1000 && ss.x[9] == 1.0 / 3 && ss.x[10] == 0.125 && ss.x[13] == 1e-300);
        ck_assert(!ss.n[4] && !ss.n[6] && !ss.n[8] && !ss.n[11] && !ss.n[12]);
    }
    for (size_t i = 0; i < nc; i++)
        free(rec[i].samples);
    np_store_close(s);
    store_cleanup(pg);
}

START_TEST(test_sqlite_series_tput) { run_series_tput(0); }
END_TEST
START_TEST(test_pg_series_tput) { run_series_tput(1); }
END_TEST

START_TEST(test_sqlite_idempotent) { run_idempotent(0); }
END_TEST
START_TEST(test_sqlite_killed) { run_killed(0); }
END_TEST
START_TEST(test_sqlite_concurrent) { run_concurrent(0); }
END_TEST
START_TEST(test_sqlite_newer_schema) { run_newer_schema(0); }
END_TEST
START_TEST(test_sqlite_bad_schema) { run_bad_schema(0); }
END_TEST
START_TEST(test_sqlite_selectors_history) { run_selectors_history(0); }
END_TEST
START_TEST(test_pg_idempotent) { run_idempotent(1); }
END_TEST
START_TEST(test_pg_killed) { run_killed(1); }
END_TEST
START_TEST(test_pg_concurrent) { run_concurrent(1); }
END_TEST
START_TEST(test_pg_newer_schema) { run_newer_schema(1); }
END_TEST
START_TEST(test_pg_bad_schema) { run_bad_schema(1); }
END_TEST
START_TEST(test_pg_selectors_history) { run_selectors_history(1); }
END_TEST

START_TEST(test_sqlite_corrupt)
{
    store_loc(0);
    FILE *f = fopen(loc, "w");
    for (int i = 0; i < 4096; i++)
        fputc("garbage!"[i % 8], f);
    fclose(f);
    struct np_store *s = NULL;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "not a database") && strstr(err.text, "corrupt"), "%s", err.text);
    store_cleanup(0);
}
END_TEST

/* stand-in: no NFS or Lustre here, so statfs's answer is injected (NEMOPERF_TEST_FS_MAGIC) */
START_TEST(test_sqlite_network_fs_refused)
{
    store_loc(0);
    struct np_store *s = NULL;
    struct np_error err;
    static const char *const magics[] = {"6969", "0BD00BD0", "FF534D42"};
    for (size_t i = 0; i < 3; i++) {
        setenv("NEMOPERF_TEST_FS_MAGIC", magics[i], 1);
        ck_assert_int_eq(np_store_open(loc, &s, &err), NP_E_INVALID);
        ck_assert_ptr_null(s);
        ck_assert_ptr_nonnull(strstr(err.text, "network file system"));
        ck_assert_ptr_nonnull(strstr(err.text, "PostgreSQL"));
        ck_assert_ptr_nonnull(strstr(err.text, "local disk"));
        ck_assert_int_eq(access(loc, F_OK), -1); /* nothing created */
    }
    setenv("NEMOPERF_TEST_FS_MAGIC", "EF53", 1); /* ext4 */
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    np_store_close(s);
    unsetenv("NEMOPERF_TEST_FS_MAGIC");
    ck_assert_int_eq(np_store_check_fs(loc, &err), NP_OK); /* this machine's real statfs: local */
    store_cleanup(0);
}
END_TEST

/* The one redactor (util/redact.c) on malformed URIs and conninfo strings, then on what the real libpq and the SQLite
 * path say of them through np_store_open: no password, whole, cut or decoded, in any message.  Before the redactor,
 * "postgresql://u:PASSWORD@[::1" came back whole in libpq's message (PQconninfo has nothing for a string it could not
 * parse). */
START_TEST(test_redact_malformed)
{
    static const struct { const char *in, *secret; } c[] = {
        {"postgresql://u:PASSWORD@[::1", "PASSWORD"},
        {"postgresql://u:PA%zzSS@host/db", "PA%zzSS"},
        {"postgresql://u:P%41SSWORD@[::1", "PASSWORD"},
        {"postgresql://u:PA/SS@h/db", "PA/SS"},
        {"postgresql://u:PA@SS@h/db", "PA@SS"},
        {"postgres://u:PA?SS@h:notaport/db", "PA?SS"},
        {"postgresql://h/db?sslmode=x&password=QSECRET&bad", "QSECRET"},
        {"postgresql://h/db?PassWord=QSECRET", "QSECRET"},
        {"host=x password=KVSECRET port=abc", "KVSECRET"},
        {"host=x password = 'KV \\' SECRET' port=abc", "SECRET"},
        {"host=x sslpassword=KVSECRET", "KVSECRET"},
        {"dbname=a password=KVSECRET", "KVSECRET"},
    };
    char b[1200], msg[600];
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        np_redact(c[i].in, NULL, b, sizeof b); /* the text alone */
        ck_assert_msg(!strstr(b, c[i].secret), "%s -> %s", c[i].in, b);
        ck_assert_ptr_nonnull(strstr(b, "***"));
        snprintf(msg, sizeof msg, "cannot connect: \"%s\" in %s", c[i].in, c[i].in);
        np_redact(msg, c[i].in, b, sizeof b);
        ck_assert_msg(!strstr(b, c[i].secret), "%s -> %s", msg, b);
    }
    /* what libpq makes of a password: cut (a port "PA"), decoded ("PASSWORD" of P%41SSWORD), quoted alone */
    np_redact("invalid integer value \"PA\" for connection option \"port\"", "postgresql://u:PA/SS@h/db", b, sizeof b);
    ck_assert_str_eq(b, "invalid integer value \"***\" for connection option \"port\"");
    np_redact("password authentication failed for PASSWORD", "postgresql://u:P%41SSWORD@h", b, sizeof b);
    ck_assert_str_eq(b, "password authentication failed for ***");
    np_redact("no secret in postgresql://alice@db/perf", "postgresql://alice@db/perf", b, sizeof b);
    ck_assert_str_eq(b, "no secret in postgresql://alice@db/perf");
    np_redact(NULL, NULL, b, sizeof b);
    ck_assert_str_eq(b, "");
    /* the real libpq and the SQLite path, through np_store_open */
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char path_in[300];
        const char *in = c[i].in;
        if (strncmp(in, "postgres", 8) != 0) { /* not a URI: a SQLite path in a folder that is not there */
            snprintf(path_in, sizeof path_in, "/nonexistent-np/%s", in);
            in = path_in;
        }
        struct np_store *st = NULL;
        struct np_error err;
        memset(&err, 0, sizeof err);
        if (np_store_open(in, &st, &err) == NP_OK) {
            np_store_close(st);
            continue;
        }
        np_error_format(&err, b, sizeof b);
        ck_assert_msg(!strstr(b, c[i].secret), "%s: %s", in, b);
    }
}
END_TEST

START_TEST(test_redact_and_selectors)
{
    char b[256];
    np_store_redact("postgresql://alice:s3cret@db.example:5432/perf", b, sizeof b);
    ck_assert_str_eq(b, "postgresql://alice:***@db.example:5432/perf");
    np_store_redact("postgres://alice@db/perf?password=s3cret&sslmode=require", b, sizeof b);
    ck_assert_str_eq(b, "postgres://alice@db/perf?password=***&sslmode=require");
    np_store_redact("postgresql://db/perf", b, sizeof b);
    ck_assert_str_eq(b, "postgresql://db/perf");
    char buf[256];
    struct np_store_filter f;
    struct np_error err;
    ck_assert_int_eq(np_store_filter_parse("db:job=1234,1240", buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_int_eq(f.njobs, 2);
    ck_assert_str_eq(f.jobs[1], "1240");
    ck_assert_int_eq(np_store_filter_parse("db:since=2026-11-01,until=2026-11-08", buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_int_eq(f.since, 1793491200LL);
    ck_assert_int_eq(f.until, 1793491200LL + 8 * 86400LL);
    ck_assert_int_eq(np_store_filter_parse("colour=red", buf, sizeof buf, &f, &err), NP_E_USAGE);
    ck_assert_ptr_nonnull(strstr(err.text, "'colour' is not a key"));
    ck_assert_int_eq(np_store_filter_parse("since=yesterday", buf, sizeof buf, &f, &err), NP_E_USAGE);
    ck_assert_int_eq(np_store_filter_parse("recipe=x,8b", buf, sizeof buf, &f, &err), NP_E_USAGE);
}
END_TEST

/* ---- runs as nemoperf-parse --store records them (np_store_rec_from_run), and the store's edges ---- */

static struct np_recipe_set kinds_recipes;

/* tests/data/parse/kinds: NeMo 2.0 runs of every kind (benchmark, profile, NCCL trace, checkpoint save and
 * load, each with its manifest) and a profile named by its folder only (no manifest) */
static void parse_kinds(int keep_samples, struct np_parse_result *res)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_dir("recipes", &kinds_recipes, &err) == NP_OK, "%s", err.text);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.keep_samples = keep_samples;
    o.jobs = 1;
    char *paths[] = {(char *)"tests/data/parse/kinds/in"};
    memset(res, 0, sizeof *res);
    ck_assert_int_eq(np_parse_paths(paths, 1, &o, &kinds_recipes, NULL, res), NP_OK);
    ck_assert_uint_eq(res->nruns, 6);
}

static void parse_kinds_free(struct np_parse_result *res)
{
    np_parse_result_free(res);
    np_recipe_set_free(&kinds_recipes);
}

/* The key is the cluster and the folder (the log too when no manifest says the folder is one run): one folder
 * stored under two clusters is two runs (a key without the cluster overwrote the first with the second); the
 * record says the run's kind, family and workload; the window's step times are copied.  The same runs stored
 * again a second later are the same runs (the time they were stored is not part of what changed: the mutation
 * test saw every re-store a second apart become "updated"). */
START_TEST(test_sqlite_keys_kinds_restore)
{
    struct np_parse_result res;
    parse_kinds(1, &res);
    store_loc(0);
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    static const char *const clusters[] = {"alpha", "beta"};
    int kinds[8] = {0}, nomanifest = 0;
    for (size_t i = 0; i < res.nruns; i++) {
        const struct np_run *run = &res.runs[i];
        ck_assert(np_store_identified(run));
        ck_assert_uint_gt(run->window.count, 0);
        struct np_store_rec rec[2];
        for (int c = 0; c < 2; c++) {
            struct np_store_ctx ctx = {clusters[c]};
            ck_assert_int_eq(np_store_rec_from_run(run, &ctx, &rec[c]), NP_OK);
            ck_assert_str_eq(rec[c].cluster, clusters[c]);
            size_t n = strlen(clusters[c]);
            ck_assert_msg(strncmp(rec[c].run_key, clusters[c], n) == 0 && rec[c].run_key[n] == ':', "key %s",
                          rec[c].run_key);
            ck_assert_str_eq(rec[c].kind, np_run_kind_name(run->id.kind));
            ck_assert_str_eq(rec[c].family, "nemo");
            ck_assert_str_eq(rec[c].workload, "");
            ck_assert_uint_eq(rec[c].nsamples, run->window.count);
            /* the store keeps the steady window's figures (what --compare and --history judge), never the last
             * step's: the step time is the window's mean, the throughput the window's */
            ck_assert(rec[c].step_time_s == run->window.mean_s);
            ck_assert(rec[c].tokens_per_s_per_gpu == run->steady.tokens_per_s_per_gpu);
            ck_assert(rec[c].tokens_per_s == run->steady.tokens_per_s);
            ck_assert(rec[c].mfu_percent == run->steady.mfu_percent || (isnan(rec[c].mfu_percent) && isnan(run->steady.mfu_percent)));
            ck_assert_int_eq(memcmp(rec[c].samples, run->samples, run->window.count * sizeof(double)), 0);
            enum np_store_outcome oc = NP_STORE_SAME;
            ck_assert_msg(np_store_put(s, &rec[c], &oc, &err) == NP_OK, "%s", err.text);
            ck_assert_int_eq(oc, NP_STORE_ADDED);
        }
        /* the same folder under both clusters: the keys differ only by the cluster */
        ck_assert_str_eq(rec[0].run_key + strlen("alpha"), rec[1].run_key + strlen("beta"));
        ck_assert_str_eq(rec[0].config, rec[1].config);
        const char *bar = strchr(rec[0].run_key, '|');
        if (!run->launch.present) { /* no manifest: the log names the run */
            nomanifest++;
            ck_assert_ptr_nonnull(bar);
            ck_assert_str_eq(bar + 1, strrchr(run->path, '/') + 1);
        } else {
            ck_assert_ptr_null(bar);
        }
        kinds[run->id.kind]++;
        np_store_rec_clear(&rec[0]);
        np_store_rec_clear(&rec[1]);
    }
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    ck_assert_int_eq(nomanifest, 1);
    ck_assert_int_eq(kinds[NP_KIND_BENCHMARK], 1);
    ck_assert_int_eq(kinds[NP_KIND_PROFILE], 2);
    ck_assert_int_eq(select_count(s, "kind=profile"), 4);
    ck_assert_int_eq(select_count(s, "kind=benchmark,cluster=beta"), 1);
    ck_assert_int_eq(select_count(s, "family=nemo"), 12);
    long long n = 0;
    ck_assert_int_eq(np_store_count(s, &n, &err), NP_OK);
    ck_assert_int_eq(n, 12);
    /* a second later, stored again: nothing added, nothing updated */
    sleep(1);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    for (size_t i = 0; i < res.nruns; i++) {
        struct np_store_ctx ctx = {"alpha"};
        struct np_store_rec rec;
        ck_assert_int_eq(np_store_rec_from_run(&res.runs[i], &ctx, &rec), NP_OK);
        enum np_store_outcome oc = NP_STORE_ADDED;
        ck_assert_msg(np_store_put(s, &rec, &oc, &err) == NP_OK, "%s", err.text);
        ck_assert_msg(oc == NP_STORE_SAME, "%s stored again a second later: outcome %d", rec.run_key, (int)oc);
        np_store_rec_clear(&rec);
    }
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    ck_assert_int_eq(np_store_count(s, &n, &err), NP_OK);
    ck_assert_int_eq(n, 12);
    np_store_close(s);
    /* the family and the synthetic workload the run's identity says (the parse names them; set here on a parsed
     * run: these logs are NeMo's), and no samples when the parse kept none */
    struct np_run r = res.runs[0];
    struct np_store_rec rec;
    snprintf(r.id.family, sizeof r.id.family, "automodel");
    r.id.synthetic = 1;
    ck_assert_int_eq(np_store_rec_from_run(&r, NULL, &rec), NP_OK);
    ck_assert_str_eq(rec.family, "automodel");
    ck_assert_str_eq(rec.workload, "synthetic");
    ck_assert_ptr_nonnull(strstr(rec.config, " synthetic"));
    np_store_rec_clear(&rec);
    r.samples = NULL; /* window.count steps, none kept (the parse's keep_samples 0) */
    ck_assert_int_eq(np_store_rec_from_run(&r, NULL, &rec), NP_OK);
    ck_assert_ptr_null(rec.samples);
    ck_assert_uint_eq(rec.nsamples, 0);
    np_store_rec_clear(&rec);
    parse_kinds_free(&res);
    store_cleanup(0);
}
END_TEST

/* A store of schema version 1 (as nemoperf wrote it before the family and workload columns: the family in "kind",
 * the kind of a profile or trace run only in its variant) is migrated on open: family, workload and kind each
 * say what version 1 meant, the rows and their keys kept, the version now 2. */
START_TEST(test_sqlite_migrate_v1)
{
    store_loc(0);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    static const char v1[] =
        "CREATE TABLE nemoperf_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO nemoperf_meta VALUES ('schema_version', '1');"
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, run_key TEXT NOT NULL, config TEXT, config_hash TEXT, kind TEXT, "
        "recipe TEXT, size TEXT, dtype TEXT, gpu TEXT, task TEXT, variant TEXT, system TEXT, gpus BIGINT, "
        "seq_len BIGINT, gbs BIGINT, nodes BIGINT, attempt BIGINT, cluster TEXT, job_id TEXT, started TEXT, "
        "ended TEXT, t BIGINT, container TEXT, container_tag TEXT, versions TEXT, status TEXT, verdict TEXT, "
        "steps BIGINT, window_first BIGINT, window_last BIGINT, step_time_s DOUBLE PRECISION, "
        "step_stdev_s DOUBLE PRECISION, tokens_per_s DOUBLE PRECISION, tokens_per_s_per_gpu DOUBLE PRECISION, "
        "tflops_per_gpu DOUBLE PRECISION, mfu_percent DOUBLE PRECISION, samples BYTEA, nemoperf_version TEXT, "
        "path TEXT, stored_at BIGINT, fingerprint TEXT NOT NULL);"
        "CREATE UNIQUE INDEX runs_key ON runs (run_key);"
        "INSERT INTO runs (run_key, config, kind, variant, recipe, status, t, tokens_per_s_per_gpu, fingerprint) VALUES "
        "('c:/a', 'llama3.1 8b', 'nemo', '', 'llama3.1', 'ok', 1, 1000, 'f1'),"
        "('c:/b', 'llama3.1 8b nsys', 'nemo', 'nsys', 'llama3.1', 'ok', 2, 1000, 'f2'),"
        "('c:/c', 'llama3.1 8b nccltrace', 'nemo', 'nccltrace', 'llama3.1', 'ok', 3, 1000, 'f3'),"
        "('c:/d', 'llama3.1 8b', 'automodel', '', 'llama3.1', 'ok', 4, 1000, 'f4'),"
        "('c:/e', 'llama3.1 8b synthetic', 'synthetic', '', 'llama3.1', 'synthetic', 5, 1000, 'f5');";
    ck_assert_int_eq(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    np_store_close(s);
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT run_key, kind, family, workload FROM runs ORDER BY run_key", -1,
                                        &q, NULL), SQLITE_OK);
    static const char *const want[][4] = {{"c:/a", "benchmark", "nemo", ""},
                                          {"c:/b", "profile", "nemo", ""},
                                          {"c:/c", "nccl-trace", "nemo", ""},
                                          {"c:/d", "benchmark", "automodel", ""},
                                          {"c:/e", "benchmark", "nemo", "synthetic"}};
    size_t k = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
        ck_assert_uint_lt(k, 5);
        for (int c = 0; c < 4; c++) {
            const char *v = (const char *)sqlite3_column_text(q, c);
            ck_assert_msg(v && strcmp(v, want[k][c]) == 0, "%s column %d: '%s', want '%s'", want[k][0], c,
                          v ? v : "(null)", want[k][c]);
        }
        k++;
    }
    ck_assert_uint_eq(k, 5);
    sqlite3_finalize(q);
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT value FROM nemoperf_meta WHERE key = 'schema_version'", -1, &q,
                                        NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    char ver[16];
    snprintf(ver, sizeof ver, "%d", NP_STORE_SCHEMA); /* migrated to the current version */
    ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), ver);
    sqlite3_finalize(q);
    sqlite3_close(db);
    store_cleanup(0);
}
END_TEST

static enum np_status energy_row(void *ctx, const struct np_store_rec *r)
{
    double *out = ctx; /* [0..1] the run 0's W/GPU and J/token, [2..3] run 1's (the stats selection: J/token) */
    int k = strcmp(r->config, "cfg v2") == 0 ? 0 : 2;
    out[k] = r->w_per_gpu;
    out[k + 1] = r->j_per_token;
    return NP_OK;
}

/* Schema 3 keeps a run's energy.  A store of version 2 (as nemoperf wrote it before the energy columns) is
 * migrated on open: its runs kept, their energy unknown (NULL, NAN when read), the version 3; a run stored
 * after it keeps its W/GPU and J/token, in every selection (--compare's statistics read J/token). */
START_TEST(test_sqlite_migrate_v2_energy)
{
    store_loc(0);
    put_runs(0, 1, NULL, NULL, NULL); /* the current schema, then taken back to version 2's shape */
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "ALTER TABLE runs DROP COLUMN w_per_gpu; ALTER TABLE runs DROP COLUMN j_per_token;"
                                      "ALTER TABLE runs DROP COLUMN busbw_gbs;" /* schema 4's, after energy's */
                                      "DROP INDEX runs_series; ALTER TABLE runs DROP COLUMN tput;" /* 5's */
                                      "UPDATE runs SET config = 'cfg v2';"
                                      "UPDATE nemoperf_meta SET value = '2' WHERE key = 'schema_version'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    struct np_store_rec r;
    make_rec(&r, 1, "cfg v3", 1000, 1700000000LL, "25.04");
    r.w_per_gpu = 612.5;
    r.j_per_token = 0.4375;
    enum np_store_outcome oc;
    ck_assert_msg(np_store_put(s, &r, &oc, &err) == NP_OK, "%s", err.text);
    np_store_rec_clear(&r);
    ck_assert_msg(np_store_commit(s, &err) == NP_OK, "%s", err.text);
    long long n = 0;
    ck_assert_int_eq(np_store_count(s, &n, &err), NP_OK);
    ck_assert_int_eq(n, 2);
    struct np_store_filter f;
    memset(&f, 0, sizeof f);
    for (int light = NP_STORE_ALL; light <= NP_STORE_STATS; light++) {
        double e[4] = {-1, -1, -1, -1};
        ck_assert_int_eq(np_store_select(s, &f, 1, light, energy_row, e, &err), NP_OK);
        ck_assert_msg(isnan(e[1]) && e[3] == 0.4375, "light %d: J/token %g and %g", light, e[1], e[3]);
        if (light != NP_STORE_STATS)
            ck_assert_msg(isnan(e[0]) && e[2] == 612.5, "light %d: W/GPU %g and %g", light, e[0], e[2]);
    }
    np_store_close(s);
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    sqlite3_stmt *q;
    char ver[16];
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT value FROM nemoperf_meta WHERE key = 'schema_version'", -1, &q,
                                        NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    snprintf(ver, sizeof ver, "%d", NP_STORE_SCHEMA); /* 3, then the versions after it */
    ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), ver);
    sqlite3_finalize(q);
    sqlite3_close(db);
    store_cleanup(0);
}
END_TEST

/* A run of a schema 4 store, stored again by this nemoperf once the store is migrated, is "unchanged": its
 * fingerprint covers the columns schema 4 had, not tput (made from them), and is the one schema 4's nemoperf
 * wrote for the same record (FP_SCHEMA4: this record stored by the tree before schema 5, b7be6c5). */
#define FP_SCHEMA4 "502ce63b9ab725b2"
START_TEST(test_sqlite_fingerprint_schema4)
{
    store_loc(0);
    struct np_store *s;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    struct np_store_rec r;
    make_rec(&r, 1, "cfg v4", 1000, 1700000000LL, "25.04");
    enum np_store_outcome oc;
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    ck_assert_msg(np_store_put(s, &r, &oc, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_ADDED);
    np_store_close(s);
    sqlite3 *db;
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT fingerprint, tput FROM runs", -1, &q, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), FP_SCHEMA4);
    ck_assert(sqlite3_column_double(q, 1) == 1000); /* counted by its tokens/s/GPU */
    sqlite3_finalize(q);
    sqlite3_close(db);
    /* taken back to schema 4 (the column and its index gone), opened (migrated), the same run stored again */
    store_raw(0, "DROP INDEX runs_series; ALTER TABLE runs DROP COLUMN tput; "
                 "UPDATE nemoperf_meta SET value = '4' WHERE key = 'schema_version'");
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    ck_assert_msg(np_store_put(s, &r, &oc, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_SAME);
    np_store_rec_clear(&r);
    np_store_close(s);
    store_cleanup(0);
}
END_TEST

/* A store at the current version is opened without taking its write lock: --history and --compare read while a
 * long --store holds it (SQLite's WAL lets them), and are not held up or refused (NEMOPERF_DB_TIMEOUT 1 s here). */
START_TEST(test_sqlite_open_while_written)
{
    store_loc(0);
    put_runs(0, 3, NULL, NULL, NULL);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "BEGIN IMMEDIATE; UPDATE runs SET steps = 51", NULL, NULL, NULL), SQLITE_OK);
    setenv("NEMOPERF_DB_TIMEOUT", "1", 1);
    struct np_store *s = NULL;
    struct np_error err;
    ck_assert_msg(np_store_open(loc, &s, &err) == NP_OK, "opened while another store writes: %s", err.text);
    ck_assert_int_eq(select_count(s, ""), 3);
    np_store_close(s);
    unsetenv("NEMOPERF_DB_TIMEOUT");
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    store_cleanup(0);
}
END_TEST

/* What each selection reads: the light one (--history's table) leaves out the samples and the path and keeps
 * the rest; the full one has them, as stored */
static enum np_status light_row(void *ctx, const struct np_store_rec *r)
{
    int *n = ctx;
    ck_assert_str_eq(r->config, "cfg a");
    ck_assert_int_eq(r->gpus, 8);
    ck_assert_int_eq(r->nodes, 1);
    ck_assert_int_eq(r->window_last, 44);
    ck_assert(fabs(r->tokens_per_s_per_gpu - 1000 - n[1] % 7) < 1e-9);
    if (n[2]) { /* full */
        ck_assert_uint_eq(r->nsamples, 34);
        ck_assert(r->samples[4] == r->step_time_s * 1.004);
        ck_assert_str_eq(strrchr(r->path, '/'), "/log.out");
    } else {
        ck_assert_uint_eq(r->nsamples, 0);
        ck_assert_str_eq(r->path, "");
    }
    n[0]++;
    n[1]++;
    return NP_OK;
}

START_TEST(test_sqlite_columns_read_back)
{
    store_loc(0);
    put_runs(0, 5, NULL, NULL, NULL);
    struct np_store *s;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    struct np_store_filter f;
    memset(&f, 0, sizeof f);
    for (int full = 0; full < 2; full++) {
        int n[3] = {0, 0, full};
        ck_assert_int_eq(np_store_select(s, &f, 0, !full, light_row, n, &err), NP_OK);
        ck_assert_int_eq(n[0], 5);
    }
    /* every job id a selector may hold (16), and one more refused */
    char sel[256] = "job=", buf[512];
    for (int i = 0; i < NP_STORE_FILTER_MAX; i++)
        snprintf(sel + strlen(sel), sizeof sel - strlen(sel), "%s%d", i ? "," : "", 1000 + i);
    ck_assert_int_eq(np_store_filter_parse(sel, buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_uint_eq(f.njobs, NP_STORE_FILTER_MAX);
    ck_assert_int_eq(select_count(s, sel), 5);
    strcat(sel, ",1999");
    ck_assert_int_eq(np_store_filter_parse(sel, buf, sizeof buf, &f, &err), NP_E_USAGE);
    ck_assert_ptr_nonnull(strstr(err.text, "at most 16 job ids"));
    /* gpus=1 is a GPU count, gpus=0 is not */
    ck_assert_int_eq(np_store_filter_parse("gpus=1", buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_int_eq(f.gpus, 1);
    ck_assert_int_eq(np_store_filter_parse("gpus=0", buf, sizeof buf, &f, &err), NP_E_USAGE);
    /* a value that matches nothing: the nearest stored one is said, an exact one says nothing */
    char hint[200];
    ck_assert_int_eq(np_store_filter_parse("recipe=llama3.2", buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_int_eq(np_store_nearest(s, &f, hint, sizeof hint, &err), NP_OK);
    ck_assert_str_eq(hint, "recipe=llama3.1");
    ck_assert_int_eq(np_store_filter_parse("recipe=llama3.1,container=25.4", buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_int_eq(np_store_nearest(s, &f, hint, sizeof hint, &err), NP_OK);
    ck_assert_str_eq(hint, "container=25.04");
    ck_assert_int_eq(np_store_filter_parse("recipe=llama3.1,container=25.04", buf, sizeof buf, &f, &err), NP_OK);
    ck_assert_int_eq(np_store_nearest(s, &f, hint, sizeof hint, &err), NP_OK);
    ck_assert_str_eq(hint, "");
    np_store_close(s);
    store_cleanup(0);
}
END_TEST

/* Where the store goes by default: $XDG_DATA_HOME/nemoperf/results.db, its folders made; a folder that cannot be
 * made (a file in the way) is an error naming it; a store in a folder that does not exist cannot have its file
 * system read (not the root's taken instead) */
START_TEST(test_sqlite_default_location)
{
    store_loc(0);
    char xdg[600], buf[1024], want[1100];
    struct np_error err;
    unsetenv("NEMOPERF_DB");
    snprintf(xdg, sizeof xdg, "%s/data/home//", tmpdir);
    setenv("XDG_DATA_HOME", xdg, 1);
    ck_assert_msg(np_store_default_location(buf, sizeof buf, &err) == NP_OK, "%s", err.text);
    snprintf(want, sizeof want, "%s/data/home/nemoperf/results.db", tmpdir);
    ck_assert_str_eq(buf, want);
    snprintf(want, sizeof want, "%s/data/home/nemoperf", tmpdir);
    ck_assert_int_eq(access(want, F_OK), 0);
    snprintf(xdg, sizeof xdg, "%s/file", tmpdir);
    FILE *f = fopen(xdg, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(xdg, sizeof xdg, "%s/file/sub", tmpdir);
    setenv("XDG_DATA_HOME", xdg, 1);
    ck_assert_int_eq(np_store_default_location(buf, sizeof buf, &err), NP_E_IO);
    ck_assert_ptr_nonnull(strstr(err.text, "cannot create the folder of the results store"));
    unsetenv("XDG_DATA_HOME");
    snprintf(buf, sizeof buf, "%s/no-such-folder/results.db", tmpdir);
    ck_assert_int_eq(np_store_check_fs(buf, &err), NP_E_IO);
    ck_assert_ptr_nonnull(strstr(err.text, "cannot read the folder of the results store"));
    store_cleanup(0);
}
END_TEST

/* where the store goes when --db is not given: NEMOPERF_DB as it is; XDG_DATA_HOME only when absolute (trailing
 * slashes dropped); else HOME's .local/share; neither: an error naming what to set.  The folder a path's file
 * system is read from: the path's own folder, "/" for a file at the root, "." for a bare name; which backend a
 * location names */
START_TEST(test_default_location_order)
{
    store_loc(0);
    char home[600], buf[1024], want[1100];
    struct np_error err;
    char *sx = getenv("XDG_DATA_HOME") ? strdup(getenv("XDG_DATA_HOME")) : NULL;
    char *sh = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("NEMOPERF_DB", "relative/results.db", 1);
    setenv("XDG_DATA_HOME", "/nonexistent-np/xdg", 1);
    ck_assert_int_eq(np_store_default_location(buf, sizeof buf, &err), NP_OK);
    ck_assert_str_eq(buf, "relative/results.db");
    setenv("NEMOPERF_DB", "", 1); /* empty: not given */
    snprintf(home, sizeof home, "%s/h///", tmpdir);
    setenv("HOME", home, 1);
    setenv("XDG_DATA_HOME", "relative-xdg", 1);
    ck_assert_msg(np_store_default_location(buf, sizeof buf, &err) == NP_OK, "%s", err.text);
    snprintf(want, sizeof want, "%s/h/.local/share/nemoperf/results.db", tmpdir);
    ck_assert_str_eq(buf, want);
    snprintf(want, sizeof want, "%s/h/.local/share/nemoperf", tmpdir);
    ck_assert_int_eq(access(want, F_OK), 0);
    unsetenv("XDG_DATA_HOME");
    ck_assert_int_eq(np_store_default_location(buf, sizeof buf, &err), NP_OK);
    snprintf(want, sizeof want, "%s/h/.local/share/nemoperf/results.db", tmpdir);
    ck_assert_str_eq(buf, want);
    setenv("HOME", "relative-home", 1);
    ck_assert_int_eq(np_store_default_location(buf, sizeof buf, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "no results store given and no HOME to put one in: set NEMOPERF_DB or --db");
    unsetenv("HOME");
    unsetenv("NEMOPERF_DB");
    ck_assert_int_eq(np_store_default_location(buf, sizeof buf, &err), NP_E_INVALID);
    if (sx)
        setenv("XDG_DATA_HOME", sx, 1);
    if (sh)
        setenv("HOME", sh, 1);
    free(sx);
    free(sh);
    /* which backend a location names: both PostgreSQL URI forms (nothing listens on port 1: refused, said as the
     * connection's failure, never a SQLite file of that name), an empty location, a SQLite path */
    static const char *const pg[] = {"postgresql://np@127.0.0.1:1/db", "postgres://np@127.0.0.1:1/db"};
    for (int i = 0; i < 2; i++) {
        struct np_store *ps = NULL;
        ck_assert_int_eq(np_store_open(pg[i], &ps, &err), NP_E_IO);
        ck_assert_ptr_null(ps);
        ck_assert_msg(strncmp(err.text, "cannot connect to the results store: ", 37) == 0, "%s: %s", pg[i], err.text);
    }
    struct np_store *es = NULL;
    ck_assert_int_eq(np_store_open("", &es, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "the location of the results store is empty");
    ck_assert_str_eq(np_store_backend_name(NULL), "none");
    ck_assert_int_eq(np_store_open(loc, &es, &err), NP_OK);
    ck_assert_str_eq(np_store_backend_name(es), "sqlite");
    np_store_close(es);
    /* the folder whose file system is read */
    unsetenv("NEMOPERF_TEST_FS_MAGIC");
    ck_assert_int_eq(np_store_check_fs("/results.db", &err), NP_OK);
    ck_assert_int_eq(np_store_check_fs("results.db", &err), NP_OK);
    ck_assert_int_eq(np_store_check_fs("/nonexistent-np/results.db", &err), NP_E_IO);
    snprintf(want, sizeof want, "cannot read the folder of the results store: %s", strerror(ENOENT));
    ck_assert_str_eq(err.text, want);
    store_cleanup(0);
}
END_TEST

/* a wrong password: the message names the failure, never the password */
START_TEST(test_pg_password_not_printed)
{
    char bad[1024];
    const char *uri = getenv("NP_TEST_PG_URI");
    const char *at = strrchr(uri, '@');
    snprintf(bad, sizeof bad, "postgresql://nemoperf:Wr0ngPassw0rdX%s", at);
    struct np_store *s = NULL;
    struct np_error err;
    ck_assert_int_eq(np_store_open(bad, &s, &err), NP_E_IO);
    ck_assert_ptr_null(strstr(err.text, "Wr0ngPassw0rdX"));
    ck_assert_ptr_null(strstr(err.source, "Wr0ngPassw0rdX"));
    ck_assert_ptr_nonnull(strstr(err.text, "password authentication failed"));
}
END_TEST

/* ---- a run's record and the selectors, each answer written here ---- */

static void rec_run(struct np_run *r, char *dir, char *path)
{
    memset(r, 0, sizeof *r);
    snprintf(r->id.recipe, sizeof r->id.recipe, "llama3.1");
    snprintf(r->id.model_size, sizeof r->id.model_size, "8b");
    snprintf(r->id.gpu_type, sizeof r->id.gpu_type, "h100");
    r->id.dtype = NP_DTYPE_BF16;
    r->id.gpus = 8;
    r->id.seq_len = 8192;
    r->id.gbs = 128;
    r->dir = dir;
    r->path = path;
    r->status = NP_RUN_OK;
    r->window.mean_s = 2.0;
    r->window.stdev_s = r->steady.tokens_per_s = r->steady.tokens_per_s_per_gpu = NAN;
    r->steady.model_tflops_per_gpu = r->steady.mfu_percent = r->energy.w_per_gpu = r->energy.j_per_token = NAN;
    r->nccl.peak_busbw = 0; /* as a parsed run that is not an nccl-tests step holds it */
}

static void rec_of(const struct np_run *r, const char *cluster, struct np_store_rec *rec)
{
    struct np_store_ctx ctx = {cluster};
    ck_assert_int_eq(np_store_rec_from_run(r, cluster ? &ctx : NULL, rec), NP_OK);
}

/* np_store_rec_from_run: the unit of comparison (config) for every family and kind, the key (cluster, folder,
 * log or nccl-tests step), the cluster (given, NEMOPERF_CLUSTER, the manifest's, this host), what the manifest
 * adds (image and its tag, nodes, NeMo version, parallelism in the hash only), the defaults (pretrain, nemo, no
 * nodes), the log's time, the throughput compared (bus bandwidth, tokens/s/GPU, steps/s) */
START_TEST(test_record_from_run)
{
    char root[256], dir[300], path[340], real[PATH_MAX], want[PATH_MAX + 64];
    snprintf(root, sizeof root, "%s/np-rec.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(dir, sizeof dir, "%s/run1", root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/log-1234.out", dir);
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fputs("a log\n", f);
    fclose(f);
    struct timespec ts[2] = {{1764000000, 0}, {1764000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
    ck_assert_ptr_nonnull(realpath(dir, real));
    char *saved = getenv("NEMOPERF_CLUSTER") ? strdup(getenv("NEMOPERF_CLUSTER")) : NULL;
    unsetenv("NEMOPERF_CLUSTER");

    struct np_run r;
    struct np_store_rec rec;
    rec_run(&r, dir, path);
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.config, "llama3.1 8b pretrain bf16 h100x8 seq8192 gbs128");
    ck_assert_str_eq(rec.cluster, "cl");
    snprintf(want, sizeof want, "cl:%s|log-1234.out", real); /* no manifest: the log names the run */
    ck_assert_str_eq(rec.run_key, want);
    ck_assert_str_eq(rec.kind, "benchmark");
    ck_assert_str_eq(rec.family, "nemo");
    ck_assert_str_eq(rec.task, "pretrain");
    ck_assert_str_eq(rec.workload, "");
    ck_assert_str_eq(rec.dtype, "bf16");
    ck_assert_str_eq(rec.status, "ok");
    ck_assert_str_eq(rec.verdict, "");
    ck_assert_str_eq(rec.container_tag, "");
    ck_assert_int_eq(rec.nodes, -1);
    ck_assert(rec.gpus == 8 && rec.seq_len == 8192 && rec.gbs == 128);
    ck_assert_int_eq(rec.t, 1764000000);
    ck_assert_str_eq(rec.ended, "2025-11-24T16:00:00Z");
    ck_assert(isnan(rec.busbw_gbs));
    ck_assert(rec.samples == NULL && rec.nsamples == 0);
    ck_assert_str_eq(rec.path, path);
    char hash0[17];
    snprintf(hash0, sizeof hash0, "%s", rec.config_hash);
    ck_assert_uint_eq(strlen(hash0), 16);
    /* the throughput compared: 1 / step time without tokens/s/GPU */
    ck_assert(np_store_rec_tput(&rec) == 0.5);
    rec.tokens_per_s_per_gpu = 1000;
    ck_assert(np_store_rec_tput(&rec) == 1000);
    rec.busbw_gbs = 0;
    ck_assert(np_store_rec_tput(&rec) == 1000);
    rec.busbw_gbs = 400;
    ck_assert(np_store_rec_tput(&rec) == 400);
    rec.busbw_gbs = INFINITY;
    rec.tokens_per_s_per_gpu = 0;
    ck_assert(np_store_rec_tput(&rec) == 0.5);
    rec.tokens_per_s_per_gpu = INFINITY;
    rec.step_time_s = 0;
    ck_assert(isnan(np_store_rec_tput(&rec)));
    rec.step_time_s = INFINITY;
    ck_assert(isnan(np_store_rec_tput(&rec)));
    np_store_rec_clear(&rec);
    np_store_rec_clear(NULL);

    /* the verdict, samples, a non-benchmark kind, -cv, the variant, synthetic, lora, an unknown GPU and size */
    double samples[3] = {1.9, 2.0, 2.1};
    r.verdict = NP_VERDICT_PASS;
    r.samples = samples;
    r.window.count = 3;
    r.id.kind = NP_KIND_PROFILE;
    snprintf(r.nccl.step, sizeof r.nccl.step, "not-a-step"); /* only an nccl-tests step is keyed by its step */
    rec_of(&r, "cl", &rec);
    snprintf(want, sizeof want, "cl:%s|log-1234.out", real);
    ck_assert_str_eq(rec.run_key, want);
    ck_assert(isnan(rec.busbw_gbs));
    ck_assert_str_eq(rec.config, "llama3.1 8b pretrain bf16 h100x8 seq8192 gbs128 profile");
    ck_assert_str_eq(rec.kind, "profile");
    ck_assert_str_eq(rec.verdict, "PASS");
    ck_assert_uint_eq(rec.nsamples, 3);
    ck_assert(rec.samples != samples && rec.samples[0] == 1.9 && rec.samples[2] == 2.1);
    ck_assert_str_ne(rec.config_hash, hash0);
    np_store_rec_clear(&rec);
    r.window.count = 0; /* no window: no samples */
    snprintf(r.id.variant, sizeof r.id.variant, "nsys");
    snprintf(r.id.config_variant, sizeof r.id.config_variant, "v1");
    snprintf(r.id.task, sizeof r.id.task, "lora");
    r.id.synthetic = 1;
    r.id.gpu_type[0] = r.id.model_size[0] = '\0';
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.config, "llama3.1 ? lora bf16 gpux8 seq8192 gbs128 v1 nsys synthetic");
    ck_assert_str_eq(rec.workload, "synthetic");
    ck_assert_str_eq(rec.task, "lora");
    ck_assert_str_eq(rec.variant, "nsys");
    ck_assert(rec.samples == NULL && rec.nsamples == 0);
    np_store_rec_clear(&rec);

    /* Megatron-Bridge: the -mr name carries the size, its precision, its container in the config and as the tag */
    rec_run(&r, dir, path);
    snprintf(r.id.recipe, sizeof r.id.recipe, "llama3_8b");
    snprintf(r.id.family, sizeof r.id.family, "mbridge");
    snprintf(r.id.precision, sizeof r.id.precision, "fp8_mx");
    snprintf(r.id.container, sizeof r.id.container, "26.08");
    r.id.dtype = NP_DTYPE_FP8;
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.config, "llama3_8b pretrain fp8_mx h100x8 seq8192 gbs128 26.08");
    ck_assert_str_eq(rec.family, "mbridge");
    ck_assert_str_eq(rec.dtype, "fp8_mx");
    ck_assert_str_eq(rec.container_tag, "26.08");
    np_store_rec_clear(&rec);
    snprintf(r.id.family, sizeof r.id.family, "nemo"); /* another family: the container is not in its config */
    r.id.recipe[0] = '\0';
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.config, "? 8b pretrain fp8_mx h100x8 seq8192 gbs128");
    ck_assert_str_eq(rec.container_tag, "26.08");
    np_store_rec_clear(&rec);

    /* an nccl-tests step: its own config, its bus bandwidth, a record per step */
    rec_run(&r, dir, path);
    r.id.kind = NP_KIND_NCCLTESTS;
    snprintf(r.id.model_size, sizeof r.id.model_size, "all_reduce_perf");
    snprintf(r.id.gpu_type, sizeof r.id.gpu_type, "gb200");
    snprintf(r.id.system, sizeof r.id.system, "DGX-GB200");
    r.id.gpus = 16;
    r.launch.present = 1;
    snprintf(r.nccl.step, sizeof r.nccl.step, "all_reduce_perf-n1-n2");
    r.nccl.peak_busbw = 412.5;
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.config, "nccl-tests all_reduce_perf gb200x16 DGX-GB200");
    ck_assert_str_eq(rec.kind, "nccl-tests");
    ck_assert(rec.busbw_gbs == 412.5 && np_store_rec_tput(&rec) == 412.5);
    snprintf(want, sizeof want, "cl:%s|all_reduce_perf-n1-n2", real);
    ck_assert_str_eq(rec.run_key, want);
    np_store_rec_clear(&rec);
    r.id.system[0] = r.id.model_size[0] = r.id.gpu_type[0] = '\0';
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.config, "nccl-tests ? gpux16");
    np_store_rec_clear(&rec);
    r.nccl.step[0] = '\0'; /* no step named: the folder, as a launched run */
    rec_of(&r, "cl", &rec);
    snprintf(want, sizeof want, "cl:%s", real);
    ck_assert_str_eq(rec.run_key, want);
    np_store_rec_clear(&rec);
    /* a folder that is gone and a log named without a folder: the names as given; no log time */
    char gone[] = "/nonexistent-np/run", bare[] = "log.out";
    rec_run(&r, gone, bare);
    rec_of(&r, "cl", &rec);
    ck_assert_str_eq(rec.run_key, "cl:/nonexistent-np/run|log.out");
    ck_assert(rec.t == 0 && rec.ended[0] == '\0');
    np_store_rec_clear(&rec);

    /* a manifest: the cluster it names (when none is given), the image and its tag, nodes, the NeMo version; the
     * parallelism changes the hash, not the config; the folder alone is the key */
    char man[400];
    snprintf(man, sizeof man, "%s/nemoperf.json", dir);
    static const char *const manifests[] = {
        "{\"cluster\": \"mcl\", \"config\": {\"image\": \"nvcr.io/nvidia/nemo:25.04\", \"nodes\": 2, "
        "\"nemo\": {\"container\": \"25.04.01\"}, \"tp\": 4, \"pp\": 2}}",
        "{\"cluster\": \"mcl\", \"config\": {\"image\": \"nvcr.io/nvidia/nemo:25.04\", \"nodes\": 2, "
        "\"nemo\": {\"container\": \"25.04.01\"}, \"tp\": 2, \"pp\": 4}}",
        "{\"cluster\": \"mcl\", \"config\": {\"image\": \"registry:5000/nemo\", \"nodes\": \"2\", "
        "\"nemo\": {\"container\": \"25.04.01\"}, \"tp\": 4, \"pp\": 2}}",
        "{\"config\": {\"image\": \"nemo\", \"tp\": 4, \"pp\": 2}}"};
    char hashes[3][17];
    for (int m = 0; m < 4; m++) {
        f = fopen(man, "w");
        ck_assert(f);
        fputs(manifests[m], f);
        fclose(f);
        rec_run(&r, dir, path);
        r.launch.present = 1;
        rec_of(&r, NULL, &rec);
        ck_assert_str_eq(rec.config, "llama3.1 8b pretrain bf16 h100x8 seq8192 gbs128");
        if (m < 3) {
            ck_assert_str_eq(rec.cluster, "mcl");
            snprintf(want, sizeof want, "mcl:%s", real);
            ck_assert_str_eq(rec.run_key, want);
            ck_assert_str_eq(rec.versions, "nemo 25.04.01");
            snprintf(hashes[m], sizeof hashes[m], "%s", rec.config_hash);
        }
        if (m < 2) {
            ck_assert_str_eq(rec.container, "nvcr.io/nvidia/nemo:25.04");
            ck_assert_str_eq(rec.container_tag, "25.04");
            ck_assert_int_eq(rec.nodes, 2);
        } else if (m == 2) {
            ck_assert_str_eq(rec.container_tag, "25.04.01"); /* the colon is the registry's port */
            ck_assert_int_eq(rec.nodes, -1);
        } else {
            ck_assert_str_eq(rec.container_tag, "");
            ck_assert_str_eq(rec.versions, "");
            char host[64] = "";
            gethostname(host, sizeof host - 1);
            ck_assert_str_eq(rec.cluster, host); /* nobody names the cluster: this host */
        }
        np_store_rec_clear(&rec);
        if (m == 0) { /* a cluster given wins over the manifest's; NEMOPERF_CLUSTER too */
            rec_of(&r, "given", &rec);
            ck_assert_str_eq(rec.cluster, "given");
            np_store_rec_clear(&rec);
            setenv("NEMOPERF_CLUSTER", "envcl", 1);
            rec_of(&r, NULL, &rec);
            ck_assert_str_eq(rec.cluster, "envcl");
            np_store_rec_clear(&rec);
            setenv("NEMOPERF_CLUSTER", "", 1);
            rec_of(&r, NULL, &rec);
            ck_assert_str_eq(rec.cluster, "mcl");
            np_store_rec_clear(&rec);
            unsetenv("NEMOPERF_CLUSTER");
        }
    }
    ck_assert_str_ne(hashes[0], hashes[1]);
    ck_assert_str_eq(hashes[0], hashes[2]);
    ck_assert_str_ne(hashes[0], hash0);
    if (saved) {
        setenv("NEMOPERF_CLUSTER", saved, 1);
        free(saved);
    }
    snprintf(want, sizeof want, "rm -rf '%s'", root);
    ck_assert_int_eq(system(want), 0);
}
END_TEST

static enum np_status sel_parse(const char *sel, struct np_store_filter *f, struct np_error *err)
{
    static char buf[512];
    return np_store_filter_parse(sel, buf, sizeof buf, f, err);
}

/* the selectors: every key to its field, the GPU count's limits, dates with and without a time (UTC, until the
 * day's end), a bare value only after job=, at most 16 jobs, the messages of what is refused */
START_TEST(test_selectors_parse)
{
    struct np_store_filter f;
    struct np_error err;
    ck_assert_int_eq(sel_parse("db:recipe=a,size=b,dtype=c,gpu=d,container=e,cluster=g,kind=h,family=i,config=j,"
                               "status=k", &f, &err), NP_OK);
    ck_assert(strcmp(f.recipe, "a") == 0 && strcmp(f.size, "b") == 0 && strcmp(f.dtype, "c") == 0 &&
              strcmp(f.gpu, "d") == 0 && strcmp(f.container, "e") == 0 && strcmp(f.cluster, "g") == 0 &&
              strcmp(f.kind, "h") == 0 && strcmp(f.family, "i") == 0 && strcmp(f.config, "j") == 0 &&
              strcmp(f.status, "k") == 0);
    ck_assert(f.gpus == 0 && f.since == 0 && f.until == 0 && f.njobs == 0);
    ck_assert_int_eq(sel_parse("model=70b", &f, &err), NP_OK);
    ck_assert_str_eq(f.size, "70b");
    ck_assert_int_eq(sel_parse("gpus=1", &f, &err), NP_OK);
    ck_assert_int_eq(f.gpus, 1);
    ck_assert_int_eq(sel_parse("gpus=10000000", &f, &err), NP_OK);
    ck_assert_int_eq(f.gpus, 10000000);
    static const char *const gbad[] = {"0", "10000001", "8x", "-8"};
    for (int i = 0; i < 4; i++) {
        char s[40], w[60];
        snprintf(s, sizeof s, "gpus=%s", gbad[i]);
        ck_assert_int_eq(sel_parse(s, &f, &err), NP_E_USAGE);
        snprintf(w, sizeof w, "gpus=%s: not a GPU count", gbad[i]);
        ck_assert_str_eq(err.text, w);
    }
    /* 2026-11-01 00:00:00 UTC is 1793491200 */
    ck_assert_int_eq(sel_parse("since=2026-11-01,until=2026-11-01", &f, &err), NP_OK);
    ck_assert(f.since == 1793491200LL && f.until == 1793491200LL + 86400);
    ck_assert_int_eq(sel_parse("since=2026-11-01T12:30Z,until=2026-11-01T12:30:15", &f, &err), NP_OK);
    ck_assert(f.since == 1793491200LL + 12 * 3600 + 30 * 60 && f.until == 1793491200LL + 12 * 3600 + 30 * 60 + 15);
    ck_assert_int_eq(sel_parse("since=1970-01-01T00:00:00Z", &f, &err), NP_OK); /* the epoch: a date, 0 */
    ck_assert(f.since == 0);
    ck_assert_int_eq(sel_parse("until=2026-11-01 06:00", &f, &err), NP_OK);
    ck_assert(f.until == 1793491200LL + 6 * 3600); /* a space for the T: a time given, no day added */
    static const char *const dbad[] = {"since=2026-11-01T12", "since=2026-11-01x", "until=2026-11-01T12:00:xx",
                                       "since=2026-11-01T12:00Zx", "since=yesterday"};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(sel_parse(dbad[i], &f, &err), NP_E_USAGE);
        char w[160], key[8];
        snprintf(key, sizeof key, "%.5s", dbad[i]);
        snprintf(w, sizeof w, "%s=%s: not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]Z, UTC)", key, strchr(dbad[i], '=') + 1);
        ck_assert_str_eq(err.text, w);
    }
    /* job ids: a bare value adds one; 16 at most */
    ck_assert_int_eq(sel_parse("job=1,2,3,recipe=x", &f, &err), NP_OK);
    ck_assert_uint_eq(f.njobs, 3);
    ck_assert(strcmp(f.jobs[0], "1") == 0 && strcmp(f.jobs[2], "3") == 0 && strcmp(f.recipe, "x") == 0);
    char many[200] = "job=0";
    for (int i = 1; i < 16; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", i);
    ck_assert_int_eq(sel_parse(many, &f, &err), NP_OK);
    ck_assert_uint_eq(f.njobs, 16);
    ck_assert_str_eq(f.jobs[15], "15");
    strcat(many, ",16");
    ck_assert_int_eq(sel_parse(many, &f, &err), NP_E_USAGE);
    ck_assert_str_eq(err.text, "job: at most 16 job ids");
    ck_assert_int_eq(sel_parse("recipe=x,y", &f, &err), NP_E_USAGE);
    ck_assert_str_eq(err.text, "'y': expected key=value (keys: recipe size dtype gpus gpu container cluster kind family "
                               "config status since until job)");
    ck_assert_int_eq(sel_parse("y", &f, &err), NP_E_USAGE);
    ck_assert_int_eq(sel_parse("recipe=", &f, &err), NP_E_USAGE);
    ck_assert_str_eq(err.text, "recipe: the value is empty");
    ck_assert_int_eq(sel_parse("job=1,", &f, &err), NP_OK); /* a trailing comma: nothing more */
    ck_assert_uint_eq(f.njobs, 1);
    char buf[8];
    ck_assert_int_eq(np_store_filter_parse("db:gpus=16", buf, sizeof buf, &f, &err), NP_OK); /* 7 bytes and a NUL */
    ck_assert_int_eq(f.gpus, 16);
    ck_assert_int_eq(np_store_filter_parse("gpus=160", buf, sizeof buf, &f, &err), NP_E_USAGE);
    ck_assert_str_eq(err.text, "'gpus=160' is too long");
}
END_TEST

static enum np_status side_a_id(void *ctx, const struct np_store_rec *r, unsigned sides)
{
    if (sides & 1)
        *(long long *)ctx = *(long long *)ctx ? -1 : r->id; /* -1: more than one run on side a */
    return NP_OK;
}

static enum np_status ids_row(void *ctx, const struct np_store_rec *r)
{
    long long *ids = ctx;
    ck_assert_int_lt(ids[0], 8);
    ids[1 + ids[0]++] = r->id;
    return NP_OK;
}

/* np_store_runs (what launch stores): the identified runs only, counted added / updated / unchanged, a figure changed
 * is an update, the default place when none is given; and a side chosen by run ids (what --history's change points
 * ask for) holds those runs only */
START_TEST(test_store_runs_counts_ids)
{
    store_loc(0);
    struct np_error err;
    struct np_run runs[4];
    char d0[] = "/nonexistent-np/run0", p0[] = "/nonexistent-np/run0/log.out";
    char d1[] = "/nonexistent-np/run1", p1[] = "/nonexistent-np/run1/log.out";
    rec_run(&runs[0], d0, p0);
    rec_run(&runs[1], d1, p1);
    runs[1].id.gpus = 16;
    rec_run(&runs[2], d1, p0);
    runs[2].status = NP_RUN_UNIDENTIFIED;
    rec_run(&runs[3], d0, p1);
    runs[3].id.recipe[0] = '\0';
    ck_assert(np_store_identified(&runs[0]) && !np_store_identified(&runs[2]) && !np_store_identified(&runs[3]));
    struct np_store_ctx ctx = {"c1"};
    size_t counts[3] = {0, 0, 0};
    ck_assert_msg(np_store_runs(loc, runs, 4, &ctx, counts, &err) == NP_OK, "%s", err.text);
    ck_assert(counts[NP_STORE_ADDED] == 2 && counts[NP_STORE_UPDATED] == 0 && counts[NP_STORE_SAME] == 0);
    runs[1].window.mean_s = 3.0;
    memset(counts, 0, sizeof counts);
    ck_assert_int_eq(np_store_runs(loc, runs, 4, &ctx, counts, &err), NP_OK);
    ck_assert(counts[NP_STORE_ADDED] == 0 && counts[NP_STORE_UPDATED] == 1 && counts[NP_STORE_SAME] == 1);
    char *sdb = getenv("NEMOPERF_DB") ? strdup(getenv("NEMOPERF_DB")) : NULL;
    setenv("NEMOPERF_DB", loc, 1);
    memset(counts, 0, sizeof counts);
    ck_assert_int_eq(np_store_runs(NULL, runs, 4, &ctx, counts, &err), NP_OK);
    ck_assert(counts[NP_STORE_ADDED] == 0 && counts[NP_STORE_UPDATED] == 0 && counts[NP_STORE_SAME] == 2);
    ck_assert_int_eq(np_store_runs(NULL, runs, 4, &ctx, NULL, &err), NP_OK);
    if (sdb) {
        setenv("NEMOPERF_DB", sdb, 1);
        free(sdb);
    } else
        unsetenv("NEMOPERF_DB");
    struct np_store *s;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    ck_assert_int_eq(select_count(s, "cluster=c1"), 2);
    ck_assert_int_eq(select_count(s, "gpus=16"), 1);
    long long ids[9] = {0};
    struct np_store_filter all;
    memset(&all, 0, sizeof all);
    ck_assert_int_eq(np_store_select(s, &all, 0, NP_STORE_ALL, ids_row, ids, &err), NP_OK);
    ck_assert_int_eq(ids[0], 2);
    for (int k = 0; k < 2; k++) {
        struct np_store_filter one = all;
        one.ids[one.nids++] = ids[1 + k];
        struct sides_count c = {{0, 0, 0, 0}, 0};
        ck_assert_int_eq(np_store_select_sides(s, &one, &all, sides_row, &c, &err), NP_OK);
        ck_assert_msg(c.n[1] == 0 && c.n[2] == 1 && c.n[3] == 1, "id %lld: %d %d %d", ids[1 + k], c.n[1], c.n[2], c.n[3]);
        long long on_a = 0;
        ck_assert_int_eq(np_store_select_sides(s, &one, &all, side_a_id, &on_a, &err), NP_OK);
        ck_assert_int_eq(on_a, ids[1 + k]);
        int n = 0;
        ck_assert_int_eq(np_store_select(s, &one, 0, NP_STORE_ALL, count_row, &n, &err), NP_OK);
        ck_assert_int_eq(n, 1);
    }
    np_store_close(s);
    store_cleanup(0);
}
END_TEST

static enum np_status series_stop(void *ctx, const struct np_store_point *pt)
{
    (void)pt;
    return ++*(int *)ctx == 1 ? NP_E_IO : NP_OK;
}

static enum np_status one_rec(void *ctx, const struct np_store_rec *r)
{
    struct np_store_rec *out = ctx;
    *out = *r;
    out->samples = r->nsamples ? malloc(r->nsamples * sizeof *r->samples) : NULL;
    if (r->nsamples)
        memcpy(out->samples, r->samples, r->nsamples * sizeof *r->samples);
    return NP_OK;
}

/* what makes a record stored again an update (each kind of column: an integer, a sample's place, a text), what an
 * unknown value is in the table (NULL: an empty text, a NAN or infinite figure, no samples), a single sample read
 * back, a side's bounds in C and in SQL (since and until exactly at a run's time, a GPU count above the one
 * asked for), a series whose callback fails stopping there, and the nearest stored value of a selection that
 * matches nothing */
START_TEST(test_sqlite_updates_nulls_bounds)
{
    store_loc(0);
    struct np_store *s;
    struct np_error err;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    struct np_store_rec r;
    enum np_store_outcome oc;
    make_rec(&r, 1, "cfg u", 1000, 1793491200LL, "25.04");
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_ADDED);
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_SAME);
    r.steps = 51; /* an integer */
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_UPDATED);
    double x = r.samples[0]; /* two samples swapped: the same mean, another window */
    r.samples[0] = r.samples[1];
    r.samples[1] = x;
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_UPDATED);
    strcpy(r.verdict, "PASS"); /* a text */
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(oc, NP_STORE_UPDATED);
    np_store_rec_clear(&r);
    /* unknowns are NULL; one sample is read back as one */
    make_rec(&r, 2, "cfg u", 900, 1793491200LL + 86400, "25.04");
    r.job_id[0] = '\0';
    r.mfu_percent = NAN;
    r.tflops_per_gpu = INFINITY;
    r.nsamples = 1;
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    double one = r.samples[0];
    np_store_rec_clear(&r);
    make_rec(&r, 3, "cfg u", 800, 1793491200LL + 2 * 86400, "25.04");
    free(r.samples);
    r.samples = NULL;
    r.nsamples = 0;
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(loc, &db), SQLITE_OK);
    static const char *const q[] = {
        "SELECT count(*) FROM runs WHERE job_id IS NULL AND run_key = 'test:/runs/2'",
        "SELECT count(*) FROM runs WHERE mfu_percent IS NULL AND tflops_per_gpu IS NULL AND run_key = 'test:/runs/2'",
        "SELECT count(*) FROM runs WHERE samples IS NULL AND run_key = 'test:/runs/3'",
        "SELECT count(*) FROM runs WHERE job_id = '' OR verdict = '' OR container = ''"};
    static const int want[] = {1, 1, 1, 0};
    for (int i = 0; i < 4; i++) {
        sqlite3_stmt *st;
        ck_assert_int_eq(sqlite3_prepare_v2(db, q[i], -1, &st, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
        ck_assert_msg(sqlite3_column_int(st, 0) == want[i], "%s: %d", q[i], sqlite3_column_int(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    np_store_rec_clear(&r);
    struct np_store_filter f;
    char buf[128];
    ck_assert_int_eq(np_store_filter_parse("job=", buf, sizeof buf, &f, &err), NP_E_USAGE);
    memset(&f, 0, sizeof f);
    f.config = "cfg u";
    f.since = 1793491200LL + 86400; /* run 2's time exactly */
    f.until = f.since + 1;
    memset(&r, 0, sizeof r);
    ck_assert_int_eq(np_store_select(s, &f, 0, NP_STORE_ALL, one_rec, &r, &err), NP_OK);
    ck_assert_uint_eq(r.nsamples, 1);
    ck_assert(r.samples[0] == one);
    ck_assert_str_eq(r.job_id, "");
    ck_assert(isnan(r.mfu_percent) && isnan(r.tflops_per_gpu));
    np_store_rec_clear(&r);
    /* a side's bounds, in C (the other side selects every run): since at a run's time includes it, until at a run's
     * time leaves it out, gpus=8 is 8 GPUs only */
    struct np_store_filter everything;
    memset(&everything, 0, sizeof everything);
    long long on_a = 0;
    ck_assert_int_eq(np_store_select_sides(s, &f, &everything, side_a_id, &on_a, &err), NP_OK);
    ck_assert_int_gt(on_a, 0); /* run 2 alone */
    f.since = 1793491200LL + 86400 - 1;
    f.until = 1793491200LL + 86400; /* until run 2's time: before it only */
    on_a = 0;
    ck_assert_int_eq(np_store_select_sides(s, &f, &everything, side_a_id, &on_a, &err), NP_OK);
    ck_assert_int_eq(on_a, 0);
    int n = 0; /* and in SQL */
    ck_assert_int_eq(np_store_select(s, &f, 0, NP_STORE_ALL, count_row, &n, &err), NP_OK);
    ck_assert_int_eq(n, 0);
    make_rec(&r, 4, "cfg u", 700, 1793491200LL + 3 * 86400, "25.04");
    r.gpus = 16;
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    np_store_rec_clear(&r);
    memset(&f, 0, sizeof f);
    f.gpus = 16;
    on_a = 0;
    ck_assert_int_eq(np_store_select_sides(s, &f, &everything, side_a_id, &on_a, &err), NP_OK);
    ck_assert_int_gt(on_a, 0); /* run 4 alone: not the 8-GPU runs */
    f.gpus = 8;
    on_a = 0;
    ck_assert_int_eq(np_store_select_sides(s, &f, &everything, side_a_id, &on_a, &err), NP_OK);
    ck_assert_int_eq(on_a, -1); /* the three 8-GPU runs, more than one */
    struct sides_count c = {{0, 0, 0, 0}, 0};
    ck_assert_int_eq(np_store_select_sides(s, &f, &everything, sides_row, &c, &err), NP_OK);
    ck_assert_msg(c.n[3] == 3 && c.n[2] == 1 && c.n[1] == 0, "gpus=8: %d both, %d other side", c.n[3], c.n[2]);
    n = 0; /* and in SQL */
    ck_assert_int_eq(np_store_select(s, &f, 0, NP_STORE_ALL, count_row, &n, &err), NP_OK);
    ck_assert_int_eq(n, 3);
    /* a series stops at its callback's error and returns it */
    int calls = 0;
    memset(&f, 0, sizeof f);
    ck_assert_int_eq(np_store_series(s, &f, series_stop, &calls, &err), NP_E_IO);
    ck_assert_int_eq(calls, 1);
    /* a selection matching nothing: the nearest stored value of its first key no run has (a prefix is near:
     * checkpoint -> checkpoint-save; a whole image; nothing near: no hint, the later keys not looked at) */
    make_rec(&r, 5, "cfg u", 700, 1793491200LL + 4 * 86400, "25.04");
    strcpy(r.kind, "checkpoint-save");
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    np_store_rec_clear(&r);
    make_rec(&r, 6, "cfg wide", 700, 1793491200LL + 5 * 86400, "25.04");
    ck_assert_int_eq(np_store_put(s, &r, &oc, &err), NP_OK);
    np_store_rec_clear(&r);
    static const char *const near[][2] = {
        {"kind=checkpoint", "kind=checkpoint-save"}, {"recipe=mixtral,size=8x", ""}, {"size=8x", "size=8b"},
        {"recipe=llama3.1,gpu=h10", "gpu=h100"}, {"status=okk", "status=ok"},
        {"container=nvcr.io/nvidia/nemo:25.05", "container=nvcr.io/nvidia/nemo:25.04"},
        {"container=nvcr.io/nvidia/nemo:25.04,cluster=tset", "cluster=test"}, {"config=cfg v", "config=cfg u"},
        {"config=cfg w", "config=cfg u"} /* one edit away beats a value it begins */};
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        char hint[200];
        ck_assert_int_eq(np_store_filter_parse(near[i][0], buf, sizeof buf, &f, &err), NP_OK);
        ck_assert_int_eq(np_store_nearest(s, &f, hint, sizeof hint, &err), NP_OK);
        ck_assert_msg(strcmp(hint, near[i][1]) == 0, "%s: '%s', want '%s'", near[i][0], hint, near[i][1]);
    }
    np_store_close(s);
    store_cleanup(0);
}
END_TEST

static enum np_status nsamples_row(void *ctx, const struct np_store_rec *r)
{
    size_t *n = ctx;
    ck_assert_uint_lt(n[0], 4);
    n[1 + n[0]++] = r->nsamples;
    if (r->nsamples) /* the window as stored: step k of a run of n samples is 1 + k / 1000 */
        ck_assert(r->samples[0] == 1.0 && r->samples[r->nsamples - 1] == 1 + (double)(r->nsamples - 1) / 1000);
    return NP_OK;
}

/* a transaction rolled back or left open at close keeps nothing of it, and the store takes the next one; rows of
 * a selection whose windows grow (3, then 40 steps) read back whole */
START_TEST(test_sqlite_rollback_windows)
{
    store_loc(0);
    struct np_store *s;
    struct np_error err;
    struct np_store_rec r;
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    make_rec(&r, 1, "cfg r", 1000, 1793491200LL, "25.04");
    ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
    np_store_rec_clear(&r);
    np_store_rollback(s);
    ck_assert_int_eq(select_count(s, "config=cfg r"), 0);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    make_rec(&r, 2, "cfg r", 1000, 1793491200LL, "25.04");
    ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
    np_store_rec_clear(&r);
    np_store_close(s); /* never committed */
    ck_assert_int_eq(np_store_open(loc, &s, &err), NP_OK);
    ck_assert_int_eq(select_count(s, "config=cfg r"), 0);
    ck_assert_int_eq(np_store_begin(s, &err), NP_OK);
    static const size_t lens[3] = {3, 40, 0};
    for (int i = 0; i < 3; i++) {
        make_rec(&r, 3 + i, "cfg r", 1000, 1793491200LL + i, "25.04");
        free(r.samples);
        r.samples = NULL;
        r.nsamples = lens[i];
        if (lens[i]) {
            r.samples = malloc(lens[i] * sizeof *r.samples);
            for (size_t k = 0; k < lens[i]; k++)
                r.samples[k] = 1 + (double)k / 1000;
        }
        ck_assert_int_eq(np_store_put(s, &r, NULL, &err), NP_OK);
        np_store_rec_clear(&r);
    }
    ck_assert_int_eq(np_store_commit(s, &err), NP_OK);
    size_t n[5] = {0};
    struct np_store_filter f;
    memset(&f, 0, sizeof f);
    f.config = "cfg r";
    ck_assert_int_eq(np_store_select(s, &f, 0, NP_STORE_ALL, nsamples_row, n, &err), NP_OK);
    ck_assert(n[0] == 3 && n[1] == 3 && n[2] == 40 && n[3] == 0);
    np_store_close(s);
    np_store_rollback(NULL);
    store_cleanup(0);
}
END_TEST

/* ---- an independent computation of the comparison (written here, not calling compare.c's helpers): the
 * t quantile by Simpson's rule on the t density and bisection, Welch's t on the logs, the batch means of
 * the latest 4 x floor(n/4) steps and the AR(1) floor over those same steps; np_compare_* must agree. */
static double ref_t_pdf(double x, double df)
{
    return exp(lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * log(df * M_PI) - (df + 1) / 2 * log1p(x * x / df));
}

static double ref_t_cdf_pos(double t, double df) /* P(T <= t), t >= 0 */
{
    int n = 20000;
    double h = t / n, s = ref_t_pdf(0, df) + ref_t_pdf(t, df);
    for (int i = 1; i < n; i++)
        s += (i % 2 ? 4 : 2) * ref_t_pdf(i * h, df);
    return 0.5 + s * h / 3;
}

static double ref_t_q975(double df) /* bisection to 2e-4, then Newton's steps on the same cdf (each costs 20000) */
{
    double lo = 0, hi = 200;
    for (int i = 0; i < 20; i++) {
        double mid = (lo + hi) / 2;
        if (ref_t_cdf_pos(mid, df) < 0.975)
            lo = mid;
        else
            hi = mid;
    }
    double t = (lo + hi) / 2;
    for (int i = 0; i < 4; i++)
        t -= (ref_t_cdf_pos(t, df) - 0.975) / ref_t_pdf(t, df);
    return t;
}

struct ref_cmp {
    double diff, lo, hi, df, d, se;
};

/* Welch on samples y (already logs of throughput), one-sample sides given the other's variance */
static void ref_welch(const double *yb, size_t nb, const double *yc, size_t nc, double vb_floor, double vc_floor,
                      struct ref_cmp *r)
{
    double mb = 0, mc = 0, vb = 0, vc = 0;
    for (size_t i = 0; i < nb; i++)
        mb += yb[i] / (double)nb;
    for (size_t i = 0; i < nc; i++)
        mc += yc[i] / (double)nc;
    for (size_t i = 0; i < nb; i++)
        vb += (yb[i] - mb) * (yb[i] - mb) / (double)(nb > 1 ? nb - 1 : 1);
    for (size_t i = 0; i < nc; i++)
        vc += (yc[i] - mc) * (yc[i] - mc) / (double)(nc > 1 ? nc - 1 : 1);
    if (nb == 1)
        vb = vc;
    if (nc == 1)
        vc = vb;
    vb = vb > vb_floor ? vb : vb_floor;
    vc = vc > vc_floor ? vc : vc_floor;
    double qb = vb / (double)nb, qc = vc / (double)nc;
    double den = (nb > 1 ? qb * qb / (double)(nb - 1) : 0) + (nc > 1 ? qc * qc / (double)(nc - 1) : 0);
    r->df = (qb + qc) * (qb + qc) / den;
    double t = ref_t_q975(r->df), se = sqrt(qb + qc);
    r->d = mc - mb;
    r->se = se;
    r->diff = (exp(mc - mb) - 1) * 100;
    r->lo = (exp(mc - mb - t * se) - 1) * 100;
    r->hi = (exp(mc - mb + t * se) - 1) * 100;
}

/* the AR(1) variance of the batch-mean process (times the number of batches): over steps x[0..n) */
static double ref_ar1_batch_var(const double *x, size_t n, size_t batches)
{
    double m = 0, c0 = 0, c1 = 0;
    for (size_t i = 0; i < n; i++)
        m += -log(x[i]) / (double)n;
    for (size_t i = 0; i < n; i++) {
        c0 += (-log(x[i]) - m) * (-log(x[i]) - m);
        if (i > 0)
            c1 += (-log(x[i]) - m) * (-log(x[i - 1]) - m);
    }
    double r = c1 / c0 + (1 + 4 * c1 / c0) / (double)n;
    r = r < 0 ? 0 : r > 0.95 ? 0.95 : r;
    return c0 / (double)(n - 1) / (double)n * (1 + r) / (1 - r) * (double)batches;
}

static void ref_steps(const double *b, size_t nb, const double *c, size_t nc, struct ref_cmp *r)
{
    double yb[4], yc[4];
    size_t lb = nb / 4, lc = nc / 4, sb = nb - 4 * lb, sc = nc - 4 * lc;
    for (int k = 0; k < 4; k++) {
        yb[k] = yc[k] = 0;
        for (size_t i = 0; i < lb; i++)
            yb[k] -= log(b[sb + k * lb + i]) / (double)lb;
        for (size_t i = 0; i < lc; i++)
            yc[k] -= log(c[sc + k * lc + i]) / (double)lc;
    }
    ref_welch(yb, 4, yc, 4, ref_ar1_batch_var(b + sb, nb - sb, 4), ref_ar1_batch_var(c + sc, nc - sc, 4), r);
}

#define CK_NEAR(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-6 * (1 + fabs(b)), "%s = %.9g, want %.9g", #a, (a), (b))

/* One run against two, both ways round: the lone side is given the other side's spread (Welch's df from that side
 * alone), so 2 runs against 1 has an interval and a verdict, as 1 against 2 does, against the reference computation
 * (a side of one with no spread of its own would be "too few samples for an interval"). */
START_TEST(test_two_against_one)
{
    double two[2] = {100.0, 103.0}, one[1] = {120.0}, l2[2] = {log(100.0), log(103.0)}, l1[1] = {log(120.0)};
    struct np_cmp_result r;
    struct ref_cmp w;
    np_compare_runs(two, 2, one, 1, 2.0, &r);
    ref_welch(l2, 2, l1, 1, 0, 0, &w);
    ck_assert_msg(r.why == NULL, "%s", r.why);
    ck_assert_int_eq(r.base.n, 2);
    ck_assert_int_eq(r.cand.n, 1);
    CK_NEAR(r.diff_pct, w.diff);
    CK_NEAR(r.diff_lo, w.lo);
    CK_NEAR(r.diff_hi, w.hi);
    CK_NEAR(r.df, w.df); /* qb = v / 2, qc = v: df = (1.5 v)^2 / ((v / 2)^2 / 1) = 9 */
    CK_NEAR(r.df, 9.0);
    ck_assert_int_eq(r.verdict, w.lo > 2.0 ? NP_CMP_FASTER : w.hi < -2.0 ? NP_CMP_SLOWER : NP_CMP_INCONCLUSIVE);
    np_compare_runs(one, 1, two, 2, 2.0, &r);
    ref_welch(l1, 1, l2, 2, 0, 0, &w);
    ck_assert_msg(r.why == NULL, "%s", r.why);
    CK_NEAR(r.diff_pct, w.diff);
    CK_NEAR(r.diff_lo, w.lo);
    CK_NEAR(r.diff_hi, w.hi);
    /* one against one: no spread on either side */
    np_compare_runs(one, 1, two, 1, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_str_eq(r.why, "too few samples for an interval");
}
END_TEST

START_TEST(test_reference_computation)
{
    struct np_cmp_result r;
    struct ref_cmp w;
    /* unequal run counts, throughputs: 3 against 5 */
    double b3[3] = {100.0, 103.0, 98.5}, c5[5] = {106.0, 104.2, 108.9, 105.5, 107.1};
    double lb3[3], lc5[5];
    for (int i = 0; i < 3; i++)
        lb3[i] = log(b3[i]);
    for (int i = 0; i < 5; i++)
        lc5[i] = log(c5[i]);
    np_compare_runs(b3, 3, c5, 5, 2.0, &r);
    ref_welch(lb3, 3, lc5, 5, 0, 0, &w);
    CK_NEAR(r.diff_pct, w.diff);
    CK_NEAR(r.diff_lo, w.lo);
    CK_NEAR(r.diff_hi, w.hi);
    CK_NEAR(r.df, w.df);
    ck_assert_int_eq(r.base.n, 3);
    ck_assert_int_eq(r.cand.n, 5);
    /* a side's own interval: exp(mean +- t(n-1) s/sqrt(n)) */
    double m = (lc5[0] + lc5[1] + lc5[2] + lc5[3] + lc5[4]) / 5, v = 0;
    for (int i = 0; i < 5; i++)
        v += (lc5[i] - m) * (lc5[i] - m) / 4;
    CK_NEAR(r.cand.lo, exp(m - ref_t_q975(4) * sqrt(v / 5)));
    CK_NEAR(r.cand.hi, exp(m + ref_t_q975(4) * sqrt(v / 5)));
    CK_NEAR(r.cand.mean, exp(m));
    ck_assert_int_eq(r.verdict, w.lo > 2.0 ? NP_CMP_FASTER : NP_CMP_INCONCLUSIVE);
    /* the t cdf on both of its branches (x = df/(df+t^2) either side of (a+1)/(a+b+2)) */
    double ts[] = {0.05, 0.3, 1.0, 2.0, 4.5}, dfs[] = {1, 2.5, 4, 11, 60, 400};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
        for (size_t j = 0; j < sizeof dfs / sizeof *dfs; j++) {
            double want = ref_t_cdf_pos(ts[i], dfs[j]);
            ck_assert_msg(fabs(np_t_cdf(ts[i], dfs[j]) - want) < 1e-7, "t cdf(%g, %g)", ts[i], dfs[j]);
            ck_assert_msg(fabs(np_t_cdf(-ts[i], dfs[j]) - (1 - want)) < 1e-7, "t cdf(-%g, %g)", ts[i], dfs[j]);
        }
    /* about N more runs, from the estimate, its standard error and the nearer margin (3 against 5 runs:
     * counted from the smaller side) */
    double b3n[3] = {100.0, 104.0, 97.0}, c5n[5] = {106.0, 103.0, 108.5, 104.0, 107.5}, l3n[3], l5n[5];
    for (int i = 0; i < 3; i++)
        l3n[i] = log(b3n[i]);
    for (int i = 0; i < 5; i++)
        l5n[i] = log(c5n[i]);
    np_compare_runs(b3n, 3, c5n, 5, 2.0, &r);
    ref_welch(l3n, 3, l5n, 5, 0, 0, &w);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
    double need = fabs(fabs(w.d) - log1p(0.02)), z = ref_t_q975(w.df + 2 * 3);
    long more = (long)ceil(3 * (z * w.se / need) * (z * w.se / need) - 3);
    ck_assert_int_eq(r.more_runs, more < 1 ? 1 : more);
    ck_assert_int_lt(r.more_runs, NP_CMP_MORE_MAX);
    ck_assert_int_gt(r.more_runs, 1);
    /* a run without a throughput (0) is not a run */
    double bz[4] = {100.0, 0, 103.0, 98.5};
    np_compare_runs(bz, 4, c5, 5, 2.0, &r);
    ck_assert_int_eq(r.base.n, 3);
    ref_welch(lb3, 3, lc5, 5, 0, 0, &w);
    CK_NEAR(r.diff_lo, w.lo);
    /* one run against three: the single run is given the three's spread */
    double one[1] = {110.0}, three[3] = {100.0, 100.4, 99.7}, l1[1] = {log(110.0)}, l3[3];
    for (int i = 0; i < 3; i++)
        l3[i] = log(three[i]);
    np_compare_runs(three, 3, one, 1, 2.0, &r);
    ref_welch(l3, 3, l1, 1, 0, 0, &w);
    CK_NEAR(r.diff_lo, w.lo);
    CK_NEAR(r.diff_hi, w.hi);
    ck_assert_int_eq(r.verdict, NP_CMP_FASTER);
    np_compare_runs(one, 1, three, 3, 2.0, &r); /* and the single run as the baseline */
    ref_welch(l1, 1, l3, 3, 0, 0, &w);
    CK_NEAR(r.diff_lo, w.lo);
    CK_NEAR(r.diff_hi, w.hi);
    CK_NEAR(r.df, w.df);
    ck_assert_int_eq(r.verdict, NP_CMP_SLOWER);
    /* steps, unequal lengths (34 and 41: 2 and 1 earliest steps left out), a slow first step and drift */
    double sa[34], sc41[41];
    rng_state = 99;
    gen_ar1(sa, 34, 1.0, 0.01, 0.6);
    gen_ar1(sc41, 41, 0.97, 0.01, 0.6);
    sa[0] = 3.0;
    sc41[0] = 2.5;
    np_compare_steps(sa, 34, sc41, 41, 2.0, &r);
    ref_steps(sa, 34, sc41, 41, &w);
    CK_NEAR(r.diff_pct, w.diff);
    CK_NEAR(r.diff_lo, w.lo);
    CK_NEAR(r.diff_hi, w.hi);
    CK_NEAR(r.df, w.df);
}
END_TEST

/* one slow first step that the batch means leave out does not widen the interval (the AR(1) floor is
 * computed over the steps the batch means use): 34 steps, identical windows but for step 0 */
START_TEST(test_slow_first_step)
{
    double a[34], b[34];
    rng_state = 7;
    gen_ar1(a, 34, 1.0, 0.003, 0.3);
    memcpy(b, a, sizeof a);
    struct np_cmp_result clean, slow;
    np_compare_steps(a, 34, b, 34, 2.0, &clean);
    b[0] = 4.0; /* a 4x first step, outside the 4 batches of 8 */
    np_compare_steps(a, 34, b, 34, 2.0, &slow);
    CK_NEAR(slow.diff_lo, clean.diff_lo);
    CK_NEAR(slow.diff_hi, clean.diff_hi);
    ck_assert_int_eq(slow.verdict, NP_CMP_SAME);
}
END_TEST

/* the verdict's boundaries: an interval ending exactly at +-min-effect is SAME, not FASTER/SLOWER;
 * identical runs with --min-effect 0 are SAME */
START_TEST(test_boundaries)
{
    struct np_cmp_result r;
    double b[3] = {100, 100, 100}, up[3] = {102.5, 102.5, 102.5}, down[3] = {97.5, 97.5, 97.5};
    np_compare_runs(b, 3, b, 3, 0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_SAME);
    np_compare_runs(b, 3, up, 3, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_FASTER);
    double edge = r.diff_lo; /* zero spread: diff_lo == diff_hi == diff_pct */
    np_compare_runs(b, 3, up, 3, edge, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_SAME);
    np_compare_runs(b, 3, down, 3, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_SLOWER);
    edge = -r.diff_hi;
    np_compare_runs(b, 3, down, 3, edge, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_SAME);
    np_compare_runs(b, 3, down, 3, edge * 0.999, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_SLOWER);
}
END_TEST

/* the comparison's edges, each answer computed here: names of every verdict and method; the t distribution's
 * domain (no df, no p, infinite t, the median); runs without a throughput on either side (0, negative, NAN,
 * infinite: not runs); one run a side; the mean change of logs against the mean change of throughputs; step
 * windows of exactly 8 and 7 steps; a step that is not a positive number anywhere in the window, the steps the
 * batch means leave out included; two runs against three, each side its own spread; constant windows (no spread:
 * the exact ratio, 4 + 4 - 2 degrees of freedom); an estimate exactly on the margin (more runs than can be
 * counted); the AR(1) floor's clamps at 0 and 0.95 */
START_TEST(test_compare_edges)
{
    ck_assert_str_eq(np_cmp_verdict_name(NP_CMP_SAME), "SAME");
    ck_assert_str_eq(np_cmp_verdict_name(NP_CMP_FASTER), "FASTER");
    ck_assert_str_eq(np_cmp_verdict_name(NP_CMP_SLOWER), "SLOWER");
    ck_assert_str_eq(np_cmp_verdict_name(NP_CMP_INCONCLUSIVE), "INCONCLUSIVE");
    ck_assert_str_eq(np_cmp_verdict_name((enum np_cmp_verdict)99), "INCONCLUSIVE");
    ck_assert_str_eq(np_cmp_method_name(NP_CMP_WELCH_RUNS), "welch-runs");
    ck_assert_str_eq(np_cmp_method_name(NP_CMP_BATCH_MEANS), "batch-means");
    ck_assert_str_eq(np_cmp_method_name(NP_CMP_NONE), "none");
    /* the t distribution's domain */
    ck_assert(isnan(np_t_cdf(1, 0)) && isnan(np_t_cdf(1, -2)) && isnan(np_t_cdf(NAN, 5)) && isnan(np_t_cdf(1, NAN)));
    ck_assert(np_t_cdf(INFINITY, 3) == 1 && np_t_cdf(-INFINITY, 3) == 0);
    ck_assert(np_t_cdf(1e-6, 3) > 0.5 && np_t_cdf(-1e-6, 3) < 0.5);
    ck_assert(isnan(np_t_quantile(0, 5)) && isnan(np_t_quantile(1, 5)) && isnan(np_t_quantile(-0.1, 5)) &&
              isnan(np_t_quantile(1.1, 5)) && isnan(np_t_quantile(NAN, 5)));
    ck_assert(isnan(np_t_quantile(0.975, 0)) && isnan(np_t_quantile(0.975, -1)) && isnan(np_t_quantile(0.975, NAN)));
    ck_assert(np_t_quantile(0.5, 7) == 0);
    /* to 1e-10: the quantile's iteration runs to the end, not a few digits */
    ck_assert_double_eq_tol(np_t_quantile(0.975, 10), 2.2281388519862742, 1e-10); /* 40-digit values, mpmath */
    ck_assert_double_eq_tol(np_t_quantile(0.975, 1), 12.706204736174693, 1e-9);
    ck_assert_double_eq_tol(np_t_quantile(0.95, 6), 1.9431802805153026, 1e-10);
    ck_assert_double_eq_tol(np_t_quantile(0.975, 3.5), 2.9400886379827288, 1e-10);
    ck_assert_double_eq_tol(np_t_quantile(0.75, 1), 1.0, 1e-9); /* Cauchy: tan(pi/4) */
    ck_assert_double_eq_tol(np_t_quantile(0.25, 1), -1.0, 1e-9);
    ck_assert_double_eq_tol(np_t_quantile(0.9, 2), (2 * 0.9 - 1) / sqrt(2 * 0.9 * 0.1), 1e-9); /* df 2: (2p-1)/sqrt(2p(1-p)) */

    struct np_cmp_result r;
    double b3[3] = {100.0, 103.0, 98.5}, c5[5] = {106.0, 104.2, 108.9, 105.5, 107.1};
    /* runs without a throughput, on each side */
    double none[4] = {0, -5, NAN, INFINITY};
    for (int side = 0; side < 2; side++) {
        if (side)
            np_compare_runs(b3, 3, none, 4, 2.0, &r);
        else
            np_compare_runs(none, 4, c5, 5, 2.0, &r);
        ck_assert_int_eq(r.method, NP_CMP_WELCH_RUNS);
        ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
        ck_assert_str_eq(r.why, side ? "no candidate run with a throughput" : "no baseline run with a throughput");
        ck_assert_uint_eq(r.base.n, side ? 3 : 0);
        ck_assert_uint_eq(r.cand.n, side ? 0 : 5);
        ck_assert(isnan(r.diff_pct) && isnan(r.diff_lo) && isnan(r.diff_hi) && isnan(r.df));
        ck_assert_int_eq(r.more_runs, -1);
        ck_assert(r.min_effect_pct == 2.0);
    }
    /* an infinite or NAN throughput among real ones is left out: the same answer as without it, to the bit */
    double b3x[6] = {INFINITY, 100.0, NAN, 103.0, -INFINITY, 98.5}, c5x[7] = {106.0, 104.2, INFINITY, 108.9, 105.5, NAN, 107.1};
    struct np_cmp_result clean;
    np_compare_runs(b3, 3, c5, 5, 2.0, &clean);
    np_compare_runs(b3x, 6, c5x, 7, 2.0, &r);
    ck_assert_uint_eq(r.base.n, 3);
    ck_assert_uint_eq(r.cand.n, 5);
    ck_assert(r.diff_pct == clean.diff_pct && r.diff_lo == clean.diff_lo && r.diff_hi == clean.diff_hi &&
              r.df == clean.df && r.verdict == clean.verdict && r.more_runs == clean.more_runs);
    ck_assert(r.base.lo == clean.base.lo && r.cand.hi == clean.cand.hi);
    ck_assert(np_compare_runs_change(b3x, 6, c5x, 7) == clean.diff_pct);
    ck_assert(isnan(np_compare_runs_change(b3, 3, none, 4)));
    ck_assert(isnan(np_compare_runs_change(none, 4, c5, 5)));
    /* two runs against three and three against two: each side keeps its own spread (only a side of one is given
     * the other's), against the reference computation */
    double b2[2] = {100.0, 103.0}, l2[2] = {log(100.0), log(103.0)}, lc3[3] = {log(106.0), log(104.2), log(108.9)};
    struct ref_cmp w23;
    for (int way = 0; way < 2; way++) {
        if (way) {
            np_compare_runs(c5, 3, b2, 2, 2.0, &r);
            ref_welch(lc3, 3, l2, 2, 0, 0, &w23);
        } else {
            np_compare_runs(b2, 2, c5, 3, 2.0, &r);
            ref_welch(l2, 2, lc3, 3, 0, 0, &w23);
        }
        ck_assert_ptr_null(r.why);
        CK_NEAR(r.diff_lo, w23.lo);
        CK_NEAR(r.diff_hi, w23.hi);
        CK_NEAR(r.df, w23.df);
    }
    /* one run a side: each side's mean, no interval, no verdict */
    double one_b[1] = {100.0}, one_c[1] = {120.0};
    np_compare_runs(one_b, 1, one_c, 1, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_str_eq(r.why, "too few samples for an interval");
    ck_assert_uint_eq(r.base.n, 1);
    ck_assert_uint_eq(r.cand.n, 1);
    CK_NEAR(r.base.mean, 100.0);
    CK_NEAR(r.cand.mean, 120.0);
    ck_assert(isnan(r.base.lo) && isnan(r.base.hi) && isnan(r.cand.lo) && isnan(r.cand.hi));
    ck_assert(isnan(r.diff_pct) && isnan(r.df));
    ck_assert_int_eq(r.more_runs, -1);
    /* the mean change of logs: NAN entries skipped, the same figure as from the throughputs, to the bit */
    double lb[5] = {log(100.0), NAN, log(103.0), log(98.5), NAN}, lc[6], nan2[2] = {NAN, NAN};
    for (int i = 0; i < 5; i++)
        lc[i] = log(c5[i]);
    lc[5] = NAN;
    ck_assert(np_compare_logs_change(lb, 5, lc, 6) == np_compare_runs_change(b3, 3, c5, 5));
    CK_NEAR(np_compare_logs_change(lb, 5, lc, 6),
            (exp((lc[0] + lc[1] + lc[2] + lc[3] + lc[4]) / 5 - (lb[0] + lb[2] + lb[3]) / 3) - 1) * 100);
    CK_NEAR(np_compare_logs_change(lc, 1, lb, 1), (100.0 / 106.0 - 1) * 100);
    ck_assert(isnan(np_compare_logs_change(lb, 5, nan2, 2)) && isnan(np_compare_logs_change(nan2, 2, lc, 6)));
    ck_assert(isnan(np_compare_logs_change(lb, 0, lc, 6)) && isnan(np_compare_logs_change(lb, 5, lc, 0)));

    /* constant windows: no spread, the ratio itself; 4 batches a side, df 4 + 4 - 2 */
    double s8[8], s8c[8], s7[7];
    for (int i = 0; i < 8; i++) {
        s8[i] = 1.0;
        s8c[i] = 1.05;
    }
    for (int i = 0; i < 7; i++)
        s7[i] = 1.0;
    np_compare_steps(s8, 8, s8c, 8, 2.0, &r);
    ck_assert_int_eq(r.method, NP_CMP_BATCH_MEANS);
    ck_assert_ptr_null(r.why);
    ck_assert_int_eq(r.verdict, NP_CMP_SLOWER);
    ck_assert_uint_eq(r.base.n, 4);
    ck_assert_uint_eq(r.cand.n, 4);
    CK_NEAR(r.diff_pct, (1 / 1.05 - 1) * 100);
    CK_NEAR(r.diff_lo, (1 / 1.05 - 1) * 100);
    CK_NEAR(r.diff_hi, (1 / 1.05 - 1) * 100);
    ck_assert(r.df == 6);
    CK_NEAR(r.base.mean, 1.0);
    CK_NEAR(r.cand.mean, 1 / 1.05);
    CK_NEAR(r.cand.lo, 1 / 1.05);
    ck_assert_int_eq(r.more_runs, 0);
    np_compare_steps(s8c, 8, s8, 8, 5.0, &r); /* 5 % faster against a 5 % margin: SAME */
    CK_NEAR(r.diff_pct, 5.0);
    ck_assert_int_eq(r.verdict, r.diff_lo > 5.0 ? NP_CMP_FASTER : NP_CMP_SAME);
    np_compare_steps(s8c, 8, s8, 8, 4.9, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_FASTER);
    /* 8 steps a side is enough, 7 on either side is not */
    np_compare_steps(s8, 8, s8, 8, 2.0, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_SAME);
    ck_assert(r.diff_pct == 0 && r.diff_lo == 0 && r.diff_hi == 0);
    for (int side = 0; side < 2; side++) {
        if (side)
            np_compare_steps(s8, 8, s7, 7, 2.0, &r);
        else
            np_compare_steps(s7, 7, s8, 8, 2.0, &r);
        ck_assert_int_eq(r.method, NP_CMP_BATCH_MEANS);
        ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
        ck_assert_str_eq(r.why, "fewer than 8 steps in a window: no interval from the steps");
        ck_assert(isnan(r.diff_pct));
        ck_assert_uint_eq(r.base.n, 0);
    }
    /* a step that is not a positive number, in either window, at its first step (left out of the batches:
     * 34 steps, 2 left out) or its last */
    double a34[34], b34[34];
    rng_state = 4242;
    gen_ar1(a34, 34, 1.0, 0.01, 0.3);
    gen_ar1(b34, 34, 1.0, 0.01, 0.3);
    static const double badv[4] = {0, -1, NAN, INFINITY};
    for (int k = 0; k < 4; k++)
        for (int where = 0; where < 4; where++) {
            double x[34], y[34];
            memcpy(x, a34, sizeof x);
            memcpy(y, b34, sizeof y);
            (where < 2 ? x : y)[where % 2 ? 33 : 0] = badv[k];
            np_compare_steps(x, 34, y, 34, 2.0, &r);
            ck_assert_msg(r.why && strcmp(r.why, "a step time that is not a positive number") == 0,
                          "step %g at %d: %s", badv[k], where, r.why ? r.why : "(an interval)");
            ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
            ck_assert(isnan(r.diff_pct));
        }
    /* the AR(1) floor at its clamps: a steady climb (lag-1 correlation near 1: clamped at 0.95) and steps that
     * alternate (negative: clamped at 0), against the computation written here */
    struct ref_cmp w;
    double ramp[34], alt[34], flat[34], lev[34];
    for (int i = 0; i < 34; i++) {
        ramp[i] = 1.0 + 0.01 * i;
        alt[i] = i % 2 ? 1.02 : 0.98;
        flat[i] = 1.0 + 0.001 * ((i * 7) % 5);
        /* batches at two levels, steps alternating within them: the batch means' own variance (n - 1) is above
         * the AR(1) floor (its lag-1 correlation clamped at 0) */
        lev[i] = (i < 2 ? 1.0 : ((i - 2) / 8) % 2 ? 1.02 : 1.0) * (i % 2 ? 1.02 : 0.98);
    }
    double (*pairs[5][2])[34] = {{&ramp, &flat}, {&flat, &alt}, {&alt, &ramp}, {&lev, &flat}, {&flat, &lev}};
    for (int p = 0; p < 5; p++) {
        np_compare_steps(*pairs[p][0], 34, *pairs[p][1], 34, 2.0, &r);
        ref_steps(*pairs[p][0], 34, *pairs[p][1], 34, &w);
        CK_NEAR(r.diff_pct, w.diff);
        CK_NEAR(r.diff_lo, w.lo);
        CK_NEAR(r.diff_hi, w.hi);
        CK_NEAR(r.df, w.df);
        if (r.verdict == NP_CMP_INCONCLUSIVE) { /* one run a side: the more runs counted from 1 */
            double need = fabs(fabs(w.d) - log1p(0.02)), z = ref_t_q975(w.df + 2);
            long more = (long)ceil((z * w.se / need) * (z * w.se / need) - 1);
            ck_assert_int_eq(r.more_runs, more < 1 ? 1 : more > NP_CMP_MORE_MAX ? NP_CMP_MORE_MAX + 1 : more);
        } else {
            ck_assert_int_eq(r.more_runs, 0);
        }
    }
    /* an estimate exactly on the margin: no number of runs is sure to decide */
    double bm[3] = {100, 104, 96}, cm[3] = {103, 107, 99};
    np_compare_runs(bm, 3, cm, 3, 0, &r);
    double edge = r.diff_pct;
    np_compare_runs(bm, 3, cm, 3, edge, &r);
    ck_assert_int_eq(r.verdict, NP_CMP_INCONCLUSIVE);
    ck_assert_int_eq(r.more_runs, NP_CMP_MORE_MAX + 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("compare");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_redact_malformed);
    tcase_add_test(tc, test_t_distribution);
    tcase_add_test(tc, test_inconclusive_names_launch);
    tcase_add_test(tc, test_compare_energy);
    tcase_add_test(tc, test_slowdown_steps_noise);
    tcase_add_test(tc, test_slowdown_run_noise);
    tcase_add_test(tc, test_small_change_noisy);
    tcase_add_test(tc, test_identical_error_rate);
    tcase_add_test(tc, test_autocorrelated_one_vs_one);
    tcase_add_test(tc, test_more_runs);
    tcase_add_test(tc, test_change_prefilter);
    tcase_add_test(tc, test_reference_computation);
    tcase_add_test(tc, test_two_against_one);
    tcase_add_test(tc, test_slow_first_step);
    tcase_add_test(tc, test_boundaries);
    tcase_add_test(tc, test_compare_edges);
    suite_add_tcase(s, tc);
    TCase *ts = tcase_create("sqlite");
    tcase_set_timeout(ts, 120);
    tcase_add_test(ts, test_sqlite_idempotent);
    tcase_add_test(ts, test_sqlite_killed);
    tcase_add_test(ts, test_sqlite_concurrent);
    tcase_add_test(ts, test_sqlite_newer_schema);
    tcase_add_test(ts, test_sqlite_bad_schema);
    tcase_add_test(ts, test_sqlite_selectors_history);
    tcase_add_test(ts, test_sqlite_corrupt);
    tcase_add_test(ts, test_sqlite_network_fs_refused);
    tcase_add_test(ts, test_redact_and_selectors);
    tcase_add_test(ts, test_sqlite_keys_kinds_restore);
    tcase_add_test(ts, test_sqlite_migrate_v1);
    tcase_add_test(ts, test_sqlite_migrate_v2_energy);
    tcase_add_test(ts, test_sqlite_fingerprint_schema4);
    tcase_add_test(ts, test_sqlite_open_while_written);
    tcase_add_test(ts, test_sqlite_columns_read_back);
    tcase_add_test(ts, test_sqlite_default_location);
    tcase_add_test(ts, test_record_from_run);
    tcase_add_test(ts, test_default_location_order);
    tcase_add_test(ts, test_store_runs_counts_ids);
    tcase_add_test(ts, test_sqlite_updates_nulls_bounds);
    tcase_add_test(ts, test_sqlite_rollback_windows);
    tcase_add_test(ts, test_selectors_parse);
    tcase_add_test(ts, test_sqlite_series_tput);
    suite_add_tcase(s, ts);
    const char *pg = getenv("NP_TEST_PG_URI");
    if (pg && *pg) {
        TCase *tp = tcase_create("postgresql");
        tcase_set_timeout(tp, 120);
        tcase_add_test(tp, test_pg_idempotent);
        tcase_add_test(tp, test_pg_killed);
        tcase_add_test(tp, test_pg_concurrent);
        tcase_add_test(tp, test_pg_newer_schema);
        tcase_add_test(tp, test_pg_bad_schema);
        tcase_add_test(tp, test_pg_selectors_history);
        tcase_add_test(tp, test_pg_series_tput);
        tcase_add_test(tp, test_pg_password_not_printed);
        suite_add_tcase(s, tp);
    } else {
        fprintf(stderr, "check_store: NP_TEST_PG_URI not set: the PostgreSQL cases run in tests/e2e/60-store.sh\n");
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
