/* pg.c - the results store's PostgreSQL backend (libpq), for a team that shares results across
 * clusters and login nodes.
 *
 * One connection; store.c's SQL prepared once per connection (named statements keyed by the SQL
 * string's address), parameters sent as text (step-time samples as binary bytea), results read as
 * text and typed here.  The password of the connection never reaches a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nemoperf/store/backend.h"
#include "nemoperf/store/pg_dyn.h"
#include "nemoperf/util/redact.h"

#define PG_CACHE 16

struct pg_h {
    PGconn *conn;
    char *conninfo;              /* what the user gave: the redactor masks what it holds (util/redact.c) */
    const char *cache[PG_CACHE]; /* SQL strings prepared as "np0".."np15" */
    size_t ncache;
};

/* Fill err from the connection's message with any password in it replaced. */
static enum np_status pg_fail(struct pg_h *h, const char *what, const char *msg, struct np_error *err)
{
    char text[900];
    snprintf(text, sizeof text, "%s", msg ? msg : "unknown error");
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
        text[--n] = '\0';
    for (char *nl = strchr(text, '\n'); nl; nl = strchr(nl, '\n'))
        *nl = ' ';
    /* what libpq took for the password (also from PGPASSWORD or a password file), then the one redactor on
     * what the string the user gave holds, whether libpq could parse it or not (util/redact.c) */
    PQconninfoOption *opts = h && h->conn ? PQconninfo(h->conn) : NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
            for (char *p = strstr(text, o->val); p; p = strstr(p + 3, o->val)) {
                size_t l = strlen(o->val);
                memmove(p + 3, p + l, strlen(p + l) + 1);
                memcpy(p, "***", 3);
            }
    PQconninfoFree(opts);
    char shown[sizeof text];
    np_redact(text, h ? h->conninfo : NULL, shown, sizeof shown);
    return np_error_set(err, NP_E_IO, "postgresql", 0, 0, "%s: %s", what, shown);
}

static const char *pg_prepared(struct pg_h *h, const char *sql, size_t nparams, char *name, size_t size,
                               struct np_error *err, enum np_status *st)
{
    *st = NP_OK;
    for (size_t i = 0; i < h->ncache; i++)
        if (h->cache[i] == sql) {
            snprintf(name, size, "np%zu", i);
            return name;
        }
    if (h->ncache == PG_CACHE)
        return NULL;
    snprintf(name, size, "np%zu", h->ncache);
    PGresult *r = PQprepare(h->conn, name, sql, (int)nparams, NULL);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        *st = pg_fail(h, "cannot prepare a statement", PQresultErrorMessage(r), err);
        PQclear(r);
        return NULL;
    }
    PQclear(r);
    h->cache[h->ncache++] = sql;
    return name;
}

static enum np_status pg_exec(void *hv, const char *sql, int keep, const struct np_sval *params, size_t nparams,
                              const enum np_sval_type *types, size_t ncol, np_sbe_row_fn row, void *ctx,
                              long long *changes, struct np_error *err)
{
    struct pg_h *h = hv;
    PGresult *r;
    if (!nparams && !row && strchr(sql, ';')) {
        r = PQexec(h->conn, sql);
    } else {
        const char *vals[64];
        int lens[64], fmts[64];
        char num[64][32];
        if (nparams > 64)
            return np_error_set(err, NP_E_INTERNAL, "postgresql", 0, 0, "too many parameters");
        for (size_t i = 0; i < nparams; i++) {
            const struct np_sval *v = &params[i];
            fmts[i] = v->type == NP_SV_BLOB;
            lens[i] = v->type == NP_SV_BLOB ? (int)v->len : 0;
            vals[i] = v->type == NP_SV_TEXT || v->type == NP_SV_BLOB ? v->s : v->type == NP_SV_NULL ? NULL : num[i];
            if (v->type == NP_SV_INT)
                snprintf(num[i], sizeof num[i], "%lld", v->i);
            else if (v->type == NP_SV_REAL)
                snprintf(num[i], sizeof num[i], "%.17g", v->r);
        }
        char name[32];
        enum np_status st = NP_OK;
        const char *stmt = keep ? pg_prepared(h, sql, nparams, name, sizeof name, err, &st) : NULL;
        if (st != NP_OK)
            return st;
        r = stmt ? PQexecPrepared(h->conn, stmt, (int)nparams, vals, lens, fmts, 0)
                 : PQexecParams(h->conn, sql, (int)nparams, NULL, vals, lens, fmts, 0);
    }
    ExecStatusType es = PQresultStatus(r);
    if (es != PGRES_COMMAND_OK && es != PGRES_TUPLES_OK) {
        enum np_status st = pg_fail(h, "statement failed", PQresultErrorMessage(r), err);
        PQclear(r);
        return st;
    }
    if (changes) {
        const char *ct = PQcmdTuples(r);
        *changes = ct && *ct ? strtoll(ct, NULL, 10) : 0;
    }
    int nr = row ? PQntuples(r) : 0;
    struct np_sval cols[64];
    for (int i = 0; i < nr; i++) {
        unsigned char *blobs[64];
        size_t nb = 0;
        for (size_t c = 0; c < ncol && c < 64; c++) {
            struct np_sval *v = &cols[c];
            memset(v, 0, sizeof *v);
            if (PQgetisnull(r, i, (int)c))
                continue;
            const char *s = PQgetvalue(r, i, (int)c);
            v->type = types[c];
            if (types[c] == NP_SV_INT)
                v->i = strtoll(s, NULL, 10);
            else if (types[c] == NP_SV_REAL)
                v->r = strtod(s, NULL);
            else if (types[c] == NP_SV_TEXT)
                v->s = s;
            else if (types[c] == NP_SV_BLOB) {
                size_t len = 0;
                unsigned char *b = PQunescapeBytea((const unsigned char *)s, &len);
                if (!b)
                    v->type = NP_SV_NULL;
                else {
                    blobs[nb++] = b;
                    v->s = (const char *)b;
                    v->len = len;
                }
            }
        }
        int stop = row(ctx, cols, ncol);
        for (size_t b = 0; b < nb; b++)
            PQfreemem(blobs[b]);
        if (stop)
            break;
    }
    PQclear(r);
    return NP_OK;
}

static void pg_close(void *hv)
{
    struct pg_h *h = hv;
    if (!h)
        return;
    PQfinish(h->conn);
    free(h->conninfo);
    free(h);
}

static const struct np_store_be pg_be = {
    "postgresql", "BIGSERIAL PRIMARY KEY", "BEGIN", pg_exec, pg_close,
};

enum np_status np_store_pg_open(const char *conninfo, void **hv, const struct np_store_be **be, struct np_error *err)
{
    enum np_status lst = np_pg_load(err);
    if (lst != NP_OK)
        return lst;
    struct pg_h *h = calloc(1, sizeof *h);
    if (!h)
        return np_error_set(err, NP_E_NOMEM, "postgresql", 0, 0, "out of memory");
    if (!(h->conninfo = strdup(conninfo))) {
        free(h);
        return np_error_set(err, NP_E_NOMEM, "postgresql", 0, 0, "out of memory");
    }
    h->conn = PQconnectdb(conninfo);
    if (!h->conn || PQstatus(h->conn) != CONNECTION_OK) {
        enum np_status st =
            pg_fail(h, "cannot connect to the results store", h->conn ? PQerrorMessage(h->conn) : "out of memory", err);
        pg_close(h);
        return st;
    }
    PGresult *r = PQexec(h->conn, "SET client_min_messages = warning");
    PQclear(r);
    *hv = h;
    *be = &pg_be;
    return NP_OK;
}
