#!/usr/bin/env python3
"""Extract Megatron-Bridge's published performance tables into nemoperf reference data.

Reads docs/performance-summary.md (the newest container) and docs/performance-summary-archive.md (older ones)
of NVIDIA-NeMo/Megatron-Bridge at one pinned commit, either from a git directory (git show <commit>:<file>) or
from copies of the two files (--summary/--archive, as kept in tests/data/mbridge/), and writes:

  <out>/<container>.tsv  one file per container version, the table in that version's own layout: the published
                         columns in their order (FSDP / GA / Precision only where the version has them), every
                         cell as published ("a (b)" pairs, "n/a"), footnote tags moved to a footnote column,
                         plus where the row sits (source line, section, the "Model:"/"System:" group).
  <out>/runs.tsv         one line per published measurement, normalized: an "a (b)" row gives two runs; model
                         names become Megatron-Bridge's -mr recipe names, precisions its -c names, systems its -g.

Usage: extract-mbridge.py --git DIR --commit SHA [--out DIR]
       extract-mbridge.py --summary FILE --archive FILE --commit SHA [--out DIR]
       extract-mbridge.py ... --check DIR   (compare with DIR instead of writing; exit 1 on a difference)
Standard library only; no network.
"""
import argparse
import os
import re
import subprocess
import sys

SUMMARY = "docs/performance-summary.md"
ARCHIVE = "docs/performance-summary-archive.md"
REPO = "NVIDIA-NeMo/Megatron-Bridge"

# Published header cell -> column name.  Every header cell must be here (an unknown one is an error).
HEADER = {
    "System": "system", "Model": "model", "#-GPUs": "gpus", "Precision": "precision", "GBS": "gbs",
    "MBS": "mbs", "Sequence Length": "seq_len", "FSDP": "fsdp", "TP": "tp", "PP": "pp", "CP": "cp",
    "VP": "vp", "EP": "ep", "GA": "ga", "Tokens / sec / GPU": "tokens_per_s_per_gpu",
    "Model TFLOP / sec / GPU": "model_tflops_per_gpu",
}
SECTION = {"Pre-Training Performance": "pretrain", "SFT Performance": "sft", "LoRA Performance": "lora"}

# Published model name (before any " (variant)") -> Megatron-Bridge -mr recipe name (function prefixes in
# src/megatron/bridge/perf_recipes/<family>/<gpu>/*.py at main; configs/<family>/*_workload_base_configs.py before).
RECIPE = {
    "LLAMA3_8B": "llama3_8b", "LLAMA3_70B": "llama3_70b", "LLAMA3.1_405B": "llama31_405b",
    "DeepSeekV3": "deepseek_v3", "DeepSeekV4 Flash": "deepseek_v4_flash", "GPT OSS 120B": "gpt_oss_120b",
    "Qwen3_30B_a3B": "qwen3_30b_a3b", "Qwen3_235B_a22B": "qwen3_235b_a22b", "Kimi_K2": "kimi_k2",
    "Nemotron_3_Nano": "nemotron_3_nano", "Nemotron_3_5_Lightning": "nemotron_3_5_lightning",
    "Nemotron_3_Super": "nemotron_3_super", "Nemotron_3_Ultra": "nemotron_3_ultra",
}
# Megatron-Bridge's -mr -> -m (model family, scripts/performance/argument_parser.py).
FAMILY = {
    "llama3_8b": "llama", "llama3_70b": "llama", "llama31_405b": "llama", "deepseek_v3": "deepseek",
    "deepseek_v4_flash": "deepseek", "gpt_oss_120b": "gpt_oss", "qwen3_30b_a3b": "qwen",
    "qwen3_235b_a22b": "qwen", "kimi_k2": "kimi", "nemotron_3_nano": "nemotronh",
    "nemotron_3_5_lightning": "nemotronh", "nemotron_3_super": "nemotronh", "nemotron_3_ultra": "nemotronh",
}
# Published precision -> Megatron-Bridge -c (compute dtype).  "FP8" in 26.02+ tables is current scaling.
DTYPE = {"BF16": "bf16", "FP8": "fp8_cs", "FP8-CS": "fp8_cs", "FP8-MX": "fp8_mx", "MXFP8": "fp8_mx",
         "NVFP4": "nvfp4"}
