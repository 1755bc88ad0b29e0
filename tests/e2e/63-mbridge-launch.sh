#!/bin/sh
# 63-mbridge-launch.sh - Megatron-Bridge performance rows launched: the dry-run script runs the release's rank
# command, a synthetic sweep of three rows runs on the local Slurm cluster and parses back as those rows, and dry
# runs against the cluster say which rows can never run on its partition (nodes, GPUs per node, --segment).
# Stand-ins (no GPU, no NeMo container, no Megatron-Bridge Python stack here): (1) the staged image is an empty
# placeholder and the checkout holds NVIDIA's real scripts/performance/argument_parser.py of the release (pinned
# gzip copies in tests/data/contract/, nemo_run.config stubbed: its one import) beside a stand-in entry point
# (bootstrap.py / run_script.py) that parses its argv with that parser, as the real one does first, and writes
# what it got; (2) srun and numactl are shell stand-ins that run the step's tasks locally (srun: pyxis flags
# dropped, SLURM_LOCALID/PROCID set; numactl: records its binding, then runs the command); (3) for the sweep,
# nemoperf-synth writes Megatron-Bridge's log lines on every real srun task of the cluster; (4) the Hub files the
# rows read offline are "{}" stand-ins in huggingface_hub's cache layout (34-setup-mbridge.sh stages real ones).
T=63-mbridge-launch WTAG=mbl
. "$(dirname "$0")/mbridge-launch-lib.inc"
mkdir -p "$S" "$W/fake" "$W/out" || die mkdir

# ---- 1. the dry-run script runs the release's rank command ----
# stage <container> <release> <commit>: the image placeholder and the checkout stand-in
stage() {
    echo stand-in >"$S/nvidia+nemo+$1.sqsh"
    d=$S/src/Megatron-Bridge-$3/scripts/performance
    mkdir -p "$d/nemo_run" "$S/src/Megatron-Bridge-$3/src" || die mkdir
    gzip -dc "$root/tests/data/contract/mbridge-$2-argument_parser.py.gz" >"$d/argument_parser.py" || die "no pinned parser"
    : >"$d/nemo_run/__init__.py"
    printf 'def get_nemorun_home():\n    return "/nonexistent/nemo_run"\n' >"$d/nemo_run/config.py"
    for entry in bootstrap.py run_script.py; do
        cat >"$d/$entry" <<'PY'
# stand-in entry point: parse argv with the release's own argument parser, as the real one does first
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import argument_parser
got = argument_parser.parse_cli_args()  # v0.3.0+: the parser; before (v0.1.0rc4, r0.2.0): parse_known_args()'s pair
args, unknown = got.parse_known_args() if hasattr(got, "parse_known_args") else got
keep = (str, int, float, bool, type(None))
env = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "CUDA_DEVICE_MAX_CONNECTIONS", "NCCL_P2P_NET_CHUNKSIZE",
       "PYTHONPATH", "NVTE_USE_FAST_MATH", "TORCH_NCCL_AVOID_RECORD_STREAMS")
with open(os.path.join(os.environ["NP_FAKE_OUT"], "rank%s.json" % os.environ["SLURM_PROCID"]), "w") as f:
    json.dump({"entry": os.path.basename(__file__), "file": os.path.abspath(__file__),
               "args": {k: v for k, v in vars(args).items() if isinstance(v, keep)}, "unknown": unknown,
               "env": {k: os.environ.get(k) for k in env}}, f)
PY
    done
    # the Hub files every row of the container reads, in huggingface_hub's cache as ./setup stages them (real
    # downloads: 34-setup-mbridge.sh); stand-in bodies "{}", a branch revision's ref to a made-up commit
    python3 - "$S/mbridge/hf/hub" "$1" "$root/share/nemoperf/megatron-bridge/hf-files.tsv" <<'PY' || die "hf stand-in"
import os, sys
hub, ct, tsv = sys.argv[1:]
for line in open(tsv):
    f = line.rstrip("\n").split("\t")
    if line.startswith("#") or len(f) < 9 or f[0] != ct or f[4] == "none":  # none: reads nothing from the Hub
        continue
    repo, rev = f[5], f[6]
    d = os.path.join(hub, "models--" + repo.replace("/", "--"))
    sha = rev if len(rev) == 40 else "e" * 40
    if sha != rev:
        os.makedirs(os.path.join(d, "refs"), exist_ok=True)
        open(os.path.join(d, "refs", rev), "w").write(sha)
    snap = os.path.join(d, "snapshots", sha)
    os.makedirs(snap, exist_ok=True)
    for name in f[7].split(","):
        if name != "auto_map" and not name.endswith("?"):
            open(os.path.join(snap, name), "w").write("{}\n")
