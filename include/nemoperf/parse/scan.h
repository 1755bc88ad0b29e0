/* scan.h - find training-step lines in NeMo / Megatron logs.
 *
 * Recognises, without flags, the log generations listed in
 * ../shared/facts/nemo-recipes.md: NeMo 2.0 ProgressPrinter, NeMo 1.0 tqdm
 * bars (\r-redrawn, ANSI colour), DeltaTimingCallback, Megatron-Bridge and
 * NeMo AutoModel.  Literal prefilter (memmem) then PCRE2 (JIT) extraction.
 * Hostile input (NUL, invalid UTF-8, huge lines, partial last line) never
 * crashes or misreads: a line with no terminator at end of data is ignored.
 */
#ifndef NEMOPERF_SCAN_H
#define NEMOPERF_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "nemoperf/util/error.h"

enum np_log_gen {
    NP_GEN_UNKNOWN = 0,
    NP_GEN_NEMO2,     /* "| train_step_timing in s: 12.39 |" */
    NP_GEN_NEMO1,     /* tqdm: "Epoch 0: ... 50/50 [..., global_step=49.00, train_step_timing in s=11.10]" */
    NP_GEN_DELTA,     /* "Step 12: train_step_timing in s in s=1.234", "Step 19 train_step_timing 1.93 timestamp: T" */
    NP_GEN_MBRIDGE,   /* "elapsed time per iteration (ms): 12390.1" */
    NP_GEN_AUTOMODEL, /* "step 49 | ... | tps 104882.31(13110.29/gpu)" */
    NP_GEN_AMBENCH,   /* AutoModel benchmark.py: "Rank 0 | Iteration i", "Max iter time: X seconds" (amlog.c) */
    NP_GEN_DFMAM      /* DFM's AutoModel loop, rank 0's tqdm bar: "Epoch 1/1: 40%|..| 20/50 [..<.., 35.32s/it, ..]" */
};

/* One step line.  Fields the line does not carry are NAN (doubles) or -1. */
struct np_step {
    long iteration;            /* 0-based global step: global_step where the line prints one (NeMo 2.0 counts
                                  "iteration i" per epoch), the tqdm bar's k-1 in epoch 0, Megatron i-1, step N; -1 */
    long total;                /* the last global step index: n of "iteration i/n" (NeMo 2.0 prints max_steps-1),
                                  n-1 of a NeMo 1.0 bar "k/n" (n = max_steps), Megatron n-1; -1 unknown */
    double step_time_s;        /* seconds per step (Megatron ms converted) */
    double loss;               /* reduced_train_loss / lm loss / loss */
    long global_batch_size;    /* -1 */
    double peak_memory_bytes;  /* peak_memory_usage / max_memory_reserved (else max_memory_allocated), AutoModel
                                  "mem X GiB" / "mem: X GiB", Megatron "memory (MB) | ... max reserved: X" (bytes) */
    double tflops_per_gpu;     /* TFLOPS_per_GPU / throughput per GPU (TFLOP/s/GPU) */
    double consumed_samples;
    double tokens_per_s;       /* AutoModel tps */
    double tokens_per_s_per_gpu; /* AutoModel (X/gpu) */
    int nan_seen;              /* a NaN/inf appeared in loss, timing or grad norm (any spelling: nan, -nan,
                                  NaN, nan.0, inf, -inf, inf.0, -inf., Infinity, 1.#QNAN, 1.#IND, 1.#INF) */
    int two_times;             /* the step time is the first of two in one field (Primus "ms: 13372.8/13364.7":
                                  the step's own, then a running average) */
    double energy_j_per_gpu;   /* Megatron --log-energy: "energy per GPU (J/iter/GPU)", joules a step per GPU */
    double power_w_per_gpu;    /* Megatron --log-energy: "power per GPU (W/GPU)", watts per GPU over the step */
    int bar_short;             /* a progress bar "k/n" with k < n whose n is no step total (it counts batches):
                                  the epoch's bar had not reached its end */
    enum np_log_gen gen;
    uint64_t offset;           /* byte offset of the line's start in the file */
    int side;                  /* scanner-internal: a side line (Megatron memory report) that only adds fields to
                                  the step it names; always 0 in a result */
};

