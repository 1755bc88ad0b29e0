#!/bin/sh
# run.sh - `make bench`: time nemoperf-parse against the seed's grep, ripgrep and a tail-read floor.
#
# Generates (once; reused while its stamp matches) two synthetic trees of NeMo 2.0 logs with bench/gencorpus:
#   shape a: 300 runs x ~5 MB (~1.5 GB), shape b: 20 000 runs x ~50 KB (~1.4 GB on disk),
# warms the page cache, then times each command alternately BENCH_REPS times and prints median/min and ratios.
# Knobs: BENCH_DIR (bench/scratch)  BENCH_SHAPES (ab | a | b)  BENCH_SCALE (1; divides the run counts)
#        BENCH_REPS (5)  BENCH_SEED (1)  BENCH_JOBS (all cores; tailread threads)  CC (cc)  NP_PARSE (bin/nemoperf-parse)
set -eu

cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-bench/scratch}
BENCH_SHAPES=${BENCH_SHAPES:-ab}
BENCH_SCALE=${BENCH_SCALE:-1}
BENCH_REPS=${BENCH_REPS:-5}
BENCH_SEED=${BENCH_SEED:-1}
NP_PARSE=${NP_PARSE:-bin/nemoperf-parse}
CC=${CC:-cc}
STEPS=50

die() { echo "bench: $*" >&2; exit 2; }
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac; }
ispos() { isnum "$1" && [ "$1" -ge 1 ]; }

ispos "$BENCH_SCALE" || die "BENCH_SCALE must be a positive integer (got '$BENCH_SCALE')"
ispos "$BENCH_REPS" || die "BENCH_REPS must be a positive integer (got '$BENCH_REPS')"
isnum "$BENCH_SEED" || die "BENCH_SEED must be a non-negative integer (got '$BENCH_SEED')"
case $BENCH_SHAPES in a | b | ab | ba) ;; *) die "BENCH_SHAPES must be a, b or ab (got '$BENCH_SHAPES')" ;; esac
JOBS=${BENCH_JOBS:-$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
ispos "$JOBS" || die "BENCH_JOBS must be a positive integer (got '$JOBS')"
[ "$BENCH_REPS" -ge 5 ] || echo "bench: note: BENCH_REPS=$BENCH_REPS (< 5): quick run, medians are rough" >&2

mkdir -p "$BENCH_DIR/bin"
BIN=$BENCH_DIR/bin
LOG=$BENCH_DIR/last-run.txt

# ---- helpers: rebuilt when missing or older than their source
build() { # name extra-flags...
    _n=$1; shift
    if [ ! -x "$BIN/$_n" ] || [ -n "$(find "bench/$_n.c" -newer "$BIN/$_n")" ]; then
        echo "bench: cc bench/$_n.c -> $BIN/$_n" >&2
        "$CC" -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -o "$BIN/$_n" "bench/$_n.c" "$@"
    fi
}
build gencorpus
build tailread -pthread
build timeit
GEN=$BIN/gencorpus TR=$BIN/tailread TI=$BIN/timeit

# Output of every timed command goes to a pipe drained by timeit (like a terminal or `| less`), not to /dev/null:
# GNU grep detects a /dev/null stdout and stops at the first match of each file, which the seed's usage never does.
have_parse=1 have_rg=1
[ -x "$NP_PARSE" ] || have_parse=0
command -v rg >/dev/null 2>&1 || have_rg=0

out() { printf '%s\n' "$*" | tee -a "$LOG"; }
: >"$LOG"

median() { sort -g "$1" | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minof() { sort -g "$1" | head -n 1; }

# ---- corpus: one folder per shape, reused while its stamp matches
corpus() { # shape runs size -> sets EXP
    _dir=$BENCH_DIR/shape-$1
    _stamp="gencorpus $(cksum <bench/gencorpus.c | awk '{print $1}') runs=$2 size=$3 seed=$BENCH_SEED steps=$STEPS"
    EXP=$_dir/experiments
    if [ -f "$_dir/.stamp" ] && [ "$(cat "$_dir/.stamp")" = "$_stamp" ]; then
        echo "bench: reusing $_dir ($_stamp)" >&2
        return 0
    fi
    if [ -e "$_dir" ]; then
        [ -f "$_dir/.stamp" ] || die "$_dir exists but has no .stamp: not made by run.sh, remove it yourself"
        rm -rf "$_dir"
    fi
    _need=$(awk -v r="$2" -v s="$3" 'BEGIN { printf "%d", (r * (s * 1.1 + 20000)) / 1024 * 1.2 }')
    _free=$(df -Pk "$BENCH_DIR" | awk 'NR == 2 { print $4 }')
    [ "${_free:-0}" -ge "$_need" ] || die "not enough space in $BENCH_DIR for shape $1: need ${_need} KiB, have ${_free} KiB"
    mkdir -p "$_dir"
    echo "incomplete $_stamp" >"$_dir/.stamp"
    echo "bench: generating shape $1: $2 runs x $3 bytes into $_dir" >&2
    _t=$("$TI" "$GEN" --out "$_dir" --runs "$2" --size "$3" --seed "$BENCH_SEED" --steps "$STEPS" --jobs "$JOBS")
    # shellcheck disable=SC2086 # split "seconds status bytes lines"
    set -- $_t
    [ "$2" = 0 ] || die "gencorpus failed (exit $2)"
    sync
    _mb=$(du -sk "$_dir" | awk '{ print $1 / 1024 }')
    echo "bench: generated $_mb MiB (on disk) in $1 s" >&2
    echo "$_stamp" >"$_dir/.stamp"
}

# ---- one shape: warm, time alternately, table
KEYS="parse parse_all grep rg tailread tailread_p"
label() {
    case $1 in
    parse) echo "nemoperf-parse --format csv" ;;
    parse_all) echo "nemoperf-parse --all-steps --format csv" ;;
    grep) echo "grep -r --include '*.out' train_step_timing" ;;
    rg) echo "rg --no-config -uu -g '*.out' train_step_timing" ;;
    tailread) echo "tailread -j $JOBS (nftw walk, last 64 KiB)" ;;
    tailread_p) echo "tailread -p -j $JOBS (parallel walk)" ;;
    esac
}
enabled() {
    case $1 in
    parse | parse_all) [ "$have_parse" = 1 ] ;;
    rg) [ "$have_rg" = 1 ] ;;
    *) return 0 ;;
    esac
}
runkey() { # key [-l] -> "seconds status bytes lines"
    _k=$1; shift
    case $_k in
    parse) "$TI" -p "$@" "$NP_PARSE" --format csv "$EXP" ;;
    parse_all) "$TI" -p "$@" "$NP_PARSE" --all-steps --format csv "$EXP" ;;
    grep) "$TI" -p "$@" grep -r --include '*.out' train_step_timing "$EXP" ;;
    rg) "$TI" -p "$@" rg --no-config -uu -g '*.out' train_step_timing "$EXP" ;;
    tailread) "$TI" -p "$@" "$TR" -j "$JOBS" "$EXP" ;;
    tailread_p) "$TI" -p "$@" "$TR" -p -j "$JOBS" "$EXP" ;;
    esac
}

