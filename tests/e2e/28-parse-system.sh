#!/bin/sh
# 28-parse-system.sh - nemoperf-parse names what in the system a run ran on stands out, on jobs of the real local
# cluster (WORKLOAD=synthetic) whose nodes carry the nvidia-smi stand-in (tests/stubs/nvidia-smi: no GPU exists
# here; it prints NVIDIA's -q -x XML and --query-gpu CSV):
# 1. four nodes, ENABLE_GPU_METRICS=true every 200 ms: n2 capped at 500 W (its SM clock 1755 MHz, 495 W), n3 on
#    another driver, GPU 3 of n4 under HW slowdown at 1410 MHz for part of the run.  The report's note names n3 and
#    its driver, n2 and its power limit, n4 GPU 3 with its clock and the reason; the JSON's system_snapshot holds the
#    four nodes (validated by the schema) and the energy comes from the telemetry: W/GPU the mean of the window's
#    power.draw samples, recomputed here from the CSV files.
# 2. no nvidia-smi on the nodes: the job completes as it would, and the report says "no system snapshot".
# The table's note, the JSON and the markdown's list of the systems the runs ran on say it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
parse=$bindir/nemoperf-parse
cluster=$root/tests/slurm/cluster
stub=$root/tests/stubs/nvidia-smi
T=28-parse-system
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }

[ -x "$launch" ] && [ -x "$parse" ] && [ -x "$bindir/nemoperf-synth" ] || die "not built (make)"
. "$here/system-lib.inc"
W=$(mktemp -d "${TMPDIR:-/tmp}/np-parse-system.XXXXXX") || die "mktemp"
chmod 0755 "$W"
cleanup() {
    [ -f "$W/ids" ] && while read -r id; do scancel "$id" 2>/dev/null; done <"$W/ids"
    [ -n "${KEEP:-}" ] || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16

# run NAME VAR=VALUE...: one job with --wait into its own stage; prints its folder
run() {
    name=$1
    shift
    mkdir -p "$W/$name"
    env STAGE_PATH="$W/$name" "$@" "$launch" --wait --resubmit >"$W/$name.out" 2>"$W/$name.err"
    echo $? >"$W/$name.rc"
    sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' "$W/$name.out" >>"$W/ids"
    sed -n 's/^job [0-9][0-9]*: //p' "$W/$name.out" | head -n 1
}

# ---- 1. four nodes ----------------------------------------------------------------------------------------------
S=$W/stub
mkdir -p "$S"
echo '{"power_limit_w": 500.0, "sm_mhz": 1755, "power_w": 495.0}' >"$S/n2.json"
echo '{"driver": "550.54.15", "cuda": "12.4"}' >"$S/n3.json"
echo '{"throttle": {"3": [[1.0, 2.6, "hw_slowdown"]]}, "throttle_sm_mhz": 1410}' >"$S/n4.json"
d=$(run four PATH="$stub:$PATH" NP_STUB_DIR="$S" JOB_TOTAL_GPUS=32 GPUS_PER_NODE=8 SBATCH_GPUS_PER_NODE=8 MAX_STEPS=30 \
    ENABLE_GPU_METRICS=true NEMOPERF_GPU_METRICS_MS=200)
[ "$(cat "$W/four.rc")" = 0 ] || fail "four nodes: launch --wait exited $(cat "$W/four.rc"): $(tail -5 "$W/four.err")"
[ -n "$d" ] && [ -d "$d/system" ] && [ -d "$d/telemetry" ] || die "four nodes: no run folder with system/ and telemetry/: $(cat "$W/four.out")"
"$parse" --no-progress "$d" >"$W/table" 2>"$W/table.err" || fail "parse exited $?: $(head -3 "$W/table.err")"
note=$(tr '\n' ' ' <"$W/table")
echo "$T: the table's note: $(grep -o 'system: .*' "$W/table" | head -1)"
case $note in *"n3: driver 550.54.15 (the others 560.35.03)"*) ok "n3's driver named" ;; *) fail "n3's driver not named: $note" ;; esac
case $note in *"n2: power limit 500 W on its 8 GPUs (the others 700 W)"*) ok "n2's power limit named" ;;
*) fail "n2's power limit not named: $note" ;; esac
printf '%s' "$note" | grep -Eq 'n4 GPU 3: SM clock [0-9]+ of 1980 MHz \(median GPU 1980 MHz\), HW slowdown [0-9]+ % of the window — likely straggler|n4 GPU 3: SM clock [0-9]+ of 1980 MHz, HW slowdown [0-9]+ % of the window — likely straggler' &&
    ok "n4 GPU 3 named with its SM clock and HW slowdown" || fail "n4 GPU 3 not named: $note"
