/* check_scan.c - Check suite for the log scanner (src/parse/scan.c).
 *
 * One case per log generation on golden files under tests/data/scan/, the
 * hostile inputs (NUL, invalid UTF-8, 2 MB lines, CR/CRLF, ANSI, partial last
 * line), appended runs, tail mode against whole-file mode, and chunk seams.
 * Run from the repo root (data paths are relative to it).
 */
#include "nemoperf/parse/scan.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

#define DATA "tests/data/scan/"

/* A scratch file under $TMPDIR holding data; returns its path (static buffer per slot). */
static const char *write_tmp(int slot, const char *data, size_t len)
{
    static char paths[8][256];
    const char *dir = getenv("TMPDIR");
    snprintf(paths[slot], sizeof paths[slot], "%s/check_scan_%d_%d.log", dir && *dir ? dir : "/tmp",
             (int)getpid(), slot);
    FILE *f = fopen(paths[slot], "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    return paths[slot];
}

static void scan_all(const char *path, struct np_scan_result *r)
{
    struct np_scan_opts o = {.all_steps = 1};
    struct np_error e = {0};
    enum np_status st = np_scan_file(path, &o, r, &e);
    ck_assert_msg(st == NP_OK, "%s: %s", path, e.text);
}

static void scan_buf(const char *buf, size_t len, struct np_scan_result *r)
{
    struct np_error e = {0};
    ck_assert_int_eq(np_scan_buffer(buf, len, 0, r, &e), NP_OK);
}

static int same_double(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static void assert_same_step(const struct np_step *a, const struct np_step *b)
{
    ck_assert_int_eq(a->iteration, b->iteration);
    ck_assert_int_eq(a->total, b->total);
    ck_assert(same_double(a->step_time_s, b->step_time_s));
    ck_assert(same_double(a->loss, b->loss));
    ck_assert_int_eq(a->global_batch_size, b->global_batch_size);
    ck_assert(same_double(a->peak_memory_bytes, b->peak_memory_bytes));
    ck_assert(same_double(a->tflops_per_gpu, b->tflops_per_gpu));
    ck_assert(same_double(a->consumed_samples, b->consumed_samples));
    ck_assert(same_double(a->tokens_per_s, b->tokens_per_s));
    ck_assert(same_double(a->tokens_per_s_per_gpu, b->tokens_per_s_per_gpu));
    ck_assert_int_eq(a->nan_seen, b->nan_seen);
    ck_assert(same_double(a->energy_j_per_gpu, b->energy_j_per_gpu));
    ck_assert(same_double(a->power_w_per_gpu, b->power_w_per_gpu));
    ck_assert_int_eq(a->bar_short, b->bar_short);
    ck_assert_int_eq(a->gen, b->gen);
    ck_assert_uint_eq(a->offset, b->offset);
}

static void assert_same_result(const struct np_scan_result *a, const struct np_scan_result *b)
{
    ck_assert_uint_eq(a->nsteps, b->nsteps);
    ck_assert_uint_eq(a->runs, b->runs);
    ck_assert_int_eq(a->saw_checkpoint_save, b->saw_checkpoint_save);
    ck_assert_int_eq(a->saw_checkpoint_load, b->saw_checkpoint_load);
    for (size_t i = 0; i < a->nsteps; i++)
        assert_same_step(&a->steps[i], &b->steps[i]);
}

#define ck_assert_near(x, y) ck_assert_msg(fabs((double)(x) - (double)(y)) <= 1e-9 * fabs((double)(y)) + 1e-12, \
                                           "%s = %.17g, want %.17g", #x, (double)(x), (double)(y))

/* The step's offset must point at the start of its line in the file. */
static void assert_offset_at(const char *path, const struct np_step *s, const char *prefix)
{
    size_t len;
    char *buf = np_test_read_all(path, &len);
    ck_assert_uint_lt(s->offset, len);
    ck_assert_msg(strncmp(buf + s->offset, prefix, strlen(prefix)) == 0, "offset %llu: %.40s",
                  (unsigned long long)s->offset, buf + s->offset);
    ck_assert(s->offset == 0 || buf[s->offset - 1] == '\n' || buf[s->offset - 1] == '\r');
    free(buf);
}

/* ---------------------------------------------------------- generations */

START_TEST(test_nemo2)
{
    struct np_scan_result r;
    scan_all(DATA "nemo2.log", &r);
    ck_assert_uint_eq(r.nsteps, 50);
    ck_assert_uint_eq(r.runs, 1);
    ck_assert_int_eq(r.saw_checkpoint_save, 1);
    ck_assert_int_eq(r.saw_checkpoint_load, 0);
    ck_assert_int_eq(r.truncated_start, 0);
    ck_assert_uint_eq(r.bytes_read, r.file_size);
    const struct np_step *s = &r.steps[49];
    ck_assert_int_eq(s->gen, NP_GEN_NEMO2);
    ck_assert_int_eq(s->iteration, 49);
    ck_assert_int_eq(s->total, 49);
    ck_assert_near(s->step_time_s, 12.39);
    ck_assert_near(s->loss, 11.96);
    ck_assert_int_eq(s->global_batch_size, 128);
    ck_assert_near(s->peak_memory_bytes, 70833405952.0);
    ck_assert_near(s->consumed_samples, 6400);
    ck_assert(isnan(s->tflops_per_gpu));
    ck_assert(isnan(s->tokens_per_s));
    ck_assert_int_eq(s->nan_seen, 0);
    assert_offset_at(DATA "nemo2.log", s, "Training epoch 0, iteration 49/49 |");
    ck_assert_int_eq(r.steps[0].iteration, 0);
    ck_assert_near(r.steps[0].step_time_s, 12.89);
    for (size_t i = 0; i < r.nsteps; i++)
        ck_assert_int_eq(r.steps[i].iteration, (long)i);
    np_scan_result_free(&r);
    ck_assert_ptr_null(r.steps);
    ck_assert_uint_eq(r.nsteps, 0);
}
END_TEST

START_TEST(test_nemo2_tflops_sci)
{
    struct np_scan_result r;
    scan_all(DATA "nemo2_tflops.log", &r);
    ck_assert_uint_eq(r.nsteps, 20);
    ck_assert_int_eq(r.saw_checkpoint_load, 1);
    ck_assert_int_eq(r.saw_checkpoint_save, 0);
    const struct np_step *s = &r.steps[19];
    ck_assert_int_eq(s->iteration, 19);
    ck_assert_int_eq(s->total, 19);
    ck_assert_near(s->tflops_per_gpu, 1249.0); /* 1.249e+03 */
    ck_assert_near(s->step_time_s, 9.0);       /* whole float printed as int */
    ck_assert_near(s->loss, 12.0);             /* 1.2e+01 */
    ck_assert_int_eq(s->global_batch_size, 256);
    ck_assert_near(r.steps[3].tflops_per_gpu, 1246.0);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_nemo1_tqdm)
{
    struct np_scan_result r;
    scan_all(DATA "nemo1_tqdm.log", &r);
    /* 100 steps, each drawn twice (plain, then with ANSI colour): redraws collapse */
    ck_assert_uint_eq(r.nsteps, 100);
    ck_assert_uint_eq(r.runs, 1);
    ck_assert_int_eq(r.saw_checkpoint_save, 1);
    const struct np_step *s = &r.steps[99];
    ck_assert_int_eq(s->gen, NP_GEN_NEMO1);
    ck_assert_int_eq(s->iteration, 99);
    ck_assert_int_eq(s->total, 99); /* epoch 0, bar 100/100 at global_step 99 */
    ck_assert_near(s->loss, 6.19);
    ck_assert_near(s->step_time_s, 11.10);
    ck_assert_near(s->consumed_samples, 12800);
    ck_assert_int_eq(s->global_batch_size, -1);
    assert_offset_at(DATA "nemo1_tqdm.log", s, "Epoch 0: : 100%|");
    ck_assert_near(r.steps[0].step_time_s, 11.80);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_delta)
{
    struct np_scan_result r;
    scan_all(DATA "delta.log", &r);
    ck_assert_uint_eq(r.nsteps, 30);
    const struct np_step *s = &r.steps[29];
    ck_assert_int_eq(s->gen, NP_GEN_DELTA);
    ck_assert_int_eq(s->iteration, 29);
    ck_assert_int_eq(s->total, -1);
    ck_assert_near(s->step_time_s, 1.234);
    ck_assert(isnan(s->loss));
    ck_assert_near(r.steps[1].step_time_s, 1.235);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_mbridge)
{
    struct np_scan_result r;
    scan_all(DATA "mbridge.log", &r);
    ck_assert_uint_eq(r.nsteps, 50);
    const struct np_step *s = &r.steps[49];
    ck_assert_int_eq(s->gen, NP_GEN_MBRIDGE);
    ck_assert_int_eq(s->iteration, 49); /* "iteration 50/50" is 1-based */
    ck_assert_int_eq(s->total, 49);
    ck_assert_near(s->step_time_s, 12.3901);
    ck_assert_near(s->tflops_per_gpu, 612.3);
    ck_assert_near(s->loss, 11.96);
    ck_assert_int_eq(s->global_batch_size, 128);
    ck_assert_near(s->consumed_samples, 6400);
    ck_assert_int_eq(s->nan_seen, 0);
    ck_assert_int_eq(r.steps[0].iteration, 0);
    ck_assert_near(r.steps[0].step_time_s, 15.3904);
    assert_offset_at(DATA "mbridge.log", s, " [2025-10-01 12:10:50] iteration");
    np_scan_result_free(&r);
}
END_TEST

/* Megatron-LM 2026 lines with --log-energy and microsecond timestamps (tests/data/real/cloudai_megatron_lm_energy_us.log,
 * NVIDIA's cloudai fixture), as they are and behind the rank prefixes a log gets: torch's "[rank7]: " and srun --label's
 * "0: " (the prefixes are stand-ins written here: no public log with both was found).  The energy and power of each
 * step are kept. */
START_TEST(test_mbridge_energy_prefixes)
{
    static const char *const prefix[] = {"", "[rank7]: ", "0: ", "ain_fp8_mx/0 "};
    size_t len;
    char *src = np_test_read_all("tests/data/real/cloudai_megatron_lm_energy_us.log", &len);
    for (size_t k = 0; k < sizeof prefix / sizeof prefix[0]; k++) {
        char buf[4096];
        size_t o = 0;
        for (const char *l = src; *l;) {
            const char *nl = strchr(l, '\n');
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%.*s\n", prefix[k], (int)(nl - l), l);
            l = nl + 1;
        }
        struct np_scan_result r;
        scan_buf(buf, o, &r);
        ck_assert_msg(r.nsteps == 3, "prefix \"%s\": %zu steps", prefix[k], r.nsteps);
        const struct np_step *s = &r.steps[2];
        ck_assert_int_eq(s->gen, NP_GEN_MBRIDGE);
        ck_assert_int_eq(s->iteration, 293);
        ck_assert_int_eq(s->total, 95367430);
        ck_assert_near(s->step_time_s, 3.0352);
        ck_assert_near(s->tflops_per_gpu, 484.3);
        ck_assert_near(s->energy_j_per_gpu, 1980.1);
        ck_assert_near(s->power_w_per_gpu, 652.5);
        ck_assert_near(s->loss, 2.378540E-02);
        ck_assert_near(r.steps[0].energy_j_per_gpu, 1992.5);
        ck_assert_near(r.steps[0].power_w_per_gpu, 647.8);
        np_scan_result_free(&r);
    }
    free(src);
}
END_TEST

/* Megatron records a terminal wrapped over several lines (mbridge.log at 80 columns, its 30th record at 101; its NCCL
 * lines wrapped too): each read whole, as the unwrapped line is, at the offset of its iteration number's line, whole
 * file, chunked (test_chunk_seams) and tail-first (here and test_tail_cut_points).  A piece that is all a line has of a record (a time without "iteration i/ n" before
 * it, back to a closing '|') is no step.  On the tree before, the wrapped records were steps without an iteration
 * number (-1) and the time of the continuation line. */
START_TEST(test_mbridge_wrapped)
{
    struct np_scan_result ref, r;
    scan_all(DATA "mbridge.log", &ref);
    scan_all(DATA "mbridge_wrapped.log", &r);
    /* the 30th record's "elapsed time per iteration" is cut in two at 101 columns: no line holds what the scanner
     * looks for, and the record is not read at all (never half) */
    ck_assert_uint_eq(r.nsteps, ref.nsteps - 1);
    for (size_t i = 0; i < r.nsteps; i++) {
        const struct np_step *a = &r.steps[i], *b = &ref.steps[i < 29 ? i : i + 1];
        ck_assert_int_eq(a->iteration, b->iteration);
        ck_assert_int_eq(a->total, b->total);
        ck_assert(same_double(a->step_time_s, b->step_time_s));
        ck_assert(same_double(a->loss, b->loss));
        ck_assert_int_eq(a->global_batch_size, b->global_batch_size);
        ck_assert(same_double(a->tflops_per_gpu, b->tflops_per_gpu));
        ck_assert(same_double(a->consumed_samples, b->consumed_samples));
        ck_assert_int_eq(a->nan_seen, b->nan_seen);
    }
    assert_offset_at(DATA "mbridge_wrapped.log", &r.steps[48], " [2025-10-01 12:10:50] iteration");
    assert_offset_at(DATA "mbridge_wrapped.log", &r.steps[29], " [2025-10-01 12:06:31] iteration");
    np_scan_result_free(&ref);

    /* tail-first with a step budget (read backwards in chunks): the same last steps */
    for (size_t keep = 1; keep <= 12; keep += 11) {
        struct np_scan_opts o = {.window = keep, .keep = keep, .tail_bytes = 300};
        struct np_scan_result t;
        ck_assert_int_eq(np_scan_file(DATA "mbridge_wrapped.log", &o, &t, NULL), NP_OK);
        ck_assert_uint_ge(t.nsteps, keep);
        for (size_t i = 0; i < t.nsteps; i++)
            assert_same_step(&t.steps[i], &r.steps[r.nsteps - t.nsteps + i]);
        np_scan_result_free(&t);
    }
    np_scan_result_free(&r);

    /* a time with no iteration number before it: no step, not one numbered -1 */
    static const char lone[] = " [2025-10-01 12:00:01] iteration        1/      50 | consumed samples: 128 | elapsed "
                               "time per iteration (ms): 15390.4 | lm loss: 1.249000E+01 |\n"
                               "      256 | elapsed time per iteration (ms): 14260.5 | throughput per GPU (TFLOP/s/G\n"
                               "PU): 663.5 | lm loss: 1.2E+01 |\n";
    scan_buf(lone, sizeof lone - 1, &r);
    ck_assert_uint_eq(r.nsteps, 1);
    ck_assert_int_eq(r.steps[0].iteration, 0);
    ck_assert_near(r.steps[0].step_time_s, 15.3904);
    np_scan_result_free(&r);
    /* the wrapped corpus excerpt: read whole, tail-first too */
    const char *path = "tests/data/real/reconstructed_megatron_wrapped_80.log";
    scan_all(path, &r);
    ck_assert_uint_eq(r.nsteps, 3);
    ck_assert_int_eq(r.steps[2].iteration, 293);
    ck_assert_near(r.steps[2].step_time_s, 3.0352);
    ck_assert_near(r.steps[2].energy_j_per_gpu, 1980.1);
    ck_assert_near(r.steps[2].power_w_per_gpu, 652.5);
    ck_assert_near(r.steps[2].loss, 2.378540E-02);
    assert_offset_at(path, &r.steps[2], " [2026-02-06 20:55:08.991445] iteration");
    np_scan_result_free(&r);
}
END_TEST

/* Lightning bars of an unknown total ("3/?", tqdm's total_fmt), no global_step: the step is the bar's k-1, and the
 * fit loop's "`max_steps=5` reached" after it is found (np_scan_stop_message); a bar counting batches short of its
 * end ("81/43800" at global_step=4) says so (bar_short). */
START_TEST(test_bar_unknown_total)
{
    const char *path = "tests/data/real/reconstructed_ptl_unknown_total_bar.log";
    struct np_scan_result r;
    scan_all(path, &r);
    ck_assert_uint_eq(r.nsteps, 5);
    ck_assert_int_eq(r.steps[4].gen, NP_GEN_NEMO1);
    ck_assert_int_eq(r.steps[4].iteration, 4);
    ck_assert_int_eq(r.steps[4].total, -1);
    ck_assert_int_eq(r.steps[4].bar_short, 0);
    ck_assert_near(r.steps[4].step_time_s, 4.90);
    ck_assert_int_eq(r.max_steps_reached, 0);
    np_scan_stop_message(AT_FDCWD, path, &r);
    ck_assert_int_eq(r.max_steps_reached, 5);
    np_scan_result_free(&r);

    /* the message glued to the bar's last redraw; a message of max_steps below the step read is not this run's */
    static const char glued[] = "Epoch 0: |          | 2/? [00:09<?,  0.20it/s, v_num=0, train_step_timing in s=4.87]"
                                "`Trainer.fit` stopped: `max_steps=2` reached.\n";
    path = write_tmp(0, glued, sizeof glued - 1);
    scan_all(path, &r);
    np_scan_stop_message(AT_FDCWD, path, &r);
    ck_assert_int_eq(r.steps[0].iteration, 1);
    ck_assert_int_eq(r.max_steps_reached, 2);
    np_scan_result_free(&r);
    static const char early[] = "Epoch 0: |          | 4/? [00:09<?,  0.20it/s, v_num=0, train_step_timing in s=4.87]\n"
                                "`Trainer.fit` stopped: `max_steps=2` reached.\n";
    path = write_tmp(0, early, sizeof early - 1);
    scan_all(path, &r);
    np_scan_stop_message(AT_FDCWD, path, &r);
    ck_assert_int_eq(r.max_steps_reached, 0);
    np_scan_result_free(&r);
    unlink(path);

    scan_all("tests/data/real/reconstructed_ptl_grad_accum_bar.log", &r);
    ck_assert_int_eq(r.steps[r.nsteps - 1].total, -1);
    ck_assert_int_eq(r.steps[r.nsteps - 1].bar_short, 1);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_automodel)
{
    struct np_scan_result r;
    scan_all(DATA "automodel.log", &r);
    ck_assert_uint_eq(r.nsteps, 50);
    const struct np_step *s = &r.steps[49];
    ck_assert_int_eq(s->gen, NP_GEN_AUTOMODEL);
    ck_assert_int_eq(s->iteration, 49);
    ck_assert_int_eq(s->total, -1);
    ck_assert(isnan(s->step_time_s));
    ck_assert_near(s->loss, 2.1234);
    ck_assert_near(s->peak_memory_bytes, 61.23 * 1073741824.0);
    ck_assert_near(s->tokens_per_s, 104882.31);
    ck_assert_near(s->tokens_per_s_per_gpu, 13110.29);
    ck_assert_int_eq(r.steps[48].iteration, 48); /* the one with a "| INFO | root |" prefix */
    ck_assert_near(r.steps[48].peak_memory_bytes, 60.0 * 1073741824.0);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_gen_names)
{
    ck_assert_str_eq(np_log_gen_name(NP_GEN_NEMO2), "nemo2");
    ck_assert_str_eq(np_log_gen_name(NP_GEN_NEMO1), "nemo1");
    ck_assert_str_eq(np_log_gen_name(NP_GEN_DELTA), "delta");
    ck_assert_str_eq(np_log_gen_name(NP_GEN_MBRIDGE), "mbridge");
    ck_assert_str_eq(np_log_gen_name(NP_GEN_AUTOMODEL), "automodel");
    ck_assert_str_eq(np_log_gen_name(NP_GEN_UNKNOWN), "unknown");
    ck_assert_str_eq(np_log_gen_name((enum np_log_gen)42), "unknown");
    ck_assert_int_eq(np_scan_init(NULL), NP_OK);
    np_scan_result_free(NULL);
}
END_TEST

/* ---------------------------------------------------------- hostile input */

#define L2(i, n, rest) "Training epoch 0, iteration " #i "/" #n " | lr: 1e-05 | global_batch_size: 32 | " \
    "global_step: " #i " | " rest "\n"

START_TEST(test_hostile_file)
{
    struct np_scan_result r;
    scan_all(DATA "hostile.log", &r);
    ck_assert_uint_eq(r.nsteps, 7);
    ck_assert_uint_eq(r.runs, 1);
    /* leading NULs: the line is still read */
    ck_assert_int_eq(r.steps[0].iteration, 0);
    ck_assert_near(r.steps[0].step_time_s, 2.5);
    /* "2\0.5": the cut number is missing, never 2 */
    ck_assert_int_eq(r.steps[1].iteration, 1);
    ck_assert(isnan(r.steps[1].step_time_s));
    ck_assert_near(r.steps[1].loss, 5.5);
    /* torn line (step 2 cut by NULs, step 3 written after them): step 3 only */
    ck_assert_int_eq(r.steps[2].iteration, 3);
    ck_assert_near(r.steps[2].step_time_s, 3.5);
    ck_assert(isnan(r.steps[2].loss)); /* invalid UTF-8 instead of a number */
    ck_assert_near(r.steps[2].consumed_samples, 128);
    /* ANSI colour around the number */
    ck_assert_int_eq(r.steps[3].iteration, 4);
    ck_assert_near(r.steps[3].step_time_s, 4.5);
    /* NaN loss flags the step, the step stays */
    ck_assert_int_eq(r.steps[4].iteration, 5);
    ck_assert(isnan(r.steps[4].loss));
    ck_assert_int_eq(r.steps[4].nan_seen, 1);
    ck_assert_near(r.steps[4].step_time_s, 5.5);
    /* empty values */
    ck_assert_int_eq(r.steps[5].iteration, 6);
    ck_assert(isnan(r.steps[5].loss));
    ck_assert(isnan(r.steps[5].step_time_s));
    ck_assert_int_eq(r.steps[5].nan_seen, 0);
    /* NUL right after the numbers */
    ck_assert_int_eq(r.steps[6].iteration, 7);
    ck_assert(isnan(r.steps[6].step_time_s));
    ck_assert(isnan(r.steps[6].consumed_samples));
    ck_assert_near(r.steps[6].loss, 5.5);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_nul_bytes)
{
    static const char a[] = "\0\0" L2(0, 9, "reduced_train_loss: 3.5 | train_step_timing in s: 12.39")
        "\0\0\0\n"
        L2(1, 9, "reduced_train_loss: 3\0.5 | train_step_timing in s: 12\0.39 | consumed_samples: 64")
        "Training epoch 0, iteration 2\0/9 | global_step: 2 | train_step_timing in s: 1.5\n"
        "Training epoch 0, iteration 3/9\0 | global_step: 3 | train_step_timing in s: 1.5\n"
        "\0";
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.nsteps, 4);
    ck_assert_near(r.steps[0].step_time_s, 12.39);
    ck_assert_near(r.steps[0].loss, 3.5);
    ck_assert_int_eq(r.steps[1].iteration, 1);
    ck_assert(isnan(r.steps[1].step_time_s));
    ck_assert(isnan(r.steps[1].loss));
    ck_assert_near(r.steps[1].consumed_samples, 64);
    /* cut iteration: falls back to global_step, the total is unknown */
    ck_assert_int_eq(r.steps[2].iteration, 2);
    ck_assert_int_eq(r.steps[2].total, -1);
    ck_assert_int_eq(r.steps[3].iteration, 3);
    ck_assert_int_eq(r.steps[3].total, -1);
    np_scan_result_free(&r);

    /* all NUL, NUL-only lines, needles next to NULs */
    char z[4096];
    memset(z, 0, sizeof z);
    memcpy(z + 100, "train_step_timing in s: 5\n", 26);
    memcpy(z + 1000, "\n| tps \0\r", 9);
    scan_buf(z, sizeof z, &r);
    ck_assert_uint_eq(r.nsteps, 0);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_invalid_utf8)
{
    static const char a[] = "\xff\xfe\xfd\xc3\x28\xe2\x82\n"
        "\xc0\xaf" L2(0, 1, "lr: \xff\xfe | reduced_train_loss: 2.25 | train_step_timing in s: 1.5 | x: \xed\xa0\x80")
        L2(1, 1, "reduced_train_loss: 2.\xcc\x88 | train_step_timing in s: \xef\xbc\x91.5");
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_near(r.steps[0].loss, 2.25);
    ck_assert_near(r.steps[0].step_time_s, 1.5);
    ck_assert(isnan(r.steps[1].loss));          /* combining diaeresis after "2." */
    ck_assert(isnan(r.steps[1].step_time_s));   /* full-width digit one */
    np_scan_result_free(&r);
}
END_TEST

static char *make_long_line_log(size_t *len)
{
    const size_t big = 2u << 20;
    static const char head[] = L2(0, 2, "train_step_timing in s: 1.5");
    static const char tail[] = L2(2, 2, "train_step_timing in s: 3.5");
    static const char inner[] = " | train_step_timing in s: 99 | Training epoch 0, iteration 1/2 | ";
    char *buf = malloc(big + 1024);
    size_t n = 0;
    ck_assert_ptr_nonnull(buf);
    memcpy(buf + n, head, sizeof head - 1);
    n += sizeof head - 1;
    size_t start = n;
    memset(buf + n, 'x', big);
    memcpy(buf + n + big / 2, inner, sizeof inner - 1);
    n += big;
    /* the 2 MB line even ends like a step line: still skipped as a whole */
    static const char end1[] = "Training epoch 0, iteration 1/2 | train_step_timing in s: 2.5\n";
    memcpy(buf + n, end1, sizeof end1 - 1);
    n += sizeof end1 - 1;
    (void)start;
    memcpy(buf + n, tail, sizeof tail - 1);
    n += sizeof tail - 1;
    *len = n;
    return buf;
}

START_TEST(test_long_line)
{
    size_t len;
    char *buf = make_long_line_log(&len);
    struct np_scan_result r, f;
    scan_buf(buf, len, &r);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_int_eq(r.steps[0].iteration, 0);
    ck_assert_int_eq(r.steps[1].iteration, 2);
    ck_assert_near(r.steps[1].step_time_s, 3.5);
    const char *path = write_tmp(0, buf, len);
    static const size_t chunks[] = {0, 4096, 1u << 20, 3u << 20};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        struct np_scan_opts o = {.all_steps = 1, .read_chunk = chunks[i]};
        ck_assert_int_eq(np_scan_file(path, &o, &f, NULL), NP_OK);
        assert_same_result(&r, &f);
        np_scan_result_free(&f);
    }
    /* tail mode with the window inside the long line */
    struct np_scan_opts t = {.window = 2, .tail_bytes = 100};
    ck_assert_int_eq(np_scan_file(path, &t, &f, NULL), NP_OK);
    ck_assert_uint_eq(f.nsteps, 2);
    assert_same_result(&r, &f);
    np_scan_result_free(&f);
    np_scan_result_free(&r);
    unlink(path);
    free(buf);
}
END_TEST