struct np_scan_opts {
    int all_steps;        /* 1: read the whole file; 0: read from the end until `window` steps of the last run are found */
    size_t window;        /* steps wanted in tail mode (default 10; at least 1) */
    size_t tail_bytes;    /* first read size from the end in tail mode (default 65536) */
    size_t read_chunk;    /* bytes per read (default 0 = 4 MiB); tests set it small to exercise chunk seams */
    size_t keep;          /* tail mode: parse only the last `keep` steps (>= window) of the bytes read;
                             0 = every step line read.  Parsing is the costly part; finding lines is not. */
    int lean;             /* with keep: the last step is parsed whole, the ones before it only for what a reader of
                             step times needs: iteration, total, step time, the NaN flag, gen and offset, and loss,
                             global batch size, peak memory and TFLOPS only where no later step has a value (so "the
                             newest known value" of each is what a full parse gives); their other fields are NAN/-1.
                             Saves most of the parse of the older lines. */
    int keep_open;        /* np_scan_fileat: the file is left open, its descriptor in the result's fd (the caller
                             closes it): a second look at the log (the default report's network lines) opens nothing */
    int streams;          /* 1: a FIFO or another stream is read as it comes (to its end); 0 (default): regular files
                             only, anything else refused at once, never waited on (util/fileio.h) */
    /* all_steps only: every byte of the file, in file order and once, is also handed to sink(sink_ctx,
     * bytes, n) as it is read (chunks end anywhere, also inside a line), so a second reader of the whole
     * log (the NCCL breakdown, diagnose.c) shares this one pass over it.  A status other than NP_OK
     * stops the scan with that status. */
    enum np_status (*sink)(void *sink_ctx, const char *bytes, size_t n);
    /* with sink, optional: the memory the next bytes are read into, *room bytes of it, or NULL (the
     * scanner's own buffer then); the sink
     * is then handed that memory (what it lent, filled), so the bytes are not copied.  The scanner reads
     * them before the sink gets them, and not after. */
    char *(*sink_buf)(void *sink_ctx, size_t *room);
    /* with sink, optional: the scanner offers the sink to scan the bytes itself (scan(scan_ctx, bytes, n, off) with
     * every byte it is handed, exactly once, in the file's order, from any one thread at a time; whole lines
     * without a mark, np_scan_marked, may be left out), so that the step search runs beside the reading; NP_OK
     * accepts.  The scanner then ends with sink(sink_ctx, NULL, 0),
     * which returns once every byte was scanned (the NCCL reader's threads: np_nccl_defer_scan). */
    enum np_status (*sink_defer)(void *sink_ctx, void (*scan)(void *scan_ctx, const char *bytes, size_t n, uint64_t off),
                                 void *scan_ctx);
    void *sink_ctx;
};

/* Lines longer than this are never step lines: they are skipped whole. */
#define NP_SCAN_LINE_MAX ((size_t)1 << 20)

struct np_scan_result {
    struct np_step *steps;   /* owned; the LAST run of the file only, in file order */
    size_t nsteps;
    size_t runs;             /* run starts seen in the bytes read (iteration going backwards = new run) */
    int truncated_start;     /* 1 when tail mode stopped before the file start */
    int saw_checkpoint_save; /* "Global Checkpoint Save" seen in the bytes read */
    int saw_checkpoint_load; /* "Global Checkpoint Load" seen */
    long max_steps_reached;  /* N of Lightning's "`Trainer.fit` stopped: `max_steps=N` reached." after the last step
                                line (np_scan_stop_message), else 0 */
    uint64_t bytes_read;
    uint64_t file_size;
    int fd;                  /* opts->keep_open: the scanned file, open (the caller closes it), else -1; np_scan_fileat
                                sets it (a result zeroed elsewhere holds 0: never closed by np_scan_result_free) */
};

