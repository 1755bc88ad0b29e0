#!/bin/sh
# 20-parse-cli.sh - nemoperf-parse as a user runs it: exit codes, formats, messages, --reference, progress.
set -u
P=${NP_BIN:-bin}/nemoperf-parse
T=$(mktemp -d /tmp/np-parse-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

mklog() { # dir exp last_step_time gbs [nsteps] [final]
    mkdir -p "$1"
    n=${5:-50}; fin=${6:-49}; i=0
    while [ $i -lt "$n" ]; do
        t=$3; [ $i -lt $((n - 1)) ] && t=$(awk -v x="$3" 'BEGIN{printf "%.4g", x*1.01}')
        printf 'Training epoch 0, iteration %d/%d | lr: 1e-05 | global_batch_size: %d | global_step: %d | peak_memory_usage: 70833405952 | memory_allocated: 1 | reduced_train_loss: 11.9 | train_step_timing in s: %s | consumed_samples: %d\n' \
            $i "$fin" "$4" $i "$t" $(((i + 1) * $4))
        i=$((i + 1))
    done > "$1/log-$2_42_0.out"
}

E="$T/experiments"
mklog "$E/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1744407969/pretrain_llama3.1_8b_bf16_8" pretrain_llama3.1_8b_bf16_8 12.27 128
mklog "$E/pretrain_llama3.1_8b_bf16_16/pretrain_llama3.1_8b_bf16_16_1744407970/pretrain_llama3.1_8b_bf16_16" pretrain_llama3.1_8b_bf16_16 12.3 256

# table (default), exit 0
out=$("$P" "$E" 2>"$T/err"); rc=$?
[ $rc -eq 0 ] && ok "all ok -> exit 0" || bad "exit $rc for an all-ok tree"
echo "$out" | grep -q '^EXPERIMENT' && echo "$out" | grep -q 'pretrain_llama3.1_8b_bf16_16 .* 170500 ' \
    && ok "table shows 170500 tok/s" || bad "table: $out"
[ -s "$T/err" ] && bad "stderr not empty when piped: $(cat "$T/err")" || ok "nothing on stderr when piped"

# markdown layout of the seed
"$P" -f markdown "$E" > "$T/md"
printf '%s\n' 'Llama 3.1 8b BF16 | 8x H100 GPUs | 16x H100 GPUs |' '---|---|---|' \
    'Training step time (seconds per step) | 12.27 | 12.3 |' 'Throughput in tokens per second | 85459 | 170500 |' > "$T/want"
head -4 "$T/md" | cmp -s - "$T/want" && ok "markdown header and rows as the seed" || { bad "markdown:"; cat "$T/md"; }

# json is valid and numbers are numbers
"$P" -f json "$E" > "$T/json"
python3 - "$T/json" <<'PY' && ok "json shape" || bad "json shape"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"runs", "errors", "schema_version"} and d["schema_version"] == 3
r = d["runs"][0]
for k in ["path","experiment","recipe","model_size","dtype","gpus","gpu_type","seq_len","global_batch_size","step",
          "steps_seen","complete","last_step_time_s","window","last_tokens_per_s","last_tokens_per_s_per_gpu",
          "model_flops_per_sample","last_model_tflops_per_gpu","last_mfu_percent","train_tokens","last_days_to_train",
          "steady","peak_memory_bytes","loss","status"]:
    assert k in r, k
assert isinstance(r["gpus"], int) and isinstance(r["last_tokens_per_s"], float) and r["status"] == "ok"
assert {"first","last","count","mean_s","median_s","stdev_s","min_s","max_s"} <= set(r["window"])
PY

# csv header + one line per run
[ "$("$P" -f csv "$E" | wc -l)" -eq 3 ] && ok "csv: header + 2 rows" || bad "csv rows"

# --reference: PASS at published speed, FAIL when 10 % slower
"$P" --reference "$E" | grep -q PASS && ok "--reference PASS" || bad "--reference PASS"
mklog "$T/slow/pretrain_llama3.1_8b_fp8_8" pretrain_llama3.1_8b_fp8_8 10.5 128
"$P" --reference "$T/slow" > "$T/out"; rc=$?
[ $rc -eq 1 ] && grep -q FAIL "$T/out" && ok "--reference FAIL -> exit 1" || bad "reference fail rc=$rc $(cat "$T/out")"
"$P" --reference --tolerance 15 "$T/slow" >/dev/null && ok "--tolerance 15 passes it" || bad "--tolerance"

