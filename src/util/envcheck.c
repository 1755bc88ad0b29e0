/* envcheck.c - spot mistyped nemoperf variables before a tool acts (MODLE_SIZE=8b -> MODEL_SIZE).
 *
 * The tables below are every environment variable the tools (launch, setup, parse, synth) and
 * the scripts (make demo, make check, the local cluster, bench, fuzz) read.  A variable near
 * one of them, or under a known prefix, is reported with the nearest known name.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/util/envcheck.h"

#include <getopt.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

/* What the tools read (launch, setup, parse, the results store, synth): settings a user sets.  tests/docs/
 * test_current.py finds the reads in the code and holds this list, np_env_ambient's and docs/environment.md's
 * "The tools" table equal to them. */
#define ENVCHECK_TOOLS                                                                                              \
    /* launch: the original recipes' variables, then nemoperf's */                                                  \
    "DTYPE", "MODEL_SIZE", "JOB_TOTAL_GPUS", "GPUS_PER_NODE", "STAGE_PATH", "HF_TOKEN", "SBATCH_ACCOUNT",          \
    "SBATCH_PARTITION", "SBATCH_GPUS_PER_NODE", "TIME_LIMIT", "MAX_STEPS", "ENABLE_PROFILE", "PROFILE_START_STEP", \
    "PROFILE_STOP_STEP", "ENABLE_NCCLTRACE", "DISABLE_PERFRUN", "ENABLE_CHECKPOINT", "LOAD_CHECKPOINT_PATH",       \
    "RUN_CONF_IMAGE", "RECIPE", "GPU_TYPE", "WORKLOAD", "TASK", "NEMOPERF_FORCE_CHECKPOINT",                       \
    "NEMOPERF_SBATCH_TIMEOUT", "NEMOPERF_WAIT_MAX_DELAY", "NEMOPERF_WAIT_TIMEOUT", "NEMOPERF_BENCH_COPIES",       \
    "NEMOPERF_MAX_RETRIES", "NEMOPERF_SRUN_MPI", "REPEATS", "NEMOPERF_NUMA_BIND", "SLURM_SUBMIT", "SLURMRESTD_URL", \
    "SNAPSHOT", "ENABLE_GPU_METRICS", "NEMOPERF_GPU_METRICS_MS",                                                   \
    "SLURM_JWT", "SLURM_USER",                                                                                     \
    /* launch with RECIPE=nccl-tests (launch/config.c, model/nccltests.h) */                                      \
    "FABRIC_CHECK", "FABRIC_PAIRS", "NCCL_TESTS", "NCCL_TESTS_PATH",                                              \
    /* the SBATCH_* launch and setup check or name (slurm/sbatch_env.c, launch/preflight.c) */                    \
    "SBATCH_QOS", "SBATCH_RESERVATION", "SBATCH_CONSTRAINT", "SBATCH_WCKEY", "SBATCH_JOB_NAME",                   \
    /* launch and setup with RECIPE=automodel */                                                                   \
    "MODEL",                                                                                                       \
    /* launch and setup of Megatron-Bridge's performance rows (launch/mbridge_config.c) */                        \
    "CONTAINER", "CONFIG_VARIANT", "GBS", "MBS", "SEQ_LEN",                                                        \
    /* setup */                                                                                                    \
    "HF_ENDPOINT", "NEMOPERF_ARCHIVE_ENDPOINT", "NEMOPERF_HF_DEADLINE", "NEMOPERF_HF_CHECK_DEADLINE",              \
    /* every tool */                                                                                               \
    "NEMOPERF_DATADIR",                                                                                            \
    /* parse */                                                                                                    \
    "NEMOPERF_PROGRESS_AFTER", "NEMOPERF_FABRIC_TABLE",                                                             \
    /* the results store (parse --store/--history/--compare, launch --wait --store); the test hook of its          \
     * network file system check */                                                                               \
    "NEMOPERF_DB", "NEMOPERF_DB_TIMEOUT", "NEMOPERF_CLUSTER", "NEMOPERF_TEST_FS_MAGIC",                            \
    /* synth (set by the rendered script) */                                                                       \
    "NEMOPERF_PROFILE_DIR"

