#!/bin/sh
# 15-launch-nothing-lost-23.sh - issue 23's duplicate-job paths, on the local cluster:
#   1. REST: a relay in front of the real slurmrestd loses the reply to the first submission
#      after slurmrestd took it (tests/stubs/rest-relay/proxy.py: a lost reply after the
#      server acted cannot be produced on demand with the real daemon): the job must be sent
#      once, recorded unknown, and found by --reconcile
#   2. SIGKILL of launch while the (slowed) sbatch it started runs: --reconcile and a rerun
#      leave the record alone until that sbatch ended, then the job is found by its tag
#   3. two launches of the same rows at once: one submits, the other refuses (the lock)
#   4. SBATCH_JOB_NAME with slurmctld stopped during the submission: found by tag
#  10. a definite refusal leaves no folder: SBATCH_CONSTRAINT="a'b"; 100 KB SBATCH_ACCOUNT/QOS/WCKEY
#      through sbatch and slurmrestd; a 100 KB (or 256-byte) STAGE_PATH component
#   5. a FIFO named nemoperf.json (and a symlink to one) in an earlier experiment folder: launch
#      and --reconcile must not hang
# Every job in the queue submitted from this test's folders must be recorded exactly once.
T=15-launch-nothing-lost-23
. "$(dirname "$0")/nothing-lost-lib.inc"
TUSER=${NP_CLUSTER_USER:-nemoperf-test}
W=$(mktemp -d "${TMPDIR:-/tmp}/np-lost23.XXXXXX") || die "mktemp"
chmod 0755 "$W"
relay=
cleanup() {
    [ -n "$relay" ] && kill "$relay" 2>/dev/null
    ids=$(squeue -h -t all -o '%i|%Z' 2>/dev/null | awk -F'|' -v w="$W/" 'index($2, w) == 1 { print $1 }')
    [ -n "$ids" ] && scancel $ids 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3

# ---- 1. REST: the reply to a submission is lost after slurmrestd took it -------------------
if [ -e "$NP_CLUSTER_DIR/run/jwt-enabled" ] && [ "$(id -u)" -eq 0 ]; then
    S="$W/relay"
    mkdir -p "$S" && chown "$TUSER" "$S"
    eval "$("$root/tests/slurm/cluster" env --tcp)"
    upstream=${SLURMRESTD_URL##*:}
    python3 "$root/tests/stubs/rest-relay/proxy.py" "$upstream" "$W/relay.port" "$W/relay.log" &
    relay=$!
    wait_file "$W/relay.port" || fail "relay: the stand-in did not start"
    port=$(cat "$W/relay.port" 2>/dev/null)
    # rest_as ARGS: nemoperf-launch through the relay as the test user (the jobs run as SLURM_USER)
    rest_as() {
        runuser -u "$TUSER" -- env -i PATH="$NP_CLUSTER_DIR/bin:/usr/local/bin:/usr/bin:/bin" SLURM_CONF="$SLURM_CONF" \
            HOME=/tmp STAGE_PATH="$S" WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3 SLURM_SUBMIT=rest \
            SLURMRESTD_URL="http://127.0.0.1:$port" SLURM_JWT="$SLURM_JWT" SLURM_USER="$SLURM_USER" "$@"
    }
    rest_as JOB_TOTAL_GPUS=8,16,32 "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    posts=$(grep -c 'POST .*/job/submit' "$W/relay.log")
    grep -q '^dropped-reply POST' "$W/relay.log" || fail "relay: no reply was dropped: $(cat "$W/relay.log")"
    [ "$posts" -eq 3 ] && ok "relay: 3 rows, 3 submissions: the one whose reply was lost was not sent again" ||
        fail "relay: $posts submissions for 3 rows: $(cat "$W/relay.log")"
    [ "$rc" -eq 1 ] && grep -q 'submission outcome unknown' "$W/err" &&
        ok "relay: exit 1, the lost reply is an unknown outcome" || fail "relay: exit $rc: $(cat "$W/err")"
    [ "$(queue_jobs "$S" | grep -c .)" -eq 3 ] || fail "relay: $(queue_jobs "$S" | grep -c .) jobs queued for 3 rows"
    rest_as "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 0 ] && grep -q 'recorded (was unknown; the scheduler has job' "$W/out" &&
        ok "relay: --reconcile found the job by its tag" || fail "relay: reconcile: exit $rc: $(cat "$W/out" "$W/err")"
    [ "$(check_all relay "$S")" -eq 3 ] && ok "relay: 3 jobs queued, each recorded once" ||
        fail "relay: queue/record mismatch"
    kill "$relay" 2>/dev/null
    wait "$relay" 2>/dev/null
    relay=
    eval "$("$root/tests/slurm/cluster" env)"
else
    echo "$T: skip: REST relay (needs root and the JWT-enabled TCP slurmrestd)"
fi

# the slowed sbatch wrapper (nothing-lost-lib.inc)
slow_sbatch

# ---- 2. SIGKILL while the sbatch it started still runs: reconcile and a rerun wait for it -----
S="$W/kill"
mkdir -p "$S"
rm -f "$W/stub"/*
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 NP_STUB_PRE=3 "$launch" >"$W/out" 2>"$W/err" &
pid=$!
wait_file "$W/stub/before.0" || fail "SIGKILL: the wrapper never started"
sleep 1
kill -KILL "$pid"
wait "$pid" 2>/dev/null
"$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
rc=$?
m=$(find "$S" -name nemoperf.json | head -1)
[ "$rc" -eq 1 ] && grep -q 'still submitting: its launch is gone but .*holds' "$W/err" &&
    [ "$(mfield "$m" state)" = submitting ] &&
    ok "SIGKILL: --reconcile while the orphaned sbatch runs: left submitting, exit 1" ||
    fail "SIGKILL: --reconcile meanwhile: exit $rc, state $(mfield "$m" state): $(cat "$W/out" "$W/err")"
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(count_dirs "$S")" -eq 1 ] && ok "SIGKILL: a rerun meanwhile is refused, nothing written" ||
    fail "SIGKILL: rerun meanwhile: exit $rc: $(cat "$W/err")"
wait_file "$W/stub/after.0" || fail "SIGKILL: the orphaned sbatch never finished"
i=0
while [ -n "$(find "$S/experiments" -maxdepth 1 -name '.*.lock' 2>/dev/null)" ] && [ $i -lt 100 ]; do
    "$launch" --reconcile "$S" >"$W/out" 2>"$W/err" && break
    sleep 0.2
    i=$((i + 1))
done
"$launch" --reconcile "$S" >>"$W/out" 2>>"$W/err"
id=$(queue_jobs "$S" | awk '{ print $1 }')
[ -n "$id" ] && grep -q "^job $id: .*recorded (was submitting; the scheduler has job $id" "$W/out" &&
    ok "SIGKILL: once the sbatch ended, --reconcile found job $id by its tag" ||
    fail "SIGKILL: reconcile after: $(cat "$W/out" "$W/err")"
[ "$(check_all SIGKILL "$S")" -eq 1 ] && ok "SIGKILL: one job queued, recorded once" || fail "SIGKILL: queue/record mismatch"
PATH=$SPATH STAGE_PATH=$S JOB_TOTAL_GPUS=8 "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(check_all "SIGKILL rerun" "$S")" -eq 1 ] && ok "SIGKILL: a later rerun is refused: job $id exists" ||
    fail "SIGKILL: rerun: exit $rc: $(cat "$W/err")"

# ---- 3. two launches of the same rows at once: one submits, the other refuses ----------------
S="$W/twice"
mkdir -p "$S"
for round in 1 2 3; do
    rm -f "$W/stub"/*
    mkdir -p "$S/$round"
    for i in 1 2; do
        PATH=$SPATH STAGE_PATH=$S/$round JOB_TOTAL_GPUS=8,16,32 NP_STUB_PRE=1 "$launch" >"$W/out$i" 2>"$W/err$i" &
        eval "p$i=\$!"
    done
    wait "$p1"
    r1=$?
    wait "$p2"
    r2=$?
    n=$(check_all "twice $round" "$S/$round")
    refused=0
    { [ "$r1" -eq 2 ] && grep -q 'is being launched now' "$W/err1"; } && refused=$((refused + 1))
    { [ "$r2" -eq 2 ] && grep -q 'is being launched now' "$W/err2"; } && refused=$((refused + 1))
    [ "$n" -eq 3 ] && [ "$refused" -eq 1 ] && [ "$(count_dirs "$S/$round")" -eq 3 ] &&
        ok "two launches at once (round $round): 3 jobs, each recorded once; the other launch refused (exit 2)" ||
        fail "two launches at once (round $round): $n jobs, exits $r1/$r2: $(cat "$W/err1" "$W/err2")"
done

# ---- 4. SBATCH_JOB_NAME and a stopped slurmctld: reconcile finds the job by its tag ------------
S="$W/jobname"
mkdir -p "$S"
ctld=$(tr -dc 0-9 <"$NP_CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
if [ -n "$ctld" ] && tr '\0' ' ' <"/proc/$ctld/cmdline" 2>/dev/null | grep -qF -- "$NP_CLUSTER_DIR/slurm.conf"; then
    kill -STOP "$ctld"
    rm -f "$W/stub"/*
    # the wrapper (--hold): the job stays queued, so a rerun must find it
    PATH=$SPATH STAGE_PATH=$S SBATCH_JOB_NAME=myrun NEMOPERF_SBATCH_TIMEOUT=3 "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    kill -CONT "$ctld"
    i=0
    while ! squeue -h >/dev/null 2>&1 && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
    sleep 2
    m=$(find "$S" -name nemoperf.json | head -1)
    [ "$rc" -eq 1 ] && [ "$(mfield "$m" state)" = unknown ] && ok "SBATCH_JOB_NAME, stopped slurmctld: recorded unknown" ||
        fail "SBATCH_JOB_NAME: exit $rc, state $(mfield "$m" state): $(cat "$W/err")"
    "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
    rc=$?
    n=$(check_all "SBATCH_JOB_NAME" "$S")
    named=$(squeue -h -t all -o '%j|%Z' | awk -F'|' -v w="$S/" 'index($2, w) == 1 { print $1 }' | head -1)
    if [ "$n" -eq 1 ]; then
        [ "$rc" -eq 0 ] && [ "$named" = myrun ] && [ "$(mfield "$m" state)" = submitted ] &&
            ok "SBATCH_JOB_NAME: job 'myrun' found by its tag, recorded submitted" ||
            fail "SBATCH_JOB_NAME: reconcile: exit $rc, job named $named: $(cat "$W/out" "$W/err")"
    else
        [ "$rc" -eq 0 ] && [ "$(mfield "$m" state)" = not_submitted ] &&
            ok "SBATCH_JOB_NAME: the request never reached slurmctld; recorded not submitted" ||
            fail "SBATCH_JOB_NAME: $n jobs, state $(mfield "$m" state)"
    fi
    PATH=$SPATH STAGE_PATH=$S SBATCH_JOB_NAME=myrun "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$n" -eq 0 ] || { [ "$rc" -eq 2 ] && [ "$(check_all "SBATCH_JOB_NAME rerun" "$S")" -eq 1 ]; } &&
        ok "SBATCH_JOB_NAME: a rerun does not duplicate the job" || fail "SBATCH_JOB_NAME: rerun: exit $rc: $(cat "$W/err")"
else
    fail "cannot find this cluster's slurmctld in $NP_CLUSTER_DIR/run"
fi

# ---- 10. definite refusals leave nothing behind ---------------------------------------------
S="$W/refused"
mkdir -p "$S"
STAGE_PATH=$S SBATCH_CONSTRAINT="a'b" "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(count_dirs "$S")" -eq 0 ] && [ -z "$(queue_jobs "$S")" ] &&
    grep -q "^nemoperf-launch: SBATCH_CONSTRAINT=a'b: job .* can never run: .*Invalid feature specification" "$W/err" &&
    ok "SBATCH_CONSTRAINT=a'b: refused naming it (exit 2), no folder, no job" || fail "SBATCH_CONSTRAINT: exit $rc: $(cat "$W/err")"
[ ! -e "$S/experiments" ] && ok "SBATCH_CONSTRAINT=a'b: not even experiments/ was made" ||
    fail "SBATCH_CONSTRAINT: left $(find "$S" | head -5)"
# 100 KB SBATCH_ACCOUNT / QOS / WCKEY (slurmctld refuses more than 1024 bytes): refused by name before
# any folder, through sbatch (as root) and through slurmrestd (as the test user, on the unix socket)
big=$(head -c 100000 /dev/zero | tr '\0' a)
eval "$("$root/tests/slurm/cluster" env)"
UNIX_URL=$SLURMRESTD_URL
unset SLURMRESTD_URL
for v in SBATCH_ACCOUNT SBATCH_QOS SBATCH_WCKEY; do
    S="$W/big-$v"
    mkdir -p "$S"
    env STAGE_PATH="$S" "$v=$big" "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "^nemoperf-launch: $v: 100000 bytes long; Slurm refuses more than 1024" "$W/err" &&
        [ -z "$(find "$S" -mindepth 1)" ] && [ -z "$(queue_jobs "$S")" ] &&
        ok "100 KB $v (sbatch): refused by name (exit 2), nothing created, no job" ||
        fail "100 KB $v (sbatch): exit $rc, $(find "$S" -mindepth 1 | wc -l) entries: $(head -c 400 "$W/err")"
    if [ "$(id -u)" -eq 0 ]; then
        S="$W/bigrest-$v"
        mkdir -p "$S" && chown "$TUSER" "$S"
        runuser -u "$TUSER" -- env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp STAGE_PATH="$S" \
            WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3 SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL" \
            "$v=$big" "$launch" >"$W/out" 2>"$W/err"
        rc=$?
        [ "$rc" -eq 2 ] && grep -q "^nemoperf-launch: $v: 100000 bytes long; Slurm refuses more than 1024" "$W/err" &&
            [ -z "$(find "$S" -mindepth 1)" ] && [ -z "$(queue_jobs "$S")" ] &&
            ok "100 KB $v (slurmrestd): refused by name (exit 2), nothing created, no job" ||
            fail "100 KB $v (slurmrestd): exit $rc, $(find "$S" -mindepth 1 | wc -l) entries: $(head -c 400 "$W/err")"
    fi
done
# a 100 KB STAGE_PATH component (and one just over NAME_MAX): exit 2, nothing created (the man page's promise)
for c in "$big" "$(head -c 256 /dev/zero | tr '\0' b)"; do
    mkdir -p "$W/comp"
    STAGE_PATH="$W/comp/$c/s" "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q '^nemoperf-launch: STAGE_PATH: \(a component of\|[0-9]* bytes long\)' "$W/err" &&
        [ -z "$(find "$W/comp" -mindepth 1)" ] && ok "a ${#c}-byte STAGE_PATH component: exit 2, named, nothing created" ||
        fail "${#c}-byte STAGE_PATH component: exit $rc, $(find "$W/comp" -mindepth 1 | wc -l) entries: $(head -c 300 "$W/err")"
done

# ---- 5. a FIFO (or a symlink to one) named nemoperf.json in an earlier experiment folder ------
S="$W/fifo"
e="$S/experiments/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_100/pretrain_llama3.1_8b_bf16_8"
e2="$S/experiments/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_101/pretrain_llama3.1_8b_bf16_8"
mkdir -p "$e" "$e2" && mkfifo "$e/nemoperf.json" "$W/fifo2" && ln -s "$W/fifo2" "$e2/nemoperf.json"
STAGE_PATH=$S timeout 30 "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'not a regular file (a FIFO)' "$W/err" && [ -z "$(queue_jobs "$S")" ] &&
    ok "FIFO record: launch does not hang, refuses (exit 2) naming it, submits nothing" ||
    fail "FIFO record: launch exit $rc: $(cat "$W/err")"
timeout 30 "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -ne 124 ] && grep -q 'not a regular file (a FIFO)' "$W/err" &&
    ok "FIFO record: --reconcile does not hang (exit $rc), names it" || fail "FIFO record: --reconcile exit $rc: $(cat "$W/err")"

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
