/* check_mbridge.c - Megatron-Bridge runs: every published row parses back to its numbers.
 *
 * For every measurement of every container version in runs.tsv a 50-iteration log in Megatron-Bridge's
 * format is written at the published speed (stand-in for a GPU run, which cannot happen here), read back
 * and analysed over llmb's window: tokens/s/GPU within 0.5 %, and TFLOP/s/GPU by Megatron-Bridge's
 * formula within 1.5 % wherever the family is implemented; the rows outside are exactly the documented
 * ones (docs/megatron-bridge.md).  Also: windows, a short run, a disagreeing rank-0 figure, bad input.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/model/flops_mbridge.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/family.h"
#include "nemoperf/parse/mbridge.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/report/mbridge_md.h"

static struct np_mb_ref ref;

static void setup(void)
{
    struct np_error err;
    memset(&err, 0, sizeof err);
    memset(&ref, 0, sizeof ref);
    enum np_status st = np_mb_ref_load_default(&ref, &err);
    ck_assert_msg(st == NP_OK, "%s:%d: %s", err.source, err.line, err.text);
}

static void teardown(void) { np_mb_ref_free(&ref); }

/* A log as Megatron-Bridge prints it (MB@v0.6.0 train_utils.py; facts section 3): the last rank's iteration
 * line, rank 0's utilization line.  util < 0: no utilization line (config without kv_channels). */
static char *write_log(int iters, double ms, int gbs, double util, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ck_assert_ptr_nonnull(f);
    fprintf(f, "INFO:megatron.bridge.training:setup done\n");
    for (int i = 1; i <= iters; i++) {
        if (util >= 0)
            fprintf(f, "Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n", ms / 1000, util);
        fprintf(f,
                " [2026-11-25 21:%02d:%02d] iteration %8d/%8d | consumed samples: %12lld | elapsed time per "
                "iteration (ms): %.1f | learning rate: 1.000000E-04 | global batch size: %5d | lm loss: "
                "1.050000E+01 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations:   0 | number "
                "of nan iterations:   0 |\n",
                i / 60 % 60, i % 60, i, iters, (long long)i * gbs, ms, gbs);
    }
    fclose(f);
    return buf;
}

static int analyse_text(const char *text, size_t len, const struct np_mb_row *r, long first, long last,
                        struct np_mb_result *res)
{
    FILE *f = fmemopen((void *)text, len, "r");
    ck_assert_ptr_nonnull(f);
    struct np_mb_log log;
    memset(&log, 0, sizeof log);
    struct np_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(np_mb_log_read(f, "test.log", &log, &err), NP_OK);
    fclose(f);
    int rc = np_mb_analyse(&log, &ref, r->recipe, r->task, r->variant, r->mb_release, r->dtype, r->gpu_type, r->gpus,
                           r->gbs, r->seq_len, r->tp, first, last, res);
    np_mb_log_free(&log);
    return rc;
}

/* The rows whose published TFLOP/s/GPU is more than 1.5 % from tokens/s/GPU x Megatron-Bridge's FLOPs/token
 * (docs/megatron-bridge.md has the arithmetic): container, recipe, gpu, dtype, gpus. */
static const char *const outside[] = {
    "26.04.01 llama3_70b h100 fp8_cs 64",
    "26.04.01 llama31_405b gb200 fp8_cs 256",
    "25.09 deepseek_v3 h100 fp8_sc 1024",
    "26.08 nemotron_3_ultra gb200 fp8_mx 256",
};

static int is_outside(const struct np_mb_row *r)
{
    char key[128];
    snprintf(key, sizeof key, "%s %s %s %s %d", r->container, r->recipe, r->gpu_type, np_mb_dtype_name(r->dtype),
             r->gpus);
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
        if (strcmp(key, outside[i]) == 0)
            return 1;
    return 0;
}

START_TEST(test_every_published_row)
{
    int n = 0, implemented = 0, within = 0, out = 0, missing = 0;
    ck_assert_int_eq((int)ref.n, 293);
    for (size_t i = 0; i < ref.n; i++) {
        const struct np_mb_row *r = &ref.rows[i];
        double step_ms = 1000.0 * r->seq_len * (double)r->gbs / (r->tokens_per_s_per_gpu * r->gpus);
        size_t len;
        char *text = write_log(50, step_ms, r->gbs, r->model_tflops_per_gpu, &len);
        struct np_mb_result res;
        int rc = analyse_text(text, len, r, -1, -1, &res);
        free(text);
        ck_assert_msg(rc == 0, "%s: %s", r->source, res.problem);
        ck_assert_int_eq(res.first, 35);
        ck_assert_int_eq(res.last, 44);
        ck_assert_int_eq((int)res.steps, 10);
        double tok_err = res.tokens_per_s_per_gpu / r->tokens_per_s_per_gpu - 1;
        ck_assert_msg(fabs(tok_err) <= 0.005, "%s: tokens/s/GPU %.2f, published %.0f", r->source,
                      res.tokens_per_s_per_gpu, r->tokens_per_s_per_gpu);
        /* the rank-0 figure is read back as written */
        ck_assert_double_eq_tol(res.logged_tflops_per_gpu, r->model_tflops_per_gpu, 0.051);
        n++;
        if (isnan(res.model_tflops_per_gpu)) {
            ck_assert_ptr_nonnull(res.why_flops);
            missing++;
            continue;
        }
        implemented++;
        double fl_err = res.model_tflops_per_gpu / r->model_tflops_per_gpu - 1;
        if (fabs(fl_err) <= 0.015) {
            within++;
            ck_assert_msg(!is_outside(r), "%s is listed outside but is within: %+.2f %%", r->source, 100 * fl_err);
        } else {
            out++;
            ck_assert_msg(is_outside(r), "%s %s %s %s: TFLOP/s/GPU %.1f, published %.0f (%+.2f %%)", r->source,
                          r->recipe, r->gpu_type, np_mb_dtype_name(r->dtype), res.model_tflops_per_gpu,
                          r->model_tflops_per_gpu, 100 * fl_err);
            /* and the disagreement with the rank-0 figure is reported, not hidden */
            ck_assert(fabs(res.tflops_disagreement) > 0.015);
        }
    }
    ck_assert_int_eq(out, (int)(sizeof outside / sizeof outside[0]));
    fprintf(stderr, "mbridge: %d runs, %d with a FLOPs family (%d within 1.5 %%, %d outside), %d without\n", n,
            implemented, within, out, missing);
}
END_TEST

