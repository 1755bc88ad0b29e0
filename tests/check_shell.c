/* check_shell.c - quoting and the sbatch command-line backend.
 *
 * Quoted strings are round-tripped through a real /bin/sh (`printf %s <word>`)
 * for hostile inputs and every byte value; nothing may execute.  The sbatch
 * backend runs small stub programs written here: success, refusal, garbage
 * output, a hang (killed with its children after the timeout), and the
 * environment it passes (inherited SLURM_* dropped, SLURM_CONF and the user's SBATCH_* kept).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/util/fileio.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/util/text.h"
#include "nemoperf/slurm/backend.h"

static char tmp[] = "/tmp/np-shell-XXXXXX";
static char oldcwd[4096];

static void setup(void)
{
    ck_assert(mkdtemp(tmp));
    ck_assert(getcwd(oldcwd, sizeof oldcwd));
    ck_assert(chdir(tmp) == 0);
}

static void teardown(void)
{
    ck_assert(chdir(oldcwd) == 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ck_assert(system(cmd) == 0);
}

/* Run `printf %s <quoted>` through /bin/sh; return its output (static buffer). */
static const char *sh_roundtrip(const char *s, size_t *outlen)
{
    static char out[4096];
    char *q = np_shell_quote(s);
    ck_assert_ptr_nonnull(q);
    size_t n = strlen(q) + 64;
    char *cmd = malloc(n);
    snprintf(cmd, n, "printf %%s %s", q);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    *outlen = fread(out, 1, sizeof out - 1, p);
    out[*outlen] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    free(cmd);
    free(q);
    return out;
}

static const char *const hostile[] = {
    "", "plain", "with space", "it's", "'", "''", "\"", "a\"b'c", "$(touch pwned)", "`touch pwned`",
    "$HOME", "${HOME}", "a\nb", "\n", "\t tab", "*", "~", "a;touch pwned;b", "a|b&c", "%s%n%p%j",
    "\\", "\\'", "'\\''", "!", "#comment", "$((1+1))", "-n", "--help", "a\\\nb", "é ü 中文",
    "/st a'ge \"q\" $(touch pwned) `touch pwned` %p"};

START_TEST(test_shell_quote_roundtrip)
{
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        size_t n;
        const char *out = sh_roundtrip(hostile[i], &n);
        ck_assert_msg(n == strlen(hostile[i]) && memcmp(out, hostile[i], n) == 0, "round trip of [%s] gave [%s]",
                      hostile[i], out);
    }
    /* every byte 1..255 in one word */
    char all[256];
    for (int b = 1; b < 256; b++)
        all[b - 1] = (char)b;
    all[255] = '\0';
    size_t n;
    const char *out = sh_roundtrip(all, &n);
    ck_assert_uint_eq(n, 255);
    ck_assert(memcmp(out, all, 255) == 0);
    ck_assert_msg(access("pwned", F_OK) != 0, "a quoted word executed a command");
}
END_TEST

START_TEST(test_shell_quote_exact)
{
    char *q = np_shell_quote("it's");
    ck_assert_str_eq(q, "'it'\\''s'");
    free(q);
    q = np_shell_quote("");
    ck_assert_str_eq(q, "''");
    free(q);
}
END_TEST

START_TEST(test_sbatch_quote)
{
    char *q = np_sbatch_quote("/a b/\"c\"/d\\e/'f'#g");
    ck_assert_str_eq(q, "\"/a b/\\\"c\\\"/d\\\\e/'f'#g\"");
    free(q);
    ck_assert_ptr_null(np_sbatch_quote("a\nb"));
    ck_assert_ptr_null(np_sbatch_quote("a\rb"));
    q = np_slurm_pattern_escape("/x/100%/%j");
    ck_assert_str_eq(q, "/x/100%%/%%j");
    free(q);
    q = np_slurm_pattern_escape("");
    ck_assert_str_eq(q, "");
    free(q);
}
END_TEST

START_TEST(test_buf)
{
    struct np_buf b;
    np_buf_init(&b);
    char *s = np_buf_steal(&b);
    ck_assert_str_eq(s, "");
    free(s);
    for (int i = 0; i < 1000; i++)
        np_buf_appendf(&b, "%d,", i);
    np_buf_append_shq(&b, "x'y");
    s = np_buf_steal(&b);
    ck_assert_int_eq(strncmp(s, "0,1,2,", 6), 0);
    ck_assert_ptr_nonnull(strstr(s, "999,'x'\\''y'"));
    free(s);
    np_buf_free(&b);
    np_buf_free(NULL);
    np_strv_free(NULL);
    /* np_strv_pushf: a word longer than its stack buffer (a --wrap script under a long STAGE_PATH) */
    char *big = malloc(20001);
    ck_assert_ptr_nonnull(big);
    memset(big, 'p', 20000);
    big[20000] = '\0';
    struct np_strv v = {0};
    np_strv_pushf(&v, "--wrap=%s/x", big);
    np_strv_pushf(&v, "%d", 7);
    char **w = np_strv_steal(&v);
    ck_assert_ptr_nonnull(w);
    ck_assert_uint_eq(strlen(w[0]), 20009);
    ck_assert_int_eq(strncmp(w[0], "--wrap=ppp", 10), 0);
    ck_assert_str_eq(w[0] + 20007, "/x");
    ck_assert_str_eq(w[1], "7");
    ck_assert_ptr_null(w[2]);
    np_strv_free(w);
    free(big);
}
END_TEST

