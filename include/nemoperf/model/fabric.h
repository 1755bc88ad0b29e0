/* fabric.h - the bus bandwidth an nccl-tests collective should reach on a system, as data with its sources.
 *
 * The table (share/nemoperf/fabric/fabric.tsv, or the user's: NEMOPERF_FABRIC_TABLE=<file>) gives per GPU type
 * the nominal NVLink bandwidth per GPU and network line rate per GPU (datasheets, cited per row) and the
 * fraction of it a healthy system reaches at large messages; np_fabric_expect() answers for one GPU type, scope
 * ("intra": the GPUs of one node over NVLink, "inter"/"all": across nodes over the network) and collective.
 * Ownership: a loaded table is freed by np_fabric_table_free(); expectations are copied out.
 */
#ifndef NEMOPERF_MODEL_FABRIC_H
#define NEMOPERF_MODEL_FABRIC_H

#include <stddef.h>

#include "nemoperf/util/error.h"

struct np_fabric_expectation {
    double gbs;            /* expected busbw at large messages, GB/s (1e9 bytes/s, as nccl-tests prints):
                              nominal_gbs x fraction; np_nccl_verdict PASSes at 90 % of it */
    double nominal_gbs;    /* the bottleneck's nominal rate one way: a GPU's NVLink or NIC, or the node's NICs */
    double fraction;       /* the share of it a healthy system reaches */
    char gpu[32];          /* the table row's GPU type ("h100") */
    char link[32];         /* "nvlink", "network" */
    char source[256];      /* where the nominal rate and the fraction come from */
    char table[512];       /* the table file read */
};

struct np_fabric_table; /* opaque */

/* Load a table: path NULL -> NEMOPERF_FABRIC_TABLE, else the shipped one (np_data_path("fabric")). */
enum np_status np_fabric_table_load(const char *path, struct np_fabric_table **out, struct np_error *err);
void np_fabric_table_free(struct np_fabric_table *t);

/* The expectation for gpu_type (a GPU type of recipes, or a device name as nccl-tests prints it: "NVIDIA H100
 * 80GB HBM3"), scope "intra" | "inter" | "all", collective ("all_reduce_perf" or "all_reduce") and GPUs per node
 * (rows per "node" scale with it; 0: 8).  NP_E_NOTFOUND naming what has no row (err). */
enum np_status np_fabric_expect(const struct np_fabric_table *t, const char *gpu_type, const char *scope,
                                const char *collective, int gpus_per_node, struct np_fabric_expectation *out,
                                struct np_error *err);

#endif
