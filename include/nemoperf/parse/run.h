/* run.h - from a tree of logs to one analysed row per run.
 *
 * Walks the paths, groups logs by folder (restarts "log-<exp>_<job>_<n>.out"
 * of one folder resolve to the latest attempt that has steps), scans them in
 * parallel, identifies each run (manifest nemoperf.json, else the recipes'
 * folder names, else options; the GPU type is never assumed but for a recipe
 * published for one GPU type only), computes its last-step and steady-state
 * metrics, judges plausibility and --reference two-sided.  A folder with a
 * manifest and no usable log is a run too (not submitted, no log, failed).
 */
#ifndef NEMOPERF_RUN_H
#define NEMOPERF_RUN_H

#include <stddef.h>
#include <stdio.h>

#include "nemoperf/model/flops.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/parse/scan.h"

struct np_mb_ref;
struct np_run_family;

enum np_run_status {
    NP_RUN_OK = 0,
    NP_RUN_NO_STEPS,
    NP_RUN_INVALID,
    NP_RUN_INCOMPLETE,
    NP_RUN_UNIDENTIFIED,
    NP_RUN_IMPLAUSIBLE,    /* MFU > 100 % or a step faster than the model's FLOPs allow */
    NP_RUN_SYNTHETIC,      /* a complete run of the synthetic CPU workload: no GPU figures */
    NP_RUN_NOT_SUBMITTED,  /* manifest: launch never got the job accepted */
    NP_RUN_PENDING,        /* --slurm: the scheduler says PENDING */
    NP_RUN_RUNNING,        /* --slurm: the scheduler says RUNNING (no usable log yet) */
    NP_RUN_FAILED,         /* the log ends in an error, or the scheduler says it failed */
    NP_RUN_NO_LOG          /* submitted, no log found */
};

const char *np_run_status_name(enum np_run_status s);
/* 1 for the statuses that do not fail the exit status (ok, synthetic). */
int np_run_status_good(enum np_run_status s);

/* --reference outcome. */
enum np_verdict {
    NP_VERDICT_NONE = 0,     /* --reference not asked */
    NP_VERDICT_PASS,
    NP_VERDICT_FAIL,         /* slower than published by more than the tolerance */
    NP_VERDICT_FAST,         /* faster than published by more than the tolerance: suspicious */
    NP_VERDICT_NOT_COMPARED  /* ref_why says why */
};
const char *np_verdict_name(enum np_verdict v); /* "PASS" ... "n/a" */

/* What a run was for (issue 24): only a benchmark run is a performance measurement.  A profile (nsys adds
 * overhead), an NCCL trace (a few steps, warm-up included) or a checkpoint save/restore run is read and shown,
 * never compared with a published number, kept apart by --group and left out of markdown and --plot. */
enum np_run_kind {
    NP_KIND_BENCHMARK = 0,
    NP_KIND_PROFILE,     /* ENABLE_PROFILE (manifest "profile"), folder/job name ..._nsys */
    NP_KIND_NCCLTRACE,   /* ENABLE_NCCLTRACE (manifest "nccltrace"), ..._nccltrace */
    NP_KIND_CKPT_LOAD,   /* LOAD_CHECKPOINT_PATH (manifest "load_checkpoint") */
    NP_KIND_CKPT_SAVE,   /* ENABLE_CHECKPOINT (manifest "checkpoint"); not a log's save line: NeMo's own
                            benchmark logs save at the end (tests/data/scan/nemo2.log) */
    NP_KIND_NCCLTESTS    /* RECIPE=nccl-tests (manifest "kind": "nccl-tests"): one step of a fabric check, judged
                            against the expected bus bandwidth (model/fabric.h), never against a training row */
};
/* "benchmark", "profile", "nccl-trace", "checkpoint-load", "checkpoint-save", "nccl-tests" */
const char *np_run_kind_name(enum np_run_kind k);
/* Why a run of kind k is never compared with a published number ("" for a benchmark). */
const char *np_run_kind_why(enum np_run_kind k);