/* What the scripts read: make demo, tests/slurm/cluster and the test runners, make bench, make fuzz. */
#define ENVCHECK_SCRIPTS                                                                                            \
    "NEMOPERF_DEMO_STAGE", "NEMOPERF_DEMO_STEPS", "NEMOPERF_DEMO_TIMEOUT", "NP_CLUSTER_DIR", "NP_CLUSTER_USER",     \
    "NP_CLUSTER_REST_PORT", "NP_CLUSTER_CTLD_PORT", "NP_CLUSTER_NODE_PORT", "NP_CLUSTER_KEEP", "NP_CLUSTER_WAIT",  \
    "NP_BIN", "NP_CLUSTER_SLURM", "NP_CLUSTER_CHROOT_CACHE", "NP_CLUSTER_MIRROR", "NP_CLUSTER_SHARE",             \
    "NP_CLUSTER_REST_PLUGINS", "NP_CLUSTER_VERSIONS_PORT", "SLURM_CONF", "BENCH_DIR", "BENCH_JOBS", "BENCH_REPS",  \
    "BENCH_SCALE", "BENCH_SEED", "BENCH_SHAPES", "BENCH_STORE_RUNS", "BENCH_STORE_COPIES", "FUZZ_SECONDS",         \
    "FUZZ_AMLOG_SECONDS", "FUZZ_NCCLT_SECONDS"

/* What the tools read but a user does not set for nemoperf: the system's, and Slurm's inside a job
 * (nemoperf-synth).  Never suspect, never suggested. */
#define ENVCHECK_AMBIENT                                                                                            \
    "HOME", "PATH", "USER", "XDG_DATA_HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "LD_LIBRARY_PATH", "SLURM_JOB_ID",   \
    "SLURM_STEP_ID", "SLURMD_NODENAME", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID",           \
    "SLURM_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE"

static const char *const envcheck_names[] = {ENVCHECK_TOOLS, ENVCHECK_SCRIPTS, NULL};
static const char *const envcheck_tools[] = {ENVCHECK_TOOLS, NULL};
static const char *const envcheck_ambient[] = {ENVCHECK_AMBIENT, NULL};

static const char *const envcheck_prefixes[] = {"NEMOPERF_", "NP_CLUSTER_", NULL};

/* Common variables of shells and systems that sit near a known name; never suspect. */
static const char *const envcheck_ignore[] = {"OSTYPE", "HOSTTYPE", "MACHTYPE", "CPUTYPE", NULL};

const char *const *np_env_known(void) { return envcheck_names; }

const char *const *np_env_tools(void) { return envcheck_tools; }

const char *const *np_env_ambient(void) { return envcheck_ambient; }

int np_env_is_known(const char *name)
{
    for (size_t i = 0; envcheck_names[i]; i++)
        if (strcmp(name, envcheck_names[i]) == 0)
            return 1;
    return 0;
}

size_t np_env_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if ((la > lb ? la - lb : lb - la) > cap || la > 255 || lb > 255)
        return cap + 1;
    size_t row[256], prev;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = i;
        size_t best = row[0];
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = prev + (toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]));
            size_t del = row[j] + 1, ins = row[j - 1] + 1;
            prev = row[j];
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            if (row[j] < best)
                best = row[j];
        }
        if (best > cap)
            return cap + 1;
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}

/* ---- near misses by meaning: ENABLE_PROFILING, NCCL_TRACE, LOAD_CKPT_PATH ----
 * A name is cut into words at '_' and each word put in the vocabulary of the table (CKPT -> CHECKPOINT,
 * PROFILING/NSYS -> PROFILE, ENABLED -> ENABLE, NCCLTRACE -> NCCL TRACE...).  It is suspect when it holds a
 * distinctive word of a feature (PROFILE, TRACE, CHECKPOINT) and every one of its words is a word of one known
 * name: that name is meant.  NCCL_DEBUG (DEBUG is none of ENABLE_NCCLTRACE's words) or PROFILEREAD stay quiet. */

