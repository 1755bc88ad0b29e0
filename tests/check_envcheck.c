/* check_envcheck.c - mistyped nemoperf variables: suggestions, what is never suspect (a shell's and
 * a Slurm job's own variables), secrets not echoed, and the table complete: every NEMOPERF_* /
 * NP_CLUSTER_* name the sources, scripts and docs mention is in it.
 */
#include <check.h>
#include <dirent.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nemoperf/util/envcheck.h"

START_TEST(suggestions)
{
    int p;
    ck_assert_str_eq(np_env_suggest("MODLE_SIZE", &p), "MODEL_SIZE");
    ck_assert_int_eq(p, 0);
    ck_assert_str_eq(np_env_suggest("JOB_TOTAL_GPU", &p), "JOB_TOTAL_GPUS");
    ck_assert_str_eq(np_env_suggest("dtype", &p), "DTYPE");
    ck_assert_str_eq(np_env_suggest("STAGEPATH", &p), "STAGE_PATH");
    ck_assert_str_eq(np_env_suggest("SLURMRESTD_URI", &p), "SLURMRESTD_URL");
    ck_assert_str_eq(np_env_suggest("NEMOPERF_SBATCH_TIMOUT", &p), "NEMOPERF_SBATCH_TIMEOUT");
    ck_assert_str_eq(np_env_suggest("NP_CLUSTER_REST_PROT", &p), "NP_CLUSTER_REST_PORT");
    /* issue 24: near misses by meaning, which edit distance alone misses */
    ck_assert_str_eq(np_env_suggest("ENABLE_PROFILING", &p), "ENABLE_PROFILE");
    ck_assert_str_eq(np_env_suggest("NCCL_TRACE", &p), "ENABLE_NCCLTRACE");
    ck_assert_str_eq(np_env_suggest("ENABLE_NCCL_TRACE", &p), "ENABLE_NCCLTRACE"); /* NVIDIA's 25.01 name */
    ck_assert_str_eq(np_env_suggest("LOAD_CKPT_PATH", &p), "LOAD_CHECKPOINT_PATH");
    ck_assert_str_eq(np_env_suggest("CHECKPOINT_DIR", &p), "LOAD_CHECKPOINT_PATH");
    ck_assert_str_eq(np_env_suggest("ENABLE_CKPT", &p), "ENABLE_CHECKPOINT");
    ck_assert_str_eq(np_env_suggest("ENABLE_NSYS", &p), "ENABLE_PROFILE");
    ck_assert_str_eq(np_env_suggest("PROFILING_START_STEP", &p), "PROFILE_START_STEP");
    ck_assert_int_eq(p, 0);
    /* Megatron-Bridge rows' variables (launch/mbridge_config.c) */
    ck_assert_str_eq(np_env_suggest("CONTAINR", &p), "CONTAINER");
    ck_assert_str_eq(np_env_suggest("CONFIG_VARIANTS", &p), "CONFIG_VARIANT");
    ck_assert_str_eq(np_env_suggest("SEQLEN", &p), "SEQ_LEN");
    /* what the tools read but nobody sets for nemoperf is never suspect */
    for (const char *const *a = np_env_ambient(); *a; a++)
        ck_assert_msg(np_env_suggest(*a, NULL) == NULL, "%s", *a);
    /* far from every name, but under a known prefix */
    ck_assert_ptr_nonnull(np_env_suggest("NEMOPERF_SOMETHING_ELSE", &p));
    ck_assert_int_eq(p, 1);
    ck_assert_uint_eq(np_env_distance("MODLE_SIZE", "MODEL_SIZE", 2), 2);
    ck_assert_uint_eq(np_env_distance("abc", "ABC", 2), 0);
    ck_assert_uint_eq(np_env_distance("A", "ABCDEFG", 2), 3);
}
END_TEST

