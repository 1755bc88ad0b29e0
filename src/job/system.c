/* system.c - the steps that record the machine a job runs on (job/system.h): the system snapshot of every
 * node before the workload (SNAPSHOT, on by default) and the GPU telemetry beside it (ENABLE_GPU_METRICS).
 *
 * Each is a Slurm step of its own, one task per node on the host (not in the container), running a small
 * POSIX sh program given inline (sh -c), so the batch script stays the one file a job needs (the REST
 * backend sends it as text).  Raw outputs only: parsing them is nemoperf-parse's (parse/system.c).
 */
#include "nemoperf/job/system.h"

#include "nemoperf/util/shell.h"

/* One node's snapshot: $1 run folder, $2 the container image ("" for none), $3 seconds per tool.  The tools
 * run side by side, each under timeout(1), into parts joined in order into host.txt; nvidia-smi -q -x into
 * nvidia-smi-q.xml.  The status line last (its presence says the snapshot finished). */
static const char system_snapshot_sh[] =
    "d=\"$1/system/${SLURMD_NODENAME:-unknown}\"; img=$2; T=$3\n"
    "mkdir -p \"$d\" || exit 0\n"
    "t0=$(date +%s%N)\n"
    "sec() {\n"
    "    n=$1 name=$2; shift 2\n"
    "    (\n"
    "        printf \"### %s\\n\" \"$name\"\n"
    "        command -v \"$1\" >/dev/null 2>&1 || { echo \"missing $1\"; exit 0; }\n"
    "        timeout -k 2 \"$T\" \"$@\" 2>&1; r=$?\n"
    "        case $r in 0) ;; 124 | 137) echo \"timeout $name\"; echo \"$name\" >\"$d/.timeout.$n\" ;;\n"
    "        *) echo \"exit $r\" ;; esac\n"
    "    ) >\"$d/.part.$n\" 2>&1 &\n"
    "}\n"
    "if command -v nvidia-smi >/dev/null 2>&1; then\n"
    "    (\n"
    "        timeout -k 2 \"$T\" nvidia-smi -q -x >\"$d/nvidia-smi-q.xml\" 2>\"$d/.xml.err\"; r=$?\n"
    "        case $r in 124 | 137) echo \"nvidia-smi -q -x\" >\"$d/.timeout.0\" ;; esac\n"
    "        { echo \"### nvidia-smi -q -x\"; echo \"exit $r\"; cat \"$d/.xml.err\"; } >\"$d/.part.0\"\n"
    "    ) &\n"
    "fi\n"
    "sec 1 \"uname -a\" uname -a\n"
    "sec 2 lscpu lscpu\n"
    "sec 3 \"cpufreq governor\" sh -c \"cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor 2>/dev/null | "
    "sort | uniq -c; true\"\n"
    "sec 4 \"numactl -H\" numactl -H\n"
    "if command -v ibstat >/dev/null 2>&1; then sec 5 ibstat ibstat\n"
    "elif command -v ibv_devinfo >/dev/null 2>&1; then sec 5 \"ibv_devinfo -v\" ibv_devinfo -v\n"
    "else sec 5 /sys/class/infiniband sh -c \"grep -Hs . /sys/class/infiniband/*/ports/*/state "
    "/sys/class/infiniband/*/ports/*/rate /sys/class/infiniband/*/ports/*/link_layer || echo none\"; fi\n"
    "sec 6 \"nvidia-smi topo -m\" nvidia-smi topo -m\n"
    "sec 7 \"nvidia-smi nvlink -s\" nvidia-smi nvlink -s\n"
    "sec 8 \"nvidia-smi nvlink -e\" nvidia-smi nvlink -e\n"
    "(\n"
    "    echo \"### image\"\n"
    "    echo \"image: ${img:-none}\"\n"
    "    case $img in *@sha256:*) echo \"digest: sha256:${img##*@sha256:}\" ;; *) echo \"digest: unknown\" ;; esac\n"
    "    if [ -f \"$img\" ] && command -v unsquashfs >/dev/null 2>&1; then\n"
    "        echo \"### image environment (the VERSION lines of its etc/environment)\"\n"
    "        timeout -k 2 \"$T\" unsquashfs -cat \"$img\" etc/environment 2>&1 | sed -n \"s/^export //; /VERSION/p\"\n"
    "    fi\n"
    ") >\"$d/.part.9\" 2>&1 &\n"
    "wait\n"
    "for k in 0 1 2 3 4 5 6 7 8 9; do cat \"$d/.part.$k\" 2>/dev/null; done >\"$d/host.txt\"\n"
    "tm=$(cat \"$d\"/.timeout.* 2>/dev/null | head -n 1)\n"
    "if ! command -v nvidia-smi >/dev/null 2>&1; then s=\"missing nvidia-smi\"\n"
    "elif [ -n \"$tm\" ]; then s=\"timeout $tm\"\n"
    "else ms=$((($(date +%s%N) - t0) / 1000000)); s=$(printf \"ok %d.%03d\" $((ms / 1000)) $((ms % 1000))); fi\n"
    "rm -f \"$d\"/.part.* \"$d\"/.timeout.* \"$d/.xml.err\"\n"
    "echo \"$s\" >\"$d/status\"\n";

