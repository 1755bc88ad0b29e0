#!/bin/sh
# 05-synth.sh - bin/nemoperf-synth on its own, no Slurm: ProgressPrinter lines,
# option errors (exit 2), checkpoint save/load with 4 simulated ranks, corrupted
# and missing checkpoint files (exit 1), profile and NCCL-trace markers, SIGTERM.
# Exits non-zero when any check fails and names each failed check.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
synth=$bindir/nemoperf-synth
if [ ! -x "$synth" ]; then
    echo "FAIL: $synth is not built (run make)"
    exit 1
fi

# Not under Slurm, whatever the caller's environment says.
unset SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_NODEID SLURMD_NODENAME SLURM_JOB_ID \
    SLURM_STEP_ID SLURM_STEP_TASKS_PER_NODE SLURM_TASKS_PER_NODE SLURM_NTASKS_PER_NODE \
    NEMOPERF_PROFILE_DIR

tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-synth.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

# ---- a 50-step run -----------------------------------------------------------
step_re='^Training epoch 0, iteration [0-9]+/49 \| lr: [0-9.e+-]+ \| global_batch_size: 128 \| global_step: [0-9]+ \| peak_memory_usage: [0-9]+ \| memory_allocated: [0-9]+ \| reduced_train_loss: [0-9.e+-]+ \| train_step_timing in s: [0-9.e+-]+ \| consumed_samples: [0-9]+$'
"$synth" --recipe llama3_8b --model-size 8b --dtype bf16 --gpus 8 --tp 1 --pp 1 --cp 2 \
    --mbs 1 --gbs 128 --seq-len 8192 --layers 32 --hidden 4096 --step-seconds 0.02 \
    >"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
if [ "$rc" -ne 0 ]; then fail "50-step run exited $rc: $(head -3 "$tmp/run.err")"; else ok "50-step run exits 0"; fi
[ -s "$tmp/run.err" ] && fail "50-step run wrote to stderr: $(head -3 "$tmp/run.err")"
n=$(grep -c '^Training epoch 0, iteration ' "$tmp/run.out")
[ "$n" -eq 50 ] && ok "50 ProgressPrinter lines" || fail "expected 50 ProgressPrinter lines, got $n"
n=$(grep -Ec "$step_re" "$tmp/run.out")
[ "$n" -eq 50 ] && ok "every step line has the NeMo 2.0 layout" || fail "only $n of 50 step lines match the NeMo 2.0 layout"
last=$(grep '^Training epoch 0, iteration ' "$tmp/run.out" | tail -1)
case $last in
*"iteration 49/49 |"*"| global_step: 49 |"*"| consumed_samples: 6400") ok "last line is iteration 49/49, 6400 samples" ;;
*) fail "last step line is not iteration 49/49 with consumed_samples 6400: $last" ;;
esac
for want in 'TP=1 PP=1 CP=2' 'DP=4' 'GBS=128 MBS=1 GA=32' 'seq length: 8192' 'layers: 32'; do
    grep -q "^\[NeMo I [0-9-]* [0-9:]* nemo_logging:393\] .*$want" "$tmp/run.out" \
        && ok "preamble names $want" || fail "preamble does not name $want"
done
if awk -F'train_step_timing in s: ' '/^Training epoch/ {
        split($2, a, " "); t = a[1] + 0; n++; sum += t
        if (t < 0.0195 || t > 2.0) { bad++; print "step time out of range: " t }
    } END { if (n != 50 || bad || sum / n > 0.5) exit 1 }' "$tmp/run.out"; then
    ok "step times within 0.02..2 s"
else
    fail "step times out of range"
fi
if awk -F'reduced_train_loss: ' '/^Training epoch/ { split($2, a, " "); l[n++] = a[1] + 0 }
        END { exit !(n == 50 && l[0] > 11.5 && l[0] < 12.5 && l[49] < l[0] - 1) }' "$tmp/run.out"; then
    ok "loss starts near 12 and decreases"
else
    fail "loss does not start near 12 and decrease"
fi
grep -q '^`Trainer.fit` stopped: `max_steps=50` reached.$' "$tmp/run.out" \
    && ok "max_steps reached line" || fail "no \`Trainer.fit\` stopped line"

