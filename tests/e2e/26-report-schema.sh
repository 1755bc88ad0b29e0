#!/bin/sh
# 26-report-schema.sh - every JSON report validates against the shipped schema (share/nemoperf/schema/report.schema.json,
# JSON Schema 2020-12, checked with the python3-jsonschema library): the golden JSON outputs of tests/data/parse, and
# nemoperf-parse --format json on trees of every family and option (--reference, --group, --nccl, a mixed tree of NeMo,
# Megatron-Bridge with the job's system snapshot and telemetry, synthetic and unidentified runs).  A key the reports write that the schema does not know fails it
# (the run objects allow no other keys), so the schema stays the reports'.
set -u
P=${NP_BIN:-bin}/nemoperf-parse
T=$(mktemp -d "${TMPDIR:-/tmp}/np-schema.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "26-report-schema: ok: $*"; }
bad() { echo "26-report-schema: FAIL: $*"; fail=$((fail + 1)); }
PY=python3
$PY -c 'import jsonschema' 2>/dev/null || PY=/usr/bin/python3 # Debian's python3-jsonschema (make deps)
$PY -c 'import jsonschema' 2>/dev/null || { bad "python3-jsonschema is not installed (make deps)"; exit 1; }

# the trees: a Megatron-Bridge run (manifest + log), a synthetic one, NeMo runs of every kind, an NCCL trace
mkdir -p "$T/mixed/mb" "$T/mixed/syn"
python3 - "$T/mixed" <<'PY'
import json, os, sys
d = sys.argv[1]
for sub, extra in (("mb", {}), ("syn", {"workload": "synthetic"})):
    m = {"mbridge": {"recipe": "deepseek_v3", "dtype": "fp8_mx", "gpu_type": "gb300", "gpus": 256, "container": "26.08"}}
    m.update(extra)
    json.dump(m, open(os.path.join(d, sub, "nemoperf.json"), "w"))
    with open(os.path.join(d, sub, "log-mb_1_0.out"), "w") as f:
        for i in range(1, 51):
            f.write("Step Time : 10.42s GPU utilization: 1635.0MODEL_TFLOP/s/GPU\n")
            f.write(" iteration %8d/%8d | elapsed time per iteration (ms): 10422.4 | global batch size:  4096 |\n" % (i, 50))
PY
# the Megatron-Bridge run with the job's system snapshot and telemetry of four nodes, one of them without nvidia-smi
cp -r tests/data/system/run4/system tests/data/system/run4/telemetry "$T/mixed/mb/"
cp -r tests/data/system/missing/system/m1 "$T/mixed/mb/system/"
cp -r tests/data/parse/kinds/in "$T/mixed/kinds"
cp -r tests/data/nccl-tests-runs/nccl-tests_* "$T/mixed/"   # fabric checks (kind nccl-tests)
cp -r tests/data/parse/gb200-no-identity/in/pretrain_llama3_8b_fp8_8 "$T/mixed/"
mkdir -p "$T/mixed/pretrain_llama3.1_8b_bf16_8"
{ cat tests/data/nccl/nccl-torchtitan-tp2/input.log
  python3 -c "
for i in range(50): print('Training epoch 0, iteration %d/49 | global_batch_size: 128 | global_step: %d | reduced_train_loss: 11.9 | train_step_timing in s: 12.3 | consumed_samples: %d' % (i, i, (i + 1) * 128))"
} > "$T/mixed/pretrain_llama3.1_8b_bf16_8/log-x_1_0.out"
cp tests/data/scan/nemo2.log "$T/mixed/unidentified.out" 2>/dev/null || true
python3 tests/dfm/make-logs.py "$T/mixed/dfm" >/dev/null || bad "tests/dfm/make-logs.py"   # NeMo DFM's Wan 2.1 rows

n=0
for f in tests/data/parse/*/expected.out; do
    head -c 1 "$f" | grep -q '{' || continue
    cp "$f" "$T/golden-$n.json"
    n=$((n + 1))
done
k=0
for args in "" "--reference" "--group" "--group --reference" "--nccl" "--nccl --reference" "--verdict last --reference"; do
    # shellcheck disable=SC2086
    "$P" --no-progress $args --format json "$T/mixed" > "$T/out-$k.json" 2>/dev/null
    k=$((k + 1))
done
$PY - share/nemoperf/schema/report.schema.json "$T" <<'PY' && ok "$n golden JSON outputs and $k reports of a mixed tree (every family, kind and option) validate" || bad "schema"
import glob, json, os, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
bad = 0
fams = set()
for f in sorted(glob.glob(os.path.join(sys.argv[2], "*.json"))):
    d = json.load(open(f))
    errs = sorted(v.iter_errors(d), key=lambda e: list(e.path))
    for e in errs[:3]:
        print("%s: %s: %s" % (os.path.basename(f), "/".join(map(str, e.path)), e.message[:200]))
    bad += bool(errs)
    fams |= {r["family"] for r in d["runs"]}
assert not bad, bad
assert {"nemo", "mbridge", "dfm", None} <= fams, fams
# the check can fail: a key the schema does not know is refused
d = json.load(open(os.path.join(sys.argv[2], "out-0.json")))
# the system snapshot was read (and validated above), energy from its telemetry
s = [r for r in d["runs"] if r["system_snapshot"]]
assert len(s) == 1 and len(s[0]["system_snapshot"]["nodes"]) == 5 and s[0]["energy"]["source"] == "telemetry", s
assert any("n4: driver 535.161.08" in x for x in s[0]["system_snapshot"]["stands_out"]), s[0]["system_snapshot"]
d2 = json.loads(json.dumps(d))
d2["runs"][d["runs"].index(s[0])]["system_snapshot"]["nodes"][1]["gpus"][0]["watts"] = 1
assert list(v.iter_errors(d2)), "an unknown key of a GPU passed"
d["runs"][0]["megatron_bridge"] = []
assert list(v.iter_errors(d)), "an unknown key passed"
PY
# the same tree as markdown: one document, each publication's layout (NeMo's, DFM's, the 26.08 container's), the
# runs in no table listed once below them; as CSV: one header, every record of its width
"$P" --no-progress --format markdown "$T/mixed" > "$T/md" 2>/dev/null
# (the 26.08 section twice: the real run's, then the synthetic run's under its own label)
[ "$(grep -c '^## 26.08 NeMo Container' "$T/md")" -eq 2 ] && grep -q '^Synthetic CPU workload' "$T/md" &&
    grep -q '^Llama' "$T/md" && grep -q 'Wan' "$T/md" &&
    [ "$(grep -c '^Runs not in the tables or not ok:' "$T/md")" -eq 1 ] \
    && ok "markdown of the mixed tree: one document, the NeMo, DFM and Megatron-Bridge layouts, one list" || bad "markdown: $(head -40 "$T/md")"
"$P" --no-progress --format csv "$T/mixed" > "$T/csv" 2>/dev/null
python3 - "$T/csv" <<'PY' && ok "CSV of the mixed tree: one header, every record of its width" || bad "CSV: $(head -3 "$T/csv")"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][0] == "path" and sum(r[:1] == ["path"] for r in rows) == 1 and all(len(r) == len(rows[0]) for r in rows)
assert {"nemo", "mbridge", "dfm"} <= {dict(zip(rows[0], r))["family"] for r in rows[1:]}
PY
[ $fail -eq 0 ] && echo "26-report-schema: all checks passed"
[ $fail -eq 0 ]
