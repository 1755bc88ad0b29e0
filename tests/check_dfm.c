/* check_dfm.c - NeMo DFM's Wan 2.1 14B: FLOPs, calibration, the recipe rows against their YAMLs, the rendered
 * Megatron-Bridge job, and Megatron-Bridge's log lines read back.
 *
 * Values: NVIDIA's calibration 1.65907e11 FLOPs a video token (DFM b96cf8f: 787.59e12 / 4747.17); the count of
 * flops_dit.c by hand below.  The job is rendered from an injected environment with a STAGE_PATH holding what
 * ./setup stages (empty folders and files stand in for the checkouts and the image: no container here).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/job/dfm.h"
#include "nemoperf/job/mbridge.h"
#include "nemoperf/job/dfm_automodel_log.h"
#include "nemoperf/job/mbridge_log.h"
#include "nemoperf/launch/config.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/model/model_flops.h"
#include "nemoperf/parse/automodel_log.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/parse/scan.h"

#define CALIBRATION 1.65907e11
#define TOKENS 37440

static struct np_recipe_set set;
static struct np_ref_table ref;
static const struct np_model *wan;
static char tmp[] = "/tmp/np-dfm-XXXXXX";
static char stage[1024];

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
    ck_assert_msg(np_ref_load_default(&ref, &err) == NP_OK, "reference: %s", err.text);
    const struct np_recipe *r = np_recipe_find(&set, "wan2.1");
    ck_assert_ptr_nonnull(r);
    wan = np_model_find(r, "14b");
    ck_assert_ptr_nonnull(wan);
    ck_assert_ptr_nonnull(wan->mbridge);
    ck_assert(mkdtemp(tmp));
    snprintf(stage, sizeof stage, "%s/stage", tmp);
    char cmd[4096];
    /* what ./setup stages: the image, the three checkouts, the pip folder (empty stand-ins) */
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/pip/wan2.1-14b/site-packages' && : > '%s/nvidia+nemo+25.11.sqsh' && echo x > '%s/nvidia+nemo+25.11.sqsh'",
             stage, stage, stage);
    ck_assert(system(cmd) == 0);
    for (size_t i = 0; i < wan->mbridge->nrepos; i++) {
        char *d = np_mbridge_checkout_dir(stage, &wan->mbridge->repos[i]);
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", d);
        free(d);
        ck_assert(system(cmd) == 0);
    }
}

static void teardown(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ck_assert(system(cmd) == 0);
    np_recipe_set_free(&set);
    np_ref_free(&ref);
}

/* The DiT count per video token by hand (h 5120, f 13824, L 40, s 37440, T 512, text_dim 4096, patch 64):
 * per layer 12h^2 s + 4 s^2 h + 4 T h^2 + 4 s T h + 4 s h f; outside 2s*64h*2 (patch, head) + 2T(4096h + h^2)
 * + 2(256h + h^2) + 12h^2; x 3. */
START_TEST(test_dit_flops_by_hand)
{
    const double h = 5120, f = 13824, L = 40, s = TOKENS, T = 512;
    double layer = 12 * h * h * s + 4 * s * s * h + 4 * T * h * h + 4 * s * T * h + 4 * s * h * f;
    double outside = 2 * s * 64 * h * 2 + 2 * T * (4096 * h + h * h) + 2 * (256 * h + h * h) + 12 * h * h;
    double want = 3 * (L * layer + outside);
    double got = np_model_flops_row(wan, &wan->rows[0], TOKENS);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
    /* per token 1.65173e11: 0.44 % below NVIDIA's calibration (facts/dfm.md section 3) */
    ck_assert_double_eq_tol(got / TOKENS, 1.65173e11, 0.00001e11);
    ck_assert_double_eq_tol((got / TOKENS / CALIBRATION - 1) * 100, -0.442, 0.001);
    /* attention is per sample: a missing DiT field gives NAN, not a number */
    struct np_arch_extra x = wan->xa;
    x.text_len = 0;
    ck_assert(isnan(np_flops_dit(&wan->arch, &x, TOKENS)));
}
END_TEST

/* The 2025-11-19 rows: their tokens/s/GPU x the calibration gives their TFLOP/s (one calculator), and parse's
 * count gives it within 0.5 %; np_ref_find never returns them. */
