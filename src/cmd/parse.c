/* parse.c - nemoperf-parse: NeMo logs in, published-style numbers out.
 *
 * Thin front end: options (one getopt_long table), recipe and reference
 * loading, np_parse_stream() into an np_report (each run written as soon as
 * its turn comes; read errors on stderr in the same order), exit status.  0
 * when every run is ok (and, with --reference, every comparison passes), 1
 * otherwise or when no log was found, 2 for usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/diag.h"
#include "nemoperf/flops.h"
#include "nemoperf/recipe.h"
#include "nemoperf/reference.h"
#include "nemoperf/report.h"
#include "nemoperf/run.h"
#include "nemoperf/version.h"

enum {
    OPT_INCLUDE = 256, OPT_ALL_STEPS, OPT_WINDOW, OPT_STEPS, OPT_TOKENS, OPT_RECIPE, OPT_SIZE, OPT_DTYPE,
    OPT_GPUS, OPT_GPU, OPT_SEQ, OPT_GBS, OPT_REFERENCE, OPT_TOLERANCE, OPT_NO_PROGRESS, OPT_VERSION
};

static const struct option parse_options[] = {
    {"format", required_argument, NULL, 'f'},
    {"jobs", required_argument, NULL, 'j'},
    {"include", required_argument, NULL, OPT_INCLUDE},
    {"all-steps", no_argument, NULL, OPT_ALL_STEPS},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"tokens", required_argument, NULL, OPT_TOKENS},
    {"recipe", required_argument, NULL, OPT_RECIPE},
    {"size", required_argument, NULL, OPT_SIZE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"seq-len", required_argument, NULL, OPT_SEQ},
    {"gbs", required_argument, NULL, OPT_GBS},
    {"reference", no_argument, NULL, OPT_REFERENCE},
    {"tolerance", required_argument, NULL, OPT_TOLERANCE},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static void parse_usage(FILE *out)
{
    fprintf(out,
            "usage: nemoperf-parse [OPTIONS] [PATH...]\n"
            "Find NeMo training logs under each PATH (default .) and report one row per run:\n"
            "last step time, steady-state window, tokens/s, model TFLOP/s/GPU, MFU, days to train.\n"
            "\n"
            "  -f, --format FMT     table (default), markdown (the published layout), csv, json\n"
            "      --include GLOB   log file names to read (default '*.out')\n"
            "      --all-steps      read whole logs (default: read each log from its end)\n"
            "      --window N       steady-state window: the last N steps, reading back as far as needed\n"
            "                       (default: up to the last 10 steps found in each log's tail)\n"
            "      --steps A-B      steady-state window: iterations A..B (e.g. 35-44)\n"
            "      --tokens N       tokens for the time-to-train estimate (default 1e12)\n"
            "      --reference      compare with NVIDIA's published numbers\n"
            "      --tolerance PCT  allowed shortfall against the published throughput (default 5)\n"
            "  -j, --jobs N         threads (default: twice the online CPUs)\n"
            "      --no-progress    never show progress (it shows on a terminal after 1 s)\n"
            "  -q, --quiet          do not print read errors on stderr (still in JSON 'errors')\n"
            "Identity when a run has no nemoperf.json manifest and no pretrain_<recipe>_<size>_<dtype>_<gpus>\n"
            "folder:\n"
            "      --recipe NAME --size S --dtype bf16|fp8 --gpus N --gpu TYPE --seq-len N --gbs N\n"
            "\n"
            "Exit status: 0 every run ok (and every --reference comparison PASS), 1 otherwise or no log\n"
            "found, 2 usage error.  See nemoperf-parse(1).\n");
}

/* Strict positive integer in [1, max]; names the option on error. */
static int parse_int_arg(const char *opt, const char *arg, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < 1 || v > max) {
        np_errorf("%s: '%s' is not an integer between 1 and %ld", opt, arg, max);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_double_arg(const char *opt, const char *arg, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || !isfinite(v) || v < min || v > max) {
        np_errorf("%s: '%s' is not a number between %g and %g", opt, arg, min, max);
        return 0;
    }
    *out = v;
    return 1;
}

