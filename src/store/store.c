/* store.c - the results store behind one interface: location, schema and migrations, runs in and out.
 *
 * The SQL is written here once ($N parameters, a column table shared by the insert, the update and
 * the select) and run by a backend (sqlite.c, pg.c: struct np_store_be).  Also: turning an analysed
 * run into a stored record (the manifest's cluster, image and nodes; the log's time), the refusal of
 * SQLite on network file systems, the selectors of --history/--compare, and password redaction.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "nemoperf/model/recipe.h"
#include "nemoperf/store/backend.h"
#include "nemoperf/store/store.h"
#include "nemoperf/util/envcheck.h"
#include "nemoperf/util/fileio.h"
#include "nemoperf/util/redact.h"
#include "nemoperf/util/runfiles.h"
#include "nemoperf/util/version.h"

struct np_store {
    const struct np_store_be *be;
    void *h;
    int in_tx;
    char where[512];   /* redacted location, for messages */
    char *sql_insert;
    char *sql_select[NP_STORE_NSETS];         /* "SELECT <a column set's columns>, id FROM runs" */
    size_t set_col[NP_STORE_NSETS][64], nset_col[NP_STORE_NSETS]; /* its store_cols, in order */
};

/* ---- the columns: one table for DDL, insert, update, select and the record ---- */

struct store_col {
    const char *name;
    enum np_sval_type type;
    size_t off, size;  /* into struct np_store_rec; size of a text field */
    const char *ddl;
    int since;         /* the schema version that added it (0: the first table); a later one adds it itself */
};

#define STORE_T(f) NP_SV_TEXT, offsetof(struct np_store_rec, f), sizeof(((struct np_store_rec *)0)->f), "TEXT", 0
#define STORE_I(f) NP_SV_INT, offsetof(struct np_store_rec, f), sizeof(((struct np_store_rec *)0)->f), "BIGINT", 0
#define STORE_R(f) NP_SV_REAL, offsetof(struct np_store_rec, f), 0, "DOUBLE PRECISION", 0
/* a column a later schema version added (its migration adds it) */
#define STORE_T2(f, v) NP_SV_TEXT, offsetof(struct np_store_rec, f), sizeof(((struct np_store_rec *)0)->f), "TEXT", v
#define STORE_R2(f, v) NP_SV_REAL, offsetof(struct np_store_rec, f), 0, "DOUBLE PRECISION", v

static const struct store_col store_cols[] = {
    {"run_key", STORE_T(run_key)},          /* must stay first: $1 of the look-up */
    {"config", STORE_T(config)},
    {"config_hash", STORE_T(config_hash)},
    {"kind", STORE_T(kind)},
    {"recipe", STORE_T(recipe)},
    {"size", STORE_T(size)},
    {"dtype", STORE_T(dtype)},
    {"gpu", STORE_T(gpu)},
    {"task", STORE_T(task)},
    {"variant", STORE_T(variant)},
    {"system", STORE_T(system)},
    {"gpus", STORE_I(gpus)},
    {"seq_len", STORE_I(seq_len)},
    {"gbs", STORE_I(gbs)},
    {"nodes", STORE_I(nodes)},
    {"attempt", STORE_I(attempt)},
    {"cluster", STORE_T(cluster)},
    {"job_id", STORE_T(job_id)},
    {"started", STORE_T(started)},
    {"ended", STORE_T(ended)},
    {"t", STORE_I(t)},
    {"container", STORE_T(container)},
    {"container_tag", STORE_T(container_tag)},
    {"versions", STORE_T(versions)},
    {"status", STORE_T(status)},
    {"verdict", STORE_T(verdict)},
    {"steps", STORE_I(steps)},
    {"window_first", STORE_I(window_first)},
    {"window_last", STORE_I(window_last)},
    {"step_time_s", STORE_R(step_time_s)},
    {"step_stdev_s", STORE_R(step_stdev_s)},
    {"tokens_per_s", STORE_R(tokens_per_s)},
    {"tokens_per_s_per_gpu", STORE_R(tokens_per_s_per_gpu)},
    {"tflops_per_gpu", STORE_R(tflops_per_gpu)},
    {"mfu_percent", STORE_R(mfu_percent)},
    {"samples", NP_SV_BLOB, offsetof(struct np_store_rec, samples), 0, "BYTEA", 0},
    {"nemoperf_version", STORE_T(nemoperf_version)},
    {"path", STORE_T(path)},
    {"stored_at", STORE_I(stored_at)},
    {"family", STORE_T2(family, 2)},
    {"workload", STORE_T2(workload, 2)},
    {"w_per_gpu", STORE_R2(w_per_gpu, 3)},
    {"j_per_token", STORE_R2(j_per_token, 3)},
    {"busbw_gbs", STORE_R2(busbw_gbs, 4)},
    {"tput", STORE_R2(tput, 5)},
};
#define STORE_NCOLS (sizeof store_cols / sizeof store_cols[0])
/* after them: fingerprint (insert/update), id (select) */

/* [i] takes a store of schema version i to i + 1; version 1 creates the runs table (from store_cols,
 * with the backend's auto-numbered key) before its statements. */
static const char *const store_migrations[] = {
    "CREATE UNIQUE INDEX runs_key ON runs (run_key);"
    "CREATE INDEX runs_config_t ON runs (config, t);"
    "CREATE INDEX runs_t ON runs (t);"
    "CREATE INDEX runs_container ON runs (container_tag);"
    "CREATE INDEX runs_job ON runs (job_id);",
    /* 2: "kind" is the run's kind (benchmark, profile, nccl-trace, checkpoint-save, checkpoint-load), the recipe
     * family and the synthetic workload get columns of their own.  Version 1 kept the family in "kind"
     * ("nemo", "automodel", "synthetic") and the kind only in the variant of a profile or trace run: a
     * checkpoint run of version 1 cannot be told from a benchmark (its rows say "benchmark"). */
    "ALTER TABLE runs ADD COLUMN family TEXT;"
    "ALTER TABLE runs ADD COLUMN workload TEXT;"
    "UPDATE runs SET family = CASE WHEN kind = 'automodel' THEN 'automodel' ELSE 'nemo' END, "
    "workload = CASE WHEN kind = 'synthetic' THEN 'synthetic' ELSE '' END;"
    "UPDATE runs SET kind = CASE WHEN variant = 'nsys' THEN 'profile' WHEN variant = 'nccltrace' THEN 'nccl-trace' "
    "ELSE 'benchmark' END;"
    "CREATE INDEX runs_kind ON runs (kind);",
    /* 3: a run's energy (the steady window's mean W/GPU and J/token, parse/run.h struct np_energy): unknown
     * (NULL) for the runs stored before, which are kept as they were */
    "ALTER TABLE runs ADD COLUMN w_per_gpu DOUBLE PRECISION;"
    "ALTER TABLE runs ADD COLUMN j_per_token DOUBLE PRECISION;",
    /* 4: an nccl-tests step (kind "nccl-tests") keeps its peak bus bandwidth, the figure --compare and --history
     * judge it by; NULL for every run before and every other run */
    "ALTER TABLE runs ADD COLUMN busbw_gbs DOUBLE PRECISION;",
    /* 5: what --history counts each run by, kept with it (np_store_rec_counts and np_store_rec_tput, the same
     * rule in SQL for the runs stored before: check_store holds the two to the same value bit for bit), and an
     * index that holds the series --history reads (np_store_series): a million runs' change points from the
     * index alone, in its order, no table row read */
    "ALTER TABLE runs ADD COLUMN tput DOUBLE PRECISION;"
    "UPDATE runs SET tput = CASE WHEN status IN ('ok', 'synthetic') THEN CASE WHEN busbw_gbs > 0 THEN busbw_gbs "
    "WHEN tokens_per_s_per_gpu > 0 THEN tokens_per_s_per_gpu WHEN step_time_s > 0 THEN 1.0 / step_time_s END END;"
    "CREATE INDEX runs_series ON runs (config, t, id, tput, status, container_tag, container);",
};

