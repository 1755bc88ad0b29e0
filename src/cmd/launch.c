/* launch.c - nemoperf-launch: validate the environment, render and submit sbatch jobs.
 *
 * The environment of the original launch.sh resolved by config.c, scripts by
 * script.c, submission by a Slurm backend (sbatch, or slurmrestd with SLURM_SUBMIT=rest),
 * records by manifest.c, --wait by wait.c, its final table by run.c/report.c, unsettled
 * records by reconcile.c.  This file parses options, picks the mode, runs the submission
 * loop (signals deferred until each outcome is recorded) and prints results and progress.
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

#include "nemoperf/launch/config.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/launch/manifest.h"
#include "nemoperf/job/mbridge.h"
#include "nemoperf/job/nemo.h"
#include "nemoperf/launch/preflight.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/launch/reconcile.h"
#include "nemoperf/report/report.h"
#include "nemoperf/slurm/sbatch_env.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/util/shell.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/slurm/rest.h"
#include "nemoperf/launch/wait.h"

enum launch_mode { LAUNCH_SUBMIT = 0, LAUNCH_DRY_RUN, LAUNCH_PRINT_CONFIG, LAUNCH_LIST, LAUNCH_RECONCILE,
                   LAUNCH_HELP, LAUNCH_VERSION };

/* what to do when a job of this launch exists already (an earlier, interrupted launch) */
enum launch_rerun { LAUNCH_RERUN_REFUSE = 0, LAUNCH_RERUN_RESUBMIT, LAUNCH_RERUN_SKIP };

extern char **environ;

struct launch_option {
    const char *name;
    int id;
    const char *arg; /* the argument's name, or NULL */
    const char *help;
};

enum { LAUNCH_OPT_RECIPE = 256, LAUNCH_OPT_GPU, LAUNCH_OPT_FORMAT };

static const struct launch_option launch_options[] = {
    {"dry-run", 'n', NULL, "print the batch script(s); write nothing, submit nothing (works before ./setup)"},
    {"print-config", 'c', NULL,
     "print the resolved configuration as JSON (an array for a sweep), \"nemo\": the NeMo job (works before ./setup)"},
    {"list", 'l', NULL, "list every launchable recipe/size/dtype/GPU-count/GPU-type row"},
    {"recipe", LAUNCH_OPT_RECIPE, "R", "with --list: only recipe R"},
    {"gpu", LAUNCH_OPT_GPU, "G", "with --list: only GPU type G (h100, b200, gb200)"},
    {"format", LAUNCH_OPT_FORMAT, "F", "with --list: table (default) or json"},
    {"wait", 'w', NULL, "after submitting, follow the jobs to their end and print the parse table"},
    {"reconcile", 'r', NULL, "FOLDER...: settle submitting/unknown records by asking Slurm for the tagged job"},
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
            "  WORKLOAD nemo|synthetic [nemo]\n"
            "  TIME_LIMIT [00:30:00]  MAX_STEPS [50]\n"
            "  ENABLE_PROFILE, PROFILE_START_STEP [20], PROFILE_STOP_STEP [25]  ENABLE_NCCLTRACE\n"
            "  ENABLE_CHECKPOINT, NEMOPERF_FORCE_CHECKPOINT, LOAD_CHECKPOINT_PATH\n"
            "  HF_TOKEN (passed on; tokenizers come from ./setup)  RUN_CONF_IMAGE [$STAGE_PATH/nvidia+nemo+<ver>.sqsh]\n"
            "  SBATCH_ACCOUNT, SBATCH_PARTITION, SBATCH_GPUS_PER_NODE; other SBATCH_* reach sbatch\n"
            "  NEMOPERF_MAX_RETRIES [0]: requeues after a failed step; NEMOPERF_SRUN_MPI [pmix]\n"
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

/* Signals that stop a launch: deferred while a submission runs (sbatch runs in its own
 * process group, so a terminal's Ctrl-C reaches only us), acted on once its outcome is
 * recorded. */
static const int launch_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define LAUNCH_NSIGS (sizeof launch_sigs / sizeof launch_sigs[0])
static volatile sig_atomic_t launch_signal;

static void launch_on_signal(int sig)
{
    if (!launch_signal)
        launch_signal = sig;
}

/* old: LAUNCH_NSIGS + 1 entries (the last for SIGPIPE, ignored meanwhile: a closed
 * stdout must not kill a launch between a job's submission and its record). */
static void launch_defer_signals(struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = launch_on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < LAUNCH_NSIGS; i++)
        sigaction(launch_sigs[i], &sa, &old[i]);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, &old[LAUNCH_NSIGS]);
}

