#!/bin/sh
# 22-parse-scale.sh - nemoperf-parse streams: memory does not grow with the number of runs, every format.
# Trees of 3 000 and 15 000 small runs (bench/gencorpus --lean: experiments/<exp>/<exp>_<ts>/log-...out) are
# parsed in table, CSV, JSON and markdown; bench/timeit gives each run's peak RSS (wait4).  Checked: every run is
# reported once, in depth-first order, the JSON is one valid document, markdown accounts for every run (columns,
# "N runs at G GPUs" repeats naming the last run of each column, the list of runs in no table), and the peak RSS
# of the large tree is within a few MiB of the small one's (an in-memory report grows by ~10 MB per 15 000 runs in
# JSON, ~60 MB in markdown before it streamed) and under 64 MiB.  Markdown's temporary file (the list of runs in no
# table, in $TMPDIR): an unusable TMPDIR, and a temporary file that cannot grow (RLIMIT_FSIZE with SIGXFSZ ignored:
# the stand-in for a full disk, which needs a mount), each exit 1 naming the folder with nothing on stdout.
# Under ASan (make sanitize) the RSS checks are skipped: its quarantine keeps freed memory on purpose.
set -u
here=$(pwd)
P="$here/${NP_BIN:-bin}/nemoperf-parse"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

cc -O2 -std=c11 -D_GNU_SOURCE -o "$tmp/gencorpus" bench/gencorpus.c &&
    cc -O2 -std=c11 -D_GNU_SOURCE -o "$tmp/timeit" bench/timeit.c || { echo "FAIL: building bench helpers"; exit 1; }

for n in 3000 15000; do
    "$tmp/gencorpus" --out "$tmp/t$n" --runs "$n" --size 3000 --steps 10 --lean --jobs 2 ||
        { echo "FAIL: gencorpus $n"; exit 1; }
done

rss() { # n format -> peak KiB; output in $tmp/out.<n>.<format>
    # shellcheck disable=SC2046 # "seconds status bytes lines maxrss"
    set -- "$1" "$2" $("$tmp/timeit" -o "$tmp/out.$1.$2" "$P" --no-progress --format "$2" "$tmp/t$1/experiments")
    [ "$4" = 0 ] || bad "$2, $1 runs: exit $4"
    echo "$7"
}

for f in table csv json markdown; do
    small=$(rss 3000 "$f")
    big=$(rss 15000 "$f")
    echo "   $f: peak RSS $small KiB for 3000 runs, $big KiB for 15000 runs"
    if [ -n "${ASAN_OPTIONS:-}" ]; then
        ok "$f: RSS not checked under ASan"
    elif [ "$big" -le $((small + 6144)) ] && [ "$big" -le 65536 ]; then
        ok "$f: peak memory does not grow with the number of runs"
    else
        bad "$f: peak RSS $big KiB for 15000 runs vs $small KiB for 3000"
    fi
done

# every run once, in depth-first order ('/' before any other byte), whatever the thread count
python3 - "$tmp" <<'EOF' || fail=$((fail + 1))
import csv, functools, json, sys
tmp = sys.argv[1]
def walk_cmp(a, b):
    """nemoperf's walk order: '/' before any other byte, digit runs compared as numbers
    (equal numbers: fewer leading zeros first)."""
    i = j = 0
    tie = 0
    while True:
        ca = a[i] if i < len(a) else ""
        cb = b[j] if j < len(b) else ""
        if ca.isdigit() and cb.isdigit():
            ea, eb = i, j
            while ea < len(a) and a[ea].isdigit():
                ea += 1
            while eb < len(b) and b[eb].isdigit():
                eb += 1
            da, db = a[i:ea].lstrip("0"), b[j:eb].lstrip("0")
            if len(da) != len(db):
                return -1 if len(da) < len(db) else 1
            if da != db:
                return -1 if da < db else 1
            if not tie and (ea - i) != (eb - j):
                tie = -1 if (ea - i) < (eb - j) else 1
            i, j = ea, eb
            continue
        if ca == cb:
            if ca == "":
                return tie
            i += 1
            j += 1
            continue
        ka = 0 if ca == "" else 1 if ca == "/" else ord(ca) + 1
        kb = 0 if cb == "" else 1 if cb == "/" else ord(cb) + 1
        return -1 if ka < kb else 1
rows = list(csv.DictReader(open(f"{tmp}/out.15000.csv")))
paths = [r["path"] for r in rows]
ok = True
def check(cond, what):
    global ok
    print(("ok: " if cond else "FAIL: ") + what)
    ok = ok and cond
