#!/bin/sh
# 19-launch-json.sh - ./launch --format json on the real local cluster, WORKLOAD=synthetic (the stand-in for the
# NeMo container, which cannot exist here): stdout holds one JSON document and nothing else, valid against
# share/nemoperf/schema/launch.schema.json (python3-jsonschema), naming what was queued (job id, folder, kind,
# row, container, backend, state) as the folder's manifest and Slurm have it; the "job ID: folder" lines and
# every message go to stderr.  One job (an object), through sbatch and slurmrestd; a sweep with REPEATS=2 and
# --wait (an array of 4 with their end states, the table on stderr); a refused launch prints nothing on stdout.
. "$(dirname "$0")/40-rest-lib.inc"
SCHEMA=$root/share/nemoperf/schema/launch.schema.json
PY=python3
$PY -c 'import jsonschema' 2>/dev/null || PY=/usr/bin/python3 # Debian's python3-jsonschema (make deps)
$PY -c 'import jsonschema' 2>/dev/null || die "python3-jsonschema is not installed (make deps)"

# js NAME [OPTION...] -- [VAR=VALUE...]: nemoperf-launch --format json as the test user
js() {
    name=$1
    shift
    opts=
    while [ "$1" != -- ]; do opts="$opts $1"; shift; done
    shift
    runuser -u "$TUSER" -- env -i PATH="$CPATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp STAGE_PATH="$S" \
        WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=6 NEMOPERF_WAIT_MAX_DELAY=2 "$@" \
        "$launch" ${RS---resubmit} --format json $opts >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    grep '^job [0-9][0-9]*: ' "$W/$name.err" >>"$JOBS"
}

# check NAME SHAPE N [END]: stdout is one document valid against the schema, SHAPE object|array of N jobs, each
# as its manifest and stderr's "job ID: folder" line say (END: the slurm_state every job must have)
check() {
    $PY - "$SCHEMA" "$W/$1.out" "$W/$1.err" "$2" "$3" "${4:-}" <<'PYEOF'
import json, os, re, sys
import jsonschema
schema_path, out, err, shape, n, end = sys.argv[1:7]
schema = json.load(open(schema_path))
jsonschema.Draft202012Validator.check_schema(schema)
text = open(out).read()
doc = json.loads(text)  # the whole of stdout: one document, nothing else
jsonschema.Draft202012Validator(schema).validate(doc)
if shape == "object":
    assert isinstance(doc, dict), "want an object, got %s" % type(doc).__name__
    jobs = [doc]
else:
    assert isinstance(doc, list), "want an array"
    jobs = doc
assert len(jobs) == int(n), "%d jobs, want %s" % (len(jobs), n)
lines = dict(re.findall(r"^job ([0-9]+): (.*)$", open(err).read(), re.M))
assert len(lines) == len(jobs), "stderr names %d jobs" % len(lines)
for j in jobs:
    m = json.load(open(os.path.join(j["folder"], "nemoperf.json")))
    assert j["state"] == "submitted" == m["state"], (j["state"], m["state"])
    assert j["job_id"] == m["job_id"] and lines[j["job_id"]] == j["folder"], j
    assert j["backend"] == m["backend"], (j["backend"], m["backend"])
    for k in ("recipe", "model_size", "dtype", "gpu_type", "gpus", "task"):
        assert j[k] == m["config"][k], (k, j[k], m["config"][k])
    assert j["kind"] == "nemo" and j["workload"] == "synthetic" and j["container"] == "nvcr.io#nvidia/nemo:25.02.01", j
    assert j["repeat"] == m.get("repeat"), (j["repeat"], m.get("repeat"))
    if end:
        assert j["slurm_state"] == end, j["slurm_state"]
    else:
        assert j["slurm_state"] is None
print(" ".join(j["job_id"] for j in jobs))
PYEOF
}

js one -- JOB_TOTAL_GPUS=8
if [ "$rc" -eq 0 ] && ids=$(check one object 1) && [ "$(job_field "$ids" JobName)" = pretrain_llama3.1_8b_bf16_8 ]; then
    ok "sbatch: one job: one JSON object on stdout, valid, job $ids as its manifest and Slurm have it"
else
    fail "one: exit $rc: $(cat "$W/one.out" "$W/one.err")"
fi
grep -q '^when the job has ended: ' "$W/one.err" && ok "the parse hint is on stderr" || fail "one: no hint on stderr"

js rest -- JOB_TOTAL_GPUS=8 SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL"
if [ "$rc" -eq 0 ] && ids=$(check rest object 1) && grep -q '"backend": "rest"' "$W/rest.out"; then
    ok "slurmrestd: one job: one valid JSON object, backend rest"
else
    fail "rest: exit $rc: $(cat "$W/rest.out" "$W/rest.err")"
fi

js sweep --wait -- JOB_TOTAL_GPUS=8,16 REPEATS=2
if [ "$rc" -eq 0 ] && ids=$(check sweep array 4 COMPLETED) &&
    grep -q '^pretrain_llama3.1_8b_bf16_16 .* synthetic *$' "$W/sweep.err" &&
    [ "$(grep -c '"index": [12],*$' "$W/sweep.out")" -eq 4 ]; then
    ok "--wait, a sweep 8,16 with REPEATS=2: an array of 4 jobs, valid, each COMPLETED; the table on stderr"
else
    fail "sweep: exit $rc: $(cat "$W/sweep.out") $(tail -5 "$W/sweep.err")"
fi

js refused -- JOB_TOTAL_GPUS=64
[ "$rc" -eq 2 ] && [ ! -s "$W/refused.out" ] && grep -q 'can never run' "$W/refused.err" &&
    ok "a launch refused before submitting: exit 2, nothing on stdout" ||
    fail "refused: exit $rc: $(cat "$W/refused.out" "$W/refused.err")"
RS= js dry --dry-run -- JOB_TOTAL_GPUS=8
[ "$rc" -eq 2 ] && [ ! -s "$W/dry.out" ] && grep -q -- '--format goes with --list or a submission' "$W/dry.err" &&
    ok "--format json --dry-run: refused (exit 2)" || fail "dry: exit $rc: $(cat "$W/dry.out" "$W/dry.err")"
finish