START_TEST(test_line_endings)
{
    struct np_scan_result cr, crlf, lf;
    scan_all(DATA "cr_only.log", &cr);
    scan_all(DATA "crlf.log", &crlf);
    ck_assert_uint_eq(cr.nsteps, 5);
    ck_assert_uint_eq(crlf.nsteps, 5);
    for (size_t i = 0; i < 5; i++) {
        ck_assert_int_eq(cr.steps[i].iteration, (long)i);
        ck_assert_int_eq(crlf.steps[i].iteration, (long)i);
        ck_assert_near(cr.steps[i].step_time_s, 2.0 + (double)i);
        ck_assert_near(crlf.steps[i].step_time_s, 2.0 + (double)i);
        ck_assert_near(crlf.steps[i].consumed_samples, 32.0 * (double)(i + 1)); /* no '\r' left in it */
        ck_assert_int_eq(crlf.steps[i].total, 4);
    }
    assert_offset_at(DATA "cr_only.log", &cr.steps[4], "Training epoch 0, iteration 4/4");
    assert_offset_at(DATA "crlf.log", &crlf.steps[4], "Training epoch 0, iteration 4/4");
    /* mixed, with blank lines between */
    static const char m[] = L2(0, 2, "train_step_timing in s: 1") "\r\r\n\n"
        "Training epoch 0, iteration 1/2 | train_step_timing in s: 2\r\n\r"
        "Training epoch 0, iteration 2/2 | train_step_timing in s: 3\r";
    scan_buf(m, sizeof m - 1, &lf);
    ck_assert_uint_eq(lf.nsteps, 3);
    ck_assert_near(lf.steps[2].step_time_s, 3.0);
    np_scan_result_free(&lf);
    np_scan_result_free(&cr);
    np_scan_result_free(&crlf);
}
END_TEST

