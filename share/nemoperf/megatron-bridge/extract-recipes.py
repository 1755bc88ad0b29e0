#!/usr/bin/env python3
"""Resolve every published Megatron-Bridge row of a container to the release's own recipe, for nemoperf's launch.

For each run of <container> in share/nemoperf/reference/megatron-bridge/runs.tsv, finds the config Megatron-Bridge
would build for `-m <family> -mr <recipe> -g <gpu> -c <dtype> -ng <gpus> --task <task> [-cv <variant>]` at the
release matching the container, reading the release's Python with `ast` (nothing imported):

  v0.6.0+ (26.08):  src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py, functions
                    <recipe>_<task>_<N>gpu_<gpu>_<bf16|fp8cs|fp8mx|nvfp4>_config (scripts/performance/utils/utils.py);
                    the cfg.model.* / cfg.train.* assignments and cfg.env_vars (COMMON_PERF_ENV_VARS resolved from
                    perf_recipes/environment.py).
  v0.5.0 (26.06):   scripts/performance/configs/<family>/*_workload_base_configs.py, names
                    <RECIPE>_<TASK>_CONFIG_<GPU>_<DTYPE>_<VARIANT> built by dataclasses.replace chains over
                    WorkloadBaseConfig (scripts/performance/utils/utils.py); the variant is the one whose values
                    match the published row (-cv), v1 first.

Writes JSON (one object per row: the launch arguments, the resolved values with file:lines, the published values,
and every disagreement between the two) to stdout.
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
RELEASE = {"26.08": "v0.6.0", "26.06": "v0.5.0"}
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


def v5_configs(gitdir, commit, family):
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
             if f.endswith("_workload_base_configs.py")]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git", required=True)
    ap.add_argument("--container", required=True, choices=sorted(RELEASE))
    ap.add_argument("--runs", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference",
                                                   "megatron-bridge", "runs.tsv"))
    a = ap.parse_args()
    tag = RELEASE[a.container]
    commit = git(a.git, "rev-parse", tag + "^{commit}").strip()
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
    cache, rows = {}, []
    for r in runs:
        pub = published(r)
        fam, task = r["family"], r["task"]
        row = {"container": a.container, "mb_release": tag, "mb_commit": commit, "task": task,
               "family": fam, "recipe": r["recipe"], "dtype": r["dtype"], "gpu_type": r["gpu_type"],
               "gpus": pub["gpus"], "gpus_per_node": GPUS_PER_NODE[r["gpu_type"]], "published": pub,
               "published_source": r["source"], "variant": r["variant"], "published_as": r["published_as"]}
        if tag == "v0.6.0":
            if fam not in cache:
                cache[fam] = v6_functions(a.git, commit, fam)
            name = "%s_%s_%dgpu_%s_%s_config" % (r["recipe"], task, pub["gpus"], r["gpu_type"], SHORT[r["dtype"]])
            fn = cache[fam].get(name)
            if fn is None:
                row["resolved"] = None
                row["problems"] = ["no function %s in src/megatron/bridge/perf_recipes/%s at %s" % (name, fam, tag)]
            else:
                res = v6_resolve(cache[fam], name)
                got = {k: res["settings"].get(p) for k, (p, _) in FIELDS.items()}
                row["resolved"] = {"function": name, "source": "%s:%s" % (fn["file"], fn["lines"]),
                                   "built_on": ["%s (%s:%s)" % (n, cache[fam][n]["file"], cache[fam][n]["lines"])
                                                for n in res["chain"][:-1]],
                                   "values": got, "env": res["env"]}
                row["config_variant"] = None
                row["problems"], row["inherited"] = differences(pub, got)
        else:
            if fam not in cache:
                cache[fam] = v5_configs(a.git, commit, fam)
            stem = ("%s_%s_config_%s_%s" % (r["recipe"], task, r["gpu_type"], r["dtype"])).upper()
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
                row["resolved"] = None
                row["problems"] = ["no %s_V<n> in scripts/performance/configs/%s at %s" % (stem, fam, tag)]
            else:
                n, got = best
                row["resolved"] = {"config": n, "source": "%s:%s" % (cache[fam][n]["file"], cache[fam][n]["lines"]),
                                   "values": got, "variants": cands,
                                   # what PerfEnvPlugin reads of the config to set the job's environment
                                   # (v0.5.0 scripts/performance/perf_plugins.py:283-351,495-574)
                                   "perf_env_fields": {k: cache[fam][n]["fields"].get(k) for k in PERF_ENV_FIELDS}}
                row["config_variant"] = n.rsplit("_", 1)[1].lower() if n != stem else None
                row["problems"], row["inherited"] = differences(pub, got)
        if row["resolved"] is not None:
            # what the launch passes beyond -m -mr -g -c -ng [-cv]: the published value wherever the resolved
            # config differs from it or leaves it to a base recipe nemoperf does not read
            flags = {"tp": "-tp", "pp": "-pp", "cp": "-cp", "vp": "-vp", "ep": "-ep", "gbs": "-gb", "mbs": "-mb"}
            row["overrides"] = {}
            for k, flag in flags.items():
                have, want = row["resolved"]["values"].get(k), pub.get(k)
                if want is not None and have != want:
                    row["overrides"][flag] = want
            # the rank command's arguments (setup_experiment.py forwards its own argv minus the launcher-only
            # flags): --offline, never -hf (no token on a command line; setup stages the tokenizer files),
            # -ms 50 as NVIDIA's llmb runs (EXP llama3.1/pretrain/megatron_bridge/launch.sh)
            args = ["-m", fam, "-mr", r["recipe"], "-g", r["gpu_type"], "-c", r["dtype"], "-ng", str(pub["gpus"]),
                    "-gn", str(GPUS_PER_NODE[r["gpu_type"]]), "--task", task, "-ms", "50", "--offline"]
            if row["config_variant"]:
                args += ["-cv", row["config_variant"]]
            for flag, v in row["overrides"].items():
                args += [flag, str(v)]
            row["args"] = args
        rows.append(row)
    doc = {"generated_by": "share/nemoperf/megatron-bridge/extract-recipes.py --container %s" % a.container,
           "repo": REPO, "release": tag, "commit": commit, "rows": rows}
    json.dump(doc, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    unresolved = sum(1 for r in rows if r["resolved"] is None)
    differ = sum(1 for r in rows if r["resolved"] is not None and r["problems"])
    print("%s: %d rows, %d unresolved, %d differ from the published values" % (a.container, len(rows), unresolved,
                                                                              differ), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