START_TEST(test_superseded_rows_calibrate)
{
    double per_token = np_model_flops_row(wan, &wan->rows[0], TOKENS) / TOKENS;
    int n = 0;
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_ref_row *p = &ref.rows[i];
        if (strcmp(p->recipe, "wan2.1") != 0 || !p->superseded)
            continue;
        n++;
        ck_assert_str_eq(p->superseded, "2025-11-19");
        ck_assert_double_eq_tol(p->tokens_per_s_per_gpu * CALIBRATION / 1e12, p->model_tflops_per_gpu, 0.01);
        double mine = p->tokens_per_s_per_gpu * per_token / 1e12;
        ck_assert_msg(fabs(mine / p->model_tflops_per_gpu - 1) < 0.005, "%s %d: %.2f vs %.2f", p->gpu_type, p->gpus,
                      mine, p->model_tflops_per_gpu);
        const struct np_ref_row *now = np_ref_find(&ref, "wan2.1", "14b", NP_DTYPE_BF16, p->gpu_type, p->gpus);
        ck_assert(now != p);
    }
    ck_assert_int_eq(n, 3);
    const struct np_ref_row *gb200 = np_ref_find(&ref, "wan2.1", "14b", NP_DTYPE_BF16, "gb200", 32);
    ck_assert_ptr_nonnull(gb200);
    ck_assert_double_eq_tol(gb200->model_tflops_per_gpu, 899.62, 1e-9);
}
END_TEST

/* "key: value" of a flat two-level YAML section.key, or NULL. */
static const char *yaml_get(const char *text, const char *section, const char *key, char *buf, size_t size)
{
    char head[64], item[96];
    snprintf(head, sizeof head, "\n%s:\n", section);
    snprintf(item, sizeof item, "\n  %s: ", key);
    char *t = malloc(strlen(text) + 2);
    ck_assert_ptr_nonnull(t);
    t[0] = '\n';
    strcpy(t + 1, text);
    const char *sec = strstr(t, head), *end = sec ? strstr(sec + strlen(head), "\n\n") : NULL;
    const char *v = sec ? strstr(sec, item) : NULL;
    const char *res = NULL;
    if (v && (!end || v < end)) {
        v += strlen(item);
        size_t n = strcspn(v, " #\n");
        snprintf(buf, size, "%.*s", (int)n, v);
        res = buf;
    }
    free(t);
    return res;
}

/* Every Megatron-Core row is what its shipped YAML (DFM f8c1c09) sets: TP, SP, PP, CP, GBS, MBS, FSDP. */
START_TEST(test_rows_match_yaml)
{
    int n = 0;
    for (size_t i = 0; i < wan->nrows; i++) {
        const struct np_config_row *r = &wan->rows[i];
        if (np_dfm_row_automodel(r)) {
            ck_assert_ptr_null(r->yaml);
            continue;
        }
        char *path = np_dfm_conf_source(r);
        ck_assert_ptr_nonnull(path);
        FILE *f = fopen(path, "r");
        ck_assert_msg(f != NULL, "%s", path);
        char text[8192];
        size_t len = fread(text, 1, sizeof text - 1, f);
        text[len] = '\0';
        fclose(f);
        char b[64];
#define YAML_INT(sec, key, want)                                                                                  \
    do {                                                                                                          \
        const char *v_ = yaml_get(text, sec, key, b, sizeof b);                                                   \
        ck_assert_msg(v_ && atoi(v_) == (want), "%s: %s.%s = %s, row has %d", path, sec, key, v_ ? v_ : "absent", \
                      (want));                                                                                    \
    } while (0)
        YAML_INT("model", "tensor_model_parallel_size", r->tp);
        YAML_INT("model", "pipeline_model_parallel_size", r->pp);
        YAML_INT("model", "context_parallel_size", r->cp);
        YAML_INT("train", "global_batch_size", r->gbs);
        YAML_INT("train", "micro_batch_size", r->mbs);
        YAML_INT("model", "num_layers", wan->arch.layers);
        YAML_INT("model", "hidden_size", wan->arch.hidden);
        YAML_INT("model", "ffn_hidden_size", wan->arch.ffn_hidden);
        YAML_INT("model", "num_attention_heads", wan->arch.heads);
#undef YAML_INT
        const char *sp = yaml_get(text, "model", "sequence_parallel", b, sizeof b);
        ck_assert_msg(sp && strcmp(sp, r->sp ? "true" : "false") == 0, "%s: sequence_parallel", path);
        const char *fsdp = yaml_get(text, "ddp", "use_megatron_fsdp", b, sizeof b);
        ck_assert_msg((fsdp && strcmp(fsdp, "true") == 0) == (r->fsdp == 1), "%s: use_megatron_fsdp", path);
        ck_assert_int_eq(r->tp * r->pp * r->cp * r->dp, r->gpus);
        ck_assert_int_eq(r->gpus_per_node, strncmp(r->gpu_type, "gb", 2) == 0 ? 4 : 8);
        free(path);
        n++;
    }
    ck_assert_int_eq(n, 4);
}
END_TEST

