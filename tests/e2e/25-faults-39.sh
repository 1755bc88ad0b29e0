#!/bin/sh
# 25-faults-39.sh - the third fault campaign's parse-side findings (no cluster needed; real files and the real
# tools; no stand-in):
#   3. a FIFO under every name a reader opens in a run folder (the names read from
#      include/nemoperf/util/runfiles.h, not listed here), in every mode: no hang; and no reader of
#      src/parse, src/report, src/store opens a file but through util/fileio.c (a grep, its few exceptions named)
#   5. one escaping rule for every output format: a folder and a cluster name holding ESC, a C1 CSI and DEL
#      never reach stdout raw in table, markdown, CSV or JSON, of a parse, --nccl, --group, --history, --compare
#      (JSON keeps the name exactly, as its escapes)
#   6. a manifest of an unknown format (999, 2, "1", -1): the run invalid, the file and the version named; a
#      manifest whose GBS or max_steps the log contradicts: a note naming both values
#   7. a store whose schema_version is "abc": --store exits 2 as --history and --compare, naming it, untouched
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
parse=$bindir/nemoperf-parse
T=25-faults-39
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }
[ -x "$parse" ] || die "$parse not built (make)"
W=$(mktemp -d "${TMPDIR:-/tmp}/np-faults39.XXXXXX") || die "mktemp"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
SYN="$root/tests/data/parse/synthetic/in/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1744407969/pretrain_llama3.1_8b_bf16_8"
AM="$root/tests/data/amlog/gptoss_20b_te_deepep_8"

# ---- 3. a FIFO under every name any reader opens, every mode -----------------------------------
names=$(sed -n 's/^#define NP_RUNFILE_[A-Z_]* *"\([^"]*\)".*/\1/p' "$root/include/nemoperf/util/runfiles.h")
[ "$(printf '%s\n' "$names" | grep -c .)" -ge 5 ] || die "runfiles.h: the names not found ($names)"
# kind_dir KIND TOP: a run of that kind (NeMo, AutoModel, Megatron-Bridge) under TOP; prints its folder and log stem
kind_dir() {
    case $1 in
    nemo) d="$2/pretrain_llama3.1_8b_bf16_8_1744407969/pretrain_llama3.1_8b_bf16_8"
          mkdir -p "$d" && cp "$SYN"/* "$d/" ;;
    automodel) d="$2/gptoss_20b_te_deepep_8" && mkdir -p "$d" && cp "$AM"/* "$d/" ;;
    mbridge) d="$2/mb" && mkdir -p "$d" && python3 - "$d" <<'PY' || return 1
import json, os, sys
d = sys.argv[1]
json.dump({"mbridge": {"recipe": "llama3_8b", "dtype": "bf16", "gpu_type": "h100", "gpus": 8, "container": "26.08"}},
          open(os.path.join(d, "nemoperf.json"), "w"))
with open(os.path.join(d, "log-mb_42_0.out"), "w") as f:
    for i in range(1, 51):
        f.write(" [2026-11-25 21:00:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                "(ms): 1000.0 | learning rate: 1.000000E-04 | global batch size:   128 | lm loss: 1.050000E+01 |\n"
                % (i % 60, i, 50, i * 128))
PY
    ;;
    esac
    log=$(cd "$d" && ls *.out | head -1)
    printf '%s %s\n' "$d" "${log%.out}"
}
trials=0 f0=$fails
for kind in nemo automodel mbridge; do
    for name in $names; do
        top="$W/fifo-$kind-$(printf '%s' "$name" | tr -c 'a-z0-9' _)"
        set -- $(kind_dir "$kind" "$top") || die "$kind: cannot make the run"
        d=$1 stem=$2
        n=$(printf '%s' "$name" | sed "s/\*/$stem/")
        mkdir -p "$(dirname "$d/$n")" && rm -f "$d/$n" && mkfifo "$d/$n" || die "mkfifo $d/$n"
        for mode in "" --nccl --strict --store "--format json"; do
            extra=
            [ "$mode" = --store ] && extra="--db $W/store-$kind.db"
            t0=$(date +%s)
            # shellcheck disable=SC2086
            timeout 20 "$parse" --no-progress $mode $extra "$top" >"$W/out" 2>"$W/err" </dev/null
            rc=$? t=$(($(date +%s) - t0)) trials=$((trials + 1))
            if [ "$rc" -eq 124 ] || [ "$t" -gt 10 ]; then
                fail "a FIFO named $n in a $kind run: nemoperf-parse $mode hangs (exit $rc after ${t} s)"
            elif [ "$rc" -gt 2 ]; then
                fail "a FIFO named $n in a $kind run: nemoperf-parse $mode exit $rc: $(head -c 300 "$W/err")"
            fi
        done
    done
