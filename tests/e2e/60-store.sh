#!/bin/sh
# 60-store.sh - the results store as a user runs it: nemoperf-parse --store, --history, --compare on
# generated runs of known distributions (NeMo 2.0 logs written here: no GPU on this machine), on a SQLite
# file and on a real PostgreSQL server this script starts (tests/store/pgserver: Debian's postgresql, its
# own folder and port NP_PG_PORT, default 55430) and stops.  Stand-ins: NEMOPERF_TEST_FS_MAGIC for a network
# file system (none exists here); a 192 KiB tmpfs in a private mount namespace for a full disk (root only).
set -u
P=${NP_BIN:-bin}/nemoperf-parse
CS=${NP_TESTS:-build/tests}/check_store
T=$(mktemp -d "${TMPDIR:-/tmp}/np-store.XXXXXX")
# the server runs as "nobody" when this runs as root: its folder must be reachable, so it lives in /tmp
PG=$(mktemp -d /tmp/np-pg.XXXXXX) && chmod 755 "$PG"
trap 'tests/store/pgserver down "$PG" >/dev/null 2>&1; rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# gen ROOT N STEP_S NOISE SEED [DATE]: N runs of llama3.1 8b bf16 on 8 GPUs, 50 steps each, step times
# STEP_S * (1 + NOISE * normal), one folder per run; the logs dated DATE + run index days
gen() {
    python3 - "$@" <<'PY'
import os, random, sys, time, calendar
root, n, step, noise, seed = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
day = calendar.timegm(time.strptime(sys.argv[6], "%Y-%m-%d")) if len(sys.argv) > 6 else None
rnd = random.Random(seed)
exp = "pretrain_llama3.1_8b_bf16_8"
for k in range(n):
    d = os.path.join(root, exp, "%s_%d" % (exp, 1744400000 + seed * 1000 + k), exp)
    os.makedirs(d, exist_ok=True)
    f = os.path.join(d, "log-%s_%d_0.out" % (exp, 5000 + seed * 100 + k))
    with open(f, "w") as o:
        for i in range(50):
            t = step * (1 + noise * rnd.gauss(0, 1))
            o.write("Training epoch 0, iteration %d/49 | lr: 1e-05 | global_batch_size: 128 | global_step: %d | "
                    "peak_memory_usage: 70833405952 | memory_allocated: 1 | reduced_train_loss: 11.9 | "
                    "train_step_timing in s: %.4f | consumed_samples: %d\n" % (i, i, t, (i + 1) * 128))
    if day is not None:
        os.utime(f, (day + k * 86400, day + k * 86400))
PY
}

gen "$T/base" 4 12.0 0.005 1 2026-11-01
gen "$T/same" 4 12.0 0.005 2 2026-11-05
gen "$T/slow" 4 12.371 0.005 3 2026-11-09 # 3 % less throughput: 12.0 / 0.97

