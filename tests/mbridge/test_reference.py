#!/usr/bin/env python3
"""test_reference.py - every published Megatron-Bridge row is in nemoperf's reference data, unchanged.

Inputs: the two pinned copies of Megatron-Bridge's docs (tests/data/mbridge/, taken with `git show
067f987df...:docs/performance-summary[-archive].md`) and share/nemoperf/reference/megatron-bridge/.
1. the extractor, run on the pinned copies, reproduces the shipped files byte for byte;
2. independently of the extractor, every markdown table row under a "## <ver> NeMo Container" heading is found in
   that version's TSV at its line with the same cells, and the row counts per version are the facts' counts;
3. runs.tsv has one run per plain row and two per "a (b)" row, each carrying the published numbers;
4. a planted change (a row deleted from the markdown) makes the extractor's --check fail.
No stand-in: these are NVIDIA's own files at the pinned commit.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "mbridge")
REF = os.path.join(ROOT, "share", "nemoperf", "reference", "megatron-bridge")
EXTRACT = os.path.join(ROOT, "share", "nemoperf", "reference", "extract-mbridge.py")
COMMIT = "067f987df03b8355b03192d88d70f1709fedf51a"
# /work/shared/facts/megatron-bridge.md section 1 (26.06: 31 pre-training + 5 SFT + 5 LoRA)
COUNTS = {"26.08": 18, "26.06.01": 14, "26.06": 41, "26.04.01": 47, "26.04": 44, "26.02.01": 36, "26.02": 33,
          "25.11": 28, "25.09": 17}

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def extract(summary, archive, check_dir):
    return subprocess.run([sys.executable, "-B", EXTRACT, "--summary", summary, "--archive", archive, "--commit",
                           COMMIT, "--check", check_dir], capture_output=True, text=True)


def read_tsv(path):
    rows, header = [], None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
            else:
                check(len(cells) == len(header), "%s: %d cells, header has %d" % (path, len(cells), len(header)))
                rows.append(dict(zip(header, cells)))
    return header, rows


def markdown_rows(path):
    """(version, line, cells) of every data row of every table, by a scan independent of the extractor."""
    out, ver, in_table = [], None, 0
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            m = re.match(r"^## (\S+) NeMo Container", line)
            if m:
                ver = m.group(1)
            elif line.startswith("## "):
                ver = None
            if line.startswith("|"):
                in_table += 1
                if in_table > 2 and ver:
                    cells = [re.sub(r"\[\^[^\]]*\]", "", c).strip() for c in line.strip().strip("|").split("|")]
                    out.append((ver, n, cells))
            else:
                in_table = 0
    return out


def main():
    summary = os.path.join(DATA, "performance-summary.md")
    archive = os.path.join(DATA, "performance-summary-archive.md")
    r = extract(summary, archive, REF)
    check(r.returncode == 0, "extractor on the pinned copies differs from the shipped data: " + r.stderr.strip())

    md = [("docs/performance-summary.md", x) for x in markdown_rows(summary)] + \
         [("docs/performance-summary-archive.md", x) for x in markdown_rows(archive)]
    per_ver = {}
    for _, (ver, _, _) in md:
        per_ver[ver] = per_ver.get(ver, 0) + 1
    check(per_ver == COUNTS, "rows per version %r, the facts say %r" % (per_ver, COUNTS))

    tsv = {}
    for ver in COUNTS:
        header, rows = read_tsv(os.path.join(REF, ver + ".tsv"))
        tsv[ver] = (header, {int(row["line"]): row for row in rows})
        check(len(rows) == COUNTS[ver], "%s.tsv: %d rows, expected %d" % (ver, len(rows), COUNTS[ver]))
    for fname, (ver, line, cells) in md:
        header, by_line = tsv[ver]
        row = by_line.get(line)
        if row is None:
            check(False, "%s:%d (%s) missing from %s.tsv" % (fname, line, ver, ver))
            continue
        published = header[3:-1]  # line, section, group ... footnote
        check([row[c] for c in published] == cells, "%s:%d: cells %r, TSV has %r" %
              (fname, line, cells, [row[c] for c in published]))

    _, runs = read_tsv(os.path.join(REF, "runs.tsv"))
    expect = 0
    for _, (ver, line, cells) in md:
        expect += 2 if any(re.search(r"\(\s*[\d.]", c) or re.search(r"\((FP8|MX)", c) for c in cells) else 1
    check(len(runs) == expect, "runs.tsv: %d runs, expected %d" % (len(runs), expect))
    for run in runs:
        ver = run["container"]
        _, by_line = tsv[ver]
        line = int(run["source"].rsplit(":", 1)[1])
        row = by_line.get(line)
        if row is None:
            check(False, "runs.tsv: %s has no row" % run["source"])
            continue
        pub = row["tokens_per_s_per_gpu"]
        m = re.match(r"^(\S+)\s*\((\S+)\)$", pub)
        want = (m.group(2) if run["published_as"] == "second" else m.group(1)) if m else pub
        check(run["tokens_per_s_per_gpu"] == want, "runs.tsv %s %s: tokens %s, published %s" %
              (run["source"], run["published_as"], run["tokens_per_s_per_gpu"], pub))
        check(run["dtype"] in ("bf16", "fp8_cs", "fp8_mx", "fp8_sc", "nvfp4"), "runs.tsv: dtype " + run["dtype"])

    # planted: one row deleted -> --check must fail
    tmp = tempfile.mkdtemp(prefix="np-mbref.")
    try:
        lines = open(archive, encoding="utf-8").read().split("\n")
        victim = next(i for i, ln in enumerate(lines) if ln.startswith("| DGX-H100 | 1024 | FP8 | 1536"))
        del lines[victim]
        planted = os.path.join(tmp, "archive.md")
        with open(planted, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
        r = extract(summary, planted, REF)
        check(r.returncode == 1 and "differs" in r.stderr, "a deleted row was not caught: rc %d" % r.returncode)
    finally:
        shutil.rmtree(tmp)

    for f in failures:
        print("FAIL: " + f)
    print("mbridge reference: %d markdown rows, %d runs, %d failures" % (len(md), len(runs), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
