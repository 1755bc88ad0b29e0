/* launch.c - nemoperf-launch: validate the environment, render and submit sbatch jobs.
 *
 * The environment of the original launch.sh resolved by src/launch/config.c, scripts by
 * script.c, the submission protocol and --reconcile by src/launch/submit.c, --wait by
 * follow.c/wait.c, its final table by src/parse + src/report.  This file parses options,
 * picks the mode and joins the two pipelines (launch, then parse) for --wait.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nemoperf/job/kind.h"
#include "nemoperf/launch/config.h"
#include "nemoperf/launch/manifest.h"
#include "nemoperf/launch/runs.h"
#include "nemoperf/launch/mbridge_list.h"
#include "nemoperf/model/mbdtype.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/model/recipe_names.h"
#include "nemoperf/report/aggregate.h"
#include "nemoperf/report/report.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/launch/submit.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/store/store.h"

enum launch_mode { LAUNCH_SUBMIT = 0, LAUNCH_DRY_RUN, LAUNCH_PRINT_CONFIG, LAUNCH_LIST, LAUNCH_RECONCILE,
                   LAUNCH_RUNS, LAUNCH_HELP, LAUNCH_VERSION };

extern char **environ;

struct launch_option {
    const char *name;
    int id;
    const char *arg; /* the argument's name, or NULL */
    const char *help;
};

enum { LAUNCH_OPT_RECIPE = 256, LAUNCH_OPT_GPU, LAUNCH_OPT_FORMAT, LAUNCH_OPT_STORE, LAUNCH_OPT_CONTAINER, LAUNCH_OPT_DTYPE,
       LAUNCH_OPT_TASK, LAUNCH_OPT_RUNS };

static const struct launch_option launch_options[] = {
    {"dry-run", 'n', NULL, "print the batch script(s); write nothing, submit nothing (works before ./setup)"},
    {"print-config", 'c', NULL,
     "print the resolved configuration as JSON (an array for a sweep), \"nemo\": the NeMo job (works before ./setup)"},
    {"list", 'l', NULL, "list every published recipe/size/dtype/GPU-count/GPU-type row (and whether it launches)"},
    {"recipe", LAUNCH_OPT_RECIPE, "R", "with --list: only recipe R"},
    {"gpu", LAUNCH_OPT_GPU, "G", "with --list: only GPU type G (h100, b200, gb200)"},
    {"dtype", LAUNCH_OPT_DTYPE, "D", "with --list: only dtype D (bf16, fp8; Megatron-Bridge fp8_cs, MXFP8, ...)"},
    {"task", LAUNCH_OPT_TASK, "T", "with --list: only task T (pretrain, sft, lora)"},
    {"container", LAUNCH_OPT_CONTAINER, "C", "with --list: only Megatron-Bridge rows of container C (26.04.01)"},
    {"format", LAUNCH_OPT_FORMAT, "F",
     "with --list, --runs or a submission: table (default) or json (a submission: what was queued, one document; "
     "messages on stderr)"},
    {"wait", 'w', NULL, "after submitting, follow the jobs to their end and print the parse table"},
    {"store", LAUNCH_OPT_STORE, NULL, "with --wait: record the runs waited for in the results store (NEMOPERF_DB)"},
    {"reconcile", 'r', NULL, "FOLDER...: settle submitting/unknown records by asking Slurm for the tagged job"},
    {"runs", LAUNCH_OPT_RUNS, NULL,
     "[FOLDER...]: list the runs launched under STAGE_PATH (or the folders) with their Slurm state"},
    {"resubmit", 'R', NULL, "submit even the jobs an earlier launch has queued or running"},
    {"skip-existing", 'S', NULL, "submit only the jobs an earlier launch has not queued or running"},
    {"help", 'h', NULL, "show this help and exit"},
    {"version", 'V', NULL, "show the version and exit"},
};
#define LAUNCH_NOPTS (sizeof launch_options / sizeof launch_options[0])

