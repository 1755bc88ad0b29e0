#!/bin/sh
# 40-wait-cli.sh - --wait with the sbatch backend (SLURM_SUBMIT unset and =cli): a sweep 8,16
# followed with one squeue per poll to COMPLETED, ending in the parse table (exit 0); a job
# cancelled with scancel during --wait is reported CANCELLED (exit 1).  The sweep's jobs are
# exclusive (OverSubscribe=NO) with the nodes, tasks, GPUs and time limit asked for.  A job put on
# hold after a requeue (scontrol requeuehold) ends the wait with a message (exit 1, issue 13).
. "$(dirname "$0")/40-rest-lib.inc"

launch_as sweep --wait --store NEMOPERF_DB="$S/results.db" JOB_TOTAL_GPUS=8,16 SBATCH_GPUS_PER_NODE=8 TIME_LIMIT=00:20:00 &
p1=$!
launch_as cancel --wait SLURM_SUBMIT=cli JOB_TOTAL_GPUS=8 MAX_STEPS=300 &
p2=$!
launch_as held --wait SLURM_SUBMIT=cli JOB_TOTAL_GPUS=16 MAX_STEPS=300 NEMOPERF_MAX_RETRIES=1 &
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
# --wait --store: the two runs waited for are in the results store
n=$("${NP_BIN:-bin}/nemoperf-parse" --history --db "$S/results.db" --format csv status=synthetic 2>&1 | tail -n +2 | wc -l)
[ "$n" -eq 2 ] && grep -q 'stored 2 runs (2 added' "$W/sweep.err" && ok "--wait --store: the 2 runs waited for stored" ||
    fail "--wait --store: $n runs stored; $(cat "$W/sweep.err")"
for d in $(dirs_of sweep); do
    [ "$(mfield "$d/nemoperf.json" backend)" = '"cli"' ] || fail "$d: backend not cli"
    grep -q '"slurmrestd"' "$d/nemoperf.json" && fail "$d: a cli manifest with a slurmrestd record"
done
for id in $(ids_of sweep); do
    d=$(sed -n "s/^job $id: //p" "$W/sweep.out")
    g=${d##*_}
    nn=$(job_field "$id" NumNodes) nt=$(job_field "$id" NumTasks) tl=$(job_field "$id" TimeLimit)
    os=$(job_field "$id" OverSubscribe) tr=$(job_field "$id" TresPerNode)
    if [ "$os" = NO ] && [ "$nn" = $((g / 8)) ] && [ "$nt" = "$g" ] && [ "$tl" = 00:20:00 ] &&
        case $tr in *gpu:8*) true ;; *) false ;; esac; then
        ok "sbatch backend: job $id exclusive, $nn node(s) x 8 tasks, gpu:8 per node, 00:20:00"
    else
        fail "sbatch job $id: OverSubscribe=$os NumNodes=$nn NumTasks=$nt TimeLimit=$tl TresPerNode=$tr (want $g GPUs)"
    fi
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
