/* check_nemo.c - the NeMo job of every pre-training row of seeds 003, 004 and 000.
 *
 * tests/data/nemo/rows.tsv restates, from the facts files (not from nemoperf's
 * output), what NVIDIA's scripts ran for each row: container, GPUs per node,
 * nodes, TP/PP/CP/VP/EP/ETP, MBS/GBS, FSDP, CUDA graphs, FP8 recipe, userbuffers
 * config, tokenizer, environment, --segment, numactl.  Each row is resolved as a
 * user would launch it and compared with --print-config's "nemo" object, the
 * driver's argument list and the rendered batch script.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/util/shell.h"

#define NCOLS 25
enum { C_RECIPE, C_SIZE, C_DTYPE, C_GPU, C_GPUS, C_CONTAINER, C_GPN, C_NODES, C_TP, C_PP, C_CP, C_VP, C_EP, C_ETP,
       C_MBS, C_GBS, C_FSDP, C_CG, C_FP8, C_UB, C_TOK, C_CDMC, C_NORM, C_SEG, C_NUMA };

static struct np_recipe_set set;
static char stage[] = "/tmp/np-nemo-XXXXXX";
static char rows[128][NCOLS][96];
static int nrows;

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
    ck_assert(mkdtemp(stage));
    /* what ./setup stages: both containers and every Hugging Face tokenizer */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "echo x > '%s/nvidia+nemo+25.02.01.sqsh' && echo x > '%s/nvidia+nemo+25.04.sqsh'", stage,
             stage);
    ck_assert(system(cmd) == 0);
    static const char *const hf[] = {"meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-70B",
                                     "meta-llama/Llama-3.1-405B", "nvidia/megatron-gpt2-345m",
                                     "mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x22B-v0.1", NULL};
    for (const char *const *h = hf; *h; h++) {
        snprintf(cmd, sizeof cmd, "mkdir -p '%s/hf/%s' && echo '{}' > '%s/hf/%s/config.json'", stage, *h, stage, *h);
        ck_assert(system(cmd) == 0);
    }
    FILE *f = fopen("tests/data/nemo/rows.tsv", "r");
    ck_assert_msg(f != NULL, "tests/data/nemo/rows.tsv (run from the source tree)");
    char line[2048];
    nrows = 0;
    int header = 1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (header) {
            header = 0;
            continue;
        }
        ck_assert_int_lt(nrows, 128);
        int k = 0;
        for (char *save = NULL, *t = strtok_r(line, "\t", &save); t; t = strtok_r(NULL, "\t", &save), k++) {
            ck_assert_int_lt(k, NCOLS);
            snprintf(rows[nrows][k], sizeof rows[nrows][k], "%s", t);
        }
        ck_assert_int_eq(k, NCOLS);
        nrows++;
    }
    fclose(f);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", stage);
    ck_assert(system(cmd) == 0);
    np_recipe_set_free(&set);
}

/* Resolve one row as a user launches it; one job. */
static enum np_status resolve_row(int r, int preview, const char *extra, struct np_launch_plan *plan,
                                  struct np_error *err)
{
    char sp[600], rc[96], ms[96], dt[96], gt[96], jg[96];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", stage);
    snprintf(rc, sizeof rc, "RECIPE=%s", rows[r][C_RECIPE]);
    snprintf(ms, sizeof ms, "MODEL_SIZE=%s", rows[r][C_SIZE]);
    snprintf(dt, sizeof dt, "DTYPE=%s", rows[r][C_DTYPE]);
    snprintf(gt, sizeof gt, "GPU_TYPE=%s", rows[r][C_GPU]);
    snprintf(jg, sizeof jg, "JOB_TOTAL_GPUS=%s", rows[r][C_GPUS]);
    const char *env[] = {sp, rc, ms, dt, gt, jg, extra, NULL};
    struct np_launch_opts o = {.now = 1700000000, .preview = preview};
    return np_launch_resolve(&set, np_env_list, (void *)env, &o, plan, err);
}

/* "-" = JSON null, else the integer. */
static void expect_int_or_null(json_t *o, const char *key, const char *want, int r)
{
    json_t *v = json_object_get(o, key);
    if (strcmp(want, "-") == 0)
        ck_assert_msg(json_is_null(v), "row %d (%s %s %s %s): %s should be null", r, rows[r][0], rows[r][1],
                      rows[r][2], rows[r][3], key);
    else
        ck_assert_msg(json_is_integer(v) && json_integer_value(v) == atoll(want), "row %d (%s %s %s %s): %s = %lld, want %s",
                      r, rows[r][0], rows[r][1], rows[r][2], rows[r][3], key,
                      json_is_integer(v) ? (long long)json_integer_value(v) : -1LL, want);
}

