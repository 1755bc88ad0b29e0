#!/usr/bin/env python3
"""Resolve every published Megatron-Bridge row of a container to the release's own recipe, for nemoperf's launch.

For each run of <container> in share/nemoperf/reference/megatron-bridge/runs.tsv, finds the config Megatron-Bridge
would build for the row's command line at the release matching the container (PINS below), reading the release's
Python and YAML with `ast` / `yaml.safe_load` (nothing imported).  One reader per layout generation (LAYOUTS):

  perf-recipes (v0.6.0+, 26.08): src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py, functions
                    <recipe>_<task>_<N>gpu_<gpu>_<bf16|fp8cs|fp8mx|nvfp4>_config (scripts/performance/utils/utils.py);
                    the cfg.model.* / cfg.train.* assignments and cfg.env_vars (COMMON_PERF_ENV_VARS resolved from
                    perf_recipes/environment.py).
  workload-v3 (v0.3.0 to v0.5.x, 26.02 to 26.06.01): scripts/performance/configs/<family>/*_workload_base_configs.py,
                    names <RECIPE>_<TASK>_CONFIG_<GPU>_<DTYPE>_<VARIANT> built by dataclasses.replace chains over
                    WorkloadBaseConfig (scripts/performance/utils/utils.py get_workload_base_config); the variant is
                    the one whose values match the published row (-cv), v1 first.
  workload-v2 (v0.2.x, 25.11): scripts/performance/configs/<model_name>/workload_base_configs.py, names
                    <MODEL>_<SIZE>_<GPU>[_<TASK>]_<DTYPE>_BASE_CONFIG (utils/utils.py get_workload_base_config; a
                    missing name falls back to WorkloadBaseConfig() there); -m <model_name> -s <model_size>.
  perf-matrix (v0.1.0rc4, 25.09): scripts/performance/configs/<model_name>/<model_name>_<size>_llm_pretrain.yaml,
                    perf_matrix.<gpu>.num_gpus_<N>: common merged with <compute_dtype>[_<fp8_recipe>]
                    (utils/helpers.py apply_perf_matrix_overrides); -c fp8 --fp8_recipe cs|mx|ss.

Writes JSON (one object per row: the launch arguments, the resolved values with file:lines, the published values,
every disagreement between the two, and whether nemoperf launches the row and why not) to stdout.
Usage: extract-recipes.py --git DIR --container 26.08 [--runs runs.tsv]
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pinned import attr_chain  # noqa: E402 (beside this script: what the contract scripts share)

REPO = "NVIDIA-NeMo/Megatron-Bridge"
# container -> (release label, git ref, layout, why this commit).  The pin is the release the container ships
# (docs/releases/software-versions.md at 067f987), at the first commit on its release branch whose own
# docs/performance-summary.md lists the container (a tag when the tag's scripts/performance is that commit's):
# NVIDIA publishes a container's table on the release branch after the release, so the shipped tag often lacks it.
PINS = {
    "26.08": ("v0.6.0", "v0.6.0", "perf-recipes", "v0.6.0's summary lists 26.08"),
    "26.06.01": ("r0.5.0-cba825f", "cba825fddb8fb42e707755f33a760e6dbda91d9d", "workload-v3",
                 "r0.5.0 cba825f 'cp: 26.06.01 perf summary (4989)' first lists 26.06.01 (no tag lists it before "
                 "v0.6.0's archive; llmb-r0.5.1 b50da4c, NVIDIA's llmb pin for 26.06.01, holds it)"),
    "26.06": ("v0.5.0", "v0.5.0", "workload-v3", "v0.5.0's summary lists 26.06"),
    "26.04.01": ("v0.4.2", "v0.4.2", "workload-v3",
                 "v0.4.2 (r0.4.0) first lists 26.04.01 (r0.4.0 cab6db3, same scripts/performance); v0.4.1's "
                 "summary stops at 26.02.01"),
    "26.04": ("r0.4.0-f171d7d", "f171d7d3015227711bc62f6e086783198d4c00bf", "workload-v3",
              "r0.4.0 f171d7d 'cp: 2604 perf summary (3377)' first lists 26.04 (v0.4.0 and v0.4.1, the 26.04 "
              "container's release, do not; v0.4.2 does, after 26.04.01's config changes)"),
    "26.02.01": ("r0.3.0-1f0cfc3", "1f0cfc3bc58a08507775ec029cd4d01e97bd16f5", "workload-v3",
                 "r0.3.0 1f0cfc3 'cp: 2602_perf_table_reorder and patch container data (2872)' first lists "
                 "26.02.01, a day after v0.3.1 (which does not)"),
    "26.02": ("v0.3.0", "v0.3.0", "workload-v3", "v0.3.0's summary lists 26.02"),
    "25.11": ("r0.2.0-44dae92", "44dae92b0cf756d3728fe41d10c9aa8832a55f6a", "workload-v2",
              "r0.2.0 44dae92 'cp: Added 25.11 starter pack (1596)' first lists 25.11 (v0.2.0, the 25.11 "
              "container's release, does not; v0.2.1 does, with later script changes)"),
    "25.09": ("v0.1.0rc4", "v0.1.0rc4", "perf-matrix",
              "v0.1.0rc4 (r0.1.0) first lists 25.09 (r0.1.0 68c25f5, same scripts/performance); v0.1.0rc3, the "
              "25.09 container's release, has no summary"),
}
RELEASE = {c: p[0] for c, p in PINS.items()}
# The releases whose launcher nemoperf renders (job/mbridge_perf.c: the executor's and PerfEnvPlugin's environment,
# the entry point, PYTHONPATH), with what that rests on.  Rows of any other release are listed, not launched.
LAUNCHERS = {
    "v0.6.0": "job/mbridge_perf.c renders v0.6.0's executor and bootstrap.py",
    "v0.5.0": "job/mbridge_perf.c renders v0.5.0's executor and PerfEnvPlugin",
    "r0.5.0-cba825f": "v0.5.0's launcher: v0.5.0..cba825f changes in perf_plugins.py, utils/executors.py and "
                      "setup_experiment.py only add vr200 beside gb200/gb300, B300's NCCL_IGNORE_CPU_AFFINITY (the "
                      "row's plugin_env; no 26.06.01 row is B300) and retry rules; its recipes' Hugging Face reads "
                      "are v0.5.0's (hf-files.tsv)",
}
# Releases whose launcher environment is NVIDIA's own code run for each row (launcher-env.py: the release's
# utils/executors.py slurm_executor() and perf_plugins.py PerfEnvPlugin.setup() on a stand-in NeMo-Run), written
# as the row's "launcher": job/mbridge_perf.c exports it for the releases it has no rendering of its own for
# (v0.4.2), and checks its v0.5.0 rendering against it (tests/mbridge/test_contract.py).
EVALUATED = {"v0.5.0", "r0.5.0-cba825f", "v0.4.2", "r0.4.0-f171d7d", "r0.3.0-1f0cfc3", "v0.3.0"}
LAUNCHERS["v0.4.2"] = ("the release's own executor and PerfEnvPlugin environment (launcher-env.py, the row's "
                       "\"launcher\"); v0.4.2's slurm_executor() is v0.5.0's but for its PERF_ENV_VARS (no "
                       "PYTORCH_CUDA_ALLOC_CONF/NCCL_GRAPH_REGISTER there: perf_plugins.py sets them per model), "
                       "run_script.py gets setup_experiment.py's whole argv (setup_experiment.py:471-476)")
LAUNCHERS["r0.4.0-f171d7d"] = ("the release's own executor and PerfEnvPlugin environment (launcher-env.py, the "
                               "row's \"launcher\"); its slurm_executor() is v0.4.2's without print_sha.sh and "
                               "with -C on every B300 job (utils/executors.py:135-138), run_script.py gets "
                               "setup_experiment.py's whole argv (setup_experiment.py:455-460)")

LAUNCHERS["r0.3.0-1f0cfc3"] = ("the release's own executor and PerfEnvPlugin environment (launcher-env.py, the "
                               "row's \"launcher\"); its slurm_executor() has no --container-writable, no "
                               "print_sha.sh, -C on every B300 job (utils/executors.py:86-89,128-129) and no "
                               "--offline; run_script.py gets setup_experiment.py's whole argv")
LAUNCHERS["v0.3.0"] = LAUNCHERS["r0.3.0-1f0cfc3"]  # slurm_executor() the same, line for line
# Releases before v0.3.0 build the rank command in setup_experiment.py itself: launcher-env.py --main runs that
# script up to run.run() on the stand-in NeMo-Run, and the row keeps the command it builds ("launcher".rank),
# which job/mbridge_perf.c renders with the checkout, account and partition of the job.
MAIN_EVALUATED = {"v0.1.0rc4", "r0.2.0-44dae92"}
LAUNCHERS["v0.1.0rc4"] = ("the release's own setup_experiment.py run up to run.run() (launcher-env.py --main, the "
                          "row's \"launcher\"): run_script.py --config_file <the model's YAML> --model_name "
                          "--model_size --compute_dtype --fp8_recipe --gpu [--use_tokendrop] -a dummy -p dummy -ng "
                          "(setup_experiment.py:142-159) and PerfEnvPlugin's manual GC overrides; the executor's "
                          "PERF_ENV_VARS, numactl (divisor 2 on GB200 only), srun without --container-writable, "
                          "--segment only beyond 18 nodes (utils/executors.py:38-142); PerfEnvPlugin from the "
                          "package (src/megatron/bridge/recipes/run_plugins.py:361-455)")
LAUNCHERS["r0.2.0-44dae92"] = ("the release's own setup_experiment.py run up to run.run() (launcher-env.py --main, "
                               "the row's \"launcher\"): run_script.py with setup_experiment.py's own argv, -a/-p "
                               "included (setup_experiment.py:130-149), PYTHONPATH the scripts folder, PerfEnvPlugin's "
                               "environment and manual GC overrides (perf_plugins.py:361-415); numactl divisor 2 on "
                               "GB200 only (GB300 4), srun without --container-writable, --segment only beyond 18 "
                               "nodes (utils/executors.py:85-148)")
# Rows of a launched release that nemoperf still cannot launch as NVIDIA did: (release, recipe prefix) -> why.
ROW_NOT_YET = {
}

# Published variants a release's command cannot ask for: (release, recipe, variant) -> why.
VARIANT_NOT = {
    ("r0.2.0-44dae92", "deepseek_v3", "w/o MTP"):
        "published without MTP, but the release builds DeepSeek V3 with one MTP layer (scripts/performance/configs/"
        "deepseek/deepseek_llm_pretrain.py:57-64 calls pretrain_config() without mtp_num_layers: "
        "src/megatron/bridge/recipes/deepseek/deepseek_v3.py:174,220 default 1) and its parser has no option for "
        "it; no NVIDIA source says how the row was run without MTP",
}
# Releases whose launcher is one nemoperf renders but whose rows are not launched yet, and why.
NOT_YET = {}
# Environment a release's launcher set that its tag lacks, for rows measured after the tag on its branch:
# (container, gpu) -> [(name, value, source)].  26.06's B300 rows were added by r0.5.0 a0faf081e (2026-06-22
# 21:06), five minutes after 4cfb04a "b300_regression_fix_rel2606" set NCCL_IGNORE_CPU_AFFINITY=1 for every B300
# job (MB v0.5.1 scripts/performance/perf_plugins.py:353-354); v0.5.0 (fcbb603, 06-16) predates both.
PLUGIN_ENV = {
    ("26.06", "b300"): [("NCCL_IGNORE_CPU_AFFINITY", "1",
                         "MB r0.5.0 4cfb04a scripts/performance/perf_plugins.py:353-354 (gpu == b300; the 26.06 "
                         "B300 rows were added after it, a0faf081e)")],
    ("26.06.01", "b300"): [("NCCL_IGNORE_CPU_AFFINITY", "1",
                            "MB r0.5.0 cba825f scripts/performance/perf_plugins.py:353-354 (gpu == b300)")],
}
# -mr recipe -> (-m model_name, -s model_size) of the releases before v0.3.0 (their argument_parser.py)
OLD_NAMES = {"llama3_8b": ("llama3", "8b"), "llama3_70b": ("llama3", "70b"), "llama31_405b": ("llama31", "405b"),
             "deepseek_v3": ("deepseek", "v3"), "qwen3_30b_a3b": ("qwen3", "30b_a3b"),
             "qwen3_235b_a22b": ("qwen3", "235b_a22b"), "gpt_oss_120b": ("gpt_oss", "120b"),
             "nemotronh_56b": ("nemotronh", "56b")}
# v0.1.0rc4's -c fp8 --fp8_recipe: the published dtype names (runs.tsv) -> (compute_dtype, fp8_recipe)
RC_DTYPE = {"bf16": ("bf16", None), "fp8_cs": ("fp8", "cs"), "fp8_mx": ("fp8", "mx"), "fp8_sc": ("fp8", "ss")}
GPUS_PER_NODE = {"h100": 8, "b200": 8, "b300": 8, "gb200": 4, "gb300": 4}  # argument_parser.py NUM_GPUS_PER_NODE_MAP
SHORT = {"bf16": "bf16", "fp8_cs": "fp8cs", "fp8_mx": "fp8mx", "nvfp4": "nvfp4"}
# WorkloadBaseConfig fields v0.5.0's PerfEnvPlugin turns into environment variables (perf_plugins.py:283-351,
# 495-574; defaults utils.py:30-63)
PERF_ENV_FIELDS = ("moe_flex_dispatcher_backend", "moe_a2a_overlap", "cuda_graph_impl", "cuda_graph_scope",
                   "cutedsl_fused_grouped_mlp", "nccl_ub", "use_megatron_fsdp")
# published column -> (v0.6.0 cfg attribute path, v0.5.0 WorkloadBaseConfig field)
FIELDS = {
    "tp": ("model.tensor_model_parallel_size", "tensor_model_parallel_size"),
    "pp": ("model.pipeline_model_parallel_size", "pipeline_model_parallel_size"),
    "cp": ("model.context_parallel_size", "context_parallel_size"),
    "vp": ("model.virtual_pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size"),
    "ep": ("model.expert_model_parallel_size", "expert_model_parallel_size"),
    "gbs": ("train.global_batch_size", "global_batch_size"),
    "mbs": ("train.micro_batch_size", "micro_batch_size"),
}


def git(gitdir, *a):
    return subprocess.run(["git", "--git-dir", gitdir] + list(a), check=True, capture_output=True,
                          text=True).stdout


def lit(node, env):
    """A literal, a name bound in env, or None for anything else."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None


