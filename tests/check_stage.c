/* check_stage.c - the STAGE_PATH layout and the atomic, idempotent container import.
 *
 * enroot and pyxis cannot be installed on this machine (no kernel support, no
 * GPUs), so the import runs a stub `enroot` (and, for --sbatch, stub `sbatch` and
 * `srun`) written into a temporary folder put first on PATH: it writes a file to
 * its --output path, fails halfway leaving a partial file, hangs, or writes nothing.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/setup/stage.h"

static char tmp[256];
static char stubs[300], stub_log[300], stage[300];

static const char *stub_enroot =
    "#!/bin/sh\n"
    "# stub enroot for tests only (enroot cannot be installed here)\n"
    "echo \"argv: $*\" >>\"$NP_STUB_LOG\"\n"
    "if [ -n \"${HF_TOKEN+x}\" ]; then echo 'env: HF_TOKEN present' >>\"$NP_STUB_LOG\"; fi\n"
    "[ \"$1\" = import ] && [ \"$2\" = --output ] || { echo 'stub enroot: usage' >&2; exit 2; }\n"
    "out=$3\n"
    "[ -e \"$out\" ] && { echo \"[ERROR] File already exists: $out\" >&2; exit 1; }\n"
    "case ${NP_STUB_MODE:-ok} in\n"
    "ok) printf 'hsqs stub image of %s\\n' \"$4\" >\"$out\" ;;\n"
    "fail) printf 'hsqs-partial' >\"$out\"; echo '[ERROR] stub failure halfway' >>\"$NP_STUB_LOG\"; exit 1 ;;\n"
    "hang) printf 'hsqs-partial' >\"$out\"; exec sleep 600 ;;\n"
    "empty) : ;;\n"
    "esac\n";

static const char *stub_sbatch =
    "#!/bin/sh\n"
    "# stub sbatch for tests only: runs the --wrap script at once, like a job that starts at once\n"
    "echo \"sbatch: $*\" >>\"$NP_STUB_LOG\"\n"
    "env | grep -E '^(SLURM_|SBATCH_|SRUN_)' | sed 's/^/sbatch env: /' >>\"$NP_STUB_LOG\"\n"
    "wrap=\n"
    "for a; do case $a in --wrap=*) wrap=${a#--wrap=} ;; esac; done\n"
    "echo 4242\n"
    "exec sh -c \"$wrap\"\n";

static const char *stub_srun =
    "#!/bin/sh\n"
    "echo \"srun: $*\" >>\"$NP_STUB_LOG\"\n"
    "while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done\n"
    "exec \"$@\"\n";

static void write_exec(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_msg(f, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(chmod(p, 0755), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_lines_with(const char *path, const char *needle)
{
    char *t = slurp(path);
    int n = 0;
    for (char *p = t; p && (p = strstr(p, needle)); p++)
        n++;
    free(t);
    return n;
}

/* number of entries of dir whose name contains needle */
static int count_entries(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strstr(de->d_name, needle))
            n++;
    closedir(d);
    return n;
}

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/np-stage-XXXXXX");
    ck_assert(mkdtemp(tmp));
    snprintf(stubs, sizeof stubs, "%s/stubs", tmp);
    snprintf(stub_log, sizeof stub_log, "%s/stub.log", tmp);
    snprintf(stage, sizeof stage, "%s/stage dir 'q'", tmp);
    ck_assert_int_eq(mkdir(stubs, 0755), 0);
    write_exec(stubs, "enroot", stub_enroot);
    write_exec(stubs, "sbatch", stub_sbatch);
    write_exec(stubs, "srun", stub_srun);
    char path[600];
    snprintf(path, sizeof path, "%s:/usr/bin:/bin", stubs);
    setenv("PATH", path, 1);
    setenv("NP_STUB_LOG", stub_log, 1);
    setenv("NP_STUB_MODE", "ok", 1);
    setenv("HF_TOKEN", "hf_secret_must_not_leak", 1);
}