static void expect_str_or_null(json_t *o, const char *key, const char *want, int r)
{
    json_t *v = json_object_get(o, key);
    if (strcmp(want, "-") == 0)
        ck_assert_msg(json_is_null(v), "row %d (%s %s %s): %s should be null, is %s", r, rows[r][0], rows[r][1],
                      rows[r][3], key, json_is_string(v) ? json_string_value(v) : "?");
    else
        ck_assert_msg(json_is_string(v) && strcmp(json_string_value(v), want) == 0, "row %d (%s %s %s): %s = %s, want %s",
                      r, rows[r][0], rows[r][1], rows[r][3], key, json_is_string(v) ? json_string_value(v) : "?",
                      want);
}

/* An exported variable: "-" = not exported. */
static void expect_env(json_t *env, const char *key, const char *want, int r)
{
    json_t *v = json_object_get(env, key);
    if (strcmp(want, "-") == 0)
        ck_assert_msg(v == NULL, "row %d (%s %s %s): %s is exported", r, rows[r][0], rows[r][1], rows[r][3], key);
    else
        expect_str_or_null(env, key, want, r);
}

static void expect_bool(json_t *o, const char *key, const char *want, int r)
{
    ck_assert_msg(json_is_boolean(json_object_get(o, key)) &&
                      json_is_true(json_object_get(o, key)) == (strcmp(want, "1") == 0),
                  "row %d (%s %s %s): %s, want %s", r, rows[r][0], rows[r][1], rows[r][3], key, want);
}

/* The value after opt in argv, or NULL when opt is absent. */
static const char *arg_after(char **argv, const char *opt)
{
    for (size_t i = 0; argv[i]; i++)
        if (strcmp(argv[i], opt) == 0)
            return argv[i + 1] ? argv[i + 1] : "";
    return NULL;
}

static int has_arg(char **argv, const char *opt)
{
    return arg_after(argv, opt) != NULL;
}