START_TEST(test_parsable_and_env)
{
    char *id, *cl;
    ck_assert_int_eq(np_slurm_parse_parsable("123\n", &id, &cl), 0);
    ck_assert_str_eq(id, "123");
    ck_assert_ptr_null(cl);
    free(id);
    ck_assert_int_eq(np_slurm_parse_parsable("  77;local\n", &id, &cl), 0);
    ck_assert_str_eq(id, "77");
    ck_assert_str_eq(cl, "local");
    free(id);
    free(cl);
    static const char *const bad[] = {"", "\n", "Submitted batch job 5", "12a", ";x", "5;a b", "5\n6"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(np_slurm_parse_parsable(bad[i], &id, &cl) != 0, "[%s] accepted", bad[i]);

    char *envp[] = {(char *)"PATH=/bin", (char *)"SLURM_CONF=/c/slurm.conf", (char *)"SLURM_JOB_ID=9",
                    (char *)"SBATCH_ACCOUNT=a", (char *)"SLURMD_NODENAME=n1", (char *)"HF_TOKEN=t",
                    (char *)"SLURM_CONFX=1", (char *)"SBATCH_PARTITION=", NULL};
    char **f = np_slurm_child_env(envp);
    ck_assert_str_eq(f[0], "PATH=/bin");
    ck_assert_str_eq(f[1], "SLURM_CONF=/c/slurm.conf");
    ck_assert_str_eq(f[2], "SBATCH_ACCOUNT=a"); /* the user's sbatch setting: sbatch reads it */
    ck_assert_str_eq(f[3], "SLURMD_NODENAME=n1");
    ck_assert_ptr_null(f[4]); /* no HF_TOKEN (issue 23: slurmctld keeps --export=ALL's environment); an
                               * empty SBATCH_* is unset: sbatch would refuse "" */
    free(f);

    char *p = np_path_search("sh", "/nonexistent:/bin:/usr/bin");
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "/bin/sh");
    free(p);
    ck_assert_ptr_null(np_path_search("no-such-program-np", "/bin:/usr/bin"));
    ck_assert_ptr_null(np_path_search("sbatch", ""));
}
END_TEST

/* Write an executable stub tmp/name with the given sh body. */
static void stub(const char *name, const char *body)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ck_assert(chmod(path, 0755) == 0);
}

static const char *submit_tag; /* the request's tag (NULL: none) */

static enum np_status submit_with(const char *prog, int timeout, struct np_submit_result *res, struct np_error *err)
{
    char path[600], envout[700], wd[700];
    snprintf(path, sizeof path, "%s/%s", tmp, prog);
    snprintf(envout, sizeof envout, "NP_STUB_DIR=%s", tmp);
    snprintf(wd, sizeof wd, "%s/wd", tmp);
    mkdir(wd, 0755);
    char *envp[] = {(char *)"PATH=/usr/bin:/bin", (char *)"SLURM_CONF=/c/slurm.conf", (char *)"SLURM_JOB_ID=9",
                    (char *)"SBATCH_PARTITION=p", (char *)"HF_TOKEN=tok", envout, NULL};
    struct np_slurm_cli_opts o = {.sbatch = path, .timeout_s = timeout, .envp = envp};
    struct np_backend be;
    ck_assert_int_eq(np_slurm_cli_backend(&be, &o, err), NP_OK);
    ck_assert_str_eq(be.name, "cli");
    struct np_submit_request req = {
        .script_path = "/x/script with space.sh", .script_text = "#!/bin/bash\n", .workdir = wd, .job_name = "job",
        .tag = submit_tag};
    enum np_status st = be.submit(&be, &req, res, err);
    np_backend_free(&be);
    return st;
}

static char *slurp(const char *name)
{
    static char buf[8192];
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

START_TEST(test_cli_submit_ok)
{
    stub("sbatch-ok", "env > \"$NP_STUB_DIR/env\"; pwd > \"$NP_STUB_DIR/pwd\"\n"
                      "for a in \"$@\"; do echo \"<$a>\"; done > \"$NP_STUB_DIR/args\"\necho '4242;local'");
    struct np_submit_result res;
    struct np_error err;
    ck_assert_int_eq(submit_with("sbatch-ok", 10, &res, &err), NP_OK);
    ck_assert_str_eq(res.job_id, "4242");
    ck_assert_str_eq(res.cluster, "local");
    ck_assert_ptr_null(res.message);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_ACCEPTED);
    np_submit_result_free(&res);
    ck_assert_str_eq(slurp("args"), "<--parsable>\n</x/script with space.sh>\n");
    char want[700];
    snprintf(want, sizeof want, "%s/wd\n", tmp);
    ck_assert_str_eq(slurp("pwd"), want);
    const char *env = slurp("env");
    ck_assert_ptr_nonnull(strstr(env, "SLURM_CONF=/c/slurm.conf\n"));
    ck_assert_ptr_null(strstr(env, "HF_TOKEN")); /* issue 23: never handed to sbatch (--export=ALL) */
    ck_assert_ptr_null(strstr(env, "SLURM_JOB_ID"));
    ck_assert_ptr_nonnull(strstr(env, "SBATCH_PARTITION=p\n")); /* passed through unchanged */
}
END_TEST

START_TEST(test_cli_submit_refused)
{
    stub("sbatch-fail", "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2; exit 1");
    struct np_submit_result res;
    struct np_error err;
    ck_assert_int_eq(submit_with("sbatch-fail", 10, &res, &err), NP_E_SLURM);
    ck_assert_ptr_null(res.job_id);
    ck_assert_str_eq(res.message, "sbatch: error: Batch job submission failed: Invalid account");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED); /* Slurm said no: no job, a rerun may submit */
    ck_assert_msg(strstr(err.text, "failed (exit 1): sbatch: error: Batch job submission failed: Invalid account"), "%s",
                  err.text);
    np_submit_result_free(&res);

    stub("sbatch-garbage", "echo 'Submitted batch job 5'");
    ck_assert_int_eq(submit_with("sbatch-garbage", 10, &res, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "printed no job id") && strstr(err.text, "Submitted batch job 5"), "%s", err.text);
    ck_assert_ptr_nonnull(res.message);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN); /* it exited 0: the job may well exist */
    np_submit_result_free(&res);

    stub("sbatch-silent", "exit 3");
    ck_assert_int_eq(submit_with("sbatch-silent", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(res.message, "sbatch exited with status 3");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED);
    np_submit_result_free(&res);

    /* sent without an answer seen: the job may exist (reconcile asks the scheduler, a rerun does not queue it
     * again); so when sbatch was killed */
    stub("sbatch-timedout", "echo 'sbatch: error: Batch job submission failed: Socket timed out on send/recv "
                            "operation' >&2; exit 1");
    ck_assert_int_eq(submit_with("sbatch-timedout", 10, &res, &err), NP_E_SLURM);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
    stub("sbatch-killed", "echo 'sbatch: Pending job allocation' >&2; kill -KILL $$");
    ck_assert_int_eq(submit_with("sbatch-killed", 10, &res, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "killed by signal 9: sbatch: Pending job allocation"), "%s", err.text);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
}
END_TEST

