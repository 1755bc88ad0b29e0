/* family_nccltests.c - nccl-tests fabric checks as runs: the family row, the job's steps file, one step's analysis.
 *
 * A run folder whose manifest says "workload": "nccl-tests" (launch, RECIPE=nccl-tests) holds the job's
 * nccl-tests/steps.json (which binary ran on which hosts, and the output file of each step); parse/run.c makes
 * one run per step, and this file reads the step's output (parse/nccltests.h), takes the expected bus bandwidth
 * of its GPU type, scope and collective (model/fabric.h) and gives the verdict: PASS, or FAIL with why.
 */
#include "nemoperf/model/fabric.h"
#include "nemoperf/parse/family.h"
#include "nemoperf/parse/nccltests.h"
#include "nemoperf/util/fileio.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCCLT_STEPS_MAX 4096 /* a check of 64 nodes, all pairs, five collectives is 10,400: the file is bounded */

static int ncclt_claims(const struct np_identity *id, const struct np_parse_opts *o)
{
    (void)o;
    return id->kind == NP_KIND_NCCLTESTS || strcmp(id->family, NP_NCCLT_FAMILY) == 0;
}

/* ---- the steps file ---- */

void np_ncclt_steps_free(struct np_ncclt_steps *s)
{
    if (!s)
        return;
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static void ncclt_lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* a step's text field: absent is "", another type is an error */
static int ncclt_str(json_t *o, const char *key, char *dst, size_t sz, const char **bad)
{
    json_t *v = json_object_get(o, key);
    dst[0] = '\0';
    if (!v || json_is_null(v))
        return 1;
    if (!json_is_string(v)) {
        *bad = key;
        return 0;
    }
    snprintf(dst, sz, "%s", json_string_value(v));
    return 1;
}

static int ncclt_step(json_t *o, struct np_ncclt_step_info *s, int gpn, const char **bad)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o)) {
        *bad = "steps[]";
        return 0;
    }
    if (!ncclt_str(o, "name", s->name, sizeof s->name, bad) || !ncclt_str(o, "binary", s->binary, sizeof s->binary, bad) ||
        !ncclt_str(o, "collective", s->collective, sizeof s->collective, bad) ||
        !ncclt_str(o, "scope", s->scope, sizeof s->scope, bad) || !ncclt_str(o, "file", s->file, sizeof s->file, bad))
        return 0;
    if (!s->name[0]) {
        *bad = "name";
        return 0;
    }
    /* the output file: inside the run folder, as the job writes it */
    if (!s->file[0] || s->file[0] == '/' || strstr(s->file, "..")) {
        *bad = "file";
        return 0;
    }
    if (strcmp(s->scope, "intra") != 0 && strcmp(s->scope, "inter") != 0 && strcmp(s->scope, "all") != 0) {
        *bad = "scope";
        return 0;
    }
    if (!s->collective[0]) { /* "all_reduce_perf" -> "all_reduce" */
        snprintf(s->collective, sizeof s->collective, "%.23s", s->binary);
        char *p = strstr(s->collective, "_perf");
        if (p)
            *p = '\0';
    }
    json_t *g = json_object_get(o, "gpus_per_node");
    if (g && !json_is_null(g) && (!json_is_integer(g) || json_integer_value(g) <= 0 || json_integer_value(g) > 1024)) {
        *bad = "gpus_per_node";
        return 0;
    }
    s->gpus_per_node = json_is_integer(g) ? (int)json_integer_value(g) : gpn;
    json_t *nodes = json_object_get(o, "nodes");
    if (nodes && !json_is_null(nodes) && !json_is_array(nodes)) {
        *bad = "nodes";
        return 0;
    }
    size_t i;
    json_t *h;
    json_array_foreach(nodes, i, h)
    {
        if (!json_is_string(h)) {
            *bad = "nodes[]";
            return 0;
        }
        size_t l = strlen(s->hosts);
        if (l + 2 < sizeof s->hosts)
            snprintf(s->hosts + l, sizeof s->hosts - l, "%s%s", l ? "," : "", json_string_value(h));
        s->nnodes++;
    }
    return 1;
}

