/* system.h - the system a run ran on: each node's snapshot and its GPUs' telemetry, read from the run folder.
 *
 * The job writes them raw (the layout both sides follow):
 *   <run>/system/<node>/nvidia-smi-q.xml   `nvidia-smi -q -x` (NVIDIA's nvsmi_device_v12.dtd; older v10/v11 read alike)
 *   <run>/system/<node>/host.txt           "### <command>" sections, each followed by that command's output
 *   <run>/system/<node>/status             "ok <seconds>", "missing nvidia-smi", "timeout <tool>"
 *   <run>/telemetry/<node>.csv             `nvidia-smi --query-gpu=<fields> --format=csv[,nounits] -lms <ms>`
 * <node> is Slurm's node name.  Reading never fails on what is missing, partial or malformed: it is said in
 * notes.  Owned by src/parse/system.c (snapshots, differences) and src/parse/telemetry.c (telemetry).
 */
#ifndef NEMOPERF_PARSE_SYSTEM_H
#define NEMOPERF_PARSE_SYSTEM_H

#include <stddef.h>

#include "nemoperf/util/error.h"

#define NP_SYS_NAME 64

/* One GPU of nvidia-smi -q -x.  Numbers NAN and ints -1 when the file does not say (N/A, absent). */
struct np_sys_gpu {
    int index;                     /* <minor_number>, else its position in the file */
    char uuid[64], serial[32], product[64], vbios[32], pci_bus_id[32];
    double power_limit_w;          /* <gpu_power_readings>/<power_readings> current_power_limit (enforced) */
    double default_power_limit_w;
    double max_sm_mhz;             /* <max_clocks><sm_clock> */
    double app_sm_mhz;             /* <applications_clocks><graphics_clock> */
    int persistence;               /* 1 Enabled, 0 Disabled */
    int ecc_mode;                  /* <ecc_mode><current_ecc>: 1 Enabled, 0 Disabled */
    long ecc_volatile_sbe, ecc_volatile_dbe;   /* correctable / uncorrectable, summed over sram and dram */
    long ecc_aggregate_sbe, ecc_aggregate_dbe;
    int remap_pending, remap_failure;          /* <remapped_rows>: 1 Yes, 0 No */
    int retired_pending;                       /* <retired_pages><pending_retirement>: 1 Yes, 0 No */
    int nvlink_down;                           /* links host.txt's `nvidia-smi nvlink -s` says inactive/down */
    int nvlink_up;                             /* links it reports with a speed */
    int mig_mode;                              /* <mig_mode><current_mig>: 1 Enabled, 0 Disabled */
    int pcie_gen, pcie_width;                  /* current link, -1 unknown */
    int pcie_max_gen, pcie_max_width;
};

enum np_sys_status {
    NP_SYS_MISSING = 0,            /* no snapshot for the node (or the status file says nvidia-smi is missing) */
    NP_SYS_PARTIAL,                /* some of it (a tool timed out, a file is missing or truncated) */
    NP_SYS_OK
};

struct np_sys_node {
    char name[NP_SYS_NAME];        /* Slurm's node name (the folder's name) */
    enum np_sys_status status;
    char status_line[128];         /* the status file's line, "" none */
    double snapshot_s;             /* "ok <seconds>", NAN unknown */
    char driver[32], cuda[16];     /* <driver_version>, <cuda_version> */
    struct np_sys_gpu *gpus;       /* owned */
    size_t ngpus;
    /* host.txt */
    char kernel[128];              /* uname -r of `uname -a` */
    char cpu_model[128];           /* lscpu "Model name:" */
    char governor[32];             /* the cpufreq governor section's first word */
    int numa_nodes;                /* numactl -H "available: N nodes", -1 unknown */
    char image[256];               /* the container image (and digest) the job names, "" unknown */
    char nccl[32], cuda_runtime[32], cudnn[32], te[32]; /* versions the job reports, "" unknown */
    char ib[160];                  /* InfiniBand/RoCE: "mlx5_0 Active 400; ..." from ibstat, "" none */
    char *notes;                   /* what was missing or unreadable for this node ("; "-separated), or NULL */
};

/* One GPU's telemetry over a window (telemetry.c).  Shares are fractions of the samples (0..1), NAN when the
 * file has no such column; other figures NAN when unknown. */
struct np_gpu_telemetry {
    char node[NP_SYS_NAME];
    int index;                     /* the "index" column, else the order of first appearance */
    char uuid[64];
    size_t samples;                /* in the window */
    double mean_power_w, max_power_w, power_limit_w;
    double mean_sm_mhz, max_sm_mhz;   /* max_sm_mhz: clocks.max.sm (the GPU's maximum), not the samples' */
    double mean_temp_c, mean_util_pct;
    double hw_slowdown, sw_power_cap, thermal, power_brake; /* thermal: hw or sw thermal slowdown */
    double t_first, t_last;        /* the window's first and last samples (seconds, the file's clock), NAN */
};