START_TEST(test_cli_submit_hang)
{
    stub("sbatch-hang", "sleep 30 & echo $! > \"$NP_STUB_DIR/child\"; echo started >&2; wait");
    struct np_submit_result res;
    struct np_error err;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(submit_with("sbatch-hang", 1, &res, &err), NP_E_SLURM);
    clock_gettime(CLOCK_MONOTONIC, &b);
    ck_assert_msg(b.tv_sec - a.tv_sec < 5, "timeout took %ld s", (long)(b.tv_sec - a.tv_sec));
    ck_assert_msg(strstr(err.text, "no answer within 1 s; killed it"), "%s", err.text);
    ck_assert_ptr_nonnull(res.message);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
    /* the stub's own child was killed with it */
    const char *c = slurp("child");
    ck_assert_ptr_nonnull(c);
    pid_t child = (pid_t)atol(c);
    ck_assert_int_gt(child, 1);
    int gone = 0;
    for (int i = 0; i < 50 && !gone; i++) {
        char st[64];
        snprintf(st, sizeof st, "/proc/%ld/stat", (long)child);
        FILE *f = fopen(st, "r");
        if (!f) {
            gone = 1;
            break;
        }
        char line[512] = "";
        if (fgets(line, sizeof line, f)) {
            const char *rp = strrchr(line, ')');
            gone = rp && rp[2] == 'Z'; /* zombie waiting for init: dead */
        }
        fclose(f);
        if (!gone)
            usleep(100000);
    }
    ck_assert_msg(gone, "sleep %ld survived the timeout", (long)child);
}
END_TEST

/* sbatch --test-only, as launch's preflight and setup ask it (stubs: the answers Slurm gives): an estimate (exit 0)
 * can be scheduled; a request Slurm can never satisfy is NP_E_INVALID naming why; any other failure (the controller
 * unreachable) cannot tell, NP_E_SLURM. */
static int test_only_timeout = 10;

static enum np_status test_only_with(const char *prog, char **msg, struct np_error *err)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", tmp, prog);
    char *envp[] = {(char *)"PATH=/usr/bin:/bin", NULL};
    struct np_slurm_cli_opts o = {.sbatch = path, .timeout_s = test_only_timeout, .envp = envp};
    struct np_backend be;
    ck_assert_int_eq(np_slurm_cli_backend(&be, &o, err), NP_OK);
    enum np_status st = np_slurm_cli_test_only_text(&be, "#!/bin/bash\n#SBATCH -N 1\n", msg, err);
    np_backend_free(&be);
    return st;
}

START_TEST(test_cli_test_only)
{
    char *msg = NULL;
    struct np_error err;
    stub("sbatch-est", "[ \"$1\" = --test-only ] && [ -f \"$2\" ] || exit 9\n"
                       "echo 'sbatch: Job 77 to start at 2026-11-29T06:00:00 using 8 processors on nodes n1 in "
                       "partition p' >&2");
    ck_assert_msg(test_only_with("sbatch-est", &msg, &err) == NP_OK, "%s", err.text);
    ck_assert_ptr_nonnull(msg);
    ck_assert_ptr_nonnull(strstr(msg, "to start at"));
    free(msg);
    stub("sbatch-never", "echo 'sbatch: error: Batch job submission failed: Requested node configuration is not "
                         "available' >&2; exit 1");
    ck_assert_int_eq(test_only_with("sbatch-never", &msg, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "--test-only: Requested node configuration is not available"), "%s", err.text);
    free(msg);
    stub("sbatch-down", "echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller "
                        "(connect failure)' >&2; exit 1");
    ck_assert_int_eq(test_only_with("sbatch-down", &msg, &err), NP_E_SLURM);
    ck_assert_msg(strstr(err.text, "--test-only failed: sbatch: error: Batch job submission failed: Unable to contact"),
                  "%s", err.text);
    free(msg);
}
END_TEST

START_TEST(test_cli_not_found)
{
    struct np_backend be;
    struct np_error err;
    struct np_slurm_cli_opts o = {.path = "/nonexistent-a:/nonexistent-b"};
    ck_assert_int_eq(np_slurm_cli_backend(&be, &o, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "sbatch: not found on PATH=/nonexistent-a:/nonexistent-b"), "%s", err.text);
}
END_TEST

/* Issue 23: terminal controls become '?' (widths kept), a huge message keeps its start and end. */
START_TEST(test_text_clean_and_shorten)
{
    char s[] = "a\033]0;x\007b\tc\nd\x7f\xc2\x9b" "31m caf\xc3\xa9";
    ck_assert_uint_eq(np_text_clean(s, strlen(s)), 5);
    ck_assert_str_eq(s, "a?]0;x?b\tc\nd???31m caf\xc3\xa9");
    char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[0] = 'S';
    big[sizeof big - 2] = 'E';
    big[sizeof big - 1] = '\0';
    int owned = 0;
    char *t = np_text_shorten(big, 2000, &owned);
    ck_assert(owned && t);
    ck_assert_uint_le(strlen(t), 2000);
    ck_assert(t[0] == 'S' && t[strlen(t) - 1] == 'E' && strstr(t, " bytes left out ...] "));
    free(t);
    const char *sh = "short";
    ck_assert_ptr_eq(np_text_shorten(sh, 2000, &owned), sh);
    ck_assert(!owned);
}
END_TEST

