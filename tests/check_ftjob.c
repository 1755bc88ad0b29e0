/* check_ftjob.c - the NeMo job of every seed 000 fine-tuning row (TASK=sft|lora).
 *
 * tests/data/nemo/finetune-rows.tsv restates, from facts/seed000.md (not from
 * nemoperf's output), what NVIDIA's v2.3.1 finetune scripts ran for each of the
 * 15 rows: GPUs per node, nodes, pack length, TP/PP/VP, MBS/GBS, CUDA graphs,
 * the FP8 LoRA userbuffers config, LoRA dim/alpha.  Each row is resolved as a
 * user launches it after `TASK=... ./setup` and compared with --print-config,
 * the manifest's config, the driver's arguments and the batch script.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/job/finetune.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/util/shell.h"

#define NCOLS 18
enum { C_SIZE, C_TASK, C_GPU, C_GPUS, C_SYSTEM, C_GPN, C_NODES, C_PACK, C_TP, C_PP, C_VP, C_MBS, C_GBS, C_CG, C_UB,
       C_DIM, C_ALPHA, C_HF };

static struct np_recipe_set set;
static char stage[] = "/tmp/np-ftjob-XXXXXX";
static char rows[32][NCOLS][96];
static int nrows;

static void sh(const char *cmd)
{
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

/* What `TASK=sft|lora ./setup` leaves: the image, the tokenizer, the imported checkpoint
 * (context/ and weights/) and SQuAD packed to each length a row runs. */
static void stage_all(const char *dir)
{
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && echo x > '%s/nvidia+nemo+25.04.sqsh'", dir, dir);
    sh(cmd);
    for (int r = 0; r < nrows; r++) {
        const char *hf = rows[r][C_HF];
        char tok[96];
        snprintf(tok, sizeof tok, "%s", hf);
        char *sl = strchr(tok, '/');
        ck_assert_ptr_nonnull(sl);
        *sl = '\0';
        snprintf(cmd, sizeof cmd,
                 "mkdir -p '%s/hf/%s' '%s/models/%s/context' '%s/models/%s/weights' "
                 "'%s/datasets/squad/packed/%s--%s' && echo '{}' > '%s/hf/%s/config.json' && "
                 "cd '%s/datasets/squad/packed/%s--%s' && : > training_%s.npy && : > validation_%s.npy && "
                 ": > %s_metadata.jsonl",
                 dir, hf, dir, hf, dir, hf, dir, tok, sl + 1, dir, hf, dir, tok, sl + 1, rows[r][C_PACK],
                 rows[r][C_PACK], rows[r][C_PACK]);
        sh(cmd);
    }
}

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_default(&set, &err) == NP_OK, "recipes: %s", err.text);
    ck_assert(mkdtemp(stage));
    FILE *f = fopen("tests/data/nemo/finetune-rows.tsv", "r");
    ck_assert_msg(f != NULL, "tests/data/nemo/finetune-rows.tsv (run from the source tree)");
    char line[2048];
    int header = 1;
    nrows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (header) {
            header = 0;
            continue;
        }
        ck_assert_int_lt(nrows, 32);
        int k = 0;
        for (char *save = NULL, *t = strtok_r(line, "\t", &save); t; t = strtok_r(NULL, "\t", &save), k++) {
            ck_assert_int_lt(k, NCOLS);
            snprintf(rows[nrows][k], sizeof rows[nrows][k], "%s", t);
        }
        ck_assert_int_eq(k, NCOLS);
        nrows++;
    }
    fclose(f);
    stage_all(stage);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", stage);
    sh(cmd);
    np_recipe_set_free(&set);
}

/* Resolve row r as a user launches it: RECIPE, MODEL_SIZE, DTYPE, GPU_TYPE, TASK (no JOB_TOTAL_GPUS:
 * one published scale per system and task). */
static enum np_status resolve(const char *sp_dir, int r, int preview, const char *extra, struct np_launch_plan *plan,
                              struct np_error *err)
{
    char sp[600], ms[96], gt[96], tk[96];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", sp_dir);
    snprintf(ms, sizeof ms, "MODEL_SIZE=%s", rows[r][C_SIZE]);
    snprintf(gt, sizeof gt, "GPU_TYPE=%s", rows[r][C_GPU]);
    snprintf(tk, sizeof tk, "TASK=%s", rows[r][C_TASK]);
    const char *env[] = {sp, "RECIPE=llama3", ms, "DTYPE=fp8", gt, tk, extra, NULL};
    struct np_launch_opts o = {.now = 1700000000, .preview = preview};
    return np_launch_resolve(&set, np_env_list, (void *)env, &o, plan, err);
}

