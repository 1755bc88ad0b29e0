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

# --compare --metric energy: two sets of four runs made from the excerpt (its iteration total set to its last
# iteration, so each is a complete run; the same step times), the candidate's J/iter/GPU and W/GPU 5 % higher, each
# run's within +-0.2 %: MORE-ENERGY at about +5 % J/token, exit 1; the other way LESS-ENERGY, exit 0; throughput on
# the same runs not SLOWER, exit 0; the same from the store (schema 3 keeps J/token), sides by --cluster.
python3 - "$L" "$T/sets" <<'PY' || bad "cannot make the run sets"
import os, re, sys
text = open(sys.argv[1]).read().replace("/95367431 |", "/294 |")
for side, f in (("base", 1.0), ("cand", 1.05)):
    for k, n in enumerate((1.0, 1.002, 0.998, 1.001)):
        d = os.path.join(sys.argv[2], side, "run%d" % k)
        os.makedirs(d)
        t = re.sub(r"(energy per GPU \(J/iter/GPU\): |power per GPU \(W/GPU\): )([0-9.]+)",
                   lambda m: "%s%.1f" % (m.group(1), float(m.group(2)) * f * n), text)
        open(os.path.join(d, "log.out"), "w").write(t)
PY
ID="--recipe llama3.1 --size 8b --dtype bf16 --gpu h100 --gpus 8 --seq-len 8192 --gbs 32"
cmp_check() { # cmp_check NAME WANT_RC WANT_VERDICT WANT_CHANGE ARGS...: --format json, the first configuration's verdict
    name=$1 want_rc=$2 want_v=$3 want_d=$4
    shift 4
    "$P" $ID --format json --compare "$@" >"$T/cmp.json" 2>"$T/cmp.err"
    rc=$?
    python3 - "$T/cmp.json" "$want_v" "$want_d" <<'PY' && [ "$rc" -eq "$want_rc" ] && ok "$name: $want_v, exit $rc" ||
import json, sys
c = json.load(open(sys.argv[1]))["configurations"]
assert len(c) == 1 and c[0]["baseline"]["n"] == 4 and c[0]["candidate"]["n"] == 4, c
v = c[0]["verdict"]
assert v == sys.argv[2] if sys.argv[2] != "!SLOWER" else v != "SLOWER", v
if sys.argv[3] != "-":
    assert abs(c[0]["change_pct"] - float(sys.argv[3])) < 0.5 and c[0]["unit"] == "J/token", c[0]
PY
        bad "$name: exit $rc (want $want_rc): $(head -c 800 "$T/cmp.json") $(cat "$T/cmp.err")"
}
cmp_check "energy, 5 % more power" 1 MORE-ENERGY 5 --metric energy "$T/sets/base" "$T/sets/cand"
cmp_check "energy, the other way" 0 LESS-ENERGY -4.76 --metric energy "$T/sets/cand" "$T/sets/base"
cmp_check "throughput of the same runs" 0 '!SLOWER' - "$T/sets/base" "$T/sets/cand"
export NEMOPERF_DB="$T/store.db"
"$P" $ID --store --cluster A "$T/sets/base" >/dev/null 2>&1 && "$P" $ID --store --cluster B "$T/sets/cand" >/dev/null 2>&1 ||
    bad "--store of the run sets"
cmp_check "energy from the store" 1 MORE-ENERGY 5 --metric energy db:cluster=A db:cluster=B
unset NEMOPERF_DB
"$P" --metric energy "$L" >/dev/null 2>"$T/err"; rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--metric: applies to --compare only' "$T/err" && ok "--metric without --compare: exit 2, said" ||
    bad "--metric without --compare: exit $rc $(cat "$T/err")"
[ $fail -eq 0 ] && echo "27-parse-energy: all checks passed"
[ $fail -eq 0 ]
