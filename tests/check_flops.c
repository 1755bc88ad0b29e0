/* check_flops.c - pin the FLOPs formulas, the peak table and the metrics to hand-computed values.
 *
 * Values from the seeds: Llama 3.1 8b 4.74e14 (seed 003), Nemotron4 15b
 * 434.5e12 (seed 004's formula) and 3.85e14 (12F/h), 405b with G=16 ~ 2.17e16.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/model/flops.h"

static const struct np_arch llama8b = {32, 4096, 14336, 32, 8, 128256, 0, 0};
static const struct np_arch nem15b = {32, 6144, 24576, 48, 8, 256000, 0, 0};
static const struct np_arch llama405b = {126, 16384, 53248, 128, 8, 128256, 0, 0};
static const struct np_arch mix8x7b = {32, 4096, 14336, 32, 8, 32000, 8, 2};
static const struct np_arch gpt175b = {96, 12288, 49152, 96, 96, 51200, 0, 0};

START_TEST(test_llama3_8b)
{
    /* seed 003: 8192 * (20,937,965,568 + 33,822,867,456 + 3,152,019,456) */
    double want = 8192.0 * (20937965568.0 + 33822867456.0 + 3152019456.0);
    double got = np_model_flops(NP_FLOPS_LLAMA3, &llama8b, 8, 0, 8192);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
    ck_assert_double_eq_tol(got, 4.744e14, 0.001e14);
}
END_TEST

START_TEST(test_nemotron_15b_both_conventions)
{
    double legacy = np_model_flops(NP_FLOPS_NEMOTRON_LEGACY, &nem15b, 8, 0, 4096);
    /* seed 004's formula by hand: attention 24*32*6144^2 + 12*32*6144*4096 = 38,654,705,664
     * (the seed prints 38,666,279,738 and hence 434,526,299,070,464: an arithmetic slip in the
     * seed's text), mlp 57,982,058,496, embedding 9,437,184,000.  Both round to 434.5e12. */
    ck_assert_double_eq_tol(legacy, 4096.0 * (38654705664.0 + 57982058496.0 + 9437184000.0), 1.0);
    ck_assert_double_eq_tol(legacy, 434.5e12, 0.05e12);
    double nemo = np_model_flops(NP_FLOPS_NEMOTRON, &nem15b, 8, 0, 4096);
    ck_assert_double_eq_tol(nemo, 3.85e14, 0.005e14);
}
END_TEST

START_TEST(test_405b_g16)
{
    double g16 = np_model_flops(NP_FLOPS_LLAMA3, &llama405b, 16, 0, 8192);
    ck_assert_double_eq_tol(g16, 2.17e16, 0.005e16);
    double g8 = np_model_flops(NP_FLOPS_LLAMA3, &llama405b, 8, 0, 8192);
    ck_assert(g8 < g16);
    /* 12 x (16-8)/128 x S L h^2 difference */
    ck_assert_double_eq_tol(g16 - g8, 8192.0 * 126 * 16384.0 * 16384 * 12 * 8 / 128, 1e6);
}
END_TEST

START_TEST(test_causal_halves_attention_score)
{
    double full = np_model_flops(NP_FLOPS_LLAMA3, &llama8b, 8, 0, 8192);
    double causal = np_model_flops(NP_FLOPS_LLAMA3, &llama8b, 8, 1, 8192);
    /* the S/h term is 12 S L h^2 S/h = 12 L h S^2 */
    ck_assert_double_eq_tol(full - causal, 0.5 * 12 * 32 * 4096.0 * 8192 * 8192, 1e3);
}
END_TEST

START_TEST(test_mixtral_topk_and_gpt3)
{
    double mix = np_model_flops(NP_FLOPS_MIXTRAL, &mix8x7b, 8, 0, 4096);
    double per_token = 32 * 4096.0 * 4096 * (12 + 3 + 18 * 2 * 14336.0 / 4096 + 12 + 6 * 32000.0 / (32 * 4096));
    ck_assert_double_eq_tol(mix, 4096 * per_token, mix * 1e-12);
    double g = np_model_flops(NP_FLOPS_GPT3, &gpt175b, 96, 0, 2048);
    double want = (24 * 2048.0 * 12288 * 12288 + 4 * 2048.0 * 2048 * 12288) * 3 * 96 + 6 * 2048.0 * 12288 * 51200;
    ck_assert_double_eq_tol(g, want, want * 1e-12);
    /* no top_k in the config (0): one expert a token, i.e. Llama 3's dense 18F/h */
    struct np_arch dense = mix8x7b;
    dense.top_k = 0;
    double one = np_model_flops(NP_FLOPS_MIXTRAL, &dense, 8, 0, 4096);
    double per_token1 = 32 * 4096.0 * 4096 * (12 + 3 + 18 * 14336.0 / 4096 + 12 + 6 * 32000.0 / (32 * 4096));
    ck_assert_double_eq_tol(one, 4096 * per_token1, one * 1e-12);
    ck_assert_double_eq_tol(one, np_model_flops(NP_FLOPS_LLAMA3, &dense, 8, 0, 4096), one * 1e-12);
}
END_TEST

