#!/usr/bin/env python3
"""extract-dfm.py - the config keys and flags the DFM Wan job may use, from the pinned sources.

Reads the pinned commits out of local git mirrors (the `fetch` tool's /work/.mirror/<owner>+<name>/repo, or
--mirror-root) with `git show`, parses the Python with `ast` (nothing is imported or run) and writes
tests/data/contract/dfm-keys.tsv: one line per dataclass field of every ConfigContainer section the Wan recipe
uses (the field's class, inherited fields included, with repo@commit:path:line), plus pretrain_wan.py's argparse
flags.  Rerun:  python3 tests/data/contract/extract-dfm.py > tests/data/contract/dfm-keys.tsv
"""
import argparse
import ast
import subprocess
import sys

DFM = ("NVIDIA-NeMo/DFM", "9eaace14995a724c982fe53726a909be2edc93cb")
MB = ("NVIDIA-NeMo/Megatron-Bridge", "953aabf75c0500180dc14a6a76cf9e7e7c4baec7")
MLM = ("NVIDIA/Megatron-LM", "2d398b42fd4237fffb553109563d73ac099751c3")

# where each class (and base class) the Wan ConfigContainer uses is defined at the pins
CLASSES = {
    "WanModelProvider": (DFM, "dfm/src/megatron/model/wan/wan_provider.py"),
    "WanMockDataModuleConfig": (DFM, "dfm/src/megatron/data/wan/wan_mock_datamodule.py"),
    "TransformerConfig": (MB, "src/megatron/bridge/models/transformer_config.py"),
    "ModelProviderMixin": (MB, "src/megatron/bridge/models/model_provider.py"),
    "MCoreTransformerConfig": (MLM, "megatron/core/transformer/transformer_config.py", "TransformerConfig"),
    "ModelParallelConfig": (MLM, "megatron/core/model_parallel_config.py"),
    "DistributedDataParallelConfig": (MB, "src/megatron/bridge/training/config.py"),
    "MCoreDistributedDataParallelConfig": (MLM, "megatron/core/distributed/distributed_data_parallel_config.py",
                                           "DistributedDataParallelConfig"),
    "OptimizerConfig": (MB, "src/megatron/bridge/training/config.py"),
    "MCoreOptimizerConfig": (MLM, "megatron/core/optimizer/optimizer_config.py", "OptimizerConfig"),
    "DistributedInitConfig": (MB, "src/megatron/bridge/training/config.py"),
    "DataloaderConfig": (MB, "src/megatron/bridge/training/config.py"),
    "DatasetProvider": (MB, "src/megatron/bridge/training/config.py"),
    "SchedulerConfig": (MB, "src/megatron/bridge/training/config.py"),
    "TrainingConfig": (MB, "src/megatron/bridge/training/config.py"),
    "CheckpointConfig": (MB, "src/megatron/bridge/training/config.py"),
    "LoggerConfig": (MB, "src/megatron/bridge/training/config.py"),
    "ProfilingConfig": (MB, "src/megatron/bridge/training/config.py"),
}
# ConfigContainer's sections as the Wan recipe fills them (DFM@9eaace1 dfm/src/megatron/recipes/wan/wan.py)
SECTIONS = {
    "model": "WanModelProvider", "dataset": "WanMockDataModuleConfig", "train": "TrainingConfig",
    "optimizer": "OptimizerConfig", "scheduler": "SchedulerConfig", "ddp": "DistributedDataParallelConfig",
    "dist": "DistributedInitConfig", "logger": "LoggerConfig", "checkpoint": "CheckpointConfig",
    "profiling": "ProfilingConfig",
}
SCRIPT = (DFM, "examples/megatron/recipes/wan/pretrain_wan.py")


def show(root, repo, commit, path, cache={}):
    key = (repo, commit, path)
    if key not in cache:
        d = "%s/%s/repo" % (root, repo.replace("/", "+"))
        cache[key] = subprocess.run(["git", "-C", d, "show", "%s:%s" % (commit, path)], check=True,
                                    capture_output=True, text=True).stdout
    return cache[key]


def fields(root, name, seen=None):
    """(field, where) of class `name` and its bases, bases first."""
    seen = set() if seen is None else seen
    if name in seen or name not in CLASSES:
        return []
    seen.add(name)
    spec = CLASSES[name]
    (repo, commit), path = spec[0], spec[1]
    cls = spec[2] if len(spec) > 2 else name
    tree = ast.parse(show(root, repo, commit, path))
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    out = []
    for b in node.bases:
        bn = b.value.id if isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name) else \
            b.id if isinstance(b, ast.Name) else None
        if bn:
            out += fields(root, bn, seen)
    for st in node.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and \
                not (isinstance(st.annotation, ast.Subscript) and getattr(st.annotation.value, "id", "") == "ClassVar"):
            out.append((st.target.id, "%s@%s:%s:%d" % (repo, commit[:7], path, st.lineno)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror-root", default="/work/.mirror")
    a = ap.parse_args()
    w = sys.stdout.write
    w("# Keys the rendered DFM Wan job may set, extracted by tests/data/contract/extract-dfm.py from\n")
    for (repo, commit) in (DFM, MB, MLM):
        w("#   %s@%s\n" % (repo, commit))
    w("# kind\tkey\twhere (repo@commit:path:line)\n")
    for sec, cls in SECTIONS.items():
        seen = set()
        for f, where in fields(a.mirror_root, cls):
            if f not in seen:
                seen.add(f)
                w("config\t%s.%s\t%s\n" % (sec, f, where))
    (repo, commit), path = SCRIPT
    tree = ast.parse(show(a.mirror_root, repo, commit, path))
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "add_argument":
            for arg in n.args:
                if isinstance(arg, ast.Constant) and str(arg.value).startswith("--"):
                    w("flag\t%s\t%s@%s:%s:%d\n" % (arg.value, repo, commit[:7], path, n.lineno))


if __name__ == "__main__":
    main()