START_TEST(test_every_row)
{
    ck_assert_int_eq(nrows, 82); /* seed 003: 46, seed 004: 24, seed 000: 12 (every row, both dtypes) */
    int r = _i;
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_msg(resolve_row(r, 0, NULL, &plan, &err) == NP_OK, "row %d: %s", r, err.text);
    ck_assert_uint_eq(plan.n, 1);
    const struct np_launch_config *c = &plan.jobs[0];
    json_t *cfg = np_launch_config_json(c);
    ck_assert_ptr_nonnull(cfg);
    json_t *n = json_object_get(cfg, "nemo");
    ck_assert(json_is_object(n));
    expect_str_or_null(n, "container", rows[r][C_CONTAINER], r);
    expect_int_or_null(n, "gpus_per_node", rows[r][C_GPN], r);
    expect_int_or_null(n, "nodes", rows[r][C_NODES], r);
    expect_int_or_null(n, "tp", rows[r][C_TP], r);
    expect_int_or_null(n, "pp", rows[r][C_PP], r);
    expect_int_or_null(n, "cp", rows[r][C_CP], r);
    expect_int_or_null(n, "vp", rows[r][C_VP], r);
    expect_int_or_null(n, "ep", rows[r][C_EP], r);
    expect_int_or_null(n, "etp", rows[r][C_ETP], r);
    expect_int_or_null(n, "mbs", rows[r][C_MBS], r);
    expect_int_or_null(n, "gbs", rows[r][C_GBS], r);
    expect_bool(n, "fsdp", rows[r][C_FSDP], r);
    expect_bool(n, "cuda_graphs", rows[r][C_CG], r);
    expect_str_or_null(n, "fp8_recipe", rows[r][C_FP8], r);
    expect_str_or_null(n, "tp_comm_overlap_cfg", rows[r][C_UB], r);
    expect_int_or_null(n, "segment", rows[r][C_SEG], r);
    /* which binding runs: NVIDIA's by default (NEMOPERF_NUMA_BIND unset) */
    expect_str_or_null(n, "numactl", strcmp(rows[r][C_NUMA], "1") == 0 ? "nvidia" : "-", r);
    /* tokenizer: hf:<id> (staged folder) or null:<vocab>[+model] */
    json_t *tok = json_object_get(n, "tokenizer");
    const char *tw = rows[r][C_TOK];
    char path[800];
    if (strncmp(tw, "hf:", 3) == 0) {
        expect_str_or_null(tok, "hf", tw + 3, r);
        snprintf(path, sizeof path, "%s/hf/%s", stage, tw + 3);
        expect_str_or_null(tok, "path", path, r);
    } else {
        ck_assert_int_eq(strncmp(tw, "null:", 5), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(tok, "null_vocab_size")), atoi(tw + 5));
        ck_assert(json_is_true(json_object_get(tok, "on_model")) == (strstr(tw, "+model") != NULL));
    }
    /* environment */
    json_t *env = json_object_get(n, "env");
    expect_env(env, "CUDA_DEVICE_MAX_CONNECTIONS", rows[r][C_CDMC], r);
    expect_env(env, "NVTE_NORM_FWD_USE_CUDNN", strcmp(rows[r][C_NORM], "1") ? "-" : "1", r);
    expect_env(env, "NVTE_NORM_BWD_USE_CUDNN", strcmp(rows[r][C_NORM], "1") ? "-" : "1", r);
    expect_env(env, "NVTE_FWD_LAYERNORM_SM_MARGIN", "16", r);
    expect_env(env, "NVTE_BWD_LAYERNORM_SM_MARGIN", "16", r);
    expect_env(env, "NCCL_P2P_NET_CHUNKSIZE", strcmp(rows[r][C_PP], "1") ? "2097152" : "-", r);
    expect_env(env, "TRANSFORMERS_OFFLINE", "1", r);
    expect_env(env, "HF_HUB_OFFLINE", "1", r);
    /* the driver's arguments say the same */
    char **argv = np_nemo_driver_args(c);
    ck_assert_ptr_nonnull(argv);
    json_t *ja = json_object_get(n, "driver_args");
    size_t nargs = 0;
    while (argv[nargs])
        nargs++;
    ck_assert_uint_eq(json_array_size(ja), nargs);
    for (size_t k = 0; k < nargs; k++)
        ck_assert_str_eq(json_string_value(json_array_get(ja, k)), argv[k]);
    ck_assert_str_eq(arg_after(argv, "--task"), "pretrain");
    ck_assert_str_eq(arg_after(argv, "--tp"), rows[r][C_TP]);
    ck_assert_str_eq(arg_after(argv, "--pp"), rows[r][C_PP]);
    ck_assert_str_eq(arg_after(argv, "--cp"), rows[r][C_CP]);
    ck_assert_str_eq(arg_after(argv, "--vp"), strcmp(rows[r][C_VP], "-") ? rows[r][C_VP] : "none");
    ck_assert_str_eq(arg_after(argv, "--ep"), rows[r][C_EP]);
    ck_assert_str_eq(arg_after(argv, "--etp"), strcmp(rows[r][C_ETP], "-") ? rows[r][C_ETP] : "none");
    ck_assert_str_eq(arg_after(argv, "--mbs"), rows[r][C_MBS]);
    ck_assert_str_eq(arg_after(argv, "--gbs"), rows[r][C_GBS]);
    ck_assert_str_eq(arg_after(argv, "--nodes"), rows[r][C_NODES]);
    ck_assert_str_eq(arg_after(argv, "--gpus-per-node"), rows[r][C_GPN]);
    ck_assert_str_eq(arg_after(argv, "--fp8"), strcmp(rows[r][C_FP8], "-") ? rows[r][C_FP8] : "none");
    ck_assert_int_eq(has_arg(argv, "--fsdp"), strcmp(rows[r][C_FSDP], "1") == 0);
    ck_assert_int_eq(has_arg(argv, "--cuda-graphs"), strcmp(rows[r][C_CG], "1") == 0);
    if (strcmp(rows[r][C_UB], "-"))
        ck_assert_str_eq(arg_after(argv, "--tp-comm-overlap-cfg"), rows[r][C_UB]);
    else
        ck_assert(!has_arg(argv, "--tp-comm-overlap-cfg"));
    if (strncmp(tw, "hf:", 3) == 0) {
        ck_assert_str_eq(arg_after(argv, "--tokenizer-hf"), path);
    } else {
        ck_assert_int_eq(atoi(arg_after(argv, "--tokenizer-null")), atoi(tw + 5));
        ck_assert_int_eq(has_arg(argv, "--tokenizer-on-model"), strstr(tw, "+model") != NULL);
    }
    /* Mixtral 8x22B: ETP 1 != TP needs average_in_collective off (pretrain_mixtral_8x22b.py l.84-87) */
    ck_assert_int_eq(has_arg(argv, "--no-average-in-collective"),
                     strcmp(rows[r][C_ETP], "-") != 0 && strcmp(rows[r][C_ETP], rows[r][C_TP]) != 0);
    np_strv_free(argv);
    /* --dry-run renders a job that runs the driver */
    char *s = NULL;
    ck_assert_int_eq(np_script_render(c, &s, &err), NP_OK);
    ck_assert_ptr_nonnull(strstr(s, "'python' \\\n    '/nemo_run/code/nemoperf_nemo.py' \\\n    '--task' 'pretrain'"));
    char want[128];
    snprintf(want, sizeof want, "#SBATCH --nodes=%s\n#SBATCH --ntasks-per-node=%s\n", rows[r][C_NODES], rows[r][C_GPN]);
    ck_assert_msg(strstr(s, want), "row %d: no [%s]", r, want);
    if (strcmp(rows[r][C_SEG], "-")) {
        snprintf(want, sizeof want, "#SBATCH --segment=%s\n", rows[r][C_SEG]);
        ck_assert_msg(strstr(s, want), "row %d: no [%s]", r, want);
    } else {
        ck_assert(!strstr(s, "--segment"));
    }
    /* NVIDIA's words, unquoted for the batch shell to expand once, as NeMo-Run's script did */
    ck_assert_int_eq(strstr(s, " \\\n    numactl --cpunodebind=$((SLURM_LOCALID/4)) --membind=$((SLURM_LOCALID/4)) "
                               "\\\n") != NULL,
                     strcmp(rows[r][C_NUMA], "1") == 0);
    ck_assert(!strstr(s, "exec numactl"));
    ck_assert_ptr_nonnull(strstr(s, " --mpi=pmix "));
    ck_assert_ptr_nonnull(strstr(s, "#SBATCH --no-requeue\n"));
    free(s);
    json_decref(cfg);
    np_launch_plan_free(&plan);
}
END_TEST