static const char store_sql_lookup[] = "SELECT fingerprint FROM runs WHERE run_key = $1";
static const char store_sql_version[] = "SELECT value FROM nemoperf_meta WHERE key = 'schema_version'";
static const char store_sql_count[] = "SELECT count(*) FROM runs";
static const char store_sql_setversion[] =
    "INSERT INTO nemoperf_meta (key, value) VALUES ('schema_version', $1) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/* ---- small helpers ---- */

static uint64_t store_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}
#define STORE_FNV0 14695981039346656037ULL

static void store_copy(char *dst, size_t size, const char *src)
{
    size_t n = src ? strnlen(src, size - 1) : 0; /* a million rows a --compare: no snprintf per field */
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static void store_iso(long long t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    buf[0] = '\0';
    if (t > 0 && gmtime_r(&tt, &tm))
        strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A growing string for the SQL built at open. */
struct store_buf {
    char *s;
    size_t len, cap;
    int bad;
};

static void store_cat(struct store_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void store_cat(struct store_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *t = NULL;
    int n = vasprintf(&t, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->bad = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t nc = (b->len + (size_t)n + 1) * 2;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->bad = 1;
            free(t);
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->len, t, (size_t)n + 1);
    b->len += (size_t)n;
    free(t);
}

static char *store_done(struct store_buf *b)
{
    if (b->bad) {
        free(b->s);
        return NULL;
    }
    return b->s;
}

/* ---- location, redaction, file system ---- */

static int store_is_pg(const char *loc)
{
    return strncmp(loc, "postgresql://", 13) == 0 || strncmp(loc, "postgres://", 11) == 0;
}

void np_store_redact(const char *loc, char *buf, size_t size)
{
    np_redact(loc, loc, buf, size); /* util/redact.c: the one redactor, whatever form loc has */
}

static const struct {
    unsigned long magic;
    const char *name;
} store_netfs[] = {
    {0x6969, "NFS"},          {0x0BD00BD0, "Lustre"},   {0xFF534D42, "CIFS"},    {0xFE534D42, "SMB2"},
    {0x517B, "SMB"},          {0x47504653, "GPFS"},     {0x19830326, "BeeGFS"},  {0x01021997, "9p"},
    {0x65735546, "FUSE"},     {0x5346414F, "AFS"},      {0x00C36400, "CephFS"},  {0x013111A8, "IBRIX"},
    {0xAAD7AAEA, "PanFS"},
};

enum np_status np_store_check_fs(const char *path, struct np_error *err)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    unsigned long magic;
    const char *inj = getenv("NEMOPERF_TEST_FS_MAGIC");
    if (inj && *inj)
        magic = strtoul(inj, NULL, 16);
    else {
        struct statfs sf;
        if (statfs(dir, &sf) != 0)
            return np_error_set(err, NP_E_IO, path, 0, 0, "cannot read the folder of the results store: %s",
                                strerror(errno));
        magic = (unsigned long)sf.f_type & 0xFFFFFFFFUL;
    }
    for (size_t i = 0; i < sizeof store_netfs / sizeof store_netfs[0]; i++)
        if (store_netfs[i].magic == magic)
            return np_error_set(err, NP_E_INVALID, path, 0, 0,
                                "a SQLite results store on %s (a network file system) is refused: SQLite's locks "
                                "are unreliable there and concurrent stores could corrupt it; use PostgreSQL "
                                "(--db postgresql://user@host/db) or a path on a local disk (--db /local/path.db "
                                "or NEMOPERF_DB)",
                                store_netfs[i].name);
    return NP_OK;
}

static int store_mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            int bad = mkdir(path, 0700) != 0 && errno != EEXIST;
            *p = '/';
            if (bad)
                return -1;
        }
    return 0;
}

