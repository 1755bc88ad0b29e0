/* store.h - the results store: every run nemoperf-parse reports, remembered (SQLite or PostgreSQL).
 *
 * One small interface over two backends (store/sqlite.c, store/pg.c), chosen by the location:
 * "postgresql://..." / "postgres://..." is PostgreSQL, anything else a SQLite file (refused on a network
 * file system: NFS, Lustre, ... lock badly).  The schema is versioned (table nemoperf_meta) and migrated
 * on open; a store newer than this nemoperf is refused.  np_store_begin .. np_store_commit is one
 * transaction: a store killed before the commit leaves the previous state.  Idempotent: a run is keyed
 * by (cluster, folder, log when there is no manifest); storing it again adds nothing, and updates it
 * when something changed (more steps, a final state).  Passwords in a location never reach a message
 * (np_store_redact).
 */
#ifndef NEMOPERF_STORE_H
#define NEMOPERF_STORE_H

#include <stddef.h>

#include "nemoperf/parse/run.h"
#include "nemoperf/util/error.h"

#define NP_STORE_SCHEMA 5 /* the schema version this nemoperf writes */

/* One stored run: fixed-size text ("" unknown), numbers NAN / -1 unknown. */
struct np_store_rec {
    long long id;                 /* the store's row id (0 before storing) */
    char run_key[1200];
    char config[320];             /* "llama3.1 8b pretrain bf16 h100x8 seq8192 gbs128", the unit of comparison */
    char config_hash[17];         /* FNV-1a of the resolved configuration (config plus parallelism) */
    char kind[16];                /* the run's kind: "benchmark", "profile", "nccl-trace", "checkpoint-save", ... */
    char family[12];              /* "nemo", "mbridge", "automodel", "dfm" (schema 2) */
    char workload[12];            /* "synthetic", "" a real job (schema 2) */
    char recipe[64], size[64], dtype[8], gpu[16], task[12], variant[16], system[32];
    int gpus, seq_len, gbs, nodes, attempt;
    char cluster[64], job_id[32];
    char started[32], ended[32];  /* ISO 8601 UTC */
    long long t;                  /* unix seconds: the end (the log's last write), for ordering and since/until */
    char container[256];          /* the image the manifest names */
    char container_tag[64];       /* what follows its last ':' (or the NeMo container version) */
    char versions[128];           /* framework versions the manifest says ("nemo 25.04") */
    char status[20], verdict[16];
    long steps, window_first, window_last;
    double step_time_s, step_stdev_s, tokens_per_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu_percent;
    double w_per_gpu, j_per_token; /* energy: the steady window's mean W/GPU and J/token, NAN unknown (schema 3) */
    double busbw_gbs;             /* an nccl-tests step: its peak bus bandwidth, GB/s (schema 4); NAN other runs */
    double tput;                  /* what --history counts the run by: np_store_rec_tput when np_store_rec_counts,
                                   * else NAN (schema 5); np_store_put writes it from the other fields, whatever
                                   * the caller set */
    double *samples;              /* the window's step times; owned (np_store_rec_clear) */
    size_t nsamples;
    char nemoperf_version[16];
    char path[1024];
    long long stored_at;
};

/* What np_store_rec_from_run can add that the run does not hold. */
struct np_store_ctx {
    const char *cluster;          /* NEMOPERF_CLUSTER, else the manifest's, else this host's name; NULL: default */
};

/* Fill rec from an analysed run (reads the run's nemoperf.json for the cluster, image and nodes, and the
 * log's modification time).  rec->samples is a copy.  NP_E_NOMEM. */
enum np_status np_store_rec_from_run(const struct np_run *run, const struct np_store_ctx *ctx,
                                     struct np_store_rec *rec);
/* The throughput compared: an nccl-tests step's peak bus bandwidth, else tokens/s/GPU, else steps/s (1 / step
 * time); NAN unknown. */
double np_store_rec_tput(const struct np_store_rec *rec);
/* 1 when the run counts in --history's series and --compare: status ok or synthetic, with a finite throughput. */
int np_store_rec_counts(const struct np_store_rec *rec);
void np_store_rec_clear(struct np_store_rec *rec); /* frees samples; NULL-safe */

struct np_store;

/* NEMOPERF_DB, else $XDG_DATA_HOME/nemoperf/results.db, else ~/.local/share/nemoperf/results.db
 * (into buf; NP_E_INVALID with err when there is no home folder). */
enum np_status np_store_default_location(char *buf, size_t size, struct np_error *err);

/* Open (creating and migrating) the store at loc.  *out is a new store, np_store_close frees it.
 * NP_E_INVALID: a SQLite file on a network file system, a store of a newer schema, a bad location;
 * NP_E_IO: cannot open / a full disk / a corrupt file (err says which). */
enum np_status np_store_open(const char *loc, struct np_store **out, struct np_error *err);
void np_store_close(struct np_store *s); /* NULL-safe; an open transaction is rolled back */
const char *np_store_backend_name(const struct np_store *s); /* "sqlite", "postgresql" */

/* loc with any password replaced by "***" (postgresql://u:***@host/db, password=*** in a key=value list). */
void np_store_redact(const char *loc, char *buf, size_t size);

/* The file system check of a SQLite file's folder: NP_E_INVALID with err when magic names a network file
 * system (NFS, Lustre, CIFS/SMB, GPFS, BeeGFS, 9p, FUSE...).  NEMOPERF_TEST_FS_MAGIC (hex) stands in for
 * statfs's answer in tests (no network file system here). */
enum np_status np_store_check_fs(const char *path, struct np_error *err);