enum np_status np_ncclt_steps_read(const char *manifest, struct np_ncclt_steps *out, struct np_error *err)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    int io = 0;
    json_t *m = np_file_load_json(manifest, JSON_REJECT_DUPLICATES, &je, &io, err);
    if (!m)
        return io ? NP_E_IO : np_error_set(err, NP_E_PARSE, manifest, je.line, je.column, "%s", je.text);
    json_t *nt = json_object_get(m, "nccl_tests");
    json_t *cfg = json_object_get(m, "config");
    json_t *gt = json_object_get(json_is_object(cfg) ? cfg : m, "gpu_type");
    if (json_is_string(gt))
        snprintf(out->gpu_type, sizeof out->gpu_type, "%s", json_string_value(gt));
    char file[4096];
    const char *slash = strrchr(manifest, '/');
    int dl = slash ? (int)(slash - manifest) : 1;
    const char *dir = slash ? manifest : ".";
    json_t *sf = json_object_get(nt, "steps_file");
    const char *rel = json_is_string(sf) ? json_string_value(sf) : NP_NCCLT_STEPS_DEFAULT;
    if (rel[0] == '/' || strstr(rel, "..")) {
        json_decref(m);
        return np_error_set(err, NP_E_PARSE, manifest, 0, 0,
                            "nccl_tests.steps_file \"%.200s\": expected a path inside the run folder", rel);
    }
    json_t *doc = NULL, *steps = json_object_get(nt, "steps");
    const char *src = manifest;
    if (!json_is_array(steps)) { /* the job's file */
        snprintf(file, sizeof file, "%.*s/%s", dl, dir, rel);
        src = file;
        doc = np_file_load_json(file, JSON_REJECT_DUPLICATES, &je, &io, err);
        if (!doc) {
            json_decref(m);
            if (io && access(file, F_OK) != 0)
                return np_error_set(err, NP_E_NOTFOUND, file, 0, 0, "not written: the job has not started its steps");
            return io ? NP_E_IO : np_error_set(err, NP_E_PARSE, file, je.line, je.column, "%s", je.text);
        }
        steps = json_object_get(doc, "steps");
        json_t *g2 = json_object_get(doc, "gpu_type");
        if (json_is_string(g2))
            snprintf(out->gpu_type, sizeof out->gpu_type, "%s", json_string_value(g2));
    }
    ncclt_lower(out->gpu_type);
    json_t *gp = json_object_get(doc ? doc : nt, "gpus_per_node");
    int gpn = json_is_integer(gp) && json_integer_value(gp) > 0 && json_integer_value(gp) <= 1024
                  ? (int)json_integer_value(gp) : 0;
    enum np_status st = NP_OK;
    if (!json_is_array(steps)) {
        st = np_error_set(err, NP_E_PARSE, src, 0, 0, "field \"steps\": expected an array of the steps run");
    } else if (json_array_size(steps) > NCCLT_STEPS_MAX) {
        st = np_error_set(err, NP_E_PARSE, src, 0, 0, "field \"steps\": %zu steps, more than %d",
                          json_array_size(steps), NCCLT_STEPS_MAX);
    } else if (json_array_size(steps) && !(out->v = calloc(json_array_size(steps), sizeof *out->v))) {
        st = np_error_set(err, NP_E_NOMEM, src, 0, 0, "out of memory");
    } else {
        size_t i;
        json_t *o;
        json_array_foreach(steps, i, o)
        {
            const char *bad = NULL;
            if (!ncclt_step(o, &out->v[out->n], gpn, &bad)) {
                st = np_error_set(err, NP_E_PARSE, src, 0, 0, "steps[%zu]: field \"%s\" is not what the job writes",
                                  i, bad);
                break;
            }
            out->n++;
        }
    }
    json_decref(doc);
    json_decref(m);
    if (st != NP_OK)
        np_ncclt_steps_free(out);
    return st;
}

void np_ncclt_run_step(struct np_run *run, const struct np_ncclt_step_info *s, const char *gpu_type)
{
    struct np_run_nccl *n = &run->nccl;
    snprintf(n->step, sizeof n->step, "%s", s->name);
    snprintf(n->collective, sizeof n->collective, "%s", s->collective);
    snprintf(n->scope, sizeof n->scope, "%s", s->scope);
    snprintf(n->hosts, sizeof n->hosts, "%s", s->hosts);
    n->gpus_per_node = s->gpus_per_node;
    struct np_identity *id = &run->id;
    id->kind = NP_KIND_NCCLTESTS;
    snprintf(id->family, sizeof id->family, "%s", NP_NCCLT_FAMILY);
    if (!id->recipe[0])
        snprintf(id->recipe, sizeof id->recipe, "%s", NP_NCCLT_FAMILY);
    /* the configuration a step is compared within: the step (binary and hosts) at its scale */
    snprintf(id->model_size, sizeof id->model_size, "%s", s->name);
    if (gpu_type && gpu_type[0] && !id->gpu_type[0])
        snprintf(id->gpu_type, sizeof id->gpu_type, "%s", gpu_type);
    if (s->gpus_per_node > 0 && s->nnodes > 0)
        id->gpus = s->gpus_per_node * s->nnodes;
}

/* ---- the expected bandwidth table, loaded once ---- */

static pthread_once_t ncclt_once = PTHREAD_ONCE_INIT;
static struct np_fabric_table *ncclt_table;
static struct np_error ncclt_table_err;

