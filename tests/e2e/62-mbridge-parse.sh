#!/bin/sh
# 62-mbridge-parse.sh - nemoperf-parse (and launch --list) on Megatron-Bridge runs as a user runs them: every 26.08 row as a run folder
# (manifest + log at the published speed) -> NVIDIA's 26.08 markdown in order, --reference PASS; options instead of
# a manifest; a slow run FAILs; bad options exit 2.  Stand-in: the logs are written here in Megatron-Bridge's
# format (train_utils.py's iteration and rank-0 lines), because no GPU can run the recipe on this machine.
set -u
P=${NP_BIN:-bin}/nemoperf-parse
T=$(mktemp -d "${TMPDIR:-/tmp}/np-mbparse.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "62-mbridge-parse: ok: $*"; }
bad() { echo "62-mbridge-parse: FAIL: $*"; fail=$((fail + 1)); }

# one run folder per published 26.08 run: nemoperf.json's "mbridge" object and a 50-iteration log
python3 - "$T/runs" <<'EOF' || { echo "62-mbridge-parse: FAIL: writing the runs"; exit 1; }
import csv, json, os, sys
out = sys.argv[1]
with open("share/nemoperf/reference/megatron-bridge/runs.tsv") as fh:
    table = csv.DictReader((ln for ln in fh if not ln.startswith("#")), delimiter="\t")
    rows = [r for r in table if r["container"] == "26.08"]
for k, r in enumerate(rows):
    d = os.path.join(out, "%02d_%s_%s_%s_%s" % (k, r["recipe"], r["dtype"], r["gpu_type"], r["gpus"]))
    os.makedirs(d)
    json.dump({"mbridge": {"recipe": r["recipe"], "dtype": r["dtype"], "gpu_type": r["gpu_type"],
                           "gpus": int(r["gpus"]), "container": "26.08"}}, open(os.path.join(d, "nemoperf.json"), "w"))
    seq, gbs, gpus = int(r["seq_len"]), int(r["gbs"]), int(r["gpus"])
    ms = 1000.0 * seq * gbs / (float(r["tokens_per_s_per_gpu"]) * gpus)
    with open(os.path.join(d, "log-mb_42_0.out"), "w") as f:
        for i in range(1, 51):
            f.write("Step Time : %.2fs GPU utilization: %.1fMODEL_TFLOP/s/GPU\n" % (ms / 1000, float(r["model_tflops_per_gpu"])))
            f.write(" [2026-11-25 21:00:%02d] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration "
                    "(ms): %.1f | learning rate: 1.000000E-04 | global batch size: %5d | lm loss: 1.050000E+01 | "
                    "loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of nan "
                    "iterations:   0 |\n" % (i % 60, i, 50, i * gbs, ms, gbs))

EOF

# markdown of the tree = the published 26.08 section (separator rows aside), in order
"$P" --container 26.08 --format markdown "$T/runs" > "$T/md" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && ok "markdown: exit 0" || bad "markdown: exit $rc: $(cat "$T/err")"
awk '/^## 26.08 NeMo Container/{p=1} p&&/^\[\^/{exit} p&&!/^\|---/' tests/data/mbridge/performance-summary.md \
    | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' > "$T/want"
grep -v '^|---|' "$T/md" > "$T/got"
if diff "$T/want" "$T/got" > "$T/diff"; then ok "markdown reproduces NVIDIA's 26.08 table, $(grep -c '^| DGX' "$T/got") rows in order"
else bad "markdown differs: $(head -20 "$T/diff")"; fi

# --reference: every run PASSes (tokens/s/GPU within 0.5 %), exit 0; JSON carries the figures
"$P" --container 26.08 --reference --format json "$T/runs" > "$T/json" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && ok "--reference: exit 0" || bad "--reference: exit $rc: $(cat "$T/err")"
python3 - "$T/json" <<'EOF' && ok "JSON: 18 runs, all PASS, DeepSeek V3 GB300 6288 tok/s/GPU, MFU vs 4900" || bad "JSON: $(head -c 400 "$T/json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 18, len(runs)
assert all(r["reference"]["result"] == "PASS" and r["status"] == "ok" for r in runs), [r for r in runs if r["reference"]["result"] != "PASS"]
ds = [r for r in runs if r["recipe"] == "deepseek_v3" and r["gpu_type"] == "gb300"][0]
assert abs(ds["steady"]["tokens_per_s_per_gpu"] - 6288) < 1 and (ds["window"]["first"], ds["window"]["last"]) == (35, 44)
assert abs(ds["steady"]["mfu_percent"] - 100 * ds["steady"]["model_tflops_per_gpu"] / 4900) < 0.01
assert ds["reference"]["tolerance_percent"] == 0.5 and ds["family"] == "mbridge"
EOF

# no options: the manifests say which runs are Megatron-Bridge's (decided per run in the one walk) -> the same
# report as with --container; a tree mixing them with a NeMo run reports both, each in its own layout
"$P" --format markdown "$T/runs" > "$T/md0" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && cmp -s "$T/md" "$T/md0" && ok "no options: the manifests route every run, markdown identical to --container 26.08" \
    || bad "no options: exit $rc: $(diff "$T/md" "$T/md0" | head -5) $(cat "$T/err")"
mkdir "$T/mixed"
cp -r "$T/runs"/00_* "$T/runs"/05_* "$T/mixed/"
cp -r tests/data/parse/gb200-no-identity/in/pretrain_llama3_8b_fp8_8 "$T/mixed/"
# one run record for every family: one table (one header), one CSV header, one JSON envelope and key set
out=$("$P" "$T/mixed" 2>"$T/err"); rc=$?
[ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^EXPERIMENT ')" -eq 1 ] &&
    echo "$out" | grep -Eq '^00_deepseek_v3_fp8_mx_gb300_256 +benchmark +42 +- +gb300 +256 +fp8_mx +49/49 .* ok' &&
    echo "$out" | grep -Eq '^05_gpt_oss_120b_fp8_mx_gb200_64 +benchmark .* gb200 +64 +fp8_mx ' &&
    echo "$out" | grep -Eq '^pretrain_llama3_8b_fp8_8 .* fp8 .* ok' && ! echo "$out" | grep -q unidentified \
    && ok "mixed tree: one table, the NeMo run and the two Megatron-Bridge runs as rows of it, exit 0" \
    || bad "mixed tree: exit $rc: $out $(cat "$T/err")"
"$P" --format csv "$T/mixed" > "$T/mc" 2>"$T/err"; rc=$?
python3 - "$T/mc" <<'PY' && [ $rc -eq 0 ] && ok "mixed tree, CSV: one header, 3 records of its fields, family per run" || bad "mixed CSV: exit $rc: $(head -c 400 "$T/mc") $(cat "$T/err")"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0][0] == "path" and all(len(r) == len(rows[0]) for r in rows) and len(rows) == 4, [len(r) for r in rows]
fam = [dict(zip(rows[0], r))["family"] for r in rows[1:]]
assert sorted(fam) == ["mbridge", "mbridge", "nemo"], fam
PY
for mode in "" "--group"; do
    # shellcheck disable=SC2086
    "$P" $mode --format json "$T/mixed" > "$T/mj" 2>"$T/err"; rc=$?
    python3 - "$T/mj" <<'PY' && [ $rc -eq 0 ] && ok "mixed tree, JSON${mode:+ $mode}: one envelope, runs[3] with one key set, schema_version 3" || bad "mixed JSON $mode: exit $rc: $(head -c 300 "$T/mj") $(cat "$T/err")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 3 and "megatron_bridge" not in d, list(d)
runs = d["runs"]
assert sorted(r["experiment"] for r in runs) == ["00_deepseek_v3_fp8_mx_gb300_256", "05_gpt_oss_120b_fp8_mx_gb200_64",
                                                 "pretrain_llama3_8b_fp8_8"], runs
assert len({tuple(r) for r in runs}) == 1, [list(r) for r in runs]
mb = [r for r in runs if r["family"] == "mbridge"]
assert [r["recipe"] for r in mb] == ["deepseek_v3", "gpt_oss_120b"] and all(r["status"] == "ok" for r in mb), mb
assert mb[0]["container"] == "26.08" and mb[0]["dtype"] == "fp8_mx" and mb[0]["window"]["first"] == 35
PY
done
# --compare of two Megatron-Bridge run sets: per configuration, a verdict (the same runs: SAME, exit 0)
"$P" --compare "$T/runs" "$T/runs" >"$T/cmp" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && grep -q "SAME" "$T/cmp" && ! grep -q " SLOWER$" "$T/cmp" && ok "--compare of Megatron-Bridge run sets: SAME" \
    || bad "--compare: exit $rc: $(cat "$T/cmp" "$T/err")"

# a synthetic Megatron-Bridge run (nemoperf-synth's log, the manifest's workload "synthetic"): status synthetic, no
# MFU, TFLOP/s or days and no published comparison in any format; markdown says so above its table
mkdir -p "$T/syn/s"
python3 - "$T/syn/s" <<'PY' || bad "writing the synthetic run"
import json, os, sys
d = sys.argv[1]
json.dump({"workload": "synthetic", "mbridge": {"recipe": "deepseek_v3", "dtype": "fp8_mx", "gpu_type": "gb300",
           "gpus": 256, "container": "26.08"}}, open(os.path.join(d, "nemoperf.json"), "w"))
with open(os.path.join(d, "log-mb_7_0.out"), "w") as f:
    for i in range(1, 51):  # a CPU stand-in: 0.8 s a step, 13x NVIDIA's speed, rank 0 printing what it was told
        f.write("Step Time : 0.80s GPU utilization: 21296.2MODEL_TFLOP/s/GPU\n")
        f.write(" iteration %8d/%8d | elapsed time per iteration (ms): 800.0 | global batch size:  4096 |\n" % (i, 50))
PY
out=$("$P" --reference "$T/syn" 2>"$T/err"); rc=$?
echo "$out" | grep -Eq '^s +benchmark .* fp8_mx .* +- +- +- +- +synthetic +- +- +n/a$' && [ $rc -eq 2 ] &&
    grep -q "^nemoperf-parse: --reference: none of the 1 run could be compared" "$T/err" \
    && ok "synthetic: table status synthetic, MFU/TFLOP/days and the comparison n/a; --reference applied to none: exit 2" || bad "synthetic table: rc $rc $out $(cat "$T/err")"
"$P" --reference --format json "$T/syn" > "$T/syn.json" 2>"$T/err"
python3 - "$T/syn.json" <<'PY' && ok "synthetic: JSON status synthetic, mfu null, no published figure, reference n/a" || bad "synthetic JSON: $(head -c 600 "$T/syn.json")"
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["status"] == "synthetic" and r["workload"] == "synthetic" and r["family"] == "mbridge", r
assert r["last_mfu_percent"] is None and r["steady"]["mfu_percent"] is None and r["steady"]["model_tflops_per_gpu"] is None
assert r["reference"]["result"] is None and "synthetic" in r["reference"]["reason"] and "source" not in r["reference"]
PY
"$P" --reference --format csv "$T/syn" > "$T/syn.csv" 2>"$T/err"
python3 - "$T/syn.csv" <<'PY' && ok "synthetic: CSV status synthetic, mfu empty, reference empty" || bad "synthetic CSV: $(cat "$T/syn.csv")"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
assert (r["status"], r["workload"], r["last_mfu_percent"], r["steady_mfu_percent"], r["reference_result"],
        r["reference_tokens_per_s_per_gpu"]) == ("synthetic", "synthetic", "", "", "", ""), r
PY
"$P" --format markdown "$T/syn" > "$T/syn.md" 2>"$T/err"
grep -q "^Synthetic CPU workload" "$T/syn.md" && grep -Eq '^\| DGX-GB300 \| 256 \| MXFP8 .*\| 81920 \| - \|$' "$T/syn.md" \
    && ok "synthetic: markdown labelled synthetic, its TFLOP/s cell -" || bad "synthetic markdown: $(cat "$T/syn.md")"

# --plot: the sweep includes the Megatron-Bridge runs (a PNG of its configurations), exit 0
"$P" --reference --plot "$T/mb.png" "$T/runs" > /dev/null 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && [ -s "$T/mb.png" ] && [ "$(head -c 4 "$T/mb.png" | od -An -c | tr -d ' ')" = "211PNG" ] \
    && ok "--plot: a PNG of the Megatron-Bridge runs" || bad "--plot: exit $rc, $(ls -l "$T/mb.png" 2>&1) $(cat "$T/err")"

# --nccl on a Megatron-Bridge NCCL trace run (ENABLE_NCCLTRACE: the manifest's nccltrace): its breakdown
mkdir -p "$T/trace/t"
run=$(ls -d "$T/runs"/00_*)
python3 - "$run/nemoperf.json" "$T/trace/t/nemoperf.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["config"] = {"nccltrace": True}; json.dump(m, open(sys.argv[2], "w"))
PY
{ cat tests/data/nccl/nccl-torchtitan-tp2/input.log; cat "$run/log-mb_42_0.out"; } > "$T/trace/t/log-mb_42_0.out"
out=$("$P" --nccl "$T/trace" 2>"$T/err"); rc=$?
echo "$out" | grep -q "^NCCL: .*log-mb_42_0.out" && echo "$out" | grep -Eq '^ +2 +AllGather +2 ' && echo "$out" | grep -q "nccl-trace" \
    && ok "--nccl on a Megatron-Bridge trace run: its breakdown (AllGather 2 calls), kind nccl-trace" || bad "--nccl: exit $rc: $out $(cat "$T/err")"

# a container publishing one model at two GBS (26.06 DeepSeek V3 GB300: -cv v1 15360, v2 4096): a manifest without
# its GBS is the row of the GBS its log prints, not the first row (then "invalid: the log prints 15360")
mkdir -p "$T/v1/r"
python3 - "$T/v1/r" <<'PY'
import json, os, sys
d = sys.argv[1]
json.dump({"mbridge": {"recipe": "deepseek_v3", "dtype": "fp8_mx", "gpu_type": "gb300", "gpus": 256, "container": "26.06",
           "variant": "v1"}}, open(os.path.join(d, "nemoperf.json"), "w"))
with open(os.path.join(d, "log-mb_1_0.out"), "w") as f:
    for i in range(1, 51):
        f.write(" iteration %8d/%8d | elapsed time per iteration (ms): 39000.0 | global batch size: 15360 |\n" % (i, 50))
PY
"$P" --format csv "$T/v1" > "$T/v1.csv" 2>/dev/null
python3 - "$T/v1.csv" <<'PY' && ok "26.06 DeepSeek V3 GB300 -cv v1 without GBS in the manifest: the GBS 15360 row, ok" || bad "v1 row: $(cat "$T/v1.csv")"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
assert (r["status"], r["global_batch_size"], r["config_variant"], r["container"]) == ("ok", "15360", "v1", "26.06"), r
PY

# options instead of a manifest, the published label as dtype; the newest container by default
run=$(ls -d "$T/runs"/00_*)
cp "$run/log-mb_42_0.out" "$T/plain.out"
out=$("$P" --recipe deepseek_v3 --dtype MXFP8 --gpu gb300 --gpus 256 --reference --format csv "$T/plain.out" 2>"$T/err"); rc=$?
echo "$out" > "$T/opt.csv"
python3 - "$T/opt.csv" <<'PY' && [ $rc -eq 0 ] && ok "options: identified as 26.08 deepseek_v3 fp8_mx, PASS" || bad "options: exit $rc: $out $(cat "$T/err")"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
assert (r["family"], r["container"], r["recipe"], r["dtype"], r["gpu_type"], r["gpus"], r["global_batch_size"], r["seq_len"],
        r["window_first"], r["window_last"], r["reference_result"]) == ("mbridge", "26.08", "deepseek_v3", "fp8_mx", "gb300",
                                                                        "256", "4096", "4096", "35", "44", "PASS"), r
PY

# a run 10 % slower FAILs (exit 1); --steps selects another window
sed 's/elapsed time per iteration (ms): \([0-9.]*\)/elapsed time per iteration (ms): 11466.0/' "$T/plain.out" > "$T/slow.out"
out=$("$P" --recipe deepseek_v3 --dtype fp8_mx --gpu gb300 --gpus 256 --reference --steps 41-50 "$T/slow.out" 2>"$T/err"); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "\[41-50\].*FAIL" && ok "slow run: FAIL, exit 1, window 41-50" || bad "slow run: exit $rc: $out"

# bad input: exit 2 with the option named
for args in "--dtype fp4" "--container 26.99" "--container x"; do
    # shellcheck disable=SC2086
    "$P" $args "$T/plain.out" >/dev/null 2>"$T/err"; rc=$?
    opt=${args%% *}
    [ $rc -eq 2 ] && grep -q -- "$opt" "$T/err" && ok "$args -> exit 2, names $opt" || bad "$args: exit $rc: $(cat "$T/err")"
done
# an unidentified run says what is missing (exit 1)
out=$("$P" --container 26.08 "$T/plain.out" 2>"$T/err"); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "unidentified" && echo "$out" | grep -q "needs its recipe, dtype, GPU type and GPU count" \
    && ok "unidentified -> exit 1, says why" || bad "unidentified: exit $rc: $out $(cat "$T/err")"

# nemoperf-launch --list shows every published Megatron-Bridge row (293, 25.09 to 26.08) with its container and
# whether it launches (284: every container but
# 25.11's DeepSeek V3 without MTP and 25.09's values its parser cannot ask for), the others with the reason numbered
# under the table
L=${NP_BIN:-bin}/nemoperf-launch
"$L" --list > "$T/list" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && grep -q '^Megatron-Bridge performance rows' "$T/list" &&
    grep -Eq '^26\.08 +pretrain +deepseek_v3 +fp8_mx +gb300 +256 +1 +2 +1 +8 +32 +1 +4096 +4096 +- +yes +deepseek_v3_pretrain_256gpu_gb300_fp8mx_config$' "$T/list" &&
    grep -Eq '^26\.06 +pretrain +deepseek_v3 +fp8_mx +gb300 +256 .* 15360 .* v1 +yes +DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_V1$' "$T/list" &&
    grep -Eq '^25\.09 +pretrain +llama3_70b +fp8_cs +h100 +64 +4 +8 +1 +5 +1 +1 +128 +8192 +- +yes +perf_matrix\.h100\.num_gpus_64\.fp8_cs$' "$T/list" &&
    grep -Eq '^25\.11 +pretrain +deepseek_v3 +bf16 +gb300 +256 .* no \([0-9]+\) +DEEPSEEK_V3_GB300_BF16_BASE_CONFIG$' "$T/list" &&
    grep -q '^293 Megatron-Bridge rows, 284 launchable' "$T/list" &&
    grep -Eq "^\([0-9]+\) .*published without MTP, but the release builds DeepSeek V3 with one MTP layer" "$T/list" &&
    [ "$(grep -Ec '^2[56]\.[0-9.]+ +[a-z]+ .* yes ' "$T/list")" -eq 284 ] &&
    [ "$(grep -Ec '^2[56]\.[0-9.]+ +[a-z]+ .* no \([0-9]+\) ' "$T/list")" -eq 9 ] &&
    ok "--list: 293 Megatron-Bridge rows of 9 containers, 284 launchable, 9 with the reason" ||
    bad "--list: exit $rc: $(grep -Ec '^2[56]\.' "$T/list") rows $(cat "$T/err")"
"$L" --list --recipe deepseek_v3 --gpu gb300 --container 26.06 --format json > "$T/lj" 2>"$T/err"; rc=$?
python3 - "$T/lj" <<'PY' && ok "--list --recipe deepseek_v3 --gpu gb300 --container 26.06 --format json: its 2 rows, launchable" || bad "--list json: exit $rc $(head -c 300 "$T/lj")"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["container"] for r in rows] == ["26.06", "26.06"], rows
assert all(r["recipe"] == "deepseek_v3" and r["gpu"] == "gb300" and r["gpn"] == 4 for r in rows)
assert all(r["mb_release"] == "v0.5.0" and r["launchable"] is True and r["why_not"] is None for r in rows)
assert sorted(r["gbs"] for r in rows) == [4096, 15360]
PY
"$L" --list --container 25.09 --format json > "$T/l25" 2>"$T/err" && python3 - "$T/l25" <<'PY' &&
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 28 and all(r["container"] == "25.09" and r["mb_release"] == "v0.1.0rc4" for r in rows), rows
assert sum(r["launchable"] for r in rows) == 23 and all(r["why_not"] for r in rows if not r["launchable"])
# the release's parser has no -tp/-pp/-ep: the Qwen3 235B GB200 rows say they cannot be asked for as published
q = [r for r in rows if r["recipe"] == "qwen3_235b_a22b" and r["gpu"] == "gb200"]
assert len(q) == 2 and all(any("TP 2 published, the release config has 1 and the release's parser has no -tp" in w
                                   for w in r["why_not"]) for r in q), q