suite() { # LOC NAME: the CLI cases on one store
    db=$1; name=$2
    "$P" --store --db "$db" --cluster old "$T/base" >/dev/null 2>"$T/err"; rc=$?
    [ $rc -eq 0 ] && grep -q 'stored 4 runs (4 added, 0 updated, 0 unchanged)' "$T/err" &&
        ok "$name: --store 4 runs" || bad "$name: --store exit $rc: $(cat "$T/err")"
    "$P" --store --db "$db" --cluster old "$T/base" >/dev/null 2>"$T/err"
    grep -q 'stored 4 runs (0 added, 0 updated, 4 unchanged)' "$T/err" && ok "$name: the same tree again adds nothing" ||
        bad "$name: second store: $(cat "$T/err")"
    n=$("$P" --history --db "$db" --format csv | tail -n +2 | wc -l)
    [ "$n" -eq 4 ] && ok "$name: --history lists 4 runs" || bad "$name: --history lists $n"
    # a run that changed (a longer log: more steps) is updated, not added
    f=$(find "$T/base" -name '*.out' | sort | head -1)
    cp "$f" "$T/keep.out"
    sed -n '1,5p' "$f" | sed 's/iteration \([0-9]*\)\/49/iteration 5\1\/99/; s/global_step: \([0-9]*\)/global_step: 5\1/' >>"$f"
    "$P" --store --db "$db" --cluster old "$T/base" >/dev/null 2>"$T/err"
    grep -q '(0 added, 1 updated, 3 unchanged)' "$T/err" && ok "$name: a changed run is updated" ||
        bad "$name: changed run: $(cat "$T/err")"
    cp "$T/keep.out" "$f"
    touch -d 2026-11-01 "$f"
    "$P" --store --db "$db" --cluster old "$T/base" >/dev/null 2>&1
    "$P" --store --db "$db" --cluster new "$T/slow" >/dev/null 2>&1
    "$P" --store --db "$db" --cluster same "$T/same" >/dev/null 2>&1
    "$P" --compare --db "$db" db:cluster=old db:cluster=new >"$T/out" 2>"$T/err"; rc=$?
    [ $rc -eq 1 ] && grep -q 'SLOWER' "$T/out" && ok "$name: --compare db:cluster=old db:cluster=new: SLOWER, exit 1" ||
        bad "$name: --compare db: exit $rc: $(cat "$T/out" "$T/err")"
    "$P" --compare --db "$db" db:cluster=old db:cluster=same >"$T/out" 2>"$T/err"; rc=$?
    [ $rc -eq 0 ] && grep -q '^llama3.1 8b' "$T/out" && ! grep -Eq ' (SLOWER|FASTER)$' "$T/out" && ok "$name: same distribution: no FASTER/SLOWER, exit 0" ||
        bad "$name: --compare same: exit $rc: $(cat "$T/out" "$T/err")"
    "$P" --history --db "$db" --format json >"$T/h.json" &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["runs"]; assert len(r)==12, len(r); assert d["change_points"]==1, d; assert r[8]["change"].startswith("SLOWER"), r[8]' "$T/h.json" &&
        ok "$name: --history: 12 runs, one change point at the first slow run" || bad "$name: --history json: $(cat "$T/h.json")"
    # --group: the same change point on a line for the configuration, with the newest run's figures
    "$P" --history --group --db "$db" --format json >"$T/g.json" &&
        python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["runs"]; d=json.load(open(sys.argv[2])); c=d["configurations"]; assert len(c)==1 and d["runs"]==12 and d["change_points"]==1, d; c=c[0]; assert c["runs"]==12 and c["change_points"]==1 and c["newest_change"]["text"]==h[8]["change"] and c["newest_change"]["at"]==h[8]["ended"][:10], c; assert c["newest"]==h[-1]["ended"] and c["first"]==h[0]["ended"] and abs(c["newest_steady_tokens_per_s_per_gpu"]-h[-1]["steady_tokens_per_s_per_gpu"])<0.05, c' "$T/h.json" "$T/g.json" &&
        ok "$name: --history --group: one line, the change point of the listing, the figures of the newest run" || bad "$name: --history --group: $(cat "$T/g.json")"
}

# ---- SQLite ----
suite "$T/results.db" sqlite

# --compare of folders: the verdict per configuration in JSON, exit 1 when SLOWER
"$P" --compare --format json "$T/base" "$T/slow" >"$T/cmp.json" 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["configurations"]; assert len(c)==1 and c[0]["verdict"]=="SLOWER" and c[0]["method"]=="welch-runs" and -3.6<c[0]["change_pct"]<-2.4, c' "$T/cmp.json" &&
    ok "--compare folders --format json: verdict SLOWER, exit 1" || bad "--compare json: exit $rc: $(cat "$T/cmp.json" "$T/err")"
# one run against one run: batch means over the window's steps
b1=$(find "$T/base" -name '*.out' | sort | head -1); s1=$(find "$T/slow" -name '*.out' | sort | head -1)
"$P" --compare "${b1%/*}" "${s1%/*}" >"$T/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'batch-means' "$T/out" && grep -q SLOWER "$T/out" && ok "one run vs one run: batch-means, SLOWER" ||
    bad "one vs one: exit $rc: $(cat "$T/out")"
"$P" --compare "$T/base" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'expected BASELINE CANDIDATE' "$T/err" && ok "--compare with one side: exit 2" || bad "--compare usage: $rc"
"$P" --history --db "$T/results.db" colour=red >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "'colour' is not a key" "$T/err" && ok "bad selector: exit 2 naming it" || bad "bad selector: $rc $(cat "$T/err")"
"$P" --history --db "$T/results.db" --plot "$T/h.png" >/dev/null 2>&1 && [ -s "$T/h.png" ] &&
    head -c 8 "$T/h.png" | od -An -c | grep -q 'P   N   G' && ok "--history --plot writes a PNG" || bad "--history --plot"

