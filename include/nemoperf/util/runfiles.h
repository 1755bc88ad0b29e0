/* runfiles.h - the names of every file nemoperf opens from a run folder, in one place.
 * Every reader names them from here and opens them through fileio.h's regular-files-only reader
 * (np_file_open_regular, np_file_load_json): a FIFO planted under any of them must not hang a tool.
 * The test that plants one under each (tests/e2e/25-faults-39.sh) reads this list: a name added
 * here is tested; a reader that opens a new name must add it here.  A '*' is any stem. */
#ifndef NEMOPERF_UTIL_RUNFILES_H
#define NEMOPERF_UTIL_RUNFILES_H

#define NP_RUNFILE_MANIFEST "nemoperf.json"      /* the launch record: parse, drift, --store, Megatron-Bridge */
#define NP_RUNFILE_MANIFEST_FORMAT 1             /* its "nemoperf_manifest": what launch writes, the one parse reads */
#define NP_RUNFILE_VBOOST_ERR "vboost.err"       /* the job's vboost step (drift, --nccl) */
#define NP_RUNFILE_VBOOST_OUT "vboost.out"
#define NP_RUNFILE_LOG "*.out"                   /* the logs (--include's default; scan, --nccl, AutoModel) */
#define NP_RUNFILE_LOG_COMPANION "*.err"         /* an AutoModel log's stderr beside its .out */
#define NP_RUNFILE_MBRIDGE_LOG "*.log"           /* a Megatron-Bridge run's log (besides *.out) */
#define NP_RUNFILE_NSYS "*.nsys-rep"             /* listed by --nccl, never opened: regular files only */
#define NP_RUNFILE_SYS_XML "system/*/nvidia-smi-q.xml" /* the job's snapshot, a folder per node (parse/system.h):
                                                    nvidia-smi -q -x */
#define NP_RUNFILE_SYS_HOST "system/*/host.txt"     /* "### <command>" sections */
#define NP_RUNFILE_SYS_STATUS "system/*/status"     /* "ok <seconds>", "missing nvidia-smi" */
#define NP_RUNFILE_TELEMETRY "telemetry/*.csv"      /* the job's GPU telemetry (nvidia-smi --query-gpu), a file per node */

#endif