PY
}
stage 26.08 v0.6.0 51885cf132b2814188b6855c25a8588254274c2a
stage 26.06 v0.5.0 fcbb6031103d0ca845c1a54d4fee55ecfcca17b6
stage 25.11 r0.2.0-44dae92 44dae92b0cf756d3728fe41d10c9aa8832a55f6a
stage 25.09 v0.1.0rc4 6725f7049504c3bcf9a65c5aee40aa118bc7a869
cat >"$W/fake/srun" <<'SH'
#!/bin/sh
# stand-in for srun + pyxis: the step's command as NP_FAKE_TASKS local tasks
while [ $# -gt 0 ]; do
    case $1 in
    --output | --container-image | --container-mounts | --container-workdir) shift 2 ;;
    --*) shift ;;
    *) break ;;
    esac
done
i=0 rc=0
while [ $i -lt "${NP_FAKE_TASKS:-2}" ]; do
    SLURM_LOCALID=$i SLURM_PROCID=$i SLURM_NTASKS=${NP_FAKE_TASKS:-2} "$@" || rc=$?
    i=$((i + 1))
done
exit $rc
SH
cat >"$W/fake/numactl" <<'SH'
#!/bin/sh
# stand-in for numactl: record the binding, run the command
opts=
while [ $# -gt 0 ]; do
    case $1 in
    -C) opts="$opts $1 $2"; shift 2 ;;
    -*) opts="$opts $1"; shift ;;
    *) break ;;
    esac
done
echo "numactl$opts" >"$NP_FAKE_OUT/numactl.$SLURM_LOCALID"
exec "$@"
SH
printf '#!/bin/sh\nexec python3 "$@"\n' >"$W/fake/python"
chmod +x "$W/fake/srun" "$W/fake/numactl" "$W/fake/python"

# run_dry <name> VAR=... : render with --dry-run, run the script with the stand-ins; the ranks' records in $W/out/<name>
run_dry() {
    name=$1
    shift
    env "$@" STAGE_PATH="$S" "$launch" --dry-run >"$W/$name.sh" 2>"$W/$name.err" || { fail "$name: dry-run: $(cat "$W/$name.err")"; return 1; }
    grep -q 'not staged' "$W/$name.err" && fail "$name: staged files reported missing: $(cat "$W/$name.err")"
    dir=$(sed -n "s/^cd -- '\(.*\)' || exit 1$/\1/p" "$W/$name.sh")
    mkdir -p "$dir" "$W/out/$name" || return 1
    NP_FAKE_OUT=$W/out/$name PATH="$W/fake:$PATH" bash "$W/$name.sh" >"$W/$name.run" 2>&1 || { fail "$name: the script failed: $(tail -5 "$W/$name.run")"; return 1; }
}
check() { # check <name> <python assertions over r0 (rank 0 record), r1, n0, n1 (numactl lines)>
    python3 - "$W/out/$1" "$2" <<'PY'
import json, os, sys
d = sys.argv[1]
r0, r1 = (json.load(open(os.path.join(d, "rank%d.json" % i))) for i in (0, 1))
n0, n1 = (open(os.path.join(d, "numactl.%d" % i)).read().strip() for i in (0, 1))
hydra = [u for u in r0["unknown"] if not ("=" in u and not u.startswith("-"))]
assert not hydra, "arguments the release's parser does not know: %s" % hydra
exec(sys.argv[2])
PY
}
run_dry v6 RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 JOB_TOTAL_GPUS=256 &&
    check v6 '
