#!/bin/sh
# 19-launch-system.sh - what a job records about its nodes, on the real local cluster (WORKLOAD=synthetic):
# 1. four nodes with the nvidia-smi stand-in on their PATH (tests/stubs/nvidia-smi: no GPU exists here; it
#    prints NVIDIA's XML and CSV formats), each node its own settings (n2 a 500 W power limit, n3 another
#    driver, n1 a driver of before the clocks_event_reasons names, GPU 3 of n4 under HW slowdown from 0.4 s
#    to 1.4 s), ENABLE_GPU_METRICS=true every 200 ms, GPUs as Slurm GRES: system/<node>/ and
#    telemetry/<node>.csv of every node, in the formats and with those settings; the telemetry ran beside
#    the workload and was stopped when it ended.
# 2. no nvidia-smi on the nodes: the snapshot says "missing nvidia-smi" on every node, and the job, its
#    exit, its Slurm output and its log are those of the same job with SNAPSHOT=false (log lines compared
#    with their numbers masked: step times differ from run to run).
# 3. a node whose nvidia-smi -q hangs: "timeout nvidia-smi -q -x", the job completes, the snapshot step
#    ended within its tools' timeout.
# 4. --compare of two run sets whose nodes differ in driver and power limit: both differences named (folders, the
#    store, JSON); a side without a snapshot: "not compared".
# Also the overhead: the snapshot's seconds per node (status) and the telemetry's CPU share (the stand-in's
# CPU time over the run's wall time), printed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
cluster=$root/tests/slurm/cluster
stub=$root/tests/stubs/nvidia-smi
T=19-launch-system
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }

[ -x "$launch" ] && [ -x "$bindir/nemoperf-synth" ] || die "$launch or nemoperf-synth not built (make)"
command -v python3 >/dev/null || die "python3 is needed by the nvidia-smi stand-in"
. "$here/system-lib.inc"

W=$(mktemp -d "${TMPDIR:-/tmp}/np-system.XXXXXX") || die "mktemp"
chmod 0755 "$W"
cleanup() {
    [ -f "$W/ids" ] && while read -r id; do scancel "$id" 2>/dev/null; done <"$W/ids"
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16

# run NAME VAR=VALUE...: launch one job with --wait into its own stage; prints its folder
run() {
    name=$1
    shift
    mkdir -p "$W/$name"
    env STAGE_PATH="$W/$name" "$@" "$launch" --wait --resubmit >"$W/$name.out" 2>"$W/$name.err"
    echo $? >"$W/$name.rc"
    sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' "$W/$name.out" >>"$W/ids"
    sed -n 's/^job [0-9][0-9]*: //p' "$W/$name.out" | head -n 1
}
state_of() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).* ExitCode=\([0-9:]*\).*/\1 \2/p'; }

# ---- 1. four nodes, the stand-in, telemetry -------------------------------------------------------------------
S=$W/stub
mkdir -p "$S"
echo '{"old_names": true, "driver": "525.147.05", "cuda": "12.0"}' >"$S/n1.json"
echo '{"power_limit_w": 500.0}' >"$S/n2.json"
echo '{"driver": "550.54.15", "cuda": "12.4"}' >"$S/n3.json"
echo '{"throttle": {"3": [[0.4, 1.4, "hw_slowdown"]]}, "throttle_sm_mhz": 1110}' >"$S/n4.json"
t0=$(date +%s)
d=$(run four PATH="$stub:$PATH" NP_STUB_DIR="$S" JOB_TOTAL_GPUS=32 GPUS_PER_NODE=8 SBATCH_GPUS_PER_NODE=8 MAX_STEPS=30 \
    ENABLE_GPU_METRICS=true NEMOPERF_GPU_METRICS_MS=200)
wall=$(($(date +%s) - t0))
[ "$(cat "$W/four.rc")" = 0 ] && ok "four nodes with the stand-in: the job completed and parsed ok" ||
    fail "four nodes: launch --wait exited $(cat "$W/four.rc"): $(tail -5 "$W/four.err")"