/* Corrections are data, shown with the published value, the source and the reason. */
START_TEST(test_corrections_shown)
{
    struct np_launch_plan plan;
    struct np_error err;
    int found = 0;
    for (int r = 0; r < nrows; r++) {
        if (strcmp(rows[r][C_SIZE], "340b") || strcmp(rows[r][C_RECIPE], "nemotron4") || strcmp(rows[r][C_GPUS], "256"))
            continue;
        found = 1;
        ck_assert_int_eq(resolve_row(r, 0, NULL, &plan, &err), NP_OK);
        json_t *cfg = np_launch_config_json(&plan.jobs[0]);
        json_t *corr = json_object_get(json_object_get(cfg, "nemo"), "corrections");
        ck_assert_uint_eq(json_array_size(corr), 1);
        json_t *k = json_array_get(corr, 0);
        ck_assert_str_eq(json_string_value(json_object_get(k, "field")), "vp");
        ck_assert(json_is_null(json_object_get(k, "published"))); /* seed 004 prints NA */
        ck_assert_int_eq(json_integer_value(json_object_get(k, "value")), 12);
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(k, "source")), "nemotron/launch.sh"));
        ck_assert_int_eq(plan.jobs[0].row->vp, 0); /* the published cell is kept */
        json_decref(cfg);
        np_launch_plan_free(&plan);
    }
    ck_assert(found);
}
END_TEST

/* Before ./setup: --print-config/--dry-run (preview) list what is missing; a launch refuses. */
START_TEST(test_preview_before_setup)
{
    char sp[700];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s/not-yet", stage);
    const char *env[] = {sp, "MODEL_SIZE=70b", "DTYPE=fp8", "JOB_TOTAL_GPUS=64", NULL};
    struct np_launch_opts o = {.now = 1700000000, .preview = 1};
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)env, &o, &plan, &err) == NP_OK, "%s", err.text);
    char **m = plan.jobs[0].missing;
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m[0], "STAGE_PATH="));
    ck_assert_ptr_nonnull(strstr(m[1], "container image"));
    ck_assert_ptr_nonnull(strstr(m[2], "Meta-Llama-3-70B"));
    ck_assert_ptr_null(m[3]);
    char *s = NULL;
    ck_assert_int_eq(np_script_render(&plan.jobs[0], &s, &err), NP_OK);
    ck_assert_ptr_nonnull(strstr(s, "/nemo_run/code/nemoperf_nemo.py"));
    free(s);
    np_launch_plan_free(&plan);
    o.preview = 0;
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)env, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "STAGE_PATH=") && strstr(err.text, "no such folder"), "%s", err.text);
    np_launch_plan_free(&plan);
}
END_TEST

