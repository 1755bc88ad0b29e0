#!/bin/sh
# 60-dfm.sh - NeMo DFM's Wan 2.1 14B end to end: the rendered job against the pinned sources, logs at NVIDIA's
# published speed parsed back into DFM's table, and a synthetic sweep on the real local Slurm cluster.
# Stand-ins: no GPU, nemo:25.11 container or PyPI here, so (1) the staged image and checkouts are empty
# placeholders (only their paths are rendered) and the job is checked by tests/dfm/contract.py against the key
# lists extracted from the pinned DFM/Megatron-Bridge/Megatron-LM (tests/data/contract/dfm-keys.tsv), the
# AutoModel rows' by tests/dfm/contract-automodel.py (DFM 9eaace1 / Automodel a5f0652, dfm-automodel-keys.tsv);
# (2) tests/dfm/make-logs.py writes Megatron-Bridge logs with step times derived from the published TFLOP/s
# (NVIDIA's calibration), and DFM's AutoModel loop's tqdm bar for the AutoModel rows; (3) nemoperf-synth stands in
# for pretrain_wan.py / DFM's AutoModel pre-training on every srun task.
T=60-dfm WTAG=dfm
. "$(dirname "$0")/mbridge-launch-lib.inc"

# 1. the job's contract: every Megatron-Core row, with and without profiling
mkdir -p "$S/pip/wan2.1-14b/site-packages" && echo stand-in >"$S/nvidia+nemo+25.11.sqsh" || die "stage"
for r in DFM-9eaace14995a724c982fe53726a909be2edc93cb Megatron-Bridge-953aabf75c0500180dc14a6a76cf9e7e7c4baec7 \
    Megatron-LM-2d398b42fd4237fffb553109563d73ac099751c3 Automodel-a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5; do
    mkdir -p "$S/src/$r" || die mkdir
done
M=$S/hf/Wan-AI/Wan2.1-T2V-14B-Diffusers
n=0
for g in gb200 gb300 b200 h100; do
    for prof in false true; do
        env RECIPE=wan2.1 GPU_TYPE=$g ENABLE_PROFILE=$prof STAGE_PATH="$S" "$launch" --dry-run >"$W/$g.sh" 2>"$W/err" ||
            { fail "dry-run $g: $(cat "$W/err")"; continue; }
        python3 "$root/tests/dfm/contract.py" "$W/$g.sh" "$root/share/nemoperf/dfm/conf" >"$W/c.out" &&
            n=$((n + 1)) || fail "contract $g profile=$prof: $(cat "$W/c.out")"
    done
done
[ "$n" -eq 8 ] && ok "the 4 Megatron-Core rows (x profiling) pass the pinned sources' key lists"
sed 's/train\.train_iters=/train.train_itres=/' "$W/gb200.sh" >"$W/bad.sh"
python3 "$root/tests/dfm/contract.py" "$W/bad.sh" "$root/share/nemoperf/dfm/conf" >"$W/c.out" &&
    fail "the contract accepted an unknown override" || ok "an unknown override fails the contract: $(cat "$W/c.out")"
sed 's/--training-mode/--training_mode/' "$W/gb200.sh" >"$W/bad.sh"
python3 "$root/tests/dfm/contract.py" "$W/bad.sh" "$root/share/nemoperf/dfm/conf" >/dev/null &&
    fail "the contract accepted an unknown flag" || ok "an unknown flag fails the contract"
# the AutoModel rows: refused until ./setup staged the 14B model, then DFM's AutoModel pre-training
env RECIPE=wan2.1 GPU_TYPE=h100 JOB_TOTAL_GPUS=8 STAGE_PATH="$S" "$launch" --dry-run >/dev/null 2>"$W/err"
grep -q "not staged yet: the Hugging Face model Wan-AI/Wan2.1-T2V-14B-Diffusers" "$W/err" &&
    ok "an AutoModel row without its staged model: the dry run names it as not staged" || fail "$(cat "$W/err")"
