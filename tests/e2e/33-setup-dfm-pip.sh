#!/bin/sh
# 33-setup-dfm-pip.sh - RECIPE=wan2.1 ./setup's pip job: a real one-node `sbatch --wait` job on the local Slurm
# cluster runs NVIDIA's two commands (`python3 -m pip install --upgrade diffusers==0.35.1`, `pip install easydict
# imageio imageio-ffmpeg`: DFM f8c1c09 README_perf_test.md:47-49) with real pip, into the prefix
# $STAGE_PATH/pip/wan2.1-14b, against the image's own packages.
# Stand-ins (no container runtime, no PyPI here): a stub `srun` on the exported PATH plays pyxis (records and
# checks the image and --container-writable, drops the container flags, runs the real srun) with a fresh copy of
# a virtual environment standing for the image's Python (tests/dfm/wheelhouse.py: numpy, Pillow, an old
# huggingface-hub, ...) first on the step's PATH as `python3`, and a folder of hand-made wheels standing for the
# index (PIP_NO_INDEX, PIP_FIND_LINKS); NP_STUB_PIP_FAIL makes that python3 fail.  Checks: a failing job leaves
# no final folder (exit 1, job and log named), the successful one holds exactly what pip adds or upgrades in the
# image (diffusers, huggingface-hub, easydict, imageio, imageio-ffmpeg; not numpy, Pillow, safetensors, requests:
# `pip install --target` would reinstall them), the image's environment is left alone, a second run submits
# nothing, an older --target folder is refused, and the launch puts <prefix>/site-packages on PYTHONPATH.
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
python3 "$root/tests/dfm/wheelhouse.py" "$W/wheels" && python3 -m venv "$W/image" &&
    "$W/image/bin/python3" -m pip install -q --no-index --find-links "$W/wheels/image" \
        numpy Pillow huggingface-hub safetensors requests filelock || { echo "FAIL: the image stand-in"; exit 1; }
{
    echo '#!/bin/sh'
    echo '# stand-in for pyxis, tests only: records and checks the image, drops the container flags; a fresh copy'
    echo '# of the image environment for each step (a writable container is discarded with its step)'
    echo 'img= rw=0'
    echo 'for a do'
    echo '    shift'
    echo '    case $a in'
    echo '    --container-image=*) img=${a#*=} ;;'
    echo '    --container-writable) rw=1 ;;'
    echo '    --container-mounts=* | --no-container-mount-home) ;;'
    echo '    *) set -- "$@" "$a" ;;'
    echo '    esac'
    echo 'done'
    echo 'echo "pyxis image=$img writable=$rw" >>"$NP_STANDIN_LOG"'
    echo '[ -s "$img" ] || { echo "stub pyxis: no image $img" >&2; exit 1; }'
    echo "c=\$(mktemp -d '$W/container.XXXXXX') && cp -a '$W/image' \"\$c/env\" || exit 1"
    echo "NP_CONTAINER_ENV=\$c/env PATH='$W/py':\$PATH '$real_srun' \"\$@\"; rc=\$?"
    echo 'rm -rf "$c"; exit $rc'
} >"$W/stubs/srun"
cat >"$W/py/python3" <<PY
#!/bin/sh
# stand-in for the container's python3: the image environment's copy, the index a folder of wheels
echo "python3 \$* PYTHONPATH=\${PYTHONPATH:-}" >>"\$NP_STANDIN_LOG"
[ -n "\${NP_STUB_PIP_FAIL:-}" ] && { echo "ERROR: No matching distribution (stub)" >&2; exit 1; }
PIP_NO_INDEX=1 PIP_FIND_LINKS='$W/wheels/index' exec "\$NP_CONTAINER_ENV/bin/python3" "\$@"
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
grep -q "^# pip packages of wan2.1 14b" "$W/dry.out" && grep -q -- "--container-writable sh -c" "$W/dry.out" &&
    grep -q -- "--prefix" "$W/dry.out" && ! grep -q -- "--target" "$W/dry.out" &&
    grep -q "nemoperf-pip .*wan2.1-14b.partial.* .*diffusers==0.35.1.* -- .*easydict.* .*imageio.* .*imageio-ffmpeg" "$W/dry.out" && [ ! -e "$S/pip" ] &&
    ok "--dry-run shows the one-node pip job (--prefix, --upgrade diffusers only), creates nothing" || fail "dry run: $(cat "$W/dry.out" "$W/dry.err")"

