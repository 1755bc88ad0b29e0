#!/bin/sh
# run-integration.sh - run tests/e2e/*.sh (golden and cluster tests); fail if any fails.
# Brings the local Slurm cluster up first (tests/slurm/cluster up) and takes it down
# at the end, also on failure or interrupt; NP_CLUSTER_KEEP=1 leaves it up.
set -u
cd "$(dirname "$0")/.." || exit 1
cluster=tests/slurm/cluster

if [ "${NP_CLUSTER_KEEP:-0}" != 1 ]; then
    trap '"$cluster" down' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi
# a failed start is reported here; the cluster tests then fail on their own
"$cluster" up || echo "run-integration: cluster up failed (cluster tests will fail)" >&2
eval "$("$cluster" env 2>/dev/null)"

fail=0; n=0
for t in tests/e2e/*.sh; do
    [ -f "$t" ] || continue
    n=$((n + 1))
    echo "== $t"
    sh "$t" || { fail=$((fail + 1)); echo "FAILED: $t"; }
done
echo "integration: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