# a not-ok run -> exit 1
mklog "$T/inc/pretrain_llama3.1_8b_bf16_8" pretrain_llama3.1_8b_bf16_8 12.27 128 20 49
"$P" "$T/inc" > "$T/out"; rc=$?
[ $rc -eq 1 ] && grep -q incomplete "$T/out" && ok "incomplete -> exit 1" || bad "incomplete rc=$rc"

# nothing found -> exit 1 with a message
mkdir -p "$T/empty"
"$P" "$T/empty" > /dev/null 2>"$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no log files matching '\*.out' found" "$T/err" && ok "no logs -> exit 1 + message" \
    || bad "no logs: rc=$rc $(cat "$T/err")"

# usage errors -> exit 2, naming the option
for args in "--format xml" "--window 0" "--steps 9-3" "--gpus abc" "--dtype fp16" "--gpu v100" "--tolerance -1" "--bogus" \
    "--verdict best" "--group --format markdown"; do
    # shellcheck disable=SC2086
    "$P" $args "$E" > /dev/null 2>"$T/err"; rc=$?
    opt=${args%% *}
    [ $rc -eq 2 ] && grep -q -- "$opt" "$T/err" && ok "usage: $args -> 2" || bad "usage: $args rc=$rc $(cat "$T/err")"
done

# --slurm with a bad scheduler setting: a usage error before anything is read
SLURM_SUBMIT=bogus "$P" --slurm "$E" > "$T/out" 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'SLURM_SUBMIT=bogus' "$T/err" && [ ! -s "$T/out" ] && ok "--slurm: bad SLURM_SUBMIT -> 2" ||
    bad "--slurm bad SLURM_SUBMIT: rc=$rc $(cat "$T/err")"
SLURM_SUBMIT=rest SLURMRESTD_URL= "$P" --slurm "$E" > /dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'needs SLURMRESTD_URL' "$T/err" && ok "--slurm: rest without a URL -> 2" ||
    bad "--slurm rest without URL: rc=$rc $(cat "$T/err")"

# a log file given directly, any name, with options for identity
cp "$E/pretrain_llama3.1_8b_bf16_8/pretrain_llama3.1_8b_bf16_8_1744407969/pretrain_llama3.1_8b_bf16_8/log-pretrain_llama3.1_8b_bf16_8_42_0.out" "$T/my.log"
"$P" -f csv --recipe llama3.1 --size 8b --dtype bf16 --gpus 8 "$T/my.log" | grep -q ',85458.5' \
    && ok "file given directly + identity options" || bad "direct file"

# unreadable path reported, scan goes on
"$P" "$E" "$T/nope" > /dev/null 2>"$T/err"; rc=$?
grep -q "nope: No such file or directory" "$T/err" && ok "missing path reported" || bad "missing path: $(cat "$T/err")"

# progress: on a terminal (script(1) gives one) after NEMOPERF_PROGRESS_AFTER seconds, never when piped (2000
# folders: a walk that ends before the progress thread first looks shows none, rightly; under load 300 did)
if command -v script >/dev/null 2>&1; then
    i=0; while [ $i -lt 2000 ]; do mkdir -p "$T/many/r$i"; printf 'Step 1: train_step_timing in s=1.5\n' > "$T/many/r$i/x.out"; i=$((i + 1)); done
    NEMOPERF_PROGRESS_AFTER=0 script -qec "$P -j 1 -f csv '$T/many' > /dev/null" /dev/null > "$T/tty" 2>&1
    grep -q 'nemoperf-parse: [0-9]*/[0-9]*+* folders' "$T/tty" && ok "progress on a terminal" \
        || bad "no progress on a terminal: $(cat -v "$T/tty" | head -3)"
    NEMOPERF_PROGRESS_AFTER=0 "$P" -f csv "$E" 2>"$T/err" >/dev/null
    [ -s "$T/err" ] && bad "progress printed when not a terminal" || ok "no progress when piped"
fi

