/* check_mbhf.c - the Hugging Face files of the Megatron-Bridge rows (hf-files.tsv) and launch's offline check.
 *
 * The shipped data covers every launchable row of rows-26.08.json and rows-26.06.json; bad data is refused at its
 * line with the field named; the check finds files where huggingface_hub looks with HF_HUB_OFFLINE=1 (a cache
 * tree written here by hand: the same layout ./setup writes, which tests/e2e/34-setup-mbridge.sh stages from the
 * loopback Hub stand-in).
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/model/layout.h"
#include "nemoperf/model/mbhf.h"
#include "nemoperf/model/recipe.h"

static char tmp[256];

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "%s/np-mbhf.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    ck_assert_int_eq(system(cmd), 0);
}

static void put(const char *path, const char *text)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    ck_assert_int_eq(system(cmd), 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_data_covers_every_row)
{
    struct np_mbhf_set s;
    struct np_error err = {0};
    ck_assert_msg(np_mbhf_load(NULL, &s, &err) == NP_OK, "%s:%d: %s", err.source, err.line, err.text);
    char *dir = np_data_path("megatron-bridge");
    ck_assert_ptr_nonnull(dir);
    int rows = 0;
    static const char *const containers[] = {"26.08", "26.06.01", "26.06", "26.04.01", "26.04",
                                             "26.02.01", "26.02", "25.11", "25.09"};
    for (size_t c = 0; c < sizeof containers / sizeof containers[0]; c++) {
        char p[600];
        snprintf(p, sizeof p, "%s/rows-%s.json", dir, containers[c]);
        json_error_t je;
        json_t *j = json_load_file(p, 0, &je);
        ck_assert_msg(j != NULL, "%s: %s", p, je.text);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(j, "rows"), i, r) {
            const char *cont = json_string_value(json_object_get(r, "container"));
            const char *rec = json_string_value(json_object_get(r, "recipe"));
            const char *task = json_string_value(json_object_get(r, "task"));
            const char *rel = json_string_value(json_object_get(r, "mb_release"));
            if (!json_is_true(json_object_get(json_object_get(r, "launch"), "launchable")))
                continue; /* a refused row is never staged */
            ck_assert_msg(np_mbhf_count(&s, cont, rec, task) > 0, "%s %s %s: no Hub files listed", cont, rec, task);
            for (size_t k = 0; k < s.n; k++) /* each row carries its container's release */
                if (np_mbhf_matches(&s.v[k], cont, rec, task))
                    ck_assert_str_eq(s.v[k].release, rel);
            rows++;
        }
        json_decref(j);
    }
    ck_assert_int_eq(rows, 284); /* every launchable row: 233 of 26.02 to 26.08, 28 of 25.11, 23 of 25.09 */
    /* 26.02.01's Kimi K2 (KimiK2Provider, NullTokenizer at r0.3.0 1f0cfc3) reads nothing from the Hub either */
    ck_assert_int_eq((int)np_mbhf_count(&s, "26.02.01", "kimi_k2", "pretrain"), 1);
    /* v0.1.0rc4's recipes read nothing from the Hub (providers, NullTokenizer): said by a "none" line */
    for (size_t k = 0; k < s.n; k++)
        if (np_mbhf_matches(&s.v[k], "25.09", "llama3_70b", NULL))
            ck_assert_int_eq(np_mbhf_none(&s.v[k]), 1);
    /* what the release's recipes read (hf-files.tsv cites the lines): Qwen3 30B-A3B pinned at 26.08 only */
    size_t n = 0;
    for (size_t k = 0; k < s.n; k++)
        if (np_mbhf_matches(&s.v[k], "26.08", "qwen3_30b_a3b", NULL)) {
            ck_assert_str_eq(s.v[k].revision, "ad44e777bcd18fa416d9da3bd8f70d33ebb85d39");
            n++;
        } else if (np_mbhf_matches(&s.v[k], "26.06", "qwen3_30b_a3b", NULL)) {
            ck_assert_str_eq(s.v[k].revision, "main");
        }
    ck_assert_int_eq((int)n, 2); /* config and tokenizer */
    ck_assert_str_eq(np_mbhf_newest_container(&s, "nemotron_3_nano"), "26.08");
    ck_assert_str_eq(np_mbhf_newest_container(&s, "kimi_k2"), "26.06");
    ck_assert_ptr_null(np_mbhf_newest_container(&s, "llama3"));
    free(dir);
    np_mbhf_free(&s);
    np_mbhf_free(&s); /* twice: a freed set is empty */
    np_mbhf_free(NULL);
}
END_TEST

