#!/bin/sh
# run-integration.sh - run tests/e2e/*.sh (golden and cluster tests); fail if any fails.
set -u
fail=0; n=0
for t in tests/e2e/*.sh; do
    [ -f "$t" ] || continue
    n=$((n + 1))
    echo "== $t"
    sh "$t" || { fail=$((fail + 1)); echo "FAILED: $t"; }
done
echo "integration: $n scripts, $fail failed"
[ "$fail" -eq 0 ]
