/* parse.c - nemoperf-parse: NeMo logs in, published-style numbers out.
 *
 * Thin front end: options (one getopt_long table), recipe and reference
 * loading, np_parse_stream() into a streamed report (np_parse_paths() for --slurm, --group
 * and --plot), the passes over all runs (--slurm states, weak-scaling
 * efficiency), np_report_write(), exit status.  0 when every run is ok or synthetic
 * (and, with --reference, no comparison is FAIL or FAST) and every folder could be
 * read, 1 otherwise or when no log was found, 2 for usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/parse/diagnose.h"
#include "nemoperf/parse/mbridge.h"
#include "nemoperf/report/aggregate.h"
#include "nemoperf/report/ncclreport.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/util/text.h"
#include "nemoperf/model/flops.h"
#include "nemoperf/report/plot.h"
#include "nemoperf/model/recipe.h"
#include "nemoperf/parse/reference.h"
#include "nemoperf/report/report.h"
#include "nemoperf/parse/run.h"
#include "nemoperf/parse/runs_slurm.h"
#include "nemoperf/slurm/backend.h"
#include "nemoperf/slurm/rest.h"
#include "nemoperf/report/history.h"
#include "nemoperf/store/store.h"
#include "nemoperf/util/version.h"

enum {
    OPT_INCLUDE = 256, OPT_ALL_STEPS, OPT_WINDOW, OPT_STEPS, OPT_TOKENS, OPT_RECIPE, OPT_SIZE, OPT_DTYPE,
    OPT_GPUS, OPT_GPU, OPT_SEQ, OPT_GBS, OPT_REFERENCE, OPT_TOLERANCE, OPT_NO_PROGRESS,
    OPT_VERDICT, OPT_GROUP, OPT_SLURM, OPT_SYSTEM, OPT_PLOT, OPT_TASK, OPT_NCCL, OPT_STRICT, OPT_STORE, OPT_DB,
    OPT_HISTORY, OPT_COMPARE, OPT_MIN_EFFECT, OPT_CLUSTER, OPT_CONTAINER
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
            "      --history [SEL]  list stored runs, oldest first, change points marked (--plot FILE: over time);\n"
            "                       SEL: key=value[,...] with recipe size dtype gpus gpu container cluster kind\n"
            "                       config status since until job\n"
            "      --compare BASE CAND  each a folder of runs or db:SEL; per configuration a verdict FASTER,\n"
            "                       SLOWER, SAME or INCONCLUSIVE (exit 1 when anything is SLOWER)\n"
            "      --min-effect PCT the smallest change that counts (default 2)\n"
            "  -j, --jobs N         threads (default: one per online CPU, twice that once a read waits for the disk)\n"
            "      --no-progress    never show progress (it shows on a terminal after NEMOPERF_PROGRESS_AFTER s, 1)\n"
            "  -q, --quiet          do not print read errors on stderr (still in JSON 'errors')\n"
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

/* --slurm: the backend SLURM_SUBMIT names, as nemoperf-launch chooses it (nothing is sent yet).
 * 0 ok, else the exit code (2 for a bad setting), the message printed. */
