/* straggler.h - the straggler-detector reports of a training log: which ranks were slowest.
 *
 * Two printers, read line by line as the NCCL reader (nccl.c) meets them in its one pass over a log:
 *  - Megatron-LM's StragglerDetector (--log-straggler), rank 0 every log interval:
 *    "[2024-03-14 23:07:56] | MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | ... | MnEtpt/Rnk: 296.02TF/0 |
 *    MxEtpt/Rnk: 297.32TF/8", and with --straggler-minmax-count N
 *    "^^^^ Bottom 4 Ranks with lowest  Etpt(TF): 296.02/0, 296.17/2, ..." (and "Top").
 *  - NeMo's StragglerDetectionCallback (nvidia-resiliency-ext): "GPU relative performance:" (or
 *    "individual"), " Worst performing 3/512 ranks:", "  Rank=12 Node=node-a Score=0.94", and
 *    "STRAGGLER DETECTION WARNING: Some GPUs have worse relative performance. Affected ranks: {...}".
 * The last report of each kind is kept.  Nothing is allocated: the struct is embedded in the reader.
 */
#ifndef NEMOPERF_PARSE_STRAGGLER_H
#define NEMOPERF_PARSE_STRAGGLER_H

#include <stddef.h>
#include <stdint.h>

#define NP_STRAGGLER_RANKS 8 /* ranks kept of a list (bottom Etpt, worst scores) */

struct np_straggler_rank {
    int rank;
    double value;   /* Etpt in TF (Megatron) or the score (NeMo, 1.0 = as fast as the best) */
    char node[64];  /* NeMo's Node=, "" (Megatron prints none) */
};

struct np_straggler {
    /* Megatron-LM */
    uint64_t mg_reports;               /* "MnRtt/Rnk" lines */
    double mn_rtt_ms, mx_rtt_ms;       /* the last report: fastest and slowest round trip per iteration */
    int mn_rtt_rank, mx_rtt_rank;
    double mn_etpt, mx_etpt;           /* estimated TFLOP/s per GPU, lowest and highest */
    int mn_etpt_rank, mx_etpt_rank;
    struct np_straggler_rank bottom[NP_STRAGGLER_RANKS]; /* the last "Bottom N" list, lowest first */
    size_t nbottom;
    /* NeMo / nvidia-resiliency-ext */
    uint64_t nv_reports;               /* "GPU relative performance:" headers */
    struct np_straggler_rank worst[NP_STRAGGLER_RANKS]; /* the last report's worst ranks, worst first */
    size_t nworst;
    int nv_total;                      /* "Worst performing 3/512": 512; 0 unknown */
    char nv_warning[240];              /* the last "STRAGGLER DETECTION WARNING" (relative), "" none */
    /* reader state */
    int section;                       /* 0 none, 1 relative scores, 2 individual scores */
    int block;                         /* 0 all ranks, 1 worst block, 2 best block */
};

/* One line [s, end) holding a straggler needle at hit ("/Rnk:", "Etpt(", "Rank=", "perfo", "STRAGGLER");
 * follows: 1 when the line directly follows the previous straggler line (a report's rank lines do). */
void np_straggler_line(struct np_straggler *g, const char *s, const char *hit, const char *end, int follows);

/* 1 when a line holding hit is a straggler line np_straggler_line reads (hit < end). */
int np_straggler_needle(const char *hit, const char *end);

/* The findings as one line ("" none): the slowest ranks and their nodes.  gpus_per_node > 0 names
 * Megatron's ranks' node index (Slurm's block distribution: rank / GPUs per node). */
void np_straggler_text(const struct np_straggler *g, int gpus_per_node, char *buf, size_t size);

#endif