/* np_text_fixed is printf's "%.*f" byte for byte (a million-row --history writes its numbers with it): ties
 * (0.125 to 2 places), values an ulp either side of a half, negatives, -0, big values, NaN and inf, and a
 * million values of the stored kinds; np_text_csv_field quotes, doubles quotes and writes controls as '?'. */
START_TEST(test_text_fixed_and_csv)
{
    static const double edge[] = {0,      -0.0,   0.125,  0.375,   2.5,     -2.5,    1e-7,    -1e-7,   0.0005,
                                  0.0015, 1.0005, 12.2745, 10678.45, 62.525, 9.995,  999.9995, 4e12,   3.9e12,
                                  1e15,   -1e300, 1e300,  5e-324,  0.49999999999999994, 1.5,  1234567.8949999999};
    char a[400], b[400];
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        for (int prec = 0; prec <= 7; prec++) {
            snprintf(a, sizeof a, "%.*f", prec, edge[i]);
            ck_assert_int_eq(np_text_fixed(b, sizeof b, edge[i], prec), (int)strlen(a));
            ck_assert_msg(strcmp(a, b) == 0, "%.17g %d: %s != %s", edge[i], prec, b, a);
            double up = nextafter(edge[i], INFINITY), dn = nextafter(edge[i], -INFINITY);
            snprintf(a, sizeof a, "%.*f", prec, up);
            np_text_fixed(b, sizeof b, up, prec);
            ck_assert_str_eq(a, b);
            snprintf(a, sizeof a, "%.*f", prec, dn);
            np_text_fixed(b, sizeof b, dn, prec);
            ck_assert_str_eq(a, b);
        }
    const double odd[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%.3f", odd[i]);
        np_text_fixed(b, sizeof b, odd[i], 3);
        ck_assert_str_eq(a, b);
    }
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 1000000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v = (double)(x % 100000000000ULL) / (double)(1ULL << (x >> 58)) * ((x >> 40) & 1 ? -1 : 1);
        int prec = (int)((x >> 20) % 4);
        snprintf(a, sizeof a, "%.*f", prec, v);
        np_text_fixed(b, sizeof b, v, prec);
        ck_assert_msg(strcmp(a, b) == 0, "%.17g %d: %s != %s", v, prec, b, a);
    }
    /* np_text_clean's eight-byte skip: every byte value at every offset of a 40-byte text, against the rule */
    for (int c = 0; c < 256; c++)
        for (size_t at = 0; at < 40; at++) {
            char t[41], want[41];
            memset(t, 'x', 40);
            t[40] = '\0';
            t[at] = (char)c;
            if (at + 1 < 40)
                t[at + 1] = (char)0x85; /* after C2: a C1 control */
            memcpy(want, t, 41);
            size_t k = 0;
            for (size_t i = 0; i < 40; i++) {
                unsigned char u = (unsigned char)want[i];
                if ((u < 0x20 && u != '\t' && u != '\n') || u == 0x7f)
                    want[i] = '?', k++;
                else if (u == 0xc2 && i + 1 < 40 && (unsigned char)want[i + 1] >= 0x80 &&
                         (unsigned char)want[i + 1] <= 0x9f)
                    want[i] = want[i + 1] = '?', i++, k += 2;
            }
            ck_assert_uint_eq(np_text_clean(t, 40), k);
            ck_assert_msg(memcmp(t, want, 40) == 0, "byte %d at %zu", c, at);
        }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    np_text_csv_field(f, "plain", 0);
    putc('|', f);
    np_text_csv_field(f, "a,\"b\"\033c\xc2\x9b", 0);
    putc('|', f);
    np_text_csv_field(f, "", 1);
    putc('|', f);
    np_text_csv_field(f, "x\x7fy", 0);
    putc('|', f);
    np_text_csv_field(f, NULL, 0);
    fclose(f);
    ck_assert_str_eq(buf, "plain|\"a,\"\"b\"\"?c??\"|\"\"|x?y|");
    free(buf);
}
END_TEST

/* np_file_copy_atomic: what a job reads from its folder (the NeMo driver, a DFM config) is copied whole,
 * only from a regular text file, into a folder it makes; a FIFO, a missing file, a NUL byte or a file over
 * the limit leave no target behind. */
START_TEST(test_file_copy_atomic)
{
    char dir[] = "/tmp/np-fileio-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char src[512], fifo[512], nul[512], dst[512], out[512];
    snprintf(src, sizeof src, "%s/src.py", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(nul, sizeof nul, "%s/nul", dir);
    snprintf(dst, sizeof dst, "%s/code", dir);
    snprintf(out, sizeof out, "%s/code/driver.py", dir);
    FILE *f = fopen(src, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 3000; i++) /* beyond one read */
        fprintf(f, "line %d\n", i);
    fclose(f);
    struct np_error err;
    ck_assert_int_eq(np_file_copy_atomic(src, 1 << 20, dst, "driver.py", 0644, &err), NP_OK);
    unsigned char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    ck_assert_int_eq(np_file_read_all(src, 1 << 20, &a, &na, &err), NP_OK);
    ck_assert_int_eq(np_file_read_all(out, 1 << 20, &b, &nb, &err), NP_OK);
    ck_assert_uint_eq(na, nb);
    ck_assert(memcmp(a, b, na) == 0);
    free(a);
    free(b);
    unlink(out);
    ck_assert_int_eq(np_file_copy_atomic(src, 100, dst, "driver.py", 0644, &err), NP_E_INVALID); /* too large */
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(np_file_copy_atomic(fifo, 1 << 20, dst, "driver.py", 0644, &err), NP_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err.text, "FIFO"));
    f = fopen(nul, "w");
    ck_assert_ptr_nonnull(f);
    fwrite("a\0b", 1, 3, f);
    fclose(f);
    ck_assert_int_eq(np_file_copy_atomic(nul, 1 << 20, dst, "driver.py", 0644, &err), NP_E_INVALID);
    ck_assert_int_eq(np_file_copy_atomic("/nonexistent/x.py", 1 << 20, dst, "driver.py", 0644, &err), NP_E_IO);
    ck_assert_int_ne(access(out, F_OK), 0); /* nothing half-written */
    unlink(src);
    unlink(fifo);
    unlink(nul);
    rmdir(dst);
    ck_assert_int_eq(rmdir(dir), 0); /* no temporary left behind either */
}
END_TEST