/* issue 24: option typos get the option meant */
START_TEST(option_suggestions)
{
    static const struct option o[] = {{"steps", 1, 0, 1}, {"dry-run", 0, 0, 2}, {"format", 1, 0, 'f'},
                                      {"all-steps", 0, 0, 3}, {0, 0, 0, 0}};
    ck_assert_str_eq(np_opt_suggest("--stpes", o), "steps");
    ck_assert_str_eq(np_opt_suggest("--dryrun", o), "dry-run");
    ck_assert_str_eq(np_opt_suggest("--fromat=json", o), "format");
    ck_assert_ptr_null(np_opt_suggest("--zzzzzz", o));
    ck_assert_ptr_null(np_opt_suggest("-x", o));
    ck_assert_ptr_null(np_opt_suggest(NULL, o));
}
END_TEST

START_TEST(never_suspect)
{
    /* known names, and what shells, desktops and Slurm jobs export (sbatch(1) OUTPUT ENVIRONMENT) */
    static const char *const ok[] = {
        "MODEL_SIZE", "STAGE_PATH", "HF_TOKEN", "SLURM_CONF", "NEMOPERF_DATADIR", "NP_CLUSTER_DIR", "HOME", "PATH",
        "USER", "SHELL", "TERM", "LANG", "PWD", "OLDPWD", "TMPDIR", "HOSTNAME", "LOGNAME", "MAIL", "SHLVL", "_",
        "OSTYPE", "HOSTTYPE", "HF_HOME", "HF_HUB_CACHE", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "MANPATH",
        "DISPLAY", "EDITOR", "PAGER", "SSH_TTY", "SSH_CLIENT", "XDG_RUNTIME_DIR", "MODULEPATH", "LS_COLORS",
        "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_USER", "SLURM_JOB_UID", "SLURM_JOB_NAME", "SLURM_NODEID",
        "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NNODES", "SLURM_SUBMIT_DIR",
        "SLURM_SUBMIT_HOST", "SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION", "SLURM_TASKS_PER_NODE", "SLURM_GTIDS",
        "SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE", "SLURM_RESTART_COUNT",
        "SLURM_TOPOLOGY_ADDR", "SLURM_UMASK", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS", "SLURM_EXPORT_ENV",
        "SLURM_PRIO_PROCESS", "SLURM_JOB_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_STEP_ID", "SLURM_STEPID",
        "SLURM_DISTRIBUTION", "SLURM_CPU_BIND", "SLURM_MPI_TYPE", "SLURMD_NODENAME", "SBATCH_EXPORT",
        "SBATCH_TIMELIMIT", "SBATCH_QOS", "SBATCH_GPUS", "SBATCH_RESERVATION", "SRUN_DEBUG",
        /* NCCL's own, and a word that only begins like a feature's */
        "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_NVLS_ENABLE", "PROFILEREAD",
        "TORCH_PROFILER_DIR", "NVTE_DEBUG", NULL};
    for (size_t i = 0; ok[i]; i++)
        ck_assert_msg(np_env_suggest(ok[i], NULL) == NULL, "%s reported as a typo of %s", ok[i],
                      np_env_suggest(ok[i], NULL));
}
END_TEST

START_TEST(messages)
{
    char *env[] = {(char *)"HOME=/root", (char *)"MODLE_SIZE=8b", (char *)"HF_TOKNE=hf_secret_value",
                   (char *)"DTYPE=bf16", NULL};
    char *m = np_env_check(env);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m, "MODLE_SIZE=8b: not a nemoperf variable; did you mean MODEL_SIZE?\n"));
    ck_assert_ptr_nonnull(strstr(m, "HF_TOKNE: not a nemoperf variable; did you mean HF_TOKEN?\n"));
    ck_assert_ptr_null(strstr(m, "hf_secret_value"));
    ck_assert_ptr_null(strstr(m, "HOME"));
    free(m);
    char *clean[] = {(char *)"HOME=/root", (char *)"DTYPE=bf16", NULL};
    ck_assert_ptr_null(np_env_check(clean));
}
END_TEST

