#!/bin/sh
# store.sh - `make bench`: the results store: nemoperf-parse --store of 20,000 runs, and --history / --compare
# over 1,000,000 stored runs (SQLite).
#
# Generates (once; reused) 20,000 small NeMo 2.0 run folders with bench/gencorpus --lean, times
#   parse alone | parse --store into an empty store | the same tree stored again (nothing changes),
# then grows the store to 1,000,000 runs by copying those 20,000 rows 50 times inside SQLite (python3's sqlite3:
# new keys, times a day apart, two clusters) and times --history (every run, CSV; a line per configuration, --group;
# and one configuration, with change points) and --compare (two clusters; two date ranges).  Prints median/min seconds, peak memory and the
# median CPU seconds; each --history/--compare is followed by one SQL aggregation pass over the same selection
# (the sqlite3 CLI's GROUP BY of the configurations, averaging tokens/s/GPU) and the ratio of the two, by CPU time
# (the machine may be shared: wall time then measures the neighbours) and by wall time; each listing of runs also by
# the sqlite3 CLI printing the same columns of the same rows as CSV, the least any listing of them costs.
# Knobs: BENCH_DIR (bench/scratch)  BENCH_REPS (3)  BENCH_STORE_RUNS (20000)  BENCH_STORE_COPIES (50)
#        NP_PARSE (bin/nemoperf-parse)  CC (cc)
set -eu

cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-bench/scratch}
REPS=${BENCH_REPS:-3}
RUNS=${BENCH_STORE_RUNS:-20000}
COPIES=${BENCH_STORE_COPIES:-50}
NP_PARSE=${NP_PARSE:-bin/nemoperf-parse}
CC=${CC:-cc}
BIN=$BENCH_DIR/bin
mkdir -p "$BIN"
for t in gencorpus timeit; do
    [ -x "$BIN/$t" ] && [ -z "$(find "bench/$t.c" -newer "$BIN/$t")" ] ||
        "$CC" -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -o "$BIN/$t" "bench/$t.c"
done
corpus=$BENCH_DIR/store-corpus-$RUNS
if [ ! -f "$corpus/.done" ]; then
    rm -rf "$corpus"
    echo "bench/store: generating $RUNS runs in $corpus" >&2
    "$BIN/gencorpus" --out "$corpus" --runs "$RUNS" --size 3K --lean --seed 28 >/dev/null
    touch "$corpus/.done"
fi
db=$BENCH_DIR/store-bench.db
LOG=$BENCH_DIR/store-last-run.txt
: >"$LOG"

