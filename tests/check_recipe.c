/* check_recipe.c - the recipe loader: real data loads, malformed data is named precisely.
 *
 * Every malformed case is a small JSON text written to a temporary file; the
 * test asserts the exact "file:line:col:" or "file: field.path: message".
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/model/recipe.h"

static char tmpdir[] = "/tmp/np-recipe-XXXXXX";
static char path[256];

static const char *base =
    "{\n"
    "  \"schema\": 1, \"recipe\": \"toy\", \"title\": \"Toy\", \"source\": \"test\",\n"
    "  \"container\": {\"framework_version\": \"1\", \"image\": \"img\"},\n"
    "  \"defaults\": {\"model_size\": \"8b\", \"dtype\": \"bf16\", \"gpus\": 8},\n"
    "  \"models\": {\"8b\": {\"label\": \"8b\", \"factory\": \"f\",\n"
    "    \"arch\": {\"layers\": 32, \"hidden\": 4096, \"ffn_hidden\": 14336, \"heads\": 32, \"kv_groups\": 8, \"vocab\": 128256},\n"
    "    \"flops\": {\"convention\": \"llama3\"},\n"
    "    \"configs\": [\n"
    "      {\"gpu\": \"h100\", \"dtypes\": [\"bf16\"], \"gpus\": 8, \"seq_len\": 8192, \"tp\": 1, \"pp\": 1, \"cp\": 2, \"ep\": null, \"dp\": 4, \"vp\": null, \"mbs\": 1, \"gbs\": 128, \"ga\": 32},\n"
    "      {\"gpu\": \"h100\", \"dtypes\": [\"bf16\"], \"gpus\": 16, \"seq_len\": 8192, \"tp\": 1, \"pp\": 1, \"cp\": 2, \"ep\": null, \"dp\": 8, \"vp\": null, \"mbs\": 1, \"gbs\": 256, \"ga\": 32}\n"
    "    ]}}\n"
    "}\n";

static void write_file(const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert(f);
    fputs(text, f);
    fclose(f);
}

/* base with the first occurrence of `from` replaced by `to` */
static void write_variant(const char *from, const char *to)
{
    const char *at = strstr(base, from);
    ck_assert_msg(at, "variant anchor not found: %s", from);
    char buf[8192];
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
    write_file(buf);
}

/* Load path; expect status st and formatted message ending with `msg` after "path". */
static void expect_error(enum np_status st, const char *msg)
{
    struct np_recipe r;
    struct np_error err;
    enum np_status got = np_recipe_load_file(path, &r, &err);
    ck_assert_int_eq(got, st);
    char buf[1200], want[1200];
    np_error_format(&err, buf, sizeof buf);
    snprintf(want, sizeof want, "%s%s", path, msg);
    ck_assert_str_eq(buf, want);
    np_recipe_free(&r); /* must be safe after a failed load */
}

static void setup(void)
{
    ck_assert(mkdtemp(tmpdir) != NULL || access(tmpdir, F_OK) == 0);
    snprintf(path, sizeof path, "%s/toy.json", tmpdir);
}

static void teardown(void)
{
    unlink(path);
    rmdir(tmpdir);
    strcpy(tmpdir, "/tmp/np-recipe-XXXXXX");
}

START_TEST(test_base_is_valid)
{
    write_file(base);
    struct np_recipe r;
    struct np_error err;
    ck_assert_int_eq(np_recipe_load_file(path, &r, &err), NP_OK);
    ck_assert_str_eq(r.name, "toy");
    ck_assert_uint_eq(r.nmodels, 1);
    ck_assert_int_eq(r.models[0].rows[1].gpus, 16);
    ck_assert_int_eq(r.models[0].rows[1].layers, 32); /* defaults to the architecture's */
    ck_assert_int_eq(r.models[0].rows[1].vp, 0);
    ck_assert_int_eq(r.models[0].flops.kv_groups, 8);
    ck_assert_ptr_null(r.models[0].hf_repo);
    ck_assert_int_eq(r.models[0].checkpoint.known, 0);
    np_recipe_free(&r);
    np_recipe_free(&r); /* idempotent */
    np_recipe_free(NULL);
}
END_TEST

START_TEST(test_syntax_error_has_position)
{
    write_variant("\"gpus\": 8},", "\"gpus\": 8,},");
    expect_error(NP_E_PARSE, ":4:63: string or '}' expected near '}'");
}
END_TEST

START_TEST(test_duplicate_key_is_syntax_error)
{
    write_variant("\"title\": \"Toy\"", "\"title\": \"Toy\", \"title\": \"Toy\"");
    struct np_recipe r;
    struct np_error err;
    ck_assert_int_eq(np_recipe_load_file(path, &r, &err), NP_E_PARSE);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.text, "duplicate object key"));
}
END_TEST

