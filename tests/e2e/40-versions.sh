#!/bin/sh
# 40-versions.sh - the launch, --wait and REST suites against current Slurm: for each of
# NP_E2E_SLURM_VERSIONS (default "24.11 26.05") it brings up its own cluster with
# `tests/slurm/cluster up --slurm V` (Debian trixie / forky chroot, built once and cached:
# the first run downloads ~100 MB and stores ~320 MB per version), runs the CLI-backend suites (10-launch-runs,
# 11-launch-validate, 12-launch-faults, 16-launch-nodes-down, 30-setup-sbatch, 40-wait-cli) and the REST suites
# (40-rest-unix, 40-rest-tcp, 40-rest-cancel-requeue, 40-rest-down) against it, and takes it
# down again (NP_CLUSTER_KEEP=1 leaves it up).  The 22.05 cluster of the other suites is not
# touched: each version has its own folder ($NP_CLUSTER_DIR-V) and ports (the cluster
# script's per-version defaults, or NP_CLUSTER_VERSIONS_PORT: version i of the list uses
# REST port BASE+10i, slurmctld BASE+10i+1, slurmd BASE+10i+2..5).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster=$root/tests/slurm/cluster
T=40-versions
[ "$(id -u)" = 0 ] || { echo "$T: FAIL: must run as root" >&2; exit 1; }
base_dir=${NP_CLUSTER_DIR:-/tmp/nemoperf-cluster}
suites="10-launch-runs 11-launch-validate 12-launch-faults 16-launch-nodes-down 30-setup-sbatch 40-wait-cli 40-rest-unix 40-rest-tcp
40-rest-cancel-requeue 40-rest-down"
fails=0
i=0
for v in ${NP_E2E_SLURM_VERSIONS-24.11 26.05}; do
    t0=$(date +%s)
    (
        export NP_CLUSTER_DIR="$base_dir-$v" NP_CLUSTER_SLURM="$v"
        unset NP_CLUSTER_REST_PORT NP_CLUSTER_CTLD_PORT NP_CLUSTER_NODE_PORT SLURM_CONF SLURMRESTD_URL
        if [ -n "${NP_CLUSTER_VERSIONS_PORT:-}" ]; then
            p=$((NP_CLUSTER_VERSIONS_PORT + 10 * i))
            export NP_CLUSTER_REST_PORT=$p NP_CLUSTER_CTLD_PORT=$((p + 1)) NP_CLUSTER_NODE_PORT=$((p + 2))
        fi
        [ "${NP_CLUSTER_KEEP:-0}" = 1 ] || trap '"$cluster" down' EXIT
        "$cluster" up --slurm "$v" || { echo "$T: FAIL: cluster up --slurm $v" >&2; exit 1; }
        eval "$("$cluster" env)" || exit 1
        f=0
        for s in $suites; do
            echo "== $T: Slurm $v: $s"
            sh "$here/$s.sh" || { f=$((f + 1)); echo "$T: FAILED: Slurm $v: $s" >&2; }
        done
        exit "$f"
    )
    r=$?
    [ "$r" -eq 0 ] && echo "$T: ok: Slurm $v: all suites passed ($(($(date +%s) - t0)) s with cluster up/down)" ||
        { echo "$T: FAIL: Slurm $v: $r suite(s) failed" >&2; fails=$((fails + 1)); }
    i=$((i + 1))
done
[ "$fails" -eq 0 ] || exit 1
echo "$T: all checks passed"
