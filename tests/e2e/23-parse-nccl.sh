#!/bin/sh
# 23-parse-nccl.sh - nemoperf-parse --nccl / --strict end to end.
#  1. The public NCCL/RCCL excerpts of tests/data/nccl, each inside a run folder whose log also
#     has 50 NeMo step lines (generated here: the excerpts have no steps, and a run without steps
#     is not ok), through the CLI in JSON: calls and bytes as hand-counted; --strict exits 1 on
#     the multi-node socket fallback only; CSV, markdown and table carry the breakdown.
#  2. The default report (no --nccl) of a log is byte-identical with and without NCCL lines in it.
#  3. Drift: a manifest that differs from the published row (TP, container, GPUs per node) and a
#     job whose vboost step failed: each listed under the run (JSON "drift", the note, markdown).
#  4. Anomalies: periodic spikes and a trend in the step times, found and placed; straggler-detector
#     reports (Megatron-LM's, NeMo's callback) name the slowest ranks and nodes in the note and JSON.
#  5. On the local cluster: WORKLOAD=synthetic ENABLE_NCCLTRACE=true at 16 GPUs (2 nodes), waited for,
#     then parse --nccl shows the synthetic workload's breakdown, its socket network and 2 nodes; the
#     user's own NCCL_NVLS_ENABLE/NVTE_FLASH_ATTN recorded in the manifest and listed by --reference.
# Stand-ins: the step lines of 1-4 are generated (no GPU here); 5's job is the synthetic workload.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
parse=$bindir/nemoperf-parse
launch=$bindir/nemoperf-launch
cluster=$root/tests/slurm/cluster
T=23-parse-nccl
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }
[ -x "$parse" ] || die "$parse not built (make)"
W=$(mktemp -d "${TMPDIR:-/tmp}/np-nccl.XXXXXX") || die "mktemp"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

# steps FILE TIME [SPIKE_EVERY SPIKE_TIME [TREND]]: 50 NeMo 2.0 step lines of llama3.1 8b (GBS 128)
steps() {
    awk -v t="$2" -v every="${3:-0}" -v st="${4:-0}" -v trend="${5:-0}" 'BEGIN {
        for (i = 0; i < 50; i++) {
            s = t * (1 + trend * i / 49)
            if (i == 0) s = t * 3
            if (every && i >= 15 && i % every == 0) s = st
            printf "Training epoch 0, iteration %d/49 | lr: 7.496e-06 | global_batch_size: 128 | global_step: %d | peak_memory_usage: 70833405952 | memory_allocated: 44271689728 | reduced_train_loss: 11.96 | train_step_timing in s: %.4f | consumed_samples: %d\n", i, i, s, (i + 1) * 128
        }
    }' >>"$1"
}
# jget FILE PYEXPR: a value of the JSON report
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['runs'][0]; print($2)" "$1"; }

