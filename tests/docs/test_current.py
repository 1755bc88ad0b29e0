#!/usr/bin/env python3
"""test_current.py - what a user reads is current: the options, the environment and the words of the docs.

1. options: the long options of each tool's code (its getopt table in src/cmd/<tool>.c) are exactly the options its
   --help lists, the OPTIONS section of its man page (share/man/man1/nemoperf-<tool>.1) and its bash completion
   (share/bash-completion/completions/nemoperf) offers.  Tools: nemoperf-launch, nemoperf-parse, nemoperf-setup.
2. environment: the variables the code reads, found in the code (getenv("X"); calls of every function that hands
   its argument to getenv or to an np_env_fn, found the same way, with a literal name; the literal tables such
   a function is handed in a loop; the ./launch and ./setup front doors), are exactly the tools' variables of
   src/util/envcheck.c (np_env_tools, plus np_env_ambient: the system's and Slurm's, never reported) and the
   tools' table of docs/environment.md.
3. README: a command that runs a tool by name (nemoperf-parse) comes after one that puts bin/ on PATH (a fresh
   clone has installed nothing).
4. words: README.md, docs/ and the man pages name no internal reference ("seed 002", "issue 27", "brief") and no
   machine path (/work/..., /tmp/<someone's folder>, /home/<user>).

Each check prints what differs, in which file.  Stand-ins: none (the built tools in NP_BIN, default bin/, and
the files of the tree).  Run by tests/run-unit.sh.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(ROOT, os.environ.get("NP_BIN") or "bin")
TOOLS = ("launch", "parse", "setup")
fails = []


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def differ(what, a_name, a, b_name, b):
    if a != b:
        fails.append("%s: %s has %s; %s has %s" % (what, a_name, sorted(a - b) or "nothing more", b_name,
                                                   sorted(b - a) or "nothing more"))


# ---- 1. options -----------------------------------------------------------------------------------------------

def code_options(tool):
    """Long options of the getopt table in src/cmd/<tool>.c: {"name", ...} rows of its option array."""
    src = read("src/cmd/%s.c" % tool)
    m = re.search(r"static const struct \w+ \w+_options\[\] = \{(.*?)\n\};", src, re.S)
    if not m:
        fails.append("src/cmd/%s.c: no <tool>_options[] table found" % tool)
        return set()
    return {"--" + n for n in re.findall(r'\{\s*"([a-z][a-z0-9-]*)"', m.group(1))}


def help_options(tool):
    """Options --help lists: the --names of its option lines (a line, or a ';'-separated part, starting with -)."""
    exe = os.path.join(BIN, "nemoperf-" + tool)
    p = subprocess.run([exe, "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        fails.append("nemoperf-%s --help: exit %d" % (tool, p.returncode))
    got = set()
    for line in p.stdout.splitlines():
        for part in line.split(";"):
            if part.strip().startswith("-"):  # an option line: its head, before the description's two spaces
                head = re.split(r"\s{2,}", part.strip())[0]
                got |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", head))
    return got


def man_options(tool):
    """Options of the man page's OPTIONS section: the tags of its .TP entries."""
    man = read("share/man/man1/nemoperf-%s.1" % tool)
    m = re.search(r"^\.SH OPTIONS\n(.*?)(?=^\.SH )", man, re.S | re.M)
    if not m:
        fails.append("nemoperf-%s.1: no OPTIONS section" % tool)
        return set()
    lines = m.group(1).splitlines()
    got = set()
    for i, line in enumerate(lines):
        if line.startswith(".TP") and i + 1 < len(lines):
            tag = re.sub(r"\\f[BIRP]", " ", lines[i + 1].replace("\\-", "-"))
            got |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", tag))
    return got


def completion_options(tool):
    """Options the bash completion offers for the tool: the --words of compgen -W lists in _nemoperf_<tool>."""
    comp = read("share/bash-completion/completions/nemoperf")
    m = re.search(r"^_nemoperf_%s\(\)\n\{\n(.*?)^\}" % tool, comp, re.S | re.M)
    if not m:
        fails.append("completion: no _nemoperf_%s" % tool)
        return set()
    got = set()
    for words in re.findall(r'compgen -W "([^"$]*)"', m.group(1)):
        got |= {w for w in words.split() if w.startswith("--")}
    return got