static struct np_launch_config *resolve(const char *const *env, struct np_launch_plan *plan, enum np_status want,
                                        char *errbuf, size_t errsize)
{
    const char *e[40];
    char spv[1100];
    snprintf(spv, sizeof spv, "STAGE_PATH=%s", stage);
    size_t n = 0;
    e[n++] = spv;
    e[n++] = "RECIPE=wan2.1";
    for (; *env; env++)
        e[n++] = *env;
    e[n] = NULL;
    struct np_launch_opts o = {.now = 1700000000, .synth_path = "/bin/true"};
    struct np_error err;
    enum np_status st = np_launch_resolve(&set, np_env_list, (void *)e, &o, plan, &err);
    if (errbuf)
        snprintf(errbuf, errsize, "%s", st == NP_OK ? "" : err.text);
    ck_assert_msg(st == want, "resolve: %d, %s", st, st == NP_OK ? "" : err.text);
    return st == NP_OK ? &plan->jobs[0] : NULL;
}

static char *render(const char *const *env, struct np_launch_plan *plan)
{
    struct np_launch_config *c = resolve(env, plan, NP_OK, NULL, 0);
    char *s = NULL;
    struct np_error err;
    ck_assert_msg(np_script_render(c, &s, &err) == NP_OK, "render: %s", err.text);
    return s;
}

/* The GB200 row: 8 nodes, one task each running torchrun over 4 GPUs without numactl or PMI, as DFM's README
 * (f8c1c09 README_perf_test.md:8-19,105), --segment 8, the pinned checkouts on PYTHONPATH in order,
 * pretrain_wan.py with the row's YAML, 50 iterations, no checkpoint; the script is valid sh. */
