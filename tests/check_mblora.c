/* check_mblora.c - setup/mbridge_lora.c: which Megatron-Bridge rows get their LoRA inputs made, where, and the job
 * that makes them (only the missing steps, NVIDIA's commands, offline, a GPU node, temporary names renamed).  No
 * stand-in: the plan and the job's argv are pure; the job itself runs in tests/e2e/37-setup-mbridge-lora.sh.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/mbperf.h"
#include "nemoperf/setup/mbridge_lora.h"
#include "nemoperf/util/shell.h"

static const struct np_mbperf_row *find_row(const struct np_mbperf_set *s, const char *ct, const char *recipe,
                                            const char *task)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->rows[i].container, ct) && !strcmp(s->rows[i].recipe, recipe) && !strcmp(s->rows[i].task, task))
            return &s->rows[i];
    return NULL;
}

static char *job_script(const struct np_mblora *p)
{
    struct np_ftprep_job_opts o = {"/img/nvidia+nemo+26.06.sqsh", "/usr/bin/sbatch", NULL, "batch", "/logs", NULL};
    char **argv = np_mblora_job_argv(p, &o);
    ck_assert_ptr_nonnull(argv);
    char *wrap = NULL;
    int gpus = 0;
    for (char **a = argv; *a; a++) {
        gpus |= strcmp(*a, "--gpus-per-node=1") == 0;
        if (!strncmp(*a, "--wrap=", 7))
            wrap = strdup(*a + 7);
    }
    ck_assert_msg(gpus, "the job asks for a GPU");
    np_strv_free(argv);
    ck_assert_ptr_nonnull(wrap);
    return wrap;
}

START_TEST(test_plan_and_job)
{
    struct np_mbperf_set all;
    struct np_error err;
    ck_assert(np_mbperf_load(NULL, &all, &err) == NP_OK);
    char stage[] = "/tmp/np-mblora-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(stage));
    struct np_mblora p;
    const struct np_mbperf_row *pre = find_row(&all, "26.06", "llama3_70b", "sft");
    ck_assert_ptr_nonnull(pre);
    ck_assert_int_eq(np_mblora_plan(stage, pre, &p), 0); /* SFT: mock data, nothing to make */
    const struct np_mbperf_row *lora = find_row(&all, "26.06", "llama3_70b", "lora");
    ck_assert_ptr_nonnull(lora);
    ck_assert_int_eq(np_mblora_plan(stage, lora, &p), 1);
    ck_assert_str_eq(p.hf_repo, "meta-llama/Meta-Llama-3-70B");
    ck_assert(!p.have_ckpt && !p.have_data);
    char want[512];
    snprintf(want, sizeof want, "%s/mbridge/checkpoints/llama3_70b", stage);
    ck_assert_str_eq(p.ckpt, want);
    snprintf(want, sizeof want, "%s/mbridge/datasets/rajpurkar___squad", stage);
    ck_assert_str_eq(p.link, want);
    char *w = job_script(&p);
    ck_assert_ptr_nonnull(strstr(w, "HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1"));
    ck_assert_ptr_nonnull(strstr(w, "load_dataset(sys.argv[1], cache_dir=sys.argv[2])"));
    ck_assert_ptr_nonnull(strstr(w, "--container-writable --no-container-mount-home python3"));
    ck_assert_ptr_nonnull(strstr(w, "/examples/conversion/convert_checkpoints.py' import --hf-model"));
    ck_assert_ptr_nonnull(strstr(w, "/.llama3_70b.converting' --torch-dtype bfloat16\nmv -T \"$tmp\" "));
    ck_assert_msg(strstr(w, "rajpurkar___squad") > strstr(w, "load_dataset"), "the link after the cache");
    free(w);
    /* the data set there: only the conversion */
    char d[600];
    snprintf(d, sizeof d, "%s/mbridge/datasets/squad", stage);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && ln -s squad '%s/mbridge/datasets/rajpurkar___squad'", d, stage);
    ck_assert_int_eq(system(cmd), 0);
    np_mblora_free(&p);
    ck_assert_int_eq(np_mblora_plan(stage, lora, &p), 1);
    ck_assert(p.have_data && !p.have_ckpt);
    w = job_script(&p);
    ck_assert_ptr_null(strstr(w, "load_dataset"));
    ck_assert_ptr_nonnull(strstr(w, "convert_checkpoints.py"));
    free(w);
    np_mblora_free(&p);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", stage);
    ck_assert_int_eq(system(cmd), 0);
    np_mbperf_free(&all);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mblora");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_plan_and_job);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