PY
    ok "--list --container 25.09 --format json: its 28 rows, 23 launchable, the others with why (v0.1.0rc4 lacks -tp)" ||
    bad "--list --container 25.09: $(cat "$T/err") $(head -c 300 "$T/l25")"
"$L" --list --dtype MXFP8 --gpu b300 --task pretrain --format json > "$T/lb" 2>"$T/err" && python3 - "$T/lb" <<'PY' &&
import json, sys
rows = json.load(open(sys.argv[1]))
assert rows and all(r["dtype"] == "fp8_mx" and r["gpu"] == "b300" and r["task"] == "pretrain" for r in rows), rows
assert {r["container"] for r in rows} == {"26.06", "26.04.01", "26.04", "26.02.01", "26.02"}, rows
assert {r["container"] for r in rows if r["launchable"]} == {"26.06", "26.04.01", "26.04", "26.02.01", "26.02"}, rows
PY
    ok "--list --dtype MXFP8 --gpu b300 --task pretrain: fp8_mx B300 pre-training rows only (NeMo's FP8 rows have no B300)" ||
    bad "--list --dtype: $(cat "$T/err") $(head -c 300 "$T/lb")"
"$L" --list --task lora > "$T/ll" 2>"$T/err" && ! grep -Eq '^(2[56]\.[0-9.]+) +pretrain' "$T/ll" &&
    grep -Eq '^26\.06 +lora +llama3_70b ' "$T/ll" && ok "--list --task lora: no pre-training row" || bad "--task lora: $(cat "$T/err")"
