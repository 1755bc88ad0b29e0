/* parse.c - nemoperf-parse: NeMo logs in, published-style numbers out.
 *
 * Thin front end: options (one getopt_long table) into a struct np_session, the scheduler backend
 * --slurm asks (SLURM_SUBMIT, as nemoperf-launch chooses it), and np_session_run (report/session.c),
 * whose value is the exit status: 0 when every run is ok or synthetic (and, with --reference, no
 * comparison is FAIL or FAST) and every folder could be read, 1 otherwise or when no log was found,
 * 2 for usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/report/plot.h"
#include "nemoperf/report/session.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/slurm/rest.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/util/version.h"

enum {
    OPT_INCLUDE = 256, OPT_ALL_STEPS, OPT_WINDOW, OPT_STEPS, OPT_TOKENS, OPT_RECIPE, OPT_SIZE, OPT_DTYPE,
    OPT_GPUS, OPT_GPU, OPT_SEQ, OPT_GBS, OPT_REFERENCE, OPT_TOLERANCE, OPT_NO_PROGRESS,
    OPT_VERDICT, OPT_GROUP, OPT_SLURM, OPT_SYSTEM, OPT_PLOT, OPT_TASK, OPT_NCCL, OPT_STRICT, OPT_STORE, OPT_DB,
    OPT_HISTORY, OPT_COMPARE, OPT_MIN_EFFECT, OPT_CLUSTER, OPT_CONTAINER, OPT_METRIC
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
    {"model", required_argument, NULL, OPT_SIZE}, /* AutoModel: the benchmark YAML's base name */
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"seq-len", required_argument, NULL, OPT_SEQ},
    {"gbs", required_argument, NULL, OPT_GBS},
    {"reference", no_argument, NULL, OPT_REFERENCE},
    {"tolerance", required_argument, NULL, OPT_TOLERANCE},
    {"verdict", required_argument, NULL, OPT_VERDICT},
    {"group", no_argument, NULL, OPT_GROUP},
    {"slurm", no_argument, NULL, OPT_SLURM},
    {"system", required_argument, NULL, OPT_SYSTEM},
    {"task", required_argument, NULL, OPT_TASK},
    {"container", required_argument, NULL, OPT_CONTAINER}, /* Megatron-Bridge: the NeMo container version */
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"nccl", no_argument, NULL, OPT_NCCL},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"version", no_argument, NULL, 'V'},
    {"store", no_argument, NULL, OPT_STORE},
    {"db", required_argument, NULL, OPT_DB},
    {"history", no_argument, NULL, OPT_HISTORY},
    {"compare", no_argument, NULL, OPT_COMPARE},
    {"min-effect", required_argument, NULL, OPT_MIN_EFFECT},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"cluster", required_argument, NULL, OPT_CLUSTER},
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
            "                       (default as NVIDIA's parser: iterations 11-44 of a 50-step run, else\n"
            "                       the last 10 steps found in each log's tail)\n"
            "      --steps A-B      steady-state window: iterations A..B (e.g. 35-44)\n"
            "      --tokens N       tokens for the time-to-train estimate (default 1e12)\n"
            "      --reference      compare with NVIDIA's published numbers (PASS, FAIL, FAST)\n"
            "      --verdict WHAT   steady (default: the window's mean) or last (the last step)\n"
            "      --tolerance PCT  allowed difference from the published throughput, either way (default 5)\n"
            "      --group          aggregate repeats of a configuration (n, mean, stdev, min, max)\n"
            "      --slurm          ask the scheduler about runs without a final log (SLURM_SUBMIT=cli|rest,\n"
            "                       SLURMRESTD_URL, SLURM_JWT, SLURM_USER as for nemoperf-launch)\n"
            "      --plot FILE      also draw throughput/GPU and MFU against GPU count (.svg, .png, .pdf);\n"
            "                       with --nccl, the NCCL message size histogram of the runs\n"
            "      --nccl           diagnostics from the whole log: NCCL/RCCL breakdown (calls, bytes, sizes per\n"
            "                       communicator size and collective), network facts (version, IB/Socket, plugin,\n"
            "                       GPU Direct RDMA, nodes), step anomalies, drift from the published row,\n"
            "                       checkpoint durations, .nsys-rep files; warnings go into each run's note\n"
            "      --strict         exit 1 when a run's NCCL network is suspect (a multi-node run on sockets,\n"
            "                       GPU Direct RDMA off, a net plugin that failed to load); implies --nccl\n"
            "Results store (SQLite file, or postgresql://...; see docs/history.md):\n"
            "      --store          also record every run reported (idempotent) in the store\n"
            "      --db WHERE       the store (default NEMOPERF_DB, else ~/.local/share/nemoperf/results.db)\n"
            "      --cluster NAME   the cluster stored runs are from (default NEMOPERF_CLUSTER, the manifest's,\n"
            "                       this host's name)\n"
            "      --history [SEL]  list stored runs, oldest first, change points marked (--plot FILE: over time;\n"
            "                       --group: a line per configuration, its newest run and change points);\n"
            "                       SEL: key=value[,...] with recipe size dtype gpus gpu container cluster kind\n"
            "                       (benchmark, profile, ...) family (nemo, mbridge, ...) config status since until job\n"
            "      --compare BASE CAND  each a folder of runs or db:SEL; per configuration a verdict FASTER,\n"
            "                       SLOWER, SAME or INCONCLUSIVE (exit 1 when anything is SLOWER)\n"
            "      --min-effect PCT the smallest change that counts (default 2)\n"
            "      --metric throughput|energy  what --compare judges (energy: J/token, LESS-ENERGY or\n"
            "                       MORE-ENERGY, exit 1 when anything is MORE-ENERGY; default throughput)\n"
            "  -j, --jobs N         threads (default: one per online CPU, twice that once a read waits for the disk)\n"
            "      --no-progress    never show progress (it shows on a terminal after NEMOPERF_PROGRESS_AFTER s, 1)\n"
            "  -q, --quiet          do not print read errors on stderr (still in JSON 'errors')\n"
            "nccl-tests runs are judged against the expected bus bandwidth of their GPU type (NEMOPERF_FABRIC_TABLE:\n"
            "your own table instead of the shipped one; see docs/fabric.md)\n"
            "  -h, --help           this help;  -V, --version  the version\n"
            "Identity when a run has no nemoperf.json manifest and no pretrain_<recipe>_<size>_<dtype>_<gpus>\n"
            "folder:\n"
            "      --recipe NAME --size S --dtype bf16|fp8 --gpus N --gpu TYPE --system NAME --seq-len N --gbs N\n"
            "      --task pretrain|sft|lora (fine-tuning: --seq-len is the packed sequence length)\n"
            "      Megatron-Bridge runs: --recipe deepseek_v3 --dtype fp8_mx|MXFP8|nvfp4|... --gpu gb300 --gpus 256\n"
            "      --container 26.08 (default: the newest version with the row); window: iterations 35-44\n"
            "      --model CONFIG   same as --size, for --recipe automodel (e.g. qwen3_moe_30b_te_deepep)\n"
            "      (an option that contradicts the manifest or the folder name makes the run invalid)\n"
            "\n"
            "Exit status: 0 every run ok or synthetic, no --reference comparison FAIL or FAST, every folder\n"
            "read; 1 otherwise or no log found; 2 usage error.  See nemoperf-parse(1).\n");
}