[ -n "$d" ] && [ -d "$d" ] || die "four nodes: no run folder in: $(cat "$W/four.out")"
for n in n1 n2 n3 n4; do
    sd=$d/system/$n
    st=$(cat "$sd/status" 2>/dev/null)
    case $st in "ok "[0-9]*) ;; *) fail "$n: status '$st'" ;; esac
    python3 - "$sd/nvidia-smi-q.xml" "$n" <<'PY' || fail "$n: nvidia-smi-q.xml"
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
n = sys.argv[2]
assert r.tag == "nvidia_smi_log", r.tag
drv = {"n1": "525.147.05", "n3": "550.54.15"}.get(n, "560.35.03")
assert r.findtext("driver_version") == drv, r.findtext("driver_version")
gpus = r.findall("gpu")
assert len(gpus) == 8, len(gpus)
lim = gpus[0].findtext("gpu_power_readings/current_power_limit")
assert lim == ("500.00 W" if n == "n2" else "700.00 W"), lim
assert gpus[0].findtext("max_clocks/sm_clock") == "1980 MHz"
PY
    for sec in 'nvidia-smi -q -x' 'uname -a' lscpu 'cpufreq governor' 'numactl -H' 'nvidia-smi topo -m' \
        'nvidia-smi nvlink -s' 'nvidia-smi nvlink -e' image; do
        grep -qx "### $sec" "$sd/host.txt" 2>/dev/null || fail "$n: host.txt has no '### $sec' section"
    done
    grep -Eq '^### (ibstat|ibv_devinfo -v|/sys/class/infiniband)$' "$sd/host.txt" || fail "$n: no InfiniBand section"
    grep -q '^	 Link 0: 26.562 GB/s$' "$sd/host.txt" || fail "$n: nvlink -s output not kept"
    [ -z "$(ls -A "$sd" | grep -v '^host.txt$\|^nvidia-smi-q.xml$\|^status$')" ] || fail "$n: left $(ls -A "$sd")"
    csv=$d/telemetry/$n.csv
    [ -s "$csv" ] || { fail "$n: no telemetry/$n.csv"; continue; }
    r=clocks_event_reasons
    [ "$n" = n1 ] && r=clocks_throttle_reasons
    want="timestamp, index, uuid, pci.bus_id, power.draw [W], power.limit [W], clocks.sm [MHz], clocks.max.sm [MHz], clocks.mem [MHz], temperature.gpu, utilization.gpu [%], $r.active, $r.hw_slowdown, $r.sw_power_cap, $r.hw_thermal_slowdown, $r.sw_thermal_slowdown, $r.hw_power_brake_slowdown"
    [ "$(head -n 1 "$csv")" = "$want" ] || fail "$n: CSV header $(head -n 1 "$csv")"
    rows=$(($(wc -l <"$csv") - 1))
    [ "$rows" -ge 16 ] && [ $((rows % 8)) -eq 0 ] || fail "$n: $rows samples (not whole rounds of 8 GPUs, or fewer than 2)"
done
grep -q ', 500.00, ' "$d/telemetry/n2.csv" && ! grep -q ', 500.00, ' "$d/telemetry/n1.csv" ||
    fail "n2's 500 W limit not in its telemetry alone"
hw=$(awk -F', ' '$2 == 3 && $13 == "Active" && $7 == 1110' "$d/telemetry/n4.csv" | wc -l)
other=$(awk -F', ' 'NR > 1 && ($2 != 3) && $13 == "Active"' "$d/telemetry/n4.csv" | wc -l)
[ "$hw" -ge 2 ] && [ "$other" -eq 0 ] && ok "n4 GPU 3 under HW slowdown in $hw samples at 1110 MHz, no other GPU" ||
    fail "n4 HW slowdown: $hw samples of GPU 3, $other of others"
[ ! -e "$d/telemetry/.stop" ] && [ -z "$(ls -A "$d/telemetry" | grep -v '^n[1-4].csv$')" ] ||
    fail "telemetry left $(ls -A "$d/telemetry")"
# the telemetry ran while the workload did (beside its step: GPUs are GRES here) and ended with it
first=$(sed -n 2p "$d/telemetry/n1.csv" | cut -d, -f1)
last=$(tail -n 1 "$d/telemetry/n1.csv" | cut -d, -f1)
log=$(ls "$d"/log-*_0.out)
python3 - "$first" "$last" "$log" <<'PY' && ok "telemetry from before the first step to the last one, stopped when the step ended" || fail "telemetry window"
import os, sys, time
f = lambda s: time.mktime(time.strptime(s.split(".")[0], "%Y/%m/%d %H:%M:%S"))
first, last, end = f(sys.argv[1]), f(sys.argv[2]), os.path.getmtime(sys.argv[3])
assert first <= end - 1 and end - 2 <= last <= end + 3, (first, last, end)
PY
for n in n1 n2 n3 n4; do
    grep -q -- '-q -x' "$S/calls.$n" && grep -q -- '-lms 200' "$S/calls.$n" || fail "$n: the stand-in was not called there"