def v6_functions(gitdir, commit, family):
    """{function name: (file, lines, settings{path: value}, settings lines, env{})} for one family."""
    base = "src/megatron/bridge/perf_recipes"
    envsrc = git(gitdir, "show", "%s:%s/environment.py" % (commit, base))
    consts = {}
    for node in ast.parse(envsrc).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = lit(node.value, consts)
            if v is not None:
                consts[node.targets[0].id] = v
    out = {}
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", commit, "%s/%s" % (base, family)).split()
             if f.endswith(".py")]
    for f in files:
        tree = ast.parse(git(gitdir, "show", "%s:%s" % (commit, f)))
        for fn in tree.body:
            if not isinstance(fn, ast.FunctionDef) or not fn.name.endswith("_config"):
                continue
            settings, lines, env, base = {}, {}, {}, None
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    path = ".".join(attr_chain(node.targets[0], partial=True))
                    if path == "cfg" and isinstance(node.value, ast.Call) and \
                            isinstance(node.value.func, ast.Name) and node.value.func.id.endswith("_config"):
                        base = node.value.func.id
                        continue
                    if path == "cfg.env_vars" and isinstance(node.value, ast.Dict):
                        for k, v in zip(node.value.keys, node.value.values):
                            if k is None and isinstance(v, ast.Name) and isinstance(consts.get(v.id), dict):
                                env.update(consts[v.id])
                            elif k is not None:
                                env[lit(k, {})] = lit(v, consts)
                        lines["env_vars"] = node.lineno
                    elif path.startswith("cfg."):
                        v = lit(node.value, {})
                        settings[path[4:]] = v
                        lines[path[4:]] = node.lineno
            out[fn.name] = {"file": f, "lines": "%d-%d" % (fn.lineno, fn.end_lineno), "settings": settings,
                            "setting_lines": lines, "env": env, "base": base}
    return out


