#!/bin/sh
# run-integration.sh - run tests/e2e/*.sh (golden and cluster tests); fail if any fails.
# Brings the suite's local Slurm cluster up first (tests/slurm/cluster up, in its own folder and
# ports) and takes it down at the end, also on failure or interrupt; NP_CLUSTER_KEEP=1 leaves it
# up, and so is a cluster that was up before.
set -u
cd "$(dirname "$0")/.." || exit 1
cluster=tests/slurm/cluster

# The suite's own cluster: its folder and ports default apart from those of `make demo` and of a user's
# `tests/slurm/cluster up` (/tmp/nemoperf-cluster, ports 6820/16817/17001), so make check never stops or writes
# into a cluster somebody else started; a cluster already up where the suite's would be is used and left up.
export NP_CLUSTER_DIR="${NP_CLUSTER_DIR:-/tmp/nemoperf-check-cluster}"
export NP_CLUSTER_REST_PORT="${NP_CLUSTER_REST_PORT:-6830}" NP_CLUSTER_CTLD_PORT="${NP_CLUSTER_CTLD_PORT:-16847}"
export NP_CLUSTER_NODE_PORT="${NP_CLUSTER_NODE_PORT:-17031}"
mine=1
"$cluster" status >/dev/null 2>&1 && mine=0
if [ "${NP_CLUSTER_KEEP:-0}" != 1 ] && [ "$mine" = 1 ]; then
    trap '"$cluster" down' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
fi
[ "$mine" = 1 ] || echo "run-integration: the cluster in $NP_CLUSTER_DIR was up already: used, and left up" >&2
# a failed start is reported here; the cluster tests then fail on their own
"$cluster" up || echo "run-integration: cluster up failed (cluster tests will fail)" >&2
eval "$("$cluster" env 2>/dev/null)"

fail=0; n=0; times=
[ "$#" -gt 0 ] || set -- tests/e2e/*.sh # or the scripts named
# A script a nested run passed already (02-own-cluster.sh runs 50-first-hour.sh whole, with its make demo, through
# run-integration.sh in a private namespace) is not run a second time: the nested run leaves its name in
# NP_E2E_PASSED_DIR, which the outermost run makes (and only nested runs write)
if [ -z "${NP_E2E_PASSED_DIR:-}" ]; then
    NP_E2E_PASSED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/np-e2e-passed.XXXXXX") && export NP_E2E_PASSED_DIR
    passed_own=$NP_E2E_PASSED_DIR nested=0
else
    passed_own= nested=1
fi
for t in "$@"; do
    [ -f "$t" ] || continue
    n=$((n + 1))
    if [ "$nested" -eq 0 ] && [ -f "$NP_E2E_PASSED_DIR/$(basename "$t")" ]; then
        echo "== $t: passed already in this run ($(cat "$NP_E2E_PASSED_DIR/$(basename "$t")")): not run again"
        continue
    fi
    echo "== $t"
    t0=$(date +%s)
    if sh "$t"; then
        [ "$nested" -eq 1 ] && echo "by a nested run-integration.sh, as 02-own-cluster.sh runs it" \
            >"$NP_E2E_PASSED_DIR/$(basename "$t")" 2>/dev/null
    else
        fail=$((fail + 1)); echo "FAILED: $t"
    fi
    took=$(($(date +%s) - t0))
    echo "== $t: ${took} s"
    times="$times$took $t
"
done
echo "integration: $((n - fail)) passed, $fail failed"
# the slowest scripts first: make check stays within its 20 minutes (docs/testing.md)
printf '%s' "$times" | sort -rn | head -8 | sed 's/^/integration: slowest: /; s/ tests/ s  tests/'
[ -n "$passed_own" ] && rm -rf "$passed_own"
[ "$fail" -eq 0 ]
