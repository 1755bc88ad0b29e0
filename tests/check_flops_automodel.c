/* check_flops_automodel.c - the AutoModel FLOPs families and LoRA multiplier against outside numbers.
 *
 * Anchors not taken from our own code: the facts file's log example (Qwen3 MoE 30B at GBS 512,
 * seq 4096 prints "TFLOPs/GPU: 48247.700000"), the models' published parameter counts
 * (Llama-3.1-8B 8,030,261,248; Qwen2.5-7B 7,615,616,512), and the convention choices of the
 * published era (GPT-OSS c = h // A, not head_dim; DeepSeek V3 without its MTP layer).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/model/flops.h"
#include "nemoperf/model/model_flops.h"
#include "nemoperf/model/recipe.h"

static struct np_recipe am;

static void setup(void)
{
    struct np_error err;
    ck_assert_msg(np_recipe_load_file("recipes/automodel.json", &am, &err) == NP_OK, "%s", err.text);
}

static void teardown(void) { np_recipe_free(&am); }

static const struct np_model *model(const char *key)
{
    const struct np_model *m = np_model_find(&am, key);
    ck_assert_msg(m != NULL, "%s missing from recipes/automodel.json", key);
    return m;
}

START_TEST(test_qwen3_moe_step_tflops)
{
    const struct np_model *m = model("qwen3_moe_30b_te_deepep");
    double step = 512 * np_model_flops_row(m, &m->rows[0], 4096) / 1e12;
    ck_assert_double_eq_tol(step, 48247.7, 0.05); /* the setup line's "TFLOPs/GPU: 48247.700000" */
}
END_TEST

START_TEST(test_lora_parameter_counts)
{
    double lora, frozen;
    const struct np_model *l8 = model("llama3_1_8b_peft_benchmark");
    /* rank 0 is no LoRA: no multiplier (the row's FLOPs are not scaled) */
    ck_assert(isnan(np_flops_lora_multiplier(&l8->arch, &l8->xa, 0, 1, NULL, NULL)));
    double mul = np_flops_lora_multiplier(&l8->arch, &l8->xa, 16, 1, &lora, &frozen);
    ck_assert_double_eq(frozen, 8030261248.0);
    /* rank 16 x (in + out) of q,k,v,o,gate,up,down per layer, plus lm_head */
    ck_assert_double_eq(lora, 32 * 16.0 * (8192 + 5120 + 5120 + 8192 + 3 * 18432) + 16.0 * (4096 + 128256));
    ck_assert_double_eq_tol(mul, (2 + lora / frozen) / 3, 1e-15);
    ck_assert_double_eq_tol(mul, 0.6685, 0.00005); /* the log prints (2 + 0.0055) / 3 = 0.6685 */
    const struct np_model *q7 = model("qwen2_5_7b_peft_benchmark");
    np_flops_lora_multiplier(&q7->arch, &q7->xa, 16, 1, &lora, &frozen);
    ck_assert_double_eq(frozen, 7615616512.0); /* q/k/v biases and the untied lm_head counted */
    /* the row's FLOPs include the multiplier; without lora_rank they would be 1/mul larger */
    struct np_model plain = *l8;
    plain.flops.lora_rank = 0;
    double with = np_model_flops_row(l8, NULL, 4096), without = np_model_flops_row(&plain, NULL, 4096);
    ck_assert_double_eq_tol(with / without, mul, 1e-12);
    /* no multiplier for a mixture of experts */
    ck_assert(isnan(np_flops_lora_multiplier(&model("qwen3_moe_30b_te_deepep")->arch,
                                             &model("qwen3_moe_30b_te_deepep")->xa, 16, 1, NULL, NULL)));
}
END_TEST

START_TEST(test_gptoss_published_head_convention)
{
    const struct np_model *m = model("gptoss_20b_te_deepep");
    ck_assert_int_eq(m->xa.head_dim, 64); /* the model's real head_dim ... */
    struct np_arch_extra x = m->xa;
    double f = np_flops_automodel(NP_FLOPS_AM_GPTOSS, &m->arch, &x, 4096);
    x.head_dim = 1; /* ... is not what the published-era formula reads: c = 2880 // 64 = 45 */
    ck_assert_double_eq(np_flops_automodel(NP_FLOPS_AM_GPTOSS, &m->arch, &x, 4096), f);
    /* sliding window: a wider window on the odd layers costs more */
    x.sliding_window = 4096;
    ck_assert(np_flops_automodel(NP_FLOPS_AM_GPTOSS, &m->arch, &x, 4096) > f);
}
END_TEST