/* The scanner's marks.  Every needle its search looks for (the literals of a step line, a checkpoint message, a
 * memory report) holds a '_', a '|', a "kp" ("Global Checkpoint ") or a "ps" ("elapsed time per iteration"):
 * np_scan_needles_marked checks the table.  So a line without any mark holds no needle, and the scanner does
 * nothing with it: a sink that scans the bytes itself (sink_defer) may leave such whole lines out.
 * np_scan_marked: 1 when s[0..n) holds a mark. */
int np_scan_marked(const char *s, size_t n);
int np_scan_needles_marked(void);
#define NP_SCAN_MARK_A '_'  /* the marks, for SIMD searches of them (np_scan_line_end, the NCCL reader's framing) */
#define NP_SCAN_MARK_B '|'
#define NP_SCAN_PAIR_A0 'k' /* "kp" */
#define NP_SCAN_PAIR_A1 'p'
#define NP_SCAN_PAIR_B0 'p' /* "ps" */
#define NP_SCAN_PAIR_B1 's'

/* memchr(p, '\n', e - p) and, in *marked, whether [p, that '\n') holds a mark (np_scan_marked), one AVX2 pass for
 * both (without AVX2: memchr, then the marks).  Without a '\n' before e, *marked tells of [p, e) and may be 1 for
 * a 'k' or 'p' at e[-1] (the byte after e is read).  Reads up to 32 bytes past e: they must be readable. */
const char *np_scan_line_end(const char *p, const char *e, int *marked);

/* Whether the scanner's searches use AVX2 (where the CPU has it; else SSE2 for the needles and memchr plus a byte
 * loop for np_scan_line_end): 0 turns it off for the scans started after, 1 back on where the CPU has it, -1 only
 * asks.  For tests (both give the same). */
int np_scan_avx2(int on);

/* Compile the patterns once (thread-safe to call repeatedly; first call wins). */
enum np_status np_scan_init(struct np_error *err);

/* 1 once some read of this process had to wait for the disk, or ran on a filesystem that cannot
 * say whether it would (preadv2 RWF_NOWAIT): the logs are not all in the page cache. */
int np_scan_cold(void);

/* Scan a memory buffer holding a whole log (or its tail when base_offset > 0).
 * base_offset is the file offset of buf[0]; when it is > 0 the bytes up to and
 * including the first line terminator are the cut end of an earlier line and
 * are skipped (start one byte early, on the previous terminator, to keep the
 * first line).  out is overwritten (zeroed first, not freed). */
enum np_status np_scan_buffer(const char *buf, size_t len, uint64_t base_offset,
                              struct np_scan_result *out, struct np_error *err);

/* Scan a file per opts (NULL = defaults).  Thread-safe.  out is reset first
 * (zeroed, not freed).  Missing/unreadable file: NP_E_IO, err->source = path. */
enum np_status np_scan_file(const char *path, const struct np_scan_opts *opts,
                            struct np_scan_result *out, struct np_error *err);

/* The same for a file named relative to an open folder (dirfd, or AT_FDCWD): saves
 * the path walk of every open when many logs of one folder are read.  path names
 * the file in messages. */
enum np_status np_scan_fileat(int dirfd, const char *name, const char *path, const struct np_scan_opts *opts,
                              struct np_scan_result *out, struct np_error *err);

/* Lightning's stop message: when the last step of res has no step total, the file's last 64 KiB are read for
 * "`max_steps=N` reached." after that step's line; res->max_steps_reached is set to N (0 when there is none).
 * A bar counting batches of an unknown total ("3/?") is complete by this line alone.  As nemoperf-parse completes
 * a scan (beside np_amlog_header_total); an unreadable file leaves res as it is. */
void np_scan_stop_message(int dirfd, const char *name, struct np_scan_result *res);

/* Frees what the result owns and zeroes it; NULL-safe. */
void np_scan_result_free(struct np_scan_result *res);

const char *np_log_gen_name(enum np_log_gen gen);

#endif