#define ENVCHECK_WORDS 8

struct envcheck_words {
    const char *w[ENVCHECK_WORDS * 2];
    size_t n;
};

static const char *const envcheck_synonyms[][2] = {
    {"CKPT", "CHECKPOINT"},    {"CHKPT", "CHECKPOINT"}, {"CHECKPOINTS", "CHECKPOINT"}, {"CHECKPOINTING", "CHECKPOINT"},
    {"PROFILING", "PROFILE"},  {"PROFILER", "PROFILE"}, {"PROFILES", "PROFILE"},       {"PROF", "PROFILE"},
    {"NSYS", "PROFILE"},       {"TRACING", "TRACE"},    {"TRACES", "TRACE"},           {"ENABLED", "ENABLE"},
    {"ENABLES", "ENABLE"},     {"DIR", "PATH"},         {"STEPS", "STEP"},             {"BEGIN", "START"},
    {"END", "STOP"},           {NULL, NULL}};

static const char *const envcheck_distinctive[] = {"PROFILE", "TRACE", "CHECKPOINT", NULL};

/* The words of name, normalised (static strings of the tables, or "" for a word they do not know). */
static int envcheck_split(const char *name, struct envcheck_words *out)
{
    out->n = 0;
    for (const char *p = name; *p;) {
        const char *e = strchr(p, '_');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char w[32];
        if (len >= sizeof w || out->n + 2 > sizeof out->w / sizeof out->w[0])
            return -1;
        for (size_t i = 0; i < len; i++)
            w[i] = (char)toupper((unsigned char)p[i]);
        w[len] = '\0';
        p += len + (e != NULL);
        if (!len)
            continue;
        const char *word = "";
        if (strcmp(w, "NCCLTRACE") == 0) { /* ENABLE_NCCLTRACE: one word of the table, two of meaning */
            out->w[out->n++] = "NCCL";
            word = "TRACE";
        } else {
            for (size_t i = 0; envcheck_synonyms[i][0] && !*word; i++)
                if (strcmp(w, envcheck_synonyms[i][0]) == 0)
                    word = envcheck_synonyms[i][1];
            static const char *const plain[] = {"ENABLE", "PROFILE", "TRACE", "NCCL", "CHECKPOINT", "LOAD",
                                                "PATH",   "START",   "STOP",  "STEP", NULL};
            for (size_t i = 0; plain[i] && !*word; i++)
                if (strcmp(w, plain[i]) == 0)
                    word = plain[i];
        }
        out->w[out->n++] = word;
    }
    return 0;
}

static int envcheck_has(const struct envcheck_words *ws, const char *w)
{
    for (size_t i = 0; i < ws->n; i++)
        if (strcmp(ws->w[i], w) == 0)
            return 1;
    return 0;
}

/* The known name whose words hold every word of name, name holding a distinctive one; NULL when none. */
static const char *envcheck_by_meaning(const char *name)
{
    struct envcheck_words nw, kw;
    if (envcheck_split(name, &nw) != 0 || nw.n == 0)
        return NULL;
    int distinctive = 0;
    for (size_t i = 0; envcheck_distinctive[i]; i++)
        distinctive |= envcheck_has(&nw, envcheck_distinctive[i]);
    if (!distinctive)
        return NULL;
    const char *best = NULL;
    size_t bestn = (size_t)-1;
    for (size_t k = 0; envcheck_names[k]; k++) {
        if (envcheck_split(envcheck_names[k], &kw) != 0)
            continue;
        size_t i = 0;
        while (i < nw.n && *nw.w[i] && envcheck_has(&kw, nw.w[i]))
            i++;
        if (i == nw.n && kw.n < bestn) { /* the fewest words beyond the name's */
            best = envcheck_names[k];
            bestn = kw.n;
        }
    }
    return best;
}