static void launch_usage(FILE *f)
{
    fprintf(f, "Usage: nemoperf-launch [OPTION]...\n"
               "       nemoperf-launch --reconcile FOLDER...\n"
               "       nemoperf-launch --runs [--format json] [FOLDER...]\n"
               "Submit NeMo pre-training benchmark jobs to Slurm, configured by the environment:\n"
               "  STAGE_PATH=/shared/stage MODEL_SIZE=70b DTYPE=fp8 JOB_TOTAL_GPUS=64 nemoperf-launch\n\n"
               "Options:\n");
    for (size_t i = 0; i < LAUNCH_NOPTS; i++) {
        char o[40];
        snprintf(o, sizeof o, "%s%s%s", launch_options[i].name, launch_options[i].arg ? " " : "",
                 launch_options[i].arg ? launch_options[i].arg : "");
        fprintf(f, "  %s--%-14s %s\n", launch_options[i].id == 'h' ? "-h, " : launch_options[i].id == 'V' ? "-V, " : "    ",
                o, launch_options[i].help);
    }
    fprintf(f,
            "\nEnvironment (defaults in brackets):\n"
            "  STAGE_PATH            staged folder (required, absolute, existing)\n"
            "  RECIPE                recipe name [inferred from MODEL_SIZE]\n"
            "  MODEL_SIZE, DTYPE     model size and bf16|fp8 (required)\n"
            "  MODEL                 RECIPE=automodel: the benchmark name --list shows (e.g. qwen3_moe_30b_te_deepep)\n"
            "  JOB_TOTAL_GPUS        GPU count, or a comma list for a sweep (8,16,32) [recipe default]\n"
            "  GPUS_PER_NODE [NVIDIA's for the system: 8, GB200 4]  GPU_TYPE [h100]\n"
            "  WORKLOAD nemo|synthetic [nemo]  TASK pretrain|sft|lora [pretrain]\n"
            "  CONTAINER 26.08|26.06: a Megatron-Bridge performance row (RECIPE=deepseek_v3 ...) [the newest with it]\n"
            "  CONFIG_VARIANT v1|v2: Megatron-Bridge's -cv, for a request a container publishes more than once\n"
            "    [what Megatron-Bridge runs without -cv, said]; GBS, MBS, SEQ_LEN choose such a row too\n"
            "    (a value the row does not publish is refused)\n"
            "  RECIPE=nccl-tests: NVIDIA's nccl-tests binaries, a fabric check (docs/launch.md); with it\n"
            "    FABRIC_CHECK full|bisect [full], FABRIC_PAIRS ring|all [ring] (bisect's node pairs),\n"
            "    NCCL_TESTS all_reduce,all_gather,reduce_scatter,alltoall,sendrecv [full: all; bisect: all_reduce],\n"
            "    NCCL_TESTS_PATH the binaries' folder in the container [/usr/local/bin]\n"
            "  TIME_LIMIT [00:30:00]  MAX_STEPS [50]\n"
            "  REPEATS 1..100: that many identical jobs of each row, each its own folder [1]\n"
            "  ENABLE_PROFILE, PROFILE_START_STEP/PROFILE_STOP_STEP [NVIDIA's: 20/25 (25.02), 5/6 (25.04)]\n"
            "  ENABLE_NCCLTRACE\n"
            "  SNAPSHOT [true]: each node's system snapshot (nvidia-smi -q -x, host facts) before the workload\n"
            "  ENABLE_GPU_METRICS [false], NEMOPERF_GPU_METRICS_MS [1000]: GPU telemetry while it runs\n"
            "  DISABLE_PERFRUN: a profile/trace request without the performance run beside it [false]\n"
            "  ENABLE_CHECKPOINT, NEMOPERF_FORCE_CHECKPOINT, LOAD_CHECKPOINT_PATH\n"
            "  HF_TOKEN (passed on; tokenizers come from ./setup)  RUN_CONF_IMAGE [$STAGE_PATH/nvidia+nemo+<ver>.sqsh]\n"
            "  SBATCH_ACCOUNT, SBATCH_PARTITION, SBATCH_GPUS_PER_NODE; other SBATCH_* reach sbatch (SBATCH_QOS,\n"
            "    SBATCH_RESERVATION, SBATCH_CONSTRAINT, SBATCH_WCKEY, SBATCH_JOB_NAME checked first)\n"
            "  NEMOPERF_MAX_RETRIES [0]: requeues after a failed step; NEMOPERF_SRUN_MPI [pmix]\n"
            "  NEMOPERF_NUMA_BIND nvidia|task|none [nvidia]: numactl of the 25.04 recipes (docs/fidelity.md)\n"
            "  NEMOPERF_SBATCH_TIMEOUT seconds sbatch (or one slurmrestd request) may take [60]\n"
            "  NEMOPERF_DATADIR recipe data\n"
            "  SLURM_SUBMIT cli|rest [cli]: submit with sbatch or through slurmrestd\n"
            "  SLURMRESTD_URL unix:/path/rest.sock or http(s)://host:port (SLURM_SUBMIT=rest)\n"
            "  SLURM_JWT, SLURM_USER [current user]: slurmrestd JWT authentication\n"
            "  NEMOPERF_WAIT_MAX_DELAY [30], NEMOPERF_WAIT_TIMEOUT: --wait polling, seconds\n"
            "    [twice the sum of the jobs' time limits + 1 h]\n"
            "Booleans: true/false/1/0/yes/no, any case.\n"
            "A submission is recorded (nemoperf.json \"state\": submitting) with a unique tag, the job's\n"
            "comment, before sbatch runs; an outcome nobody saw is \"unknown\" until --reconcile (or --wait)\n"
            "finds the job by its tag.  SIGINT/SIGTERM/SIGHUP during a sweep stop it after the current\n"
            "submission is recorded.\n"
            "Exit status: 0 submitted (with --wait: every job COMPLETED and parsed ok; --reconcile: every\n"
            "record settled), 1 submission, job or I/O failure, 2 bad option or environment, or a job of\n"
            "this launch queued already; 128+N stopped by signal N.\n"
            "See nemoperf-launch(1).\n");
}