static void teardown(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "PATH=/usr/bin:/bin rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

START_TEST(test_check_path)
{
    struct np_error err;
    ck_assert_int_eq(np_stage_check_path(NULL, &err), NP_E_INVALID);
    ck_assert_str_eq(err.source, "STAGE_PATH");
    ck_assert_ptr_nonnull(strstr(err.text, "not set"));
    ck_assert_int_eq(np_stage_check_path("", &err), NP_E_INVALID);
    ck_assert_int_eq(np_stage_check_path("rel/dir", &err), NP_E_INVALID);
    ck_assert_str_eq(err.source, "STAGE_PATH");
    ck_assert_ptr_nonnull(strstr(err.text, "'rel/dir' is not an absolute path"));
    ck_assert_int_eq(np_stage_check_path("/a\nb", &err), NP_E_INVALID);
    ck_assert_int_eq(np_stage_check_path("/abs/dir", &err), NP_OK);
    /* what setup and launch both refuse (issue 23, item 10): a component over NAME_MAX, control bytes */
    char path[300] = "/abs/";
    memset(path + 5, 'c', 256);
    path[5 + 256] = '\0';
    ck_assert_int_eq(np_stage_check_path(path, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "a component of 256 bytes (at offset 5)"), "%s", err.text);
    path[5 + 255] = '\0';
    ck_assert_int_eq(np_stage_check_path(path, &err), NP_OK);
    ck_assert_int_eq(np_stage_check_value("RUN_CONF_IMAGE", "nvcr.io#nvidia/nemo:25.02\033[2J", &err), NP_E_INVALID);
    ck_assert_str_eq(err.source, "RUN_CONF_IMAGE");
    ck_assert_msg(strstr(err.text, "byte 0x1b at offset 25"), "%s", err.text);
    ck_assert_int_eq(np_stage_check_value("RUN_CONF_IMAGE", "nvcr.io#nvidia/nemo:25.02", &err), NP_OK);
    ck_assert_int_eq(np_stage_check_value("RUN_CONF_IMAGE", NULL, &err), NP_OK);
}
END_TEST

START_TEST(test_layout_and_idempotence)
{
    struct np_error err;
    int created = -1;
    char deep[600], p[700];
    snprintf(deep, sizeof deep, "%s/a/b", stage);
    ck_assert_int_eq(np_stage_make_layout(deep, &created, &err), NP_OK);
    ck_assert_int_eq(created, 5); /* stage, a, b, experiments, hf */
    struct stat st;
    snprintf(p, sizeof p, "%s/experiments", deep);
    ck_assert(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    snprintf(p, sizeof p, "%s/hf", deep);
    ck_assert(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    ck_assert_int_eq(np_stage_make_layout(deep, &created, &err), NP_OK);
    ck_assert_int_eq(created, 0);
    /* trailing slashes are fine */
    snprintf(p, sizeof p, "%s//", deep);
    ck_assert_int_eq(np_stage_make_layout(p, &created, &err), NP_OK);
    ck_assert_int_eq(created, 0);
    /* a file where a folder must be */
    snprintf(p, sizeof p, "%s/x", stage);
    FILE *f = fopen(p, "w");
    ck_assert(f);
    fclose(f);
    ck_assert_int_eq(np_stage_make_layout(p, &created, &err), NP_E_IO);
    ck_assert_str_eq(err.source, p);
    ck_assert_ptr_nonnull(strstr(err.text, "cannot create folder"));
    ck_assert_int_eq(np_stage_make_layout("relative", &created, &err), NP_E_INVALID);
}
END_TEST

START_TEST(test_names)
{
    char *s = np_stage_sqsh_name("nvcr.io#nvidia/nemo:25.02.01");
    ck_assert_str_eq(s, "nvidia+nemo+25.02.01.sqsh");
    free(s);
    s = np_stage_sqsh_name("docker://nvcr.io#nvidia/nemo:25.04");
    ck_assert_str_eq(s, "nvidia+nemo+25.04.sqsh");
    free(s);
    s = np_stage_sqsh_name("ubuntu:22.04");
    ck_assert_str_eq(s, "ubuntu+22.04.sqsh");
    free(s);
    ck_assert_ptr_null(np_stage_sqsh_name(""));
    ck_assert_ptr_null(np_stage_sqsh_name("reg#"));
    s = np_stage_sqsh_path("/st/", "nvcr.io#nvidia/nemo:25.02.01");
    ck_assert_str_eq(s, "/st/nvidia+nemo+25.02.01.sqsh");
    free(s);
    s = np_stage_hf_dir("/st", "meta-llama/Llama-3.1-8B");
    ck_assert_str_eq(s, "/st/hf/meta-llama/Llama-3.1-8B");
    free(s);
}
END_TEST

START_TEST(test_find_program)
{
    char *p = np_path_search("enroot", getenv("PATH"));
    char want[400];
    snprintf(want, sizeof want, "%s/enroot", stubs);
    ck_assert_str_eq(p, want);
    free(p);
    p = np_path_search(want, getenv("PATH"));
    ck_assert_str_eq(p, want);
    free(p);
    ck_assert_ptr_null(np_path_search("np-no-such-program", getenv("PATH")));
    ck_assert_ptr_null(np_path_search("/nonexistent/enroot", getenv("PATH")));
    setenv("PATH", "/usr/bin:/bin", 1);
    ck_assert_ptr_null(np_path_search("enroot", getenv("PATH")));
}
END_TEST

START_TEST(test_import_ok_then_kept)
{
    struct np_error err;
    enum np_import_outcome out = NP_IMPORT_KEPT;
    char sqsh[600];
    snprintf(sqsh, sizeof sqsh, "%s/nvidia+nemo+25.02.01.sqsh", stage);
    ck_assert_int_eq(np_stage_import("nvcr.io#nvidia/nemo:25.02.01", sqsh, NULL, &out, &err), NP_OK);
    ck_assert_int_eq(out, NP_IMPORT_IMPORTED);
    char *body = slurp(sqsh);
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body, "hsqs stub image of docker://nvcr.io#nvidia/nemo:25.02.01\n");
    free(body);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);
    /* the import ran into a temporary name in the same folder, not into the .sqsh */
    char *log = slurp(stub_log);
    char want[800];
    snprintf(want, sizeof want, "argv: import --output %s/.nvidia+nemo+25.02.01.sqsh.importing.", stage);
    ck_assert_msg(strstr(log, want), "stub log: %s", log);
    ck_assert_ptr_nonnull(strstr(log, " docker://nvcr.io#nvidia/nemo:25.02.01\n"));
    ck_assert_msg(!strstr(log, "HF_TOKEN present"), "HF_TOKEN reached enroot's environment");
    free(log);
    /* second run: kept, no process started */
    ck_assert_int_eq(np_stage_import("nvcr.io#nvidia/nemo:25.02.01", sqsh, NULL, &out, &err), NP_OK);
    ck_assert_int_eq(out, NP_IMPORT_KEPT);
    ck_assert_int_eq(count_lines_with(stub_log, "argv: "), 1);
    /* kept even when enroot is gone */
    setenv("PATH", "/usr/bin:/bin", 1);
    ck_assert_int_eq(np_stage_import("nvcr.io#nvidia/nemo:25.02.01", sqsh, NULL, &out, &err), NP_OK);
    ck_assert_int_eq(out, NP_IMPORT_KEPT);
}
END_TEST

START_TEST(test_import_replaces_empty)
{
    struct np_error err;
    enum np_import_outcome out;
    char sqsh[600];
    ck_assert_int_eq(np_stage_mkdirs(stage, &err), NP_OK);
    snprintf(sqsh, sizeof sqsh, "%s/img.sqsh", stage);
    FILE *f = fopen(sqsh, "w");
    ck_assert(f);
    fclose(f);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, NULL, &out, &err), NP_OK);
    ck_assert_int_eq(out, NP_IMPORT_IMPORTED);
    struct stat st;
    ck_assert(stat(sqsh, &st) == 0 && st.st_size > 0);
}
END_TEST

