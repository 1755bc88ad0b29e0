/* nodes.h - the nodes of a partition and their states, for launch's preflight: does a job that Slurm's
 * --test-only refuses fit the partition's configured nodes (it then waits PENDING, ReqNodeNotAvail, until
 * enough of them are back from DOWN/DRAIN) or can it never run (too few nodes with the GPUs it asks for)?
 * Read from `sinfo -h -o NP_SLURM_SINFO_NODES` (CLI) or GET /slurm/<v>/nodes (slurmrestd).
 */
#ifndef NEMOPERF_LAUNCH_NODES_H
#define NEMOPERF_LAUNCH_NODES_H

#include <stddef.h>

#include "nemoperf/launch/config.h"
#include "nemoperf/util/error.h"

/* Nodes alike: sinfo's grouped lines, or one node of a REST reply. */
struct np_node_group {
    long count;       /* nodes in the group */
    long gpus;        /* GPUs per node (gres gpu), -1 unknown, 0 none */
    int usable;       /* 0: DOWN, DRAIN(ED/ING), FAIL, FUTURE, INVAL, UNKNOWN or not responding */
    char state[48];   /* Slurm's words: "drained", "down*", "idle+drain" */
    char names[256];  /* "n[1-2]" */
    char reason[160]; /* why an admin set it so, "" when none */
};

/* Owned array; free with np_nodes_free. */
struct np_nodes {
    struct np_node_group *g;
    size_t n;
};

void np_nodes_free(struct np_nodes *nodes); /* NULL-safe; leaves it empty */

/* sinfo text (count|state|gres|nodes|reason lines) into out (reset first).  0 ok, -1 out of memory;
 * lines of another shape are skipped. */
int np_nodes_from_sinfo(const char *text, struct np_nodes *out);

/* A GET nodes reply, keeping the nodes of partition (NULL or "": all).  v0.0.38/39: "state" a word
 * and "state_flags"; v0.0.40+: "state" an array.  NP_E_PARSE/NP_E_SLURM/NP_E_NOMEM with err. */
enum np_status np_nodes_from_rest(long http, const char *body, size_t len, const char *partition,
                                  struct np_nodes *out, struct np_error *err);

/* GPUs per node in a gres string ("gpu:8", "gpu:h100:8(S:0-1),shard:4"): the sum of the gpu entries,
 * -1 when none can be read. */
long np_nodes_gres_gpus(const char *gres);

enum np_nodes_fit {
    NP_NODES_FIT = 0,     /* enough usable nodes: whatever Slurm refuses, it is not their state */
    NP_NODES_UNAVAILABLE, /* enough configured nodes, too few usable: Slurm queues the job PENDING */
    NP_NODES_NEVER        /* too few nodes with the GPUs per node the job asks for, whatever their state */
};

/* Does job c fit the nodes of partition (its name, for the message)?  buf (size bytes) says how
 * when it does not: the nodes down or drained with their state and reason, or the shortage. */
enum np_nodes_fit np_nodes_fit(const struct np_nodes *nodes, const char *partition,
                               const struct np_launch_config *c, char *buf, size_t size);

#endif