static void ncclt_table_load(void)
{
    if (np_fabric_table_load(NULL, &ncclt_table, &ncclt_table_err) != NP_OK)
        ncclt_table = NULL;
}

/* ---- one step ---- */

static void ncclt_status(struct np_run *run, enum np_run_status st, const char *why)
{
    run->status = st;
    np_run_set_why(run, why);
}

static void ncclt_analyse(struct np_run *run, const struct np_scan_result *scan, const struct np_parse_opts *o)
{
    (void)scan;
    struct np_run_nccl *n = &run->nccl;
    n->peak_busbw = n->avg_busbw = n->expected_gbs = NAN;
    n->out_of_bounds = -1;
    n->verdict = NP_NCCL_NONE;
    run->verdict = NP_VERDICT_NOT_COMPARED;
    run->id.kind = NP_KIND_NCCLTESTS;
    if (!n->step[0]) { /* the run folder before its steps: parse/run.c says what launch recorded */
        snprintf(run->ref_why, sizeof run->ref_why, "no step of the check has run");
        return;
    }
    struct np_nccl_result r;
    struct np_error err = {0};
    char why[400];
    enum np_status st = np_nccltests_read(run->path, &r, &err);
    if (st != NP_OK) {
        np_nccl_result_free(&r);
        snprintf(why, sizeof why, "step %s: no output (%.200s): the job ended before it ran, or it could not start",
                 n->step, err.text);
        ncclt_status(run, NP_RUN_NO_LOG, why);
        snprintf(run->ref_why, sizeof run->ref_why, "no output");
        return;
    }
    n->nranks = r.nranks;
    n->avg_busbw = r.avg_busbw;
    n->wrong = r.wrong_total;
    n->out_of_bounds = r.out_of_bounds;
    n->peak_busbw = r.peak_busbw;
    n->peak_size = r.peak_index >= 0 ? r.rows[r.peak_index].size : -1;
    if (!run->id.gpus && r.nranks > 0)
        run->id.gpus = r.nranks;
    for (int i = 0; i < r.nnotes; i++)
        np_run_add_note(run, r.notes[i]);
    /* the expectation: the GPU type launch recorded, else the device name the output prints */
    const char *gpu = run->id.gpu_type[0] ? run->id.gpu_type : r.gpu;
    struct np_fabric_expectation e = {.gbs = NAN};
    pthread_once(&ncclt_once, ncclt_table_load);
    if (!ncclt_table) {
        char msg[1200];
        np_error_format(&ncclt_table_err, msg, sizeof msg);
        snprintf(why, sizeof why, "no expected bandwidth: %.300s", msg);
        np_run_add_note(run, why);
    } else if (np_fabric_expect(ncclt_table, gpu, n->scope, n->collective, n->gpus_per_node, &e, &err) != NP_OK) {
        snprintf(why, sizeof why, "no expected bandwidth: %.300s", err.text);
        np_run_add_note(run, why);
    } else {
        n->expected_gbs = e.gbs;
        if (!run->id.gpu_type[0]) /* an output read without launch's record: the table's name of its device */
            snprintf(run->id.gpu_type, sizeof run->id.gpu_type, "%.15s", e.gpu);
        /* the shipped table by its name, the user's by its path */
        const char *tb = getenv("NEMOPERF_FABRIC_TABLE");
        snprintf(why, sizeof why, "expected %.1f GB/s: %s %.0f GB/s x %.2f (%.200s)", e.gbs, e.link,
                 e.nominal_gbs, e.fraction, tb && *tb ? e.table : "fabric.tsv");
        np_run_add_note(run, why);
    }
    n->verdict = np_nccl_verdict(&r, n->expected_gbs, n->why, sizeof n->why);
    run->verdict = n->verdict == NP_NCCL_PASS ? NP_VERDICT_PASS
                   : n->verdict == NP_NCCL_FAIL ? NP_VERDICT_FAIL : NP_VERDICT_NOT_COMPARED;
    snprintf(run->ref_why, sizeof run->ref_why, "%s", n->why);
    if (r.nrows == 0) {
        snprintf(why, sizeof why, "step %s: no result row in its output%s%s", n->step, r.nnotes ? ": " : "",
                 r.nnotes ? r.notes[r.nnotes - 1] : "");
        ncclt_status(run, NP_RUN_FAILED, why);
    } else if (isnan(r.avg_busbw) && r.out_of_bounds < 0) {
        snprintf(why, sizeof why, "step %s: its output ends before the summary (%zu sizes read)", n->step, r.nrows);
        ncclt_status(run, NP_RUN_INCOMPLETE, why);
    } else {
        run->status = NP_RUN_OK;
    }
    (void)o;
    np_nccl_result_free(&r);
}

const struct np_run_family np_family_nccltests = {NP_NCCLT_FAMILY, "nccl-tests", 5.0, ncclt_claims, ncclt_analyse};
