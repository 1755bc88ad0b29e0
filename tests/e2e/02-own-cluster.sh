#!/bin/sh
# 02-own-cluster.sh - make check never stops or writes what a user started (issue 24, item 6).
# The suite runs its own cluster (tests/run-integration.sh): a folder and ports apart from the demo's defaults
# (/tmp/nemoperf-cluster, 6820/16817/17001); a cluster that is up already is used and left up; 50-first-hour
# runs `make demo` into its own folder (checked there).  No stand-in: the real run-integration.sh runs here on
# one trivial test while this suite's cluster is up, and must leave that cluster up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster=$root/tests/slurm/cluster
T=02-own-cluster
fails=0
ok() { echo "$T: ok: $*"; }
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }

# what run-integration.sh picks when nothing is set: not the demo's folder or ports
v=$(env -u NP_CLUSTER_DIR -u NP_CLUSTER_REST_PORT -u NP_CLUSTER_CTLD_PORT -u NP_CLUSTER_NODE_PORT \
    sh -c 'sed -n "/^export NP_CLUSTER_DIR=/,/^export NP_CLUSTER_NODE_PORT=/p" "$1" > "$2.defs"; . "$2.defs";
           echo "$NP_CLUSTER_DIR $NP_CLUSTER_REST_PORT $NP_CLUSTER_CTLD_PORT $NP_CLUSTER_NODE_PORT"' sh \
    "$root/tests/run-integration.sh" "${TMPDIR:-/tmp}/$T.$$")
rm -f "${TMPDIR:-/tmp}/$T.$$.defs"
set -- $v
if [ "$#" -eq 4 ] && [ "$1" != /tmp/nemoperf-cluster ] && [ "$2" != 6820 ] && [ "$3" != 16817 ] && [ "$4" != 17001 ]; then
    ok "the suite's default cluster: $1, ports $2/$3/$4 (the demo's: /tmp/nemoperf-cluster, 6820/16817/17001)"
else
    fail "the suite's default cluster is the demo's, or unreadable: '$v'"
fi

# a cluster that is up before run-integration.sh starts is left up
"$cluster" status >/dev/null 2>&1 || "$cluster" up >/dev/null 2>&1 || { fail "cluster up"; exit 1; }
t=$(mktemp "${TMPDIR:-/tmp}/np-$T.XXXXXX") || exit 1
echo 'exit 0' >"$t"
(cd "$root" && sh tests/run-integration.sh "$t") >"$t.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "was up already: used, and left up" "$t.out" && "$cluster" status >/dev/null 2>&1; then
    ok "run-integration.sh on a cluster that was up: used, and left up"
else
    fail "run-integration.sh (exit $rc) stopped a cluster it did not start: $(tail -5 "$t.out")"
fi
rm -f "$t" "$t.out"
[ "$fails" -eq 0 ] && echo "$T: all checks passed" || exit 1