START_TEST(test_mla_and_hybrid_need_their_fields)
{
    const struct np_model *ds = model("deepseek_v3_te_deepep");
    struct np_arch_extra x = ds->xa;
    ck_assert(isfinite(np_flops_automodel(NP_FLOPS_AM_DEEPSEEKV3, &ds->arch, &x, 4096)));
    /* no q_lora_rank (DeepSeek V2-Lite's null): Q is one h x (nope + rope) A projection, flops_utils.py
     * deepseekv3_flops (Automodel e45812012, l.482-487) "else: hs * ((qk_nope + qk_rope) * heads)" */
    struct np_arch_extra noq = x;
    noq.q_lora_rank = 0;
    {
        const double S = 4096, L = ds->arch.layers, h = ds->arch.hidden, A = ds->arch.heads;
        const double nr = x.qk_nope_head_dim + x.qk_rope_head_dim, ql = x.q_lora_rank;
        double lora_q = h * ql + ql * nr * A, plain_q = h * nr * A;
        double d = np_flops_automodel(NP_FLOPS_AM_DEEPSEEKV3, &ds->arch, &noq, 4096) -
                   np_flops_automodel(NP_FLOPS_AM_DEEPSEEKV3, &ds->arch, &x, 4096);
        ck_assert_double_eq_tol(d, 6 * S * L * (plain_q - lora_q), fabs(6 * S * L * plain_q) * 1e-9);
        ck_assert(plain_q > lora_q); /* 7168 x 192 x 128 against 7168 x 1536 + 1536 x 192 x 128 */
    }
    x.kv_lora_rank = 0;
    ck_assert(isnan(np_flops_automodel(NP_FLOPS_AM_DEEPSEEKV3, &ds->arch, &x, 4096)));
    ck_assert_str_eq(np_flops_automodel_missing(NP_FLOPS_AM_DEEPSEEKV3, &ds->arch, &x, NULL), "kv_lora_rank");
    const struct np_model *nn = model("nemotron_nano_v3_te_deepep");
    ck_assert_int_eq(nn->xa.n_mamba, 23);
    ck_assert_int_eq(nn->xa.n_moe, 23);
    ck_assert_int_eq(nn->xa.n_attention, 6);
    ck_assert_str_eq(np_flops_automodel_missing(NP_FLOPS_AM_NEMOTRONH, &nn->arch, &nn->xa, NULL), "hybrid_pattern");
    const struct np_model *ns = model("nemotron_super_v3_te_deepep");
    ck_assert_int_eq(ns->xa.n_mamba, 40);
    ck_assert_int_eq(ns->xa.n_moe, 40);
    ck_assert_int_eq(ns->xa.n_attention, 8);
}
END_TEST

/* Each AutoModel row of the performance summary (seed 001: Automodel docs/performance-summary.md at
 * e45812012): the model TFLOP/s/GPU its formula family gives at the published step time, GBS x FLOPs per sample
 * over step time x GPUs, is the published "Model TFLOPs/GPU" (whole numbers) within 1; and, to 0.01, the value the
 * published-era formula gives (its term-by-term sum, so a changed term in any family is seen, the NemotronH's both
 * with (Super: moe_latent 1024) and without (Nano) a latent MoE projection). */
