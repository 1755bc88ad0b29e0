/* fabric_check.h - name the slow node or link of a fabric check (RECIPE=nccl-tests FABRIC_CHECK=bisect|full).
 *
 * Owned by src/parse/fabric_check.c.  Input: the steps of one check, each judged on its own (parse/nccltests.h's
 * verdict against model/fabric.h's expected bus bandwidth): a node alone (scope intra), a node pair (inter), or
 * every node (all).  Output: findings naming what is below the expected bandwidth, each one line, e.g.
 *   "n3: all_reduce intra-node busbw 212 GB/s, expected >= 429 (90 % of 477, H100 NVLink) - slow node"
 *   "n2-n4: all_reduce inter-node busbw 18 GB/s, expected >= 331 (90 % of 368, H100 network) - slow link"
 * A node whose every tested pair is slow (at least two pairs, not every pair of the check) is named as the slow
 * node instead of its links; every pair slow is the network as a whole; #wrong names the step's nodes whatever
 * the bandwidth.  Nothing here reads files except np_fabric_step_judge (one step's output).
 */
#ifndef NEMOPERF_PARSE_FABRIC_CHECK_H
#define NEMOPERF_PARSE_FABRIC_CHECK_H

#include <stddef.h>

#include "nemoperf/model/fabric.h"
#include "nemoperf/parse/nccltests.h"
#include "nemoperf/util/error.h"

/* One step of a check, as judged. */
struct np_fabric_step {
    char name[96];             /* "all_reduce_perf-n2-n4" */
    char collective[24];       /* "all_reduce" */
    char scope[8];             /* "intra", "inter", "all" */
    char host[2][64];          /* intra: host[0]; inter: the pair; all: unused */
    int nnodes;                /* nodes of the step */
    int ran;                   /* 0: no output (the job ended before the step, or it could not start) */
    enum np_nccl_verdict verdict;
    double busbw;              /* peak busbw at the largest sizes, GB/s; NAN none */
    double expected;           /* expected busbw (model/fabric.h), GB/s; NAN none: not judged on bandwidth */
    long long wrong;           /* #wrong total (and out-of-bounds values), 0 none */
    char label[80];            /* what the expectation is of: "H100 NVLink", "H100 network" */
};

enum np_fabric_kind {
    NP_FABRIC_SLOW_NODE = 0,   /* a node alone below expected */
    NP_FABRIC_SLOW_NODE_NET,   /* every pair with a node below expected */
    NP_FABRIC_SLOW_LINK,       /* one pair below expected */
    NP_FABRIC_SLOW_NETWORK,    /* every pair below expected */
    NP_FABRIC_SLOW_ALL,        /* a step over all nodes below expected */
    NP_FABRIC_DATA_ERROR,      /* #wrong != 0 */
    NP_FABRIC_NOT_RUN          /* no output */
};

struct np_fabric_finding {
    enum np_fabric_kind kind;
    char subject[140];         /* "n3", "n2-n4", "n1..n4" */
    char text[480];            /* the whole line */
};

/* The findings of steps[0..n) into out (at most cap, in this order: data errors, slow nodes, slow nodes on the
 * network, slow links, the network, steps over all nodes, steps not run); returns how many there are (may be more
 * than cap).  0 with every judged step PASS. */
size_t np_fabric_name(const struct np_fabric_step *steps, size_t n, struct np_fabric_finding *out, size_t cap);

/* One step from its output file: parsed (np_nccltests_read), its expectation from t for gpu_type (NULL t: no
 * expectation), judged (np_nccl_verdict).  name, collective, scope, hosts ("n1" or "n1,n2"), gpus_per_node and
 * nnodes from the job's steps file.  A missing output is a step not run (ran 0), never an error. */
void np_fabric_step_judge(struct np_fabric_step *s, const char *path, const struct np_fabric_table *t,
                          const char *gpu_type, int gpus_per_node);

/* One step from the run parse made of it (parse/family_nccltests.c fills r->nccl); t (may be NULL) gives the
 * expectation's label ("H100 NVLink"). */
struct np_run;
void np_fabric_step_of_run(const struct np_run *r, const struct np_fabric_table *t, struct np_fabric_step *s);

/* What the report prints after the fabric check's table: for each check among runs[0..n) (its run folder), in
 * the order met, "fabric check <experiment> (job <id>): PASS|FAIL, <n> steps" and each finding on a line of its
 * own, indented.  t as above.  A new string ("" when no run is a fabric check step), caller frees; NULL: no
 * memory. */
char *np_fabric_check_report(const struct np_run *runs, size_t n, const struct np_fabric_table *t);

/* The same, collected one run at a time (a streaming report keeps no runs): np_fabric_checks_add copies what
 * naming needs of an nccl-tests step (other runs are ignored); np_fabric_checks_text is np_fabric_check_report's
 * text of everything added (markdown 1: each finding a list item).  NULL-safe free; add returns NP_E_NOMEM. */
struct np_fabric_checks;
struct np_fabric_checks *np_fabric_checks_new(void);
enum np_status np_fabric_checks_add(struct np_fabric_checks *c, const struct np_run *r);
char *np_fabric_checks_text(const struct np_fabric_checks *c, const struct np_fabric_table *t, int markdown);
void np_fabric_checks_free(struct np_fabric_checks *c);

/* "PASS" when every step ran and passed, "FAIL" when something is named, "-" when nothing was judged. */
const char *np_fabric_summary(const struct np_fabric_step *steps, size_t n);

#endif