START_TEST(test_render_gb200)
{
    struct np_launch_plan plan;
    const char *env[] = {"GPU_TYPE=gb200", NULL};
    char *s = render(env, &plan);
    const struct np_launch_config *c = &plan.jobs[0];
    ck_assert_int_eq(c->gpus, 32);
    ck_assert_int_eq(c->nodes, 8);
    ck_assert_int_eq(c->dtype, NP_DTYPE_BF16);
    ck_assert_ptr_nonnull(strstr(s, "#SBATCH --nodes=8\n#SBATCH --ntasks-per-node=1\n"));
    ck_assert_ptr_nonnull(strstr(s, "#SBATCH --segment=8\n"));
    ck_assert_ptr_nonnull(strstr(s, "srun --ntasks-per-node=1"));
    ck_assert_ptr_nonnull(strstr(s, "\n    --no-container-mount-home --container-writable"));
    ck_assert_ptr_null(strstr(s, "--mpi=pmix"));
    ck_assert_ptr_null(strstr(s, "numactl --"));
    ck_assert_ptr_nonnull(strstr(s, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)"));
    ck_assert_ptr_nonnull(strstr(s, "bash -c 'exec \"$@\"' mbridge \\\n    'torchrun' \\\n    "
                                    "'--nproc_per_node=4' \\\n    '--nnodes=8' \\\n    '--rdzv_backend=c10d' \\\n    "
                                    "--rdzv_endpoint=\"$MASTER_ADDR\"':29500' \\\n    '"));
    const char *dfm = strstr(s, "/src/DFM-9eaace14995a724c982fe53726a909be2edc93cb:");
    const char *mb = strstr(s, "/src/Megatron-Bridge-953aabf75c0500180dc14a6a76cf9e7e7c4baec7/src:");
    const char *mlm = strstr(s, "/src/Megatron-LM-2d398b42fd4237fffb553109563d73ac099751c3:");
    ck_assert(dfm && mb && mlm && dfm < mb && mb < mlm);
    ck_assert_ptr_nonnull(strstr(s, "/examples/megatron/recipes/wan/pretrain_wan.py' \\\n    '--mock' \\\n    "
                                    "'--training-mode' 'pretrain' \\\n    '--config-file' "));
    ck_assert_ptr_nonnull(strstr(s, "/code/gb200_perf_pretrain_mock.yaml'"));
    ck_assert_ptr_nonnull(strstr(s, "'train.train_iters=50'"));
    ck_assert_ptr_nonnull(strstr(s, "'checkpoint.save=null'"));
    ck_assert_ptr_null(strstr(s, "nsys"));
    ck_assert_ptr_nonnull(strstr(s, "export NVTE_FUSED_ATTN='1'"));
    ck_assert_ptr_nonnull(strstr(s, "--container-env=PYTHONPATH,NVTE_FUSED_ATTN"));
    char path[1200];
    snprintf(path, sizeof path, "%s/script.sh", tmp);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(s, f);
    fclose(f);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "bash -n '%s'", path);
    ck_assert(system(cmd) == 0);
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* The repo of tests/data/dfm/imports.tsv's row named name. */
static const struct np_mbridge_repo *imports_repo(const char *name)
{
    for (size_t i = 0; i < wan->mbridge->nrepos; i++)
        if (strcmp(wan->mbridge->repos[i].name, name) == 0)
            return &wan->mbridge->repos[i];
    ck_abort_msg("tests/data/dfm/imports.tsv: no repo %s in recipes/wan2.1.json", name);
    return NULL;
}

/* Every module pretrain_wan.py imports from the pinned checkouts is found first on the job's PYTHONPATH in the
 * checkout of its repository, laid out as at the pinned commit (tests/data/dfm/imports.tsv: Megatron-Bridge's
 * package under src/, so a checkout's root supplies nothing and the image's Megatron-Bridge 0.2.0 would be
 * imported, which lacks megatron.bridge.data.energon); and the image's /opt/Megatron-Bridge and /opt/Megatron-LM
 * are the pinned checkouts, as NVIDIA's README replaces them (DFM f8c1c09 README_perf_test.md:34-42). */
START_TEST(test_imports_pinned)
{
    FILE *f = fopen("tests/data/dfm/imports.tsv", "r");
    ck_assert_msg(f != NULL, "tests/data/dfm/imports.tsv (run from the source tree)");
    char line[1200], repo[8][64], mod[8][300], cmd[1400];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        char path[300];
        ck_assert_int_lt(n, 8);
        ck_assert_int_eq(sscanf(line, "%63[^\t]\t%299[^\t]\t%299[^\t]", repo[n], mod[n], path), 3);
        char *d = np_mbridge_checkout_dir(stage, imports_repo(repo[n]));
        snprintf(cmd, sizeof cmd, "f='%s/%s' && mkdir -p \"${f%%/*}\" && : >\"$f\"", d, path);
        free(d);
        ck_assert(system(cmd) == 0);
        n++;
    }
    fclose(f);
    ck_assert_int_ge(n, 8);
    struct np_launch_plan plan;
    const char *env[] = {"GPU_TYPE=gb200", NULL};
    char *s = render(env, &plan);
    const char *pp = strstr(s, "export PYTHONPATH='");
    ck_assert_ptr_nonnull(pp);
    pp += strlen("export PYTHONPATH='");
    char *path = strndup(pp, strcspn(pp, "'"));
    for (size_t i = 0; i < n; i++) {
        char *copy = strdup(path), *save = NULL, *found = NULL;
        for (char *e = strtok_r(copy, ":", &save); e && !found; e = strtok_r(NULL, ":", &save)) {
            char *file = NULL;
            struct stat sb;
            ck_assert_int_ge(asprintf(&file, "%s/%s", e, mod[i]), 0);
            if (stat(file, &sb) == 0)
                found = e;
            free(file);
        }
        char *d = np_mbridge_checkout_dir(stage, imports_repo(repo[i]));
        ck_assert_msg(found && strncmp(found, d, strlen(d)) == 0, "%s: found under %s on PYTHONPATH %s, not in %s",
                      mod[i], found ? found : "nothing", path, d);
        free(d);
        free(copy);
    }
    for (size_t i = 0; i < wan->mbridge->nrepos; i++) {
        const struct np_mbridge_repo *r = &wan->mbridge->repos[i];
        int want = strcmp(r->name, "Megatron-Bridge") == 0 || strcmp(r->name, "Megatron-LM") == 0;
        char *d = np_mbridge_checkout_dir(stage, r), mount[1400];
        snprintf(mount, sizeof mount, ",%s:/opt/%s", d, r->name);
        ck_assert_msg(want ? strstr(s, mount) != NULL : strstr(s, mount) == NULL, "%s: %s", mount, s);
        free(d);
    }
    free(path);
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* H100: 128 GPUs by default (the published scale): 16 nodes of torchrun over 8, no --segment; profiling (nsys
 * over each node's torchrun, capturing MB's cudaProfilerApi range) and checkpoints. */
START_TEST(test_render_h100_switches)
{
    struct np_launch_plan plan;
    const char *env[] = {"GPU_TYPE=h100", "ENABLE_PROFILE=true", "MAX_STEPS=20", NULL};
    char *s = render(env, &plan);
    ck_assert_int_eq(plan.jobs[0].gpus, 128);
    ck_assert_ptr_null(strstr(s, "--segment"));
    ck_assert_ptr_nonnull(strstr(s, "'--nproc_per_node=8' \\\n    '--nnodes=16'"));
    ck_assert_ptr_nonnull(strstr(s, "exec nsys profile -s none -t nvtx,cuda"));
    ck_assert_ptr_nonnull(strstr(s, "--capture-range=cudaProfilerApi --capture-range-end=stop --cuda-graph-trace=node "
                                    "--cuda-event-trace=false -o "
                                    "\"$NEMOPERF_PROFILE_DIR\"/profile_node\"$SLURM_NODEID\" \"$@\"'"));
    ck_assert_ptr_nonnull(strstr(s, "'profiling.use_nsys_profiler=true'"));
    ck_assert_ptr_nonnull(strstr(s, "'profiling.profile_ranks=[0]'"));
    ck_assert_ptr_nonnull(strstr(s, "/code/h100_perf_pretrain_mock.yaml'"));
    free(s);
    np_launch_plan_free(&plan);
    const char *env2[] = {"GPU_TYPE=gb300", "ENABLE_CHECKPOINT=true", "NEMOPERF_FORCE_CHECKPOINT=true", NULL};
    s = render(env2, &plan);
    ck_assert_ptr_null(strstr(s, "checkpoint.save=null"));
    ck_assert_ptr_nonnull(strstr(s, "/checkpoints'"));
    ck_assert_ptr_nonnull(strstr(s, "'checkpoint.save_interval=50'"));
    free(s);
    np_launch_plan_free(&plan);
    const char *env3[] = {"GPU_TYPE=b200", "ENABLE_NCCLTRACE=true", NULL};
    s = render(env3, &plan);
    ck_assert_ptr_nonnull(strstr(s, "export NCCL_DEBUG='INFO'"));
    ck_assert_ptr_nonnull(strstr(s, "NCCL_DEBUG,NCCL_DEBUG_SUBSYS"));
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* Bad requests are refused up front, naming the variable; an AutoModel row whose model ./setup did not stage is
 * refused naming the model. */
START_TEST(test_refusals)
{
    struct np_launch_plan plan;
    char why[1200];
    const char *bad[][3] = {
        {"GPU_TYPE=gb200", "JOB_TOTAL_GPUS=64", NULL},
        {"GPU_TYPE=h100", "DTYPE=fp8", NULL},
        {"GPU_TYPE=h100", "JOB_TOTAL_GPUS=16", NULL},
        {"GPU_TYPE=a100", NULL, NULL},
    };
    const char *names[] = {"JOB_TOTAL_GPUS", "DTYPE", "JOB_TOTAL_GPUS", "GPU_TYPE"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        resolve(bad[i], &plan, NP_E_INVALID, why, sizeof why);
        ck_assert_msg(strstr(why, names[i]) != NULL, "case %zu: %s", i, why);
        np_launch_plan_free(&plan);
    }
    ck_assert_ptr_nonnull(strstr(why, "a100") ? why : NULL);
    const char *am[] = {"GPU_TYPE=h100", "JOB_TOTAL_GPUS=8", NULL};
    resolve(am, &plan, NP_E_INVALID, why, sizeof why);
    ck_assert_msg(strstr(why, "Wan-AI/Wan2.1-T2V-14B-Diffusers") && strstr(why, "setup"), "%s", why);
    np_launch_plan_free(&plan);
    /* a checkout ./setup did not stage is named */
    char *d = np_mbridge_checkout_dir(stage, &wan->mbridge->repos[1]);
    ck_assert(rmdir(d) == 0);
    const char *ok[] = {"GPU_TYPE=gb200", NULL};
    resolve(ok, &plan, NP_E_INVALID, why, sizeof why);
    ck_assert_msg(strstr(why, "Megatron-Bridge") && strstr(why, "953aabf75c0500180dc14a6a76cf9e7e7c4baec7"), "%s", why);
    np_launch_plan_free(&plan);
    ck_assert(mkdir(d, 0755) == 0);
    free(d);
}
END_TEST

/* The Hub model folder ./setup stages for the AutoModel rows (its model_index.json, written last). */
static void stage_am_model(void)
{
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/hf/Wan-AI/Wan2.1-T2V-14B-Diffusers' && echo '{}' > "
             "'%s/hf/Wan-AI/Wan2.1-T2V-14B-Diffusers/model_index.json'", stage, stage);
    ck_assert(system(cmd) == 0);
}

/* The AutoModel rows run DFM 9eaace1's AutoModel pre-training under torchrun, one task per node: the row's
 * GBS/LBS/DP, MAX_STEPS through one epoch of MAX_STEPS x GBS mock samples, Automodel a5f0652 and DFM on
 * PYTHONPATH; no numactl, no PMI, no MB profiling overrides (nsys over the run instead). */
START_TEST(test_render_automodel)
{
    stage_am_model();
    struct np_launch_plan plan;
    const char *env[] = {"GPU_TYPE=h100", "JOB_TOTAL_GPUS=64", "MAX_STEPS=30", NULL};
    char *s = render(env, &plan);
    ck_assert_int_eq(plan.jobs[0].gpus, 64);
    ck_assert_ptr_nonnull(strstr(s, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)"));
    ck_assert_ptr_nonnull(strstr(s, "srun --ntasks-per-node=1"));
    ck_assert_ptr_null(strstr(s, "--mpi=pmix"));
    ck_assert_ptr_null(strstr(s, "numactl --"));
    const char *am = strstr(s, "/src/Automodel-a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5:");
    const char *dfm = strstr(s, "/src/DFM-9eaace14995a724c982fe53726a909be2edc93cb:");
    ck_assert(am && dfm && am < dfm);
    ck_assert_ptr_null(strstr(s, "/src/Megatron-LM-"));
    ck_assert_ptr_nonnull(strstr(s, "'torchrun' \\\n    '--nproc-per-node=8' \\\n    '--nnodes=8' \\\n    "
                                    "'--rdzv_backend=c10d' \\\n    --rdzv_endpoint=\"$MASTER_ADDR\"':29500'"));
    ck_assert_ptr_nonnull(strstr(s, "/examples/automodel/pretrain/pretrain.py' \\\n    '-c' '"));
    ck_assert_ptr_nonnull(strstr(s, "/code/automodel_wan2_1_t2v_14b_pretrain_mock.yaml'"));
    ck_assert_ptr_nonnull(strstr(s, "/hf/Wan-AI/Wan2.1-T2V-14B-Diffusers'"));
    ck_assert_ptr_nonnull(strstr(s, "'--step_scheduler.global_batch_size=64'"));
    ck_assert_ptr_nonnull(strstr(s, "'--step_scheduler.local_batch_size=1'"));
    ck_assert_ptr_nonnull(strstr(s, "'--fsdp.dp_size=64'"));
    ck_assert_ptr_nonnull(strstr(s, "'--step_scheduler.num_epochs=1'"));
    ck_assert_ptr_nonnull(strstr(s, "'--data.dataloader.length=1920'"));
    ck_assert_ptr_nonnull(strstr(s, "'--checkpoint.enabled=false'"));
    ck_assert_ptr_null(strstr(s, "profiling."));
    free(s);
    np_launch_plan_free(&plan);
    const char *env2[] = {"GPU_TYPE=h100", "JOB_TOTAL_GPUS=8", "ENABLE_PROFILE=true", NULL};
    s = render(env2, &plan);
    ck_assert_ptr_nonnull(strstr(s, "'--nnodes=1'"));
    ck_assert_ptr_nonnull(strstr(s, "'--step_scheduler.global_batch_size=8'"));
    ck_assert_ptr_nonnull(strstr(s, "exec nsys profile -s none -t nvtx,cuda --force-overwrite=true -o"));
    ck_assert_ptr_null(strstr(s, "cudaProfilerApi"));
    ck_assert_ptr_null(strstr(s, "profiling."));
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* The AutoModel rows' model id does not depend on STAGE_PATH: DFM 9eaace1 dfm/src/automodel/recipes/train.py:87-90
 * runs NeMoWanPipeline.from_config (random weights) when the id contains "wan", so a STAGE_PATH such as
 * /lustre/swan_stage (here <tmp>/swan_stage, a link to the stage) must not reach it: the staged folder is
 * mounted at a fixed path and that path is the id. */
START_TEST(test_automodel_model_id)
{
    stage_am_model();
    char saved[sizeof stage];
    snprintf(saved, sizeof saved, "%s", stage);
    snprintf(stage, sizeof stage, "%s/swan_stage", tmp);
    ck_assert(symlink(saved, stage) == 0);
    struct np_launch_plan plan;
    const char *env[] = {"GPU_TYPE=h100", "JOB_TOTAL_GPUS=8", NULL};
    struct np_launch_config *c = resolve(env, &plan, NP_OK, NULL, 0);
    char **argv = np_mbridge_command(c);
    ck_assert_ptr_nonnull(argv);
    const char *id = NULL;
    for (char **a = argv; *a; a++)
        if (strncmp(*a, "--model.pretrained_model_name_or_path=", 38) == 0)
            id = *a + 38;
    ck_assert_ptr_nonnull(id);
    ck_assert_msg(strstr(id, "wan") == NULL, "the model id %s contains \"wan\" (train.py:87-90)", id);
    ck_assert_str_eq(id, "/nemoperf/hf/Wan-AI/Wan2.1-T2V-14B-Diffusers");
    char *s = NULL, mount[1400];
    struct np_error err;
    ck_assert(np_script_render(c, &s, &err) == NP_OK);
    snprintf(mount, sizeof mount, ",%s/hf/Wan-AI/Wan2.1-T2V-14B-Diffusers:%s'", stage, id);
    ck_assert_msg(strstr(s, mount) != NULL, "no mount %s in %s", mount, s);
    json_t *j = np_mbridge_json(c);
    json_t *m = json_object_get(j, "model.pretrained_model_name_or_path");
    ck_assert_str_eq(json_string_value(json_object_get(m, "value")), id);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(m, "source")), "train.py:87-90"));
    json_decref(j);
    free(s);
    np_strv_free(argv);
    np_launch_plan_free(&plan);
    ck_assert(unlink(stage) == 0);
    snprintf(stage, sizeof stage, "%s", saved);
}
END_TEST