def v6_resolve(funcs, name, depth=0):
    """settings and env of name with those of the perf function it starts from (cfg = other_config()) below."""
    fn = funcs.get(name)
    if fn is None or depth > 8:
        return None
    settings, env, chain = {}, {}, [name]
    if fn["base"] in funcs:
        below = v6_resolve(funcs, fn["base"], depth + 1)
        settings, env, chain = dict(below["settings"]), dict(below["env"]), below["chain"] + chain
    settings.update(fn["settings"])
    env.update(fn["env"]) if fn["env"] else None
    return {"settings": settings, "env": env if not fn["env"] else fn["env"], "chain": chain}


def v5_configs(gitdir, commit, family, pattern="_workload_base_configs.py"):
    """{CONFIG NAME: (file, line, fields)} from the family's *_workload_base_configs.py."""
    utils = ast.parse(git(gitdir, "show", "%s:scripts/performance/utils/utils.py" % commit))
    defaults = {}
    for node in ast.walk(utils):
        if isinstance(node, ast.ClassDef) and node.name == "WorkloadBaseConfig":
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                    defaults[st.target.id] = lit(st.value, {}) if st.value is not None else None
    out = {}
    d = "scripts/performance/configs/%s" % family
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", commit, d).split()
             if f.endswith(pattern)]
    for f in files:
        env = {}
        for node in ast.parse(git(gitdir, "show", "%s:%s" % (commit, f))).body:
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and
                    isinstance(node.targets[0], ast.Name)):
                continue
            name, v = node.targets[0].id, node.value
            val = None
            if isinstance(v, ast.Name) and v.id in env:
                val = dict(env[v.id])
            elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name):
                if v.func.id == "WorkloadBaseConfig":
                    val = dict(defaults)
                elif v.func.id == "replace" and v.args and isinstance(v.args[0], ast.Name) and v.args[0].id in env:
                    val = dict(env[v.args[0].id])
                if val is not None:
                    for k in v.keywords:
                        val[k.arg] = lit(k.value, {})
            if val is not None:
                env[name] = val
                out[name] = {"file": f, "lines": "%d-%d" % (node.lineno, node.end_lineno), "fields": val}
    return out


