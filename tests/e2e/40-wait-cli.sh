#!/bin/sh
# 40-wait-cli.sh - --wait with the sbatch backend (SLURM_SUBMIT unset and =cli): a sweep 8,16
# followed with one squeue per poll to COMPLETED, ending in the parse table (exit 0); a job
# cancelled with scancel during --wait is reported CANCELLED (exit 1).
. "$(dirname "$0")/40-rest-lib.inc"

launch_as sweep --wait JOB_TOTAL_GPUS=8,16 &
p1=$!
launch_as cancel --wait SLURM_SUBMIT=cli JOB_TOTAL_GPUS=8 MAX_STEPS=300 &
p2=$!
i=0
while [ -z "$(ids_of cancel)" ] && [ "$i" -lt 80 ]; do sleep 0.25; i=$((i + 1)); done
cid=$(ids_of cancel)
if [ -n "$cid" ] && wait_state "$cid" RUNNING 60; then
    sleep 1
    scancel "$cid"
else
    fail "cancel: job ${cid:-?} never ran"
fi
wait "$p1"
wait "$p2"

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
finish