a = r0["args"]
assert r0["entry"] == "bootstrap.py" and "/Megatron-Bridge-51885cf132b2814188b6855c25a8588254274c2a/" in r0["file"], r0["file"]
assert (a["model_family_name"], a["model_recipe_name"], a["gpu"], a["compute_dtype"]) == ("deepseek", "deepseek_v3", "gb300", "fp8_mx"), a
assert (a["num_gpus"], a["gpus_per_node"], a["max_steps"], a["task"], a["offline"]) == (256, 4, 50, "pretrain", True), a
assert r0["unknown"] == [], r0["unknown"]
assert r0["env"]["HF_HUB_OFFLINE"] == "1" and r0["env"]["TORCH_NCCL_AVOID_RECORD_STREAMS"] is None, r0["env"]
assert r0["env"]["PYTHONPATH"].split(":")[1].endswith("51885cf132b2814188b6855c25a8588254274c2a/src"), r0["env"]
assert n0 == n1 == "numactl --cpunodebind=0 --membind=0", (n0, n1)
' && ok "26.08 DeepSeek V3 GB300: the dry-run script runs bootstrap.py of v0.6.0; its own parser reads deepseek_v3 fp8_mx 256 GPUs, 50 steps, --offline; numactl node = local rank / 2" ||
    fail "26.08 dry run: $(cat "$W/v6.run")"
run_dry v5 RECIPE=llama31_405b DTYPE=FP8 GPU_TYPE=gb300 CONTAINER=26.06 MAX_STEPS=30 &&
    check v5 '
