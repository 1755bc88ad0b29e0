/* nccl.h - the NCCL/RCCL breakdown and network facts of a log, read as a stream.
 *
 * np_nccl_feed() takes a log in chunks of any size (lines may straddle chunks) and keeps
 * bounded memory whatever the log's length: per communicator size and collective the calls
 * (a collective logged by many ranks counted once), bytes (count x the datatype's width) and a
 * power-of-two size histogram; the ranks and nodes seen; NCCL's version, network, net plugin,
 * NET/IB devices and GPU Direct RDMA; and the warnings they imply (a multi-node run on sockets,
 * GPU Direct RDMA disabled, a net plugin that failed to load).  Also the NeMo checkpoint
 * save/load durations and the straggler-detector reports (straggler.h) of the same log.  Ownership: np_nccl_new() returns a new reader, freed by
 * np_nccl_free(); every pointer into it is borrowed until then.
 */
#ifndef NEMOPERF_PARSE_NCCL_H
#define NEMOPERF_PARSE_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include "nemoperf/parse/straggler.h"
#include "nemoperf/util/error.h"

#define NP_NCCL_HIST 64 /* bucket b: messages of [2^b, 2^(b+1)) bytes; bucket 0 also holds 0-byte ones */

/* One collective (or P2P Send/Recv) on communicators of one size. */
struct np_nccl_coll {
    int nranks;
    char op[24];              /* "AllReduce", "Send", ... as NCCL names it (the log's 64th name on: "other") */
    uint64_t calls;           /* distinct collectives (a call logged by its N ranks counts once) */
    uint64_t lines;           /* trace lines (one per rank and call) */
    uint64_t bytes;           /* sum of calls x count x width, calls of a known datatype */
    uint64_t unknown_calls;   /* calls whose datatype has no width in this NCCL version */
    uint64_t min_bytes, max_bytes;
    uint64_t hist[NP_NCCL_HIST]; /* calls per size bucket */
};

enum np_nccl_tri { NP_NCCL_UNKNOWN = -1, NP_NCCL_NO = 0, NP_NCCL_YES = 1 };

struct np_nccl_net {
    char version[48];         /* "2.21.5+cuda12.4", "" unknown */
    int rccl;                 /* 1: "RCCL version" */
    char network[32];         /* the last "Using network X" ("IB", "Socket", "AWS Libfabric"), "" none */
    int socket_channels;      /* 1: a channel "via NET/Socket" was set up */
    char ib[160];             /* "NET/IB : Using ..." devices, "none" for "No device found", "" not logged */
    char plugin[96];          /* net plugin: a name or path, "none" (internal), "" not logged */
    int plugin_failed;        /* 1: a plugin was found and failed to load */
    char plugin_error[160];
    int gdr;                  /* GPU Direct RDMA: NP_NCCL_YES, NP_NCCL_NO, NP_NCCL_UNKNOWN */
    int nnodes;               /* largest "nNodes N" of an init line, 0 unknown */
    int max_nranks;           /* largest communicator of an init or trace line, 0 unknown */
};

struct np_nccl_ckpt {
    uint64_t saves, loads;
    double save_s, save_max_s;  /* sum and longest "Save duration" */
    double load_s, load_max_s;  /* "Time spent in load_checkpoint" */
};

struct np_nccl; /* opaque: the reader */

/* A new reader; NULL when out of memory. */
struct np_nccl *np_nccl_new(void);
void np_nccl_free(struct np_nccl *n);

/* The next len bytes of the log. */
enum np_status np_nccl_feed(struct np_nccl *n, const char *buf, size_t len);

/* Before the first np_nccl_feed: read on threads of its own from now on (np_nccl_feed puts the bytes into a ring
 * of 8 x 1 MiB slots cut at line ends, or takes them where np_nccl_lend lent, and returns; the threads read slots
 * side by side and apply them to the reader in the log's order, and the feeder reads and applies slots too while
 * it waits for a free one; np_nccl_finish waits for them).  threads: the reader threads besides the feeder, 1 or
 * 2; 0: a core each, the feeder's aside (1 on two cores, 2 from three).  The result is the same as inline.
 * NP_OK also when no thread could be started (then the reader stays inline). */
