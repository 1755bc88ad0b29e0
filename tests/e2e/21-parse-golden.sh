#!/bin/sh
# 21-parse-golden.sh - golden tests of nemoperf-parse: tests/data/parse/<case>/{args,expected.out,expected.rc}.
# Each case runs from its own folder: nemoperf-parse $(args, one per line) and must print expected.out exactly
# and exit with expected.rc.  NP_GOLDEN_UPDATE=1 rewrites the expected files (review the diff before committing).
set -u
here=$(pwd)
P="$here/${NP_BIN:-bin}/nemoperf-parse"
fail=0; n=0
for c in tests/data/parse/*/; do
    [ -f "$c/args" ] || continue
    n=$((n + 1))
    name=$(basename "$c")
    out=$(mktemp); err=$(mktemp)
    # args: one argument per line (no word splitting, so paths with spaces work)
    ( cd "$c" && set -- && while IFS= read -r a || [ -n "$a" ]; do set -- "$@" "$a"; done < args &&
      "$P" --no-progress "$@" > "$out" 2> "$err"; echo $? > "$out.rc" )
    rc=$(cat "$out.rc")
    if [ "${NP_GOLDEN_UPDATE:-0}" = 1 ]; then
        cp "$out" "$c/expected.out"; echo "$rc" > "$c/expected.rc"
        echo "updated: $name (rc $rc)"
    elif cmp -s "$out" "$c/expected.out" && [ "$rc" = "$(cat "$c/expected.rc")" ]; then
        echo "ok: $name"
    else
        echo "FAIL: $name (rc $rc, want $(cat "$c/expected.rc"))"; diff "$c/expected.out" "$out" | head -20
        sed 's/^/  stderr: /' "$err" | head -5
        fail=$((fail + 1))
    fi
    rm -f "$out" "$out.rc" "$err"
done
echo "21-parse-golden: $n cases, $fail failed"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