START_TEST(test_formula_pins)
{
    /* facts section 4: Llama 3 70B at 8192 tokens, dense GQA per token 4.492e11 (hand arithmetic:
     * 6.h.L.ffn.3 + 6L[h(q+2kv) + qh + qs] + 6hV) */
    double h = 8192, L = 80, ffn = 28672, q = 8192, kv = 1024, s = 8192, V = 128256;
    double want = 6 * h * L * ffn * 3 + 6 * L * (h * (q + 2 * kv) + q * h + q * s) + 6 * h * V;
    double got = np_mbf_flops_per_token("llama3_70b", "pretrain", "-", NP_MBF_CURRENT, 8192, 1, NULL);
    ck_assert_double_eq_tol(got, want, want * 1e-12);
    ck_assert_double_eq_tol(got, 4.492e11, 0.001e11);
    /* TP 4 pads the vocabulary to a multiple of 512: 128256 -> 128512 */
    double tp4 = np_mbf_flops_per_token("llama3_70b", "pretrain", "-", NP_MBF_CURRENT, 8192, 4, NULL);
    ck_assert_double_eq_tol(tp4 - got, 6 * h * (128512 - V), 1.0);
    /* conventions differ only where the issue says: GPT-OSS (GLU not SiLU, sliding window) */
    double l8 = np_mbf_flops_per_token("llama3_8b", "pretrain", "-", NP_MBF_LEGACY, 8192, 1, NULL);
    double c8 = np_mbf_flops_per_token("llama3_8b", "pretrain", "-", NP_MBF_CURRENT, 8192, 1, NULL);
    ck_assert_double_eq_tol(l8, c8, c8 * 1e-12);
    double lg = np_mbf_flops_per_token("gpt_oss_120b", "pretrain", "-", NP_MBF_LEGACY, 4096, 1, NULL);
    double cg = np_mbf_flops_per_token("gpt_oss_120b", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, NULL);
    ck_assert(fabs(cg / lg - 1) > 0.1);
    /* GPT-OSS 120B at a sequence as long as its window (128): the window layers see the whole causal context,
     * exactly as the full layers (MB@v0.6.0 flop_utils.py:1036-1043: "if effective_window < seq" else the
     * seq / 2 of full attention), so every layer counts 6 (proj + q s): by hand from the config (h 2880, 36
     * layers, 128 experts top-4 of 2880, 64 heads x 64, 8 groups, vocab 201088 = 1571 x 128) */
    {
        double gh = 2880, gL = 36, gs = 128, qp = 64 * 64, kvp = 8 * 64;
        double g_mlp = 6 * gh * (2880.0 * 4 * 3 * gL);
        double g_attn = 6 * gL * (gh * (qp + 2 * kvp) + qp * gh + qp * gs);
        double g_want = g_mlp + g_attn + 6 * gh * 201088;
        double g_got = np_mbf_flops_per_token("gpt_oss_120b", "pretrain", "-", NP_MBF_CURRENT, 128, 1, NULL);
        ck_assert_double_eq_tol(g_got, g_want, g_want * 1e-12);
        /* at 4096 the 18 window layers (every other one) see w - w (w - 1) / 2s = 126.02 tokens, not s / 2 */
        double g_4k = np_mbf_flops_per_token("gpt_oss_120b", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, NULL);
        double proj = gh * (qp + 2 * kvp) + qp * gh, ctx = 128 - 128.0 * 127 / (2 * 4096);
        double want_4k = g_mlp + 6 * (18 * (proj + qp * 4096) + 18 * (proj + qp * ctx * 2)) + 6 * gh * 201088;
        ck_assert_double_eq_tol(g_4k, want_4k, want_4k * 1e-12);
    }
    /* MTP: DeepSeek V3 "w/o MTP" is smaller */
    double with = np_mbf_flops_per_token("deepseek_v3", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, NULL);
    double without = np_mbf_flops_per_token("deepseek_v3", "pretrain", "w/o MTP", NP_MBF_CURRENT, 4096, 1, NULL);
    ck_assert(without < with);
    /* hybrid Mamba, Nemotron 3 Nano at 8192 (hand arithmetic over its pattern: 23 Mamba, 6 attention, 23 MoE
     * layers; MB@v0.6.0 flop_utils.py:509-751): 2.2278e10 per token, and the 26.06 GB300 row publishes
     * 885 TFLOP/s at 39749 tok/s = 2.2265e10 */
    double nh = 2688, ns = 8192, din = 2 * nh;
    double n_attn = 4 * ns * nh * (128.0 * 32 / nh) * (nh + nh * 2 / 32 + ns / 2);
    double n_mamba = 2 * ns * nh * (2 * din + 2 * 8 * 128 + 64) + 7 * ns * din * 128 + 2 * ns * din * nh;
    double n_moe = 4 * ns * nh * 1856 * 6 + 4 * ns * nh * 3712;
    double n_logit = 2 * ns * nh * 131072;
    double nano_want = 3 * (6 * n_attn + 23 * n_mamba + 23 * n_moe + n_logit) / ns;
    double nano = np_mbf_flops_per_token("nemotron_3_nano", "pretrain", "-", NP_MBF_LEGACY, 8192, 1, NULL);
    ck_assert_double_eq_tol(nano, nano_want, nano_want * 1e-12);
    ck_assert_double_eq_tol(nano, 2.2278e10, 0.0001e10);
    /* Lightning: Nano plus two MTP copies of "*E" and two more logits */
    double light = np_mbf_flops_per_token("nemotron_3_5_lightning", "pretrain", "-", NP_MBF_CURRENT, 8192, 1, NULL);
    double light_want = nano_want + 3 * (2 * n_attn + 2 * n_moe + 2 * n_logit) / ns;
    ck_assert_double_eq_tol(light, light_want, light_want * 1e-12);
    /* TP 2 leaves 131072 unpadded (a multiple of 256) */
    ck_assert_double_eq_tol(np_mbf_flops_per_token("nemotron_3_super", "pretrain", "-", NP_MBF_CURRENT, 8192, 2, NULL),
                            np_mbf_flops_per_token("nemotron_3_super", "pretrain", "-", NP_MBF_CURRENT, 8192, 1, NULL),
                            1.0);
    ck_assert_double_eq_tol(np_mbf_padded_vocab(131073, 2), 131328, 0.1);
    const char *why = NULL;
    ck_assert(isnan(np_mbf_flops_per_token("deepseek_v4_flash", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, &why)));
    ck_assert_ptr_nonnull(why);
    ck_assert(strstr(why, "DeepSeek V4") != NULL);
    ck_assert(isnan(np_mbf_flops_per_token("llama3_70b", "lora", "-", NP_MBF_CURRENT, 4096, 1, &why)));
    ck_assert(isnan(np_mbf_flops_per_token("no_such_model", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, &why)));
    ck_assert_int_eq(np_mbf_conv_of_release("v0.4.1"), NP_MBF_LEGACY);
    ck_assert_int_eq(np_mbf_conv_of_release("v0.5.0"), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release("v0.1.0rc3"), NP_MBF_LEGACY);
    /* the release with "v", "r" or no prefix; legacy is 0.x below 0.5 only; unreadable is the current formula */
    ck_assert_int_eq(np_mbf_conv_of_release("r0.4.0"), NP_MBF_LEGACY);
    ck_assert_int_eq(np_mbf_conv_of_release("0.4.9"), NP_MBF_LEGACY);
    ck_assert_int_eq(np_mbf_conv_of_release("r0.5.0"), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release("v0.6.0"), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release("v1.0.0"), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release("v1.4.0"), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release("x0.4.0"), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release(""), NP_MBF_CURRENT);
    ck_assert_int_eq(np_mbf_conv_of_release(NULL), NP_MBF_CURRENT);
    /* each reason for no FLOPs is its own */
    ck_assert(isnan(np_mbf_flops_per_token("llama3_70b", "lora", "-", NP_MBF_CURRENT, 4096, 1, &why)));
    ck_assert_msg(strncmp(why, "LoRA: Megatron-Bridge counts it from the packed dataset's", 57) == 0, "%s", why);
    ck_assert(isnan(np_mbf_flops_per_token("no_such_model", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, &why)));
    ck_assert_str_eq(why, "no Megatron-Bridge model descriptor for this recipe");
    ck_assert(isnan(np_mbf_flops_per_token(NULL, "pretrain", "-", NP_MBF_CURRENT, 4096, 1, &why)));
    ck_assert_str_eq(why, "no recipe or sequence length");
    ck_assert(isnan(np_mbf_flops_per_token("llama3_70b", "pretrain", "-", NP_MBF_CURRENT, 0, 1, &why)));
    ck_assert_str_eq(why, "no recipe or sequence length");
    ck_assert(np_mbf_flops_per_token("llama3_70b", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, &why) > 0);
    ck_assert_ptr_null(why);
    ck_assert(np_mbf_flops_per_token("llama3_70b", "sft", "-", NP_MBF_CURRENT, 4096, 1, NULL) > 0);
}
END_TEST