# ---- options -----------------------------------------------------------------
"$synth" --help >"$tmp/help.out" 2>&1
rc=$?
[ "$rc" -eq 0 ] && ok "--help exits 0" || fail "--help exited $rc"
for o in recipe model-size dtype gpus tp pp cp ep dp vp mbs gbs ga layers seq-len hidden max-steps \
    step-seconds profile-start profile-stop nccltrace checkpoint-save checkpoint-load seed; do
    grep -q -- "--$o" "$tmp/help.out" || fail "--help does not document --$o"
done

# expect_usage WORD ARGS...: exit 2, stderr names WORD, stdout empty.
expect_usage() {
    word=$1
    shift
    "$synth" "$@" >"$tmp/u.out" 2>"$tmp/u.err"
    rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "'$*' exited $rc, want 2"
    elif ! grep -q -- "$word" "$tmp/u.err"; then
        fail "'$*': message does not name '$word': $(head -1 "$tmp/u.err")"
    elif [ -s "$tmp/u.out" ]; then
        fail "'$*' printed on stdout"
    else
        ok "'$*' -> exit 2 naming $word"
    fi
}
expect_usage "--tp '0'" --tp 0
expect_usage "--gpus 'abc'" --gpus abc
expect_usage "--mbs '-1'" --mbs -1
expect_usage "--max-steps '0'" --max-steps 0
expect_usage "--step-seconds '9'" --step-seconds 9
expect_usage "--step-seconds '0.001'" --step-seconds 0.001
expect_usage "--dtype 'fp16'" --dtype fp16
expect_usage "--layers '3x'" --layers 3x
expect_usage "--profile-start" --profile-start 3
expect_usage "--profile-stop 60" --profile-start 10 --profile-stop 60
expect_usage "--dp 3" --gpus 8 --tp 2 --pp 2 --cp 1 --dp 3
expect_usage "--gbs 100" --gpus 4 --mbs 1 --dp 4 --ga 8 --gbs 100
expect_usage "--gbs 100" --gpus 8 --gbs 100
expect_usage "--bogus" --bogus
expect_usage "--tp" --tp
SLURM_PROCID=0 SLURM_NTASKS=4 "$synth" --gpus 8 >"$tmp/u.out" 2>"$tmp/u.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'SLURM_NTASKS=4' "$tmp/u.err" \
    && ok "--gpus 8 with 4 tasks -> exit 2" || fail "--gpus 8 with SLURM_NTASKS=4 exited $rc: $(head -1 "$tmp/u.err")"

# ---- checkpoint save and load with 4 simulated ranks ------------------------
# run_ranks TAG NRANKS ARGS...: start ranks 0..N-1 in the background, wait for all,
# set $bad to the ranks that did not exit 0.
run_ranks() {
    tag=$1
    nr=$2
    shift 2
    pids=
    r=0
    while [ "$r" -lt "$nr" ]; do
        SLURM_PROCID=$r SLURM_NTASKS=$nr SLURM_LOCALID=$r "$synth" "$@" \
            >"$tmp/$tag.$r.out" 2>"$tmp/$tag.$r.err" &
        pids="$pids $r:$!"
        r=$((r + 1))
    done
    bad=
    for rp in $pids; do
        wait "${rp#*:}" || bad="$bad ${rp%%:*}"
    done
}

ck=$tmp/ckpt
run_ranks save 4 --max-steps 5 --step-seconds 0.02 --mbs 1 --gbs 8 --seed 7 --checkpoint-save "$ck"
name=default--None=0.0000-epoch=0-consumed_samples=40.0
cdir=$ck/$name
if [ -n "$bad" ]; then
    fail "checkpoint save: ranks$bad failed: $(cat "$tmp"/save.*.err | head -3)"
else
    ok "checkpoint save: 4 ranks exit 0"
fi
grep -Eq '^\[NeMo I [0-9-]+ [0-9:]+ nemo_logging:393\] Global Checkpoint Save : Rank: 0 : Iteration: 5 : Start time: [0-9]+\.[0-9]{3}s : Save duration: [0-9]+\.[0-9]{3}s$' \
    "$tmp/save.0.out" && ok "rank 0 prints the Global Checkpoint Save line" \
    || fail "no Global Checkpoint Save line from rank 0"
