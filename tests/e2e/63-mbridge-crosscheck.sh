#!/bin/sh
# 63-mbridge-crosscheck.sh - rank 0's "GPU utilization: x MODEL_TFLOP/s/GPU" against nemoperf's own FLOPs, as a
# user meets it: nemoperf-synth --log-format mbridge writes Megatron-Bridge's lines (no Slurm here: one process is
# rank 0 and the last rank), nemoperf-parse reads them.  Cases: the figure MB would print (--step-tflops, the
# step's model TFLOPs) agrees; a figure 10 % high is reported in the note and JSON; no rank-0 line: nothing is
# made up; a window problem does not hide the disagreement; Wan (DFM): MB's logged figure is said and not used.
# Stand-in: the synthetic job's CPU step stands in for the GPU step (no GPU here); the Wan log is
# tests/dfm/make-logs.py's with the iteration line's optional throughput field added (MB's log_throughput).
set -u
B=${NP_BIN:-bin}
P=$B/nemoperf-parse
S=$B/nemoperf-synth
T=$(mktemp -d "${TMPDIR:-/tmp}/np-mbcross.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "63-mbridge-crosscheck: ok: $*"; }
bad() { echo "63-mbridge-crosscheck: FAIL: $*"; fail=$((fail + 1)); }
unset SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_NODEID SLURMD_NODENAME SLURM_JOB_ID SLURM_STEP_ID

# synth OUT [--step-tflops X]: 12 Megatron-Bridge iterations of llama3_8b, 8 GPUs, GBS 8 x 8192 tokens, 1 s
# (a step long against the machine's scheduling jitter: rank 0's mean of X/step is mean(1/step), the formula's 1/mean)
synth() {
    out=$1
    shift
    "$S" --recipe llama3_8b --model-size 8b --dtype bf16 --gpus 8 --tp 1 --pp 1 --mbs 1 --gbs 8 --seq-len 8192 \
        --layers 4 --hidden 256 --step-seconds 1 --max-steps 12 --log-format mbridge "$@" >"$out" 2>"$T/err" ||
        { bad "nemoperf-synth $*: $(cat "$T/err")"; return 1; }
}
# parse LOG [options]: one run as JSON
parse() {
    log=$1
    shift
    "$P" --recipe llama3_8b --dtype bf16 --gpus 8 --gpu gb300 --container 26.06 --gbs 8 --seq-len 8192 \
        --format json "$@" "$log" 2>"$T/perr"
}
# field JSON KEY: one value of the single run (null -> "null"); KEY may be dotted (steady.model_tflops_per_gpu);
# tflops_disagreement_percent: rank 0's logged figure against the formula's, in percent (null when either is)
field() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
k = sys.argv[2]
if k == "tflops_disagreement_percent":
    a, b = r["logged_tflops_per_gpu"], r["steady"]["model_tflops_per_gpu"]
    v = None if a is None or b is None else 100 * (a / b - 1)
else:
    v = r
    for p in k.split("."):
        v = v[p]
print("null" if v is None else v)' "$1" "$2"
}

# 1. without --step-tflops the synthetic rank-0 figure is 0.0: the step's model TFLOPs come from the parse
synth "$T/zero.log" || exit 1
grep -q '^Step Time : [0-9.]*s GPU utilization: 0.0MODEL_TFLOP/s/GPU$' "$T/zero.log" &&
    ok "no --step-tflops: rank 0 prints 0.0" || bad "rank-0 line without --step-tflops: $(grep -m1 'Step Time' "$T/zero.log")"
parse "$T/zero.log" >"$T/zero.json"
tf=$(field "$T/zero.json" steady.model_tflops_per_gpu)
step=$(field "$T/zero.json" window.mean_s)
X=$(python3 -c "print('%.6f' % ($tf * $step * 8))")
python3 -c "import sys; sys.exit(not $X > 0)" || { bad "no formula TFLOP/s/GPU from the parse ($tf, $step)"; exit 1; }