START_TEST(test_windows_and_problems)
{
    const struct np_mb_row *r = np_mb_ref_find(&ref, NULL, NULL, "deepseek_v3", NP_MB_FP8_MX, "gb300", 256, 0, 0);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->container, "26.08"); /* newest with the row */
    const struct np_mb_row *old = np_mb_ref_find(&ref, "26.06", NULL, "deepseek_v3", NP_MB_FP8_MX, "gb300", 256,
                                                 15360, 0);
    ck_assert_ptr_nonnull(old);
    ck_assert_int_eq(old->gbs, 15360);
    ck_assert_ptr_null(np_mb_ref_find(&ref, "26.08", NULL, "deepseek_v3", NP_MB_BF16, "gb300", 256, 0, 0));
    /* a chosen window */
    size_t len;
    char *text = write_log(50, 10000.0, r->gbs, 1600.0, &len);
    struct np_mb_result res;
    ck_assert_int_eq(analyse_text(text, len, r, 41, 50, &res), 0);
    ck_assert_int_eq((int)res.steps, 10);
    ck_assert_double_eq_tol(res.step_s, 10.0, 1e-9);
    ck_assert_double_eq_tol(res.tokens_per_s_per_gpu, 4096.0 * 4096 / (10.0 * 256), 1e-6);
    /* MFU against the MXFP8 peak of a GB300 (4900) */
    ck_assert_double_eq_tol(res.mfu_percent, 100 * res.model_tflops_per_gpu / 4900, 1e-9);
    /* a window past the end is a problem, with the count */
    ck_assert_int_eq(analyse_text(text, len, r, 45, 60, &res), -1);
    ck_assert(strstr(res.problem, "6 of 16") != NULL);
    free(text);
    /* a short run: its last 10 iterations */
    text = write_log(20, 10000.0, r->gbs, -1, &len);
    ck_assert_int_eq(analyse_text(text, len, r, -1, -1, &res), 0);
    ck_assert_int_eq(res.first, 11);
    ck_assert_int_eq(res.last, 20);
    ck_assert(isnan(res.logged_tflops_per_gpu)); /* no rank-0 line */
    ck_assert(isnan(res.tflops_disagreement));
    free(text);
    /* a rank-0 figure 10 % off the formula is reported */
    double f = np_mbf_flops_per_token("deepseek_v3", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, NULL);
    double tflops = f * 4096.0 * 4096 / (10.0 * 256) / 1e12;
    text = write_log(50, 10000.0, r->gbs, tflops * 1.1, &len);
    ck_assert_int_eq(analyse_text(text, len, r, -1, -1, &res), 0);
    ck_assert_double_eq_tol(res.tflops_disagreement, 0.1, 0.001);
    free(text);
    /* no iteration lines at all */
    static const char junk[] = "nothing here\n\x01\x02 iteration x/y |\n";
    ck_assert_int_eq(analyse_text(junk, sizeof junk - 1, r, -1, -1, &res), -1);
    ck_assert_str_eq(res.problem, "no iteration lines");
}
END_TEST

START_TEST(test_dtype_aliases)
{
    ck_assert_int_eq(np_mb_dtype_parse("MXFP8"), NP_MB_FP8_MX);
    ck_assert_int_eq(np_mb_dtype_parse("fp8-mx"), NP_MB_FP8_MX);
    ck_assert_int_eq(np_mb_dtype_parse("FP8"), NP_MB_FP8_CS);
    ck_assert_int_eq(np_mb_dtype_parse("FP8-CS"), NP_MB_FP8_CS);
    ck_assert_int_eq(np_mb_dtype_parse("NVFP4"), NP_MB_NVFP4);
    ck_assert_int_eq(np_mb_dtype_parse("bf16"), NP_MB_BF16);
    ck_assert_int_eq(np_mb_dtype_parse("fp4"), NP_MB_DTYPE_NONE);
    ck_assert_int_eq(np_mb_dtype_parse(NULL), NP_MB_DTYPE_NONE);
    ck_assert_str_eq(np_mb_dtype_name(NP_MB_FP8_MX), "fp8_mx");
    ck_assert_str_eq(np_mb_dtype_label(NP_MB_FP8_MX), "MXFP8");
    /* peaks: NVFP4 on GB300/B300, none on H100 */
    ck_assert_double_eq(np_mb_peak(&ref, "gb300", NP_MB_NVFP4), 14700);
    ck_assert_double_eq(np_mb_peak(&ref, "B300", NP_MB_NVFP4), 13500);
    ck_assert_double_eq(np_mb_peak(&ref, "h100", NP_MB_NVFP4), 0);
    ck_assert_double_eq(np_mb_peak(&ref, "h100", NP_MB_FP8_CS), 1979);
}
END_TEST

START_TEST(test_bad_reference_files)
{
    char dir[] = "/tmp/np-mbref-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char runs[256], peaks[256];
    snprintf(runs, sizeof runs, "%s/runs.tsv", dir);
    snprintf(peaks, sizeof peaks, "%s/peaks.tsv", dir);
    FILE *f = fopen(peaks, "w");
    fputs("gpu_type\tbf16\tfp8_cs\tfp8_mx\tfp8_sc\tnvfp4\ngb300\t2450\t4900\t4900\t4900\t14700\n", f);
    fclose(f);
    f = fopen(runs, "w");
    fputs("# comment\ncontainer\ttask\trecipe\tfamily\tmodel\tvariant\tdtype\tprecision\tgpu_type\tgpus\tgbs\tmbs\t"
          "seq_len\tfsdp\ttp\tpp\tcp\tvp\tep\tga\ttokens_per_s_per_gpu\tmodel_tflops_per_gpu\tpublished_as\tfootnote\t"
          "mb_release\tsource\n"
          "26.08\tpretrain\tx\tf\tX\t-\tfp4\tFP4\tgb300\t8\t8\t1\t4096\t-\t1\t1\t1\tn/a\t1\t-\t100\t10\tonly\t-\t"
          "v0.6.0\ts:1\n",
          f);
    fclose(f);
    struct np_mb_ref r2;
    memset(&r2, 0, sizeof r2);
    struct np_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(np_mb_ref_load(runs, peaks, &r2, &err), NP_E_PARSE);
    ck_assert_int_eq(err.line, 3);
    ck_assert(strstr(err.text, "dtype") != NULL);
    np_mb_ref_free(&r2);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(np_mb_ref_load("/nonexistent/runs.tsv", peaks, &r2, &err), NP_E_IO);
    np_mb_ref_free(&r2);
    unlink(runs);
    unlink(peaks);
    rmdir(dir);
}
END_TEST

/* Markdown of the 26.08 runs, each a log at its published speed with its rank-0 figure: the 26.08 table as
 * NVIDIA publishes it (docs/performance-summary.md at 067f987), line for line and in order, but for the
 * |---| separator rows, whose dash counts nemoperf does not copy. */