START_TEST(test_wrong_type)
{
    write_variant("\"tp\": 1, \"pp\": 1, \"cp\": 2, \"ep\": null, \"dp\": 8", "\"tp\": \"1\", \"pp\": 1, \"cp\": 2, \"ep\": null, \"dp\": 8");
    /* only the second row (16 GPUs) has dp 8 */
    expect_error(NP_E_INVALID, ": models.8b.configs[1].tp: expected integer");
}
END_TEST

START_TEST(test_unknown_key)
{
    write_variant("\"mbs\": 1, \"gbs\": 128", "\"mbs\": 1, \"gbz\": 3, \"gbs\": 128");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].gbz: unknown key");
}
END_TEST

START_TEST(test_unknown_top_level_key)
{
    write_variant("\"title\"", "\"titel\": \"x\", \"title\"");
    expect_error(NP_E_INVALID, ": titel: unknown key");
}
END_TEST

START_TEST(test_missing_field)
{
    write_variant("\"heads\": 32, ", "");
    expect_error(NP_E_INVALID, ": models.8b.arch.heads: missing field");
}
END_TEST

START_TEST(test_broken_gpu_arithmetic)
{
    write_variant("\"dp\": 4", "\"dp\": 2");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].dp: TP x PP x CP x DP = 1 x 1 x 2 x 2 = 4, but gpus is 8");
}
END_TEST

START_TEST(test_broken_gbs_arithmetic)
{
    write_variant("\"gbs\": 128", "\"gbs\": 100");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].gbs: MBS x DP x GA = 1 x 4 x 32 = 128, but gbs is 100 (a "
                               "published row that is not self-consistent must say why in \"inconsistent\")");
}
END_TEST

START_TEST(test_marked_inconsistent_row_loads)
{
    write_variant("\"gbs\": 128", "\"gbs\": 1, \"inconsistent\": \"published so\"");
    struct np_recipe r;
    struct np_error err;
    ck_assert_int_eq(np_recipe_load_file(path, &r, &err), NP_OK);
    ck_assert_str_eq(r.models[0].rows[0].inconsistent, "published so");
    ck_assert_int_eq(r.models[0].rows[0].gbs, 1); /* kept as published */
    np_recipe_free(&r);
    /* ...but a consistent row may not claim to be inconsistent */
    write_variant("\"gbs\": 128", "\"gbs\": 128, \"inconsistent\": \"no\"");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].inconsistent: row is marked inconsistent but its arithmetic holds");
}
END_TEST

START_TEST(test_negative_and_null)
{
    write_variant("\"mbs\": 1, \"gbs\": 128", "\"mbs\": -1, \"gbs\": 128");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].mbs: value -1 out of range (minimum 1)");
    write_variant("\"tp\": 1", "\"tp\": null");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].tp: expected integer, got null");
}
END_TEST

START_TEST(test_bad_dtype_and_convention)
{
    write_variant("[\"bf16\"]", "[\"fp16\"]");
    expect_error(NP_E_INVALID, ": models.8b.configs[0].dtypes[0]: expected \"bf16\" or \"fp8\"");
    write_variant("\"llama3\"", "\"llama4\"");
    expect_error(NP_E_INVALID, ": models.8b.flops.convention: unknown convention (expected llama3, nemotron, "
                               "nemotron-legacy, mixtral, gpt3, automodel-llama, automodel-qwen3, "
                               "automodel-deepseekv3, automodel-gptoss, automodel-nemotronh or dit-wan)");
}
END_TEST

START_TEST(test_duplicate_row_and_bad_default)
{
    write_variant("\"gpus\": 16, \"seq_len\": 8192, \"tp\": 1, \"pp\": 1, \"cp\": 2, \"ep\": null, \"dp\": 8, \"vp\": null, \"mbs\": 1, \"gbs\": 256",
                  "\"gpus\": 8, \"seq_len\": 8192, \"tp\": 1, \"pp\": 1, \"cp\": 2, \"ep\": null, \"dp\": 4, \"vp\": null, \"mbs\": 1, \"gbs\": 128");
    expect_error(NP_E_INVALID, ": models.8b.configs[1]: duplicate key: h100 x8 already defined at configs[0]");
    write_variant("\"gpus\": 8}", "\"gpus\": 4}");
    expect_error(NP_E_INVALID, ": defaults.gpus: no config row of the default model has this GPU count and dtype");
}
END_TEST

START_TEST(test_unreadable_and_empty)
{
    struct np_recipe r;
    struct np_error err;
    ck_assert_int_eq(np_recipe_load_file("/nonexistent/x.json", &r, &err), NP_E_IO);
    ck_assert_str_eq(err.source, "/nonexistent/x.json");
    write_file("");
    ck_assert_int_eq(np_recipe_load_file(path, &r, &err), NP_E_PARSE);
    write_file("[1, 2]");
    expect_error(NP_E_INVALID, ": (top level): expected object");
}
END_TEST