/* --print-config's mbridge object: the YAML's parallelism with its source, nodes x GPUs, container, pins. */
START_TEST(test_print_config_sources)
{
    struct np_launch_plan plan;
    const char *env[] = {"GPU_TYPE=gb200", NULL};
    struct np_launch_config *c = resolve(env, &plan, NP_OK, NULL, 0);
    json_t *j = np_launch_config_json(c);
    ck_assert_ptr_nonnull(j);
    json_t *mb = json_object_get(j, "mbridge");
    ck_assert_ptr_nonnull(mb);
    json_t *cp = json_object_get(mb, "model.context_parallel_size");
    ck_assert_int_eq(json_integer_value(json_object_get(cp, "value")), 2);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(cp, "source")), "gb200_perf_pretrain_mock.yaml"));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(cp, "source")), "f8c1c09"));
    ck_assert(json_is_true(json_object_get(json_object_get(mb, "ddp.use_megatron_fsdp"), "value")));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(mb, "nodes_x_gpus_per_node"), "value")),
                     "8 nodes x 4 GPUs per node");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(mb, "container"), "value")),
                     "nvcr.io#nvidia/nemo:25.11");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(json_object_get(mb, "train.train_iters"), "source")), "10000"));
    json_t *repos = json_object_get(mb, "repos");
    ck_assert_int_eq(json_array_size(repos), 4);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(repos, 2), "commit")),
                     "2d398b42fd4237fffb553109563d73ac099751c3");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(repos, 3), "commit")),
                     "a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5"); /* DFM 9eaace1's 3rdparty/Automodel */
    json_decref(j);
    np_launch_plan_free(&plan);
    /* an AutoModel row: no perf recipe, said so; its batch sizes and DP with the published row as source */
    stage_am_model();
    const char *am[] = {"GPU_TYPE=h100", "JOB_TOTAL_GPUS=8", NULL};
    c = resolve(am, &plan, NP_OK, NULL, 0);
    j = np_mbridge_json(c);
    ck_assert_ptr_nonnull(j);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "perf_recipe")), "pins no performance recipe"));
    ck_assert_str_eq(json_string_value(json_object_get(j, "backend")), "automodel");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "fsdp.dp_size"), "value")), 8);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(json_object_get(j, "fsdp.dp_size"), "source")),
                                 "performance-summary.md:78"));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "data.dataloader.length"), "value")), 400);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "launcher")), "torchrun"));
    json_decref(j);
    np_launch_plan_free(&plan);
}
END_TEST

