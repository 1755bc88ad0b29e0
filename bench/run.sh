#!/bin/sh
# run.sh - `make bench`: time nemoperf-parse against the seed's grep, ripgrep and a tail-read floor.
#
# Generates (once; reused while its stamp matches) three synthetic trees of NeMo 2.0 logs with bench/gencorpus:
#   shape a: 300 runs x ~5 MB (~1.5 GB), shape b: 20 000 runs x ~50 KB, each run in its own three-level folder
#   (experiments/<exp>/<exp>_<ts>/<exp>/log-...out, ~1.4 GB on disk), shape c: 1 000 000 runs of small logs
#   (~2.8 KB, experiments/<exp>/<exp>_<ts>/log-...out, ~8 GB on disk: the archive of a benchmarking team),
# warms the page cache, then times each command alternately BENCH_REPS times and prints median/min, ratios and
# the peak resident memory (max over the reps) of each command.  tailread rows are floors: reading alone, no
# parsing (tailread_l: only the logs, their last 32 KiB, about what the default window's 40 steps need).
# On a and b, `--window 10 --format csv` shows the cost of a 10-step window (the target of b was set with one)
# beside the default NVIDIA window (iterations 11-44 of 50: 40 step lines a log).
# Shape n (issue 29): one ~1 GB NCCL trace log (NCCL_DEBUG=INFO collective lines of 64 ranks on 8 nodes, 2.21 layout,
#   with NeMo step lines), `nemoperf-parse --nccl --format json` against `grep -c 'NCCL INFO'` and rg -c on it,
#   peak memory beside (the reader's memory is bounded whatever the log's size); with NP_PARSE_B, that build's
#   --nccl too, in the same reps.
# Knobs: BENCH_DIR (bench/scratch)  BENCH_SHAPES (abcn, any of a b c n)  BENCH_SCALE (1; divides the run counts)
#        BENCH_REPS (5)  BENCH_SEED (1)  BENCH_JOBS (all cores; tailread threads)  CC (cc)  NP_PARSE (bin/nemoperf-parse)
#        NP_PARSE_B (unset): another build's nemoperf-parse, timed alternately with NP_PARSE in the same reps
#        (table and csv), its ratio printed: "is this change within noise of before?" in one run
set -eu

cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-bench/scratch}
BENCH_SHAPES=${BENCH_SHAPES:-abcn}
BENCH_SCALE=${BENCH_SCALE:-1}
BENCH_REPS=${BENCH_REPS:-5}
BENCH_SEED=${BENCH_SEED:-1}
NP_PARSE=${NP_PARSE:-bin/nemoperf-parse}
NP_PARSE_B=${NP_PARSE_B:-}
CC=${CC:-cc}
STEPS=50

die() { echo "bench: $*" >&2; exit 2; }
isnum() { case $1 in '' | *[!0-9]*) return 1 ;; *) return 0 ;; esac; }
ispos() { isnum "$1" && [ "$1" -ge 1 ]; }

ispos "$BENCH_SCALE" || die "BENCH_SCALE must be a positive integer (got '$BENCH_SCALE')"
ispos "$BENCH_REPS" || die "BENCH_REPS must be a positive integer (got '$BENCH_REPS')"
isnum "$BENCH_SEED" || die "BENCH_SEED must be a non-negative integer (got '$BENCH_SEED')"
case $BENCH_SHAPES in '' | *[!abcn]*) die "BENCH_SHAPES must be letters among a, b, c, n (got '$BENCH_SHAPES')" ;; esac
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
corpus() { # shape runs size [gencorpus flags] -> sets EXP
    _dir=$BENCH_DIR/shape-$1
    _steps=$STEPS _flags=
    if [ "$1" = c ]; then _steps=10 _flags=--lean; fi
    _stamp="gencorpus $(cksum <bench/gencorpus.c | awk '{print $1}') runs=$2 size=$3 seed=$BENCH_SEED steps=$_steps $_flags"
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
    [ "$1" != c ] || _need=$(awk -v r="$2" 'BEGIN { printf "%d", r * 8.5 * 1.2 }') # a 4 KiB folder + a 4 KiB block
    _free=$(df -Pk "$BENCH_DIR" | awk 'NR == 2 { print $4 }')
    [ "${_free:-0}" -ge "$_need" ] || die "not enough space in $BENCH_DIR for shape $1: need ${_need} KiB, have ${_free} KiB"
    mkdir -p "$_dir"
    echo "incomplete $_stamp" >"$_dir/.stamp"
    echo "bench: generating shape $1: $2 runs x $3 bytes into $_dir" >&2
    # shellcheck disable=SC2086 # $_flags: empty or one word
    _t=$("$TI" "$GEN" --out "$_dir" --runs "$2" --size "$3" --seed "$BENCH_SEED" --steps "$_steps" --jobs "$JOBS" $_flags)
    # shellcheck disable=SC2086 # split "seconds status bytes lines"
    set -- $_t
    [ "$2" = 0 ] || die "gencorpus failed (exit $2)"
    sync
    _mb=$(du -sk "$_dir" | awk '{ print $1 / 1024 }')
    echo "bench: generated $_mb MiB (on disk) in $1 s" >&2
    echo "$_stamp" >"$_dir/.stamp"
}

