#!/bin/sh
# 11-launch-validate.sh - every validation failure of nemoperf-launch, table-driven, against
# the real cluster: exit status 2, a message naming the variable and the bad value,
# nothing created under STAGE_PATH, and no job of ours in squeue.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
cluster=$root/tests/slurm/cluster
T=11-launch-validate
fails=0
n=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }

[ -x "$launch" ] || die "$launch not built (make)"
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
unset RECIPE MODEL_SIZE DTYPE JOB_TOTAL_GPUS GPUS_PER_NODE GPU_TYPE TIME_LIMIT MAX_STEPS ENABLE_PROFILE \
    ENABLE_NCCLTRACE ENABLE_CHECKPOINT LOAD_CHECKPOINT_PATH PROFILE_START_STEP PROFILE_STOP_STEP HF_TOKEN \
    RUN_CONF_IMAGE NEMOPERF_FORCE_CHECKPOINT NEMOPERF_SBATCH_TIMEOUT WORKLOAD STAGE_PATH
"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"
command -v sbatch >/dev/null || die "sbatch not on PATH"

W=$(mktemp -d "${TMPDIR:-/tmp}/np-validate.XXXXXX") || die "mktemp"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
S="$W/stage"    # staged: image present, a checkpoint without weights, one outside
N="$W/nostage"  # nothing staged
O="$W/outside"
mkdir -p "$S/empty-ck" "$N" "$O/weights" "$W/log" || die "mkdir"
echo sqsh >"$S/nvidia+nemo+25.02.01.sqsh"
echo x >"$O/weights/__0_0.distcp"

E="$W/emptyimg" # an import that did not finish: a 0-byte image
mkdir -p "$E" && : >"$E/nvidia+nemo+25.02.01.sqsh" || die "mkdir"
snapshot() { (cd "$W" && find stage nostage outside emptyimg | sort); }

# expect_bad PIECE... -- VAR=VALUE...: exit 2, every PIECE in stderr, nothing created, no job
expect_bad() {
    n=$((n + 1))
    pieces=
    while [ "$1" != -- ]; do
        pieces="$pieces$1
"
        shift
    done
    shift
    before=$(snapshot)
    case " $* " in # the launch command (with options) may be given after the variables
    *" $launch "*) env "$@" >"$W/log/out" 2>"$W/log/err" ;;
    *) env "$@" "$launch" >"$W/log/out" 2>"$W/log/err" ;;
    esac
    rc=$?
    after=$(snapshot)
    msg=$(cat "$W/log/err")
    label="case $n ($*)"
    [ "$rc" -eq 2 ] || fail "$label: exit $rc, want 2; stderr: $msg"
    printf '%s' "$pieces" | while IFS= read -r p; do
        case $msg in *"$p"*) ;; *) echo "$T: FAIL: $label: '$p' not in: $msg" >&2; echo x >>"$W/log/piecefail" ;; esac
    done
    [ "$before" = "$after" ] || fail "$label: files were created: $(printf '%s\n' "$after" | grep -vxF "$before" | head -3)"
    [ -s "$W/log/out" ] && fail "$label: printed on stdout: $(head -2 "$W/log/out")"
    if squeue -h -o '%Z %o' 2>/dev/null | grep -qF "$W"; then fail "$label: a job of ours is in squeue"; fi
    return 0
}