def num(s):
    return None if s in ("-", "n/a") else (int(s) if re.match(r"^\d+$", s) else float(s))


def published(run):
    return {k: num(run[k]) for k in ("gpus", "gbs", "mbs", "seq_len", "tp", "pp", "cp", "vp", "ep",
                                      "tokens_per_s_per_gpu", "model_tflops_per_gpu")}


def differences(pub, got):
    """(disagreements, fields the recipe leaves to its base recipe) between published and resolved values."""
    diffs, inherited = [], []
    for k in FIELDS:
        want, have = pub.get(k), got.get(k)
        if have is None:
            if want is not None:
                inherited.append(k)
        elif k in ("vp", "ep") and want is None and have == 1:
            continue
        elif want != have:
            diffs.append("%s: published %s, recipe %s" % (k, want, have))
    return diffs, inherited


def v2_configs(gitdir, commit, model_name):
    """{NAME: {file, lines, fields}} of v0.2.x's configs/<model_name>/workload_base_configs.py (the same
    WorkloadBaseConfig / replace chains as v5_configs, in one file per model name)."""
    return v5_configs(gitdir, commit, model_name, pattern="workload_base_configs.py")


def perf_matrix(gitdir, commit, model_name, size):
    """(file, perf_matrix dict, {gpu: first line}) of v0.1.0rc4's <model_name>_<size>_llm_pretrain.yaml."""
    import yaml  # PyYAML: data only (safe_load)
    f = "scripts/performance/configs/%s/%s_%s_llm_pretrain.yaml" % (model_name, model_name, size)
    try:
        text = git(gitdir, "show", "%s:%s" % (commit, f))
    except subprocess.CalledProcessError:
        return f, None, {}
    lines = {}
    for i, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^  (\w+):\s*$", line)
        if m and m.group(1) not in lines:
            lines[m.group(1)] = i
        if re.match(r"^    train_iters:", line):  # ConfigContainer.train.train_iters: the run's length
            lines["train_iters"] = i
    doc = yaml.safe_load(text) or {}
    lines["train_iters_value"] = ((doc.get("ConfigContainer") or {}).get("train") or {}).get("train_iters")
    return f, doc.get("perf_matrix") or {}, lines


