#!/usr/bin/env python3
"""extract-dfm.py - write share/nemoperf/reference/dfm.tsv from NeMo DFM's docs/performance-summary.md.

Reads the two versions with `git show <commit>:docs/performance-summary.md` from a local mirror of
NVIDIA-NeMo/DFM (default /work/.mirror/NVIDIA-NeMo+DFM/repo, the `fetch` tool's copy): the newest (f8c1c09,
both sections) and the superseded 2025-11-19 one (b96cf8f, the only one with Tokens/s/GPU).  Every table row
becomes one TSV line citing its source line.  Rerun:
    python3 share/nemoperf/reference/extract-dfm.py > share/nemoperf/reference/dfm.tsv
"""
import subprocess
import sys

REPO = sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA-NeMo+DFM/repo"
NEWEST = "f8c1c09ef20f81408c1f9010ad49b6d80eb55366"
OLD = "b96cf8f"
SYSTEMS = {"DGX-GB200": "gb200", "DGX-GB300": "gb300", "DGX-B200": "b200", "DGX-H100": "h100"}
COLS = ("recipe model_size dtype gpu_type gpus step_time_s tokens_per_s mfu_percent days_1t tokens_per_s_per_gpu "
        "model_tflops_per_gpu source gbs mbs seq_len fsdp dp tp sp pp cp vp ep backend system superseded").split()


def rows(commit, superseded):
    text = subprocess.run(["git", "-C", REPO, "show", commit + ":docs/performance-summary.md"], check=True,
                          capture_output=True, text=True).stdout
    backend, system, header, out = None, None, None, []
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("## "):
            backend = "automodel" if "Automodel" in line or "AutoModel" in line else "mcore"
        elif line.startswith("#### System:"):
            system = line.split(":", 1)[1].strip()
        elif line.startswith("| Model"):
            header = [c.strip() for c in line.strip("|").split("|")]
        elif line.startswith("|Wan") and header:
            cell = dict(zip(header, [c.strip().replace(",", "") for c in line.strip("|").split("|")]))
            tp, pp, cp, gpus = (int(cell[k]) for k in ("TP", "PP", "CP", "#-GPUs"))
            r = {"recipe": "wan2.1", "model_size": "14b", "dtype": "bf16", "gpu_type": SYSTEMS[system],
                 "gpus": gpus, "model_tflops_per_gpu": cell["Model TFLOP / sec / GPU"],
                 "tokens_per_s_per_gpu": cell.get("Tokens / sec / GPU", "-"),
                 "source": "DFM@%s docs/performance-summary.md:%d" % (commit[:7], n), "gbs": cell["GBS"],
                 "mbs": cell["MBS"], "seq_len": cell["Sequence Length"], "fsdp": cell["FSDP"],
                 "dp": cell.get("DP", gpus // (tp * pp * cp)), "tp": tp, "sp": cell["SP"], "pp": pp, "cp": cp,
                 "vp": cell["VP"], "ep": cell["EP"], "backend": backend, "system": system,
                 "superseded": superseded}
            out.append("\t".join(str(r.get(c, "-")) for c in COLS))
    return out


print("# NeMo DFM performance summary: Wan 2.1 14B video diffusion pre-training, BF16, mock data (37,440 latent\n"
      "# patches a sample).  Written by share/nemoperf/reference/extract-dfm.py from NVIDIA-NeMo/DFM\n"
      "# docs/performance-summary.md at %s (main, 2026-03-13: the Megatron-Core table per system and the\n"
      "# AutoModel table) and at %s (2025-11-19, superseded: the only version with Tokens/s/GPU; its rows give\n"
      "# NVIDIA's calibration, 1.65907e11 FLOPs per video token, see docs/dfm.md).  backend: mcore\n"
      "# (pretrain_wan.py on Megatron-Bridge) or automodel; fsdp is the published flag (1 = FSDP); dp is the\n"
      "# published DP column (AutoModel) or GPUs / (TP x PP x CP); superseded: the date of a superseded version."
      % (NEWEST, OLD))
print("\t".join(COLS))
for line in rows(NEWEST, "-") + rows(OLD, "2025-11-19"):
    print(line)