# 2. agree: --step-tflops X -> rank 0 prints X / step / GPUs; its mean over the window is X x mean(1/step), the
#    formula's X / mean(step): they differ only by the steps' own spread (computed here from the log's step times),
#    and no note unless that spread alone passes 1.5 %
synth "$T/agree.log" --step-tflops "$X" || exit 1
parse "$T/agree.log" >"$T/agree.json"
d=$(field "$T/agree.json" tflops_disagreement_percent)
note=$(field "$T/agree.json" note)
gap=$(python3 - "$T/agree.log" <<'PY'
import re, sys
ms = [float(m) for m in re.findall(r"elapsed time per iteration \(ms\): ([0-9.]+)", open(sys.argv[1]).read())][-10:]
print("%.4f" % (100 * ((sum(1 / t for t in ms) / len(ms)) * (sum(ms) / len(ms)) - 1)))
PY
)
python3 -c "import sys; sys.exit(not abs($d - $gap) < 0.1)" 2>/dev/null &&
    { python3 -c "import sys; sys.exit(not abs($gap) < 1.5)" || echo "$note" | grep -q "rank 0 logs"; } &&
    { python3 -c "import sys; sys.exit(abs($gap) < 1.5)" || ! echo "$note" | grep -q "rank 0 logs"; } &&
    ok "agree: rank 0's figure $d % from the formula (the steps' spread: $gap %), note only past 1.5 %" ||
    bad "agree: disagreement $d %, the steps' spread $gap %, note: $note"

# 3. disagree: rank 0's figures of the same log 10 % higher -> (1 + agree) x 1.1 - 1 in JSON, the note names both
d0=$(field "$T/agree.json" tflops_disagreement_percent)
awk '/^Step Time/ { split($0, a, "GPU utilization: "); v = a[2] + 0; sub(/GPU utilization: [0-9.]+/,
     sprintf("GPU utilization: %.1f", v * 1.1)) } { print }' "$T/agree.log" >"$T/high.log"
parse "$T/high.log" >"$T/high.json"
d=$(field "$T/high.json" tflops_disagreement_percent)
note=$(field "$T/high.json" note)
python3 -c "import sys; sys.exit(not abs((1 + $d / 100) - (1 + $d0 / 100) * 1.1) < 0.002)" 2>/dev/null &&
    echo "$note" | grep -q "rank 0 logs .* formula gives" &&
    ok "disagree: +$d %, said in the note ($note)" || bad "disagree: $d % (agree was $d0 %), note: $note"

# 4. absent: no rank-0 line -> no logged figure, no disagreement, no note about it, the run still parses
grep -v '^Step Time' "$T/agree.log" >"$T/absent.log"
parse "$T/absent.log" >"$T/absent.json"
lg=$(field "$T/absent.json" logged_tflops_per_gpu)
d=$(field "$T/absent.json" tflops_disagreement_percent)
note=$(field "$T/absent.json" note)
[ "$lg" = null ] && [ "$d" = null ] && ! echo "$note" | grep -q "rank 0" &&
    ok "absent: logged and disagreement null, formula $(field "$T/absent.json" steady.model_tflops_per_gpu) TFLOP/s/GPU" ||
    bad "absent: logged $lg, disagreement $d, note $note"

# 5. a window the log does not cover makes the run invalid, saying why; the disagreement is still in the note
parse "$T/high.log" --steps 3-20 >"$T/win.json"
note=$(field "$T/win.json" note)
why=$(field "$T/win.json" reason)
[ "$(field "$T/win.json" status)" = invalid ] && echo "$why" | grep -q "window 3-20" && echo "$note" | grep -q "rank 0 logs" &&
    ok "problem in the reason, disagreement in the note: $why / $note" || bad "window problem hides the disagreement: $why / $note"

# 6. Wan (DFM): MB's logged figure is its LLM formula (docs/dfm.md): the note says so, the figure is not used
python3 tests/dfm/make-logs.py "$T/wan" >/dev/null || { bad "make-logs.py"; exit 1; }
log=$(find "$T/wan" -name 'log-*.out' | sort | head -1)
sed -i 's/| learning rate:/| throughput per GPU (TFLOP\/s\/GPU): 17.7 | learning rate:/' "$log"
"$P" --format json "$(dirname "$log")" >"$T/wan.json" 2>"$T/werr"
python3 - "$T/wan.json" <<'PY' && ok "Wan: MB's 17.7 TFLOP/s/GPU said in the note, not used" || bad "Wan: $(head -c 1500 "$T/wan.json")"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert "wrong for Wan" in (r.get("note") or ""), r.get("note")
assert r.get("logged_tflops_per_gpu") is None, r.get("logged_tflops_per_gpu")
assert r["last_model_tflops_per_gpu"] > 100, r["last_model_tflops_per_gpu"]
PY

[ $fail -eq 0 ] && echo "63-mbridge-crosscheck: all checks passed" || echo "63-mbridge-crosscheck: $fail check(s) failed"
exit $((fail != 0))
