"""pinned.py - what nemoperf's contract scripts share: NVIDIA's pinned Python read with ast, the key lists.

The extractors read the pinned sources with `ast`, nothing imported (extract-recipes.py here,
tests/data/contract/extract-dfm-automodel.py); the contract checks (tests/dfm/contract*.py) read the key lists
the extractors write and the srun step of a rendered job.  It lies beside extract-recipes.py, which then runs
from this folder alone; the tests import it from here (sys.path).  Not installed, as extract-recipes.py is not.
"""
import ast
import sys


def attr_chain(node, partial=False):
    """["a", "b", "c"] of an a.b.c Attribute/Name chain; None when its root is no Name (partial: the names
    above whatever the root is, [] for a node that is neither)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif not partial:
        return None
    return list(reversed(parts))


def read_keys(path, kind):
    """(the keys of that kind, the keys of every other kind) of a key list: "kind<TAB>key<TAB>where" lines,
    "#" comments."""
    mine, other = set(), set()
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        k, key, _ = line.rstrip("\n").split("\t")
        (mine if k == kind else other).add(key)
    return mine, other


def contract_job(keys_path, kind):
    """A contract check's inputs: the key list's two sets (read_keys), then from its command line
    (SCRIPT CONF_DIR) the rendered job script's text and CONF_DIR."""
    mine, other = read_keys(keys_path, kind)
    return mine, other, open(sys.argv[1]).read(), sys.argv[2]


def fail(msg):
    """A contract check's verdict on the first unknown key: printed, exit 1."""
    print("contract: FAIL: " + msg)
    sys.exit(1)


def srun_step(text):
    """The srun step of a rendered job script (its text), continuations joined."""
    return text[text.index("\nsrun "):].split("\nrc=$?")[0].replace("\\\n", " ")
