/* diagnose.h - from FAIL to why: the diagnostics of every run of a parse (nemoperf-parse --nccl).
 *
 * For each run with a log: the NCCL/RCCL breakdown and network facts (nccl.h), step anomalies
 * (anomaly.h), drift from the published row (drift.h), straggler-detector reports (straggler.h), the
 * profile run's .nsys-rep files; the warnings and the slowest ranks go into the run's note.  np_diag_runs() returns a new array, freed by np_diag_free().
 */
#ifndef NEMOPERF_PARSE_DIAGNOSE_H
#define NEMOPERF_PARSE_DIAGNOSE_H

#include <stddef.h>

#include "nemoperf/parse/anomaly.h"
#include "nemoperf/parse/drift.h"
#include "nemoperf/parse/nccl.h"
#include "nemoperf/parse/run.h"

struct np_diag {
    struct np_nccl *nccl;     /* NULL: no log file (or it could not be read: error) */
    char error[300];          /* why the log could not be read, "" */
    size_t steps;             /* step lines of the log's last run */
    long logged_gbs;          /* the steps' global_batch_size, -1 unknown */
    struct np_anomaly anomaly;
    int nanomalies;
    struct np_drift drift;
    char **nsys;              /* .nsys-rep files of the run's folder (NULL-terminated, sorted), or NULL */
    int *nsys_rank;           /* per file: the rank of its process (profile_<pid>) from NCCL's init lines,
                                 -1 unknown, -2 a process of several ranks; NULL when none */
    size_t nnet_warnings;     /* NCCL network warnings (what --strict fails on) */
    int gpus_per_node;        /* NCCL's ranks per node (or the row's) for straggler ranks' nodes, 0 unknown */
};

/* Diagnose every run of res (one np_diag per run, in order) and append the findings to each run's
 * note.  NP_E_NOMEM on allocation failure (*out NULL). */
enum np_status np_diag_runs(struct np_parse_result *res, struct np_diag **out);
void np_diag_free(struct np_diag *d, size_t n);

#endif