/* Who the run is.  Empty strings / 0 when unknown. */
struct np_identity {
    char recipe[64];
    char model_size[64];  /* "8b", or an AutoModel benchmark YAML's base name */
    char gpu_type[16];
    enum np_dtype dtype;
    int gpus;
    int seq_len;
    int gbs;
    int max_steps;
    char variant[16];   /* "", "nsys", "nccltrace" */
    char experiment[160];
    char system[32];    /* "DGX-GB200" (manifest or --system), "" unknown */
    char task[12];      /* "pretrain", "sft", "lora" (manifest, finetune_... folder, --task); "" = pretrain */
    char packed_train[512]; /* fine-tuning: the packed training .npy the job read (manifest), "" unknown */
    int synthetic;      /* 1: the manifest says WORKLOAD=synthetic */
    enum np_run_kind kind; /* manifest, else the folder's _nsys/_nccltrace */
    char family[12];    /* the recipe family that ran it (parse/family.c): "nemo", "automodel", "dfm", "mbridge";
                           "" before the analysis names one */
    char precision[12]; /* the family's own precision name when finer than dtype (Megatron-Bridge's -c: "fp8_mx",
                           "nvfp4"), "" when dtype says it all; np_identity_precision() gives the one to show */
    char container[16]; /* the NeMo container version the run's row is published for ("26.08"), "" unknown */
    char config_variant[16]; /* Megatron-Bridge's -cv ("v1"), "" none */
};

/* The precision to show and key on: id->precision, else "bf16"/"fp8", else "" (unknown).  Static or id's. */
const char *np_identity_precision(const struct np_identity *id);

/* What launch recorded about the job (nemoperf.json), beyond the identity. */
struct np_launch_info {
    int present;        /* 1: a manifest was read */
    int submitted;      /* 1: the scheduler accepted the job */
    char state[16];     /* "state" when the manifest has one ("submitted", "submitting", "unknown"), else "" */
    char job_id[32];    /* "" unknown */
    char submit_time[32]; /* "2026-11-22T13:00:00Z", "" unknown */
    char error[240];    /* the scheduler's message when not submitted */
    char bad[240];      /* why the manifest cannot be trusted (a field of the wrong type, a duplicate key,
                         * unreadable), "" when it can; then nothing else of it is filled */
    int gbs, max_steps; /* the manifest's own config.gbs and config.max_steps (0 absent): a log that says
                         * otherwise gets a note naming both (the log's value is used) */
    char foreign[16];   /* "mbridge": the manifest names a run another reader owns (a top-level "mbridge"
                         * object with a "container": a Megatron-Bridge performance run); then only present
                         * is filled besides it */
};

/* One step of an nccl-tests run (family "nccl-tests", parse/family_nccltests.c): what it ran where, the peak bus
 * bandwidth its output shows, the expected one and the verdict.  Empty (NAN figures) for every other run. */
struct np_run_nccl {
    char step[48];           /* "all_reduce_perf-n1-n2" (the job's steps file) */
    char collective[24];     /* "all_reduce" */
    char scope[8];           /* "intra", "inter", "all" */
    char hosts[64];          /* "n1,n2" (cut at 63 bytes) */
    int gpus_per_node, nranks, out_of_bounds; /* out_of_bounds -1: not printed */
    int verdict;             /* enum np_nccl_verdict (parse/nccltests.h) */
    long long peak_size, wrong; /* the message size of the peak, the #wrong total */
    double peak_busbw, avg_busbw, expected_gbs; /* GB/s; NAN unknown */
    char why[160];           /* the verdict's reason */
};

struct np_window_stats {
    long first, last;   /* iterations; -1 when empty */
    size_t count;
    size_t requested;   /* N of "the last N steps" (0 with --steps) */
    double mean_s, median_s, stdev_s, min_s, max_s; /* NAN when count == 0 */
    const char *rule;   /* "11-44 of 50" (NVIDIA's parser), "last 10", "--steps", "--window" */
};

