#!/bin/sh
# 13-launch-nothing-lost.sh - the submission protocol under faults, on the local cluster (issue 13):
#   1. the disk fills up after submission: STAGE_PATH on a 64 KiB tmpfs mounted for this test
#      (root only; skipped otherwise) with 8 KiB left
#   2. SIGINT / SIGTERM / SIGKILL during a sweep 8,16,32, delivered at fixed points by a slowed
#      sbatch wrapper (tests/stubs/sbatch-slow: fault injection around the real sbatch; it adds
#      --hold so the jobs stay queued and never run here; the test cancels them)
#   3. this cluster's slurmctld stopped (SIGSTOP, its own pid from $NP_CLUSTER_DIR/run) while
#      sbatch waits for it: timeout, outcome "unknown", then --reconcile once it answers
# Every job in the queue submitted from this test's folders must have a record with its id
# (directly or after --reconcile), none twice; a rerun is refused; the user is told.
T=13-launch-nothing-lost
. "$(dirname "$0")/nothing-lost-lib.inc"
W=$(mktemp -d "${TMPDIR:-/tmp}/np-lost.XXXXXX") || die "mktemp"
ctld=
cutpid=
cleanup() {
    [ -n "$ctld" ] && kill -CONT "$ctld" 2>/dev/null
    [ -n "$cutpid" ] && kill "$cutpid" 2>/dev/null
    # cancel the jobs submitted from this test's folders (their work dir is under $W)
    ids=$(squeue -h -t all -o '%i|%Z' 2>/dev/null | awk -F'|' -v w="$W/" 'index($2, w) == 1 { print $1 }')
    [ -n "$ids" ] && scancel $ids 2>/dev/null
    mountpoint -q "$W/mnt" 2>/dev/null && umount "$W/mnt"
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
slow_sbatch
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=5

# ---- 1. disk full after submission ---------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && mkdir -p "$W/mnt" && mount -t tmpfs -o size=64k tmpfs "$W/mnt" 2>/dev/null; then
    S="$W/mnt"
    # leave 2, 3, ... free 4 KiB pages until the script and the pre-sized record just fit: the
    # first launch that gets its job submitted has no room left for the record's second copy
    # (with less room, nothing is submitted: the record must be written first)
    for free in 2 3 4 5 6; do
        rm -rf "$S/experiments" "$S/fill"
        dd if=/dev/zero of="$S/fill" bs=4k count=$((16 - free)) 2>/dev/null
        PATH=$SPATH STAGE_PATH=$S "$launch" >"$W/out" 2>"$W/err"
        rc=$?
        grep -q '^job [0-9]' "$W/out" && break
        # (with the least room the batch script itself, written before the record, does not fit: refused as well)
        grep -Eq 'not submitted \(no record could be written first\)|/\.sbatch_[^ ]*\.tmp\.[0-9]+: write failed: No space left on device' "$W/err" ||
            fail "disk full, $free pages free: neither submitted nor refused before sbatch: $(cat "$W/err")"
    done
    echo "$T: disk full: submitted with $free free pages"
    [ -z "$(queue_jobs "$S")" ] || [ "$(queue_jobs "$S" | grep -c .)" -eq 1 ] ||
        fail "disk full: the launches that could not write a record first queued jobs"
    m=$(find "$S" -name nemoperf.json | head -1)
    id=$(sed -n 's/^job \([0-9]*\): .*/\1/p' "$W/out")
    [ -n "$id" ] && ok "disk full: job id printed ($id), exit $rc" || fail "disk full: no job id printed: $(cat "$W/out" "$W/err")"
    # full while the record was rewritten; the launch's lock (issue 23, one page) is removed at its end
    [ "$(df -k "$S" | awk 'NR == 2 { print $4 }')" -le 4 ] && ok "disk full: the tmpfs is full" ||
        fail "disk full: the tmpfs still has room: $(df -k "$S" | tail -1)"
    [ -n "$m" ] && [ "$(mfield "$m" job_id)" = "$id" ] && [ "$(mfield "$m" state)" = submitted ] &&
        ok "disk full: the record says submitted, job $id (rewritten in place)" ||
        fail "disk full: record: $(grep -E '"(state|job_id)"' "$m" 2>/dev/null)"
    [ -n "$m" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$m" 2>/dev/null &&
        ok "disk full: the record is valid JSON" || fail "disk full: the record is not valid JSON"
    [ "$(check_all "disk full" "$S")" -eq 1 ] && ok "disk full: one job queued, recorded once" ||
        fail "disk full: not exactly one job queued"
    # a rerun is refused: the job exists
    PATH=$SPATH STAGE_PATH=$S "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "job $id (PENDING) of an earlier launch exists" "$W/err" &&
        ok "disk full: a rerun is refused, naming job $id" || fail "disk full: rerun: exit $rc: $(cat "$W/err")"
    [ "$(check_all "disk full rerun" "$S")" -eq 1 ] || fail "disk full: the rerun queued a job"
else
    echo "$T: skip: disk full (needs root to mount a tmpfs)"
fi

# ---- 2a. SIGINT while the first job of a sweep is queued but its id not yet seen -----------
S="$W/int"
mkdir -p "$S"
rm -f "$W/stub"/*
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8,16,32 NP_STUB_POST=2 "$launch" >"$W/out" 2>"$W/err" &
pid=$!
wait_file "$W/stub/after.0" || fail "SIGINT: the wrapper never submitted"
kill -INT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] && ok "SIGINT: exit 130" || fail "SIGINT: exit $rc, want 130"
grep -q '^job [0-9]*: ' "$W/out" && ok "SIGINT: the deferred job's id printed" || fail "SIGINT: no id printed"
grep -q 'stopped by Interrupt after 1 submission.*not submitted: pretrain_llama3.1_8b_bf16_16, pretrain_llama3.1_8b_bf16_32' "$W/err" &&
    ok "SIGINT: told what happened" || fail "SIGINT: stderr: $(cat "$W/err")"
[ "$(check_all SIGINT "$S")" -eq 1 ] && [ "$(count_dirs "$S")" -eq 1 ] &&
    ok "SIGINT: one job queued and recorded with its id; no folder for 16 and 32" ||
    fail "SIGINT: queue/record mismatch ($(count_dirs "$S") records)"
# rerun: refused; --skip-existing submits the rest only
rm -f "$W/stub"/*
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8,16,32 "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'pretrain_llama3.1_8b_bf16_8: job [0-9]* (PENDING) of an earlier launch exists' "$W/err" &&
    grep -q 'nothing written, nothing submitted' "$W/err" && [ "$(count_dirs "$S")" -eq 1 ] &&
    ok "SIGINT: the rerun is refused, nothing written" || fail "SIGINT rerun: exit $rc: $(cat "$W/err")"
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8,16,32 "$launch" --skip-existing >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 0 ] && [ "$(check_all "skip-existing" "$S")" -eq 3 ] && [ "$(count_dirs "$S")" -eq 3 ] &&
    ok "SIGINT: --skip-existing submits 16 and 32 only: 3 jobs, 3 records" ||
    fail "skip-existing: exit $rc, $(count_dirs "$S") records: $(cat "$W/err")"

# ---- 2b. SIGTERM before the second job's sbatch has reached the controller -----------------
S="$W/term"
mkdir -p "$S"
rm -f "$W/stub"/*
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8,16,32 NP_STUB_PRE=1 "$launch" >"$W/out" 2>"$W/err" &
pid=$!
wait_file "$W/stub/before.1" || fail "SIGTERM: the wrapper never started the second job"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 143 ] && ok "SIGTERM: exit 143" || fail "SIGTERM: exit $rc, want 143"
[ "$(grep -c '^job [0-9]*: ' "$W/out")" -eq 2 ] && ok "SIGTERM: both started submissions finished, ids printed" ||
    fail "SIGTERM: stdout: $(cat "$W/out")"
[ "$(check_all SIGTERM "$S")" -eq 2 ] && [ "$(count_dirs "$S")" -eq 2 ] &&
    ok "SIGTERM: two jobs queued, both recorded; 32 not started" || fail "SIGTERM: queue/record mismatch"

# ---- 2c. SIGKILL while a job is queued but not recorded: --reconcile -----------------------
S="$W/kill"
mkdir -p "$S"
rm -f "$W/stub"/*
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8,16,32 NP_STUB_POST=3 "$launch" >"$W/out" 2>"$W/err" &
pid=$!
wait_file "$W/stub/after.0" || fail "SIGKILL: the wrapper never submitted"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
m=$(find "$S" -name nemoperf.json | head -1)
[ "$(mfield "$m" state)" = submitting ] && [ "$(mfield "$m" job_id)" = null ] &&
    ok "SIGKILL: the record says submitting (with tag $(mfield "$m" tag))" || fail "SIGKILL: record: $(cat "$m")"
# the orphaned wrapper (sbatch) still runs NP_STUB_POST seconds: --reconcile leaves the record alone
# until it has ended (issue 23, it holds the experiment's lock), then settles it
reconcile_after_sbatch() {
    i=0
    while :; do
        "$@" >"$W/out" 2>"$W/err"
        rc=$?
        grep -q 'still submitting: its launch is gone' "$W/err" && [ $i -lt 100 ] || break
        sleep 0.2
        i=$((i + 1))
    done
}
reconcile_after_sbatch "$launch" --reconcile "$S"
id=$(queue_jobs "$S" | awk '{ print $1 }')
[ "$rc" -eq 0 ] && grep -q "^job $id: .*: recorded (was submitting; the scheduler has job $id" "$W/out" &&
    ok "SIGKILL: --reconcile found job $id by its tag and said so" || fail "SIGKILL: reconcile: exit $rc: $(cat "$W/out" "$W/err")"
[ "$(check_all SIGKILL "$S")" -eq 1 ] && ok "SIGKILL: after --reconcile the job is recorded with its id" ||
    fail "SIGKILL: queue/record mismatch"
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 "$launch" >"$W/out" 2>"$W/err"
[ $? -eq 2 ] && [ "$(check_all "SIGKILL rerun" "$S")" -eq 1 ] && ok "SIGKILL: a rerun is refused" ||
    fail "SIGKILL: rerun: $(cat "$W/err")"

# ---- 2e. the same, settled through slurmrestd (SLURM_SUBMIT=rest, TCP with JWT) -----------------
if [ -e "$NP_CLUSTER_DIR/run/jwt-enabled" ]; then
    S="$W/killrest"
    mkdir -p "$S"
    rm -f "$W/stub"/*
    PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 NP_STUB_POST=3 "$launch" >"$W/out" 2>"$W/err" &
    pid=$!
    wait_file "$W/stub/after.0" || fail "SIGKILL/rest: the wrapper never submitted"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    (
        eval "$("$root/tests/slurm/cluster" env --tcp)"
        export SLURM_SUBMIT=rest
        reconcile_after_sbatch "$launch" --reconcile "$S"
        exit "$rc"
    )
    rc=$?
    id=$(queue_jobs "$S" | awk '{ print $1 }')
    [ "$rc" -eq 0 ] && [ -n "$id" ] && grep -q "^job $id: .*the scheduler has job $id" "$W/out" &&
        [ "$(check_all "SIGKILL/rest" "$S")" -eq 1 ] &&
        ok "SIGKILL: --reconcile through slurmrestd (GET jobs, comment) found job $id and recorded it" ||
        fail "SIGKILL/rest: exit $rc: $(cat "$W/out" "$W/err")"
else
    echo "$T: skip: reconcile through slurmrestd (no JWT plugin for the TCP slurmrestd)"
fi

# ---- 2d. --reconcile and a rerun while a launch is still submitting: left alone --------------
S="$W/busy"
mkdir -p "$S"
rm -f "$W/stub"/*
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 NP_STUB_PRE=2 "$launch" >"$W/out1" 2>"$W/err1" &
pid=$!
wait_file "$W/stub/before.0" || fail "busy: the wrapper never started"
"$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "still submitting: nemoperf-launch (pid $pid) is submitting it now" "$W/err" &&
    ok "busy: --reconcile leaves a record its live launch is submitting alone" || fail "busy: reconcile: exit $rc: $(cat "$W/err")"
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'still submitting\|is being launched now' "$W/err" && ok "busy: a second launch meanwhile is refused" ||
    fail "busy: second launch: exit $rc: $(cat "$W/err")"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] && [ "$(check_all busy "$S")" -eq 1 ] && [ "$(count_dirs "$S")" -eq 1 ] &&
    ok "busy: the first launch recorded its job; one job, one record" || fail "busy: exit $rc, $(count_dirs "$S") records"

# ---- 3. slurmctld stopped while sbatch waits: unknown, then reconciled --------------------
S="$W/stop"
mkdir -p "$S"
rm -f "$W/stub"/*
ctld=$(tr -dc 0-9 <"$NP_CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
if [ -n "$ctld" ] && tr '\0' ' ' <"/proc/$ctld/cmdline" 2>/dev/null | grep -qF -- "$NP_CLUSTER_DIR/slurm.conf"; then
    kill -STOP "$ctld"
    PATH=$SPATH STAGE_PATH=$S NEMOPERF_SBATCH_TIMEOUT=3 "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    m=$(find "$S" -name nemoperf.json | head -1)
    [ "$rc" -eq 1 ] && grep -q 'submission outcome unknown' "$W/err" && grep -q -- '--reconcile' "$W/err" &&
        ok "stopped slurmctld: exit 1, outcome unknown, told to --reconcile" || fail "stopped slurmctld: exit $rc: $(cat "$W/err")"
    [ "$(mfield "$m" state)" = unknown ] && ok "stopped slurmctld: recorded as unknown" || fail "stopped: $(mfield "$m" state)"
    "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'still unknown: cannot ask the scheduler' "$W/err" && [ "$(mfield "$m" state)" = unknown ] &&
        ok "stopped slurmctld: --reconcile meanwhile leaves it unknown, exit 1" || fail "reconcile while stopped: exit $rc: $(cat "$W/err")"
    kill -CONT "$ctld"
    ctld=
    i=0
    while ! squeue -h >/dev/null 2>&1 && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
    "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
    rc=$?
    n=$(check_all "stopped slurmctld" "$S")
    if [ "$n" -eq 1 ]; then
        [ "$rc" -eq 0 ] && [ "$(mfield "$m" state)" = submitted ] &&
            ok "stopped slurmctld: the job reached the queue; --reconcile recorded job $(mfield "$m" job_id)" ||
            fail "stopped slurmctld: reconcile: exit $rc: $(cat "$W/out" "$W/err")"
    else # the request never reached the controller: recorded not submitted
        [ "$rc" -eq 0 ] && [ "$(mfield "$m" state)" = not_submitted ] &&
            ok "stopped slurmctld: no job reached the queue; recorded not submitted" ||
            fail "stopped slurmctld: $n jobs, state $(mfield "$m" state)"
    fi
else
    fail "cannot find this cluster's slurmctld in $NP_CLUSTER_DIR/run"
fi

# ---- 3b. the same with --wait: the job is looked for until Slurm answers, then followed ----
S="$W/stopwait"
mkdir -p "$S"
ctld=$(tr -dc 0-9 <"$NP_CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
if [ -n "$ctld" ] && tr '\0' ' ' <"/proc/$ctld/cmdline" 2>/dev/null | grep -qF -- "$NP_CLUSTER_DIR/slurm.conf"; then
    kill -STOP "$ctld"
    # the real sbatch (no wrapper: this job runs, 3 steps)
    STAGE_PATH=$S NEMOPERF_SBATCH_TIMEOUT=2 MAX_STEPS=3 NEMOPERF_WAIT_MAX_DELAY=2 "$launch" --wait >"$W/out" 2>"$W/err" &
    pid=$!
    i=0
    while ! grep -q 'asking again' "$W/err" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    kill -CONT "$ctld"
    ctld=
    wait "$pid"
    rc=$?
    m=$(find "$S" -name nemoperf.json | head -1)
    id=$(mfield "$m" job_id)
    grep -q 'submission outcome unknown' "$W/err" && grep -q 'asking again' "$W/err" &&
        ok "--wait, stopped slurmctld: outcome unknown, asked again while Slurm did not answer" ||
        fail "--wait stopped: stderr: $(cat "$W/err")"
    [ "$rc" -eq 0 ] && [ "$(mfield "$m" state)" = submitted ] && grep -q "^job $id COMPLETED: " "$W/out" &&
        grep -q "^pretrain_llama3.1_8b_bf16_8  *benchmark  *$id " "$W/out" &&
        ok "--wait, stopped slurmctld: job $id found by its tag, recorded, followed to COMPLETED, in the table, exit 0" ||
        fail "--wait stopped: exit $rc, state $(mfield "$m" state): $(cat "$W/out" "$W/err")"
else
    fail "cannot find this cluster's slurmctld in $NP_CLUSTER_DIR/run"
fi

# ---- 3c. slurmrestd cuts the connection after the request: unknown, not "not submitted" -----
# (tests/stubs/rest-cut/server.py: a stand-in slurmrestd that reads the submission and hangs up)
S="$W/restcut"
mkdir -p "$S"
python3 "$root/tests/stubs/rest-cut/server.py" "$W/cut.port" &
cutpid=$!
wait_file "$W/cut.port" || fail "rest-cut: the stand-in did not start"
port=$(cat "$W/cut.port" 2>/dev/null)
STAGE_PATH=$S SLURM_SUBMIT=rest SLURMRESTD_URL="http://127.0.0.1:$port" SLURM_JWT=stand-in SLURM_USER=root \
    "$launch" >"$W/out" 2>"$W/err"
rc=$?
m=$(find "$S" -name nemoperf.json | head -1)
[ "$rc" -eq 1 ] && grep -q 'submission outcome unknown' "$W/err" && [ "$(mfield "$m" state)" = unknown ] &&
    [ "$(mfield "$m" submitted)" = false ] && ok "cut slurmrestd connection: recorded unknown (not 'not submitted'), exit 1" ||
    fail "rest-cut: exit $rc, state $(mfield "$m" state): $(cat "$W/err")"
STAGE_PATH=$S SLURM_SUBMIT=rest SLURMRESTD_URL="http://127.0.0.1:$port" SLURM_JWT=stand-in SLURM_USER=root \
    "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 0 ] && grep -q 'recorded not submitted (was unknown; no job carrying tag' "$W/out" &&
    [ "$(mfield "$m" state)" = not_submitted ] &&
    ok "cut slurmrestd connection: --reconcile asks GET jobs, none carries the tag: not_submitted" ||
    fail "rest-cut reconcile: exit $rc: $(cat "$W/out" "$W/err")"
kill "$cutpid" 2>/dev/null
wait "$cutpid" 2>/dev/null
cutpid=

# ---- --reconcile: bad arguments -----------------------------------------------------------
"$launch" --reconcile "$W/nonexistent" >/dev/null 2>"$W/err"
[ $? -eq 2 ] && grep -q "nonexistent: No such file" "$W/err" && ok "--reconcile of a missing folder: exit 2" ||
    fail "--reconcile missing: $(cat "$W/err")"
mkdir -p "$W/empty"
"$launch" --reconcile "$W/empty" >/dev/null 2>"$W/err"
[ $? -eq 2 ] && grep -q "no nemoperf.json in it" "$W/err" && ok "--reconcile of a folder without records: exit 2" ||
    fail "--reconcile empty: $(cat "$W/err")"

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
