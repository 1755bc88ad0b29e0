#!/usr/bin/env python3
# mutate.py - `make mutate`: the C library's mutation test (the driver's counterpart is tests/driver/mutate.py).
# Mutants are data, tests/mutants/<module>.tsv: file, exact text, replacement, operator, what it would break,
# and for an equivalent mutant why it is equivalent. Each mutant is applied to one copy of the tree (rsync'd
# under $TMPDIR, reused: apply, build, run, revert), built, and run against the fast tests that cover it (the
# module's suites and scripts, named in its file); prints the score per module and every survivor.
# --check only verifies the data still matches the code (every text found exactly once): run by `make check`.
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# MUTATE_DATA: another folder of module files (tests/mutants/fresh: a sample written independently of the suites)
DATA = os.path.join(ROOT, os.environ.get("MUTATE_DATA") or os.path.join("tests", "mutants"))
TARGET_ALL, TARGET_MODULE = 90.0, 80.0


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append({"t": "\t", "n": "\n", "\\": "\\"}.get(s[i + 1], "\\" + s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def load(path):
    """A module's file: '# suites: check_a check_b', '# scripts: tests/e2e/x.sh', then one mutant a line."""
    mod = {"name": os.path.basename(path)[:-4], "suites": [], "scripts": [], "mutants": []}
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith("#"):
            key, _, val = line[1:].partition(":")
            if key.strip() in ("suites", "scripts"):
                mod[key.strip()] += val.split()
            continue
        f = line.split("\t")
        if len(f) not in (5, 6):
            raise ValueError("%s:%d: %d fields, want 5 or 6 (file, text, replacement, operator, breaks[, equivalent])"
                             % (path, no, len(f)))
        m = {"module": mod["name"], "where": "%s:%d" % (os.path.relpath(path, ROOT), no), "file": f[0],
             "text": unescape(f[1]), "repl": unescape(f[2]), "op": f[3], "breaks": f[4],
             "equivalent": f[5] if len(f) == 6 else ""}
        if m["text"] == m["repl"]:
            raise ValueError("%s: the replacement is the text" % m["where"])
        mod["mutants"].append(m)
    if not mod["suites"] and not mod["scripts"]:
        raise ValueError("%s: no '# suites:' or '# scripts:' line" % path)
    return mod


def verify(mods, root):
    """Every text found exactly once in its file: a mutant that no longer matches is an error naming it."""
    errors = []
    for mod in mods:
        for m in mod["mutants"]:
            p = os.path.join(root, m["file"])
            try:
                src = open(p, encoding="utf-8").read()
            except OSError as e:
                errors.append("%s: %s: %s" % (m["where"], m["file"], e.strerror))
                continue
            k = src.count(m["text"])
            if k != 1:
                errors.append("%s: %s: the text %r is found %s (the code moved: update the mutant)"
                              % (m["where"], m["file"], m["text"], "nowhere" if k == 0 else "%d times" % k))
    return errors


def suite(name, env):
    """'check_x' or 'check_x:case' (only that test case of the suite: CK_RUN_CASE)."""
    bin_, _, case = name.partition(":")
    e = dict(env)
    if case:
        e["CK_RUN_CASE"] = case
    return ["mbuild/tests/" + bin_], e


def run(cmd, cwd, timeout, env=None):
    """The command's exit status, or "timeout": then its whole process group (a suite's forked tests) is killed."""
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        return "timeout"
    except BaseException:  # the run stopped (SIGTERM, ^C): its suite or build is stopped with it
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def sync(src, dst):
    try:
        names = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=src, check=True,
                               capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError) as e:
        print("mutate: cannot list the tree's files: %s" % e, file=sys.stderr)
        return 1
    for n in names:
        a, b = os.path.join(src, n), os.path.join(dst, n)
        if not n:
            continue
        if os.path.islink(a):  # a link stays a link (the parse cases walk link loops)
            t = os.readlink(a)
            if not os.path.islink(b) or os.readlink(b) != t:
                os.makedirs(os.path.dirname(b), exist_ok=True)
                if os.path.lexists(b):
                    os.remove(b)
                os.symlink(t, b)
            continue
        if not os.path.isfile(a):
            continue
        sa = os.stat(a)
        try:
            sb = os.stat(b)
            if sb.st_size == sa.st_size and (int(sb.st_mtime) == int(sa.st_mtime) or same_bytes(a, b)):
                continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(b), exist_ok=True)
        # a file that differs is written with the time of now, not the source's: a mutant reverted here (or a
        # source older than what was built from a mutant) must be newer than its objects, or make keeps the
        # mutant built in (a stopped run once left one in the library: the next run's unmutated tree failed)
        shutil.copyfile(a, b)
        shutil.copymode(a, b)
    return 0