/* tool (nemoperf-synth, nemoperf-parse) next to this executable, or NULL. */
static char *launch_tool_path(const char *tool)
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
    size_t len = strlen(exe) + strlen(tool) + 2;
    char *p = malloc(len);
    if (!p)
        return NULL;
    snprintf(p, len, "%s/%s", exe, tool);
    if (access(p, X_OK) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* How to name tool (nemoperf-parse, nemoperf-setup) in a hint so that it runs as printed: the bare name
 * when PATH finds the one beside this program, else its real path (shell-quoted when needed).  front
 * (may be NULL) replaces that path when this program runs from the source tree (./launch -> ./setup).
 * A new string, or NULL when out of memory. */
static char *launch_tool_hint(const char *tool, const char *front)
{
    char *path = launch_tool_path(tool), *onpath = np_path_search(tool, getenv("PATH"));
    char *r1 = path ? realpath(path, NULL) : NULL, *r2 = onpath ? realpath(onpath, NULL) : NULL;
    struct np_buf b;
    np_buf_init(&b);
    if (!path || (r1 && r2 && strcmp(r1, r2) == 0)) {
        np_buf_append(&b, tool);
    } else {
        const char *name = path;
        char *fr = NULL;
        if (front) { /* <tree>/bin/nemoperf-setup -> <tree>/setup, when that front door exists */
            char *slash = strrchr(path, '/');
            size_t dl = slash ? (size_t)(slash - path) : 0;
            if (dl >= 4 && strncmp(path + dl - 4, "/bin", 4) == 0) {
                size_t n = dl - 4 + strlen(front) + 2;
                fr = malloc(n);
                if (fr) {
                    snprintf(fr, n, "%.*s/%s", (int)(dl - 4), path, front);
                    if (access(fr, X_OK) == 0)
                        name = fr;
                }
            }
        }
        if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+") == strlen(name))
            np_buf_append(&b, name);
        else
            np_buf_append_shq(&b, name);
        free(fr);
    }
    free(path);
    free(onpath);
    free(r1);
    free(r2);
    return np_buf_steal(&b);
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
    return np_stdout_check();
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
        if (ferror(stdout))
            break;
    }
    return np_stdout_check();
}

