/* check_config.c - launch configuration: every validation failure of issue 4 and every seed row.
 *
 * The environment is injected as "NAME=VALUE" lists (np_env_list), never with
 * setenv.  Failures are table-driven: exit status and the pieces the message
 * must contain (variable, bad value, what is allowed).  The seed 003/004
 * parallel tables are restated here from the seeds' rules, independent of
 * the recipe JSON files, and every row must resolve to them with the right node count.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/model/nccltests.h"

static struct np_recipe_set set;
static char stage[] = "/tmp/np-config-XXXXXX";
static char outside[] = "/tmp/np-config-out-XXXXXX";
static double fake_free = 1e15;
static int preview_mode; /* resolve() as --dry-run does (resolve_preview) */

static int free_space_fails; /* 1: the file system cannot tell its free space (EIO) */

static int fake_free_space(const char *path, double *bytes)
{
    (void)path;
    if (free_space_fails) {
        errno = EIO;
        return -1;
    }
    *bytes = fake_free;
    return 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Fault injection (a stand-in for a machine out of memory, which cannot be made on demand): this program's
 * malloc, calloc and realloc fail the alloc_fail_at-th call after alloc_count is reset, errno ENOMEM; glibc's own
 * allocator does the rest (__libc_*, the interposition glibc documents).  Not under AddressSanitizer, whose
 * allocator this would bypass: there the test that uses it is skipped. */
#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_FAULTS 0
#else
#define ALLOC_FAULTS 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
static long alloc_fail_at = -1, alloc_count;
static int alloc_fails(void)
{
    if (alloc_fail_at >= 0 && alloc_count++ == alloc_fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}
void *malloc(size_t n) { return alloc_fails() ? NULL : __libc_malloc(n); }
void *calloc(size_t k, size_t n) { return alloc_fails() ? NULL : __libc_calloc(k, n); }
void *realloc(void *p, size_t n) { return alloc_fails() ? NULL : __libc_realloc(p, n); }
#endif

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
    ck_assert(mkdtemp(stage));
    ck_assert(mkdtemp(outside));
    char p[512];
    snprintf(p, sizeof p, "%s/nvidia+nemo+25.02.01.sqsh", stage);
    write_file(p, "sqsh");
    /* a saved checkpoint, an empty one, and one outside STAGE_PATH */
    snprintf(p, sizeof p, "%s/ck", stage);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/ck/weights", stage);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/ck/weights/__0_0.distcp", stage);
    write_file(p, "x");
    snprintf(p, sizeof p, "%s/empty", stage);
    mkdir(p, 0755);
    /* the tokenizer files ./setup stages for llama3.1 8b */
    snprintf(p, sizeof p, "mkdir -p '%s/hf/meta-llama/Meta-Llama-3-8B'", stage);
    ck_assert(system(p) == 0);
    snprintf(p, sizeof p, "%s/hf/meta-llama/Meta-Llama-3-8B/config.json", stage);
    write_file(p, "{}");
    snprintf(p, sizeof p, "%s/weights", outside);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/weights/__0_0.distcp", outside);
    write_file(p, "x");
    char link[512];
    snprintf(link, sizeof link, "%s/escape", stage);
    ck_assert(symlink(outside, link) == 0);
}

static void teardown(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", stage, outside);
    ck_assert(system(cmd) == 0);
    np_recipe_set_free(&set);
}

/* Resolve env (NULL-terminated "NAME=VALUE" list, "STAGE_PATH=@" means the fixture).
 * DTYPE is required: a list without it gets DTYPE=bf16, except when it holds
 * "DTYPE=-", which means "leave DTYPE unset". */
static enum np_status resolve(const char *const *env, const char *synth, struct np_launch_plan *plan,
                              struct np_error *err)
{
    const char *e[64];
    char sp[600], lp[600];
    size_t n = 0, k = 0;
    int has_dtype = 0;
    for (; env[k]; k++)
        has_dtype |= strncmp(env[k], "DTYPE=", 6) == 0;
    if (!has_dtype)
        e[n++] = "DTYPE=bf16";
    for (k = 0; env[k]; k++) {
        ck_assert(n < 62);
        if (strcmp(env[k], "DTYPE=-") == 0)
            continue;
        e[n++] = env[k];
    }
    e[n] = NULL;
    for (n = 0; e[n]; n++) {
        if (strncmp(e[n], "STAGE_PATH=@", 12) == 0) {
            snprintf(sp, sizeof sp, "STAGE_PATH=%s%s", stage, e[n] + 12);
            e[n] = sp;
        } else if (strcmp(e[n], "LOAD_CHECKPOINT_PATH=@outside") == 0) {
            snprintf(lp, sizeof lp, "LOAD_CHECKPOINT_PATH=%s", outside);
            e[n] = lp;
        }
    }
    if (0) {
    }
    struct np_launch_opts o = {
        .now = 1700000000, .synth_path = synth, .free_space = fake_free_space, .preview = preview_mode};
    memset(err, 0, sizeof *err);
    return np_launch_resolve(&set, np_env_list, (void *)e, &o, plan, err);
}

/* ---- validation failures: exit 2, the variable, the value, what is allowed ---- */

struct bad_case {
    const char *env[16];
    const char *pieces[4];
};

