#!/bin/sh
# 65-nccl-tests.sh - RECIPE=nccl-tests ./launch on the real local cluster (4 nodes, 8 GPUs each in gres), end to
# end: a FABRIC_CHECK=bisect job over the 4 nodes runs the intra-node test on every node alone (one round, 4
# steps at once) and the inter-node test on node pairs in rounds of disjoint pairs, writes nccl-tests/steps.json
# and one unmodified output file per step, and nemoperf-parse names the slow node, the slow link, the #wrong
# failure; a full check of 4 healthy nodes passes.  Bad values are refused naming the variable, nothing written.
# Stand-ins, because no GPU, NeMo container or pyxis can exist here: a stub `srun` on the job's PATH plays pyxis
# (records the image and drops the container flags, then runs the real srun: the steps are real Slurm steps on
# the nodes asked for; NEMOPERF_SRUN_MPI=none: the host's Slurm cannot load a PMIx library, and the stand-in
# binaries need none), and tests/stubs/nccl-tests/ plays NVIDIA's binaries (the real output format; bandwidths
# from the file NP_NCCL_STUB_BW, keyed by host or host pair, so one node or link can be made slow).
. "$(dirname "$0")/40-rest-lib.inc"
parse=$bindir/nemoperf-parse
real_srun=$(command -v srun) || die "srun not found"
stubs=$root/tests/stubs/nccl-tests
[ -x "$stubs/all_reduce_perf_mpi" ] || die "$stubs/all_reduce_perf_mpi missing"

# the pyxis stand-in, on the PATH the job inherits (sbatch --export=ALL)
mkdir -p "$W/pyxis" || die mkdir
{
    echo '#!/bin/sh'
    echo '# stand-in for pyxis, tests only: no container runtime here.  Records the image, checks it is there,'
    echo '# drops the container flags and runs the step with the real srun.'
    echo 'img= skip='
    echo 'for a do'
    echo '    shift'
    echo '    if [ -n "$skip" ]; then [ "$skip" = image ] && img=$a; skip=; continue; fi'
    echo '    case $a in'
    echo '    --container-image) skip=image ;;'
    echo '    --container-mounts|--container-workdir) skip=1 ;;'
    echo '    --container-image=*) img=${a#*=} ;;'
    echo '    --container-*|--no-container-mount-home) ;;'
    echo '    *) set -- "$@" "$a" ;;'
    echo '    esac'
    echo 'done'
    echo '[ -z "$img" ] || [ -s "$img" ] || { echo "stub pyxis: no image $img" >&2; exit 1; }'
    echo '[ -z "$img" ] || echo "pyxis image=$img nvls=${NCCL_NVLS_ENABLE:-} debug=${NCCL_DEBUG:-} net=${NCCL_NET:-}" >>"$NP_STANDIN_LOG"'
    echo "exec '$real_srun' \"\$@\""
} >"$W/pyxis/srun"
chmod 755 "$W/pyxis/srun"
LOG=$W/standin.log
: >"$LOG" && chmod 666 "$LOG"
echo 'hsqs stand-in' >"$S/nvidia+nemo+26.04.01.sqsh"
chown "$TUSER" "$S/nvidia+nemo+26.04.01.sqsh"

# nccl NAME [OPTION...] -- [VAR=VALUE...]: nemoperf-launch RECIPE=nccl-tests as the test user
nccl() {
    name=$1
    shift
    opts=
    while [ "$1" != -- ]; do opts="$opts $1"; shift; done
    shift
    runuser -u "$TUSER" -- env -i PATH="$W/pyxis:$CPATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp \
        NP_STANDIN_LOG="$LOG" RECIPE=nccl-tests STAGE_PATH="$S" NCCL_TESTS_PATH="$stubs" TIME_LIMIT=00:05:00 \
        NEMOPERF_SRUN_MPI=none \
        NEMOPERF_WAIT_MAX_DELAY=2 "$@" "$launch" $opts >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
    grep '^job [0-9][0-9]*: ' "$W/$name.out" >>"$JOBS"
}

# ended ID: wait (at most 300 s: the machine is shared) until the job left the queue; its state in $state
ended() {
    i=0
    while [ "$i" -lt 1200 ]; do
        state=$(sacct -n -X -P -j "$1" -o State 2>/dev/null | head -1)
        case $state in COMPLETED|FAILED|CANCELLED*|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) return 0 ;; esac
        [ -z "$state" ] && state=$(job_field "$1" JobState) &&
            case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT) return 0 ;; esac
        sleep 0.25
        i=$((i + 1))
    done
    return 1
}