for args in "--container 26.99" "--dtype fp4" "--task finetune"; do
    # shellcheck disable=SC2086
    "$L" --list $args >/dev/null 2>"$T/err"; rc=$?
    opt=${args%% *}
    [ $rc -eq 2 ] && grep -q -- "$opt" "$T/err" && ok "--list $args -> exit 2, names $opt" || bad "--list $args: exit $rc: $(cat "$T/err")"
done
"$L" --list --format json > "$T/all.json" 2>"$T/err" && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
mb = [x for x in r if "container" in x]
assert any(x["recipe"] == "llama3.1" for x in r) and len(mb) == 293 and sum(x["launchable"] for x in mb) == 284' "$T/all.json" &&
    ok "--list --format json: the NeMo rows and the 293 Megatron-Bridge rows in one array, 284 launchable" || bad "--list json: $(cat "$T/err")"
# 25.09: v0.1.0rc4's own setup_experiment.py builds the rank command (--config_file <YAML> ... -a dummy -p dummy
# -ng): --print-config shows that command from the checkout, the published cells and the YAML's 100 steps
RECIPE=llama3_70b DTYPE=fp8_cs GPU_TYPE=h100 CONTAINER=25.09 STAGE_PATH="$T/stage" "$L" --print-config >"$T/pc" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && python3 - "$T/pc" <<'PY' &&
import json, sys
m = json.load(open(sys.argv[1]))["mbridge"]
assert m["launchable"] is True and m["why_not"] is None, m["why_not"]
assert m["release"]["value"] == "v0.1.0rc4" and m["config"]["value"] == "perf_matrix.h100.num_gpus_64.fp8_cs"
s = m["settings"]
assert [s["model.%s_parallel_size" % k]["value"] for k in ("tensor_model", "pipeline_model", "context",
        "virtual_pipeline_model")] == [4, 8, 1, 5], s
