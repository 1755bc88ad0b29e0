/* check_runstate.c - the last error of a log: which line wins, how it is cleaned, what is not an error. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/parse/runstate.h"

static enum np_log_error last(const char *text, char *out, size_t size)
{
    return np_log_last_error_buf(text, strlen(text), out, size);
}

START_TEST(test_kinds_and_order)
{
    char o[300];
    /* the last error line wins among NCCL, OOM and Python ones */
    ck_assert_int_eq(last("x\ntorch.OutOfMemoryError: CUDA out of memory. Tried\nsrun: error: n1: task 0: Exited\n", o,
                          sizeof o),
                     NP_LOGERR_OOM);
    ck_assert_str_eq(o, "CUDA out of memory: torch.OutOfMemoryError: CUDA out of memory. Tried");
    ck_assert_int_eq(last("RuntimeError: first\n0: ValueError: rank-labelled (srun --label)\n", o, sizeof o),
                     NP_LOGERR_PYTHON);
    ck_assert_str_eq(o, "Python exception: 0: ValueError: rank-labelled (srun --label)");
    ck_assert_int_eq(last("ncclInternalError: internal error - please report\n", o, sizeof o), NP_LOGERR_NCCL);
    /* Slurm's kill message wins over a later Python line (the traceback it caused) */
    ck_assert_int_eq(last("slurmstepd: error: *** STEP 5.0 ON n1 CANCELLED AT 2026-11-22T10:00:00 DUE TO TIME LIMIT ***\n"
                          "KeyboardInterrupt\n",
                          o, sizeof o),
                     NP_LOGERR_SLURM);
    ck_assert_ptr_nonnull(strstr(o, "Slurm TIMEOUT: slurmstepd: error: *** STEP 5.0"));
    ck_assert_int_eq(last("slurmstepd: error: *** JOB 5 ON n1 CANCELLED AT 2026-11-22T10:00:00 ***\n", o, sizeof o),
                     NP_LOGERR_SLURM);
    ck_assert_ptr_nonnull(strstr(o, "Slurm CANCELLED: "));
}
END_TEST

START_TEST(test_not_errors)
{
    char o[300];
    /* NeMo warnings, a Hydra line, an NCCL INFO trace and a step line are not errors */
    const char *t = "[NeMo W 2025-04-11 nemo_logging:405] UserWarning: async_grad_allreduce is deprecated\n"
                    "Error executing job with overrides: []\n"
                    "n1:123:456 [0] NCCL INFO AllReduce: opCount 1\n"
                    "Training epoch 0, iteration 1/49 | train_step_timing in s: 12.3 |\n"
                    "  ValueError: indented (inside a traceback frame, not its last line)\n";
    ck_assert_int_eq(last(t, o, sizeof o), NP_LOGERR_NONE);
    ck_assert_str_eq(o, "");
    ck_assert_int_eq(last("", o, sizeof o), NP_LOGERR_NONE);
}
END_TEST

START_TEST(test_cleaning)
{
    char o[64];
    /* \r redraws: what shows is after the last \r; control bytes become '?'; long lines are cut with "..." */
    ck_assert_int_eq(last("progress 10%\rRuntimeError: bad\x1b[0m thing\r\n", o, sizeof o), NP_LOGERR_PYTHON);
    ck_assert_str_eq(o, "Python exception: RuntimeError: bad?[0m thing");
    char big[2000];
    memset(big, 'a', sizeof big);
    memcpy(big, "OSError: ", 9);
    big[sizeof big - 1] = '\0';
    char wide[300];
    ck_assert_int_eq(last(big, wide, sizeof wide), NP_LOGERR_PYTHON);
    ck_assert_uint_eq(strlen(wide), strlen("Python exception: ") + 200 + 3);
    ck_assert_str_eq(wide + strlen(wide) - 3, "...");
    /* a tiny buffer still gets a terminated string */
    char tiny[8];
    last("OSError: x\n", tiny, sizeof tiny);
    ck_assert_str_eq(tiny, "Python ");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("runstate");
    TCase *tc = tcase_create("runstate");
    tcase_add_test(tc, test_kinds_and_order);
    tcase_add_test(tc, test_not_errors);
    tcase_add_test(tc, test_cleaning);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