START_TEST(test_published_tflops_per_family)
{
    static const struct {
        const char *key;
        int gpus, gbs;
        double step_s, published, formula;
        enum np_flops_conv conv;
    } rows[] = {
        {"nemotron_super_v3_te_deepep", 64, 512, 7.286, 334, 334.788162, NP_FLOPS_AM_NEMOTRONH},
        {"nemotron_nano_v3_te_deepep", 8, 512, 15.614, 328, 328.057904, NP_FLOPS_AM_NEMOTRONH},
        {"deepseek_v3_te_deepep", 1024, 8192, 37.87, 216, 216.155712, NP_FLOPS_AM_DEEPSEEKV3},
        {"deepseek_v3_te_deepep", 256, 512, 8.18, 250, 250.177776, NP_FLOPS_AM_DEEPSEEKV3},
        {"kimi_k2_te_deepep", 256, 512, 8.86, 189, 189.060122, NP_FLOPS_AM_DEEPSEEKV3},
        {"gptoss_20b_te_deepep", 8, 256, 10.04, 279, 279.333813, NP_FLOPS_AM_GPTOSS},
        {"gptoss_120b_te_deepep", 64, 512, 4.3, 231, 231.339691, NP_FLOPS_AM_GPTOSS},
        /* Qwen3's family with and without experts (top_k 8; dense Qwen 2.5, one MLP a token), Llama's; the LoRA rows
         * with benchmark.py's multiplier */
        {"qwen3_moe_30b_te_deepep", 8, 512, 21.773, 277, 276.992547, NP_FLOPS_AM_QWEN3},
        {"qwen2_5_7b_peft_benchmark", 1, 32, 9.29, 423, 423.402347, NP_FLOPS_AM_QWEN3},
        {"custom_qwen2_5_32b_peft_benchmark", 8, 32, 7.28, 301, 300.636559, NP_FLOPS_AM_QWEN3},
        {"llama3_1_8b_peft_benchmark", 1, 32, 10.51, 402, 402.249647, NP_FLOPS_AM_LLAMA},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct np_model *m = model(rows[i].key);
        ck_assert_int_eq(m->flops.conv, rows[i].conv);
        double f = np_model_flops_row(m, &m->rows[0], 4096);
        if (!m->flops.lora_rank)
            ck_assert_double_eq(np_flops_automodel(rows[i].conv, &m->arch, &m->xa, 4096), f);
        double tflops = rows[i].gbs * f / (rows[i].step_s * rows[i].gpus) / 1e12;
        ck_assert_msg(fabs(tflops - rows[i].published) < 1.0, "%s on %d: %.3f TFLOP/s/GPU, published %.0f",
                      rows[i].key, rows[i].gpus, tflops, rows[i].published);
        ck_assert_msg(fabs(tflops - rows[i].formula) < 0.01, "%s on %d: %.6f TFLOP/s/GPU, the formula %.6f",
                      rows[i].key, rows[i].gpus, tflops, rows[i].formula);
    }
    /* a NemotronH model without its hybrid pattern's counts, or without a sequence: no FLOPs */
    const struct np_model *nn = model("nemotron_nano_v3_te_deepep");
    ck_assert(isnan(np_flops_automodel(NP_FLOPS_AM_NEMOTRONH, &nn->arch, &nn->xa, 0)));
    struct np_arch_extra x = nn->xa;
    x.mamba_groups = 0;
    ck_assert_str_eq(np_flops_automodel_missing(NP_FLOPS_AM_NEMOTRONH, &nn->arch, &x, ""), "mamba_groups");
    ck_assert(isnan(np_flops_automodel(NP_FLOPS_AM_NEMOTRONH, &nn->arch, &x, 4096)));
    struct np_arch a = nn->arch;
    a.top_k = 0;
    ck_assert_str_eq(np_flops_automodel_missing(NP_FLOPS_AM_NEMOTRONH, &a, &nn->xa, ""), "experts and top_k");
    ck_assert_ptr_null(np_flops_automodel_missing(NP_FLOPS_AM_NEMOTRONH, &nn->arch, &nn->xa, ""));
    ck_assert_ptr_null(np_flops_automodel_missing(NP_FLOPS_LLAMA3, &nn->arch, &nn->xa, NULL)); /* not AutoModel's */
}
END_TEST

/* Recipe validation of the AutoModel keys: bad data is named by its path. */
START_TEST(test_recipe_rejects_bad_automodel_data)
{
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"\"convention\": \"automodel-deepseekv3\"", "\"convention\": \"automodel-nemotronh\"", "needs arch."},
        {"\"hybrid_pattern\": \"MEMEM*", "\"hybrid_pattern\": \"MEXEM*", "M (Mamba)"},
        {"\"load\": \"from_config\"", "\"load\": \"from_weights\"", "from_config"},
        {"\"warmup_steps\": 10", "\"warmup_steps\": 30", "below max_steps"},
        {"\"lbs\": 4, \"gbs\": 512", "\"lbs\": 2, \"gbs\": 512", "LBS x DP x GA"},
        {"\"yaml\": \"qwen/qwen3_moe_30b_te_deepep.yaml\"", "\"yaml\": \"../x.yaml\"", "relative to"},
    };
    FILE *f = fopen("recipes/automodel.json", "r");
    ck_assert(f != NULL);
    static char text[1 << 17];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *at = strstr(text, cases[i].from);
        ck_assert_msg(at != NULL, "case %zu: text not found", i);
        char path[] = "/tmp/np-check-am-XXXXXX";
        int fd = mkstemp(path);
        ck_assert(fd >= 0);
        FILE *o = fdopen(fd, "w");
        fwrite(text, 1, (size_t)(at - text), o);
        fputs(cases[i].to, o);
        fputs(at + strlen(cases[i].from), o);
        fclose(o);
        struct np_recipe r;
        struct np_error err;
        enum np_status st = np_recipe_load_file(path, &r, &err);
        unlink(path);
        ck_assert_int_eq(st, NP_E_INVALID);
        ck_assert_msg(strstr(err.text, cases[i].want), "case %zu: %s", i, err.text);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("flops_automodel");
    TCase *tc = tcase_create("flops_automodel");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_qwen3_moe_step_tflops);
    tcase_add_test(tc, test_lora_parameter_counts);
    tcase_add_test(tc, test_gptoss_published_head_convention);
    tcase_add_test(tc, test_mla_and_hybrid_need_their_fields);
    tcase_add_test(tc, test_published_tflops_per_family);
    tcase_add_test(tc, test_recipe_rejects_bad_automodel_data);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