/* --slurm: the backend SLURM_SUBMIT names, as nemoperf-launch chooses it (nothing is sent yet), in
 * parse_be (freed at exit).  0 ok, else the exit code (2 for a bad setting), the message printed. */
static struct np_backend parse_be;

static void parse_be_free(void)
{
    np_backend_free(&parse_be);
}

static int parse_backend(void *ctx, struct np_backend **out)
{
    struct np_backend *be = &parse_be;
    struct np_error err;
    (void)ctx;
    *out = be;
    const char *how = getenv("SLURM_SUBMIT");
    enum np_status st;
    if (!how || !*how || strcmp(how, "cli") == 0) {
        struct np_slurm_cli_opts co = {0};
        st = np_slurm_cli_backend(be, &co, &err);
    } else if (strcmp(how, "rest") == 0) {
        const char *url = getenv("SLURMRESTD_URL"), *tok = getenv("SLURM_JWT");
        if (!url || !*url) {
            np_errorf("--slurm: SLURM_SUBMIT=rest needs SLURMRESTD_URL (unix:/path/to/rest.sock or "
                      "http(s)://host:port)");
            return 2;
        }
        struct np_slurm_rest_opts ro = {.url = url, .token = tok && *tok ? tok : NULL, .user = getenv("SLURM_USER")};
        st = np_slurm_rest_backend(be, &ro, &err);
    } else {
        np_errorf("--slurm: SLURM_SUBMIT=%s: unknown; allowed: cli (squeue), rest (slurmrestd)", how);
        return 2;
    }
    if (st != NP_OK) {
        np_error_print(&err);
        return np_exit_code(st);
    }
    return 0;
}