/* Environment names that look like ours but are not (MODLE_SIZE): exit code 2 with one line each. */
static int launch_env_typos(void)
{
    char *m = np_env_check(environ);
    if (!m)
        return 0;
    for (char *line = strtok(m, "\n"); line; line = strtok(NULL, "\n"))
        np_errorf("%s", line);
    np_errorf("nothing was written or submitted; correct or unset what is named above");
    free(m);
    return 2;
}

/* --wait: follow the submitted jobs to their end, then print the parse table of their folders.
 * Returns the exit code: 0 only if every job COMPLETED and every run is ok. */
static int launch_wait(struct np_launch_submitted *sub, const struct np_recipe_set *set, int store, FILE *out)
{
    enum np_status st = np_launch_follow(sub, out);
    if (st == NP_E_INVALID || st == NP_E_NOMEM)
        return np_exit_code(st);
    int rc = st != NP_OK;
    struct np_parse_opts po;
    np_parse_opts_init(&po);
    po.keep_samples = store;
    struct np_parse_result res;
    st = np_parse_paths(sub->dirs, sub->n, &po, set, NULL, &res);
    if (st != NP_OK) {
        np_errorf("parsing the runs failed: %s", np_strerror(st));
        return 1;
    }
    np_runs_scaling_efficiency(&res); /* the table nemoperf-parse prints of the same folders */
    for (size_t i = 0; i < res.nerrors; i++)
        np_errorf("%s", res.errors[i]);
    if (res.nerrors || res.nruns < sub->n)
        rc = 1;
    for (size_t i = 0; i < res.nruns; i++)
        if (!np_run_status_good(res.runs[i].status)) /* ok, or a complete synthetic run */
            rc = 1;
    fputc('\n', out);
    if (np_report_write(out, NP_FMT_TABLE, &res, &po) != NP_OK)
        rc = 1;
    if (store) { /* --store: what was waited for goes into the results store (NEMOPERF_DB, docs/history.md) */
        struct np_error err;
        size_t counts[3] = {0, 0, 0};
        if (np_store_runs(NULL, res.runs, res.nruns, NULL, counts, &err) != NP_OK) {
            np_error_print(&err);
            np_errorf("--store: nothing stored (the store is as it was before)");
            rc = 1;
        } else {
            size_t n = counts[NP_STORE_ADDED] + counts[NP_STORE_UPDATED] + counts[NP_STORE_SAME];
            np_notef("stored %zu run%s (%zu added, %zu updated, %zu unchanged)", n, n == 1 ? "" : "s",
                     counts[NP_STORE_ADDED], counts[NP_STORE_UPDATED], counts[NP_STORE_SAME]);
            if (n < res.nruns) /* np_store_runs leaves out what it cannot key (np_store_identified) */
                np_notef("--store: %zu unidentified run%s not stored (no recipe to key %s on)", res.nruns - n,
                         res.nruns - n == 1 ? "" : "s", res.nruns - n == 1 ? "it" : "them");
        }
    }
    np_parse_result_free(&res);
    if (np_stdout_check())
        rc = 1;
    if (rc)
        np_errorf("not every job completed with an ok run; see above");
    return rc;
}

/* --format json: what the submission put on record, one object per job (an array unless one job was asked
 * for), as share/nemoperf/schema/launch.schema.json says.  NULL when out of memory. */
