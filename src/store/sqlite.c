/* sqlite.c - the results store's SQLite backend (libsqlite3), the embedded default.
 *
 * One connection, prepared statements kept for the life of the handle (store.c hands the same SQL
 * strings again and again), $N parameters rewritten to SQLite's ?N, WAL journal and a busy timeout so
 * that concurrent writers wait for each other (NEMOPERF_DB_TIMEOUT seconds, default 600).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "nemoperf/store/backend.h"

#define SQLITE_CACHE 16

struct sqlite_h {
    sqlite3 *db;
    char path[1024];
    struct {
        const char *sql; /* the caller's string (compared by address: store.c's constants) */
        sqlite3_stmt *st;
    } cache[SQLITE_CACHE];
    size_t ncache;
};

static enum np_status sqlite_fail(struct sqlite_h *h, int rc, const char *what, struct np_error *err)
{
    int base = rc & 0xff;
    const char *msg = h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc);
    const char *hint = base == SQLITE_FULL       ? " (the disk is full: free space and store again)"
                       : base == SQLITE_NOTADB   ? " (a corrupt file, or not a nemoperf store)"
                       : base == SQLITE_CORRUPT  ? " (the file is damaged: restore it from a copy)"
                       : base == SQLITE_BUSY     ? " (another store held the lock for NEMOPERF_DB_TIMEOUT seconds)"
                       : base == SQLITE_READONLY ? " (no write permission)"
                                                 : "";
    return np_error_set(err, NP_E_IO, h->path, 0, 0, "%s: %s%s", what, msg, hint);
}

/* "$12" -> "?12": a new string, caller frees. */
static char *sqlite_rewrite(const char *sql)
{
    char *out = strdup(sql);
    if (out)
        for (char *p = out; *p; p++)
            if (*p == '$' && p[1] >= '0' && p[1] <= '9')
                *p = '?';
    return out;
}

static sqlite3_stmt *sqlite_stmt(struct sqlite_h *h, const char *sql, int keep, int *rc)
{
    for (size_t i = 0; keep && i < h->ncache; i++)
        if (h->cache[i].sql == sql) {
            sqlite3_reset(h->cache[i].st);
            sqlite3_clear_bindings(h->cache[i].st);
            return h->cache[i].st;
        }
    char *q = sqlite_rewrite(sql);
    sqlite3_stmt *st = NULL;
    *rc = q ? sqlite3_prepare_v2(h->db, q, -1, &st, NULL) : SQLITE_NOMEM;
    free(q);
    if (*rc != SQLITE_OK)
        return NULL;
    if (keep && h->ncache < SQLITE_CACHE) {
        h->cache[h->ncache].sql = sql;
        h->cache[h->ncache++].st = st;
    }
    return st;
}

static int sqlite_cached(const struct sqlite_h *h, const sqlite3_stmt *st)
{
    for (size_t i = 0; i < h->ncache; i++)
        if (h->cache[i].st == st)
            return 1;
    return 0;
}

