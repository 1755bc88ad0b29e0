/* preflight.c - can each job of a launch ever run where it is sent?  Checked before anything is written.
 *
 * CLI: `sbatch --test-only` per job; when Slurm says never, the partition's limits from
 * `scontrol show partition -o` name the one exceeded.  REST: the partition's node/GPU limits from
 * GET partitions, and the user the jobs run as must be able to write the folders created here.
 * When a check cannot be made (no answer), a warning says so and the launch goes on.
 */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nemoperf/util/diag.h"
#include "nemoperf/launch/nodes.h"
#include "nemoperf/launch/preflight.h"
#include "nemoperf/launch/script.h"
#include "nemoperf/slurm/rest.h"

/* gres/gpu count in a TRES string ("cpu=64,mem=16000M,node=4,gres/gpu=32"), -1 when absent. */
static long preflight_tres_gpus(const char *tres)
{
    if (!tres)
        return -1;
    const char *p = strstr(tres, "gres/gpu=");
    if (!p)
        p = strstr(tres, "gres/gpu:");
    if (!p)
        return -1;
    p = strchr(p, '=');
    if (!p)
        return -1;
    char *end;
    long v = strtol(p + 1, &end, 10);
    return end == p + 1 || v < 0 ? -1 : v;
}

static void preflight_reset(struct np_partition *p)
{
    memset(p, 0, sizeof *p);
    p->total_nodes = p->max_nodes_per_job = p->total_gpus = -1;
}

/* Value of "Key=" in one `scontrol -o` line, copied into buf (up to the next space). */
static const char *preflight_kv(const char *line, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += kl) {
        if ((p == line || p[-1] == ' ') && p[kl] == '=') {
            const char *v = p + kl + 1, *e = strpbrk(v, " \n");
            size_t n = e ? (size_t)(e - v) : strlen(v);
            snprintf(buf, size, "%.*s", (int)(n < size ? n : size - 1), v);
            return buf;
        }
    }
    return NULL;
}

int np_partition_from_scontrol(const char *text, const char *name, struct np_partition *out)
{
    int found = 0, lines = 0;
    struct np_partition only;
    preflight_reset(out);
    preflight_reset(&only);
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        char *l = strndup(line, n), v[1024];
        line = nl ? nl + 1 : line + n;
        if (!l)
            return 0;
        struct np_partition p;
        preflight_reset(&p);
        if (preflight_kv(l, "PartitionName", v, sizeof v)) {
            snprintf(p.name, sizeof p.name, "%.63s", v);
            p.is_default = preflight_kv(l, "Default", v, sizeof v) && strcmp(v, "YES") == 0;
            if (preflight_kv(l, "TotalNodes", v, sizeof v))
                p.total_nodes = strtol(v, NULL, 10);
            if (preflight_kv(l, "MaxNodes", v, sizeof v) && strcmp(v, "UNLIMITED") != 0)
                p.max_nodes_per_job = strtol(v, NULL, 10);
            if (preflight_kv(l, "TRES", v, sizeof v))
                p.total_gpus = preflight_tres_gpus(v);
            lines++;
            only = p;
            if ((name && *name) ? strcmp(p.name, name) == 0 : p.is_default) {
                *out = p;
                found = 1;
            }
        }
        free(l);
        if (found)
            break;
    }
    if (!found && !(name && *name) && lines == 1) {
        *out = only;
        found = 1;
    }
    return found;
}

/* A count in either form: 4, or {"set":true,"infinite":false,"number":4}; -1 unknown/unlimited. */
static long preflight_jcount(const json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v) < 0 ? -1 : (long)json_integer_value(v);
    if (json_is_object(v)) {
        if (json_is_true(json_object_get(v, "infinite")) || json_is_false(json_object_get(v, "set")))
            return -1;
        return preflight_jcount(json_object_get(v, "number"));
    }
    return -1;
}

static int preflight_has_flag(const json_t *arr, const char *flag)
{
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e) {
        const char *s = json_string_value(e);
        if (s && strcasecmp(s, flag) == 0)
            return 1;
    }
    return 0;
}