START_TEST(test_ansi)
{
    static const char a[] =
        "\x1b[1m\x1b[32mTraining epoch 0, iteration 0/1\x1b[0m | reduced_train_loss: \x1b[33m2.5\x1b[0m | "
        "train_step_timing in s: \x1b[1;31m12.39\x1b[0m | consumed_samples: 64\x1b[K\n"
        "\rEpoch 0:  50%|\x1b[34m\xe2\x96\x88\x1b[0m | 1/2 [00:11<00:11, reduced_train_loss=\x1b[32m6.190\x1b[0m, "
        "global_step=1.00, train_step_timing in s=1\x1b[0m1.10\x1b[0m]\r"
        "\x1b[38;5;196mStep 7: train_step_timing in s=\x1b[0m0.5\x1b[0m\n"
        "Step 8: train_step_timing in s=0.5\x1b[\n"; /* CSI cut by the line end */
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.nsteps, 4);
    ck_assert_int_eq(r.steps[0].gen, NP_GEN_NEMO2);
    ck_assert_int_eq(r.steps[0].iteration, 0);
    ck_assert_near(r.steps[0].loss, 2.5);
    ck_assert_near(r.steps[0].step_time_s, 12.39);
    ck_assert_near(r.steps[0].consumed_samples, 64);
    ck_assert_int_eq(r.steps[1].gen, NP_GEN_NEMO1);
    ck_assert_int_eq(r.steps[1].iteration, 0);     /* epoch 0, bar 1/2: the bar is the authority (issue 14) */
    ck_assert_near(r.steps[1].loss, 6.19);
    ck_assert_near(r.steps[1].step_time_s, 11.10); /* escapes are invisible: "11.10" */
    ck_assert_int_eq(r.steps[1].total, 1);          /* n = max_steps = 2: last step index 1 */
    ck_assert_int_eq(r.steps[2].gen, NP_GEN_DELTA);
    ck_assert_int_eq(r.steps[2].iteration, 7);
    ck_assert_near(r.steps[2].step_time_s, 0.5);
    ck_assert_int_eq(r.steps[3].iteration, 8);
    ck_assert_near(r.steps[3].step_time_s, 0.5);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_partial_last_line)
{
    struct np_scan_result r;
    scan_all(DATA "partial_last.log", &r);
    ck_assert_uint_eq(r.nsteps, 5);
    ck_assert_int_eq(r.steps[4].iteration, 4);
    ck_assert_near(r.steps[4].step_time_s, 6.0);
    for (size_t i = 0; i < r.nsteps; i++)
        ck_assert(r.steps[i].step_time_s != 1.0);
    np_scan_result_free(&r);

    static const char only[] = "Training epoch 0, iteration 0/1 | train_step_timing in s: 1";
    scan_buf(only, sizeof only - 1, &r);
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_uint_eq(r.runs, 0);
    np_scan_result_free(&r);
    /* tail mode on the same file */
    struct np_scan_opts t = {.window = 3, .tail_bytes = 300};
    ck_assert_int_eq(np_scan_file(DATA "partial_last.log", &t, &r, NULL), NP_OK);
    ck_assert_uint_ge(r.nsteps, 3);
    ck_assert_int_eq(r.steps[r.nsteps - 1].iteration, 4);
    ck_assert_near(r.steps[r.nsteps - 1].step_time_s, 6.0);
    ck_assert_int_eq(r.truncated_start, 1);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_empty)
{
    struct np_scan_result r;
    struct np_error e = {0};
    ck_assert_int_eq(np_scan_buffer("", 0, 0, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_ptr_null(r.steps);
    ck_assert_int_eq(np_scan_buffer(NULL, 0, 0, &r, &e), NP_OK);
    ck_assert_int_eq(np_scan_buffer("\n\r\n", 3, 5, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 0);
    const char *path = write_tmp(1, "", 0);
    ck_assert_int_eq(np_scan_file(path, NULL, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_uint_eq(r.file_size, 0);
    ck_assert_uint_eq(r.bytes_read, 0);
    ck_assert_int_eq(r.truncated_start, 0);
    struct np_scan_opts o = {.all_steps = 1};
    ck_assert_int_eq(np_scan_file(path, &o, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 0);
    unlink(path);
    /* a character device: read as a stream when asked (streams), else refused before any read */
    struct np_scan_opts so = {.window = 10, .streams = 1};
    ck_assert_int_eq(np_scan_file("/dev/null", &so, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_int_eq(np_scan_file("/dev/null", NULL, &r, &e), NP_E_IO);
    ck_assert_ptr_nonnull(strstr(e.text, "not a regular file (a character device)"));
}
END_TEST

START_TEST(test_runs_appended)
{
    struct np_scan_result r;
    scan_all(DATA "runs_appended.log", &r);
    ck_assert_uint_eq(r.runs, 3);
    ck_assert_uint_eq(r.nsteps, 20);
    for (size_t i = 0; i < r.nsteps; i++) {
        ck_assert_int_eq(r.steps[i].iteration, (long)i);
        ck_assert_int_eq(r.steps[i].total, 19);
        ck_assert_int_eq(r.steps[i].global_batch_size, 192);
    }
    np_scan_result_free(&r);

    /* tqdm redraws of one step collapse, the latest values win; a repeat of an
     * older step after newer ones starts a run */
#define REDRAWS                                                                                     \
    "\rEpoch 0: 10%| | 1/10 [00:01<00:09, reduced_train_loss=9.0, global_step=0.00, train_step_timing in s=2.0]" \
    "\rEpoch 0: 10%| | 1/10 [00:01<00:09, reduced_train_loss=8.0, global_step=0.00, train_step_timing in s=1.5]" \
    "\rEpoch 0: 20%| | 2/10 [00:02<00:08, reduced_train_loss=7.0, global_step=1.00, train_step_timing in s=1.0]" \
    "\rEpoch 0: 20%| | 2/10 [00:02<00:08, reduced_train_loss=6.0, global_step=1.00]"                 \
    "\n"
    static const char a[] = REDRAWS
        "\rEpoch 0: 10%| | 1/10 [00:01<00:09, reduced_train_loss=9.5, global_step=0.00, train_step_timing in s=3.0]"
        "\n";
    static const char b[] = REDRAWS;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.runs, 2);
    ck_assert_uint_eq(r.nsteps, 1);
    ck_assert_near(r.steps[0].loss, 9.5);
    ck_assert_int_eq(r.steps[0].total, 9);
    np_scan_result_free(&r);
    scan_buf(b, sizeof b - 1, &r);
    ck_assert_uint_eq(r.runs, 1);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_near(r.steps[0].loss, 8.0);
    ck_assert_near(r.steps[0].step_time_s, 1.5);
    ck_assert_int_eq(r.steps[0].total, 9);
    ck_assert_near(r.steps[1].loss, 6.0);       /* a redraw without the timing key is no new step: it joins */
    ck_assert_near(r.steps[1].step_time_s, 1.0); /* step 1 (newer loss wins, the time stays) */
    np_scan_result_free(&r);
}
END_TEST

/* DeltaTimingCallback as NeMo prints it: f"Step {n}: {name} in s={dt}" with name "train_step_timing in s"
 * (NVIDIA/NeMo nemo/utils/exp_manager.py:450 @8cfedd7) - no public log shows it, so the lines are built from that
 * f-string behind NeMo's logging prefix; the validation twin is no training step. */
START_TEST(test_delta_in_s_twice)
{
    static const char a[] =
        "[NeMo I 2025-03-07 22:35:19 exp_manager:450] Step 0: train_step_timing in s in s=10.314\n"
        "[NeMo I 2025-03-07 22:35:26 exp_manager:450] Step 1: train_step_timing in s in s=7.549\n"
        "[NeMo I 2025-03-07 22:35:27 exp_manager:450] Step 0: validation_step_timing in s in s=0.5\n";
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_int_eq(r.steps[1].gen, NP_GEN_DELTA);
    ck_assert_int_eq(r.steps[1].iteration, 1);
    ck_assert_near(r.steps[1].step_time_s, 7.549);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_numbers)
{
    static const char a[] =
        L2(0, 9, "reduced_train_loss: 1.196000E+01 | train_step_timing in s: 1.249e+03 | consumed_samples: 6.4e3")
        L2(1, 9, "reduced_train_loss: +.5 | train_step_timing in s: 12. | TFLOPS_per_GPU: 865.7")
        L2(2, 9, "reduced_train_loss: 0x1p3 | train_step_timing in s: 12.39abc | consumed_samples: 1e")
        L2(3, 9, "reduced_train_loss: . | train_step_timing in s: --1 | consumed_samples: 1,000")
        L2(4, 9, "reduced_train_loss: 1 2 | train_step_timing in s: 1e5000 | consumed_samples: 1e-400")
        L2(5, 9, "reduced_train_loss: -inf | train_step_timing in s: Infinity | consumed_samples: 1234567890123456789012345678901234567890123456789012345678901234567890")
        L2(6, 9, "reduced_train_loss: 0.1000000000000000055511151231257827 | train_step_timing in s: 7.496000E-06")
        "Training epoch 0, iteration 7/9 | global_batch_size: 12.5 | train_step_timing in s:\t 2 \t| global_step: 7\n"
        "Training epoch 0, iteration 8/9 | global_batch_size: -4 | train_step_timing in s: nan(1) \n";
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.nsteps, 9);
    ck_assert_near(r.steps[0].loss, 11.96);
    ck_assert_near(r.steps[0].step_time_s, 1249.0);
    ck_assert_near(r.steps[0].consumed_samples, 6400.0);
    ck_assert_near(r.steps[1].loss, 0.5);
    ck_assert_near(r.steps[1].step_time_s, 12.0);
    ck_assert_near(r.steps[1].tflops_per_gpu, 865.7);
    ck_assert(isnan(r.steps[2].loss));
    ck_assert(isnan(r.steps[2].step_time_s));
    ck_assert(isnan(r.steps[2].consumed_samples));
    ck_assert(isnan(r.steps[3].loss));
    ck_assert(isnan(r.steps[3].step_time_s));
    ck_assert(isnan(r.steps[3].consumed_samples));
    ck_assert(isnan(r.steps[4].loss));
    ck_assert(isinf(r.steps[4].step_time_s)); /* overflows to inf: flagged */
    ck_assert_int_eq(r.steps[4].nan_seen, 1);
    ck_assert(r.steps[4].consumed_samples == 0.0);
    ck_assert(isinf(r.steps[5].loss) && r.steps[5].loss < 0);
    ck_assert_int_eq(r.steps[5].nan_seen, 1);
    ck_assert(isnan(r.steps[5].consumed_samples)); /* too long a token */
    ck_assert(r.steps[6].loss == 0.1);           /* correctly rounded */
    ck_assert(r.steps[6].step_time_s == 7.496e-06);
    ck_assert_int_eq(r.steps[6].nan_seen, 0);
    ck_assert_int_eq(r.steps[7].global_batch_size, -1);
    ck_assert_near(r.steps[7].step_time_s, 2.0);
    ck_assert_int_eq(r.steps[8].global_batch_size, -1);
    ck_assert(isnan(r.steps[8].step_time_s));
    ck_assert_int_eq(r.steps[8].nan_seen, 0);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_nan_flags)
{
    static const char a[] =
        " [2025-10-01 12:00:00] iteration        1/      50 | elapsed time per iteration (ms): 12390.1 | "
        "lm loss: 1.196000E+01 | grad norm: nan | number of nan iterations:   0 |\n"
        " [2025-10-01 12:00:12] iteration        2/      50 | elapsed time per iteration (ms): 12390.1 | "
        "lm loss: nan | grad norm: 0.512 | number of skipped iterations:   0 | number of nan iterations:   1 |\n"
        " [2025-10-01 12:00:24] iteration        3/      50 | elapsed time per iteration (ms): inf | lm loss: 1.0 |\n"
        " [2025-10-01 12:00:36] iteration        4/      50 | elapsed time per iteration (ms): 12390.1 | "
        "lm loss: 1.0 | grad norm: 0.5 | number of nan iterations:   0 |\n"
        "step 0 | epoch 0 | loss nan | grad_norm 0.5 | lr 1.00e-04 | mem 1.00 GiB | tps 10.0(1.0/gpu) |\n"
        "step 1 | epoch 0 | loss 1.0 | grad_norm inf | lr 1.00e-04 | mem 1.00 GiB | tps 10.0(1.0/gpu) |\n"
        "step 2 | epoch 0 | loss 1.0 | grad_norm 0.1 | lr 1.00e-04 | mem 1024 MiB | tps 10.0 |\n"
        "step 3 | epoch 0 | loss 1.0 | mem 7 | tps 10.0(1.0/cpu) |\n";
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.runs, 1);
    ck_assert_uint_eq(r.nsteps, 8); /* generations are counted apart: no run boundary */
    ck_assert_int_eq(r.steps[0].nan_seen, 1);
    ck_assert_near(r.steps[0].loss, 11.96);
    ck_assert_int_eq(r.steps[1].nan_seen, 1);
    ck_assert(isnan(r.steps[1].loss));
    ck_assert_int_eq(r.steps[2].nan_seen, 1);
    ck_assert(isinf(r.steps[2].step_time_s));
    ck_assert_int_eq(r.steps[3].nan_seen, 0);
    ck_assert_int_eq(r.steps[4].gen, NP_GEN_AUTOMODEL);
    ck_assert_int_eq(r.steps[4].nan_seen, 1);
    ck_assert_int_eq(r.steps[5].nan_seen, 1);
    ck_assert_int_eq(r.steps[6].nan_seen, 0);
    ck_assert_near(r.steps[6].peak_memory_bytes, 1073741824.0);
    ck_assert_near(r.steps[6].tokens_per_s, 10.0);
    ck_assert(isnan(r.steps[6].tokens_per_s_per_gpu));
    ck_assert(isnan(r.steps[7].peak_memory_bytes)); /* no unit */
    ck_assert(isnan(r.steps[7].tokens_per_s_per_gpu));
    ck_assert_near(r.steps[7].tokens_per_s, 10.0);
    np_scan_result_free(&r);
}
END_TEST

START_TEST(test_not_steps)
{
    static const char a[] =
        "[NeMo I 2025-04-11 22:11:20 nemo_logging:393] callbacks: [TimingCallback()] # train_step_timing\n"
        "    log_train_step_timing in s: true\n"
        "    train_step_timing\n"
        "Megatron: elapsed time per iteration is printed every log-interval iterations\n"
        "a | tps is a table\n"
        "Global Checkpoint Saver configured\n"
        "Step 3: train_step_timing\n";
    struct np_scan_result r;
    scan_buf(a, sizeof a - 1, &r);
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_uint_eq(r.runs, 0);
    ck_assert_int_eq(r.saw_checkpoint_save, 0);
    np_scan_result_free(&r);
}
END_TEST

/* ---------------------------------------------------------- files */

START_TEST(test_missing_file)
{
    struct np_scan_result r;
    struct np_error e;
    memset(&e, 0, sizeof e);
    const char *path = "tests/data/scan/no-such-file.log";
    ck_assert_int_eq(np_scan_file(path, NULL, &r, &e), NP_E_IO);
    ck_assert_str_eq(e.source, path);
    ck_assert_ptr_nonnull(strstr(e.text, strerror(ENOENT)));
    ck_assert_uint_eq(r.nsteps, 0);
    ck_assert_ptr_null(r.steps);
    char buf[1024];
    np_error_format(&e, buf, sizeof buf);
    ck_assert_ptr_nonnull(strstr(buf, path));
    memset(&e, 0, sizeof e);
    ck_assert_int_eq(np_scan_file("tests/data/scan", NULL, &r, &e), NP_E_IO);
    ck_assert_str_eq(e.source, "tests/data/scan");
    ck_assert_ptr_nonnull(strstr(e.text, "not a regular file (a folder)")); /* fileio.h: refused before a read */
    ck_assert_int_eq(np_scan_file(path, NULL, &r, NULL), NP_E_IO);
}
END_TEST

static const char *const golden[] = {
    "nemo2.log", "nemo2_tflops.log", "nemo1_tqdm.log", "delta.log", "mbridge.log", "automodel.log",
    "runs_appended.log", "hostile.log", "crlf.log", "cr_only.log", "partial_last.log", "mbridge_wrapped.log",
};
#define NGOLDEN (sizeof golden / sizeof golden[0])

/* A sink that lends memory of varying room (sometimes none: the scanner's own buffer then) and keeps the bytes
 * it is handed, as the NCCL reader's slots do (np_nccl_lend). */
struct lender {
    char *got, *lent;
    size_t len, cap, calls, lent_used;
};

static char *lender_buf(void *ctx, size_t *room)
{
    static const size_t rooms[] = {1, 5, 64, 0, 333, 2, 4096};
    struct lender *l = ctx;
    size_t r = rooms[l->calls++ % (sizeof rooms / sizeof rooms[0])];
    if (!r)
        return NULL;
    *room = r;
    memset(l->lent, 0x55, 4096); /* what was there before is not read */
    return l->lent;
}

static enum np_status lender_sink(void *ctx, const char *bytes, size_t n)
{
    struct lender *l = ctx;
    ck_assert_uint_le(l->len + n, l->cap);
    if (bytes == l->lent)
        l->lent_used++;
    memcpy(l->got + l->len, bytes, n);
    l->len += n;
    return NP_OK;
}

/* Reading in tiny chunks or all at once must not change anything. */
START_TEST(test_chunk_seams)
{
    static const size_t chunks[] = {1, 2, 3, 7, 64, 333, 4096, 0};
    char path[256];
    snprintf(path, sizeof path, DATA "%s", golden[_i]);
    size_t len;
    char *buf = np_test_read_all(path, &len);
    struct np_scan_result ref, r;
    scan_buf(buf, len, &ref);
    ck_assert_uint_gt(ref.nsteps, 0);
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        struct np_scan_opts o = {.all_steps = 1, .read_chunk = chunks[c]};
        ck_assert_int_eq(np_scan_file(path, &o, &r, NULL), NP_OK);
        assert_same_result(&ref, &r);
        ck_assert_uint_eq(r.bytes_read, len);
        ck_assert_uint_eq(r.file_size, len);
        np_scan_result_free(&r);
    }
    /* read into a sink's lent memory: the same steps, and the sink is handed every byte once, in order */
    struct lender l = {malloc(len + 1), malloc(4096), 0, len + 1, 0, 0};
    ck_assert(l.got && l.lent);
    struct np_scan_opts o = {.all_steps = 1, .read_chunk = 777, .sink = lender_sink, .sink_buf = lender_buf,
                             .sink_ctx = &l};
    ck_assert_int_eq(np_scan_file(path, &o, &r, NULL), NP_OK);
    assert_same_result(&ref, &r);
    ck_assert_uint_eq(l.len, len);
    ck_assert(memcmp(l.got, buf, len) == 0);
    ck_assert_uint_gt(l.lent_used, 0);
    np_scan_result_free(&r);
    free(l.got);
    free(l.lent);
    np_scan_result_free(&ref);
    free(buf);
}
END_TEST

/* Every tail size: the first (cut) line is dropped, never misread, and what
 * tail mode returns is exactly the end of what whole-file mode returns. */
START_TEST(test_tail_cut_points)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s", golden[_i]);
    struct np_scan_result all, t;
    scan_all(path, &all);
    ck_assert_uint_gt(all.nsteps, 0);
    for (size_t tb = 1; tb < 6000; tb += 13) {
        struct np_scan_opts o = {.window = 1 + tb % 3, .tail_bytes = tb, .read_chunk = tb % 4 ? 0 : 97};
        ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
        ck_assert_uint_ge(t.nsteps, 1);
        ck_assert_uint_le(t.nsteps, all.nsteps);
        size_t skip = all.nsteps - t.nsteps;
        for (size_t i = 0; i < t.nsteps; i++)
            assert_same_step(&t.steps[i], &all.steps[skip + i]);
        np_scan_result_free(&t);
    }
    np_scan_result_free(&all);
}
END_TEST

/* A > 1 MB log of two runs; the last run starts well before the last 64 KiB. */
static char *make_two_runs(size_t *len, size_t *run2_start)
{
    size_t cap = 4u << 20, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int run = 1; run <= 2; run++) {
        int steps = 3000;
        if (run == 2)
            *run2_start = n;
        for (int i = 0; i < steps; i++) {
            n += (size_t)snprintf(buf + n, cap - n,
                                  "[NeMo I 2025-04-11 22:11:20 nemo_logging:393] Async finalization time took 0.%03d s\n"
                                  "pool0-1968:49947:49947 [1] NCCL INFO AllGather: opCount %x sendbuff 0x7f2d count %d\n",
                                  i % 1000, i, i * 7);
            n += (size_t)snprintf(buf + n, cap - n,
                                  "Training epoch 0, iteration %d/%d | lr: 1e-05 | global_batch_size: %d | "
                                  "global_step: %d | reduced_train_loss: %.4g | train_step_timing in s: %.4g | "
                                  "consumed_samples: %d\n",
                                  i, steps - 1, 64 * run, i, 10.0 - i * 0.001, 1.0 + (i % 17) * 0.01,
                                  (i + 1) * 64 * run);
            ck_assert_uint_lt(n, cap - 1024);
        }
    }
    *len = n;
    return buf;
}

/* Tail mode with a step budget (what nemoperf-parse uses): only the last `keep`
 * steps are parsed, and they equal the whole-file scan's last steps, through run
 * boundaries and tqdm redraws; the run start stops the reading backwards. */
START_TEST(test_tail_keep)
{
    size_t len, run2;
    char *buf = make_two_runs(&len, &run2);
    const char *path = write_tmp(3, buf, len);
    struct np_scan_result all, t;
    scan_all(path, &all);
    struct np_scan_opts o = {.window = 1, .keep = 10};
    ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
    ck_assert_uint_eq(t.nsteps, 10);
    for (size_t i = 0; i < t.nsteps; i++)
        assert_same_step(&t.steps[i], &all.steps[all.nsteps - 10 + i]);
    np_scan_result_free(&t);
    /* a budget larger than the last run: the reading stops at the run start */
    o.window = 4000;
    o.keep = 4000;
    o.tail_bytes = 3000;
    ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
    ck_assert_uint_eq(t.nsteps, all.nsteps);
    ck_assert_uint_eq(t.runs, 2);
    for (size_t i = 0; i < t.nsteps; i++)
        assert_same_step(&t.steps[i], &all.steps[i]);
    np_scan_result_free(&t);
    np_scan_result_free(&all);
    free(buf);
    unlink(path);
    /* the golden logs: redraws (tqdm), appended runs, other generations */
    const char *logs[] = {"tests/data/scan/nemo1_tqdm.log", "tests/data/scan/runs_appended.log",
                          "tests/data/scan/mbridge.log", "tests/data/scan/delta.log", "tests/data/scan/hostile.log",
                          /* found by the fuzzer: "Global Checkpoint Save" inside a step line */
                          "tests/data/scan/regress_ckpt_in_step.log"};
    for (size_t k = 0; k < sizeof logs / sizeof logs[0]; k++) {
        struct np_scan_opts wo = {.all_steps = 1};
        ck_assert_int_eq(np_scan_file(logs[k], &wo, &all, NULL), NP_OK);
        struct np_scan_opts ko = {.window = 1, .keep = 3};
        ck_assert_int_eq(np_scan_file(logs[k], &ko, &t, NULL), NP_OK);
        size_t want = all.nsteps < 3 ? all.nsteps : 3;
        ck_assert_msg(t.nsteps == want, "%s: %zu steps, want %zu", logs[k], t.nsteps, want);
        for (size_t i = 0; i < t.nsteps; i++)
            assert_same_step(&t.steps[i], &all.steps[all.nsteps - want + i]);
        ck_assert_int_eq(t.saw_checkpoint_save, all.saw_checkpoint_save);
        np_scan_result_free(&t);
        np_scan_result_free(&all);
    }
    /* the fuzzer's case, with its options: the last step line also holds a checkpoint needle */
    struct np_scan_opts wo = {.all_steps = 1}, fo = {.window = 7, .tail_bytes = 708, .keep = 6};
    ck_assert_int_eq(np_scan_file("tests/data/scan/regress_ckpt_in_step.log", &wo, &all, NULL), NP_OK);
    ck_assert_int_eq(np_scan_file("tests/data/scan/regress_ckpt_in_step.log", &fo, &t, NULL), NP_OK);
    ck_assert_uint_eq(all.nsteps, 4);
    ck_assert_uint_eq(t.nsteps, 4);
    assert_same_step(&t.steps[3], &all.steps[3]);
    ck_assert_int_eq(t.saw_checkpoint_save, all.saw_checkpoint_save);
    np_scan_result_free(&t);
    np_scan_result_free(&all);
    /* found by the fuzzer seeded with the real-log corpus: tqdm-rounded "global_step=2e+3" on bars whose k/n
     * cannot be read.  The whole file refines the second from the first (2000, then 2001, within 1995..2004);
     * a tail that holds only the last line takes what the line says (2000).  Same line, inexact number. */
    struct np_scan_opts ro = {.window = 1, .tail_bytes = 778, .keep = 4};
    ck_assert_int_eq(np_scan_file("tests/data/scan/regress_tqdm_rounded_tail.log", &wo, &all, NULL), NP_OK);
    ck_assert_int_eq(np_scan_file("tests/data/scan/regress_tqdm_rounded_tail.log", &ro, &t, NULL), NP_OK);
    ck_assert_uint_eq(all.nsteps, 2);
    ck_assert_uint_eq(t.nsteps, 1);
    ck_assert_uint_eq(t.steps[0].offset, all.steps[1].offset);
    ck_assert_int_eq(all.steps[0].iteration, 2000);
    ck_assert_int_eq(all.steps[1].iteration, 2001);
    ck_assert_int_eq(t.steps[0].iteration, 2000);
    np_scan_result_free(&t);
    np_scan_result_free(&all);
    /* found by the fuzzer: "global_step=0e+3" (which tqdm never prints: 0 is "0") is 0 exactly, not 0 within
     * 10 (it was refined to the step before + 1 in the whole file, and read 0 from the line alone) */
    static const char zero[] = "Epoch 0: : , global_step=1.000, train_step_timing in s=68.70]\n"
                               "Epoch 0: : , global_step=2.000, train_step_timing in s=68.70]\n"
                               "Epoch 0: : , global_step=0e+3, train_step_timing in s=68.70]\n";
    scan_buf(zero, sizeof zero - 1, &all);
    ck_assert_uint_eq(all.runs, 2);
    ck_assert_int_eq(all.steps[all.nsteps - 1].iteration, 0);
    np_scan_result_free(&all);
}
END_TEST

/* Tail mode reads backwards only as far as the budget needs: a 50-step log with chatter is read down
 * to its 11th step, not whole, in a few reads, and gives the whole-file scan's last 40 steps; a budget
 * the log cannot meet reads it all; a last line longer than the first read is not a step. */
static char *make_fifty(size_t *len, int chatter, int long_tail)
{
    size_t cap = 1u << 20, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int i = 0; i < 50; i++) {
        for (int c = 0; c < chatter; c++)
            n += (size_t)snprintf(buf + n, cap - n, "pool0-1968:49947:49947 [%d] NCCL INFO AllGather: opCount %x\n",
                                  c, i);
        n += (size_t)snprintf(buf + n, cap - n,
                              "Training epoch 0, iteration %d/49 | lr: 1e-05 | global_batch_size: 128 | "
                              "global_step: %d | reduced_train_loss: %.4g | train_step_timing in s: %.4g | "
                              "consumed_samples: %d\n",
                              i, i, 10.0 - i * 0.01, 1.0 + (i % 7) * 0.01, (i + 1) * 128);
    }
    for (int c = 0; c < 40; c++) /* teardown */
        n += (size_t)snprintf(buf + n, cap - n, "[rank%d]: destroy_process_group() was not called\n", c);
    if (long_tail) { /* an unterminated last line longer than the first read */
        memset(buf + n, 'x', 40000);
        n += 40000;
    }
    *len = n;
    return buf;
}

START_TEST(test_tail_backwards)
{
    for (int long_tail = 0; long_tail <= 1; long_tail++) {
        size_t len;
        char *buf = make_fifty(&len, 30, long_tail);
        const char *path = write_tmp(4, buf, len);
        struct np_scan_result all, t;
        scan_all(path, &all);
        ck_assert_uint_eq(all.nsteps, 50);
        struct np_scan_opts o = {.window = 1, .keep = 40, .tail_bytes = 1u << 20};
        ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
        ck_assert_uint_eq(t.nsteps, 40);
        for (size_t i = 0; i < t.nsteps; i++)
            assert_same_step(&t.steps[i], &all.steps[10 + i]);
        ck_assert_int_eq(t.truncated_start, 1);
        /* read down to about step 10 (its line is at all.steps[10].offset): the reads are sized from the bytes per
         * step seen, with a margin of an eighth and 2 KiB */
        uint64_t needed = len - all.steps[10].offset;
        ck_assert_uint_ge(t.bytes_read, needed);
        ck_assert_msg(t.bytes_read < needed + needed / 8 + 4096 + (long_tail ? 40000u : 0u) && t.bytes_read < len,
                      "read %llu bytes of %zu for a need of %llu", (unsigned long long)t.bytes_read, len,
                      (unsigned long long)needed);
        np_scan_result_free(&t);
        /* more steps than the log holds: the whole file, the same steps */
        o.keep = 60;
        ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
        ck_assert_uint_eq(t.nsteps, 50);
        ck_assert_int_eq(t.truncated_start, 0);
        ck_assert_uint_eq(t.bytes_read, len);
        for (size_t i = 0; i < t.nsteps; i++)
            assert_same_step(&t.steps[i], &all.steps[i]);
        np_scan_result_free(&t);
        /* a tail limit inside the log: what lies below it is not read, the steps are the last ones above */
        o.keep = 40;
        o.tail_bytes = 4000;
        ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
        if (!long_tail) /* (behind a 40 KB last line no step is that close: the tail grows until one is) */
            ck_assert_uint_le(t.bytes_read, 4001);
        ck_assert_uint_ge(t.nsteps, 1);
        assert_same_step(&t.steps[t.nsteps - 1], &all.steps[49]);
        np_scan_result_free(&t);
        np_scan_result_free(&all);
        free(buf);
        unlink(path);
    }
}
END_TEST

/* Lean mode (nemoperf-parse's default): the last step as a full parse gives it; the older ones with the same
 * identity, time and NaN flag; loss, batch size, peak memory and TFLOPS only where no later step has them, so the
 * newest known value of each is the same; and it does skip what it may (else it would save nothing). */
START_TEST(test_tail_lean)
{
    char buf[8192];
    size_t n = 0;
    for (int i = 0; i < 12; i++) {
        char extra[160] = "";
        if (i == 3) /* the only TFLOPS figure: older than every later step, so it must survive */
            snprintf(extra, sizeof extra, " | TFLOPS_per_GPU: 612.5");
        n += (size_t)snprintf(buf + n, sizeof buf - n,
                              "Training epoch 0, iteration %d/11 | global_batch_size: 128 | global_step: %d | "
                              "peak_memory_usage: %d | reduced_train_loss: %s | train_step_timing in s: %.4g%s | "
                              "consumed_samples: %d | grad_norm: %s\n",
                              i, i, 1000 + i, i == 6 ? "nan" : "2.5", 1.0 + i * 0.01, extra, (i + 1) * 128,
                              i == 8 ? "inf" : i == 9 ? "1.5e+999" : "0.25");
        n += (size_t)snprintf(buf + n, sizeof buf - n, "NCCL INFO chatter %d\n", i);
    }
    /* a redraw of the last step: the newer line lacks the loss and the samples, the older one has them */
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "Training epoch 0, iteration 11/11 | global_step: 11 | train_step_timing in s: 1.2\n");
    const char *path = write_tmp(5, buf, n);
    struct np_scan_opts o = {.window = 1, .keep = 20};
    struct np_scan_result full, lean;
    ck_assert_int_eq(np_scan_file(path, &o, &full, NULL), NP_OK);
    o.lean = 1;
    ck_assert_int_eq(np_scan_file(path, &o, &lean, NULL), NP_OK);
    ck_assert_uint_eq(full.nsteps, 12);
    ck_assert_uint_eq(lean.nsteps, 12);
    assert_same_step(&lean.steps[11], &full.steps[11]);
    ck_assert(full.steps[11].loss == 2.5 && full.steps[11].consumed_samples == 1536); /* from the older redraw */
    for (size_t i = 0; i < 11; i++) {
        const struct np_step *a = &full.steps[i], *b = &lean.steps[i];
        ck_assert_int_eq(b->iteration, a->iteration);
        ck_assert_int_eq(b->total, a->total);
        ck_assert(b->step_time_s == a->step_time_s);
        ck_assert_int_eq(b->nan_seen, a->nan_seen);
        ck_assert_int_eq(b->gen, a->gen);
        ck_assert_uint_eq(b->offset, a->offset);
        ck_assert(isnan(b->consumed_samples)); /* skipped: nobody reads it before the last step */
        ck_assert(!isnan(a->consumed_samples));
        ck_assert_int_eq(a->nan_seen, i == 6 || i == 8 || i == 9); /* NaN loss, inf and overflowing grad norms */
    }
    /* TFLOPS only on step 3: kept there; loss (on the last step) no longer stored before it */
    ck_assert(lean.steps[3].tflops_per_gpu == 612.5);
    ck_assert(isnan(lean.steps[4].loss) && full.steps[4].loss == 2.5);
    np_scan_result_free(&full);
    np_scan_result_free(&lean);
    unlink(path);
}
END_TEST