# time LABEL CMD...: REPS runs (a fresh store before each when LABEL starts with "fresh"); median and min
timed() {
    label=$1; shift
    ts=""
    cs=""
    rss=0
    i=0
    while [ $i -lt "$REPS" ]; do
        case $label in fresh*) rm -f "$db" "$db-wal" "$db-shm" ;; esac
        r=$("$BIN/timeit" "$@")
        s=${r%% *}
        st=$(echo "$r" | cut -d' ' -f2)
        m=$(echo "$r" | cut -d' ' -f5)
        cs="$cs $(echo "$r" | cut -d' ' -f6)"
        [ "$m" -gt "$rss" ] && rss=$m
        case $st in 0 | 1) ;; *) echo "bench/store: $label: exit $st" >&2 ;; esac
        ts="$ts $s"
        i=$((i + 1))
    done
    med=$(printf '%s\n' $ts | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    min=$(printf '%s\n' $ts | sort -n | head -1)
    cpu=$(printf '%s\n' $cs | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    printf '%-64s %9.3f %9.3f %8d MB %9.3f\n' "$label" "$med" "$min" $((rss / 1024)) "$cpu" | tee -a "$LOG"
}

# against SQL: `timed` of nemoperf, then vs SQL: the sqlite3 CLI's one aggregation pass over the same selection
vs_sql() {
    our_med=$med our_cpu=$cpu
    timed "  SQL: $1" sqlite3 "$db" "$2"
    awk -v a="$our_cpu" -v b="$cpu" -v c="$our_med" -v d="$med" 'BEGIN { printf "  %-62s %8.2fx CPU %6.2fx wall\n", "ratio to SQL (goal: within 1.5x)", a / b, c / d }' | tee -a "$LOG"
}
# a listing against the least any listing costs: the sqlite3 CLI printing the same columns of the same rows in the
# same order as CSV (no change points); after vs_sql, against nemoperf's figures of the `timed` before it
vs_cli_list() {
    timed "  SQL: the same rows, the listing's columns, sqlite3 -csv" sqlite3 -csv "$db" "$1"
    awk -v a="$our_cpu" -v b="$cpu" -v c="$our_med" -v d="$med" 'BEGIN { printf "  %-62s %8.2fx CPU %6.2fx wall\n", "ratio to the CLI printing the same rows", a / b, c / d }' | tee -a "$LOG"
}
listcols="ended, family, kind, config, cluster, job_id, container, container_tag, status, step_time_s, tokens_per_s_per_gpu, mfu_percent, busbw_gbs"

printf '%-64s %9s %9s %11s %9s\n' "bench/store ($REPS reps, $(nproc) cores)" "median s" "min s" "peak RSS" "CPU s" | tee -a "$LOG"
timed "parse $RUNS runs, CSV (no store)" "$NP_PARSE" --format csv "$corpus"
timed "fresh: parse --store $RUNS runs into an empty store" "$NP_PARSE" --format csv --store --db "$db" "$corpus"
timed "parse --store the same $RUNS runs again (unchanged)" "$NP_PARSE" --format csv --store --db "$db" "$corpus"

python3 - "$db" "$COPIES" <<'PY'
import sqlite3, sys
db, copies = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
cols = [r[1] for r in c.execute("PRAGMA table_info(runs)") if r[1] != "id"]
n = c.execute("SELECT count(*) FROM runs").fetchone()[0]
if n < 1000000:
    sel = []
    for col in cols:
        if col == "run_key": sel.append("run_key || '#' || k.k")
        elif col == "t": sel.append("coalesce(t, 0) + k.k * 86400")
        elif col == "cluster": sel.append("'c' || (k.k % 2)")
        elif col == "job_id": sel.append("job_id || '-' || k.k")
        else: sel.append(col)
    c.execute("UPDATE runs SET cluster = 'c0'")
    q = ("WITH RECURSIVE k(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM k WHERE k < %d) "
         "INSERT INTO runs (%s) SELECT %s FROM runs, k" % (copies - 1, ", ".join(cols), ", ".join(sel)))
    c.execute(q)
    c.commit()
print("bench/store: %d runs stored" % c.execute("SELECT count(*) FROM runs").fetchone()[0], file=sys.stderr)
PY
cfg=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT config FROM runs GROUP BY config ORDER BY count(*) DESC LIMIT 1").fetchone()[0])' "$db")
d0=$(python3 -c 'import sqlite3,sys,time; t=sqlite3.connect(sys.argv[1]).execute("SELECT min(t), max(t) FROM runs").fetchone(); print(time.strftime("%Y-%m-%d", time.gmtime(t[0])), time.strftime("%Y-%m-%d", time.gmtime((t[0]+t[1])//2)), time.strftime("%Y-%m-%d", time.gmtime(t[1])))' "$db")
total=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])' "$db")
set -- $d0
t1=$(python3 -c 'import calendar,time,sys; print(calendar.timegm(time.strptime(sys.argv[1], "%Y-%m-%d")))' "$1")
t2=$(python3 -c 'import calendar,time,sys; print(calendar.timegm(time.strptime(sys.argv[1], "%Y-%m-%d")))' "$2")
t3=$(python3 -c 'import calendar,time,sys; print(calendar.timegm(time.strptime(sys.argv[1], "%Y-%m-%d")) + 86400)' "$3")
q="'$(printf '%s' "$cfg" | sed "s/'/''/g")'"
timed "--history, all $total runs, CSV (change points)" "$NP_PARSE" --history --db "$db" --format csv
vs_sql "GROUP BY config, all runs" "SELECT config, count(*), avg(tokens_per_s_per_gpu) FROM runs GROUP BY config"
vs_cli_list "SELECT $listcols FROM runs ORDER BY t, id"
timed "--history --group, all $total runs, CSV (a line per configuration)" "$NP_PARSE" --history --group --db "$db" --format csv
vs_sql "GROUP BY config, all runs" "SELECT config, count(*), avg(tokens_per_s_per_gpu) FROM runs GROUP BY config"
timed "--history config='$cfg'" "$NP_PARSE" --history --db "$db" --format csv "config=$cfg"
vs_sql "GROUP BY config WHERE config = that" "SELECT config, count(*), avg(tokens_per_s_per_gpu) FROM runs WHERE config = $q GROUP BY config"
vs_cli_list "SELECT $listcols FROM runs WHERE config = $q ORDER BY t, id"
timed "--compare db:cluster=c0 db:cluster=c1 ($((total / 2)) a side)" "$NP_PARSE" --compare --db "$db" db:cluster=c0 db:cluster=c1
vs_sql "GROUP BY config, cluster WHERE cluster IN (c0, c1)" "SELECT config, cluster, count(*), avg(tokens_per_s_per_gpu) FROM runs WHERE cluster IN ('c0', 'c1') GROUP BY config, cluster"
timed "--compare db:since=$1,until=$2 db:since=$2,until=$3" "$NP_PARSE" --compare --db "$db" "db:since=$1,until=$2" "db:since=$2,until=$3"
vs_sql "GROUP BY config, t >= $2 WHERE $1 <= t < $3" "SELECT config, t >= $t2, count(*), avg(tokens_per_s_per_gpu) FROM runs WHERE t >= $t1 AND t < $t3 GROUP BY 1, 2"
echo "bench/store: figures in $LOG; the store is $(du -h "$db" | cut -f1)" >&2
