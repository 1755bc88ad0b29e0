/* nccltests.h - the result table of one NVIDIA nccl-tests run (all_reduce_perf, ...), read from its output.
 *
 * np_nccltests_parse() reads the text a *_perf binary printed (stdout+stderr, unmodified, any version from
 * v1.0.0 to v2.19: columns found by the header line, "N/A" for -c 0, the old "error"/"res" column, srun -l,
 * mpirun --tag-output and pdsh prefixes) into rows and the footer's figures; np_nccl_verdict() judges it
 * against an expected bus bandwidth (model/fabric.h).  Interface shared with the job side (issue 41).
 * Ownership: a parsed result owns its rows; np_nccl_result_free() frees them (NULL-safe).
 */
#ifndef NEMOPERF_PARSE_NCCLTESTS_H
#define NEMOPERF_PARSE_NCCLTESTS_H

#include <stddef.h>

#include "nemoperf/util/error.h"

/* One line of the table: one message size (of one datatype and operation). */
struct np_nccl_row {
    long long size, count;    /* bytes, elements */
    char type[16], redop[16]; /* "float", "sum"; "" where the version prints no such column */
    int root;                 /* -1: none printed (or "-1") */
    double oop_time_us, oop_algbw, oop_busbw;
    long long oop_wrong;      /* -1: "N/A" (-c 0) or a version without a #wrong count */
    double ip_time_us, ip_algbw, ip_busbw; /* NAN when the version printed no in-place half */
    long long ip_wrong;
    double oop_error, ip_error; /* versions before 2.13: the max delta of the "error" column, else NAN */
};

#define NP_NCCL_NOTES 8

struct np_nccl_result {
    char collective[32];      /* "all_reduce_perf" ("# Collective test starting:"), or the caller's; "" unknown */
    char version[32];         /* nccl-tests version ("# nccl-tests version 2.13.10 ..."), "" not printed */
    char nccl_version[32];    /* NCCL's ("NCCL version 2.21.5+cuda12.4", "nccl-library=22105"), "" unknown */
    char gpu[64];             /* the first rank line's device name ("NVIDIA H100 80GB HBM3"), "" none */
    int nranks;               /* rank lines ("#  Rank  0 ... device"), 0 none printed */
    int nhosts;               /* distinct host names of the rank lines */
    struct np_nccl_row *rows; /* owned; in the order printed */
    size_t nrows;
    double avg_busbw;         /* "# Avg bus bandwidth : X", NAN not printed (a run cut short) */
    long long wrong_total;    /* sum of the #wrong counts (N/A counted 0), 0 none */
    int out_of_bounds;        /* "# Out of bounds values : N", -1 not printed */
    int check_off;            /* 1: every row's #wrong is N/A (-c 0: nothing was checked) */
    int peak_index;           /* the row of the largest size with the best busbw (in- or out-of-place), -1 none */
    double peak_busbw;        /* its busbw, NAN no row */
    char notes[NP_NCCL_NOTES][160]; /* what the reader saw and could not use ("3 lines of a second header ..."),
                                       the tool's own error lines ("Test NCCL failure ...") */
    int nnotes;
};

/* Read one run's output.  out is reset first (np_nccl_result_free it after, whatever the status).  NP_OK with
 * nrows 0 when no table was printed (the notes say what was: an error line, a header only); NP_E_NOMEM.
 * Never reads past len; text need not end in a newline or a NUL. */
enum np_status np_nccltests_parse(const char *text, size_t len, struct np_nccl_result *out);

/* Read a file (at most 64 MiB of it) with np_nccltests_parse; NP_E_IO naming the file in err. */
enum np_status np_nccltests_read(const char *path, struct np_nccl_result *out, struct np_error *err);

void np_nccl_result_free(struct np_nccl_result *r);

enum np_nccl_verdict { NP_NCCL_NONE = 0, NP_NCCL_PASS, NP_NCCL_FAIL };

#define NP_NCCL_PASS_SHARE 0.9 /* PASS at 90 % of the expected busbw, as nccl-tests' own -G check (util.cu:778) */

/* PASS when the peak busbw (at the largest sizes) is at least 90 % of expected_gbs and no row had a #wrong or out
 * of bounds value; FAIL otherwise (#wrong != 0 always FAILs, whatever expected_gbs).  NONE when there is nothing to
 * judge: no row, or expected_gbs NAN/<= 0 with no data error.  why (may be NULL) gets one line saying which. */
enum np_nccl_verdict np_nccl_verdict(const struct np_nccl_result *r, double expected_gbs, char *why, size_t whysz);

/* "PASS", "FAIL", "-" */
const char *np_nccl_verdict_name(enum np_nccl_verdict v);

#endif
