/* check_workload_automodel.c - RECIPE=automodel MODEL=<config>: every seed-001 row renders its job.
 *
 * Each published row (model x GPU count) resolves and renders an sbatch script with one task per
 * node, the AutoModel container, torchrun of benchmark.py from /opt/Automodel with the row's YAML,
 * and the overrides that pin its batch sizes and warm-up; never the `automodel` CLI.  The container
 * is a stand-in file (no NeMo container can exist here): only its path is rendered.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/job/automodel.h"
#include "nemoperf/launch/config.h"
#include "nemoperf/launch/script.h"

static struct np_recipe_set set;
static char stage[] = "/tmp/np-check-amw-XXXXXX";
static char image[600];

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_dir("recipes", &set, &err) == NP_OK, "%s", err.text);
    ck_assert_ptr_nonnull(mkdtemp(stage));
    snprintf(image, sizeof image, "%s/automodel.sqsh", stage);
    FILE *f = fopen(image, "w");
    fputs("stand-in", f);
    fclose(f);
    /* what ./setup stages (31-setup-automodel.sh tests that): config.json, or the weights' index */
    const struct np_recipe *r = np_recipe_find(&set, "automodel");
    ck_assert_ptr_nonnull(r);
    for (size_t m = 0; m < r->nmodels; m++) {
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "mkdir -p '%s/hf/%s' && echo '{}' > '%s/hf/%s/%s'", stage, r->models[m].hf_repo,
                 stage, r->models[m].hf_repo,
                 r->models[m].automodel->from_pretrained ? "model.safetensors.index.json" : "config.json");
        ck_assert_int_eq(system(cmd), 0);
    }
}

static void teardown(void)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", stage);
    ck_assert_int_eq(system(cmd), 0);
    np_recipe_set_free(&set);
}

static char *render(const char *model, int gpus, const char *token, struct np_error *err, enum np_status *st)
{
    char e_stage[700], e_img[700], e_model[200], e_gpus[64];
    snprintf(e_stage, sizeof e_stage, "STAGE_PATH=%s", stage);
    snprintf(e_img, sizeof e_img, "RUN_CONF_IMAGE=%s", image);
    snprintf(e_model, sizeof e_model, "MODEL=%s", model);
    snprintf(e_gpus, sizeof e_gpus, "JOB_TOTAL_GPUS=%d", gpus);
    const char *env[] = {"RECIPE=automodel", e_stage, e_img, e_model, e_gpus, token, NULL};
    struct np_launch_opts o = {0};
    o.now = 1776400000;
    struct np_launch_plan plan;
    *st = np_launch_resolve(&set, np_env_list, (void *)env, &o, &plan, err);
    char *text = NULL;
    if (*st == NP_OK) {
        ck_assert_uint_eq(plan.n, 1);
        ck_assert_int_eq(np_script_render(&plan.jobs[0], &text, err), NP_OK);
    }
    np_launch_plan_free(&plan);
    return text;
}