struct np_system {
    struct np_sys_node *nodes;     /* owned, sorted by name */
    size_t nnodes;
    struct np_gpu_telemetry *tele; /* owned, by node then index */
    size_t ntele;
    int snapshot;                  /* 1: <run>/system/ exists (any node) */
    int telemetry;                 /* 1: <run>/telemetry/ holds a readable file */
    int window_aligned;            /* 1: telemetry read over the steady window's time; 0: the whole file */
    char *notes;                   /* run-level notes ("; "-separated), or NULL */
};

/* Read run_dir/system/ and run_dir/telemetry/ (over the whole files; np_system_read_window narrows them).
 * NP_OK whatever the folder holds (nothing: snapshot 0, "no system snapshot" in notes); NP_E_NOMEM only. */
enum np_status np_system_read(const char *run_dir, struct np_system *sys, struct np_error *err);

/* As np_system_read, the telemetry over [t0, t1] (seconds on the telemetry's clock, as
 * np_telemetry_time parses; either NAN: open). */
enum np_status np_system_read_window(const char *run_dir, double t0, double t1, struct np_system *sys,
                                     struct np_error *err);

/* NULL-safe; leaves sys zeroed. */
void np_system_free(struct np_system *sys);

/* Readers of one file's text (len bytes, need not be NUL-terminated) into node; never fail on content:
 * what they could not read goes into node->notes.  NP_E_NOMEM only. */
enum np_status np_sys_xml_read(const char *text, size_t len, struct np_sys_node *node);
enum np_status np_sys_host_read(const char *text, size_t len, struct np_sys_node *node);
void np_sys_node_free(struct np_sys_node *node);

/* Called once per difference: node is the node concerned ("" for the whole system), what is the difference
 * in words ("driver 550.54.15 -> 560.28.03", "power limit 700 -> 500 W on n2"). */
typedef void (*np_system_diff_fn)(void *ctx, const char *node, const char *what);

/* What differs between two systems (a baseline a and a candidate b; each side's common value: drivers,
 * CUDA, power limits, max SM clocks, GPU products, image, NCCL, kernel).  Returns the count. */
size_t np_system_diff(const struct np_system *a, const struct np_system *b, np_system_diff_fn fn, void *ctx);

/* What stands out within one system: a node whose driver, power limit or max clock differs from the others',
 * ECC errors, a pending remap, an NVLink down, and a GPU whose telemetry stands out (SM clock, power,
 * throttling).  Returns the count. */
size_t np_system_outliers(const struct np_system *sys, np_system_diff_fn fn, void *ctx);

/* All of the above as one "; "-separated line into buf: "no system snapshot" when there is none. */
void np_system_text(const struct np_system *sys, char *buf, size_t size);

/* Telemetry of one node's CSV text (telemetry.c): any nvidia-smi --query-gpu CSV by its own header (units in
 * the header or nounits, "[N/A]", "[Not Supported]", reasons as "Active"/"Not Active" or a hex bitmask,
 * clocks_throttle_reasons.* of older drivers), samples with t0 <= timestamp <= t1 (NAN: open).  Appends one
 * record per GPU to *out (n of them, realloc'd; caller frees); notes what it could not read into *notes
 * (a new string appended to, or left).  NP_E_NOMEM only. */
enum np_status np_telemetry_read(const char *text, size_t len, const char *node, double t0, double t1,
                                 struct np_gpu_telemetry **out, size_t *n, char **notes);

/* The same from `dcgmi dmon -e 155,100,101,150,203,112` output (<node>.dcgm): columns by DCGM's short names
 * (POWER, SMCLK, TMPTR, GPUTL, DVCCTR: the reasons' bitmask); no time on its lines, so no window.  NP_E_NOMEM only. */
enum np_status np_telemetry_read_dcgm(const char *text, size_t len, const char *node, struct np_gpu_telemetry **out,
                                      size_t *n, char **notes);

/* Every run_dir/telemetry/<node>.csv (and <node>.dcgm) over [t0, t1] into sys->tele (sorted by node, index); sets
 * sys->telemetry, notes what it could not read in sys->notes.  NP_E_NOMEM only (np_system_read's part). */
enum np_status np_telemetry_read_dir(const char *run_dir, double t0, double t1, struct np_system *sys);

/* nvidia-smi's timestamp ("2024/03/14 23:07:56.123") or a log's ("2024-03-14 23:07:56") as seconds since
 * the epoch, read as UTC (both sides are the node's local time, so differences hold); NAN when it is not one. */
double np_telemetry_time(const char *s, size_t len);

#endif