START_TEST(test_import_failure_leaves_nothing)
{
    struct np_error err;
    enum np_import_outcome out;
    char sqsh[600];
    snprintf(sqsh, sizeof sqsh, "%s/img.sqsh", stage);
    setenv("NP_STUB_MODE", "fail", 1);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, NULL, &out, &err), NP_E_IO);
    ck_assert_str_eq(err.source, sqsh);
    ck_assert_msg(strstr(err.text, "enroot import of reg#img failed") && strstr(err.text, "exited with status 1"),
                  "%s", err.text);
    ck_assert_int_eq(access(sqsh, F_OK), -1);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);
    ck_assert_int_eq(count_lines_with(stub_log, "argv: "), 1); /* the stub did run and wrote its partial file */

    setenv("NP_STUB_MODE", "empty", 1);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, NULL, &out, &err), NP_E_IO);
    ck_assert_ptr_nonnull(strstr(err.text, "wrote no image"));
    ck_assert_int_eq(access(sqsh, F_OK), -1);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);
}
END_TEST

START_TEST(test_import_timeout_and_cancel)
{
    struct np_error err;
    enum np_import_outcome out;
    char sqsh[600];
    snprintf(sqsh, sizeof sqsh, "%s/img.sqsh", stage);
    setenv("NP_STUB_MODE", "hang", 1);
    struct np_import_opts o = {.timeout_s = 1};
    time_t t0 = time(NULL);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, &o, &out, &err), NP_E_IO);
    ck_assert_msg(time(NULL) - t0 <= 5, "timeout took %ld s", (long)(time(NULL) - t0));
    ck_assert_msg(strstr(err.text, "timed out") && strstr(err.text, "temporary file was removed"), "%s", err.text);
    ck_assert_int_eq(access(sqsh, F_OK), -1);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);

    volatile sig_atomic_t cancel = 1;
    struct np_import_opts oc = {.cancel = &cancel};
    t0 = time(NULL);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, &oc, &out, &err), NP_E_IO);
    ck_assert_msg(time(NULL) - t0 <= 5, "cancel took %ld s", (long)(time(NULL) - t0));
    ck_assert_ptr_nonnull(strstr(err.text, "interrupted"));
    ck_assert_int_eq(access(sqsh, F_OK), -1);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);
}
END_TEST