/* Every NEMOPERF_* and NP_CLUSTER_* word in the files under dir (recursively) is a known name. */
static void scan_tree(const char *dir, regex_t *re, int *missing, int recurse)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "scratch") == 0)
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(p, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode)) {
            if (recurse)
                scan_tree(p, re, missing, 1);
            continue;
        }
        if (!S_ISREG(sb.st_mode) || sb.st_size > 2000000)
            continue;
        FILE *f = fopen(p, "r");
        char line[4096];
        while (f && fgets(line, sizeof line, f)) {
            regmatch_t m;
            for (const char *s = line; regexec(re, s, 1, &m, 0) == 0; s += m.rm_eo) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(m.rm_eo - m.rm_so), s + m.rm_so);
                size_t n = strlen(name);
                if (n && name[n - 1] == '_') /* a prefix written in prose: NEMOPERF_* */
                    continue;
                if (!np_env_is_known(name)) {
                    fprintf(stderr, "%s: %s is read or documented but not in src/util/envcheck.c's table\n", p, name);
                    (*missing)++;
                }
            }
        }
        if (f)
            fclose(f);
    }
    closedir(d);
}

START_TEST(table_complete)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "\\b(NEMOPERF|NP_CLUSTER)_[A-Z0-9_]+", REG_EXTENDED), 0);
    int missing = 0;
    const char *dirs[] = {"src", "tests/e2e", "tests/slurm", "build-aux", "bench", "share/man", NULL};
    for (size_t i = 0; dirs[i]; i++)
        scan_tree(dirs[i], &re, &missing, 1);
    scan_tree(".", &re, &missing, 0); /* README.md, Makefile, the front doors */
    scan_tree("docs", &re, &missing, 1);
    regfree(&re);
    ck_assert_int_eq(missing, 0);
}
END_TEST

/* ... and docs/environment.md's list of variables names every one of the table */
START_TEST(readme_lists_all)
{
    FILE *f = fopen("docs/environment.md", "r");
    ck_assert_ptr_nonnull(f);
    static char text[400000];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    const char *sec = strstr(text, "## Environment variables");
    ck_assert_ptr_nonnull(sec);
    const char *end = strstr(sec + 3, "\n## ");
    for (const char *const *k = np_env_known(); *k; k++) {
        char word[80];
        snprintf(word, sizeof word, "%s", *k);
        const char *hit = strstr(sec, word);
        ck_assert_msg(hit && (!end || hit < end), "docs/environment.md does not name %s", *k);
    }
}
END_TEST

/* np_env_secret_name: what the manifest's env_user and parse's drift never record the value of. */
START_TEST(secret_names)
{
    static const char *const secret[] = {"HF_TOKEN", "SLURM_JWT", "AWS_SECRET_ACCESS_KEY", "PGPASSWORD",
                                         "WANDB_API_KEY", "MY_TOK", "NGC_CREDENTIALS", "TOKENIZER_TOKEN", NULL};
    static const char *const plain[] = {"TOKENIZERS_PARALLELISM", "NCCL_NVLS_ENABLE", "NVTE_FLASH_ATTN",
                                        "NCCL_IB_HCA", NULL};
    for (size_t i = 0; secret[i]; i++)
        ck_assert_msg(np_env_secret_name(secret[i]), "%s", secret[i]);
    for (size_t i = 0; plain[i]; i++)
        ck_assert_msg(!np_env_secret_name(plain[i]), "%s", plain[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("envcheck");
    TCase *tc = tcase_create("envcheck");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, suggestions);
    tcase_add_test(tc, option_suggestions);
    tcase_add_test(tc, never_suspect);
    tcase_add_test(tc, messages);
    tcase_add_test(tc, secret_names);
    tcase_add_test(tc, table_complete);
    tcase_add_test(tc, readme_lists_all);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
