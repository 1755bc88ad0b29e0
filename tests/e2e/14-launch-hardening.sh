#!/bin/sh
# 14-launch-hardening.sh - issue 13 points 4-8 on the launch/setup side: '%' and non-UTF-8
# STAGE_PATHs refused up front (exit 2, the variable named, nothing written), stdout
# failures (/dev/full) exit 1, and messages that say what is wrong (STAGE_PATH a file, a
# symlink loop, a FIFO; long values keep their reason; NEMOPERF_DATADIR; MAX_STEPS and
# TIME_LIMIT bounds).  No cluster needed: everything here is refused before sbatch.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
setup=$bindir/nemoperf-setup
T=14-launch-hardening
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }

[ -x "$launch" ] && [ -x "$setup" ] || die "tools not built (make)"
unset RECIPE DTYPE GPUS_PER_NODE GPU_TYPE TIME_LIMIT MAX_STEPS ENABLE_PROFILE ENABLE_NCCLTRACE ENABLE_CHECKPOINT \
    LOAD_CHECKPOINT_PATH HF_TOKEN RUN_CONF_IMAGE NEMOPERF_DATADIR JOB_TOTAL_GPUS
W=$(mktemp -d "${TMPDIR:-/tmp}/np-harden.XXXXXX") || die "mktemp"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
export WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16

# refused NAME WANT-IN-STDERR [env...]: exit 2, message, nothing created under $W/s*
refused() {
    name=$1 want=$2
    shift 2
    env "$@" "$launch" >"$W/out" 2>"$W/err"
    rc=$?
    if [ "$rc" -eq 2 ] && grep -qF -- "$want" "$W/err" && [ -z "$(find "$W" -path "$W/s*/experiments" 2>/dev/null)" ]; then
        ok "$name: exit 2, '$want', nothing written"
    else
        fail "$name: exit $rc, stderr: $(cat "$W/err")"
    fi
}

# ---- 4: '%' in STAGE_PATH ------------------------------------------------------------------
mkdir -p "$W/s%j%x%u"
refused "STAGE_PATH with %" "contains '%', which Slurm reads as a file name pattern" STAGE_PATH="$W/s%j%x%u"

# ---- 5: non-UTF-8 STAGE_PATH ----------------------------------------------------------------
bad=$(printf '%s/s\377\376' "$W")
mkdir -p "$bad" || die "cannot make a non-UTF-8 folder name"
refused "non-UTF-8 STAGE_PATH" "STAGE_PATH: not valid UTF-8 (byte 0xff" STAGE_PATH="$bad"
[ -z "$(ls -A "$bad")" ] && ok "non-UTF-8: the folder is untouched" || fail "non-UTF-8: something written: $(ls -A "$bad")"
mkdir -p "$W/sok"
refused "non-UTF-8 RUN_CONF_IMAGE" "RUN_CONF_IMAGE: not valid UTF-8" STAGE_PATH="$W/sok" \
    RUN_CONF_IMAGE="$(printf '/x/\303(.sqsh')"
rmdir "$W/sok"

# ---- 6: stdout failures ---------------------------------------------------------------------
mkdir -p "$W/sd"
for mode in --dry-run --print-config --list --help --version; do
    STAGE_PATH="$W/sd" "$launch" $mode >/dev/full 2>"$W/err"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q 'cannot write to standard output: No space left on device' "$W/err" &&
        ok "launch $mode >/dev/full: exit 1 with the error" || fail "launch $mode >/dev/full: exit $rc: $(cat "$W/err")"
done
STAGE_PATH="$W/sd" "$setup" --dry-run --skip-hf --skip-image >/dev/full 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'cannot write .*No space left on device' "$W/err" && ok "setup --dry-run >/dev/full: exit 1" ||
    fail "setup --dry-run >/dev/full: exit $rc: $(cat "$W/err")"
rm -rf "$W/sd"