GPU = {"DGX-GB300": "gb300", "DGX-GB200": "gb200", "DGX-B300": "b300", "DGX-B200": "b200", "DGX-H100": "h100"}
# Container -> Megatron-Bridge release (docs/releases/software-versions.md:3-118 at main; ".01" patch containers
# and 26.08 are not listed there: the patch tag of the same branch, and r0.6.0, are inferences, said in docs).
MB_RELEASE = {
    "26.08": "v0.6.0", "26.06.01": "v0.5.1", "26.06": "v0.5.0", "26.04.01": "v0.4.1", "26.04": "v0.4.0",
    "26.02.01": "v0.3.1", "26.02": "v0.3.0", "25.11": "v0.2.0", "25.09": "v0.1.0rc3",
}
# 25.09 prints no precision: its runs are FP8 with per-tensor current scaling and, in parentheses, the finer
# granularity its note names (32x32 MX blocks on GB200/B200; 128x128 weights / 1x128 activations on H100, which is
# Megatron-Bridge's fp8_sc "sub-channel" recipe) [archive: the 25.09 section's first note].
ALT_2509 = {"gb200": "fp8_mx", "b200": "fp8_mx", "h100": "fp8_sc"}

PAIR = re.compile(r"^\s*([^()]*?)\s*\(([^()]*)\)\s*$")
FOOT = re.compile(r"\[\^([A-Za-z0-9_-]+)\]")


class ExtractError(Exception):
    pass


def cells_of(line):
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")):
        raise ExtractError("not a table row: " + s)
    return [c.strip() for c in s[1:-1].split("|")]


def parse(text, fname):
    """Yield one dict per container version: name, file, first/last line, rows, notes, footnotes."""
    versions, cur = [], None
    section = group = None
    header = None
    lines = text.split("\n")
    footdefs = {}
    for i, raw in enumerate(lines, 1):
        m = re.match(r"^\[\^([A-Za-z0-9_-]+)\]:\s*(.*)$", raw)
        if m:
            footdefs[m.group(1)] = (i, m.group(2).strip())
    for i, raw in enumerate(lines, 1):
        line = raw.rstrip()
        m = re.match(r"^## (\d\d\.\d\d(?:\.\d\d)?) NeMo Container\s*$", line)
        if m:
            cur = {"name": m.group(1), "file": fname, "first": i, "last": i, "rows": [], "notes": [],
                   "columns": None, "footnotes": {}}
            versions.append(cur)
            section = group = header = None
            continue
        if line.startswith("## "):
            cur = None
            continue
        if cur is None:
            continue
        if line.strip():
            cur["last"] = i
        m = re.match(r"^### (.*?)\s*$", line)
        if m:
            if m.group(1) not in SECTION:
                raise ExtractError("%s:%d: unknown section %r" % (fname, i, m.group(1)))
            section, group, header = SECTION[m.group(1)], None, None
            continue
        m = re.match(r"^#### (Model|System): (.*?)\s*$", line)
        if m:
            group, header = "%s: %s" % (m.group(1), m.group(2)), None
            continue
        if line.startswith("|"):
            cells = cells_of(line)
            if header is None:
                try:
                    header = [HEADER[c] for c in cells]
                except KeyError as e:
                    raise ExtractError("%s:%d: unknown column %s" % (fname, i, e))
                if cur["columns"] is None:
                    cur["columns"] = header
                elif cur["columns"] != header:
                    raise ExtractError("%s:%d: columns differ within %s" % (fname, i, cur["name"]))
                continue
            if set(line.replace("|", "").strip()) <= set("-: "):
                continue
            if len(cells) != len(header):
                raise ExtractError("%s:%d: %d cells, header has %d" % (fname, i, len(cells), len(header)))
            if section is None or group is None:
                raise ExtractError("%s:%d: table row outside a section/group" % (fname, i))
            row = {"line": i, "section": section, "group": group, "footnote": []}
            for col, cell in zip(header, cells):
                for tag in FOOT.findall(cell):
                    row["footnote"].append(tag)
                    if tag not in footdefs:
                        raise ExtractError("%s:%d: footnote [^%s] is not defined" % (fname, i, tag))
                    cur["footnotes"][tag] = footdefs[tag]
                row[col] = FOOT.sub("", cell).strip()
            cur["rows"].append(row)
            continue
        header = None if line.strip() else header
        if line.startswith("- "):
            cur["notes"].append((i, line[2:].strip()))
    return versions


