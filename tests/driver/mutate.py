#!/usr/bin/env python3
# mutate.py - every setting the driver makes is pinned by a test: delete each one (one mutant per
# assignment, append or setattr in the recipe-building functions of nemoperf_nemo.py, replaced by
# `pass`), run tests/driver/test_driver.py on the mutant (a copy in a temporary folder, NP_DRIVER), and
# fail if any mutant passes.  The shipped driver is never modified.
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DRIVER = os.path.join(ROOT, "share", "nemoperf", "driver", "nemoperf_nemo.py")
SETTING = re.compile(r"(recipe|s|ddp|cb)\.[\w.]+ = |recipe\.trainer\.callbacks\.append\(|setattr\(")


def settings(lines):
    """(first, last) line index of every setting statement inside build_pretrain, build_finetune and apply_*."""
    inside, out = False, []
    for i, line in enumerate(lines):
        if line.startswith("def "):
            inside = re.match(r"def (build_pretrain|build_finetune|apply_\w+)\(", line) is not None
        if inside and SETTING.match(line.strip()):
            j, text = i, line
            while text.count("(") > text.count(")"):
                j += 1
                text += lines[j]
            out.append((i, j))
    return out


def main():
    lines = open(DRIVER).read().split("\n")
    targets = settings(lines)
    survived = []
    with tempfile.TemporaryDirectory(prefix="np-mutant-") as tmp:
        mutant = os.path.join(tmp, "nemoperf_nemo.py")
        for i, j in targets:
            indent = re.match(r"\s*", lines[i]).group(0)
            with open(mutant, "w") as f:
                f.write("\n".join(lines[:i] + [indent + "pass  # deleted"] + [""] * (j - i) + lines[j + 1:]))
            r = subprocess.run([sys.executable, "-B", os.path.join(HERE, "test_driver.py")],
                               env=dict(os.environ, NP_DRIVER=mutant), capture_output=True, text=True)
            if r.returncode == 0:
                survived.append("l.%d: %s" % (i + 1, lines[i].strip()))
    for s in survived:
        print("mutate.py: deleting %s fails no test" % s)
    print("mutate.py: %d settings deleted one at a time, %d caught by a test" % (len(targets),
                                                                                 len(targets) - len(survived)))
    return 1 if survived or len(targets) < 40 else 0


if __name__ == "__main__":
    sys.exit(main())