enum np_store_outcome { NP_STORE_ADDED, NP_STORE_UPDATED, NP_STORE_SAME };

/* One transaction: begin, any number of puts, commit (or rollback). */
enum np_status np_store_begin(struct np_store *s, struct np_error *err);
enum np_status np_store_put(struct np_store *s, const struct np_store_rec *rec, enum np_store_outcome *outcome,
                            struct np_error *err);
enum np_status np_store_commit(struct np_store *s, struct np_error *err);
void np_store_rollback(struct np_store *s);

/* Which runs: every field NULL/empty/0 matches all.  Values come from selectors "key=value[,value...]". */
#define NP_STORE_FILTER_MAX 16
struct np_store_filter {
    const char *recipe, *size, *dtype, *gpu, *container, *cluster, *kind, *config, *status;
    const char *family;           /* the recipe family: "nemo", "mbridge", "automodel", "dfm" */
    int gpus;
    long long since, until;       /* unix seconds, 0 none (until is exclusive) */
    const char *jobs[NP_STORE_FILTER_MAX];
    size_t njobs;
    long long ids[NP_STORE_FILTER_MAX]; /* the runs' ids (np_store_rec.id; set by a caller, not a selector) */
    size_t nids;
};

/* Parse "key=value,key=value,value" (a bare value adds to the key before it; "db:" prefix allowed) into f,
 * whose strings point into buf (a copy of sel the caller keeps while f is used).  NP_E_USAGE with err
 * naming the key. */
enum np_status np_store_filter_parse(const char *sel, char *buf, size_t size, struct np_store_filter *f,
                                     struct np_error *err);

/* The columns np_store_select reads (the rest of the record empty / unknown; id always): a million rows, each
 * column read costs. */
enum np_store_set {
    NP_STORE_ALL,       /* every column */
    NP_STORE_LIGHT,     /* all but the samples and the path */
    NP_STORE_STATS,     /* what --compare reads: config, kind, status, t, container and its tag, step time,
                         * tokens/s/GPU, samples */
    NP_STORE_LIST,      /* what --history lists (table, CSV, markdown): config, family, kind, cluster, job id,
                         * ended, container and its tag, status, step time, tokens/s/GPU, MFU, busbw */
    NP_STORE_LIST_JSON, /* and its JSON: NP_STORE_LIST with the configuration's hash, GPUs, verdict, steps and
                         * the nemoperf version */
    NP_STORE_PATH,      /* the log's path alone (--compare's look for a run folder with a system snapshot) */
    NP_STORE_NSETS
};

/* Each matching run, in (config, t, id) order when by_config, else (t, id) order, with the columns of set;
 * rec borrowed for the call (its samples too).  A non-OK return of fn stops and is returned. */
typedef enum np_status (*np_store_row_fn)(void *ctx, const struct np_store_rec *rec);
enum np_status np_store_select(struct np_store *s, const struct np_store_filter *f, int by_config,
                               enum np_store_set set, np_store_row_fn fn, void *ctx, struct np_error *err);
enum np_status np_store_count(struct np_store *s, long long *n, struct np_error *err);

/* --history's series: each run f selects that counts (status ok or synthetic, with a throughput) in (config, t, id)
 * order, as five values read from one index that holds them (runs_series: a million rows and no table read):
 * the configuration, the time, the id, the throughput (the stored tput: np_store_rec_tput's rule, peak bus
 * bandwidth, else tokens/s/GPU, else steps/s) and the container (its tag, else the image).  Strings borrowed for
 * the call; a non-OK return of fn stops. */
struct np_store_point {
    const char *config, *container;
    long long id, t;
    double x;
};
typedef enum np_status (*np_store_point_fn)(void *ctx, const struct np_store_point *pt);
enum np_status np_store_series(struct np_store *s, const struct np_store_filter *f, np_store_point_fn fn, void *ctx,
                               struct np_error *err);

/* Both sides of a --compare in one pass over the store: each run a or b selects, once, with the sides it is on
 * (bit 0 a, bit 1 b), in no particular order; rec (borrowed for the call) holds NP_STORE_STATS' columns and those
 * the filters read.  A non-OK return of fn stops and is returned. */
typedef enum np_status (*np_store_side_fn)(void *ctx, const struct np_store_rec *rec, unsigned sides);
enum np_status np_store_select_sides(struct np_store *s, const struct np_store_filter *a,
                                     const struct np_store_filter *b, np_store_side_fn fn, void *ctx,
                                     struct np_error *err);

/* A selector that matched nothing: the first of its values (recipe size dtype gpu container cluster kind family
 * config status, in that order) that no stored run has, with the stored value nearest to it (edit distance) as
 * "key=value" into hint ("" when every value is stored or nothing is near).  NP_E_IO as np_store_select. */
enum np_status np_store_nearest(struct np_store *s, const struct np_store_filter *f, char *hint, size_t size,
                                struct np_error *err);

/* 1 when the run is identified enough to be stored (its recipe known and its status not unidentified): an
 * unidentified run would be stored under a configuration of question marks that nothing can be compared with. */
int np_store_identified(const struct np_run *run);

/* Store runs[0..n) in one transaction at loc (NULL: np_store_default_location): what launch --wait stores
 * (unidentified runs left out, np_store_identified).  counts (may be NULL): added, updated, unchanged.  Errors as np_store_open and np_store_put; on any error
 * nothing is stored. */
enum np_status np_store_runs(const char *loc, const struct np_run *runs, size_t n, const struct np_store_ctx *ctx,
                             size_t counts[3], struct np_error *err);

#endif