# a network file system is refused (stand-in: statfs's answer injected; no NFS/Lustre here)
NEMOPERF_TEST_FS_MAGIC=6969 "$P" --store --db "$T/nfs.db" "$T/base" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'NFS (a network file system) is refused' "$T/err" && grep -q 'PostgreSQL' "$T/err" &&
    [ ! -e "$T/nfs.db" ] && ok "SQLite on NFS refused (exit 2, points to PostgreSQL)" || bad "NFS: exit $rc: $(cat "$T/err")"
NEMOPERF_TEST_FS_MAGIC=0BD00BD0 "$P" --history --db "$T/results.db" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'Lustre' "$T/err" && ok "SQLite on Lustre refused" || bad "Lustre: exit $rc"
# a corrupt file, a newer schema
head -c 8192 /dev/urandom >"$T/bad.db"
"$P" --history --db "$T/bad.db" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'not a database' "$T/err" && ok "corrupt store: exit 1, said" || bad "corrupt: exit $rc: $(cat "$T/err")"
cp "$T/results.db" "$T/newer.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE nemoperf_meta SET value=\"7\""); c.commit()' "$T/newer.db"
"$P" --store --db "$T/newer.db" "$T/base" >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'schema version 7, newer than this nemoperf' "$T/err" && ok "newer schema: exit 2, said" ||
    bad "newer schema: exit $rc: $(cat "$T/err")"
# a full disk: the store is left as it was (root: a tmpfs in a private mount namespace)
if [ "$(id -u)" = 0 ] && unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$T'" 2>/dev/null; then
    mkdir -p "$T/full"
    gen "$T/many" 300 12.0 0.005 9
    unshare -m sh -c "mount -t tmpfs -o size=192k tmpfs '$T/full' &&
        '$P' --store --db '$T/full/r.db' '$T/base' >/dev/null 2>&1 &&
        '$P' --store --db '$T/full/r.db' '$T/many' >/dev/null 2>'$T/err'; echo \$? >'$T/rc';
        '$P' --history --db '$T/full/r.db' --format csv 2>&1 | tail -n +2 | wc -l >'$T/n'"
    rc=$(cat "$T/rc" 2>/dev/null)
    [ "$rc" = 1 ] && grep -q 'disk is full' "$T/err" && grep -q 'nothing stored' "$T/err" && [ "$(cat "$T/n")" = 4 ] &&
        ok "full disk: exit 1, said, the 4 runs stored before are intact" || bad "full disk: rc=$rc n=$(cat "$T/n" 2>/dev/null): $(cat "$T/err")"
else
    echo "skip: full disk (needs root and a private mount namespace for a small tmpfs)"
fi

# ---- PostgreSQL: a real server of its own ----
port=${NP_PG_PORT:-55430}
uri=$(tests/store/pgserver up "$PG" "$port" 2>"$T/pgerr"); prc=$?
if [ $prc -eq 77 ]; then
    echo "skip: PostgreSQL cases: $(cat "$T/pgerr")"
elif [ $prc -ne 0 ]; then
    bad "PostgreSQL server did not start: $(cat "$T/pgerr")"
else
    pw=$(cat "$PG/pw")
    # the CLI suite against it (a fresh database: the CLI makes the schema), then check_store's cases
    exec 3>&1
    suite "$uri" postgresql 2>&1 | tee "$T/pgout" >&3
    grep -q FAIL "$T/pgout" && fail=$((fail + 1))
    NP_TEST_PG_URI=$uri CK_RUN_CASE=postgresql "$CS" >"$T/cs" 2>&1 && grep -q '100%: Checks: [0-9]*, Failures: 0, Errors: 0' "$T/cs" &&
        ok "check_store's PostgreSQL cases on a real server" || bad "check_store on PostgreSQL: $(cat "$T/cs")"
    bad_uri="postgresql://nemoperf:NotTheRightOne42@127.0.0.1:$port/nemoperf"
    "$P" --history --db "$bad_uri" >"$T/out" 2>"$T/err"; rc=$?
    [ $rc -eq 1 ] && grep -q 'password authentication failed' "$T/err" && ! grep -q NotTheRightOne42 "$T/out" "$T/err" &&
        ok "PostgreSQL: a wrong password is said, never printed" || bad "wrong password: exit $rc: $(cat "$T/err")"
    grep -rq "$pw" "$T/out" "$T/err" "$T/pgout" && bad "the password appeared in an output" || ok "the password never printed"
    tests/store/pgserver down "$PG"
    [ -d "$PG" ] && bad "pgserver down left $PG" || ok "PostgreSQL server stopped and removed"
fi
[ $fail -eq 0 ] && echo "60-store: all passed" || echo "60-store: $fail failed"
[ $fail -eq 0 ]