enum np_status np_partition_from_rest(long http, const char *body, size_t len, const char *name,
                                      struct np_partition *out, struct np_error *err)
{
    preflight_reset(out);
    json_error_t je;
    json_t *j = body && len ? json_loadb(body, len, 0, &je) : NULL;
    const json_t *parts = json_object_get(j, "partitions");
    if (http >= 400 || !json_is_array(parts)) {
        char *t = np_rest_errors_text(j);
        np_error_set(err, http >= 400 ? NP_E_SLURM : NP_E_PARSE, "GET partitions", 0, 0, "HTTP %ld: %s", http,
                     t ? t : "no \"partitions\" array in the reply");
        free(t);
        json_decref(j);
        return http >= 400 ? NP_E_SLURM : NP_E_PARSE;
    }
    char names[300] = "";
    size_t i;
    const json_t *p;
    int found = 0;
    json_array_foreach(parts, i, p) {
        const char *pn = json_string_value(json_object_get(p, "name"));
        if (!pn)
            continue;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", pn);
        const json_t *inner = json_object_get(p, "partition"); /* v0.0.40+: {"state":[...]} */
        int is_default = preflight_has_flag(json_object_get(p, "flags"), "default") ||
                         preflight_has_flag(json_object_get(inner, "state"), "default") ||
                         json_is_true(json_object_get(p, "default"));
        if (!((name && *name) ? strcmp(pn, name) == 0 : (is_default || json_array_size(parts) == 1)))
            continue;
        snprintf(out->name, sizeof out->name, "%s", pn);
        out->is_default = is_default;
        const json_t *nodes = json_object_get(p, "nodes");
        out->total_nodes = json_is_object(nodes) ? preflight_jcount(json_object_get(nodes, "total"))
                                                 : preflight_jcount(json_object_get(p, "total_nodes"));
        const json_t *maxs = json_object_get(p, "maximums");
        out->max_nodes_per_job = json_is_object(maxs) ? preflight_jcount(json_object_get(maxs, "nodes"))
                                                      : preflight_jcount(json_object_get(p, "maximum_nodes_per_job"));
        const json_t *tres = json_object_get(p, "tres");
        out->total_gpus = preflight_tres_gpus(json_is_object(tres) ? json_string_value(json_object_get(tres, "configured"))
                                                                   : json_string_value(tres));
        found = 1;
        break;
    }
    json_decref(j);
    if (!found)
        return np_error_set(err, NP_E_NOTFOUND, "SBATCH_PARTITION", 0, 0, "%s: no such partition (the cluster has: %s)",
                            name && *name ? name : "(the default)", *names ? names : "none");
    return NP_OK;
}

const char *np_partition_misfit(const struct np_partition *p, const struct np_launch_config *c, char *buf,
                                size_t size)
{
    if (p->total_nodes >= 0 && c->nodes > p->total_nodes) {
        snprintf(buf, size, "needs %d nodes (%d GPUs, %d per node) but partition %s has %ld node%s in total",
                 c->nodes, c->gpus, c->gpus_per_node, p->name, p->total_nodes, p->total_nodes == 1 ? "" : "s");
        return buf;
    }
    if (p->max_nodes_per_job >= 0 && c->nodes > p->max_nodes_per_job) {
        snprintf(buf, size, "needs %d nodes but partition %s allows at most %ld per job (MaxNodes)", c->nodes,
                 p->name, p->max_nodes_per_job);
        return buf;
    }
    if (c->gres_gpus && p->total_gpus >= 0) {
        const char *colon = strrchr(c->gres_gpus, ':');
        long per = strtol(colon ? colon + 1 : c->gres_gpus, NULL, 10);
        if (per > 0 && per * c->nodes > p->total_gpus) {
            snprintf(buf, size, "needs %ld GPUs (%d nodes x SBATCH_GPUS_PER_NODE=%s) but partition %s has %ld (TRES gres/gpu)",
                     per * c->nodes, c->nodes, c->gres_gpus, p->name, p->total_gpus);
            return buf;
        }
    }
    return NULL;
}

static enum np_status preflight_refuse(const struct np_launch_config *c, const char *why, struct np_error *err)
{
    return np_error_set(err, NP_E_INVALID, "JOB_TOTAL_GPUS", 0, 0, "%d: job %s can never run: %s; nothing was submitted",
                        c->gpus, c->job_name, why);
}

/* s on one line: newlines and tabs as "; " and " ", at most size - 1 bytes. */
static void preflight_flat(char *dst, size_t size, const char *s)
{
    size_t n = 0;
    for (; s && *s && n + 3 < size; s++) {
        if (*s == '\n' || *s == '\r') {
            if (n && s[1] && s[1] != '\n' && s[1] != '\r') {
                dst[n++] = ';';
                dst[n++] = ' ';
            }
        } else
            dst[n++] = *s == '\t' ? ' ' : *s;
    }
    dst[n] = '\0';
}

/* the other SBATCH_* Slurm answers about by name (slurm_errno.h: "Invalid feature specification", "Invalid qos
 * specification", "Invalid wckey specification", "Requested reservation is invalid") */