START_TEST(test_tail_big)
{
    size_t len, run2;
    char *buf = make_two_runs(&len, &run2);
    ck_assert_uint_gt(len, 1u << 20);
    ck_assert_uint_gt(len - run2, 64u << 10);
    const char *path = write_tmp(2, buf, len);
    struct np_scan_result all, t;
    scan_all(path, &all);
    ck_assert_uint_eq(all.runs, 2);
    ck_assert_uint_eq(all.nsteps, 3000);
    ck_assert_uint_gt(all.steps[0].offset, run2);
    ck_assert_uint_lt(all.steps[0].offset, run2 + 400);
    ck_assert_int_eq(all.truncated_start, 0);

    /* default tail: 10 steps found in the last 64 KiB, no run start seen */
    ck_assert_int_eq(np_scan_file(path, NULL, &t, NULL), NP_OK);
    ck_assert_uint_ge(t.nsteps, 10);
    ck_assert_uint_eq(t.runs, 1);
    ck_assert_int_eq(t.truncated_start, 1);
    ck_assert_uint_eq(t.file_size, len);
    ck_assert_uint_le(t.bytes_read, (64u << 10) + 1);
    for (size_t i = 0; i < t.nsteps; i++)
        assert_same_step(&t.steps[i], &all.steps[all.nsteps - t.nsteps + i]);
    ck_assert_int_eq(t.steps[t.nsteps - 1].iteration, 2999);
    np_scan_result_free(&t);

    /* a window larger than the last run: read backwards until the run start */
    struct np_scan_opts o = {.window = 5000, .tail_bytes = 3000};
    ck_assert_int_eq(np_scan_file(path, &o, &t, NULL), NP_OK);
    ck_assert_uint_eq(t.runs, 2);
    ck_assert_int_eq(t.truncated_start, 1);
    ck_assert_uint_lt(t.bytes_read, 2 * (uint64_t)len);
    assert_same_result(&all, &t);
    np_scan_result_free(&t);

    /* window between: doubling stops as soon as enough steps are seen */
    struct np_scan_opts o2 = {.window = 1000, .tail_bytes = 4096};
    ck_assert_int_eq(np_scan_file(path, &o2, &t, NULL), NP_OK);
    ck_assert_uint_ge(t.nsteps, 1000);
    ck_assert_uint_lt(t.nsteps, 3000);
    ck_assert_uint_eq(t.runs, 1);
    for (size_t i = 0; i < t.nsteps; i++)
        assert_same_step(&t.steps[i], &all.steps[all.nsteps - t.nsteps + i]);
    np_scan_result_free(&t);

    /* the whole file is smaller than tail_bytes: one read, not truncated */
    struct np_scan_opts o3 = {.tail_bytes = 8u << 20};
    ck_assert_int_eq(np_scan_file(path, &o3, &t, NULL), NP_OK);
    ck_assert_int_eq(t.truncated_start, 0);
    ck_assert_uint_eq(t.bytes_read, len);
    assert_same_result(&all, &t);
    np_scan_result_free(&t);

    np_scan_result_free(&all);
    unlink(path);
    free(buf);
}
END_TEST

