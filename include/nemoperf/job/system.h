/* system.h - what a job records about the machine it runs on: each node's system snapshot before the
 * workload, and GPU telemetry while it runs (ENABLE_GPU_METRICS).
 *
 * Owned by src/job/system.c.  The steps write raw tool outputs into the run folder (the layout below);
 * nemoperf-parse reads them (parse/system.h).  Neither step changes the workload's environment or its
 * step, and neither can fail the job: every tool has a hard timeout, a missing tool is written as such.
 *   <run>/system/<node>/nvidia-smi-q.xml   nvidia-smi -q -x, raw
 *   <run>/system/<node>/host.txt           "### <command>" sections, each followed by its output
 *   <run>/system/<node>/status             "ok <seconds>", "missing nvidia-smi" or "timeout <tool>"
 *   <run>/telemetry/<node>.csv             nvidia-smi --query-gpu=NP_SYSTEM_GPU_FIELDS --format=csv,nounits -lms N
 *   <run>/telemetry/<node>.dcgm            dcgmi dmon instead, where DCGM's host engine answers
 * <node> is $SLURMD_NODENAME (the nodes of a cluster may share one host name).
 */
#ifndef NEMOPERF_JOB_SYSTEM_H
#define NEMOPERF_JOB_SYSTEM_H

#include <jansson.h>

#include "nemoperf/job/spec.h"

struct np_buf;

/* nvidia-smi --query-gpu fields of the telemetry, in this order (nvidia-smi --help-query-gpu; drivers before
 * the clocks_event_reasons names say clocks_throttle_reasons.*, the step falls back to them). */
#define NP_SYSTEM_GPU_FIELDS                                                                                      \
    "timestamp,index,uuid,pci.bus_id,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,"  \
    "utilization.gpu,clocks_event_reasons.active,clocks_event_reasons.hw_slowdown,"                              \
    "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_thermal_slowdown,"                                \
    "clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown"

/* DCGM field ids dcgmi dmon samples (dcgm_fields.h): power usage 155, SM clock 100, memory clock 101,
 * GPU temperature 150, GPU utilisation 203, clock throttle reasons 112. */
#define NP_SYSTEM_DCGM_FIELDS "155,100,101,150,203,112"

/* Seconds one snapshot tool may run (they run side by side), and the whole snapshot step. */
#define NP_SYSTEM_TOOL_TIMEOUT 10
#define NP_SYSTEM_STEP_TIMEOUT 60

/* NEMOPERF_GPU_METRICS_MS: default and bounds of the telemetry interval. */
#define NP_SYSTEM_METRICS_MS_DEFAULT 1000
#define NP_SYSTEM_METRICS_MS_MIN 100
#define NP_SYSTEM_METRICS_MS_MAX 600000

/* Append the snapshot step (when c->snapshot) and the start of the telemetry step (when c->gpu_metrics) to
 * the batch script: shell lines run by the batch shell before the workload's step. */
void np_system_render_start(const struct np_launch_config *c, struct np_buf *b);

/* Append the lines that stop the telemetry step once the workload's step has ended ($rc is kept); nothing
 * when c->gpu_metrics is off. */
void np_system_render_stop(const struct np_launch_config *c, struct np_buf *b);

/* {"snapshot": bool, "gpu_metrics": bool, "interval_ms": N}: the manifest's and --print-config's "system".
 * New reference, NULL when out of memory. */
json_t *np_system_json(const struct np_launch_config *c);

#endif
