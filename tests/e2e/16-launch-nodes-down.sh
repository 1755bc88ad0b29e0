#!/bin/sh
# 16-launch-nodes-down.sh - a job that fits the partition's configured nodes while some of them are
# DRAINED: `sbatch --test-only` answers "Requested node configuration is not available", yet sbatch and
# slurmrestd queue the job PENDING (ReqNodeNotAvail) until the nodes are back.  Launch must submit it with
# a warning naming the nodes, their state and reason (sbatch CLI and SLURM_SUBMIT=rest), never say "can
# never run"; what can never run (more GPUs per node than any node has) is still refused, nothing written.
# The nodes are drained on the test's own cluster (DRAIN, not DOWN: this cluster's ReturnToService=2 brings
# a DOWN node back within seconds, a race) and resumed on exit, also on failure.
T=16-launch-nodes-down
. "$(dirname "$0")/nothing-lost-lib.inc"
TUSER=${NP_CLUSTER_USER:-nemoperf-test}
unset SBATCH_GPUS_PER_NODE SBATCH_PARTITION
W=$(mktemp -d "${TMPDIR:-/tmp}/np-nodesdown.XXXXXX") || die "mktemp"
chmod 0755 "$W"
DRAINED=n[1-2]
REASON="nemoperf e2e maintenance"
# resume the nodes first, whatever failed; then no job of this test stays queued
restore() {
    scontrol update nodename="$DRAINED" state=resume >/dev/null 2>&1
    queue_jobs "$W" | while read -r id tag; do scancel "$id"; done
    rm -rf "$W"
}
trap restore EXIT
trap 'exit 130' INT TERM
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=3

scontrol update nodename="$DRAINED" state=drain reason="$REASON" || die "cannot drain $DRAINED"
sinfo -h -N -o '%N %T' | grep -q '^n1 drained' || die "n1 not drained: $(sinfo -h -N -o '%N %T %E')"

# stage NAME [OWNER]: S=$W/NAME, with a stand-in image file (no enroot here), owned by OWNER when given
stage() {
    S="$W/$1"
    mkdir -p "$S" && echo sqsh >"$S/nvidia+nemo+25.02.01.sqsh" && chown -R "${2:-$(id -u)}" "$S" || die "stage $1"
}
# queued STAGE: "id|state|reason" of the jobs whose work dir is under STAGE
queued() { squeue -h -t all -o '%i|%T|%r|%Z' | awk -F'|' -v w="$1/" 'index($4, w) == 1 { print $1 "|" $2 "|" $3 }'; }
# check_queued LABEL STAGE ERR WARNING-REGEX: exit 0, the warning, one job PENDING for the nodes
check_queued() {
    if [ "$rc" -eq 0 ] && grep -q "$4" "$3" && ! grep -q 'can never run' "$3"; then
        ok "$1: submitted, with the warning: $(grep 'warning: job' "$3")"
    else
        fail "$1: exit $rc, stderr: $(cat "$3")"
    fi
    q=$(queued "$2")
    case $q in
    *"|PENDING|"*ReqNodeNotAvail* | *"|PENDING|Nodes required for job are DOWN"*) ok "$1: the job waits: $q" ;;
    *) fail "$1: not one job PENDING for the drained nodes in the queue: '$q'" ;;
    esac
    [ "$(check_all "$1" "$2")" -eq 1 ] || fail "$1: not one job recorded"
}
# check_never LABEL STAGE ERR: exit 2, "can never run" for the GPUs per node, nothing written
check_never() {
    if [ "$rc" -eq 2 ] && grep -q "can never run: needs 4 nodes with 16 GPUs each (SBATCH_GPUS_PER_NODE=16)" "$3" &&
        [ ! -e "$2/experiments" ] && [ -z "$(queued "$2")" ]; then
        ok "$1: refused, nothing written"
    else
        fail "$1: exit $rc, stderr: $(cat "$3"), experiments: $(ls "$2" 2>&1)"
    fi
}

# ---- sbatch CLI ---------------------------------------------------------------------------------
stage cli
STAGE_PATH="$S" JOB_TOTAL_GPUS=32 "$launch" --dry-run >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 0 ] && grep -q "warning: job .*n\[1-2\] drained (reason: $REASON): a real launch submits it" "$W/err" &&
    [ ! -e "$S/experiments" ] && ok "cli --dry-run: the same warning, nothing written" ||
    fail "cli --dry-run: exit $rc: $(cat "$W/err")"
STAGE_PATH="$S" JOB_TOTAL_GPUS=32 "$launch" >"$W/out" 2>"$W/err"
rc=$?
check_queued "cli" "$S" "$W/err" \
    "^nemoperf-launch: warning: job pretrain_llama3.1_8b_bf16_32 needs 4 nodes but only 2 of partition batch's 4 are up; n\[1-2\] drained (reason: $REASON): submitting it anyway; Slurm keeps it PENDING (ReqNodeNotAvail)"
stage cli-never
STAGE_PATH="$S" JOB_TOTAL_GPUS=32 SBATCH_GPUS_PER_NODE=16 "$launch" >"$W/out" 2>"$W/err"
rc=$?
check_never "cli, 16 GPUs per node" "$S" "$W/err"

# ---- slurmrestd over the unix socket, as the user it runs jobs as ----------------------------------
if [ "$(id -u)" -eq 0 ] && id "$TUSER" >/dev/null 2>&1 && [ -S "$NP_CLUSTER_DIR/rest.sock" ]; then
    rest_as() {
        runuser -u "$TUSER" -- env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" HOME=/tmp WORKLOAD=synthetic MODEL_SIZE=8b \
            DTYPE=bf16 MAX_STEPS=3 SLURM_SUBMIT=rest SLURMRESTD_URL="unix:$NP_CLUSTER_DIR/rest.sock" "$@"
    }
    stage rest "$TUSER"
    rest_as STAGE_PATH="$S" JOB_TOTAL_GPUS=32 "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    check_queued "rest" "$S" "$W/err" \
        "^nemoperf-launch: warning: job pretrain_llama3.1_8b_bf16_32 needs 4 nodes but only 2 of partition batch's 4 are up; n1 [a-z+]*drain[a-z+]* (reason: $REASON), n2 [a-z+]*drain[a-z+]* (reason: $REASON): submitting it anyway"
    stage rest-never "$TUSER"
    rest_as STAGE_PATH="$S" JOB_TOTAL_GPUS=32 SBATCH_GPUS_PER_NODE=16 "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    check_never "rest, 16 GPUs per node" "$S" "$W/err"
else
    echo "$T: skip: REST part (needs root, user $TUSER and $NP_CLUSTER_DIR/rest.sock)"
fi

# ---- what fits the nodes that are up is not warned about ------------------------------------------
stage fits
STAGE_PATH="$S" JOB_TOTAL_GPUS=16 "$launch" --dry-run >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 0 ] && ! grep -q 'warning: job' "$W/err" && ok "2 nodes on the 2 up: no warning" ||
    fail "2 nodes on the 2 up: exit $rc: $(cat "$W/err")"

[ "$fails" -eq 0 ] || { echo "$T: $fails check(s) failed" >&2; exit 1; }
echo "$T: all checks passed"