# ---- bad values: exit 2 naming the variable, nothing written ----
for bad in 'FABRIC_CHECK=bisekt|FABRIC_CHECK=bisekt: unknown; allowed: full, bisect' \
    'FABRIC_CHECK=bisect|JOB_TOTAL_GPUS is not set: FABRIC_CHECK=bisect checks the nodes of one job' \
    'FABRIC_CHECK=bisect JOB_TOTAL_GPUS=8|JOB_TOTAL_GPUS=8: FABRIC_CHECK=bisect tests node pairs' \
    'JOB_TOTAL_GPUS=12|JOB_TOTAL_GPUS=12: RECIPE=nccl-tests runs one task per GPU on whole nodes' \
    'NCCL_TESTS=all_reduce,broadcast|NCCL_TESTS=all_reduce,broadcast: '"'"'broadcast'"'"' is not a collective' \
    'FABRIC_PAIRS=all|FABRIC_PAIRS=all: only FABRIC_CHECK=bisect tests node pairs' \
    'GPU_TYPE=a100|GPU_TYPE=a100: NVIDIA'"'"'s nccl-tests recipe has no such system' \
    'MODEL_SIZE=8b|MODEL_SIZE=8b: RECIPE=nccl-tests runs NVIDIA'"'"'s nccl-tests binaries, no model' \
    'WORKLOAD=synthetic|WORKLOAD=synthetic with RECIPE=nccl-tests'; do
    vars=${bad%%|*} want=${bad#*|}
    # shellcheck disable=SC2086
    nccl bad -- $vars
    [ "$rc" -eq 2 ] && grep -qF "$want" "$W/bad.err" && [ ! -d "$S/experiments" ] &&
        ok "$vars refused (exit 2) naming it, nothing written" || fail "$vars: exit $rc: $(cat "$W/bad.err")"
done
runuser -u "$TUSER" -- env -i PATH="$CPATH" HOME=/tmp STAGE_PATH="$S" WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 \
    FABRIC_CHECK=bisect "$launch" --dry-run >/dev/null 2>"$W/other.err"
[ $? -eq 2 ] && grep -q 'FABRIC_CHECK=bisect: only RECIPE=nccl-tests reads it' "$W/other.err" &&
    ok "FABRIC_CHECK with another recipe refused" || fail "FABRIC_CHECK with llama: $(cat "$W/other.err")"

# ---- --dry-run says the plan ----
nccl dry --dry-run -- FABRIC_CHECK=bisect JOB_TOTAL_GPUS=32
[ "$rc" -eq 0 ] && grep -q '^# nccl-tests FABRIC_CHECK=bisect over 4 node(s) x 8 GPUs, one job, 8 steps in 3 round(s) (pairs: ring):' "$W/dry.out" &&
    grep -q '^#   round 1: all_reduce_perf-node1 all_reduce_perf-node2 all_reduce_perf-node3 all_reduce_perf-node4 (each node alone)' "$W/dry.out" &&
    grep -q '^#   round 2: all_reduce_perf-node1-node2 all_reduce_perf-node3-node4 (node pairs at once)' "$W/dry.out" &&
    grep -q '^#   round 3: all_reduce_perf-node2-node3 all_reduce_perf-node1-node4 (node pairs at once)' "$W/dry.out" &&
    grep -q "^        '$stubs/all_reduce_perf_mpi' '-t' '1' '-g' '1' '-f' '2' '-n' '20' '-w' '5' '-b' '8' '-e' '16G' '-R' '0' '-c' '1' '-d' 'float'" "$W/dry.out" &&
    [ ! -d "$S/experiments" ] && ok "--dry-run shows the plan (4 nodes alone, then 2 rounds of disjoint pairs) and NVIDIA's flags" ||
    fail "--dry-run: exit $rc: $(cat "$W/dry.out" "$W/dry.err" | head -60)"

# ---- a 4-node bisect with n3 slow on its own and the n2-n4 link slow ----
BW=$W/bw
printf 'n1 478\nn2 478\nn3 212\nn4 478\nn2-n4 18\ndefault 380\n' >"$BW"
chmod 644 "$BW"
nccl bisect -- FABRIC_CHECK=bisect FABRIC_PAIRS=all JOB_TOTAL_GPUS=32 NP_NCCL_STUB_BW="$BW" NP_NCCL_STUB_SECONDS=3
id=$(ids_of bisect) d=$(dirs_of bisect)
[ "$rc" -eq 0 ] && [ -n "$id" ] && ok "bisect: one job queued ($id)" || fail "bisect: exit $rc: $(cat "$W/bisect.out" "$W/bisect.err")"
if [ -n "$id" ] && ended "$id"; then
    [ "$state" = COMPLETED ] && ok "bisect job $id COMPLETED" || fail "bisect job $id ended $state: $(cat "$d"/sbatch_*.out)"
    n=$(ls "$d/nccl-tests"/*.out 2>/dev/null | wc -l)
    [ "$n" -eq 10 ] && ok "10 step outputs (4 nodes alone, 6 pairs)" || fail "$n step outputs: $(ls "$d/nccl-tests")"
    for f in all_reduce_perf-n1 all_reduce_perf-n3 all_reduce_perf-n1-n2 all_reduce_perf-n2-n4 all_reduce_perf-n1-n4; do
        grep -q '^# Avg bus bandwidth    : ' "$d/nccl-tests/$f.out" || fail "$f.out: no summary: $(head -5 "$d/nccl-tests/$f.out")"
    done
    grep -q '^#  Rank 15 Group  0 Pid .* on         n4 device  7 ' "$d/nccl-tests/all_reduce_perf-n2-n4.out" &&
        ok "the pair step ran 16 ranks over n2 and n4" || fail "pair ranks: $(grep Rank "$d/nccl-tests/all_reduce_perf-n2-n4.out")"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["steps"]; assert d["check"]=="bisect" and len(s)==10, d; assert [x["nodes"] for x in s][:4]==[["n1"],["n2"],["n3"],["n4"]]; assert all(x["file"]=="nccl-tests/"+x["name"]+".out" for x in s); assert sorted(tuple(x["nodes"]) for x in s if x["scope"]=="inter")==[("n1","n2"),("n1","n3"),("n1","n4"),("n2","n3"),("n2","n4"),("n3","n4")]' "$d/nccl-tests/steps.json" &&
        ok "nccl-tests/steps.json lists the 10 steps by host" || fail "steps.json: $(cat "$d/nccl-tests/steps.json")"
    grep -q '"workload": "nccl-tests"' "$d/nemoperf.json" && grep -q '"kind": "nccl-tests"' "$d/nemoperf.json" &&
        grep -q '"steps_file": "nccl-tests/steps.json"' "$d/nemoperf.json" && ok "the manifest says kind nccl-tests and its steps file" ||
        fail "manifest: $(head -40 "$d/nemoperf.json")"
    n=$(grep -c "^pyxis image=$S/nvidia+nemo+26.04.01.sqsh nvls=0 debug=WARN net=IB$" "$LOG")
    [ "$n" -eq 10 ] && ok "every step asked pyxis for the staged nemo:26.04.01 image with NVIDIA's environment" ||
        fail "pyxis log ($n lines): $(cat "$LOG")"
    # the rounds: 4 rounds of steps at once (4 nodes alone, then 3 rounds of 2 disjoint pairs), 3 s a step: the
    # steps of a round start together, the job takes under 3/4 of its steps' time (4 rounds, not 10 steps)
    grep -q 'nemoperf: nccl-tests step all_reduce_perf-n4 exit 0' "$d"/sbatch_*.out ||
        fail "no step exit lines: $(cat "$d"/sbatch_*.out)"
    # each step's line: "nemoperf: nccl-tests step NAME exit RC (started EPOCH, N s)"
    sed -n 's/^nemoperf: nccl-tests step \([^ ]*\) exit \([0-9]*\) (started \([0-9]*\), \([0-9]*\) s)$/\1 \2 \3 \4/p' \
        "$d"/sbatch_*.out >"$W/steps"
    nsteps=$(wc -l <"$W/steps")
    alone=$(awk '$1 ~ /^all_reduce_perf-n[0-9]+$/ { print $3 }' "$W/steps" | sort -n | awk 'NR == 1 { a = $1 } { b = $1 } END { print b - a }')
    span=$(awk 'NR == 1 || $3 < a { a = $3 } $3 + $4 > b { b = $3 + $4 } END { print b - a }' "$W/steps")
    sum=$(awk '{ s += $4 } END { print s + 0 }' "$W/steps") # one step at a time: span >= sum
    [ "$nsteps" -eq 10 ] && [ "${alone:-9}" -le 1 ] && [ "$((4 * ${span:-99}))" -lt "$((3 * sum))" ] &&
        ok "10 steps in rounds: the 4 nodes alone started within ${alone} s, the 10 steps ($sum s of steps) took ${span} s" ||
        fail "rounds: $nsteps steps, alone within ${alone:-?} s, ${span:-?} s for $sum s of steps: $(cat "$W/steps")"
else
    fail "bisect job ${id:-?} did not end in 300 s"
fi
BISECT_DIR=$d
# the parse of the check names the slow node and the slow link, nothing else
"$parse" "$BISECT_DIR" >"$W/bisect.parse" 2>&1
grep -q '^fabric check nccl-tests_bisect_h100_32 (job [0-9]*): FAIL, 10 steps:$' "$W/bisect.parse" &&
    grep -q '^  n3: all_reduce intra-node busbw 212 GB/s, expected >= 332 (90 % of 369, H100 NVLink) - slow node$' "$W/bisect.parse" &&
    grep -q '^  n2-n4: all_reduce inter-node busbw 18 GB/s, expected >= 331 (90 % of 368, H100 network) - slow link$' "$W/bisect.parse" &&
    [ "$(grep -c '^  n[0-9]' "$W/bisect.parse")" -eq 2 ] &&
    ok "nemoperf-parse names n3 (slow node) and n2-n4 (slow link), nothing else" ||
    fail "bisect parse: $(cat "$W/bisect.parse")"

# ---- a ring bisect (the default pairs) with n3's network slow: its two pairs fail, n3 is named, not the links ----
printf 'n2-n3 40\nn3-n4 41\ndefault 380\n' >"$W/bw-ring" && chmod 644 "$W/bw-ring"
nccl ring -- FABRIC_CHECK=bisect JOB_TOTAL_GPUS=32 NP_NCCL_STUB_BW="$W/bw-ring"
id=$(ids_of ring) d=$(dirs_of ring)
if [ "$rc" -eq 0 ] && [ -n "$id" ] && ended "$id" && [ "$state" = COMPLETED ]; then
    "$parse" "$d" >"$W/ring.parse" 2>&1
    [ "$(ls "$d/nccl-tests"/*.out | wc -l)" -eq 8 ] &&
        grep -Eq '^  n3: all_reduce inter-node, every pair with it is slow \((n2-n3 40, n3-n4 41|n3-n4 41, n2-n3 40) GB/s\), expected >= 331 \(90 % of 368, H100 network\) - slow node \(network\)$' "$W/ring.parse" &&
        [ "$(grep -c '^  n[0-9]' "$W/ring.parse")" -eq 1 ] &&
        ok "ring bisect: 8 steps, n3 named once as slow on the network (its 2 pairs), no link" ||
        fail "ring parse: $(ls "$d/nccl-tests") $(cat "$W/ring.parse")"
else
    fail "ring: exit $rc, job ${id:-?} ${state:-?}: $(cat "$W/ring.err")"
fi

# ---- a full check of the 4 nodes, all healthy: the five binaries over all 32 GPUs ----
printf 'default 380\n' >"$W/bw-ok" && chmod 644 "$W/bw-ok"
nccl full -- JOB_TOTAL_GPUS=32 NP_NCCL_STUB_BW="$W/bw-ok"
id=$(ids_of full) d=$(dirs_of full)
[ "$rc" -eq 0 ] && [ -n "$id" ] && ended "$id" && [ "$state" = COMPLETED ] &&
    [ "$(ls "$d/nccl-tests"/*-all.out 2>/dev/null | wc -l)" -eq 5 ] &&
    grep -q '^#  Rank 31 Group  0 Pid .* on         n4 device  7 ' "$d/nccl-tests/alltoall_perf-all.out" &&
    grep -q '^ 17179869184 .* uint8    none ' "$d/nccl-tests/sendrecv_perf-all.out" &&
    ok "full check: one job, 5 collectives over the 4 nodes (32 ranks), COMPLETED" ||
    fail "full: exit $rc, job ${id:-?} ${state:-?}: $(ls "$d/nccl-tests" 2>&1) $(cat "$W/full.err")"
FULL_DIR=$d
"$parse" "$FULL_DIR" >"$W/full.parse" 2>&1
grep -q '^fabric check nccl-tests_full_h100_32 (job [0-9]*): PASS, 5 steps$' "$W/full.parse" &&
    [ "$(grep -c ' PASS  ' "$W/full.parse")" -eq 5 ] && ok "nemoperf-parse: the healthy full check PASSes, 5 of 5 steps" ||
    fail "full parse: $(cat "$W/full.parse")"

# ---- --format json: one document, valid against the shipped schema, kind nccl-tests ----
nccl json --format json -- JOB_TOTAL_GPUS=8 NP_NCCL_STUB_BW="$W/bw-ok"
grep '^job [0-9][0-9]*: ' "$W/json.err" >>"$JOBS"
PY=python3
$PY -c 'import jsonschema' 2>/dev/null || PY=/usr/bin/python3
[ "$rc" -eq 0 ] && $PY -c 'import json, sys, jsonschema
doc = json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(doc)
assert doc["kind"] == "nccl-tests" and doc["recipe"] == "nccl-tests" and doc["gpus"] == 8, doc
assert doc["container"].endswith("nvidia+nemo+26.04.01.sqsh"), doc' "$root/share/nemoperf/schema/launch.schema.json" "$W/json.out" &&
    ok "--format json: one document valid against launch.schema.json, kind nccl-tests" ||
    fail "--format json: exit $rc: $(cat "$W/json.out" "$W/json.err")"

jid=$(sed -n 's/^job \([0-9][0-9]*\): .*/\1/p' "$W/json.err" | head -1)
[ -n "$jid" ] && ended "$jid" && [ "$state" = COMPLETED ] || fail "--format json: job ${jid:-?} ended ${state:-?}"

# ---- through slurmrestd (SLURM_SUBMIT=rest): the same script, the same steps (the same row as the job above,
# which has ended: a launch refuses while one of the row is queued) ----
nccl rest -- SLURM_SUBMIT=rest SLURMRESTD_URL="$UNIX_URL" JOB_TOTAL_GPUS=8 NCCL_TESTS=all_reduce,sendrecv
id=$(ids_of rest) d=$(dirs_of rest)
[ "$rc" -eq 0 ] && [ -n "$id" ] && ended "$id" && [ "$state" = COMPLETED ] &&
    [ "$(ls "$d/nccl-tests"/all_reduce_perf-n[1-4].out "$d/nccl-tests"/sendrecv_perf-n[1-4].out 2>/dev/null | wc -l)" -eq 2 ] &&
    grep -q '"backend": "rest"' "$d/nemoperf.json" &&
    ok "SLURM_SUBMIT=rest: the one-node check ran its 2 steps, COMPLETED" ||
    fail "rest: exit $rc, job ${id:-?} ${state:-?}: $(cat "$W/rest.err") $(ls "$d/nccl-tests" 2>&1)"

# ---- data errors: #wrong in the rows, the binary exits 1, the job fails ----
printf 'default 46 3\n' >"$W/bw-wrong" && chmod 644 "$W/bw-wrong"
nccl wrong -- JOB_TOTAL_GPUS=16 NCCL_TESTS=all_reduce NP_NCCL_STUB_BW="$W/bw-wrong"
id=$(ids_of wrong) d=$(dirs_of wrong)
[ "$rc" -eq 0 ] && [ -n "$id" ] && ended "$id" && [ "$state" = FAILED ] &&
    grep -q '^# Out of bounds values : [1-9][0-9]* FAILED' "$d/nccl-tests/all_reduce_perf-all.out" &&
    grep -q 'nemoperf: nccl-tests step all_reduce_perf-all exit 1' "$d"/sbatch_*.out &&
    ok "#wrong: the step exits 1 and the job FAILED, the output kept" ||
    fail "wrong: exit $rc, job ${id:-?} ${state:-?}: $(cat "$d"/sbatch_*.out 2>&1 | tail -5)"
WRONG_DIR=$d
"$parse" "$WRONG_DIR" >"$W/wrong.parse" 2>&1
grep -q '^fabric check nccl-tests_full_h100_16 (job [0-9]*): FAIL, 1 step:$' "$W/wrong.parse" &&
    grep -q '^  n[1-4],n[1-4]: all_reduce over all nodes #wrong [1-9][0-9]* (step all_reduce_perf-all) - data errors$' "$W/wrong.parse" &&
    ok "nemoperf-parse: #wrong FAILs the check, naming the step's nodes" || fail "wrong parse: $(cat "$W/wrong.parse")"

finish
