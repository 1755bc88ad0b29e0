/* pg_dyn.h - libpq: the PostgreSQL backend of the results store (pg.c), opened on first use (util/dynlib.h).
 *
 * A module calling the library includes this header instead of the library's: its calls go through the
 * table, which np_pg_load fills (the entry points call it first, so that a missing library is an error of
 * their command; a call before it opens the library or exits naming it).  pg_dyn.c defines
 * NP_PG_DYN_TABLE to see the functions' own names.
 */
#ifndef NEMOPERF_STORE_PG_DYN_H
#define NEMOPERF_STORE_PG_DYN_H

#include <libpq-fe.h>

#include "nemoperf/util/dynlib.h"

/* libpq.so.5: the functions nemoperf calls */
#define NP_PG_FUNCS(X) \
    X(PQclear) X(PQcmdTuples) X(PQconnectdb) X(PQconninfo) X(PQconninfoFree) X(PQerrorMessage) X(PQexec) \
    X(PQexecParams) X(PQexecPrepared) X(PQfinish) X(PQfreemem) X(PQgetisnull) X(PQgetvalue) X(PQntuples) \
    X(PQprepare) X(PQresultErrorMessage) X(PQresultStatus) X(PQstatus) X(PQunescapeBytea)
NP_DYNLIB_DECLARE(pg, NP_PG_FUNCS)

/* Open the library (once): NP_E_NOTFOUND with the reason (which library, for what, which package) in err. */
enum np_status np_pg_load(struct np_error *err);

#ifndef NP_PG_DYN_TABLE
#define PQclear (np_pg_fns()->PQclear)
#define PQcmdTuples (np_pg_fns()->PQcmdTuples)
#define PQconnectdb (np_pg_fns()->PQconnectdb)
#define PQconninfo (np_pg_fns()->PQconninfo)
#define PQconninfoFree (np_pg_fns()->PQconninfoFree)
#define PQerrorMessage (np_pg_fns()->PQerrorMessage)
#define PQexec (np_pg_fns()->PQexec)
#define PQexecParams (np_pg_fns()->PQexecParams)
#define PQexecPrepared (np_pg_fns()->PQexecPrepared)
#define PQfinish (np_pg_fns()->PQfinish)
#define PQfreemem (np_pg_fns()->PQfreemem)
#define PQgetisnull (np_pg_fns()->PQgetisnull)
#define PQgetvalue (np_pg_fns()->PQgetvalue)
#define PQntuples (np_pg_fns()->PQntuples)
#define PQprepare (np_pg_fns()->PQprepare)
#define PQresultErrorMessage (np_pg_fns()->PQresultErrorMessage)
#define PQresultStatus (np_pg_fns()->PQresultStatus)
#define PQstatus (np_pg_fns()->PQstatus)
#define PQunescapeBytea (np_pg_fns()->PQunescapeBytea)
#endif

#endif
