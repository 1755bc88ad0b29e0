#!/bin/sh
# layers-test.sh - build-aux/layers.py holds the tree's shape: it passes on the tree, and fails on a
# copy with a planted include cycle, an include of a layer above, and an include across one layer.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/np-layers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "layers-test: ok: $*"; }
bad() { echo "layers-test: FAIL: $*"; fail=$((fail + 1)); }

python3 "$root/build-aux/layers.py" "$root" > "$T/out" 2>&1 && ok "the tree: $(cat "$T/out")" \
    || { bad "the tree does not hold its shape:"; cat "$T/out"; }

# plant NAME FILE LINE EXPECT: copy the tree, append LINE to FILE, layers.py must fail saying EXPECT
plant() {
    rm -rf "$T/tree" && mkdir -p "$T/tree" && cp -R "$root/src" "$root/include" "$T/tree/" || return 1
    printf '%s\n' "$3" >> "$T/tree/$2"
    if python3 "$root/build-aux/layers.py" "$T/tree" > "$T/out" 2>&1; then
        bad "$1: layers.py passed"
    elif grep -q "$4" "$T/out"; then
        ok "$1: $(grep "$4" "$T/out" | head -1)"
    else
        bad "$1: failed without saying '$4':"; cat "$T/out"
    fi
}
# util/error.h is included by util/diag.h: including diag.h back closes a cycle inside one layer
plant "a planted cycle" include/nemoperf/util/error.h '#include "nemoperf/util/diag.h"' "include cycle between modules: util/diag <-> util/error"
plant "an include of a layer above" src/model/flops.c '#include "nemoperf/launch/config.h"' "model may not depend on launch (a layer above it)"
plant "an include across one layer" src/parse/scan.c '#include "nemoperf/setup/stage.h"' "parse may not depend on setup (same layer)"
plant "a header no module owns" src/util/diag.c '#include "nemoperf/util/nothere.h"' "which no module owns"
[ "$fail" -eq 0 ] && echo "layers-test: all checks passed"
[ "$fail" -eq 0 ]