assert s["train.global_batch_size"]["value"] == 128 and s["train.micro_batch_size"]["value"] == 1
assert s["train.train_iters"]["value"] == 100, s["train.train_iters"]
ck = m["rank_command"][1][:-len("/scripts/performance/run_script.py")]
assert m["rank_command"][2:] == ["--config_file", ck + "/scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml",
                                 "--model_name", "llama3", "--model_size", "70b", "--compute_dtype", "fp8",
                                 "--fp8_recipe", "cs", "--gpu", "h100", "-a", "dummy", "-p", "dummy", "-ng", "64",
                                 "train.manual_gc=true", "train.manual_gc_interval=100"], m["rank_command"]
assert m["env_origin"]["NVTE_FLASH_ATTN"]["value"] == "1" and "CUDA_DEVICE_MAX_CONNECTIONS" not in m["env_origin"]
PY
    ok "CONTAINER=25.09 --print-config: v0.1.0rc4's perf_matrix row (TP4 PP8 VP5 GBS128), the rank command its setup_experiment.py builds, 100 steps" ||
    bad "CONTAINER=25.09 --print-config: exit $rc: $(cat "$T/err") $(head -c 400 "$T/pc")"
RECIPE=qwen3_30b_a3b DTYPE=fp8_cs GPU_TYPE=h100 CONTAINER=25.09 STAGE_PATH="$T/stage" "$L" --dry-run >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "CONTAINER=25.09: not launched by nemoperf: cannot be run as published: VP 24 published, the release config has 12 and the release's parser has no -vp" "$T/err" &&
    ok "CONTAINER=25.09 Qwen3 30B H100 --dry-run: exit 2, says why (VP 24 published, v0.1.0rc4's parser has no -vp)" || bad "CONTAINER=25.09 Qwen3 --dry-run: exit $rc: $(cat "$T/err")"