share=$(printf '%s' "$note" | sed -n 's/.*n4 GPU 3: [^;]*HW slowdown \([0-9]*\) % of the window.*/\1/p')
[ -n "$share" ] && [ "$share" -gt 0 ] && [ "$share" -lt 100 ] && ok "n4 GPU 3 under HW slowdown for $share % of the window (part of it)" ||
    fail "n4 GPU 3's HW slowdown share '$share'"
printf '%s' "$note" | grep -q 'n2: SM clock 1755 of 1980 MHz (median GPU 1980 MHz), SW power cap' &&
    ok "n2's slower clock under its power cap named" || echo "$T: (n2's clock: the stand-in reports no power cap reason)"
case $note in *"n1"*) fail "n1 named, it differs in nothing: $note" ;; esac
"$parse" --no-progress --format markdown "$d" >"$W/md" 2>/dev/null
grep -qx 'The systems the runs ran on:' "$W/md" && grep -q '^- `.*`: n3: driver 550.54.15 .*n2: power limit 500 W.*n4 GPU 3: SM clock' "$W/md" &&
    ok "markdown: the systems the runs ran on, listed" || fail "markdown: $(tail -5 "$W/md")"
"$parse" --no-progress --format json "$d" >"$W/json" 2>/dev/null
python3 - "$W/json" "$d" "$root/share/nemoperf/schema/report.schema.json" <<'PY' && ok "JSON: 4 nodes of 8 GPUs, 32 GPUs' telemetry, energy from telemetry equal to the samples' mean" || fail "JSON"
import csv, glob, json, os, sys
d = json.load(open(sys.argv[1]))
try:
    import jsonschema
    jsonschema.Draft202012Validator(json.load(open(sys.argv[3]))).validate(d)
except ImportError:
    pass
r = d["runs"][0]
s = r["system_snapshot"]
assert [n["name"] for n in s["nodes"]] == ["n1", "n2", "n3", "n4"], s["nodes"]
assert all(len(n["gpus"]) == 8 and n["status"] == "ok" for n in s["nodes"]), s["nodes"]
assert {n["name"]: n["driver"] for n in s["nodes"]}["n3"] == "550.54.15"
assert s["nodes"][1]["gpus"][0]["power_limit_w"] == 500.0
assert len(s["telemetry"]) == 32, len(s["telemetry"])
e = r["energy"]
assert e and e["source"] == "telemetry", e
if s["telemetry_window"] == "whole run":
    vals = []
    for f in glob.glob(os.path.join(sys.argv[2], "telemetry", "*.csv")):
        rows = list(csv.reader(open(f), skipinitialspace=True))
        i = [h.split(" [")[0] for h in rows[0]].index("power.draw")
        vals += [float(x[i]) for x in rows[1:] if len(x) == len(rows[0])]
    want = sum(vals) / len(vals)
else:
    t = s["telemetry"]
    want = sum(g["mean_power_w"] * g["samples"] for g in t) / sum(g["samples"] for g in t)
assert abs(e["w_per_gpu"] - want) < 1e-6 * want, (e["w_per_gpu"], want)
assert abs(e["j_per_gpu_iter"] - e["w_per_gpu"] * r["window"]["mean_s"]) < 1e-6 * e["j_per_gpu_iter"], e
print("28-parse-system: energy %.1f W/GPU, %.1f J/iter/GPU over the %s (%d samples)" % (
    e["w_per_gpu"], e["j_per_gpu_iter"], s["telemetry_window"], sum(g["samples"] for g in s["telemetry"])))
PY

# ---- 2. no nvidia-smi ---------------------------------------------------------------------------------------------
dn=$(run nosmi PATH="$NOSMI_PATH" JOB_TOTAL_GPUS=16 MAX_STEPS=6)
[ "$(cat "$W/nosmi.rc")" = 0 ] || fail "no nvidia-smi: launch --wait exited $(cat "$W/nosmi.rc")"
"$parse" --no-progress "$dn" >"$W/nosmi.table" 2>&1
grep -q 'system: no system snapshot; n1: missing nvidia-smi; n2: missing nvidia-smi' "$W/nosmi.table" &&
    grep -q " synthetic *$" "$W/nosmi.table" && ok "no nvidia-smi: the run as any synthetic one, 'no system snapshot' naming each node's status" ||
    fail "no nvidia-smi: $(cat "$W/nosmi.table")"

[ "$fails" -eq 0 ] || { echo "$T: $fails check(s) failed" >&2; exit 1; }
echo "$T: all checks passed"
