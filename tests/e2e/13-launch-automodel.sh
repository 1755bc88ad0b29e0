#!/bin/sh
# 13-launch-automodel.sh - RECIPE=automodel WORKLOAD=synthetic on the real local Slurm cluster.
# Three seed-001 rows (Qwen3 MoE 30B on 8 GPUs, Llama3 70B LoRA on 2 nodes, Llama3 8B LoRA on 1 GPU):
# the rendered script asks for one task per node and puts MASTER_ADDR/torchrun's place to the
# synthetic workload (stand-in for benchmark.py: no GPU or AutoModel container here), which prints
# AutoModel's benchmark log (stderr apart from stdout).  nemoperf-parse must read both files and
# report every run good ("synthetic": no GPU figures for CPU work) with the summary's average as its
# step time.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
parse=$bindir/nemoperf-parse
cluster=$root/tests/slurm/cluster
T=13-launch-automodel
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }

[ -x "$launch" ] && [ -x "$bindir/nemoperf-synth" ] || die "$launch or nemoperf-synth not built (make)"
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
unset RECIPE MODEL MODEL_SIZE DTYPE JOB_TOTAL_GPUS GPUS_PER_NODE GPU_TYPE TIME_LIMIT MAX_STEPS ENABLE_PROFILE \
    ENABLE_NCCLTRACE ENABLE_CHECKPOINT LOAD_CHECKPOINT_PATH HF_TOKEN RUN_CONF_IMAGE
"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"