/* np_scan_buffer on a tail: base_offset > 0 drops the cut first line. */
START_TEST(test_buffer_base_offset)
{
    static const char a[] = "ining epoch 0, iteration 3/9 | train_step_timing in s: 1.5\n"
                            L2(4, 9, "train_step_timing in s: 2.5");
    const size_t nl = (size_t)(strchr(a, '\n') - a);
    struct np_scan_result r;
    struct np_error e = {0};
    ck_assert_int_eq(np_scan_buffer(a, sizeof a - 1, 1000, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 1);
    ck_assert_int_eq(r.steps[0].iteration, 4);
    ck_assert_uint_eq(r.steps[0].offset, 1000 + nl + 1);
    np_scan_result_free(&r);
    ck_assert_int_eq(np_scan_buffer(a + nl, sizeof a - 1 - nl, 1000 + nl, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 1); /* starts on the terminator: the next line is whole */
    ck_assert_uint_eq(r.steps[0].offset, 1000 + nl + 1);
    np_scan_result_free(&r);
    /* read as a whole log, the fragment has no anchor and no global_step: a
     * step of unknown iteration (its time parsed) */
    ck_assert_int_eq(np_scan_buffer(a, sizeof a - 1, 0, &r, &e), NP_OK);
    ck_assert_uint_eq(r.nsteps, 2);
    ck_assert_int_eq(r.steps[0].iteration, -1);
    ck_assert_near(r.steps[0].step_time_s, 1.5);
    ck_assert_int_eq(r.steps[1].iteration, 4);
    np_scan_result_free(&r);
}
END_TEST

struct thread_job {
    const char *path;
    int all;
    struct np_scan_result ref;
    int bad;
};

static void *thread_main(void *arg)
{
    struct thread_job *j = arg;
    for (int k = 0; k < 30; k++) {
        struct np_scan_result r;
        struct np_scan_opts o = {.all_steps = j->all, .tail_bytes = 2048};
        if (np_scan_file(j->path, &o, &r, NULL) != NP_OK || r.nsteps != j->ref.nsteps ||
            (r.nsteps && r.steps[r.nsteps - 1].offset != j->ref.steps[r.nsteps - 1].offset))
            j->bad++;
        np_scan_result_free(&r);
    }
    return NULL;
}

START_TEST(test_threads)
{
    struct thread_job jobs[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        static char paths[8][256];
        snprintf(paths[i], sizeof paths[i], DATA "%s", golden[i % 6]);
        jobs[i].path = paths[i];
        jobs[i].all = i % 2;
        jobs[i].bad = 0;
        struct np_scan_opts o = {.all_steps = jobs[i].all, .tail_bytes = 2048};
        ck_assert_int_eq(np_scan_file(paths[i], &o, &jobs[i].ref, NULL), NP_OK);
    }
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &jobs[i]), 0);
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(jobs[i].bad, 0);
        np_scan_result_free(&jobs[i].ref);
    }
}
END_TEST