struct np_run {
    char *path;              /* the log read (the folder for no-steps) */
    const struct np_run_family *family; /* who wrote it (parse/family.h); static, never NULL once analysed */
    char *dir;               /* its folder */
    struct np_identity id;
    const char *id_source;   /* "manifest", "folder", "options", or NULL */
    const char *gpu_source;  /* where gpu_type came from: "manifest", "option", "recipe" (the only GPU type
                                the recipe is published for), or NULL (unknown: no MFU, no reference) */
    struct np_launch_info launch;
    char job_id[32];         /* manifest, else the log's file name; "" unknown */
    char conflict[200];      /* an option contradicting the manifest/folder name ("" none): status invalid */
    const struct np_recipe *recipe; /* borrowed from the recipe set, or NULL */
    const struct np_model *model;
    const struct np_config_row *row; /* published row for (gpu, dtype, gpus), or NULL */
    size_t attempts;         /* restart logs seen in the folder */
    size_t runs_in_file;     /* runs appended in the file read */
    enum np_log_gen gen;
    long step, total;        /* last iteration seen and the final one (-1 unknown) */
    size_t steps_seen;
    int complete;            /* 1 final iteration reached, 0 not, -1 unknown */
    double step_time_s;      /* the last step's time (the seeds' rule) */
    struct np_window_stats window; /* the steady-state window */
    double *samples;         /* the window's step times in log order (window.count of them), owned; only when
                                opts->keep_samples (the results store), else NULL; not carried by the spill */
    struct np_metrics steady;      /* metrics of the window's mean step time */
    double scaling_eff;      /* steady tokens/s/GPU over that of the smallest scale of the same
                                configuration (weak scaling); NAN when there is no sweep */
    double flops_per_sample; /* NAN when the model is unknown (fine-tuning: per packed sequence) */
    /* Energy (Megatron-LM/Megatron-Bridge --log-energy: "energy per GPU (J/iter/GPU)", "power per GPU (W/GPU)"):
     * the means over the steady window's steps that print them (else every step that does); NAN when none */
    struct np_energy {
        double w_per_gpu, j_per_gpu_iter;
        double j_per_token;       /* j_per_gpu_iter x GPUs / (sequence x GBS) */
        double tokens_per_kwh;    /* 3.6e6 / j_per_token */
        double mwh_to_train;      /* j_per_token x train_tokens / 3.6e9 */
        size_t steps;             /* the steps averaged (telemetry: the window's steps its step time is of) */
        const char *source;       /* "log" (--log-energy), "telemetry" (nvidia-smi's power.draw over the window:
                                     J/iter/GPU = W/GPU x the mean step time), NULL when none; static */
    } energy;
    char *system;            /* the job's system snapshot and GPU telemetry (parse/system.h) as compact JSON (the
                                reports' "system_snapshot"), owned; NULL when the run folder has neither */
    int net_warnings;        /* NCCL network fallbacks its log's init lines show (run.c run_net_head; --nccl: diagnose) */
    const char *pack_source; /* fine-tuning: where the pack statistics came from ("measured", "table"), or NULL */
    double peak_tflops;      /* of gpu_type/dtype, 0 unknown */
    double train_tokens;
    struct np_metrics m;
    double peak_memory_bytes, loss, logged_tflops_per_gpu;
    double logged_mfu_percent; /* AutoModel's "Average MFU", NAN otherwise */
    /* 1 when logged_tflops_per_gpu is a mean over the steady window (Megatron-Bridge's llmb window, an
     * AutoModel summary), 0 when it is the last step's logged figure */
    unsigned char logged_steady;
    int bench_summary;       /* AutoModel benchmark log with its summary: the window is the iterations ... */
    long bench_warmup;       /* ... from this one on (after the warm-up), as the summary's average */
    int checkpoint_saved, checkpoint_loaded;
    struct np_run_nccl nccl; /* an nccl-tests step (id.kind NP_KIND_NCCLTESTS), else empty */
    enum np_run_status status;
    char *why;               /* human reason for a non-ok status, or NULL */
    char *note;              /* what was not computed and why (e.g. GPU type unknown), or NULL */
    /* the published row whose own layout (np_ref_row.layout: Megatron-Bridge's summaries) places the run in
     * markdown, also for a synthetic run that is never compared with it; NULL otherwise */
    const struct np_ref_row *layout_row;
    /* --reference */
    const struct np_ref_row *ref;
    double ref_ratio;        /* measured / published throughput; NAN when not compared */
    enum np_verdict verdict;
    char ref_why[256];       /* why not compared */
};

