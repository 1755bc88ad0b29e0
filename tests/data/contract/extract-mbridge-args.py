#!/usr/bin/env python3
"""Extract the argument list of Megatron-Bridge's scripts/performance parser at one release, for the contract test.

Reads scripts/performance/argument_parser.py (every parser.add_argument / group.add_argument call: option strings,
dest, action, nargs, type, default, choices, file lines) and scripts/performance/setup_experiment.py
(_filter_run_script_args: the launcher-only flags that never reach the rank command) with `ast`, nothing imported,
and prints a TSV to stdout with the repository, commit and file on its header lines.

Usage: extract-mbridge-args.py --git DIR --commit SHA --release NAME > mbridge-NAME-args.tsv
"""
import argparse
import ast
import subprocess
import sys

REPO = "NVIDIA-NeMo/Megatron-Bridge"
PARSER = "scripts/performance/argument_parser.py"
SETUP = "scripts/performance/setup_experiment.py"


def show(git, commit, path):
    return subprocess.run(["git", "--git-dir", git, "show", "%s:%s" % (commit, path)], check=True,
                          capture_output=True, text=True).stdout


def src(node):
    return ast.unparse(node).replace("\t", " ").replace("\n", " ") if node is not None else "-"


def arguments(text):
    out = []
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                node.func.attr == "add_argument"):
            continue
        opts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if not opts:
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        longs = [o for o in opts if o.startswith("--")]
        dest = kw["dest"].value if "dest" in kw and isinstance(kw["dest"], ast.Constant) else \
            (longs[0] if longs else opts[0]).lstrip("-").replace("-", "_")
        action = kw["action"].value if "action" in kw and isinstance(kw["action"], ast.Constant) else "store"
        takes_value = action not in ("store_true", "store_false", "count", "help", "version")
        nargs = src(kw.get("nargs")) if "nargs" in kw else "-"
        if nargs in ("0",):
            takes_value = False
        out.append({"options": ",".join(opts), "dest": dest, "action": action,
                    "value": "yes" if takes_value else "no", "nargs": nargs, "type": src(kw.get("type")),
                    "default": src(kw.get("default")), "choices": src(kw.get("choices")),
                    "required": src(kw.get("required")) if "required" in kw else "False",
                    "lines": "%d-%d" % (node.lineno, node.end_lineno)})
    out.sort(key=lambda r: int(r["lines"].split("-")[0]))
    return out


def launcher_only(text):
    """The flags and prefixes _filter_run_script_args drops, and the function's lines."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.name == "_filter_run_script_args":
            flags, prefixes = set(), set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare) and any(isinstance(o, ast.In) for o in sub.ops):
                    for c in sub.comparators:
                        if isinstance(c, ast.Tuple):
                            flags |= {e.value for e in c.elts if isinstance(e, ast.Constant)}
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                        sub.func.attr == "startswith":
                    prefixes |= {a.value for a in sub.args if isinstance(a, ast.Constant)}
            return flags, prefixes, "%d-%d" % (node.lineno, node.end_lineno)
    return set(), set(), "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--git", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--release", required=True)
    a = ap.parse_args()
    commit = subprocess.run(["git", "--git-dir", a.git, "rev-parse", a.commit + "^{commit}"], check=True,
                            capture_output=True, text=True).stdout.strip()
    rows = arguments(show(a.git, commit, PARSER))
    flags, prefixes, flines = launcher_only(show(a.git, commit, SETUP))
    if not rows:
        print("extract-mbridge-args: no add_argument call in %s at %s" % (PARSER, commit), file=sys.stderr)
        return 1
    print("# Megatron-Bridge %s: %s@%s %s (add_argument calls, lines per row)" % (a.release, REPO, commit, PARSER))
    if flags:
        print("# launcher_only: dropped before the rank command by %s:%s _filter_run_script_args (flags %s; prefixes "
              "%s)" % (SETUP, flines, " ".join(sorted(flags)), " ".join(sorted(prefixes))))
    else:  # releases before v0.3.0: setup_experiment.py has no _filter_run_script_args
        print("# launcher_only: none (%s has no _filter_run_script_args at this commit)" % SETUP)
    print("# Extracted by tests/data/contract/extract-mbridge-args.py --git <Megatron-Bridge .git> --commit %s "
          "--release %s" % (commit, a.release))
    cols = ["options", "dest", "action", "value", "nargs", "type", "default", "choices", "required",
            "launcher_only", "lines"]
    print("\t".join(cols))
    for r in rows:
        opts = r["options"].split(",")
        r["launcher_only"] = "yes" if any(o in flags or any(o.startswith(p) for p in prefixes) for o in opts) \
            else "no"
        print("\t".join(r[c] for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