# the order of the rows does not depend on the thread count
"$P" -j 1 -f csv "$T" > "$T/j1" 2>/dev/null; "$P" -j 7 -f csv "$T" > "$T/j7" 2>/dev/null
cmp -s "$T/j1" "$T/j7" && [ "$(wc -l < "$T/j1")" -gt 300 ] && ok "-j 1 and -j 7 give the same rows in the same order" \
    || bad "-j 1 / -j 7 differ"

# --help / --version
"$P" --help | grep -q 'usage: nemoperf-parse' && ok "--help" || bad "--help"
"$P" --version | grep -q '^nemoperf-parse [0-9]' && ok "--version" || bad "--version"

# --plot that applies to none of the runs (a profile run alone: a sweep shows benchmark runs): exit 2, each run's
# reason, no file (never exit 0 with nothing drawn)
"$P" --plot "$T/none.png" tests/data/parse/kinds/in/pretrain_llama3.1_8b_bf16_8_nsys >/dev/null 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && [ ! -e "$T/none.png" ] && grep -q "no run can be drawn.*profile run" "$T/e" \
    && ok "--plot of a profile run alone: exit 2, says why per run" || bad "--plot none: exit $rc: $(cat "$T/e")"

# issue 24: an empty folder is named; a --plot folder that cannot be written is said before any report
mkdir -p "$T/empty"
"$P" "$T/empty" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 1 ] && grep -q "no log files matching '\*.out' found in $T/empty" "$T/e" && ok "empty folder named" ||
    bad "empty folder: exit $rc: $(cat "$T/e")"
"$P" --plot "$T/nodir/x.png" "$E" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && [ ! -s "$T/o" ] && grep -q "cannot write into $T/nodir" "$T/e" && ok "--plot into a missing folder: exit 2 first" ||
    bad "--plot /nodir: exit $rc, stdout $(wc -c <"$T/o") bytes: $(cat "$T/e")"

# an option typo (issue 24): one line with the option meant, exit 2, no page of usage
"$P" --stpes 1-3 "$E" >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && [ "$(cat "$T/e")" = "nemoperf-parse: unknown option '--stpes'; did you mean --steps? (see --help)" ] &&
    [ ! -s "$T/o" ] && ok "--stpes: did you mean --steps?" || bad "--stpes: exit $rc: $(cat "$T/e")"
L=$(dirname "$P")/nemoperf-launch
"$L" --dryrun >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && grep -q "did you mean --dry-run?" "$T/e" && [ "$(wc -l <"$T/e")" -eq 1 ] &&
    ok "launch --dryrun: did you mean --dry-run?" || bad "launch --dryrun: exit $rc: $(cat "$T/e")"
"$P" --format >"$T/o" 2>"$T/e"; rc=$?
[ $rc -eq 2 ] && grep -q "option '--format' needs an argument" "$T/e" && ok "--format without a value: said" ||
    bad "--format: exit $rc: $(cat "$T/e")"

# libraries opened on first use (src/util/dynlib.c): a parse without --plot opens neither cairo nor libpq nor
# libcurl (they cost 23 ms of every start); --plot opens cairo and draws (glibc's LD_DEBUG names what is loaded)
LD_DEBUG=libs "$P" --format json "$E" >/dev/null 2>"$T/ld"; rc=$?
if grep -q "find library=libc.so.6" "$T/ld"; then
    [ $rc -eq 0 ] && ! grep -Eq "find library=lib(cairo|fontconfig|pq|curl)[.]" "$T/ld" &&
        ok "a parse opens no plot, PostgreSQL or HTTP library" ||
        bad "plain parse (exit $rc) opened: $(grep -Eo "find library=lib(cairo|fontconfig|pq|curl)[^ ]*" "$T/ld" | tr '\n' ' ')"
    LD_DEBUG=libs "$P" --plot "$T/lazy.png" "$E" >/dev/null 2>"$T/ld"; rc=$?
    [ $rc -eq 0 ] && grep -q "find library=libcairo.so.2" "$T/ld" && [ -s "$T/lazy.png" ] &&
        ok "--plot opens cairo when it draws" || bad "--plot: exit $rc, $(ls -l "$T/lazy.png" 2>&1)"
else
    ok "LD_DEBUG says nothing here (not glibc?): the lazy libraries are not checked"
fi

echo "20-parse-cli: $fail failed"
[ $fail -eq 0 ]
