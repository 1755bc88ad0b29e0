/* launch.c - nemoperf-launch: validate the environment, render and submit sbatch jobs.
 *
 * The environment interface of the original launch.sh (DTYPE, MODEL_SIZE,
 * JOB_TOTAL_GPUS, STAGE_PATH, ...) resolved by config.c, scripts by script.c,
 * submission by a Slurm backend (slurm.h), records by manifest.c.  This file
 * only parses options, picks the mode and prints results.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/config.h"
#include "nemoperf/diag.h"
#include "nemoperf/manifest.h"
#include "nemoperf/recipe.h"
#include "nemoperf/script.h"
#include "nemoperf/shell.h"
#include "nemoperf/slurm.h"

enum launch_mode { LAUNCH_SUBMIT = 0, LAUNCH_DRY_RUN, LAUNCH_PRINT_CONFIG, LAUNCH_LIST, LAUNCH_HELP, LAUNCH_VERSION };

struct launch_option {
    const char *name;
    int id;
    const char *help;
};

static const struct launch_option launch_options[] = {
    {"dry-run", 'n', "print the batch script(s); write nothing, submit nothing"},
    {"print-config", 'c', "print the resolved configuration as JSON (an array for a sweep)"},
    {"list", 'l', "list every launchable recipe/size/dtype/GPU-count/GPU-type row"},
    {"help", 'h', "show this help and exit"},
    {"version", 'V', "show the version and exit"},
};
#define LAUNCH_NOPTS (sizeof launch_options / sizeof launch_options[0])

static void launch_usage(FILE *f)
{
    fprintf(f, "Usage: nemoperf-launch [OPTION]\n"
               "Submit NeMo pre-training benchmark jobs to Slurm, configured by the environment:\n"
               "  STAGE_PATH=/shared/stage MODEL_SIZE=70b DTYPE=fp8 JOB_TOTAL_GPUS=64 nemoperf-launch\n\n"
               "Options:\n");
    for (size_t i = 0; i < LAUNCH_NOPTS; i++)
        fprintf(f, "  --%-14s %s\n", launch_options[i].name, launch_options[i].help);
    fprintf(f,
            "\nEnvironment (defaults in brackets):\n"
            "  STAGE_PATH            staged folder (required, absolute, existing)\n"
            "  RECIPE                recipe name [inferred from MODEL_SIZE]\n"
            "  MODEL_SIZE, DTYPE     model size and bf16|fp8 [the recipe's defaults]\n"
            "  JOB_TOTAL_GPUS        GPU count, or a comma list for a sweep (8,16,32) [recipe default]\n"
            "  GPUS_PER_NODE [8]  GPU_TYPE [h100]  WORKLOAD nemo|synthetic [nemo]\n"
            "  TIME_LIMIT [00:30:00]  MAX_STEPS [50]\n"
            "  ENABLE_PROFILE, PROFILE_START_STEP [20], PROFILE_STOP_STEP [25]  ENABLE_NCCLTRACE\n"
            "  ENABLE_CHECKPOINT, NEMOPERF_FORCE_CHECKPOINT, LOAD_CHECKPOINT_PATH\n"
            "  HF_TOKEN (gated models, WORKLOAD=nemo)  RUN_CONF_IMAGE [$STAGE_PATH/nvidia+nemo+<ver>.sqsh]\n"
            "  SBATCH_ACCOUNT, SBATCH_PARTITION, SBATCH_GPUS_PER_NODE\n"
            "  NEMOPERF_SBATCH_TIMEOUT seconds sbatch may take [60]; NEMOPERF_DATADIR recipe data\n"
            "Booleans: true/false/1/0/yes/no, any case.\n"
            "Exit status: 0 submitted, 1 submission or I/O failure, 2 bad option or environment.\n"
            "See nemoperf-launch(1).\n");
}

/* nemoperf-synth next to this executable, or NULL. */
static char *launch_synth_path(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    size_t len = strlen(exe) + sizeof "/nemoperf-synth";
    char *p = malloc(len);
    if (!p)
        return NULL;
    snprintf(p, len, "%s/nemoperf-synth", exe);
    if (access(p, X_OK) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

static int launch_fail(enum np_status st, const struct np_error *err)
{
    np_error_print(err);
    return np_exit_code(st);
}

static int launch_print_config(const struct np_launch_plan *plan)
{
    json_t *root = plan->n == 1 ? np_launch_config_json(&plan->jobs[0]) : json_array();
    for (size_t i = 0; plan->n > 1 && root && i < plan->n; i++)
        if (json_array_append_new(root, np_launch_config_json(&plan->jobs[i])) != 0) {
            json_decref(root);
            root = NULL;
        }
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    if (!text) {
        np_errorf("out of memory");
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

static int launch_dry_run(const struct np_launch_plan *plan)
{
    for (size_t i = 0; i < plan->n; i++) {
        char *script = NULL;
        struct np_error err;
        enum np_status st = np_script_render(&plan->jobs[i], &script, &err);
        if (st != NP_OK)
            return launch_fail(st, &err);
        if (plan->n > 1)
            printf("%s# ==== nemoperf-launch --dry-run: job %zu of %zu: %s ====\n", i ? "\n" : "", i + 1, plan->n,
                   plan->jobs[i].job_name);
        fputs(script, stdout);
        free(script);
    }
    return 0;
}

/* Submit one job: folder, script, manifest (not submitted), sbatch, manifest. */
static enum np_status launch_one(struct np_backend *be, struct np_launch_config *c, char **job_id)
{
    struct np_error err;
    enum np_status st = np_experiment_create(c, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return st;
    }
    char *script = NULL, *name = np_script_file_name(c);
    if (!name) {
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    if ((st = np_script_render(c, &script, &err)) != NP_OK ||
        (st = np_file_write_atomic(c->experiment_dir, name, script, 0755, &err)) != NP_OK) {
        np_error_print(&err);
        free(script);
        free(name);
        return st;
    }
    struct np_manifest m = {.config = c, .backend = be->name, .submit_time = time(NULL), .script = name};
    if ((st = np_manifest_write(&m, &err)) != NP_OK) {
        np_error_print(&err);
        free(script);
        free(name);
        return st;
    }
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", c->experiment_dir, name);
    struct np_submit_request req = {path, script, c->experiment_dir, c->job_name};
    struct np_submit_result res;
    m.submit_time = time(NULL);
    st = be->submit(be, &req, &res, &err);
    m.submitted = st == NP_OK;
    m.job_id = res.job_id;
    m.cluster = res.cluster;
    m.error = st == NP_OK ? NULL : (res.message ? res.message : err.text);
    struct np_error merr;
    enum np_status mst = np_manifest_write(&m, &merr);
    if (st != NP_OK) {
        np_errorf("%s: submission failed: %s: %s", c->job_name, err.source, err.text);
        np_errorf("%s: folder kept, marked not submitted: %s", c->job_name, c->experiment_dir);
    }
    if (mst != NP_OK)
        np_error_print(&merr);
    if (st == NP_OK && mst == NP_OK)
        *job_id = res.job_id ? strdup(res.job_id) : NULL;
    np_submit_result_free(&res);
    free(script);
    free(name);
    return st != NP_OK ? st : mst;
}

static int launch_submit(struct np_launch_plan *plan)
{
    /* everything that can be refused is refused before the first folder exists */
    int timeout = NP_SLURM_DEFAULT_TIMEOUT;
    const char *tv = getenv("NEMOPERF_SBATCH_TIMEOUT");
    if (tv && *tv) {
        char *end;
        long t = strtol(tv, &end, 10);
        if (*end || t < 1 || t > 3600) {
            np_errorf("NEMOPERF_SBATCH_TIMEOUT=%s: not a number of seconds; allowed: 1 to 3600", tv);
            return 2;
        }
        timeout = (int)t;
    }
    struct np_error err;
    for (size_t i = 0; i < plan->n; i++) {
        char *script = NULL;
        enum np_status st = np_script_render(&plan->jobs[i], &script, &err);
        free(script);
        if (st != NP_OK)
            return launch_fail(st, &err);
    }
    struct np_backend be;
    struct np_slurm_cli_opts o = {.timeout_s = timeout};
    enum np_status st = np_slurm_cli_backend(&be, &o, &err);
    if (st != NP_OK)
        return launch_fail(st, &err);

    int failed = 0;
    struct np_buf parse;
    np_buf_init(&parse);
    np_buf_append(&parse, "nemoperf-parse");
    for (size_t i = 0; i < plan->n; i++) {
        struct np_launch_config *c = &plan->jobs[i];
        char *job_id = NULL;
        st = launch_one(&be, c, &job_id);
        if (st != NP_OK) {
            failed = np_exit_code(st) > failed ? np_exit_code(st) : failed;
            if (failed == 2)
                failed = 1; /* past validation every failure is a runtime one */
            continue;
        }
        printf("job %s: %s\n", job_id ? job_id : "?", c->experiment_dir);
        fflush(stdout);
        free(job_id);
        np_buf_append(&parse, " ");
        np_buf_append_shq(&parse, c->experiment_dir);
    }
    char *cmd = np_buf_steal(&parse);
    if (cmd && strcmp(cmd, "nemoperf-parse") != 0)
        printf("when %s: %s\n", plan->n > 1 ? "the jobs have ended" : "the job has ended", cmd);
    free(cmd);
    np_backend_free(&be);
    return failed;
}

int main(int argc, char **argv)
{
    np_set_progname(argv[0]);
    struct option longopts[LAUNCH_NOPTS + 1];
    for (size_t i = 0; i < LAUNCH_NOPTS; i++)
        longopts[i] = (struct option){launch_options[i].name, no_argument, NULL, launch_options[i].id};
    memset(&longopts[LAUNCH_NOPTS], 0, sizeof longopts[0]);
    enum launch_mode mode = LAUNCH_SUBMIT;
    int c, nmodes = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': mode = LAUNCH_DRY_RUN; nmodes++; break;
        case 'c': mode = LAUNCH_PRINT_CONFIG; nmodes++; break;
        case 'l': mode = LAUNCH_LIST; nmodes++; break;
        case 'h': mode = LAUNCH_HELP; nmodes++; break;
        case 'V': mode = LAUNCH_VERSION; nmodes++; break;
        default:
            np_errorf("unknown option '%s'; see --help", argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        np_errorf("unexpected argument '%s': nemoperf-launch is configured by the environment; see --help",
                  argv[optind]);
        return 2;
    }
    if (nmodes > 1 && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--dry-run, --print-config and --list exclude each other");
        return 2;
    }
    if (mode == LAUNCH_HELP) {
        launch_usage(stdout);
        return 0;
    }
    if (mode == LAUNCH_VERSION) {
        printf("nemoperf-launch %s\n", NP_VERSION);
        return 0;
    }

    struct np_recipe_set set;
    struct np_error err;
    enum np_status st = np_recipe_set_load_default(&set, &err);
    if (st != NP_OK)
        return launch_fail(st, &err);
    int rc = 0;
    if (mode == LAUNCH_LIST) {
        char *t = np_launch_list_text(&set);
        if (t)
            fputs(t, stdout);
        else
            np_errorf("out of memory");
        rc = t ? 0 : 1;
        free(t);
        np_recipe_set_free(&set);
        return rc;
    }

    char *synth = launch_synth_path();
    struct np_launch_opts opts = {.now = time(NULL), .synth_path = synth};
    struct np_launch_plan plan;
    st = np_launch_resolve(&set, np_env_getenv, NULL, &opts, &plan, &err);
    if (st != NP_OK)
        rc = launch_fail(st, &err);
    else if (mode == LAUNCH_PRINT_CONFIG)
        rc = launch_print_config(&plan);
    else if (mode == LAUNCH_DRY_RUN)
        rc = launch_dry_run(&plan);
    else
        rc = launch_submit(&plan);
    np_launch_plan_free(&plan);
    np_recipe_set_free(&set);
    free(synth);
    return rc;
}
