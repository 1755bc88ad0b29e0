#!/usr/bin/env python3
"""extract-dfm-automodel.py - the config keys DFM's AutoModel pre-training reads, from the pinned sources.

Reads DFM 9eaace1 and Automodel a5f0652 (DFM's 3rdparty/Automodel submodule at that commit) out of local git
mirrors (the `fetch` tool's /work/.mirror/<owner>+<name>/repo, or --mirror-root) with `git show`, parses the
Python with `ast` (nothing is imported or run) and writes one line per dotted config key with where it is read:
  - dfm/src/automodel/recipes/train.py: cfg.get("a.b"), cfg.a.b attribute chains, and .get("k") on the
    sections it takes apart (fsdp_cfg, fm_cfg, checkpoint_cfg, optimizer_cfg, dataloader kwargs),
  - dfm/src/automodel/datasets/mock_dataloader.py: build_mock_dataloader's keyword parameters
    (data.dataloader.<name>; dp_rank/dp_world_size/batch_size are the recipe's own), and _target_,
  - Automodel's build_distributed (dist_env.*) and build_wandb (wandb.* are wandb.init's keywords),
then "yaml" lines: every key of DFM's own examples/automodel/pretrain/wan2_1_t2v_flow.yaml (a key nemoperf's
config file inherits from it may be one the pinned code never reads).
Rerun:  python3 tests/data/contract/extract-dfm-automodel.py > tests/data/contract/dfm-automodel-keys.tsv
"""
import argparse
import ast
import os
import subprocess
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "share", "nemoperf",
                                "megatron-bridge"))
from pinned import attr_chain  # noqa: E402 (what the contract scripts share)

DFM = ("NVIDIA-NeMo/DFM", "9eaace14995a724c982fe53726a909be2edc93cb")
AM = ("NVIDIA-NeMo/Automodel", "a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5")
TRAIN = "dfm/src/automodel/recipes/train.py"
MOCK = "dfm/src/automodel/datasets/mock_dataloader.py"
FT = "nemo_automodel/recipes/llm/train_ft.py"
YAML = "examples/automodel/pretrain/wan2_1_t2v_flow.yaml"
# train.py's names for the config sections it takes apart
SECTIONS = {"fsdp_cfg": "fsdp", "fm_cfg": "flow_matching", "checkpoint_cfg": "checkpoint",
            "optimizer_cfg": "optim.optimizer", "cfg_dist": "dist_env"}

ap = argparse.ArgumentParser()
ap.add_argument("--mirror-root", default="/work/.mirror")
args = ap.parse_args()


def show(repo, path):
    git = "%s/%s/repo" % (args.mirror_root, repo[0].replace("/", "+"))
    return subprocess.run(["git", "--git-dir", git, "show", "%s:%s" % (repo[1], path)], check=True,
                          capture_output=True, text=True).stdout


keys = {}


def add(kind, key, repo, path, line):
    keys.setdefault((kind, key), "%s@%s:%s:%d" % (repo[0], repo[1], path, line))


def scan(repo, path, only=None):
    tree = ast.parse(show(repo, path))
    for node in ast.walk(tree):
        if only and isinstance(node, ast.FunctionDef) and node.name not in only:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and \
                node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            recv = attr_chain(node.func.value)
            if not recv:
                continue
            k = node.args[0].value
            if recv[-1] == "cfg" and recv[0] in ("self", "cfg"):
                add("config", k, repo, path, node.lineno)
            elif recv[-1] in SECTIONS:
                add("config", SECTIONS[recv[-1]] + "." + k, repo, path, node.lineno)
        elif isinstance(node, ast.Attribute):
            c = attr_chain(node)
            if c and len(c) >= 4 and c[:2] == ["self", "cfg"] and c[2] not in ("get",) and \
                    c[3] not in ("get", "to_dict", "instantiate"):
                add("config", ".".join(c[2:4]), repo, path, node.lineno)


scan(DFM, TRAIN)
for node in ast.walk(ast.parse(show(DFM, MOCK))):
    if isinstance(node, ast.FunctionDef) and node.name == "build_mock_dataloader":
        for a in node.args.kwonlyargs + node.args.args:
            if a.arg not in ("dp_rank", "dp_world_size", "batch_size"):
                add("config", "data.dataloader." + a.arg, DFM, MOCK, a.lineno)
        add("config", "data.dataloader._target_", DFM, TRAIN, 280)  # dataloader_cfg.instantiate(...)
tree = ast.parse(show(AM, FT))
for node in ast.walk(tree):
    if isinstance(node, ast.FunctionDef) and node.name == "build_distributed":
        for c in ast.walk(node):
            if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "get" and \
                    isinstance(c.args[0], ast.Constant):
                add("config", "dist_env." + c.args[0].value, AM, FT, c.lineno)
    if isinstance(node, ast.FunctionDef) and node.name == "build_wandb":
        for k in ("project", "mode", "name"):  # cfg.wandb.to_dict() as wandb.init(**kwargs)
            add("config", "wandb." + k, AM, FT, node.lineno)

# DFM's own YAML (flat dotted keys; lists and {} are values)
stack = []
for n, line in enumerate(show(DFM, YAML).splitlines(), 1):
    body = line.split("#", 1)[0].rstrip()
    if not body.strip() or ":" not in body:
        continue
    ind = (len(body) - len(body.lstrip())) // 2
    k, v = body.strip().split(":", 1)
    stack = stack[:ind] + [k]
    if v.strip():
        add("yaml", ".".join(stack), DFM, YAML, n)

print("# Config keys DFM's AutoModel pre-training reads, extracted by tests/data/contract/extract-dfm-automodel.py from")
print("#   %s@%s\n#   %s@%s (DFM's 3rdparty/Automodel at that commit)" % (DFM + AM))
print("# kind\tkey\twhere (repo@commit:path:line); kind yaml: a key of DFM's own %s" % YAML)
for (kind, k), where in sorted(keys.items()):
    print("%s\t%s\t%s" % (kind, k, where))