# ---- one shape: warm, time alternately, table
keys_for() { # shape -> the commands timed on it
    case $1 in
    c) echo "parse parse_csv parse_json parse_md rg_c" ;;
    *) echo "parse parse_csv parse_json parse_md parse_w10 parse_all grep rg rg_c tailread tailread_p tailread_l" ;;
    esac
    [ -z "$NP_PARSE_B" ] || echo "parse_b parse_csv_b"
}
label() {
    case $1 in
    parse) echo "nemoperf-parse (table)" ;;
    parse_csv) echo "nemoperf-parse --format csv" ;;
    parse_json) echo "nemoperf-parse --format json" ;;
    parse_md) echo "nemoperf-parse --format markdown" ;;
    parse_w10) echo "nemoperf-parse --window 10 --format csv" ;;
    parse_all) echo "nemoperf-parse --all-steps --format csv" ;;
    parse_b) echo "NP_PARSE_B (table)" ;;
    parse_csv_b) echo "NP_PARSE_B --format csv" ;;
    grep) echo "grep -r --include '*.out' train_step_timing" ;;
    rg) echo "rg --no-config -uu -g '*.out' train_step_timing" ;;
    rg_c) echo "rg -c --no-config -uu -g '*.out' train_step_timing" ;;
    tailread) echo "tailread -j $JOBS (nftw walk, last 64 KiB)" ;;
    tailread_p) echo "tailread -p -j $JOBS (parallel walk)" ;;
    tailread_l) echo "tailread -p, log-*.out only, last 32 KiB" ;;
    esac
}
enabled() {
    case $1 in
    parse_b | parse_csv_b) [ -x "$NP_PARSE_B" ] ;;
    parse*) [ "$have_parse" = 1 ] ;;
    rg | rg_c) [ "$have_rg" = 1 ] ;;
    *) return 0 ;;
    esac
}
runkey() { # key [-l] -> "seconds status bytes lines maxrss_kb"
    _k=$1; shift
    case $_k in
    parse) "$TI" -p "$@" "$NP_PARSE" "$EXP" ;;
    parse_csv) "$TI" -p "$@" "$NP_PARSE" --format csv "$EXP" ;;
    parse_json) "$TI" -p "$@" "$NP_PARSE" --format json "$EXP" ;;
    parse_md) "$TI" -p "$@" "$NP_PARSE" --format markdown "$EXP" ;;
    parse_w10) "$TI" -p "$@" "$NP_PARSE" --window 10 --format csv "$EXP" ;;
    parse_all) "$TI" -p "$@" "$NP_PARSE" --all-steps --format csv "$EXP" ;;
    parse_b) "$TI" -p "$@" "$NP_PARSE_B" "$EXP" ;;
    parse_csv_b) "$TI" -p "$@" "$NP_PARSE_B" --format csv "$EXP" ;;
    grep) "$TI" -p "$@" grep -r --include '*.out' train_step_timing "$EXP" ;;
    rg) "$TI" -p "$@" rg --no-config -uu -g '*.out' train_step_timing "$EXP" ;;
    rg_c) "$TI" -p "$@" rg -c --no-config -uu -g '*.out' train_step_timing "$EXP" ;;
    tailread) "$TI" -p "$@" "$TR" -j "$JOBS" "$EXP" ;;
    tailread_p) "$TI" -p "$@" "$TR" -p -j "$JOBS" "$EXP" ;;
    tailread_l) "$TI" -p "$@" "$TR" -p -j "$JOBS" -g 'log-*.out' -b 32768 "$EXP" ;;
    esac
}