/* One node's telemetry until $1/telemetry/.stop appears (the batch shell writes it when the workload's step has
 * ended): $1 run folder, $2 interval in ms, $3 the query fields.  dcgmi dmon where DCGM's host engine answers,
 * else nvidia-smi (the older clocks_throttle_reasons names when the driver refuses the clocks_event_reasons
 * ones), else nothing.  The sampler is stopped with SIGTERM, so its last line is whole. */
static const char system_metrics_sh[] =
    "d=\"$1/telemetry\"; ms=$2; F=$3; n=${SLURMD_NODENAME:-unknown}\n"
    "if command -v dcgmi >/dev/null 2>&1 && timeout -k 2 10 dcgmi discovery -l >/dev/null 2>&1; then\n"
    "    dcgmi dmon -e " NP_SYSTEM_DCGM_FIELDS " -d \"$ms\" >\"$d/$n.dcgm\" 2>>\"$d/.$n.err\" &\n"
    "elif command -v nvidia-smi >/dev/null 2>&1; then\n"
    "    timeout -k 2 10 nvidia-smi --query-gpu=\"$F\" --format=csv,nounits >/dev/null 2>&1 ||\n"
    "        F=$(printf %s \"$F\" | sed s/clocks_event_reasons/clocks_throttle_reasons/g)\n"
    "    nvidia-smi --query-gpu=\"$F\" --format=csv,nounits -lms \"$ms\" >\"$d/$n.csv\" 2>>\"$d/.$n.err\" &\n"
    "else exit 0; fi\n"
    "p=$!\n"
    "while [ ! -e \"$d/.stop\" ] && kill -0 \"$p\" 2>/dev/null; do sleep 1; done\n"
    "kill \"$p\" 2>/dev/null; wait \"$p\"\n"
    "[ -s \"$d/.$n.err\" ] || rm -f \"$d/.$n.err\"\n";

/* "<prefix>srun <opts><one task per node> --job-name=NAME sh -c PROG NAME": the step's common head. */
static void system_srun(struct np_buf *b, const char *prefix, const char *opts, const char *name, const char *prog)
{
    np_buf_append(b, prefix);
    np_buf_append(b, opts);
    np_buf_append(b, "--nodes=\"$SLURM_JOB_NUM_NODES\" --ntasks=\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 "
                     "--kill-on-bad-exit=0 ");
    np_buf_appendf(b, "--job-name=%s \\\n    sh -c ", name);
    np_buf_append_shq(b, prog);
    np_buf_appendf(b, " %s", name);
}