done
man=$d/nemoperf.json
python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["system"]; assert s=={"snapshot":True,"gpu_metrics":True,"interval_ms":200}, s' "$man" &&
    ok "manifest: system {snapshot, gpu_metrics, interval_ms 200}" || fail "manifest system object"
secs=$(cat "$d"/system/n*/status | awk '{ s += $2; if ($2 > m) m = $2 } END { printf "%.2f mean, %.2f max", s / NR, m }')
ok "four nodes: system/ and telemetry/ of every node in NVIDIA's formats; snapshot seconds per node: $secs"
# the stand-in's CPU time while sampling: user+sys of the -lms processes is not visible after they end, so
# measure one sampler alone for the run's length
cpu=$(python3 - "$stub/nvidia-smi" "$wall" <<'PY'
import os, resource, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "--query-gpu=timestamp,index,uuid,pci.bus_id,power.draw,power.limit,clocks.sm,"
                      "clocks.max.sm,clocks.mem,temperature.gpu,utilization.gpu,clocks_event_reasons.active",
                      "--format=csv,nounits", "-lms", "200"], stdout=subprocess.DEVNULL)
time.sleep(10)
p.terminate(); p.wait()
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f%% of one CPU (the stand-in's %.2f s over 10 s, sampling 8 GPUs every 200 ms)" % ((u.ru_utime + u.ru_stime) * 10, u.ru_utime + u.ru_stime))
PY
)
echo "$T: telemetry CPU share: $cpu"

# ---- 2. no nvidia-smi: the job as without the snapshot ----------------------------------------------------------
da=$(run nosmi PATH="$NOSMI_PATH" JOB_TOTAL_GPUS=16 MAX_STEPS=6)
db=$(run nosnap PATH="$NOSMI_PATH" JOB_TOTAL_GPUS=16 MAX_STEPS=6 SNAPSHOT=false)
[ "$(cat "$W/nosmi.rc")" = "$(cat "$W/nosnap.rc")" ] && [ "$(cat "$W/nosmi.rc")" = 0 ] ||
    fail "exit status $(cat "$W/nosmi.rc") with the snapshot, $(cat "$W/nosnap.rc") without"
for n in n1 n2; do
    [ "$(cat "$da/system/$n/status" 2>/dev/null)" = "missing nvidia-smi" ] || fail "$n: status $(cat "$da/system/$n/status" 2>/dev/null)"
    [ ! -e "$da/system/$n/nvidia-smi-q.xml" ] || fail "$n: an XML without nvidia-smi"
done
[ ! -e "$db/system" ] || fail "SNAPSHOT=false left a system folder"
ida=$(sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' "$W/nosmi.out") idb=$(sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' "$W/nosnap.out")
sa=$(state_of "$ida") sb=$(state_of "$idb")
[ -n "$sa" ] && [ "$sa" = "$sb" ] || fail "Slurm state and exit code '$sa' with the snapshot, '$sb' without"
# files: the same names apart from system/ (and the job ids in them: the last _<id>, so a job id equal to the
# GPU count, _16_16_0.out, is not taken for it)
la=$(cd "$da" && find . -path ./system -prune -o -type f -print | sed "s/\(.*\)_${ida}\([._]\)/\1_ID\2/" | sort)
lb=$(cd "$db" && find . -type f -print | sed "s/\(.*\)_${idb}\([._]\)/\1_ID\2/" | sort)
[ "$la" = "$lb" ] || fail "files differ: $(printf '%s\n--\n%s' "$la" "$lb")"
mask() { sed -e 's/[0-9][0-9.e+-]*/N/g' "$1"; }
for f in "sbatch_pretrain_llama3.1_8b_bf16_16_ID.out" "log-pretrain_llama3.1_8b_bf16_16_ID_0.out"; do
    fa=$da/$(echo "$f" | sed "s/ID/$ida/") fb=$db/$(echo "$f" | sed "s/ID/$idb/")
    mask "$fa" >"$W/a" && mask "$fb" >"$W/b" && cmp -s "$W/a" "$W/b" || fail "$f differs: $(diff "$W/a" "$W/b" | head -5)"
