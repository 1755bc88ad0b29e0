#!/bin/sh
# 12-launch-faults.sh - nemoperf-launch when sbatch fails or hangs (stub sbatch programs from
# tests/stubs on PATH, for this test only): a clear error, exit 1, and the experiment
# folder kept with its script and a manifest marked not submitted, with sbatch's message.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
launch=$bindir/nemoperf-launch
T=12-launch-faults
fails=0
fail() { echo "$T: FAIL: $*" >&2; fails=$((fails + 1)); }
die() { echo "$T: FAIL: $*" >&2; exit 1; }
ok() { echo "$T: ok: $*"; }

[ -x "$launch" ] || die "$launch not built (make)"
unset RECIPE DTYPE GPUS_PER_NODE GPU_TYPE TIME_LIMIT ENABLE_PROFILE ENABLE_NCCLTRACE ENABLE_CHECKPOINT \
    LOAD_CHECKPOINT_PATH HF_TOKEN RUN_CONF_IMAGE NEMOPERF_SBATCH_TIMEOUT
W=$(mktemp -d "${TMPDIR:-/tmp}/np-faults.XXXXXX") || die "mktemp"
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/stage" "$W/fail" "$W/hang" || die "mkdir"
# copies, so the stubs run whatever file modes a checkout gave them
cp "$root/tests/stubs/sbatch-fail/sbatch" "$W/fail/sbatch" && cp "$root/tests/stubs/sbatch-hang/sbatch" "$W/hang/sbatch" &&
    chmod 755 "$W/fail/sbatch" "$W/hang/sbatch" || die "cannot copy the stubs"
export STAGE_PATH="$W/stage" WORKLOAD=synthetic MODEL_SIZE=8b DTYPE=bf16 MAX_STEPS=5

mfield() { sed -n "s/^ *\"$2\": \(.*\)$/\1/p" "$1" | head -1 | sed 's/,$//'; }

# check_kept LABEL COUNT ERRPIECE: COUNT folders, each with script + unsubmitted manifest
check_kept() {
    mans=$(find "$W/stage/experiments" -name nemoperf.json 2>/dev/null | sort)
    got=$(printf '%s' "$mans" | grep -c .)
    [ "$got" -eq "$2" ] || fail "$1: $got manifests, want $2"
    printf '%s\n' "$mans" | while IFS= read -r m; do
        [ -n "$m" ] || continue
        d=${m%/nemoperf.json}
        [ "$(mfield "$m" submitted)" = false ] || echo "$1: $m: submitted is not false" >>"$W/bad"
        [ "$(mfield "$m" job_id)" = null ] || echo "$1: $m: job_id is not null" >>"$W/bad"
        case $(mfield "$m" error) in *"$3"*) ;; *) echo "$1: $m: error lacks '$3': $(mfield "$m" error)" >>"$W/bad" ;; esac
        ls "$d"/sbatch_*.sh >/dev/null 2>&1 || echo "$1: no script kept in $d" >>"$W/bad"
        ls "$d"/.nemoperf.json.tmp.* >/dev/null 2>&1 && echo "$1: temporary manifest left in $d" >>"$W/bad"
    done
    if [ -s "$W/bad" ]; then
        while IFS= read -r l; do fail "$l"; done <"$W/bad"
        : >"$W/bad"
    else
        ok "$1: $2 folder(s) kept, manifest submitted:false with sbatch's message, script present"
    fi
}

# ---- sbatch refuses: a sweep of two, both recorded -------------------------------------
PATH="$W/fail:$PATH" JOB_TOTAL_GPUS=8,16 "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 1 ] || fail "failing sbatch: exit $rc, want 1"
grep -q 'submission failed: .*Job violates accounting/QOS policy' "$W/err" &&
    grep -q 'folder kept, marked not submitted' "$W/err" && ok "failing sbatch: clear error on stderr" ||
    fail "failing sbatch: stderr lacks sbatch's message: $(cat "$W/err")"
grep -q '^job ' "$W/out" && fail "failing sbatch: a job line was printed: $(cat "$W/out")"
check_kept "failing sbatch" 2 "Job violates accounting"

# ---- sbatch --test-only says the account is invalid: refused before any folder (issue 23) --
rm -rf "$W/stage/experiments"
PATH="$W/fail:$PATH" NP_STUB_MSG="Invalid account or account/partition combination specified" JOB_TOTAL_GPUS=8,16 \
    "$launch" >"$W/out" 2>"$W/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'can never run: .*Invalid account' "$W/err" && [ ! -e "$W/stage/experiments" ] &&
    ok "invalid account: refused before any folder (exit 2, nothing written)" ||
    fail "invalid account: exit $rc, $(find "$W/stage" -name nemoperf.json | wc -l) manifests: $(cat "$W/err")"

# ---- sbatch hangs: killed after NEMOPERF_SBATCH_TIMEOUT, its child too ------------------
rm -rf "$W/stage/experiments"
start=$(date +%s)
PATH="$W/hang:$PATH" NEMOPERF_SBATCH_TIMEOUT=2 NP_STUB_PIDFILE="$W/hang.pid" JOB_TOTAL_GPUS=8 "$launch" >"$W/out" 2>"$W/err"
rc=$?
took=$(($(date +%s) - start))
[ "$rc" -eq 1 ] || fail "hanging sbatch: exit $rc, want 1"
[ "$took" -le 6 ] && ok "hanging sbatch: gave up after ${took} s" || fail "hanging sbatch: took $took s with a 2 s timeout"
grep -q 'no answer within 2 s; killed it' "$W/err" && ok "hanging sbatch: clear error on stderr" ||
    fail "hanging sbatch: stderr: $(cat "$W/err")"
check_kept "hanging sbatch" 1 "timed out"
if [ -s "$W/hang.pid" ]; then
    pid=$(cat "$W/hang.pid")
    sleep 0.3
    if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
        fail "the hung sbatch's child $pid is still running"
        kill "$pid" 2>/dev/null
    else
        ok "the hung sbatch's child was killed with it"
    fi
else
    fail "hang stub did not record its child"
fi

if [ "$fails" -gt 0 ]; then
    echo "$T: $fails check(s) failed" >&2
    exit 1
fi
echo "$T: all checks passed"
