#!/bin/sh
# 24-faults-23.sh - issue 23's hangs, crashes, silent changes and terminal escapes (no
# cluster needed; real files; the one stand-in is said at item 7):
#   5. a FIFO (or a symlink to one) named nemoperf.json: no hang, the run invalid, the file named
#   7. an unreadable manifest (EACCES; a folder named nemoperf.json): the run invalid, the file named
#  12. step times of 1e308, a last line "iteration -1/49": invalid; JSON peak memory exact
#   9. closed standard descriptors; --help/--version into /dev/full
#  11. 10,000 nested folders: refused below 256 levels, in well under the 7 s it took
#  13. escape sequences in folder names and environment values never reach the terminal
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
parse=$bindir/nemoperf-parse
launch=$bindir/nemoperf-launch
T=24-faults-23
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }
[ -x "$parse" ] || die "$parse not built (make)"
W=$(mktemp -d "${TMPDIR:-/tmp}/np-parse23.XXXXXX") || die "mktemp"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
SYN="$root/tests/data/parse/synthetic/in/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1744407969/pretrain_llama3.1_8b_bf16_8"
# run_dir NAME: a copy of the synthetic run (its log and manifest) under $W/NAME; prints its path
run_dir() {
    d="$W/$1/pretrain_llama3.1_8b_bf16_8_1744407969/pretrain_llama3.1_8b_bf16_8"
    mkdir -p "$d" && cp "$SYN"/* "$d/" && printf '%s\n' "$d"
}

# ---- 5. FIFOs named nemoperf.json ----------------------------------------------------------
d=$(run_dir fifo)
rm -f "$d/nemoperf.json" && mkfifo "$d/nemoperf.json"
timeout 20 "$parse" --no-progress "$W/fifo" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -ne 124 ] && ok "FIFO manifest: no hang (exit $rc)" || fail "FIFO manifest: hangs"
[ "$rc" -eq 1 ] && grep -q 'invalid: .*nemoperf.json cannot be trusted: .*not a regular file (a FIFO)' "$W/out" &&
    ok "FIFO manifest: the run is invalid, the FIFO named" || fail "FIFO manifest: exit $rc: $(cat "$W/out" "$W/err")"
d=$(run_dir fifolink)
rm -f "$d/nemoperf.json" && mkfifo "$W/a-fifo" && ln -s "$W/a-fifo" "$d/nemoperf.json"
timeout 20 "$parse" --no-progress "$W/fifolink" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'not a regular file (a FIFO)' "$W/out" && ok "symlink to a FIFO: refused, no hang" ||
    fail "symlink to a FIFO: exit $rc: $(cat "$W/out" "$W/err")"

# ---- 7. an unreadable manifest: the run invalid, the file and why named, exit 1 --------------
# Stand-ins, and why: this suite runs as root, which reads every file, so EACCES comes from running
# nemoperf-parse as the cluster's unprivileged user (nemoperf-test) on a 0600 root-owned manifest;
# a folder named nemoperf.json stands in for a manifest whose read fails (read(2) gives EISDIR).
d=$(run_dir mfolder)
rm -f "$d/nemoperf.json" && mkdir "$d/nemoperf.json"
"$parse" --no-progress "$W/mfolder" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'invalid: .*nemoperf.json cannot be trusted: not a regular file (a folder)' "$W/out" &&
    grep -q ' invalid *$' "$W/out" && ok "a folder named nemoperf.json: the run invalid, named (exit 1)" ||
    fail "folder manifest: exit $rc: $(cat "$W/out" "$W/err")"
"$parse" --no-progress --format json "$W/mfolder" >"$W/out" 2>"$W/err"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); e=r["errors"]; assert e and "nemoperf.json cannot be trusted" in e[0], e' \
    "$W/out" && ok "a folder named nemoperf.json: JSON errors name it" || fail "folder manifest JSON: $(head -c 600 "$W/out")"
if [ "$(id -u)" -eq 0 ] && id nemoperf-test >/dev/null 2>&1 && command -v runuser >/dev/null; then
    d=$(run_dir eacces)
    chmod -R a+rX "$W/eacces" && chmod 755 "$W" && chmod 600 "$d/nemoperf.json"
    runuser -u nemoperf-test -- "$parse" --no-progress "$W/eacces" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'invalid: .*nemoperf.json cannot be trusted: cannot open: Permission denied' "$W/out" &&
        grep -q ' invalid *$' "$W/out" && ok "a manifest the user cannot read (EACCES): the run invalid, named (exit 1)" ||
        fail "EACCES manifest: exit $rc: $(cat "$W/out" "$W/err")"
    runuser -u nemoperf-test -- "$parse" --no-progress --format json "$W/eacces" >"$W/out" 2>"$W/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q '"errors": \[$' "$W/out" && grep -q 'nemoperf.json cannot be trusted: cannot open: Permission denied' "$W/out" &&
        ok "EACCES manifest: JSON exit 1, errors not empty" || fail "EACCES manifest JSON: exit $rc: $(grep -A2 errors "$W/out")"
else
    echo "$T: skip: unreadable manifest (needs root and the cluster's user nemoperf-test)"
fi

# ---- 12. wrong numbers ------------------------------------------------------------------------
d=$(run_dir huge)
sed -i 's/train_step_timing in s: 0.05/train_step_timing in s: 1e308/' "$d"/log-*.out
"$parse" --no-progress "$W/huge" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q ' invalid *$' "$W/out" && grep -q 'step time 1e+308 s is out of range' "$W/out" &&
    ok "step times of 1e308: invalid, exit 1" || fail "1e308: exit $rc: $(cat "$W/out")"
d=$(run_dir negative)
printf '%s\n' "Training epoch 0, iteration -1/49 | lr: 7.496e-06 | global_batch_size: 128 | reduced_train_loss: 11.96 | train_step_timing in s: 0.05" >>"$(ls "$d"/log-*.out)"
"$parse" --no-progress "$W/negative" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'no valid iteration number' "$W/out" && ok "a last line 'iteration -1/49': invalid, exit 1" ||
    fail "iteration -1/49: exit $rc: $(cat "$W/out")"
d=$(run_dir memory)
sed -i 's/peak_memory_usage: [0-9]*/peak_memory_usage: 62442450944/' "$d"/log-*.out
"$parse" --no-progress --format json "$W/memory" >"$W/out" 2>"$W/err"
grep -q '"peak_memory_bytes": 62442450944,' "$W/out" && ok "JSON peak_memory_bytes exact: 62442450944" ||
    fail "JSON peak memory: $(grep peak_memory "$W/out")"

# ---- 13. escape sequences and huge values --------------------------------------------------
esc=$(printf '\033')
d="$W/esc/evil${esc}]0;pwned$(printf '\007')${esc}[31m/pretrain_llama3.1_8b_bf16_8_1/pretrain_llama3.1_8b_bf16_8"
mkdir -p "$d" && cp "$SYN"/log-*.out "$d/"
"$parse" --no-progress "$W/esc" >"$W/out" 2>"$W/err"
grep -q 'evil?]0;pwned??\[31m' "$W/out" && ! grep -q "$esc" "$W/out" "$W/err" &&
    ok "a folder name with escape sequences: '?' in the table and footer, none on stdout or stderr" ||
    fail "escapes reach the terminal: $(od -c "$W/out" | grep -c 033) on stdout, $(od -c "$W/err" | grep -c 033) on stderr"
"$parse" --no-progress --format json "$W/esc" >"$W/out" 2>"$W/err"
grep -q 'evil\\u001B\]0;pwned' "$W/out" && ok "JSON keeps the folder's name (escaped by JSON)" ||
    fail "JSON: $(grep -m1 path "$W/out")"
mkdir -p "$W/stage"
STAGE_PATH="$W/stage" MODEL_SIZE="8b${esc}[2J" "$launch" --dry-run >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'MODEL_SIZE=8b?\[2J' "$W/err" && ! grep -q "$esc" "$W/err" &&
    ok "a refusal naming a value with ESC: exit 2, '?' instead" || fail "launch refusal: exit $rc: $(od -c "$W/err" | head -3)"

# ---- 9. closed standard descriptors ---------------------------------------------------------
d=$(run_dir fds)
"$parse" --no-progress "$W/fds" >&- 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'cannot write the report to standard output' "$W/err" &&
    ok "parse with stdout closed: exit 1, said so" || fail "parse >&-: exit $rc: $(cat "$W/err")"
"$parse" --no-progress "$W/fds" "$W/no-such-folder" >"$W/out" 2>&-
rc=$?
[ "$rc" -eq 1 ] && grep -q '^pretrain_llama3.1_8b_bf16_8 ' "$W/out" && ! grep -q 'no-such-folder' "$W/out" &&
    ok "parse with stderr closed: the report on stdout, no warning in it, exit 1" ||
    fail "parse 2>&-: exit $rc: $(cat "$W/out")"
for t in "$parse --help" "$parse --version" "$bindir/nemoperf-setup --help" "$bindir/nemoperf-setup --version" \
    "$launch --help" "$launch --version"; do
    $t >/dev/full 2>"$W/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'No space left on device' "$W/err" && ok "${t##*/} >/dev/full: exit 1" ||
        fail "${t##*/} >/dev/full: exit $rc"
done

# ---- 11. folder depth ------------------------------------------------------------------------
d=$(run_dir deep)
python3 -c 'import os, sys
os.chdir(sys.argv[1])
for i in range(10000):
    os.mkdir("d")
    os.chdir("d")' "$W/deep" || fail "cannot make 10,000 nested folders"
t0=$(date +%s.%N)
timeout 60 "$parse" --no-progress "$W/deep" >"$W/out" 2>"$W/err"
rc=$?
t=$(echo "$(date +%s.%N) - $t0" | bc)
[ "$rc" -eq 1 ] && grep -q 'nested more than 256 folders deep; not walked' "$W/err" &&
    grep -q '^pretrain_llama3.1_8b_bf16_8 ' "$W/out" && ok "10,000 nested folders: the run found, the depth refused (exit 1)" ||
    fail "deep: exit $rc: $(cut -c1-200 "$W/err" | head -3)"
[ "$(echo "$t < 3" | bc)" -eq 1 ] && ok "10,000 nested folders: ${t} s (linear, not 7 s)" || fail "deep: ${t} s"

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
