#!/usr/bin/env python3
"""contract-automodel.py - a rendered DFM AutoModel Wan job against the pinned sources' key lists
(tests/data/contract/dfm-automodel-keys.tsv, written by extract-dfm-automodel.py from DFM 9eaace1 and its
Automodel a5f0652).

Stand-in for running examples/automodel/pretrain/pretrain.py (no GPU, container or PyPI here): the job's script
is read as bash would split it (shlex) and checked that
  - the srun step is one task per node running torchrun with the launcher flags of DFM's README
    (examples/automodel/README.md:133-140: --nnodes, --nproc-per-node, --rdzv_backend=c10d, --rdzv_endpoint),
  - the script is DFM's examples/automodel/pretrain/pretrain.py, given the config file with -c,
  - every "--a.b=c" override (Automodel _arg_parser.py:49-67) is a key the pinned code reads,
  - every key of the config file is one the pinned code reads, or one DFM's own wan2_1_t2v_flow.yaml carries
    (reported: the pinned code ignores it),
  - PYTHONPATH holds Automodel a5f0652 and DFM 9eaace1 checkouts, in that order.
Usage: contract-automodel.py SCRIPT CONF_DIR   (exit 1 on the first unknown key, naming it).
"""
import os
import re
import shlex
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(here, "..", "..", "share", "nemoperf", "megatron-bridge"))
from pinned import contract_job, fail, srun_step  # noqa: E402

read, dfm_yaml, text, conf_dir = contract_job(os.path.join(here, "..", "data", "contract", "dfm-automodel-keys.tsv"),
                                              "config")
step = srun_step(text)
if "MASTER_ADDR=$(scontrol show hostnames" not in text:
    fail("no MASTER_ADDR from the node list")
words = shlex.split(step.replace('"$MASTER_ADDR"', "MASTER"))
if "--ntasks-per-node=1" not in words:
    fail("not one task per node")
try:
    t = words.index("torchrun")
    i = next(k for k, w in enumerate(words) if w.endswith("/examples/automodel/pretrain/pretrain.py"))
except (ValueError, StopIteration):
    fail("no torchrun ... examples/automodel/pretrain/pretrain.py in the srun step")
seen = set()
for w in words[t + 1:i]:
    name = w.split("=", 1)[0]
    if name not in ("--nproc-per-node", "--nnodes", "--rdzv_backend", "--rdzv_endpoint"):
        fail("torchrun flag %s is not one of DFM's README" % w)
    seen.add(name)
if len(seen) != 4 or "--rdzv_backend=c10d" not in words or "--rdzv_endpoint=MASTER:29500" not in words:
    fail("torchrun lacks README.md:133-140's flags: %s" % words[t:i])
args = words[i + 1:]
if len(args) < 2 or args[0] != "-c":
    fail("no -c <config file> after pretrain.py")
yaml = args[1]
checked = 0
for a in args[2:]:
    if not a.startswith("--") or "=" not in a:
        fail("argument %s is no --key=value override" % a)
    key = a[2:].split("=", 1)[0]
    if key not in read:
        fail("override %s: the pinned code never reads %s" % (a, key))
    checked += 1
# the config file: nested YAML, two spaces an indent, leaves are "key: value"
path = os.path.join(conf_dir, os.path.basename(yaml))
stack, unread = [], []
for n, line in enumerate(open(path), 1):
    body = line.split("#", 1)[0].rstrip()
    if not body.strip():
        continue
    m = re.match(r"^( *)([A-Za-z_]+):(.*)$", body)
    if not m or len(m.group(1)) % 2:
        fail("%s:%d: not a YAML mapping line: %r" % (path, n, line))
    stack = stack[:len(m.group(1)) // 2] + [m.group(2)]
    if not m.group(3).strip():
        continue
    key = ".".join(stack)
    if key not in read and key not in dfm_yaml:
        fail("%s:%d: %s is read by no pinned code and is no key of DFM's own YAML" % (path, n, key))
    if key not in read:
        unread.append(key)
    checked += 1
pp = re.search(r"export PYTHONPATH='([^']*)'", text)
names = [os.path.basename(p) for p in pp.group(1).split(":")] if pp else []
if len(names) < 2 or not names[0].startswith("Automodel-a5f0652") or not names[1].startswith("DFM-9eaace1"):
    fail("PYTHONPATH does not start with Automodel a5f0652, DFM 9eaace1: %s" % (pp.group(1) if pp else None))
print("contract: ok: %d overrides/config keys of %s are read by the pinned sources%s"
      % (checked, os.path.basename(yaml),
         "; from DFM's YAML, read by none: " + ", ".join(unread) if unread else ""))