mkdir -p "$M" && echo '{}' >"$M/model_index.json" || die "stage model"
n=0
for g in 8 64; do
    env RECIPE=wan2.1 GPU_TYPE=h100 JOB_TOTAL_GPUS=$g STAGE_PATH="$S" "$launch" --dry-run >"$W/am$g.sh" 2>"$W/err" ||
        { fail "dry-run AutoModel $g: $(cat "$W/err")"; continue; }
    python3 "$root/tests/dfm/contract-automodel.py" "$W/am$g.sh" "$root/share/nemoperf/dfm/conf" >"$W/c.out" &&
        n=$((n + 1)) || fail "contract AutoModel $g: $(cat "$W/c.out")"
done
[ "$n" -eq 2 ] && ok "the 2 AutoModel rows pass the pinned sources' key lists: $(cat "$W/c.out")"
grep -q "'--data.dataloader.length=3200'" "$W/am64.sh" && grep -q "'--nnodes=8'" "$W/am64.sh" &&
    ok "AutoModel 64 GPUs: 8 nodes, MAX_STEPS 50 x GBS 64 mock samples in one epoch" || fail "am64: $(cat "$W/am64.sh")"
sed 's/--step_scheduler.num_epochs=1/--step_scheduler.max_steps=50/' "$W/am8.sh" >"$W/bad.sh"
python3 "$root/tests/dfm/contract-automodel.py" "$W/bad.sh" "$root/share/nemoperf/dfm/conf" >"$W/c.out" &&
    fail "the contract accepted step_scheduler.max_steps" || ok "step_scheduler.max_steps fails it (DFM 9eaace1 never reads it): $(cat "$W/c.out")"
# print-config names the YAML, its parallelism, nodes x GPUs per node and the pins
env RECIPE=wan2.1 GPU_TYPE=h100 STAGE_PATH="$S" "$launch" --print-config >"$W/pc.json" 2>"$W/err" || fail "print-config"
python3 - "$W/pc.json" <<'PY' || fail "print-config content"
import json, sys
c = json.load(open(sys.argv[1]))["mbridge"]
assert c["model.tensor_model_parallel_size"]["value"] == 2 and "h100_perf_pretrain_mock.yaml" in c["model.tensor_model_parallel_size"]["source"]
assert c["model.sequence_parallel"]["value"] is True and c["model.context_parallel_size"]["value"] == 4
assert c["train.global_batch_size"]["value"] == 128 and c["nodes_x_gpus_per_node"]["value"] == "16 nodes x 8 GPUs per node"
assert [r["commit"][:7] for r in c["repos"]] == ["9eaace1", "953aabf", "2d398b4", "a5f0652"]
assert c["container"]["value"] == "nvcr.io#nvidia/nemo:25.11"
PY
ok "--print-config shows the H100 YAML's parallelism, batch sizes, 16 x 8 and the pins"
env RECIPE=wan2.1 GPU_TYPE=h100 JOB_TOTAL_GPUS=8 STAGE_PATH="$S" "$launch" --print-config >"$W/pc8.json" 2>"$W/err" ||
    fail "print-config AutoModel: $(cat "$W/err")"
python3 - "$W/pc8.json" <<'PY' && ok "--print-config of an AutoModel row says DFM pins no perf recipe for it; GBS/LBS/DP from the row" || fail "print-config AutoModel content"
import json, sys
c = json.load(open(sys.argv[1]))["mbridge"]
assert "pins no performance recipe" in c["perf_recipe"] and c["backend"] == "automodel"
assert c["step_scheduler.global_batch_size"]["value"] == 8 and c["fsdp.dp_size"]["value"] == 8
assert "performance-summary.md:78" in c["fsdp.dp_size"]["source"]
assert c["data.dataloader.length"]["value"] == 400 and c["step_scheduler.num_epochs"]["value"] == 1
assert "torchrun" in c["launcher"] and c["node_command"][0] == "torchrun"
PY