static enum np_status sqlite_exec(void *hv, const char *sql, int keep, const struct np_sval *params, size_t nparams,
                                  const enum np_sval_type *types, size_t ncol, np_sbe_row_fn row, void *ctx,
                                  long long *changes, struct np_error *err)
{
    struct sqlite_h *h = hv;
    int rc = SQLITE_OK;
    if (!nparams && !row && strchr(sql, ';')) { /* a script: DDL, BEGIN/COMMIT */
        char *msg = NULL;
        rc = sqlite3_exec(h->db, sql, NULL, NULL, &msg);
        sqlite3_free(msg);
        if (rc != SQLITE_OK)
            return sqlite_fail(h, rc, "cannot update the store", err);
        if (changes)
            *changes = sqlite3_changes(h->db);
        return NP_OK;
    }
    sqlite3_stmt *st = sqlite_stmt(h, sql, keep, &rc);
    if (!st)
        return sqlite_fail(h, rc, "cannot prepare a statement", err);
    for (size_t i = 0; i < nparams && rc == SQLITE_OK; i++) {
        const struct np_sval *v = &params[i];
        int k = (int)i + 1;
        rc = v->type == NP_SV_INT    ? sqlite3_bind_int64(st, k, v->i)
             : v->type == NP_SV_REAL ? (v->r == v->r ? sqlite3_bind_double(st, k, v->r) : sqlite3_bind_null(st, k))
             : v->type == NP_SV_TEXT ? sqlite3_bind_text(st, k, v->s, -1, SQLITE_STATIC)
             : v->type == NP_SV_BLOB ? sqlite3_bind_blob(st, k, v->s, (int)v->len, SQLITE_STATIC)
                                     : sqlite3_bind_null(st, k);
    }
    enum np_status out = NP_OK;
    if (rc != SQLITE_OK)
        out = sqlite_fail(h, rc, "cannot bind a value", err);
    struct np_sval cols[64];
    while (out == NP_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!row)
            continue;
        for (size_t c = 0; c < ncol && c < 64; c++) {
            struct np_sval *v = &cols[c];
            int k = (int)c;
            memset(v, 0, sizeof *v);
            if (sqlite3_column_type(st, k) == SQLITE_NULL)
                continue;
            v->type = types[c];
            if (types[c] == NP_SV_INT)
                v->i = sqlite3_column_int64(st, k);
            else if (types[c] == NP_SV_REAL)
                v->r = sqlite3_column_double(st, k);
            else if (types[c] == NP_SV_TEXT)
                v->s = (const char *)sqlite3_column_text(st, k);
            else if (types[c] == NP_SV_BLOB) {
                v->s = sqlite3_column_blob(st, k);
                v->len = (size_t)sqlite3_column_bytes(st, k);
            }
            if ((v->type == NP_SV_TEXT || v->type == NP_SV_BLOB) && !v->s)
                v->type = NP_SV_NULL;
        }
        if (row(ctx, cols, ncol)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (out == NP_OK && rc != SQLITE_DONE)
        out = sqlite_fail(h, rc, "cannot run a statement", err);
    if (out == NP_OK && changes)
        *changes = sqlite3_changes(h->db);
    sqlite3_reset(st);
    if (!sqlite_cached(h, st))
        sqlite3_finalize(st);
    return out;
}

static void sqlite_close(void *hv)
{
    struct sqlite_h *h = hv;
    if (!h)
        return;
    for (size_t i = 0; i < h->ncache; i++)
        sqlite3_finalize(h->cache[i].st);
    if (h->db) {
        if (!sqlite3_get_autocommit(h->db))
            sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(h->db);
    }
    free(h);
}

static const struct np_store_be sqlite_be = {
    "sqlite", "INTEGER PRIMARY KEY", "BEGIN IMMEDIATE", sqlite_exec, sqlite_close,
};

enum np_status np_store_sqlite_open(const char *path, void **hv, const struct np_store_be **be, struct np_error *err)
{
    struct sqlite_h *h = calloc(1, sizeof *h);
    if (!h)
        return np_error_set(err, NP_E_NOMEM, path, 0, 0, "out of memory");
    snprintf(h->path, sizeof h->path, "%s", path);
    int rc = sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        enum np_status st = sqlite_fail(h, rc, "cannot open the results store", err);
        sqlite_close(h);
        return st;
    }
    const char *t = getenv("NEMOPERF_DB_TIMEOUT");
    long secs = t && *t ? strtol(t, NULL, 10) : 600;
    sqlite3_busy_timeout(h->db, (int)(secs < 0 ? 0 : secs > 86400 ? 86400000 : secs * 1000));
    /* WAL: readers do not wait for a writer; synchronous NORMAL is durable at each commit in WAL mode
     * against a process crash (the killed store), which is what a results store needs */
    char *msg = NULL;
    rc = sqlite3_exec(h->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL,
                      NULL, &msg);
    sqlite3_free(msg);
    if (rc != SQLITE_OK) {
        enum np_status st = sqlite_fail(h, rc, "cannot open the results store", err);
        sqlite_close(h);
        return st;
    }
    *hv = h;
    *be = &sqlite_be;
    return NP_OK;
}
