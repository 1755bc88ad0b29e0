/* check_session.c - one nemoperf-parse invocation as a library call (src/report/session.c): the identity
 * options' table, the usage checks np_session_run makes before anything is read, and the --slurm backend
 * the front end passes in (called once, its exit code returned; report/ never builds one itself).
 * No stand-in but the backend callback, which is the interface under test.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "nemoperf/report/session.h"
#include "nemoperf/util/diag.h"

START_TEST(test_given_table)
{
    struct np_session s;
    np_session_init(&s);
    ck_assert_int_eq(np_session_given(&s, "gpu", "H100"), 1);
    ck_assert_str_eq(s.opts.given.gpu_type, "h100");
    ck_assert_int_eq(np_session_given(&s, "dtype", "MXFP8"), 1);
    ck_assert_int_eq(s.opts.given.dtype, NP_DTYPE_FP8);
    ck_assert_str_eq(s.opts.given.precision, "fp8_mx");
    ck_assert_int_eq(np_session_given(&s, "model", "qwen3_moe_30b_te_deepep"), 1);
    ck_assert_str_eq(s.opts.given.model_size, "qwen3_moe_30b_te_deepep");
    ck_assert_int_eq(np_session_given(&s, "gbs", "512"), 1);
    ck_assert_int_eq(s.opts.given.gbs, 512);
    ck_assert_int_eq(np_session_given(&s, "task", "lora"), 1);
    ck_assert_str_eq(s.opts.given.task, "lora");
    ck_assert_int_eq(np_session_given(&s, "gbs", "0"), 0);
    ck_assert_int_eq(np_session_given(&s, "gpu", "h999"), 0);
    ck_assert_int_eq(np_session_given(&s, "container", "x"), 0);
    ck_assert_int_eq(np_session_given(&s, "window", "5"), -1); /* not an identity option */
}
END_TEST

START_TEST(test_usage_before_reading)
{
    char *one[] = {(char *)"a"};
    struct np_session s;
    np_session_init(&s);
    s.compare = 1;
    s.args = one;
    s.nargs = 1;
    ck_assert_int_eq(np_session_run(&s), 2);
    np_session_init(&s);
    s.store = s.history = 1;
    ck_assert_int_eq(np_session_run(&s), 2);
    np_session_init(&s);
    s.opts.group = 1;
    s.fmt = NP_FMT_MARKDOWN;
    ck_assert_int_eq(np_session_run(&s), 2);
}
END_TEST

static int backend_calls;
static int backend_refuses(void *ctx, struct np_backend **be)
{
    (void)ctx;
    *be = NULL;
    backend_calls++;
    return 2; /* as SLURM_SUBMIT=bogus: a usage error, said by the front end */
}

START_TEST(test_backend_passed_in)
{
    char *none[] = {(char *)"/nonexistent-np-session"};
    struct np_session s;
    np_session_init(&s);
    s.slurm = 1;
    s.backend = backend_refuses;
    s.args = none;
    s.nargs = 1;
    backend_calls = 0;
    ck_assert_int_eq(np_session_run(&s), 2);
    ck_assert_int_eq(backend_calls, 1);
}
END_TEST

int main(void)
{
    np_set_progname("check_session");
    Suite *su = suite_create("session");
    TCase *tc = tcase_create("session");
    tcase_add_test(tc, test_given_table);
    tcase_add_test(tc, test_usage_before_reading);
    tcase_add_test(tc, test_backend_passed_in);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? 1 : 0;
}
