/* drift.h - how a run differs from NVIDIA's published row and settings.
 *
 * From the run's manifest (nemoperf.json: what was launched), its log (the global batch size the
 * steps print, NCCL's communicator sizes) and the job's vboost output, against the published row
 * and the recipe: parallelism, GBS/MBS, GPUs and GPUs per node, container, run kind, vboost, and the
 * variables the job exports that the user had set to another value (the manifest's "env_user").
 * Nothing is allocated.
 */
#ifndef NEMOPERF_PARSE_DRIFT_H
#define NEMOPERF_PARSE_DRIFT_H

#include <stddef.h>

#include "nemoperf/parse/run.h"

#define NP_DRIFT_MAX 32

struct np_drift_item {
    char what[48];       /* "TP", "GBS", "container", "vboost", "kind", "env NCCL_NVLS_ENABLE" ... */
    char published[96];  /* NVIDIA's value ("" when it has none) */
    char run[160];       /* the run's */
};

struct np_drift {
    size_t n;
    struct np_drift_item item[NP_DRIFT_MAX];
    int manifest;        /* 1: a manifest was read */
};

/* r: the analysed run (its row, recipe, identity, dir); logged_gbs: the global batch size its
 * step lines print (-1 unknown); nccl_world: the largest NCCL communicator (0 unknown).
 * Returns d->n. */
size_t np_drift_find(const struct np_run *r, long logged_gbs, int nccl_world, struct np_drift *d);

/* "TP 2 (published 1); container nvcr.io#nvidia/nemo:25.04 (published ...)" into buf ("" none). */
void np_drift_text(const struct np_drift *d, char *buf, size_t size);

#endif
