#!/bin/sh
# 66-nccl-tests-store.sh - fabric checks in the results store: the steps of RECIPE=nccl-tests runs are stored as
# runs of kind nccl-tests (one record per step, idempotent), listed by --history kind=nccl-tests with their
# configuration (the step at its scale), and --compare of two sets of four repeats judges each step by its peak bus
# bandwidth with the noise-aware verdict: node n3 10 % slower in the second set is SLOWER (exit 1), the steps that
# did not change are not.  Stand-in: the run folders are written by tests/data/nccl-tests-runs/gen.py in nccl-tests'
# own output format (no GPU here), each repeat's figures moved by a few per mille.
set -u
P=${NP_BIN:-bin}/nemoperf-parse
T=$(mktemp -d "${TMPDIR:-/tmp}/np-ncclstore.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "66-nccl-tests-store: ok: $*"; }
bad() { echo "66-nccl-tests-store: FAIL: $*"; fail=$((fail + 1)); }
G=tests/data/nccl-tests-runs/gen.py
for i in 1 2 3 4; do
    python3 "$G" "$T/base/r$i" "50$i" 360 && python3 "$G" "$T/cand/r$i" "60$i" 324 || bad "gen.py"
done
DB=$T/results.db
"$P" --store --db "$DB" "$T/base" >"$T/o" 2>"$T/err"
"$P" --store --db "$DB" "$T/cand" >>"$T/o" 2>>"$T/err"; rc=$?
n=$(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE kind = 'nccl-tests' AND busbw_gbs > 0" 2>/dev/null ||
    python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs WHERE kind = '"'"'nccl-tests'"'"' AND busbw_gbs > 0").fetchone()[0])' "$DB")
[ "$n" = 48 ] && ok "--store: 48 steps (8 runs x 6 steps) stored as kind nccl-tests with their peak busbw" ||
    bad "--store: $n records: $(cat "$T/o" "$T/err" | tail -5)"
"$P" --store --db "$DB" "$T/base" >"$T/o2" 2>&1
grep -q 'stored 0 runs\|0 added\|24 unchanged\|nothing new' "$T/o2" || [ "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])' "$DB")" = 48 ] &&
    ok "--store again: still 48 records (a step is keyed by its run folder and its name)" || bad "--store twice: $(cat "$T/o2")"
"$P" --history --db "$DB" kind=nccl-tests >"$T/h" 2>"$T/err"; rc=$?
c=$(grep -c 'nccl-tests all_reduce_perf-n3 h100x8' "$T/h")
[ "$rc" -eq 0 ] && [ "$c" -eq 8 ] && ok "--history kind=nccl-tests: each step a configuration (n3's 8 runs listed)" ||
    bad "--history: exit $rc, $c rows of n3: $(head -5 "$T/h") $(cat "$T/err")"
# each row shows its peak bus bandwidth (BUSBW_GB/S), the metric its change points and --compare use
"$P" --history --db "$DB" --format csv kind=nccl-tests >"$T/hc" 2>"$T/err"
python3 - "$T/hc" >"$T/py" 2>&1 <<'PY' && ok "--history: every nccl-tests row has its peak busbw (CSV busbw_gbs), no tokens/s" || bad "--history busbw: $(tail -3 "$T/py")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if not float(r["busbw_gbs"] or 0) > 0 or r["steady_tokens_per_s_per_gpu"] not in ("", "n/a")]
assert len(rows) == 48 and not bad, (len(rows), bad[:2])
PY
head -1 "$T/h" | grep -q 'BUSBW_GB/S' && ok "--history table: a BUSBW_GB/S column" || bad "--history table header: $(head -1 "$T/h")"
"$P" --compare "$T/base" "$T/cand" >"$T/c" 2>"$T/err"; rc=$?
grep 'all_reduce_perf-n3 ' "$T/c" | grep -q 'SLOWER' && [ "$rc" -eq 1 ] &&
    ! grep 'all_reduce_perf-n1 \|all_reduce_perf-n1-n2 ' "$T/c" | grep -q 'SLOWER\|FASTER' &&
    ok "--compare: n3 10 % slower is SLOWER (exit 1), the unchanged steps are not" ||
    bad "--compare: exit $rc: $(cat "$T/c" "$T/err")"
"$P" --compare "$T/base" "$T/cand" --format json >"$T/c.json" 2>/dev/null
python3 - "$T/c.json" <<'PY' && ok "--compare JSON: the n3 step's ratio is its busbw's (-10 %)" || bad "--compare JSON: $(head -c 800 "$T/c.json")"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["configurations"] if "configurations" in d else d.get("comparisons", d.get("results", []))
n3 = [r for r in rows if "all_reduce_perf-n3 " in (r.get("configuration") or r.get("config") or "")]
assert n3, rows[:2]
r = n3[0]
assert r["verdict"] == "SLOWER", r
diff = r.get("diff_pct", r.get("change_pct"))
assert diff is not None and -11 < diff < -9, r
PY
[ $fail -eq 0 ] && echo "66-nccl-tests-store: all checks passed"
[ $fail -eq 0 ]