def split_pair(cell):
    """'a (b)' -> (a, b); 'a' -> (a, a)."""
    m = PAIR.match(cell)
    return (m.group(1), m.group(2)) if m else (cell, cell)


def runs_of(version):
    out = []
    for r in version["rows"]:
        if "model" in r:
            model_cell, system = r["model"], r["group"].split(": ", 1)[1]
        else:
            model_cell, system = r["group"].split(": ", 1)[1], r["system"]
        m = re.match(r"^(.*?)\s*(?:\((.*)\))?$", model_cell)
        model, variant = m.group(1).strip(), (m.group(2) or "").strip()
        if model not in RECIPE:
            raise ExtractError("%s:%d: model %r has no recipe name" % (version["file"], r["line"], model))
        if system not in GPU:
            raise ExtractError("%s:%d: system %r unknown" % (version["file"], r["line"], system))
        gpu = GPU[system]
        paired = any(PAIR.match(v) for k, v in r.items() if isinstance(v, str) and k not in ("group", "model"))
        for alt in ((0, 1) if paired else (0,)):
            run = {"container": version["name"], "task": r["section"], "recipe": RECIPE[model],
                   "family": FAMILY[RECIPE[model]], "model": model, "variant": variant or "-", "gpu_type": gpu,
                   "published_as": "second" if alt else ("first" if paired else "only")}
            if "precision" in r:
                prec = split_pair(r["precision"])[alt]
                if prec not in DTYPE:
                    raise ExtractError("%s:%d: precision %r unknown" % (version["file"], r["line"], prec))
                run["precision"], run["dtype"] = prec, DTYPE[prec]
            else:
                run["precision"] = "-"
                run["dtype"] = ALT_2509[gpu] if alt else "fp8_cs"
            for col in ("gpus", "gbs", "mbs", "seq_len", "fsdp", "tp", "pp", "cp", "vp", "ep", "ga",
                        "tokens_per_s_per_gpu", "model_tflops_per_gpu"):
                v = split_pair(r[col])[alt] if col in r else "-"
                if v != "-" and v != "n/a" and not re.match(r"^\d+(\.\d+)?$", v):
                    raise ExtractError("%s:%d: %s %r is not a number" % (version["file"], r["line"], col, v))
                run[col] = v
            run["footnote"] = ",".join(r["footnote"]) or "-"
            run["mb_release"] = MB_RELEASE[version["name"]]
            run["source"] = "%s:%d" % (version["file"], r["line"])
            out.append(run)
    return out


RUN_COLS = ["container", "task", "recipe", "family", "model", "variant", "dtype", "precision", "gpu_type", "gpus",
            "gbs", "mbs", "seq_len", "fsdp", "tp", "pp", "cp", "vp", "ep", "ga", "tokens_per_s_per_gpu",
            "model_tflops_per_gpu", "published_as", "footnote", "mb_release", "source"]