START_TEST(test_markdown_26_08)
{
    struct np_mb_measured m[64];
    size_t nm = 0;
    for (size_t i = 0; i < ref.n && nm < 64; i++) {
        const struct np_mb_row *r = &ref.rows[i];
        if (strcmp(r->container, "26.08") != 0)
            continue;
        double step_ms = 1000.0 * r->seq_len * (double)r->gbs / (r->tokens_per_s_per_gpu * r->gpus);
        size_t len;
        char *text = write_log(50, step_ms, r->gbs, r->model_tflops_per_gpu, &len);
        struct np_mb_result res;
        ck_assert_int_eq(analyse_text(text, len, r, -1, -1, &res), 0);
        free(text);
        m[nm].line = atoi(strrchr(r->source, ':') + 1);
        m[nm].second = strcmp(r->published_as, "second") == 0;
        m[nm].tokens_per_s_per_gpu = res.tokens_per_s_per_gpu;
        m[nm].tflops_per_gpu = res.logged_tflops_per_gpu;
        nm++;
    }
    ck_assert_int_eq((int)nm, 18);
    char *buf = NULL;
    size_t blen = 0;
    FILE *out = open_memstream(&buf, &blen);
    struct np_error err;
    memset(&err, 0, sizeof err);
    static const char layout_2608[] = "share/nemoperf/reference/megatron-bridge/26.08.tsv";
    ck_assert_int_eq(np_mb_md_render(out, layout_2608, "26.08", m, nm, 0, &err), NP_OK);
    fclose(out);
    /* the published section: from "## 26.08 NeMo Container" to the footnote definitions */
    FILE *pub = fopen("tests/data/mbridge/performance-summary.md", "r");
    ck_assert_ptr_nonnull(pub);
    char want[16384] = "", line[1024];
    int in = 0;
    while (fgets(line, sizeof line, pub)) {
        if (strncmp(line, "## 26.08 NeMo Container", 23) == 0)
            in = 1;
        else if (in && (strncmp(line, "[^", 2) == 0 || strncmp(line, "## ", 3) == 0))
            break;
        if (in && strncmp(line, "|---", 4) != 0 && strncmp(line, "|--------", 9) != 0)
            strncat(want, line, sizeof want - strlen(want) - 1);
    }
    fclose(pub);
    /* ours without the separator rows, and without the trailing blank line the publication has */
    char got[16384] = "";
    for (char *p = buf; p && *p;) {
        char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);
        if (strncmp(p, "|---|", 5) != 0)
            strncat(got, p, l < sizeof got - strlen(got) - 1 ? l : sizeof got - strlen(got) - 1);
        p += l;
    }
    size_t wl = strlen(want);
    while (wl > 0 && want[wl - 1] == '\n')
        want[--wl] = '\0';
    size_t gl = strlen(got);
    while (gl > 0 && got[gl - 1] == '\n')
        got[--gl] = '\0';
    ck_assert_str_eq(got, want);
    /* a row measured slower shows the measurement, not the publication */
    m[0].tokens_per_s_per_gpu = 1234;
    free(buf);
    out = open_memstream(&buf, &blen);
    ck_assert_int_eq(np_mb_md_render(out, layout_2608, "26.08", m, 1, 0, &err), NP_OK);
    fclose(out);
    ck_assert(strstr(buf, "| 1234 |") != NULL);
    ck_assert(strstr(buf, "DeepSeekV4") == NULL); /* only measured rows */
    free(buf);
}
END_TEST

/* Keep the heading and table lines of a markdown text, separator rows aside, without the spaces around
 * cell borders (25.11 publishes "| DeepSeekV3 (w/o MTP)| 256 |": the cells are what counts). */
static void md_tables(const char *text, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);
        if ((*p == '|' || *p == '#') && strncmp(p, "|---", 4) != 0)
            for (size_t i = 0; i < l && o + 1 < cap; i++)
                if (!(p[i] == ' ' && ((i + 1 < l && p[i + 1] == '|') || (i > 0 && p[i - 1] == '|'))))
                    out[o++] = p[i];
        p += l;
    }
    out[o] = '\0';
}

/* Every version's table in its own layout (25.09/25.11 per system with GA and "a (b)" pairs, 26.02-26.04.01
 * with FSDP, 26.06+ without): rendered with the published figures, its headings and rows are NVIDIA's. */
START_TEST(test_markdown_every_layout)
{
    static const char *const versions[] = {"26.08", "26.06.01", "26.06", "26.04.01", "26.04",
                                           "26.02.01", "26.02", "25.11", "25.09"};
    static char pub[200000], want[100000], got[100000];
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        const char *file = v == 0 ? "tests/data/mbridge/performance-summary.md"
                                  : "tests/data/mbridge/performance-summary-archive.md";
        FILE *f = fopen(file, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(pub, 1, sizeof pub - 1, f);
        pub[n] = '\0';
        fclose(f);
        char head[64];
        snprintf(head, sizeof head, "## %s NeMo Container\n", versions[v]);
        char *start = strstr(pub, head);
        ck_assert_ptr_nonnull(start);
        char *end = strstr(start + strlen(head), "\n## ");
        if (end)
            end[1] = '\0';
        md_tables(start, want, sizeof want);
        char *buf = NULL;
        size_t blen = 0;
        FILE *out = open_memstream(&buf, &blen);
        char layout[128];
        snprintf(layout, sizeof layout, "share/nemoperf/reference/megatron-bridge/%s.tsv", versions[v]);
        struct np_error err;
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(np_mb_md_render(out, layout, versions[v], NULL, 0, 1, &err), NP_OK);
        fclose(out);
        md_tables(buf, got, sizeof got);
        free(buf);
        size_t at = 0;
        while (got[at] && got[at] == want[at])
            at++;
        ck_assert_msg(strcmp(got, want) == 0, "%s: differs at byte %zu: rendered \"%.80s\", published \"%.80s\"",
                      versions[v], at, got + at, want + at);
    }
}
END_TEST

/* Which family a run is, from the identity its manifest or the options gave it (parse/family.c's table, the
 * first row that claims it): Megatron-Bridge's by its family, a -mr recipe it publishes, a -c dtype only it
 * has, or a container without a recipe; never when the identity has a NeMo model size or another family. */