START_TEST(test_paths)
{
    char *h = np_stage_mbridge_hf_home("/stage/");
    ck_assert_str_eq(h, "/stage/mbridge/hf");
    char *r = np_hf_cache_repo_dir(h, "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16");
    ck_assert_str_eq(r, "/stage/mbridge/hf/hub/models--nvidia--NVIDIA-Nemotron-3.5-Lightning-30B-A3B-BF16");
    ck_assert_ptr_null(np_hf_cache_repo_dir(h, ""));
    ck_assert_ptr_null(np_stage_mbridge_hf_home(NULL));
    free(h);
    free(r);
}
END_TEST

static const char hdr[] = "# test\ncontainer\tmb_release\trecipe\ttask\tuse\trepo\trevision\tfiles\tsource\n";

START_TEST(test_bad_data)
{
    static const struct {
        const char *row, *want;
    } cases[] = {
        {"26.08\tv0.6.0\tx\tpretrain\tconfig\tnoslash\tmain\tconfig.json\ts\n", "repo: 'noslash'"},
        {"26.08\tv0.6.0\tx\tpretrain\tweights\ta/b\tmain\tconfig.json\ts\n", "use: 'weights'"},
        {"26.08\tv0.6.0\tx\tpretrain\tconfig\ta/b\tv1\tconfig.json\ts\n", "revision: 'v1'"},
        {"26.08\tv0.6.0\tx\tpretrain\tconfig\ta/b\tmain\t../etc/passwd\ts\n", "files: '../etc/passwd'"},
        {"26.08\tv0.6.0\tx\tpretrain\tconfig\ta/b\tmain\n", "7 columns, expected 9"},
        {"25.09\tv0.1.0rc4\tx\tpretrain\tnone\ta/b\t-\t-\ts\n", "use none: repo, revision and files must be '-'"},
    };
    char path[400];
    snprintf(path, sizeof path, "%s/hf-files.tsv", tmp);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s", hdr, cases[i].row);
        put(path, text);
        struct np_mbhf_set s;
        struct np_error err = {0};
        ck_assert_int_eq(np_mbhf_load(tmp, &s, &err), NP_E_PARSE);
        ck_assert_msg(strstr(err.text, cases[i].want) != NULL, "%s: %s", cases[i].want, err.text);
        ck_assert_int_eq(err.line, 3);
        ck_assert_int_eq((int)s.n, 0);
    }
    put(path, "container\trelease\n");
    struct np_mbhf_set s;
    struct np_error err = {0};
    ck_assert_int_eq(np_mbhf_load(tmp, &s, &err), NP_E_PARSE);
    unlink(path);
    ck_assert_int_eq(np_mbhf_load(tmp, &s, &err), NP_E_IO);
}
END_TEST