/* What sbatch's answers become, word for word (stubs print Slurm's answers): the tag sent as the job's comment before
 * the script; a warning beside the job id kept, the job accepted; exit 0 with no id (nothing or a sentence) unknown,
 * the job may exist; a refusal or a silent failure refused with its exit status; killed by a signal unknown, its
 * number named; a timeout unknown, with or without what sbatch had printed. */
START_TEST(test_cli_submit_words)
{
    struct np_submit_result res;
    struct np_error err;
    submit_tag = "nemoperf-0123abc";
    stub("sbatch-args", "for a in \"$@\"; do echo \"<$a>\"; done > \"$NP_STUB_DIR/args\"\necho 51");
    ck_assert_int_eq(submit_with("sbatch-args", 10, &res, &err), NP_OK);
    submit_tag = NULL;
    ck_assert_str_eq(slurp("args"), "<--parsable>\n<--comment=nemoperf-0123abc>\n</x/script with space.sh>\n");
    ck_assert_str_eq(res.job_id, "51");
    ck_assert_ptr_null(res.cluster);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_ACCEPTED);
    np_submit_result_free(&res);

    stub("sbatch-warn", "echo 'sbatch: warning: can not find a memory limit' >&2; echo 52");
    ck_assert_int_eq(submit_with("sbatch-warn", 10, &res, &err), NP_OK);
    ck_assert_str_eq(res.job_id, "52");
    ck_assert_str_eq(res.message, "sbatch: warning: can not find a memory limit");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_ACCEPTED);
    np_submit_result_free(&res);

    stub("sbatch-nothing", "exit 0");
    ck_assert_int_eq(submit_with("sbatch-nothing", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "printed no job id (expected \"jobid[;cluster]\"): \"\"");
    ck_assert_str_eq(res.message, "sbatch printed no job id: \"\"");
    ck_assert_ptr_null(res.job_id);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
    stub("sbatch-sentence", "echo 'Submitted batch job 5'");
    ck_assert_int_eq(submit_with("sbatch-sentence", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "printed no job id (expected \"jobid[;cluster]\"): \"Submitted batch job 5\"");
    ck_assert_str_eq(res.message, "sbatch printed no job id: \"Submitted batch job 5\"");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);

    stub("sbatch-no", "echo 'sbatch: error: Batch job submission failed: Invalid account' >&2; exit 1");
    ck_assert_int_eq(submit_with("sbatch-no", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "failed (exit 1): sbatch: error: Batch job submission failed: Invalid account");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED);
    np_submit_result_free(&res);
    stub("sbatch-exit2", "exit 2");
    ck_assert_int_eq(submit_with("sbatch-exit2", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "failed (exit 2)");
    ck_assert_str_eq(res.message, "sbatch exited with status 2");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED);
    np_submit_result_free(&res);
    /* a job id printed before a failure is no job: refused, no id */
    stub("sbatch-idfail", "echo 53; echo 'sbatch: error: Invalid qos specification' >&2; exit 1");
    ck_assert_int_eq(submit_with("sbatch-idfail", 10, &res, &err), NP_E_SLURM);
    ck_assert_ptr_null(res.job_id);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_REFUSED);
    np_submit_result_free(&res);

    stub("sbatch-term", "kill -TERM $$");
    ck_assert_int_eq(submit_with("sbatch-term", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "killed by signal 15");
    ck_assert_ptr_null(res.message);
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
    stub("sbatch-kill", "echo 'sbatch: Pending job allocation' >&2; kill -KILL $$");
    ck_assert_int_eq(submit_with("sbatch-kill", 10, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "killed by signal 9: sbatch: Pending job allocation");
    np_submit_result_free(&res);

    stub("sbatch-mute", "exec sleep 30");
    ck_assert_int_eq(submit_with("sbatch-mute", 1, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text,
                     "no answer within 1 s; killed it (is slurmctld reachable? check SLURM_CONF and `sinfo`)");
    ck_assert_str_eq(res.message, "sbatch timed out after 1 s and was killed");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
    stub("sbatch-said", "echo 'sbatch: Pending job allocation' >&2; exec sleep 30");
    ck_assert_int_eq(submit_with("sbatch-said", 1, &res, &err), NP_E_SLURM);
    ck_assert_str_eq(res.message, "sbatch timed out after 1 s and was killed; it had printed: sbatch: Pending job "
                                  "allocation");
    ck_assert_int_eq(res.outcome, NP_SUBMIT_UNKNOWN);
    np_submit_result_free(&res);
}
END_TEST

/* sbatch's --parsable answer and the programs found: a cluster of letters, digits, _ - . (none after ';': no
 * cluster), anything else refused; squeue lines as the backend reads them (an id of digits, _ and + only; a state;
 * "None" or no reason is none); which program runs: a regular executable file, an empty PATH entry the current
 * folder, a name with '/' taken as it is; the Hugging Face token never passed on under either name */
START_TEST(test_parsable_lines_and_paths)
{
    char *id, *cl;
    ck_assert_int_eq(np_slurm_parse_parsable(" 5;a_B-9.x \n", &id, &cl), 0);
    ck_assert_str_eq(id, "5");
    ck_assert_str_eq(cl, "a_B-9.x");
    free(id);
    free(cl);
    ck_assert_int_eq(np_slurm_parse_parsable("6;", &id, &cl), 0);
    ck_assert_str_eq(id, "6");
    ck_assert_ptr_null(cl);
    free(id);
    static const char *const bad[] = {"7;a/b", "7;a+b", "+7", "7 ;a", "-7"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(np_slurm_parse_parsable(bad[i], &id, &cl) != 0, "[%s] accepted", bad[i]);
        ck_assert_ptr_null(id);
        ck_assert_ptr_null(cl);
    }

    struct np_job_list l = {0};
    ck_assert_int_eq(np_slurm_parse_squeue("92+1|RUNNING\n9a|RUNNING|x\n93||x\n94|PENDING|\n95_[1-3]|PENDING|None\n"
                                           "96|PENDING| Priority \n",
                                           &l),
                     0);
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.jobs[0].job_id, "92+1");
    ck_assert_str_eq(l.jobs[0].state, "RUNNING");
    ck_assert_ptr_null(l.jobs[0].reason);
    ck_assert_str_eq(l.jobs[1].job_id, "94");
    ck_assert_ptr_null(l.jobs[1].reason);
    ck_assert_str_eq(l.jobs[2].job_id, "96");
    ck_assert_str_eq(l.jobs[2].reason, "Priority");
    np_job_list_free(&l);

    stub("prog-x", "exit 0");
    mkdir("d", 0755);
    mkdir("d/prog-x", 0755); /* a folder by that name is no program */
    FILE *f = fopen("d2-prog", "w");
    fclose(f);
    mkdir("d2", 0755);
    ck_assert_int_eq(rename("d2-prog", "d2/prog-x"), 0); /* not executable */
    char path[900];
    snprintf(path, sizeof path, "%s/d:%s/d2:%s", tmp, tmp, tmp);
    char *p = np_path_search("prog-x", path);
    char want[700];
    snprintf(want, sizeof want, "%s/prog-x", tmp);
    ck_assert_str_eq(p, want);
    free(p);
    p = np_path_search("prog-x", "/nonexistent::/bin"); /* the empty entry: the current folder (tmp) */
    ck_assert_str_eq(p, "./prog-x");
    free(p);
    p = np_path_search("./prog-x", "/bin");
    ck_assert_str_eq(p, "./prog-x");
    free(p);
    ck_assert_ptr_null(np_path_search("./d2/prog-x", "/bin"));
    ck_assert_ptr_null(np_path_search("", "/bin"));

    char *envp[] = {(char *)"HUGGING_FACE_HUB_TOKEN=t", (char *)"SLURM_CONF_X=1", (char *)"SBATCH_QOS=high",
                    (char *)"XSLURM_JOB_ID=1", NULL};
    char **e = np_slurm_child_env(envp);
    ck_assert_str_eq(e[0], "SBATCH_QOS=high");
    ck_assert_str_eq(e[1], "XSLURM_JOB_ID=1");
    ck_assert_ptr_null(e[2]);
    free(e);
}
END_TEST

/* The backend's squeue (found next to sbatch) and the other client programs, by their arguments and answers: jobs by
 * id in one call, by tag among this user's; no ids, no call; a failure with its exit status (-1: killed), no answer
 * in time; no squeue anywhere refused naming it; scontrol's and sinfo's text handed back as printed, sinfo for one
 * partition or all of them, a failure or a missing program an error naming it. */
static void backend_in(const char *dir, struct np_backend *b, int timeout)
{
    char sb[700];
    snprintf(sb, sizeof sb, "%s/sbatch", dir);
    FILE *f = fopen(sb, "w");
    ck_assert_ptr_nonnull(f);
    fputs("#!/bin/sh\nexit 1\n", f);
    fclose(f);
    ck_assert_int_eq(chmod(sb, 0755), 0);
    static char envout[700]; /* the backend keeps the environment's strings, not copies: they outlive this call */
    snprintf(envout, sizeof envout, "NP_STUB_DIR=%s", tmp);
    static char *envp[] = {(char *)"PATH=/usr/bin:/bin", envout, NULL};
    struct np_slurm_cli_opts o = {.sbatch = sb, .timeout_s = timeout, .envp = envp};
    struct np_error err;
    ck_assert_int_eq(np_slurm_cli_backend(b, &o, &err), NP_OK);
}

START_TEST(test_cli_squeue_and_clients)
{
    struct np_backend b;
    struct np_error err;
    struct np_job_list l = {0};
    stub("squeue", "for a in \"$@\"; do echo \"<$a>\"; done > \"$NP_STUB_DIR/args\"\n"
                   "printf '41|RUNNING|None\\n42|PENDING|Priority\\n43|PENDING|nemoperf-t\\n'");
    backend_in(tmp, &b, 1); /* finds the squeue beside its sbatch */
    char *ids[] = {(char *)"41", (char *)"42", (char *)"43"};
    ck_assert_int_eq(b.query(&b, ids, 3, &l, &err), NP_OK);
    ck_assert_str_eq(slurp("args"), "<-h>\n<-t>\n<all>\n<-j>\n<41,42,43>\n<-o>\n<%i|%T|%r>\n");
    ck_assert_uint_eq(l.n, 3);
    ck_assert_str_eq(l.jobs[1].job_id, "42");
    ck_assert_str_eq(l.jobs[1].reason, "Priority");
    np_job_list_free(&l);
    ck_assert_int_eq(b.find(&b, "nemoperf-t", "job", &l, &err), NP_OK);
    ck_assert_str_eq(slurp("args"), "<-h>\n<-t>\n<all>\n<--me>\n<-o>\n<%i|%T|%k>\n");
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].job_id, "43");
    np_job_list_free(&l);
    unlink("args");
    ck_assert_int_eq(b.query(&b, ids, 0, &l, &err), NP_OK);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_ptr_null(slurp("args")); /* not run */

    stub("squeue", "echo '41|RUNNING|None'; exit 2");
    ck_assert_int_eq(b.query(&b, ids, 1, &l, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "failed (exit 2)");
    ck_assert_uint_eq(l.n, 0);
    stub("squeue", "kill -KILL $$");
    ck_assert_int_eq(b.find(&b, "nemoperf-t", "job", &l, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "failed (exit -1)");
    stub("squeue", "echo '41|RUNNING|None'; exec sleep 30");
    ck_assert_int_eq(b.query(&b, ids, 1, &l, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "no answer within 1 s; killed it");
    ck_assert_uint_eq(l.n, 0);
    ck_assert_ptr_null(l.jobs);
    np_backend_free(&b);
    /* no timeout given (0, or below): the default, not none at all */
    stub("squeue", "sleep 0.3; echo '41|RUNNING|None'");
    for (int t = 0; t >= -1; t--) {
        backend_in(tmp, &b, t);
        ck_assert_msg(b.query(&b, ids, 1, &l, &err) == NP_OK, "timeout %d: %s", t, err.text);
        ck_assert_uint_eq(l.n, 1);
        np_job_list_free(&l);
        if (t == 0)
            np_backend_free(&b);
    }

    stub("scontrol", "for a in \"$@\"; do echo \"<$a>\"; done");
    stub("sinfo", "for a in \"$@\"; do echo \"[$a]\"; done");
    char *out = NULL;
    ck_assert_int_eq(np_slurm_cli_partitions(&b, &out, &err), NP_OK);
    ck_assert_str_eq(out, "<show>\n<partition>\n<-o>\n");
    free(out);
    ck_assert_int_eq(np_slurm_cli_nodes(&b, "gpu", &out, &err), NP_OK);
    ck_assert_str_eq(out, "[-h]\n[-o]\n[%D|%T|%G|%N|%E]\n[-p]\n[gpu]\n");
    free(out);
    ck_assert_int_eq(np_slurm_cli_nodes(&b, "", &out, &err), NP_OK);
    ck_assert_str_eq(out, "[-h]\n[-o]\n[%D|%T|%G|%N|%E]\n");
    free(out);
    ck_assert_int_eq(np_slurm_cli_nodes(&b, NULL, &out, &err), NP_OK);
    ck_assert_str_eq(out, "[-h]\n[-o]\n[%D|%T|%G|%N|%E]\n");
    free(out);
    stub("scontrol", "echo 'PartitionName=p'; exit 1");
    out = (char *)"unset";
    ck_assert_int_eq(np_slurm_cli_partitions(&b, &out, &err), NP_E_SLURM);
    ck_assert_ptr_null(out);
    ck_assert_str_eq(err.source, "scontrol show partition");
    ck_assert_str_eq(err.text, "failed");
    stub("sinfo", "echo partial; exit 3");
    ck_assert_int_eq(np_slurm_cli_nodes(&b, "gpu", &out, &err), NP_E_SLURM);
    ck_assert_str_eq(err.source, "sinfo");
    ck_assert_str_eq(err.text, "failed");
    unlink("sinfo");
    char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent", 1);
    enum np_status st = np_slurm_cli_nodes(&b, "gpu", &out, &err);
    if (old) {
        setenv("PATH", old, 1);
        free(old);
    }
    ck_assert_int_eq(st, NP_E_SLURM);
    ck_assert_str_eq(err.source, "sinfo");
    ck_assert_str_eq(err.text, "not found next to sbatch or on PATH");
    np_backend_free(&b);

    /* no squeue next to sbatch nor on the backend's PATH */
    mkdir("alone", 0755);
    char dir[700], sb[800];
    snprintf(dir, sizeof dir, "%s/alone", tmp);
    snprintf(sb, sizeof sb, "%s/sbatch", dir);
    FILE *f = fopen(sb, "w");
    fputs("#!/bin/sh\nexit 1\n", f);
    fclose(f);
    chmod(sb, 0755);
    struct np_slurm_cli_opts o = {.path = dir, .timeout_s = 0};
    ck_assert_int_eq(np_slurm_cli_backend(&b, &o, &err), NP_OK);
    ck_assert_int_eq(b.query(&b, ids, 1, &l, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "not found next to sbatch or on PATH; cannot follow the jobs (install the Slurm client "
                               "tools)");
    ck_assert_int_eq(b.find(&b, "nemoperf-t", "job", &l, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "not found next to sbatch or on PATH; cannot look for the job (install the Slurm "
                               "client tools)");
    np_backend_free(&b);
}
END_TEST

/* --test-only: an estimate with nothing said is schedulable; each answer Slurm gives for a request it can never hold
 * is NP_E_INVALID naming it; a failure that says nothing cannot tell; no answer in time cannot tell either */
START_TEST(test_cli_test_only_words)
{
    char *msg = NULL;
    struct np_error err;
    stub("sbatch-quiet", "exit 0");
    ck_assert_int_eq(test_only_with("sbatch-quiet", &msg, &err), NP_OK);
    ck_assert_str_eq(msg, "");
    free(msg);
    static const char *const never[] = {"Node count specification invalid", "Invalid partition name specified",
                                        "Requested time limit is invalid", "Invalid wckey specification",
                                        "Invalid account or account/partition combination specified"};
    for (size_t i = 0; i < sizeof never / sizeof *never; i++) {
        char body[300];
        snprintf(body, sizeof body, "echo 'sbatch: error: Batch job submission failed: %s' >&2; exit 1", never[i]);
        stub("sbatch-never", body);
        ck_assert_int_eq(test_only_with("sbatch-never", &msg, &err), NP_E_INVALID);
        char want[300];
        snprintf(want, sizeof want, "--test-only: %s", never[i]);
        ck_assert_str_eq(err.text, want);
        free(msg);
    }
    stub("sbatch-shot", "kill -KILL $$"); /* killed: no estimate, whatever its status bits read as */
    ck_assert_int_eq(test_only_with("sbatch-shot", &msg, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "--test-only failed: ");
    free(msg);
    stub("sbatch-mum", "exit 1");
    ck_assert_int_eq(test_only_with("sbatch-mum", &msg, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "--test-only failed: ");
    free(msg);
    test_only_timeout = 1;
    stub("sbatch-slow", "exec sleep 30");
    msg = (char *)"unset";
    ck_assert_int_eq(test_only_with("sbatch-slow", &msg, &err), NP_E_SLURM);
    test_only_timeout = 10;
    ck_assert_ptr_null(msg);
    ck_assert_str_eq(err.text, "--test-only: no answer within 1 s");
}
END_TEST

/* An answer is read whole up to 64 MiB less one byte, or not at all (never a cut answer read as the whole): squeue
 * printing 64 MiB - 1 bytes is read (no job line in it: no job), 64 MiB is refused naming the limit; and a child
 * the client left behind holding its output (a backgrounded sleep) neither hangs the query nor loses its answer */
START_TEST(test_cli_answer_limits)
{
    struct np_backend b;
    struct np_error err;
    struct np_job_list l = {0};
    char *ids[] = {(char *)"41"};
    stub("squeue", "head -c $((64 * 1024 * 1024 - 1)) /dev/zero | tr '\\0' x");
    backend_in(tmp, &b, 30);
    ck_assert_msg(b.query(&b, ids, 1, &l, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(l.n, 0);
    stub("squeue", "head -c $((64 * 1024 * 1024)) /dev/zero | tr '\\0' x");
    ck_assert_int_eq(b.query(&b, ids, 1, &l, &err), NP_E_SLURM);
    ck_assert_str_eq(err.text, "answered more than 64 MiB: not read");
    ck_assert_str_eq(err.source, "squeue");
    stub("squeue", "sleep 30 2>/dev/null & echo '41|RUNNING|None'"); /* the leftover holds its output only */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_msg(b.query(&b, ids, 1, &l, &err) == NP_OK, "%s", err.text);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_msg(t1.tv_sec - t0.tv_sec < 10, "the query waited %ld s for the leftover", (long)(t1.tv_sec - t0.tv_sec));
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.jobs[0].state, "RUNNING");
    np_job_list_free(&l);
    np_backend_free(&b);
}
END_TEST

/* --test-only of a script's text: written to a temporary file in TMPDIR (unset or empty: /tmp) that sbatch reads
 * and that is removed afterwards; a TMPDIR that cannot hold it is an I/O error naming it */
START_TEST(test_cli_test_only_tmpdir)
{
    stub("sbatch-where", "echo \"$2\" > \"$NP_STUB_DIR/where\"; [ -s \"$2\" ] || exit 9");
    char path[600], envout[700];
    snprintf(path, sizeof path, "%s/sbatch-where", tmp);
    snprintf(envout, sizeof envout, "NP_STUB_DIR=%s", tmp);
    char *envp[] = {(char *)"PATH=/usr/bin:/bin", envout, NULL};
    struct np_slurm_cli_opts o = {.sbatch = path, .timeout_s = 10, .envp = envp};
    struct np_backend be;
    struct np_error err;
    ck_assert_int_eq(np_slurm_cli_backend(&be, &o, &err), NP_OK);
    char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    char mine[700];
    snprintf(mine, sizeof mine, "%s/t", tmp);
    ck_assert_int_eq(mkdir(mine, 0755), 0);
    const char *dirs[] = {NULL, "", mine};
    const char *want[] = {"/tmp/nemoperf-test-only.", "/tmp/nemoperf-test-only.", NULL};
    for (int k = 0; k < 3; k++) {
        if (dirs[k])
            setenv("TMPDIR", dirs[k], 1);
        else
            unsetenv("TMPDIR");
        char *msg = NULL;
        enum np_status st = np_slurm_cli_test_only_text(&be, "#!/bin/bash\n", &msg, &err);
        ck_assert_msg(st == NP_OK, "TMPDIR %s: %s", dirs[k] ? dirs[k] : "(unset)", err.text);
        free(msg);
        char *w = slurp("where");
        ck_assert_ptr_nonnull(w);
        char pre[800];
        snprintf(pre, sizeof pre, "%s/nemoperf-test-only.", mine);
        const char *p = want[k] ? want[k] : pre;
        ck_assert_msg(strncmp(w, p, strlen(p)) == 0, "script at %s", w);
        w[strcspn(w, "\n")] = '\0';
        struct stat st2;
        ck_assert_msg(stat(w, &st2) != 0, "%s left behind", w);
    }
    setenv("TMPDIR", "/nonexistent/np", 1);
    char *msg = NULL;
    ck_assert_int_eq(np_slurm_cli_test_only_text(&be, "#!/bin/bash\n", &msg, &err), NP_E_IO);
    ck_assert_str_eq(err.text, "a temporary script in /nonexistent/np: No such file or directory");
    ck_assert_ptr_null(msg);
    if (old) {
        setenv("TMPDIR", old, 1);
        free(old);
    } else {
        unsetenv("TMPDIR");
    }
    np_backend_free(&be);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shell");
    TCase *tc = tcase_create("quoting");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_shell_quote_roundtrip);
    tcase_add_test(tc, test_shell_quote_exact);
    tcase_add_test(tc, test_sbatch_quote);
    tcase_add_test(tc, test_buf);
    tcase_add_test(tc, test_file_copy_atomic);
    suite_add_tcase(s, tc);
    TCase *tb = tcase_create("sbatch backend");
    tcase_add_checked_fixture(tb, setup, teardown);
    tcase_set_timeout(tb, 30);
    tcase_add_test(tb, test_parsable_and_env);
    tcase_add_test(tb, test_cli_submit_ok);
    tcase_add_test(tb, test_cli_submit_refused);
    tcase_add_test(tb, test_cli_submit_hang);
    tcase_add_test(tb, test_cli_not_found);
    tcase_add_test(tb, test_cli_test_only);
    tcase_add_test(tb, test_cli_submit_words);
    tcase_add_test(tb, test_parsable_lines_and_paths);
    tcase_add_test(tb, test_cli_squeue_and_clients);
    tcase_add_test(tb, test_cli_test_only_words);
    tcase_add_test(tb, test_cli_answer_limits);
    tcase_add_test(tb, test_cli_test_only_tmpdir);
    tcase_add_test(tb, test_text_clean_and_shorten);
    tcase_add_test(tb, test_text_fixed_and_csv);
    suite_add_tcase(s, tb);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