a = r0["args"]
assert r0["entry"] == "run_script.py" and "fcbb6031103d0ca845c1a54d4fee55ecfcca17b6" in r0["file"], r0["file"]
assert (a["model_recipe_name"], a["compute_dtype"], a["num_gpus"], a["max_steps"], a["config_variant"]) == ("llama31_405b", "fp8_cs", 256, 30, "v2"), a
assert r0["unknown"] == ["train.manual_gc=true", "train.manual_gc_interval=100"], r0["unknown"]
assert r0["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] == "32" and r0["env"]["NCCL_P2P_NET_CHUNKSIZE"] == "2097152", r0["env"]
assert r0["env"]["TORCH_NCCL_AVOID_RECORD_STREAMS"] == "1" and not r0["env"]["PYTHONPATH"].split(":")[0].endswith("/src")
' && ok "26.06 Llama 3.1 405B GB300 (MAX_STEPS=30): run_script.py of v0.5.0, -cv v2, 30 steps, PerfEnvPlugin's environment and manual GC overrides" ||
    fail "26.06 dry run: $(cat "$W/v5.run")"
run_dry b300 RECIPE=gpt_oss_120b DTYPE=MXFP8 GPU_TYPE=b300 &&
    check b300 '
assert r0["args"]["model_recipe_name"] == "gpt_oss_120b" and r0["args"]["gpu"] == "b300"
assert n0 == "numactl --cpunodebind=0 --membind=0 -C 0,1" and n1 == "numactl --cpunodebind=0 --membind=0 -C 16,17", (n0, n1)
' && ok "26.06 GPT-OSS B300: numactl adds the executor's -C cores per local rank (0,1 then 16,17)" ||
    fail "B300 dry run: $(cat "$W/b300.run")"
# 25.09 and 25.11: the rank command their own setup_experiment.py builds, parsed by their own parser
run_dry rc4 RECIPE=llama3_70b DTYPE=fp8_cs GPU_TYPE=h100 CONTAINER=25.09 &&
    check rc4 '
a = r0["args"]
assert r0["entry"] == "run_script.py" and "/Megatron-Bridge-6725f7049504c3bcf9a65c5aee40aa118bc7a869/" in r0["file"], r0["file"]
assert (a["model_name"], a["model_size"], a["compute_dtype"], a["fp8_recipe"], a["gpu"], a["num_gpus"]) == ("llama3", "70b", "fp8", "cs", "h100", 64), a
assert (a["account"], a["partition"]) == ("dummy", "dummy"), a
assert a["config_file"].endswith("/Megatron-Bridge-6725f7049504c3bcf9a65c5aee40aa118bc7a869/scripts/performance/configs/llama3/llama3_70b_llm_pretrain.yaml"), a
assert r0["unknown"] == ["train.manual_gc=true", "train.manual_gc_interval=100"], r0["unknown"]
assert r0["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] is None and r0["env"]["TRANSFORMERS_OFFLINE"] == "1", r0["env"]
assert n0 == n1 == "numactl --cpunodebind=0 --membind=0", (n0, n1)
' && ok "25.09 Llama 3 70B H100: run_script.py --config_file <its YAML> ... -a dummy -p dummy -ng 64 as v0.1.0rc4's setup_experiment.py builds it; its own parser reads it" ||
    fail "25.09 dry run: $(cat "$W/rc4.run")"
NP_FAKE_TASKS=4
export NP_FAKE_TASKS
run_dry v2 RECIPE=llama3_70b DTYPE=fp8_cs GPU_TYPE=gb300 CONTAINER=25.11 &&
    check v2 '
a = r0["args"]
assert r0["entry"] == "run_script.py" and "/Megatron-Bridge-44dae92b0cf756d3728fe41d10c9aa8832a55f6a/" in r0["file"], r0["file"]
assert (a["model_name"], a["model_size"], a["gpu"], a["compute_dtype"], a["num_gpus"], a["gpus_per_node"]) == ("llama3", "70b", "gb300", "fp8_cs", 64, 4), a
assert (a["max_steps"], a["global_batch_size"], a["account"], a["partition"]) == (50, 256, "dummy", "dummy"), a
assert r0["unknown"] == ["train.manual_gc=true", "train.manual_gc_interval=100"], r0["unknown"]
assert r0["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] == "32" and r0["env"]["PYTHONPATH"].split(":")[0].endswith("/scripts/performance"), r0["env"]
n2 = open(os.path.join(d, "numactl.2")).read().strip()
assert n0 == n1 == n2 == "numactl --cpunodebind=0 --membind=0", (n0, n1, n2)  # r0.2.0 divides by 4 on GB300
' && ok "25.11 Llama 3 70B GB300: run_script.py with the argv of setup_experiment.py (-a/-p, -ms 50, -gb 256) as r0.2.0 builds it; its own parser reads it; numactl node = local rank / 4" ||
    fail "25.11 dry run: $(cat "$W/v2.run")"
unset NP_FAKE_TASKS
# a planted unknown argument is caught by the release's own parser
sed "s/'--offline'/'--offline' '--no_such_flag' '1'/" "$W/v6.sh" >"$W/bad.sh"
rm -f "$W/out/v6"/rank*.json
dir=$(sed -n "s/^cd -- '\(.*\)' || exit 1$/\1/p" "$W/bad.sh")
NP_FAKE_OUT=$W/out/v6 PATH="$W/fake:$PATH" bash "$W/bad.sh" >/dev/null 2>&1
check v6 'pass' 2>"$W/bad.err" && fail "a planted unknown argument passed" ||
    ok "a planted unknown argument in the script is caught: $(tail -1 "$W/bad.err" | cut -c1-120)"
# not staged: refused with the ./setup command to run
env RECIPE=qwen3_235b_a22b DTYPE=fp8_mx GPU_TYPE=gb200 STAGE_PATH="$W/empty" sh -c 'mkdir -p "$STAGE_PATH"; echo stand-in >"$STAGE_PATH/nvidia+nemo+26.08.sqsh"; exec "$0"' "$launch" >/dev/null 2>"$W/ns.err" &&
    fail "a launch without the checkout was accepted"
grep -q 'RECIPE=qwen3_235b_a22b CONTAINER=26.08 .*setup' "$W/ns.err" && ok "only the image staged: refused, naming RECIPE=qwen3_235b_a22b CONTAINER=26.08 ./setup" ||
    fail "not staged: $(cat "$W/ns.err")"

# ---- 2. a synthetic sweep of three rows on the local cluster (published scales that fit 4 nodes x 8) ----
"$cluster" status >/dev/null 2>&1 || "$cluster" up || die "cluster up failed"
eval "$("$cluster" env)" || die "cluster env failed"
# a real-workload launch whose Hub files are not staged (image and checkout are): exit 2 before any folder or job
N=$W/nohf
mkdir -p "$N" && cp "$S/nvidia+nemo+26.08.sqsh" "$N/" && cp -R "$S/src" "$N/src" || die "nohf stage"
before=$(squeue -h -o %i 2>/dev/null | sort)
env RECIPE=qwen3_30b_a3b DTYPE=fp8_mx GPU_TYPE=gb200 JOB_TOTAL_GPUS=8 CONTAINER=26.08 STAGE_PATH="$N" "$launch" \
    >"$W/nohf.out" 2>"$W/nohf.err"
rc=$?
after=$(squeue -h -o %i 2>/dev/null | sort)
[ $rc -eq 2 ] && grep -q 'Qwen/Qwen3-30B-A3B@ad44e777bcd18fa416d9da3bd8f70d33ebb85d39: config.json' "$W/nohf.err" &&
    grep -q 'run RECIPE=qwen3_30b_a3b CONTAINER=26.08 [^ ]*setup' "$W/nohf.err" &&
    [ "$(ls -A "$N" | tr '\n' ' ')" = "nvidia+nemo+26.08.sqsh src " ] && [ "$before" = "$after" ] &&
    ok "Hub files not staged: exit 2 naming Qwen3-30B-A3B's config.json and RECIPE=qwen3_30b_a3b CONTAINER=26.08 ./setup; no folder, no job" ||
    fail "nohf (rc $rc): $(cat "$W/nohf.err"; find "$N" -maxdepth 2; echo "queue before: $before after: $after")"
mkdir -p "$S/synth" || die mkdir
for spec in qwen3_30b_a3b:fp8_mx:gb200:8:26.08 nemotron_3_nano:fp8_mx:b300:8:26.06 qwen3_30b_a3b:fp8_cs:h100:16:26.06; do
    IFS=: read -r r d g n c <<EOS
$spec
EOS
    # SNAPSHOT=false: the three jobs run at once on nodes that share one host here, so one job's system snapshot
    # (a few seconds of tools) would load another's 12-step window and the rank-0 cross-check below (measured:
    # -7 to +25 % with it, within 3.2 % without); each job's own snapshot is 19-launch-system's
    env RECIPE=$r DTYPE=$d GPU_TYPE=$g JOB_TOTAL_GPUS=$n CONTAINER=$c WORKLOAD=synthetic MAX_STEPS=12 STAGE_PATH="$S/synth" \
        SNAPSHOT=false "$launch" >"$W/l.out" 2>"$W/l.err" || { fail "launch $spec: $(cat "$W/l.err")"; continue; }
    launched "$spec"
done
# one poll for the three jobs until the queue has none of them, then each one's end state
ids=$(cut -f2 "$W/jobs" | paste -sd, -)
n=0
while [ -n "$ids" ] && [ $n -lt 600 ] && [ -n "$(squeue -h -j "$ids" -o %i 2>/dev/null)" ]; do
    sleep 0.5
    n=$((n + 1))
done
while read -r spec id; do
    st=$(scontrol -o show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [ "$st" = COMPLETED ] || fail "job $id ($spec): ${st:-gone}"
done <"$W/jobs"
"$parse" --format json "$S/synth" >"$W/s.json" 2>"$W/err" || fail "parse the sweep (no options): $(cat "$W/err")"
python3 - "$W/s.json" <<'PY' && ok "synthetic sweep (Qwen3 30B-A3B GB200 x8 26.08, Nemotron 3 Nano B300 x8 and Qwen3 30B-A3B H100 x16 26.06): Megatron-Bridge logs parsed with no options, each identified as its published row, status synthetic, rank 0 logging the step TFLOPs of the formula" || fail "sweep: $(head -c 3000 "$W/s.json")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
got = sorted((r["recipe"], r["dtype"], r["gpu_type"], r["gpus"], r["container"]) for r in runs)
assert got == [("nemotron_3_nano", "fp8_mx", "b300", 8, "26.06"), ("qwen3_30b_a3b", "fp8_cs", "h100", 16, "26.06"),
               ("qwen3_30b_a3b", "fp8_mx", "gb200", 8, "26.08")], got
for r in runs:
    assert r["status"] == "synthetic" and r["family"] == "mbridge", r
    assert "no published row" not in (r["note"] or ""), r   # matched to its published row (never compared with it)
    tps = r["steady"]["tokens_per_s_per_gpu"]
    assert tps and tps > 0 and r["window"]["count"] > 0, r
    assert r["global_batch_size"] == (1024 if r["gpus"] == 16 else 512), r
    # the launch passes the step's model TFLOPs (--step-tflops, docs/megatron-bridge.md): the job script's X is
    # the formula's FLOPs per token (TFLOP/s/GPU over tokens/s/GPU) x sequence x GBS, and rank 0's logged figure is
    # near the formula's (without it: 0.0, -100 %).  The stand-in's ranks are not synchronized as a real job's
    # are: on a loaded machine rank 0's own step times differ from the last rank's by a few %, which the note says.
    import os, re
    x = None
    run = os.path.dirname(r["path"])  # the log read; its folder holds the job script
    for d in (run, os.path.dirname(run), os.path.dirname(os.path.dirname(run))):
        for f in sorted(os.listdir(d)):
            if x is None and os.path.isfile(os.path.join(d, f)):
                m = re.search(r"'--step-tflops' '([0-9.]+)'", open(os.path.join(d, f), errors="replace").read())
                x = float(m.group(1)) if m else None
    # the formula's TFLOPs of one global step: its FLOPs per sequence x GBS (a synthetic run shows no TFLOP/s/GPU)
    formula = r["model_flops_per_sample"] * r["global_batch_size"] / 1e12
    assert x is not None and abs(x / formula - 1) < 0.001, ("--step-tflops", x, formula, r)
    at_step = formula / (r["window"]["mean_s"] * r["gpus"])   # the formula's TFLOP/s/GPU at the window's step time
    d = [100 * (r["logged_tflops_per_gpu"] / at_step - 1)] if r["logged_tflops_per_gpu"] else [None]
    assert d[0] is not None and abs(d[0]) < 25, ("rank-0 cross-check", r)
    print("%s %s %s x%d: --step-tflops %.1f, formula %.1f; rank 0 logs %+.2f %% of the formula's TFLOP/s/GPU"
          % (r["container"], r["recipe"], r["gpu_type"], r["gpus"], x, formula, d[0]))
PY

# ---- 3. launch validation against the cluster, as for NeMo rows: a dry run warns where the real launch refuses
# (sbatch --test-only and the partition's limits; nothing staged is needed for a dry run)
V=$W/validate
env RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 JOB_TOTAL_GPUS=256 CONTAINER=26.08 STAGE_PATH="$V" "$launch" --dry-run \
    >/dev/null 2>"$W/v1.err"
grep -q "warning: the real launch would refuse this: JOB_TOTAL_GPUS: 256: job pretrain_deepseek_v3_fp8_mx_256 can never run: needs 64 nodes (256 GPUs, 4 per node) but partition batch has 4 nodes in total" "$W/v1.err" &&
    ok "--dry-run of DeepSeek V3 GB300 x256 (64 nodes, --segment 16): can never run on the 4-node partition" ||
    fail "node count: $(cat "$W/v1.err")"
env RECIPE=qwen3_30b_a3b DTYPE=fp8_mx GPU_TYPE=b300 CONTAINER=26.06 SBATCH_GPUS_PER_NODE=16 STAGE_PATH="$V" "$launch" \
    --dry-run >/dev/null 2>"$W/v2.err"
grep -q "can never run: needs 1 nodes with 16 GPUs each (SBATCH_GPUS_PER_NODE=16) but partition batch has 0 such nodes (at most 8 GPUs per node)" "$W/v2.err" &&
    ok "--dry-run of a B300 row asking 16 GPUs per node: can never run (the nodes have 8)" || fail "GPUs per node: $(cat "$W/v2.err")"
env RECIPE=qwen3_30b_a3b DTYPE=fp8_mx GPU_TYPE=gb200 CONTAINER=26.08 SBATCH_GPUS_PER_NODE=16 STAGE_PATH="$V" "$launch" \
    --dry-run >/dev/null 2>"$W/v3.err"
grep -q "can never run: needs 2 nodes with 16 GPUs each (SBATCH_GPUS_PER_NODE=16)" "$W/v3.err" &&
    ok "--dry-run of a GB200 row (--segment 2) asking 16 GPUs per node: can never run" || fail "GB200 GPUs per node: $(cat "$W/v3.err")"
env RECIPE=qwen3_30b_a3b DTYPE=fp8_mx GPU_TYPE=gb200 CONTAINER=26.08 STAGE_PATH="$V" "$launch" --dry-run >/dev/null 2>"$W/v4.err"
if sbatch --help 2>&1 | grep -q -- --segment; then
    ! grep -q "can never run" "$W/v4.err" && ok "a GB200 row that fits: no warning" || fail "fits: $(cat "$W/v4.err")"
else
    grep -q "GPU_TYPE: gb200: job pretrain_qwen3_30b_a3b_fp8_mx_8 can never run: its #SBATCH --segment=2 .* is unknown to this cluster's sbatch" "$W/v4.err" &&
        ok "a GB200 row on a Slurm without --segment: can never run, naming the option" || fail "segment: $(cat "$W/v4.err")"
fi
[ ! -e "$V" ] && ok "the dry runs wrote nothing" || fail "$V was created"

[ "$fails" -eq 0 ] && echo "$T: all ok" || { echo "$T: $fails failure(s)"; exit 1; }