SYN="WORKLOAD=synthetic DTYPE=bf16" # DTYPE is required: the cases that do not test it set bf16
expect_bad "STAGE_PATH is not set" -- $SYN MODEL_SIZE=8b
expect_bad "STAGE_PATH=rel/dir" "not an absolute path" -- $SYN MODEL_SIZE=8b STAGE_PATH=rel/dir
expect_bad "STAGE_PATH=$W/missing" "no such folder" -- $SYN MODEL_SIZE=8b STAGE_PATH="$W/missing"
expect_bad "WORKLOAD=docker" "nemo, synthetic" -- WORKLOAD=docker MODEL_SIZE=8b STAGE_PATH="$S"
expect_bad "RECIPE=llama9" "allowed:" "llama3.1" -- $SYN RECIPE=llama9 STAGE_PATH="$S"
expect_bad "MODEL_SIZE=9b" "allowed: 8b, 70b, 405b, 15b, 340b" -- $SYN MODEL_SIZE=9b STAGE_PATH="$S"
expect_bad "MODEL_SIZE is not set" "RECIPE" -- $SYN STAGE_PATH="$S"
expect_bad "MODEL_SIZE is not set and DTYPE is not set" "required" -- WORKLOAD=synthetic STAGE_PATH="$S"
expect_bad "DTYPE is not set" "required" "allowed: bf16, fp8" -- WORKLOAD=synthetic MODEL_SIZE=8b STAGE_PATH="$S"
expect_bad "DTYPE is not set" -- MODEL_SIZE=70b JOB_TOTAL_GPUS=64 STAGE_PATH="$N" "$launch" --print-config
expect_bad "NEMOPERF_MAX_RETRIES=many" "allowed: 0 to 100" -- $SYN MODEL_SIZE=8b NEMOPERF_MAX_RETRIES=many STAGE_PATH="$S"
expect_bad "SBATCH_SIGNAL is set" "SLURM_SUBMIT=cli" -- $SYN MODEL_SIZE=8b SBATCH_SIGNAL=USR1@60 SLURM_SUBMIT=rest SLURMRESTD_URL="unix:$W/none.sock" STAGE_PATH="$S"
expect_bad "DTYPE=fp16" "allowed: bf16, fp8" -- $SYN MODEL_SIZE=8b DTYPE=fp16 STAGE_PATH="$S"
expect_bad "GPU_TYPE=a100" "allowed: h100" -- $SYN MODEL_SIZE=8b GPU_TYPE=a100 STAGE_PATH="$S"
expect_bad "GPUS_PER_NODE=0" "allowed: 1 to" -- $SYN MODEL_SIZE=8b GPUS_PER_NODE=0 STAGE_PATH="$S"
expect_bad "JOB_TOTAL_GPUS=abc" "positive integer" -- $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=abc STAGE_PATH="$S"
expect_bad "JOB_TOTAL_GPUS=0" "positive integer" -- $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=0 STAGE_PATH="$S"
expect_bad "JOB_TOTAL_GPUS=12" "not a multiple of GPUS_PER_NODE=8" -- $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=12 STAGE_PATH="$S"
expect_bad "JOB_TOTAL_GPUS=24" "allowed: 8, 16, 32, 64, 128" -- $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=24 STAGE_PATH="$S"
# issue 24: --dry-run never fails for what only a real submission needs, and warns where the real launch refuses
env $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=64 STAGE_PATH="$S" "$launch" --dry-run >"$W/log/out" 2>"$W/log/err"
rc=$?
[ "$rc" -eq 0 ] && grep -q '^#SBATCH --nodes=8$' "$W/log/out" &&
    grep -q "warning: the real launch would refuse this: JOB_TOTAL_GPUS: 64: .*partition batch has 4 nodes" "$W/log/err" ||
    fail "--dry-run at 64 GPUs on 4 nodes: exit $rc, no warning: $(cat "$W/log/err")"
env MODEL_SIZE=340b DTYPE=fp8 JOB_TOTAL_GPUS=256 ENABLE_CHECKPOINT=1 STAGE_PATH="$S" "$launch" --dry-run >"$W/log/out" 2>"$W/log/err"
rc=$?
[ "$rc" -eq 0 ] && grep -q "warning: ENABLE_CHECKPOINT=1: STAGE_PATH=.* free, but nemotron4 340b checkpoint needs 4.4 TB" "$W/log/err" ||
    fail "ENABLE_CHECKPOINT --dry-run on a small disk: exit $rc: $(cat "$W/log/err")"
# a 0-byte staged image is said to be empty (not "does not exist"), with the setup command that imports it again
expect_bad "staged container image $E/nvidia+nemo+25.02.01.sqsh is empty (0 bytes, left by an import that did not finish): run " \
    "to import it again (or set RUN_CONF_IMAGE" -- MODEL_SIZE=8b DTYPE=bf16 STAGE_PATH="$E"