#define SP "STAGE_PATH=@"
#define SYN "WORKLOAD=synthetic"
#define L8 "MODEL_SIZE=8b"
static const struct bad_case bad_cases[] = {
    {{L8, SYN, NULL}, {"STAGE_PATH is not set", "absolute path", NULL}},
    {{"STAGE_PATH=relative/x", L8, SYN, NULL}, {"STAGE_PATH=relative/x", "not an absolute path", NULL}},
    {{"STAGE_PATH=/nonexistent/np", L8, SYN, NULL}, {"STAGE_PATH=/nonexistent/np", "no such folder", "./setup", NULL}},
    {{"STAGE_PATH=/tmp/a\nb", L8, SYN, NULL}, {"STAGE_PATH=/tmp/a\nb", "newline", NULL}},
    {{"STAGE_PATH=/tmp/a\\b", L8, SYN, NULL}, {"backslash", NULL}},
    {{SP, L8, "WORKLOAD=docker", NULL}, {"WORKLOAD=docker", "allowed: nemo, synthetic", NULL}},
    {{SP, SYN, "RECIPE=llama4", NULL}, {"RECIPE=llama4: unknown recipe; did you mean llama3? allowed: NeMo recipes: automodel, gpt3, llama3.1, llama3, mixtral, nemotron, nemotron4", "; Megatron-Bridge recipes: deepseek_v3, ", NULL}},
    {{SP, SYN, "MODEL_SIZE=9b", NULL}, {"MODEL_SIZE=9b", "allowed: 8b, 70b, 405b, 15b, 340b", NULL}},
    {{SP, SYN, NULL}, {"MODEL_SIZE is not set", "RECIPE", "8b", NULL}},
    {{SP, SYN, "DTYPE=-", NULL}, {"MODEL_SIZE is not set and DTYPE is not set", "required", "bf16, fp8", NULL}},
    {{SP, SYN, L8, "DTYPE=-", NULL}, {"DTYPE is not set", "required", "allowed: bf16, fp8", NULL}},
    {{SP, SYN, "RECIPE=gpt3", "DTYPE=-", NULL}, {"MODEL_SIZE is not set and DTYPE is not set", "MODEL_SIZE 175b (RECIPE=gpt3)", NULL}},
    {{SP, SYN, L8, "NEMOPERF_MAX_RETRIES=-1", NULL}, {"NEMOPERF_MAX_RETRIES=-1", "allowed: 0 to 100", NULL}},
    {{SP, SYN, L8, "NEMOPERF_SRUN_MPI=pmix x", NULL}, {"NEMOPERF_SRUN_MPI=pmix x", "pmix", "none", NULL}},
    {{SP, SYN, L8, "SNAPSHOT=maybe", NULL}, {"SNAPSHOT=maybe", "not a boolean", "false", NULL}},
    {{SP, SYN, L8, "ENABLE_GPU_METRICS=on1", NULL}, {"ENABLE_GPU_METRICS=on1", "not a boolean", NULL}},
    {{SP, SYN, L8, "ENABLE_GPU_METRICS=true", "NEMOPERF_GPU_METRICS_MS=50", NULL},
     {"NEMOPERF_GPU_METRICS_MS=50", "allowed: 100 to 600000", NULL}},
    {{SP, SYN, "RECIPE=llama3.1", "MODEL_SIZE=15b", NULL}, {"MODEL_SIZE=15b", "recipe llama3.1 has no such model", "allowed: 8b, 70b, 405b", NULL}},
    {{SP, SYN, L8, "DTYPE=fp16", NULL}, {"DTYPE=fp16", "allowed: bf16, fp8", NULL}},
    {{SP, SYN, "RECIPE=llama3", L8, "DTYPE=bf16", NULL}, {"DTYPE=bf16", "fp8 only", "allowed: fp8", NULL}},
    {{SP, SYN, L8, "GPU_TYPE=a100", NULL}, {"GPU_TYPE=a100", "allowed: h100", NULL}},
    {{SP, SYN, "RECIPE=llama3", L8, "GPU_TYPE=mi300", NULL}, {"GPU_TYPE=mi300", "allowed: gb200, b200, h100", NULL}},
    {{SP, SYN, L8, "GPUS_PER_NODE=0", NULL}, {"GPUS_PER_NODE=0", "allowed: 1 to 1024", NULL}},
    {{SP, SYN, L8, "GPUS_PER_NODE=eight", NULL}, {"GPUS_PER_NODE=eight", NULL}},
    {{SP, SYN, L8, "GPUS_PER_NODE=3", NULL}, {"GPUS_PER_NODE=3: JOB_TOTAL_GPUS=8 is not a multiple", "divisor of 8", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=abc", NULL}, {"JOB_TOTAL_GPUS=abc", "positive integer", "allowed: 8, 16, 32, 64, 128", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=0", NULL}, {"JOB_TOTAL_GPUS=0", "positive integer", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=-8", NULL}, {"JOB_TOTAL_GPUS=-8", "positive integer", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=8,", NULL}, {"JOB_TOTAL_GPUS=8,", "trailing comma", NULL}},
    /* fewer GPUs than a node, not AutoModel's 1-GPU rows: the node rule names it, not "not published" */
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=4", NULL}, {"JOB_TOTAL_GPUS=4", "not a multiple of GPUS_PER_NODE=8", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=12", NULL}, {"JOB_TOTAL_GPUS=12", "not a multiple of GPUS_PER_NODE=8", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=24", NULL}, {"JOB_TOTAL_GPUS=24", "not published at 24 GPUs", "allowed: 8, 16, 32, 64, 128", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=8,16,256", NULL}, {"JOB_TOTAL_GPUS=8,16,256", "256", "allowed: 8, 16, 32, 64, 128", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=8,8", NULL}, {"JOB_TOTAL_GPUS=8,8", "listed twice", NULL}},
    {{SP, SYN, L8, "ENABLE_PROFILE=maybe", NULL}, {"ENABLE_PROFILE=maybe", "true, false, 1, 0, yes, no", NULL}},
    {{SP, SYN, L8, "ENABLE_NCCLTRACE=2", NULL}, {"ENABLE_NCCLTRACE=2", "not a boolean", NULL}},
    {{SP, SYN, L8, "ENABLE_CHECKPOINT=y", NULL}, {"ENABLE_CHECKPOINT=y", "not a boolean", NULL}},
    {{SP, SYN, L8, "ENABLE_PROFILE=true", "ENABLE_NCCLTRACE=1", NULL}, {"ENABLE_PROFILE=true", "ENABLE_NCCLTRACE=1", "at most one", NULL}},
    {{SP, SYN, L8, "ENABLE_PROFILE=1", "PROFILE_START_STEP=25", NULL}, {"PROFILE_START_STEP=25", "PROFILE_STOP_STEP=25", NULL}},
    {{SP, SYN, L8, "ENABLE_PROFILE=1", "PROFILE_START_STEP=9", "PROFILE_STOP_STEP=3", NULL},
     {"PROFILE_START_STEP=9: must be less than PROFILE_STOP_STEP=3; allowed: 0 to 2", NULL}},
    {{SP, SYN, L8, "PROFILE_STOP_STEP=x", NULL}, {"PROFILE_STOP_STEP=x", "allowed: 1 to", NULL}},
    {{SP, SYN, L8, "MAX_STEPS=0", NULL}, {"MAX_STEPS=0", "allowed: 1 to 10000000", NULL}},
    {{SP, SYN, L8, "MAX_STEPS=5x", NULL}, {"MAX_STEPS=5x", NULL}},
    {{SP, SYN, L8, "TIME_LIMIT=1h", NULL}, {"TIME_LIMIT=1h", "HH:MM:SS", NULL}},
    {{SP, SYN, L8, "TIME_LIMIT=00:61:00", NULL}, {"TIME_LIMIT=00:61:00", "D-HH:MM:SS", NULL}},
    {{SP, SYN, L8, "TIME_LIMIT=1-25:00:00", NULL}, {"TIME_LIMIT=1-25:00:00", NULL}},
    {{SP, SYN, L8, "TIME_LIMIT=00:00:00", NULL}, {"TIME_LIMIT=00:00:00", "not zero", NULL}},
    {{SP, SYN, L8, "ENABLE_CHECKPOINT=true", NULL}, {"ENABLE_CHECKPOINT=true", "16 to 128 GPUs", "JOB_TOTAL_GPUS=8", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=16,256", "ENABLE_CHECKPOINT=1", NULL}, {"JOB_TOTAL_GPUS=16,256", NULL}},
    {{SP, SYN, "RECIPE=llama3", L8, "DTYPE=fp8", "ENABLE_CHECKPOINT=yes", NULL}, {"ENABLE_CHECKPOINT=yes", "no checkpoint support", "llama3 8b", NULL}},
    {{SP, SYN, L8, "LOAD_CHECKPOINT_PATH=@outside", NULL}, {"LOAD_CHECKPOINT_PATH=/tmp/np-config-out-", "not under STAGE_PATH=", NULL}},
    {{SP, SYN, L8, "LOAD_CHECKPOINT_PATH=/nonexistent/ck", NULL}, {"LOAD_CHECKPOINT_PATH=/nonexistent/ck", "no such folder", NULL}},
    {{SP, SYN, L8, "LOAD_CHECKPOINT_PATH=relative/ck", NULL}, {"LOAD_CHECKPOINT_PATH=relative/ck", "no such folder", NULL}},
    {{SP, SYN, L8, "SBATCH_ACCOUNT=a b", NULL}, {"SBATCH_ACCOUNT=a b", "allowed:", NULL}},
    {{SP, SYN, L8, "SBATCH_PARTITION=p;rm", NULL}, {"SBATCH_PARTITION=p;rm", "allowed:", NULL}},
    {{SP, SYN, L8, "SBATCH_GPUS_PER_NODE=eight", NULL}, {"SBATCH_GPUS_PER_NODE=eight", "h100:8", NULL}},
    {{SP, SYN, L8, "GPUS_PER_NODE=16", "JOB_TOTAL_GPUS=24", NULL},
     {"JOB_TOTAL_GPUS=24: 24 GPUs is not a multiple of GPUS_PER_NODE=16; allowed: 8, 16, 32, 64, 128", NULL}},
    {{SP, SYN, L8, "GPUS_PER_NODE=16", "JOB_TOTAL_GPUS=8", NULL},
     {"GPUS_PER_NODE=16: JOB_TOTAL_GPUS=8 is not a multiple of it; allowed: a divisor of 8, e.g. the published row's "
      "8 (or unset)", NULL}},
    /* 1000000 GPUs is a count (then not published), 1000001 is not (above) */
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=1000000", NULL},
     {"JOB_TOTAL_GPUS=1000000: llama3.1 8b bf16 on h100 is not published at 1000000 GPUs", NULL}},
    /* a sweep of 65 scales is refused as such; 64 are read (then 24 is not published) */
    {{SP, SYN, L8,
      "JOB_TOTAL_GPUS=8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160,168,176,"
      "184,192,200,208,216,224,232,240,248,256,264,272,280,288,296,304,312,320,328,336,344,352,"
      "360,368,376,384,392,400,408,416,424,432,440,448,456,464,472,480,488,496,504,512,520",
      NULL},
     {": more than 64 scales", NULL}},
    {{SP, SYN, L8,
      "JOB_TOTAL_GPUS=8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160,168,176,"
      "184,192,200,208,216,224,232,240,248,256,264,272,280,288,296,304,312,320,328,336,344,352,"
      "360,368,376,384,392,400,408,416,424,432,440,448,456,464,472,480,488,496,504,512",
      NULL},
     {": llama3.1 8b bf16 on h100 is not published at 24 GPUs", NULL}},
    /* what the verdict paths below refuse, each by its own words (the suite never reached them before) */
    {{SP, L8, "TASK=train", NULL}, {"TASK=train: unknown task; allowed: pretrain, sft, lora", NULL}},
    {{SP, SYN, L8, "TASK=sft", NULL},
     {"TASK=sft with WORKLOAD=synthetic: the synthetic workload emulates pre-training only; allowed: TASK=pretrain, "
      "or WORKLOAD=nemo", NULL}},
    {{"STAGE_PATH=@/a%jb", SYN, L8, NULL}, {"/a%jb: contains '%', which Slurm reads as a file name pattern", NULL}},
    {{"STAGE_PATH=@/nvidia+nemo+25.02.01.sqsh", SYN, L8, NULL},
     {"nvidia+nemo+25.02.01.sqsh: is a file, not a folder; allowed: an existing folder", NULL}},
    {{"STAGE_PATH=@/nvidia+nemo+25.02.01.sqsh/sub", SYN, L8, NULL},
     {"sqsh/sub: cannot use it: Not a directory (a part of the path is a file, not a folder); allowed: an existing "
      "folder", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=8 16", NULL},
     {"JOB_TOTAL_GPUS=8 16: not a positive integer or a comma list of them; allowed: 8, 16, 32, 64, 128", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=8,,16", NULL}, {"JOB_TOTAL_GPUS=8,,16: not a positive integer", NULL}},
    {{SP, SYN, L8, "JOB_TOTAL_GPUS=1000001", NULL}, {"JOB_TOTAL_GPUS=1000001: not a positive integer", NULL}},
    {{SP, SYN, L8, "NEMOPERF_NUMA_BIND=Task", NULL},
     {"NEMOPERF_NUMA_BIND=Task: not a binding; allowed: nvidia (", "task (each task its own node), none", NULL}},
    {{SP, SYN, L8, "NEMOPERF_SRUN_MPI=pmix_abcdefghijklmnopqrstuvwxyz0", NULL}, /* 32 characters: one too many */
     {"NEMOPERF_SRUN_MPI=pmix_abcdefghijklmnopqrstuvwxyz0: too long", NULL}},
    {{SP, SYN, L8, "SBATCH_GPUS_PER_NODE=:8", NULL}, {"SBATCH_GPUS_PER_NODE=:8", NULL}},
    {{SP, SYN, L8, "SBATCH_GPUS_PER_NODE=h/100:8", NULL}, {"SBATCH_GPUS_PER_NODE=h/100:8", NULL}},
    {{SP, SYN, L8, "SBATCH_GPUS_PER_NODE=h100:0", NULL}, {"SBATCH_GPUS_PER_NODE=h100:0", NULL}},
    /* NeMo workload */
    {{SP, L8, "HF_TOKEN=t", "RUN_CONF_IMAGE=/nonexistent/x.sqsh", NULL}, {"RUN_CONF_IMAGE=/nonexistent/x.sqsh", "no such file", NULL}},
    {{SP, "MODEL_SIZE=70b", "JOB_TOTAL_GPUS=64", NULL}, {"tokenizer of llama3.1 70b (meta-llama/Meta-Llama-3-70B) is not staged", "run ./setup", "WORKLOAD=synthetic", NULL}},
    {{"STAGE_PATH=/tmp", "MODEL_SIZE=15b", "DTYPE=fp8", NULL}, {"RUN_CONF_IMAGE is not set", "/tmp/nvidia+nemo+25.02.01.sqsh", "run ./setup", NULL}},
    {{SP, "RECIPE=mixtral", "MODEL_SIZE=8x7b", "DTYPE=fp8", "HF_TOKEN=t", "RUN_CONF_IMAGE=/nonexistent.sqsh", NULL}, {"RUN_CONF_IMAGE=/nonexistent.sqsh", NULL}},
};

START_TEST(test_validation_failures)
{
    const struct bad_case *bc = &bad_cases[_i];
    struct np_launch_plan plan;
    struct np_error err;
    enum np_status st = resolve(bc->env, "/bin/true", &plan, &err);
    ck_assert_msg(st == NP_E_INVALID, "case %d: status %d, message: %s", _i, st, err.text);
    ck_assert_int_eq(np_exit_code(st), 2);
    for (int k = 0; k < 4 && bc->pieces[k]; k++)
        ck_assert_msg(strstr(err.text, bc->pieces[k]), "case %d: \"%s\" not in: %s", _i, bc->pieces[k], err.text);
    np_launch_plan_free(&plan);
}
END_TEST

static enum np_status resolve1(const char *const *env, struct np_launch_plan *plan, struct np_error *err)
{
    return resolve(env, "/bin/true", plan, err);
}

/* as resolve1, for --dry-run: what ./setup stages may be missing (listed, not refused) */
static enum np_status resolve_preview(const char *const *env, struct np_launch_plan *plan, struct np_error *err)
{
    preview_mode = 1;
    enum np_status st = resolve(env, "/bin/true", plan, err);
    preview_mode = 0;
    return st;
}

#define EXPECT_BAD(env_, ...)                                                                                         \
    do {                                                                                                              \
        const char *e_[] = {__VA_ARGS__, NULL};                                                                       \
        struct np_launch_plan p_;                                                                                     \
        struct np_error r_;                                                                                           \
        ck_assert_int_eq(resolve1(env_, &p_, &r_), NP_E_INVALID);                                                     \
        for (const char **q_ = e_; *q_; q_++)                                                                         \
            ck_assert_msg(strstr(r_.text, *q_), "\"%s\" not in: %s", *q_, r_.text);                                   \
        np_launch_plan_free(&p_);                                                                                     \
    } while (0)

/* A published row whose cells contradict each other but that carries NVIDIA's corrections (Mixtral 8x22B FP8 at
 * 256 GPUs: GBS and MBS printed swapped) launches with the corrected values, on every GPU it is published for; the
 * row keeps what was published. */
START_TEST(test_inconsistent_row_with_corrections)
{
    static const struct {
        const char *gpu;
        int gbs, ga;
    } c[] = {{"h100", 256, 128}, {"b200", 64, -1}, {"gb200", 64, -1}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char g[32];
        snprintf(g, sizeof g, "GPU_TYPE=%s", c[i].gpu);
        const char *e[] = {SP, SYN, "RECIPE=mixtral", "MODEL_SIZE=8x22b", "DTYPE=fp8", g, "JOB_TOTAL_GPUS=256", NULL};
        struct np_launch_plan plan;
        struct np_error err;
        ck_assert_msg(resolve1(e, &plan, &err) == NP_OK, "%s: %s", c[i].gpu, err.text);
        ck_assert_uint_eq(plan.n, 1);
        const struct np_launch_config *k = &plan.jobs[0];
        ck_assert_ptr_nonnull(k->row);
        ck_assert_ptr_nonnull(k->row->inconsistent);
        ck_assert_int_eq(k->gbs, c[i].gbs);
        ck_assert_int_eq(k->mbs, 1);
        if (c[i].ga > 0)
            ck_assert_int_eq(k->ga, c[i].ga);
        ck_assert_int_eq(k->row->gbs, 1); /* as published */
        np_launch_plan_free(&plan);
    }
}
END_TEST

START_TEST(test_special_paths)
{
    char p[700];
    /* a symlink inside STAGE_PATH that leads outside is outside */
    snprintf(p, sizeof p, "LOAD_CHECKPOINT_PATH=%s/escape", stage);
    const char *e1[] = {SP, SYN, L8, p, NULL};
    EXPECT_BAD(e1, "not under STAGE_PATH", "resolved:");
    /* a folder without weights/ *.distcp files */
    snprintf(p, sizeof p, "LOAD_CHECKPOINT_PATH=%s/empty", stage);
    const char *e2[] = {SP, SYN, L8, p, NULL};
    EXPECT_BAD(e2, "weights/*.distcp", "/empty");
    /* pyxis cannot mount a path with ',' */
    char sub[600];
    snprintf(sub, sizeof sub, "%s/a,b", stage);
    ck_assert(mkdir(sub, 0755) == 0);
    const char *e3[] = {"STAGE_PATH=@/a,b", "MODEL_SIZE=15b", NULL};
    EXPECT_BAD(e3, "STAGE_PATH=", "pyxis");
    /* no nemoperf-synth */
    struct np_launch_plan plan;
    struct np_error err;
    const char *e4[] = {SP, SYN, L8, NULL};
    ck_assert_int_eq(resolve(e4, NULL, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "nemoperf-synth was not found"), "%s", err.text);
    np_launch_plan_free(&plan);
    ck_assert_int_eq(resolve(e4, "/nonexistent/nemoperf-synth", &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "not an executable"), "%s", err.text);
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_free_space)
{
    struct np_launch_plan plan;
    struct np_error err;
    /* NeMo: 105 GB needed, 1 GB free: refused with both numbers */
    const char *e1[] = {SP, L8, "HF_TOKEN=t", "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1", NULL};
    fake_free = 1e9;
    ck_assert_int_eq(resolve1(e1, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "ENABLE_CHECKPOINT=1") && strstr(err.text, "1.0 GB (1000000000 bytes) free") &&
                      strstr(err.text, "105.0 GB (105000000000 bytes)") && strstr(err.text, "NEMOPERF_FORCE_CHECKPOINT"),
                  "%s", err.text);
    np_launch_plan_free(&plan);
    /* forced */
    const char *e2[] = {SP, L8, "HF_TOKEN=t", "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1",
                        "NEMOPERF_FORCE_CHECKPOINT=TRUE", NULL};
    ck_assert_int_eq(resolve1(e2, &plan, &err), NP_OK);
    ck_assert_int_eq(plan.jobs[0].checkpoint, 1);
    np_launch_plan_free(&plan);
    /* synthetic: its own small size fits in 1 GB, but not in 1000 bytes */
    const char *e3[] = {SP, SYN, L8, "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1", NULL};
    ck_assert_int_eq(resolve1(e3, &plan, &err), NP_OK);
    ck_assert(plan.jobs[0].checkpoint_bytes < 1e7);
    np_launch_plan_free(&plan);
    fake_free = 1000;
    ck_assert_int_eq(resolve1(e3, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "(1000 bytes) free") && strstr(err.text, "(synthetic)"), "%s", err.text);
    np_launch_plan_free(&plan);
    fake_free = 1e15;
}
END_TEST

/* ---- accepted configurations ---- */

START_TEST(test_defaults_and_inference)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e[] = {"STAGE_PATH=@//", L8, "HF_TOKEN=secret", "DTYPE=BF16", NULL};
    ck_assert_msg(resolve1(e, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(c->recipe->name, "llama3.1");
    ck_assert_int_eq(c->dtype, NP_DTYPE_BF16);
    ck_assert_int_eq(c->gpus, 8);
    ck_assert_int_eq(c->nodes, 1);
    ck_assert_int_eq(c->max_steps, 50);
    ck_assert_str_eq(c->time_limit, "00:30:00");
    ck_assert_str_eq(c->gpu_type, "h100");
    ck_assert_int_eq(c->workload, NP_WORKLOAD_NEMO);
    ck_assert_str_eq(c->stage_path, stage);
    ck_assert_str_eq(c->experiment, "pretrain_llama3.1_8b_bf16_8");
    ck_assert_str_eq(c->job_name, "pretrain_llama3.1_8b_bf16_8");
    char want[800];
    snprintf(want, sizeof want,
             "%s/experiments/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1700000000/pretrain_llama3.1_8b_bf16_8",
             stage);
    ck_assert_str_eq(c->experiment_dir, want);
    snprintf(want, sizeof want, "%s/nvidia+nemo+25.02.01.sqsh", stage);
    ck_assert_str_eq(c->image, want);
    ck_assert_int_eq(c->hf_token, 1);
    np_launch_plan_free(&plan);

    /* nemotron4 is inferred from 15b, defaults x16 for fp8; no HF token needed */
    const char *e2[] = {SP, "MODEL_SIZE=15B", "DTYPE=fp8", "GPU_TYPE=H100", NULL};
    ck_assert_msg(resolve1(e2, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].experiment, "pretrain_nemotron4_15b_fp8_16");
    ck_assert_int_eq(plan.jobs[0].nodes, 2);
    ck_assert_int_eq(plan.jobs[0].hf_token, 0);
    np_launch_plan_free(&plan);

    /* issue 24: the headline command of the seeds, JOB_TOTAL_GPUS unset where the recipe names no default:
     * the smallest published scale (llama3.1 70b fp8 on H100: 64) */
    const char *e3[] = {SP, SYN, "MODEL_SIZE=70b", "DTYPE=fp8", NULL};
    ck_assert_msg(resolve1(e3, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.jobs[0].gpus, 64);
    ck_assert_str_eq(plan.jobs[0].experiment, "pretrain_llama3.1_70b_fp8_64");
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_booleans_and_time)
{
    static const char *const yes[] = {"true", "TRUE", "True", "1", "yes", "YES", "Yes"};
    static const char *const no[] = {"false", "FALSE", "0", "no", "No"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        int v = 0;
        ck_assert_int_eq(np_parse_bool(yes[i], &v), 0);
        ck_assert_int_eq(v, 1);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        int v = 1;
        ck_assert_int_eq(np_parse_bool(no[i], &v), 0);
        ck_assert_int_eq(v, 0);
    }
    int v;
    ck_assert_int_eq(np_parse_bool("on", &v), -1);
    ck_assert_int_eq(np_parse_bool("", &v), -1);
    static const char *const good[] = {"00:30:00", "30:00", "30", "1-00:00:00", "2-12", "2-12:30", "100:00:00", "0:1",
                                       "12345678", "1491308-02:06:00", "2147483646", "1234567890"};
    /* beyond 2147483646 minutes Slurm's int minutes wrap (issue 13): refused */
    static const char *const bad[] = {"", "1h", "00:60:00", "00:00:60", "1-24:00:00", "0", "00:00:00", ":30", "1:2:3:4",
                                      "1--2", "-1", "30:", "2147483647", "1491308-02:07:00", "9999999-00:00:00",
                                      "35791395:00:00", "9999999999", "12345678901"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(np_time_limit_valid(good[i]), "%s should be valid", good[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!np_time_limit_valid(bad[i]), "%s should be invalid", bad[i]);
}
END_TEST

START_TEST(test_profile_nccl_load_sweep)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e1[] = {SP, SYN, L8, "ENABLE_PROFILE=Yes", "PROFILE_START_STEP=2", "PROFILE_STOP_STEP=6",
                        "MAX_STEPS=100", NULL};
    ck_assert_msg(resolve1(e1, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].max_steps, 6);
    ck_assert_int_eq(plan.jobs[0].profile, 1);
    ck_assert_str_eq(plan.jobs[0].job_name, "pretrain_llama3.1_8b_bf16_8_nsys");
    ck_assert_ptr_nonnull(strstr(plan.jobs[0].experiment_dir, "_1700000000/pretrain_llama3.1_8b_bf16_8_nsys"));

    /* issue 24: the performance run beside it, as NVIDIA's Llama 3.1 launcher (MAX_STEPS given: kept) */
    ck_assert_uint_eq(plan.n, 2);
    ck_assert_int_eq(plan.jobs[1].profile, 0);
    ck_assert_int_eq(plan.jobs[1].max_steps, 100);
    ck_assert_str_eq(plan.jobs[1].job_name, "pretrain_llama3.1_8b_bf16_8");
    np_launch_plan_free(&plan);
    const char *e1b[] = {SP, SYN, L8, "ENABLE_PROFILE=1", "PROFILE_START_STEP=2", "PROFILE_STOP_STEP=6", NULL};
    ck_assert_msg(resolve1(e1b, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 2);
    ck_assert_int_eq(plan.jobs[1].max_steps, 50); /* not NVIDIA's PROFILE_STOP_STEP: a window of 11-44 of 50 */
    np_launch_plan_free(&plan);
    const char *e1c[] = {SP, SYN, L8, "ENABLE_PROFILE=1", "DISABLE_PERFRUN=true", NULL};
    ck_assert_msg(resolve1(e1c, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.jobs[0].profile, 1);
    np_launch_plan_free(&plan);
    const char *e1d[] = {SP, SYN, L8, "JOB_TOTAL_GPUS=8,16", "ENABLE_NCCLTRACE=1", NULL};
    ck_assert_msg(resolve1(e1d, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 4);
    ck_assert_str_eq(plan.jobs[1].job_name, "pretrain_llama3.1_8b_bf16_16_nccltrace");
    ck_assert_str_eq(plan.jobs[2].job_name, "pretrain_llama3.1_8b_bf16_8");
    ck_assert_str_eq(plan.jobs[3].job_name, "pretrain_llama3.1_8b_bf16_16");
    ck_assert_int_eq(plan.jobs[3].max_steps, 50);
    ck_assert_str_eq(plan.jobs[3].time_limit, "00:30:00");
    ck_assert_int_eq(plan.jobs[3].nccltrace, 0);
    np_launch_plan_free(&plan);

    const char *e2[] = {SP, SYN, L8, "ENABLE_NCCLTRACE=true", NULL};
    ck_assert_msg(resolve1(e2, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].max_steps, 5);
    ck_assert_str_eq(plan.jobs[0].time_limit, "00:15:00");
    ck_assert_str_eq(plan.jobs[0].job_name, "pretrain_llama3.1_8b_bf16_8_nccltrace");
    np_launch_plan_free(&plan);
    const char *e3[] = {SP, SYN, L8, "ENABLE_NCCLTRACE=1", "TIME_LIMIT=01:00:00", NULL};
    ck_assert_msg(resolve1(e3, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].time_limit, "01:00:00");
    np_launch_plan_free(&plan);

    char lp[700], want[700];
    snprintf(lp, sizeof lp, "LOAD_CHECKPOINT_PATH=%s/./ck/", stage);
    snprintf(want, sizeof want, "%s/ck", stage);
    char real[4096];
    ck_assert(realpath(want, real));
    const char *e4[] = {SP, SYN, L8, "JOB_TOTAL_GPUS=16", lp, "MAX_STEPS=10", NULL};
    ck_assert_msg(resolve1(e4, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].max_steps, 1);
    ck_assert_str_eq(plan.jobs[0].load_checkpoint, real);
    np_launch_plan_free(&plan);

    const char *e5[] = {SP, SYN, L8, "JOB_TOTAL_GPUS= 8, 16,32", "MAX_STEPS=7", NULL};
    ck_assert_msg(resolve1(e5, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 3);
    ck_assert_int_eq(plan.jobs[0].gpus, 8);
    ck_assert_int_eq(plan.jobs[1].gpus, 16);
    ck_assert_int_eq(plan.jobs[2].gpus, 32);
    ck_assert_int_eq(plan.jobs[2].nodes, 4);
    ck_assert_int_eq(plan.jobs[2].max_steps, 7);
    ck_assert_str_eq(plan.jobs[2].experiment, "pretrain_llama3.1_8b_bf16_32");
    ck_assert_str_eq(plan.jobs[2].synth_path, "/bin/true");
    np_launch_plan_free(&plan);

    /* GPUS_PER_NODE=4 doubles the nodes; SBATCH_* values are kept for the script */
    const char *e6[] = {SP, SYN, L8, "GPUS_PER_NODE=4", "SBATCH_ACCOUNT=acct-1", "SBATCH_PARTITION=batch,gpu",
                        "SBATCH_GPUS_PER_NODE=h100:4", NULL};
    ck_assert_msg(resolve1(e6, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].nodes, 2);
    ck_assert_str_eq(plan.jobs[0].account, "acct-1");
    ck_assert_str_eq(plan.jobs[0].partition, "batch,gpu");
    ck_assert_str_eq(plan.jobs[0].gres_gpus, "h100:4");
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_config_json)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e[] = {SP, SYN, "MODEL_SIZE=70b", "DTYPE=fp8", "JOB_TOTAL_GPUS=64", NULL};
    ck_assert_msg(resolve1(e, &plan, &err) == NP_OK, "%s", err.text);
    json_t *o = np_launch_config_json(&plan.jobs[0]);
    ck_assert_ptr_nonnull(o);
    static const char *const keys[] = {"recipe", "model_size", "dtype", "gpu_type", "gpus", "gpus_per_node", "nodes",
                                       "tp", "pp", "cp", "ep", "dp", "vp", "mbs", "gbs", "ga", "layers", "seq_len",
                                       "max_steps", "time_limit", "experiment", "experiment_dir", "profile",
                                       "nccltrace", "checkpoint", "workload", "system", NULL};
    for (const char *const *k = keys; *k; k++)
        ck_assert_msg(json_object_get(o, *k) != NULL, "key %s missing", *k);
    ck_assert(json_is_null(json_object_get(o, "ep")));
    ck_assert_int_eq(json_integer_value(json_object_get(o, "vp")), 5);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "pp")), 8);
    ck_assert_str_eq(json_string_value(json_object_get(o, "workload")), "synthetic");
    ck_assert(json_is_null(json_object_get(o, "system"))); /* seed 003 rows name no system */
    ck_assert(json_is_false(json_object_get(o, "profile")));
    json_decref(o);
    np_launch_plan_free(&plan);
}
END_TEST

/* ---- seeds 003/004: every parallel-config row, restated from the seeds' rules ---- */

struct seed_rule {
    const char *recipe, *size;
    unsigned dtypes;
    int scales[8];
    int tp, pp, cp, vp, mbs, layers, seq;
    int gbs_num, gbs_den; /* GBS = gpus * num / den */
};

static const struct seed_rule seed_rules[] = {
    {"llama3.1", "8b", 3, {8, 16, 32, 64, 128}, 1, 1, 2, 0, 1, 32, 8192, 16, 1},
    {"llama3.1", "70b", 1, {64, 128, 256, 512, 1024, 2048}, 4, 4, 2, 5, 1, 80, 8192, 2, 1},
    {"llama3.1", "70b", 2, {64, 128, 256, 512, 1024, 2048}, 4, 8, 1, 5, 1, 80, 8192, 2, 1},
    {"llama3.1", "405b", 3, {512, 1024, 2048}, 8, 8, 2, 8, 1, 126, 8192, 1, 2},
    {"nemotron4", "15b", 3, {16, 32, 64, 128, 256, 512, 1024, 2048}, 2, 1, 1, 0, 2, 32, 4096, 4, 1},
    /* seed 004's table prints VP "NA" for 340b; the original launch.sh ran -vp 12 (a correction in
     * the data: the launch runs 12, the row keeps the published NA) */
    {"nemotron4", "340b", 3, {256, 512, 1024, 2048}, 8, 8, 1, 12, 1, 96, 4096, 1, 4},
};

/* 405b proxies (seed 003): gpus, layers, pp, vp, gbs */
static const int proxy405[3][5] = {{32, 8, 1, 0, 64}, {64, 30, 4, 8, 64}, {128, 62, 4, 8, 128}};

static void check_row(const char *recipe, const char *size, enum np_dtype dt, int gpus, int tp, int pp, int cp,
                      int vp, int mbs, int gbs, int layers, int seq)
{
    char r[64], s[64], d[64], g[64];
    snprintf(r, sizeof r, "RECIPE=%s", recipe);
    snprintf(s, sizeof s, "MODEL_SIZE=%s", size);
    snprintf(d, sizeof d, "DTYPE=%s", np_dtype_name(dt, 0));
    snprintf(g, sizeof g, "JOB_TOTAL_GPUS=%d", gpus);
    const char *e[] = {SP, SYN, r, s, d, g, NULL};
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_msg(resolve1(e, &plan, &err) == NP_OK, "%s %s %s x%d: %s", recipe, size, d, gpus, err.text);
    const struct np_launch_config *c = &plan.jobs[0];
    int dp = gpus / (tp * pp * cp), ga = gbs / (mbs * dp);
    ck_assert_msg(c->tp == tp && c->pp == pp && c->cp == cp && c->vp == vp && c->dp == dp && c->mbs == mbs &&
                      c->gbs == gbs && c->ga == ga && c->layers == layers && c->seq_len == seq &&
                      c->nodes == gpus / 8 && c->ep == 0,
                  "%s %s %s x%d: got TP%d PP%d CP%d VP%d DP%d MBS%d GBS%d GA%d L%d S%d N%d, want TP%d PP%d CP%d VP%d "
                  "DP%d MBS%d GBS%d GA%d L%d S%d N%d",
                  recipe, size, d, gpus, c->tp, c->pp, c->cp, c->vp, c->dp, c->mbs, c->gbs, c->ga, c->layers,
                  c->seq_len, c->nodes, tp, pp, cp, vp, dp, mbs, gbs, ga, layers, seq, gpus / 8);
    /* the --dry-run script asks for the right node count */
    char *script = NULL;
    ck_assert_int_eq(np_script_render(c, &script, &err), NP_OK);
    char want[64];
    snprintf(want, sizeof want, "\n#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=8\n", gpus / 8);
    ck_assert_msg(strstr(script, want), "%s %s x%d: no '%s' in script", recipe, size, gpus, want + 1);
    free(script);
    np_launch_plan_free(&plan);
}

START_TEST(test_seed_rows)
{
    int n = 0;
    for (size_t i = 0; i < sizeof seed_rules / sizeof *seed_rules; i++) {
        const struct seed_rule *sr = &seed_rules[i];
        for (int dt = NP_DTYPE_BF16; dt <= NP_DTYPE_FP8; dt <<= 1) {
            if (!(sr->dtypes & (unsigned)dt))
                continue;
            for (int k = 0; k < 8 && sr->scales[k]; k++, n++) {
                int g = sr->scales[k];
                check_row(sr->recipe, sr->size, (enum np_dtype)dt, g, sr->tp, sr->pp, sr->cp, sr->vp, sr->mbs,
                          g * sr->gbs_num / sr->gbs_den, sr->layers, sr->seq);
            }
        }
    }
    for (int dt = NP_DTYPE_BF16; dt <= NP_DTYPE_FP8; dt <<= 1)
        for (int k = 0; k < 3; k++, n++)
            check_row("llama3.1", "405b", (enum np_dtype)dt, proxy405[k][0], 8, proxy405[k][2], 2, proxy405[k][3], 1,
                      proxy405[k][4], proxy405[k][1], 8192);
    /* and nothing else is published for these two recipes */
    int rows = 0;
    for (size_t r = 0; r < set.n; r++) {
        const struct np_recipe *rp = &set.recipes[r];
        if (strcmp(rp->name, "llama3.1") && strcmp(rp->name, "nemotron4"))
            continue;
        for (size_t m = 0; m < rp->nmodels; m++)
            for (size_t i = 0; i < rp->models[m].nrows; i++)
                rows += __builtin_popcount(rp->models[m].rows[i].dtypes);
    }
    ck_assert_int_eq(rows, n);
}
END_TEST

START_TEST(test_list_text)
{
    char *t = np_launch_list_text(&set);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, "RECIPE"));
    /* corrections shown with the published and the corrected value */
    ck_assert_ptr_nonnull(strstr(t, "corrected: mbs 64->1, gbs 1->64 ("));
    ck_assert_ptr_nonnull(strstr(t, "corrected: vp NA->12 ("));
    /* aligned columns, with the system and NVIDIA's GPUs per node */
    ck_assert_ptr_nonnull(strstr(t, "RECIPE     SIZE   TASK      DTYPE  GPUS  GPU    SYSTEM     GPN  TP"));
    ck_assert_ptr_nonnull(strstr(t, "\nllama3.1   8b     pretrain  bf16   8     h100   -          8    1 "));
    ck_assert_ptr_nonnull(strstr(t, "\nllama3     8b     pretrain  fp8    8     gb200  DGX-GB200  4    1 "));
    /* seed 000's fine-tuning rows: the task, and the pack length leading the note */
    ck_assert_ptr_nonnull(strstr(t, "\nllama3     8b     lora      fp8    8     gb200  DGX-GB200  4    1 "));
    ck_assert_ptr_nonnull(strstr(t, "  packed 16384\n"));
    ck_assert_ptr_nonnull(strstr(t, "packed 4096; corrected: seq_len 4096->2048, gbs 32->64, ga 16->32 ("));
    int lines = 0;
    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    ck_assert_int_gt(lines, 80);
    free(t);
}
END_TEST

/* --list --format json: an array of objects keyed by the lower-case column names, numbers as numbers, NA as
 * null; the same rows as the text table (its pre-training and fine-tuning rows) plus the AutoModel ones. */
START_TEST(test_list_json)
{
    char *t = np_launch_list(&set, NULL, 1);
    ck_assert_ptr_nonnull(t);
    json_error_t je;
    json_t *a = json_loads(t, 0, &je);
    ck_assert_msg(json_is_array(a), "%s: %.200s", je.text, t);
    ck_assert_uint_gt(json_array_size(a), 80);
    int seen = 0;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        ck_assert(json_is_object(o));
        ck_assert_uint_eq(json_object_size(o), 19);
        const char *r = json_string_value(json_object_get(o, "recipe"));
        const char *sz = json_string_value(json_object_get(o, "size"));
        const char *g = json_string_value(json_object_get(o, "gpu"));
        const char *dt = json_string_value(json_object_get(o, "dtype"));
        ck_assert(r && sz && g && dt);
        if (strcmp(r, "llama3.1") == 0 && strcmp(sz, "8b") == 0 && strcmp(g, "h100") == 0 && strcmp(dt, "bf16") == 0 &&
            json_integer_value(json_object_get(o, "gpus")) == 8) {
            ck_assert_str_eq(json_string_value(json_object_get(o, "task")), "pretrain");
            ck_assert_int_eq(json_integer_value(json_object_get(o, "tp")), 1);
            ck_assert_int_eq(json_integer_value(json_object_get(o, "gbs")), 128);
            ck_assert(json_is_null(json_object_get(o, "ep")));     /* NA */
            ck_assert(json_is_null(json_object_get(o, "system"))); /* "-" */
            seen++;
        }
    }
    ck_assert_int_eq(seen, 1);
    /* every count a number (NA a null), whatever its digits (a 9 in it too), never a string */
    static const char *const counts[] = {"gpus", "gpn", "tp", "pp", "cp", "dp", "mbs", "gbs", "ga", "layers", NULL};
    int nines = 0;
    json_array_foreach(a, i, o) {
        for (size_t k = 0; counts[k]; k++) {
            json_t *v = json_object_get(o, counts[k]);
            ck_assert_msg(json_is_integer(v), "row %zu: %s is not a number", i, counts[k]);
            char d[32];
            snprintf(d, sizeof d, "%lld", (long long)json_integer_value(v));
            nines += strchr(d, '9') != NULL;
        }
        ck_assert(json_is_integer(json_object_get(o, "ep")) || json_is_null(json_object_get(o, "ep")));
    }
    ck_assert_int_gt(nines, 0);
    json_decref(a);
    free(t);
}
END_TEST

/* A Megatron-Bridge row reads its Hugging Face files offline (HF_HUB_OFFLINE=1): a preview lists the one not
 * staged (here: nothing under STAGE_PATH/mbridge/hf), naming it and the ./setup that stages it. */
START_TEST(test_mbridge_hf_not_staged)
{
    const char *e[] = {NULL, "RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb300", "JOB_TOTAL_GPUS=256",
                       "CONTAINER=26.08", NULL};
    char sp[600];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", stage);
    e[0] = sp;
    struct np_launch_opts o = {.now = 1700000000, .free_space = fake_free_space, .preview = 1};
    struct np_launch_plan plan;
    struct np_error err;
    memset(&err, 0, sizeof err);
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)e, &o, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    int hf = 0;
    for (char **m = plan.jobs[0].missing; m && *m; m++)
        hf |= strstr(*m, "Hugging Face file deepseek-ai/DeepSeek-V3@main: config.json") != NULL &&
              strstr(*m, "(run RECIPE=deepseek_v3 CONTAINER=26.08 ") != NULL;
    ck_assert_msg(hf, "no Hugging Face file among what is not staged");
    np_launch_plan_free(&plan);
}
END_TEST

/* Out of memory at every allocation of a launch's resolution in turn (the stand-in above): each either succeeds
 * or fails with a message that says so, never a failure without one, never a crash. */
START_TEST(test_resolve_out_of_memory)
{
#if ALLOC_FAULTS
    char sp[600];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", stage);
    const char *e[] = {sp, SYN, L8, "DTYPE=bf16", "JOB_TOTAL_GPUS=8,16", "ENABLE_PROFILE=1", NULL};
    struct np_launch_opts o = {.now = 1700000000, .synth_path = "/bin/true", .free_space = fake_free_space};
    long total = -1;
    for (long k = 0; k < 100000 && total < 0; k++) {
        struct np_launch_plan plan;
        struct np_error err;
        memset(&err, 0, sizeof err);
        alloc_count = 0;
        alloc_fail_at = k; /* armed around the resolution only: Check's own bookkeeping allocates too */
        enum np_status st = np_launch_resolve(&set, np_env_list, (void *)e, &o, &plan, &err);
        long used = alloc_count;
        alloc_fail_at = -1;
        if (st == NP_OK && used <= k)
            total = k; /* the k-th allocation was never made: every one has failed once */
        else if (st != NP_OK)
            ck_assert_msg(err.text[0] != '\0', "allocation %ld failed: status %d without a message", k, (int)st);
        if (st == NP_E_NOMEM)
            ck_assert_msg(strstr(err.text, "out of memory") != NULL, "allocation %ld: \"%s\"", k, err.text);
        np_launch_plan_free(&plan);
    }
    ck_assert_msg(total > 0, "the resolution never ran without a failure");
#endif
}
END_TEST

START_TEST(test_templates)
{
    struct np_error err;
    for (size_t r = 0; r < set.n; r++)
        ck_assert_msg(!set.recipes[r].command ||
                          np_script_check_template(set.recipes[r].command, set.recipes[r].path, &err) == NP_OK,
                      "%s", err.text);
    char *bad1[] = {(char *)"x", (char *)"--tp={tpp}", NULL};
    ck_assert_int_eq(np_script_check_template(bad1, "t.json", &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "command[1]: unknown placeholder {tpp}"), "%s", err.text);
    char *bad2[] = {(char *)"a{driver_args}", NULL};
    ck_assert_int_eq(np_script_check_template(bad2, "t.json", &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "whole element"), "%s", err.text);
    char *bad3[] = {(char *)"{tp", NULL};
    ck_assert_int_eq(np_script_check_template(bad3, "t.json", &err), NP_E_INVALID);
    char *bad4[] = {(char *)"tp}", NULL};
    ck_assert_int_eq(np_script_check_template(bad4, "t.json", &err), NP_E_INVALID);
    char *good[] = {(char *)"{{literal}}", (char *)"{driver_args}", (char *)"x={tp}/{vp}", (char *)"{driver}", NULL};
    ck_assert_int_eq(np_script_check_template(good, "t.json", &err), NP_OK);
}
END_TEST

/* What the job is told when a value is accepted: NUMA binding (nvidia unless set; task; none), srun's MPI plugin
 * (NVIDIA's pmix unless set; none: no --mpi), the snapshot (on unless SNAPSHOT says no), the GPU metrics
 * interval, the nodes of a scale (GPUS_PER_NODE=4: 16 GPUs on 4 nodes), JOB_TOTAL_GPUS with spaces around its
 * commas, and every scale of a sweep its own job in the order given */
START_TEST(test_job_policies)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e1[] = {SP, SYN, L8, NULL};
    ck_assert_msg(resolve1(e1, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].numa_bind, NP_NUMA_NVIDIA);
    ck_assert_str_eq(plan.jobs[0].srun_mpi, "pmix");
    ck_assert_int_eq(plan.jobs[0].snapshot, 1);
    ck_assert_int_eq(plan.jobs[0].gpu_metrics, 0);
    np_launch_plan_free(&plan);
    const char *e2[] = {SP, SYN, L8, "NEMOPERF_NUMA_BIND=task", "NEMOPERF_SRUN_MPI=none", "SNAPSHOT=no",
                        "ENABLE_GPU_METRICS=1", "NEMOPERF_GPU_METRICS_MS=100", NULL};
    ck_assert_msg(resolve1(e2, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].numa_bind, NP_NUMA_TASK);
    ck_assert_str_eq(plan.jobs[0].srun_mpi, "");
    ck_assert_int_eq(plan.jobs[0].snapshot, 0);
    ck_assert_int_eq(plan.jobs[0].gpu_metrics, 1);
    ck_assert_int_eq(plan.jobs[0].gpu_metrics_ms, 100);
    np_launch_plan_free(&plan);
    const char *e3[] = {SP, SYN, L8, "NEMOPERF_NUMA_BIND=none", "NEMOPERF_SRUN_MPI=pmi2", "SNAPSHOT=true",
                        "NEMOPERF_GPU_METRICS_MS=600000", NULL};
    ck_assert_msg(resolve1(e3, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].numa_bind, NP_NUMA_NONE);
    ck_assert_str_eq(plan.jobs[0].srun_mpi, "pmi2");
    ck_assert_int_eq(plan.jobs[0].snapshot, 1);
    ck_assert_int_eq(plan.jobs[0].gpu_metrics_ms, 600000);
    np_launch_plan_free(&plan);
    const char *e3b[] = {SP, SYN, L8, "NEMOPERF_SRUN_MPI=pmix_abcdefghijklmnopqrstuvwxyz", NULL}; /* 31: the most */
    ck_assert_msg(resolve1(e3b, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].srun_mpi, "pmix_abcdefghijklmnopqrstuvwxyz");
    np_launch_plan_free(&plan);
    /* 4 GPUs a node: 16 GPUs are 4 nodes, 8 are 2 */
    const char *e4[] = {SP, SYN, L8, "GPUS_PER_NODE=4", "JOB_TOTAL_GPUS= 16 , 8", NULL};
    ck_assert_msg(resolve1(e4, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 2);
    ck_assert_int_eq(plan.jobs[0].gpus, 16);
    ck_assert_int_eq(plan.jobs[0].gpus_per_node, 4);
    ck_assert_int_eq(plan.jobs[0].nodes, 4);
    ck_assert_int_eq(plan.jobs[1].gpus, 8);
    ck_assert_int_eq(plan.jobs[1].nodes, 2);
    ck_assert_str_eq(plan.jobs[1].experiment, "pretrain_llama3.1_8b_bf16_8");
    np_launch_plan_free(&plan);
    /* the scheduler's GPU request: a count, or a type and a count */
    const char *e5[] = {SP, SYN, L8, "SBATCH_GPUS_PER_NODE=h100_x-1.a:8", NULL};
    ck_assert_msg(resolve1(e5, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].gres_gpus, "h100_x-1.a:8");
    np_launch_plan_free(&plan);
    const char *e6[] = {SP, SYN, L8, "SBATCH_GPUS_PER_NODE=8", NULL};
    ck_assert_msg(resolve1(e6, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].gres_gpus, "8");
    np_launch_plan_free(&plan);
}
END_TEST

/* A fine-tuning row in preview (--dry-run: what ./setup stages may be missing, listed): TASK=sft runs the one
 * published fine-tuning scale of the system when JOB_TOTAL_GPUS is unset, named finetune_<recipe>_<size>_<task>_
 * <dtype>_<gpus>; a TASK on a model without such rows is refused naming the task and what is allowed */
START_TEST(test_finetune_preview)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e1[] = {SP, "RECIPE=llama3", L8, "DTYPE=fp8", "TASK=sft", "HF_TOKEN=t", NULL};
    ck_assert_msg(resolve_preview(e1, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.jobs[0].task, NP_TASK_SFT);
    ck_assert_int_eq(plan.jobs[0].gpus, 8);
    ck_assert_int_eq(plan.jobs[0].nodes, 1);
    ck_assert_str_eq(plan.jobs[0].experiment, "finetune_llama3_8b_sft_fp8_8");
    ck_assert_str_eq(plan.jobs[0].job_name, "finetune_llama3_8b_sft_fp8_8");
    ck_assert_int_eq(plan.jobs[0].layers, 32); /* Llama 3 8B: 32 layers */
    char **m = plan.jobs[0].missing; /* what TASK=sft ./setup stages: listed, one each */
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(m[0] && strstr(m[0], "container image") && m[1] && strstr(m[1], "NeMo checkpoint") && m[2] &&
                      strstr(m[2], "SQuAD packed to 4096 tokens") && !m[3],
                  "%s / %s / %s", m[0], m[0] ? m[1] : "", m[0] && m[1] ? m[2] : "");
    np_launch_plan_free(&plan);
    /* GB200's row names no layer count: the model's 32 */
    const char *e1g[] = {SP, "RECIPE=llama3", L8, "DTYPE=fp8", "TASK=sft", "GPU_TYPE=gb200", NULL};
    ck_assert_msg(resolve_preview(e1g, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].layers, 32);
    np_launch_plan_free(&plan);
    /* the packed data needs both its .npy and its metadata: one without the other is still missing */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "d='%s/datasets/squad/packed/meta-llama--Meta-Llama-3-8B' && mkdir -p \"$d\" && "
             ": > \"$d/training_4096.npy\"", stage);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(resolve_preview(e1, &plan, &err) == NP_OK, "%s", err.text);
    m = plan.jobs[0].missing;
    ck_assert_msg(m && m[2] && strstr(m[2], "SQuAD packed to 4096 tokens"), "npy alone taken for the packed data");
    np_launch_plan_free(&plan);
    snprintf(cmd, sizeof cmd, ": > '%s/datasets/squad/packed/meta-llama--Meta-Llama-3-8B/4096_metadata.jsonl'", stage);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(resolve_preview(e1, &plan, &err) == NP_OK, "%s", err.text);
    m = plan.jobs[0].missing;
    ck_assert_msg(m && m[1] && !m[2], "the packed data still listed: %s", m && m[1] && m[2] ? m[2] : "");
    np_launch_plan_free(&plan);
    const char *e2[] = {SP, "RECIPE=nemotron4", "MODEL_SIZE=15b", "DTYPE=fp8", "TASK=lora", NULL};
    ck_assert_int_eq(resolve_preview(e2, &plan, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "TASK=lora: nemotron4 15b has no published lora rows; allowed: pretrain; or "
                               "RECIPE=llama3 MODEL_SIZE=8b; or RECIPE=llama3 MODEL_SIZE=70b; or RECIPE=llama3 "
                               "MODEL_SIZE=405b");
    np_launch_plan_free(&plan);
}
END_TEST

/* RECIPE=nccl-tests (the fabric check), validated apart from the model recipes: no model variable, the container's
 * binaries only (no synthetic stand-in), pre-training only; the system by GPU type (its GPUs per node unless
 * GPUS_PER_NODE says otherwise), the check and the pairs by word in any case (pairs only for bisect), the
 * collectives a comma list each once, the binaries' folder absolute (trailing '/' dropped), the scale whole nodes,
 * at most 1024 of them, at least 2 for bisect, which needs a scale; and the fabric check's variables refused for
 * every other recipe */
static enum np_status resolve_ncclt(const char *const *extra, struct np_launch_plan *plan, struct np_error *err)
{
    const char *e[24] = {SP, "RECIPE=nccl-tests", "DTYPE=-"};
    size_t n = 3;
    for (size_t k = 0; extra[k]; k++) {
        ck_assert(n < 23);
        e[n++] = extra[k];
    }
    e[n] = NULL;
    return resolve1(e, plan, err);
}

START_TEST(test_ncclt_validation)
{
    char img[700];
    snprintf(img, sizeof img, "%s/nvidia+nemo+26.04.01.sqsh", stage);
    write_file(img, "sqsh");
    struct np_launch_plan plan;
    struct np_error err;
    static const struct {
        const char *env[4];
        const char *want;
    } bad[] = {
        {{"MODEL_SIZE=8b", NULL}, "MODEL_SIZE=8b: RECIPE=nccl-tests runs NVIDIA's nccl-tests binaries, no model; "
                                  "allowed: unset"},
        {{"GBS=64", NULL}, "GBS=64: RECIPE=nccl-tests runs NVIDIA's nccl-tests binaries, no model; allowed: unset"},
        {{"WORKLOAD=synthetic", NULL}, "WORKLOAD=synthetic with RECIPE=nccl-tests: the fabric check runs the "
                                       "container's nccl-tests binaries, which have no synthetic stand-in; allowed: "
                                       "WORKLOAD=nemo (or unset)"},
        {{"TASK=lora", NULL}, "TASK=lora with RECIPE=nccl-tests: allowed: unset"},
        {{"GPU_TYPE=a100", NULL}, "GPU_TYPE=a100: NVIDIA's nccl-tests recipe has no such system; allowed: h100, "
                                  "b200, b300, gb200, gb300"},
        {{"FABRIC_CHECK=half", NULL}, "FABRIC_CHECK=half: unknown; allowed: full, bisect"},
        {{"FABRIC_CHECK=bisect", "FABRIC_PAIRS=star", "JOB_TOTAL_GPUS=16", NULL},
         "FABRIC_PAIRS=star: unknown; allowed: ring, all"},
        {{"FABRIC_PAIRS=all", NULL}, "FABRIC_PAIRS=all: only FABRIC_CHECK=bisect tests node pairs; allowed: unset, "
                                     "or FABRIC_CHECK=bisect"},
        {{"NCCL_TESTS=all_reduce,bcast", NULL}, "NCCL_TESTS=all_reduce,bcast: 'bcast' is not a collective of "
                                                "NVIDIA's recipe; allowed: a comma list of all_reduce, all_gather, "
                                                "reduce_scatter, alltoall, sendrecv"},
        {{"NCCL_TESTS=all_reduce,all_reduce_perf", NULL}, "NCCL_TESTS=all_reduce,all_reduce_perf: all_reduce_perf "
                                                          "is listed twice; allowed: each once"},
        {{"NCCL_TESTS=sendrecv,", NULL}, "NCCL_TESTS=sendrecv,: trailing comma; allowed: a comma list of all_reduce, "
                                         "all_gather, reduce_scatter, alltoall, sendrecv"},
        {{"NCCL_TESTS_PATH=usr/local/bin", NULL}, "NCCL_TESTS_PATH=usr/local/bin: not an absolute folder path; "
                                                  "allowed: the folder of the nccl-tests binaries inside the "
                                                  "container (/usr/local/bin, NVIDIA's)"},
        {{"FABRIC_CHECK=bisect", NULL}, "JOB_TOTAL_GPUS is not set: FABRIC_CHECK=bisect checks the nodes of one job; "
                                        "allowed: a multiple of GPUS_PER_NODE=8 over at least 2 nodes (e.g. 32 for 4 "
                                        "nodes)"},
        {{"JOB_TOTAL_GPUS=12", NULL}, "JOB_TOTAL_GPUS=12: RECIPE=nccl-tests runs one task per GPU on whole nodes; "
                                      "allowed: one multiple of GPUS_PER_NODE=8 (8, 16, ...)"},
        {{"JOB_TOTAL_GPUS=0", NULL}, "JOB_TOTAL_GPUS=0: RECIPE=nccl-tests runs one task per GPU on whole nodes; "
                                     "allowed: one multiple of GPUS_PER_NODE=8 (8, 16, ...)"},
        {{"JOB_TOTAL_GPUS=8200", NULL}, "JOB_TOTAL_GPUS=8200: 1025 nodes; allowed: at most 1024 nodes"},
        {{"FABRIC_CHECK=bisect", "JOB_TOTAL_GPUS=8", NULL}, "JOB_TOTAL_GPUS=8: FABRIC_CHECK=bisect tests node pairs; "
                                                            "allowed: at least 2 nodes (16 GPUs with GPUS_PER_NODE=8)"},
        {{"GPU_TYPE=gb200", "FABRIC_CHECK=bisect", "JOB_TOTAL_GPUS=4", NULL},
         "JOB_TOTAL_GPUS=4: FABRIC_CHECK=bisect tests node pairs; allowed: at least 2 nodes (8 GPUs with "
         "GPUS_PER_NODE=4)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(resolve_ncclt(bad[i].env, &plan, &err) == NP_E_INVALID, "%s: accepted", bad[i].env[0]);
        ck_assert_str_eq(err.text, bad[i].want);
        np_launch_plan_free(&plan);
    }
    /* the defaults: full, the five collectives, NVIDIA's folder, one node of the system */
    const char *d[] = {NULL};
    ck_assert_msg(resolve_ncclt(d, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.jobs[0].ncclt.check, NP_NCCLT_FULL);
    ck_assert_uint_eq(plan.jobs[0].ncclt.collectives, 0x1fu);
    ck_assert_str_eq(plan.jobs[0].ncclt.path, "/usr/local/bin");
    ck_assert_int_eq(plan.jobs[0].gpus, 8);
    ck_assert_int_eq(plan.jobs[0].nodes, 1);
    ck_assert_str_eq(plan.jobs[0].experiment, "nccl-tests_full_h100_8");
    np_launch_plan_free(&plan);
    /* words in any case; bisect's default collective all_reduce, or the ones listed; pairs all; 4 GPUs a node */
    const char *b1[] = {"FABRIC_CHECK=BISECT", "FABRIC_PAIRS=All", "GPUS_PER_NODE=4", "JOB_TOTAL_GPUS=8",
                        "NCCL_TESTS_PATH=/opt/nccl///", NULL};
    ck_assert_msg(resolve_ncclt(b1, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].ncclt.check, NP_NCCLT_BISECT);
    ck_assert_int_eq(plan.jobs[0].ncclt.pairs, NP_NCCLT_PAIRS_ALL);
    ck_assert_uint_eq(plan.jobs[0].ncclt.collectives, 0x1u);
    ck_assert_str_eq(plan.jobs[0].ncclt.path, "/opt/nccl");
    ck_assert_int_eq(plan.jobs[0].gpus_per_node, 4);
    ck_assert_int_eq(plan.jobs[0].nodes, 2);
    ck_assert_str_eq(plan.jobs[0].experiment, "nccl-tests_bisect_h100_8");
    np_launch_plan_free(&plan);
    const char *b2[] = {"NCCL_TESTS=sendrecv,ALL_GATHER", "GPU_TYPE=GB200", "JOB_TOTAL_GPUS=8", "NCCL_TESTS_PATH=/",
                        NULL};
    ck_assert_msg(resolve_ncclt(b2, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.jobs[0].ncclt.collectives, (1u << 4) | (1u << 1));
    ck_assert_str_eq(plan.jobs[0].ncclt.path, "/");
    ck_assert_str_eq(plan.jobs[0].gpu_type, "gb200");
    ck_assert_int_eq(plan.jobs[0].nodes, 2);
    np_launch_plan_free(&plan);
    const char *cased[] = {SP, "RECIPE=NCCL-Tests", "DTYPE=-", NULL}; /* the recipe's name in any case */
    ck_assert_msg(resolve1(cased, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].experiment, "nccl-tests_full_h100_8");
    np_launch_plan_free(&plan);
    const char *b3[] = {"JOB_TOTAL_GPUS=8192", NULL}; /* 1024 nodes: the most */
    ck_assert_msg(resolve_ncclt(b3, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].nodes, 1024);
    np_launch_plan_free(&plan);
    /* the fabric check's variables given to a model recipe */
    static const char *const own[] = {"FABRIC_CHECK=full", "FABRIC_PAIRS=ring", "NCCL_TESTS=all_reduce",
                                      "NCCL_TESTS_PATH=/usr/local/bin"};
    for (size_t i = 0; i < 4; i++) {
        const char *e[] = {SP, SYN, L8, own[i], NULL};
        ck_assert_int_eq(resolve1(e, &plan, &err), NP_E_INVALID);
        char want[300];
        snprintf(want, sizeof want, "%s: only RECIPE=nccl-tests reads it; allowed: unset, or RECIPE=nccl-tests",
                 own[i]);
        ck_assert_str_eq(err.text, want);
        np_launch_plan_free(&plan);
    }
}
END_TEST

/* Every value goes into JSON: text that is not UTF-8 is refused naming the variable, the byte and where it is,
 * never the value; each boundary of UTF-8 exactly (the smallest and largest of each length, the surrogates, past
 * U+10FFFF, overlong forms, a cut sequence, a stray continuation byte) */
START_TEST(test_utf8_values)
{
    static const struct {
        const char *v;
        unsigned byte;
        int at;
    } bad[] = {{"a\xff", 0xff, 1},         {"\xc1\xbf", 0xc1, 0},         {"\xc0\x80", 0xc0, 0},
               {"ab\xe0\x9f\xbf", 0xe0, 2}, {"\xed\xa0\x80", 0xed, 0},     {"\xed\xbf\xbf", 0xed, 0},
               {"\xf0\x8f\xbf\xbf", 0xf0, 0}, {"\xf4\x90\x80\x80", 0xf4, 0}, {"\xf5\x80\x80\x80", 0xf5, 0},
               {"x\xe2\x82", 0xe2, 1},      {"\xe2\x28\xa1", 0xe2, 0},     {"\x80", 0x80, 0},
               {"\xf8\x88\x80\x80\x80", 0xf8, 0},
               {"\xc3\xc3\xa9", 0xc3, 0}}; /* the last: a lead byte where a continuation byte must be */
    static const char *const good[] = {"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
                                       "\xef\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "h100"};
    struct np_launch_plan plan;
    struct np_error err;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char gt[64];
        snprintf(gt, sizeof gt, "GPU_TYPE=%s", bad[i].v);
        const char *e[] = {SP, SYN, L8, gt, NULL};
        ck_assert_int_eq(resolve1(e, &plan, &err), NP_E_INVALID);
        char want[300];
        snprintf(want, sizeof want, "GPU_TYPE: not valid UTF-8 (byte 0x%02x at offset %d of %zu); allowed: UTF-8 "
                 "text (a path in another encoding cannot be written to the JSON manifest); nothing written",
                 bad[i].byte, bad[i].at, strlen(bad[i].v));
        ck_assert_str_eq(err.text, want);
        np_launch_plan_free(&plan);
    }
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char gt[64];
        snprintf(gt, sizeof gt, "GPU_TYPE=%s", good[i]);
        const char *e[] = {SP, SYN, L8, gt, NULL};
        enum np_status st = resolve1(e, &plan, &err);
        ck_assert_msg(st == NP_OK || !strstr(err.text, "UTF-8"), "[%s] refused: %s", good[i], err.text);
        np_launch_plan_free(&plan);
    }
}
END_TEST

/* The container image: RUN_CONF_IMAGE an existing file or an image reference, never a folder or a relative path;
 * unset, the one ./setup stages, refused saying what is wrong with it and how to mend it (missing, empty, a folder) */
START_TEST(test_image_choices)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *ref[] = {SP, L8, "HF_TOKEN=t", "RUN_CONF_IMAGE=nvcr.io/nvidia/nemo:25.02.01", NULL};
    ck_assert_msg(resolve1(ref, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].image, "nvcr.io/nvidia/nemo:25.02.01");
    np_launch_plan_free(&plan);
    const char *rel[] = {SP, L8, "HF_TOKEN=t", "RUN_CONF_IMAGE=./nemo.sqsh", NULL};
    ck_assert_int_eq(resolve1(rel, &plan, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "RUN_CONF_IMAGE=./nemo.sqsh: relative path; allowed: an absolute .sqsh path or an image "
                               "reference such as nvcr.io#nvidia/nemo:25.02.01");
    np_launch_plan_free(&plan);
    char dirimg[700];
    snprintf(dirimg, sizeof dirimg, "RUN_CONF_IMAGE=%s/empty", stage);
    const char *dir[] = {SP, L8, "HF_TOKEN=t", dirimg, NULL};
    ck_assert_int_eq(resolve1(dir, &plan, &err), NP_E_INVALID);
    char want[1200];
    snprintf(want, sizeof want, "%s: no such file; allowed: an existing .sqsh file or an image reference such as "
             "nvcr.io#nvidia/nemo:25.02.01", dirimg);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
    /* the staged image, in a STAGE_PATH of its own: missing, empty, a folder */
    char sub[700], sqsh[800];
    snprintf(sub, sizeof sub, "%s/s2", stage);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    snprintf(sqsh, sizeof sqsh, "%s/nvidia+nemo+25.02.01.sqsh", sub);
    const char *e[] = {"STAGE_PATH=@/s2", "MODEL_SIZE=15b", "DTYPE=fp8", NULL};
    ck_assert_int_eq(resolve1(e, &plan, &err), NP_E_INVALID);
    snprintf(want, sizeof want, "RUN_CONF_IMAGE is not set and the staged container image %s does not exist: run "
             "./setup first (or set RUN_CONF_IMAGE, or use WORKLOAD=synthetic)", sqsh);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
    write_file(sqsh, "");
    ck_assert_int_eq(resolve1(e, &plan, &err), NP_E_INVALID);
    snprintf(want, sizeof want, "RUN_CONF_IMAGE is not set and the staged container image %s is empty (0 bytes, left "
             "by an import that did not finish): run ./setup to import it again (or set RUN_CONF_IMAGE, or use "
             "WORKLOAD=synthetic)", sqsh);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
    ck_assert_int_eq(unlink(sqsh), 0);
    ck_assert_int_eq(mkdir(sqsh, 0755), 0);
    ck_assert_int_eq(resolve1(e, &plan, &err), NP_E_INVALID);
    snprintf(want, sizeof want, "RUN_CONF_IMAGE is not set and the staged container image %s is not a regular file: "
             "move it away, then run ./setup (or set RUN_CONF_IMAGE, or use WORKLOAD=synthetic)", sqsh);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
    /* --dry-run: listed as missing, not refused */
    ck_assert_msg(resolve_preview(e, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_ptr_nonnull(plan.jobs[0].missing);
    ck_assert_ptr_nonnull(strstr(plan.jobs[0].missing[0], "is not a regular file"));
    np_launch_plan_free(&plan);
    rmdir(sqsh);
    write_file(sqsh, "sqsh");
    ck_assert_msg(resolve1(e, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].image, sqsh);
    np_launch_plan_free(&plan);
}
END_TEST

/* --list's filters (recipe, GPU type, DTYPE, TASK; any case; NULL or "" matches all; a Megatron-Bridge container
 * none of NeMo's rows): each filtered listing holds exactly the rows of the whole listing that match, counted
 * here from the whole listing's JSON (an AutoModel row by the task its TASK column shows: --task lora once left
 * AutoModel's LoRA rows out and --task pretrain listed them) */
static size_t list_count(const struct np_list_filter *f, const char *recipe, const char *gpu, const char *dtype,
                         const char *task)
{
    char *t = np_launch_list(&set, f, 1);
    ck_assert_ptr_nonnull(t);
    json_t *a = json_loads(t, 0, NULL);
    ck_assert_msg(json_is_array(a), "%.200s", t);
    free(t);
    size_t n = 0, i;
    json_t *o;
    json_array_foreach(a, i, o) {
        const char *r = json_string_value(json_object_get(o, "recipe"));
        const char *g = json_string_value(json_object_get(o, "gpu"));
        const char *d = json_string_value(json_object_get(o, "dtype"));
        const char *k = json_string_value(json_object_get(o, "task"));
        n += (!recipe || strcmp(r, recipe) == 0) && (!gpu || strcmp(g, gpu) == 0) &&
             (!dtype || strcmp(d, dtype) == 0) && (!task || strcmp(k, task) == 0);
    }
    json_decref(a);
    return n;
}

START_TEST(test_list_filters)
{
    size_t all = list_count(NULL, NULL, NULL, NULL, NULL);
    struct np_list_filter none = {.recipe = "", .gpu_type = "", .dtype = "", .task = "", .container = ""};
    ck_assert_uint_eq(list_count(&none, NULL, NULL, NULL, NULL), all);
    static const struct {
        struct np_list_filter f;
        const char *recipe, *gpu, *dtype, *task;
    } cases[] = {
        {{.recipe = "LLAMA3.1"}, "llama3.1", NULL, NULL, NULL},
        {{.recipe = "llama3"}, "llama3", NULL, NULL, NULL},
        {{.gpu_type = "GB200"}, NULL, "gb200", NULL, NULL},
        {{.dtype = "FP8"}, NULL, NULL, "fp8", NULL},
        {{.dtype = "bf16"}, NULL, NULL, "bf16", NULL},
        {{.task = "LoRA"}, NULL, NULL, NULL, "lora"},
        {{.task = "pretrain"}, NULL, NULL, NULL, "pretrain"},
        {{.recipe = "llama3", .gpu_type = "h100", .dtype = "fp8", .task = "sft"}, "llama3", "h100", "fp8", "sft"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t want = list_count(NULL, cases[i].recipe, cases[i].gpu, cases[i].dtype, cases[i].task);
        ck_assert_msg(want > 0 && want < all, "case %zu: %zu of %zu rows", i, want, all);
        size_t got = list_count(&cases[i].f, NULL, NULL, NULL, NULL);
        ck_assert_msg(got == want, "case %zu: %zu rows listed, %zu of the whole listing match", i, got, want);
        ck_assert_uint_eq(list_count(&cases[i].f, cases[i].recipe, cases[i].gpu, cases[i].dtype, cases[i].task), want);
    }
    struct np_list_filter mb = {.container = "25.09"};
    ck_assert_uint_eq(list_count(&mb, NULL, NULL, NULL, NULL), 0);
    char *t = np_launch_list(&set, &mb, 0);
    ck_assert_str_eq(t, ""); /* a container's listing: no empty NeMo table above it */
    free(t);
    struct np_list_filter nope = {.recipe = "nope"};
    t = np_launch_list(&set, &nope, 0);
    ck_assert_str_eq(t, "RECIPE  SIZE  TASK  DTYPE  GPUS  GPU  SYSTEM  GPN  TP  PP  CP  EP  DP  VP  MBS  GBS  GA  "
                        "LAYERS  NOTE\n");
    free(t);
}
END_TEST

/* RECIPE=automodel in preview (--dry-run: the image and the model files may be missing): MODEL names the row (no
 * MODEL refused listing them), DTYPE may be left out (its rows' one dtype, bf16), MAX_STEPS is the benchmark's unless
 * set, a 1-GPU LoRA row is part of one node, the HF token counts; nsys and NCCL traces are refused */
START_TEST(test_automodel_preview)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e1[] = {SP, "RECIPE=automodel", "MODEL=llama3_1_8b_peft_benchmark", "DTYPE=-", "HF_TOKEN=t", NULL};
    ck_assert_msg(resolve_preview(e1, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_int_eq(c->dtype, NP_DTYPE_BF16);
    ck_assert_int_eq(c->gpus, 1);
    ck_assert_int_eq(c->nodes, 1);
    ck_assert_int_eq(c->hf_token, 1);
    ck_assert_int_eq(c->max_steps, 10); /* recipes/automodel.json: the PEFT benchmarks' max_steps */
    ck_assert_int_eq(c->gpus_per_node, 8);
    /* a LoRA benchmark is named as fine-tuning (NeMo's finetune_<recipe>_<size>_<task>_... shape), not pretrain_ */
    ck_assert_str_eq(c->experiment, "finetune_automodel_llama3_1_8b_peft_benchmark_lora_bf16_1");
    ck_assert_ptr_nonnull(c->missing);
    ck_assert_ptr_nonnull(strstr(c->missing[0], "container image"));
    ck_assert_ptr_nonnull(c->missing[1]);
    ck_assert_ptr_nonnull(strstr(c->missing[1], "the weights of meta-llama/Llama-3.1-8B in ")); /* gated: */
    ck_assert_ptr_nonnull(strstr(c->missing[1], "./setup with HF_TOKEN)"));
    np_launch_plan_free(&plan);
    const char *e1b[] = {SP, "RECIPE=automodel", "MODEL=qwen3_moe_30b_te_deepep", "DTYPE=-", NULL};
    ck_assert_msg(resolve_preview(e1b, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].max_steps, 30); /* the MoE benchmarks' */
    ck_assert_str_eq(plan.jobs[0].experiment, "pretrain_automodel_qwen3_moe_30b_te_deepep_bf16_8");
    char want[900];
    snprintf(want, sizeof want, "config.json of Qwen/Qwen3-30B-A3B in %s/hf/Qwen/Qwen3-30B-A3B (run RECIPE=automodel "
             "MODEL=qwen3_moe_30b_te_deepep ./setup)", stage);
    ck_assert_ptr_nonnull(plan.jobs[0].missing);
    ck_assert_ptr_nonnull(plan.jobs[0].missing[1]);
    ck_assert_str_eq(plan.jobs[0].missing[1], want);
    ck_assert_ptr_null(plan.jobs[0].missing[2]);
    np_launch_plan_free(&plan);
    /* staged: no longer listed */
    char cmd[900];
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/hf/Qwen/Qwen3-30B-A3B' && echo '{}' > '%s/hf/Qwen/Qwen3-30B-A3B/config.json'", stage, stage);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_msg(resolve_preview(e1b, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_ptr_nonnull(plan.jobs[0].missing);
    ck_assert_ptr_null(plan.jobs[0].missing[1]);
    ck_assert_int_eq(plan.jobs[0].gpus, 8);
    ck_assert_int_eq(plan.jobs[0].nodes, 1);
    np_launch_plan_free(&plan);
    /* published at 1024 and 256 GPUs (that order): JOB_TOTAL_GPUS unset is the smallest */
    const char *e1c[] = {SP, "RECIPE=automodel", "MODEL=deepseek_v3_te_deepep", "DTYPE=-", NULL};
    ck_assert_msg(resolve_preview(e1c, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 1);
    ck_assert_int_eq(plan.jobs[0].gpus, 256);
    ck_assert_int_eq(plan.jobs[0].nodes, 32);
    np_launch_plan_free(&plan);
    const char *e2[] = {SP, "RECIPE=automodel", "MODEL=llama3_1_8b_peft_benchmark", "DTYPE=-", "MAX_STEPS=7", NULL};
    ck_assert_msg(resolve_preview(e2, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].max_steps, 7);
    ck_assert_int_eq(plan.jobs[0].hf_token, 0);
    np_launch_plan_free(&plan);
    const char *e3[] = {SP, "RECIPE=automodel", "DTYPE=-", NULL};
    ck_assert_int_eq(resolve_preview(e3, &plan, &err), NP_E_INVALID);
    const char *want3 = "MODEL is not set; allowed (RECIPE=automodel): nemotron_super_v3_te_deepep, ";
    ck_assert_msg(strncmp(err.text, want3, strlen(want3)) == 0 && strstr(err.text, ", llama3_1_8b_peft_benchmark, "),
                  "%s", err.text);
    np_launch_plan_free(&plan);
    const char *e4[] = {SP, "RECIPE=automodel", "MODEL=qwen3_moe_30b_te_deepep", "DTYPE=-", "ENABLE_PROFILE=1", NULL};
    ck_assert_int_eq(resolve_preview(e4, &plan, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "ENABLE_PROFILE=1: RECIPE=automodel MODEL=qwen3_moe_30b_te_deepep runs AutoModel's "
                               "benchmark recipe, which nemoperf does not profile or trace; allowed: false");
    np_launch_plan_free(&plan);
    const char *e5[] = {SP, "RECIPE=automodel", "MODEL=qwen3_moe_30b_te_deepep", "DTYPE=-", "ENABLE_NCCLTRACE=yes",
                        NULL};
    ck_assert_int_eq(resolve_preview(e5, &plan, &err), NP_E_INVALID);
    ck_assert_str_eq(err.text, "ENABLE_NCCLTRACE=yes: RECIPE=automodel MODEL=qwen3_moe_30b_te_deepep runs AutoModel's "
                               "benchmark recipe, which nemoperf does not profile or trace; allowed: false");
    np_launch_plan_free(&plan);
}
END_TEST

/* The checkpoint's room, at its boundaries: exactly the size needed is enough, one byte less is not; a sweep needs
 * the sum of its scales' checkpoints (said in the plural); the published scale range's ends are taken; free space
 * that cannot be read is refused naming why; --dry-run warns instead of refusing */
START_TEST(test_checkpoint_space)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *one[] = {SP, L8, "HF_TOKEN=t", "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1", NULL};
    fake_free = 105e9; /* llama3.1 8b: 105 GB a checkpoint (as test_free_space) */
    ck_assert_msg(resolve1(one, &plan, &err) == NP_OK, "%s", err.text);
    np_launch_plan_free(&plan);
    fake_free = 105e9 - 1;
    ck_assert_int_eq(resolve1(one, &plan, &err), NP_E_INVALID);
    char want[1200];
    snprintf(want, sizeof want, "ENABLE_CHECKPOINT=1: STAGE_PATH=%s has 105.0 GB (104999999999 bytes) free, but "
             "llama3.1 8b checkpoint needs 105.0 GB (105000000000 bytes); free space, or set "
             "NEMOPERF_FORCE_CHECKPOINT=true to launch anyway", stage);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
    /* --dry-run: said, not refused */
    ck_assert_msg(resolve_preview(one, &plan, &err) == NP_OK, "%s", err.text);
    np_launch_plan_free(&plan);
    const char *two[] = {SP, L8, "HF_TOKEN=t", "JOB_TOTAL_GPUS=16,128", "ENABLE_CHECKPOINT=1", NULL};
    fake_free = 210e9;
    ck_assert_msg(resolve1(two, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 2);
    np_launch_plan_free(&plan);
    fake_free = 209e9;
    ck_assert_int_eq(resolve1(two, &plan, &err), NP_E_INVALID);
    snprintf(want, sizeof want, "ENABLE_CHECKPOINT=1: STAGE_PATH=%s has 209.0 GB (209000000000 bytes) free, but "
             "llama3.1 8b checkpoints need 210.0 GB (210000000000 bytes); free space, or set "
             "NEMOPERF_FORCE_CHECKPOINT=true to launch anyway", stage);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
    fake_free = 1e15;
    free_space_fails = 1;
    ck_assert_int_eq(resolve1(one, &plan, &err), NP_E_INVALID);
    free_space_fails = 0;
    snprintf(want, sizeof want, "STAGE_PATH=%s: cannot read free space (Input/output error)", stage);
    ck_assert_str_eq(err.text, want);
    np_launch_plan_free(&plan);
}
END_TEST

/* --print-config's JSON of each kind of job: a profiled NeMo run (its window; a checkpoint's bytes), the fabric
 * check (no model: every count null, never 0; its own object), an AutoModel row (its object, its model's task), a
 * fine-tuning row (its task and pack length) */
static json_t *first_json(const char *const *env, int preview, struct np_launch_plan *plan)
{
    struct np_error err;
    enum np_status st = preview ? resolve_preview(env, plan, &err) : resolve1(env, plan, &err);
    ck_assert_msg(st == NP_OK, "%s", err.text);
    json_t *o = np_launch_config_json(&plan->jobs[0]);
    ck_assert_ptr_nonnull(o);
    return o;
}

START_TEST(test_config_json_kinds)
{
    struct np_launch_plan plan;
    const char *e1[] = {SP, SYN, L8, "ENABLE_PROFILE=1", "PROFILE_START_STEP=3", "PROFILE_STOP_STEP=7", NULL};
    json_t *o = first_json(e1, 0, &plan);
    ck_assert(json_is_true(json_object_get(o, "profile")));
    ck_assert_int_eq(json_integer_value(json_object_get(o, "profile_start")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "profile_stop")), 7);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "max_steps")), 7);
    ck_assert(json_is_null(json_object_get(o, "checkpoint_bytes")));
    ck_assert(json_is_object(json_object_get(o, "nemo")));
    ck_assert_str_eq(json_string_value(json_object_get(o, "task")), "pretrain");
    ck_assert(json_is_null(json_object_get(o, "pack_len")));
    ck_assert_str_eq(json_string_value(json_object_get(o, "dtype")), "bf16");
    json_decref(o);
    np_launch_plan_free(&plan);
    const char *e2[] = {SP, SYN, L8, "JOB_TOTAL_GPUS=16", "ENABLE_CHECKPOINT=1", NULL};
    o = first_json(e2, 0, &plan);
    ck_assert(json_is_null(json_object_get(o, "profile_start")));
    ck_assert(json_is_null(json_object_get(o, "profile_stop")));
    ck_assert(json_is_true(json_object_get(o, "checkpoint")));
    ck_assert(json_real_value(json_object_get(o, "checkpoint_bytes")) == plan.jobs[0].checkpoint_bytes);
    ck_assert(plan.jobs[0].checkpoint_bytes > 0);
    json_decref(o);
    np_launch_plan_free(&plan);

    char img[700];
    snprintf(img, sizeof img, "%s/nvidia+nemo+26.04.01.sqsh", stage);
    write_file(img, "sqsh");
    const char *e3[] = {SP, "RECIPE=nccl-tests", "DTYPE=-", "JOB_TOTAL_GPUS=16", NULL};
    o = first_json(e3, 0, &plan);
    static const char *const nulls[] = {"dtype", "tp", "pp", "cp", "dp", "mbs", "gbs", "ga", "layers", "seq_len",
                                        "max_steps", "ep", "vp", NULL};
    for (size_t i = 0; nulls[i]; i++)
        ck_assert_msg(json_is_null(json_object_get(o, nulls[i])), "%s is not null", nulls[i]);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "gpus")), 16);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "nodes")), 2);
    ck_assert(json_is_object(json_object_get(o, "nccl_tests")));
    ck_assert_ptr_null(json_object_get(o, "nemo"));
    json_decref(o);
    np_launch_plan_free(&plan);

    const char *e4[] = {SP, "RECIPE=automodel", "MODEL=llama3_1_8b_peft_benchmark", "DTYPE=-", NULL};
    o = first_json(e4, 1, &plan);
    ck_assert(json_is_object(json_object_get(o, "automodel")));
    ck_assert_ptr_null(json_object_get(o, "nemo"));
    ck_assert_str_eq(json_string_value(json_object_get(o, "task")), "lora");
    json_decref(o);
    np_launch_plan_free(&plan);

    const char *e5[] = {SP, "RECIPE=llama3", L8, "DTYPE=fp8", "TASK=sft", NULL};
    o = first_json(e5, 1, &plan);
    ck_assert_str_eq(json_string_value(json_object_get(o, "task")), "sft");
    ck_assert_int_eq(json_integer_value(json_object_get(o, "pack_len")), 4096); /* the row's packed length */
    ck_assert_int_eq(json_integer_value(json_object_get(o, "seq_len")), 4096);
    ck_assert(json_is_object(json_object_get(o, "nemo")));
    json_decref(o);
    np_launch_plan_free(&plan);
}
END_TEST

/* An NCCL-trace request also submits the performance run of its scale: the trace job runs 5 steps in 15 minutes
 * unless TIME_LIMIT says otherwise, its performance run the default 30 minutes, or TIME_LIMIT when given (both);
 * requeues as NEMOPERF_MAX_RETRIES says; the FP8 recipe of each NeMo recipe (llama3.1: delayed, llama3: current),
 * none for BF16 */
START_TEST(test_trace_perf_and_job_fields)
{
    struct np_launch_plan plan;
    struct np_error err;
    const char *e1[] = {SP, SYN, L8, "ENABLE_NCCLTRACE=1", NULL};
    ck_assert_msg(resolve1(e1, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(plan.n, 2);
    ck_assert_int_eq(plan.jobs[0].nccltrace, 1);
    ck_assert_int_eq(plan.jobs[0].max_steps, 5);
    ck_assert_str_eq(plan.jobs[0].time_limit, "00:15:00");
    ck_assert_int_eq(plan.jobs[1].nccltrace, 0);
    ck_assert_int_eq(plan.jobs[1].max_steps, 50);
    ck_assert_str_eq(plan.jobs[1].time_limit, "00:30:00");
    np_launch_plan_free(&plan);
    const char *e2[] = {SP, SYN, L8, "ENABLE_NCCLTRACE=1", "TIME_LIMIT=01:00:00", "NEMOPERF_MAX_RETRIES=3", NULL};
    ck_assert_msg(resolve1(e2, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].time_limit, "01:00:00");
    ck_assert_str_eq(plan.jobs[1].time_limit, "01:00:00");
    ck_assert_int_eq(plan.jobs[0].retries, 3);
    ck_assert_int_eq(plan.jobs[1].retries, 3);
    np_launch_plan_free(&plan);
    const char *e3[] = {SP, SYN, L8, "DTYPE=fp8", NULL};
    ck_assert_msg(resolve1(e3, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].fp8_recipe, "delayed");
    np_launch_plan_free(&plan);
    const char *e4[] = {SP, SYN, "RECIPE=llama3", L8, "DTYPE=fp8", NULL};
    ck_assert_msg(resolve1(e4, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_str_eq(plan.jobs[0].fp8_recipe, "current");
    np_launch_plan_free(&plan);
    const char *e5[] = {SP, SYN, L8, NULL};
    ck_assert_msg(resolve1(e5, &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_ptr_null(plan.jobs[0].fp8_recipe);
    np_launch_plan_free(&plan);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_validation_failures, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_job_policies);
    tcase_add_test(tc, test_finetune_preview);
    tcase_add_test(tc, test_ncclt_validation);
    tcase_add_test(tc, test_utf8_values);
    tcase_add_test(tc, test_image_choices);
    tcase_add_test(tc, test_list_filters);
    tcase_add_test(tc, test_automodel_preview);
    tcase_add_test(tc, test_checkpoint_space);
    tcase_add_test(tc, test_config_json_kinds);
    tcase_add_test(tc, test_trace_perf_and_job_fields);
    tcase_add_test(tc, test_special_paths);
    tcase_add_test(tc, test_inconsistent_row_with_corrections);
    tcase_add_test(tc, test_free_space);
    tcase_add_test(tc, test_defaults_and_inference);
    tcase_add_test(tc, test_booleans_and_time);
    tcase_add_test(tc, test_profile_nccl_load_sweep);
    tcase_add_test(tc, test_config_json);
    tcase_add_test(tc, test_seed_rows);
    tcase_add_test(tc, test_list_text);
    tcase_add_test(tc, test_list_json);
    tcase_add_test(tc, test_mbridge_hf_not_staged);
    tcase_add_test(tc, test_resolve_out_of_memory);
    tcase_add_test(tc, test_templates);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
