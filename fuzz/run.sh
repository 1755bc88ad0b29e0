#!/bin/sh
# run.sh - build the libFuzzer targets (the scanner, the AutoModel log reader, a whole run folder, the readers of
# other programs' output) with clang and fuzz them a while.
# Usage: FUZZ_SECONDS=600 sh fuzz/run.sh   (from anywhere; works in fuzz/corpus-run/, which git ignores)
# FUZZ_AMLOG_SECONDS, FUZZ_RUN_SECONDS, FUZZ_NCCLT_SECONDS, FUZZ_INPUT_SECONDS and FUZZ_SYSTEM_SECONDS (each
# FUZZ_SECONDS / 5 by default) time the others.
# Seeds come from the test data (each target says which).  Exits non-zero when a fuzzer finds a crash, a leak,
# a sanitizer report or a hang; the reproducer is left in fuzz/corpus-run/artifacts/.
set -eu
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-600}
CLANG=${CLANG:-clang}

# build NAME [cc arguments...]: "$run/NAME", a libFuzzer target on ASan+UBSan.
build() {
    _n=$1
    shift
    "$CLANG" -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined -o "$run/$_n" "$@" -lpthread -lm
}

# fuzz NAME WHAT SECONDS MAX_LEN [libFuzzer options... corpus folder]: run "$run/NAME" for SECONDS; a crash, a
# leak, a sanitizer report or a hang leaves its reproducer as "$run/artifacts/NAME-..." and fails (set -e).
fuzz() {
    _n=$1 _what=$2 _secs=$3 _len=$4
    shift 4
    echo "fuzz/run.sh: fuzzing $_what for ${_secs}s" >&2
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        "$run/$_n" -max_total_time="$_secs" -timeout=20 -rss_limit_mb=4096 -max_len="$_len" \
        -artifact_prefix="$run/artifacts/$_n-" -print_final_stats=1 "$@"
}
run=fuzz/corpus-run
mkdir -p "$run/corpus" "$run/artifacts"
# The log scanner (fuzz/scan_fuzz.c), seeded with the golden logs of tests/data/scan/ and the real logs of tests/data/real/.
cp tests/data/scan/*.log tests/data/real/*.log "$run/corpus/"

# A dictionary of the tokens the scanner keys on helps the mutator reach deep paths.
cat >"$run/scan.dict" <<'EOF'
"train_step_timing in s"
"train_step_timing in s: "
"train_step_timing in s="
"Training epoch 0, iteration "
"reduced_train_loss"
"global_step"
"global_step: "
"global_step=4.000"
"nan.0"
"-inf."
"1.#QNAN"
"-1.#IND"
"13372.8/13364.7"
"| 81/43800 ["
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
build scan_fuzz -DSCAN_LINE_MAX=4096 fuzz/scan_fuzz.c src/util/error.c src/util/diag.c src/util/text.c src/util/fileio.c $(pkg-config --cflags --libs libpcre2-8 jansson)

fuzz scan_fuzz "the scanner" "$FUZZ_SECONDS" 131072 -dict="$run/scan.dict" "$run/corpus"

# The AutoModel benchmark log reader (src/parse/automodel_log.c), seeded with the golden logs of tests/data/amlog/.
FUZZ_AMLOG_SECONDS=${FUZZ_AMLOG_SECONDS:-$((FUZZ_SECONDS / 5))}
mkdir -p "$run/amlog-corpus"
for f in tests/data/amlog/*/*.err tests/data/amlog/*/*.out; do
    head -c 16384 "$f" >"$run/amlog-corpus/$(echo "$f" | tr / _)"
done
cat >"$run/amlog.dict" <<'EOF2'
"Rank 0 | Iteration "
" | num_label_tokens="
" | Max Memory Allocated: "
" GB | loss="
"Max iter time: "
" seconds"
"MFU: "
"Average iteration time: "
" (excluding first "
" warmup iterations)"
" (all "
" iterations)"
"Average MFU: "
"Total iteration time ("
" steps): "
"TFLOPs/GPU: "
"TFLOPS multiplier for PEFT: (2 + "
") / 3 = "
"GA steps: "
", DP size: "
", Local batch size: "
", Global batch size: "
"    iteration ......: ("
"    iteration_warmup ....: ("
"2026-04-17 10:00:01 | INFO | __main__ | "
"nan"
"inf"
"\x0d"
EOF2
# shellcheck disable=SC2046
build amlog_fuzz fuzz/amlog_fuzz.c src/parse/automodel_log.c src/parse/scan.c src/util/error.c src/util/diag.c src/util/text.c src/util/fileio.c $(pkg-config --cflags --libs libpcre2-8 jansson)
fuzz amlog_fuzz "the AutoModel log reader" "$FUZZ_AMLOG_SECONDS" 65536 -dict="$run/amlog.dict" "$run/amlog-corpus"

ALL_PKGS="libpcre2-8 jansson libcurl cairo fontconfig sqlite3 libpq" # what src/*/*.c links (the Makefile's PKGS and PKGS_DRAW)

# A whole run folder (fuzz/run_fuzz.c): folder name, nemoperf.json, log and batch output through np_parse_paths,
# np_parse_stream and every report format, with the shipped recipes and reference table; the JSON report must
# parse, every CSV record must have the header's fields, and rows rendered ahead must be np_report_run's bytes.
# Seeded with the folders of tests/data/parse/ (manifest-untrusted: fields of the wrong type, a duplicate key); a
# manifest that cannot be trusted must make its run invalid, naming why (issue 23).
FUZZ_RUN_SECONDS=${FUZZ_RUN_SECONDS:-$((FUZZ_SECONDS / 5))}
python3 fuzz/run-seeds.py run "$run/run-corpus"
cat >"$run/run.dict" <<'EOF3'
"\x0a@@\x0a"
"{\"config\": {\"recipe\": \"llama3\", \"model_size\": \"8b\", \"dtype\": \"fp8\", \"gpus\": 8}}"
"\"recipe\""
"\"model_size\""
"\"dtype\""
"\"gpus\""
"\"gpu_type\""
"\"system\""
"\"seq_len\""
"\"gbs\""
"\"max_steps\""
"\"task\""
"\"finetune\""
"\"packed_train\""
"\"workload\""
"\"synthetic\""
"\"state\""
"\"submitted\""
"\"job_id\""
"\"error\""
"\"profile\""
"\"nccltrace\""
"\"config\""
"\"config\": ["
"\"gpus\": \"8\""
"\"gpus\": 8.5"
"\"gpus\": -8"
"\"gpus\": 0"
"\"gpus\": 8, \"gpus\": 64"
"\"dtype\": 16"
"\"finetune\": []"
"pretrain_llama3_8b_fp8_8"
"pretrain_nemotron4_340b_bf16_256"
"finetune_llama3_70b_lora_fp8_8"
"automodel"
"gb200"
"h100"
"b200"
"9223372036854775807"
"-2147483648"
"1e308"
"Training epoch 0, iteration 49/49 | lr: 1e-05 | global_batch_size: 128 | global_step: 49 | reduced_train_loss: 7.5 | train_step_timing in s: 1.25 | consumed_samples: 6400"
"train_step_timing in s: "
"TFLOPS_per_GPU: "
"CUDA out of memory"
"NCCL error"
"Traceback (most recent call last):"
"DUE TO TIME LIMIT"
"CANCELLED"
"nan"
"\",\""
"\x0a"
EOF3
# shellcheck disable=SC2046,SC2086
build run_fuzz fuzz/run_fuzz.c src/[!c]*/*.c $(pkg-config --cflags --libs $ALL_PKGS)
fuzz run_fuzz "whole run folders" "$FUZZ_RUN_SECONDS" 65536 -dict="$run/run.dict" "$run/run-corpus"

# The nccl-tests result reader (fuzz/nccltests_fuzz.c), seeded with the real outputs of tests/data/nccl-tests/.
FUZZ_NCCLT_SECONDS=${FUZZ_NCCLT_SECONDS:-$((FUZZ_SECONDS / 5))}
mkdir -p "$run/nccltests-corpus"
cp tests/data/nccl-tests/*.out "$run/nccltests-corpus/"
cat >"$run/nccltests.dict" <<'EOF5'
"#  out-of-place  in-place"
"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
"# size count type time algbw busbw error time algbw busbw error"
"# bytes N type op time algbw busbw res time algbw busbw res"
"# size count type redop root time algbw busbw #wrong i_min i_max i_p99 i_cv% time algbw busbw #wrong i_min i_max i_p99 i_cv% timestamp"
"  1073741824     268435456     float     sum      -1   4550.2  235.98  441.59      0   4547.3  236.13  441.86      0"
"N/A"
"1e+06"
"# Out of bounds values : 0 OK"
"# Avg bus bandwidth    : 12.3"
"#  Rank  0 Group  0 Pid  12345 on       node1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3"
"# nccl-tests version 2.17.1 nccl-headers=22602 nccl-library=22602"
"# Collective test starting: all_reduce_perf"
"[1,0]<stdout>:"
"[0]"
"  0: "
"node01: "
"Test NCCL failure common.cu:1005 'unhandled system error'"
"2025-01-01 12:00:00"
"\x0d"
EOF5
build nccltests_fuzz fuzz/nccltests_fuzz.c src/parse/nccltests.c src/util/error.c src/util/diag.c src/util/text.c src/util/fileio.c $(pkg-config --cflags --libs jansson)
fuzz nccltests_fuzz "the nccl-tests reader" "$FUZZ_NCCLT_SECONDS" 65536 -dict="$run/nccltests.dict" "$run/nccltests-corpus"

# The readers of other programs' output (fuzz/input_fuzz.c): packed .npy files, sbatch/squeue output, slurmrestd
# replies for every API version, SLURMRESTD_URL, time limits.  Seeded from tests/data/npy and tests/data/rest.
FUZZ_INPUT_SECONDS=${FUZZ_INPUT_SECONDS:-$((FUZZ_SECONDS / 5))}
python3 fuzz/run-seeds.py input "$run/input-corpus"
# shellcheck disable=SC2046,SC2086
build input_fuzz fuzz/input_fuzz.c src/[!c]*/*.c $(pkg-config --cflags --libs $ALL_PKGS)
fuzz input_fuzz "the readers of .npy files, sbatch/squeue output and slurmrestd replies" "$FUZZ_INPUT_SECONDS" 65536 \
    "$run/input-corpus"

# The readers of a job's system snapshot and telemetry (fuzz/system_fuzz.c): nvidia-smi -q -x, host.txt,
# nvidia-smi --query-gpu CSV.  Seeded from tests/data/system.
FUZZ_SYSTEM_SECONDS=${FUZZ_SYSTEM_SECONDS:-$((FUZZ_SECONDS / 5))}
python3 fuzz/run-seeds.py system "$run/system-corpus"
# shellcheck disable=SC2046,SC2086
build system_fuzz fuzz/system_fuzz.c src/[!c]*/*.c $(pkg-config --cflags --libs $ALL_PKGS)
fuzz system_fuzz "the readers of nvidia-smi's XML and CSV and host.txt" "$FUZZ_SYSTEM_SECONDS" 262144 \
    "$run/system-corpus"
