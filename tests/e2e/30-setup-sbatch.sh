#!/bin/sh
# 30-setup-sbatch.sh - nemoperf-setup --sbatch on the real local Slurm cluster
# (tests/slurm/cluster): the import runs under srun inside a one-node
# `sbatch --wait` job, as the original setup.sh did.  enroot cannot be installed
# here, so the job runs a stub `enroot` found through the exported PATH.  Checks
# the imported .sqsh, the job's log in $STAGE_PATH/logs, the user's SBATCH_* in the job
# (scontrol show job), a failing job (exit 1, job and log named, nothing left), a STAGE_PATH with
# spaces and quotes, and SBATCH_* Slurm can never accept (refused before anything is created).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/tests/slurm/cluster"
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
setup=$bindir/nemoperf-setup
# recipes/ of this tree, also for a binary built elsewhere (make sanitize)
export NEMOPERF_DATADIR="${NEMOPERF_DATADIR:-$root}"

fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

[ -x "$setup" ] || { echo "FAIL: $setup is not built (run make)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "FAIL: must run as root (the local cluster runs root daemons)"; exit 1; }
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
"$cluster" status >/dev/null 2>&1 || "$cluster" up >/dev/null || { echo "FAIL: cluster up failed"; exit 1; }
eval "$("$cluster" env)" || { echo "FAIL: cluster env failed"; exit 1; }

W=$NP_CLUSTER_DIR/e2e/30-setup-sbatch
rm -rf "$W"
mkdir -p "$W/stubs" || exit 1
cat >"$W/stubs/enroot" <<'EOF'
#!/bin/sh
# stub enroot, tests only: enroot cannot be installed on this machine
echo "argv: $* on ${SLURMD_NODENAME:-?} job ${SLURM_JOB_ID:-none} step ${SLURM_STEP_ID:-none}" >>"$NP_STUB_LOG"
[ "$1" = import ] && [ "$2" = --output ] || exit 2
case ${NP_STUB_MODE:-ok} in
ok) printf 'hsqs stub image of %s\n' "$4" >"$3" ;;
fail) printf 'hsqs-partial' >"$3"; echo "[ERROR] stub: failed halfway" >&2; exit 1 ;;
esac
EOF
chmod 755 "$W/stubs/enroot"
export NP_STUB_LOG="$W/enroot.log"
export PATH="$W/stubs:$PATH"
unset RECIPE MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN

S="$W/stage with 'quotes' and spaces"
STAGE_PATH=$S SBATCH_PARTITION=batch "$setup" --sbatch --skip-hf >"$W/ok.out" 2>"$W/ok.err"
rc=$?
SQSH=$S/nvidia+nemo+25.02.01.sqsh
if [ "$rc" -ne 0 ]; then
    fail "--sbatch run exited $rc: $(head -5 "$W/ok.err")"
else
    ok "--sbatch run exits 0"
fi
grep -q 'hsqs stub image of docker://nvcr.io#nvidia/nemo:25.02.01' "$SQSH" 2>/dev/null && ok "image imported by the job" \
    || fail "$SQSH missing or wrong"
grep -q "^argv: import --output $S/.nvidia+nemo+25.02.01.sqsh.importing.* on n[1-4] job [0-9]* step 0" "$NP_STUB_LOG" \
    && ok "enroot ran under srun (step 0) inside a job on a cluster node" \
    || fail "enroot did not run as a job step: $(cat "$NP_STUB_LOG" 2>/dev/null)"
ls "$S/logs"/setup-import_*.out >/dev/null 2>&1 && ok "job log in \$STAGE_PATH/logs" || fail "no job log in $S/logs"
ls -a "$S" | grep -q importing && fail "temporary file left after the job"

# idempotent: no second job
n=$(grep -c '^argv: ' "$NP_STUB_LOG")
STAGE_PATH=$S "$setup" --sbatch --skip-hf >"$W/again.out" 2>"$W/again.err"
rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -c '^argv: ' "$NP_STUB_LOG")" -eq "$n" ] && ok "second --sbatch run submits nothing" \
    || fail "second run exited $rc or submitted a job"

# the user's SBATCH_* reach the job, as with launch; setup's own options win (sbatch's
# precedence: command line over input variables); an empty one is unset, not refused
U=$W/stageu
n=$(grep -c '^argv: ' "$NP_STUB_LOG")
STAGE_PATH=$U SBATCH_PARTITION=batch SBATCH_GPUS_PER_NODE=1 SBATCH_NO_REQUEUE=1 SBATCH_RESERVATION= \
    SBATCH_TIMELIMIT=00:30:00 SBATCH_JOB_NAME=mine SBATCH_ERROR="$W/elsewhere.err" "$setup" --sbatch --skip-hf >"$W/user.out" 2>"$W/user.err"
