/* nccltests.h - RECIPE=nccl-tests as data: NVIDIA's nccl-tests microbenchmark recipe and the fabric check plan.
 *
 * Owned by src/model/nccltests.c: the container, the five binaries with the flags and environment NVIDIA's own
 * microbenchmark recipe runs them with (dgxc-benchmarking nccl/config/ testset.toml and systems.toml, cited there), the systems (GPUs per
 * node, NCCL environment), and the plan of a check: FABRIC_CHECK=full (every collective over all nodes) or
 * bisect (the intra-node test on every node alone, then the inter-node test on node pairs in rounds of disjoint
 * pairs).  Read by launch/config.c (validation), job/nccltests.c (the batch script), setup (the image) and
 * parse/fabric_check.c (which step tested which nodes).  Nothing here allocates except np_ncclt_plan.
 */
#ifndef NEMOPERF_MODEL_NCCLTESTS_H
#define NEMOPERF_MODEL_NCCLTESTS_H

#include <stddef.h>

#include "nemoperf/model/recipe.h"

#define NP_NCCLT_RECIPE "nccl-tests"          /* RECIPE= and the run's "kind"/"workload" */
#define NP_NCCLT_DEFAULT_PATH "/usr/local/bin" /* NCCL_TESTS_PATH: where the image keeps the binaries */
#define NP_NCCLT_SUFFIX "_mpi"                 /* the MPI builds NVIDIA's recipe runs: all_reduce_perf_mpi */
#define NP_NCCLT_NBINARIES 5
#define NP_NCCLT_MAX_NODES 1024                /* FABRIC_CHECK=bisect: nodes of one check */
#define NP_NCCLT_MAX_STEPS 4096                /* steps of one check: what parse reads of a steps file */
#define NP_NCCLT_OUT_DIR "nccl-tests"          /* <run>/nccl-tests/<step>.out, steps.json */
#define NP_NCCLT_STEPS_FILE "nccl-tests/steps.json"

/* One nccl-tests binary as NVIDIA's recipe runs it. */
struct np_ncclt_binary {
    const char *collective;  /* "all_reduce" (NCCL_TESTS= names it) */
    const char *binary;      /* "all_reduce_perf" */
    const char *dtype;       /* -d: "float", or "uint8" (alltoall, sendrecv) */
    const char *env_name;    /* the first point of NVIDIA's environment sweep ("env1"), or NULL */
    const char *env_value;
};

/* A system of NVIDIA's recipe (GPU_TYPE). */
struct np_ncclt_system {
    const char *gpu_type;    /* "h100" */
    int gpus_per_node;       /* sbatch --ntasks-per-node: one task per GPU */
    const char *env[3][2];   /* NCCL environment of the system, {NULL, NULL}-terminated */
};

enum np_ncclt_check { NP_NCCLT_FULL = 0, NP_NCCLT_BISECT };
enum np_ncclt_pairs { NP_NCCLT_PAIRS_RING = 0, NP_NCCLT_PAIRS_ALL };
enum np_ncclt_scope { NP_NCCLT_INTRA = 0, NP_NCCLT_INTER, NP_NCCLT_ALL };

/* What a launch chose (launch/config.c fills it; np_launch_config.ncclt). */
struct np_ncclt_choice {
    enum np_ncclt_check check;
    enum np_ncclt_pairs pairs;
    unsigned collectives;    /* bit i: np_ncclt_binaries()[i] */
    char path[512];          /* NCCL_TESTS_PATH inside the container, absolute, no trailing slash */
};

/* One srun step of a check: a binary over some nodes (positions 0..nnodes-1 of the allocation, in the order
 * `scontrol show hostnames` lists them).  Steps of one round run at the same time on disjoint nodes. */
struct np_ncclt_step {
    int round;               /* 0, 1, ... */
    int binary;              /* index into np_ncclt_binaries() */
    enum np_ncclt_scope scope;
    int node[2];             /* intra: node[0]; inter: the pair; all: unused */
};

struct np_ncclt_plan {
    struct np_ncclt_step *steps; /* owned */
    size_t n;
    int rounds;
};

/* The five binaries, in NVIDIA's testset order; *n gets 5. */
const struct np_ncclt_binary *np_ncclt_binaries(size_t *n);
/* Index of a collective ("all_reduce", or its binary "all_reduce_perf"); -1 when none. */
int np_ncclt_binary_find(const char *name);
/* The flags every binary runs with (NVIDIA's common sweep args), NULL-terminated; -d is the binary's. */
const char *const *np_ncclt_args(void);
/* The systems; *n gets the count.  np_ncclt_system_find: any case, NULL when none. */
const struct np_ncclt_system *np_ncclt_systems(size_t *n);
const struct np_ncclt_system *np_ncclt_system_find(const char *gpu_type);

/* The recipe a launch of RECIPE=nccl-tests resolves to (its image, one model "nccl"); static, never freed. */
const struct np_recipe *np_ncclt_recipe(void);
/* 1 when m is that recipe's model. */
int np_ncclt_is(const struct np_model *m);

/* "full"/"bisect", "ring"/"all", "intra"/"inter"/"all". */
const char *np_ncclt_check_name(enum np_ncclt_check c);
const char *np_ncclt_pairs_name(enum np_ncclt_pairs p);
const char *np_ncclt_scope_name(enum np_ncclt_scope s);

/* The steps of a check over nnodes nodes (collectives: the chosen bits).  full: each collective over all nodes
 * (scope all; intra on one node), one round each, one after the other.  bisect: round 0 every node alone
 * (scope intra) for each collective, then the pairs (ring: node i with i+1, the last with the first; all: every
 * pair, the circle method's nnodes-1 rounds for an even count) grouped in rounds of disjoint pairs.
 * NP_E_INVALID for nnodes < 1 or > NP_NCCLT_MAX_NODES, NP_E_NOMEM; free with np_ncclt_plan_free. */
enum np_status np_ncclt_plan(const struct np_ncclt_choice *ch, int nnodes, struct np_ncclt_plan *out);
void np_ncclt_plan_free(struct np_ncclt_plan *p);
/* A planned step's label by node position (1-based), as --dry-run shows the plan: "all_reduce_perf-node3",
 * "all_reduce_perf-node2-node4", "all_reduce_perf-all".  The job names its files by host name instead. */
void np_ncclt_step_label(const struct np_ncclt_step *s, char *buf, size_t size);

#endif