done
secs_of() { # the job's run time in seconds (Slurm's, whole seconds)
    scontrol -o show job "$1" 2>/dev/null | sed -n 's/.* RunTime=\([0-9:-]*\) .*/\1/p' | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }'
}
[ "$fails" -eq 0 ] && ok "no nvidia-smi: 'missing nvidia-smi' per node; exit, state, files, Slurm output and log as with SNAPSHOT=false"
echo "$T: job run time with the snapshot (no nvidia-smi) $(secs_of "$ida") s, with SNAPSHOT=false $(secs_of "$idb") s (2 nodes)"

# ---- 3. a hanging nvidia-smi -q --------------------------------------------------------------------------------
H=$W/hang
mkdir -p "$H"
echo '{"hang": ["q"]}' >"$H/default.json"
t0=$(date +%s)
dh=$(run hang PATH="$stub:$PATH" NP_STUB_DIR="$H" JOB_TOTAL_GPUS=8 MAX_STEPS=4)
took=$(($(date +%s) - t0))
[ "$(cat "$W/hang.rc")" = 0 ] || fail "hanging nvidia-smi: launch --wait exited $(cat "$W/hang.rc")"
[ "$(cat "$dh/system/n1/status" 2>/dev/null)" = "timeout nvidia-smi -q -x" ] &&
    grep -qx '### uname -a' "$dh/system/n1/host.txt" && ok "a hanging nvidia-smi -q: 'timeout nvidia-smi -q -x', the other tools kept, job completed ($took s)" ||
    fail "hanging nvidia-smi: status $(cat "$dh/system/n1/status" 2>/dev/null)"

# ---- 4. --compare names what differs between the two sets' systems ---------------------------------------------
# a baseline job on the stand-in's default nodes and a candidate whose nodes have another driver and a 500 W limit
mkdir -p "$W/stc"
echo '{"driver": "550.54.15", "power_limit_w": 500.0}' >"$W/stc/default.json"
db=$(run cmpb PATH="$stub:$PATH" NP_STUB_DIR="$W/stb" JOB_TOTAL_GPUS=16 MAX_STEPS=12)
dc=$(run cmpc PATH="$stub:$PATH" NP_STUB_DIR="$W/stc" JOB_TOTAL_GPUS=16 MAX_STEPS=12)
parse=$bindir/nemoperf-parse
"$parse" --compare "$W/cmpb" "$W/cmpc" >"$W/cmp.out" 2>"$W/cmp.err"
grep -q "^systems: 2 differences between a baseline run's and a candidate run's" "$W/cmp.out" &&
    grep -qx '  driver 560.35.03 -> 550.54.15' "$W/cmp.out" && grep -qx '  power limit 700 W -> 500 W' "$W/cmp.out" &&
    ok "--compare of two run sets: their systems differ in driver and power limit, both said" ||
    fail "--compare's systems: $(cat "$W/cmp.out" "$W/cmp.err")"
export NEMOPERF_DB="$W/store.db"
"$parse" --store --cluster A "$W/cmpb" >/dev/null 2>&1 && "$parse" --store --cluster B "$W/cmpc" >/dev/null 2>&1 ||
    fail "--store of the two runs"
"$parse" --format json --compare db:cluster=A db:cluster=B >"$W/cmp.json" 2>"$W/cmp.err"
python3 - "$W/cmp.json" "$db" "$dc" <<'PY' && ok "the same from the store, in JSON (system.differences, each side's run)" ||
import json, sys
s = json.load(open(sys.argv[1]))["system"]
assert s["differences"] == ["driver 560.35.03 -> 550.54.15", "power limit 700 W -> 500 W"], s
assert s["baseline_run"] == sys.argv[2] and s["candidate_run"] == sys.argv[3], s
PY
    fail "store --compare's systems: $(head -c 1500 "$W/cmp.json") $(cat "$W/cmp.err")"
"$parse" --compare "$W/nosnap" "$W/nosmi" 2>/dev/null | grep -q '^systems: not compared (no run of the baseline has a system snapshot)$' &&
    ok "a side without a snapshot: 'not compared', said" || fail "a side without a snapshot: $("$parse" --compare "$W/nosnap" "$W/nosmi" 2>&1)"
unset NEMOPERF_DB
pgrep -f "$stub/nvidia-smi" >/dev/null && fail "a stand-in nvidia-smi still runs after the jobs"

[ "$fails" -eq 0 ] || { echo "$T: $fails check(s) failed" >&2; exit 1; }
echo "$T: all checks passed"