struct np_parse_opts {
    const char *include;     /* "*.out" */
    int all_steps;
    size_t window;           /* last N steps (10) */
    int window_strict;       /* 1: read back until `window` steps are found (--window given); 0: the
                                window holds the last <= N steps of the log's tail, read until one is found */
    long steps_first, steps_last; /* --steps A-B (iterations), -1 when unset */
    int jobs;                /* threads; <= 0: one per online CPU, twice that once the logs turn out cold */
    double train_tokens;     /* 1e12 */
    struct np_identity given; /* --recipe --size --dtype --gpus --gpu --seq-len --gbs --system: a value that
                                 contradicts the manifest or the folder name makes the run invalid */
    int reference;
    double tolerance_pct;    /* 5 */
    int tolerance_given;     /* 1: --tolerance was given; 0: each run's family's own (parse/family.h) */
    int verdict_last;        /* 1: --verdict last (compare the last step, not the steady-state mean) */
    int group;               /* --group: the report adds (csv: is) the groups of repeats */
    int net_head;            /* 1 (default): NCCL's network fallbacks from each log's first 256 KiB into its notes;
                                0 with --nccl, which reads whole logs */
    int keep_samples;        /* 1: keep each run's window step times (run->samples) for the results store */
    int progress;            /* show progress on stderr ... */
    double progress_after;   /* ... once the scan has taken this long (1 s) */
    const struct np_mb_ref *mbref; /* Megatron-Bridge's published runs and peaks (borrowed), or NULL: its runs
                                      cannot be identified (parse/family_mbridge.c) */
    int route_foreign;       /* 1: a folder whose manifest names another reader's run (np_launch_info.foreign)
                                is not read here: its manifest's folder goes to the sink's foreign callback
                                (np_parse_stream) or to res->foreign (np_parse_paths), once, in walk order */
};

struct np_parse_result {
    struct np_run *runs;
    size_t nruns;
    char **errors;           /* "path: message" */
    size_t nerrors;
    size_t files;            /* logs read */
    unsigned long long bytes_read;
    char **foreign;          /* route_foreign: the folders of the other readers' runs, in walk order */
    size_t nforeign;
};

void np_parse_opts_init(struct np_parse_opts *o);

/* Receives a parse's output in walk order (sorted depth-first), one call at a time, from
 * whichever worker thread made it ready.  run and msg are borrowed for the call only.
 * A non-OK return stops the parse (np_parse_stream returns it). */
struct np_run_sink {
    void *ctx;
    enum np_status (*run)(void *ctx, const struct np_run *run);
    enum np_status (*error)(void *ctx, const char *msg); /* "path: message": unreadable input */
    /* route_foreign: the folder of a manifest that names another reader's run (kind "mbridge"), once per
     * manifest, in walk order; may be NULL when route_foreign is 0 */
    enum np_status (*foreign)(void *ctx, const char *kind, const char *dir);
};

struct np_parse_stats {
    size_t runs, errors;
    size_t files;            /* logs read */
    unsigned long long bytes_read;
};

