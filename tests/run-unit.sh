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
echo "unit: $((n - fail)) passed, $fail failed"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