# 25.11 Qwen3: the release's launcher wants an HF token (and puts it on the rank command); nemoperf's job has none
RECIPE=qwen3_30b_a3b DTYPE=fp8_mx GPU_TYPE=gb200 CONTAINER=25.11 STAGE_PATH="$T/stage" "$L" --print-config >"$T/pq" 2>"$T/err"; rc=$?
[ $rc -eq 0 ] && python3 - "$T/pq" <<'PY' &&
import json, sys
m = json.load(open(sys.argv[1]))["mbridge"]
assert m["launchable"] is True and "-hf" not in m["rank_command"] and "@HF_TOKEN@" not in " ".join(m["rank_command"])
assert m["env_origin"]["TRANSFORMERS_OFFLINE"]["value"] == "1" and "HF_TOKEN" not in m["env_origin"], m["env_origin"]
assert "nemoperf writes no token into a job" in m["note"] and "setup_experiment.py:74-75" in m["note"], m["note"]
PY
    ok "CONTAINER=25.11 Qwen3 --print-config: launchable with no token (no -hf, TRANSFORMERS_OFFLINE=1), the note says why" ||
    bad "CONTAINER=25.11 Qwen3 --print-config: exit $rc: $(cat "$T/err") $(head -c 300 "$T/pq")"
"$L" --list --recipe nope >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "'nope' is not a recipe" "$T/err" && ok "--list --recipe nope: exit 2" || bad "--recipe nope: exit $rc"
# a near miss gets the name suggested, and both namespaces are listed (the older containers' recipes too)
"$L" --list --recipe deepsek_v3 >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "'deepsek_v3' is not a recipe; did you mean deepseek_v3 (Megatron-Bridge)? allowed: NeMo recipes: .*llama3.1.*; Megatron-Bridge recipes: .*llama3_8b" "$T/err" &&
    ok "--list --recipe deepsek_v3: did you mean deepseek_v3, both namespaces listed" || bad "--recipe deepsek_v3: exit $rc $(cat "$T/err")"

[ $fail -eq 0 ] && echo "62-mbridge-parse: all checks passed"
[ $fail -eq 0 ]
