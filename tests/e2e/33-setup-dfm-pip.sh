#!/bin/sh
# 33-setup-dfm-pip.sh - RECIPE=wan2.1 ./setup's pip job: a real one-node `sbatch --wait` job on the local Slurm
# cluster installs diffusers==0.35.1, easydict, imageio, imageio-ffmpeg into $STAGE_PATH/pip/wan2.1-14b.
# Stand-ins (no container runtime, no PyPI here): a stub `srun` on the exported PATH plays pyxis (records and
# checks the image, drops the container flags, runs the real srun) and puts a stub `python3` first on the step's
# PATH that plays `python3 -m pip install --target DIR PKG...` (one folder and .dist-info a package; fails when
# NP_STUB_PIP_FAIL is set).  Checks: a failing job leaves no final folder (exit 1, job and log named), the
# successful one renames the folder into place, a second run submits nothing, and the launch finds it staged.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cluster="$root/tests/slurm/cluster"
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
setup=$bindir/nemoperf-setup
launch=$bindir/nemoperf-launch
unset NEMOPERF_DATADIR RECIPE MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN TASK NP_STUB_PIP_FAIL
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
[ -x "$setup" ] || { echo "FAIL: $setup is not built (run make)"; exit 1; }
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SRUN_[A-Za-z0-9_]*\)=.*/\1/p'); do
    [ "$v" = SLURM_CONF ] || unset "$v"
done
"$cluster" status >/dev/null 2>&1 || "$cluster" up >/dev/null || { echo "FAIL: cluster up failed"; exit 1; }
eval "$("$cluster" env)" || { echo "FAIL: cluster env failed"; exit 1; }
real_srun=$(command -v srun) || { echo "FAIL: srun not found"; exit 1; }
W=$NP_CLUSTER_DIR/e2e/33-setup-dfm-pip
rm -rf "$W"
mkdir -p "$W/stubs" "$W/py" || exit 1
{
    echo '#!/bin/sh'
    echo '# stand-in for pyxis, tests only: records and checks the image, drops the container flags'
    echo 'img='
    echo 'for a do'
    echo '    shift'
    echo '    case $a in'
    echo '    --container-image=*) img=${a#*=} ;;'
    echo '    --container-mounts=* | --no-container-mount-home) ;;'
    echo '    *) set -- "$@" "$a" ;;'
    echo '    esac'
    echo 'done'
    echo 'echo "pyxis image=$img" >>"$NP_STANDIN_LOG"'
    echo '[ -s "$img" ] || { echo "stub pyxis: no image $img" >&2; exit 1; }'
    echo "PATH='$W/py':\$PATH exec '$real_srun' \"\$@\""
} >"$W/stubs/srun"
cat >"$W/py/python3" <<'PY'
#!/bin/sh
# stand-in for the container's `python3 -m pip install --target DIR PKG...` (no PyPI here)
[ "$1 $2 $3" = "-m pip install" ] || { echo "stub python3: unexpected $*" >&2; exit 2; }
shift 3
dir= pkgs=
while [ $# -gt 0 ]; do
    case $1 in --target) dir=$2; shift ;; --*) ;; *) pkgs="$pkgs $1" ;; esac
    shift
done
echo "pip install --target $dir$pkgs" >>"$NP_STANDIN_LOG"
[ -n "${NP_STUB_PIP_FAIL:-}" ] && { mkdir -p "$dir/half"; echo "ERROR: No matching distribution (stub)" >&2; exit 1; }
for p in $pkgs; do
    n=${p%%==*}
    mkdir -p "$dir/$n" "$dir/$n-${p#*==}.dist-info" && : >"$dir/$n/__init__.py" || exit 1