START_TEST(test_family_claims)
{
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.mbref = &ref;
    static const struct {
        const char *family, *recipe, *size, *precision, *container, *want;
    } cases[] = {
        {"mbridge", "", "", "", "", "mbridge"},
        {"", "", "", "fp8_mx", "", "mbridge"},       /* MXFP8: a Megatron-Bridge -c dtype */
        {"", "", "", "nvfp4", "", "mbridge"},
        {"", "", "", "fp4", "", "nemo"},             /* no such dtype: claimed by nobody else, NeMo's */
        {"", "deepseek_v3", "", "", "", "mbridge"},  /* a -mr name of the published runs */
        {"", "llama3.1", "", "", "", "nemo"},
        {"", "", "", "", "26.08", "mbridge"},        /* --container without a recipe */
        {"", "llama3.1", "", "", "26.08", "nemo"},   /* ... with a recipe Megatron-Bridge does not publish */
        {"", "", "8b", "fp8_mx", "", "nemo"},        /* a NeMo model size: not a -mr name */
        {"nemo", "deepseek_v3", "", "", "", "nemo"}, /* another family's manifest */
        {"automodel", "", "", "", "", "automodel"},
        {"", "automodel", "", "", "", "automodel"},
        {"dfm", "", "", "", "", "dfm"},
        {"", "wan2.1", "", "", "", "dfm"},
        {"", "", "", "", "", "nemo"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct np_identity id;
        memset(&id, 0, sizeof id);
        snprintf(id.family, sizeof id.family, "%s", cases[i].family);
        snprintf(id.recipe, sizeof id.recipe, "%s", cases[i].recipe);
        snprintf(id.model_size, sizeof id.model_size, "%s", cases[i].size);
        snprintf(id.precision, sizeof id.precision, "%s", cases[i].precision);
        snprintf(id.container, sizeof id.container, "%s", cases[i].container);
        const struct np_run_family *f = np_run_family_of(&id, &o);
        ck_assert_ptr_nonnull(f);
        ck_assert_msg(strcmp(f->name, cases[i].want) == 0, "case %zu: %s, want %s", i, f->name, cases[i].want);
    }
    /* the tolerances: Megatron-Bridge's 0.5 % (tokens/s rounded to multiples of 16), the others 5 % */
    ck_assert_double_eq(np_run_family_find("mbridge")->tolerance_pct, 0.5);
    ck_assert_double_eq(np_run_family_find("nemo")->tolerance_pct, 5.0);
    ck_assert_double_eq(np_run_family_find("automodel")->tolerance_pct, 5.0);
    ck_assert_double_eq(np_run_family_find("dfm")->tolerance_pct, 5.0);
    ck_assert_ptr_null(np_run_family_find("megatron"));
    ck_assert_ptr_null(np_run_family_find(NULL));
}
END_TEST

/* A Megatron-Bridge run folder as launch leaves it: nemoperf.json's "mbridge" object (26.08 DeepSeek V3 MXFP8
 * on 256 GB300) and a 50-iteration log whose iteration i takes base_ms + i ms, rank 0 printing util TFLOP/s. */
static void mb_run_to(const char *dir, double base_ms, double util, int last, int print_gbs);

static void mb_run(const char *dir, double base_ms, double util)
{
    mb_run_to(dir, base_ms, util, 50, 1);
}

/* mb_run's folder with the log stopping at iteration last, its lines with or without "global batch size" */
static void mb_run_to(const char *dir, double base_ms, double util, int last, int print_gbs)
{
    char p[1200];
    snprintf(p, sizeof p, "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(p), 0);
    snprintf(p, sizeof p, "%s/nemoperf.json", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"nemoperf_manifest\":1,\"mbridge\":{\"recipe\":\"deepseek_v3\",\"dtype\":\"fp8_mx\",\"gpu_type\":\"GB300\","
          "\"gpus\":256,\"container\":\"26.08\"}}\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/log-mb_42_0.out", dir);
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 1; i <= last; i++) {
        fprintf(f, "Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n", (base_ms + i) / 1000, util);
        fprintf(f,
                " [2026-11-25 21:00:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                "(ms): %.1f | energy per GPU (J/iter/GPU): %.1f | power per GPU (W/GPU): %.1f | learning rate: "
                "1.000000E-04 |%s lm loss: 1.050000E+01 | loss scale: 1.0 | grad norm: "
                "1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
                i % 60, i, 50, i * 4096, base_ms + i, 100.0 * i, 600.0 + i, print_gbs ? " global batch size:  4096 |" : "");
    }
    fclose(f);
}

static void mb_parse(const char *dir, const struct np_parse_opts *o, struct np_parse_result *res)
{
    struct np_recipe_set recipes;
    struct np_ref_table nref;
    struct np_error err;
    memset(&nref, 0, sizeof nref);
    ck_assert(np_recipe_set_load_dir("recipes", &recipes, &err) == NP_OK);
    ck_assert(np_ref_load_dir("share/nemoperf/reference", &nref, &err) == NP_OK);
    char *paths[] = {(char *)dir};
    ck_assert_int_eq(np_parse_paths(paths, 1, o, &recipes, &nref, res), NP_OK);
    ck_assert_uint_eq(res->nruns, 1);
    np_recipe_set_free(&recipes);
    np_ref_free(&nref);
}

/* The Megatron-Bridge family's analysis end to end on a run folder: the identity from the manifest's
 * "mbridge" object, llmb's window 35-44 (its mean computed here: iterations 35..44 at 10000 + i ms), the
 * published row's verdict at 0.5 %, TFLOP/s/GPU from Megatron-Bridge's formula (not rank 0's figure, 10 %
 * off here); --window 10 is the last 10 iterations, --steps 0-4 asks for an iteration Megatron never
 * prints (it counts from 1): said; without the published data the run is unidentified, said why. */
START_TEST(test_family_run_analysis)
{
    char dir[] = "/tmp/np-mbfam-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    const double base = 10000.0;
    double f = np_mbf_flops_per_token("deepseek_v3", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, NULL);
    double mean_s = (base + 39.5) / 1000; /* iterations 35..44 */
    double tpg = 4096.0 * 4096 / (mean_s * 256);
    double tflops = f * tpg / 1e12;
    mb_run(run, base, tflops * 1.1);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.reference = 1;
    struct np_parse_result res;
    mb_parse(dir, &o, &res);
    const struct np_run *r = &res.runs[0];
    ck_assert_str_eq(r->family->name, "mbridge");
    ck_assert_str_eq(r->id_source, "manifest");
    ck_assert_str_eq(r->id.recipe, "deepseek_v3");
    ck_assert_str_eq(r->id.precision, "fp8_mx");
    ck_assert_str_eq(r->id.gpu_type, "gb300");
    ck_assert_int_eq(r->id.gpus, 256);
    ck_assert_int_eq(r->id.gbs, 4096);    /* from the published row */
    ck_assert_int_eq(r->id.seq_len, 4096);
    ck_assert_msg(r->status == NP_RUN_OK, "%s: %s", np_run_status_name(r->status), r->why ? r->why : "");
    ck_assert_str_eq(r->window.rule, "iterations 35-44 of 50 (NVIDIA's llmb parser)");
    ck_assert_int_eq(r->window.first, 35);
    ck_assert_int_eq(r->window.last, 44);
    ck_assert_uint_eq(r->window.count, 10);
    ck_assert_double_eq_tol(r->window.mean_s, mean_s, 1e-12);
    ck_assert_double_eq_tol(r->steady.tokens_per_s_per_gpu, tpg, 1e-6);
    ck_assert_double_eq_tol(r->steady.model_tflops_per_gpu, tflops, tflops * 1e-9);
    ck_assert_double_eq_tol(r->steady.mfu_percent, 100 * tflops / 4900, 1e-9); /* GB300 MXFP8 peak */
    ck_assert_double_eq_tol(r->step_time_s, (base + 50) / 1000, 1e-12);  /* the last iteration */
    ck_assert_ptr_nonnull(r->ref);
    ck_assert_double_eq(np_run_tolerance(r, &o), 0.5);
    ck_assert_double_eq_tol(r->ref_ratio, tpg / 6288, 1e-12); /* 26.08's published 6288 tokens/s/GPU */
    ck_assert_int_eq(r->verdict, tpg / 6288 < 0.995 ? NP_VERDICT_FAIL : tpg / 6288 > 1.005 ? NP_VERDICT_FAST
                                                                                           : NP_VERDICT_PASS);
    ck_assert_ptr_nonnull(r->note);
    ck_assert_msg(strstr(r->note, "rank 0 logs ") != NULL, "%s", r->note); /* the 10 % is said */
    ck_assert_msg(strstr(r->note, "no published row") == NULL, "%s", r->note);
    /* energy over the window's iterations 35-44 (the scan numbers Megatron's iteration i as i - 1): 3950 J,
     * 639.5 W; J/token = 3950 x 256 GPUs / (4096 x 4096) */
    ck_assert_uint_eq(r->energy.steps, 10);
    ck_assert_double_eq_tol(r->energy.j_per_gpu_iter, 3950, 1e-9);
    ck_assert_double_eq_tol(r->energy.w_per_gpu, 639.5, 1e-9);
    ck_assert_double_eq_tol(r->energy.j_per_token, 3950.0 * 256 / (4096.0 * 4096), 1e-15);
    np_parse_result_free(&res);

    /* --window 10: the last 10 iterations, 41-50 */
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.window = 10;
    o.window_strict = 1;
    mb_parse(dir, &o, &res);
    r = &res.runs[0];
    ck_assert_str_eq(r->window.rule, "--window");
    ck_assert_int_eq(r->window.first, 41);
    ck_assert_int_eq(r->window.last, 50);
    ck_assert_uint_eq(r->window.count, 10);
    ck_assert_double_eq_tol(r->window.mean_s, (base + 45.5) / 1000, 1e-12);
    np_parse_result_free(&res);

    /* --steps 0-4: iteration 0 is not Megatron's; 1-4 are there, the window is short: invalid, said */
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.steps_first = 0;
    o.steps_last = 4;
    mb_parse(dir, &o, &res);
    r = &res.runs[0];
    ck_assert_str_eq(r->window.rule, "--steps");
    ck_assert_int_eq(r->window.first, 0);
    ck_assert_int_eq(r->window.last, 4);
    ck_assert_uint_eq(r->window.count, 4);
    ck_assert_int_eq(r->status, NP_RUN_INVALID);
    ck_assert_msg(strstr(r->why, "window 0-4: 4 of 5 iterations") != NULL, "%s", r->why);
    np_parse_result_free(&res);

    /* --tolerance given: it holds for a family run too (Megatron-Bridge's own 0.5 % is the default only) */
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.reference = 1;
    o.tolerance_pct = 7;
    o.tolerance_given = 1;
    mb_parse(dir, &o, &res);
    ck_assert_double_eq(np_run_tolerance(&res.runs[0], &o), 7);
    np_parse_result_free(&res);

    /* a log that stops at iteration 44 and prints no global batch size: llmb's window 35-44 is whole, the GBS
     * is the published row's (the manifest names none) */
    char run44[600];
    snprintf(run44, sizeof run44, "%s/run44", dir);
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", run);
    ck_assert_int_eq(system(rm), 0);
    mb_run_to(run44, base, tflops, 44, 0);
    np_parse_opts_init(&o);
    o.mbref = &ref;
    mb_parse(dir, &o, &res);
    r = &res.runs[0];
    ck_assert_str_eq(r->window.rule, "iterations 35-44 of 50 (NVIDIA's llmb parser)");
    ck_assert_int_eq(r->window.first, 35);
    ck_assert_int_eq(r->window.last, 44);
    ck_assert_int_eq(r->id.gbs, 4096);
    ck_assert_double_eq_tol(r->steady.tokens_per_s_per_gpu, tpg, 1e-6);
    np_parse_result_free(&res);

    /* no published data at hand */
    np_parse_opts_init(&o);
    mb_parse(dir, &o, &res);
    r = &res.runs[0];
    ck_assert_int_eq(r->status, NP_RUN_UNIDENTIFIED);
    ck_assert_msg(strstr(r->why, "Megatron-Bridge data not found") != NULL, "%s", r->why);
    np_parse_result_free(&res);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A Megatron-Bridge run folder written to order: the manifest's "mbridge" object (NULL: no manifest, the options
 * name the run), iterations 1..last of 50 at base_ms + i ms, each line printing global batch size gbs (0: none)
 * and grad norm `grad`. */
static double mb_util = -1; /* >= 0: each iteration line follows rank 0's "GPU utilization" line of this figure */

static void mb_write(const char *dir, const char *mbridge, double base_ms, int last, int gbs, const char *grad)
{
    char p[1200];
    snprintf(p, sizeof p, "mkdir -p '%s'", dir);
    ck_assert_int_eq(system(p), 0);
    FILE *f;
    if (mbridge) {
        snprintf(p, sizeof p, "%s/nemoperf.json", dir);
        f = fopen(p, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "{\"nemoperf_manifest\":1,\"mbridge\":%s}\n", mbridge);
        fclose(f);
    }
    snprintf(p, sizeof p, "%s/log-mb_43_0.out", dir);
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 1; i <= last; i++) {
        char g[48] = "";
        if (mb_util >= 0)
            fprintf(f, "Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n", (base_ms + i) / 1000, mb_util);
        if (gbs)
            snprintf(g, sizeof g, " global batch size: %5d |", gbs);
        fprintf(f,
                " [2026-11-25 21:00:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                "(ms): %.1f | learning rate: 1.000000E-04 |%s lm loss: 1.050000E+01 | loss scale: 1.0 | grad norm: "
                "%s | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
                i % 60, i, 50, i * 4096, base_ms + i, g, grad);
    }
    fclose(f);
}

