#!/bin/sh
# 18-rest-5xx.sh - a 5xx after slurmrestd took the submission (issue 39 item 2), with a JWT, on the local cluster:
# a relay in front of the real slurmrestd (tests/stubs/rest-relay/proxy.py with a CODE: it forwards every request and answers a
# submission with 502, 503 or 504 instead of the real reply, once or on every POST) -- a gateway error after the
# server acted cannot be produced on demand with the real daemon alone.  Launch must record those rows as an
# unknown outcome (never "not submitted"), --reconcile must find each job by its tag, --skip-existing must submit
# nothing again: every queued job of the test recorded exactly once.  The jobs go to a reservation a week ahead, so
# they stay pending (an ended job is not "existing" to --skip-existing), and are cancelled at the end.
T=18-rest-5xx
. "$(dirname "$0")/nothing-lost-lib.inc"
TUSER=${NP_CLUSTER_USER:-nemoperf-test}
if [ ! -e "$NP_CLUSTER_DIR/run/jwt-enabled" ] || [ "$(id -u)" -ne 0 ]; then
    echo "$T: skip: needs the cluster's JWT slurmrestd over TCP and root (runuser)"
    exit 0
fi
W=$(mktemp -d "${TMPDIR:-/tmp}/np-rest5xx.XXXXXX") || die "mktemp"
chmod 0755 "$W"
relay=
RESV=np-rest5xx-$$
cleanup() {
    [ -n "$relay" ] && kill "$relay" 2>/dev/null
    ids=$(squeue -h -t all -o '%i|%Z' 2>/dev/null | awk -F'|' -v w="$W/" 'index($2, w) == 1 { print $1 }')
    [ -n "$ids" ] && scancel $ids 2>/dev/null
    i=0 # the cancelled jobs hold the reservation for a moment
    while scontrol show ReservationName="$RESV" >/dev/null 2>&1 && [ $i -lt 40 ]; do
        env -u SLURM_JWT scontrol delete ReservationName="$RESV" >/dev/null 2>&1 || sleep 0.5 # as root, not the token's user
        i=$((i + 1))
    done
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
scontrol create ReservationName="$RESV" StartTime=now+7days Duration=60 Nodes=ALL Users="$TUSER" \
    Flags=IGNORE_JOBS,OVERLAP >/dev/null || die "cannot make the reservation $RESV"
eval "$("$root/tests/slurm/cluster" env --tcp)"
upstream=${SLURMRESTD_URL##*:}
for code in 502 503 504; do
    for mode in once all; do
        S="$W/$code-$mode"
        mkdir -p "$S" && chown "$TUSER" "$S"
        rm -f "$W/relay.port" "$W/relay.log"
        python3 "$root/tests/stubs/rest-relay/proxy.py" "$upstream" "$W/relay.port" "$W/relay.log" "$code" "$mode" &
        relay=$!
        wait_file "$W/relay.port" || fail "$code $mode: the relay did not start"
        port=$(cat "$W/relay.port" 2>/dev/null)
        rest_as() {
            runuser -u "$TUSER" -- env -i PATH="$NP_CLUSTER_DIR/bin:/usr/local/bin:/usr/bin:/bin" SLURM_CONF="$SLURM_CONF" \
                HOME=/tmp STAGE_PATH="$S" WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3 SLURM_SUBMIT=rest \
                SLURMRESTD_URL="http://127.0.0.1:$port" SLURM_JWT="$SLURM_JWT" SLURM_USER="$SLURM_USER" SBATCH_RESERVATION="$RESV" "$@"
        }
        want=1
        [ "$mode" = all ] && want=3
        rest_as JOB_TOTAL_GPUS=8,16,32 "$launch" >"$W/out" 2>"$W/err"
        rc=$?
        n5=$(grep -c "^answered-$code POST" "$W/relay.log")
        queued=$(queue_jobs "$S" | grep -c .)
        [ "$rc" -eq 1 ] && [ "$n5" -eq "$want" ] && [ "$queued" -eq 3 ] &&
            [ "$(grep -c 'may or may not have been submitted' "$W/err")" -ge "$want" ] &&
            ! grep -q 'authentication failed\|marked not submitted\|recorded not submitted' "$W/err" &&
            ok "HTTP $code $mode: $want of 3 submissions answered $code after slurmrestd took them: an unknown outcome (exit 1), 3 jobs queued" ||
            fail "HTTP $code $mode: exit $rc, $n5 answered $code, $queued queued: $(cat "$W/err")"
        rest_as "$launch" --reconcile "$S" >"$W/out" 2>"$W/err"
        rc=$?
        [ "$rc" -eq 0 ] && [ "$(grep -c 'recorded (was unknown; the scheduler has job' "$W/out")" -eq "$want" ] &&
            ok "HTTP $code $mode: --reconcile found the $want job(s) by tag" ||
            fail "HTTP $code $mode: --reconcile: exit $rc: $(cat "$W/out" "$W/err")"
        rest_as JOB_TOTAL_GPUS=8,16,32 "$launch" --skip-existing >"$W/out" 2>"$W/err"
        rc=$?
        [ "$(check_all "$code-$mode" "$S")" -eq 3 ] && [ "$(count_dirs "$S")" -eq 3 ] &&
            ok "HTTP $code $mode: --skip-existing (exit $rc) submitted nothing again: 3 jobs, each recorded once" ||
            fail "HTTP $code $mode: after --skip-existing (exit $rc): $(queue_jobs "$S" | grep -c .) jobs, $(count_dirs "$S") records: $(cat "$W/err")"
        kill "$relay" 2>/dev/null
        wait "$relay" 2>/dev/null
        relay=
    done
done
if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all passed"