/* The log writer's lines read back through the scanner: iteration, step time, GBS, loss; memory. */
START_TEST(test_log_lines_read_back)
{
    struct np_buf b;
    np_buf_init(&b);
    for (long i = 1; i <= 3; i++) {
        struct np_mbridge_iter it = {.when = 1700000000, .iteration = i, .train_iters = 3,
                                     .consumed_samples = i * 64, .elapsed_ms = 13812.4 + i, .tflops = -1,
                                     .lr = 5e-6, .gbs = 64, .loss = 0.1, .loss_scale = 1, .grad_norm = 1.5};
        np_mbridge_log_step_time(&b, 13.81, 17.7);
        np_mbridge_log_iteration(&b, &it);
        if (i == 1)
            np_mbridge_log_memory(&b, 31, 1, 61.2, 150.31);
    }
    char *text = np_buf_steal(&b);
    ck_assert_ptr_nonnull(strstr(text, "iteration        2/       3 | consumed samples:          128 | elapsed time "
                                       "per iteration (ms): 13814.4 | learning rate: 5.000000E-06 | global batch "
                                       "size:    64 | lm loss: 1.000000E-01 | loss scale: 1.0 | grad norm: 1.500 |"));
    ck_assert_ptr_nonnull(strstr(text, "Step Time : 13.81s GPU utilization: 17.7MODEL_TFLOP/s/GPU\n"));
    struct np_scan_result res;
    struct np_error err;
    ck_assert(np_scan_init(&err) == NP_OK);
    ck_assert_msg(np_scan_buffer(text, strlen(text), 0, &res, &err) == NP_OK, "%s", err.text);
    ck_assert_uint_eq(res.nsteps, 3);
    ck_assert_int_eq(res.steps[2].iteration, 2);
    ck_assert_int_eq(res.steps[2].total, 2);
    ck_assert_double_eq_tol(res.steps[2].step_time_s, 13.8154, 1e-9);
    ck_assert_int_eq(res.steps[2].global_batch_size, 64);
    ck_assert_double_eq_tol(res.steps[2].loss, 0.1, 1e-12);
    ck_assert_double_eq_tol(res.steps[0].peak_memory_bytes, 150.31e9, 1e3);
    np_scan_result_free(&res);
    free(text);
}
END_TEST