START_TEST(test_stale_temp_removed)
{
    struct np_error err;
    enum np_import_outcome out;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    long dead = 4000000;
    while (kill((pid_t)dead, 0) == 0 || errno != ESRCH)
        dead--;
    ck_assert_int_eq(np_stage_mkdirs(stage, &err), NP_OK);
    char stale[900], other[900], sqsh[600];
    snprintf(stale, sizeof stale, "%s/.img.sqsh.importing.%s.%ld", stage, host, dead);
    snprintf(other, sizeof other, "%s/.img.sqsh.importing.other-host.example.%ld", stage, dead);
    snprintf(sqsh, sizeof sqsh, "%s/img.sqsh", stage);
    FILE *f = fopen(stale, "w");
    ck_assert(f);
    fputs("partial", f);
    fclose(f);
    f = fopen(other, "w");
    ck_assert(f);
    fclose(f);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, NULL, &out, &err), NP_OK);
    ck_assert_int_eq(access(stale, F_OK), -1);
    ck_assert_int_eq(access(other, F_OK), 0); /* another host's import may still run */
}
END_TEST

START_TEST(test_missing_enroot)
{
    struct np_error err;
    enum np_import_outcome out;
    char sqsh[600];
    snprintf(sqsh, sizeof sqsh, "%s/img.sqsh", stage);
    setenv("PATH", "/usr/bin:/bin", 1);
    ck_assert_int_eq(np_stage_import("nvcr.io#nvidia/nemo:25.02.01", sqsh, NULL, &out, &err), NP_E_NOTFOUND);
    ck_assert_str_eq(err.source, "enroot");
    ck_assert_msg(strstr(err.text, "not found on PATH") && strstr(err.text, "--skip-image") &&
                      strstr(err.text, "--sbatch"),
                  "%s", err.text);
    ck_assert_int_eq(access(stage, F_OK), -1); /* nothing created */
}
END_TEST

START_TEST(test_sbatch_argv_quoting)
{
    struct np_import_opts o = {.sbatch = 1, .account = "acct", .partition = "batch", .log_dir = "/s/100%/logs"};
    char **v = np_stage_import_argv("nvcr.io#nvidia/nemo:25.02.01", "/s/it's here/.x.importing", &o);
    ck_assert_ptr_nonnull(v);
    char want[400];
    snprintf(want, sizeof want, "%s/sbatch", stubs);
    ck_assert_str_eq(v[0], want);
    const char *expect[] = {"--wait", "--parsable", "--nodes=1", "--ntasks=1", "--time=01:00:00",
                            "--job-name=nemoperf-setup", "--account=acct", "--partition=batch",
                            "--output=/s/100%%/logs/setup-import_%j.out",
                            "--error=/s/100%%/logs/setup-import_%j.out",
                            "--wrap=srun --nodes=1 --ntasks=1 'enroot' import --output '/s/it'\\''s here/.x.importing' "
                            "'docker://nvcr.io#nvidia/nemo:25.02.01'",
                            NULL};
    size_t i;
    for (i = 0; expect[i]; i++) {
        ck_assert_ptr_nonnull(v[i + 1]);
        ck_assert_str_eq(v[i + 1], expect[i]);
    }
    ck_assert_ptr_null(v[i + 1]);
    np_strv_free(v);
    struct np_import_opts l = {0};
    v = np_stage_import_argv("reg#img", "/o", &l);
    snprintf(want, sizeof want, "%s/enroot", stubs);
    ck_assert_str_eq(v[0], want);
    ck_assert_str_eq(v[1], "import");
    ck_assert_str_eq(v[2], "--output");
    ck_assert_str_eq(v[3], "/o");
    ck_assert_str_eq(v[4], "docker://reg#img");
    ck_assert_ptr_null(v[5]);
    np_strv_free(v);
}
END_TEST

