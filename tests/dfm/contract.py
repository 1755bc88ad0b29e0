#!/usr/bin/env python3
"""contract.py - a rendered DFM Wan job against the pinned sources' key lists (tests/data/contract/dfm-keys.tsv).

Stand-in for running pretrain_wan.py (no GPU, container or PyPI here): the job's script is read as bash would
split it (shlex) and checked that
  - pretrain_wan.py runs under torchrun --nproc_per_node=N, no numactl (DFM f8c1c09 README_perf_test.md:105),
  - every flag given to pretrain_wan.py is one its argparse defines (DFM 9eaace1 pretrain_wan.py:89-102),
  - every a.b=c override after the script names a field of the section's config class at the pins,
  - every key of the --config-file YAML does too (flat two-level YAML, as DFM's perf YAMLs are),
  - the environment the script exports matches facts/dfm.md (NVTE_FUSED_ATTN=1, the pinned PYTHONPATH order,
    Megatron-Bridge's src/ on it, the image's /opt/Megatron-Bridge and /opt/Megatron-LM mounted over).
Usage: contract.py SCRIPT CONF_DIR   (CONF_DIR: where the YAML named in the script lies; prints the keys
checked; exit 1 on the first unknown one, naming it).
"""
import os
import re
import shlex
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(here, "..", "..", "share", "nemoperf", "megatron-bridge"))
from pinned import contract_job, fail, srun_step  # noqa: E402

config, flags, text, conf_dir = contract_job(os.path.join(here, "..", "data", "contract", "dfm-keys.tsv"), "config")
words = shlex.split(srun_step(text))
try:
    i = next(k for k, w in enumerate(words) if w.endswith("/pretrain_wan.py"))
except StopIteration:
    fail("no pretrain_wan.py in the srun step")
# DFM f8c1c09 README_perf_test.md:105: torchrun --nproc_per_node=N <script>, no numactl; one torchrun a node
try:
    t = words.index("torchrun")
except ValueError:
    fail("pretrain_wan.py is not run by torchrun")
launcher = words[t + 1:i]
if not launcher or not all(w.startswith("--nproc_per_node=") or w.startswith("--nnodes=") or
                           w.startswith("--rdzv_") for w in launcher) or not launcher[0].startswith("--nproc_per_node="):
    fail("torchrun's arguments are not --nproc_per_node= then rendezvous: %r" % launcher)
if "numactl" in words:
    fail("numactl: DFM's README runs torchrun without it")
args = words[i + 1:]
yaml = None
checked = 0
k = 0
while k < len(args):
    a = args[k]
    if a.startswith("--"):
        if a not in flags:
            fail("flag %s is not in pretrain_wan.py's parser" % a)
        if a == "--config-file":
            yaml = args[k + 1]
            k += 1
        elif a == "--training-mode":
            if args[k + 1] not in ("pretrain", "finetune"):
                fail("--training-mode %s" % args[k + 1])
            k += 1
    else:
        key = a.split("=", 1)[0]
        if "=" not in a or key not in config:
            fail("override %s: %s is no field of the pinned config classes" % (a, key))
    checked += 1
    k += 1
if not yaml:
    fail("no --config-file")
path = os.path.join(conf_dir, os.path.basename(yaml))
section = None
for n, line in enumerate(open(path), 1):
    body = line.split("#", 1)[0].rstrip()
    if not body:
        continue
    m = re.match(r"^([a-z_]+):\s*$", body)
    if m:
        section = m.group(1)
        continue
    m = re.match(r"^  ([a-z_]+):\s*\S", body)
    if not m or not section:
        fail("%s:%d: not a flat two-level YAML line: %r" % (path, n, line))
    if section + "." + m.group(1) not in config:
        fail("%s:%d: %s.%s is no field of the pinned config classes" % (path, n, section, m.group(1)))
    checked += 1
# environment (facts/dfm.md section 2)
if "export NVTE_FUSED_ATTN='1'" not in text:
    fail("NVTE_FUSED_ATTN=1 is not exported")
pp = re.search(r"export PYTHONPATH='([^']*)'", text)
if not pp:
    fail("no PYTHONPATH")
# the import-path entries: DFM's root (dfm.src...), Megatron-Bridge's src/ (its package is src/megatron/bridge),
# Megatron-LM's root (megatron/core), each at its pin (tests/data/dfm/imports.tsv)
entries = pp.group(1).split(":")[:3]
want = [("DFM-9eaace1", ""), ("Megatron-Bridge-953aabf", "/src"), ("Megatron-LM-2d398b4", "")]
ok = len(entries) == 3
for e, (name, sub) in zip(entries, want):
    top = e[: len(e) - len(sub)] if sub and e.endswith(sub) else e if not sub else ""
    ok = ok and os.path.basename(top).startswith(name)
if not ok:
    fail("PYTHONPATH does not start with DFM, Megatron-Bridge/src, Megatron-LM at the pins: %s" % pp.group(1))
# the image's own copies replaced by the pinned checkouts (DFM f8c1c09 README_perf_test.md:34-42)
for name, target in (("Megatron-Bridge-953aabf", "/opt/Megatron-Bridge"), ("Megatron-LM-2d398b4", "/opt/Megatron-LM")):
    if not re.search(r"--container-mounts '[^']*/%s[0-9a-f]*:%s[,']" % (name, target), text):
        fail("%s is not mounted over the image's %s" % (name, target))
print("contract: ok: %d flags/overrides/YAML keys of %s are in the pinned sources" % (checked, os.path.basename(yaml)))