static json_t *launch_queued_json(const struct np_launch_plan *plan, const struct np_launch_submitted *sub)
{
    json_t *arr = json_array();
    static const char *const row[] = {"recipe", "model_size", "dtype", "gpu_type", "gpus", "task"};
    int bad = !arr;
    for (size_t i = 0; !bad && i < sub->ntried; i++) {
        const struct np_launch_attempt *a = &sub->tried[i];
        const struct np_launch_config *c = &plan->jobs[a->job];
        json_t *cfg = np_launch_config_json(c), *o = json_object();
        const char *id = a->sub >= 0 ? sub->ids[a->sub] : NULL;
        const char *end = a->sub >= 0 && sub->end_states ? sub->end_states[a->sub] : NULL;
        const char *image = c->image ? c->image : c->recipe && c->recipe->image ? c->recipe->image : NULL;
        bad = !cfg || !o || !a->dir;
        bad = bad || json_object_set_new(o, "job_id", id ? json_string(id) : json_null());
        bad = bad || json_object_set_new(o, "state", json_string(a->state));
        bad = bad || json_object_set_new(o, "slurm_state", end ? json_string(end) : json_null());
        bad = bad || json_object_set_new(o, "folder", json_string(a->dir));
        bad = bad || json_object_set_new(o, "job_name", json_string(c->job_name));
        bad = bad || json_object_set_new(o, "kind", json_string(np_job_kind_of(c)->name));
        bad = bad || json_object_set_new(o, "workload", json_string(np_workload_name(c->workload)));
        for (size_t k = 0; !bad && k < sizeof row / sizeof row[0]; k++) {
            json_t *v = json_object_get(cfg, row[k]);
            bad = json_object_set(o, row[k], v ? v : json_null());
        }
        bad = bad || json_object_set_new(o, "container", image ? json_string(image) : json_null());
        bad = bad || json_object_set_new(o, "backend", json_string(sub->have_be ? sub->be.name : "cli"));
        bad = bad || json_object_set_new(o, "repeat", plan->repeats > 1 ? json_pack("{s:i,s:i}", "index", a->repeat,
                                                                                     "of", plan->repeats)
                                                                        : json_null());
        json_decref(cfg);
        if (bad || json_array_append_new(arr, o) != 0) {
            json_decref(o);
            bad = 1;
        }
    }
    if (!bad && json_array_size(arr) == 1 && plan->n == 1 && plan->repeats <= 1) { /* one job asked for */
        json_t *one = json_incref(json_array_get(arr, 0));
        json_decref(arr);
        return one;
    }
    if (bad) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

/* Submit the plan (src/launch/submit.c), with --wait follow it; json: the "job ID: folder" lines, the
 * follow lines and the table go to stderr, stdout gets one JSON document.  Returns the exit code. */
static int launch_submit(struct np_launch_plan *plan, int wait, int store, enum np_launch_rerun rerun,
                         const struct np_recipe_set *set, int json)
{
    char *self = launch_tool_hint("nemoperf-launch", "launch"), *parser = launch_tool_hint("nemoperf-parse", NULL);
    FILE *out = json ? stderr : stdout;
    struct np_launch_submit_opts so = {.rerun = rerun, .wait = wait, .launch_cmd = self, .parse_cmd = parser,
                                       .out = out};
    struct np_launch_submitted sub;
    enum np_status st = np_launch_submit(plan, &so, &sub);
    free(self);
    free(parser);
    if (st != NP_OK)
        return np_exit_code(st);
    int failed = sub.failed;
    if (wait && !sub.signal && sub.n > 0) {
        if (failed)
            np_warnf("some submissions failed; waiting for the %zu submitted job%s", sub.n, sub.n == 1 ? "" : "s");
        int rc = launch_wait(&sub, set, store, out);
        failed = rc > failed ? rc : failed;
    }
    if (json) { /* what was queued, even when some submission failed or a signal stopped the rest */
        json_t *doc = launch_queued_json(plan, &sub);
        char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(doc);
        if (text)
            printf("%s\n", text);
        else {
            np_errorf("out of memory");
            failed = 1;
        }
        free(text);
    }
    if (np_stdout_check())
        failed = 1;
    int sig = sub.signal;
    np_launch_submitted_free(&sub);
    return sig ? 128 + sig : failed;
}

/* --reconcile FOLDER...: the exit code of settling every record found at or below the folders. */
static int launch_reconcile(char *const *paths, size_t n)
{
    enum np_status st = np_launch_reconcile_paths(paths, n, stdout);
    if (np_stdout_check() && st == NP_OK)
        return 1;
    return np_exit_code(st);
}

/* --runs [FOLDER...]: the runs launched under the folders, or under $STAGE_PATH/experiments, with the
 * scheduler's state of each job (src/launch/runs.c).  Returns the exit code. */
static int launch_runs(char *const *paths, size_t n, int json)
{
    char *top = NULL;
    char *one[1];
    if (n == 0) {
        const char *stage = getenv("STAGE_PATH");
        if (!stage || !*stage) {
            np_errorf("--runs needs STAGE_PATH (the staged folder the runs were launched under) or folders");
            return 2;
        }
        struct np_buf b;
        np_buf_init(&b);
        np_buf_appendf(&b, "%s/experiments", stage);
        if (!(top = np_buf_steal(&b))) {
            np_errorf("out of memory");
            return 1;
        }
        if (access(stage, F_OK) != 0) {
            np_errorf("STAGE_PATH=%s: %s", stage, strerror(errno));
            free(top);
            return 2;
        }
        if (access(top, F_OK) != 0) { /* nothing launched there yet: an empty list */
            np_notef("no run has been launched under STAGE_PATH=%s (no experiments folder)", stage);
            fputs(json ? "[]\n" : "0 runs\n", stdout);
            free(top);
            return np_stdout_check();
        }
        one[0] = top;
        paths = one;
        n = 1;
    }
    int timeout = np_launch_sbatch_timeout();
    struct np_backend be;
    int have_be = timeout >= 0 && np_launch_backend_open(&be, timeout) == NP_OK;
    if (!have_be)
        np_errorf("listing the runs without their Slurm state");
    enum np_status st = np_launch_runs(paths, n, have_be ? &be : NULL, json, stdout);
    if (have_be)
        np_backend_free(&be);
    free(top);
    int rc = st == NP_OK ? (have_be ? 0 : 1) : st == NP_E_NOTFOUND ? 2 : 1;
    if (np_stdout_check())
        rc = rc ? rc : 1;
    return rc;
}

static int launch_list_has_container(json_t *mb, const char *container)
{
    size_t i;
    json_t *row;
    json_array_foreach(mb, i, row)
    {
        const char *c = json_string_value(json_object_get(row, "container"));
        if (c && strcmp(c, container) == 0)
            return 1;
    }
    return 0;
}

/* --list: the NeMo recipes' rows, then every published Megatron-Bridge performance row (each with its container
 * and whether it launches); the JSON array holds both. */
static int launch_list(const struct np_recipe_set *set, const struct np_list_filter *lf, int json)
{
    const char *recipe = lf->recipe;
    struct np_error err;
    json_t *mb = np_mb_launch_rows(&err);
    if (!mb)
        return launch_fail(NP_E_PARSE, &err);
    int nemo = !recipe || np_recipe_find(set, recipe) != NULL, mbr = !recipe || np_mb_launch_has_recipe(mb, recipe);
    if (!nemo && !mbr) { /* both namespaces, nearest first (model/recipe_names.c) */
        const char *names[512];
        size_t n = 0, i;
        json_t *row;
        json_array_foreach(mb, i, row)
        {
            const char *r = json_string_value(json_object_get(row, "recipe"));
            if (r && n + 1 < sizeof names / sizeof names[0])
                names[n++] = r;
        }
        names[n] = NULL;
        char hint[3072];
        np_recipe_names_hint_list(set, names, recipe, hint, sizeof hint);
        np_errorf("--recipe: '%s' is not a recipe; %s", recipe, hint);
        json_decref(mb);
        return 2;
    }
    if (lf->container && !launch_list_has_container(mb, lf->container)) {
        np_errorf("--container: '%s' is not a container version Megatron-Bridge publishes rows of (%s)",
                  lf->container, "26.08, 26.06.01, 26.06, 26.04.01, 26.04, 26.02.01, 26.02, 25.11, 25.09");
        json_decref(mb);
        return 2;
    }
    char *t = nemo ? np_launch_list(set, lf, json) : strdup(json ? "[]" : "");
    char *m = NULL;
    int ok = t != NULL;
    if (ok && json) {
        json_t *arr = json_loads(t, 0, NULL);
        ok = arr && (!mbr || np_mb_launch_list_json(mb, lf, arr) == 0);
        free(t);
        t = ok ? json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        ok = t != NULL;
        json_decref(arr);
        if (ok)
            fputs(t, stdout), fputc('\n', stdout);
    } else if (ok) {
        fputs(t, stdout);
        if (mbr && (ok = (m = np_mb_launch_list_text(mb, lf)) != NULL))
            fputs(m, stdout);
    }
    if (!ok)
        np_errorf("out of memory");
    free(t);
    free(m);
    json_decref(mb);
    return ok ? np_stdout_check() : 1;
}

int main(int argc, char **argv)
{
    np_std_fds_reserve();
    np_set_progname(argv[0]);
    struct option longopts[LAUNCH_NOPTS + 1];
    for (size_t i = 0; i < LAUNCH_NOPTS; i++)
        longopts[i] = (struct option){launch_options[i].name, launch_options[i].arg ? required_argument : no_argument,
                                      NULL, launch_options[i].id};
    const char *list_recipe = NULL, *list_gpu = NULL, *list_format = NULL, *list_dtype = NULL, *list_task = NULL,
               *list_container = NULL;
    memset(&longopts[LAUNCH_NOPTS], 0, sizeof longopts[0]);
    enum launch_mode mode = LAUNCH_SUBMIT;
    enum np_launch_rerun rerun = NP_LAUNCH_RERUN_REFUSE;
    int c, nmodes = 0, wait = 0, nrerun = 0, store = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': mode = LAUNCH_DRY_RUN; nmodes++; break;
        case 'c': mode = LAUNCH_PRINT_CONFIG; nmodes++; break;
        case 'l': mode = LAUNCH_LIST; nmodes++; break;
        case 'w': wait = 1; break;
        case 'r': mode = LAUNCH_RECONCILE; nmodes++; break;
        case LAUNCH_OPT_RUNS: mode = LAUNCH_RUNS; nmodes++; break;
        case 'R': rerun = NP_LAUNCH_RERUN_RESUBMIT; nrerun++; break;
        case 'S': rerun = NP_LAUNCH_RERUN_SKIP; nrerun++; break;
        case 'h': mode = LAUNCH_HELP; nmodes++; break;
        case 'V': mode = LAUNCH_VERSION; nmodes++; break;
        case LAUNCH_OPT_RECIPE: list_recipe = optarg; break;
        case LAUNCH_OPT_GPU: list_gpu = optarg; break;
        case LAUNCH_OPT_FORMAT: list_format = optarg; break;
        case LAUNCH_OPT_DTYPE: list_dtype = optarg; break;
        case LAUNCH_OPT_TASK: list_task = optarg; break;
        case LAUNCH_OPT_CONTAINER: list_container = optarg; break;
        case LAUNCH_OPT_STORE: store = 1; break;
        case ':':
            np_errorf("option '%s' needs an argument; see --help", argv[optind - 1]);
            return 2;
        default:
            np_opt_unknown(argv[optind - 1], longopts);
            return 2;
        }
    }
    if (mode == LAUNCH_RECONCILE && nmodes == 1 && !wait && !nrerun) {
        if (optind >= argc) {
            np_errorf("--reconcile needs at least one folder (a launch folder, or one above such folders)");
            return 2;
        }
        return launch_reconcile(argv + optind, (size_t)(argc - optind));
    }
    if (mode == LAUNCH_RUNS && nmodes == 1 && !wait && !nrerun && !store && !list_recipe && !list_gpu && !list_dtype &&
        !list_task && !list_container) {
        if (list_format && strcmp(list_format, "table") != 0 && strcmp(list_format, "json") != 0) {
            np_errorf("--format: '%s' is not one of table, json", list_format);
            return 2;
        }
        return launch_runs(argv + optind, (size_t)(argc - optind), list_format && strcmp(list_format, "json") == 0);
    }
    if (mode == LAUNCH_RUNS && nmodes == 1) {
        np_errorf("--runs takes only --format and folders");
        return 2;
    }
    if (nrerun > 1) {
        np_errorf("--resubmit and --skip-existing exclude each other");
        return 2;
    }
    if (nrerun && mode != LAUNCH_SUBMIT && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--resubmit and --skip-existing go with a submission");
        return 2;
    }
    if (optind < argc) {
        np_errorf("unexpected argument '%s': nemoperf-launch is configured by the environment; see --help",
                  argv[optind]);
        return 2;
    }
    if (nmodes > 1 && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--dry-run, --print-config, --list, --reconcile and --runs exclude each other");
        return 2;
    }
    if (wait && mode != LAUNCH_SUBMIT && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--wait goes with a submission, not with --dry-run, --print-config, --list or --reconcile");
        return 2;
    }
    if (store && !wait && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--store goes with --wait (it stores the runs waited for)");
        return 2;
    }
    if ((list_recipe || list_gpu || list_dtype || list_task || list_container) && mode != LAUNCH_LIST &&
        mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--recipe, --gpu, --dtype, --task and --container go with --list (a launch reads RECIPE, "
                  "GPU_TYPE, DTYPE, TASK and CONTAINER from the environment)");
        return 2;
    }
    if (list_format && mode != LAUNCH_LIST && mode != LAUNCH_SUBMIT && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--format goes with --list or a submission, not with --dry-run, --print-config or --reconcile");
        return 2;
    }
    if (list_dtype && np_dtype_parse(list_dtype) == NP_DTYPE_NONE && np_mb_dtype_parse(list_dtype) == NP_MB_DTYPE_NONE) {
        np_errorf("--dtype: '%s' is not a dtype (bf16, fp8; Megatron-Bridge's bf16, fp8_cs, fp8_mx, fp8_sc, nvfp4 or "
                  "the published labels FP8-CS, MXFP8, NVFP4)", list_dtype);
        return 2;
    }
    if (list_task && strcmp(list_task, "pretrain") != 0 && strcmp(list_task, "sft") != 0 &&
        strcmp(list_task, "lora") != 0) {
        np_errorf("--task: '%s' is not one of pretrain, sft, lora", list_task);
        return 2;
    }
    if (list_format && strcmp(list_format, "table") != 0 && strcmp(list_format, "json") != 0) {
        np_errorf("--format: '%s' is not one of table, json", list_format);
        return 2;
    }
    if (list_gpu && np_gpu_peak_tflops(list_gpu, NP_DTYPE_BF16) <= 0) {
        char known[128] = "";
        for (const char *const *g = np_gpu_types(); *g; g++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? ", " : "", *g);
        np_errorf("--gpu: '%s' is not a known GPU type (%s)", list_gpu, known);
        return 2;
    }
    if (mode == LAUNCH_HELP) {
        launch_usage(stdout);
        return np_stdout_check();
    }
    if (mode == LAUNCH_VERSION) {
        printf("nemoperf-launch %s\n", NP_VERSION);
        return np_stdout_check();
    }

    struct np_recipe_set set;
    struct np_error err;
    enum np_status st = np_recipe_set_load_default(&set, &err);
    if (st != NP_OK)
        return launch_fail(st, &err);
    int rc = 0;
    if (mode == LAUNCH_LIST) {
        struct np_list_filter lf = {list_recipe, list_gpu, list_dtype, list_task, list_container};
        rc = launch_list(&set, &lf, list_format && strcmp(list_format, "json") == 0);
        np_recipe_set_free(&set);
        return rc;
    }

    if ((rc = launch_env_typos()) != 0) {
        np_recipe_set_free(&set);
        return rc;
    }
    char *synth = launch_tool_path("nemoperf-synth");
    char *setup_hint = launch_tool_hint("nemoperf-setup", "setup");
    struct np_launch_opts opts = {.now = time(NULL), .synth_path = synth, .setup_cmd = setup_hint,
                                  .preview = mode == LAUNCH_PRINT_CONFIG || mode == LAUNCH_DRY_RUN,
                                  .config_only = mode == LAUNCH_PRINT_CONFIG};
    struct np_launch_plan plan;
    st = np_launch_resolve(&set, np_env_getenv, NULL, &opts, &plan, &err);
    if (st != NP_OK)
        rc = launch_fail(st, &err);
    else if (mode == LAUNCH_PRINT_CONFIG)
        rc = launch_print_config(&plan);
    else if (mode == LAUNCH_DRY_RUN) {
        rc = launch_dry_run(&plan);
        if (rc == 0)
            np_launch_preview_check(&plan, NULL);
    }
    else
        rc = launch_submit(&plan, wait, store, rerun, &set, list_format && strcmp(list_format, "json") == 0);
    np_launch_plan_free(&plan);
    np_recipe_set_free(&set);
    free(synth);
    free(setup_hint);
    return rc;
}