done
PY
chmod 755 "$W/stubs/srun" "$W/py/python3"
export PATH="$W/stubs:$PATH" NP_STANDIN_LOG="$W/standin.log"
S="$W/stage"
mkdir -p "$S" && echo 'hsqs stand-in' >"$S/nvidia+nemo+25.11.sqsh"
run() { # NAME [VAR=VALUE...] [-- OPTION...]
    name=$1; shift; vars=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars="$vars $1"; shift; done
    [ $# -gt 0 ] && shift
    env STAGE_PATH="$S" RECIPE=wan2.1 SBATCH_PARTITION=batch $vars "$setup" --skip-image --skip-hf "$@" \
        >"$W/$name.out" 2>"$W/$name.err"; rc=$?; }
P=$S/pip/wan2.1-14b

# the sources are staged by 32-setup-dfm.sh; here only the pip job: put stand-in checkouts in place
for r in DFM-9eaace14995a724c982fe53726a909be2edc93cb Megatron-Bridge-953aabf75c0500180dc14a6a76cf9e7e7c4baec7 \
    Megatron-LM-2d398b42fd4237fffb553109563d73ac099751c3 Automodel-a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5; do
    mkdir -p "$S/src/$r" && echo "${r##*-} x" >"$S/src/$r/.nemoperf-commit"
done

run dry -- --dry-run
grep -q "^# pip packages of wan2.1 14b" "$W/dry.out" && grep -q "pip install --no-cache-dir --disable-pip-version-check --target" "$W/dry.out" &&
    grep -q "diffusers==0.35.1.* .*easydict.* .*imageio.* .*imageio-ffmpeg" "$W/dry.out" && [ ! -e "$S/pip" ] &&
    ok "--dry-run shows the one-node pip job, creates nothing" || fail "dry run: $(cat "$W/dry.out" "$W/dry.err")"

run failing NP_STUB_PIP_FAIL=1
[ "$rc" -eq 1 ] && grep -q "the pip job [0-9]* of wan2.1 14b failed: sbatch exited with status 1 (see .*/logs/setup-pip_[0-9]*.out)" "$W/failing.err" &&
    [ ! -e "$P" ] && ok "a failing pip job: exit 1, job and log named, no $P" || fail "failing: rc $rc $(cat "$W/failing.err"); $(ls "$S/pip" 2>&1)"

run good
[ "$rc" -eq 0 ] && [ -f "$P/diffusers/__init__.py" ] && [ -d "$P/diffusers-0.35.1.dist-info" ] && [ -d "$P/imageio_ffmpeg" -o -d "$P/imageio-ffmpeg" ] &&
    [ ! -e "$P.partial" ] && grep -q "^pip      wan2.1 14b (installed by job [0-9]*)" "$W/good.out" &&
    ok "the pip job installs the four packages, renamed into place, no .partial" ||
    fail "good: rc $rc $(cat "$W/good.out" "$W/good.err"); $(ls -a "$S/pip" "$P" 2>&1)"
grep -q "pyxis image=$S/nvidia+nemo+25.11.sqsh" "$NP_STANDIN_LOG" && ok "the job ran in the staged nemo:25.11 image" ||
    fail "image: $(cat "$NP_STANDIN_LOG")"

n=$(grep -c "pip install" "$NP_STANDIN_LOG")
run again
[ "$rc" -eq 0 ] && grep -q "^pip      wan2.1 14b (already staged)" "$W/again.out" && [ "$(grep -c "pip install" "$NP_STANDIN_LOG")" -eq "$n" ] &&
    ok "a second run submits no job" || fail "again: $(cat "$W/again.out" "$W/again.err")"

env STAGE_PATH="$S" RECIPE=wan2.1 GPU_TYPE=gb200 "$launch" --dry-run >"$W/l.out" 2>"$W/l.err"
[ $? -eq 0 ] && ! grep -q "not staged" "$W/l.err" && grep -q "/pip/wan2.1-14b'" "$W/l.out" &&
    ok "the launch finds the checkouts and the pip folder staged, on PYTHONPATH" || fail "launch: $(cat "$W/l.err")"
[ "$fails" -eq 0 ] && echo "33-setup-dfm-pip: all ok" || { echo "33-setup-dfm-pip: $fails failure(s)"; exit 1; }