# ---- 1. the public excerpts through the CLI ---------------------------------------
for case_dir in "$root"/tests/data/nccl/*/; do
    c=$(basename "$case_dir")
    d="$W/x/$c/pretrain_llama3.1_8b_bf16_8"
    mkdir -p "$d"
    cat "$case_dir/input.log" >"$d/log-x_1_0.out"
    steps "$d/log-x_1_0.out" 12.3
    "$parse" --nccl -f json --gpu h100 "$W/x/$c" >"$W/$c.json" 2>"$W/$c.err"
    rc=$?
    want=$(python3 -c "import json,sys; e=json.load(open(sys.argv[1])); print(sum(c['calls'] for c in e['colls']), sum(c['bytes'] for c in e['colls']), e.get('warnings', 0))" "$case_dir/expected.json")
    got=$(jget "$W/$c.json" "sum(c['calls'] for c in r['nccl']['collectives']), r['nccl']['bytes'], len(r['nccl']['warnings'])" 2>&1 | tr -d '(),')
    [ "$got" = "$want" ] && ok "$c: calls, bytes, warnings $got" || fail "$c: calls bytes warnings '$got', hand count '$want'"
    [ "$rc" -eq 0 ] || fail "$c: --nccl exited $rc: $(cat "$W/$c.err")"
    "$parse" --strict --gpu h100 "$W/x/$c" >/dev/null 2>&1
    rc=$?
    w=${want##* }
    if [ "$w" -gt 0 ]; then
        [ "$rc" -eq 1 ] && ok "$c: --strict exits 1 on its warning" || fail "$c: --strict exited $rc with a warning"
    else
        [ "$rc" -eq 0 ] && ok "$c: --strict exits 0" || fail "$c: --strict exited $rc without a warning"
    fi
done
# docs/diagnostics.md's breakdown example (the README links it) is what the tool prints on the torchtitan case
(cd "$W/x/nccl-torchtitan-tp2" && "$parse" --nccl --gpu h100 .) 2>&1 | sed -n '/^NCCL: /,/ trace lines, /p' >"$W/doc-got.txt"
sed -n '/^NCCL: \.\/pretrain_llama3.1_8b_bf16_8/,/ trace lines, /p' "$root/docs/diagnostics.md" >"$W/doc-want.txt"
[ -s "$W/doc-want.txt" ] && cmp -s "$W/doc-got.txt" "$W/doc-want.txt" && ok "docs/diagnostics.md: the breakdown example is the tool's output" ||
    fail "docs/diagnostics.md's example differs: $(diff "$W/doc-want.txt" "$W/doc-got.txt" | head -8)"
sed -n '/^NCCL: \.\/pretrain_llama3.1_8b_bf16_8/,/ trace lines, /p' "$root/README.md" >"$W/readme-want.txt"
[ -s "$W/readme-want.txt" ] && cmp -s "$W/doc-got.txt" "$W/readme-want.txt" && ok "README.md: the breakdown example is the tool's output" ||
    fail "README.md's breakdown example differs: $(diff "$W/readme-want.txt" "$W/doc-got.txt" | head -8)"
# a profile run's .nsys-rep files with their ranks: profile_<pid> (nsys -o ..._%p) and NCCL's init line
# "h100clust-worker-1:227602:... comm .. rank 0 nRanks 24" of the srun-label excerpt: pid 227602 is rank 0
sr="$W/x/nccl-srun-label-3node/pretrain_llama3.1_8b_bf16_8"
: >"$sr/profile_227602.nsys-rep"
: >"$sr/profile_4242.nsys-rep"
"$parse" --nccl -f json --gpu h100 "$W/x/nccl-srun-label-3node" >"$W/nsys.json" 2>&1
got=$(jget "$W/nsys.json" "list(zip(r['nsys_reports'], r['nsys_report_ranks']))")
[ "$got" = "[('profile_227602.nsys-rep', 0), ('profile_4242.nsys-rep', None)]" ] &&
    ok "nsys reports with their ranks: $got" || fail "nsys reports: '$got'"
"$parse" --nccl --gpu h100 "$W/x/nccl-srun-label-3node" 2>&1 | grep -q 'profile_227602.nsys-rep (rank 0) profile_4242.nsys-rep$' &&
    ok "nsys reports: the table's block names the rank" || fail "nsys reports text"
sock="$W/x/nccl-2.7.8-socket-2node"
"$parse" --nccl --gpu h100 "$sock" >"$W/sock.txt" 2>&1
grep -q 'note: .*NCCL: NCCL uses TCP sockets between 2 nodes' "$W/sock.txt" && ok "socket fallback: warning in the run's note" ||
    fail "socket fallback: no warning in the note: $(cat "$W/sock.txt")"
grep -q 'NCCL 2.7.8+cuda10.2, network Socket, NET/IB none' "$W/sock.txt" && ok "socket fallback: facts line" ||
    fail "socket fallback: no facts line"
ib="$W/x/nccl-2.19.3-ib-roce-2node"
[ "$(jget "$W/nccl-2.19.3-ib-roce-2node.json" "r['nccl']['network'], r['nccl']['nodes']")" = "IB 2" ] &&
    ok "IB run: network IB on 2 nodes" || fail "IB run not classified IB on 2 nodes"
[ "$(jget "$W/nccl-2.4-tf-init-1node.json" "r['nccl']['nodes'], r['nccl']['warnings']")" = "1 []" ] &&
    ok "single-node run: 1 node, no warning" || fail "single-node run misclassified"
tt="$W/x/nccl-torchtitan-tp2"
"$parse" --nccl -f csv --gpu h100 "$tt" >"$W/tt.csv" || fail "csv exited $?"
grep -q '^run,nranks,collective,calls,lines,bytes,bytes_per_step' "$W/tt.csv" && grep -q ',2,AllGather,2,3,16777216,335544.3,' "$W/tt.csv" &&
    ok "CSV: NCCL rows after the runs (bytes per step over 50 steps)" || fail "CSV rows: $(tail -4 "$W/tt.csv")"
"$parse" --nccl -f markdown --gpu h100 "$tt" >"$W/tt.md" || fail "markdown exited $?"
grep -q '^| 2 | ReduceScatter | 1 | 8.00 MiB |' "$W/tt.md" && ok "markdown: breakdown table" || fail "markdown: $(tail -6 "$W/tt.md")"
"$parse" --nccl --plot "$W/tt.svg" --gpu h100 "$tt" >/dev/null 2>&1 || fail "--nccl --plot exited $?"
grep -q '<svg' "$W/tt.svg" 2>/dev/null &&
    ok "--nccl --plot: the size histogram drawn" || fail "--nccl --plot: no SVG"

# ---- 2. no --nccl: byte-identical whether or not the log has NCCL lines -------------
mkdir -p "$W/p1/pretrain_llama3.1_8b_bf16_8" "$W/p2/pretrain_llama3.1_8b_bf16_8"
steps "$W/p1/pretrain_llama3.1_8b_bf16_8/log-x_1_0.out" 12.3
cat "$root/tests/data/nccl/nccl-torchtitan-tp2/input.log" >"$W/p2/pretrain_llama3.1_8b_bf16_8/log-x_1_0.out"
steps "$W/p2/pretrain_llama3.1_8b_bf16_8/log-x_1_0.out" 12.3
for f in table json csv markdown; do
    (cd "$W/p1" && "$parse" -f $f --gpu h100 . >"$W/p1.$f" 2>&1)
    (cd "$W/p2" && "$parse" -f $f --gpu h100 . >"$W/p2.$f" 2>&1)
    cmp -s "$W/p1.$f" "$W/p2.$f" && ok "no --nccl, $f: NCCL lines change nothing" || fail "no --nccl, $f: outputs differ"
done

# ---- 3. drift from the published row -------------------------------------------------
e="$W/drift/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1700000000/pretrain_llama3.1_8b_bf16_8"
mkdir -p "$e"
cat >"$e/nemoperf.json" <<'EOF'
{
  "nemoperf_manifest": 1,
  "config": {"recipe": "llama3.1", "model_size": "8b", "dtype": "bf16", "gpu_type": "h100", "gpus": 8,
             "seq_len": 8192, "gbs": 128, "mbs": 1, "tp": 2, "pp": 1, "cp": 1, "gpus_per_node": 4,
             "max_steps": 50, "image": "nvcr.io#nvidia/nemo:24.12",
             "experiment": "pretrain_llama3.1_8b_bf16_8", "workload": "nemo"},
  "workload": "nemo", "submitted": true, "job_id": "42",
  "env_user": [{"name": "NCCL_IB_TIMEOUT", "user": "22", "job": "19"},
               {"name": "MY_API_TOKEN", "user": "hf_notavalue_leaked", "job": "x"}]
}
EOF
printf 'sudo: a password is required\n' >"$e/vboost.err"
steps "$e/log-pretrain_llama3.1_8b_bf16_8_42_0.out" 14.1
"$parse" --nccl --reference -f json "$W/drift" >"$W/drift.json" 2>"$W/drift.err"
got=$(jget "$W/drift.json" "' '.join(x['what'] for x in r['drift'])")
[ "$got" = "TP CP GPUs per node container env NCCL_IB_TIMEOUT env MY_API_TOKEN vboost" ] && ok "drift: $got" ||
    fail "drift: '$got' ($(cat "$W/drift.err"))"
got=$(jget "$W/drift.json" "[x['published'] + ' | ' + x['run'] for x in r['drift'] if x['what'] == 'env NCCL_IB_TIMEOUT'][0]")
[ "$got" = "19 | 22 set by the user, the job's script exported the recipe's value over it" ] &&
    ok "drift: the user's NCCL_IB_TIMEOUT with both values" || fail "drift env: '$got'"
[ "$(jget "$W/drift.json" "r['reference']['result']")" = FAIL ] && ok "drift: the run is a FAIL, with its causes" || fail "drift: verdict $(jget "$W/drift.json" "r['reference']")"
jget "$W/drift.json" "r['note']" | grep -q 'differs from the published row: TP 2 (published 1); CP 1 (published 2)' &&
    ok "drift: in the note" || fail "drift note: $(jget "$W/drift.json" "r['note']")"
"$parse" --nccl --reference -f markdown "$W/drift" >"$W/drift.md" 2>&1
grep -q '^| vboost | vboost 1 (nvidia-smi boost-slider) | vboost.err: sudo: a password is required |$' "$W/drift.md" &&
    ok "drift: markdown table" || fail "drift markdown: $(grep -A8 differs "$W/drift.md")"
# the README's drift rows are rows the tool prints for this run
sed -n '/^| setting | published | this run |$/,/^$/p' "$root/README.md" | grep '^| ' >"$W/readme-drift.txt"
n=0
while IFS= read -r row; do
    grep -qxF -- "$row" "$W/drift.md" || { fail "README.md's drift row is not the tool's: $row"; n=-1000; }
    n=$((n + 1))
done <"$W/readme-drift.txt"
[ "$n" -ge 5 ] && ok "README.md: its $n drift table lines are the tool's"
# a manifest that carries a value under a credential's name (an older or edited one): never shown
"$parse" --nccl --reference "$W/drift" >"$W/drift.txt" 2>&1
grep -q hf_notavalue_leaked "$W/drift.json" "$W/drift.md" "$W/drift.txt" &&
    fail "drift: a credential-named variable's value reached a report" ||
    ok "drift: MY_API_TOKEN listed by name only, in every format"


# ---- 4. step anomalies -----------------------------------------------------------------
a="$W/anom/pretrain_llama3.1_8b_bf16_8"
mkdir -p "$a"
steps "$a/log-x_1_0.out" 12.3 10 25.0
"$parse" --nccl -f json --gpu h100 "$W/anom" >"$W/anom.json" 2>&1
[ "$(jget "$W/anom.json" "r['anomalies']['spikes'], r['anomalies']['period']")" = "3 10" ] &&
    ok "anomalies: 3 spikes every 10 iterations" || fail "anomalies: $(jget "$W/anom.json" "r['anomalies']")"
b="$W/trend/pretrain_llama3.1_8b_bf16_8"
mkdir -p "$b"
steps "$b/log-x_1_0.out" 12.3 0 0 0.2
"$parse" --nccl --gpu h100 "$W/trend" >"$W/trend.txt" 2>&1
grep -q 'step time rises .*% across the window (throttling?)' "$W/trend.txt" && ok "anomalies: a trend" ||
    fail "anomalies: no trend in $(grep -A2 '^steps' "$W/trend.txt")"

# ---- 4b. straggler-detector reports (tests/data/straggler: Megatron's README example, a reconstruction
# of NeMo's callback): the slowest ranks and their nodes, in the note and in JSON
for sc in megatron-readme nemo-callback; do
    g="$W/strag-$sc/pretrain_llama3.1_8b_bf16_16"
    mkdir -p "$g"
    cat "$root/tests/data/straggler/$sc/input.log" >"$g/log-x_1_0.out"
    steps "$g/log-x_1_0.out" 12.3
    "$parse" --nccl -f json --gpu h100 "$W/strag-$sc" >"$W/strag-$sc.json" 2>&1
done
got=$(jget "$W/strag-megatron-readme.json" "r['stragglers']['megatron']['slowest_rank'], r['stragglers']['megatron']['lowest_etpt_rank'], [x['rank'] for x in r['stragglers']['megatron']['lowest_etpt_ranks']]")
[ "$got" = "0 0 [0, 2, 1, 4]" ] && ok "stragglers: Megatron's slowest rank 0, lowest throughput 0, 2, 1, 4" ||
    fail "stragglers megatron: '$got' $(head -c 300 "$W/strag-megatron-readme.json")"
jget "$W/strag-megatron-readme.json" "r['note']" | grep -q 'stragglers: Megatron straggler detector (1 reports), the last: slowest rank 0' &&
    ok "stragglers: Megatron's in the note" || fail "stragglers note: $(jget "$W/strag-megatron-readme.json" "r['note']")"
got=$(jget "$W/strag-nemo-callback.json" "' '.join('%d@%s' % (x['rank'], x['node']) for x in r['stragglers']['nemo']['worst'])")
[ "$got" = "13@pool0-0183 5@pool0-0181 2@pool0-0181" ] && ok "stragglers: NeMo's worst ranks and nodes: $got" ||
    fail "stragglers nemo: '$got'"
jget "$W/strag-nemo-callback.json" "r['note']" | grep -q "rank 13 on pool0-0183 (0.79)" &&
    ok "stragglers: NeMo's in the note" || fail "stragglers nemo note: $(jget "$W/strag-nemo-callback.json" "r['note']")"

# ---- 5. the synthetic workload's NCCL trace run on the local cluster ------------------
if [ -x "$launch" ] && "$cluster" status >/dev/null 2>&1 || "$cluster" up >/dev/null 2>&1; then
    eval "$("$cluster" env)" || die "cluster env failed"
    for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
        [ "$v" = SLURM_CONF ] || unset "$v"
    done
    unset RECIPE GPUS_PER_NODE GPU_TYPE TIME_LIMIT MAX_STEPS ENABLE_PROFILE ENABLE_CHECKPOINT \
        LOAD_CHECKPOINT_PATH PROFILE_START_STEP PROFILE_STOP_STEP HF_TOKEN RUN_CONF_IMAGE
    S="$W/stage"
    mkdir -p "$S"
    # the user's own NCCL_NVLS_ENABLE=1 and NVTE_FLASH_ATTN=0 (the job's script exports 0 and 1 over them)
    env WORKLOAD=synthetic DTYPE=bf16 MODEL_SIZE=8b JOB_TOTAL_GPUS=16 ENABLE_NCCLTRACE=true STAGE_PATH="$S" \
        NCCL_NVLS_ENABLE=1 NVTE_FLASH_ATTN=0 TOKENIZERS_PARALLELISM=False \
        NEMOPERF_WAIT_TIMEOUT=300 "$launch" --wait >"$W/launch.out" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && ok "cluster: NCCL trace job launched and completed" || fail "cluster: launch --wait exited $rc: $(tail -5 "$W/launch.out")"
    "$parse" --nccl -f json "$S/experiments" >"$W/cl.json" 2>"$W/cl.err"
    got=$(jget "$W/cl.json" "r['nccl']['nodes'], r['nccl']['network'], r['nccl']['steps'], len(r['nccl']['collectives']) > 0 and r['nccl']['bytes'] > 0")
    [ "$got" = "2 Socket 5 True" ] && ok "cluster: breakdown of the synthetic trace (2 nodes, Socket, 5 steps, bytes)" ||
        fail "cluster: breakdown '$got' $(cat "$W/cl.err")"
    "$parse" --nccl "$S/experiments" >"$W/cl.txt" 2>&1
    grep -q 'AllGather' "$W/cl.txt" && grep -q 'NCCL uses TCP sockets between 2 nodes' "$W/cl.txt" &&
        ok "cluster: table shows the collectives and the socket warning" || fail "cluster: $(cat "$W/cl.txt")"
    "$parse" --strict "$S/experiments" >/dev/null 2>&1
    [ $? -eq 1 ] && ok "cluster: --strict exits 1 (2 nodes over sockets)" || fail "cluster: --strict did not exit 1"
    # drift on the user's environment: the manifest names what the user set to another value (both
    # values), not what the user set to the job's own value (TOKENIZERS_PARALLELISM=False)
    man=$(find "$S/experiments" -name nemoperf.json | head -n 1)
    got=$(python3 -c "import json,sys; print(' '.join('%s=%s/%s' % (e['name'], e['user'], e['job']) for e in json.load(open(sys.argv[1]))['env_user']))" "$man" 2>&1)
    [ "$got" = "NCCL_NVLS_ENABLE=1/0 NVTE_FLASH_ATTN=0/1" ] && ok "cluster: manifest env_user: $got" ||
        fail "cluster: manifest env_user '$got'"
    "$parse" --nccl --reference -f json "$S/experiments" >"$W/cl-ref.json" 2>"$W/cl-ref.err"
    got=$(jget "$W/cl-ref.json" "'; '.join('%s %s %s' % (x['what'], x['published'], x['run']) for x in r['drift'] if x['what'].startswith('env '))")
    case $got in
    "env NCCL_NVLS_ENABLE 0 1 set by the user, the job's script exported the recipe's value over it; env NVTE_FLASH_ATTN 1 0 set by the user, the job's script exported the recipe's value over it")
        ok "cluster: parse --nccl --reference lists the user's NCCL_NVLS_ENABLE and NVTE_FLASH_ATTN" ;;
    *) fail "cluster: env drift '$got' $(cat "$W/cl-ref.err")" ;;
    esac
else
    fail "cluster not available"
fi

# the default report (no --nccl) says a network fallback too: a two-node run on sockets (the NCCL 2.7.8 excerpt's
# init lines at the log's start) -> a note, exit 0; --strict -> exit 1.  A log without NCCL lines gets no such note.
mkdir -p "$W/net/pretrain_llama3.1_8b_bf16_16"
{ cat tests/data/nccl/nccl-2.7.8-socket-2node/input.log
  python3 -c "
for i in range(50): print('Training epoch 0, iteration %d/49 | global_batch_size: 128 | global_step: %d | reduced_train_loss: 11.9 | train_step_timing in s: 12.3 | consumed_samples: %d' % (i, i, (i + 1) * 128))"
} > "$W/net/pretrain_llama3.1_8b_bf16_16/log-x_1_0.out"
out=$("$parse" --gpu h100 "$W/net" 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q '^note: .*NCCL uses TCP sockets between 2 nodes' \
    && ok "default report: a multi-node run on sockets is in the notes without --nccl" || fail "default report: rc $rc: $out"
"$parse" --strict --gpu h100 "$W/net" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] && ok "--strict: exit 1 on the same run" || fail "--strict: exit $rc"
"$parse" --gpu h100 -f json "$W/net" | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; assert "TCP sockets" in r["note"], r["note"]' \
    && ok "default JSON: the note carries it" || fail "default JSON: no network note"

# a profile run's reports where nemoperf's jobs write them (<experiment>/nsys_profile/profile_%p.nsys-rep) are listed
mkdir -p "$W/net/pretrain_llama3.1_8b_bf16_16/nsys_profile"
: > "$W/net/pretrain_llama3.1_8b_bf16_16/nsys_profile/profile_4242.nsys-rep"
"$parse" --nccl --gpu h100 -f json "$W/net" | python3 -c 'import json,sys; r=json.load(sys.stdin)["runs"][0]; assert r["nsys_reports"] == ["nsys_profile/profile_4242.nsys-rep"], r["nsys_reports"]' \
    && ok "--nccl lists nsys_profile/*.nsys-rep" || fail "--nccl: nsys_profile reports not found"

[ "$fails" -eq 0 ] && echo "$T: all checks passed"
[ "$fails" -eq 0 ]
