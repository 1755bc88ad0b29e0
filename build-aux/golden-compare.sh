#!/bin/sh
# golden-compare.sh - are two builds' outputs byte-identical?  Used for changes that must not change
# behaviour (issue 22, the house move): every tests/data/parse case in the four formats, the real and
# published logs as markdown, and `--print-config` / `--dry-run` (NeMo and synthetic workloads) of every row
# `nemoperf-launch --list` shows
# (masked: the launch time in folder names and "timestamp", and the checkout path the tools name in hints).
# Usage: golden-compare.sh BIN_A BIN_B   (folders holding nemoperf-parse and nemoperf-launch)
# Prints one line per difference and a summary; exit 0 when everything is identical, 1 otherwise.
set -u
[ $# -eq 2 ] || { echo "usage: $0 BIN_A BIN_B" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/golden-compare.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/stage" "$work/data"
# one data folder laid out as installed (recipes/ beside share/nemoperf's reference/, megatron-bridge/, packs/ ...),
# the same for both builds: NEMOPERF_DATADIR names one folder
ln -s "$root/recipes" "$work/data/recipes"
for d in "$root"/share/nemoperf/*; do ln -s "$d" "$work/data/$(basename "$d")"; done

# outputs BIN DEST: write every output of one build into DEST (one file per case, stdout+stderr+rc)
outputs() {
    bin=$(cd "$1" && pwd); dest=$2; mkdir -p "$dest"
    co=$(dirname "$bin")    # the checkout the tools name in hints ("run $co/setup"): masked
    for c in "$root"/tests/data/parse/*/; do
        [ -f "$c/args" ] || continue
        name=$(basename "$c")
        for f in table markdown csv json; do
            ( cd "$c" && set -- && while IFS= read -r a || [ -n "$a" ]; do set -- "$@" "$a"; done < args &&
              NEMOPERF_DATADIR="$work/data" "$bin/nemoperf-parse" --no-progress "$@" --format "$f" 2>&1; echo "rc=$?" ) \
                > "$dest/parse-$name-$f" 2>&1
        done
    done
    for d in real published; do
        ( cd "$root/tests/data" && NEMOPERF_DATADIR="$work/data" "$bin/nemoperf-parse" --no-progress --format markdown \
              --reference "$d" 2>&1; echo "rc=$?" ) > "$dest/markdown-$d" 2>&1
    done
    NEMOPERF_DATADIR="$work/data" "$bin/nemoperf-launch" --list --format json > "$dest/list.json" 2>&1
    python3 - "$dest/list.json" > "$work/rows" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    # Megatron-Bridge rows (they carry "container") have no MODEL_SIZE: "-" stands for none
    print("\t".join(str(r.get(k) or "-") for k in ("recipe", "size", "task", "dtype", "gpus", "gpu", "container")))
PY
    while IFS="	" read -r recipe size task dtype gpus gpu container; do
        key="$recipe-$size-$task-$dtype-$gpus-$gpu-$container"
        for opt in --print-config --dry-run --dry-run-synthetic; do
            w=nemo; [ "$opt" = --dry-run-synthetic ] && w=synthetic
            if [ "$recipe" = automodel ]; then set -- RECIPE=automodel MODEL="$size"
            elif [ "$container" != - ]; then set -- RECIPE="$recipe" CONTAINER="$container"
            else set -- RECIPE="$recipe" MODEL_SIZE="$size"; fi
            ( env -i PATH="$PATH" HOME="$work" STAGE_PATH="$work/stage" NEMOPERF_DATADIR="$work/data" "$@" TASK="$task" \
                  DTYPE="$dtype" JOB_TOTAL_GPUS="$gpus" GPU_TYPE="$gpu" WORKLOAD="$w" "$bin/nemoperf-launch" "${opt%-synthetic}" 2>&1; echo "rc=$?" ) \
                | sed -E "s|$co/|<checkout>/|g; s/_1[0-9]{9}/_<ts>/g; s/\"timestamp\": [0-9]+/\"timestamp\": <ts>/" > "$dest/launch-$key$opt" 2>&1
        done
    done < "$work/rows"
}
outputs "$1" "$work/a"
outputs "$2" "$work/b"
n=$(find "$work/a" -type f | wc -l)
diff -r "$work/a" "$work/b" > "$work/diff"; rc=$?
if [ $rc -eq 0 ]; then
    echo "golden-compare: $n outputs, all byte-identical"
else
    grep -E '^(diff|Only)' "$work/diff" | head -20 | sed 's/^/golden-compare: differs: /'
    grep -vE '^(diff|Only)' "$work/diff" | head -40
    echo "golden-compare: $n outputs, $(grep -cE '^(diff|Only)' "$work/diff") differ"
fi
[ $rc -eq 0 ]
