#!/bin/sh
# 37-setup-mbridge-lora.sh - `CONTAINER=26.06 RECIPE=llama3_70b TASK=lora ./setup` stages what the LoRA row reads
# besides its Hub files: the base model and SQuAD over real HTTP (tests/hfserver.py plays the Hub and GitHub's
# codeload on loopback: no internet here), then one real one-node `sbatch --wait` job on the local Slurm cluster
# (tests/slurm/cluster) that makes the SQuAD cache, its rajpurkar___squad link and the converted checkpoint where
# the launch looks.  Stand-ins, because the NeMo container cannot exist here: a stub `srun` on the exported PATH
# plays pyxis (records and checks the container flags, drops them, runs the real srun), and the step's `python3`
# is a stand-in of the container's (datasets, Megatron-Bridge's convert_checkpoints.py) that records its argv,
# checks the downloaded inputs and writes the folders the real commands make.  Checks: the files in place, the
# commands NVIDIA's reproduction runs, the step on a cluster node, the launch's dry-run finding everything staged
# (it named both as missing before), a second run submitting nothing, a failing conversion (exit 1, no checkpoint under its final
# name, nothing temporary left), no token (exit 2, nothing created), Slurm unable to run the job (exit 2), too
# little space (a small tmpfs as STAGE_PATH: exit 1 before any shard).
. "$(dirname "$0")/hfserver-lib.inc"
cluster="$root/tests/slurm/cluster"
launch=$bindir/nemoperf-launch
unset NEMOPERF_DATADIR RECIPE MODEL MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN CONTAINER TASK DTYPE GPU_TYPE NP_STANDIN_FAIL
unset JOB_TOTAL_GPUS WORKLOAD HF_ENDPOINT

[ "$(id -u)" = 0 ] || { echo "FAIL: must run as root (the local cluster runs root daemons)"; exit 1; }
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
"$cluster" status >/dev/null 2>&1 || "$cluster" up >/dev/null || { echo "FAIL: cluster up failed"; exit 1; }
eval "$("$cluster" env)" || { echo "FAIL: cluster env failed"; exit 1; }
real_srun=$(command -v srun) || { echo "FAIL: srun not found"; exit 1; }
W=$NP_CLUSTER_DIR/e2e/37-setup-mbridge-lora
rm -rf "$W"
mkdir -p "$W/stubs" || exit 1
trap 'hfserver_stop; umount "$W/small" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
TOKEN=hf_e2e_lora_token_7a8b9c
mb_archives "$W/arch"
hfserver_start "$W" --token "$TOKEN" --archives "$W/arch"

# the container's python3, stand-in: records argv, checks the inputs, writes what the real command makes
cat >"$W/stubs/container-python3" <<'PY'
#!/usr/bin/env python3
# stand-in for the NeMo 26.06 container's python3 (tests only): datasets.load_dataset and
# Megatron-Bridge's examples/conversion/convert_checkpoints.py import, by their effect on disk
import os, socket, sys
a = sys.argv[1:]
log = open(os.environ["NP_STANDIN_LOG"], "a")
log.write("python3 %s host=%s job=%s\n" % (" ".join(a), socket.gethostname() and os.environ.get("SLURMD_NODENAME", "?"),
                                           os.environ.get("SLURM_JOB_ID", "?")))
