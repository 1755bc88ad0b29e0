#!/usr/bin/env python3
"""layers.py - hold the shape of the tree: dependencies point one way, and no module includes itself
back through others.

A module is src/<area>/<name>.c with include/nemoperf/<area>/<name>.h.  Each area has a layer
(LAYERS below, lowest first); a module may include headers of its own area or of a lower layer only.
Includes are read from the .c and the .h of every module (#include "nemoperf/<area>/<name>.h").
Any cycle between modules (one module including, through others, itself) fails, even inside an area.
src/cmd/*.c are the mains: they may include anything and nothing includes them.

Usage: layers.py [ROOT]      exit 0 when the tree holds its shape, 1 with one line per violation.
"""
import os
import re
import sys

# Lowest first.  cmd -> launch -> setup/job/slurm -> model -> util; cmd -> report -> store -> parse ->
# slurm (job states) -> model -> util.  Areas on one line share a layer and may not include each other.
LAYERS = [
    ["util"],
    ["model"],
    ["job"],
    ["slurm"],
    ["parse", "setup"],
    ["launch", "store"],
    ["report"],
]
LEVEL = {a: i for i, names in enumerate(LAYERS) for a in names}
INCLUDE = re.compile(r'^\s*#\s*include\s+"nemoperf/([a-z_]+)/([a-z0-9_]+)\.h"', re.M)


def modules(root):
    """{(area, name): [files]} for every module of the tree."""
    mods = {}
    for base, ext in (("src", ".c"), (os.path.join("include", "nemoperf"), ".h")):
        top = os.path.join(root, base)
        if not os.path.isdir(top):
            continue
        for area in sorted(os.listdir(top)):
            d = os.path.join(top, area)
            if not os.path.isdir(d) or area == "cmd":
                continue
            for f in sorted(os.listdir(d)):
                if f.endswith(ext):
                    mods.setdefault((area, f[: -len(ext)]), []).append(os.path.join(d, f))
    return mods


def check(root):
    errors = []
    mods = modules(root)
    graph = {m: set() for m in mods}
    for m, files in mods.items():
        area = m[0]
        if area not in LEVEL:
            errors.append("%s: area '%s' has no layer in build-aux/layers.py (LAYERS)" % (files[0], area))
            continue
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for to_area, to_name in INCLUDE.findall(text):
                to = (to_area, to_name)
                if to == m:
                    continue
                if to not in mods:
                    errors.append("%s: includes nemoperf/%s/%s.h, which no module owns" % (path, to_area, to_name))
                    continue
                graph[m].add(to)
                if to_area != area and to_area in LEVEL and LEVEL[to_area] >= LEVEL[area]:
                    errors.append("%s: includes nemoperf/%s/%s.h: %s may not depend on %s (%s)" % (
                        path, to_area, to_name, area, to_area,
                        "same layer" if LEVEL[to_area] == LEVEL[area] else "a layer above it"))
    # cycles: Tarjan's strongly connected components
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    for comp in comps:
        errors.append("include cycle between modules: " + " <-> ".join("%s/%s" % c for c in comp))
    return errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    errors = check(root)
    for e in errors:
        print("layers: " + e)
    if errors:
        print("layers: %d violation(s); the layers and why: docs/architecture.md" % len(errors))
        return 1
    print("layers: %d modules, dependencies point one way, no cycles" % len(modules(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