START_TEST(test_every_row_renders)
{
    const struct np_recipe *r = np_recipe_find(&set, "automodel");
    ck_assert_ptr_nonnull(r);
    int rows = 0;
    for (size_t m = 0; m < r->nmodels; m++)
        for (size_t i = 0; i < r->models[m].nrows; i++) {
            const struct np_model *mp = &r->models[m];
            const struct np_config_row *row = &mp->rows[i];
            struct np_error err;
            enum np_status st;
            char *t = render(mp->size, row->gpus, "HF_TOKEN=hf_stand_in_token_never_written", &err, &st);
            ck_assert_msg(st == NP_OK, "%s x%d: %s", mp->size, row->gpus, err.text);
            char want[512];
            int nodes = row->gpus >= 8 ? row->gpus / 8 : 1;
            ck_assert_msg(strstr(t, "#SBATCH --ntasks-per-node=1\n"), "%s", t);
            snprintf(want, sizeof want, "#SBATCH --nodes=%d\n", nodes);
            ck_assert_msg(strstr(t, want), "%s: %s", want, t);
            ck_assert(strstr(t, "--container-image '") && strstr(t, image));
            ck_assert(strstr(t, "--container-workdir /opt/Automodel"));
            snprintf(want, sizeof want,
                     "\n    'torchrun' \\\n    '--nproc-per-node=%d' \\\n    '--nnodes=%d' \\\n    "
                     "'--rdzv_backend=c10d' \\\n    --rdzv_endpoint=\"$MASTER_ADDR\"':13742' \\\n",
                     row->gpus < 8 ? row->gpus : 8, nodes);
            ck_assert_msg(strstr(t, want), "%s: %s", want, t);
            ck_assert(strstr(t, "\nMASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"));
            ck_assert(strstr(t, "'nemo_automodel/recipes/llm/benchmark.py'"));
            snprintf(want, sizeof want, "'-c' 'examples/llm_benchmark/%s'", np_automodel_yaml(mp, row));
            ck_assert_msg(strstr(t, want), "%s", want);
            snprintf(want, sizeof want, "'--step_scheduler.global_batch_size=%d'", row->gbs);
            ck_assert(strstr(t, want));
            snprintf(want, sizeof want, "'--step_scheduler.local_batch_size=%d'", row->lbs);
            ck_assert(strstr(t, want));
            snprintf(want, sizeof want, "'--benchmark.warmup_steps=%d'", mp->automodel->warmup_steps);
            ck_assert(strstr(t, want));
            snprintf(want, sizeof want, "'--step_scheduler.max_steps=%d'", mp->automodel->max_steps);
            ck_assert(strstr(t, want));
            snprintf(want, sizeof want, "pretrained_model_name_or_path=%s/hf/%s'", stage, mp->hf_repo);
            ck_assert_msg(strstr(t, want), "%s", want);
            ck_assert(strstr(t, ".err'"));
            ck_assert_ptr_null(strstr(t, "automodel "));    /* never the CLI */
            ck_assert_ptr_null(strstr(t, "nemo_automodel.cli"));
            ck_assert_ptr_null(strstr(t, "hf_stand_in_token"));
            free(t);
            rows++;
        }
    ck_assert_int_eq(rows, 15);
    /* the DeepSeek V3 1024-GPU row runs its own YAML */
    const struct np_model *ds = np_model_find(r, "deepseek_v3_te_deepep");
    ck_assert_str_eq(np_automodel_yaml(ds, np_row_find(ds, "h100", NP_DTYPE_BF16, 1024)),
                     "deepseek/deepseek_v3_te_deepep_1024.yaml");
    ck_assert_str_eq(np_automodel_yaml(ds, np_row_find(ds, "h100", NP_DTYPE_BF16, 256)),
                     "deepseek/deepseek_v3_te_deepep.yaml");
}
END_TEST

START_TEST(test_validation)
{
    struct np_error err;
    enum np_status st;
    char *t = render("qwen3_moe_30b_te_deepep", 8, NULL, &err, &st); /* no HF_TOKEN: the job reads staged files */
    ck_assert_msg(st == NP_OK, "%s", err.text);
    ck_assert_ptr_null(strstr(t, "HF_TOKEN=")); /* only the comment names it */
    free(t);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm '%s/hf/meta-llama/Llama-3.1-8B/model.safetensors.index.json'", stage);
    ck_assert_int_eq(system(cmd), 0);
    t = render("llama3_1_8b_peft_benchmark", 1, NULL, &err, &st); /* weights not staged */
    ck_assert_int_eq(st, NP_E_INVALID);
    ck_assert_ptr_null(t);
    ck_assert_msg(strstr(err.text, "reads the weights of meta-llama/Llama-3.1-8B") && strstr(err.text, "not staged") &&
                      strstr(err.text, "MODEL=llama3_1_8b_peft_benchmark") && strstr(err.text, "HF_TOKEN"),
                  "%s", err.text);
    t = render("qwen3_moe_30b_te_deepep", 16, NULL, &err, &st);
    ck_assert_int_eq(st, NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "16"), "%s", err.text);
    t = render("qwen3_moe", 8, NULL, &err, &st);
    ck_assert_int_eq(st, NP_E_INVALID);
    ck_assert_msg(strstr(err.text, "MODEL=qwen3_moe: recipe automodel has no such model") &&
                      strstr(err.text, "qwen3_moe_30b_te_deepep"),
                  "%s", err.text); /* the variable, the value and the allowed names */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("workload_automodel");
    TCase *tc = tcase_create("workload_automodel");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_every_row_renders);
    tcase_add_test(tc, test_validation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