W=$(mktemp -d "${TMPDIR:-/tmp}/np-am.XXXXXX") || die "mktemp"
cleanup() {
    [ -f "$W/jobs" ] && cut -f2 "$W/jobs" | while read -r id; do scancel "$id" 2>/dev/null; done
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
S="$W/stage"
mkdir -p "$S" || die mkdir
: >"$W/jobs"

# name model gpus [VAR=VALUE...]
run() {
    name=$1 model=$2 gpus=$3
    shift 3
    env RECIPE=automodel WORKLOAD=synthetic MODEL="$model" JOB_TOTAL_GPUS="$gpus" STAGE_PATH="$S" "$@" \
        "$launch" >"$W/$name.out" 2>"$W/$name.err" || { fail "$name: launch failed: $(cat "$W/$name.err")"; return; }
    line=$(grep '^job .*: ' "$W/$name.out" | head -1)
    id=${line#job }
    id=${id%%:*}
    dir=${line#job *: }
    [ -n "$id" ] && printf '%s\t%s\t%s\t%s\n' "$name" "$id" "$dir" "$gpus" >>"$W/jobs" ||
        fail "$name: no 'job ID: DIR' line: $(cat "$W/$name.out")"
}

wait_job() {
    i=0 st=
    while [ "$i" -lt 480 ]; do
        st=$(scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case $st in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) echo "$st"; return 0 ;; esac
        sleep 0.5
        i=$((i + 1))
    done
    echo "${st:-UNKNOWN}"
    return 1
}

# --dry-run of every seed-001 row (WORKLOAD=nemo; the container is a stand-in file, only its path is rendered)
printf 'stand-in' >"$W/automodel.sqsh"
rows=0
"$launch" --list | sed -n '/^AutoModel benchmarks/,/^$/p' | awk 'NF && NR > 2 { print $2, $4 }' >"$W/rows" # MODEL, GPUS
while read -r model gpus; do
    env RECIPE=automodel MODEL="$model" JOB_TOTAL_GPUS="$gpus" STAGE_PATH="$S" RUN_CONF_IMAGE="$W/automodel.sqsh" \
        HF_TOKEN=np-am-secret "$launch" --dry-run >"$W/dry.out" 2>"$W/dry.err" || { fail "dry-run $model x$gpus: $(cat "$W/dry.err")"; continue; }
    grep -q "^    --container-image '$W/automodel.sqsh'" "$W/dry.out" && grep -q "^    'torchrun' " "$W/dry.out" &&
        grep -q "^    '-c' 'examples/llm_benchmark/" "$W/dry.out" && grep -q "'--step_scheduler.global_batch_size=" "$W/dry.out" &&
        grep -q "'--benchmark.warmup_steps=" "$W/dry.out" && rows=$((rows + 1)) || fail "dry-run $model x$gpus: $(cat "$W/dry.out")"
done <"$W/rows"
[ "$rows" -eq 15 ] && ok "--dry-run of all 15 rows shows the container, torchrun, the YAML and the overrides" ||
    fail "dry-run: $rows of 15 rows"
[ -z "$(ls -A "$S" 2>/dev/null)" ] || fail "--dry-run created files under STAGE_PATH"

# short runs: 6 iterations, 2 of them warm-up (MAX_STEPS below the published 30 or 10)
run qwen3 qwen3_moe_30b_te_deepep 8 MAX_STEPS=6
run lora70 custom_llama3_3_70b_instruct_peft_benchmark_2nodes 16 MAX_STEPS=6 HF_TOKEN=np-am-secret
run lora8 llama3_1_8b_peft_benchmark 1 HF_TOKEN=np-am-secret

while IFS="$(printf '\t')" read -r name id dir gpus; do
    st=$(wait_job "$id") || { fail "$name: job $id not finished (state $st)"; continue; }
    [ "$st" = COMPLETED ] || { fail "$name: job $id ended $st"; cat "$dir"/sbatch_*.out "$dir"/log-*.err >&2 2>/dev/null; continue; }
    job=${dir##*/}
    sh="$dir/sbatch_$job.sh"
    nodes=$(( gpus >= 8 ? gpus / 8 : 1 ))
    grep -q '^#SBATCH --ntasks-per-node=1$' "$sh" && grep -q "^#SBATCH --nodes=$nodes\$" "$sh" &&
        grep -q '^MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)$' "$sh" &&
        grep -q '^srun --ntasks-per-node=1 ' "$sh" && grep -q "'--log-format' 'automodel'" "$sh" &&
        ok "$name: script: $nodes node(s), one task per node, MASTER_ADDR, synthetic in torchrun's place" ||
        fail "$name: script shape wrong: $(cat "$sh")"
    out="$dir/log-${job}_${id}_0.out" err="$dir/log-${job}_${id}_0.err"
    [ -s "$out" ] && [ -s "$err" ] && grep -q '| INFO | __main__ | Average iteration time: ' "$err" &&
        grep -q '^(min, max) time across ranks (ms):$' "$out" && ! grep -q 'Average iteration time' "$out" &&
        ok "$name: stdout and stderr in two files (summary on stderr only)" || fail "$name: log files wrong"
    grep -q '"yaml": "' "$dir/nemoperf.json" && grep -q '"load": "from_' "$dir/nemoperf.json" ||
        fail "$name: manifest lacks the automodel facts"
    tasks=$(grep -c 'nemoperf: job' "$dir/sbatch_${job}_$id.out")
    [ "$tasks" -eq 1 ] || fail "$name: batch script ran $tasks times"
    grep -rq np-am-secret "$dir" && fail "$name: HF_TOKEN value written into $dir"
    avg=$(sed -n 's/.*Average iteration time: \([0-9.]*\) seconds.*/\1/p' "$err")
    json=$("$parse" --no-progress --format json "$dir" 2>"$W/parse.err")
    prc=$?
    case $prc:$json in # a synthetic run is good, without GPU figures
    0:*'"status": "synthetic"'*) ok "$name: parsed, status synthetic (exit 0)" ;;
    *) fail "$name: parse status not synthetic: $json $(cat "$W/parse.err")" ;;
    esac
    step=$(printf '%s\n' "$json" | sed -n 's/^ *"last_step_time_s": \([0-9.e+-]*\),*$/\1/p' | head -1)
    awk -v a="$avg" -v b="$step" 'BEGIN { exit !(a > 0 && b == a) }' &&
        ok "$name: step time $step s = the summary's average" || fail "$name: step time '$step' vs summary '$avg'"
    printf '%s\n' "$json" | grep -q '"model_size": "'"$(sed -n 's/^ *"model_size": "\(.*\)",*$/\1/p' "$dir/nemoperf.json" | head -1)"'"' &&
        ok "$name: identified from the manifest" || fail "$name: identity"
done <"$W/jobs"
n=$(wc -l <"$W/jobs")
[ "$n" -eq 3 ] || fail "expected 3 jobs, got $n"
echo "$T: $fails failure(s)"
[ "$fails" -eq 0 ]