static const struct {
    const char *word, *var;
} preflight_said_var[] = {{"feature", "SBATCH_CONSTRAINT"},
                          {"qos", "SBATCH_QOS"},
                          {"wckey", "SBATCH_WCKEY"},
                          {"reservation", "SBATCH_RESERVATION"}};

/* Does Slurm's refusal name a setting (partition, account, or one of preflight_said_var)? */
static int preflight_said_names_var(const char *said)
{
    if (strcasestr(said, "partition") || strcasestr(said, "account"))
        return 1;
    for (size_t i = 0; i < sizeof preflight_said_var / sizeof preflight_said_var[0]; i++)
        if (strcasestr(said, preflight_said_var[i].word))
            return 1;
    return 0;
}

/* Slurm refused the job for something a variable other than JOB_TOTAL_GPUS chose (sbatch's word names it):
 * that variable, with the partitions `scontrol show partition` lists as what is allowed. */
static enum np_status preflight_refuse_var(const struct np_launch_config *c, const char *said, const char *why,
                                           const char *parts, struct np_error *err)
{
    if (c->partition && strcasestr(said, "partition")) {
        char names[300] = "";
        size_t n = 0;
        for (const char *p = parts; p && (p = strstr(p, "PartitionName=")) && n + 2 < sizeof names;) {
            p += strlen("PartitionName=");
            size_t len = strcspn(p, " \n");
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%.*s", n ? ", " : "", (int)len, p);
        }
        return np_error_set(err, NP_E_INVALID, "", 0, 0,
                            "SBATCH_PARTITION=%s: job %s can never run: %s; nothing was submitted; allowed: %s",
                            c->partition,
                            c->job_name, why, names[0] ? names : "a partition of this cluster (sinfo -s)");
    }
    for (size_t i = 0; i < sizeof preflight_said_var / sizeof preflight_said_var[0]; i++) {
        const char *v = getenv(preflight_said_var[i].var);
        if (v && *v && strcasestr(said, preflight_said_var[i].word))
            return np_error_set(err, NP_E_INVALID, "", 0, 0,
                                "%s=%s: job %s can never run: %s; nothing was submitted; correct or unset %s",
                                preflight_said_var[i].var, v, c->job_name, why, preflight_said_var[i].var);
    }
    if (c->account && strcasestr(said, "account"))
        return np_error_set(err, NP_E_INVALID, "", 0, 0,
                            "SBATCH_ACCOUNT=%s: job %s can never run: %s; nothing was submitted; allowed: an account "
                            "you may use "
                            "(sacctmgr show assoc user=$USER)",
                            c->account, c->job_name, why);
    return preflight_refuse(c, why, err);
}

/* A job Slurm accepts but cannot start until nodes are back: say which, and that it is submitted anyway. */
static void preflight_warn_unavailable(const struct np_launch_config *c, const char *how, const char *said, int preview)
{
    np_warnf("job %s %s: %s; Slurm keeps it PENDING (ReqNodeNotAvail) until enough nodes are back%s%s%s", c->job_name,
             how, preview ? "a real launch submits it" : "submitting it anyway", said ? " (sbatch --test-only: " : "",
             said ? said : "", said ? ")" : "");
}

/* The CLI backend's nodes of partition pname, read once per partition for the launch's jobs. */
struct preflight_nodes_cache {
    char partition[64];
    int tried, ok;
    struct np_nodes nodes;
};

static enum np_nodes_fit preflight_cli_nodes(struct np_backend *be, struct preflight_nodes_cache *nc, const char *pname,
                                             const struct np_launch_config *c, char *buf, size_t size)
{
    if (!nc->tried || strcmp(nc->partition, pname) != 0) {
        np_nodes_free(&nc->nodes);
        snprintf(nc->partition, sizeof nc->partition, "%s", pname);
        char *text = NULL;
        struct np_error nerr;
        nc->tried = 1;
        nc->ok = np_slurm_cli_nodes(be, pname, &text, &nerr) == NP_OK && np_nodes_from_sinfo(text, &nc->nodes) == 0;
        free(text);
    }
    return nc->ok ? np_nodes_fit(&nc->nodes, pname, c, buf, size) : NP_NODES_FIT;
}

/* script without its "#SBATCH --segment=" line (a new string, NULL when out of memory or none there). */
static char *preflight_drop_segment(const char *script)
{
    const char *l = strstr(script, "\n#SBATCH --segment=");
    if (!l)
        return NULL;
    const char *end = strchr(l + 1, '\n');
    char *out = NULL;
    if (asprintf(&out, "%.*s%s", (int)(l - script), script, end ? end : "") < 0)
        return NULL;
    return out;
}

