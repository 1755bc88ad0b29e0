#!/bin/sh
# run-unit.sh - run every Check suite binary in a folder; fail if any fails.
set -u
dir=${1:-build/tests}
fail=0; n=0
for t in "$dir"/check_*; do
    [ -x "$t" ] || continue
    case $t in *.o|*.d) continue ;; esac
    n=$((n + 1))
    echo "== ${t##*/}"
    CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60} "$t" || fail=$((fail + 1))
done
# the in-container NeMo driver: it compiles, and keeps its contract with a strict stand-in of NeMo
n=$((n + 1))
echo "== nemoperf_nemo.py (py_compile, tests/driver/test_driver.py, tests/driver/mutate.py)"
tmpc=$(mktemp -d "${TMPDIR:-/tmp}/np-pyc.XXXXXX")
if PYTHONPYCACHEPREFIX="$tmpc" python3 -m py_compile share/nemoperf/driver/nemoperf_nemo.py &&
    python3 -B tests/driver/test_driver.py && python3 -B tests/driver/mutate.py; then :; else fail=$((fail + 1)); fi
rm -rf "$tmpc"
# the tree's shape (docs/architecture.md): layers one way, no include cycles; the check fails on planted ones
n=$((n + 1))
echo "== layers (build-aux/layers.py, tests/layers-test.sh)"
sh tests/layers-test.sh || fail=$((fail + 1))
# Megatron-Bridge reference data: every published row of every container version (tests/mbridge/)
n=$((n + 1))
echo "== tests/mbridge/test_reference.py"
python3 -B tests/mbridge/test_reference.py || fail=$((fail + 1))
# ... and the rank commands of the 26.08/26.06 rows against the releases' argparse lists (tests/data/contract/)
n=$((n + 1))
echo "== tests/mbridge/test_contract.py"
python3 -B tests/mbridge/test_contract.py || fail=$((fail + 1))
# what the user reads is current: options (code, --help, man, completion), environment (code, typo checker,
# docs/environment.md, --help, man), the README's PATH, no internal references or machine paths in the docs
n=$((n + 1))
echo "== tests/docs/test_current.py"
python3 -B tests/docs/test_current.py || fail=$((fail + 1))
# the mutants of `make mutate` still match the code they mutate (tests/mutants/*.tsv: a moved line names itself)
n=$((n + 1))
echo "== build-aux/mutate.py --check"
python3 -B build-aux/mutate.py --check || fail=$((fail + 1))
for d in tests/mutants/fresh*/; do # the samples written apart from the tests: their texts still in the code
    MUTATE_DATA=${d%/} python3 -B build-aux/mutate.py --check || fail=$((fail + 1))
done
echo "unit: $((n - fail)) passed, $fail failed"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