/* The driver is shipped and copied into <experiment>/code/ at launch. */
START_TEST(test_stage_driver)
{
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_int_eq(resolve_row(0, 0, NULL, &plan, &err), NP_OK);
    struct np_launch_config *c = &plan.jobs[0];
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", c->experiment_dir);
    ck_assert(system(cmd) == 0);
    ck_assert_msg(np_nemo_stage_driver(c, &err) == NP_OK, "%s", err.text);
    char *src = np_nemo_driver_source();
    ck_assert_ptr_nonnull(src);
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s/code/%s'", src, c->experiment_dir, NP_NEMO_DRIVER);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    free(src);
    np_launch_plan_free(&plan);
}
END_TEST

/* The row of recipe/size/dtype/gpu in rows.tsv (the first), or -1. */
static int find_row(const char *recipe, const char *size, const char *dtype, const char *gpu)
{
    for (int r = 0; r < nrows; r++)
        if (!strcmp(rows[r][C_RECIPE], recipe) && !strcmp(rows[r][C_SIZE], size) && !strcmp(rows[r][C_DTYPE], dtype) &&
            !strcmp(rows[r][C_GPU], gpu))
            return r;
    return -1;
}

/* The rendered script of row r with one extra variable; NULL (and *st) when the launch is refused. */
static char *row_script(int r, const char *extra, enum np_status *st, struct np_error *err, json_t **nemo)
{
    struct np_launch_plan plan;
    char *s = NULL;
    *st = resolve_row(r, 0, extra, &plan, err);
    if (*st == NP_OK) {
        ck_assert_int_eq(np_script_render(&plan.jobs[0], &s, err), NP_OK);
        json_t *cfg = np_launch_config_json(&plan.jobs[0]);
        *nemo = json_incref(json_object_get(cfg, "nemo"));
        json_decref(cfg);
    }
    np_launch_plan_free(&plan);
    return s;
}

/* Issue 25, audit item 2: NEMOPERF_NUMA_BIND picks NVIDIA's binding (default), each task's own node, or none;
 * the "nemo" object (manifest and --print-config) says which ran; a wrong value names the variable. */
START_TEST(test_numa_bind)
{
    int r = find_row("llama3", "8b", "fp8", "b200");
    ck_assert_int_ge(r, 0);
    enum np_status st;
    struct np_error err;
    json_t *n = NULL;
    char *s = row_script(r, "NEMOPERF_NUMA_BIND=task", &st, &err, &n);
    ck_assert_msg(s, "%s", err.text);
    ck_assert_ptr_nonnull(strstr(s, "bash -c 'exec numactl --cpunodebind=$((SLURM_LOCALID/4)) "
                                    "--membind=$((SLURM_LOCALID/4)) \"$@\"' numactl"));
    ck_assert_str_eq(json_string_value(json_object_get(n, "numactl")), "task");
    free(s);
    json_decref(n);
    s = row_script(r, "NEMOPERF_NUMA_BIND=none", &st, &err, &n);
    ck_assert_msg(s, "%s", err.text);
    ck_assert(!strstr(s, "numactl --"));
    ck_assert_str_eq(json_string_value(json_object_get(n, "numactl")), "none");
    free(s);
    json_decref(n);
    s = row_script(r, "NEMOPERF_NUMA_BIND=node1", &st, &err, &n);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(st, NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "NEMOPERF_NUMA_BIND=node1") && strstr(err.text, "nvidia"), "%s", err.text);
}
END_TEST

/* Issue 25, audit items 1, 5, 6, 7: the 405B NVTE_NORM variables only for pre-training; nsys writes into
 * <job>/nsys_profile/ (NeMo-Run's launcher); Nemotron4 profiles name the experiment _nsys (seed 004), Llama
 * only the job (seed 003); the 25.04 window is NVIDIA's 5-6 on rank 0, the 25.02 one 20-25 on ranks 0-7. */
