/* check_mbperf.c - Megatron-Bridge performance rows launched: resolution, the rank command, the environment of
 * each release, numactl and --segment, profile and checkpoint arguments, and the refusals.
 *
 * Real data: share/nemoperf/megatron-bridge/rows-26.08.json and rows-26.06.json.  Expected values are NVIDIA's
 * (MB 51885cf = v0.6.0, fcbb603 = v0.5.0; file:lines beside each).  Resolution runs through np_launch_resolve
 * with an injected environment; nothing is staged (preview mode), no container runs: only the rendering is tested.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/job/env.h"
#include "nemoperf/job/kind.h" /* np_script_vars */
#include "nemoperf/job/mbridge.h"
#include "nemoperf/job/mbridge_perf.h"
#include "nemoperf/launch/config.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/model/mbrows.h"
#include "nemoperf/util/shell.h"

static struct np_recipe_set set;
static char stage[] = "/tmp/np-mbperf-XXXXXX";

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
}

static void teardown(void)
{
    np_recipe_set_free(&set);
}

static enum np_status resolve(const char *const *env, struct np_launch_plan *plan, char *errbuf, size_t cap)
{
    const char *e[40];
    char spv[200];
    snprintf(spv, sizeof spv, "STAGE_PATH=%s", stage);
    size_t n = 0;
    e[n++] = spv;
    for (; *env; env++)
        e[n++] = *env;
    e[n] = NULL;
    struct np_launch_opts o = {.now = 1700000000, .synth_path = "/bin/true", .preview = 1};
    struct np_error err;
    memset(&err, 0, sizeof err);
    enum np_status st = np_launch_resolve(&set, np_env_list, (void *)e, &o, plan, &err);
    snprintf(errbuf, cap, "%s", st == NP_OK ? "" : err.text);
    return st;
}

static const char *var(const struct np_launch_config *c, const char *name)
{
    static struct np_script_var vars[NP_SCRIPT_MAX_VARS];
    size_t n = np_script_vars(c, vars, NP_SCRIPT_MAX_VARS);
    for (size_t i = 0; i < n; i++)
        if (strcmp(vars[i].name, name) == 0)
            return vars[i].value;
    return NULL;
}

/* The argument after flag in argv, or NULL. */
static const char *arg_after(char **argv, const char *flag)
{
    for (size_t i = 0; argv && argv[i]; i++)
        if (strcmp(argv[i], flag) == 0)
            return argv[i + 1];
    return NULL;
}

static int has_arg(char **argv, const char *a)
{
    for (size_t i = 0; argv && argv[i]; i++)
        if (strcmp(argv[i], a) == 0)
            return 1;
    return 0;
}