for r in 0 1 2 3; do
    [ -s "$cdir/weights/__${r}_0.distcp" ] || fail "checkpoint save: $cdir/weights/__${r}_0.distcp missing"
done
for f in weights/.metadata weights/metadata.json context/io.json; do
    [ -s "$cdir/$f" ] || fail "checkpoint save: $f missing"
done
grep -q '"world_size": 4' "$cdir/weights/.metadata" && ok ".metadata records world size 4" \
    || fail ".metadata does not record world_size 4"
ls "$cdir/weights" | grep -q '\.tmp\.' && fail "checkpoint save left temporary files"
for r in 1 2 3; do
    [ -s "$tmp/save.$r.out" ] && fail "rank $r printed on stdout"
    [ -s "$tmp/save.$r.err" ] && fail "rank $r printed on stderr: $(head -1 "$tmp/save.$r.err")"
done

run_ranks load 4 --max-steps 1 --step-seconds 0.02 --mbs 1 --gbs 8 --checkpoint-load "$cdir"
if [ -n "$bad" ]; then
    fail "checkpoint load: ranks$bad failed: $(cat "$tmp"/load.*.err | head -3)"
else
    ok "checkpoint load: 4 ranks exit 0"
fi
grep -Eq '^\[NeMo I [0-9-]+ [0-9:]+ nemo_logging:393\] Global Checkpoint Load : Rank : 0 : Start time : [0-9]+\.[0-9]{3}s : Time spent in load_checkpoint: [0-9]+\.[0-9]{3}s$' \
    "$tmp/load.0.out" && ok "rank 0 prints the Global Checkpoint Load line" \
    || fail "no Global Checkpoint Load line from rank 0"
grep -q '^Training epoch 0, iteration 0/0 |' "$tmp/load.0.out" && ok "load run does its one step" \
    || fail "load run has no 'iteration 0/0' line"

# More ranks than shards: rank 5 of 8 reads shard 1.
SLURM_PROCID=5 SLURM_NTASKS=8 "$synth" --max-steps 1 --step-seconds 0.01 --checkpoint-load "$cdir" \
    >"$tmp/l5.out" 2>"$tmp/l5.err"
rc=$?
[ "$rc" -eq 0 ] && ok "rank 5 of 8 loads a 4-rank checkpoint" \
    || fail "rank 5 of 8 load exited $rc: $(head -1 "$tmp/l5.err")"

# expect_load_fail TAG DIR RANK WORD: load as RANK of 4 must exit 1 naming WORD.
expect_load_fail() {
    SLURM_PROCID=$3 SLURM_NTASKS=4 "$synth" --max-steps 1 --step-seconds 0.01 --checkpoint-load "$2" \
        >"$tmp/lf.out" 2>"$tmp/lf.err"
    rc=$?
    if [ "$rc" -ne 1 ]; then
        fail "$1: load exited $rc, want 1"
    elif ! grep -q -- "$4" "$tmp/lf.err"; then
        fail "$1: message does not name $4: $(head -1 "$tmp/lf.err")"
    elif grep -q '^Training epoch' "$tmp/lf.out"; then
        fail "$1: training ran after a failed load"
    else
        ok "$1 -> exit 1 naming $4"
    fi
}
bad_ck=$tmp/bad/$name
mkdir -p "$tmp/bad" && cp -R "$cdir" "$bad_ck" || fail "copying the checkpoint"
printf 'CORRUPTCORRUPT!!' | dd of="$bad_ck/weights/__2_0.distcp" bs=1 seek=400 conv=notrunc 2>/dev/null
expect_load_fail "corrupted shard" "$bad_ck" 2 "$bad_ck/weights/__2_0.distcp: checksum mismatch"
rm -f "$bad_ck/weights/__3_0.distcp"
expect_load_fail "missing shard" "$bad_ck" 3 "$bad_ck/weights/__3_0.distcp"
rm -f "$bad_ck/weights/.metadata"
expect_load_fail "missing .metadata" "$bad_ck" 0 "$bad_ck/weights/.metadata"
echo '{"format": "nemoperf-synth-distcp",' >"$bad_ck/weights/.metadata"
expect_load_fail "truncated .metadata" "$bad_ck" 0 "$bad_ck/weights/.metadata"
expect_load_fail "no weights folder" "$tmp/bad" 0 "$tmp/bad/weights"