static const char *arg_after(char **argv, const char *opt)
{
    for (size_t i = 0; argv[i]; i++)
        if (strcmp(argv[i], opt) == 0)
            return argv[i + 1] ? argv[i + 1] : "";
    return NULL;
}

static int count_args(char **argv, const char *opt)
{
    int n = 0;
    for (size_t i = 0; argv[i]; i++)
        n += strcmp(argv[i], opt) == 0;
    return n;
}

static long long jint(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : "(not a string)";
}

START_TEST(test_every_finetune_row)
{
    ck_assert_int_eq(nrows, 15); /* seed 000: 6 SFT + 9 LoRA rows */
    int r = _i;
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_msg(resolve(stage, r, 0, NULL, &plan, &err) == NP_OK, "row %d: %s", r, err.text);
    ck_assert_uint_eq(plan.n, 1);
    const struct np_launch_config *c = &plan.jobs[0];
    json_t *cfg = np_launch_config_json(c);
    ck_assert_ptr_nonnull(cfg);
#define ROW_MSG "row %d (%s %s %s)", r, rows[r][C_SIZE], rows[r][C_TASK], rows[r][C_GPU]
    ck_assert_msg(jint(cfg, "gpus") == atoi(rows[r][C_GPUS]), ROW_MSG);
    ck_assert_msg(strcmp(jstr(cfg, "system"), rows[r][C_SYSTEM]) == 0, ROW_MSG);
    ck_assert_msg(strcmp(jstr(cfg, "task"), rows[r][C_TASK]) == 0, ROW_MSG);
    ck_assert_msg(jint(cfg, "pack_len") == atoi(rows[r][C_PACK]), ROW_MSG);
    ck_assert_msg(jint(cfg, "seq_len") == atoi(rows[r][C_PACK]), ROW_MSG);
    char want[600];
    snprintf(want, sizeof want, "finetune_llama3_%s_%s_fp8_%s", rows[r][C_SIZE], rows[r][C_TASK], rows[r][C_GPUS]);
    ck_assert_msg(strcmp(jstr(cfg, "experiment"), want) == 0, "row %d: %s, want %s", r, jstr(cfg, "experiment"), want);
    /* the manifest's "config" carries what the parser needs: task, pack length, the packed .npy */
    json_t *ft = json_object_get(cfg, "finetune");
    ck_assert_msg(json_is_object(ft), ROW_MSG);
    snprintf(want, sizeof want, "%s/datasets/squad/packed/%s/training_%s.npy", stage, rows[r][C_HF], rows[r][C_PACK]);
    for (char *p = strstr(want, "/packed/") + 8; *p; p++)
        if (*p == '/') { /* <org>/<name> -> <org>--<name>: only the first slash after packed/ */
            memmove(p + 1, p, strlen(p) + 1);
            p[0] = p[1] = '-';
            break;
        }
    ck_assert_msg(strcmp(jstr(ft, "packed_train"), want) == 0, "row %d: %s, want %s", r, jstr(ft, "packed_train"),
                  want);
    ck_assert_msg(access(jstr(ft, "packed_train"), R_OK) == 0, ROW_MSG);
    snprintf(want, sizeof want, "%s/models/%s", stage, rows[r][C_HF]);
    ck_assert_msg(strcmp(jstr(ft, "checkpoint"), want) == 0, ROW_MSG);
    ck_assert_msg(strcmp(jstr(ft, "peft_scheme"), strcmp(rows[r][C_TASK], "lora") ? "none" : "lora") == 0, ROW_MSG);
    json_t *lora = json_object_get(ft, "lora");
    if (strcmp(rows[r][C_TASK], "lora") == 0) {
        ck_assert_msg(jint(lora, "dim") == atoi(rows[r][C_DIM]) && jint(lora, "alpha") == atoi(rows[r][C_ALPHA]),
                      ROW_MSG);
        ck_assert_msg(json_array_size(json_object_get(lora, "targets")) == 1 &&
                          strcmp(json_string_value(json_array_get(json_object_get(lora, "targets"), 0)),
                                 "linear_qkv") == 0,
                      ROW_MSG);
    } else {
        ck_assert_msg(json_is_null(lora), ROW_MSG);
    }
    /* the "nemo" object */
    json_t *n = json_object_get(cfg, "nemo");
    ck_assert_msg(jint(n, "gpus_per_node") == atoi(rows[r][C_GPN]) && jint(n, "nodes") == atoi(rows[r][C_NODES]),
                  ROW_MSG);
    ck_assert_msg(jint(n, "tp") == atoi(rows[r][C_TP]) && jint(n, "pp") == atoi(rows[r][C_PP]) &&
                      jint(n, "cp") == 1 && jint(n, "mbs") == atoi(rows[r][C_MBS]) &&
                      jint(n, "gbs") == atoi(rows[r][C_GBS]),
                  ROW_MSG);
    ck_assert_msg(strcmp(rows[r][C_VP], "-") ? jint(n, "vp") == atoi(rows[r][C_VP])
                                             : json_is_null(json_object_get(n, "vp")),
                  ROW_MSG);
    ck_assert_msg(json_is_true(json_object_get(n, "cuda_graphs")) == (strcmp(rows[r][C_CG], "1") == 0), ROW_MSG);
    ck_assert_msg(strcmp(jstr(n, "fp8_recipe"), "current") == 0, ROW_MSG);
    ck_assert_msg(strcmp(rows[r][C_UB], "-") ? strcmp(jstr(n, "tp_comm_overlap_cfg"), rows[r][C_UB]) == 0
                                             : json_is_null(json_object_get(n, "tp_comm_overlap_cfg")),
                  ROW_MSG);
    ck_assert_msg(jint(n, "gc_interval") == 100, ROW_MSG);
    /* the driver's arguments */
    char **argv = np_nemo_driver_args(c);
    ck_assert_ptr_nonnull(argv);
    ck_assert_str_eq(arg_after(argv, "--task"), rows[r][C_TASK]);
    ck_assert_str_eq(arg_after(argv, "--pack-len"), rows[r][C_PACK]);
    ck_assert_str_eq(arg_after(argv, "--gbs"), rows[r][C_GBS]);
    ck_assert_str_eq(arg_after(argv, "--tp"), rows[r][C_TP]);
    ck_assert_str_eq(arg_after(argv, "--vp"), strcmp(rows[r][C_VP], "-") ? rows[r][C_VP] : "none");
    ck_assert_str_eq(arg_after(argv, "--fp8"), "current");
    ck_assert_int_eq(count_args(argv, "--cuda-graphs"), strcmp(rows[r][C_CG], "1") == 0);
    ck_assert_int_eq(count_args(argv, "--flops-callback"), 0); /* pre-training only (utils.py l.401) */
    ck_assert_int_eq(count_args(argv, "--cross-entropy-fusion-te"), 1);
    if (strcmp(rows[r][C_TASK], "lora") == 0) {
        ck_assert_str_eq(arg_after(argv, "--lora-dim"), rows[r][C_DIM]);
        ck_assert_str_eq(arg_after(argv, "--lora-alpha"), rows[r][C_ALPHA]);
        ck_assert_str_eq(arg_after(argv, "--lora-target"), "linear_qkv");
    } else {
        ck_assert_int_eq(count_args(argv, "--lora-dim") + count_args(argv, "--lora-target"), 0);
    }
    /* FP8 LoRA with TP > 1: the userbuffers config and the three model.config overlap settings */
    int ub = strcmp(rows[r][C_UB], "-") != 0;
    ck_assert_int_eq(count_args(argv, "--tp-comm-overlap-cfg"), ub);
    if (ub)
        ck_assert_str_eq(arg_after(argv, "--tp-comm-overlap-cfg"), rows[r][C_UB]);
    int mc = 0;
    for (size_t i = 0; argv[i]; i++)
        if (strcmp(argv[i], "--model-config") == 0 && argv[i + 1])
            mc += strcmp(argv[i + 1], "tp_comm_overlap_disable_qkv=true") == 0 ||
                  strcmp(argv[i + 1], "tp_comm_bulk_dgrad=false") == 0 ||
                  strcmp(argv[i + 1], "tp_comm_overlap_rs_dgrad=true") == 0;
    ck_assert_msg(mc == (ub ? 3 : 0), "row %d: %d LoRA overlap settings", r, mc);
    snprintf(want, sizeof want, "%s/datasets/squad", stage);
    ck_assert_str_eq(arg_after(argv, "--dataset-root"), want);
    np_strv_free(argv);
    /* the batch script runs the driver with the task */
    char *s = NULL;
    ck_assert_int_eq(np_script_render(c, &s, &err), NP_OK);
    snprintf(want, sizeof want, "'/nemo_run/code/nemoperf_nemo.py' \\\n    '--task' '%s'", rows[r][C_TASK]);
    ck_assert_msg(strstr(s, want), "row %d: no [%s]", r, want);
    snprintf(want, sizeof want, "#SBATCH --nodes=%s\n#SBATCH --ntasks-per-node=%s\n", rows[r][C_NODES], rows[r][C_GPN]);
    ck_assert_msg(strstr(s, want), "row %d: no [%s]", r, want);
    free(s);
#undef ROW_MSG
    json_decref(cfg);
    np_launch_plan_free(&plan);
}
END_TEST

