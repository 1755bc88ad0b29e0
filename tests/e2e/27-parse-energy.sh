#!/bin/sh
# 27-parse-energy.sh - energy per token from Megatron's --log-energy iteration lines: the real public excerpt
# tests/data/real/cloudai_megatron_lm_energy_us.log (Megatron-LM lines of 2026-02-06 quoted in NVIDIA/cloudai's tests,
# see tests/data/real/README.md) read as an 8-GPU run of sequence 8192 (the log names neither; given as options):
# W/GPU and J/iter/GPU are the means of the log's own figures over the window, J/token = J/iter/GPU x GPUs /
# (sequence x GBS), tokens/kWh = 3.6e6 / J/token, MWh for 1e12 tokens = J/token x 1e12 / 3.6e9, in JSON, CSV and
# the table's note; a log without the fields has energy null.  The expected values are computed here from the log.
set -u
P=${NP_BIN:-bin}/nemoperf-parse
T=$(mktemp -d "${TMPDIR:-/tmp}/np-energy.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "27-parse-energy: ok: $*"; }
bad() { echo "27-parse-energy: FAIL: $*"; fail=$((fail + 1)); }
L=tests/data/real/cloudai_megatron_lm_energy_us.log
"$P" --gpus 8 --seq-len 8192 --format json "$L" > "$T/j" 2>"$T/err"
python3 - "$T/j" "$L" <<'PY' && ok "JSON: W/GPU, J/iter/GPU, J/token, tokens/kWh, MWh to the log's own figures" || bad "JSON: $(head -c 600 "$T/j") $(cat "$T/err")"
import json, re, sys
r = json.load(open(sys.argv[1]))["runs"][0]
text = open(sys.argv[2]).read()
j = [float(x) for x in re.findall(r"energy per GPU \(J/iter/GPU\): ([0-9.]+)", text)]
w = [float(x) for x in re.findall(r"power per GPU \(W/GPU\): ([0-9.]+)", text)]
gbs = int(re.findall(r"global batch size:\s+(\d+)", text)[-1])
e = r["energy"]
assert len(j) == 3 and e["steps"] == 3, (j, e)
assert abs(e["w_per_gpu"] - sum(w) / 3) < 1e-6 and abs(e["j_per_gpu_iter"] - sum(j) / 3) < 1e-6, e
jt = sum(j) / 3 * 8 / (8192 * gbs)
assert abs(e["j_per_token"] / jt - 1) < 1e-9, (e, jt)
assert abs(e["tokens_per_kwh"] / (3.6e6 / jt) - 1) < 1e-9 and abs(e["mwh_to_train"] / (jt * 1e12 / 3.6e9) - 1) < 1e-9, e
PY
"$P" --gpus 8 --seq-len 8192 --format csv "$L" > "$T/c" 2>/dev/null
python3 - "$T/c" "$T/j" <<'PY' && ok "CSV: the same five figures" || bad "CSV: $(cat "$T/c")"
import csv, json, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
e = json.load(open(sys.argv[2]))["runs"][0]["energy"]
for k in ("w_per_gpu", "j_per_gpu_iter", "j_per_token", "tokens_per_kwh", "mwh_to_train"):
    assert abs(float(r["energy_" + k]) / e[k] - 1) < 1e-9, (k, r["energy_" + k], e[k])
PY
"$P" --gpus 8 --seq-len 8192 "$L" 2>/dev/null | grep -q '^note: .*energy (the log.s --log-energy, 3 steps): 651.0 W/GPU, 1985.1 J/iter/GPU, 0.06058 J/token' \
    && ok "table: the note says it" || bad "table: $("$P" --gpus 8 --seq-len 8192 "$L" 2>&1)"
"$P" --format json tests/data/real/dgxc_llama31_nemo2.log 2>/dev/null | python3 -c 'import json,sys; assert json.load(sys.stdin)["runs"][0]["energy"] is None' \
    && ok "a log without --log-energy: energy null" || bad "energy without the fields"
[ $fail -eq 0 ] && echo "27-parse-energy: all checks passed"
[ $fail -eq 0 ]