struct grow_job {
    const char *path;
    int shrink;
    volatile int stop;
};

static void *grow_main(void *arg)
{
    struct grow_job *g = arg;
    for (int i = 0; !g->stop && i < 20000; i++) {
        int fd = open(g->path, O_WRONLY | O_APPEND);
        if (fd < 0)
            break;
        char line[256];
        int n = snprintf(line, sizeof line,
                         "Training epoch 0, iteration %d/19999 | train_step_timing in s: 1.5 | x: %d\n", i, i);
        /* written in two pieces so readers see partial lines */
        if (write(fd, line, (size_t)n / 2) < 0 || write(fd, line + n / 2, (size_t)(n - n / 2)) < 0)
            i = 20000;
        if (g->shrink && i % 500 == 499 && ftruncate(fd, 0) != 0)
            i = 20000;
        close(fd);
    }
    return NULL;
}

/* Appends while we read: never a crash, and what is read is a consistent
 * prefix.  Truncation under our feet: still no crash (values may mix). */
START_TEST(test_growing_file)
{
    const char *path = write_tmp(3, "", 0);
    struct grow_job g = {path, _i, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, grow_main, &g), 0);
    for (int k = 0; k < 300; k++) {
        struct np_scan_result r;
        struct np_scan_opts o = {.all_steps = k % 2, .read_chunk = k % 3 ? 0 : 100, .tail_bytes = 512};
        ck_assert_int_eq(np_scan_file(path, &o, &r, NULL), NP_OK);
        ck_assert_uint_le(r.bytes_read, 2 * r.file_size + 1);
        for (size_t i = 0; i < r.nsteps; i++) {
            ck_assert_uint_lt(r.steps[i].offset, r.file_size);
            if (!g.shrink) {
                ck_assert_near(r.steps[i].step_time_s, 1.5);
                if (i)
                    ck_assert_int_eq(r.steps[i].iteration, r.steps[i - 1].iteration + 1);
            }
        }
        np_scan_result_free(&r);
    }
    g.stop = 1;
    pthread_join(th, NULL);
    unlink(path);
}
END_TEST

