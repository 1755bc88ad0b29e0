#!/bin/sh
# 02-own-cluster.sh - make check never stops or writes what a user started (issue 24, item 6).
# The suite runs its own cluster (tests/run-integration.sh): a folder and ports apart from the demo's defaults
# (/tmp/nemoperf-cluster, 6820/16817/17001); a cluster that is up already is used and left up; 50-first-hour
# runs `make demo` into its own folder.  Checked for real: a user's `make demo` at its own defaults, then what
# make check runs that could touch it (run-integration.sh's cluster start and stop, 50-first-hour with its
# `make demo`, all with default settings); the demo's cluster and output folders must be byte-identical after
# and its cluster must still answer.  Stand-in, and why: the demo's defaults are machine-wide (/tmp paths,
# loopback ports) and may be a real user's cluster, so the demo and the suite run in a private mount and
# network namespace (unshare: empty folders mounted at those paths, its own loopback) where they are this test's alone;
# everything in it is the real thing (make demo, Slurm daemons, run-integration.sh, 50-first-hour.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster=$root/tests/slurm/cluster
T=02-own-cluster
fails=0
ok() { echo "$T: ok: $*"; }
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
# the default folders of make demo (its cluster, its output) and of run-integration.sh's cluster
DEFAULT_DIRS="/tmp/nemoperf-cluster /tmp/nemoperf-demo /tmp/nemoperf-check-cluster"
finish() { [ "$fails" -eq 0 ] && echo "$T: ${1:-all checks passed}" || exit 1; }

# ---- inside the private namespace (sh 02-own-cluster.sh --inside) --------------------------------
if [ "${1:-}" = --inside ]; then
    # loopback up, and an IPv4 address that is not a loopback one (a TEST-NET-1 address, RFC 5737) so that
    # getaddrinfo(AI_ADDRCONFIG) offers IPv4 only, as on the host: slurmd binds its port that way; the
    # default folders of the demo and of the suite: empty, this namespace's own (the checkout and TMPDIR stay
    # where they are, also under /tmp)
    ip link set lo up && ip addr add 192.0.2.254/32 dev lo || { fail "namespace set-up: loopback"; exit 1; }
    for d in $DEFAULT_DIRS; do
        mount -t tmpfs -o mode=0755 tmpfs "$d" || { fail "namespace set-up: $d"; exit 1; }
    done
    # a user's shell: the defaults of make demo, tests/slurm/cluster and run-integration.sh apply
    unset NP_CLUSTER_DIR NP_CLUSTER_REST_PORT NP_CLUSTER_CTLD_PORT NP_CLUSTER_NODE_PORT NP_CLUSTER_KEEP \
        SLURM_CONF SLURMRESTD_URL SLURM_JWT SLURM_USER NEMOPERF_DEMO_STAGE
    C=/tmp/nemoperf-cluster D=/tmp/nemoperf-demo
    trap '"$cluster" down >/dev/null 2>&1' EXIT # the demo cluster this test started, in its namespace
    trap 'exit 130' INT TERM                     # (an interrupted test stops it too)
    X=$2
    (cd "$root" && NEMOPERF_DEMO_STEPS=5 make -s demo) >"$X/demo.out" 2>&1 &&
        [ -s "$D/sweep-llama3.1-8b-bf16.png" ] && "$cluster" status >/dev/null 2>&1 &&
        ok "make demo at its defaults: $C up, $(find "$D/experiments" -name nemoperf.json | wc -l) runs and the PNG in $D" ||
        { fail "make demo: $(tail -5 "$X/demo.out")"; exit 1; }
    # snap FILE: what must not change: every file of the demo's output folder and of its cluster folder but the
    # daemons' own logs, state and spool (written by the daemons as they run; the logs are checked apart: only
    # appended to), with their checksums; the daemons' pids (run/*.pid) are among them
    snap() {
        (cd "$C" && find . \( -path ./log -o -path ./state -o -path ./spool \) -prune -o -print | sort &&
            find . \( -path ./log -o -path ./state -o -path ./spool \) -prune -o -type f -print0 | sort -z | xargs -0 sha256sum &&
            cd "$D" && find . -print | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$1"
    }
    snap "$X/before"
    mkdir "$X/logs-before" && cp -p "$C"/log/* "$X/logs-before/"
    # what make check runs that could touch it, with default settings: the suite's cluster up and down
    # (run-integration.sh) and the test that runs make demo
    (cd "$root" && sh tests/run-integration.sh tests/e2e/50-first-hour.sh) >"$X/check.out" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && grep -q '^integration: 1 passed, 0 failed' $X/check.out &&
        ok "run-integration.sh 50-first-hour.sh with default settings: passed" ||
        fail "run-integration.sh 50-first-hour.sh (exit $rc): $(grep -v ': ok:' $X/check.out | tail -8)"
    snap "$X/after"
    cmp -s "$X/before" "$X/after" && ok "the demo's cluster and output folders: byte-identical ($(grep -c . "$X/before") entries)" ||
        fail "the demo's folders changed: $(diff "$X/before" "$X/after" | head -8)"
    grown=0
    for f in "$X"/logs-before/*; do
        n=$(wc -c <"$f")
        [ "$(head -c "$n" "$C/log/${f##*/}" 2>/dev/null | cmp - "$f" 2>&1)" = "" ] || { grown=1; fail "log ${f##*/} rewritten, not appended to"; }
    done
    [ "$grown" -eq 0 ] && ok "the demo cluster's logs: only appended to"
    for p in "$C"/run/*.pid; do
        kill -0 "$(cat "$p")" 2>/dev/null || fail "the demo's ${p##*/} ($(cat "$p")) is gone"
    done
    "$cluster" status >/dev/null 2>&1 && SLURM_CONF=$C/slurm.conf sinfo -h -o '%D %t' | grep -q '^4 idle$' &&
        ok "the demo cluster still answers (4 idle nodes), its daemons the same processes" ||
        fail "the demo cluster does not answer: $(SLURM_CONF=$C/slurm.conf sinfo 2>&1 | head -3)"
    finish "the demo at its defaults: left alone"
    exit 0
fi

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

# a demo at its defaults, then make check's cluster scripts and demo test with theirs (in a private namespace;
# the mount points of its folders are made here when missing, and removed after when still empty)
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
    made=
    for d in $DEFAULT_DIRS; do
        [ -e "$d" ] || { mkdir "$d" && made="$made $d"; }
    done
    X=$(mktemp -d "${TMPDIR:-/tmp}/np-$T.XXXXXX") || exit 1
    unshare --mount --net --propagation private sh "$here/02-own-cluster.sh" --inside "$X" ||
        fail "the demo at its defaults was touched (above)"
    rm -rf "$X"
    for d in $made; do rmdir "$d" 2>/dev/null; done
else
    echo "$T: skip: the demo at its defaults (needs root, unshare and ip for private folders and loopback)"
fi
finish