grep -q "does not exist" "$W/log/err" && fail "0-byte image: says 'does not exist': $(cat "$W/log/err")"
env MODEL_SIZE=8b DTYPE=bf16 STAGE_PATH="$E" "$launch" --dry-run >/dev/null 2>"$W/log/err"
grep -q "not staged yet: container image $E/nvidia+nemo+25.02.01.sqsh is empty (0 bytes" "$W/log/err" ||
    fail "0-byte image --dry-run: $(cat "$W/log/err")"
# issue 24: the variable at fault is named, with values that work, on one line
expect_bad "GPUS_PER_NODE=3: JOB_TOTAL_GPUS=8 is not a multiple of it" "the published row's 8" -- $SYN MODEL_SIZE=8b GPUS_PER_NODE=3 STAGE_PATH="$S"
expect_bad "SBATCH_PARTITION=gpu: job pretrain_llama3.1_8b_bf16_8 can never run" "invalid partition specified: gpu; " "allowed: batch" -- $SYN MODEL_SIZE=8b SBATCH_PARTITION=gpu STAGE_PATH="$S"
[ "$(wc -l <"$W/log/err")" -eq 1 ] || fail "SBATCH_PARTITION=gpu: not one line: $(cat "$W/log/err")"
expect_bad "JOB_TOTAL_GPUS=8,16,48" "48" "allowed: 8, 16, 32, 64, 128" -- $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=8,16,48 STAGE_PATH="$S"
expect_bad "ENABLE_PROFILE=true" "ENABLE_NCCLTRACE=true" -- $SYN MODEL_SIZE=8b ENABLE_PROFILE=true ENABLE_NCCLTRACE=true STAGE_PATH="$S"
expect_bad "ENABLE_PROFILE=perhaps" "true, false, 1, 0, yes, no" -- $SYN MODEL_SIZE=8b ENABLE_PROFILE=perhaps STAGE_PATH="$S"
expect_bad "PROFILE_START_STEP=25" "PROFILE_STOP_STEP=10" -- $SYN MODEL_SIZE=8b ENABLE_PROFILE=1 PROFILE_START_STEP=25 PROFILE_STOP_STEP=10 STAGE_PATH="$S"
expect_bad "MAX_STEPS=-1" -- $SYN MODEL_SIZE=8b MAX_STEPS=-1 STAGE_PATH="$S"
expect_bad "TIME_LIMIT=half an hour" "HH:MM:SS" -- $SYN MODEL_SIZE=8b "TIME_LIMIT=half an hour" STAGE_PATH="$S"
expect_bad "ENABLE_CHECKPOINT=1" "16 to 128 GPUs" "JOB_TOTAL_GPUS=8" -- $SYN MODEL_SIZE=8b JOB_TOTAL_GPUS=8 ENABLE_CHECKPOINT=1 STAGE_PATH="$S"
expect_bad "ENABLE_CHECKPOINT=1" "free" "4.4 TB (4400000000000 bytes)" "NEMOPERF_FORCE_CHECKPOINT" -- MODEL_SIZE=340b DTYPE=fp8 JOB_TOTAL_GPUS=256 ENABLE_CHECKPOINT=1 STAGE_PATH="$S"
expect_bad "LOAD_CHECKPOINT_PATH=$O" "not under STAGE_PATH" -- $SYN MODEL_SIZE=8b LOAD_CHECKPOINT_PATH="$O" STAGE_PATH="$S"
expect_bad "LOAD_CHECKPOINT_PATH=$S/nope" "no such folder" -- $SYN MODEL_SIZE=8b LOAD_CHECKPOINT_PATH="$S/nope" STAGE_PATH="$S"
expect_bad "LOAD_CHECKPOINT_PATH=$S/empty-ck" "weights/*.distcp" -- $SYN MODEL_SIZE=8b LOAD_CHECKPOINT_PATH="$S/empty-ck" STAGE_PATH="$S"
expect_bad "RUN_CONF_IMAGE is not set" "setup first (or set RUN_CONF_IMAGE" -- MODEL_SIZE=15b DTYPE=fp8 STAGE_PATH="$N"
expect_bad "RUN_CONF_IMAGE=/nonexistent.sqsh" "no such file" -- MODEL_SIZE=15b DTYPE=fp8 RUN_CONF_IMAGE=/nonexistent.sqsh STAGE_PATH="$N"
expect_bad "meta-llama/Meta-Llama-3-8B" "is not staged" "with HF_TOKEN" -- MODEL_SIZE=8b DTYPE=bf16 STAGE_PATH="$S"
expect_bad "SBATCH_ACCOUNT=a b" "allowed:" -- $SYN MODEL_SIZE=8b "SBATCH_ACCOUNT=a b" STAGE_PATH="$S"
expect_bad "sbatch: not found on PATH=$W/empty-path" -- $SYN MODEL_SIZE=8b STAGE_PATH="$S" PATH="$W/empty-path"
expect_bad "NEMOPERF_SBATCH_TIMEOUT=0" -- $SYN MODEL_SIZE=8b STAGE_PATH="$S" NEMOPERF_SBATCH_TIMEOUT=0
expect_bad "unexpected argument" -- $SYN MODEL_SIZE=8b STAGE_PATH="$S" "$launch" extra-arg