const char *np_env_suggest(const char *name, int *prefix_only)
{
    int dummy;
    if (!prefix_only)
        prefix_only = &dummy;
    *prefix_only = 0;
    if (!name || !*name || np_env_is_known(name))
        return NULL;
    for (size_t i = 0; envcheck_ignore[i]; i++)
        if (strcmp(name, envcheck_ignore[i]) == 0)
            return NULL;
    for (size_t i = 0; envcheck_ambient[i]; i++)
        if (strcmp(name, envcheck_ambient[i]) == 0)
            return NULL;
    const char *best = NULL;
    size_t bestd = 3;
    for (size_t i = 0; envcheck_names[i]; i++) {
        size_t d = np_env_distance(name, envcheck_names[i], 2);
        if (d < bestd) {
            bestd = d;
            best = envcheck_names[i];
        }
    }
    if (best || (best = envcheck_by_meaning(name)))
        return best;
    for (size_t p = 0; envcheck_prefixes[p]; p++) {
        size_t pl = strlen(envcheck_prefixes[p]);
        if (strncmp(name, envcheck_prefixes[p], pl) != 0)
            continue;
        /* under a known prefix: the nearest known name with that prefix */
        size_t far = (size_t)-1;
        for (size_t i = 0; envcheck_names[i]; i++) {
            if (strncmp(envcheck_names[i], envcheck_prefixes[p], pl) != 0)
                continue;
            size_t d = np_env_distance(name + pl, envcheck_names[i] + pl, 64);
            if (d < far) {
                far = d;
                best = envcheck_names[i];
            }
        }
        *prefix_only = 1;
        return best;
    }
    return NULL;
}

int np_env_secret_name(const char *name)
{
    for (const char *t = strstr(name, "TOK"); t; t = strstr(t + 1, "TOK"))
        if (strncmp(t, "TOKENIZER", 9) != 0) /* TOKENIZERS_PARALLELISM holds no credential */
            return 1;
    return strstr(name, "JWT") || strstr(name, "KEY") || strstr(name, "PASS") || strstr(name, "SECRET") ||
           strstr(name, "CREDENTIAL");
}

char *np_env_check(char *const *envp)
{
    struct np_buf b;
    np_buf_init(&b);
    for (size_t i = 0; envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        if (!eq || eq == envp[i] || eq - envp[i] > 200)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - envp[i]), envp[i]);
        int prefix_only = 0;
        const char *s = np_env_suggest(name, &prefix_only);
        if (!s)
            continue;
        /* a value that may be a credential is never echoed */
        int secret = np_env_secret_name(name) || strcmp(s, "HF_TOKEN") == 0 || strcmp(s, "SLURM_JWT") == 0;
        np_buf_appendf(&b, "%s%s%.60s%s: not a nemoperf variable; %s %s?\n", name, secret ? "" : "=",
                       secret ? "" : eq + 1, secret ? "" : strlen(eq + 1) > 60 ? "..." : "",
                       prefix_only ? "the nearest one is" : "did you mean", s);
    }
    if (b.len == 0) {
        np_buf_free(&b);
        return NULL;
    }
    return np_buf_steal(&b);
}

/* ---- options: --stpes -> did you mean --steps? ---- */

const char *np_opt_suggest(const char *arg, const struct option *longopts)
{
    if (!arg || !longopts)
        return NULL;
    while (*arg == '-')
        arg++;
    char name[64];
    size_t len = strcspn(arg, "=");
    if (!len || len >= sizeof name)
        return NULL;
    memcpy(name, arg, len);
    name[len] = '\0';
    const char *best = NULL;
    size_t bestd = len <= 3 ? 2 : 3; /* a short word: one edit at most */
    for (size_t i = 0; longopts[i].name; i++) {
        size_t d = np_env_distance(name, longopts[i].name, 2);
        if (d < bestd) {
            bestd = d;
            best = longopts[i].name;
        }
    }
    return best;
}

void np_opt_unknown(const char *arg, const struct option *longopts)
{
    const char *s = np_opt_suggest(arg, longopts);
    if (s)
        np_errorf("unknown option '%s'; did you mean --%s? (see --help)", arg, s);
    else
        np_errorf("unknown option '%s'; see --help", arg);
}
