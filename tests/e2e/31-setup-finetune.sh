#!/bin/sh
# 31-setup-finetune.sh - `TASK=lora nemoperf-setup` end to end: the Hub is tests/hfserver.py on
# loopback (gated model files, a sharded safetensors index, SQuAD's parquet files), and the
# checkpoint import / SQuAD packing job is a real one-node `sbatch --wait` job on the local Slurm
# cluster (tests/slurm/cluster), whose step runs share/nemoperf/driver/nemoperf_ftprep.py.
# Stand-ins, because the NeMo container cannot exist here: a stub `srun` on the exported PATH
# plays pyxis (records --container-image / --container-mounts, checks the image is the staged
# .sqsh, drops those flags and runs the real srun), and tests/ftprep/sitecustomize.py (on the
# step's PYTHONPATH) plays the container's NeMo / nemo_run / datasets.  Checks: the files where
# NeMo and the launch look for them, the step ran on a cluster node, nothing temporary left, a
# second run submits nothing, failing jobs (exit 1, job and log named, nothing half-written), the
# missing token (exit 2, nothing created), and the launch accepting the staged folder.
. "$(dirname "$0")/hfserver-lib.inc"
cluster="$root/tests/slurm/cluster"
launch=$bindir/nemoperf-launch
unset NEMOPERF_DATADIR # bin/ finds recipes/ and share/nemoperf/driver/ of this tree

[ "$(id -u)" = 0 ] || { echo "FAIL: must run as root (the local cluster runs root daemons)"; exit 1; }
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
"$cluster" status >/dev/null 2>&1 || "$cluster" up >/dev/null || { echo "FAIL: cluster up failed"; exit 1; }
eval "$("$cluster" env)" || { echo "FAIL: cluster env failed"; exit 1; }
real_srun=$(command -v srun) || { echo "FAIL: srun not found"; exit 1; }
[ -n "${NP_CLUSTER_DIR:-}" ] || { echo "FAIL: NP_CLUSTER_DIR is not set by the cluster env"; exit 1; }

W=$NP_CLUSTER_DIR/e2e/31-setup-finetune
rm -rf "$W"
mkdir -p "$W/stubs" || exit 1
trap hfserver_stop EXIT
trap 'exit 130' INT TERM

TOKEN=hf_e2e_ft_token_3c4d5e6f
hfserver_start "$W" --token "$TOKEN"

# the pyxis stand-in (the real srun and the NeMo stand-in's folder written in)
{
    echo '#!/bin/sh'
    echo '# stand-in for pyxis, tests only: no container runtime here.  Records and checks the'
    echo '# container flags, drops them, and runs the step with the real srun and the NeMo stand-in.'
    echo 'img= mnt='
    echo 'for a do'
    echo '    shift'
    echo '    case $a in'
    echo '    --container-image=*) img=${a#*=} ;;'
    echo '    --container-mounts=*) mnt=${a#*=} ;;'
    echo '    --no-container-mount-home) ;;'
    echo '    *) set -- "$@" "$a" ;;'
    echo '    esac'
    echo 'done'
    echo 'echo "pyxis image=$img mounts=$mnt" >>"$NP_STANDIN_LOG"'
    echo '[ -s "$img" ] || { echo "stub pyxis: no image $img" >&2; exit 1; }'
    echo "export PYTHONPATH='$root/tests/ftprep'"
    echo "exec '$real_srun' \"\$@\""
} >"$W/stubs/srun"
chmod 755 "$W/stubs/srun"
export PATH="$W/stubs:$PATH" NP_STANDIN_LOG="$W/standin.log"
unset RECIPE MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN TASK NP_STANDIN_FAIL

# a stage with the image already there (the image import is tested in 30-setup-sbatch.sh)
S="$W/stage with spaces"
mkdir -p "$S" && echo 'hsqs stand-in' >"$S/nvidia+nemo+25.04.sqsh"
H=$S/hf/meta-llama/Meta-Llama-3-8B
P=$S/datasets/squad/packed/meta-llama--Meta-Llama-3-8B
run_setup() { # NAME VAR=VALUE...
    name=$1
    shift
    env STAGE_PATH="$S" HF_ENDPOINT="$EP" SBATCH_PARTITION=batch RECIPE=llama3 MODEL_SIZE=8b "$@" "$setup" \
        >"$W/$name.out" 2>"$W/$name.err"
    rc=$?
}

# ---- no token: exit 2, nothing created ----
run_setup notoken TASK=lora
[ "$rc" -eq 2 ] && grep -q 'HF_TOKEN: not set' "$W/notoken.err" && [ ! -d "$S/hf" ] \
    && ok "TASK=lora without HF_TOKEN -> exit 2, nothing created" || fail "no token: exit $rc: $(cat "$W/notoken.err")"

# ---- a failing job: the checkpoint step fails halfway ----
run_setup failimport TASK=lora HF_TOKEN=$TOKEN NP_STANDIN_FAIL=import
if [ "$rc" -eq 1 ] && grep -q 'fine-tuning preparation job [0-9]* of meta-llama/Meta-Llama-3-8B failed: sbatch exited with status 1 (see .*/logs/setup-ftprep_[0-9]*.out)' "$W/failimport.err"; then
    ok "a failing job -> exit 1 naming the job and its log"
else
    fail "failing job: exit $rc: $(cat "$W/failimport.err")"
fi
[ ! -e "$S/models/meta-llama/Meta-Llama-3-8B" ] && [ -z "$(find "$S/models" "$S/datasets" -name '.*' 2>/dev/null)" ] \
    && ok "the failed import left no checkpoint and no temporary folder" \
    || fail "after a failed import: $(find "$S/models" "$S/datasets" 2>/dev/null)"