static int parse_backend(struct np_backend *be)
{
    struct np_error err;
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

/* ---- the streamed report: every format without --slurm, --group or --plot ---- */

/* The runs of the walk go to a temporary file while the scaling efficiency of their
 * configurations is summed (it needs every run of a sweep); then each run is read back, given
 * its efficiency and written: memory holds the walk's folders in flight, not the runs.  CSV, JSON
 * and table rows are formatted as the walk hands them over (beside the threads still reading logs)
 * with a slot for the efficiency: the end is then a copy (a table's, its widths and padding).  Records: 'T' a rendered row, 'R' a run.
 * Markdown shows no efficiency: its runs go to the report as they come (spill NULL). */
/* --store: every run reported goes into the store, in one transaction. */
struct parse_store {
    struct np_store *s;
    struct np_store_ctx ctx;
    size_t added, updated, same;
    struct np_error err;
    int failed;
};

static enum np_status parse_store_run(struct parse_store *ps, const struct np_run *r)
{
    struct np_store_rec rec;
    enum np_store_outcome oc = NP_STORE_SAME;
    enum np_status st = np_store_rec_from_run(r, &ps->ctx, &rec);
    if (st != NP_OK)
        np_error_set(&ps->err, st, "--store", 0, 0, "out of memory");
    else
        st = np_store_put(ps->s, &rec, &oc, &ps->err);
    np_store_rec_clear(&rec);
    if (st != NP_OK) {
        ps->failed = 1;
        return st;
    }
    ps->added += oc == NP_STORE_ADDED;
    ps->updated += oc == NP_STORE_UPDATED;
    ps->same += oc == NP_STORE_SAME;
    return NP_OK;
}

struct parse_out {
    struct parse_store *store; /* NULL: no --store */
    struct np_report *rep;
    int quiet;
    FILE *spill;
    struct np_scaling eff;
    size_t nruns, nerrors;
    int bad; /* markdown: a run not ok, or FAIL/FAST */
};

struct parse_row { /* after a 'T' and the row's text */
    uint32_t len;
    uint32_t eff_at;
    int64_t at;  /* np_scaling_add_at */
    double tpg;
    int32_t bad; /* a run that makes the exit status 1 */
};

static int parse_run_bad(const struct np_run *r)
{
    return !np_run_status_good(r->status) || r->verdict == NP_VERDICT_FAIL || r->verdict == NP_VERDICT_FAST;
}

static enum np_status parse_sink_run(void *ctx, const struct np_run *r)
{
    struct parse_out *po = ctx;
    po->nruns++;
    if (po->store) {
        enum np_status sst = parse_store_run(po->store, r);
        if (sst != NP_OK)
            return sst;
    }
    if (!po->spill) {
        po->bad |= parse_run_bad(r);
        return np_report_run(po->rep, r);
    }
    long at;
    double tpg;
    enum np_status st = np_scaling_add_at(&po->eff, r, &at, &tpg);
    if (st != NP_OK)
        return st;
    if (np_report_renders(po->rep)) {
        struct np_report_text t;
        st = np_report_render(po->rep, r, &t);
        if (st == NP_OK && t.len < UINT32_MAX) {
            struct parse_row h = {(uint32_t)t.len, (uint32_t)t.eff_at, at, tpg, parse_run_bad(r)};
            return putc('T', po->spill) != EOF && fwrite(&h, sizeof h, 1, po->spill) == 1 &&
                           fwrite(t.text, 1, t.len, po->spill) == t.len
                       ? NP_OK
                       : NP_E_IO;
        }
        if (st != NP_OK && st != NP_E_INVALID)
            return st;
    }
    return putc('R', po->spill) != EOF ? np_run_spill_put(po->spill, r) : NP_E_IO;
}

/* The next record of the spill, written out; 0 at the end, -1 when the spill is unreadable. */
static int parse_put_next(struct parse_out *po, char **buf, size_t *cap, int *rc, enum np_status *st)
{
    int type = getc(po->spill);
    if (type == EOF)
        return ferror(po->spill) ? -1 : 0;
    if (type == 'T') {
        struct parse_row h;
        if (fread(&h, sizeof h, 1, po->spill) != 1 || h.eff_at > h.len)
            return -1;
        if (h.len > *cap) {
            char *nb = realloc(*buf, h.len);
            if (!nb) {
                *st = NP_E_NOMEM;
                return 1;
            }
            *buf = nb;
            *cap = h.len;
        }
        if (fread(*buf, 1, h.len, po->spill) != h.len)
            return -1;
        if (h.bad)
            *rc = 1;
        errno = 0;
        *st = np_report_put(po->rep, *buf, h.len, h.eff_at, np_scaling_eff_at(&po->eff, (long)h.at, h.tpg));
        return 1;
    }
    struct np_run r;
    if (type != 'R' || np_run_spill_get(po->spill, &r) != 1)
        return -1;
    r.scaling_eff = np_scaling_eff(&po->eff, &r);
    if (parse_run_bad(&r))
        *rc = 1;
    errno = 0;
    *st = np_report_run(po->rep, &r);
    np_run_clear(&r);
    return 1;
}

static enum np_status parse_sink_error(void *ctx, const char *msg)
{
    struct parse_out *po = ctx;
    po->nerrors++;
    if (!po->quiet)
        np_errorf("%s", msg);
    return np_report_error(po->rep, msg);
}

/* Nothing to report: say where it was looked for. */
static void parse_none_found(const char *include, char *const *paths, size_t npaths)
{
    if (npaths == 1)
        np_errorf("no log files matching '%s' found in %s", include, paths[0]);
    else
        np_errorf("no log files matching '%s' found in %s, ... (%zu paths)", include, npaths ? paths[0] : ".",
                  npaths);
}

/* Flush and close the cleaning stream over stdout (not stdout itself); 1 when that fails. */
static int parse_close_out(FILE *out, int rc)
{
    if (out == stdout)
        return rc;
    errno = 0;
    if (fclose(out) != 0 && rc == 0) {
        np_errorf("cannot write the report to standard output: %s", strerror(errno ? errno : EIO));
        return 1;
    }
    return rc;
}

static int parse_stream(FILE *out, char *const *paths, size_t npaths, const struct np_parse_opts *o,
                        const struct np_recipe_set *recipes, const struct np_ref_table *ref, enum np_format fmt,
                        int quiet, struct parse_store *ps)
{
    int md = fmt == NP_FMT_MARKDOWN;
    struct parse_out po = {ps, NULL, quiet, NULL, {0}, 0, 0, 0};
    int e = 0;
    if (!md && !(po.spill = np_report_tmpfile()))
        e = errno ? errno : EIO;
    if (!e && (po.rep = np_report_new(out, fmt, o)))
        e = np_report_tmp_errno(po.rep); /* markdown's list of the runs in no table */
    if (e || !po.rep) { /* said before anything is read */
        if (e)
            np_errorf("cannot create a temporary file in %s: %s (TMPDIR names the folder)", np_report_tmpdir(),
                      strerror(e));
        else
            np_errorf("%s", np_strerror(NP_E_NOMEM));
        np_report_free(po.rep);
        if (po.spill)
            fclose(po.spill);
        return 1;
    }
    struct np_run_sink sink = {&po, parse_sink_run, parse_sink_error, NULL};
    enum np_status st = np_parse_stream(paths, npaths, o, recipes, ref, &sink, NULL);
    int spill_bad = 0, out_bad = 0; /* which I/O failed, and why (issue 13) */
    int rc = po.bad;
    if (st == NP_OK && po.spill && (fflush(po.spill) != 0 || fseek(po.spill, 0, SEEK_SET) != 0)) {
        st = NP_E_IO;
        spill_bad = 1;
        e = errno;
    }
    int got = 0;
    char *row = NULL;
    size_t rowcap = 0;
    while (st == NP_OK && po.spill && (got = parse_put_next(&po, &row, &rowcap, &rc, &st)) == 1) {
        if (st == NP_E_IO) {
            out_bad = 1;
            e = errno;
        }
    }
    free(row);
    if (st == NP_OK && got < 0) {
        st = NP_E_IO;
        spill_bad = 1;
        e = errno;
    }
    if (st != NP_OK) {
        if (ps && ps->failed) /* said by the caller */
            ;
        else if (np_report_tmp_errno(po.rep)) /* markdown's list, a table's footer */
            np_errorf("cannot use a temporary file of the report in %s: %s", np_report_tmpdir(),
                      strerror(np_report_tmp_errno(po.rep)));
        else if (out_bad && e) /* a full disk, a closed pipe: said as such */
            np_errorf("cannot write the report to standard output: %s", strerror(e));
        else if (spill_bad)
            np_errorf("cannot use a temporary file of the report in %s: %s", np_report_tmpdir(),
                      e ? strerror(e) : "I/O error");
        else if (st == NP_E_IO)
            np_errorf("writing the report: %s", np_strerror(st));
        else
            np_errorf("%s", np_strerror(st));
        rc = 1;
    } else {
        if (po.nruns == 0) { /* a bad argument was said above: not "no log files" as well */
            if (po.nerrors == 0)
                parse_none_found(o->include, paths, npaths);
            rc = 1;
        }
        if (po.nerrors)
            rc = 1; /* a folder or file that could not be read: the report is not the whole truth */
        if (po.nruns || fmt == NP_FMT_JSON) {
            errno = 0;
            enum np_status w = np_report_finish(po.rep);
            e = errno;
            if (w == NP_E_IO && np_report_tmp_errno(po.rep))
                np_errorf("cannot use a temporary file of the report in %s: %s", np_report_tmpdir(),
                          strerror(np_report_tmp_errno(po.rep)));
            else if (w == NP_E_IO && e)
                np_errorf("cannot write the report to standard output: %s", strerror(e));
            else if (w != NP_OK)
                np_errorf("writing the report: %s", np_strerror(w));
            if (w != NP_OK)
                rc = 1;
        }
    }
    np_report_free(po.rep);
    np_scaling_free(&po.eff);
    if (po.spill)
        fclose(po.spill);
    return rc;
}

/* Open the store --db names (default: NEMOPERF_DB, then the user's data folder).  0, else the exit code
 * (said). */
static int parse_open_store(const char *db, struct np_store **s)
{
    char def[1024];
    struct np_error err;
    if (!db) {
        if (np_store_default_location(def, sizeof def, &err) != NP_OK) {
            np_error_print(&err);
            return 2;
        }
        db = def;
    }
    enum np_status st = np_store_open(db, s, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return np_exit_code(st);
    }
    return 0;
}

/* The end of --store: commit when everything was stored, else leave the store as it was. */
static int parse_store_end(struct parse_store *ps, int rc, int quiet)
{
    if (!ps->s)
        return rc;
    if (ps->failed) {
        np_error_print(&ps->err);
        np_errorf("--store: nothing stored (the store is as it was before)");
        np_store_rollback(ps->s);
        rc = 1;
    } else if (np_store_commit(ps->s, &ps->err) != NP_OK) {
        np_error_print(&ps->err);
        np_errorf("--store: nothing stored (the store is as it was before)");
        rc = 1;
    } else if (!quiet) {
        np_notef("stored %zu run%s (%zu added, %zu updated, %zu unchanged)", ps->added + ps->updated + ps->same,
                 ps->added + ps->updated + ps->same == 1 ? "" : "s", ps->added, ps->updated, ps->same);
    }
    np_store_close(ps->s);
    ps->s = NULL;
    return rc;
}

/* --history [SEL...]: the selectors joined, the identity options as filters too. */
static int parse_history(char *const *sel, size_t nsel, const struct np_parse_opts *o, const char *db,
                         enum np_format fmt, double min_effect, const char *plot)
{
    char joined[2048] = "", buf[2048];
    size_t len = 0;
    for (size_t i = 0; i < nsel; i++) {
        const char *x = strncmp(sel[i], "db:", 3) == 0 ? sel[i] + 3 : sel[i];
        int n = snprintf(joined + len, sizeof joined - len, "%s%s", len ? "," : "", x);
        if (n < 0 || (size_t)n >= sizeof joined - len) {
            np_errorf("--history: the selectors are too long");
            return 2;
        }
        len += (size_t)n;
    }
    struct np_store_filter f;
    struct np_error err;
    if (np_store_filter_parse(joined, buf, sizeof buf, &f, &err) != NP_OK) {
        np_error_print(&err);
        return 2;
    }
    char gpu[16];
    if (o->given.recipe[0])
        f.recipe = o->given.recipe;
    if (o->given.model_size[0])
        f.size = o->given.model_size;
    if (o->given.dtype != NP_DTYPE_NONE)
        f.dtype = np_dtype_name(o->given.dtype, 0);
    if (o->given.gpus)
        f.gpus = o->given.gpus;
    if (o->given.gpu_type[0]) {
        snprintf(gpu, sizeof gpu, "%s", o->given.gpu_type);
        f.gpu = gpu;
    }
    struct np_store *s = NULL;
    int rc = parse_open_store(db, &s);
    if (rc)
        return rc;
    long long n = 0;
    FILE *out = np_text_out_stream(stdout, fmt == NP_FMT_JSON); /* the reports' one escaping rule */
    if (!out || np_history_write(s, &f, fmt, min_effect, plot, out, &n, &err) != NP_OK) {
        if (out)
            np_error_print(&err);
        else
            np_errorf("cannot set up standard output: %s", strerror(errno));
        rc = 1;
    }
    if (out)
        rc = parse_close_out(out, rc);
    if (plot) /* cairo's and fontconfig's caches, as after the other plots (LeakSanitizer) */
        np_plot_cleanup();
    np_store_close(s);
    return rc;
}

/* One side of --compare: a folder of runs (parsed now) or db:SEL (the store). */
static int parse_compare_side(struct np_compare_set *set, enum np_cmp_sidename side, char *arg,
                              const struct np_parse_opts *o0, const struct np_recipe_set *recipes,
                              const struct np_ref_table *ref, const char *db, struct np_store **s, int quiet)
{
    struct np_error err;
    if (strncmp(arg, "db:", 3) == 0) {
        char buf[2048];
        struct np_store_filter f;
        if (np_store_filter_parse(arg, buf, sizeof buf, &f, &err) != NP_OK) {
            np_error_print(&err);
            return 2;
        }
        int rc = *s ? 0 : parse_open_store(db, s);
        if (rc)
            return rc;
        if (np_compare_set_from_store(set, side, *s, &f, &err) != NP_OK) {
            np_error_print(&err);
            return 1;
        }
        return 0;
    }
    struct np_parse_opts o = *o0;
    o.keep_samples = 1;
    struct np_parse_result res;
    char *paths[] = {arg, NULL};
    if (np_parse_paths(paths, 1, &o, recipes, ref, &res) != NP_OK) {
        np_errorf("--compare: %s: %s", arg, np_strerror(NP_E_NOMEM));
        return 1;
    }
    int rc = 0;
    if (!quiet)
        for (size_t i = 0; i < res.nerrors; i++)
            np_errorf("%s", res.errors[i]);
    if (res.nruns == 0) {
        np_errorf("--compare: no runs found under %s", arg);
        rc = 1;
    }
    for (size_t i = 0; i < res.nruns && !rc; i++) {
        struct np_store_rec rec;
        if (np_store_rec_from_run(&res.runs[i], NULL, &rec) != NP_OK || np_compare_set_add(set, side, &rec) < 0) {
            np_errorf("--compare: %s", np_strerror(NP_E_NOMEM));
            rc = 1;
        }
        np_store_rec_clear(&rec);
    }
    np_parse_result_free(&res);
    return rc;
}

static int parse_compare(char *const *sides, const struct np_parse_opts *o, const struct np_recipe_set *recipes,
                         const struct np_ref_table *ref, const char *db, enum np_format fmt, double min_effect,
                         int quiet)
{
    struct np_compare_set *set = np_compare_set_new();
    struct np_store *s = NULL;
    if (!set) {
        np_errorf("%s", np_strerror(NP_E_NOMEM));
        return 1;
    }
    int rc = parse_compare_side(set, NP_CMP_BASE, sides[0], o, recipes, ref, db, &s, quiet);
    if (!rc)
        rc = parse_compare_side(set, NP_CMP_CAND, sides[1], o, recipes, ref, db, &s, quiet);
    if (!rc) {
        size_t nslower = 0, ncompared = 0;
        errno = 0;
        FILE *out = np_text_out_stream(stdout, fmt == NP_FMT_JSON); /* the reports' one escaping rule */
        enum np_status w = out ? np_compare_write(set, fmt, min_effect, out, &nslower, &ncompared) : NP_E_IO;
        if (out && parse_close_out(out, 0))
            w = NP_E_IO;
        if (w != NP_OK) {
            np_errorf("cannot write the comparison: %s", errno ? strerror(errno) : np_strerror(w));
            rc = 1;
        } else if (!ncompared) {
            np_errorf("--compare: no configuration has runs on both sides (runs of status ok or synthetic count)");
            rc = 1;
        } else if (nslower) {
            rc = 1;
        }
    }
    np_store_close(s);
    np_compare_set_free(set);
    return rc;
}

/* The Megatron-Bridge rows, loaded once for the whole parse; freed at exit (main has many ways out). */
static struct np_mb_ref parse_mbref;

/* Megatron-Bridge's published runs and peaks for its family of runs (parse/family_mbridge.c): not installed,
 * its runs are unidentified (said per run); an unknown --container is a usage error.  0, else 2 (said). */
static int parse_mbridge_data(struct np_parse_opts *o)
{
    struct np_error err;
    if (np_mb_ref_load_default(&parse_mbref, &err) != NP_OK) {
        if (o->given.container[0] || o->given.precision[0]) {
            np_error_print(&err);
            return 2;
        }
        return 0;
    }
    o->mbref = &parse_mbref;
    int known = !o->given.container[0];
    for (size_t i = 0; !known && i < parse_mbref.n; i++)
        known = strcmp(parse_mbref.rows[i].container, o->given.container) == 0;
    if (!known) {
        np_errorf("--container: %s has no published Megatron-Bridge table (25.09 to %s)", o->given.container,
                  parse_mbref.n ? parse_mbref.rows[0].container : "?");
        return 2;
    }
    return 0;
}

static void parse_mbref_free(void)
{
    np_mb_ref_free(&parse_mbref);
}

int main(int argc, char **argv)
{
    np_std_fds_reserve();
    np_set_progname(argv[0]);
    struct np_parse_opts o;
    np_parse_opts_init(&o);
    int fmt = NP_FMT_TABLE, quiet = 0, no_progress = 0, slurm = 0, nccl = 0, strict = 0, store = 0, history = 0,
        compare = 0;
    atexit(parse_mbref_free);
    const char *plot = NULL, *db = NULL, *cluster = NULL;
    double min_effect = NP_MIN_EFFECT_DEFAULT;
    long l;
    double d;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:j:qhV", parse_options, NULL)) != -1) {
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
            if (!parse_copy("--size/--model", optarg, o.given.model_size, sizeof o.given.model_size))
                return 2;
            break;
        case OPT_DTYPE:
            /* Megatron-Bridge's -c names and the published labels (fp8_mx, MXFP8, NVFP4, ...) as well */
            o.given.dtype = np_dtype_parse(optarg);
            if (o.given.dtype == NP_DTYPE_NONE && np_mb_dtype_parse(optarg) != NP_MB_DTYPE_NONE) {
                enum np_mb_dtype md = np_mb_dtype_parse(optarg); /* Megatron-Bridge's: its family's runs */
                snprintf(o.given.precision, sizeof o.given.precision, "%s", np_mb_dtype_name(md));
                o.given.dtype = md == NP_MB_BF16 ? NP_DTYPE_BF16 : NP_DTYPE_FP8;
            }
            if (o.given.dtype == NP_DTYPE_NONE) {
                np_errorf("--dtype: '%s' is not bf16, fp8, fp8_cs, fp8_mx, fp8_sc or nvfp4 (or BF16, FP8, FP8-CS, "
                          "MXFP8, FP8-MX, NVFP4)", optarg);
                return 2;
            }
            break;
        case OPT_CONTAINER:
            if (!parse_copy("--container", optarg, o.given.container, sizeof o.given.container))
                return 2;
            if (strspn(optarg, "0123456789.") != strlen(optarg) || !np_mb_container_newer(optarg, "0.0")) {
                np_errorf("--container: '%s' is not a container version such as 26.08 or 26.06.01", optarg);
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
            o.tolerance_given = 1; /* else each family's own (Megatron-Bridge's 0.5) */
            break;
        case OPT_VERDICT:
            if (strcmp(optarg, "last") == 0)
                o.verdict_last = 1;
            else if (strcmp(optarg, "steady") == 0)
                o.verdict_last = 0;
            else {
                np_errorf("--verdict: '%s' is not steady or last", optarg);
                return 2;
            }
            break;
        case OPT_GROUP: o.group = 1; break;
        case OPT_SLURM: slurm = 1; break;
        case OPT_SYSTEM:
            if (!parse_copy("--system", optarg, o.given.system, sizeof o.given.system))
                return 2;
            break;
        case OPT_TASK: {
            enum np_task t;
            if (np_task_parse(optarg, &t) != 0) {
                np_errorf("--task %s: expected pretrain, sft or lora", optarg);
                return 2;
            }
            snprintf(o.given.task, sizeof o.given.task, "%s", np_task_name(t));
            break;
        }
        case OPT_NO_PROGRESS: no_progress = 1; break;
        case OPT_NCCL: nccl = 1; break;
        case OPT_STRICT: nccl = strict = 1; break;
        case 'q': quiet = 1; break;
        case 'h': parse_usage(stdout); return np_stdout_check();
        case OPT_PLOT:
            if (np_plot_kind_of(optarg) == NP_PLOT_NONE) {
                np_errorf("--plot: '%s': the file name must end in .svg, .png or .pdf", optarg);
                return 2;
            }
            plot = optarg;
            break;
        case 'V': printf("nemoperf-parse %s\n", NP_VERSION); return np_stdout_check();
        case OPT_STORE: store = 1; break;
        case OPT_HISTORY: history = 1; break;
        case OPT_COMPARE: compare = 1; break;
        case OPT_DB:
            if (!*optarg) {
                np_errorf("--db: the location is empty");
                return 2;
            }
            db = optarg;
            break;
        case OPT_CLUSTER:
            if (!*optarg || strlen(optarg) >= 64) {
                np_errorf("--cluster: '%s' is empty or longer than 63 characters", optarg);
                return 2;
            }
            cluster = optarg;
            break;
        case OPT_MIN_EFFECT:
            if (!parse_double_arg("--min-effect", optarg, 0, 100, &d))
                return 2;
            min_effect = d;
            break;
        case ':': np_errorf("option '%s' needs an argument; see --help", argv[optind - 1]); return 2;
        default: np_opt_unknown(argv[optind - 1], parse_options); return 2;
        }
    }
    if (o.group && fmt == NP_FMT_MARKDOWN) {
        np_errorf("--group: not with --format markdown (the published tables show one run per column)");
        return 2;
    }
    if (store + history + compare > 1) {
        np_errorf("--store, --history and --compare: one at a time");
        return 2;
    }
    if (compare && argc - optind != 2) {
        np_errorf("--compare: expected BASELINE CANDIDATE (each a folder of runs or db:SELECTOR), got %d argument%s",
                  argc - optind, argc - optind == 1 ? "" : "s");
        return 2;
    }
    if ((compare && (plot || o.group || slurm || nccl)) || (history && (o.group || slurm || nccl))) {
        np_errorf("--%s: not with --plot, --group, --slurm or --nccl", compare ? "compare" : "history");
        return 2;
    }
    if (history)
        return parse_history(argv + optind, (size_t)(argc - optind), &o, db, (enum np_format)fmt, min_effect, plot);
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

    if (plot) { /* a folder the picture cannot be written into: said before any report is printed */
        const char *slash = strrchr(plot, '/');
        char dir[4096];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - plot) + (slash == plot) : 1, slash ? plot : ".");
        if (access(dir, W_OK | X_OK) != 0) {
            np_errorf("--plot %s: cannot write into %s: %s", plot, dir, strerror(errno));
            return 2;
        }
    }
    char *dot[] = {(char *)".", NULL};
    char *const *paths = optind < argc ? argv + optind : dot;
    size_t npaths = optind < argc ? (size_t)(argc - optind) : 1;
    if (parse_mbridge_data(&o) != 0)
        return 2;

    struct np_backend be = {0};
    if (slurm) { /* a bad scheduler setting is a usage error, found before anything is read */
        int brc = parse_backend(&be);
        if (brc)
            return brc;
    }
    struct np_error err;
    struct np_recipe_set recipes;
    if (np_recipe_set_load_default(&recipes, &err) != NP_OK) {
        np_error_print(&err);
        np_backend_free(&be);
        return 1;
    }
    struct np_ref_table ref = {0};
    if (o.reference && np_ref_load_default(&ref, &err) != NP_OK) {
        np_error_print(&err);
        np_recipe_set_free(&recipes);
        np_backend_free(&be);
        return 1;
    }
    if (compare) {
        int rc = parse_compare(argv + optind, &o, &recipes, &ref, db, (enum np_format)fmt, min_effect, quiet);
        np_ref_free(&ref);
        np_recipe_set_free(&recipes);
        np_backend_free(&be);
        return rc;
    }
    struct parse_store ps;
    memset(&ps, 0, sizeof ps);
    ps.ctx.cluster = cluster;
    if (store) {
        int orc = parse_open_store(db, &ps.s);
        if (!orc && np_store_begin(ps.s, &ps.err) != NP_OK) {
            np_error_print(&ps.err);
            orc = 1;
        }
        if (orc) {
            np_store_close(ps.s);
            np_ref_free(&ref);
            np_recipe_set_free(&recipes);
            np_backend_free(&be);
            return orc;
        }
        o.keep_samples = 1;
    }
    /* a pipe or file gets large writes; a terminal sees output as it comes */
    static char obuf[1 << 18];
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    /* one rule for every format: a control byte of a folder name or log line never reaches the terminal or a
     * file raw ('?' in the table, markdown and CSV; its \u escape in JSON: util/text.c) */
    FILE *out = np_text_out_stream(stdout, fmt == NP_FMT_JSON);
    if (!out) {
        np_errorf("cannot set up standard output: %s", strerror(errno));
        np_ref_free(&ref);
        np_recipe_set_free(&recipes);
        np_backend_free(&be);
        return 1;
    }
    if (!slurm && !o.group && !plot && !nccl) {
        int rc = parse_stream(out, paths, npaths, &o, &recipes, &ref, (enum np_format)fmt, quiet,
                              store ? &ps : NULL);
        rc = parse_store_end(&ps, rc, quiet);
        rc = parse_close_out(out, rc);
        np_ref_free(&ref);
        np_recipe_set_free(&recipes);
        np_backend_free(&be);
        return rc;
    }
    /* --slurm, --group, --plot and --nccl work on every run at once (memory grows with the runs) */
    struct np_parse_result res;
    enum np_status st = np_parse_paths(paths, npaths, &o, &recipes, &ref, &res);
    int rc = 0;
    if (st != NP_OK) {
        np_errorf("%s", np_strerror(st));
        rc = 1;
    } else {
        if (!quiet)
            for (size_t i = 0; i < res.nerrors; i++)
                np_errorf("%s", res.errors[i]);
        if (res.nruns == 0) { /* a bad argument was said above: not "no log files" as well */
            if (res.nerrors == 0)
                parse_none_found(o.include, paths, npaths);
            rc = 1;
        }
        if (res.nerrors)
            rc = 1; /* a folder or file that could not be read: the report is not the whole truth */
        if (slurm) {
            enum np_status qs = np_runs_ask_slurm(&res, &be, &err);
            if (qs != NP_OK) {
                np_errorf("--slurm: cannot ask the scheduler: %s: %s", err.source, err.text);
                rc = 1;
            }
        }
        np_runs_scaling_efficiency(&res);
        for (size_t i = 0; store && i < res.nruns; i++)
            if (parse_store_run(&ps, &res.runs[i]) != NP_OK)
                break;
        for (size_t i = 0; i < res.nruns; i++)
            if (!np_run_status_good(res.runs[i].status) || res.runs[i].verdict == NP_VERDICT_FAIL ||
                res.runs[i].verdict == NP_VERDICT_FAST)
                rc = 1;
        struct np_diag *diags = NULL;
        if (nccl && res.nruns) { /* before the report: the findings go into the runs' notes */
            enum np_status ds = np_diag_runs(&res, &diags);
            if (ds != NP_OK) {
                np_errorf("--nccl: %s", np_strerror(ds));
                rc = 1;
            }
            for (size_t i = 0; diags && i < res.nruns; i++) {
                if (diags[i].error[0] && !quiet)
                    np_errorf("--nccl: %s", diags[i].error);
                if (strict && diags[i].nnet_warnings)
                    rc = 1;
            }
        }
        if (res.nruns || fmt == NP_FMT_JSON) {
            errno = 0;
            enum np_status w = diags ? np_diag_report_write(out, (enum np_format)fmt, &res, &o, diags)
                                     : np_report_write(out, (enum np_format)fmt, &res, &o);
            int e = errno;
            if (w == NP_E_IO && e) /* a full disk, a closed pipe: said as such */
                np_errorf("cannot write the report to standard output: %s", strerror(e));
            else if (w != NP_OK)
                np_errorf("writing the report: %s", np_strerror(w));
            if (w != NP_OK)
                rc = 1;
        }
        if (plot && res.nruns) {
            struct np_error perr;
            if ((diags ? np_diag_plot(plot, &res, diags, &perr)
                       : np_plot_write(plot, &res, o.reference ? &ref : NULL, NULL, &perr)) != NP_OK) {
                np_error_print(&perr);
                rc = 1;
            }
            np_plot_cleanup();
        }
        np_diag_free(diags, res.nruns);
    }
    rc = parse_store_end(&ps, rc, quiet);
    np_parse_result_free(&res);
    np_ref_free(&ref);
    np_recipe_set_free(&recipes);
    np_backend_free(&be);
    return parse_close_out(out, rc);
}