START_TEST(test_peaks)
{
    ck_assert_double_eq(np_gpu_peak_tflops("h100", NP_DTYPE_BF16), 989);
    ck_assert_double_eq(np_gpu_peak_tflops("H100", NP_DTYPE_FP8), 1979);
    ck_assert_double_eq(np_gpu_peak_tflops("h200", NP_DTYPE_FP8), 1979);
    ck_assert_double_eq(np_gpu_peak_tflops("b200", NP_DTYPE_BF16), 2250);
    ck_assert_double_eq(np_gpu_peak_tflops("b300", NP_DTYPE_FP8), 4500);
    ck_assert_double_eq(np_gpu_peak_tflops("gb200", NP_DTYPE_FP8), 4900);
    ck_assert_double_eq(np_gpu_peak_tflops("gb300", NP_DTYPE_BF16), 2450);
    ck_assert_double_eq(np_gpu_peak_tflops("a100", NP_DTYPE_BF16), 312);
    /* every GPU in both precisions, against the dense peaks NVIDIA's MFU figures use (the Megatron-Bridge
     * performance summaries' BF16/FP8 table: GB300/GB200 2450/4900, B300/B200 2250/4500, H100/H200 989/1979) */
    static const struct { const char *gpu; double bf16, fp8; } peak[] = {
        {"h100", 989, 1979}, {"h200", 989, 1979}, {"b200", 2250, 4500}, {"b300", 2250, 4500},
        {"gb200", 2450, 4900}, {"gb300", 2450, 4900}, {"a100", 312, 0}};
    for (size_t i = 0; i < sizeof peak / sizeof peak[0]; i++) {
        ck_assert_msg(np_gpu_peak_tflops(peak[i].gpu, NP_DTYPE_BF16) == peak[i].bf16, "%s BF16", peak[i].gpu);
        ck_assert_msg(np_gpu_peak_tflops(peak[i].gpu, NP_DTYPE_FP8) == peak[i].fp8, "%s FP8", peak[i].gpu);
    }
    ck_assert_double_eq(np_gpu_peak_tflops("a100", NP_DTYPE_FP8), 0);
    ck_assert_double_eq(np_gpu_peak_tflops("v100", NP_DTYPE_BF16), 0);
    ck_assert_double_eq(np_gpu_peak_tflops(NULL, NP_DTYPE_BF16), 0);
}
END_TEST

START_TEST(test_metrics_seed003_example)
{
    /* seed 003: 8192 * 128 / 12.39 = 84631; 1e12 / 84631 / 86400 = 136.76;
     * MFU = 128 * 4.74E+14 / 12.39 / 8 / 1979E+12 = 30.93% */
    struct np_metrics m;
    np_metrics_from_step(12.39, 8192, 128, 8, 4.74e14, 1979, 1e12, &m);
    ck_assert_double_eq_tol(m.tokens_per_s, 84631, 1);
    ck_assert_double_eq_tol(m.tokens_per_s_per_gpu, 84631 / 8.0, 0.2);
    ck_assert_double_eq_tol(m.days_to_train, 136.76, 0.01);
    ck_assert_double_eq_tol(m.mfu_percent, 30.93, 0.01);
    ck_assert_double_eq_tol(m.model_tflops_per_gpu, 612.1, 0.1);
}
END_TEST

START_TEST(test_metrics_degenerate)
{
    struct np_metrics m;
    np_metrics_from_step(0, 8192, 128, 8, 4.74e14, 1979, 1e12, &m);
    ck_assert(isnan(m.tokens_per_s) && isnan(m.mfu_percent) && isnan(m.days_to_train));
    np_metrics_from_step(NAN, 8192, 128, 8, 4.74e14, 1979, 1e12, &m);
    ck_assert(isnan(m.tokens_per_s));
    np_metrics_from_step(INFINITY, 8192, 128, 8, 4.74e14, 1979, 1e12, &m);
    ck_assert(isnan(m.tokens_per_s));
    np_metrics_from_step(1.0, 8192, 128, 8, NAN, 1979, 1e12, &m); /* unknown model */
    ck_assert_double_eq_tol(m.tokens_per_s, 8192 * 128.0, 1e-6);
    ck_assert(isnan(m.mfu_percent) && isnan(m.model_tflops_per_gpu));
    np_metrics_from_step(1.0, 8192, 128, 8, 4.74e14, 0, 1e12, &m); /* unknown peak */
    ck_assert(!isnan(m.model_tflops_per_gpu) && isnan(m.mfu_percent));
    np_metrics_from_step(1.0, 8192, 128, 0, 4.74e14, 989, 0, &m); /* unknown gpus, no tokens */
    ck_assert(isnan(m.tokens_per_s_per_gpu) && isnan(m.days_to_train));
    ck_assert(isnan(np_step_from_tokens_per_gpu(0, 8192, 128, 8)));
    ck_assert_double_eq_tol(np_step_from_tokens_per_gpu(13812, 8192, 128, 8), 8192 * 128.0 / 13812 / 8, 1e-12);
}
END_TEST

