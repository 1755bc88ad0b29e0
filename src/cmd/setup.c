/* setup.c - nemoperf-setup: stage $STAGE_PATH once before ./launch.
 *
 * Thin front end: options (one getopt_long table), then one call into the setup pipeline
 * (src/setup/setup.c: validation first, then the layout, the container import, the gated Hugging
 * Face files, fine-tuning preparation).  Exit status: 0 staged, 1 a step failed, 2 usage or bad
 * environment; killed by the signal that interrupted it (after cleaning up).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "nemoperf/setup/archive.h"
#include "nemoperf/setup/hf.h"
#include "nemoperf/setup/setup.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/util/version.h"

enum { OPT_SBATCH = 256, OPT_SKIP_IMAGE, OPT_SKIP_HF, OPT_SKIP_PIP };

static const struct option setup_options[] = {
    {"sbatch", no_argument, NULL, OPT_SBATCH},
    {"skip-image", no_argument, NULL, OPT_SKIP_IMAGE},
    {"skip-hf", no_argument, NULL, OPT_SKIP_HF},
    {"skip-pip", no_argument, NULL, OPT_SKIP_PIP},
    {"dry-run", no_argument, NULL, 'n'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void setup_usage(FILE *out)
{
    fprintf(out,
            "usage: nemoperf-setup [--sbatch] [--skip-image] [--skip-hf] [--skip-pip] [--dry-run] [-q]\n"
            "Stage $STAGE_PATH for ./launch: folders, the NeMo container as a .sqsh (enroot import),\n"
            "and the tokenizer/config files of gated Hugging Face models.  Safe to re-run: what is\n"
            "already staged is kept.\n"
            "\n"
            "      --sbatch      import the container inside a one-node job (sbatch --wait, srun)\n"
            "      --skip-image  do not import the container\n"
            "      --skip-hf     do not check Hugging Face access nor download files\n"
            "      --skip-pip    RECIPE=wan2.1: do not run the one-node job that pip-installs its packages\n"
            "  -n, --dry-run     print the plan; create, import and download nothing\n"
            "  -q, --quiet       no progress notes on stderr (errors still print)\n"
            "  -h, --help        this help;  -V, --version  the version\n"
            "\n"
            "Environment:\n"
            "  STAGE_PATH        required, absolute: the shared folder (NEMO_HOME and HF_HOME)\n"
            "  HF_TOKEN          Hugging Face read token; required for gated models (Llama)\n"
            "  TASK              pretrain (default), or sft / lora: also the weights, the NeMo checkpoint\n"
            "                    (llm.import_ckpt) and SQuAD packed, prepared in a one-node job\n"
            "  RECIPE            recipe to stage (default: every recipe with \"infer\": true; with TASK\n"
            "                    sft/lora: the recipe of the fine-tuning rows).  A Megatron-Bridge row\n"
            "                    (RECIPE=deepseek_v3, as launch --list names it): its image, the\n"
            "                    Megatron-Bridge checkout and the Hub files it reads, in one run.\n"
            "                    RECIPE=nccl-tests (the fabric check): its container image only\n"
            "  CONTAINER, DTYPE, GPU_TYPE, CONFIG_VARIANT   narrow the Megatron-Bridge rows as for ./launch\n"
            "  MODEL_SIZE        only these model sizes (comma-separated), e.g. 8b\n"
            "  MODEL             the same, for RECIPE=automodel: benchmark names as launch --list shows them;\n"
            "                    their config.json (+ remote code) or, for LoRA/Llama rows, the weights\n"
            "  RUN_CONF_IMAGE    an existing .sqsh (no import) or an image reference to import\n"
            "  HF_ENDPOINT       default %s\n"
            "  NEMOPERF_ARCHIVE_ENDPOINT  where the pinned checkouts (wan2.1, Megatron-Bridge) come from\n"
            "                    (<endpoint>/<owner>/<name>/tar.gz/<commit>; default " NP_ARCHIVE_DEFAULT_ENDPOINT ")\n"
            "  NEMOPERF_HF_DEADLINE        seconds one Hub file's download may take, retries included (1800)\n"
            "  NEMOPERF_HF_CHECK_DEADLINE  seconds one Hub access check may take, retries included (120)\n"
            "  SBATCH_ACCOUNT, SBATCH_PARTITION   for --sbatch\n"
            "  SBATCH_*          any other: reaches the jobs' sbatch as with launch (setup's options win;\n"
            "                    SBATCH_QOS, SBATCH_RESERVATION, SBATCH_CONSTRAINT, SBATCH_WCKEY, SBATCH_JOB_NAME\n"
            "                    checked first)\n"
            "Layout: $STAGE_PATH/<image>.sqsh, experiments/, hf/<org>/<model>/, logs/ (--sbatch),\n"
            "src/<name>-<commit>/ (RECIPE=wan2.1, Megatron-Bridge rows), mbridge/hf/ (their HF_HOME);\n"
            "TASK sft/lora: models/<org>/<model>/, datasets/squad/, datasets/squad-parquet/, setup/.\n"
            "Exit status: 0 staged, 1 a step failed, 2 usage or environment error.\n"
            "See nemoperf-setup(1).\n",
            NP_HF_DEFAULT_ENDPOINT);
}

int main(int argc, char **argv)
{
    np_std_fds_reserve();
    np_set_progname(argv[0]);
    struct np_setup_opts o = {.out = stdout};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":nqhV", setup_options, NULL)) != -1) {
        switch (c) {
        case OPT_SBATCH: o.sbatch = 1; break;
        case OPT_SKIP_IMAGE: o.skip_image = 1; break;
        case OPT_SKIP_HF: o.skip_hf = 1; break;
        case OPT_SKIP_PIP: o.skip_pip = 1; break;
        case 'n': o.dry_run = 1; break;
        case 'q': o.quiet = 1; break;
        case 'h': setup_usage(stdout); return np_stdout_check();
        case 'V': printf("nemoperf-setup %s\n", NP_VERSION); return np_stdout_check();
        case ':': np_errorf("option '%s' needs an argument; see --help", argv[optind - 1]); return 2;
        default: np_opt_unknown(argv[optind - 1], setup_options); return 2;
        }
    }
    if (optind < argc) {
        np_errorf("unexpected argument '%s' (settings come from the environment; see --help)", argv[optind]);
        return 2;
    }
    np_set_quiet(o.quiet);
    int sig = 0;
    enum np_status st = np_setup_run(&o, &sig);
    if (sig) { /* killed by the signal that interrupted it, after cleaning up */
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return np_exit_code(st);
}