static int parse_copy(const char *opt, const char *arg, char *dst, size_t size)
{
    if (!*arg || strlen(arg) >= size) {
        np_errorf("%s: '%s' is empty or too long (at most %zu characters)", opt, arg, size - 1);
        return 0;
    }
    strcpy(dst, arg);
    return 1;
}

/* The run sink: exit status, read errors on stderr, the run to the report. */
struct parse_out {
    struct np_report *rep;
    const struct np_parse_opts *o;
    int quiet;
    size_t nruns;
    int failed; /* a run not ok, or a reference comparison failed */
};

static enum np_status parse_sink_run(void *ctx, const struct np_run *r)
{
    struct parse_out *po = ctx;
    po->nruns++;
    if (r->status != NP_RUN_OK || (po->o->reference && !isnan(r->ref_ratio) && !r->ref_pass))
        po->failed = 1;
    return np_report_run(po->rep, r);
}

static enum np_status parse_sink_error(void *ctx, const char *msg)
{
    struct parse_out *po = ctx;
    if (!po->quiet)
        np_errorf("%s", msg);
    return np_report_error(po->rep, msg);
}

int main(int argc, char **argv)
{
    np_set_progname(argv[0]);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    int fmt = NP_FMT_TABLE, quiet = 0, no_progress = 0;
    long l;
    double d;
    int c;
    while ((c = getopt_long(argc, argv, "f:j:qh", parse_options, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((fmt = np_format_parse(optarg)) < 0) {
                np_errorf("--format: '%s' is not one of table, markdown, csv, json", optarg);
                return 2;
            }
            break;
        case 'j':
            if (!parse_int_arg("--jobs", optarg, 256, &l))
                return 2;
            o.jobs = (int)l;
            break;
        case OPT_INCLUDE:
            if (!*optarg) {
                np_errorf("--include: the pattern is empty");
                return 2;
            }
            o.include = optarg;
            break;
        case OPT_ALL_STEPS: o.all_steps = 1; break;
        case OPT_WINDOW:
            if (!parse_int_arg("--window", optarg, 1000000, &l))
                return 2;
            o.window = (size_t)l;
            o.window_strict = 1;
            break;
        case OPT_STEPS: {
            char *dash = strchr(optarg, '-'), *end1, *end2;
            long a = -1, b = -1;
            if (dash) {
                errno = 0;
                a = strtol(optarg, &end1, 10);
                b = strtol(dash + 1, &end2, 10);
                if (errno || end1 != dash || end1 == optarg || *end2 || end2 == dash + 1)
                    a = -1;
            }
            if (a < 0 || b < a) {
                np_errorf("--steps: '%s' is not a range A-B of iterations with 0 <= A <= B", optarg);
                return 2;
            }
            o.steps_first = a;
            o.steps_last = b;
            break;
        }
        case OPT_TOKENS:
            if (!parse_double_arg("--tokens", optarg, 1, 1e18, &d))
                return 2;
            o.train_tokens = d;
            break;
        case OPT_RECIPE:
            if (!parse_copy("--recipe", optarg, o.given.recipe, sizeof o.given.recipe))
                return 2;
            break;
        case OPT_SIZE:
            if (!parse_copy("--size", optarg, o.given.model_size, sizeof o.given.model_size))
                return 2;
            break;
        case OPT_DTYPE:
            if ((o.given.dtype = np_dtype_parse(optarg)) == NP_DTYPE_NONE) {
                np_errorf("--dtype: '%s' is not bf16 or fp8", optarg);
                return 2;
            }
            break;
        case OPT_GPUS:
            if (!parse_int_arg("--gpus", optarg, 10000000, &l))
                return 2;
            o.given.gpus = (int)l;
            break;
        case OPT_GPU: {
            if (np_gpu_peak_tflops(optarg, NP_DTYPE_BF16) <= 0) {
                char list[128] = "";
                for (const char *const *g = np_gpu_types(); *g; g++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", *g);
                np_errorf("--gpu: '%s' is not a known GPU type (%s)", optarg, list);
                return 2;
            }
            size_t i = 0;
            for (; optarg[i] && i + 1 < sizeof o.given.gpu_type; i++)
                o.given.gpu_type[i] = (char)((optarg[i] >= 'A' && optarg[i] <= 'Z') ? optarg[i] + 32 : optarg[i]);
            o.given.gpu_type[i] = '\0';
            break;
        }
        case OPT_SEQ:
            if (!parse_int_arg("--seq-len", optarg, 100000000, &l))
                return 2;
            o.given.seq_len = (int)l;
            break;
        case OPT_GBS:
            if (!parse_int_arg("--gbs", optarg, 100000000, &l))
                return 2;
            o.given.gbs = (int)l;
            break;
        case OPT_REFERENCE: o.reference = 1; break;
        case OPT_TOLERANCE:
            if (!parse_double_arg("--tolerance", optarg, 0, 100, &d))
                return 2;
            o.tolerance_pct = d;
            break;
        case OPT_NO_PROGRESS: no_progress = 1; break;
        case 'q': quiet = 1; break;
        case 'h': parse_usage(stdout); return 0;
        case OPT_VERSION: printf("nemoperf-parse %s\n", NP_VERSION); return 0;
        default: parse_usage(stderr); return 2;
        }
    }
    o.progress = !no_progress && isatty(STDERR_FILENO);
    const char *after = getenv("NEMOPERF_PROGRESS_AFTER"); /* seconds; tests set 0 */
    if (after && *after) {
        char *end;
        double v = strtod(after, &end);
        if (*end || !(v >= 0) || v > 3600) {
            np_errorf("NEMOPERF_PROGRESS_AFTER=%s: expected seconds between 0 and 3600", after);
            return 2;
        }
        o.progress_after = v;
    }

    struct np_error err;
    struct np_recipe_set recipes;
    if (np_recipe_set_load_default(&recipes, &err) != NP_OK) {
        np_error_print(&err);
        return 1;
    }
    struct np_ref_table ref = {0};
    if (o.reference && np_ref_load_default(&ref, &err) != NP_OK) {
        np_error_print(&err);
        np_recipe_set_free(&recipes);
        return 1;
    }
    char *dot[] = {(char *)".", NULL};
    char *const *paths = optind < argc ? argv + optind : dot;
    size_t npaths = optind < argc ? (size_t)(argc - optind) : 1;

    /* a pipe or file gets large writes; a terminal sees rows as they come */
    static char obuf[1 << 18];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    struct parse_out po = {np_report_new(stdout, (enum np_format)fmt, &o), &o, quiet, 0, 0};
    int rc = 0;
    if (!po.rep) {
        np_errorf("%s", np_strerror(NP_E_NOMEM));
        rc = 1;
    } else {
        struct np_run_sink sink = {&po, parse_sink_run, parse_sink_error};
        enum np_status st = np_parse_stream(paths, npaths, &o, &recipes, &ref, &sink, NULL);
        if (st != NP_OK) {
            if (st == NP_E_IO)
                np_errorf("writing the report: %s", np_strerror(st));
            else
                np_errorf("%s", np_strerror(st));
            rc = 1;
        } else {
            if (po.nruns == 0) {
                np_errorf("no log files matching '%s' found", o.include);
                rc = 1;
            }
            if (po.failed)
                rc = 1;
            if (po.nruns || fmt == NP_FMT_JSON) {
                enum np_status w = np_report_finish(po.rep);
                if (w != NP_OK) {
                    np_errorf("writing the report: %s", np_strerror(w));
                    rc = 1;
                }
            }
        }
    }
    np_report_free(po.rep);
    np_ref_free(&ref);
    np_recipe_set_free(&recipes);
    return rc;
}