def known_options(gitdir, commit):
    """Every option string of the release's scripts/performance/argument_parser.py (add_argument calls)."""
    out = set()
    for node in ast.walk(ast.parse(git(gitdir, "show", "%s:scripts/performance/argument_parser.py" % commit))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            out |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return out


def read_perf_recipes(ctx, r, pub):
    """v0.6.0+: the perf_recipes function of the row (scripts/performance/utils/utils.py:426-458,524-545)."""
    fam, cache = r["family"], ctx["cache"]
    if fam not in cache:
        cache[fam] = v6_functions(ctx["git"], ctx["commit"], fam)
    name = "%s_%s_%dgpu_%s_%s_config" % (r["recipe"], r["task"], pub["gpus"], r["gpu_type"], SHORT[r["dtype"]])
    fn = cache[fam].get(name)
    if fn is None:
        return None, None, ["no function %s in src/megatron/bridge/perf_recipes/%s at %s" % (name, fam, ctx["tag"])]
    res = v6_resolve(cache[fam], name)
    got = {k: res["settings"].get(p) for k, (p, _) in FIELDS.items()}
    return ({"function": name, "source": "%s:%s" % (fn["file"], fn["lines"]),
             "built_on": ["%s (%s:%s)" % (n, cache[fam][n]["file"], cache[fam][n]["lines"]) for n in res["chain"][:-1]],
             "values": got, "env": res["env"]}, None, None)


def read_workload_v3(ctx, r, pub):
    """v0.3.0 to v0.5.x: the WorkloadBaseConfig variant matching the published row."""
    fam, cache = r["family"], ctx["cache"]
    if fam not in cache:
        cache[fam] = v5_configs(ctx["git"], ctx["commit"], fam)
    stem = ("%s_%s_config_%s_%s" % (r["recipe"], r["task"], r["gpu_type"], r["dtype"])).upper()
    cands = sorted((n for n in cache[fam] if n.startswith(stem + "_V")), key=lambda n: int(n.rsplit("V", 1)[1])
                   if n.rsplit("V", 1)[1].isdigit() else 99)
    if not cands and stem in cache[fam]:
        cands = [stem]  # get_workload_base_config's non-versioned fallback (utils.py)
    best = None
    for n in cands:
        f = cache[fam][n]["fields"]
        got = {k: f.get(v5) for k, (_, v5) in FIELDS.items()}
        if best is None or (not differences(pub, got)[0] and differences(pub, best[1])[0]):
            best = (n, got)
    if best is None:
        return None, None, ["no %s_V<n> in scripts/performance/configs/%s at %s" % (stem, fam, ctx["tag"])]
    n, got = best
    return ({"config": n, "source": "%s:%s" % (cache[fam][n]["file"], cache[fam][n]["lines"]),
             "values": got, "variants": cands,
             # what PerfEnvPlugin reads of the config to set the job's environment
             # (v0.5.0 scripts/performance/perf_plugins.py:283-351,495-574)
             "perf_env_fields": {k: cache[fam][n]["fields"].get(k) for k in PERF_ENV_FIELDS}},
            n.rsplit("_", 1)[1].lower() if n != stem else None, None)


def read_workload_v2(ctx, r, pub):
    """v0.2.x: <MODEL>_<SIZE>_<GPU>[_<TASK>]_<DTYPE>_BASE_CONFIG; a missing name runs WorkloadBaseConfig()
    (utils/utils.py get_workload_base_config), which no published row is."""
    if r["recipe"] not in OLD_NAMES:
        return None, None, ["recipe %s has no -m/-s name at %s" % (r["recipe"], ctx["tag"])]
    model, size = OLD_NAMES[r["recipe"]]
    key = ("v2", model)
    if key not in ctx["cache"]:
        ctx["cache"][key] = v2_configs(ctx["git"], ctx["commit"], model)
    parts = [model, size, r["gpu_type"]] + ([r["task"]] if r["task"] in ("sft", "lora") else []) + [r["dtype"]]
    name = ("_".join(parts) + "_BASE_CONFIG").upper()
    c = ctx["cache"][key].get(name)
    if c is None:
        return None, None, ["no %s in scripts/performance/configs/%s/workload_base_configs.py at %s (the release "
                            "would run WorkloadBaseConfig()'s defaults)" % (name, model, ctx["tag"])]
    got = {k: c["fields"].get(v5) for k, (_, v5) in FIELDS.items()}
    if c["fields"].get("num_gpus") not in (None, pub["gpus"]) and "-gb" in ctx["options"]:
        pass  # -gb on the command keeps the published GBS (helpers.py scales it when -ng differs from num_gpus)
    return ({"config": name, "source": "%s:%s" % (c["file"], c["lines"]), "values": got, "model_name": model,
             "model_size": size, "num_gpus": c["fields"].get("num_gpus"),
             "perf_env_fields": {k: c["fields"].get(k) for k in PERF_ENV_FIELDS}}, None, None)


def read_perf_matrix(ctx, r, pub):
    """v0.1.0rc4: perf_matrix.<gpu>.num_gpus_<N>, common deep-merged with the dtype block (helpers.py:138-170)."""
    if r["recipe"] not in OLD_NAMES or r["dtype"] not in RC_DTYPE:
        return None, None, ["recipe %s / dtype %s has no -m/-s/-c name at %s" % (r["recipe"], r["dtype"], ctx["tag"])]
    model, size = OLD_NAMES[r["recipe"]]
    key = ("rc", model, size)
    if key not in ctx["cache"]:
        ctx["cache"][key] = perf_matrix(ctx["git"], ctx["commit"], model, size)
    f, pm, lines = ctx["cache"][key]
    cd, fr = RC_DTYPE[r["dtype"]]
    dkey = cd if fr is None else "%s_%s" % (cd, fr)
    preset = ((pm or {}).get(r["gpu_type"]) or {}).get("num_gpus_%d" % pub["gpus"])
    if not preset:
        return None, None, ["no perf_matrix.%s.num_gpus_%d in %s at %s" % (r["gpu_type"], pub["gpus"], f, ctx["tag"])]
    if dkey not in preset:
        return None, None, ["no %s block under perf_matrix.%s.num_gpus_%d in %s at %s"
                            % (dkey, r["gpu_type"], pub["gpus"], f, ctx["tag"])]
    merged = dict(preset.get("common") or {})
    merged.update(preset.get(dkey) or {})
    # apply_perf_matrix_overrides' defaults when a key is absent (helpers.py:152-163)
    got = {"tp": merged.get("tp", 1), "pp": merged.get("pp", 1), "cp": merged.get("cp", 1), "vp": merged.get("vp"),
           "ep": merged.get("ep", 1), "gbs": merged.get("gbs"), "mbs": merged.get("mbs")}
    return ({"config": "perf_matrix.%s.num_gpus_%d.%s" % (r["gpu_type"], pub["gpus"], dkey),
             "source": "%s:%s" % (f, lines.get(r["gpu_type"], 1)), "values": got, "model_name": model,
             # no -ms in the parser: the run's length is the YAML's, which run_script.py merges (run_script.py:138-145)
             "train_iters": {"value": lines.get("train_iters_value"), "source": "%s:%s" % (f, lines.get("train_iters"))},
             "model_size": size, "seq_length": merged.get("seq_length"),
             "perf_env_fields": {k: merged.get(k) for k in PERF_ENV_FIELDS}}, None, None)


# Releases whose rank command is not the launcher's arguments: there `args` are what setup_experiment.py is given
# (less -a/-p), and the rank command is the one the release builds from them ("launcher".rank, MAIN_EVALUATED).
RANK_COMMAND = {
    "perf-matrix": "v0.1.0rc4's setup_experiment.py builds the rank command itself: --config_file <yaml> "
                   "--model_name --model_size --compute_dtype --fp8_recipe --gpu [--use_tokendrop] -a dummy -p dummy "
                   "-ng <N> (setup_experiment.py:142-159), which nemoperf does not render",
    "workload-v2": "the release's setup_experiment.py passes its own argv to run_script.py, -a/--account and "
                   "-p/--partition included, which its parser requires (setup_experiment.py:130-142); nemoperf "
                   "does not render that rank command",
}

LAYOUTS = {"perf-recipes": read_perf_recipes, "workload-v3": read_workload_v3, "workload-v2": read_workload_v2,
           "perf-matrix": read_perf_matrix}


def command_args(ctx, r, pub, resolved, variant):
    """The rank command's arguments (setup_experiment.py forwards its own argv minus the launcher-only flags), and
    what the release's parser cannot take.  v0.3.0+: -m <family> -mr <recipe>; before: -m <model_name> -s <size>
    (and v0.1.0rc4: -c fp8 --fp8_recipe cs|mx|ss).  --offline, never -hf (no token on a command line; setup
    stages the tokenizer files), -ms 50 as NVIDIA's llmb runs (EXP llama3.1/pretrain/megatron_bridge/launch.sh),
    each only where the release has the option."""
    opts, layout, problems = ctx["options"], ctx["layout"], []
    gpn = str(GPUS_PER_NODE[r["gpu_type"]])
    if layout in ("perf-recipes", "workload-v3"):
        args = ["-m", r["family"], "-mr", r["recipe"], "-g", r["gpu_type"], "-c", r["dtype"]]
    else:
        args = ["-m", resolved["model_name"], "-s", resolved["model_size"], "-g", r["gpu_type"]]
        cd, fr = RC_DTYPE.get(r["dtype"], (r["dtype"], None)) if layout == "perf-matrix" else (r["dtype"], None)
        args += ["-c", cd] + (["--fp8_recipe", fr] if fr else [])
    args += ["-ng", str(pub["gpus"]), "-gn", gpn]
    for flag, value in (("--task", r["task"]), ("-ms", "50"), ("--offline", None)):
        if flag in opts:
            args += [flag] + ([value] if value is not None else [])
        elif flag == "--task" and r["task"] != "pretrain":
            problems.append("the release's parser has no --task: %s cannot be asked for" % r["task"])
    if layout == "perf-matrix" and r["recipe"] == "deepseek_v3":  # run_script.py: tokendrop unless dropless
        args += ["--use_tokendrop", "false" if r["variant"] == "dropless" else "true"]
    if variant:
        args += ["-cv", variant]
    overrides = {}
    flags = {"tp": "-tp", "pp": "-pp", "cp": "-cp", "vp": "-vp", "ep": "-ep", "gbs": "-gb", "mbs": "-mb"}
    for k, flag in flags.items():
        have, want = resolved["values"].get(k), pub.get(k)
        if k == "gbs" and layout == "workload-v2" and want is not None and resolved.get("num_gpus") not in (
                None, pub["gpus"]) and have == want:
            have = None  # helpers.py scales GBS when -ng is not num_gpus: say it on the command
        if k == "vp" and want == 1 and have is None:
            continue  # a published VP of 1 is no interleaving: what the config's None already asks
        if k == "vp" and want is None and have not in (None, 1):
            # published without interleaving, the config has it: v0.3.0+ take "-vp None" (argument_parser.py's
            # lambda x: None if x == "None" else int(x)); older parsers take an int only
            if layout in ("perf-recipes", "workload-v3"):
                overrides[flag] = "None"
            else:
                problems.append("-vp: published without interleaving, the release's config has VP %s and its "
                                "parser cannot unset it" % have)
            continue
        if want is not None and have != want:
            overrides[flag] = want
    names = {v: k for k, v in flags.items()}
    for flag, v in overrides.items():
        if flag in opts:
            args += [flag, str(v)]
        else:
            problems.append("cannot be run as published: %s %s published, the release config has %s and the "
                            "release's parser has no %s" % (names[flag].upper(), v, resolved["values"].get(names[flag]),
                                                            flag))
    return args, overrides, problems


# Qwen3: v0.1.0rc4 (setup_experiment.py:51-52) and r0.2.0 44dae92 (:74-75) assert an HF token; the harness gives
# them a placeholder, and token_free() takes out what it brought: nemoperf writes no token into a job.
TOKEN_RECIPES = {"qwen3_30b_a3b", "qwen3_235b_a22b"}


def token_free(r, got):
    """The row's launcher without the placeholder token: the release sets HF_TOKEN and TRANSFORMERS_OFFLINE=0 for
    it (v0.1.0rc4 utils/executors.py:100-101, r0.2.0 44dae92 :107-108) and r0.2.0's rank command carries it (-hf, its
    setup_experiment.py argv); nemoperf's job carries no token and reads the staged tokenizer/config offline under
    the release's own TRANSFORMERS_OFFLINE=1 (PERF_ENV_VARS, utils/executors.py:40), as v0.4.0's launcher runs
    Qwen3 with --offline (setup_experiment.py:281-285).  What was taken out is kept in "token_dropped"."""
    dropped = {"env": {"HF_TOKEN": got["env"].pop("HF_TOKEN"),
                       "TRANSFORMERS_OFFLINE": got["env"].get("TRANSFORMERS_OFFLINE")}, "args": []}
    got["env"]["TRANSFORMERS_OFFLINE"] = "1"
    a = got["rank"]["args"]
    while "-hf" in a and a[a.index("-hf") + 1] == "@HF_TOKEN@":
        i = a.index("-hf")
        dropped["args"] += a[i:i + 2]
        del a[i:i + 2]
    dropped["why"] = token_free.__doc__.split(":", 1)[1].split("What was taken")[0].strip().replace("\n    ", " ")
    r["token_dropped"] = dropped


def evaluate_launcher(gitdir, commit, tag, rows, main=False):
    """Each resolved row's "launcher": the environment and task overrides the release's own slurm_executor() and
    PerfEnvPlugin.setup() give it (launcher-env.py in the release's scripts/performance, unpacked here).  main:
    the release's whole setup_experiment.py run up to run.run() (launcher-env.py --main), which also gives the
    rank command the release builds ("rank") and its executor's srun settings."""
    import tempfile
    todo = [r for r in rows if r.get("args")]
    with tempfile.TemporaryDirectory(prefix="np-mb-launcher-") as tmp:
        paths = ["scripts/performance"]
        if main and git(gitdir, "ls-tree", "--name-only", commit, "src/megatron/bridge/recipes/run_plugins.py"):
            paths.append("src/megatron/bridge/recipes/run_plugins.py")  # v0.1.0rc4's PerfEnvPlugin (package's)
        tar = subprocess.run(["git", "--git-dir", gitdir, "archive", commit] + paths, check=True,
                             capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=tar, check=True)
        here = os.path.dirname(os.path.abspath(__file__))
        where = ["--main", tmp] if main else [os.path.join(tmp, "scripts", "performance")]
        p = subprocess.run([sys.executable, os.path.join(here, "launcher-env.py")] + where,
                           input=json.dumps({"rows": [{"args": r["args"], "gpus_per_node": r["gpus_per_node"],
                                                       "hf_token": main and r["recipe"] in TOKEN_RECIPES}
                                                      for r in todo]}),
                           capture_output=True, text=True, check=True)
    src = ("MB %s %s scripts/performance/utils/executors.py slurm_executor() and perf_plugins.py "
           "PerfEnvPlugin.setup(), run for this row by launcher-env.py" % (tag, commit[:7]))
    if main:
        src = ("MB %s %s scripts/performance/setup_experiment.py run as __main__ up to run.run() (its "
               "utils/executors.py slurm_executor(), its PerfEnvPlugin.setup() and run.Script) by launcher-env.py "
               "--main" % (tag, commit[:7]))
    for r, got in zip(todo, json.loads(p.stdout)["rows"]):
        r["launcher"] = {"env": got["env"], "task_args": got["task_args"], "error": got["error"], "source": src}
        for k in ("rank", "pre_cmds", "srun_args", "segment"):
            if k in got:
                r["launcher"][k] = got[k]
        if main and not got["error"] and got["env"].get("HF_TOKEN") == "@HF_TOKEN@":
            token_free(r, got)
        if main and not got["error"]:
            # both releases' slurm_executor(): "if num_gpus_per_node == 4 and nodes > 18" (v0.1.0rc4
            # utils/executors.py:106-112, r0.2.0 44dae92 :113-119); v0.3.0 on segment every 4-GPU job
            r["launcher"]["segment_beyond_rack"] = True
        if got["error"]:
            r["launch"]["why_not"] = (r["launch"]["why_not"] or []) + [
                "the release's own launcher refuses the row: %s" % got["error"]]
            r["launch"]["launchable"] = False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git", required=True)
    ap.add_argument("--container", required=True, choices=sorted(PINS))
    ap.add_argument("--runs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference",
                                                   "megatron-bridge", "runs.tsv"))
    a = ap.parse_args()
    tag, ref, layout, why = PINS[a.container]
    commit = git(a.git, "rev-parse", ref + "^{commit}").strip()
    runs, header = [], None
    for line in open(a.runs, encoding="utf-8"):
        if line.startswith("#"):
            continue
        cells = line.rstrip("\n").split("\t")
        if header is None:
            header = cells
        else:
            r = dict(zip(header, cells))
            if r["container"] == a.container:
                runs.append(r)
    ctx = {"git": a.git, "commit": commit, "tag": tag, "layout": layout, "cache": {},
           "options": known_options(a.git, commit)}
    rows = []
    for r in runs:
        pub = published(r)
        row = {"container": a.container, "mb_release": tag, "mb_commit": commit, "task": r["task"],
               "family": r["family"], "recipe": r["recipe"], "dtype": r["dtype"], "gpu_type": r["gpu_type"],
               "gpus": pub["gpus"], "gpus_per_node": GPUS_PER_NODE[r["gpu_type"]], "published": pub,
               "published_source": r["source"], "variant": r["variant"], "published_as": r["published_as"]}
        resolved, variant, problems = LAYOUTS[layout](ctx, r, pub)
        row["resolved"] = resolved
        cant = []
        if resolved is None:
            row["problems"] = problems
            cant = list(problems)
        else:
            if layout != "perf-recipes":
                row["config_variant"] = variant
            else:
                row["config_variant"] = None
            row["problems"], row["inherited"] = differences(pub, resolved["values"])
            row["args"], row["overrides"], cant = command_args(ctx, r, pub, resolved, variant)
            # key order as 26.06/26.08 always had it: overrides before args
            row["overrides"] = row.pop("overrides")
            row["args"] = row.pop("args")
        if layout in RANK_COMMAND:
            row["args_are"] = "setup_experiment"  # the rank command is the release's own: "launcher".rank
        env = PLUGIN_ENV.get((a.container, r["gpu_type"]), [])
        if env:
            row["plugin_env"] = [{"name": n, "value": v, "source": s} for n, v, s in env]
        if (tag, r["recipe"], r["variant"]) in VARIANT_NOT:
            cant.append("the release cannot run this row as published: %s" % VARIANT_NOT[(tag, r["recipe"],
                                                                                        r["variant"])])
        for (rel, prefix), why_row in ROW_NOT_YET.items():
            if rel == tag and r["recipe"].startswith(prefix):
                cant.append("nemoperf does not launch this row yet: %s" % why_row)
        if tag in NOT_YET:
            cant.append("nemoperf does not launch %s rows yet: %s" % (tag, NOT_YET[tag]))
        elif tag not in LAUNCHERS:
            cant.append("nemoperf renders the launcher of %s only; %s's (scripts/performance/perf_plugins.py, "
                        "utils/executors.py, setup_experiment.py) is not rendered"
                        % (", ".join(sorted(LAUNCHERS)), tag))
        row["launch"] = {"launchable": not cant, "why_not": cant or None}
        rows.append(row)
    if tag in EVALUATED:
        evaluate_launcher(a.git, commit, tag, rows)
    if tag in MAIN_EVALUATED:
        evaluate_launcher(a.git, commit, tag, rows, main=True)
    doc = {"generated_by": "share/nemoperf/megatron-bridge/extract-recipes.py --container %s" % a.container,
           "repo": REPO, "release": tag, "commit": commit, "layout": layout, "pin": why,
           "launcher": LAUNCHERS.get(tag), "rows": rows}
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    unresolved = sum(1 for r in rows if r["resolved"] is None)
    differ = sum(1 for r in rows if r["resolved"] is not None and r["problems"])
    launch = sum(1 for r in rows if r["launch"]["launchable"])
    print("%s: %d rows, %d unresolved, %d differ from the published values, %d launchable"
          % (a.container, len(rows), unresolved, differ, launch), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
