/* drift.c - how a run differs from NVIDIA's published row and settings (nemoperf-parse --nccl).
 *
 * The manifest nemoperf-launch wrote (config: tp, pp, cp, ep, vp, mbs, gbs, gpus, gpus_per_node,
 * image, profile, nccltrace, workload) is compared field by field with the published row the run
 * resolved to and its recipe (container image); the log adds the global batch size its steps
 * print and NCCL's largest communicator; the job's vboost.out/vboost.err (NeMo jobs, script.c's
 * vboost step) add a failed vboost; the manifest's "env_user" the variables the user had set to
 * another value than the job exported.  A FAIL then comes with its likely causes.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nemoperf/parse/drift.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/runfiles.h"

static void drift_add(struct np_drift *d, const char *what, const char *pub, const char *run)
{
    if (d->n >= NP_DRIFT_MAX)
        return;
    struct np_drift_item *it = &d->item[d->n++];
    snprintf(it->what, sizeof it->what, "%s", what);
    snprintf(it->published, sizeof it->published, "%s", pub);
    snprintf(it->run, sizeof it->run, "%s", run);
}

static void drift_int(struct np_drift *d, const char *what, int pub, json_t *cfg, const char *key)
{
    json_t *v = json_object_get(cfg, key);
    if (!json_is_integer(v) || pub <= 0)
        return;
    long long got = json_integer_value(v);
    if (got == pub)
        return;
    char a[24], b[24];
    snprintf(a, sizeof a, "%d", pub);
    snprintf(b, sizeof b, "%lld", got);
    drift_add(d, what, a, b);
}

/* The nearest nemoperf.json at or above dir (3 levels: log folder, experiment, timestamp folder); regular
 * files only (a FIFO named so would block --nccl). */
static json_t *drift_manifest(const char *dir)
{
    char p[4096];
    if (!dir || strlen(dir) + 32 > sizeof p)
        return NULL;
    snprintf(p, sizeof p, "%s", dir);
    for (int up = 0; up < 3; up++) {
        size_t len = strlen(p);
        snprintf(p + len, sizeof p - len, "/" NP_RUNFILE_MANIFEST);
        json_error_t je;
        struct np_error ferr;
        int io;
        json_t *j = np_file_load_json(p, 0, &je, &io, &ferr);
        p[len] = '\0';
        if (j)
            return j;
        char *slash = strrchr(p, '/');
        if (!slash || slash == p)
            break;
        *slash = '\0';
    }
    return NULL;
}

/* The job's vboost step output (NeMo jobs): a failure, or "" when it worked or did not run. */
static void drift_vboost(const char *dir, char *why, size_t size)
{
    static const char *const names[] = {NP_RUNFILE_VBOOST_ERR, NP_RUNFILE_VBOOST_OUT};
    why[0] = '\0';
    for (size_t i = 0; i < 2 && !why[0]; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        struct np_error ferr;
        int fd;
        enum np_status st = np_file_open_regular(AT_FDCWD, p, &fd, &ferr);
        if (st == NP_E_INVALID) /* a FIFO: not read, said */
            snprintf(why, size, "%s: %.120s", names[i], ferr.text);
        if (st != NP_OK)
            continue;
        FILE *f = fdopen(fd, "r");
        if (!f) {
            close(fd);
            continue;
        }
        char line[512];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (strstr(line, "failed") || strstr(line, "not permitted") || strstr(line, "sudo:") ||
                strstr(line, "Unable") || strstr(line, "not supported") || strstr(line, "command not found")) {
                snprintf(why, size, "%s: %.120s", names[i], line);
                break;
            }
        }
        fclose(f);
    }
}

/* The manifest's "env_user" (launch/manifest.c; absent in older manifests): a variable the user set to
 * one value and the job's script exported with another.  A credential's name comes without values. */