/* Profiling and the NCCL trace work as for pre-training. */
START_TEST(test_profile_and_nccltrace)
{
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_msg(resolve(stage, 0, 0, "ENABLE_PROFILE=true", &plan, &err) == NP_OK, "%s", err.text);
    char **argv = np_nemo_driver_args(&plan.jobs[0]);
    /* NVIDIA's own for 25.04 (finetune_llama3_8b.py v2.3.1: NsysPlugin(start_step=5, end_step=6), rank 0) */
    ck_assert_str_eq(arg_after(argv, "--profile-start"), "5");
    ck_assert_str_eq(arg_after(argv, "--profile-stop"), "6");
    ck_assert_str_eq(arg_after(argv, "--profile-ranks"), "1");
    np_strv_free(argv);
    ck_assert_ptr_nonnull(strstr(plan.jobs[0].job_name, "_nsys"));
    ck_assert_ptr_nonnull(strstr(plan.jobs[0].experiment, "finetune_llama3_8b_sft_fp8_8"));
    np_launch_plan_free(&plan);
    ck_assert_msg(resolve(stage, 0, 0, "ENABLE_NCCLTRACE=true", &plan, &err) == NP_OK, "%s", err.text);
    ck_assert_int_eq(plan.jobs[0].max_steps, 5);
    ck_assert_ptr_nonnull(strstr(plan.jobs[0].job_name, "finetune_llama3_8b_sft_fp8_8_nccltrace"));
    char *s = NULL;
    ck_assert_int_eq(np_script_render(&plan.jobs[0], &s, &err), NP_OK);
    ck_assert_ptr_nonnull(strstr(s, "NCCL_DEBUG"));
    free(s);
    np_launch_plan_free(&plan);
}
END_TEST