static enum np_status preflight_cli(struct np_backend *be, const struct np_launch_plan *plan, int quiet,
                                    struct np_error *err)
{
    char *parts = NULL;
    int parts_tried = 0;
    struct preflight_nodes_cache nc = {.tried = 0};
    enum np_status st = NP_OK;
    for (size_t i = 0; st == NP_OK && i < plan->n; i++) {
        const struct np_launch_config *c = &plan->jobs[i];
        char *script = NULL;
        if ((st = np_script_render(c, &script, err)) != NP_OK)
            break;
        char *msg = NULL;
        struct np_error terr;
        enum np_status t = np_slurm_cli_test_only_text(be, script, &msg, &terr);
        /* A Slurm whose sbatch does not know --segment (Megatron-Bridge's executor segments every job on 4-GPU
         * NVL72 nodes, NeMo's GB200 jobs beyond a rack) answers nothing about the rest: ask again without it,
         * so the node and GPU limits are still checked; the option itself is then why the job can never run. */
        char segment[64] = "";
        if (t == NP_E_SLURM && msg && strstr(msg, "unrecognized option '--segment")) {
            char *plain = preflight_drop_segment(script);
            const char *v = strstr(script, "\n#SBATCH --segment=");
            snprintf(segment, sizeof segment, "%.*s", v ? (int)strcspn(v + 1, "\n") : 0, v ? v + 1 : "");
            if (plain) {
                free(msg);
                msg = NULL;
                t = np_slurm_cli_test_only_text(be, plain, &msg, &terr);
                free(plain);
            }
        }
        free(script);
        if (t == NP_OK && segment[0]) /* GPU_TYPE: the 4-GPU NVL72 systems are what asks for segments */
            st = np_error_set(err, NP_E_INVALID, "GPU_TYPE", 0, 0,
                              "%s: job %s can never run: its %s (NVL72 racks: jobs placed within one segment) is "
                              "unknown to this cluster's sbatch (sbatch --test-only: unrecognized option "
                              "'--segment'); nothing was submitted",
                              c->gpu_type, c->job_name, segment);
        else if (t == NP_E_INVALID) {
            if (!parts_tried) {
                parts_tried = 1;
                struct np_error perr;
                np_slurm_cli_partitions(be, &parts, &perr);
            }
            struct np_partition p;
            char buf[400], why[1000], said[320], nodes[600];
            int found = parts && np_partition_from_scontrol(parts, c->partition, &p);
            const char *limit = found ? np_partition_misfit(&p, c, buf, sizeof buf) : NULL;
            preflight_flat(said, sizeof said, msg ? msg : terr.text);
            /* --test-only refuses a job whose nodes are DOWN or DRAINED although sbatch queues it (PENDING,
             * ReqNodeNotAvail): the partition's nodes tell that from a job that can never run */
            enum np_nodes_fit fit = found && !limit && !preflight_said_names_var(said)
                                        ? preflight_cli_nodes(be, &nc, p.name, c, nodes, sizeof nodes)
                                        : NP_NODES_FIT;
            if (fit == NP_NODES_UNAVAILABLE) {
                preflight_warn_unavailable(c, nodes, said, quiet);
                free(msg);
                continue;
            }
            if (fit == NP_NODES_NEVER)
                limit = nodes;
            snprintf(why, sizeof why, "%s (sbatch --test-only: %s)", limit ? limit : "Slurm refuses the request", said);
            st = limit ? preflight_refuse(c, why, err) : preflight_refuse_var(c, said, why, parts, err);
        } else if (t != NP_OK && !quiet) {
            np_warnf("%s: cannot check that the job can run (%s); submitting anyway", c->job_name, terr.text);
        }
        free(msg);
    }
    np_nodes_free(&nc.nodes);
    free(parts);
    return st;
}

/* The uid the REST jobs run as, or -1 when it cannot be told; who gets the user name, how why. */
static long preflight_rest_uid(const struct np_preflight_opts *o, char *who, size_t size, char *how, size_t hsize)
{
    if (o->rest_socket) {
        struct stat sb;
        if (stat(o->rest_socket, &sb) != 0)
            return -1;
        struct passwd *pw = getpwuid(sb.st_uid);
        snprintf(who, size, "%s", pw ? pw->pw_name : "?");
        snprintf(how, hsize, "uid %ld, owner of the socket", (long)sb.st_uid);
        return (long)sb.st_uid;
    }
    if (o->rest_token) {
        const char *u = o->rest_user && *o->rest_user ? o->rest_user : NULL;
        struct passwd *pw = u ? getpwnam(u) : getpwuid(geteuid());
        if (!pw)
            return -1;
        snprintf(who, size, "%s", pw->pw_name);
        snprintf(how, hsize, "uid %ld, SLURM_USER", (long)pw->pw_uid);
        return (long)pw->pw_uid;
    }
    return -1;
}