/* Parse the paths, handing each run to sink as soon as every run before it is known (the
 * runs np_parse_paths would list, in its order; read errors in walk order, just before the
 * runs of their folder): memory does not grow with the number of runs.  Cross-run passes
 * (scaling efficiency, --group, --slurm) are the caller's.  stats may be NULL.
 * Returns NP_E_NOMEM, NP_E_INTERNAL or the sink's failure. */
enum np_status np_parse_stream(char *const *paths, size_t npaths, const struct np_parse_opts *opts,
                               const struct np_recipe_set *recipes, const struct np_ref_table *ref,
                               const struct np_run_sink *sink, struct np_parse_stats *stats);

/* A run written to a temporary file of this process and read back (for passes that need every
 * run before the first is printed, in bounded memory).  Borrowed pointers (recipe, model, row,
 * ref, static strings) stay valid only within the process that wrote them.  put: NP_E_IO;
 * get: 1 with *run filled (its path, dir, why and note new strings: np_run_clear; samples NULL), 0 at the end,
 * -1 on a read or memory failure. */
enum np_status np_run_spill_put(FILE *f, const struct np_run *run);
int np_run_spill_get(FILE *f, struct np_run *run);
/* Frees what a run owns (path, dir, why, note, samples); NULL-safe. */
void np_run_clear(struct np_run *run);

/* Parse the paths.  recipes/ref may be NULL (nothing identified / no reference).
 * Only NP_E_NOMEM and NP_E_INTERNAL are returned as failures; unreadable
 * inputs are listed in res->errors.  Runs are sorted by path. */
enum np_status np_parse_paths(char *const *paths, size_t npaths, const struct np_parse_opts *opts,
                              const struct np_recipe_set *recipes, const struct np_ref_table *ref,
                              struct np_parse_result *res);

/* A recipe family as a descriptor (DESIGN: one record, families as descriptors): who wrote a run's log and
 * how such a run is read.  The table is parse/family.c's; a family with its own analysis is a file of its own. */
struct np_run_family {
    const char *name;      /* "nemo", "automodel", "dfm", "mbridge": struct np_identity's family, the store's */
    const char *label;     /* "NeMo", "NeMo AutoModel", "NeMo DFM", "Megatron-Bridge" */
    /* --reference's tolerance when none is given (percent): how closely the family's published numbers can be
     * matched (Megatron-Bridge rounds its 26.04.01+ tokens/s to multiples of 16: 0.5 %) */
    double tolerance_pct;
    /* 1 when a run of this identity (the manifest's or the options', not yet analysed) is this family's */
    int (*claims)(const struct np_identity *id, const struct np_parse_opts *o);
    /* The family's own analysis (identity completion, window, metrics, status, --reference), or NULL: the
     * recipe-driven analysis of parse/run.c (NeMo 1.0/2.0, AutoModel, DFM: the recipes folder and the
     * reference tables). */
    void (*analyse)(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o);
};

/* The family of a run's identity: the first row that claims it, else NeMo's.  Never NULL. */
const struct np_run_family *np_run_family_of(const struct np_identity *id, const struct np_parse_opts *o);
/* By name ("mbridge"); NULL when no family has it. */
const struct np_run_family *np_run_family_find(const char *name);

/* For the families' analyses (parse/family_*.c): the fields every analysis starts from (NAN / -1, the last
 * step's iteration, completeness); a reason (replaced) and a note (appended, "; " between); the window's
 * statistics of n step times v (sorted in place); the --reference verdict against run->ref (NULL: why_not
 * or "nothing published" is said) on the basis --verdict names, at the family's tolerance unless one is given. */
void np_run_analyse_start(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o);
void np_run_set_why(struct np_run *run, const char *why);
void np_run_add_note(struct np_run *run, const char *note);
void np_window_stats_of(struct np_window_stats *w, double *v, size_t n);
void np_run_verdict(struct np_run *run, const struct np_parse_opts *o, const char *why_not);
/* run->energy from the scan's steps of iterations first..last (the scan's numbering), the identity's GPUs,
 * sequence and GBS and run->train_tokens; a note says it. */