START_TEST(test_offline_check)
{
    char path[400], home[400], p[800], what[300];
    snprintf(path, sizeof path, "%s/hf-files.tsv", tmp);
    put(path, "container\tmb_release\trecipe\ttask\tuse\trepo\trevision\tfiles\tsource\n"
              "26.08\tv0.6.0\tm\tpretrain\tconfig\tor/cfg\tmain\tconfig.json,auto_map\ts:1\n"
              "26.08\tv0.6.0\tm\tpretrain\ttokenizer\tor/tok\t0123456789abcdef0123456789abcdef01234567\t"
              "tokenizer_config.json,tokenizer.json?\ts:2\n"
              "25.09\tv0.1.0rc4\tn\tpretrain\tnone\t-\t-\t-\ts:3\n");
    struct np_mbhf_set s;
    struct np_error err = {0};
    ck_assert_int_eq(np_mbhf_load(tmp, &s, &err), NP_OK);
    ck_assert_int_eq((int)s.n, 3);
    snprintf(home, sizeof home, "%s/hf", tmp);
    ck_assert_int_eq(np_mbhf_missing(&s, "25.09", "n", NULL, home, what, sizeof what), 0); /* nothing to stage */
    ck_assert_int_eq(s.v[0].auto_map, 1);
    ck_assert_int_eq(s.v[1].files[1].required, 0);
    snprintf(home, sizeof home, "%s/hf", tmp);
    ck_assert_int_eq(np_mbhf_missing(&s, "26.08", "nope", NULL, home, what, sizeof what), -1);
    /* nothing staged: the branch has no ref */
    ck_assert_int_eq(np_mbhf_missing(&s, "26.08", "m", NULL, home, what, sizeof what), 1);
    ck_assert_msg(strstr(what, "or/cfg@main: config.json (not staged: no ") != NULL, "%s", what);
    const char *c1 = "1111111111111111111111111111111111111111";
    snprintf(p, sizeof p, "%s/hub/models--or--cfg/refs/main", home);
    put(p, c1);
    snprintf(p, sizeof p, "%s/hub/models--or--cfg/snapshots/%s/config.json", home, c1);
    put(p, "{\"auto_map\": {\"AutoConfig\": \"configuration_x.XConfig\", \"AutoModel\": \"other/repo--m.M\"}}");
    ck_assert_int_eq(np_mbhf_missing(&s, "26.08", "m", NULL, home, what, sizeof what), 1);
    ck_assert_str_eq(what, "or/cfg@main: configuration_x.py"); /* the module, not the other repo's */
    snprintf(p, sizeof p, "%s/hub/models--or--cfg/snapshots/%s/configuration_x.py", home, c1);
    put(p, "class XConfig: pass\n");
    /* the pinned tokenizer needs no ref, only its required file */
    ck_assert_int_eq(np_mbhf_missing(&s, "26.08", "m", NULL, home, what, sizeof what), 1);
    ck_assert_str_eq(what, "or/tok@0123456789abcdef0123456789abcdef01234567: tokenizer_config.json");
    snprintf(p, sizeof p, "%s/hub/models--or--tok/snapshots/0123456789abcdef0123456789abcdef01234567/"
                          "tokenizer_config.json", home);
    put(p, "{}");
    ck_assert_int_eq(np_mbhf_missing(&s, "26.08", "m", NULL, home, what, sizeof what), 0);
    ck_assert_int_eq(np_mbhf_missing(&s, NULL, "m", "pretrain", home, what, sizeof what), 0);
    /* a ref that is not a commit is not a staged snapshot */
    snprintf(p, sizeof p, "%s/hub/models--or--cfg/refs/main", home);
    put(p, "garbage");
    ck_assert_int_eq(np_mbhf_missing(&s, "26.08", "m", NULL, home, what, sizeof what), 1);
    np_mbhf_free(&s);
}
END_TEST

START_TEST(test_staged_default)
{
    char what[300];
    /* launch's one call on the shipped data: an empty stage has nothing; a recipe nobody lists is -1 */
    ck_assert_int_eq(np_mbhf_staged(tmp, "26.08", "qwen3_30b_a3b", "pretrain", what, sizeof what), 0);
    ck_assert_msg(strstr(what, "Qwen/Qwen3-30B-A3B@ad44e777bcd18fa416d9da3bd8f70d33ebb85d39: config.json"), "%s", what);
    ck_assert_int_eq(np_mbhf_staged(tmp, "26.08", "llama3", NULL, what, sizeof what), -1);
    char p[600];
    snprintf(p, sizeof p, "%s/mbridge/hf/hub/models--deepseek-ai--DeepSeek-V3/refs/main", tmp);
    put(p, "2222222222222222222222222222222222222222\n");
    snprintf(p, sizeof p, "%s/mbridge/hf/hub/models--deepseek-ai--DeepSeek-V3/snapshots/"
                          "2222222222222222222222222222222222222222/config.json", tmp);
    put(p, "{}");
    ck_assert_int_eq(np_mbhf_staged(tmp, "26.08", "deepseek_v3", NULL, what, sizeof what), 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mbhf");
    SRunner *sr = srunner_create(s);
    TCase *tc = tcase_create("mbhf");
    suite_add_tcase(s, tc);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_data_covers_every_row);
    tcase_add_test(tc, test_paths);
    tcase_add_test(tc, test_bad_data);
    tcase_add_test(tc, test_offline_check);
    tcase_add_test(tc, test_staged_default);
    srunner_run_all(sr, CK_NORMAL);
    int nfail = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nfail == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