run failing NP_STUB_PIP_FAIL=1
[ "$rc" -eq 1 ] && grep -q "the pip job [0-9]* of wan2.1 14b failed: sbatch exited with status 1 (see .*/logs/setup-pip_[0-9]*.out)" "$W/failing.err" &&
    [ ! -e "$P" ] && ok "a failing pip job: exit 1, job and log named, no $P" || fail "failing: rc $rc $(cat "$W/failing.err"); $(ls "$S/pip" 2>&1)"

: >"$NP_STANDIN_LOG"
run good
got=$(cd "$P/site-packages" 2>/dev/null && ls -d *.dist-info | sort | tr '\n' ' ')
want="diffusers-0.35.1.dist-info easydict-1.13.dist-info huggingface_hub-0.35.3.dist-info imageio-2.37.0.dist-info imageio_ffmpeg-0.6.0.dist-info "
[ "$rc" -eq 0 ] && [ "$got" = "$want" ] && [ -f "$P/site-packages/diffusers/__init__.py" ] && [ ! -e "$P.partial" ] &&
    grep -q "^pip      wan2.1 14b (installed by job [0-9]*)" "$W/good.out" &&
    ok "the prefix holds what pip adds or upgrades in the image: $got(not numpy, Pillow, safetensors, requests)" ||
    fail "good: rc $rc, site-packages: $got; $(cat "$W/good.out" "$W/good.err"); $(ls -la "$P" 2>&1)"
grep -q "pyxis image=$S/nvidia+nemo+25.11.sqsh writable=1" "$NP_STANDIN_LOG" && ok "the job ran in the staged nemo:25.11 image, writable" ||
    fail "image: $(cat "$NP_STANDIN_LOG")"
grep -q "^python3 -m pip install .*--prefix $P.partial --upgrade diffusers==0.35.1 PYTHONPATH=\$" "$NP_STANDIN_LOG" &&
    grep -q "^python3 -m pip install .*--prefix $P.partial easydict imageio imageio-ffmpeg PYTHONPATH=$P.partial/.*-packages" "$NP_STANDIN_LOG" &&
    ok "NVIDIA's two commands, the second seeing the first's packages" || fail "commands: $(cat "$NP_STANDIN_LOG")"
"$W/image/bin/python3" -m pip list 2>/dev/null | grep -q "^huggingface-hub *0.20.0" && [ ! -e "$W/image/lib/"*/site-packages/diffusers ] &&
    ok "the image's own environment is left alone" || fail "the image: $("$W/image/bin/python3" -m pip list 2>&1)"

n=$(grep -c "pip install" "$NP_STANDIN_LOG")
run again
[ "$rc" -eq 0 ] && grep -q "^pip      wan2.1 14b (already staged)" "$W/again.out" && [ "$(grep -c "pip install" "$NP_STANDIN_LOG")" -eq "$n" ] &&
    ok "a second run submits no job" || fail "again: $(cat "$W/again.out" "$W/again.err")"

env STAGE_PATH="$S" RECIPE=wan2.1 GPU_TYPE=gb200 "$launch" --dry-run >"$W/l.out" 2>"$W/l.err"
[ $? -eq 0 ] && ! grep -q "not staged" "$W/l.err" && grep -q "/pip/wan2.1-14b/site-packages'" "$W/l.out" &&
    ok "the launch finds the checkouts and the pip prefix staged, its site-packages on PYTHONPATH" || fail "launch: $(cat "$W/l.err")"
mv "$P" "$W/kept" && mkdir -p "$P/diffusers" && run older
[ "$rc" -eq 1 ] && grep -q "$P holds no site-packages: an older layout (pip --target" "$W/older.err" &&
    ok "a folder of the older --target layout is refused, named" || fail "older: rc $rc $(cat "$W/older.err")"
rm -rf "$P" && mv "$W/kept" "$P"
[ "$fails" -eq 0 ] && echo "33-setup-dfm-pip: all ok" || { echo "33-setup-dfm-pip: $fails failure(s)"; exit 1; }