START_TEST(test_profile_as_nvidia)
{
    enum np_status st;
    struct np_error err;
    json_t *n = NULL;
    int r = find_row("nemotron4", "15b", "bf16", "h100");
    ck_assert_int_ge(r, 0);
    struct np_launch_plan plan;
    ck_assert_msg(resolve_row(r, 0, "ENABLE_PROFILE=true", &plan, &err) == NP_OK, "%s", err.text);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(c->experiment, "pretrain_nemotron4_15b_bf16_16_nsys");
    ck_assert_str_eq(c->job_name, "pretrain_nemotron4_15b_bf16_16_nsys");
    ck_assert_msg(strstr(c->experiment_dir, "/experiments/pretrain_nemotron4_15b_bf16_16_nsys/"
                                            "pretrain_nemotron4_15b_bf16_16_nsys_1700000000/"
                                            "pretrain_nemotron4_15b_bf16_16_nsys"),
                  "%s", c->experiment_dir);
    ck_assert_int_eq(c->profile_start, 20);
    ck_assert_int_eq(c->profile_stop, 25);
    ck_assert_int_eq(c->profile_ranks, 8);
    np_launch_plan_free(&plan);
    r = find_row("llama3.1", "8b", "bf16", "h100");
    ck_assert_int_ge(r, 0);
    ck_assert_msg(resolve_row(r, 0, "ENABLE_PROFILE=true", &plan, &err) == NP_OK, "%s", err.text);
    c = &plan.jobs[0];
    ck_assert_str_eq(c->experiment, "pretrain_llama3.1_8b_bf16_8");
    ck_assert_str_eq(c->job_name, "pretrain_llama3.1_8b_bf16_8_nsys");
    char *s = NULL, want[1200];
    ck_assert_int_eq(np_script_render(c, &s, &err), NP_OK);
    snprintf(want, sizeof want, "-o '%s/nsys_profile/profile_%%p'", c->experiment_dir);
    ck_assert_msg(strstr(s, want), "no [%s]", want);
    free(s);
    np_launch_plan_free(&plan);
    /* 25.04 (seed 000): NsysPlugin(start_step=5, end_step=6) on rank 0, unless the user sets the window */
    r = find_row("llama3", "405b", "fp8", "h100");
    ck_assert_int_ge(r, 0);
    s = row_script(r, "ENABLE_PROFILE=true", &st, &err, &n);
    ck_assert_msg(s, "%s", err.text);
    ck_assert_int_eq(json_integer_value(json_object_get(n, "profile_ranks")), 1);
    ck_assert_ptr_nonnull(strstr(s, "'--profile-start' '5' \\\n    '--profile-stop' '6' \\\n    '--profile-ranks' '1'"));
    /* pre-training: the 405B's cuDNN norm variables (pretrain_llama31_405b.py l.171-174) */
    ck_assert_ptr_nonnull(strstr(s, "export NVTE_NORM_FWD_USE_CUDNN='1'\n"));
    free(s);
    json_decref(n);
    /* fine-tuning (LoRA) passes no custom environment (finetune_llama31_405b.py l.192) */
    struct np_error e2;
    const char *env[32];
    char sp[600];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", stage);
    size_t k = 0;
    env[k++] = sp;
    env[k++] = "RECIPE=llama3";
    env[k++] = "MODEL_SIZE=405b";
    env[k++] = "DTYPE=fp8";
    env[k++] = "GPU_TYPE=h100";
    env[k++] = "TASK=lora";
    env[k] = NULL;
    struct np_launch_opts o = {.now = 1700000000, .preview = 1};
    ck_assert_msg(np_launch_resolve(&set, np_env_list, (void *)env, &o, &plan, &e2) == NP_OK, "%s", e2.text);
    ck_assert_int_eq(np_script_render(&plan.jobs[0], &s, &e2), NP_OK);
    ck_assert(!strstr(s, "NVTE_NORM_FWD_USE_CUDNN"));
    ck_assert(!strstr(s, "NVTE_NORM_BWD_USE_CUDNN"));
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nemo");
    TCase *tc = tcase_create("nemo");
    tcase_add_unchecked_fixture(tc, setup, teardown); /* once: the rows and the staged folder are read-only */
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_every_row, 0, 82);
    tcase_add_test(tc, test_corrections_shown);
    tcase_add_test(tc, test_preview_before_setup);
    tcase_add_test(tc, test_stage_driver);
    tcase_add_test(tc, test_numa_bind);
    tcase_add_test(tc, test_profile_as_nvidia);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
