#!/bin/sh
# 19-launch-runs.sh - ./launch --runs on the real local cluster, WORKLOAD=synthetic (the stand-in for the NeMo
# container, which cannot exist here): the runs launched under a STAGE_PATH listed from their records with
# Slurm's state of each job (COMPLETED, RUNNING/PENDING, CANCELLED as scontrol has them), as a table and as
# JSON valid against share/nemoperf/schema/launch-runs.schema.json (python3-jsonschema); a record left
# "unknown" (edited so: fault injection) listed as it is, nothing written; Slurm unreachable: listed without
# states, exit 1; folders as arguments; a STAGE_PATH with nothing launched: 0 runs.
. "$(dirname "$0")/40-rest-lib.inc"
SCHEMA=$root/share/nemoperf/schema/launch-runs.schema.json
PY=python3
$PY -c 'import jsonschema' 2>/dev/null || PY=/usr/bin/python3 # Debian's python3-jsonschema (make deps)
$PY -c 'import jsonschema' 2>/dev/null || die "python3-jsonschema is not installed (make deps)"

# runs NAME [OPTION...] [-- VAR=VALUE...]: nemoperf-launch --runs as the test user
runs() {
    name=$1
    shift
    opts=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do opts="$opts $1"; shift; done
    [ $# -gt 0 ] && shift
    runuser -u "$TUSER" -- env -i PATH="$CPATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp STAGE_PATH="$S" "$@" \
        "$launch" --runs $opts >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
}

launch_as done --wait JOB_TOTAL_GPUS=8 REPEATS=2
rc_of done
[ "$rc" -eq 0 ] || fail "done: launch exited $rc: $(tail -3 "$W/done.err")"
launch_as live JOB_TOTAL_GPUS=8 MAX_STEPS=100000 TIME_LIMIT=00:05:00
launch_as gone JOB_TOTAL_GPUS=16 MAX_STEPS=100000 TIME_LIMIT=00:05:00
gid=$(ids_of gone)
scancel "$gid"
wait_state "$gid" CANCELLED 30 || fail "job $gid never CANCELLED"

runs table
n=$(grep -c '^[0-9][0-9]*  ' "$W/table.out")
if [ "$rc" -eq 0 ] && [ "$n" -eq 4 ] && grep -q '^4 runs$' "$W/table.out" &&
    [ "$(grep -c '^[0-9]*  *COMPLETED  *submitted .* [12]/2 ' "$W/table.out")" -eq 2 ] &&
    grep -q "^$gid  *CANCELLED\( ([A-Za-z]*)\)\?  *submitted .*pretrain_llama3.1_8b_bf16_16 " "$W/table.out"; then
    ok "table: 4 runs, the 2 repeats COMPLETED 1/2 and 2/2, the cancelled job CANCELLED"
else
    fail "table: exit $rc, $n rows: $(cat "$W/table.out" "$W/table.err")"
fi
lid=$(ids_of live)
ls=$(job_field "$lid" JobState)
grep -q "^$lid  *$ls" "$W/table.out" && ok "the live job $lid listed $ls, as scontrol has it" ||
    fail "live job $lid ($ls): $(cat "$W/table.out")"

runs json --format json
if [ "$rc" -eq 0 ] && $PY - "$SCHEMA" "$W/json.out" <<'PYEOF'
import json, subprocess, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
doc = json.loads(open(sys.argv[2]).read())  # all of stdout: one document
jsonschema.Draft202012Validator(schema).validate(doc)
assert len(doc) == 4, len(doc)
for r in doc:
    m = json.load(open(r["folder"] + "/nemoperf.json"))
    assert r["job_id"] == m["job_id"] and r["record"] == m["state"] == "submitted", r
    assert r["slurm_known"] is True and r["repeat"] == m.get("repeat"), r
    out = subprocess.run(["scontrol", "-o", "show", "job", r["job_id"]], capture_output=True, text=True).stdout
    state = [f.split("=", 1)[1] for f in out.split() if f.startswith("JobState=")][0]
    if r["slurm_state"] != state and not (r["slurm_state"] in ("PENDING", "CONFIGURING") and state == "RUNNING"):
        raise SystemExit("job %s: %s, scontrol says %s" % (r["job_id"], r["slurm_state"], state))
PYEOF
then
    ok "--format json: an array of 4, valid against launch-runs.schema.json, states as scontrol has them"
else
    fail "json: exit $rc: $(cat "$W/json.out" "$W/json.err")"
fi

# a record left "unknown" (fault injection: the manifest edited as a lost sbatch answer leaves it)
d=$(dirs_of gone)
cp "$d/nemoperf.json" "$W/saved.json"
sed -i 's/"state": "submitted"/"state": "unknown"/; s/"job_id": "[0-9]*"/"job_id": null/' "$d/nemoperf.json"
runs unsettled
grep -q '^-  *-  *unknown ' "$W/unsettled.out" && grep -q -- '--reconcile FOLDER settles it' "$W/unsettled.out" &&
    grep -q '"state": "unknown"' "$d/nemoperf.json" &&
    ok "an unknown record: listed as it is with the hint, the record untouched" ||
    fail "unsettled: exit $rc: $(cat "$W/unsettled.out" "$W/unsettled.err")"
cp "$W/saved.json" "$d/nemoperf.json"

runs down -- SLURM_SUBMIT=rest SLURMRESTD_URL=unix:/nonexistent/rest.sock
[ "$rc" -eq 1 ] && grep -q '^4 runs$' "$W/down.out" && [ "$(grep -c '^[0-9][0-9]*  *-  *submitted' "$W/down.out")" -eq 4 ] &&
    grep -q 'could not be asked for' "$W/down.err" &&
    ok "Slurm unreachable: the 4 runs listed without states, exit 1" ||
    fail "down: exit $rc: $(cat "$W/down.out" "$W/down.err")"

runs folder "$d"
[ "$rc" -eq 0 ] && grep -q '^1 run$' "$W/folder.out" && grep -q "^$gid  *CANCELLED" "$W/folder.out" &&
    ok "--runs FOLDER: that run only" || fail "folder: exit $rc: $(cat "$W/folder.out" "$W/folder.err")"

mkdir -p "$W/empty"
runs empty -- STAGE_PATH="$W/empty"
[ "$rc" -eq 0 ] && [ "$(cat "$W/empty.out")" = "0 runs" ] && ok "nothing launched under STAGE_PATH: 0 runs, exit 0" ||
    fail "empty: exit $rc: $(cat "$W/empty.out" "$W/empty.err")"
runs nostage -- STAGE_PATH=
[ "$rc" -eq 2 ] && grep -q -- '--runs needs STAGE_PATH' "$W/nostage.err" && ok "no STAGE_PATH, no folder: exit 2" ||
    fail "nostage: exit $rc: $(cat "$W/nostage.err")"
finish
