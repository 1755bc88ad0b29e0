#!/bin/sh
# 40-rest-cancel-requeue.sh - --wait through REST follows jobs that do not simply run: a job
# cancelled with scancel while it runs is reported CANCELLED and the launch exits non-zero;
# a job requeued with `scontrol requeue` while it runs is followed through PENDING to
# COMPLETED (exit 0, the table shows the run of the second attempt as ok).  Slurm holds a
# requeued job for 120 s; once --wait reported it pending, the test moves its start to now.
. "$(dirname "$0")/40-rest-lib.inc"

# wait_id NAME: the job id once the background launch printed it (20 s at most)
wait_id() {
    i=0
    while [ "$i" -lt 80 ]; do
        id=$(ids_of "$1" 2>/dev/null | head -1)
        [ -n "$id" ] && { echo "$id"; return 0; }
        sleep 0.25
        i=$((i + 1))
    done
    return 1
}

launch_as cancel --wait SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL" JOB_TOTAL_GPUS=8 MAX_STEPS=300 &
pc=$!
launch_as requeue --wait SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL" JOB_TOTAL_GPUS=8 MAX_STEPS=40 NEMOPERF_MAX_RETRIES=1 &
pr=$!

cid=$(wait_id cancel) || fail "cancel: no job id printed"
rid=$(wait_id requeue) || fail "requeue: no job id printed"
if [ -n "$cid" ]; then
    wait_state "$cid" RUNNING 60 || fail "cancel: job $cid never ran"
    sleep 1
    scancel "$cid" && ok "scancel $cid while --wait follows it"
fi
if [ -n "$rid" ]; then
    wait_state "$rid" RUNNING 60 || fail "requeue: job $rid never ran"
    sleep 1
    seen=$(grep -c "job $rid .*: \(PENDING\|REQUEUED\)" "$W/requeue.err")
    scontrol requeue "$rid" && ok "scontrol requeue $rid while --wait follows it"
    # Slurm makes a requeued job eligible only 120 s later: once --wait has reported it
    # back in the queue, the test moves its start time to now to keep the test short
    i=0
    while [ "$(grep -c "job $rid .*: \(PENDING\|REQUEUED\)" "$W/requeue.err")" -le "$seen" ] && [ "$i" -lt 80 ]; do
        sleep 0.25
        i=$((i + 1))
    done
    [ "$i" -lt 80 ] && ok "--wait reported job $rid back in the queue" || fail "requeue: no PENDING/REQUEUED progress line"
    # slurmd refuses ("Job credential revoked") a job restarted on the same node within the
    # second its old credential was revoked: let that second pass before moving the start
    sleep 2
    scontrol update JobId="$rid" StartTime=now || fail "requeue: cannot move the start time of $rid"
fi
wait "$pc"
wait "$pr"

rc_of cancel
[ "$rc" -ne 0 ] && grep -q "^job $cid CANCELLED: " "$W/cancel.out" &&
    ok "cancelled job reported CANCELLED, launch exit $rc" ||
    fail "cancel: exit $rc, output: $(cat "$W/cancel.out") $(tail -3 "$W/cancel.err")"
grep -q 'EXPERIMENT' "$W/cancel.out" && ok "cancelled launch still ends with the parse table" ||
    fail "cancel: no table"

rc_of requeue
if check_waited requeue 1; then
    grep -q "^job $rid COMPLETED after a requeue: " "$W/requeue.out" &&
        ok "requeued job followed to COMPLETED (reported as requeued), exit 0" ||
        fail "requeue: not reported as requeued: $(cat "$W/requeue.out")"
fi
d=$(dirs_of requeue)
[ -n "$d" ] && [ -s "$d/log-${d##*/}_${rid}_1.out" ] && ok "second attempt's log present (restart 1)" ||
    fail "requeue: no log of restart 1 in $d"
finish