FAILED=0
bench_shape() { # shape runs size
    _s=$1 _runs=$2 _size=$3
    KEYS=$(keys_for "$_s")
    corpus "$_s" "$_runs" "$_size"
    _w=$BENCH_DIR/work-$_s
    rm -rf "$_w"
    mkdir -p "$_w"
    # warm the cache: read every file once (and count the bytes of the logs); shape c's million
    # small files are read by the first untimed run of every command instead (find | cat alone
    # takes minutes there)
    if [ "$_s" = c ]; then
        _outb=$(find "$EXP" -type f -name '*.out' -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
    else
        _outb=$(find "$EXP" -type f -name '*.out' -exec cat {} + | wc -c)
        find "$EXP" -type f ! -name '*.out' -exec cat {} + >/dev/null
    fi
    _gb=$(awk -v b="$_outb" 'BEGIN { printf "%.2f", b / 1e9 }')
    out ""
    out "== shape $_s: $_runs runs x ~$_size bytes, $_gb GB of *.out, warm cache, $BENCH_REPS reps, median; $JOBS cores; dir $EXP"
    out "   load before: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
    [ "$have_parse" = 1 ] || out "   note: $NP_PARSE not built yet: parse rows skipped"
    [ "$have_rg" = 1 ] || out "   note: rg (ripgrep) not found: rg rows skipped (apt-get install ripgrep)"
    # one untimed run each: warms code pages and checks the outputs (shape c: rg -c only, which
    # reads every file; the others' outputs are checked on their timed runs)
    for _k in $KEYS; do
        echo 0 >"$_w/$_k.status"
        enabled "$_k" || continue
        if [ "$_s" = c ] && [ "$_k" != rg_c ] && [ "$have_rg" = 1 ]; then continue; fi
        # shellcheck disable=SC2046 # split "seconds status bytes lines maxrss"
        set -- $(runkey "$_k" -l)
        [ -n "${2:-}" ] || set -- 0 127 0 0 0
        echo "$2" >"$_w/$_k.status"
        echo "$4" >"$_w/$_k.lines"
        echo "${5:-0}" >>"$_w/$_k.rss"
    done
    _r=1
    while [ "$_r" -le "$BENCH_REPS" ]; do
        for _k in $KEYS; do
            enabled "$_k" || continue
            # shellcheck disable=SC2046
            set -- $(runkey "$_k" -l)
            [ -n "${2:-}" ] || set -- 0 127 0 0 0
            echo "$1" >>"$_w/$_k.times"
            echo "$4" >"$_w/$_k.lines"
            echo "${5:-0}" >>"$_w/$_k.rss"
            [ "$2" = 0 ] || echo "$2" >"$_w/$_k.status"
        done
        _r=$((_r + 1))
    done
    for _k in $KEYS; do
        if enabled "$_k" && [ "$(cat "$_w/$_k.status")" = 0 ]; then
            median "$_w/$_k.times" >"$_w/$_k.med"
            minof "$_w/$_k.times" >"$_w/$_k.min"
            sort -g "$_w/$_k.rss" | tail -n 1 | awk '{ printf "%.1f\n", $1 / 1024 }' >"$_w/$_k.mb"
        else
            echo nan >"$_w/$_k.med"
            echo nan >"$_w/$_k.min"
            echo nan >"$_w/$_k.mb"
        fi
    done
    med() { if [ -f "$_w/$1.med" ]; then cat "$_w/$1.med"; else echo nan; fi; }
    _g=$(med grep) _rg=$(med rg) _rc=$(med rg_c) _tr=$(med tailread)
    out "$(printf '%-48s %9s %9s %8s %8s %8s %8s %9s  %s' command 'median s' 'min s' grep/x rg/x 'rg -c/x' x/tailrd 'peak MiB' 'output lines')"
    for _k in $KEYS; do
        if ! enabled "$_k"; then
            out "$(printf '%-48s %9s' "$(label "$_k")" skipped)"
            continue
        fi
        _st=$(cat "$_w/$_k.status")
        if [ "$_st" != 0 ]; then
            out "$(printf '%-48s %9s' "$(label "$_k")" "FAILED (exit $_st)")"
            FAILED=1
            continue
        fi
        out "$(awk -v l="$(label "$_k")" -v m="$(med "$_k")" -v n="$(cat "$_w/$_k.min")" -v mb="$(cat "$_w/$_k.mb")" \
            -v g="$_g" -v r="$_rg" -v rc="$_rc" -v t="$_tr" -v lines="$(cat "$_w/$_k.lines")" '
            function ratio(a, b) { return (a == "nan" || b == "nan" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
            BEGIN { printf "%-48s %9.4f %9.4f %8s %8s %8s %8s %9s  %s\n", l, m, n, ratio(g, m), ratio(r, m), ratio(rc, m), ratio(m, t), mb, lines }')"
    done
    if [ "$_s" != c ]; then
        _want=$((_runs * STEPS))
        for _k in grep rg; do
            enabled "$_k" || continue
            _l=$(cat "$_w/$_k.lines")
            [ "$_l" = "$_want" ] || out "   warning: $_k printed $_l lines, expected $_want ($_runs runs x $STEPS steps)"
        done
    fi
    out "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
    if [ -n "$NP_PARSE_B" ] && [ "$_s" != c ]; then # the same reps, alternately: ratio NP_PARSE_B / NP_PARSE
        out "$(awk -v p="$(med parse)" -v pc="$(med parse_csv)" -v b="$(med parse_b)" -v bc="$(med parse_csv_b)" \
            -v pn="$(cat "$_w/parse.min")" -v bn="$(cat "$_w/parse_b.min")" '
            function x(a, c) { return (a == "nan" || c == "nan" || c + 0 == 0) ? "?" : sprintf("%.3f", a / c) }
            BEGIN { printf "   vs NP_PARSE_B: B/this median table %s, csv %s; min table %s (above 1: this build is faster)\n", x(b, p), x(bc, pc), x(bn, pn) }')"
    fi
    # targets (issue 15): a: every format >= 20x grep and >= 5x rg; b: every format >= 1.5x rg -c;
    # c: every format faster than rg -c with a peak RSS <= 64 MiB
    out "$(awk -v s="$_s" -v runs="$_runs" -v gb="$_gb" -v g="$_g" -v r="$_rg" -v rc="$_rc" \
        -v p="$(med parse)" -v pc="$(med parse_csv)" -v pj="$(med parse_json)" -v pm="$(med parse_md)" -v pa="$(med parse_all)" -v pw="$(med parse_w10)" \
        -v mp="$(cat "$_w/parse.mb")" -v mc="$(cat "$_w/parse_csv.mb")" -v mj="$(cat "$_w/parse_json.mb")" \
        -v mm="$(cat "$_w/parse_md.mb")" '
        function x(a, b) { return (a == "nan" || b == "nan" || b + 0 == 0) ? "?" : sprintf("%.2fx", a / b) }
        function ok(c) { return c ? "MET" : "MISSED" }
        function f(v) { return v == "nan" ? "-" : sprintf("%.3f", v) }
        function allfmt(base, k) {
            if (base == "nan" || p == "nan" || pc == "nan" || pj == "nan" || pm == "nan") return "?"
            return ok(base / p >= k && base / pc >= k && base / pj >= k && base / pm >= k)
        }
        BEGIN {
            line = sprintf("summary %s: %d runs, %s GB: grep %s s, rg %s s, rg -c %s s", s, runs, gb, f(g), f(r), f(rc))
            if (p == "nan") { print line "; nemoperf-parse: not measured"; exit }
            line = line sprintf("; parse table %.4f s (%s rg -c), csv %.4f s (%s), json %.4f s (%s), markdown %s s (%s)", p, x(rc, p), pc, x(rc, pc), pj, x(rc, pj), pm == "nan" ? "-" : sprintf("%.4f", pm), x(rc, pm))
            line = line sprintf("; peak RSS table %s MiB, csv %s MiB, json %s MiB, markdown %s MiB", mp, mc, mj, mm)
            if (s == "a") line = line sprintf(" | targets: every format >=20x grep %s, >=5x rg %s", allfmt(g, 20), allfmt(r, 5))
            if (s == "b") line = line sprintf(" | target: every format >=1.5x rg -c %s", allfmt(rc, 1.5))
            if (s == "b" && pw != "nan") line = line sprintf(" (--window 10 csv %.4f s, %s rg -c)", pw, x(rc, pw))
            if (s == "c") line = line sprintf(" | targets: every format faster than rg -c %s, peak RSS <= 64 MiB %s", allfmt(rc, 1), (mp == "nan" || mc == "nan" || mj == "nan" || mm == "nan") ? "?" : ok(mp <= 64 && mc <= 64 && mj <= 64 && mm <= 64))
            print line
        }')"
}

out "nemoperf bench $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -sm), $JOBS cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown cpu)), $(grep --version | head -n 1), $(if [ "$have_rg" = 1 ]; then rg --version | head -n 1; else echo 'no rg'; fi)"
out "command: BENCH_SHAPES=$BENCH_SHAPES BENCH_SCALE=$BENCH_SCALE BENCH_REPS=$BENCH_REPS sh bench/run.sh"
case $BENCH_SHAPES in *a*) bench_shape a $((300 / BENCH_SCALE > 0 ? 300 / BENCH_SCALE : 1)) 5000000 ;; esac
case $BENCH_SHAPES in *b*) bench_shape b $((20000 / BENCH_SCALE > 0 ? 20000 / BENCH_SCALE : 1)) 50000 ;; esac
# ---- shape n: a 1 GB NCCL trace log
bench_nccl() { # bytes
    _d=$BENCH_DIR/shape-n
    _run=$_d/experiments/pretrain_llama3.1_8b_bf16_64_nccltrace
    _log=$_run/log-pretrain_llama3.1_8b_bf16_64_nccltrace_1_0.out
    _stamp="nccl awk $(cksum <bench/run.sh | awk '{print $1}') bytes=$1 seed=$BENCH_SEED"
    if ! [ -f "$_d/.stamp" ] || [ "$(cat "$_d/.stamp")" != "$_stamp" ]; then
        echo "bench: generating shape n: a $1-byte NCCL trace log into $_run" >&2
        rm -rf "$_d"
        mkdir -p "$_run"
        # per step: each of 64 ranks (8 per node) logs its TP (8), DP (8) and PP Send/Recv (2) collectives
        awk -v want="$1" -v seed="$BENCH_SEED" 'BEGIN {
            srand(seed); op = 0; bytes = 0
            steps = int(want / (24 * 64 * 186 + 300)) + 1 # ~186 bytes a collective line
            for (step = 0; step < steps; step++) {
                for (k = 0; k < 24; k++) {
                    kind = k % 6
                    name = kind < 3 ? "AllReduce" : kind == 3 ? "ReduceScatter" : kind == 4 ? "AllGather" : "Send"
                    nr = kind == 5 ? 2 : 8; cnt = kind < 3 ? 16777216 : kind == 5 ? 4194304 : 131072000; dt = kind == 2 ? 7 : 9
                    for (r = 0; r < 64; r++) {
                        l = sprintf("node%03d:%d:%d [%d] NCCL INFO %s: opCount %x sendbuff 0x7f%08x recvbuff 0x7f%08x count %d datatype %d op 0 root 0 comm 0x55d0%06x [nranks=%d] stream 0x55d1%06x",                             int(r / 8), 4000 + r, 4100 + r, r % 8, name, op + k, int(rand() * 2^31), int(rand() * 2^31), cnt, dt, 4096 * r + kind, nr, 4096 * r)
                        print l; bytes += length(l) + 1
                    }
                }
                op += 24
                l = sprintf("Training epoch 0, iteration %d/%d | lr: 7.496e-06 | global_batch_size: 1024 | global_step: %d | peak_memory_usage: 70833405952 | memory_allocated: 44271689728 | reduced_train_loss: 11.96 | train_step_timing in s: %.3f | consumed_samples: %d", step, steps - 1, step, 12.3 + rand() * 0.1, (step + 1) * 1024)
                print l; bytes += length(l) + 1
            }
        }' >"$_log"
        echo "$_stamp" >"$_d/.stamp"
    fi
    cat "$_log" >/dev/null
    _gb=$(awk -v b="$(wc -c <"$_log")" 'BEGIN { printf "%.2f", b / 1e9 }')
    out ""
    out "== shape n: one NCCL trace log, $_gb GB, warm cache, $BENCH_REPS reps, median"
    out "   load before: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min)"
    out "$(printf '%-52s %9s %9s %9s %9s %9s  %s' command 'median s' 'min s' 'x/grep-c' 'cpu s' 'peak MiB' 'output lines')"
    _w=$BENCH_DIR/work-n
    rm -rf "$_w"
    mkdir -p "$_w"
    for _r in $(seq 0 "$BENCH_REPS"); do # rep 0 untimed
        for _k in grep_c rg_c parse_nccl parse_nccl_b parse; do
            case $_k in
            grep_c) set -- $("$TI" -p -l grep -c 'NCCL INFO' "$_log") ;;
            rg_c) [ "$have_rg" = 1 ] || continue; set -- $("$TI" -p -l rg -c --no-config 'NCCL INFO' "$_log") ;;
            parse_nccl) [ "$have_parse" = 1 ] || continue; set -- $("$TI" -p -l "$NP_PARSE" --nccl --format json "$_d/experiments") ;;
            parse_nccl_b) [ -x "$NP_PARSE_B" ] || continue; set -- $("$TI" -p -l "$NP_PARSE_B" --nccl --format json "$_d/experiments") ;;
            parse) [ "$have_parse" = 1 ] || continue; set -- $("$TI" -p -l "$NP_PARSE" --format json "$_d/experiments") ;;
            esac
            # parse exits 1 for a run it does not call ok: the timing stands; 2 and up is a failure
            case ${2:-9} in 0) ;; 1) case $_k in parse*) ;; *) echo "bench: shape n: $_k exited 1" >&2; FAILED=1 ;; esac ;;
            *) echo "bench: shape n: $_k exited ${2:-?}" >&2; FAILED=1 ;; esac
            # a parse that printed nothing failed whatever its status (e.g. no recipes found): its time means nothing
            case $_k in parse*) [ "${4:-0}" -gt 0 ] || { echo "bench: shape n: $_k printed nothing" >&2; FAILED=1; } ;; esac
            [ "$_r" -gt 0 ] && echo "$1" >>"$_w/$_k.times"
            echo "$4" >"$_w/$_k.lines"
            echo "${5:-0}" >>"$_w/$_k.rss"
            [ "$_r" -gt 0 ] && echo "${6:-0}" >>"$_w/$_k.cpu"
        done
    done
    _g=$(median "$_w/grep_c.times")
    for _k in grep_c rg_c parse_nccl parse_nccl_b parse; do
        [ -f "$_w/$_k.times" ] || continue
        case $_k in
        grep_c) _l="grep -c 'NCCL INFO' LOG" ;;
        rg_c) _l="rg -c 'NCCL INFO' LOG" ;;
        parse_nccl) _l="nemoperf-parse --nccl --format json" ;;
        parse_nccl_b) _l="NP_PARSE_B --nccl --format json" ;;
        parse) _l="nemoperf-parse --format json (no --nccl)" ;;
        esac
        out "$(awk -v l="$_l" -v m="$(median "$_w/$_k.times")" -v n="$(minof "$_w/$_k.times")" -v g="$_g" \
            -v c="$(median "$_w/$_k.cpu")" -v mb="$(sort -g "$_w/$_k.rss" | tail -n 1)" -v lines="$(cat "$_w/$_k.lines")" \
            'BEGIN { printf "%-52s %9.4f %9.4f %9.2f %9.3f %9.1f  %s\n", l, m, n, m / g, c, mb / 1024, lines }')"
    done
    # target (issue 29): the 1 GB trace log read at disk speed in bounded memory: --nccl's median at most grep -c's,
    # its peak RSS at most 64 MiB
    out "$(awk -v g="$_g" -v p="$(median "$_w/parse_nccl.times")" -v mb="$(sort -g "$_w/parse_nccl.rss" | tail -n 1)" '
        function ok(c) { return c ? "MET" : "MISSED" }
        BEGIN {
            if (p == "nan" || g == "nan" || g + 0 == 0) { print "summary n: nemoperf-parse --nccl: not measured"; exit }
            printf "summary n: --nccl %.4f s, grep -c %.4f s: %.2fx | targets: at grep -c speed (<= 1.00x) %s, peak RSS <= 64 MiB %s (%.1f MiB)\n", p, g, p / g, ok(p <= g), ok(mb / 1024 <= 64), mb / 1024
        }')"
    out "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"
}

case $BENCH_SHAPES in *c*) bench_shape c $((1000000 / BENCH_SCALE > 0 ? 1000000 / BENCH_SCALE : 1)) 3000 ;; esac
case $BENCH_SHAPES in *n*) bench_nccl $((1000000000 / BENCH_SCALE)) ;; esac
out ""
out "(results also in $LOG; timed output goes to a pipe drained by bench/timeit, not /dev/null; peak MiB = max RSS over the reps; cpu s (shape n) = median user + system time of all its threads)"
exit "$FAILED"