/* Before `TASK=... ./setup`: a preview lists the checkpoint and the packed data; a launch refuses,
 * naming TASK, the missing thing and the command that makes it. */
START_TEST(test_before_setup)
{
    char dir[700], cmd[4000];
    snprintf(dir, sizeof dir, "%s/bare", stage);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && echo x > '%s/nvidia+nemo+25.04.sqsh' && mkdir -p "
                              "'%s/hf/meta-llama/Llama-3.1-405B' && echo '{}' > '%s/hf/meta-llama/Llama-3.1-405B/config.json'",
             dir, dir, dir, dir);
    sh(cmd);
    int r405 = -1;
    for (int r = 0; r < nrows; r++)
        if (!strcmp(rows[r][C_SIZE], "405b") && !strcmp(rows[r][C_GPU], "h100"))
            r405 = r;
    ck_assert_int_ge(r405, 0);
    struct np_launch_plan plan;
    struct np_error err;
    ck_assert_int_eq(resolve(dir, r405, 1, NULL, &plan, &err), NP_OK);
    char **m = plan.jobs[0].missing;
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m[0], "NeMo checkpoint of meta-llama/Llama-3.1-405B"));
    ck_assert_ptr_nonnull(strstr(m[1], "training_2048.npy"));
    ck_assert_ptr_null(m[2]);
    np_launch_plan_free(&plan);
    ck_assert_int_eq(resolve(dir, r405, 0, NULL, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "TASK=lora") && strstr(err.text, "not imported") && strstr(err.text, "./setup"),
                  "%s", err.text);
    np_launch_plan_free(&plan);
    /* checkpoint there, data not */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/models/meta-llama/Llama-3.1-405B/context'", dir);
    sh(cmd);
    ck_assert_int_eq(resolve(dir, r405, 0, NULL, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "packed to 2048 tokens") && strstr(err.text, "TASK=lora"), "%s", err.text);
    np_launch_plan_free(&plan);
    /* no image staged: ./setup or RUN_CONF_IMAGE, never WORKLOAD=synthetic, which refuses fine-tuning (issue 24) */
    snprintf(dir, sizeof dir, "%s/noimage", stage);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    sh(cmd);
    ck_assert_int_eq(resolve(dir, r405, 0, NULL, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "RUN_CONF_IMAGE") && !strstr(err.text, "WORKLOAD=synthetic"), "%s", err.text);
    np_launch_plan_free(&plan);
}
END_TEST