struct fifo_job {
    const char *path;
    const char *data;
    size_t len;
};

static void *fifo_main(void *arg)
{
    struct fifo_job *f = arg;
    int fd = open(f->path, O_WRONLY);
    if (fd >= 0) {
        for (size_t off = 0; off < f->len;) {
            ssize_t w = write(fd, f->data + off, f->len - off > 1000 ? 1000 : f->len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        close(fd);
    }
    return NULL;
}

START_TEST(test_fifo)
{
    size_t len;
    char *buf = np_test_read_all(DATA "nemo2.log", &len);
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/check_scan_fifo_%d", dir && *dir ? dir : "/tmp", (int)getpid());
    unlink(path);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    struct fifo_job f = {path, buf, len};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, fifo_main, &f), 0);
    struct np_scan_result r, ref;
    struct np_scan_opts so = {.window = 10, .streams = 1};
    ck_assert_int_eq(np_scan_file(path, &so, &r, NULL), NP_OK); /* tail mode on a stream: reads it all */
    pthread_join(th, NULL);
    scan_buf(buf, len, &ref);
    assert_same_result(&ref, &r);
    ck_assert_uint_eq(r.bytes_read, len);
    np_scan_result_free(&r);
    np_scan_result_free(&ref);
    unlink(path);
    free(buf);
}
END_TEST