# ---- profile and NCCL trace ------------------------------------------------------
mkdir -p "$tmp/prof"
NEMOPERF_PROFILE_DIR=$tmp/prof "$synth" --max-steps 10 --step-seconds 0.01 --profile-start 3 \
    --profile-stop 6 >"$tmp/prof.out" 2>"$tmp/prof.err" &
pid=$!
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] && ok "profile run exits 0" || fail "profile run exited $rc: $(head -1 "$tmp/prof.err")"
grep -q '^nsys: capture range started at step 3$' "$tmp/prof.out" && ok "capture start marker" \
    || fail "no 'nsys: capture range started at step 3' line"
grep -q '^nsys: capture range stopped at step 6$' "$tmp/prof.out" && ok "capture stop marker" \
    || fail "no 'nsys: capture range stopped at step 6' line"
order=$(grep -E '^(nsys: capture|Training epoch 0, iteration [2-6]/)' "$tmp/prof.out" |
    sed -e 's/^nsys: capture range \([a-z]*\).*/\1/' -e 's/^Training epoch 0, iteration \([0-9]\).*/\1/' |
    tr '\n' ' ')
[ "$order" = "2 started 3 4 5 stopped 6 " ] && ok "markers bracket steps 3..5" \
    || fail "markers out of order: $order"
rep=$tmp/prof/profile_$pid.nsys-rep
if [ -s "$rep" ] && grep -q '"capture_start_step": 3' "$rep" && [ "$(grep -c '"step":' "$rep")" -eq 3 ]; then
    ok "profile_$pid.nsys-rep written with 3 captured steps"
else
    fail "profile file $rep missing or wrong"
fi

"$synth" --max-steps 3 --step-seconds 0.01 --gpus 16 --tp 2 --pp 2 --nccltrace >"$tmp/nccl.out" 2>"$tmp/nccl.err"
rc=$?
[ "$rc" -eq 0 ] && ok "nccltrace run exits 0" || fail "nccltrace run exited $rc: $(head -1 "$tmp/nccl.err")"
nccl_re='^[^ :]+:[0-9]+:[0-9]+ \[[0-9]+\] NCCL INFO (AllReduce|AllGather|ReduceScatter|Send|Recv): opCount [0-9a-f]+ sendbuff 0x[0-9a-f]+ recvbuff (0x[0-9a-f]+|\(nil\)) count [0-9]+ datatype [0-9]+ op [0-9]+ root [0-9]+ comm 0x[0-9a-f]+ \[nranks=[0-9]+\] stream 0x[0-9a-f]+$'
n=$(grep -Ec "$nccl_re" "$tmp/nccl.out")
[ "$n" -ge 9 ] && ok "$n NCCL INFO collective lines for 3 steps" || fail "only $n NCCL INFO collective lines"
grep -q 'NCCL INFO AllReduce: .*\[nranks=2\]' "$tmp/nccl.out" && ok "TP all-reduce traced" \
    || fail "no TP AllReduce with nranks=2"
n=$(grep -c '^Training epoch 0, iteration ' "$tmp/nccl.out")
[ "$n" -eq 3 ] && ok "nccltrace keeps the 3 step lines" || fail "nccltrace run has $n step lines"

# ---- SIGTERM -------------------------------------------------------------------
"$synth" --max-steps 1000 --step-seconds 0.05 >"$tmp/term.out" 2>"$tmp/term.err" &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid" 2>/dev/null
rc=$?
if [ "$rc" -ne 143 ]; then
    fail "SIGTERM: exit status $rc, want 143 (killed by SIGTERM)"
elif ! grep -q 'received SIGTERM after [0-9]* of 1000 steps, terminating' "$tmp/term.out"; then
    fail "SIGTERM: rank 0 did not say it was terminated"
elif grep -q 'iteration 999/999' "$tmp/term.out"; then
    fail "SIGTERM: the run went on to the end"
else
    ok "SIGTERM ends the run promptly with a message"
fi

if [ "$fails" -ne 0 ]; then
    echo "05-synth: $fails check(s) failed"
    exit 1
fi
echo "05-synth: all checks passed"