[ -s "$H/model-00001-of-00002.safetensors" ] && [ -s "$S/datasets/squad-parquet/plain_text/train-00000-of-00001.parquet" ] \
    && ok "the downloads are kept for the next run" || fail "downloads missing in $H"

# ---- packing fails after the import succeeded: the checkpoint stays, no packed file ----
run_setup failpack TASK=lora HF_TOKEN=$TOKEN NP_STANDIN_FAIL=pack
[ "$rc" -eq 1 ] && [ -d "$S/models/meta-llama/Meta-Llama-3-8B/context" ] && [ ! -e "$P" ] \
    && [ -z "$(find "$S/datasets" -name '.squad.preparing.*')" ] \
    && ok "a failed packing step: exit 1, checkpoint kept, no packed file, no temporary folder" \
    || fail "failpack: exit $rc, $(find "$S/models" "$S/datasets" | head -20): $(cat "$W/failpack.err")"

# ---- the run that succeeds (with the user's SBATCH_*, which reach the job as with launch) ----
run_setup ok TASK=lora HF_TOKEN=$TOKEN SBATCH_NO_REQUEUE=1 SBATCH_GPUS_PER_NODE=1 SBATCH_JOB_NAME=mine
if [ "$rc" -eq 0 ]; then ok "TASK=lora setup exits 0"; else fail "TASK=lora setup exited $rc: $(cat "$W/ok.err")"; fi
job=$(sed -n 's/.*SQuAD packed to.* (job \([0-9]*\))$/\1/p' "$W/ok.out" | head -1)
info=$(scontrol show job "${job:-none}" 2>&1)
printf '%s\n' "$info" | grep -q 'Requeue=0' && printf '%s\n' "$info" | grep -Eq 'TresPerNode=gres[:/]gpu:1' \
    && printf '%s\n' "$info" | grep -q 'JobName=nemoperf-setup-ftprep' \
    && ok "the user's SBATCH_* reached the preparation job $job; its --job-name won" \
    || fail "SBATCH_* in the preparation job ${job:-(no job id in ok.out)}: $info"
grep -q 'needs about .* more on STAGE_PATH' "$W/ok.err" && ok "disk need stated up front" || fail "no disk statement"
for f in training_16384.npy validation_16384.npy 16384_metadata.jsonl training_4096.npy 4096_metadata.jsonl; do
    [ -s "$P/$f" ] || fail "missing $P/$f"
done
[ -s "$S/datasets/squad/training.jsonl" ] && [ -s "$S/datasets/squad/test.jsonl" ] \
    && ok "SQuAD jsonl and both pack lengths in place" || fail "no SQuAD jsonl"
grep -q "^packed 16384 into .* host=n[1-4] job=[0-9]* step=0" "$NP_STANDIN_LOG" \
    && ok "packing ran as step 0 of a job on a cluster node" || fail "standin log: $(cat "$NP_STANDIN_LOG")"
grep -qF "pyxis image=$S/nvidia+nemo+25.04.sqsh mounts=$S:$S" "$NP_STANDIN_LOG" \
    && ok "the step asked for the staged image and the stage mount" || fail "pyxis flags: $(cat "$NP_STANDIN_LOG")"
grep -q 'kept .*/models/meta-llama/Meta-Llama-3-8B, SQuAD packed to 16384 4096' "$W/ok.out" \
    && ok "the imported checkpoint was kept, data prepared" || fail "ok.out: $(cat "$W/ok.out")"
left=$(find "$S" -name '*.part' -o -name '.*importing*' -o -name '.squad.preparing*')
[ -z "$left" ] && ok "nothing temporary left" || fail "left: $left"
if grep -q "$TOKEN" "$W"/*.out "$W"/*.err "$S"/logs/* "$NP_STANDIN_LOG" 2>/dev/null; then
    fail "the token was written"
fi
ls "$S/logs"/setup-ftprep_*.out >/dev/null 2>&1 && ok "job log in \$STAGE_PATH/logs" || fail "no job log"

# ---- idempotent ----
n=$(grep -c '^pyxis' "$NP_STANDIN_LOG")
run_setup again TASK=lora HF_TOKEN=$TOKEN
[ "$rc" -eq 0 ] && [ "$(grep -c '^pyxis' "$NP_STANDIN_LOG")" -eq "$n" ] && grep -q 'already staged' "$W/again.out" \
    && ok "a second run submits no job" || fail "again: exit $rc: $(cat "$W/again.err")"

# ---- the launch takes the staged folder: nothing missing, the packed file in the config ----
env STAGE_PATH="$S" RECIPE=llama3 MODEL_SIZE=8b DTYPE=fp8 GPU_TYPE=h100 TASK=lora "$launch" --print-config \
    >"$W/cfg.json" 2>"$W/cfg.err"
if python3 - "$W/cfg.json" "$P" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["nemo"]["missing"] == [], c["nemo"]["missing"]
assert c["finetune"]["packed_train"] == sys.argv[2] + "/training_4096.npy", c["finetune"]
assert c["experiment"] == "finetune_llama3_8b_lora_fp8_8"
PY
then
    ok "launch: TASK=lora h100 resolves with nothing missing"
else
    fail "launch: $(cat "$W/cfg.err")"
fi

if [ "$fails" -ne 0 ]; then
    echo "31-setup-finetune: $fails check(s) failed"
    exit 1
fi
rm -rf "$W"
echo "31-setup-finetune: all checks passed"