def check_options():
    for tool in TOOLS:
        code = code_options(tool)
        name = "nemoperf-" + tool
        differ(name + " options", "src/cmd/%s.c" % tool, code, "--help", help_options(tool))
        differ(name + " options", "src/cmd/%s.c" % tool, code, "man page OPTIONS", man_options(tool))
        differ(name + " options", "src/cmd/%s.c" % tool, code, "bash completion", completion_options(tool))


# ---- 2. environment -------------------------------------------------------------------------------------------

NAME = r"[A-Z][A-Z0-9_]*[A-Z0-9]"
# Reads of a name computed at run time that no table holds, each with why it is not a setting.
NOT_SETTINGS = {
    ("src/launch/manifest.c", "manifest_env_user"):
        "the job script's own variables (NCCL_*, ...): the manifest records which ones the user also set",
}


def c_files():
    for base in ("src",):
        for d, _, files in os.walk(os.path.join(ROOT, base)):
            for f in sorted(files):
                if f.endswith(".c"):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def functions(text):
    """[(start, name, [parameter names])] of the function definitions of a C file, in order."""
    out = []
    for m in re.finditer(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?[a-z_][\w \t*]*?\b(\w+)\(([^;{]*?)\)\s*\n\{",
                         text, re.M | re.S):
        params = [re.findall(r"\w+", p)[-1] for p in m.group(2).split(",") if re.findall(r"\w+", p)]
        out.append((m.start(), m.group(1), params))
    return out


def enclosing(funcs, pos):
    best = (None, [])
    for start, name, params in funcs:
        if start <= pos:
            best = (name, params)
    return best


def call_args(text, open_paren):
    """The top-level arguments of the call whose '(' is at open_paren, stripped; None when unbalanced."""
    depth, args, cur, i = 0, [], "", open_paren
    while i < len(text):
        ch = text[i]
        if ch == '"':  # a string literal, escapes kept
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur += text[i:j + 1]
            i = j + 1
            continue
        if ch in "([{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args
        elif ch == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
            i += 1
            continue
        cur += ch
        i += 1
    return None


def table_names(text, arr, pos):
    """ALL_CAPS string literals of the array arr defined before pos in text (its initializer)."""
    best = None
    for m in re.finditer(r"\b%s\[[^\]]*\]\s*=\s*\{" % re.escape(arr), text):
        if m.start() < pos:
            best = m
    if not best:
        return None
    depth, i = 1, best.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return set(re.findall(r'"(%s)"' % NAME, text[best.end():i]))


def code_env():
    """{name: {where}} of every variable the code reads.  A reader is getenv (name: argument 0), a call through
    an np_env_fn (`env(ctx, name)`, `x->env(x->env_ctx, name)`: argument 1), or a function that hands one of
    its parameters to a reader in that place (config_intvar -> config_get -> x->env): found until none is new."""
    texts = {p: read(p) for p in c_files()}
    readers = {"getenv": 0, "env": 1}
    found, unresolved = {}, set()
    changed = True
    while changed:
        changed = False
        for path, text in texts.items():
            funcs = functions(text)
            pat = re.compile(r"(?<![\w])((?:\w+(?:->|\.))?)(%s)\(" % "|".join(map(re.escape, sorted(readers))))
            for m in pat.finditer(text):
                name = m.group(2)
                if m.group(1) and name != "env":
                    continue  # a member call of something else
                line_start = text.rfind("\n", 0, m.start()) + 1
                if m.start() == line_start or re.search(r"\b(?:char|int|double|void|long|size_t|\w+_t|(?:enum|struct) \w+)[\s*]*$",
                                                        text[line_start:m.start()]):
                    continue  # a definition or declaration, not a call
                args = call_args(text, m.end() - 1)
                k = readers[name]
                if not args or len(args) <= k:
                    continue
                arg = args[k]
                fn, params = enclosing(funcs, m.start())
                body = text[max([s for s, n, _ in funcs if s <= m.start()] or [0]):m.start()]
                if re.fullmatch(r"[a-z_]\w*", arg) and arg not in params:
                    # a local: what it was given (a literal, a choice of literals, a table's entry)
                    given = re.findall(r"\b%s\s*=\s*([^;,]+(?:\?[^;]+)?)[;,]" % re.escape(arg), body)
                    if given:
                        arg = given[-1].strip()
                lits = re.findall(r'"([^"]*)"', arg)
                if lits and all(re.fullmatch(NAME, x) for x in lits) and re.fullmatch(r'[^"]*(?:"[^"]*"[^"]*)+', arg) \
                        and not re.search(r"\w\(", arg):
                    for x in lits:  # a literal, or a choice of literals (c->profile ? "A" : "B")
                        found.setdefault(x, set()).add("%s:%s" % (path, fn))
                elif arg in params and fn:
                    if readers.get(fn) != params.index(arg):
                        readers[fn] = params.index(arg)
                        changed = True
                else:
                    t = re.match(r"(\w+)\[\w+\](?:\.\w+)?$", arg)
                    names = table_names(text, t.group(1), m.start()) if t else None
                    if names:
                        for n in names:
                            found.setdefault(n, set()).add("%s:%s (table %s)" % (path, fn, t.group(1)))
                    elif (path, fn) not in NOT_SETTINGS:
                        unresolved.add("%s: %s reads %s" % (path, fn, arg))
    for u in sorted(unresolved):
        fails.append("environment: a name read at run time that no table holds (add the table, or a reason to "
                     "NOT_SETTINGS): " + u)
    # the front doors: ${NAME...} and $NAME
    for door in ("launch", "setup"):
        code = "\n".join(l for l in read(door).splitlines() if not l.lstrip().startswith("#"))
        for n in re.findall(r"\$\{?(%s)" % NAME, code):
            found.setdefault(n, set()).add(door)
    return found


def envcheck_names():
    """np_env_tools() and np_env_ambient() as src/util/envcheck.c spells them (the macro lists)."""
    src = read("src/util/envcheck.c")
    out = set()
    for macro in ("ENVCHECK_TOOLS", "ENVCHECK_AMBIENT"):
        m = re.search(r"#define %s\b(.*?)(?<!\\)\n" % macro, src, re.S)
        if not m:
            fails.append("src/util/envcheck.c: no %s list" % macro)
            continue
        out |= set(re.findall(r'"(%s)"' % NAME, m.group(1)))
    return out


def docs_names():
    """The variables of docs/environment.md's table of the tools (section "### The tools")."""
    doc = read("docs/environment.md")
    m = re.search(r"^### The tools\n(.*?)(?=^#)", doc, re.S | re.M)
    if not m:
        fails.append("docs/environment.md: no '### The tools' section")
        return set()
    out = set()
    for line in m.group(1).splitlines():
        if line.startswith("|"):
            cells = line.split("|")
            if len(cells) > 2:  # the variables column: code spans of names
                for span in re.findall(r"`([^`]*)`", cells[2]):
                    out |= set(re.findall(r"\b(%s)\b(?!\*)" % NAME, span))
    return out


def tool_docs_rows():
    """{tool: names} of docs/environment.md's tools table, by the rows' first cell (`./launch`, `./setup`,
    `nemoperf-parse`)."""
    doc = read("docs/environment.md")
    m = re.search(r"^### The tools\n(.*?)(?=^#)", doc, re.S | re.M)
    out = {t: set() for t in TOOLS}
    for line in (m.group(1) if m else "").splitlines():
        cells = line.split("|")
        if len(cells) < 3:
            continue
        who = cells[1].split("(")[0]  # the tools a row names before any '(' ("`./launch`, `./setup`: ...")
        for tool, mark in (("launch", "`./launch`"), ("setup", "`./setup`"), ("parse", "`nemoperf-parse`")):
            if mark in who:
                for span in re.findall(r"`([^`]*)`", cells[2]):
                    out[tool] |= set(re.findall(r"\b(%s)\b(?!\*)" % NAME, span))
    return out


def check_tool_env():
    """Each variable docs/environment.md gives a tool is in that tool's --help and its man page's ENVIRONMENT."""
    for tool, names in tool_docs_rows().items():
        exe = os.path.join(BIN, "nemoperf-" + tool)
        helptext = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
        man = read("share/man/man1/nemoperf-%s.1" % tool)
        m = re.search(r"^\.SH ENVIRONMENT\n(.*?)(?=^\.SH )", man, re.S | re.M)
        env = re.sub(r"\\f[BIRP]", "", (m.group(1) if m else "").replace("\\-", "-"))
        for n in sorted(names):
            if not re.search(r"\b%s\b" % n, helptext):
                fails.append("nemoperf-%s --help does not name %s (docs/environment.md gives it to %s)" % (tool, n, tool))
            if not re.search(r"\b%s\b" % n, env):
                fails.append("nemoperf-%s.1 ENVIRONMENT does not name %s (docs/environment.md gives it to %s)"
                             % (tool, n, tool))


def check_env():
    code = code_env()
    where = {n: sorted(w)[0] for n, w in code.items()}
    code_set = set(code)
    tab, doc = envcheck_names(), docs_names()
    for name, other in (("src/util/envcheck.c (np_env_tools + np_env_ambient)", tab),
                        ("docs/environment.md (The tools)", doc)):
        missing, extra = code_set - other, other - code_set
        for n in sorted(missing):
            fails.append("environment: %s is read (%s) but not in %s" % (n, where[n], name))
        for n in sorted(extra):
            fails.append("environment: %s is in %s but the code reads no such variable" % (n, name))
    return len(code_set)


# ---- 3. words -------------------------------------------------------------------------------------------------

WORDS = [
    (re.compile(r"\bseeds?[- ]0\d\d\b", re.I), "an internal reference (seed NNN)"),
    (re.compile(r"\bthe seeds\b|\bseeds'", re.I), "an internal reference (the seeds)"),
    (re.compile(r"\bissues?\s+\d+\b", re.I), "an internal reference (issue N; an upstream one is owner/repo#N)"),
    (re.compile(r"/work/(?:briefs|shared|main|wt-)"), "a machine path (/work/...)"),
    (re.compile(r"\bbriefs\d*/"), "an internal reference (briefs/)"),
    (re.compile(r"/home/[a-z]|/root/|/Users/"), "a machine path (a home folder)"),
    (re.compile(r"\.mirror/"), "a machine path (a mirror folder)"),
]


def doc_files():
    yield "README.md"
    for base in ("docs", "share/man"):
        for d, _, files in os.walk(os.path.join(ROOT, base)):
            for f in sorted(files):
                yield os.path.relpath(os.path.join(d, f), ROOT)


def check_words(paths=None):
    bad = []
    for path in paths or doc_files():
        for no, line in enumerate(read(path).splitlines(), 1):
            for rx, what in WORDS:
                for m in rx.finditer(line):
                    bad.append("%s:%d: %s: %r" % (path, no, what, m.group(0)))
    return bad


def check_readme_path():
    """A fresh clone has no nemoperf-* on PATH: the README's commands put bin/ there (or make install) before the
    first one that calls a tool by name."""
    blocks = re.findall(r"^```sh\n(.*?)^```", read("README.md"), re.S | re.M)
    lines = [l for b in blocks for l in b.splitlines()]
    for i, line in enumerate(lines):
        if re.search(r"(?:^|[;&|(]\s*)nemoperf-[a-z]+\b", line.split("#")[0]):
            if not any(re.search(r"PATH=[^ ]*bin|make install", l) for l in lines[:i]):
                fails.append("README.md: '%s' runs a tool by name before any command puts bin/ on PATH "
                             "(\"command not found\" in a fresh clone)" % line.strip())
            return


def main():
    check_options()
    n = check_env()
    check_tool_env()
    check_readme_path()
    words = check_words()
    fails.extend(words)
    # the word check catches a planted reference (it must be able to fail)
    planted = os.path.join(ROOT, "docs", ".planted-words.md")
    with open(planted, "w", encoding="utf-8") as f:
        f.write("As in seed 002, the seeds' rule and issue 27, see /work/briefs/x.md\n")
    try:
        if len({w.split(": ")[1] for w in check_words([os.path.relpath(planted, ROOT)])}) < 4:
            fails.append("words: the planted internal references were not all caught")
    finally:
        os.unlink(planted)
    for f in fails:
        print("FAIL: " + f)
    print("current: %d tools' options, %d environment variables read by the code, %d doc files; %d failures"
          % (len(TOOLS), n, len(list(doc_files())), len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