/* The partition's nodes (GET nodes): a job too big for the nodes with the GPUs per node it asks for is
 * refused; one that waits for nodes DOWN or DRAINED is submitted with a warning naming them. */
static enum np_status preflight_rest_nodes(struct np_backend *be, const struct np_launch_plan *plan, const char *pname,
                                           int preview, struct np_error *err)
{
    long http = 0;
    char *body = NULL;
    size_t len = 0;
    struct np_error gerr;
    struct np_nodes nodes = {0};
    enum np_status st = np_slurm_rest_get(be, "nodes", &http, &body, &len, &gerr);
    if (st == NP_OK)
        st = np_nodes_from_rest(http, body, len, pname, &nodes, &gerr);
    free(body);
    if (st != NP_OK) {
        if (!preview)
            np_warnf("cannot check the state of partition %s's nodes (%s); submitting anyway", pname, gerr.text);
        return NP_OK;
    }
    for (size_t i = 0; st == NP_OK && i < plan->n; i++) {
        char buf[600];
        enum np_nodes_fit fit = np_nodes_fit(&nodes, pname, &plan->jobs[i], buf, sizeof buf);
        if (fit == NP_NODES_NEVER)
            st = preflight_refuse(&plan->jobs[i], buf, err);
        else if (fit == NP_NODES_UNAVAILABLE)
            preflight_warn_unavailable(&plan->jobs[i], buf, NULL, preview);
    }
    np_nodes_free(&nodes);
    return st;
}

static enum np_status preflight_rest(struct np_backend *be, const struct np_launch_plan *plan,
                                     const struct np_preflight_opts *o, struct np_error *err)
{
    char who[64], how[80];
    long uid = preflight_rest_uid(o, who, sizeof who, how, sizeof how);
    if (uid > 0 && (uid_t)uid != geteuid() && plan->n > 0) {
        struct passwd *me = getpwuid(geteuid());
        return np_error_set(err, NP_E_INVALID, "SLURM_SUBMIT=rest", 0, 0,
                            "the jobs would run as %s (%s), who cannot write the folders this process creates "
                            "as %s under %.120s/experiments: every job would fail without a log; run it as "
                            "%s (runuser -u %s -- %.200s) or use SLURM_SUBMIT=cli; nothing was submitted",
                            who, how, me ? me->pw_name : "you", plan->jobs[0].stage_path, who, who,
                            o->launch_cmd ? o->launch_cmd : "./launch");
    }
    long http = 0;
    char *body = NULL;
    size_t len = 0;
    struct np_error gerr;
    enum np_status gst = np_slurm_rest_get(be, "partitions", &http, &body, &len, &gerr);
    if (gst == NP_E_INVALID) { /* no API version it knows: every submission would be refused */
        free(body);
        return np_error_set(err, NP_E_INVALID, gerr.source, 0, 0, "%s; nothing was submitted", gerr.text);
    }
    if (gst != NP_OK) {
        np_warnf("cannot check that the jobs can run (GET partitions: %s); submitting anyway", gerr.text);
        free(body);
        return NP_OK;
    }
    struct np_partition p;
    enum np_status st = np_partition_from_rest(http, body, len, plan->n ? plan->jobs[0].partition : NULL, &p, &gerr);
    free(body);
    if (st == NP_E_NOTFOUND)
        return np_error_set(err, NP_E_INVALID, gerr.source, 0, 0, "%s; nothing was submitted", gerr.text);
    if (st != NP_OK) {
        np_warnf("cannot check that the jobs can run (%s); submitting anyway", gerr.text);
        return NP_OK;
    }
    for (size_t i = 0; i < plan->n; i++) {
        char buf[400];
        const char *why = np_partition_misfit(&p, &plan->jobs[i], buf, sizeof buf);
        if (why)
            return preflight_refuse(&plan->jobs[i], why, err);
    }
    return preflight_rest_nodes(be, plan, p.name, o->preview, err);
}

enum np_status np_launch_preflight(struct np_backend *be, const struct np_launch_plan *plan,
                                   const struct np_preflight_opts *o, struct np_error *err)
{
    static const struct np_preflight_opts none;
    if (!o)
        o = &none;
    if (be->name && strcmp(be->name, "cli") == 0)
        return preflight_cli(be, plan, o->preview, err);
    return preflight_rest(be, plan, o, err);
}