START_TEST(test_v6_row_command_and_env)
{
    /* 26.08 DeepSeek V3 MXFP8 GB300 256: bootstrap.py, the executor's offline env only (executors.py:87-91,161-163) */
    const char *env[] = {"RECIPE=deepseek_v3", "DTYPE=MXFP8", "GPU_TYPE=gb300", "JOB_TOTAL_GPUS=256", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_ptr_nonnull(c->mb);
    ck_assert_str_eq(c->mb->container, "26.08"); /* default: the newest container with the row */
    ck_assert_int_eq(c->tp, 1);
    ck_assert_int_eq(c->pp, 2);
    ck_assert_int_eq(c->gbs, 4096);
    ck_assert_int_eq(c->gpus_per_node, 4);
    ck_assert_int_eq(c->nodes, 64);
    ck_assert_int_eq(np_mbridge_segment(c), 16); /* largest divisor of 64 nodes <= 18 (executors.py:168-177) */
    ck_assert_int_eq(np_mbridge_numa_divisor(c->gpu_type), 2);
    ck_assert_ptr_null(np_mbridge_perf_cpus(c));
    char **argv = np_mbridge_perf_argv(c);
    ck_assert_ptr_nonnull(argv);
    ck_assert_str_eq(argv[0], "python");
    ck_assert_msg(strstr(argv[1], "/src/Megatron-Bridge-51885cf132b2814188b6855c25a8588254274c2a/scripts/performance/"
                                  "bootstrap.py"), "%s", argv[1]);
    ck_assert_str_eq(arg_after(argv, "-ms"), "50");
    ck_assert_str_eq(arg_after(argv, "-mr"), "deepseek_v3");
    ck_assert_str_eq(arg_after(argv, "-c"), "fp8_mx");
    ck_assert(has_arg(argv, "--offline"));
    ck_assert(!has_arg(argv, "train.manual_gc=true")); /* v0.6.0 run_script.py:63-64 sets it itself */
    np_strv_free(argv);
    ck_assert_str_eq(var(c, "HF_HUB_OFFLINE"), "1");
    ck_assert_str_eq(var(c, "TRANSFORMERS_OFFLINE"), "1");
    ck_assert_ptr_null(var(c, "TORCH_NCCL_AVOID_RECORD_STREAMS")); /* the recipe's, set by bootstrap.py:43-50 */
    ck_assert_ptr_null(var(c, "NCCL_NET_GDR_LEVEL"));              /* GB200 only */
    char *pp = np_mbridge_pythonpath(c);
    ck_assert_msg(strstr(pp, "/scripts/performance:") && strstr(pp, "51885cf132b2814188b6855c25a8588254274c2a/src"),
                  "%s", pp);
    free(pp);
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_v6_gb200_gdr)
{
    const char *env[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.08", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(var(c, "NCCL_NET_GDR_LEVEL"), "PHB"); /* executors.py:151-153 */
    ck_assert_str_eq(var(c, "NCCL_NET_GDR_C2C"), "1");
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_v5_env_plugin)
{
    /* 26.06 Llama 3.1 405B FP8-CS GB300 256 (PP 8): run_script.py, PERF_ENV_VARS + PerfEnvPlugin */
    const char *env[] = {"RECIPE=llama31_405b", "DTYPE=FP8", "GPU_TYPE=gb300", "CONTAINER=26.06", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_int_eq(c->gpus, 256);
    ck_assert_int_eq(c->pp, 8);
    char **argv = np_mbridge_perf_argv(c);
    ck_assert_msg(strstr(argv[1], "fcbb6031103d0ca845c1a54d4fee55ecfcca17b6/scripts/performance/run_script.py"), "%s",
                  argv[1]);
    ck_assert_str_eq(arg_after(argv, "-cv"), "v2");
    ck_assert(has_arg(argv, "train.manual_gc=true")); /* perf_plugins.py:194-199 */
    ck_assert(has_arg(argv, "train.manual_gc_interval=100"));
    np_strv_free(argv);
    ck_assert_str_eq(var(c, "TORCH_NCCL_AVOID_RECORD_STREAMS"), "1");      /* executors.py:39-50 */
    ck_assert_str_eq(var(c, "HF_HUB_OFFLINE"), "1");                       /* executors.py:120-122 */
    ck_assert_str_eq(var(c, "CUDA_DEVICE_MAX_CONNECTIONS"), "32");         /* Blackwell: perf_plugins.py:263-268 */
    ck_assert_str_eq(var(c, "NVTE_FWD_LAYERNORM_SM_MARGIN"), "16");        /* perf_plugins.py:528 */
    ck_assert_str_eq(var(c, "NCCL_P2P_NET_CHUNKSIZE"), "2097152");         /* 405B, PP > 1: 543-549 */
    ck_assert_str_eq(var(c, "NVTE_NORM_FWD_USE_CUDNN"), "1");              /* kept: 405B fp8_cs on GB: 332-334 */
    char *pp = np_mbridge_pythonpath(c);
    ck_assert_msg(strstr(pp, "/scripts/performance") && !strstr(pp, "/src:") &&
                  strcmp(pp + strlen(pp) - 4, "/src") != 0, "%s", pp); /* setup_experiment.py:699-704 */
    free(pp);
    np_launch_plan_free(&plan);
}
END_TEST

/* VR200 and R100: Megatron-Bridge has recipes (perf_recipes/.../vr200, llama/r100 at 067f987) and no container
 * publishes their rows.  Their NUMA rule is Megatron-Bridge's (executors.py:182: 2 ranks per NUMA node on VR200
 * since PR #5196; /4 on R100), their peak unknown; a launch naming them is refused saying both. */
START_TEST(test_vr200_r100)
{
    ck_assert_int_eq(np_mbridge_numa_divisor("vr200"), 2);
    ck_assert_int_eq(np_mbridge_numa_divisor("VR200"), 2);
    ck_assert_int_eq(np_mbridge_numa_divisor("r100"), 4);
    ck_assert_ptr_null(np_mb_gpu_unpublished("gb300"));
    for (size_t i = 0; np_mb_unpublished_gpus[i]; i++) {
        const char *t = np_mb_gpu_unpublished(np_mb_unpublished_gpus[i]);
        ck_assert_ptr_nonnull(t);
        ck_assert_ptr_nonnull(strstr(t, "peak TFLOP/s: unknown"));
        ck_assert_ptr_nonnull(strstr(t, "no container publishes"));
    }
    ck_assert_ptr_nonnull(strstr(np_mb_gpu_unpublished("vr200"), "4 GPUs per node, 2 ranks per NUMA node"));
    struct np_launch_plan plan;
    char e[4096];
    const char *v[] = {"RECIPE=llama3_8b", "DTYPE=bf16", "GPU_TYPE=vr200", NULL};
    ck_assert_int_eq(resolve(v, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "GPU_TYPE=vr200: llama3_8b is not published for this GPU type (vr200: ") &&
                      strstr(e, "peak TFLOP/s: unknown"),
                  "%s", e);
}
END_TEST

START_TEST(test_v5_h100_and_b300)
{
    struct np_launch_plan plan;
    char e[4096];
    /* H100 Llama 3.1 405B: Hopper with TP > 1 and no a2a overlap: 1 connection (perf_plugins.py:269-278) */
    const char *h[] = {"RECIPE=llama31_405b", "DTYPE=fp8_cs", "GPU_TYPE=h100", NULL};
    ck_assert_msg(resolve(h, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_int_gt(plan.jobs[0].tp, 1);
    ck_assert_str_eq(var(&plan.jobs[0], "CUDA_DEVICE_MAX_CONNECTIONS"), "1");
    ck_assert_ptr_null(var(&plan.jobs[0], "NVTE_NORM_FWD_USE_CUDNN")); /* dropped: 321-351 */
    ck_assert_int_eq(plan.jobs[0].gpus_per_node, 8);
    ck_assert_int_eq(np_mbridge_numa_divisor("h100"), 4);
    ck_assert_int_eq(np_mbridge_segment(&plan.jobs[0]), 0); /* 8-GPU nodes: no --segment */
    np_launch_plan_free(&plan);
    /* B300 GPT-OSS: numactl -C (executors.py:143-144); B300 DeepSeek V3 v2: PCT binding off (setup_experiment.py:491-496) */
    const char *b[] = {"RECIPE=gpt_oss_120b", "DTYPE=fp8_mx", "GPU_TYPE=b300", NULL};
    ck_assert_msg(resolve(b, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_ptr_nonnull(np_mbridge_perf_cpus(&plan.jobs[0]));
    ck_assert_str_eq(np_mbridge_perf_cpus(&plan.jobs[0]), " -C $((SLURM_LOCALID * 16)),$((SLURM_LOCALID * 16 + 1))");
    char *s = NULL;
    struct np_error err;
    ck_assert_msg(np_script_render(&plan.jobs[0], &s, &err) == NP_OK, "%s", err.text);
    ck_assert_msg(strstr(s, "numactl --cpunodebind=$((SLURM_LOCALID/4)) --membind=$((SLURM_LOCALID/4)) -C "), "%s", s);
    free(s);
    np_launch_plan_free(&plan);
    const char *d[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=b300", NULL};
    ck_assert_msg(resolve(d, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->container, "26.06");
    ck_assert_ptr_null(np_mbridge_perf_cpus(&plan.jobs[0]));
    ck_assert_str_eq(var(&plan.jobs[0], "NVLINK_DOMAIN_SIZE"), "8"); /* HybridEP on NVL8 (perf_plugins.py:372-377) */
    ck_assert_str_eq(var(&plan.jobs[0], "NVTE_FWD_LAYERNORM_SM_MARGIN"), "20");
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_v5_b300_cpu_affinity)
{
    /* Every 26.06 B300 row: NCCL_IGNORE_CPU_AFFINITY=1, set for B300 by r0.5.0 4cfb04a (MB v0.5.1
     * scripts/performance/perf_plugins.py:353-354) five minutes before a0faf081e added these rows; no other GPU */
    static const char *const rows[][3] = {
        {"deepseek_v3", "fp8_mx", "b300"},   {"gpt_oss_120b", "fp8_mx", "b300"}, {"qwen3_30b_a3b", "fp8_mx", "b300"},
        {"nemotron_3_nano", "fp8_mx", "b300"}, {"nemotron_3_super", "nvfp4", "b300"},
        {"llama31_405b", "fp8_cs", "gb300"}, {"qwen3_30b_a3b", "fp8_cs", "h100"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct np_launch_plan plan;
        char e[4096], r[64], d[64], g[64];
        snprintf(r, sizeof r, "RECIPE=%s", rows[i][0]);
        snprintf(d, sizeof d, "DTYPE=%s", rows[i][1]);
        snprintf(g, sizeof g, "GPU_TYPE=%s", rows[i][2]);
        const char *env[] = {r, d, g, "CONTAINER=26.06", NULL};
        ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s: %s", rows[i][0], e);
        const char *v = var(&plan.jobs[0], "NCCL_IGNORE_CPU_AFFINITY");
        if (strcmp(rows[i][2], "b300") == 0)
            ck_assert_msg(v && strcmp(v, "1") == 0, "%s b300: NCCL_IGNORE_CPU_AFFINITY %s", rows[i][0], v ? v : "unset");
        else
            ck_assert_msg(!v, "%s %s: NCCL_IGNORE_CPU_AFFINITY set", rows[i][0], rows[i][2]);
        json_t *pc = np_mbridge_perf_json(&plan.jobs[0]);
        json_t *src = json_object_get(json_object_get(json_object_get(pc, "env_origin"), "NCCL_IGNORE_CPU_AFFINITY"),
                                      "source");
        ck_assert_int_eq(src != NULL, v != NULL);
        if (src)
            ck_assert_msg(strstr(json_string_value(src), "4cfb04a"), "%s", json_string_value(src));
        json_decref(pc);
        np_launch_plan_free(&plan);
    }
}
END_TEST

START_TEST(test_profile_checkpoint_steps)
{
    const char *env[] = {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.08",
                         "ENABLE_PROFILE=true", "DISABLE_PERFRUN=true", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    char **argv = np_mbridge_command(&plan.jobs[0]);
    ck_assert(has_arg(argv, "profiling.use_nsys_profiler=true")); /* NsysPlugin, perf_plugins.py:77-85 */
    ck_assert(has_arg(argv, "profiling.profile_ranks=[0]"));
    np_strv_free(argv);
    np_launch_plan_free(&plan);
    const char *ck[] = {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.08",
                        "ENABLE_CHECKPOINT=true", "MAX_STEPS=20", "GPUS_PER_NODE=8", "JOB_TOTAL_GPUS=8", NULL};
    enum np_status st = resolve(ck, &plan, e, sizeof e);
    if (st == NP_OK) {
        argv = np_mbridge_perf_argv(&plan.jobs[0]);
        ck_assert_str_eq(arg_after(argv, "-ms"), "20");
        ck_assert_str_eq(arg_after(argv, "-gn"), "8");
        ck_assert_str_eq(arg_after(argv, "--save_interval"), "20"); /* run_script.py:308-326 */
        ck_assert_ptr_nonnull(arg_after(argv, "--save_dir"));
        np_strv_free(argv);
    } else {
        ck_assert_msg(strstr(e, "JOB_TOTAL_GPUS=8"), "%s", e); /* no 8-GPU row: refused naming the variable */
    }
    np_launch_plan_free(&plan);
}
END_TEST

/* A profiled row runs as NVIDIA's launcher profiles at its release: NsysPlugin's steps 10 to 11 (v0.5.0
 * argument_parser.py:728-739, v0.6.0 759-770) with -ms still MAX_STEPS, nsys -t cuda-sw,nvtx (v0.5.0
 * setup_experiment.py:672-677, v0.6.0 738-743) and NeMo-Run's arguments (v0.10.0 launcher.py:32-41:
 * --cuda-graph-trace=node --cuda-event-trace=false), the NeMo path's. */
/* 26.06.01 launches on v0.5.0's launcher from r0.5.0 cba825f (the commit that publishes it; its perf_plugins.py,
 * utils/executors.py and setup_experiment.py differ from v0.5.0's only for vr200, B300 and retries): run_script.py
 * of that checkout, PerfEnvPlugin's environment and manual GC, its profile, its Hugging Face files; a container
 * nemoperf does not launch (25.11) is refused naming why, and CONTAINER unset takes 26.06.01 where it has the
 * row. */
START_TEST(test_v5_26_06_01)
{
    const char *env[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.06.01",
                         "ENABLE_PROFILE=true", "DISABLE_PERFRUN=true", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(c->mb->release, "r0.5.0-cba825f");
    ck_assert_str_eq(c->mb->commit, "cba825fddb8fb42e707755f33a760e6dbda91d9d");
    ck_assert_int_eq(c->mb->launchable, 1);
    char **argv = np_mbridge_perf_argv(c);
    ck_assert_msg(strstr(argv[1], "/src/Megatron-Bridge-cba825fddb8fb42e707755f33a760e6dbda91d9d/scripts/performance/"
                                  "run_script.py"), "%s", argv[1]);
    ck_assert(has_arg(argv, "train.manual_gc=true"));
    np_strv_free(argv);
    ck_assert_str_eq(var(c, "CUDA_DEVICE_MAX_CONNECTIONS"), "32");
    ck_assert_str_eq(var(c, "NCCL_NET_GDR_LEVEL"), "PHB");
    ck_assert_str_eq(np_mbridge_perf_nsys_trace(c), "cuda-sw,nvtx");
    np_launch_plan_free(&plan);
    const char *dflt[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "JOB_TOTAL_GPUS=256", NULL};
    ck_assert_msg(resolve(dflt, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->container, "26.08"); /* the newest */
    np_launch_plan_free(&plan);
    const char *q[] = {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_mx", "GPU_TYPE=gb300", "CONTAINER=26.06.01", NULL};
    ck_assert_msg(resolve(q, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->container, "26.06.01");
    np_launch_plan_free(&plan);
}
END_TEST

/* argv is want word for word (a leading %s in a word: the checkout ck). */
static void argv_is(char **argv, const char *const *want, const char *ck)
{
    size_t i = 0;
    for (; want[i]; i++) {
        char w[600]; /* "%s..." is the checkout's path then the rest */
        snprintf(w, sizeof w, "%s%s", strncmp(want[i], "%s", 2) == 0 ? ck : "",
                 strncmp(want[i], "%s", 2) == 0 ? want[i] + 2 : want[i]);
        ck_assert_msg(argv[i] && strcmp(argv[i], w) == 0, "word %zu: %s, expected %s", i, argv[i] ? argv[i] : "(end)",
                      w);
    }
    ck_assert_msg(argv[i] == NULL, "more words from %zu: %s", i, argv[i]);
}

/* The releases before v0.3.0 build their rank command in setup_experiment.py (v0.1.0rc4 :142-159: --config_file
 * ... -a dummy -p dummy -ng; r0.2.0 44dae92 :130-149: its own argv, -a/-p included), run for each row by
 * launcher-env.py --main: launched as those commands, with their executors' numactl (GB300 divides by 4 at
 * r0.2.0: executors.py:121), srun without --container-writable and --segment only beyond 18 nodes (:113-119). */
START_TEST(test_releases_before_v03)
{
    struct np_launch_plan plan;
    char e[4096], ck[300];
    snprintf(ck, sizeof ck, "%s/src/Megatron-Bridge-6725f7049504c3bcf9a65c5aee40aa118bc7a869", stage);
    const char *rc4[] = {"RECIPE=llama3_70b", "DTYPE=fp8_cs", "GPU_TYPE=gb200", "CONTAINER=25.09", NULL};
    ck_assert_msg(resolve(rc4, &plan, e, sizeof e) == NP_OK, "%s", e);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(c->mb->release, "v0.1.0rc4");
    ck_assert_int_eq(c->mb->launchable, 1);
    ck_assert_int_eq(c->max_steps, 100); /* the YAML's train_iters (llama3_70b_llm_pretrain.yaml:25): no -ms */
    const char *want_rc4[] = {"python", "%s/scripts/performance/run_script.py", "--config_file",
                              "%s/scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml", "--model_name",
                              "llama3", "--model_size", "70b", "--compute_dtype", "fp8", "--fp8_recipe", "cs", "--gpu",
                              "gb200", "-a", "dummy", "-p", "dummy", "-ng", "64", "train.manual_gc=true",
                              "train.manual_gc_interval=100", NULL};
    char **argv = np_mbridge_perf_argv(c);
    argv_is(argv, want_rc4, ck);
    np_strv_free(argv);
    ck_assert_str_eq(var(c, "NVTE_FLASH_ATTN"), "1"); /* rc4 PERF_ENV_VARS (executors.py:38-48) */
    ck_assert_str_eq(var(c, "NVTE_NORM_FWD_USE_CUDNN"), "1"); /* kept for Llama 3 70B GB200 FP8-CS (:129-132) */
    ck_assert_str_eq(var(c, "NEMORUN_HOME"), c->experiment_dir);
    ck_assert_ptr_null(var(c, "CUDA_DEVICE_MAX_CONNECTIONS")); /* rc4's PerfEnvPlugin gets no TP/CP: unset */
    ck_assert_int_eq(np_mbridge_perf_writable(c), 0);
    ck_assert_int_eq(np_mbridge_segment(c), 0); /* 16 nodes: one rack */
    np_launch_plan_free(&plan);
    const char *rc4ms[] = {"RECIPE=llama3_70b", "DTYPE=fp8_cs", "GPU_TYPE=gb200", "CONTAINER=25.09", "MAX_STEPS=30",
                           NULL};
    ck_assert_msg(resolve(rc4ms, &plan, e, sizeof e) == NP_OK, "%s", e);
    argv = np_mbridge_perf_argv(&plan.jobs[0]);
    ck_assert(has_arg(argv, "train.train_iters=30") && !has_arg(argv, "-ms"));
    np_strv_free(argv);
    np_launch_plan_free(&plan);
    snprintf(ck, sizeof ck, "%s/src/Megatron-Bridge-44dae92b0cf756d3728fe41d10c9aa8832a55f6a", stage);
    const char *v2[] = {"RECIPE=llama3_70b", "DTYPE=fp8_cs", "GPU_TYPE=gb300", "CONTAINER=25.11",
                        "SBATCH_ACCOUNT=perf", NULL};
    ck_assert_msg(resolve(v2, &plan, e, sizeof e) == NP_OK, "%s", e);
    c = &plan.jobs[0];
    const char *want_v2[] = {"python", "%s/scripts/performance/run_script.py", "-a", "perf", "-p", "dummy", "-m",
                             "llama3", "-s", "70b", "-g", "gb300", "-c", "fp8_cs", "-ng", "64", "-gn", "4", "--task",
                             "pretrain", "-ms", "50", "-gb", "256", "train.manual_gc=true",
                             "train.manual_gc_interval=100", NULL};
    argv = np_mbridge_perf_argv(c);
    argv_is(argv, want_v2, ck);
    np_strv_free(argv);
    ck_assert_str_eq(var(c, "CUDA_DEVICE_MAX_CONNECTIONS"), "32"); /* perf_plugins.py:221-226 */
    ck_assert_str_eq(var(c, "NCCL_P2P_NET_CHUNKSIZE") ? "set" : "unset", "unset"); /* PP 1 */
    char *script = NULL;
    struct np_error err;
    ck_assert(np_script_render(c, &script, &err) == NP_OK);
    ck_assert_msg(strstr(script, "exec numactl --cpunodebind=$((SLURM_LOCALID/4))") &&
                  !strstr(script, "--container-writable") && !strstr(script, "#SBATCH --segment"), "%s", script);
    free(script);
    np_launch_plan_free(&plan);
    const char *v2big[] = {"RECIPE=llama31_405b", "DTYPE=fp8_cs", "GPU_TYPE=gb200", "CONTAINER=25.11", NULL};
    ck_assert_msg(resolve(v2big, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_int_eq(np_mbridge_segment(&plan.jobs[0]), 16); /* 64 nodes */
    np_launch_plan_free(&plan);
    /* the rows the releases cannot run as NVIDIA did are refused, each with its reason */
    const char *mtp[] = {"RECIPE=deepseek_v3", "DTYPE=bf16", "GPU_TYPE=gb200", "CONTAINER=25.11", NULL};
    ck_assert(resolve(mtp, &plan, e, sizeof e) != NP_OK);
    ck_assert_msg(strstr(e, "without MTP") && strstr(e, "deepseek_v3.py:174,220"), "%s", e);
    const char *qwen[] = {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_cs", "GPU_TYPE=h100", "CONTAINER=25.09", NULL};
    ck_assert(resolve(qwen, &plan, e, sizeof e) != NP_OK);
    ck_assert_msg(strstr(e, "VP 24 published, the release config has 12 and the release's parser has no -vp"), "%s", e);
    /* Qwen3 without the HF token the release's launcher asserts: no -hf on r0.2.0's command, no HF_TOKEN, offline */
    const char *q2[] = {"RECIPE=qwen3_235b_a22b", "DTYPE=fp8_cs", "GPU_TYPE=h100", "CONTAINER=25.11", NULL};
    ck_assert_msg(resolve(q2, &plan, e, sizeof e) == NP_OK, "%s", e);
    argv = np_mbridge_perf_argv(&plan.jobs[0]);
    ck_assert(!has_arg(argv, "-hf") && has_arg(argv, "qwen3") && has_arg(argv, "235b_a22b"));
    np_strv_free(argv);
    ck_assert_str_eq(var(&plan.jobs[0], "TRANSFORMERS_OFFLINE"), "1");
    ck_assert_ptr_null(var(&plan.jobs[0], "HF_TOKEN"));
    np_launch_plan_free(&plan);
    /* launchable rows per container (the --list counts) */
    struct np_mbperf_set all;
    struct np_error perr;
    ck_assert(np_mbperf_load(NULL, &all, &perr) == NP_OK);
    int n0911[2] = {0, 0}, t0911[2] = {0, 0};
    for (size_t i = 0; i < all.n; i++)
        for (int k = 0; k < 2; k++)
            if (strcmp(all.rows[i].container, k ? "25.11" : "25.09") == 0) {
                t0911[k]++;
                n0911[k] += all.rows[i].launchable;
            }
    np_mbperf_free(&all);
    ck_assert_int_eq(t0911[0], 28);
    ck_assert_int_eq(n0911[0], 23);
    ck_assert_int_eq(t0911[1], 32);
    ck_assert_int_eq(n0911[1], 28);
}
END_TEST

/* 26.04.01 launches with v0.4.2's own launcher environment (its slurm_executor() and PerfEnvPlugin.setup() run
 * for the row by extract-recipes.py): Llama 3.1 405B GB300 FP8-CS gets the allocator settings v0.4.2 sets per
 * model (perf_plugins.py:265-273) and no NCCL_P2P_NET_CHUNKSIZE, which v0.4.2's second assignment discards
 * (perf_plugins.py:547-554); v0.5.0's rendering would set it.  run_script.py of v0.4.2's checkout, its GC. */
START_TEST(test_v4_26_04_01)
{
    const char *env[] = {"RECIPE=llama31_405b", "DTYPE=fp8_cs", "GPU_TYPE=gb300", "CONTAINER=26.04.01", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_str_eq(c->mb->release, "v0.4.2");
    ck_assert_int_gt(c->pp, 1);
    ck_assert_ptr_null(var(c, "NCCL_P2P_NET_CHUNKSIZE"));
    ck_assert_str_eq(var(c, "PYTORCH_CUDA_ALLOC_CONF"), "expandable_segments:True");
    ck_assert_str_eq(var(c, "NCCL_GRAPH_REGISTER"), "0");
    ck_assert_str_eq(var(c, "CUDA_DEVICE_MAX_CONNECTIONS"), "32");
    char **argv = np_mbridge_perf_argv(c);
    ck_assert_msg(strstr(argv[1], "/src/Megatron-Bridge-c810129341a84e58f4cbed3093f70668a088c028/scripts/performance/"
                                  "run_script.py"), "%s", argv[1]);
    ck_assert(has_arg(argv, "train.manual_gc=true"));
    np_strv_free(argv);
    json_t *pc = np_mbridge_perf_json(c);
    const char *src = json_string_value(
        json_object_get(json_object_get(json_object_get(pc, "env_origin"), "CUDA_DEVICE_MAX_CONNECTIONS"), "source"));
    ck_assert_msg(src && strstr(src, "MB v0.4.2 c810129 scripts/performance/utils/executors.py slurm_executor() and "
                                     "perf_plugins.py PerfEnvPlugin.setup()"), "%s", src ? src : "-");
    json_decref(pc);
    np_launch_plan_free(&plan);
    /* 26.04 (r0.4.0 f171d7d): the same way, and -C on every B300 job, DeepSeek V3 included (no enable_pct_binding
     * yet: utils/executors.py:135-138; v0.4.2 and later turn it off for DeepSeek V3) */
    const char *d[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=b300", "CONTAINER=26.04", NULL};
    ck_assert_msg(resolve(d, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->release, "r0.4.0-f171d7d");
    ck_assert_ptr_nonnull(np_mbridge_perf_cpus(&plan.jobs[0]));
    ck_assert_str_eq(np_mbridge_perf_nsys_trace(&plan.jobs[0]), "cuda-sw,nvtx");
    np_launch_plan_free(&plan);
    const char *d1[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=b300", "CONTAINER=26.04.01", NULL};
    ck_assert_msg(resolve(d1, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_ptr_null(np_mbridge_perf_cpus(&plan.jobs[0])); /* v0.4.2 setup_experiment.py:288-301 */
    np_launch_plan_free(&plan);
    /* 26.02.01 (r0.3.0 1f0cfc3): srun without --container-writable (utils/executors.py:86-89), no --offline (the
     * release's HF_HUB_OFFLINE=0 over TRANSFORMERS_OFFLINE=1), -C on B300; its Qwen3 rows are refused with why
     * (the release requires an HF token for them: setup_experiment.py:247) but shown by --print-config */
    const char *g[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.02.01", NULL};
    ck_assert_msg(resolve(g, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->release, "r0.3.0-1f0cfc3");
    ck_assert_str_eq(var(&plan.jobs[0], "HF_HUB_OFFLINE"), "0");
    ck_assert_str_eq(var(&plan.jobs[0], "TRANSFORMERS_OFFLINE"), "1");
    ck_assert_int_eq(np_mbridge_perf_writable(&plan.jobs[0]), 0);
    char *sc = NULL;
    struct np_error err;
    ck_assert(np_script_render(&plan.jobs[0], &sc, &err) == NP_OK);
    ck_assert_msg(strstr(sc, "--mpi=pmix --no-container-mount-home") && !strstr(sc, "--container-writable"), "%s", sc);
    free(sc);
    np_launch_plan_free(&plan);
    /* Qwen3: the release's launcher wants an HF token (setup_experiment.py:247) and its job reads the tokenizer
     * with it; nemoperf's job reads the staged cache offline instead (TRANSFORMERS_OFFLINE=1, no HF_TOKEN), as
     * v0.4.0's launcher does with --offline, and --print-config says so */
    const char *q[] = {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_cs", "GPU_TYPE=h100", "CONTAINER=26.02.01", NULL};
    ck_assert_msg(resolve(q, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_int_eq(plan.jobs[0].mb->launchable, 1);
    ck_assert_str_eq(var(&plan.jobs[0], "TRANSFORMERS_OFFLINE"), "1");
    ck_assert_ptr_null(var(&plan.jobs[0], "HF_TOKEN"));
    json_t *qj = np_mbridge_json(&plan.jobs[0]);
    const char *qn = json_string_value(json_object_get(qj, "note"));
    ck_assert_msg(qn && strstr(qn, "setup_experiment.py:247") && strstr(qn, "nemoperf writes no token into a job") &&
                  strstr(qn, "setup_experiment.py:281-285"), "%s", qn ? qn : "(none)");
    json_decref(qj);
    np_launch_plan_free(&plan);
    /* 26.02 (v0.3.0): its slurm_executor() is 1f0cfc3's line for line */
    const char *l[] = {"RECIPE=llama3_70b", "DTYPE=fp8_cs", "GPU_TYPE=gb200", "CONTAINER=26.02", NULL};
    ck_assert_msg(resolve(l, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->release, "v0.3.0");
    ck_assert_int_eq(np_mbridge_perf_writable(&plan.jobs[0]), 0);
    ck_assert_str_eq(var(&plan.jobs[0], "NCCL_NET_GDR_LEVEL"), "PHB");
    np_launch_plan_free(&plan);
}
END_TEST

START_TEST(test_profile_as_released)
{
    const char *rows[][6] = {{"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.08", NULL, NULL},
                             {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.06", NULL, NULL}};
    for (size_t i = 0; i < 2; i++) {
        const char *env[10];
        size_t n = 0;
        for (const char *const *r = rows[i]; *r; r++)
            env[n++] = *r;
        env[n++] = "ENABLE_PROFILE=true";
        env[n++] = "DISABLE_PERFRUN=true";
        env[n] = NULL;
        struct np_launch_plan plan;
        char e[4096];
        ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
        char **argv = np_mbridge_command(&plan.jobs[0]);
        ck_assert(has_arg(argv, "profiling.profile_step_start=10"));
        ck_assert(has_arg(argv, "profiling.profile_step_end=11"));
        ck_assert_str_eq(arg_after(argv, "-ms"), "50");
        np_strv_free(argv);
        char *s = NULL;
        struct np_error err;
        ck_assert(np_script_render(&plan.jobs[0], &s, &err) == NP_OK);
        ck_assert_msg(strstr(s, "nsys profile -s none -t cuda-sw,nvtx --force-overwrite=true "
                                "--capture-range=cudaProfilerApi --capture-range-end=stop --cuda-graph-trace=node "
                                "--cuda-event-trace=false -o ") != NULL, "%s", s);
        free(s);
        json_t *j = np_mbridge_json(&plan.jobs[0]), *nsys = json_object_get(j, "nsys");
        ck_assert_str_eq(json_string_value(json_object_get(nsys, "trace")), "cuda-sw,nvtx");
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(nsys, "source")), i ? "v0.5.0" : "v0.6.0"));
        json_decref(j);
        np_launch_plan_free(&plan);
    }
    const char *late[] = {"RECIPE=qwen3_30b_a3b", "DTYPE=fp8_mx", "GPU_TYPE=gb200", "CONTAINER=26.08",
                          "ENABLE_PROFILE=true", "MAX_STEPS=8", NULL};
    struct np_launch_plan plan;
    char e[4096];
    ck_assert_int_eq(resolve(late, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "PROFILE_STOP_STEP=11") && strstr(e, "MAX_STEPS=8"), "%s", e);
    np_launch_plan_free(&plan);
    ck_assert_ptr_null(np_mbridge_perf_profile("v9.9.9"));
    /* every release the rows name has NVIDIA's profile */
    struct np_mbperf_set all;
    struct np_error perr;
    ck_assert(np_mbperf_load(NULL, &all, &perr) == NP_OK);
    for (size_t i = 0; i < all.n; i++)
        ck_assert_msg(np_mbridge_perf_profile(all.rows[i].release), "%s: release %s has no profile entry",
                      all.rows[i].container, all.rows[i].release);
    np_mbperf_free(&all);
    ck_assert_str_eq(np_mbridge_perf_profile("v0.3.0")->trace, "nvtx,cuda");
}
END_TEST

static char lora_missing[2][1700];
static size_t lora_nmissing;

static enum np_status lora_missing_fn(void *ctx, const char *what)
{
    (void)ctx;
    if (strstr(what, "LoRA") && lora_nmissing < 2)
        snprintf(lora_missing[lora_nmissing++], sizeof lora_missing[0], "%s", what);
    return NP_OK;
}

/* The 26.06 LoRA rows train on packed SQuAD from a converted checkpoint, as NVIDIA's reproduction passes them
 * (exemplar-performance e249aa3 llama3/finetune/launch.sh:188-200); until both are there the launch names them
 * and how NVIDIA makes them.  The SFT rows' data is said to have no NVIDIA source; pretraining takes no --data. */
START_TEST(test_lora_data)
{
    const char *env[] = {"RECIPE=llama3_70b", "TASK=lora", "CONTAINER=26.06", "GPU_TYPE=h100", NULL};
    struct np_launch_plan plan;
    char e[4096], want[400];
    ck_assert_msg(resolve(env, &plan, e, sizeof e) == NP_OK, "%s", e);
    char **argv = np_mbridge_perf_argv(&plan.jobs[0]);
    snprintf(want, sizeof want, "%s/mbridge/checkpoints/llama3_70b", stage);
    ck_assert_str_eq(arg_after(argv, "--pretrained_checkpoint"), want);
    ck_assert_str_eq(arg_after(argv, "--data"), "squad_packed");
    snprintf(want, sizeof want, "%s/mbridge/datasets", stage);
    ck_assert_str_eq(arg_after(argv, "--dataset_root"), want);
    ck_assert_str_eq(arg_after(argv, "--task"), "lora");
    np_strv_free(argv);
    lora_nmissing = 0;
    ck_assert(np_mbridge_check_staged(&plan.jobs[0], lora_missing_fn, NULL) == NP_OK);
    ck_assert_int_eq(lora_nmissing, 2);
    ck_assert_ptr_nonnull(strstr(lora_missing[0], "mbridge/checkpoints/llama3_70b"));
    ck_assert_ptr_nonnull(strstr(lora_missing[0], "convert_checkpoints.py import"));
    ck_assert_ptr_nonnull(strstr(lora_missing[1], "mbridge/datasets/rajpurkar___squad"));
    json_t *j = np_mbridge_json(&plan.jobs[0]), *d = json_object_get(j, "data");
    ck_assert_str_eq(json_string_value(json_object_get(d, "value")), "squad_packed");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(d, "source")), "launch.sh:188-200"));
    json_decref(j);
    np_launch_plan_free(&plan);
    const char *sft[] = {"RECIPE=llama3_70b", "TASK=sft", "CONTAINER=26.06", "GPU_TYPE=h100", NULL};
    ck_assert_msg(resolve(sft, &plan, e, sizeof e) == NP_OK, "%s", e);
    argv = np_mbridge_perf_argv(&plan.jobs[0]);
    ck_assert_ptr_null(arg_after(argv, "--data"));
    np_strv_free(argv);
    j = np_mbridge_json(&plan.jobs[0]);
    d = json_object_get(j, "data");
    ck_assert_str_eq(json_string_value(json_object_get(d, "value")), "mock");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(d, "source")), "No NVIDIA source names the data"));
    json_decref(j);
    lora_nmissing = 0;
    ck_assert(np_mbridge_check_staged(&plan.jobs[0], lora_missing_fn, NULL) == NP_OK);
    ck_assert_int_eq(lora_nmissing, 0);
    np_launch_plan_free(&plan);
}
END_TEST

/* The source of a 26.08 override the release config makes itself says it is a no-op (share/nemoperf/megatron-bridge/
 * notes.tsv: Nemotron 3 Ultra's EP/GBS/MBS, GPT-OSS's CP), and DeepSeek V4 Flash's rows say the recipe changed
 * after the summary (cea3a730). */
static json_t *print_mbridge(const char *const *env, struct np_launch_plan *plan)
{
    char e[4096];
    ck_assert_msg(resolve(env, plan, e, sizeof e) == NP_OK, "%s", e);
    return np_mbridge_json(&plan->jobs[0]);
}

START_TEST(test_release_notes)
{
    struct np_launch_plan plan;
    const char *ultra[] = {"RECIPE=nemotron_3_ultra", "GPU_TYPE=gb200", "CONTAINER=26.08", NULL};
    json_t *j = print_mbridge(ultra, &plan), *sets = json_object_get(j, "settings");
    const char *ep = json_string_value(json_object_get(json_object_get(sets, "model.expert_model_parallel_size"), "source"));
    const char *mb = json_string_value(json_object_get(json_object_get(sets, "train.micro_batch_size"), "source"));
    ck_assert_msg(strstr(ep, "a no-op") && strstr(ep, "nemotronh.py:227-229") && !strstr(ep, "leaves to its base"),
                  "%s", ep);
    ck_assert_msg(strstr(mb, "a no-op") && strstr(mb, "common.py:126"), "%s", mb);
    ck_assert(json_is_null(json_object_get(j, "note")));
    json_decref(j);
    np_launch_plan_free(&plan);
    const char *gptoss[] = {"RECIPE=gpt_oss_120b", "GPU_TYPE=gb300", "CONTAINER=26.08", NULL};
    j = print_mbridge(gptoss, &plan);
    const char *cp = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "settings"), "model.context_parallel_size"), "source"));
    ck_assert_msg(strstr(cp, "a no-op") && strstr(cp, "h100/gpt_oss.py:188"), "%s", cp);
    json_decref(j);
    np_launch_plan_free(&plan);
    const char *v4[] = {"RECIPE=deepseek_v4_flash", "GPU_TYPE=gb300", "CONTAINER=26.08", NULL};
    j = print_mbridge(v4, &plan);
    const char *note = json_string_value(json_object_get(j, "note"));
    ck_assert_msg(note && strstr(note, "cea3a730") && strstr(note, "5796c06"), "%s", note ? note : "(none)");
    json_decref(j);
    np_launch_plan_free(&plan);
}
END_TEST

/* NVIDIA's executor runs print_sha.sh before the rank command from v0.4.2 on (executors.py v0.4.2:136-137,
 * v0.5.0:138-139, v0.6.0:179-180), not before (r0.4.0 f171d7d has none). */
START_TEST(test_print_sha)
{
    const char *rows[][5] = {{"RECIPE=qwen3_30b_a3b", "GPU_TYPE=gb200", "DTYPE=fp8_mx", "CONTAINER=26.08", NULL},
                             {"RECIPE=qwen3_30b_a3b", "GPU_TYPE=gb200", "DTYPE=fp8_mx", "CONTAINER=26.06", NULL}};
    for (size_t i = 0; i < 2; i++) {
        struct np_launch_plan plan;
        char e[4096];
        ck_assert_msg(resolve(rows[i], &plan, e, sizeof e) == NP_OK, "%s", e);
        char *s = NULL;
        struct np_error err;
        ck_assert(np_script_render(&plan.jobs[0], &s, &err) == NP_OK);
        ck_assert_msg(strstr(s, "bash -c 'bash /opt/Megatron-Bridge/docker/common/print_sha.sh repo_status.json; "
                                "exec numactl") != NULL, "%s: %s", rows[i][3], s);
        free(s);
        np_launch_plan_free(&plan);
    }
    /* by release, every row of the data: from v0.4.2 on, not before (r0.4.0 f171d7d, v0.3.0 ... have none) */
    struct np_mbperf_set all;
    struct np_error perr;
    ck_assert(np_mbperf_load(NULL, &all, &perr) == NP_OK);
    for (size_t i = 0; i < all.n; i++) {
        struct np_launch_config c;
        memset(&c, 0, sizeof c);
        c.mb = &all.rows[i];
        const char *rel = all.rows[i].release;
        int want = strcmp(rel, "v0.4.2") == 0 || strstr(rel, "0.5.") || strcmp(rel, "v0.6.0") == 0;
        ck_assert_msg((np_mbridge_perf_pre_cmd(&c) != NULL) == want, "%s %s", all.rows[i].container, rel);
    }
    np_mbperf_free(&all);
}
END_TEST

START_TEST(test_refusals)
{
    struct np_launch_plan plan;
    char e[4096];
    const char *nv[] = {"RECIPE=deepseek_v3", "DTYPE=nvfp4", "GPU_TYPE=gb300", "CONTAINER=26.08", NULL};
    ck_assert_int_eq(resolve(nv, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "DTYPE=nvfp4") && strstr(e, "allowed: fp8_mx"), "%s", e);
    np_launch_plan_free(&plan);
    const char *ct[] = {"RECIPE=deepseek_v3", "CONTAINER=24.12", NULL};
    ck_assert_int_eq(resolve(ct, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "CONTAINER=24.12") && strstr(e, "26.08, 26.06"), "%s", e);
    np_launch_plan_free(&plan);
    const char *g[] = {"RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb300", "JOB_TOTAL_GPUS=100", NULL};
    ck_assert_int_eq(resolve(g, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "JOB_TOTAL_GPUS=100") && strstr(e, "256"), "%s", e);
    np_launch_plan_free(&plan);
    const char *r[] = {"RECIPE=nosuch", "CONTAINER=26.08", NULL};
    ck_assert_int_eq(resolve(r, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "RECIPE=nosuch") && strstr(e, "deepseek_v3"), "%s", e);
    np_launch_plan_free(&plan);
    /* NeMo's names keep their meaning: RECIPE=llama3 without CONTAINER is NeMo's recipe */
    const char *nemo[] = {"RECIPE=llama3", "MODEL_SIZE=70b", "DTYPE=fp8", NULL};
    enum np_status st = resolve(nemo, &plan, e, sizeof e);
    ck_assert_msg(st != NP_OK || !plan.jobs[0].mb, "%s", e);
    np_launch_plan_free(&plan);
    /* with CONTAINER, RECIPE=llama3 MODEL_SIZE=70b names Megatron-Bridge's llama3_70b */
    const char *mb[] = {"RECIPE=llama3", "MODEL_SIZE=70b", "CONTAINER=26.06", "TASK=sft", "GPU_TYPE=h100", NULL};
    ck_assert_msg(resolve(mb, &plan, e, sizeof e) == NP_OK, "%s", e);
    ck_assert_str_eq(plan.jobs[0].mb->recipe, "llama3_70b");
    ck_assert_str_eq(plan.jobs[0].mb->task, "sft");
    np_launch_plan_free(&plan);
}
END_TEST

/* Read what fn writes on stderr (notes) into buf. */
static void stderr_of(void (*fn)(void *), void *arg, char *buf, size_t cap)
{
    char path[] = "/tmp/np-mbperf-err-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, buf, cap - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
}

struct cv_case {
    const char *const *env;
    enum np_status st;
    char e[4096];
    const char *cv;
    int gbs;
    char *script;
};

static void cv_resolve(void *arg)
{
    struct cv_case *k = arg;
    struct np_launch_plan plan;
    k->st = resolve(k->env, &plan, k->e, sizeof k->e);
    k->cv = NULL;
    k->gbs = 0;
    k->script = NULL;
    if (k->st == NP_OK) {
        static char cv[16];
        snprintf(cv, sizeof cv, "%s", plan.jobs[0].mb->config_variant ? plan.jobs[0].mb->config_variant : "");
        k->cv = cv;
        k->gbs = plan.jobs[0].gbs;
        struct np_error err;
        ck_assert_msg(np_script_render(&plan.jobs[0], &k->script, &err) == NP_OK, "%s", err.text);
    }
    np_launch_plan_free(&plan);
}

/* CONFIG_VARIANT (-cv) chooses between the two 26.06 DeepSeek V3 GB300 MXFP8 256-GPU rows: v2 GBS 4096
 * (archive:112), v1 run with -gb 15360 (archive:113).  Unset: Megatron-Bridge v0.5.0's own default, v2
 * (argument_parser.py:904-910), said with both rows' GBS.  GBS chooses too; a contradicting one is refused. */
START_TEST(test_config_variant)
{
#define DSV3 "RECIPE=deepseek_v3", "DTYPE=fp8_mx", "GPU_TYPE=gb300", "JOB_TOTAL_GPUS=256"
    char note[8192];
    const char *v1[] = {"CONTAINER=26.06", DSV3, "CONFIG_VARIANT=v1", NULL};
    struct cv_case k = {.env = v1};
    stderr_of(cv_resolve, &k, note, sizeof note);
    ck_assert_msg(k.st == NP_OK, "%s", k.e);
    ck_assert_str_eq(k.cv, "v1");
    ck_assert_int_eq(k.gbs, 15360);
    ck_assert_msg(strstr(k.script, "'-cv' 'v1'") && strstr(k.script, "'-gb' '15360'"), "%s", k.script);
    ck_assert_msg(!strstr(note, "CONFIG_VARIANT not set"), "%s", note);
    free(k.script);
    const char *v2[] = {"CONTAINER=26.06", DSV3, "CONFIG_VARIANT=V2", NULL};
    k = (struct cv_case){.env = v2};
    cv_resolve(&k);
    ck_assert_msg(k.st == NP_OK, "%s", k.e);
    ck_assert_str_eq(k.cv, "v2");
    ck_assert_int_eq(k.gbs, 4096);
    ck_assert_msg(strstr(k.script, "'-cv' 'v2'") && !strstr(k.script, "'-gb'"), "%s", k.script);
    free(k.script);
    /* unset: v2, Megatron-Bridge's default, said with every row and its GBS */
    const char *none[] = {"CONTAINER=26.06", DSV3, NULL};
    k = (struct cv_case){.env = none};
    stderr_of(cv_resolve, &k, note, sizeof note);
    ck_assert_msg(k.st == NP_OK, "%s", k.e);
    ck_assert_str_eq(k.cv, "v2");
    ck_assert_msg(strstr(note, "CONFIG_VARIANT not set") && strstr(note, "v2 (GBS 4096") &&
                  strstr(note, "v1 (GBS 15360") && strstr(note, "argument_parser.py:904-910"), "%s", note);
    free(k.script);
    /* CONFIG_VARIANT alone picks the container that has it (26.08 publishes no variant) */
    const char *nocont[] = {DSV3, "CONFIG_VARIANT=v1", NULL};
    k = (struct cv_case){.env = nocont};
    cv_resolve(&k);
    ck_assert_msg(k.st == NP_OK, "%s", k.e);
    ck_assert_int_eq(k.gbs, 15360);
    free(k.script);
    /* GBS chooses the row */
    const char *gbs[] = {"CONTAINER=26.06", DSV3, "GBS=15360", NULL};
    k = (struct cv_case){.env = gbs};
    stderr_of(cv_resolve, &k, note, sizeof note);
    ck_assert_msg(k.st == NP_OK, "%s", k.e);
    ck_assert_str_eq(k.cv, "v1");
    ck_assert_msg(!strstr(note, "CONFIG_VARIANT not set"), "%s", note);
    free(k.script);
    /* refusals, each naming both values */
    static const struct {
        const char *env[3];
        const char *want[3];
    } bad[] = {
        {{"CONFIG_VARIANT=v1", "GBS=4096"}, {"GBS=4096", "GBS 15360", "allowed: 15360"}},
        {{"GBS=1000"}, {"GBS=1000", "GBS 4096, 15360", "allowed: 4096, 15360"}},
        {{"CONFIG_VARIANT=v2", "MBS=2"}, {"MBS=2", "MBS 1", "allowed: 1"}},
        {{"CONFIG_VARIANT=v3"}, {"CONFIG_VARIANT=v3", "v2, v1", NULL}},
        {{"GBS=abc"}, {"GBS=abc", "not a positive integer", NULL}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *env[10] = {"CONTAINER=26.06", DSV3};
        size_t n = 5;
        for (size_t j = 0; j < 3 && bad[i].env[j]; j++)
            env[n++] = bad[i].env[j];
        k = (struct cv_case){.env = env};
        cv_resolve(&k);
        ck_assert_msg(k.st == NP_E_INVALID, "case %zu resolved", i);
        for (size_t j = 0; j < 3 && bad[i].want[j]; j++)
            ck_assert_msg(strstr(k.e, bad[i].want[j]), "case %zu: want '%s' in: %s", i, bad[i].want[j], k.e);
    }
    /* 26.08 rows have no variant; a NeMo recipe none of these */
    const char *v6[] = {"CONTAINER=26.08", DSV3, "CONFIG_VARIANT=v1", NULL};
    k = (struct cv_case){.env = v6};
    cv_resolve(&k);
    ck_assert_int_eq(k.st, NP_E_INVALID);
    ck_assert_msg(strstr(k.e, "CONFIG_VARIANT=v1") && strstr(k.e, "without a config variant"), "%s", k.e);
    const char *nemo[] = {"RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=fp8", "JOB_TOTAL_GPUS=8", "GBS=512", NULL};
    k = (struct cv_case){.env = nemo};
    cv_resolve(&k);
    ck_assert_int_eq(k.st, NP_E_INVALID);
    ck_assert_msg(strstr(k.e, "GBS=512") && strstr(k.e, "Megatron-Bridge rows only"), "%s", k.e);
#undef DSV3
}
END_TEST

/* Every path that refuses a RECIPE names Megatron-Bridge's recipes too, nearest first. */
START_TEST(test_recipe_did_you_mean)
{
    struct np_launch_plan plan;
    char e[4096];
    const char *typo[] = {"RECIPE=deepsek_v3", NULL};
    ck_assert_int_eq(resolve(typo, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "did you mean deepseek_v3") && strstr(e, "NeMo recipes: ") &&
                  strstr(e, "Megatron-Bridge recipes: ") && strstr(e, "llama31_405b"), "%s", e);
    np_launch_plan_free(&plan);
    const char *ct[] = {"RECIPE=deepsek_v3", "CONTAINER=26.06", NULL};
    ck_assert_int_eq(resolve(ct, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "did you mean deepseek_v3?") && strstr(e, "CONTAINER=26.06"), "%s", e);
    np_launch_plan_free(&plan);
    const char *fam[] = {"RECIPE=qwen3", NULL};
    ck_assert_int_eq(resolve(fam, &plan, e, sizeof e), NP_E_INVALID);
    ck_assert_msg(strstr(e, "did you mean qwen3_30b_a3b (Megatron-Bridge), qwen3_235b_a22b (Megatron-Bridge)?"), "%s", e);
    np_launch_plan_free(&plan);
}
END_TEST

int main(void)
{
    if (!mkdtemp(stage))
        return EXIT_FAILURE;
    Suite *s = suite_create("mbperf");
    TCase *tc = tcase_create("rows");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_v6_row_command_and_env);
    tcase_add_test(tc, test_v5_b300_cpu_affinity);
    tcase_add_test(tc, test_v5_26_06_01);
    tcase_add_test(tc, test_v4_26_04_01);
    tcase_add_test(tc, test_releases_before_v03);
    tcase_add_test(tc, test_v6_gb200_gdr);
    tcase_add_test(tc, test_v5_env_plugin);
    tcase_add_test(tc, test_v5_h100_and_b300);
    tcase_add_test(tc, test_vr200_r100);
    tcase_add_test(tc, test_profile_checkpoint_steps);
    tcase_add_test(tc, test_profile_as_released);
    tcase_add_test(tc, test_lora_data);
    tcase_add_test(tc, test_release_notes);
    tcase_add_test(tc, test_print_sha);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_config_variant);
    tcase_add_test(tc, test_recipe_did_you_mean);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    rmdir(stage);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
