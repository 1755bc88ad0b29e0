#!/bin/sh
# record.sh - record real slurmrestd replies of the running test cluster for the unit tests
# (tests/check_slurm_rest.c).  Run as root after `tests/slurm/cluster up --slurm X` with the
# same NP_CLUSTER_* variables: `sh tests/data/rest/record.sh v0.0.41 v0.0.40`.  For each API
# version it writes tests/data/rest/<version>-<case>.json (the body; HTTP status in
# <version>-<case>.http): ping (UP), ping-down (slurmctld stopped for a moment, then started
# again by `cluster up`), submit-ok, submit-unknown-field (a field the version does not know),
# submit-plain-number (time_limit as a plain integer: v0.0.40 warns), submit-partition-down, submit-error-noenv, the job's state
# (job.json: GET job/{id}; jobs-state.json: GET jobs/state?job_id=..&job_id=.. with an array
# job, v0.0.42+) and an unknown job.  "meta" is dropped (client address, versions).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cluster=$root/tests/slurm/cluster
eval "$("$cluster" env)" || exit 1
SOCK=${SLURMRESTD_URL#unix:}
TUSER=$NP_CLUSTER_USER
W=$(mktemp -d /tmp/np-record.XXXXXX) && chmod 0777 "$W" || exit 1

# req METHOD PATH [BODY] > body; status in $W/http
req() {
    runuser -u "$TUSER" -- curl -sS -o "$W/body" -w '%{http_code}' --unix-socket "$SOCK" -X "$1" \
        -H 'Content-Type: application/json' ${3:+--data-binary "$3"} "http://localhost$2" >"$W/http"
    python3 -c 'import json,sys
t=open(sys.argv[1]).read()
try:
    j=json.loads(t); j.pop("meta",None); print(json.dumps(j,indent=2))
except ValueError:
    sys.stdout.write(t)' "$W/body"
}
save() { req "$2" "$3" "${4:-}" >"$here/$1.json"; cp "$W/http" "$here/$1.http"; echo "$1: HTTP $(cat "$W/http")"; }
job_id_of() { sed -n 's/^ *"job_id": \([0-9]*\).*/\1/p' "$here/$1.json" | head -1; }

# the job description each version takes (the forms of src/slurm_rest.c's table)
body() { # VERSION EXTRA-JOB-FIELDS [ENV]
    case $1 in
    v0.0.38) j='"nodes":[1,1],"exclusive":"exclusive","time_limit":5,"gpus_per_node":"8"'
             e='{"PATH":"/usr/bin:/bin"}' ;;
    v0.0.39|v0.0.40|v0.0.41)
             j='"minimum_nodes":1,"maximum_nodes":1,"shared":["none"],"time_limit":{"set":true,"infinite":false,"number":5},"tres_per_node":"gres/gpu:8"'
             e='["PATH=/usr/bin:/bin"]' ;;
    *)       j='"minimum_nodes":1,"maximum_nodes":1,"shared":["none"],"time_limit":{"set":true,"infinite":false,"number":5},"tres_per_node":"gres/gpu:8"'
             e='["PATH=/usr/bin:/bin"]' ;;
    esac
    env=',"environment":'$e
    [ "${3:-}" = noenv ] && env=
    printf '{"job":{"name":"np-record","tasks_per_node":8,"tasks":8,%s,"current_working_directory":"%s","standard_output":"%s/o-%%j.out"%s%s},"script":"#!/bin/sh\\nsleep 2\\n"}' \
        "$j" "$W" "$W" "$env" "$2"
}

for v in "$@"; do
    save "$v-ping" GET "/slurm/$v/ping"
    save "$v-submit-ok" POST "/slurm/$v/job/submit" "$(body "$v" "")"
    ok=$(job_id_of "$v-submit-ok")
    save "$v-submit-unknown-field" POST "/slurm/$v/job/submit" "$(body "$v" ',"nemoperf_no_such_field":1')"
    save "$v-submit-plain-number" POST "/slurm/$v/job/submit" "$(body "$v" "" | sed 's/"time_limit":{[^}]*}/"time_limit":5/')"
    scontrol update partitionname=batch state=down
    save "$v-submit-partition-down" POST "/slurm/$v/job/submit" "$(body "$v" "")"
    scontrol update partitionname=batch state=up
    save "$v-submit-error-noenv" POST "/slurm/$v/job/submit" "$(body "$v" "" noenv)"
    arr=$(runuser -u "$TUSER" -- sbatch --parsable --array=1-2 -o "$W/a-%A_%a.out" -D "$W" --wrap 'sleep 3')
    sleep 1
    case $v in
    v0.0.38|v0.0.39|v0.0.40|v0.0.41)
        save "$v-job" GET "/slurm/$v/job/$ok"
        save "$v-job-array" GET "/slurm/$v/job/$arr"
        save "$v-job-unknown" GET "/slurm/$v/job/999999" ;;
    *)
        save "$v-jobs-state" GET "/slurm/$v/jobs/state?job_id=$ok&job_id=$arr"
        save "$v-jobs-state-unknown" GET "/slurm/$v/jobs/state?job_id=999999" ;;
    esac
done
# ping with slurmctld stopped (only this cluster's, by its pid file), then up again
pid=$(cat "$NP_CLUSTER_DIR/run/slurmctld.pid")
kill "$pid" && while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
for v in "$@"; do save "$v-ping-down" GET "/slurm/$v/ping"; done
"$cluster" up >/dev/null 2>&1 || echo "record: cluster up failed" >&2
scancel -n np-record 2>/dev/null
scancel "$arr" 2>/dev/null
rm -rf "$W"