enum np_status np_nccl_async(struct np_nccl *n, int threads);

/* Whether the reader threads frame lines with AVX2 (where the CPU has it; else as on any x86-64, with SSE2): on
 * 0 turns it off for the readers started after, 1 back on where the CPU has it, -1 only asks.  For tests (both
 * framings give the same result: check_nccl reads its cases both ways). */
int np_nccl_avx2(int on);

/* On threads (np_nccl_async): where the log's next bytes may be read, *room bytes (the ring's slot being
 * filled), so that the np_nccl_feed of those bytes, there, copies nothing; NULL inline (feed then copies what
 * it needs).  The memory is the reader's again at the next np_nccl_feed. */
char *np_nccl_lend(struct np_nccl *n, size_t *room);

/* On threads, before the first np_nccl_feed: hand the log's bytes to scan as well, once each and in the log's
 * order, but the whole lines without a mark of the scanner's (scan.h np_scan_marked: they hold nothing it reads)
 * (each slot's bytes on the thread that applies it, after the slots before it; the rest of a line longer than a
 * slot takes, which no slot keeps, by np_nccl_feed once the slots before it are applied), each call with the
 * bytes' offset in the log; np_nccl_finish returns after the last call.  So the step scanner's search runs
 * beside the reading thread, not on it (scan.h sink_defer).  NP_E_USAGE inline or after the first feed. */
enum np_status np_nccl_defer_scan(struct np_nccl *n, void (*scan)(void *scan_ctx, const char *bytes, size_t len,
                                                                  uint64_t off),
                                  void *scan_ctx);

/* The end of the log: the last line without its newline, and every pending collective, counted. */
enum np_status np_nccl_finish(struct np_nccl *n);

/* Read a whole file through a reader (feed + finish); err names the file on failure. */
enum np_status np_nccl_read_path(struct np_nccl *n, const char *path, struct np_error *err);

/* After np_nccl_finish: the collectives sorted by communicator size then name (borrowed). */
const struct np_nccl_coll *np_nccl_colls(const struct np_nccl *n, size_t *count);
const struct np_nccl_net *np_nccl_net(const struct np_nccl *n);
const struct np_nccl_ckpt *np_nccl_ckpt(const struct np_nccl *n);
/* The rank process pid held in its largest communicator, from NCCL's init lines ("host:pid:tid [dev]
 * NCCL INFO comm 0x.. rank R nranks N"): -1 unknown, -2 when one process held several. */
int np_nccl_pid_rank(const struct np_nccl *n, uint64_t pid);
/* The straggler-detector reports of the same log (straggler.h). */
const struct np_straggler *np_nccl_stragglers(const struct np_nccl *n);
uint64_t np_nccl_trace_lines(const struct np_nccl *n); /* collective lines read */
size_t np_nccl_ranks_seen(const struct np_nccl *n);    /* distinct host:pid [dev] (or globalrank) */
size_t np_nccl_nodes_seen(const struct np_nccl *n);    /* distinct host names of the prefixes */
int np_nccl_saturated(const struct np_nccl *n);        /* 1: more ranks/hosts than the sets hold */
/* "0-3,8,12-15": the global ranks of RCCL's "globalrank N" suffixes, "" none (borrowed). */
const char *np_nccl_global_ranks(const struct np_nccl *n);
/* The number of nodes: nNodes of an init line, else the hosts of the prefixes. */
int np_nccl_nodes(const struct np_nccl *n);

/* The warnings, "; "-separated, into buf ("" none); returns how many. */
size_t np_nccl_warnings(const struct np_nccl *n, char *buf, size_t size);

/* Width in bytes of NCCL datatype number dt for the version "2.4.2..." ("" unknown: today's
 * numbering), 0 when that version has no such type. */
int np_nccl_dtype_width(int dt, const char *version, int rccl);

#endif