/* The guards: an architecture without layers, hidden size or heads, or no sequence, has no FLOPs (not an
 * infinity); np_model_flops is NeMo's conventions only; the metrics need a step, a sequence and a GBS. */
START_TEST(test_degenerate_inputs)
{
    const enum np_flops_conv nemo[] = {NP_FLOPS_LLAMA3, NP_FLOPS_NEMOTRON, NP_FLOPS_NEMOTRON_LEGACY, NP_FLOPS_MIXTRAL,
                                       NP_FLOPS_GPT3};
    for (size_t i = 0; i < sizeof nemo / sizeof nemo[0]; i++) {
        ck_assert(np_model_flops(nemo[i], &llama8b, 8, 0, 4096) > 0);
        struct np_arch a = llama8b;
        a.layers = 0;
        ck_assert(isnan(np_model_flops(nemo[i], &a, 8, 0, 4096)));
        a = llama8b;
        a.hidden = 0;
        ck_assert(isnan(np_model_flops(nemo[i], &a, 8, 0, 4096)));
        a = llama8b;
        a.heads = 0;
        ck_assert(isnan(np_model_flops(nemo[i], &a, 8, 0, 4096)));
        ck_assert(isnan(np_model_flops(nemo[i], &llama8b, 8, 0, 0)));
        ck_assert(isnan(np_model_flops(nemo[i], NULL, 8, 0, 4096)));
    }
    ck_assert(isnan(np_model_flops(NP_FLOPS_AM_LLAMA, &llama8b, 8, 0, 4096)));
    ck_assert(isnan(np_model_flops(NP_FLOPS_DIT_WAN, &llama8b, 8, 0, 4096)));
    /* kv_groups 0: the architecture's own */
    ck_assert_double_eq(np_model_flops(NP_FLOPS_LLAMA3, &llama8b, 0, 0, 4096),
                        np_model_flops(NP_FLOPS_LLAMA3, &llama8b, 8, 0, 4096));
    struct np_metrics m;
    np_metrics_from_step(1.0, 0, 128, 8, 4.74e14, 989, 1e12, &m);
    ck_assert(isnan(m.tokens_per_s) && isnan(m.model_tflops_per_gpu));
    np_metrics_from_step(1.0, 8192, 0, 8, 4.74e14, 989, 1e12, &m);
    ck_assert(isnan(m.tokens_per_s) && isnan(m.model_tflops_per_gpu));
    np_metrics_from_step(-1.0, 8192, 128, 8, 4.74e14, 989, 1e12, &m);
    ck_assert(isnan(m.tokens_per_s));
    np_metrics_from_step(2.0, 8192, 128, 8, INFINITY, 989, 1e12, &m); /* FLOPs overflowed: none */
    ck_assert(isnan(m.model_tflops_per_gpu) && isnan(m.mfu_percent));
    ck_assert_double_eq(m.tokens_per_s, 8192 * 128 / 2.0);
    ck_assert_double_eq(m.days_to_train, 1e12 / (8192 * 128 / 2.0) / 86400.0);
    ck_assert(isnan(np_step_from_tokens_per_gpu(100, 0, 128, 8)) && isnan(np_step_from_tokens_per_gpu(100, 8192, 0, 8)) &&
              isnan(np_step_from_tokens_per_gpu(100, 8192, 128, 0)));
}
END_TEST

/* Fine-tuning FLOPs per pack: k x the linear layers' FLOPs per token x the pack's tokens, plus the attention's
 * 12 L h x the sum of its sequences' squares (written here for Llama 3 8B: 32 layers, h 4096, F 14336, 32 heads, 8
 * KV groups, vocabulary 128256). */