check(len(paths) == 15000 and len(set(paths)) == 15000, f"csv: 15000 distinct runs ({len(paths)} rows)")
check(paths == sorted(paths, key=functools.cmp_to_key(walk_cmp)), "csv: rows in depth-first order")
check(all(r["status"] == "ok" for r in rows), "csv: every run ok")
doc = json.load(open(f"{tmp}/out.15000.json"))
check(len(doc["runs"]) == 15000 and doc["errors"] == [], "json: one document, 15000 runs, no errors")
check([r["path"] for r in doc["runs"]] == paths, "json: the same runs in the same order as csv")
table = open(f"{tmp}/out.15000.table").read().splitlines()
check(table[0].startswith("EXPERIMENT") and sum(l.startswith("pretrain_") for l in table) == 15000,
      "table: header and 15000 rows")
# markdown: one column per configuration, the repeats said below the table with the last run (walk order)
import re
md = open(f"{tmp}/out.15000.markdown").read().splitlines()
cols = sum(len(re.findall(r"\| \d+x \S+ GPUs", l)) for l in md if l.endswith("GPUs |"))
reps = [re.match(r"(\d+) runs at (\d+) GPUs: the table shows the last \(job (\d+)\)", l) for l in md]
reps = [m for m in reps if m]
listed = sum(l.startswith("- `") for l in md)
check(cols > 10 and cols - len(reps) + sum(int(m[1]) for m in reps) + listed == 15000,
      f"markdown: {cols} columns, {len(reps)} with repeats, {listed} listed: 15000 runs accounted for")
key = lambda r: (r["recipe"], r["model_size"], r["dtype"], r["gpu_type"], r["gpus"])
last, count = {}, {}
for r in rows:
    last[key(r)] = r["job_id"]
    count[key(r)] = count.get(key(r), 0) + 1
byjob = {r["job_id"]: r for r in rows}
good = all(m[3] in byjob and byjob[m[3]]["gpus"] == m[2] and last[key(byjob[m[3]])] == m[3] and
           count[key(byjob[m[3]])] == int(m[1]) for m in reps)
check(len(reps) > 0 and good, "markdown: each repeat names the last run of its configuration and their number")
sys.exit(0 if ok else 1)
EOF

# the temporary files: made at the start in $TMPDIR; a failure exits 1, names the folder, prints nothing
i=0
while [ $i -lt 40 ]; do # a folder each (the logs of one folder are the restarts of one run)
    mkdir -p "$tmp/bad/experiments/x$i" && echo "no step line here" >"$tmp/bad/experiments/x$i/log-unknown_0.out"
    i=$((i + 1))
done
for f in markdown table csv json; do # every streamed format makes its temporary file in TMPDIR at the start
    TMPDIR=$tmp/missing "$P" --no-progress -f $f "$tmp/bad" >"$tmp/md.out" 2>"$tmp/md.err"
    rc=$?
    [ "$rc" = 1 ] && [ ! -s "$tmp/md.out" ] && grep -q "cannot create a temporary file in $tmp/missing" "$tmp/md.err" &&
        ok "$f: an unusable TMPDIR is said, exit 1, nothing on stdout" ||
        bad "$f: TMPDIR missing: exit $rc, $(wc -c <"$tmp/md.out") bytes out, $(cat "$tmp/md.err")"
done
"$P" --no-progress -f markdown "$tmp/bad" >"$tmp/md.out" 2>/dev/null
[ "$(grep -c '^- `' "$tmp/md.out")" = 40 ] || bad "markdown: 40 runs in no table expected in the list"
# RLIMIT_FSIZE of 1 block (512 B in dash, 1 KiB in bash), stdout a pipe (no limit there): the list (~3 KB) cannot be written to the temporary file
(trap '' XFSZ; ulimit -f 1; TMPDIR=$tmp exec "$P" --no-progress -f markdown "$tmp/bad" 2>"$tmp/md.err"; ) | cat >"$tmp/md.out"
[ ! -s "$tmp/md.out" ] && grep -q "cannot use a temporary file of the report in $tmp: File too large" "$tmp/md.err" &&
    ok "markdown: a temporary file that cannot be written is said, nothing on stdout" ||
    bad "markdown: full temporary file: $(wc -c <"$tmp/md.out") bytes out, $(cat "$tmp/md.err")"

echo "22-parse-scale: $fail failed"
[ "$fail" -eq 0 ]