rc=$?
job=$(sed -n "$((n + 1)),\$ s/^argv: .* job \([0-9]*\) step .*/\1/p" "$NP_STUB_LOG" | head -1)
if [ "$rc" -ne 0 ] || [ -z "$job" ]; then
    fail "--sbatch with the user's SBATCH_* exited $rc (job ${job:-none}): $(head -5 "$W/user.err")"
else
    info=$(scontrol show job "$job" 2>&1)
    printf '%s\n' "$info" | grep -Eq 'TresPerNode=gres[:/]gpu:1' && printf '%s\n' "$info" | grep -q 'Requeue=0' \
        && ok "SBATCH_GPUS_PER_NODE and SBATCH_NO_REQUEUE reached the import job $job" \
        || fail "the user's SBATCH_* did not reach job $job: $info"
    printf '%s\n' "$info" | grep -q 'JobName=nemoperf-setup' && printf '%s\n' "$info" | grep -q 'TimeLimit=01:00:00' \
        && printf '%s\n' "$info" | grep -q 'Partition=batch' \
        && printf '%s\n' "$info" | grep -q "StdErr=$U/logs/setup-import_$job.out" \
        && ok "setup's --job-name/--time/--error win over SBATCH_JOB_NAME/SBATCH_TIMELIMIT/SBATCH_ERROR" \
        || fail "setup's options lost to the user's SBATCH_*: $info"
fi

# a failing job
F=$W/stagef
NP_STUB_MODE=fail STAGE_PATH=$F "$setup" --sbatch --skip-hf >"$W/fail.out" 2>"$W/fail.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'import job [0-9]* failed: sbatch exited with status 1 (see .*/logs/setup-import_[0-9]*.out)' "$W/fail.err"; then
    ok "a failing import job -> exit 1 naming the job and its log"
else
    fail "failing job: exit $rc: $(cat "$W/fail.err")"
fi
ls -a "$F" | grep -q sqsh && fail "a failed job left $(ls -a "$F" | grep sqsh)" || ok "a failed job leaves no .sqsh nor temporary file"

# missing sbatch
env PATH="$W/stubs:/nonexistent" STAGE_PATH="$W/stagen" "$setup" --sbatch --skip-hf >"$W/nosb.out" 2>"$W/nosb.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'sbatch: not found on PATH' "$W/nosb.err" && [ ! -e "$W/stagen" ] \
    && ok "--sbatch without sbatch -> exit 2, nothing created" || fail "no sbatch: exit $rc: $(cat "$W/nosb.err")"

# what Slurm can never accept, as launch checks it (issue 23, item 10): refused before anything is created or
# downloaded (a folder or a download would come first otherwise), no job; --dry-run warns and goes on
# (the Hub: a port where nothing listens, so a download tried would fail, exit 1)
n=$(grep -c '^argv: ' "$NP_STUB_LOG")
HF_TOKEN=hf_unused HF_ENDPOINT=http://127.0.0.1:9 STAGE_PATH="$W/stagec" SBATCH_CONSTRAINT="a'b" "$setup" --sbatch \
    >"$W/cons.out" 2>"$W/cons.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "Slurm can never run the import job (sbatch --test-only: Invalid feature specification" "$W/cons.err" &&
    [ ! -e "$W/stagec" ] && [ "$(grep -c '^argv: ' "$NP_STUB_LOG")" -eq "$n" ] &&
    ok "--sbatch with SBATCH_CONSTRAINT=\"a'b\": exit 2 naming Slurm's reason, nothing created, no job" ||
    fail "SBATCH_CONSTRAINT: exit $rc: $(cat "$W/cons.err")"
STAGE_PATH="$W/stagec" SBATCH_CONSTRAINT="a'b" "$setup" --sbatch --dry-run >"$W/consd.out" 2>"$W/consd.err"
rc=$?
[ "$rc" -eq 0 ] && grep -q "warning: --sbatch: Slurm can never run the import job.*--dry-run goes on" "$W/consd.err" &&
    [ ! -e "$W/stagec" ] && ok "--sbatch --dry-run with it: a warning, the plan" || fail "SBATCH_CONSTRAINT --dry-run: exit $rc: $(cat "$W/consd.err")"
big=$(head -c 100000 /dev/zero | tr '\0' q)
STAGE_PATH="$W/stagec" SBATCH_QOS=$big "$setup" --sbatch >"$W/qos.out" 2>"$W/qos.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "SBATCH_QOS: 100000 bytes long; Slurm refuses more than 1024" "$W/qos.err" && [ ! -e "$W/stagec" ] &&
    ok "--sbatch with a 100 KB SBATCH_QOS: exit 2 naming it, nothing created" || fail "100 KB SBATCH_QOS: exit $rc: $(head -c 300 "$W/qos.err")"

if [ "$fails" -ne 0 ]; then
    echo "30-setup-sbatch: $fails check(s) failed"
    exit 1
fi
rm -rf "$W"
echo "30-setup-sbatch: all checks passed"