# the same requests pass validation when fixed (so each case above failed for its own reason)
env WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 JOB_TOTAL_GPUS=8,16 STAGE_PATH="$S" "$launch" --dry-run >/dev/null 2>&1 ||
    fail "the fixed request is refused too"
# before ./setup: --print-config and --dry-run say what is missing instead of refusing, and create nothing
before=$(snapshot)
for mode in --print-config --dry-run; do
    env MODEL_SIZE=70b DTYPE=fp8 JOB_TOTAL_GPUS=64 STAGE_PATH="$W/never-staged" "$launch" $mode >"$W/log/out" 2>"$W/log/err" ||
        fail "$mode before ./setup exited $?: $(cat "$W/log/err")"
    grep -q 'not staged yet: STAGE_PATH=' "$W/log/err" && grep -q 'not staged yet: container image' "$W/log/err" &&
        grep -q 'not staged yet: tokenizer files of meta-llama/Meta-Llama-3-70B' "$W/log/err" ||
        fail "$mode before ./setup does not say what is missing: $(cat "$W/log/err")"
done
grep -q "/nemo_run/code/nemoperf_nemo.py" "$W/log/out" || fail "--dry-run before ./setup renders no driver step"
[ -e "$W/never-staged" ] && fail "--dry-run created $W/never-staged"
[ "$before" = "$(snapshot)" ] || fail "--print-config/--dry-run before ./setup created files"
# the Mixtral-8x22B rows (published MBS/GBS swapped) launch with NVIDIA's values
env WORKLOAD=synthetic RECIPE=mixtral MODEL_SIZE=8x22b DTYPE=fp8 JOB_TOTAL_GPUS=256 STAGE_PATH="$S" "$launch" --print-config \
    >"$W/log/out" 2>&1 && grep -q '"mbs": 1,' "$W/log/out" && grep -q '"gbs": 256,' "$W/log/out" ||
    fail "mixtral 8x22b h100: not MBS 1, GBS 256: $(head -c 600 "$W/log/out")"
env MODEL_SIZE=340b DTYPE=fp8 JOB_TOTAL_GPUS=256 ENABLE_CHECKPOINT=1 NEMOPERF_FORCE_CHECKPOINT=yes STAGE_PATH="$S" \
    "$launch" --print-config >/dev/null 2>&1 || fail "NEMOPERF_FORCE_CHECKPOINT does not override the free-space check"

[ -f "$W/log/piecefail" ] && fails=$((fails + $(wc -l <"$W/log/piecefail")))
if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed in $n cases" >&2
    exit 1
fi
echo "$T: all $n validation cases exit 2, name the variable, create nothing, submit nothing"