START_TEST(test_import_sbatch)
{
    struct np_error err;
    enum np_import_outcome out;
    char sqsh[600], logs[600];
    snprintf(sqsh, sizeof sqsh, "%s/img.sqsh", stage);
    snprintf(logs, sizeof logs, "%s/logs", stage);
    setenv("SLURM_JOB_ID", "777", 1);
    setenv("SRUN_CPUS_PER_TASK", "4", 1);
    setenv("SBATCH_ACCOUNT", "acct", 1);
    setenv("SBATCH_QOS", "high", 1);
    setenv("SBATCH_RESERVATION", "", 1); /* empty: unset for setup, a bad value for sbatch */
    setenv("SLURM_CONF", "/etc/slurm/test.conf", 1);
    struct np_import_opts o = {.sbatch = 1, .account = "acct", .log_dir = logs};
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, &o, &out, &err), NP_OK);
    ck_assert_int_eq(out, NP_IMPORT_IMPORTED);
    struct stat st;
    ck_assert(stat(sqsh, &st) == 0 && st.st_size > 0);
    ck_assert(stat(logs, &st) == 0 && S_ISDIR(st.st_mode));
    char *log = slurp(stub_log);
    ck_assert_ptr_nonnull(strstr(log, "sbatch: --wait --parsable --nodes=1"));
    ck_assert_ptr_nonnull(strstr(log, "srun: --nodes=1 --ntasks=1 enroot import --output"));
    ck_assert_ptr_nonnull(strstr(log, "sbatch env: SLURM_CONF=/etc/slurm/test.conf"));
    ck_assert_msg(!strstr(log, "SLURM_JOB_ID") && !strstr(log, "SRUN_"), "an allocation's variables: %s", log);
    /* the user's SBATCH_* reach sbatch, as with launch; an empty one does not */
    ck_assert_msg(strstr(log, "sbatch env: SBATCH_ACCOUNT=acct") && strstr(log, "sbatch env: SBATCH_QOS=high"),
                  "the user's SBATCH_* did not reach sbatch: %s", log);
    ck_assert_msg(!strstr(log, "SBATCH_RESERVATION"), "an empty SBATCH_* reached sbatch: %s", log);
    ck_assert(!strstr(log, "HF_TOKEN present"));
    free(log);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);

    /* the job fails: the message names the job and its log */
    unlink(sqsh);
    setenv("NP_STUB_MODE", "fail", 1);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, &o, &out, &err), NP_E_IO);
    ck_assert_msg(strstr(err.text, "import job 4242 failed") && strstr(err.text, "setup-import_4242.out"), "%s",
                  err.text);
    ck_assert_int_eq(count_entries(stage, ".importing."), 0);

    /* no sbatch */
    setenv("PATH", "/nonexistent", 1);
    ck_assert_int_eq(np_stage_import("reg#img", sqsh, &o, &out, &err), NP_E_NOTFOUND);
    ck_assert_str_eq(err.source, "sbatch");
}
END_TEST

int main(void)
{
    np_set_quiet(1);
    Suite *s = suite_create("stage");
    TCase *tc = tcase_create("stage");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_check_path);
    tcase_add_test(tc, test_layout_and_idempotence);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_find_program);
    tcase_add_test(tc, test_import_ok_then_kept);
    tcase_add_test(tc, test_import_replaces_empty);
    tcase_add_test(tc, test_import_failure_leaves_nothing);
    tcase_add_test(tc, test_import_timeout_and_cancel);
    tcase_add_test(tc, test_stale_temp_removed);
    tcase_add_test(tc, test_missing_enroot);
    tcase_add_test(tc, test_sbatch_argv_quoting);
    tcase_add_test(tc, test_import_sbatch);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
