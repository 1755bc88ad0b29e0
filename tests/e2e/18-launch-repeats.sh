#!/bin/sh
# 18-launch-repeats.sh - REPEATS=N on the real local cluster, WORKLOAD=synthetic (the stand-in for the NeMo
# container, which cannot exist here): bad values refused naming REPEATS before anything is written;
# REPEATS=4 --wait queues four jobs of one row, each its own folder and record ("repeat" 1..4 of 4, one
# configuration), waits for all four; nemoperf-parse --compare of two such sets gives a verdict over 4/4
# runs; a second launch of the same row refuses while repeats are queued, and --skip-existing with REPEATS=5
# submits only the 2 an earlier launch does not have queued.
. "$(dirname "$0")/40-rest-lib.inc"
parse=$bindir/nemoperf-parse

# rep NAME [OPTION...] -- [VAR=VALUE...]: nemoperf-launch as the test user (no --resubmit)
rep() {
    name=$1
    shift
    opts=
    while [ "$1" != -- ]; do opts="$opts $1"; shift; done
    shift
    runuser -u "$TUSER" -- env -i PATH="$CPATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp \
        WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=6 JOB_TOTAL_GPUS=8 NEMOPERF_WAIT_MAX_DELAY=2 "$@" \
        "$launch" $opts >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    grep '^job [0-9][0-9]*: ' "$W/$name.out" >>"$JOBS"
}

# bad values: exit 2 naming REPEATS, no folder
for v in 0 101 x 4x ''; do
    rep bad -- STAGE_PATH="$S" REPEATS="$v"
    if [ -z "$v" ]; then # empty counts as unset: one job
        [ "$rc" -eq 0 ] && [ "$(grep -c '^job ' "$W/bad.out")" -eq 1 ] && ok "REPEATS='' is one job" ||
            fail "REPEATS='': exit $rc: $(cat "$W/bad.out" "$W/bad.err")"
        ids_of bad | while read -r id; do scancel "$id"; done
        continue
    fi
    [ "$rc" -eq 2 ] && grep -q "REPEATS=$v: not an integer in range; allowed: 1 to 100" "$W/bad.err" &&
        [ ! -d "$S/experiments" ] && ok "REPEATS=$v refused (exit 2), nothing written" ||
        fail "REPEATS=$v: exit $rc: $(cat "$W/bad.err")"
done
rm -rf "$S/experiments"
rep typo -- STAGE_PATH="$S" REPEAT=4
[ "$rc" -eq 2 ] && grep -q "REPEAT=4: not a nemoperf variable; did you mean REPEATS?" "$W/typo.err" &&
    ok "REPEAT=4: the typo checker names REPEATS" || fail "REPEAT=4: exit $rc: $(cat "$W/typo.err")"

# two sets of four, each waited for
for set in a b; do
    mkdir -p "$W/$set" && chown "$TUSER" "$W/$set"
    rep "set$set" --wait -- STAGE_PATH="$W/$set" REPEATS=4
    n=$(grep -c '^job [0-9][0-9]*: ' "$W/set$set.out")
    nd=$(dirs_of "set$set" | sort -u | wc -l)
    c=$(grep -c '^job [0-9][0-9]* COMPLETED[ :]' "$W/set$set.out")
    r=$(grep -c '^pretrain_llama3.1_8b_bf16_8 .* synthetic *$' "$W/set$set.out")
    [ "$rc" -eq 0 ] && [ "$n" -eq 4 ] && [ "$nd" -eq 4 ] && [ "$c" -eq 4 ] && [ "$r" -eq 4 ] &&
        ok "REPEATS=4 --wait ($set): 4 jobs queued in 4 folders, all 4 waited for to COMPLETED, 4 table rows" ||
        fail "REPEATS=4 --wait ($set): exit $rc, $n jobs, $nd folders, $c COMPLETED, $r rows: $(cat "$W/set$set.out") $(tail -3 "$W/set$set.err")"
    i=0
    for d in $(dirs_of "set$set"); do
        i=$((i + 1))
        m=$d/nemoperf.json
        idx=$(sed -n 's/^ *"index": \([0-9]*\),*$/\1/p' "$m") of=$(sed -n 's/^ *"of": \([0-9]*\),*$/\1/p' "$m")
        [ "$idx" = "$i" ] && [ "$of" = 4 ] || fail "$m: repeat index '$idx' of '$of', want $i of 4"
        sed -n '/"config": {/,/^  }/p' "$m" | grep -v '"timestamp"\|"experiment_dir"\|"nsys_dir"' >"$W/cfg$set$i"
        cmp -s "$W/cfg${set}1" "$W/cfg$set$i" || fail "$m: its config differs from the first repeat's"
    done
done

# --compare of the two sets: one configuration, 4 runs a side, a verdict
"$parse" --compare "$W/a" "$W/b" >"$W/cmp.out" 2>"$W/cmp.err"
crc=$?
nc=$(grep -c '^llama3.1 8b pretrain bf16 h100x8 .* 4/4 .*\(FASTER\|SLOWER\|SAME\|INCONCLUSIVE\) *$' "$W/cmp.out")
[ "$crc" -le 1 ] && [ "$nc" -eq 1 ] && grep -q '^1 configuration compared' "$W/cmp.out" &&
    ok "--compare of two REPEATS=4 sets: one configuration, 4/4 runs, a verdict" ||
    fail "--compare: exit $crc: $(cat "$W/cmp.out" "$W/cmp.err")"

# the launch lock and --skip-existing count repeats: 3 queued (long runs), a second launch refuses, REPEATS=5
# --skip-existing submits the 2 missing
mkdir -p "$W/c" && chown "$TUSER" "$W/c"
rep q3 -- STAGE_PATH="$W/c" REPEATS=3 MAX_STEPS=100000 TIME_LIMIT=00:05:00
[ "$rc" -eq 0 ] && [ "$(grep -c '^job ' "$W/q3.out")" -eq 3 ] && ok "REPEATS=3: 3 jobs queued" ||
    fail "REPEATS=3: exit $rc: $(cat "$W/q3.out" "$W/q3.err")"
rep again -- STAGE_PATH="$W/c" REPEATS=3 MAX_STEPS=100000 TIME_LIMIT=00:05:00
e=$(grep -c 'of an earlier launch exists' "$W/again.err")
[ "$rc" -eq 2 ] && [ "$e" -eq 3 ] && [ "$(find "$W/c/experiments" -name nemoperf.json | wc -l)" -eq 3 ] &&
    ok "the same REPEATS=3 launch again: refused naming the 3 queued repeats, nothing written" ||
    fail "again: exit $rc, $e named: $(cat "$W/again.err")"
rep skip --skip-existing -- STAGE_PATH="$W/c" REPEATS=5 MAX_STEPS=100000 TIME_LIMIT=00:05:00
[ "$rc" -eq 0 ] && [ "$(grep -c '^job ' "$W/skip.out")" -eq 2 ] &&
    grep -q 'skipping 3 jobs an earlier launch has queued or running' "$W/skip.err" &&
    [ "$(find "$W/c/experiments" -name nemoperf.json | wc -l)" -eq 5 ] &&
    ok "REPEATS=5 --skip-existing: 2 submitted beside the 3 queued (5 records)" ||
    fail "skip: exit $rc: $(cat "$W/skip.out" "$W/skip.err")"
finish