START_TEST(test_shipped_recipes)
{
    struct np_recipe_set s;
    struct np_error err;
    ck_assert_msg(np_recipe_set_load_dir("recipes", &s, &err) == NP_OK, "%s: %s", err.source, err.text);
    ck_assert_uint_eq(s.n, 8);
    const struct np_recipe *l = np_recipe_find(&s, "llama3.1");
    ck_assert_ptr_nonnull(l);
    ck_assert(l->infer);
    const struct np_model *m = np_model_find(l, "405b");
    const struct np_config_row *proxy = np_row_find(m, "h100", NP_DTYPE_FP8, 64);
    ck_assert_int_eq(proxy->layers, 30);
    ck_assert(proxy->proxy);
    ck_assert_int_eq(m->flops.kv_groups, 16);
    ck_assert_int_eq(m->arch.kv_groups, 8);
    ck_assert_int_eq(m->checkpoint.load_min_gpus, 1024);
    ck_assert_str_eq(m->hf_repo, "meta-llama/Llama-3.1-405B");
    /* 70b rows differ by dtype */
    const struct np_model *m70 = np_model_find(l, "70b");
    ck_assert_int_eq(np_row_find(m70, "h100", NP_DTYPE_BF16, 64)->pp, 4);
    ck_assert_int_eq(np_row_find(m70, "h100", NP_DTYPE_FP8, 64)->pp, 8);
    ck_assert_ptr_null(np_row_find(m70, "h100", NP_DTYPE_FP8, 96));
    ck_assert_ptr_null(np_row_find(m70, "b200", NP_DTYPE_FP8, 64));
    /* seed 000: GPU type is part of the key */
    const struct np_model *l70 = np_model_find(np_recipe_find(&s, "llama3"), "70b");
    ck_assert_int_eq(np_row_find(l70, "gb200", NP_DTYPE_FP8, 64)->fsdp, 1);
    ck_assert_int_eq(np_row_find(l70, "b200", NP_DTYPE_FP8, 64)->tp, 2);
    ck_assert_int_eq(np_row_find(l70, "h100", NP_DTYPE_FP8, 64)->tp, 4);
    /* the inconsistent Mixtral-8x22B rows are kept and reported */
    ck_assert_uint_eq(s.nnotes, 3);
    ck_assert_ptr_nonnull(strstr(s.notes[0], "mixtral.json: models.8x22b.configs[0] (gb200 x256): published row is inconsistent: published GBS 1 with MBS 64"));
    const struct np_config_row *mx = np_row_find(np_model_find(np_recipe_find(&s, "mixtral"), "8x22b"), "h100", NP_DTYPE_FP8, 256);
    ck_assert_int_eq(mx->gbs, 1);
    ck_assert_int_eq(mx->mbs, 256);
    ck_assert_ptr_nonnull(mx->inconsistent);
    np_recipe_set_free(&s);
}
END_TEST

START_TEST(test_datapath_env)
{
    setenv("NEMOPERF_DATADIR", ".", 1);
    char *p = np_data_path("recipes");
    ck_assert_str_eq(p, "./recipes");
    free(p);
    ck_assert_ptr_null(np_data_path("no-such-folder"));
    unsetenv("NEMOPERF_DATADIR");
    p = np_data_path("reference"); /* found beside the test binary's tree */
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(strstr(p, "share/nemoperf/reference"));
    free(p);
}
END_TEST

START_TEST(test_dtype_names)
{
    ck_assert_int_eq(np_dtype_parse("BF16"), NP_DTYPE_BF16);
    ck_assert_int_eq(np_dtype_parse("fp8"), NP_DTYPE_FP8);
    ck_assert_int_eq(np_dtype_parse("fp16"), NP_DTYPE_NONE);
    ck_assert_int_eq(np_dtype_parse(NULL), NP_DTYPE_NONE);
    ck_assert_str_eq(np_dtype_name(NP_DTYPE_FP8, 1), "FP8");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("recipe");
    TCase *tc = tcase_create("loader");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_base_is_valid);
    tcase_add_test(tc, test_syntax_error_has_position);
    tcase_add_test(tc, test_duplicate_key_is_syntax_error);
    tcase_add_test(tc, test_wrong_type);
    tcase_add_test(tc, test_unknown_key);
    tcase_add_test(tc, test_unknown_top_level_key);
    tcase_add_test(tc, test_missing_field);
    tcase_add_test(tc, test_broken_gpu_arithmetic);
    tcase_add_test(tc, test_broken_gbs_arithmetic);
    tcase_add_test(tc, test_marked_inconsistent_row_loads);
    tcase_add_test(tc, test_negative_and_null);
    tcase_add_test(tc, test_bad_dtype_and_convention);
    tcase_add_test(tc, test_duplicate_row_and_bad_default);
    tcase_add_test(tc, test_unreadable_and_empty);
    tcase_add_test(tc, test_shipped_recipes);
    tcase_add_test(tc, test_datapath_env);
    tcase_add_test(tc, test_dtype_names);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