void np_run_energy(struct np_run *run, const struct np_scan_result *scan, long first, long last);

/* J/token, tokens/kWh and MWh to train from run->energy's W/GPU and J/iter/GPU, and the run's note naming
 * where they came from (what: "the log's --log-energy, 35 steps"). */
void np_run_energy_derive(struct np_run *run, const char *what);

/* The job's system snapshot and GPU telemetry of the run's folder (or its parent) into run->system, what stands
 * out into its notes, and its energy from telemetry when the log prints none (parse/runsys.c).  The telemetry is
 * read over the steady window's time when the window's step lines (first..last, the scan's numbering) carry
 * timestamps, else over the whole run. */
void np_run_system(struct np_run *run, const struct np_scan_result *scan, long first, long last);
/* The --reference tolerance (percent) of a run: --tolerance when given, else its family's. */
double np_run_tolerance(const struct np_run *run, const struct np_parse_opts *o);

/* Analyse one scanned log (exposed for tests).  Fills run from scan + identity. */
void np_run_analyse(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *opts,
                    const struct np_recipe_set *recipes, const struct np_ref_table *ref);

/* Identify from a path's folder names: "pretrain_<recipe>_<size>_<dtype>_<gpus>[_nsys|_nccltrace]"
 * or "finetune_<recipe>_<size>_<sft|lora>_<dtype>_<gpus>[...]".
 * Returns 1 when found. */
int np_identity_from_path(const char *path, struct np_identity *id);
/* Read nemoperf.json (manifest written by nemoperf-launch) into id; 1 when usable. */
int np_identity_from_manifest(const char *file, struct np_identity *id);
/* The same, and what launch recorded about the job into li (li may be NULL; li->present
 * is 1 whenever the file is JSON, even when the identity is incomplete, and when it cannot
 * be trusted: then li->bad says why and 0 is returned).  Regular files only. */
int np_manifest_read(const char *file, struct np_identity *id, struct np_launch_info *li);

void np_parse_result_free(struct np_parse_result *res);

/* nccl-tests runs (parse/family_nccltests.c defines these): a run folder whose manifest says "workload":
 * "nccl-tests" is one run per step of the job's steps file. */
#define NP_NCCLT_FAMILY "nccl-tests"
#define NP_NCCLT_STEPS_DEFAULT "nccl-tests/steps.json"

/* One step the job ran: nccl-tests/steps.json's entry (the interface with the job side, job/nccltests.c). */
struct np_ncclt_step_info {
    char name[48], binary[32], collective[24], scope[8], hosts[64];
    char file[256];            /* relative to the run folder, checked: no "..", not absolute */
    int gpus_per_node, nnodes;
};

struct np_ncclt_steps {
    char gpu_type[16];         /* the steps file's (else the manifest's config), lowercase; "" unknown */
    struct np_ncclt_step_info *v;
    size_t n;
};

/* The steps of the nccl-tests run whose manifest is `manifest` (its folder is the run folder): the manifest's
 * nccl_tests.steps (inline), else the file its nccl_tests.steps_file names (default nccl-tests/steps.json).
 * NP_E_NOTFOUND when there is no steps file yet (the job has not started its steps); NP_E_PARSE naming
 * file:line:column and the field when it is not what the job writes.  Free with np_ncclt_steps_free. */
enum np_status np_ncclt_steps_read(const char *manifest, struct np_ncclt_steps *out, struct np_error *err);
void np_ncclt_steps_free(struct np_ncclt_steps *s);

/* Before np_run_analyse of one step's run (path: the step's output): its identity and step fields. */
void np_ncclt_run_step(struct np_run *run, const struct np_ncclt_step_info *s, const char *gpu_type);

#endif