enum np_status np_store_default_location(char *buf, size_t size, struct np_error *err)
{
    const char *env = getenv("NEMOPERF_DB"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (env && *env) {
        store_copy(buf, size, env);
        return NP_OK;
    }
    /* "/home/u/" and "/home/u" name one folder: no doubled slash in the path said */
    size_t nx = xdg ? strlen(xdg) : 0, nh = home ? strlen(home) : 0;
    while (nx > 1 && xdg[nx - 1] == '/')
        nx--;
    while (nh > 1 && home[nh - 1] == '/')
        nh--;
    if (xdg && *xdg == '/')
        snprintf(buf, size, "%.*s/nemoperf/results.db", (int)(nx > 1 ? nx : 0), xdg);
    else if (home && *home == '/')
        snprintf(buf, size, "%.*s/.local/share/nemoperf/results.db", (int)(nh > 1 ? nh : 0), home);
    else
        return np_error_set(err, NP_E_INVALID, "NEMOPERF_DB", 0, 0,
                            "no results store given and no HOME to put one in: set NEMOPERF_DB or --db");
    if (store_mkdirs(buf) != 0)
        return np_error_set(err, NP_E_IO, buf, 0, 0, "cannot create the folder of the results store: %s",
                            strerror(errno));
    return NP_OK;
}

/* ---- values in and out of the column table ---- */

static void store_param(const struct np_store_rec *r, size_t i, struct np_sval *v)
{
    const struct store_col *c = &store_cols[i];
    const char *base = (const char *)r + c->off;
    memset(v, 0, sizeof *v);
    v->type = c->type;
    if (c->type == NP_SV_TEXT) {
        v->s = base;
        if (!*v->s)
            v->type = NP_SV_NULL;
    } else if (c->type == NP_SV_INT) {
        v->i = c->size == sizeof(long long) ? *(const long long *)(const void *)base
               : c->size == sizeof(long)    ? *(const long *)(const void *)base
                                            : *(const int *)(const void *)base;
    } else if (c->type == NP_SV_REAL) {
        v->r = *(const double *)(const void *)base;
        if (!isfinite(v->r))
            v->type = NP_SV_NULL;
    } else {
        v->s = (const char *)r->samples;
        v->len = r->nsamples * sizeof *r->samples;
        if (!r->samples || !r->nsamples)
            v->type = NP_SV_NULL;
    }
}

/* One column into r.  A blob's doubles go into *buf (grown as needed, the caller's: one array for a whole
 * selection, r->samples borrowed from it) when buf is given, else into a new array r owns. */
static void store_from_col(struct np_store_rec *r, size_t i, const struct np_sval *v, double **buf, size_t *cap)
{
    const struct store_col *c = &store_cols[i];
    char *base = (char *)r + c->off;
    if (c->type == NP_SV_TEXT)
        store_copy(base, c->size, v->type == NP_SV_TEXT ? v->s : "");
    else if (c->type == NP_SV_INT) {
        long long x = v->type == NP_SV_INT ? v->i : -1;
        if (c->size == sizeof(long long))
            *(long long *)(void *)base = x;
        else if (c->size == sizeof(long))
            *(long *)(void *)base = (long)x;
        else
            *(int *)(void *)base = (int)x;
    } else if (c->type == NP_SV_REAL)
        *(double *)(void *)base = v->type == NP_SV_REAL ? v->r : NAN;
    else {
        r->samples = NULL;
        r->nsamples = 0;
        if (v->type == NP_SV_BLOB && v->len >= sizeof(double)) {
            /* borrowed bytes, possibly unaligned: copied into an array of doubles */
            size_t n = v->len / sizeof(double);
            if (buf && n > *cap) {
                double *nb = realloc(*buf, n * sizeof(double));
                if (nb) {
                    *buf = nb;
                    *cap = n;
                }
            }
            double *dst = buf ? (n <= *cap ? *buf : NULL) : malloc(n * sizeof(double));
            if ((r->samples = dst)) {
                memcpy(r->samples, v->s, n * sizeof(double));
                r->nsamples = n;
            }
        }
    }
}

static void store_fingerprint(const struct np_store_rec *r, char out[17])
{
    uint64_t h = STORE_FNV0;
    for (size_t i = 0; i < STORE_NCOLS; i++) {
        if (strcmp(store_cols[i].name, "stored_at") == 0)
            continue;
        if (strcmp(store_cols[i].name, "tput") == 0)
            continue; /* made from the other columns: a run of a schema 4 store stored again is "unchanged" */
        struct np_sval v;
        store_param(r, i, &v);
        h = store_fnv(h, &v.type, sizeof v.type);
        if (v.type == NP_SV_TEXT)
            h = store_fnv(h, v.s, strlen(v.s) + 1);
        else if (v.type == NP_SV_INT)
            h = store_fnv(h, &v.i, sizeof v.i);
        else if (v.type == NP_SV_REAL)
            h = store_fnv(h, &v.r, sizeof v.r);
        else if (v.type == NP_SV_BLOB)
            h = store_fnv(h, v.s, v.len);
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* ---- runs to records ---- */

double np_store_rec_tput(const struct np_store_rec *rec)
{
    if (isfinite(rec->busbw_gbs) && rec->busbw_gbs > 0)
        return rec->busbw_gbs;
    if (isfinite(rec->tokens_per_s_per_gpu) && rec->tokens_per_s_per_gpu > 0)
        return rec->tokens_per_s_per_gpu;
    if (isfinite(rec->step_time_s) && rec->step_time_s > 0)
        return 1 / rec->step_time_s;
    return NAN;
}

int np_store_rec_counts(const struct np_store_rec *rec)
{
    return (strcmp(rec->status, "ok") == 0 || strcmp(rec->status, "synthetic") == 0) &&
           isfinite(np_store_rec_tput(rec));
}

void np_store_rec_clear(struct np_store_rec *rec)
{
    if (!rec)
        return;
    free(rec->samples);
    rec->samples = NULL;
    rec->nsamples = 0;
}

/* What the manifest adds: cluster, image, nodes, NeMo container version, parallelism (into the hash). */
static void store_manifest(const struct np_run *run, struct np_store_rec *rec, uint64_t *h)
{
    if (!run->launch.present || !run->dir)
        return;
    char file[1100];
    snprintf(file, sizeof file, "%s/" NP_RUNFILE_MANIFEST, run->dir);
    json_error_t je;
    struct np_error ferr;
    int io;
    json_t *o = np_file_load_json(file, 0, &je, &io, &ferr); /* regular files only: a FIFO would block --store */
    if (!o)
        return;
    json_t *cfg = json_object_get(o, "config");
    if (!rec->cluster[0])
        store_copy(rec->cluster, sizeof rec->cluster, json_string_value(json_object_get(o, "cluster")));
    store_copy(rec->container, sizeof rec->container, json_string_value(json_object_get(cfg, "image")));
    json_t *nodes = json_object_get(cfg, "nodes");
    if (json_is_integer(nodes))
        rec->nodes = (int)json_integer_value(nodes);
    const char *nemo = json_string_value(json_object_get(json_object_get(cfg, "nemo"), "container"));
    if (nemo)
        snprintf(rec->versions, sizeof rec->versions, "nemo %s", nemo);
    static const char *const par[] = {"tp", "pp", "cp", "vp", "ep", "mbs", "layers"};
    for (size_t i = 0; i < sizeof par / sizeof par[0]; i++) {
        json_t *v = json_object_get(cfg, par[i]);
        long long x = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
        *h = store_fnv(*h, &x, sizeof x);
    }
    const char *colon = strrchr(rec->container, ':');
    store_copy(rec->container_tag, sizeof rec->container_tag, colon && !strchr(colon, '/') ? colon + 1 : nemo);
    json_decref(o);
}

enum np_status np_store_rec_from_run(const struct np_run *run, const struct np_store_ctx *ctx,
                                     struct np_store_rec *rec)
{
    const struct np_identity *id = &run->id;
    memset(rec, 0, sizeof *rec);
    const char *cl = getenv("NEMOPERF_CLUSTER");
    if (ctx && ctx->cluster)
        cl = ctx->cluster;
    store_copy(rec->cluster, sizeof rec->cluster, cl && *cl ? cl : NULL);
    store_copy(rec->recipe, sizeof rec->recipe, id->recipe);
    store_copy(rec->size, sizeof rec->size, id->model_size);
    store_copy(rec->dtype, sizeof rec->dtype, np_identity_precision(id));
    store_copy(rec->gpu, sizeof rec->gpu, id->gpu_type);
    store_copy(rec->task, sizeof rec->task, id->task[0] ? id->task : "pretrain");
    store_copy(rec->variant, sizeof rec->variant, id->variant);
    store_copy(rec->system, sizeof rec->system, id->system);
    store_copy(rec->kind, sizeof rec->kind, np_run_kind_name(id->kind));
    store_copy(rec->family, sizeof rec->family, id->family[0] ? id->family : "nemo");
    store_copy(rec->workload, sizeof rec->workload, id->synthetic ? "synthetic" : "");
    rec->gpus = id->gpus;
    rec->seq_len = id->seq_len;
    rec->gbs = id->gbs;
    rec->nodes = -1;
    rec->attempt = (int)run->attempts;
    store_copy(rec->job_id, sizeof rec->job_id, run->job_id);
    store_copy(rec->started, sizeof rec->started, run->launch.submit_time);
    uint64_t h = STORE_FNV0;
    store_manifest(run, rec, &h);
    if (!rec->container_tag[0]) /* a Megatron-Bridge manifest names the container version, not an image */
        store_copy(rec->container_tag, sizeof rec->container_tag, id->container[0] ? id->container : NULL);
    if (!rec->cluster[0]) {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        store_copy(rec->cluster, sizeof rec->cluster, host);
    }
    /* the unit of comparison: the identity (a Megatron-Bridge -mr name carries its size; its container and -cv
     * are part of it) and the kind (a profile or checkpoint run is never compared with a benchmark) */
    int mb = strcmp(rec->family, "mbridge") == 0;
    rec->busbw_gbs = rec->tput = NAN;
    if (id->kind == NP_KIND_NCCLTESTS) /* a fabric check's step: the step (binary, hosts) at its scale */
        snprintf(rec->config, sizeof rec->config, "nccl-tests %s %sx%d%s%s", id->model_size[0] ? id->model_size : "?",
                 id->gpu_type[0] ? id->gpu_type : "gpu", id->gpus, id->system[0] ? " " : "", id->system);
    else
        snprintf(rec->config, sizeof rec->config, "%s%s%s %s %s %sx%d seq%d gbs%d%s%s%s%s%s%s%s%s%s",
                 id->recipe[0] ? id->recipe : "?", mb ? "" : " ", mb ? "" : id->model_size[0] ? id->model_size : "?",
                 rec->task, rec->dtype[0] ? rec->dtype : "?", id->gpu_type[0] ? id->gpu_type : "gpu", id->gpus,
                 id->seq_len, id->gbs, id->container[0] && mb ? " " : "", mb ? id->container : "",
                 id->config_variant[0] ? " " : "", id->config_variant, id->variant[0] ? " " : "", id->variant,
                 id->kind != NP_KIND_BENCHMARK && !id->variant[0] ? " " : "",
                 id->kind != NP_KIND_BENCHMARK && !id->variant[0] ? np_run_kind_name(id->kind) : "",
                 id->synthetic ? " synthetic" : "");
    h = store_fnv(h, rec->config, strlen(rec->config));
    snprintf(rec->config_hash, sizeof rec->config_hash, "%016llx", (unsigned long long)h);
    struct stat sb;
    if (run->path && stat(run->path, &sb) == 0) {
        rec->t = (long long)sb.st_mtime;
        store_iso(rec->t, rec->ended, sizeof rec->ended);
    }
    store_copy(rec->status, sizeof rec->status, np_run_status_name(run->status));
    store_copy(rec->verdict, sizeof rec->verdict, run->verdict != NP_VERDICT_NONE ? np_verdict_name(run->verdict) : "");
    rec->steps = (long)run->steps_seen;
    rec->window_first = run->window.first;
    rec->window_last = run->window.last;
    rec->step_time_s = run->window.mean_s;
    rec->step_stdev_s = run->window.stdev_s;
    rec->tokens_per_s = run->steady.tokens_per_s;
    rec->tokens_per_s_per_gpu = run->steady.tokens_per_s_per_gpu;
    rec->tflops_per_gpu = run->steady.model_tflops_per_gpu;
    rec->mfu_percent = run->steady.mfu_percent;
    rec->w_per_gpu = run->energy.w_per_gpu;
    rec->j_per_token = run->energy.j_per_token;
    if (id->kind == NP_KIND_NCCLTESTS)
        rec->busbw_gbs = run->nccl.peak_busbw;
    store_copy(rec->nemoperf_version, sizeof rec->nemoperf_version, NP_VERSION);
    store_copy(rec->path, sizeof rec->path, run->path);
    /* the key: the cluster and the folder (a run's restarts and later logs update it), and the log when
     * no manifest says the folder is one run */
    char *real = run->dir ? realpath(run->dir, NULL) : NULL;
    const char *base = run->path ? strrchr(run->path, '/') : NULL;
    /* an nccl-tests run is a record per step: the step names it in its folder */
    int step = id->kind == NP_KIND_NCCLTESTS && run->nccl.step[0];
    snprintf(rec->run_key, sizeof rec->run_key, "%s:%s%s%s", rec->cluster, real ? real : run->dir ? run->dir : "",
             run->launch.present && !step ? "" : "|",
             step ? run->nccl.step : run->launch.present ? "" : base ? base + 1 : run->path ? run->path : "");
    free(real);
    if (run->samples && run->window.count) {
        if (!(rec->samples = malloc(run->window.count * sizeof *rec->samples)))
            return NP_E_NOMEM;
        memcpy(rec->samples, run->samples, run->window.count * sizeof *rec->samples);
        rec->nsamples = run->window.count;
    }
    return NP_OK;
}

/* ---- open, schema ---- */

static enum np_status store_exec(struct np_store *s, const char *sql, const struct np_sval *p, size_t np,
                                 struct np_error *err)
{
    return s->be->exec(s->h, sql, 0, p, np, NULL, 0, NULL, NULL, NULL, err);
}

/* The schema version as stored: 1 to 9 decimal digits, nothing else; v -1 when it is anything else, with
 * what it is kept for the message (a store whose version nemoperf cannot read is never migrated). */
struct store_version {
    long v;
    char text[40];
};

static int store_version_row(void *ctx, const struct np_sval *cols, size_t ncol)
{
    struct store_version *sv = ctx;
    const char *t = ncol && cols[0].type == NP_SV_TEXT && cols[0].s ? cols[0].s : NULL;
    size_t n = t ? strspn(t, "0123456789") : 0;
    sv->v = t && n >= 1 && n <= 9 && t[n] == '\0' ? strtol(t, NULL, 10) : -1;
    snprintf(sv->text, sizeof sv->text, "%s", t ? t : "(not text)");
    return 0;
}

/* *v: the version (0 when none is stored yet), or -1 when the stored one cannot be read (err says which). */
static enum np_status store_read_version(struct np_store *s, long *v, struct np_error *err)
{
    static const enum np_sval_type t[] = {NP_SV_TEXT};
    struct store_version sv = {0, ""};
    enum np_status st = s->be->exec(s->h, store_sql_version, 0, NULL, 0, t, 1, store_version_row, &sv, NULL, err);
    *v = sv.v;
    if (st == NP_OK && sv.v < 0) {
        return np_error_set(err, NP_E_INVALID, s->where, 0, 0,
                            "the results store's schema version is '%s', which no nemoperf writes: not read and not "
                            "migrated (a damaged store? restore it from a copy)", sv.text);
    }
    return st;
}

static enum np_status store_newer(struct np_store *s, long v, struct np_error *err)
{
    return np_error_set(err, NP_E_INVALID, s->where, 0, 0,
                        "the results store has schema version %ld, newer than this nemoperf %s knows (%d): "
                        "use a newer nemoperf (it is never downgraded)",
                        v, NP_VERSION, NP_STORE_SCHEMA);
}

static enum np_status store_migrate(struct np_store *s, struct np_error *err)
{
    long v = 0;
    struct np_error ignored;
    enum np_status vst = store_read_version(s, &v, &ignored);
    if (vst == NP_OK && v == NP_STORE_SCHEMA)
        return NP_OK; /* the usual case: no lock taken */
    if (vst == NP_E_INVALID) { /* a version no nemoperf writes ("abc"): never taken for 0 and migrated */
        if (err)
            *err = ignored;
        return vst;
    }
    if (v > NP_STORE_SCHEMA)
        return store_newer(s, v, err);
    enum np_status st = store_exec(s, s->be->begin_sql, NULL, 0, err);
    if (st != NP_OK)
        return st;
    s->in_tx = 1;
    if (strcmp(s->be->name, "postgresql") == 0) /* one migrating process at a time */
        st = store_exec(s, "SELECT pg_advisory_xact_lock(72530028)", NULL, 0, err);
    if (st == NP_OK)
        st = store_exec(s, "CREATE TABLE IF NOT EXISTS nemoperf_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
                        NULL, 0, err);
    if (st == NP_OK)
        st = store_read_version(s, &v, err);
    if (st == NP_OK && v > NP_STORE_SCHEMA)
        st = store_newer(s, v, err);
    for (; st == NP_OK && v < NP_STORE_SCHEMA; v++) {
        struct store_buf cols = {0}, ddl = {0};
        for (size_t i = 0; i < STORE_NCOLS; i++)
            if (store_cols[i].since <= 1)
                store_cat(&cols, "%s %s%s,", store_cols[i].name, store_cols[i].ddl, i == 0 ? " NOT NULL" : "");
        char *c = store_done(&cols);
        if (c && v == 0)
            store_cat(&ddl, "CREATE TABLE runs (id %s, %s fingerprint TEXT NOT NULL);", s->be->id_type, c);
        if (c)
            store_cat(&ddl, "%s", store_migrations[v]);
        free(c);
        char *d = c ? store_done(&ddl) : (free(ddl.s), NULL);
        if (!d)
            st = np_error_set(err, NP_E_NOMEM, s->where, 0, 0, "out of memory");
        else
            st = store_exec(s, d, NULL, 0, err);
        free(d);
        char num[24];
        snprintf(num, sizeof num, "%ld", v + 1);
        struct np_sval p = {NP_SV_TEXT, 0, 0, num, 0};
        if (st == NP_OK)
            st = store_exec(s, store_sql_setversion, &p, 1, err);
    }
    if (st == NP_OK)
        return np_store_commit(s, err);
    np_store_rollback(s);
    return st;
}

/* The column sets np_store_select reads (each column read costs, a million rows a --history): NULL-ended names;
 * no list: every column, or (light) all but the samples and the path. */
static const char *const store_set_stats[] = {"config", "kind", "status", "t", "container", "container_tag",
                                              "step_time_s", "tokens_per_s_per_gpu", "samples", "j_per_token",
                                              "busbw_gbs", NULL};
static const char *const store_set_list[] = {"config", "family", "kind", "cluster", "job_id", "ended",
                                             "container", "container_tag", "status", "step_time_s",
                                             "tokens_per_s_per_gpu", "mfu_percent", "busbw_gbs", NULL};
static const char *const store_set_list_json[] = {"config", "config_hash", "family", "kind", "gpus", "cluster",
                                                  "job_id", "ended", "container", "container_tag", "status",
                                                  "verdict", "steps", "step_time_s", "tokens_per_s_per_gpu",
                                                  "mfu_percent", "nemoperf_version", "busbw_gbs", NULL};
static const char *const store_set_path[] = {"path", NULL};
static const char *const *const store_sets[NP_STORE_NSETS] = {
    [NP_STORE_ALL] = NULL,           [NP_STORE_LIGHT] = NULL,          [NP_STORE_STATS] = store_set_stats,
    [NP_STORE_LIST] = store_set_list, [NP_STORE_LIST_JSON] = store_set_list_json,
    [NP_STORE_PATH] = store_set_path,
};

static int store_in_set(const char *const *set, const char *name)
{
    for (; *set; set++)
        if (strcmp(*set, name) == 0)
            return 1;
    return 0;
}

static enum np_status store_build_sql(struct np_store *s)
{
    struct store_buf ins = {0};
    store_cat(&ins, "INSERT INTO runs (");
    for (size_t i = 0; i < STORE_NCOLS; i++)
        store_cat(&ins, "%s, ", store_cols[i].name);
    store_cat(&ins, "fingerprint) VALUES (");
    for (size_t i = 0; i <= STORE_NCOLS; i++)
        store_cat(&ins, "$%zu%s", i + 1, i < STORE_NCOLS ? ", " : ") ON CONFLICT (run_key) DO UPDATE SET ");
    for (size_t i = 1; i < STORE_NCOLS; i++)
        store_cat(&ins, "%s = excluded.%s, ", store_cols[i].name, store_cols[i].name);
    store_cat(&ins, "fingerprint = excluded.fingerprint WHERE runs.fingerprint <> excluded.fingerprint");
    if (!(s->sql_insert = store_done(&ins)))
        return NP_E_NOMEM;
    for (size_t k = 0; k < NP_STORE_NSETS; k++) {
        struct store_buf q = {0};
        store_cat(&q, "SELECT ");
        for (size_t i = 0; i < STORE_NCOLS; i++) {
            int heavy = store_cols[i].type == NP_SV_BLOB || strcmp(store_cols[i].name, "path") == 0;
            if (store_sets[k] ? !store_in_set(store_sets[k], store_cols[i].name) : k == NP_STORE_LIGHT && heavy)
                continue;
            store_cat(&q, "%s, ", store_cols[i].name);
            s->set_col[k][s->nset_col[k]++] = i;
        }
        store_cat(&q, "id FROM runs");
        if (!(s->sql_select[k] = store_done(&q)))
            return NP_E_NOMEM;
    }
    return NP_OK;
}

enum np_status np_store_open(const char *loc, struct np_store **out, struct np_error *err)
{
    *out = NULL;
    if (!loc || !*loc)
        return np_error_set(err, NP_E_INVALID, "--db", 0, 0, "the location of the results store is empty");
    struct np_store *s = calloc(1, sizeof *s);
    if (!s)
        return np_error_set(err, NP_E_NOMEM, "--db", 0, 0, "out of memory");
    np_store_redact(loc, s->where, sizeof s->where);
    enum np_status st = store_build_sql(s);
    if (st != NP_OK)
        np_error_set(err, st, s->where, 0, 0, "out of memory");
    else if (store_is_pg(loc))
        st = np_store_pg_open(loc, &s->h, &s->be, err);
    else if ((st = np_store_check_fs(loc, err)) == NP_OK)
        st = np_store_sqlite_open(loc, &s->h, &s->be, err);
    if (st == NP_OK)
        st = store_migrate(s, err);
    if (st != NP_OK) {
        if (err) { /* whatever a backend said of the location: through the one redactor */
            char t[sizeof err->text];
            np_redact(err->source, loc, t, sizeof err->source);
            memcpy(err->source, t, sizeof err->source);
            np_redact(err->text, loc, t, sizeof t);
            snprintf(err->text, sizeof err->text, "%s", t);
        }
        np_store_close(s);
        return st;
    }
    *out = s;
    return NP_OK;
}

void np_store_close(struct np_store *s)
{
    if (!s)
        return;
    if (s->h) {
        if (s->in_tx)
            np_store_rollback(s);
        s->be->close(s->h);
    }
    free(s->sql_insert);
    for (size_t k = 0; k < NP_STORE_NSETS; k++)
        free(s->sql_select[k]);
    free(s);
}

const char *np_store_backend_name(const struct np_store *s)
{
    return s && s->be ? s->be->name : "none";
}

/* ---- transactions and runs ---- */

enum np_status np_store_begin(struct np_store *s, struct np_error *err)
{
    enum np_status st = store_exec(s, s->be->begin_sql, NULL, 0, err);
    if (st == NP_OK)
        s->in_tx = 1;
    return st;
}

enum np_status np_store_commit(struct np_store *s, struct np_error *err)
{
    enum np_status st = store_exec(s, "COMMIT", NULL, 0, err);
    if (st != NP_OK)
        np_store_rollback(s);
    s->in_tx = 0;
    return st;
}

void np_store_rollback(struct np_store *s)
{
    struct np_error ignored;
    if (s && s->in_tx)
        store_exec(s, "ROLLBACK", NULL, 0, &ignored);
    if (s)
        s->in_tx = 0;
}

static int store_fp_row(void *ctx, const struct np_sval *cols, size_t ncol)
{
    (void)ncol;
    store_copy(ctx, 17, cols[0].type == NP_SV_TEXT ? cols[0].s : "");
    return 0;
}

enum np_status np_store_put(struct np_store *s, const struct np_store_rec *rec, enum np_store_outcome *outcome,
                            struct np_error *err)
{
    struct np_sval p[STORE_NCOLS + 1];
    char fp[17], old[17] = "";
    int found = 0;
    struct np_store_rec r = *rec;
    r.stored_at = (long long)time(NULL);
    r.tput = np_store_rec_counts(&r) ? np_store_rec_tput(&r) : NAN;
    store_fingerprint(&r, fp);
    static const enum np_sval_type t[] = {NP_SV_TEXT};
    struct np_sval key = {NP_SV_TEXT, 0, 0, r.run_key, 0};
    old[0] = '\1';
    enum np_status st = s->be->exec(s->h, store_sql_lookup, 1, &key, 1, t, 1, store_fp_row, old, NULL, err);
    if (st != NP_OK)
        return st;
    found = old[0] != '\1';
    if (found && strcmp(old, fp) == 0) {
        if (outcome)
            *outcome = NP_STORE_SAME;
        return NP_OK;
    }
    for (size_t i = 0; i < STORE_NCOLS; i++)
        store_param(&r, i, &p[i]);
    p[STORE_NCOLS] = (struct np_sval){NP_SV_TEXT, 0, 0, fp, 0};
    long long changes = 0;
    st = s->be->exec(s->h, s->sql_insert, 1, p, STORE_NCOLS + 1, NULL, 0, NULL, NULL, &changes, err);
    if (st == NP_OK && outcome)
        *outcome = !changes ? NP_STORE_SAME : found ? NP_STORE_UPDATED : NP_STORE_ADDED;
    return st;
}

static int store_count_row(void *ctx, const struct np_sval *cols, size_t ncol)
{
    (void)ncol;
    *(long long *)ctx = cols[0].type == NP_SV_INT ? cols[0].i : 0;
    return 0;
}

enum np_status np_store_count(struct np_store *s, long long *n, struct np_error *err)
{
    static const enum np_sval_type t[] = {NP_SV_INT};
    *n = 0;
    return s->be->exec(s->h, store_sql_count, 0, NULL, 0, t, 1, store_count_row, n, NULL, err);
}

/* ---- selection ---- */

struct store_sel {
    np_store_row_fn fn;
    void *ctx;
    enum np_status st;
    struct np_store_rec rec;
    double *samples;   /* every row's samples, in turn (rec.samples borrows it) */
    size_t cap;
    const size_t *col; /* the store_cols of the selected columns, in order; the id after them */
    size_t ncol;
};

static int store_sel_row(void *ctx, const struct np_sval *cols, size_t ncol)
{
    struct store_sel *sel = ctx;
    struct np_store_rec *r = &sel->rec;
    for (size_t i = 0; i < sel->ncol && i < ncol; i++)
        store_from_col(r, sel->col[i], &cols[i], &sel->samples, &sel->cap);
    r->id = ncol > sel->ncol && cols[sel->ncol].type == NP_SV_INT ? cols[sel->ncol].i : 0;
    sel->st = sel->fn(sel->ctx, r);
    r->samples = NULL; /* sel->samples' */
    r->nsamples = 0;
    return sel->st != NP_OK;
}

/* Unix seconds of "2026-11-01" or "2026-11-01T12:00[:00][Z]" (UTC); -1 when not a date. */
static long long store_date(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *e = strptime(s, "%Y-%m-%d", &tm);
    if (!e)
        return -1;
    if (*e == 'T' || *e == ' ') {
        const char *e2 = strptime(e + 1, "%H:%M", &tm);
        if (!e2)
            return -1;
        e = e2;
        if (*e == ':' && !(e = strptime(e + 1, "%S", &tm)))
            return -1;
        if (*e == 'Z')
            e++;
    }
    if (*e)
        return -1;
    return (long long)timegm(&tm);
}

enum np_status np_store_filter_parse(const char *sel, char *buf, size_t size, struct np_store_filter *f,
                                     struct np_error *err)
{
    memset(f, 0, sizeof *f);
    if (strncmp(sel, "db:", 3) == 0)
        sel += 3;
    if (strlen(sel) >= size)
        return np_error_set(err, NP_E_USAGE, "selector", 0, 0, "'%s' is too long", sel);
    strcpy(buf, sel);
    const char *key = NULL;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        const char *val = tok;
        if (eq) {
            *eq = '\0';
            key = tok;
            val = eq + 1;
        } else if (!key || strcmp(key, "job") != 0)
            return np_error_set(err, NP_E_USAGE, "selector", 0, 0,
                                "'%s': expected key=value (keys: recipe size dtype gpus gpu container cluster "
                                "kind family config status since until job)",
                                tok);
        if (!*val)
            return np_error_set(err, NP_E_USAGE, "selector", 0, 0, "%s: the value is empty", key);
        const char **slot = strcmp(key, "recipe") == 0      ? &f->recipe
                            : strcmp(key, "size") == 0      ? &f->size
                            : strcmp(key, "model") == 0     ? &f->size
                            : strcmp(key, "dtype") == 0     ? &f->dtype
                            : strcmp(key, "gpu") == 0       ? &f->gpu
                            : strcmp(key, "container") == 0 ? &f->container
                            : strcmp(key, "cluster") == 0   ? &f->cluster
                            : strcmp(key, "kind") == 0      ? &f->kind
                            : strcmp(key, "family") == 0    ? &f->family
                            : strcmp(key, "config") == 0    ? &f->config
                            : strcmp(key, "status") == 0    ? &f->status
                                                            : NULL;
        if (slot) {
            *slot = val;
        } else if (strcmp(key, "gpus") == 0) {
            char *end;
            long g = strtol(val, &end, 10);
            if (*end || g < 1 || g > 10000000)
                return np_error_set(err, NP_E_USAGE, "selector", 0, 0, "gpus=%s: not a GPU count", val);
            f->gpus = (int)g;
        } else if (strcmp(key, "since") == 0 || strcmp(key, "until") == 0) {
            long long t = store_date(val);
            if (t < 0)
                return np_error_set(err, NP_E_USAGE, "selector", 0, 0,
                                    "%s=%s: not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]Z, UTC)", key, val);
            if (key[0] == 's')
                f->since = t;
            else
                f->until = t + (strpbrk(val, "T ") ? 0 : 86400); /* a date alone: until its day's end */
        } else if (strcmp(key, "job") == 0) {
            if (f->njobs == NP_STORE_FILTER_MAX)
                return np_error_set(err, NP_E_USAGE, "selector", 0, 0, "job: at most %d job ids",
                                    NP_STORE_FILTER_MAX);
            f->jobs[f->njobs++] = val;
        } else {
            return np_error_set(err, NP_E_USAGE, "selector", 0, 0,
                                "'%s' is not a key (keys: recipe size dtype gpus gpu container cluster kind family "
                                "config status since until job)",
                                key);
        }
    }
    return NP_OK;
}

/* f's conditions (" AND ..."), their values into p from *np on (at most STORE_MAXP). */
#define STORE_MAXP (13 + 2 * NP_STORE_FILTER_MAX)
static void store_where(struct store_buf *q, const struct np_store_filter *f, struct np_sval *p, size_t *npp)
{
    size_t np = *npp;
    static const char *const tcol[] = {"recipe", "size",   "dtype",  "gpu",   "cluster",
                                       "kind",   "family", "config", "status"};
    const char *tval[] = {f->recipe, f->size, f->dtype, f->gpu, f->cluster, f->kind, f->family, f->config, f->status};
    for (size_t i = 0; i < sizeof tcol / sizeof tcol[0]; i++)
        if (tval[i]) {
            p[np] = (struct np_sval){NP_SV_TEXT, 0, 0, tval[i], 0};
            store_cat(q, " AND %s = $%zu", tcol[i], ++np);
        }
    if (f->container) {
        p[np] = (struct np_sval){NP_SV_TEXT, 0, 0, f->container, 0};
        store_cat(q, " AND (container_tag = $%zu OR container = $%zu)", np + 1, np + 1);
        np++;
    }
    if (f->gpus) {
        p[np] = (struct np_sval){NP_SV_INT, f->gpus, 0, NULL, 0};
        store_cat(q, " AND gpus = $%zu", ++np);
    }
    if (f->since) {
        p[np] = (struct np_sval){NP_SV_INT, f->since, 0, NULL, 0};
        store_cat(q, " AND t >= $%zu", ++np);
    }
    if (f->until) {
        p[np] = (struct np_sval){NP_SV_INT, f->until, 0, NULL, 0};
        store_cat(q, " AND t < $%zu", ++np);
    }
    if (f->njobs) {
        store_cat(q, " AND job_id IN (");
        for (size_t i = 0; i < f->njobs; i++) {
            p[np] = (struct np_sval){NP_SV_TEXT, 0, 0, f->jobs[i], 0};
            store_cat(q, "%s$%zu", i ? ", " : "", ++np);
        }
        store_cat(q, ")");
    }
    if (f->nids) {
        store_cat(q, " AND id IN (");
        for (size_t i = 0; i < f->nids && i < NP_STORE_FILTER_MAX; i++) {
            p[np] = (struct np_sval){NP_SV_INT, f->ids[i], 0, NULL, 0};
            store_cat(q, "%s$%zu", i ? ", " : "", ++np);
        }
        store_cat(q, ")");
    }
    *npp = np;
}

/* 1 when rec (with the columns the filters read) matches f: store_where's conditions, in C. */
static int store_match(const struct np_store_filter *f, const struct np_store_rec *r)
{
    const char *tval[] = {f->recipe, f->size, f->dtype, f->gpu, f->cluster, f->kind, f->family, f->config, f->status};
    const char *rval[] = {r->recipe, r->size, r->dtype, r->gpu, r->cluster, r->kind, r->family, r->config, r->status};
    for (size_t i = 0; i < sizeof tval / sizeof tval[0]; i++)
        if (tval[i] && strcmp(tval[i], rval[i]) != 0)
            return 0;
    if (f->container && strcmp(f->container, r->container_tag) != 0 && strcmp(f->container, r->container) != 0)
        return 0;
    if ((f->gpus && r->gpus != f->gpus) || (f->since && r->t < f->since) || (f->until && r->t >= f->until))
        return 0;
    int job = !f->njobs;
    for (size_t i = 0; !job && i < f->njobs; i++)
        job = strcmp(f->jobs[i], r->job_id) == 0;
    int id = !f->nids;
    for (size_t i = 0; !id && i < f->nids && i < NP_STORE_FILTER_MAX; i++)
        id = f->ids[i] == r->id;
    return job && id;
}

enum np_status np_store_select(struct np_store *s, const struct np_store_filter *f, int by_config,
                               enum np_store_set set, np_store_row_fn fn, void *ctx, struct np_error *err)
{
    struct store_buf q = {0};
    struct np_sval p[STORE_MAXP];
    size_t np = 0;
    if ((unsigned)set >= NP_STORE_NSETS)
        set = NP_STORE_ALL;
    store_cat(&q, "%s WHERE 1 = 1", s->sql_select[set]);
    store_where(&q, f, p, &np);
    store_cat(&q, by_config ? " ORDER BY config, t, id" : " ORDER BY t, id");
    char *sql = store_done(&q);
    if (!sql)
        return np_error_set(err, NP_E_NOMEM, s->where, 0, 0, "out of memory");
    struct store_sel sel;
    memset(&sel, 0, sizeof sel);
    sel.fn = fn;
    sel.ctx = ctx;
    sel.col = s->set_col[set];
    sel.ncol = s->nset_col[set];
    enum np_sval_type types[STORE_NCOLS + 1];
    for (size_t i = 0; i < sel.ncol; i++)
        types[i] = store_cols[sel.col[i]].type;
    types[sel.ncol] = NP_SV_INT;
    struct np_sval none;
    memset(&none, 0, sizeof none); /* NP_SV_NULL: the columns not selected read as unknown */
    for (size_t i = 0; i < STORE_NCOLS; i++)
        store_from_col(&sel.rec, i, &none, NULL, NULL);
    enum np_status st = s->be->exec(s->h, sql, 0, p, np, types, sel.ncol + 1, store_sel_row, &sel, NULL, err);
    free(sql);
    free(sel.samples);
    return st != NP_OK ? st : sel.st;
}

struct store_series {
    np_store_point_fn fn;
    void *ctx;
    enum np_status st;
};

static int store_series_row(void *ctx, const struct np_sval *cols, size_t ncol)
{
    struct store_series *ss = ctx;
    if (ncol < 5 || cols[3].type != NP_SV_REAL || !isfinite(cols[3].r)) /* no throughput: not counted */
        return 0;
    struct np_store_point pt = {cols[0].type == NP_SV_TEXT && cols[0].s ? cols[0].s : "",
                                cols[4].type == NP_SV_TEXT && cols[4].s ? cols[4].s : "",
                                cols[2].type == NP_SV_INT ? cols[2].i : 0,
                                cols[1].type == NP_SV_INT ? cols[1].i : 0, cols[3].r};
    ss->st = ss->fn(ss->ctx, &pt);
    return ss->st != NP_OK;
}

enum np_status np_store_series(struct np_store *s, const struct np_store_filter *f, np_store_point_fn fn, void *ctx,
                               struct np_error *err)
{
    /* the stored tput (NULL: the run does not count) and four more values, all in runs_series: the index is
     * read in its order, no table row (a filter on another column reads the rows it must); the status is
     * tested again, so that a run whose status was edited by hand to "failed" stops counting */
    struct store_buf q = {0};
    struct np_sval p[STORE_MAXP];
    size_t np = 0;
    store_cat(&q, "SELECT config, t, id, tput, CASE WHEN container_tag <> '' THEN container_tag ELSE container END "
                  "FROM runs WHERE tput IS NOT NULL AND status IN ('ok', 'synthetic')");
    store_where(&q, f, p, &np);
    store_cat(&q, " ORDER BY config, t, id");
    char *sql = store_done(&q);
    if (!sql)
        return np_error_set(err, NP_E_NOMEM, s->where, 0, 0, "out of memory");
    static const enum np_sval_type types[] = {NP_SV_TEXT, NP_SV_INT, NP_SV_INT, NP_SV_REAL, NP_SV_TEXT};
    struct store_series ss = {fn, ctx, NP_OK};
    enum np_status st = s->be->exec(s->h, sql, 0, p, np, types, 5, store_series_row, &ss, NULL, err);
    free(sql);
    return st != NP_OK ? st : ss.st;
}

/* ---- a selector that matched nothing: the nearest stored value ---- */

struct store_near {
    const char *want;
    size_t best;
    char val[320];
    int exact;
};

static int store_near_row(void *ctx, const struct np_sval *cols, size_t ncol)
{
    struct store_near *n = ctx;
    if (ncol < 1 || cols[0].type != NP_SV_TEXT || !cols[0].s || !*cols[0].s)
        return 0;
    if (strcmp(cols[0].s, n->want) == 0) {
        n->exact = 1;
        return 1;
    }
    size_t d = np_env_distance(cols[0].s, n->want, n->best);
    if (d >= n->best && strncmp(cols[0].s, n->want, strlen(n->want)) == 0 && n->best > 1)
        d = n->best - 1; /* "checkpoint" -> "checkpoint-save": a prefix is near too, after a closer value */
    if (d < n->best) {
        n->best = d;
        store_copy(n->val, sizeof n->val, cols[0].s);
    }
    return 0;
}

enum np_status np_store_nearest(struct np_store *s, const struct np_store_filter *f, char *hint, size_t size,
                                struct np_error *err)
{
    static const char *const key[] = {"recipe",    "size",    "dtype", "gpu",    "container",
                                      "cluster",   "kind",    "family", "config", "status"};
    static const char *const col[] = {"recipe",    "size",    "dtype", "gpu",    "container_tag",
                                      "cluster",   "kind",    "family", "config", "status"};
    const char *val[] = {f->recipe, f->size,   f->dtype,  f->gpu,    f->container,
                         f->cluster, f->kind, f->family, f->config, f->status};
    hint[0] = '\0';
    for (size_t i = 0; i < sizeof key / sizeof key[0]; i++) {
        if (!val[i])
            continue;
        /* near: within a third of the value's length (at least 2 edits), as the option and recipe hints */
        size_t cap = strlen(val[i]) / 3 > 2 ? strlen(val[i]) / 3 : 2;
        struct store_near n = {val[i], cap + 1, "", 0};
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT DISTINCT %s FROM runs", col[i]);
        enum np_sval_type ty = NP_SV_TEXT;
        enum np_status st = s->be->exec(s->h, sql, 0, NULL, 0, &ty, 1, store_near_row, &n, NULL, err);
        if (st != NP_OK)
            return st;
        if (!n.exact && i == 4) { /* container: the tag or the whole image */
            snprintf(sql, sizeof sql, "SELECT DISTINCT container FROM runs");
            st = s->be->exec(s->h, sql, 0, NULL, 0, &ty, 1, store_near_row, &n, NULL, err);
            if (st != NP_OK)
                return st;
        }
        if (!n.exact) {
            if (n.val[0])
                snprintf(hint, size, "%s=%s", key[i], n.val);
            return NP_OK;
        }
    }
    return NP_OK;
}

int np_store_identified(const struct np_run *run)
{
    return run->status != NP_RUN_UNIDENTIFIED && run->id.recipe[0];
}

struct store_sides {
    const struct np_store_filter *f[2];
    np_store_side_fn fn;
    void *ctx;
};

static enum np_status store_sides_row(void *ctx, const struct np_store_rec *rec)
{
    struct store_sides *sd = ctx;
    unsigned m = (unsigned)store_match(sd->f[0], rec) | (unsigned)store_match(sd->f[1], rec) << 1;
    return m ? sd->fn(sd->ctx, rec, m) : NP_OK;
}

enum np_status np_store_select_sides(struct np_store *s, const struct np_store_filter *a,
                                     const struct np_store_filter *b, np_store_side_fn fn, void *ctx,
                                     struct np_error *err)
{
    /* what --compare reads and the columns the filters test (each column read costs, a million times) */
    const struct np_store_filter *ab[2] = {a, b};
    int use[STORE_NCOLS] = {0};
    static const char *const base[] = {"config",  "kind",  "status", "step_time_s", "tokens_per_s_per_gpu",
                                       "samples", "j_per_token"};
    for (size_t i = 0; i < STORE_NCOLS; i++) {
        const char *n = store_cols[i].name;
        for (size_t k = 0; k < sizeof base / sizeof base[0]; k++)
            use[i] |= strcmp(base[k], n) == 0;
        for (int k = 0; k < 2; k++) {
            const struct np_store_filter *f = ab[k];
            use[i] |= (f->recipe && strcmp(n, "recipe") == 0) || (f->size && strcmp(n, "size") == 0) ||
                      (f->dtype && strcmp(n, "dtype") == 0) || (f->gpu && strcmp(n, "gpu") == 0) ||
                      (f->cluster && strcmp(n, "cluster") == 0) || (f->family && strcmp(n, "family") == 0) ||
                      (f->gpus && strcmp(n, "gpus") == 0) || (f->njobs && strcmp(n, "job_id") == 0) ||
                      ((f->since || f->until) && strcmp(n, "t") == 0) ||
                      (f->container && (strcmp(n, "container") == 0 || strcmp(n, "container_tag") == 0));
        }
    }
    size_t col[STORE_NCOLS], ncol = 0;
    struct store_buf q = {0};
    store_cat(&q, "SELECT ");
    for (size_t i = 0; i < STORE_NCOLS; i++)
        if (use[i]) {
            store_cat(&q, "%s, ", store_cols[i].name);
            col[ncol++] = i;
        }
    struct np_sval p[2 * STORE_MAXP];
    size_t np = 0;
    store_cat(&q, "id FROM runs WHERE (1 = 1");
    store_where(&q, a, p, &np);
    store_cat(&q, ") OR (1 = 1");
    store_where(&q, b, p, &np);
    store_cat(&q, ")"); /* no order: one pass over the table, each row once */
    char *sql = store_done(&q);
    if (!sql)
        return np_error_set(err, NP_E_NOMEM, s->where, 0, 0, "out of memory");
    struct store_sides sd = {{a, b}, fn, ctx};
    struct store_sel sel;
    memset(&sel, 0, sizeof sel);
    sel.fn = store_sides_row;
    sel.ctx = &sd;
    sel.col = col;
    sel.ncol = ncol;
    enum np_sval_type types[STORE_NCOLS + 1];
    for (size_t i = 0; i < ncol; i++)
        types[i] = store_cols[col[i]].type;
    types[ncol] = NP_SV_INT;
    struct np_sval none;
    memset(&none, 0, sizeof none);
    for (size_t i = 0; i < STORE_NCOLS; i++)
        store_from_col(&sel.rec, i, &none, NULL, NULL);
    enum np_status st = s->be->exec(s->h, sql, 0, p, np, types, ncol + 1, store_sel_row, &sel, NULL, err);
    free(sql);
    free(sel.samples);
    return st != NP_OK ? st : sel.st;
}

enum np_status np_store_runs(const char *loc, const struct np_run *runs, size_t n, const struct np_store_ctx *ctx,
                             size_t counts[3], struct np_error *err)
{
    char def[1024];
    if (!loc) {
        enum np_status st = np_store_default_location(def, sizeof def, err);
        if (st != NP_OK)
            return st;
        loc = def;
    }
    struct np_store *s;
    enum np_status st = np_store_open(loc, &s, err);
    if (st == NP_OK)
        st = np_store_begin(s, err);
    for (size_t i = 0; st == NP_OK && i < n; i++) {
        struct np_store_rec rec;
        enum np_store_outcome oc = NP_STORE_SAME;
        if (!np_store_identified(&runs[i]))
            continue;
        st = np_store_rec_from_run(&runs[i], ctx, &rec);
        if (st != NP_OK)
            np_error_set(err, st, "--store", 0, 0, "out of memory");
        else
            st = np_store_put(s, &rec, &oc, err);
        np_store_rec_clear(&rec);
        if (st == NP_OK && counts)
            counts[oc]++;
    }
    if (st == NP_OK)
        st = np_store_commit(s, err);
    np_store_close(s); /* rolls back what was not committed */
    return st;
}
