/* runs.c - nemoperf-launch --runs: what was launched under a STAGE_PATH, with Slurm's word on each job.
 *
 * The records are the folders' nemoperf.json (found as --reconcile finds them); the states come from one
 * backend query for all recorded job ids (squeue -t all, or slurmrestd), so a job the controller has
 * forgotten (it ended longer ago than MinJobAge) has none.  Read-only: unsettled records are listed as
 * they are.  Table or JSON (share/nemoperf/schema/launch-runs.schema.json).
 */
#include "nemoperf/launch/runs.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "nemoperf/launch/manifest.h"
#include "nemoperf/launch/reconcile.h"
#include "nemoperf/util/diag.h"
#include "nemoperf/util/shell.h"

/* The listed fields of one run: borrowed from its manifest (m), NULL when absent. */
struct runs_row {
    const char *dir;
    json_t *m;           /* the manifest (owned), NULL when unreadable */
    const char *job_id, *record, *job_name, *submitted;
    const struct np_job_info *job; /* the scheduler's entry, NULL when not asked or unknown to it */
};

static const char *runs_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The JSON object of one row (keys of launch-runs.schema.json); NULL when out of memory. */
static json_t *runs_json(const struct runs_row *r, int asked)
{
    static const char *const row[] = {"recipe", "model_size", "dtype", "gpu_type", "gpus", "task", "workload"};
    json_t *o = json_object(), *cfg = r->m ? json_object_get(r->m, "config") : NULL;
    int bad = !o;
    bad = bad || json_object_set_new(o, "folder", json_string(r->dir));
    bad = bad || json_object_set_new(o, "job_id", r->job_id ? json_string(r->job_id) : json_null());
    bad = bad || json_object_set_new(o, "record", r->record ? json_string(r->record) : json_null());
    bad = bad || json_object_set_new(o, "slurm_state", r->job ? json_string(r->job->state) : json_null());
    bad = bad || json_object_set_new(o, "reason", r->job && r->job->reason ? json_string(r->job->reason) : json_null());
    bad = bad || json_object_set_new(o, "slurm_known", !asked || !r->job_id ? json_null() : json_boolean(r->job != NULL));
    bad = bad || json_object_set_new(o, "submit_time", r->submitted ? json_string(r->submitted) : json_null());
    bad = bad || json_object_set_new(o, "job_name", r->job_name ? json_string(r->job_name) : json_null());
    for (size_t k = 0; !bad && k < sizeof row / sizeof row[0]; k++) {
        json_t *v = cfg ? json_object_get(cfg, row[k]) : NULL;
        bad = json_object_set(o, row[k], v && (json_is_string(v) || json_is_integer(v)) ? v : json_null());
    }
    json_t *be = r->m ? json_object_get(r->m, "backend") : NULL, *rep = r->m ? json_object_get(r->m, "repeat") : NULL;
    bad = bad || json_object_set(o, "backend", json_is_string(be) ? be : json_null());
    bad = bad || json_object_set(o, "repeat", json_is_object(rep) ? rep : json_null());
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The SLURM_STATE cell: the state with a pending or failure reason ("PENDING (Resources)"). */
static void runs_state_cell(const struct runs_row *r, int asked, char *st, size_t size)
{
    int why = r->job && r->job->reason && *r->job->reason && strcmp(r->job->reason, "None") != 0;
    if (r->job)
        snprintf(st, size, "%s%s%.40s%s", r->job->state, why ? " (" : "", why ? r->job->reason : "", why ? ")" : "");
    else
        snprintf(st, size, "%s", asked && r->job_id ? "(forgotten)" : "-");
}

static void runs_table(const struct runs_row *rows, size_t n, int asked, FILE *out)
{
    size_t wn = 8, wid = 6, wst = 11;
    char st[80];
    for (size_t i = 0; i < n; i++) {
        runs_state_cell(&rows[i], asked, st, sizeof st);
        wst = strlen(st) > wst ? strlen(st) : wst;
        size_t l = rows[i].job_name ? strlen(rows[i].job_name) : 1;
        wn = l > wn ? l : wn;
        l = rows[i].job_id ? strlen(rows[i].job_id) : 1;
        wid = l > wid ? l : wid;
    }
    int forgotten = 0, unsettled = 0;
    fprintf(out, "%-*s  %-*s  %-13s  %-20s  %-*s  %-6s  %s\n", (int)wid, "JOB_ID", (int)wst, "SLURM_STATE", "RECORD",
            "SUBMITTED", (int)wn, "JOB_NAME", "REPEAT", "FOLDER");
    for (size_t i = 0; i < n; i++) {
        const struct runs_row *r = &rows[i];
        char rep[24] = "-";
        json_t *rp = r->m ? json_object_get(r->m, "repeat") : NULL;
        if (json_is_object(rp))
            snprintf(rep, sizeof rep, "%lld/%lld", (long long)json_integer_value(json_object_get(rp, "index")),
                     (long long)json_integer_value(json_object_get(rp, "of")));
        runs_state_cell(r, asked, st, sizeof st);
        forgotten |= !r->job && asked && r->job_id;
        if (r->record && strcmp(r->record, NP_STATE_SUBMITTED) != 0 && strcmp(r->record, NP_STATE_NOT_SUBMITTED) != 0)
            unsettled = 1;
        fprintf(out, "%-*s  %-*s  %-13s  %-20s  %-*s  %-6s  %s\n", (int)wid, r->job_id ? r->job_id : "-", (int)wst, st,
                r->record ? r->record : "(unreadable)", r->submitted ? r->submitted : "-", (int)wn,
                r->job_name ? r->job_name : "-", rep, r->dir);
    }
    fprintf(out, "%zu run%s\n", n, n == 1 ? "" : "s");
    if (forgotten)
        fprintf(out, "(forgotten): the controller no longer knows the job (it ended a while ago); nemoperf-parse "
                     "FOLDER reads how it went\n");
    if (unsettled)
        fprintf(out, "a record still submitting or unknown: nemoperf-launch --reconcile FOLDER settles it\n");
}

enum np_status np_launch_runs(char *const *paths, size_t n, struct np_backend *b, int json, FILE *out)
{
    struct np_error err;
    char **dirs = NULL;
    enum np_status st = np_reconcile_collect(paths, n, &dirs, &err);
    if (st != NP_OK) {
        np_error_print(&err);
        return st;
    }
    size_t nd = 0;
    while (dirs[nd])
        nd++;
    struct runs_row *rows = calloc(nd ? nd : 1, sizeof *rows);
    char **ids = calloc(nd + 1, sizeof *ids);
    if (!rows || !ids) {
        free(rows);
        free(ids);
        np_strv_free(dirs);
        np_errorf("out of memory");
        return NP_E_NOMEM;
    }
    enum np_status rc = NP_OK;
    size_t nids = 0;
    for (size_t i = 0; i < nd; i++) {
        struct runs_row *r = &rows[i];
        r->dir = dirs[i];
        if (np_manifest_load(dirs[i], &r->m, &err) != NP_OK) {
            np_error_print(&err);
            r->m = NULL;
            rc = NP_E_PARSE;
            continue;
        }
        json_t *cfg = json_object_get(r->m, "config");
        r->record = np_manifest_state(r->m);
        r->job_id = runs_str(r->m, "job_id");
        r->job_name = runs_str(cfg, "job_name");
        r->submitted = runs_str(r->m, "submit_time");
        if (r->job_id && *r->job_id)
            ids[nids++] = (char *)r->job_id;
        else
            r->job_id = NULL;
    }
    struct np_job_list jobs = {0};
    int asked = 0;
    if (nids && b && b->query) {
        if (b->query(b, ids, nids, &jobs, &err) == NP_OK)
            asked = 1;
        else {
            np_errorf("the job states could not be asked for (%s%s%s): listed without them", err.source,
                      err.source[0] ? ": " : "", err.text);
            rc = NP_E_SLURM;
        }
    }
    for (size_t i = 0; asked && i < nd; i++)
        for (size_t k = 0; rows[i].job_id && k < jobs.n; k++)
            if (strcmp(jobs.jobs[k].job_id, rows[i].job_id) == 0)
                rows[i].job = &jobs.jobs[k];
    if (json) {
        json_t *arr = json_array();
        int bad = !arr;
        for (size_t i = 0; !bad && i < nd; i++)
            bad = json_array_append_new(arr, runs_json(&rows[i], asked)) != 0;
        char *text = bad ? NULL : json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(arr);
        if (text)
            fprintf(out, "%s\n", text);
        else {
            np_errorf("out of memory");
            rc = NP_E_NOMEM;
        }
        free(text);
    } else {
        runs_table(rows, nd, asked, out);
    }
    for (size_t i = 0; i < nd; i++)
        json_decref(rows[i].m);
    np_job_list_free(&jobs);
    free(rows);
    free(ids);
    np_strv_free(dirs);
    return rc;
}