env = [k + "=" + os.environ.get(k, "") for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_DATASETS_CACHE")]
log.write("env " + " ".join(env) + "\n")
if a and a[0] == "-c" and "load_dataset" in a[1]:
    src, cache = a[2], a[3]
    for f in ("train-00000-of-00001.parquet", "validation-00000-of-00001.parquet"):
        if os.path.getsize(os.path.join(src, "plain_text", f)) == 0:
            sys.exit("empty " + f)
    d = os.path.join(cache, os.path.basename(src), "plain_text", "0.0.0")
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "dataset_info.json"), "w").write("{}\n")
elif a and a[0].endswith("examples/conversion/convert_checkpoints.py") and a[1] == "import":
    opt = dict(zip(a[2::2], a[3::2]))
    hf, out = opt["--hf-model"], opt["--megatron-path"]
    for f in ("config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        if os.path.getsize(os.path.join(hf, f)) == 0:
            sys.exit("empty " + f)
    os.makedirs(os.path.join(out, "iter_0000000"), exist_ok=True)
    if os.environ.get("NP_STANDIN_FAIL") == "convert":
        sys.exit("stand-in: conversion failed halfway")
    open(os.path.join(out, "latest_checkpointed_iteration.txt"), "w").write("0\n")
else:
    sys.exit("stand-in python3: unexpected argv %r" % a)
PY
chmod 755 "$W/stubs/container-python3"
{
    echo '#!/bin/sh'
    echo '# stand-in for pyxis, tests only: no container runtime here.  Records and checks the container'
    echo '# flags, drops them, and runs the step with the real srun and the container python3 stand-in.'
    echo 'img= mnt= wr='
    echo 'for a do'
    echo '    shift'
    echo '    case $a in'
    echo '    --container-image=*) img=${a#*=} ;;'
    echo '    --container-mounts=*) mnt=${a#*=} ;;'
    echo '    --container-writable) wr=1 ;;'
    echo '    --no-container-mount-home) ;;'
    echo "    python3) set -- \"\$@\" '$W/stubs/container-python3' ;;"
    echo '    *) set -- "$@" "$a" ;;'
    echo '    esac'
    echo 'done'
    echo 'echo "pyxis image=$img mounts=$mnt writable=$wr" >>"$NP_STANDIN_LOG"'
    echo '[ -s "$img" ] || { echo "stub pyxis: no image $img" >&2; exit 1; }'
    echo "exec '$real_srun' \"\$@\""
} >"$W/stubs/srun"
chmod 755 "$W/stubs/srun"
export PATH="$W/stubs:$PATH" NP_STANDIN_LOG="$W/standin.log"

S=$W/stage
mkdir -p "$S" && echo 'hsqs stand-in' >"$S/nvidia+nemo+26.06.sqsh"
ROW="CONTAINER=26.06 RECIPE=llama3_70b TASK=lora GPU_TYPE=h100 DTYPE=fp8_cs"
run() { # NAME STAGE VAR=VALUE... : ./setup --skip-image for the row; $rc, NAME.out/.err
    name=$1 st=$2
    shift 2
    env STAGE_PATH="$st" HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" SBATCH_PARTITION=batch $ROW "$@" \
        "$setup" --skip-image >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
}
CK=$S/mbridge/checkpoints/llama3_70b
DS=$S/mbridge/datasets

# ---- no token: the gated base model is refused before anything is created ----
run notoken "$W/none"
[ "$rc" -eq 2 ] && [ ! -e "$W/none" ] && ok "no HF_TOKEN -> exit 2, nothing created" ||
    fail "no token: exit $rc: $(cat "$W/notoken.err")"

# ---- Slurm cannot run the job (no such partition): exit 2 naming it, nothing created ----
run nopart "$W/none" HF_TOKEN=$TOKEN SBATCH_PARTITION=nogpu
[ "$rc" -eq 2 ] && [ ! -e "$W/none" ] && grep -q "nogpu" "$W/nopart.err" &&
    ok "a partition Slurm cannot run the job in -> exit 2, nothing created: $(grep -o 'need[^;]*' "$W/nopart.err" | head -1 | cut -c1-120)" ||
    fail "no partition: exit $rc: $(cat "$W/nopart.err")"

# ---- a STAGE_PATH too small (a 64 MB tmpfs): refused after the index, before any shard, naming the need ----
mkdir -p "$W/small"
if mount -t tmpfs -o size=64m tmpfs "$W/small" 2>/dev/null; then
    echo 'hsqs stand-in' >"$W/small/nvidia+nemo+26.06.sqsh"
    run small "$W/small" HF_TOKEN=$TOKEN
    [ "$rc" -eq 1 ] && grep -q "STAGE_PATH=$W/small has .* free, but the LoRA row needs .* more" "$W/small.err" &&
        ! ls "$W/small/mbridge/repos/Meta-Llama-3-70B/"*.safetensors >/dev/null 2>&1 && ! grep -q '^pyxis' "$NP_STANDIN_LOG" 2>/dev/null &&
        ok "too little space: exit 1 naming the need, no shard downloaded, no job" ||
        fail "small stage: exit $rc: $(cat "$W/small.err")"
    umount "$W/small"
else
    ok "too little space: not checked (cannot mount a tmpfs here)"
fi

# ---- before: the launch's dry-run names the checkpoint and data as not staged (a real launch refuses) ----
env STAGE_PATH="$S" $ROW "$launch" --dry-run >"$W/l0.out" 2>"$W/l0.err"
l0=$?
grep -q "not staged yet: the Megatron-Bridge checkpoint .*mbridge/checkpoints/llama3_70b" "$W/l0.err" &&
    grep -q "not staged yet: the SQuAD data set .*rajpurkar___squad" "$W/l0.err" &&
    ok "before setup, launch --dry-run says the checkpoint and SQuAD are not staged" ||
    fail "launch before setup: exit $l0: $(cat "$W/l0.err")"

# ---- a failing conversion: exit 1, the data kept, no checkpoint, nothing temporary ----
run failconv "$S" HF_TOKEN=$TOKEN NP_STANDIN_FAIL=convert
grep -q 'the LoRA staging job [0-9]* failed: sbatch exited with status 1; no checkpoint (see .*/setup-lora_[0-9]*.out)' "$W/failconv.err" &&
    [ "$rc" -eq 1 ] && ok "a failing conversion -> exit 1 naming the job and its log" ||
    fail "failing conversion: exit $rc: $(cat "$W/failconv.err")"
[ ! -e "$CK" ] && [ -z "$(find "$S/mbridge/checkpoints" -name '.*' 2>/dev/null)" ] &&
    ok "no checkpoint under its final name, no temporary folder" || fail "after a failed conversion: $(find "$S/mbridge/checkpoints")"

# ---- the run that succeeds ----
n0=$(grep -c '^pyxis' "$NP_STANDIN_LOG")
run ok "$S" HF_TOKEN=$TOKEN
[ "$rc" -eq 0 ] && ok "TASK=lora CONTAINER=26.06 setup exits 0" || fail "setup: exit $rc: $(cat "$W/ok.err")"
[ -s "$CK/latest_checkpointed_iteration.txt" ] && [ -L "$DS/rajpurkar___squad" ] &&
    [ "$(readlink "$DS/rajpurkar___squad")" = squad ] && [ -s "$DS/squad/plain_text/0.0.0/dataset_info.json" ] &&
    ok "the checkpoint in mbridge/checkpoints/llama3_70b, SQuAD's cache linked as rajpurkar___squad" ||
    fail "results: $(find "$S/mbridge" -maxdepth 3 | head -30)"
[ "$(grep -c '^pyxis' "$NP_STANDIN_LOG")" -eq $((n0 + 1)) ] && ok "only the conversion ran again (the data was kept)" ||
    fail "steps run: $(tail -5 "$NP_STANDIN_LOG")"
grep -q "^python3 $S/src/Megatron-Bridge-$V5/examples/conversion/convert_checkpoints.py import --hf-model $S/mbridge/repos/Meta-Llama-3-70B --megatron-path $S/mbridge/checkpoints/.llama3_70b.converting --torch-dtype bfloat16 host=n[1-4] job=[0-9]*" "$NP_STANDIN_LOG" &&
    ok "the conversion: convert_checkpoints.py import as NVIDIA runs it, on a cluster node" ||
    fail "conversion argv: $(cat "$NP_STANDIN_LOG")"
grep -q "^python3 -c import sys; from datasets import load_dataset; load_dataset(sys.argv\[1\], cache_dir=sys.argv\[2\]) $S/mbridge/repos/squad $DS host=n" "$NP_STANDIN_LOG" &&
    grep -q "^env HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_DATASETS_CACHE=$DS" "$NP_STANDIN_LOG" &&
    ok "the SQuAD cache: load_dataset(<squad>, cache_dir=<datasets>) offline" || fail "dataset argv: $(cat "$NP_STANDIN_LOG")"
grep -qF "pyxis image=$S/nvidia+nemo+26.06.sqsh mounts=$S:$S writable=1" "$NP_STANDIN_LOG" &&
    ok "the steps asked for the staged 26.06 image, the stage mount, --container-writable" || fail "pyxis: $(cat "$NP_STANDIN_LOG")"
left=$(find "$S" -name '*.part' -o -name '.*converting*' -o -name '.*linking*')
[ -z "$left" ] && ok "nothing temporary left" || fail "left: $left"
grep -rqF "$TOKEN" "$W"/*.out "$W"/*.err "$S/logs" "$NP_STANDIN_LOG" 2>/dev/null && fail "the token was written"

# ---- the launch's dry-run now takes the row ----
env STAGE_PATH="$S" $ROW "$launch" --dry-run >"$W/l1.out" 2>"$W/l1.err"
l1=$?
[ "$l1" -eq 0 ] && ! grep -q "not staged" "$W/l1.err" && grep -qF -- "--pretrained_checkpoint' '$CK'" "$W/l1.out" &&
    grep -qF -- "--dataset_root' '$DS'" "$W/l1.out" &&
    ok "launch --dry-run takes the row, nothing unstaged: --pretrained_checkpoint and --dataset_root where setup put them" ||
    fail "launch after setup: exit $l1: $(cat "$W/l1.err") $(grep -o -- '--pretrained_checkpoint [^ ]*' "$W/l1.out")"

# ---- idempotent ----
n=$(grep -c '^pyxis' "$NP_STANDIN_LOG")
run again "$S" HF_TOKEN=$TOKEN
[ "$rc" -eq 0 ] && [ "$(grep -c '^pyxis' "$NP_STANDIN_LOG")" -eq "$n" ] && grep -q 'already staged' "$W/again.out" &&
    ok "a second run says already staged and submits no job" || fail "again: exit $rc: $(cat "$W/again.out" "$W/again.err")"

if [ "$fails" -ne 0 ]; then
    echo "37-setup-mbridge-lora: $fails check(s) failed"
    exit 1
fi
rm -rf "$W"
echo "37-setup-mbridge-lora: all checks passed"