static void drift_env(struct np_drift *d, json_t *m)
{
    json_t *a = json_object_get(m, "env_user"), *e;
    size_t i;
    if (!json_is_array(a))
        return;
    json_array_foreach(a, i, e) {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!name)
            continue;
        const char *user = json_string_value(json_object_get(e, "user"));
        const char *job = json_string_value(json_object_get(e, "job"));
        char what[48], run[160];
        snprintf(what, sizeof what, "env %s", name);
        if (json_is_true(json_object_get(e, "secret")) || np_env_secret_name(name))
            drift_add(d, what, "", "set by the user to another value (a credential's name: no values kept)");
        else {
            snprintf(run, sizeof run, "%.60s set by the user, the job's script exported %s over it",
                     user ? user : "(not UTF-8)", job ? "the recipe's value" : "another value");
            drift_add(d, what, job ? job : "", run);
        }
    }
}

size_t np_drift_find(const struct np_run *r, long logged_gbs, int nccl_world, struct np_drift *d)
{
    memset(d, 0, sizeof *d);
    const struct np_config_row *row = r->row;
    json_t *m = drift_manifest(r->dir);
    json_t *cfg = m ? json_object_get(m, "config") : NULL;
    d->manifest = m != NULL;
    if (row && json_is_object(cfg)) {
        drift_int(d, "GPUs", row->gpus, cfg, "gpus");
        drift_int(d, "TP", row->tp, cfg, "tp");
        drift_int(d, "PP", row->pp, cfg, "pp");
        drift_int(d, "CP", row->cp, cfg, "cp");
        drift_int(d, "EP", row->ep, cfg, "ep");
        drift_int(d, "VP", row->vp, cfg, "vp");
        drift_int(d, "MBS", row->mbs, cfg, "mbs");
        drift_int(d, "GBS", row->gbs, cfg, "gbs");
        drift_int(d, "GPUs per node", row->gpus_per_node, cfg, "gpus_per_node");
    }
    json_t *img = cfg ? json_object_get(cfg, "image") : NULL;
    if (r->recipe && r->recipe->image && json_is_string(img) && strcmp(json_string_value(img), r->recipe->image))
        drift_add(d, "container", r->recipe->image, json_string_value(img));
    char buf[160];
    if (row && logged_gbs > 0 && logged_gbs != row->gbs) {
        char a[24];
        snprintf(a, sizeof a, "%d", row->gbs);
        snprintf(buf, sizeof buf, "%ld (the log's global_batch_size)", logged_gbs);
        drift_add(d, "GBS", a, buf);
    }
    if (row && nccl_world > row->gpus) {
        char a[24];
        snprintf(a, sizeof a, "%d", row->gpus);
        snprintf(buf, sizeof buf, "%d (NCCL's largest communicator)", nccl_world);
        drift_add(d, "GPUs", a, buf);
    }
    if (r->id.synthetic)
        drift_add(d, "kind", "benchmark", "synthetic workload (no GPU)");
    else if (strcmp(r->id.variant, "nsys") == 0)
        drift_add(d, "kind", "benchmark", "Nsight profile run (its overhead makes it no benchmark)");
    else if (strcmp(r->id.variant, "nccltrace") == 0)
        drift_add(d, "kind", "benchmark", "NCCL trace run (its logging makes it no benchmark)");
    drift_env(d, m);
    if (r->dir) {
        drift_vboost(r->dir, buf, sizeof buf);
        if (buf[0])
            drift_add(d, "vboost", "vboost 1 (nvidia-smi boost-slider)", buf);
    }
    json_decref(m);
    return d->n;
}

void np_drift_text(const struct np_drift *d, char *buf, size_t size)
{
    size_t len = 0;
    if (!size)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < d->n; i++) {
        const struct np_drift_item *it = &d->item[i];
        int k = it->published[0] ? snprintf(buf + len, size - len, "%s%s %s (published %s)", i ? "; " : "", it->what,
                                            it->run, it->published)
                                 : snprintf(buf + len, size - len, "%s%s %s", i ? "; " : "", it->what, it->run);
        if (k < 0 || (size_t)k >= size - len)
            break;
        len += (size_t)k;
    }
}