/* Bad TASK values and combinations are refused with the variable named. */
START_TEST(test_bad_task)
{
    char sp[600];
    snprintf(sp, sizeof sp, "STAGE_PATH=%s", stage);
    struct np_launch_opts o = {.now = 1700000000, .preview = 1};
    struct np_launch_plan plan;
    struct np_error err;
    const char *e1[] = {sp, "RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=fp8", "TASK=dpo", NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e1, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "TASK=dpo") && strstr(err.text, "pretrain, sft, lora"), "%s", err.text);
    np_launch_plan_free(&plan);
    const char *e2[] = {sp, "RECIPE=llama3", "MODEL_SIZE=405b", "DTYPE=fp8", "TASK=sft", NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e2, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "TASK=sft") && strstr(err.text, "MODEL_SIZE=8b"), "%s", err.text);
    np_launch_plan_free(&plan);
    const char *e3[] = {sp, "RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=bf16", "TASK=lora", NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e3, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "DTYPE=bf16"), "%s", err.text);
    np_launch_plan_free(&plan);
    const char *e4[] = {sp, "RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=fp8", "TASK=lora", "JOB_TOTAL_GPUS=16", NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e4, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "JOB_TOTAL_GPUS=16") && strstr(err.text, "allowed: 8"), "%s", err.text);
    np_launch_plan_free(&plan);
    const char *e5[] = {sp, "RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=fp8", "TASK=sft", "WORKLOAD=synthetic", NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e5, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "WORKLOAD=synthetic"), "%s", err.text);
    np_launch_plan_free(&plan);
    /* a fine-tuning job starts from the imported checkpoint, not from LOAD_CHECKPOINT_PATH */
    char ck[700], cmd[1500];
    snprintf(ck, sizeof ck, "%s/ck", stage);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/weights' && : > '%s/weights/__0_0.distcp'", ck, ck);
    sh(cmd);
    char lp[800];
    snprintf(lp, sizeof lp, "LOAD_CHECKPOINT_PATH=%s", ck);
    const char *e7[] = {sp, "RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=fp8", "TASK=sft", "GPU_TYPE=h100", lp, NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e7, &o, &plan, &err), NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "LOAD_CHECKPOINT_PATH=") && strstr(err.text, "TASK=sft"), "%s", err.text);
    np_launch_plan_free(&plan);
    /* TASK=pretrain is the default, spelled out */
    const char *e6[] = {sp, "RECIPE=llama3", "MODEL_SIZE=8b", "DTYPE=fp8", "TASK=PRETRAIN", NULL};
    ck_assert_int_eq(np_launch_resolve(&set, np_env_list, (void *)e6, &o, &plan, &err), NP_OK);
    ck_assert_str_eq(plan.jobs[0].experiment, "pretrain_llama3_8b_fp8_8");
    np_launch_plan_free(&plan);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ftjob");
    TCase *tc = tcase_create("ftjob");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_every_finetune_row, 0, 15);
    tcase_add_test(tc, test_profile_and_nccltrace);
    tcase_add_test(tc, test_before_setup);
    tcase_add_test(tc, test_bad_task);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