/* DFM's AutoModel loop (job/dfm_automodel_log.c) read back by parse/automodel_log.c: tqdm's states on one
 * '\r'-redrawn line, each a step (GBS = DP x LBS), its time tqdm's s/it (or 1 / it/s), the postfix's loss;
 * with GA 2 (GBS 16 over DP 8) only every second batch ends a step, twice tqdm's time. */
START_TEST(test_automodel_log_read_back)
{
    for (int ga = 1; ga <= 2; ga++) {
        struct np_buf b;
        np_buf_init(&b);
        np_dfm_am_log_setup(&b, 1700000000, 8 * ga, 1, 1, 8);
        struct np_dfm_am_bar bar = {.epoch = 1, .nepochs = 1, .n = 0, .total = 6 * ga};
        np_dfm_am_log_bar(&b, &bar);
        for (long k = 1; k <= 6 * ga; k++) {
            bar.n = k;
            bar.step_s = k < 3 ? 0.25 : 35.32; /* "4.00it/s", then "35.32s/it" */
            bar.elapsed_s += bar.step_s;
            bar.postfix = k >= 2 ? "loss=0.1234, avg=0.1300, lr=5.00e-05, gn=1.23" : NULL;
            np_dfm_am_log_bar(&b, &bar);
        }
        np_buf_append(&b, "\n");
        char *text = np_buf_steal(&b);
        ck_assert_ptr_nonnull(strstr(text, "| 0/"));
        ck_assert_ptr_nonnull(strstr(text, ga == 1 ? "\rEpoch 1/1:  17%|\xe2\x96\x88\xe2\x96\x8b        "
                                                     "| 1/6 [00:00<00:01,  4.00it/s]"
                                                   : "| 1/12 [00:00<00:02,  4.00it/s]"));
        ck_assert_ptr_nonnull(strstr(text, ga == 1 ? "| 6/6 [02:21<00:00, 35.32s/it, loss=0.1234, avg=0.1300, "
                                                     "lr=5.00e-05, gn=1.23]\n"
                                                   : "| 12/12 [05:53<00:00, 35.32s/it, loss=0.1234,"));
        struct np_scan_result res;
        struct np_amlog_summary sum;
        struct np_error err;
        ck_assert_msg(np_amlog_buffers(text, strlen(text), NULL, 0, &res, &sum, &err) == NP_OK, "%s", err.text);
        ck_assert(sum.seen);
        ck_assert_int_eq(sum.gbs, 8 * ga);
        ck_assert_int_eq(sum.dp, 8);
        ck_assert_uint_eq(res.nsteps, 6);
        ck_assert_int_eq(res.steps[5].iteration, 5);
        ck_assert_int_eq(res.steps[5].total, 5);
        ck_assert_int_eq(res.steps[5].gen, NP_GEN_DFMAM);
        ck_assert_double_eq_tol(res.steps[5].step_time_s, 35.32 * ga, 1e-9);
        ck_assert_double_eq_tol(res.steps[0].step_time_s, 0.25 * ga, 1e-9); /* batch 2 at 4 it/s */
        ck_assert_double_eq_tol(res.steps[5].loss, 0.1234, 1e-12);
        np_scan_result_free(&res);
        free(text);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dfm");
    TCase *tc = tcase_create("wan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_dit_flops_by_hand);
    tcase_add_test(tc, test_superseded_rows_calibrate);
    tcase_add_test(tc, test_rows_match_yaml);
    tcase_add_test(tc, test_render_gb200);
    tcase_add_test(tc, test_imports_pinned);
    tcase_add_test(tc, test_render_h100_switches);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_render_automodel);
    tcase_add_test(tc, test_automodel_model_id);
    tcase_add_test(tc, test_automodel_log_read_back);
    tcase_add_test(tc, test_print_config_sources);
    tcase_add_test(tc, test_log_lines_read_back);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