def main(argv):
    files = sorted(f for f in os.listdir(DATA) if f.endswith(".tsv"))
    want = [s for s in os.environ.get("MUTATE_MODULES", "").split(",") if s]
    unknown = [w for w in want if w + ".tsv" not in files]
    if unknown:
        print("mutate: no module %s (modules: %s)" % (", ".join(unknown), ", ".join(f[:-4] for f in files)),
              file=sys.stderr)
        return 2
    try:
        mods = [load(os.path.join(DATA, f)) for f in files if not want or f[:-4] in want]
    except ValueError as e:
        print("mutate: %s" % e, file=sys.stderr)
        return 2
    errors = verify(mods, ROOT)
    for e in errors:
        print("mutate: %s" % e, file=sys.stderr)
    total = sum(len(m["mutants"]) for m in mods)
    if "--check" in argv:
        print("mutate: %d mutants in %d modules, %s" % (total, len(mods), "%d stale" % len(errors) if errors
                                                          else "every text matches the code"))
        return 1 if errors else 0
    if errors:
        return 2
    todo = [m for mod in mods for m in mod["mutants"]]
    sample = int(os.environ.get("MUTATE_SAMPLE", "0") or 0)
    if 0 < sample < len(todo):
        # each module its share (at least one), so every module's score is measured; MUTATE_SAMPLE=0: every mutant
        rnd = random.Random(int(os.environ.get("MUTATE_SEED", "0") or 0) or None)
        pick = set()
        for mod in mods:
            ids = [id(m) for m in mod["mutants"]]
            k = min(len(ids), max(1, round(sample * len(ids) / len(todo))))
            pick.update(rnd.sample(ids, k))
        todo = [m for m in todo if id(m) in pick]
    tmp = os.environ.get("TMPDIR", "/tmp")
    tree = os.environ.get("MUTATE_TREE", os.path.join(tmp, "np-mutate-tree"))
    os.makedirs(tree, exist_ok=True)
    # the copy: the working files (git's tracked and untracked-not-ignored), refreshed where they differ; its own
    # build folders (mbuild, mbin) kept across runs so a run rebuilds only what changed
    if sync(ROOT, tree):
        return 2
    # a run stopped with a mutant applied (SIGKILL): sync put the source back with its old time, older than the
    # mutated object, so make would keep the mutant built in; the file is touched to be rebuilt
    applied = os.path.join(tree, ".mutant-applied")
    try:
        os.utime(os.path.join(tree, open(applied, encoding="utf-8").read().strip()))
        os.remove(applied)
    except OSError:
        pass
    nice = ["nice", "-n", os.environ.get("MUTATE_NICE", "19")]
    make = nice + ["make", "--no-print-directory", "-s", "-j2", "B=mbuild", "BIN=mbin"]
    t0 = time.time()
    print("mutate: building the copy in %s" % tree, flush=True)
    if run(make + ["tests"], tree, 1800):
        print("mutate: the unmutated copy does not build", file=sys.stderr)
        return 2
    env = dict(os.environ, CK_DEFAULT_TIMEOUT="20", NP_BIN="mbin", NP_TESTS="mbuild/tests",
               NP_E2E_SLURM_VERSIONS="")
    bymod = {mod["name"]: mod for mod in mods}
    # the unmutated copy passes what each module runs: a failing test kills nothing
    # and how long each takes: a mutant's run is given 4 times that (at least 20 s), so a mutant that hangs
    # (a loop that never ends) is killed by its timeout without holding the run for minutes
    limit = {}
    for mod in mods:
        for s in mod["suites"] + mod["scripts"]:
            if s in limit:
                continue
            cmd, e = suite(s, env) if s.startswith("check_") else (["sh", s], env)
            t1 = time.time()
            if run(nice + cmd, tree, 600, e):
                print("mutate: %s fails on the unmutated tree" % s, file=sys.stderr)
                return 2
            limit[s] = max(20.0, 4 * (time.time() - t1))
    results = []
    for i, m in enumerate(todo, 1):
        mod = bymod[m["module"]]
        p = os.path.join(tree, m["file"])
        orig = open(p, encoding="utf-8").read()
        open(applied, "w", encoding="utf-8").write(m["file"])
        open(p, "w", encoding="utf-8").write(orig.replace(m["text"], m["repl"], 1))
        killer, t1 = None, time.time()
        try:
            # the module's suites, and the tools only when its scripts run them
            goals = ["mbuild/tests/" + s.partition(":")[0] for s in mod["suites"]] + (["all"] if mod["scripts"] else [])
            if run(make + goals, tree, 900):
                killer = "BUILD"
            else:
                for s in mod["suites"]:
                    cmd, e = suite(s, env)
                    r = run(nice + cmd, tree, limit[s], e)
                    if r:
                        killer = s + ("" if r != "timeout" else " (timeout)")
                        break
                if not killer:
                    for s in mod["scripts"]:
                        r = run(nice + ["sh", s], tree, limit[s], env)
                        if r:
                            killer = os.path.basename(s) + ("" if r != "timeout" else " (timeout)")
                            break
        finally:
            open(p, "w", encoding="utf-8").write(orig)
            os.remove(applied)
        results.append((m, killer))
        print("mutate: [%d/%d] %s %s %s: %s (%.0f s)" % (i, len(todo), m["module"], m["op"], m["where"],
                                                           "killed by " + killer if killer else "SURVIVED",
                                                           time.time() - t1), flush=True)
    # rebuild the reverted copy so the next run starts from it
    run(make + ["tests"], tree, 1800)
    print("\nmutate: scores (killed of non-equivalent mutants)")
    ok, kt, nt = True, 0, 0
    for mod in mods:
        rs = [(m, k) for m, k in results if m["module"] == mod["name"]]
        if not rs:
            continue
        live = [(m, k) for m, k in rs if not m["equivalent"] and k != "BUILD"]
        killed = sum(1 for _, k in live if k)
        kt += killed
        nt += len(live)
        pct = 100.0 * killed / len(live) if live else 100.0
        if pct < TARGET_MODULE:
            ok = False
        print("  %-22s %3d of %3d  %5.1f %%%s" % (mod["name"], killed, len(live), pct,
                                                  "  (under %d %%)" % TARGET_MODULE if pct < TARGET_MODULE else ""))
    pct = 100.0 * kt / nt if nt else 100.0
    print("  %-22s %3d of %3d  %5.1f %%" % ("all", kt, nt, pct))
    if pct < TARGET_ALL:
        ok = False
    surv = [m for m, k in results if not k and not m["equivalent"]]
    if surv:
        print("\nmutate: survivors (no test fails with them)")
        for m in surv:
            print("  %s %s [%s] %r -> %r: %s" % (m["where"], m["file"], m["op"], m["text"], m["repl"], m["breaks"]))
    broken = [m for m, k in results if k == "BUILD"]
    if broken:
        ok = False
        print("\nmutate: mutants that do not build (fix the data)")
        for m in broken:
            print("  %s %s %r -> %r" % (m["where"], m["file"], m["text"], m["repl"]))
    eq = [(m, k) for m, k in results if m["equivalent"]]
    if eq:
        print("\nmutate: equivalent mutants (not scored)")
        for m, k in eq:
            print("  %s %s %r -> %r: %s%s" % (m["where"], m["file"], m["text"], m["repl"], m["equivalent"],
                                              "  (but killed by %s: not equivalent?)" % k if k else ""))
    print("\nmutate: %d mutants run in %.0f s%s" % (len(results), time.time() - t0,
                                                   " (a sample of the %d)" % total
                                                   if len(results) < total else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stopped: the mutant is reverted (finally) first
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