static void launch_restore_signals(const struct sigaction *old)
{
    for (size_t i = 0; i < LAUNCH_NSIGS; i++)
        sigaction(launch_sigs[i], &old[i], NULL);
    sigaction(SIGPIPE, &old[LAUNCH_NSIGS], NULL);
}

/* What became of one submission. */
struct launch_outcome {
    enum np_submit_outcome outcome;
    char *job_id; /* owned, or NULL */
    int started;  /* the backend was called (a folder and record exist) */
};

/* Submit one job: folder, script, record "submitting" with a tag (pre-sized), backend,
 * then the outcome: the job id printed at once, then recorded (atomically, or in place on
 * a full disk, or on stderr when even that fails). */
static enum np_status launch_one(struct np_backend *be, struct np_launch_config *c, struct launch_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->outcome = NP_SUBMIT_REFUSED;
    struct np_error err;
    enum np_status st = np_experiment_create(c, &err);
    if (st == NP_OK && c->model->mbridge) /* the row's config file, in <experiment>/code */
        st = np_mbridge_stage(c, &err);
    else if (st == NP_OK && c->workload == NP_WORKLOAD_NEMO) /* the job runs /nemo_run/code/<driver> */
        st = np_nemo_stage_driver(c, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return st;
    }
    char *script = NULL, *name = np_script_file_name(c), *tag = np_manifest_new_tag();
    if (!name || !tag) {
        free(name);
        free(tag);
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    if ((st = np_script_render(c, &script, &err)) != NP_OK ||
        (st = np_file_write_atomic(c->experiment_dir, name, script, 0755, &err)) != NP_OK) {
        np_error_print(&err);
        free(script);
        free(name);
        free(tag);
        return st;
    }
    struct np_manifest m = {.config = c, .backend = be->name, .submit_time = time(NULL), .script = name,
                            .rest_url = np_slurm_rest_url(be), .api_version = np_slurm_rest_api(be),
                            .state = NP_STATE_SUBMITTING, .tag = tag, .presize = 1};
    if ((st = np_manifest_write(&m, &err)) != NP_OK) {
        np_error_print(&err);
        np_errorf("%s: not submitted (no record could be written first): %s", c->job_name, c->experiment_dir);
        free(script);
        free(name);
        free(tag);
        return st;
    }
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", c->experiment_dir, name);
    struct np_submit_request req = {path, script, c->experiment_dir, c->job_name, c, tag};
    struct np_submit_result res;
    o->started = 1;
    st = be->submit(be, &req, &res, &err);
    /* not NP_OK but accepted with an id: a job that runs although something went wrong
     * (slurmrestd dropped a setting and the job could not be cancelled): recorded submitted */
    o->outcome = st == NP_OK || (res.outcome == NP_SUBMIT_ACCEPTED && res.job_id) ? NP_SUBMIT_ACCEPTED
                 : res.outcome == NP_SUBMIT_ACCEPTED ? NP_SUBMIT_REFUSED : res.outcome;
    if (o->outcome == NP_SUBMIT_ACCEPTED && res.job_id) { /* said at once, before anything can fail */
        printf("job %s: %s\n", res.job_id, c->experiment_dir);
        fflush(stdout);
    }
    m.state = o->outcome == NP_SUBMIT_ACCEPTED ? NP_STATE_SUBMITTED
              : o->outcome == NP_SUBMIT_UNKNOWN ? NP_STATE_UNKNOWN : NP_STATE_NOT_SUBMITTED;
    m.presize = 0;
    m.job_id = res.job_id;
    m.cluster = res.cluster;
    m.api_version = np_slurm_rest_api(be);
    m.error = st == NP_OK ? NULL : (res.message ? res.message : err.text);
    struct np_error merr;
    enum np_status mst = np_manifest_write(&m, &merr);
    if (o->outcome == NP_SUBMIT_ACCEPTED && st != NP_OK) {
        np_errorf("%s: %s%s%s", c->job_name, err.source, err.source[0] ? ": " : "", err.text);
    } else if (o->outcome == NP_SUBMIT_REFUSED) {
        np_errorf("%s: submission failed: %s%s%s", c->job_name, err.source, err.source[0] ? ": " : "", err.text);
        np_errorf("%s: folder kept, marked not submitted: %s", c->job_name, c->experiment_dir);
    } else if (o->outcome == NP_SUBMIT_UNKNOWN) {
        np_errorf("%s: submission outcome unknown: %s%s%s", c->job_name, err.source, err.source[0] ? ": " : "",
                  err.text);
        np_errorf("%s: the job may or may not exist; recorded as unknown in %s; `nemoperf-launch --reconcile %s` "
                  "asks Slurm for the job carrying tag %s and records it", c->job_name, c->experiment_dir,
                  c->experiment_dir, tag);
    }
    if (mst != NP_OK) {
        np_error_print(&merr);
        if (o->outcome == NP_SUBMIT_ACCEPTED)
            np_errorf("job %s IS SUBMITTED but its record could not be written: folder %s, tag %s; once there is "
                      "room, record it with: nemoperf-launch --reconcile %s", res.job_id ? res.job_id : "?",
                      c->experiment_dir, tag, c->experiment_dir);
        else if (o->outcome == NP_SUBMIT_UNKNOWN)
            np_errorf("%s: the record still says \"submitting\" (tag %s); settle it with: nemoperf-launch "
                      "--reconcile %s", c->job_name, tag, c->experiment_dir);
    }
    if (o->outcome == NP_SUBMIT_ACCEPTED)
        o->job_id = res.job_id ? strdup(res.job_id) : NULL;
    np_submit_result_free(&res);
    free(script);
    free(name);
    free(tag);
    if (o->outcome == NP_SUBMIT_ACCEPTED)
        return st != NP_OK ? st : mst;
    return st != NP_OK ? st : NP_E_SLURM;
}

/* A positive number of seconds from the environment (name=value), or def; -1 when bad. */
static double launch_env_seconds(const char *name, double def, double max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    double d = strtod(v, &end);
    if (*end || !(d > 0) || d > max) {
        np_errorf("%s=%s: not a number of seconds; allowed: more than 0, at most %g", name, v, max);
        return -1;
    }
    return d;
}

/* NEMOPERF_SBATCH_TIMEOUT in seconds (default NP_SLURM_DEFAULT_TIMEOUT); -1 when bad (said). */
static int launch_sbatch_timeout(void)
{
    const char *tv = getenv("NEMOPERF_SBATCH_TIMEOUT");
    if (!tv || !*tv)
        return NP_SLURM_DEFAULT_TIMEOUT;
    char *end;
    long t = strtol(tv, &end, 10);
    if (*end || t < 1 || t > 3600) {
        np_errorf("NEMOPERF_SBATCH_TIMEOUT=%s: not a number of seconds; allowed: 1 to 3600", tv);
        return -1;
    }
    return (int)t;
}

/* The backend SLURM_SUBMIT names: 0 ok, else the exit code (message printed). */
static int launch_backend(struct np_backend *be, int timeout)
{
    struct np_error err;
    const char *how = getenv("SLURM_SUBMIT");
    enum np_status st;
    if (!how || !*how || strcmp(how, "cli") == 0) {
        struct np_slurm_cli_opts o = {.timeout_s = timeout};
        st = np_slurm_cli_backend(be, &o, &err);
    } else if (strcmp(how, "rest") == 0) {
        const char *url = getenv("SLURMRESTD_URL");
        if (!url || !*url) {
            np_errorf("SLURM_SUBMIT=rest needs SLURMRESTD_URL (unix:/path/to/rest.sock or http(s)://host:port)");
            return 2;
        }
        if ((st = np_sbatch_rest_check(np_env_getenv, NULL, &err)) != NP_OK) /* before any folder exists */
            return launch_fail(st, &err);
        const char *tok = getenv("SLURM_JWT");
        struct np_slurm_rest_opts o = {.url = url, .token = tok && *tok ? tok : NULL, .user = getenv("SLURM_USER"),
                                       .timeout_s = timeout};
        st = np_slurm_rest_backend(be, &o, &err);
    } else {
        np_errorf("SLURM_SUBMIT=%s: unknown; allowed: cli (sbatch), rest (slurmrestd)", how);
        return 2;
    }
    if (st != NP_OK)
        return launch_fail(st, &err);
    return 0;
}

/* --wait progress: on a terminal, one line per job redrawn in place; otherwise a
 * line whenever a job changes state. */
struct launch_progress {
    int tty;
    size_t drawn;        /* lines drawn last time (tty) */
    enum np_job_state *last;
};

static double launch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void launch_progress_cb(void *ctx, const struct np_wait *w, size_t changed, const struct np_error *qerr)
{
    struct launch_progress *p = ctx;
    double now = launch_now();
    char el[32], sel[32];
    if (qerr) {
        if (p->tty && p->drawn)
            fputc('\n', stderr);
        p->drawn = 0;
        np_warnf("cannot ask for the job states (attempt %d): %s: %s", w->query_failures, qerr->source, qerr->text);
        return;
    }
    np_wait_format_elapsed(now - w->start, el, sizeof el);
    if (p->tty) {
        if (p->drawn)
            fprintf(stderr, "\033[%zuA", p->drawn);
        fprintf(stderr, "\r\033[Kwaiting for %zu job%s, %s\n", w->n, w->n == 1 ? "" : "s", el);
        for (size_t i = 0; i < w->n; i++) {
            const struct np_wait_job *j = &w->jobs[i];
            np_wait_format_elapsed(now - j->state_since, sel, sizeof sel);
            fprintf(stderr, "\r\033[K  %-8s %-13s %-8s %.80s%s%.60s%s%s\n", j->job_id, np_job_state_name(j->state),
                    sel, j->label, j->reason ? " (" : "", j->reason ? j->reason : "", j->reason ? ")" : "",
                    j->requeues ? " [requeued]" : "");
        }
        p->drawn = w->n + 1;
        fflush(stderr);
        return;
    }
    if (!changed)
        return;
    for (size_t i = 0; i < w->n; i++) {
        const struct np_wait_job *j = &w->jobs[i];
        if (p->last[i] == j->state)
            continue;
        p->last[i] = j->state;
        fprintf(stderr, "%s: [%s] job %s %s: %s%s%.60s%s\n", np_progname(), el, j->job_id, j->label,
                np_job_state_name(j->state), j->reason ? " (" : "", j->reason ? j->reason : "", j->reason ? ")" : "");
    }
    fflush(stderr);
}

/* Follow the submitted jobs, then print the parse table of their folders.
 * Returns the exit code: 0 only if every job COMPLETED and every run is ok. */
static int launch_wait(struct np_backend *be, char **ids, char **dirs, char **labels, size_t n,
                       const struct np_recipe_set *set, double default_timeout)
{
    double maxd = launch_env_seconds("NEMOPERF_WAIT_MAX_DELAY", NP_WAIT_MAX_DELAY, 3600);
    double tmo = launch_env_seconds("NEMOPERF_WAIT_TIMEOUT", default_timeout, 365 * 86400.0);
    if (maxd < 0 || tmo < 0)
        return 2;
    struct np_wait w;
    if (np_wait_init(&w, ids, labels, n, launch_now()) != NP_OK) {
        np_errorf("out of memory");
        return 1;
    }
    struct launch_progress prog = {.tty = isatty(2), .last = calloc(n ? n : 1, sizeof *prog.last)};
    struct np_wait_opts wo = {.min_delay = maxd < NP_WAIT_MIN_DELAY ? maxd : NP_WAIT_MIN_DELAY, .max_delay = maxd,
                              .timeout = tmo, .progress = prog.last ? launch_progress_cb : NULL, .ctx = &prog};
    struct np_error err;
    enum np_status st = np_wait_run(&w, be, &wo, &err);
    free(prog.last);
    int rc = 0;
    if (st != NP_OK) {
        np_error_print(&err);
        rc = 1;
    }
    double now = launch_now();
    for (size_t i = 0; i < w.n; i++) {
        const struct np_wait_job *j = &w.jobs[i];
        char el[32];
        np_wait_format_elapsed(now - w.start, el, sizeof el);
        printf("job %s %s%s%s%s: %s\n", j->job_id, np_job_state_name(j->state),
               j->state == NP_JOB_UNKNOWN ? " (no longer known to the controller)" : "",
               j->requeues ? " after a requeue" : "", j->requeues > 1 ? "s" : "", dirs[i]);
        if (j->state == NP_JOB_HELD || j->state == NP_JOB_SPECIAL_EXIT)
            np_errorf("job %s is held (%.60s) and will not run again by itself: stopped waiting for it; "
                      "`scontrol release %s` lets it run, `scancel %s` ends it", j->job_id,
                      j->reason ? j->reason : j->raw_state ? j->raw_state : np_job_state_name(j->state), j->job_id,
                      j->job_id);
        else if (j->state == NP_JOB_REVOKED)
            np_errorf("job %s was revoked (it runs on another cluster of the federation, if anywhere): "
                      "stopped waiting for it", j->job_id);
        if (j->state != NP_JOB_COMPLETED)
            rc = 1;
    }
    fflush(stdout);
    np_wait_free(&w);

    struct np_parse_opts po;
    np_parse_opts_init(&po);
    struct np_parse_result res;
    st = np_parse_paths(dirs, n, &po, set, NULL, &res);
    if (st != NP_OK) {
        np_errorf("parsing the runs failed: %s", np_strerror(st));
        return 1;
    }
    for (size_t i = 0; i < res.nerrors; i++)
        np_errorf("%s", res.errors[i]);
    if (res.nerrors || res.nruns < n)
        rc = 1;
    for (size_t i = 0; i < res.nruns; i++)
        if (!np_run_status_good(res.runs[i].status)) /* ok, or a complete synthetic run */
            rc = 1;
    putchar('\n');
    if (np_report_write(stdout, NP_FMT_TABLE, &res, &po) != NP_OK)
        rc = 1;
    np_parse_result_free(&res);
    if (np_stdout_check())
        rc = 1;
    if (rc)
        np_errorf("not every job completed with an ok run; see above");
    return rc;
}

/* ---- checks before anything is written (preflight.c): each job can ever run where it is
 * sent; through slurmrestd, the jobs' user can write the experiment folders.  Exit code. */
static int launch_preflight(struct np_backend *be, const struct np_launch_plan *plan)
{
    struct np_preflight_opts po = {0};
    struct np_rest_url u = {0};
    const char *url = getenv("SLURMRESTD_URL"), *tok = getenv("SLURM_JWT");
    if (strcmp(be->name, "cli") != 0 && url && np_rest_url_parse(url, &u, NULL) == NP_OK)
        po.rest_socket = u.socket;
    po.rest_token = tok && *tok;
    po.rest_user = getenv("SLURM_USER");
    char *self = launch_tool_hint("nemoperf-launch", "launch");
    po.launch_cmd = self;
    struct np_error err;
    enum np_status st = np_launch_preflight(be, plan, &po, &err);
    np_rest_url_free(&u);
    free(self);
    if (st != NP_OK)
        return launch_fail(st, &err);
    return 0;
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

/* --reconcile FOLDER...: settle every record found at or below the folders. */
static int launch_reconcile(char *const *paths, size_t n)
{
    struct np_error err;
    char **dirs = NULL;
    enum np_status st = np_reconcile_collect(paths, n, &dirs, &err);
    if (st != NP_OK)
        return launch_fail(st == NP_E_NOTFOUND ? NP_E_USAGE : st, &err);
    size_t nd = 0;
    while (dirs[nd])
        nd++;
    int timeout = launch_sbatch_timeout();
    if (timeout < 0) {
        np_strv_free(dirs);
        return 2;
    }
    struct np_backend be;
    int rc = launch_backend(&be, timeout);
    if (rc) {
        np_strv_free(dirs);
        return rc;
    }
    struct np_reconcile *r = calloc(nd ? nd : 1, sizeof *r);
    if (!r || np_reconcile_dirs(&be, dirs, nd, r) != NP_OK) {
        np_errorf("out of memory");
        rc = 1;
    }
    for (size_t i = 0; r && rc == 0 && i < nd; i++) {
        const struct np_reconcile *x = &r[i];
        switch (x->outcome) {
        case NP_RECONCILE_FOUND:
            printf("job %s: %s: recorded (%s)\n", x->job_id, x->dir, x->message);
            break;
        case NP_RECONCILE_RECORDED:
            printf("%s: %s\n", x->dir, x->message);
            break;
        case NP_RECONCILE_ABSENT:
            printf("%s: recorded not submitted (%s)\n", x->dir, x->message);
            break;
        case NP_RECONCILE_UNREACHABLE:
            np_errorf("%s: %s; run --reconcile again when Slurm answers", x->dir, x->message);
            rc = 1;
            break;
        case NP_RECONCILE_FAILED:
            np_errorf("%s: %s", x->dir, x->message);
            if (x->job_id)
                np_errorf("%s: its job is %s: record it when the disk has room", x->dir, x->job_id);
            rc = 1;
            break;
        }
    }
    for (size_t i = 0; r && i < nd; i++)
        np_reconcile_free(&r[i]);
    free(r);
    np_strv_free(dirs);
    np_backend_free(&be);
    if (np_stdout_check())
        rc = 1;
    return rc;
}

/* Refuse (or skip) the jobs of plan an earlier launch has queued or running, or whose
 * earlier record cannot be settled.  Sets skip[i]; returns 0 or an exit code. */
static int launch_check_rerun(struct np_backend *be, const struct np_launch_plan *plan, enum launch_rerun how,
                              int *skip)
{
    if (how == LAUNCH_RERUN_RESUBMIT)
        return 0;
    int refuse = 0;
    size_t nskip = 0;
    for (size_t i = 0; i < plan->n; i++) {
        const struct np_launch_config *c = &plan->jobs[i];
        struct np_reconcile *ex = NULL;
        size_t nex = 0;
        struct np_error err;
        enum np_status st = np_reconcile_existing(be, c->stage_path, c->experiment, c->job_name, &ex, &nex, &err);
        if (st != NP_OK)
            return launch_fail(st, &err);
        for (size_t k = 0; k < nex; k++) {
            const struct np_reconcile *x = &ex[k];
            if (x->job_id && x->job_state)
                np_errorf("%s: job %s (%s) of an earlier launch exists: %s", c->job_name, x->job_id, x->job_state,
                          x->dir);
            else if (x->job_id) /* Slurm could not be asked: it may still be queued */
                np_errorf("%s: job %s of an earlier launch may still be queued: %s (%s)", c->job_name, x->job_id,
                          x->dir, x->message ? x->message : "?");
            else
                np_errorf("%s: an earlier launch's record is unsettled (%s): %s: %s", c->job_name,
                          x->state ? x->state : "?", x->dir, x->message ? x->message : "");
        }
        if (nex) {
            skip[i] = how == LAUNCH_RERUN_SKIP;
            nskip += skip[i] != 0;
            refuse |= how == LAUNCH_RERUN_REFUSE;
        }
        for (size_t k = 0; k < nex; k++)
            np_reconcile_free(&ex[k]);
        free(ex);
    }
    if (refuse) {
        np_errorf("not submitting a job twice: nothing written, nothing submitted; --skip-existing submits only "
                  "the others, --resubmit submits every job again, --reconcile FOLDER settles an unsettled record");
        return 2;
    }
    if (nskip)
        np_notef("skipping %zu job%s an earlier launch has queued or running (--skip-existing)", nskip,
                 nskip == 1 ? "" : "s");
    return 0;
}

static int launch_submit(struct np_launch_plan *plan, int wait, enum launch_rerun rerun,
                         const struct np_recipe_set *set)
{
    /* everything that can be refused is refused before the first folder exists */
    int timeout = launch_sbatch_timeout();
    if (timeout < 0)
        return 2;
    /* NEMOPERF_BENCH_COPIES (undocumented, bench/submit.sh only): submit every job
     * N times, each copy in its own folder, to time N submissions of one launch */
    long copies = 1;
    const char *cv = getenv("NEMOPERF_BENCH_COPIES");
    if (cv && *cv) {
        char *end;
        copies = strtol(cv, &end, 10);
        if (*end || copies < 1 || copies > 256) {
            np_errorf("NEMOPERF_BENCH_COPIES=%s: allowed: 1 to 256", cv);
            return 2;
        }
        rerun = LAUNCH_RERUN_RESUBMIT; /* copies are the point */
    }
    if (wait && (launch_env_seconds("NEMOPERF_WAIT_MAX_DELAY", 1, 3600) < 0 ||
                 launch_env_seconds("NEMOPERF_WAIT_TIMEOUT", 1, 365 * 86400.0) < 0))
        return 2;
    struct np_error err;
    for (size_t i = 0; i < plan->n; i++) {
        char *script = NULL;
        enum np_status st = np_script_render(&plan->jobs[i], &script, &err);
        free(script);
        if (st != NP_OK)
            return launch_fail(st, &err);
    }
    struct np_backend be;
    int rc = launch_backend(&be, timeout);
    if (rc)
        return rc;
    if ((rc = launch_preflight(&be, plan)) != 0) {
        np_backend_free(&be);
        return rc;
    }
    int *skip = calloc(2 * (plan->n ? plan->n : 1), sizeof *skip), *tried = skip + plan->n;
    if (!skip) {
        np_backend_free(&be);
        np_errorf("out of memory");
        return 1;
    }
    if ((rc = launch_check_rerun(&be, plan, rerun, skip)) != 0) {
        free(skip);
        np_backend_free(&be);
        return rc;
    }

    size_t cap = plan->n * (size_t)copies, nsub = 0, nunk = 0, ntried = 0;
    char **ids = calloc(cap + 1, sizeof *ids), **dirs = calloc(cap + 1, sizeof *dirs);
    char **labels = calloc(cap + 1, sizeof *labels), **unk = calloc(cap + 1, sizeof *unk);
    double *limits = calloc(cap + 1, sizeof *limits);
    if (!ids || !dirs || !labels || !unk || !limits) {
        free(ids);
        free(dirs);
        free(labels);
        free(unk);
        free(limits);
        free(skip);
        np_backend_free(&be);
        np_errorf("out of memory");
        return 1;
    }
    int failed = 0;
    /* the hint names the parser a user can run as printed */
    struct np_buf parse;
    np_buf_init(&parse);
    char *parser = launch_tool_hint("nemoperf-parse", NULL);
    np_buf_append(&parse, parser ? parser : "nemoperf-parse");
    free(parser);
    size_t parse_len0 = parse.len;
    struct sigaction oldsa[LAUNCH_NSIGS + 1];
    launch_signal = 0;
    launch_defer_signals(oldsa);
    for (size_t i = 0; i < plan->n && !launch_signal; i++) {
        struct np_launch_config *c = &plan->jobs[i];
        for (long k = 0; k < copies && !skip[i] && !launch_signal; k++) {
            struct launch_outcome o;
            enum np_status st = launch_one(&be, c, &o);
            ntried++;
            tried[i] = 1;
            if (st != NP_OK && (o.outcome != NP_SUBMIT_UNKNOWN || !wait))
                failed = 1; /* past validation every failure is a runtime one; --wait settles unknowns first */
            if (o.outcome == NP_SUBMIT_REFUSED)
                continue;
            np_buf_append(&parse, " ");
            np_buf_append_shq(&parse, c->experiment_dir);
            if (o.outcome == NP_SUBMIT_UNKNOWN) {
                if (!(unk[nunk++] = strdup(c->experiment_dir)))
                    failed = 1;
                continue;
            }
            if (o.job_id) {
                ids[nsub] = o.job_id;
                dirs[nsub] = strdup(c->experiment_dir);
                labels[nsub] = strdup(c->job_name);
                long minutes = np_rest_time_minutes(c->time_limit);
                limits[nsub] = minutes > 0 ? minutes * 60.0 : 0;
                if (!dirs[nsub] || !labels[nsub])
                    failed = 1;
                nsub++;
            }
        }
    }
    launch_restore_signals(oldsa);
    int sig = launch_signal;
    if (sig) {
        struct np_buf left;
        np_buf_init(&left);
        for (size_t i = 0; i < plan->n; i++) {
            if (!tried[i] && !skip[i])
                np_buf_appendf(&left, "%s%s", left.len ? ", " : "", plan->jobs[i].job_name);
        }
        char *l = np_buf_steal(&left);
        np_errorf("stopped by %s after %zu submission%s (each recorded in its folder, see above)%s%s; a second launch "
                  "with the same settings and --skip-existing submits the rest",
                  strsignal(sig), ntried, ntried == 1 ? "" : "s", l && *l ? "; not submitted: " : "", l ? l : "");
        free(l);
    }
    char *cmd = np_buf_steal(&parse);
    if (!wait && !sig && cmd && strlen(cmd) > parse_len0)
        printf("when %s: %s\n", cap > 1 ? "the jobs have ended" : "the job has ended", cmd);
    free(cmd);
    if (copies > 1 && np_slurm_rest_url(&be)) {
        long requests = 0, conns = 0;
        np_slurm_rest_stats(&be, &requests, &conns);
        np_notef("slurmrestd: %ld requests over %ld connection(s)", requests, conns);
    }
    /* unknown outcomes: --wait asks Slurm for the tagged jobs (again while it does not answer,
     * as a wait polls) and follows the ones found */
    double delay = NP_WAIT_MIN_DELAY;
    for (size_t u = 0; wait && !sig && u < nunk; u++) {
        struct np_reconcile r;
        if (np_reconcile_dir(&be, unk[u], &r) != NP_OK) {
            failed = 1;
            continue;
        }
        for (int tries = 1; r.outcome == NP_RECONCILE_UNREACHABLE && tries < NP_WAIT_MAX_QUERY_FAILURES; tries++) {
            np_warnf("%s: %s; asking again in %.0f s", r.dir, r.message ? r.message : "?", delay);
            struct timespec ts = {(time_t)delay, 0};
            nanosleep(&ts, NULL);
            delay = delay * 2 > NP_WAIT_MAX_DELAY ? NP_WAIT_MAX_DELAY : delay * 2;
            np_reconcile_free(&r);
            if (np_reconcile_dir(&be, unk[u], &r) != NP_OK)
                break;
        }
        if (r.outcome == NP_RECONCILE_FOUND && r.job_id) {
            np_notef("%s: %s", r.dir, r.message);
            printf("job %s: %s\n", r.job_id, r.dir);
            ids[nsub] = r.job_id;
            r.job_id = NULL;
            dirs[nsub] = strdup(r.dir);
            labels[nsub] = r.job_name ? strdup(r.job_name) : strdup(r.dir);
            for (size_t i = 0; i < plan->n; i++) /* its time limit counts for the default wait limit */
                if (r.job_name && strcmp(plan->jobs[i].job_name, r.job_name) == 0) {
                    long minutes = np_rest_time_minutes(plan->jobs[i].time_limit);
                    limits[nsub] = minutes > 0 ? minutes * 60.0 : 0;
                }
            nsub++;
        } else {
            np_errorf("%s: %s", r.dir, r.message ? r.message : "?");
            failed = 1;
        }
        np_reconcile_free(&r);
    }
    if (wait && !sig && nsub > 0) {
        if (failed)
            np_warnf("some submissions failed; waiting for the %zu submitted job%s", nsub, nsub == 1 ? "" : "s");
        rc = launch_wait(&be, ids, dirs, labels, nsub, set, np_wait_default_timeout(limits, nsub));
        failed = rc > failed ? rc : failed;
    }
    if (np_stdout_check())
        failed = 1;
    np_strv_free(ids);
    np_strv_free(dirs);
    np_strv_free(labels);
    np_strv_free(unk);
    free(limits);
    free(skip);
    np_backend_free(&be);
    return sig ? 128 + sig : failed;
}

int main(int argc, char **argv)
{
    np_set_progname(argv[0]);
    struct option longopts[LAUNCH_NOPTS + 1];
    for (size_t i = 0; i < LAUNCH_NOPTS; i++)
        longopts[i] = (struct option){launch_options[i].name, launch_options[i].arg ? required_argument : no_argument,
                                      NULL, launch_options[i].id};
    const char *list_recipe = NULL, *list_gpu = NULL, *list_format = NULL;
    memset(&longopts[LAUNCH_NOPTS], 0, sizeof longopts[0]);
    enum launch_mode mode = LAUNCH_SUBMIT;
    enum launch_rerun rerun = LAUNCH_RERUN_REFUSE;
    int c, nmodes = 0, wait = 0, nrerun = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': mode = LAUNCH_DRY_RUN; nmodes++; break;
        case 'c': mode = LAUNCH_PRINT_CONFIG; nmodes++; break;
        case 'l': mode = LAUNCH_LIST; nmodes++; break;
        case 'w': wait = 1; break;
        case 'r': mode = LAUNCH_RECONCILE; nmodes++; break;
        case 'R': rerun = LAUNCH_RERUN_RESUBMIT; nrerun++; break;
        case 'S': rerun = LAUNCH_RERUN_SKIP; nrerun++; break;
        case 'h': mode = LAUNCH_HELP; nmodes++; break;
        case 'V': mode = LAUNCH_VERSION; nmodes++; break;
        case LAUNCH_OPT_RECIPE: list_recipe = optarg; break;
        case LAUNCH_OPT_GPU: list_gpu = optarg; break;
        case LAUNCH_OPT_FORMAT: list_format = optarg; break;
        case ':':
            np_errorf("option '%s' needs an argument; see --help", argv[optind - 1]);
            return 2;
        default:
            np_errorf("unknown option '%s'; see --help", argv[optind - 1]);
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
        np_errorf("--dry-run, --print-config, --list and --reconcile exclude each other");
        return 2;
    }
    if (wait && mode != LAUNCH_SUBMIT && mode != LAUNCH_HELP && mode != LAUNCH_VERSION) {
        np_errorf("--wait goes with a submission, not with --dry-run, --print-config, --list or --reconcile");
        return 2;
    }
    if ((list_recipe || list_gpu || list_format) && mode != LAUNCH_LIST && mode != LAUNCH_HELP &&
        mode != LAUNCH_VERSION) {
        np_errorf("--recipe, --gpu and --format go with --list (a launch reads RECIPE and GPU_TYPE from the "
                  "environment)");
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
        if (list_recipe && !np_recipe_find(&set, list_recipe)) {
            char known[300] = "";
            for (size_t i = 0; i < set.n; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? ", " : "",
                         set.recipes[i].name);
            np_errorf("--recipe: '%s' is not a recipe (%s)", list_recipe, known);
            np_recipe_set_free(&set);
            return 2;
        }
        struct np_list_filter lf = {list_recipe, list_gpu};
        char *t = np_launch_list(&set, &lf, list_format && strcmp(list_format, "json") == 0);
        if (t)
            fputs(t, stdout);
        else
            np_errorf("out of memory");
        rc = t ? np_stdout_check() : 1;
        free(t);
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
                                  .preview = mode == LAUNCH_PRINT_CONFIG || mode == LAUNCH_DRY_RUN};
    struct np_launch_plan plan;
    st = np_launch_resolve(&set, np_env_getenv, NULL, &opts, &plan, &err);
    if (st != NP_OK)
        rc = launch_fail(st, &err);
    else if (mode == LAUNCH_PRINT_CONFIG)
        rc = launch_print_config(&plan);
    else if (mode == LAUNCH_DRY_RUN)
        rc = launch_dry_run(&plan);
    else
        rc = launch_submit(&plan, wait, rerun, &set);
    np_launch_plan_free(&plan);
    np_recipe_set_free(&set);
    free(synth);
    free(setup_hint);
    return rc;
}