done
[ "$fails" -eq "$f0" ] && ok "a FIFO under each of the $(printf '%s\n' "$names" | grep -c .) names of runfiles.h in NeMo, AutoModel and Megatron-Bridge runs, 5 modes: $trials parses, none hung"
# the FIFO is named where a reader met it (--nccl's vboost check, the manifest)
top="$W/fifo-nemo-vboost_err"
timeout 20 "$parse" --no-progress --nccl "$top" >"$W/out" 2>&1
grep -q 'vboost.err: not a regular file (a FIFO)' "$W/out" && ok "--nccl: a FIFO named vboost.err is said, not read" ||
    fail "--nccl vboost.err FIFO not named: $(head -c 600 "$W/out")"

# every open of a file in the parse, report and store code goes through util/fileio.c but these, each said why
cd "$root" || die "cd $root"
grep -nE '(^|[^_a-z])(fopen|json_load_file|open|openat|fdopen)\(' src/parse/*.c src/report/*.c src/store/*.c |
    grep -v -e 'O_DIRECTORY' \
        -e '^src/parse/walk.c:.*"/proc/self/mountinfo"' \
        -e '^src/parse/scan.c:.*if (o.streams)' -e '^src/parse/scan.c:.*f.fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);' \
        -e '^src/parse/mbridge.c:.*FILE \*f = fopen(path, "r");' \
        -e '^src/parse/reference.c:.*FILE \*f = fopen(path, "r");' \
        -e '^src/report/mbridge_md.c:.*fopen(layout_tsv' \
        -e '^src/report/report.c:.*O_TMPFILE' -e '^src/report/report.c:.*fdopen(fd, "w+")' \
        -e '^src/report/plot.c:.*fdopen(fd, "wb")' \
        -e 'fdopen(fd, "r")' >"$W/opens"
# the exceptions (folder listings, opendir, are not opens of a file): folders (O_DIRECTORY); the mount table; the
# scanner's streams (tests only: scan.h's "streams"); the reference tables of the install (share/, not a run
# folder); report outputs written; fdopen of a descriptor np_file_open_regular gave
[ ! -s "$W/opens" ] && ok "no reader of src/parse, src/report, src/store opens a file around util/fileio.c" ||
    fail "opens around util/fileio.c: $(cat "$W/opens")"

# ---- 5. one escaping rule for every output format ----------------------------------------------
cd "$W" || die "cd $W"
esc=$(printf '\033') c1=$(printf '\302\233') del=$(printf '\177')
evil="evil${esc}[31m${c1}2J${del}x"
d="$W/esc/$evil/pretrain_llama3.1_8b_bf16_8_1/pretrain_llama3.1_8b_bf16_8"
mkdir -p "$d" && cp "$SYN"/log-*.out "$d/" || die "cannot make the escape run"
"$parse" --no-progress --store --db "$W/esc.db" --cluster "c${esc}]0;t${c1}" esc >/dev/null 2>"$W/err"
grep -q 'stored 1 run' "$W/err" || fail "--store of the escape run: $(cat "$W/err")"
# raw FILE: 1 when FILE holds ESC, DEL or a C1 control as UTF-8
raw() { python3 -c 'import re,sys; b=open(sys.argv[1],"rb").read(); sys.exit(0 if re.search(rb"\x1b|\x7f|\xc2[\x80-\x9f]", b) else 1)' "$1"; }
n=0 f0=$fails
for fmt in table markdown csv json; do
    for mode in "" --nccl --group "--history" "--compare esc esc"; do
        [ "$fmt$mode" = markdown--group ] && continue # not a combination (exit 2)
        # shellcheck disable=SC2086
        "$parse" --no-progress --db "$W/esc.db" --format $fmt $mode $( [ -z "$mode" ] || [ "$mode" = --nccl ] || [ "$mode" = --group ] && echo esc) >"$W/out" 2>"$W/err"
        n=$((n + 1))
        raw "$W/out" && fail "--format $fmt $mode: a raw control byte on stdout: $(od -An -c "$W/out" | grep -m1 -e '033' -e '177' -e '302')"
        raw "$W/err" && fail "--format $fmt $mode: a raw control byte on stderr"
        [ -s "$W/out" ] || fail "--format $fmt $mode: nothing written ($(head -c 300 "$W/err"))"
    done
done
[ "$fails" -eq "$f0" ] && ok "ESC, C1 CSI and DEL in a folder and cluster name: none raw in $n reports (4 formats x parse, --nccl, --group, --history, --compare; markdown has no --group)"
"$parse" --no-progress --format json esc | python3 -c 'import json,sys
r = json.load(sys.stdin)["runs"][0]["path"]
assert r.split("/")[1] == sys.argv[1], (r, sys.argv[1])' "$evil" && ok "JSON keeps the folder name exactly (as escapes)" ||
    fail "JSON does not keep the name: $(grep -m1 path "$W/out")"
"$parse" --no-progress --format csv esc | grep -q "^esc/evil?\[31m??2J?x/" && ok "CSV: each control byte as '?', the table's rule" ||
    fail "CSV: $(head -2 "$W/out" | tail -1 | cut -c1-120)"

# ---- 6. manifests: an unknown format; fields the log contradicts ------------------------------
cd "$W" || die "cd $W"
# set_manifest DIR PYTHON: edit DIR's nemoperf.json (m: the object)
set_manifest() { python3 -c 'import json,sys; f=sys.argv[1]+"/nemoperf.json"; m=json.load(open(f)); exec(sys.argv[2]); json.dump(m, open(f,"w"))' "$1" "$2"; }
for v in 999 2 '"1"' -1 null; do
    top="$W/mfmt-$(printf '%s' "$v" | tr -c 'a-z0-9-' _)"
    set -- $(kind_dir nemo "$top")
    set_manifest "$1" "m['nemoperf_manifest'] = json.loads('$v')"
    "$parse" --no-progress "$top" >"$W/out" 2>"$W/err"
    rc=$?
    if [ "$v" = null ]; then # null as absent: a hand-written manifest
        [ "$rc" -eq 0 ] && ok "nemoperf_manifest null: read as absent (exit 0)" || fail "nemoperf_manifest null: exit $rc: $(cat "$W/out")"
        continue
    fi
    [ "$rc" -eq 1 ] && grep -q "invalid: .*nemoperf.json cannot be trusted: field \"nemoperf_manifest\": format $v, not one this nemoperf reads (1)" "$W/out" &&
        grep -q ' invalid *$' "$W/out" && ok "nemoperf_manifest $v: the run invalid, the file and the version named (exit 1)" ||
        fail "nemoperf_manifest $v: exit $rc: $(cat "$W/out")"
done
top="$W/mgbs"
set -- $(kind_dir nemo "$top")
set_manifest "$1" "m['config']['gbs'] = 7"
"$parse" --no-progress --format json "$top" >"$W/out" 2>"$W/err"
grep -q "the manifest's GBS 7 contradicts the log's 128 (the log's is used)" "$W/out" && grep -q '"global_batch_size": 128' "$W/out" &&
    ok "manifest GBS 7, log 128: a note naming both, 128 used" || fail "manifest GBS 7: $(grep -m2 -e note -e global_batch "$W/out")"
grep -q "the manifest's max_steps 50 contradicts the log's 30 steps" "$W/out" &&
    ok "manifest max_steps 50, log 30 steps: a note naming both" || fail "manifest max_steps: $(grep -m1 note "$W/out")"
set_manifest "$1" "m['config']['gbs'] = 128; m['config']['max_steps'] = 30"
"$parse" --no-progress --format json "$top" >"$W/out" 2>"$W/err"
! grep -q "contradicts the log" "$W/out" && ok "manifest and log agreeing: no note" || fail "agreeing: $(grep -m1 note "$W/out")"

# ---- 7. a schema version nemoperf cannot read ---------------------------------------------------
"$parse" --no-progress --store --db "$W/v.db" esc >/dev/null 2>&1
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE nemoperf_meta SET value = ? WHERE key = ?", ("abc", "schema_version")); c.commit()' "$W/v.db" ||
    fail "cannot set the schema version"
for mode in --store --history "--compare esc db:"; do
    # shellcheck disable=SC2086
    "$parse" --no-progress --db "$W/v.db" $mode $( [ "$mode" = --store ] && echo esc) >/dev/null 2>"$W/err"
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "schema version is 'abc', which no nemoperf writes" "$W/err" &&
        ok "schema_version 'abc': ${mode%% *} exits 2, naming it" || fail "schema_version 'abc': $mode exit $rc: $(cat "$W/err")"
done
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); v=c.execute("SELECT value FROM nemoperf_meta").fetchall(); assert v == [("abc",)], v' "$W/v.db" &&
    ok "schema_version 'abc': the store left as it was" || fail "the store was changed"

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all passed"