static void mb_rm(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A case of a Megatron-Bridge run folder: run written (mb_write), the folder dir parsed with o, its one run */
static const struct np_run *mb_case(const char *dir, const char *run, const char *mbridge, double base_ms, int last,
                                    int gbs, const char *grad, const struct np_parse_opts *o,
                                    struct np_parse_result *res)
{
    mb_write(run, mbridge, base_ms, last, gbs, grad);
    mb_parse(dir, o, res);
    return &res->runs[0];
}

/* ... and after its assertions: the result freed, the run folder removed */
static void mb_done(struct np_parse_result *res, const char *run)
{
    np_parse_result_free(res);
    mb_rm(run);
}

#define MB_DS "\"recipe\":\"deepseek_v3\",\"dtype\":\"fp8_mx\",\"gpu_type\":\"GB300\",\"gpus\":256,\"container\":\"26.08\""

/* Megatron-Bridge's status ladder, each outcome and its words (the run of test_family_run_analysis, 26.08
 * DeepSeek V3 MXFP8 on 256 GB300, GBS 4096 published): a GBS the log contradicts, the log's GBS without a row,
 * a nan grad norm (llmb refuses the run), a run stopped early, MFU over 100 % (and just under), an option against
 * the manifest, an identity without its GPU type (and a recipe nothing publishes), --dtype for -c. */
START_TEST(test_family_status_ladder)
{
    char dir[] = "/tmp/np-mbst-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    struct np_parse_opts o;
    struct np_parse_result res;
    const struct np_run *r;
    double f = np_mbf_flops_per_token("deepseek_v3", "pretrain", "-", NP_MBF_CURRENT, 4096, 1, NULL);
    ck_assert(f > 0);
    /* the manifest says GBS 2048 (no row has it), the log prints 4096 */
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.reference = 1;
    r = mb_case(dir, run, "{" MB_DS ",\"gbs\":2048}", 10000, 50, 4096, "1.000", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_INVALID);
    ck_assert_str_eq(r->why, "the log prints global batch size 4096, the run is identified with 2048");
    ck_assert_ptr_null(r->ref);
    ck_assert_ptr_nonnull(strstr(r->note, "no published row for this run"));
    ck_assert_int_eq(r->verdict, NP_VERDICT_NOT_COMPARED);
    mb_done(&res, run);
    /* no GBS in the manifest, the log prints 2048: no row at 2048, so the identity's row (GBS 4096), contradicted */
    r = mb_case(dir, run, "{" MB_DS "}", 10000, 50, 2048, "1.000", &o, &res);
    ck_assert_int_eq(r->id.gbs, 4096);
    ck_assert_ptr_nonnull(r->ref);
    ck_assert_int_eq(r->status, NP_RUN_INVALID);
    ck_assert_str_eq(r->why, "the log prints global batch size 2048, the run is identified with 4096");
    mb_done(&res, run);
    /* grad norm nan */
    r = mb_case(dir, run, "{" MB_DS "}", 10000, 50, 4096, "nan", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_INVALID);
    ck_assert_str_eq(r->why, "grad norm: nan in the log (llmb refuses such runs)");
    mb_done(&res, run);
    /* stopped at iteration 30 of 50: the last 10 iterations it has, incomplete, not compared */
    r = mb_case(dir, run, "{" MB_DS "}", 10000, 30, 4096, "1.000", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_INCOMPLETE);
    ck_assert_str_eq(r->why, "stopped at iteration 30 of 50");
    ck_assert_str_eq(r->window.rule, "last 10 iterations (the run ends before iteration 44)");
    ck_assert_int_eq(r->window.first, 21);
    ck_assert_int_eq(r->window.last, 30);
    ck_assert_int_eq(r->verdict, NP_VERDICT_NOT_COMPARED);
    ck_assert_str_eq(r->ref_why, "run is incomplete: not compared");
    mb_done(&res, run);
    /* stopped at iteration 43: its last 10 iterations, 34-43 (not llmb's 35-44, which it has not whole) */
    r = mb_case(dir, run, "{" MB_DS "}", 10000, 43, 4096, "1.000", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_INCOMPLETE);
    ck_assert_int_eq(r->window.first, 34);
    ck_assert_int_eq(r->window.last, 43);
    ck_assert_uint_eq(r->window.count, 10);
    mb_done(&res, run);
    /* MFU: the window's mean step (base + 39.5 ms, base whole ms) at 200 % and 101 % of GB300's MXFP8 peak
     * (4900): implausible; at 99 %: ok */
    const double want_mfu[3] = {200, 101, 99};
    for (int k = 0; k < 3; k++) {
        double tflops = want_mfu[k] * 49, tpg = tflops * 1e12 / f, mean_s = 4096.0 * 4096 / (tpg * 256);
        double base = floor(mean_s * 1000 - 39.5);
        mean_s = (base + 39.5) / 1000;
        double mfu = 100 * (f * (4096.0 * 4096 / (mean_s * 256)) / 1e12) / 4900;
        r = mb_case(dir, run, "{" MB_DS "}", base, 50, 4096, "1.000", &o, &res);
        ck_assert_double_eq_tol(r->steady.mfu_percent, mfu, 1e-9);
        ck_assert(k < 2 ? mfu > 100 : mfu < 100);
        if (k < 2) {
            char want[160];
            snprintf(want, sizeof want, "implausible: MFU %.1f %% (a step faster than the model's FLOPs allow)", mfu);
            ck_assert_int_eq(r->status, NP_RUN_IMPLAUSIBLE);
            ck_assert_str_eq(r->why, want);
            ck_assert_int_eq(r->verdict, NP_VERDICT_NOT_COMPARED);
        } else {
            ck_assert_msg(r->status == NP_RUN_OK, "%s: %s", np_run_status_name(r->status), r->why ? r->why : "");
        }
        mb_done(&res, run);
    }
    /* --gpus against the manifest */
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.given.gpus = 128;
    r = mb_case(dir, run, "{" MB_DS "}", 10000, 50, 4096, "1.000", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_INVALID);
    ck_assert_str_eq(r->why, "--gpus 128 contradicts the manifest (256 GPUs)");
    mb_done(&res, run);
    /* options with a Megatron-Bridge dtype, GPU type and count but no recipe: unidentified (no row tail) */
    np_parse_opts_init(&o);
    o.mbref = &ref;
    strcpy(o.given.precision, "fp8_mx");
    strcpy(o.given.gpu_type, "gb300");
    o.given.gpus = 256;
    r = mb_case(dir, run, NULL, 10000, 50, 4096, "1.000", &o, &res);
    ck_assert_str_eq(r->family->name, "mbridge");
    ck_assert_int_eq(r->status, NP_RUN_UNIDENTIFIED);
    ck_assert_str_eq(r->why, "a Megatron-Bridge run needs its recipe, dtype, GPU type and GPU count (the manifest, else "
                             "--recipe --dtype --gpu --gpus)");
    np_parse_result_free(&res);
    /* options without a GPU type: unidentified, not compared; a recipe no row has, said too */
    mb_write(run, NULL, 10000, 50, 4096, "1.000");
    static const struct {
        const char *recipe, *tail;
    } un[] = {{"deepseek_v3", ""}, {"nosuch_model", ": no published row has this recipe"}};
    for (int k = 0; k < 2; k++) {
        np_parse_opts_init(&o);
        o.mbref = &ref;
        o.reference = 1;
        strcpy(o.given.recipe, un[k].recipe);
        strcpy(o.given.precision, "fp8_mx");
        o.given.gpus = 256;
        mb_parse(dir, &o, &res);
        r = &res.runs[0];
        ck_assert_str_eq(r->family->name, "mbridge");
        ck_assert_int_eq(r->status, NP_RUN_UNIDENTIFIED);
        char want[300];
        snprintf(want, sizeof want, "a Megatron-Bridge run needs its recipe, dtype, GPU type and GPU count (the "
                 "manifest, else --recipe --dtype --gpu --gpus)%s", un[k].tail);
        ck_assert_str_eq(r->why, want);
        ck_assert_str_eq(r->ref_why, "run is unidentified: not compared");
        np_parse_result_free(&res);
    }
    /* --dtype bf16 / fp8 for a Megatron-Bridge recipe: its -c bf16 / fp8_cs */
    const enum np_dtype dts[2] = {NP_DTYPE_BF16, NP_DTYPE_FP8};
    const char *const names[2] = {"bf16", "fp8_cs"};
    for (int k = 0; k < 2; k++) {
        np_parse_opts_init(&o);
        o.mbref = &ref;
        strcpy(o.given.recipe, "deepseek_v3");
        o.given.dtype = dts[k];
        strcpy(o.given.gpu_type, "gb300");
        o.given.gpus = 256;
        mb_parse(dir, &o, &res);
        r = &res.runs[0];
        ck_assert_str_eq(r->family->name, "mbridge");
        ck_assert_str_eq(r->id.precision, names[k]);
        ck_assert_int_eq(r->id.dtype, dts[k]);
        ck_assert_str_eq(r->gpu_source, "option");
        np_parse_result_free(&res);
    }
    mb_rm(dir);
}
END_TEST

/* np_mb_analyse with every argument named (the log from write_log). */
static int analyse_args(const char *text, size_t len, const char *recipe, int gpus, int gbs, int seq_len, long first,
                        long last, struct np_mb_result *res)
{
    FILE *f = fmemopen((void *)text, len, "r");
    ck_assert_ptr_nonnull(f);
    struct np_mb_log log;
    memset(&log, 0, sizeof log);
    struct np_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(np_mb_log_read(f, "test.log", &log, &err), NP_OK);
    fclose(f);
    int rc = np_mb_analyse(&log, &ref, recipe, "pretrain", "-", "v0.6.0", NP_MB_FP8_MX, "gb300", gpus, gbs, seq_len, 1,
                           first, last, res);
    np_mb_log_free(&log);
    return rc;
}

/* llmb's window at its edges (a run of 10, 11, 43, 44, 45 iterations), the GBS from the log when the identity has
 * none, what tokens/s cannot do without, MFU from rank 0's figure when no formula is implemented; the peaks table,
 * the container order, a row's sequence length and container. */
START_TEST(test_analyse_edges)
{
    static const struct {
        int iters;
        long first, last;
    } w[] = {{10, 1, 10}, {11, 2, 11}, {43, 34, 43}, {44, 35, 44}, {45, 35, 44}};
    struct np_mb_result res;
    size_t len;
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        char *text = write_log(w[i].iters, 1000.0, 4096, -1, &len);
        ck_assert_int_eq(analyse_args(text, len, "deepseek_v3", 256, 4096, 4096, -1, -1, &res), 0);
        ck_assert_msg(res.first == w[i].first && res.last == w[i].last, "%d iterations: %ld-%ld", w[i].iters,
                      res.first, res.last);
        ck_assert_uint_eq(res.steps, (size_t)(w[i].last - w[i].first + 1));
        free(text);
    }
    /* GBS: the log's when the identity has none; without either, or without a sequence or GPUs: no tokens/s */
    char *text = write_log(50, 10000.0, 2048, -1, &len);
    ck_assert_int_eq(analyse_args(text, len, "deepseek_v3", 256, 0, 4096, -1, -1, &res), 0);
    ck_assert_int_eq(res.gbs, 2048);
    ck_assert_double_eq_tol(res.tokens_per_s_per_gpu, 4096.0 * 2048 / (10.0 * 256), 1e-9);
    ck_assert_int_eq(analyse_args(text, len, "deepseek_v3", 256, 4096, 4096, -1, -1, &res), 0);
    ck_assert_int_eq(res.gbs, 2048); /* what the log says, for the caller to compare */
    ck_assert_double_eq_tol(res.tokens_per_s_per_gpu, 4096.0 * 4096 / (10.0 * 256), 1e-9);
    free(text);
    text = write_log(50, 10000.0, 0, -1, &len);
    const char *need = "GBS, sequence length and GPU count are needed for tokens/s";
    ck_assert_int_eq(analyse_args(text, len, "deepseek_v3", 256, 0, 4096, -1, -1, &res), -1);
    ck_assert_str_eq(res.problem, need);
    ck_assert_int_eq(analyse_args(text, len, "deepseek_v3", 256, 4096, 0, -1, -1, &res), -1);
    ck_assert_str_eq(res.problem, need);
    ck_assert_int_eq(analyse_args(text, len, "deepseek_v3", 0, 4096, 4096, -1, -1, &res), -1);
    ck_assert_str_eq(res.problem, need);
    free(text);
    /* no formula for the recipe: MFU from rank 0's 1225 TFLOP/s/GPU, a quarter of GB300's MXFP8 4900 */
    text = write_log(50, 10000.0, 4096, 1225.0, &len);
    ck_assert_int_eq(analyse_args(text, len, "deepseek_v4_flash", 256, 4096, 4096, -1, -1, &res), 0);
    ck_assert(isnan(res.model_tflops_per_gpu));
    ck_assert_ptr_nonnull(res.why_flops);
    ck_assert_double_eq_tol(res.logged_tflops_per_gpu, 1225.0, 1e-9);
    ck_assert_double_eq_tol(res.mfu_percent, 25.0, 1e-9);
    ck_assert(isnan(res.tflops_disagreement));
    free(text);
    /* the peaks: GB300 MXFP8 4900 (its dense figure); none for an unknown GPU or dtype */
    ck_assert_double_eq(np_mb_peak(&ref, "GB300", NP_MB_FP8_MX), 4900);
    /* a GPU without a peak (not in the table): no MFU, not an infinite one */
    text = write_log(50, 10000.0, 4096, -1, &len);
    static const char *const nopeak[] = {"nosuch"};
    for (int k = 0; k < 1; k++) {
        FILE *f = fmemopen(text, len, "r");
        ck_assert_ptr_nonnull(f);
        struct np_mb_log log;
        memset(&log, 0, sizeof log);
        struct np_error err;
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(np_mb_log_read(f, "test.log", &log, &err), NP_OK);
        fclose(f);
        ck_assert_int_eq(np_mb_analyse(&log, &ref, "deepseek_v3", "pretrain", "-", "v0.6.0", NP_MB_FP8_MX, nopeak[k], 256,
                                       4096, 4096, 1, -1, -1, &res), 0);
        ck_assert(res.model_tflops_per_gpu > 0);
        ck_assert_msg(isnan(res.mfu_percent), "%s: MFU %g", nopeak[k], res.mfu_percent);
        np_mb_log_free(&log);
    }
    free(text);
    ck_assert_double_eq(np_mb_peak(&ref, "nosuch", NP_MB_FP8_MX), 0);
    ck_assert_double_eq(np_mb_peak(&ref, NULL, NP_MB_FP8_MX), 0);
    ck_assert_double_eq(np_mb_peak(&ref, "gb300", (enum np_mb_dtype)-1), 0);
    ck_assert_double_eq(np_mb_peak(&ref, "gb300", NP_MB_NDTYPES), 0);
    /* container order: field by field, numerically */
    ck_assert_int_eq(np_mb_container_newer("26.04.01", "26.04"), 1);
    ck_assert_int_eq(np_mb_container_newer("26.04", "26.04.01"), 0);
    ck_assert_int_eq(np_mb_container_newer("26.04", "26.04"), 0);
    ck_assert_int_eq(np_mb_container_newer("25.11", "26.02"), 0);
    ck_assert_int_eq(np_mb_container_newer("26.10", "26.9"), 1);
    /* a row's sequence length and container must match when given */
    ck_assert_ptr_nonnull(np_mb_ref_find(&ref, NULL, NULL, "deepseek_v3", NP_MB_FP8_MX, "gb300", 256, 0, 4096));
    ck_assert_ptr_null(np_mb_ref_find(&ref, NULL, NULL, "deepseek_v3", NP_MB_FP8_MX, "gb300", 256, 0, 8192));
    ck_assert_ptr_null(np_mb_ref_find(&ref, "99.01", NULL, "deepseek_v3", NP_MB_FP8_MX, "gb300", 256, 0, 0));
    ck_assert_ptr_null(np_mb_ref_find(&ref, NULL, "lora", "deepseek_v3", NP_MB_FP8_MX, "gb300", 256, 0, 0));
    ck_assert_ptr_null(np_mb_ref_find(&ref, NULL, NULL, "deepseek_v3", NP_MB_FP8_MX, "gb300", 128, 0, 0));
    ck_assert_ptr_null(np_mb_ref_find(&ref, NULL, NULL, NULL, NP_MB_FP8_MX, "gb300", 256, 0, 0));
}
END_TEST