/* The marks (scan.h): every needle holds one (so a line without any is nothing to the scanner: the NCCL reader
 * leaves such lines out of what it hands a deferred scan); np_scan_line_end finds memchr's '\n' and, in the same
 * pass, np_scan_marked's answer for the bytes before it, on every length and alignment (random lines of the
 * bytes that matter, the SIMD steps' ends among them). */
START_TEST(test_marks)
{
    ck_assert_int_eq(np_scan_needles_marked(), 1);
    ck_assert_int_eq(np_scan_marked("node0:1:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x7f recvbuff 0x7f "
                                    "count 4 datatype 7 op 0 root 0 comm 0x1 [nranks=8] stream 0x1", 118), 0);
    ck_assert_int_eq(np_scan_marked("Global Checkpoint Save", 22), 1);
    ck_assert_int_eq(np_scan_marked("elapsed time per iteration", 26), 1);
    ck_assert_int_eq(np_scan_marked("k", 1) + np_scan_marked("p", 1) + np_scan_marked("kxp", 3), 0);
    ck_assert_int_eq(np_scan_init(NULL), NP_OK);
    static const char alpha[] = "__|kpsxx  \nab";
    char buf[400 + 64];
    unsigned seed = 12345;
    int avx2 = np_scan_avx2(-1);
    for (int round = 0; round < 40000; round++) {
        np_scan_avx2(round < 20000 && avx2); /* the AVX2 path where the CPU has it, and SSE2's */
        size_t off = (size_t)(round % 37), len = (size_t)(round % 331);
        memset(buf, 'p', sizeof buf); /* past e: bytes that would pair */
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) % 64;
            buf[off + i] = r < sizeof alpha - 1 ? alpha[r] : (char)('c' + r % 8); /* mostly unmarked */
        }
        int marked = -1;
        const char *got = np_scan_line_end(buf + off, buf + off + len, &marked);
        const char *want = memchr(buf + off, '\n', len);
        ck_assert_ptr_eq(got, want);
        if (want)
            ck_assert_int_eq(marked, np_scan_marked(buf + off, (size_t)(want - (buf + off))));
        else if (np_scan_marked(buf + off, len))
            ck_assert_int_eq(marked, 1);
    }
    np_scan_avx2(1);
}
END_TEST

static Suite *scan_suite(void)
{
    Suite *s = suite_create("scan");
    TCase *tc = tcase_create("generations");
    tcase_add_test(tc, test_nemo2);
    tcase_add_test(tc, test_marks);
    tcase_add_test(tc, test_nemo2_tflops_sci);
    tcase_add_test(tc, test_nemo1_tqdm);
    tcase_add_test(tc, test_delta);
    tcase_add_test(tc, test_mbridge);
    tcase_add_test(tc, test_mbridge_energy_prefixes);
    tcase_add_test(tc, test_mbridge_wrapped);
    tcase_add_test(tc, test_bar_unknown_total);
    tcase_add_test(tc, test_automodel);
    tcase_add_test(tc, test_gen_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("hostile");
    tcase_add_test(tc, test_hostile_file);
    tcase_add_test(tc, test_nul_bytes);
    tcase_add_test(tc, test_invalid_utf8);
    tcase_add_test(tc, test_long_line);
    tcase_add_test(tc, test_line_endings);
    tcase_add_test(tc, test_ansi);
    tcase_add_test(tc, test_delta_in_s_twice);
    tcase_add_test(tc, test_partial_last_line);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_runs_appended);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_nan_flags);
    tcase_add_test(tc, test_not_steps);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_missing_file);
    tcase_add_loop_test(tc, test_chunk_seams, 0, NGOLDEN);
    tcase_add_loop_test(tc, test_tail_cut_points, 0, NGOLDEN);
    tcase_add_test(tc, test_tail_big);
    tcase_add_test(tc, test_tail_keep);
    tcase_add_test(tc, test_tail_backwards);
    tcase_add_test(tc, test_tail_lean);
    tcase_add_test(tc, test_buffer_base_offset);
    tcase_add_test(tc, test_threads);
    tcase_add_loop_test(tc, test_growing_file, 0, 2);
    tcase_add_test(tc, test_fifo);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(scan_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