FAILED=0
bench_shape() { # shape runs size
    _s=$1 _runs=$2 _size=$3
    corpus "$_s" "$_runs" "$_size"
    _w=$BENCH_DIR/work-$_s
    rm -rf "$_w"
    mkdir -p "$_w"
    # warm the cache: read every file once (and count the bytes of the logs)
    _outb=$(find "$EXP" -type f -name '*.out' -exec cat {} + | wc -c)
    find "$EXP" -type f ! -name '*.out' -exec cat {} + >/dev/null
    _gb=$(awk -v b="$_outb" 'BEGIN { printf "%.2f", b / 1e9 }')
    out ""
    out "== shape $_s: $_runs runs x ~$_size bytes, $_gb GB of *.out, warm cache, $BENCH_REPS reps, median; $JOBS cores; dir $EXP"
    [ "$have_parse" = 1 ] || out "   note: $NP_PARSE not built yet: parse rows skipped"
    [ "$have_rg" = 1 ] || out "   note: rg (ripgrep) not found: rg row skipped (apt-get install ripgrep)"
    # one untimed run each: warms code pages and checks the outputs
    for _k in $KEYS; do
        enabled "$_k" || continue
        # shellcheck disable=SC2046 # split "seconds status bytes lines"
        set -- $(runkey "$_k" -l)
        [ -n "${2:-}" ] || set -- 0 127 0 0
        echo "$2" >"$_w/$_k.status"
        echo "$4" >"$_w/$_k.lines"
    done
    _r=1
    while [ "$_r" -le "$BENCH_REPS" ]; do
        for _k in $KEYS; do
            enabled "$_k" || continue
            # shellcheck disable=SC2046
            set -- $(runkey "$_k")
            [ -n "${2:-}" ] || set -- 0 127 0 0
            echo "$1" >>"$_w/$_k.times"
            [ "$2" = 0 ] || echo "$2" >"$_w/$_k.status"
        done
        _r=$((_r + 1))
    done
    for _k in $KEYS; do
        if enabled "$_k" && [ "$(cat "$_w/$_k.status")" = 0 ]; then
            median "$_w/$_k.times" >"$_w/$_k.med"
            minof "$_w/$_k.times" >"$_w/$_k.min"
        else
            echo nan >"$_w/$_k.med"
            echo nan >"$_w/$_k.min"
        fi
    done
    _g=$(cat "$_w/grep.med") _rg=$(cat "$_w/rg.med") _tr=$(cat "$_w/tailread.med")
    out "$(printf '%-48s %10s %10s %9s %9s %9s  %s' command 'median s' 'min s' grep/x rg/x x/tailrd 'output lines')"
    for _k in $KEYS; do
        if ! enabled "$_k"; then
            out "$(printf '%-48s %10s' "$(label "$_k")" skipped)"
            continue
        fi
        _st=$(cat "$_w/$_k.status")
        if [ "$_st" != 0 ]; then
            out "$(printf '%-48s %10s' "$(label "$_k")" "FAILED (exit $_st)")"
            FAILED=1
            continue
        fi
        out "$(awk -v l="$(label "$_k")" -v m="$(cat "$_w/$_k.med")" -v n="$(cat "$_w/$_k.min")" \
            -v g="$_g" -v r="$_rg" -v t="$_tr" -v lines="$(cat "$_w/$_k.lines")" '
            function ratio(a, b) { return (a == "nan" || b == "nan" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
            BEGIN { printf "%-48s %10.4f %10.4f %9s %9s %9s  %s\n", l, m, n, ratio(g, m), ratio(r, m), ratio(m, t), lines }')"
    done
    _want=$((_runs * STEPS))
    for _k in grep rg; do
        enabled "$_k" || continue
        _l=$(cat "$_w/$_k.lines")
        [ "$_l" = "$_want" ] || out "   warning: $_k printed $_l lines, expected $_want ($_runs runs x $STEPS steps)"
    done
    # summary and targets (issue: a: default >= 50x grep, >= 10x rg, all-steps <= grep; b: default >= 1.5x rg)
    out "$(awk -v s="$_s" -v runs="$_runs" -v gb="$_gb" -v p="$(cat "$_w/parse.med")" -v pa="$(cat "$_w/parse_all.med")" \
        -v g="$_g" -v r="$_rg" -v t="$_tr" -v tp="$(cat "$_w/tailread_p.med")" '
        function x(a, b) { return (a == "nan" || b == "nan" || b + 0 == 0) ? "?" : sprintf("%.1fx", a / b) }
        function ok(c) { return c ? "MET" : "MISSED" }
        function f(v) { return v == "nan" ? "-" : sprintf("%.3f", v) }
        BEGIN {
            line = sprintf("summary %s: %d runs, %s GB: grep %s s, rg %s s, tailread %s s (parallel walk %s s)", s, runs, gb, f(g), f(r), f(t), f(tp))
            if (p == "nan") { print line "; nemoperf-parse: not measured"; exit }
            line = line sprintf("; parse %.4f s = %s grep, %s rg, %s tailread", p, x(g, p), x(r, p), x(p, t))
            if (pa != "nan") line = line sprintf("; --all-steps %.3f s = %s grep, %s rg", pa, x(g, pa), x(r, pa))
            if (s == "a") {
                line = line sprintf(" | targets: default>=50x grep %s, >=10x rg %s", ok(g / p >= 50), (r == "nan") ? "?" : ok(r / p >= 10))
                if (pa != "nan") line = line sprintf(", all-steps<=grep %s", ok(pa <= g))
            } else {
                line = line sprintf(" | target: default>=1.5x rg %s", (r == "nan") ? "?" : ok(r / p >= 1.5))
            }
            print line
        }')"
}

out "nemoperf bench $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -sm), $JOBS cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown cpu)), $(grep --version | head -n 1), $(if [ "$have_rg" = 1 ]; then rg --version | head -n 1; else echo 'no rg'; fi)"
out "command: BENCH_SHAPES=$BENCH_SHAPES BENCH_SCALE=$BENCH_SCALE BENCH_REPS=$BENCH_REPS sh bench/run.sh"
case $BENCH_SHAPES in *a*) bench_shape a $((300 / BENCH_SCALE > 0 ? 300 / BENCH_SCALE : 1)) 5000000 ;; esac
case $BENCH_SHAPES in *b*) bench_shape b $((20000 / BENCH_SCALE > 0 ? 20000 / BENCH_SCALE : 1)) 50000 ;; esac
out ""
out "(results also in $LOG; timed output goes to a pipe drained by bench/timeit, not /dev/null)"
exit "$FAILED"