/* The family's other outcomes: a recipe Megatron-Bridge's FLOPs are not implemented for (26.08 DeepSeek V4 Flash
 * on 128 GB300, at its published speed): rank 0's TFLOP/s/GPU and its MFU stand in, the reason is a note, the
 * verdict is still made; the synthetic workload (nemoperf-synth in the rank command): synthetic, never compared; a
 * submitted run whose log has no iteration line: no steps, not compared. */
START_TEST(test_family_other_outcomes)
{
    char dir[] = "/tmp/np-mbo-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char run[600];
    snprintf(run, sizeof run, "%s/run", dir);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    o.mbref = &ref;
    o.reference = 1;
    struct np_parse_result res;
    const struct np_run *r;
    const struct np_mb_row *row = np_mb_ref_find(&ref, "26.08", NULL, "deepseek_v4_flash", NP_MB_FP8_MX, "gb300", 128,
                                                 0, 0);
    ck_assert_ptr_nonnull(row);
    double base = floor(1000.0 * row->seq_len * (double)row->gbs / (row->tokens_per_s_per_gpu * 128)) - 39.5;
    mb_util = 1225.0;
    mb_write(run, "{\"recipe\":\"deepseek_v4_flash\",\"dtype\":\"fp8_mx\",\"gpu_type\":\"GB300\",\"gpus\":128,"
             "\"container\":\"26.08\"}", base, 50, row->gbs, "1.000");
    mb_util = -1;
    mb_parse(dir, &o, &res);
    r = &res.runs[0];
    ck_assert_msg(r->status == NP_RUN_OK, "%s: %s", np_run_status_name(r->status), r->why ? r->why : "");
    ck_assert(isnan(r->flops_per_sample));
    ck_assert_double_eq_tol(r->steady.model_tflops_per_gpu, 1225.0, 1e-9);
    ck_assert_double_eq_tol(r->steady.mfu_percent, 25.0, 1e-9); /* 1225 of GB300's MXFP8 4900 */
    ck_assert_ptr_nonnull(r->note);
    ck_assert_msg(strstr(r->note, "DeepSeek V4 hybrid sparse attention") != NULL, "%s", r->note);
    ck_assert_ptr_nonnull(r->ref);
    double tpg = row->seq_len * (double)row->gbs / ((base + 39.5) / 1000 * 128);
    ck_assert_double_eq_tol(r->ref_ratio, tpg / row->tokens_per_s_per_gpu, 1e-12);
    ck_assert_int_eq(r->verdict, NP_VERDICT_PASS);
    mb_done(&res, run);
    /* the synthetic workload */
    r = mb_case(dir, run, "{" MB_DS "},\"workload\":\"synthetic\"", 10000, 50, 4096, "1.000", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_SYNTHETIC);
    ck_assert_ptr_null(r->ref);
    ck_assert(isnan(r->steady.mfu_percent) && isnan(r->steady.model_tflops_per_gpu));
    ck_assert_msg(strstr(r->note, "synthetic workload: nemoperf-synth stood in for the rank command; no GPU MFU, "
                                  "TFLOP/s or time to train") != NULL, "%s", r->note);
    ck_assert_int_eq(r->verdict, NP_VERDICT_NOT_COMPARED);
    ck_assert_str_eq(r->ref_why, "synthetic workload (CPU work standing in for a GPU job): nothing published to compare");
    mb_done(&res, run);
    /* submitted, a log without an iteration line */
    r = mb_case(dir, run, "{" MB_DS "},\"submitted\":true", 10000, 0, 4096, "1.000", &o, &res);
    ck_assert_int_eq(r->status, NP_RUN_NO_STEPS);
    ck_assert_str_eq(r->why, "no training-step line in the logs");
    ck_assert_int_eq(r->verdict, NP_VERDICT_NOT_COMPARED);
    np_parse_result_free(&res);
    mb_rm(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mbridge");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_published_row);
    tcase_add_test(tc, test_formula_pins);
    tcase_add_test(tc, test_windows_and_problems);
    tcase_add_test(tc, test_dtype_aliases);
    tcase_add_test(tc, test_bad_reference_files);
    tcase_add_test(tc, test_markdown_26_08);
    tcase_add_test(tc, test_markdown_every_layout);
    tcase_add_test(tc, test_family_claims);
    tcase_add_test(tc, test_family_run_analysis);
    tcase_add_test(tc, test_family_status_ladder);
    tcase_add_test(tc, test_analyse_edges);
    tcase_add_test(tc, test_family_other_outcomes);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int nf = srunner_ntests_failed(sr);
    srunner_free(sr);
    return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