# ---- 8: messages that say what is wrong ---------------------------------------------------
: >"$W/file"
ln -s "$W/loop" "$W/loop"
mkfifo "$W/fifo"
refused "STAGE_PATH a file" "is a file, not a folder" STAGE_PATH="$W/file"
refused "STAGE_PATH a symlink loop" "symbolic link pointing back at itself" STAGE_PATH="$W/loop"
refused "STAGE_PATH a FIFO" "is a FIFO, not a folder" STAGE_PATH="$W/fifo"
refused "STAGE_PATH below a file" "a part of the path is a file" STAGE_PATH="$W/file/x"
long=$W$(python3 -c 'print("/abcdefgh" * 300)')
refused "a long STAGE_PATH" "abcdefgh: no such folder; allowed: an existing folder" STAGE_PATH="$long"
mkdir -p "$W/s1"
refused "NEMOPERF_DATADIR missing" "NEMOPERF_DATADIR=/nonexistent: No such file or directory" STAGE_PATH="$W/s1" \
    NEMOPERF_DATADIR=/nonexistent
refused "TIME_LIMIT beyond Slurm" "at most 2147483646 minutes" STAGE_PATH="$W/s1" TIME_LIMIT=9999999-00:00:00
STAGE_PATH="$W/s1" TIME_LIMIT=1491308-02:06:00 "$launch" --dry-run >"$W/out" 2>"$W/err" &&
    grep -q -- '--time=1491308-02:06:00' "$W/out" && ok "TIME_LIMIT at Slurm's bound accepted" ||
    fail "TIME_LIMIT=1491308-02:06:00: $(cat "$W/err")"
STAGE_PATH="$W/s1" MAX_STEPS=10000000 "$launch" --print-config >"$W/out" 2>"$W/err" &&
    grep -q '"max_steps": 10000000' "$W/out" && ok "MAX_STEPS=10000000 accepted, as the message allows" ||
    fail "MAX_STEPS=10000000: $(cat "$W/err")"
refused "MAX_STEPS above the bound" "MAX_STEPS=10000001: not an integer in range; allowed: 1 to 10000000" \
    STAGE_PATH="$W/s1" MAX_STEPS=10000001

# parse: a corrupt manifest is said to be corrupt, not missing
parse=$bindir/nemoperf-parse
mkdir -p "$W/myrun"
cp "$root/tests/data/scan/crlf.log" "$W/myrun/log-x.out" && printf '{"config": ' >"$W/myrun/nemoperf.json"
"$parse" "$W/myrun" >"$W/out" 2>&1
grep -q 'unidentified: .*its nemoperf.json is not a JSON manifest nemoperf can read, no pretrain_' "$W/out" &&
    ! grep -q 'no manifest' "$W/out" &&
    ok "parse: a corrupt manifest is named as unreadable, not as missing" || fail "parse corrupt manifest: $(cat "$W/out")"

# parse: a report that cannot be written says why; a FIFO argument is not "no log files"
mkdir -p "$W/named/pretrain_llama3.1_8b_bf16_8"
cp "$root/tests/data/scan/crlf.log" "$W/named/pretrain_llama3.1_8b_bf16_8/log-x.out"
"$parse" "$W/named" >/dev/full 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'cannot write the report to standard output: No space left on device' "$W/err" &&
    ok "parse >/dev/full: exit 1, 'No space left on device'" || fail "parse >/dev/full: exit $rc: $(cat "$W/err")"
"$parse" "$W/fifo" >/dev/null 2>"$W/err"
rc=$?
[ "$rc" -ne 0 ] && grep -q 'fifo: not a regular file or folder' "$W/err" && ! grep -q 'no log files matching' "$W/err" &&
    ok "parse FIFO: named as not a file or folder, nothing else" || fail "parse FIFO: exit $rc: $(cat "$W/err")"

# parse: an unreadable log is said to be unreadable, not "no training-step line" (as the
# cluster's unprivileged test user: root reads everything)
if [ "$(id -u)" -eq 0 ] && id nemoperf-test >/dev/null 2>&1 && command -v runuser >/dev/null; then
    chmod 755 "$W"
    mkdir -p "$W/unread/pretrain_llama3.1_8b_bf16_8"
    cp "$root/tests/data/scan/crlf.log" "$W/unread/pretrain_llama3.1_8b_bf16_8/log-x.out"
    chmod 000 "$W/unread/pretrain_llama3.1_8b_bf16_8/log-x.out"
    runuser -u nemoperf-test -- "$parse" "$W/unread" >"$W/out" 2>&1
    grep -q 'log-x.out: cannot open: Permission denied' "$W/out" && grep -q '1 log could not be read' "$W/out" &&
        ok "parse: an unreadable log is named as unreadable" || fail "parse unreadable: $(cat "$W/out")"
else
    echo "$T: skip: unreadable log (needs root and the cluster's user nemoperf-test)"
fi

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
