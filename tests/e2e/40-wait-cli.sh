#!/bin/sh
# 40-wait-cli.sh - --wait with the sbatch backend (SLURM_SUBMIT unset and =cli): a sweep 8,16
# followed with one squeue per poll to COMPLETED, ending in the parse table (exit 0); a job
# cancelled with scancel during --wait is reported CANCELLED (exit 1); a job put on hold after a
# requeue (scontrol requeuehold: REQUEUE_HOLD) ends the wait with a message (exit 1, issue 13).
. "$(dirname "$0")/40-rest-lib.inc"

launch_as sweep --wait JOB_TOTAL_GPUS=8,16 &
p1=$!
launch_as cancel --wait SLURM_SUBMIT=cli JOB_TOTAL_GPUS=8 MAX_STEPS=300 &
p2=$!
launch_as held --wait SLURM_SUBMIT=cli JOB_TOTAL_GPUS=16 MAX_STEPS=300 &
p3=$!
i=0
while [ -z "$(ids_of cancel)" ] && [ "$i" -lt 80 ]; do sleep 0.25; i=$((i + 1)); done
cid=$(ids_of cancel)
if [ -n "$cid" ] && wait_state "$cid" RUNNING 60; then
    sleep 1
    scancel "$cid"
else
    fail "cancel: job ${cid:-?} never ran"
fi
i=0
while [ -z "$(ids_of held)" ] && [ "$i" -lt 80 ]; do sleep 0.25; i=$((i + 1)); done
hid=$(ids_of held)
if [ -n "$hid" ] && wait_state "$hid" RUNNING 60; then
    sleep 1
    scontrol requeuehold "$hid"
else
    fail "held: job ${hid:-?} never ran"
fi
wait "$p1"
wait "$p2"
wait "$p3"
[ -n "$hid" ] && scancel "$hid" 2>/dev/null

rc_of sweep
check_waited sweep 2 && ok "sbatch backend: sweep 8,16 followed to COMPLETED, 2 ok rows, exit 0"
for d in $(dirs_of sweep); do
    [ "$(mfield "$d/nemoperf.json" backend)" = '"cli"' ] || fail "$d: backend not cli"
    grep -q '"slurmrestd"' "$d/nemoperf.json" && fail "$d: a cli manifest with a slurmrestd record"
done
rc_of cancel
[ "$rc" -eq 1 ] && grep -q "^job $cid CANCELLED: " "$W/cancel.out" &&
    ok "sbatch backend: cancelled job reported CANCELLED, exit 1" ||
    fail "cancel: exit $rc: $(cat "$W/cancel.out") $(tail -3 "$W/cancel.err")"
rc_of held
[ "$rc" -eq 1 ] && grep -q "^job $hid HELD: " "$W/held.out" &&
    grep -q "job $hid is held (job requeued in held state) and will not run again by itself: stopped waiting" \
        "$W/held.err" &&
    ok "sbatch backend: a job held after a requeue ends the wait with a message, exit 1" ||
    fail "held: exit $rc: $(cat "$W/held.out") $(tail -3 "$W/held.err")"
finish