# 2. logs at the published speed: DFM's table back, in order, within 0.5 %, PASS
python3 "$root/tests/dfm/make-logs.py" "$W/logs" >/dev/null || die "make-logs"
"$parse" --format markdown --reference "$W/logs" >"$W/md" 2>"$W/err" || fail "parse markdown: $(cat "$W/err")"
python3 "$root/tests/dfm/check-markdown.py" <"$W/md" >"$W/cm" && ok "$(tail -1 "$W/cm")" || fail "$(cat "$W/cm")"
python3 "$root/tests/dfm/make-logs.py" "$W/old" --superseded >/dev/null || die "make-logs --superseded"
"$parse" --format json "$W/old" >"$W/old.json" 2>"$W/err" || fail "parse old: $(cat "$W/err")"
python3 - "$W/old.json" <<'PY' && ok "the 2025-11-19 GB200 row parses to 4747.17 tokens/s/GPU and 787.59 TFLOP/s/GPU within 0.5 %" || fail "superseded rows"
import json, sys
runs = {(r["gpu_type"], r["gpus"]): r for r in json.load(open(sys.argv[1]))["runs"]}
for (g, n), tok, tf in ((("gb200", 32), 4747.17, 787.59), (("gb300", 32), 6161.63, 1022.26), (("h100", 64), 1866.47, 309.66)):
    r = runs[(g, n)]["steady"]
    assert abs(r["tokens_per_s_per_gpu"] / tok - 1) < 0.005, (g, r["tokens_per_s_per_gpu"], tok)
    assert abs(r["model_tflops_per_gpu"] / tf - 1) < 0.005, (g, r["model_tflops_per_gpu"], tf)
PY
grep -q "MODEL_TFLOP" "$W/logs"/*/*/*/log-*.out && ok "the logs carry MB's own utilization line (ignored: docs/dfm.md)"
"$parse" --format json "$W/logs" >"$W/logs.json" 2>"$W/err" || fail "parse json: $(cat "$W/err")"
python3 - "$W/logs.json" <<'PY' && ok "MB's logged TFLOP/s is never used for Wan (null); the GB300 log that carries it (log_throughput) says so" || fail "MB's logged TFLOP/s: $(head -c 600 "$W/logs.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert len(runs) == 6
for r in runs:
    assert r["logged_tflops_per_gpu"] is None, r
    said = "wrong for Wan" in (r["note"] or "")
    assert said == (r["gpu_type"] == "gb300"), (r["gpu_type"], r["note"])
PY

# 3. a synthetic sweep on the local cluster: B200 32 GPUs (4 nodes) and the AutoModel 8-GPU row
"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"
mkdir -p "$S/synth" || die mkdir
for spec in b200:32 h100:8; do
    g=${spec%%:*} n=${spec#*:}
    env RECIPE=wan2.1 WORKLOAD=synthetic GPU_TYPE=$g JOB_TOTAL_GPUS=$n MAX_STEPS=12 STAGE_PATH="$S/synth" \
        "$launch" >"$W/l.out" 2>"$W/l.err" || { fail "launch $spec: $(cat "$W/l.err")"; continue; }
    launched "$spec"
done
while read -r spec id; do
    i=0
    while [ $i -lt 600 ]; do
        st=$(scontrol -o show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case $st in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL) break ;; esac
        sleep 0.5
        i=$((i + 1))
    done
    [ "$st" = COMPLETED ] || fail "job $id ($spec): $st"
done <"$W/jobs"
"$parse" --format json "$S/synth" >"$W/s.json" 2>"$W/err" || fail "parse synthetic: $(cat "$W/err")"
python3 - "$W/s.json" <<'PY' && ok "synthetic sweep (B200 x32: Megatron-Bridge logs; H100 x8: DFM's AutoModel loop), 12 steps, parsed as synthetic" || fail "synthetic: $(head -c 2000 "$W/s.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert sorted((r["gpu_type"], r["gpus"]) for r in runs) == [("b200", 32), ("h100", 8)], runs
for r in runs:
    fmt = "dfm-automodel" if r["gpus"] == 8 else "mbridge"
    assert r["log_format"] == fmt and r["status"] == "synthetic" and r["final_step"] == 11, r
    assert r["last_tokens_per_s"] > 0 and r["last_model_tflops_per_gpu"] is None
PY
[ "$fails" -eq 0 ] && echo "$T: all ok" || { echo "$T: $fails failure(s)" >&2; exit 1; }