START_TEST(test_finetune_per_pack)
{
    const double L = 32, h = 4096, F = 14336, A = 32, V = 128256;
    const double lin8 = L * h * h * (12 + 12 * 8 / A + 18 * F / h + 6 * V / (L * h));
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&llama8b, 0, 1.0, 4080.4352, 827392),
                            lin8 * 4080.4352 + 12 * L * h * 827392, 1e3);
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&llama8b, 0, 2.0 / 3, 4080.4352, 827392),
                            2.0 / 3 * lin8 * 4080.4352 + 12 * L * h * 827392, 1e3);
    const double lin16 = L * h * h * (12 + 12 * 16 / A + 18 * F / h + 6 * V / (L * h)); /* the kv_groups override */
    ck_assert_double_eq_tol(np_finetune_flops_per_pack(&llama8b, 16, 1.0, 100, 0), lin16 * 100, 1e3);
    ck_assert(isnan(np_finetune_flops_per_pack(&llama8b, 0, 0, 100, 0)));
    ck_assert(isnan(np_finetune_flops_per_pack(&llama8b, 0, 1, -1, 0)));
    ck_assert(isnan(np_finetune_flops_per_pack(&llama8b, 0, 1, 100, -1)));
    ck_assert(isnan(np_finetune_flops_per_pack(&llama8b, 0, NAN, 100, 0)));
    ck_assert_double_eq(np_finetune_flops_per_pack(&llama8b, 0, 1, 0, 0), 0);
    struct np_arch a = llama8b;
    a.heads = 0;
    ck_assert(isnan(np_finetune_flops_per_pack(&a, 0, 1, 100, 0)));
}
END_TEST

/* The family table: names, the recipes' convention names, which take AutoModel's LoRA multiplier and which are
 * language models (the logits layer, the vocabulary). */
START_TEST(test_family_table)
{
    static const struct {
        enum np_flops_conv conv;
        const char *name;
        int lora, vocab;
    } fam[] = {
        {NP_FLOPS_LLAMA3, "llama3", 0, 1}, {NP_FLOPS_NEMOTRON, "nemotron", 0, 1},
        {NP_FLOPS_NEMOTRON_LEGACY, "nemotron-legacy", 0, 1}, {NP_FLOPS_MIXTRAL, "mixtral", 0, 1},
        {NP_FLOPS_GPT3, "gpt3", 0, 1}, {NP_FLOPS_AM_LLAMA, "automodel-llama", 1, 1},
        {NP_FLOPS_AM_QWEN3, "automodel-qwen3", 1, 1}, {NP_FLOPS_AM_DEEPSEEKV3, "automodel-deepseekv3", 1, 1},
        {NP_FLOPS_AM_GPTOSS, "automodel-gptoss", 1, 1}, {NP_FLOPS_AM_NEMOTRONH, "automodel-nemotronh", 1, 1},
        {NP_FLOPS_DIT_WAN, "dit-wan", 0, 0},
    };
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        const struct np_flops_family *f = np_flops_family(fam[i].conv);
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->name, fam[i].name);
        ck_assert_str_eq(np_flops_conv_name(fam[i].conv), fam[i].name);
        ck_assert_ptr_eq(np_flops_family_named(fam[i].name), f);
        ck_assert_int_eq(f->lora, fam[i].lora);
        ck_assert_int_eq(f->needs_vocab, fam[i].vocab);
        ck_assert_int_eq(f->missing != NULL, strncmp(fam[i].name, "automodel-", 10) == 0);
    }
    ck_assert_ptr_null(np_flops_family_named("llama"));
    ck_assert_ptr_null(np_flops_family_named(NULL));
    ck_assert_str_eq(np_flops_conv_name((enum np_flops_conv)99), "?");
    char buf[512];
    np_flops_conv_names(buf, sizeof buf);
    ck_assert_str_eq(buf, "llama3, nemotron, nemotron-legacy, mixtral, gpt3, automodel-llama, automodel-qwen3, "
                          "automodel-deepseekv3, automodel-gptoss, automodel-nemotronh or dit-wan");
    char small[8];
    np_flops_conv_names(small, sizeof small);
    ck_assert_str_eq(small, "llama3,");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("flops");
    TCase *tc = tcase_create("formulas");
    tcase_add_test(tc, test_llama3_8b);
    tcase_add_test(tc, test_nemotron_15b_both_conventions);
    tcase_add_test(tc, test_405b_g16);
    tcase_add_test(tc, test_causal_halves_attention_score);
    tcase_add_test(tc, test_mixtral_topk_and_gpt3);
    tcase_add_test(tc, test_peaks);
    tcase_add_test(tc, test_metrics_seed003_example);
    tcase_add_test(tc, test_metrics_degenerate);
    tcase_add_test(tc, test_degenerate_inputs);
    tcase_add_test(tc, test_finetune_per_pack);
    tcase_add_test(tc, test_family_table);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