void np_system_render_start(const struct np_launch_config *c, struct np_buf *b)
{
    if (c->snapshot) {
        np_buf_append(b, "# nemoperf: each node's system snapshot (system/<node>/), a step of its own before the "
                         "workload;\n# every tool and the step have a hard timeout, and nothing here fails the "
                         "job (SNAPSHOT=false: no snapshot)\n");
        np_buf_append(b, "mkdir -p -- ");
        np_buf_append_shqf(b, "%s/system", c->experiment_dir);
        np_buf_append(b, " &&\n");
        char prefix[64];
        snprintf(prefix, sizeof prefix, "    timeout -k 5 %d ", NP_SYSTEM_STEP_TIMEOUT);
        /* --overlap: its resources are never what the workload's step waits for (without it, slurmctld may
         * not have released them when the next step asks: "step creation temporarily disabled") */
        system_srun(b, prefix, "srun --overlap ", "nemoperf-snapshot", system_snapshot_sh);
        np_buf_append(b, " \\\n    ");
        np_buf_append_shq(b, c->experiment_dir);
        np_buf_append(b, " ");
        np_buf_append_shq(b, c->image ? c->image : "");
        np_buf_appendf(b, " %d >/dev/null 2>>", NP_SYSTEM_TOOL_TIMEOUT);
        np_buf_append_shqf(b, "%s/system/.srun.err", c->experiment_dir);
        np_buf_append(b, "\n[ -s ");
        np_buf_append_shqf(b, "%s/system/.srun.err", c->experiment_dir);
        np_buf_append(b, " ] || rm -f -- ");
        np_buf_append_shqf(b, "%s/system/.srun.err", c->experiment_dir);
        np_buf_append(b, "\n");
    }
    if (c->gpu_metrics) {
        np_buf_append(b, "# nemoperf: GPU telemetry of every node (telemetry/<node>.csv) while the workload runs, "
                         "an overlapping step\n# stopped when the workload's step ends (ENABLE_GPU_METRICS)\n");
        np_buf_append(b, "mkdir -p -- ");
        np_buf_append_shqf(b, "%s/telemetry", c->experiment_dir);
        np_buf_append(b, " && rm -f -- ");
        np_buf_append_shqf(b, "%s/telemetry/.stop", c->experiment_dir);
        np_buf_append(b, "\n");
        /* --overlap: the workload's step starts beside it (Slurm 20.11 made steps exclusive by default) */
        system_srun(b, "", "srun --overlap ", "nemoperf-gpu-metrics", system_metrics_sh);
        np_buf_append(b, " \\\n    ");
        np_buf_append_shq(b, c->experiment_dir);
        np_buf_appendf(b, " %d %s >/dev/null 2>>", c->gpu_metrics_ms, NP_SYSTEM_GPU_FIELDS);
        np_buf_append_shqf(b, "%s/telemetry/.srun.err", c->experiment_dir);
        np_buf_append(b, " &\nnp_gpu_metrics=$!\n");
    }
}

void np_system_render_stop(const struct np_launch_config *c, struct np_buf *b)
{
    if (!c->gpu_metrics)
        return;
    /* each node's sampler sees .stop within a second and ends its sampler with SIGTERM; srun is killed after
     * 10 s if it has not ended by then */
    np_buf_append(b, ": >");
    np_buf_append_shqf(b, "%s/telemetry/.stop", c->experiment_dir);
    np_buf_append(b, "\nnp_t=0\nwhile kill -0 \"$np_gpu_metrics\" 2>/dev/null && [ \"$np_t\" -lt 50 ]; do sleep 0.2; "
                     "np_t=$((np_t + 1)); done\n"
                     "kill \"$np_gpu_metrics\" 2>/dev/null; wait \"$np_gpu_metrics\" 2>/dev/null\nrm -f -- ");
    np_buf_append_shqf(b, "%s/telemetry/.stop", c->experiment_dir);
    np_buf_append(b, "\n[ -s ");
    np_buf_append_shqf(b, "%s/telemetry/.srun.err", c->experiment_dir);
    np_buf_append(b, " ] || rm -f -- ");
    np_buf_append_shqf(b, "%s/telemetry/.srun.err", c->experiment_dir);
    np_buf_append(b, "\n");
}

json_t *np_system_json(const struct np_launch_config *c)
{
    return json_pack("{s:b, s:b, s:i}", "snapshot", c->snapshot, "gpu_metrics", c->gpu_metrics, "interval_ms",
                     c->gpu_metrics ? c->gpu_metrics_ms : 0);
}
