#!/bin/sh
# run.sh - build the scanner's libFuzzer target with clang and fuzz it for a while.
# Usage: FUZZ_SECONDS=600 sh fuzz/run.sh   (from anywhere; works in fuzz/corpus-run/, which git ignores)
# Seeds are the golden logs of tests/data/scan/ and the real-log corpus tests/data/real/.  Exits non-zero when the fuzzer finds a crash, a leak,
# a sanitizer report or a hang; the reproducer is left in fuzz/corpus-run/artifacts/.
set -eu
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
CLANG=${CLANG:-clang}
run=fuzz/corpus-run
mkdir -p "$run/corpus" "$run/artifacts"
cp tests/data/scan/*.log tests/data/real/*.log "$run/corpus/"

# A dictionary of the tokens the scanner keys on helps the mutator reach deep paths.
cat >"$run/scan.dict" <<'EOF'
"train_step_timing in s"
"train_step_timing in s: "
"train_step_timing in s="
"Training epoch 0, iteration "
"reduced_train_loss"
"global_step"
"global_batch_size"
"consumed_samples"
"peak_memory_usage"
"TFLOPS_per_GPU"
"Epoch 0: "
"Step 12: "
"elapsed time per iteration (ms): "
"throughput per GPU (TFLOP/s/GPU): "
" iteration       50/      50 | "
"lm loss: "
"grad norm: "
"number of nan iterations: "
"global batch size: "
"consumed samples: "
"step 49 | "
"| tps "
"(13110.29/gpu)"
"mem 61.23 GiB"
"grad_norm"
"Global Checkpoint Save"
"Global Checkpoint Load"
" | "
"\x1b[32m"
"\x1b[0m"
"\x0d"
"\x0d\x0a"
"\x00"
"nan"
"inf"
"1.249e+03"
"7.496000E-06"
EOF

# Small line limit so the "line too long" paths are reached with small inputs.
# shellcheck disable=SC2046
"$CLANG" -g -O1 -std=c11 -D_GNU_SOURCE -DSCAN_LINE_MAX=4096 -Iinclude \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -o "$run/scan_fuzz" fuzz/scan_fuzz.c src/error.c src/diag.c \
    $(pkg-config --cflags --libs libpcre2-8) -lpthread -lm

echo "fuzz/run.sh: fuzzing the scanner for ${FUZZ_SECONDS}s" >&2
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$run/scan_fuzz" -max_total_time="$FUZZ_SECONDS" -timeout=20 -rss_limit_mb=4096 -max_len=131072 \
    -dict="$run/scan.dict" -artifact_prefix="$run/artifacts/" -print_final_stats=1 "$run/corpus"