def render_version(v, commit):
    cols = ["line", "section", "group"] + v["columns"] + ["footnote"]
    out = ["# Megatron-Bridge performance summary, %s NeMo Container: %s@%s %s:%d-%d" %
           (v["name"], REPO, commit, v["file"], v["first"], v["last"]),
           "# Layout as published (columns in order, cells verbatim: \"a (b)\" pairs, n/a); footnote tags moved "
           "to the footnote column. Generated by extract-mbridge.py: do not edit."]
    for tag, (ln, text) in sorted(v["footnotes"].items()):
        out.append("# footnote %s (%s:%d): %s" % (tag, v["file"], ln, text))
    for ln, text in v["notes"]:
        out.append("# note (%s:%d): %s" % (v["file"], ln, text))
    out.append("\t".join(cols))
    for r in v["rows"]:
        vals = [str(r["line"]), r["section"], r["group"]] + [r[c] for c in v["columns"]] + \
               [",".join(r["footnote"]) or "-"]
        out.append("\t".join(vals))
    return "\n".join(out) + "\n"


def render_runs(versions, commit):
    out = ["# Megatron-Bridge published runs, every container version, one line per measurement: %s@%s "
           "(%s, %s). Generated by extract-mbridge.py: do not edit." % (REPO, commit, SUMMARY, ARCHIVE),
           "# dtype/recipe/gpu_type are Megatron-Bridge's -c/-mr/-g names; published_as: only, or first/second of "
           "an \"a (b)\" row; mb_release: the release matching the container (docs/megatron-bridge.md).",
           "\t".join(RUN_COLS)]
    for v in versions:
        for run in runs_of(v):
            out.append("\t".join(str(run[c]) for c in RUN_COLS))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git", help="git directory of a Megatron-Bridge clone")
    ap.add_argument("--summary", help="a copy of docs/performance-summary.md")
    ap.add_argument("--archive", help="a copy of docs/performance-summary-archive.md")
    ap.add_argument("--commit", required=True, help="the commit the files come from (40 hex)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "megatron-bridge"))
    ap.add_argument("--check", help="compare with the files in this folder instead of writing")
    a = ap.parse_args()
    if not re.match(r"^[0-9a-f]{40}$", a.commit):
        ap.error("--commit: expected 40 hex digits")
    texts = {}
    for f, copy in ((SUMMARY, a.summary), (ARCHIVE, a.archive)):
        if a.git:
            texts[f] = subprocess.run(["git", "--git-dir", a.git, "show", "%s:%s" % (a.commit, f)], check=True,
                                      capture_output=True, text=True).stdout
        elif copy:
            with open(copy, encoding="utf-8") as fh:
                texts[f] = fh.read()
        else:
            ap.error("give --git, or --summary and --archive")
    try:
        versions = parse(texts[SUMMARY], SUMMARY) + parse(texts[ARCHIVE], ARCHIVE)
        files = {v["name"] + ".tsv": render_version(v, a.commit) for v in versions}
        files["runs.tsv"] = render_runs(versions, a.commit)
    except ExtractError as e:
        print("extract-mbridge: " + str(e), file=sys.stderr)
        return 2
    names = [v["name"] for v in versions]
    if len(set(names)) != len(names):
        print("extract-mbridge: a container version appears twice", file=sys.stderr)
        return 2
    if a.check:
        bad = 0
        for name, text in sorted(files.items()):
            p = os.path.join(a.check, name)
            try:
                with open(p, encoding="utf-8") as fh:
                    have = fh.read()
            except OSError as e:
                print("extract-mbridge: %s: %s" % (p, e.strerror), file=sys.stderr)
                bad = 1
                continue
            if have != text:
                print("extract-mbridge: %s differs from the extraction" % p, file=sys.stderr)
                bad = 1
        extra = set(f for f in os.listdir(a.check) if f.endswith(".tsv")) - set(files)
        for f in sorted(extra):
            print("extract-mbridge: %s/%s is not produced by the extraction" % (a.check, f), file=sys.stderr)
            bad = 1
        return bad
    os.makedirs(a.out, exist_ok=True)
    for name, text in files.items():
        tmp = os.path.join(a.out, "." + name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, os.path.join(a.out, name))
    for v in versions:
        print("%s\t%d rows\t%s:%d-%d" % (v["name"], len(v["rows"]), v["file"], v["first"], v["last"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