int main(int argc, char **argv)
{
    np_std_fds_reserve();
    np_set_progname(argv[0]);
    struct np_session s;
    np_session_init(&s);
    s.backend = parse_backend;
    atexit(parse_be_free);
    struct np_parse_opts *o = &s.opts;
    long l;
    double d;
    int c, at = 0, fmt;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:j:qhV", parse_options, &at)) != -1) {
        switch (c) {
        case 'f':
            if ((fmt = np_format_parse(optarg)) < 0) {
                np_errorf("--format: '%s' is not one of table, markdown, csv, json", optarg);
                return 2;
            }
            s.fmt = (enum np_format)fmt;
            break;
        case 'j':
            if (!np_session_int("--jobs", optarg, 256, &l))
                return 2;
            o->jobs = (int)l;
            break;
        case OPT_INCLUDE:
            if (!*optarg) {
                np_errorf("--include: the pattern is empty");
                return 2;
            }
            o->include = optarg;
            break;
        case OPT_ALL_STEPS: o->all_steps = 1; break;
        case OPT_WINDOW:
            if (!np_session_int("--window", optarg, 1000000, &l))
                return 2;
            o->window = (size_t)l;
            o->window_strict = 1;
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
            o->steps_first = a;
            o->steps_last = b;
            break;
        }
        case OPT_TOKENS:
            if (!np_session_double("--tokens", optarg, 1, 1e18, &d))
                return 2;
            o->train_tokens = d;
            break;
        case OPT_RECIPE: case OPT_SIZE: case OPT_DTYPE: case OPT_CONTAINER: case OPT_GPUS: case OPT_GPU:
        case OPT_SEQ: case OPT_GBS: case OPT_SYSTEM: case OPT_TASK: /* the identity: report/session.c's table */
            if (np_session_given(&s, parse_options[at].name, optarg) != 1)
                return 2;
            break;
        case OPT_REFERENCE: o->reference = 1; break;
        case OPT_TOLERANCE:
            if (!np_session_double("--tolerance", optarg, 0, 100, &d))
                return 2;
            o->tolerance_pct = d;
            o->tolerance_given = 1; /* else each family's own (Megatron-Bridge's 0.5) */
            break;
        case OPT_VERDICT:
            if (strcmp(optarg, "last") != 0 && strcmp(optarg, "steady") != 0) {
                np_errorf("--verdict: '%s' is not steady or last", optarg);
                return 2;
            }
            o->verdict_last = strcmp(optarg, "last") == 0;
            break;
        case OPT_GROUP: o->group = 1; break;
        case OPT_SLURM: s.slurm = 1; break;
        case OPT_NO_PROGRESS: s.no_progress = 1; break;
        case OPT_NCCL: s.nccl = 1; o->net_head = 0; break; /* whole logs: the network facts from there */
        case OPT_STRICT: s.nccl = s.strict = 1; o->net_head = 0; break;
        case 'q': s.quiet = 1; break;
        case 'h': parse_usage(stdout); return np_stdout_check();
        case OPT_PLOT:
            if (np_plot_kind_of(optarg) == NP_PLOT_NONE) {
                np_errorf("--plot: '%s': the file name must end in .svg, .png or .pdf", optarg);
                return 2;
            }
            s.plot = optarg;
            break;
        case 'V': printf("nemoperf-parse %s\n", NP_VERSION); return np_stdout_check();
        case OPT_STORE: s.store = 1; break;
        case OPT_HISTORY: s.history = 1; break;
        case OPT_COMPARE: s.compare = 1; break;
        case OPT_DB:
            if (!*optarg) {
                np_errorf("--db: the location is empty");
                return 2;
            }
            s.db = optarg;
            break;
        case OPT_CLUSTER:
            if (!*optarg || strlen(optarg) >= 64) {
                np_errorf("--cluster: '%s' is empty or longer than 63 characters", optarg);
                return 2;
            }
            s.cluster = optarg;
            break;
        case OPT_METRIC:
            if (strcmp(optarg, "energy") != 0 && strcmp(optarg, "throughput") != 0) {
                np_errorf("--metric: '%s': not a metric; allowed: throughput, energy", optarg);
                return 2;
            }
            s.energy = strcmp(optarg, "energy") == 0;
            break;
        case OPT_MIN_EFFECT:
            if (!np_session_double("--min-effect", optarg, 0, 100, &d))
                return 2;
            s.min_effect = d;
            break;
        case ':': np_errorf("option '%s' needs an argument; see --help", argv[optind - 1]); return 2;
        default: np_opt_unknown(argv[optind - 1], parse_options); return 2;
        }
    }
    s.args = argv + optind;
    s.nargs = (size_t)(argc - optind);
    return np_session_run(&s);
}
