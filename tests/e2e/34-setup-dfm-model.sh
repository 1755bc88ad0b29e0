#!/bin/sh
# 34-setup-dfm-model.sh - RECIPE=wan2.1 ./setup stages the Diffusers pipeline DFM's AutoModel rows read offline
# (Wan-AI/Wan2.1-T2V-14B-Diffusers) over real HTTP with real libcurl.  Stand-in: tests/hfserver.py on loopback
# plays the Hub (no internet here), serving a small pipeline tree this test writes with the Hub's layout
# (model_index.json, one folder per component, sharded safetensors, plus a README and an image outside the
# pipeline).  Cases: --dry-run (nothing created), a body cut mid-transfer (resumed with a Range request), an
# HTML login page instead of a file (refused; no model_index.json, so the launch still refuses), the full run
# byte for byte with model_index.json last, idempotence (no file request the second time), and launch's check.
# --skip-image --skip-pip: enroot and the pip job are 30-setup.sh's and 33-setup-dfm-pip.sh's; the archives
# of the checkouts are 32-setup-dfm.sh's (here: NEMOPERF_ARCHIVE_ENDPOINT answers 404, so --skip-hf aside,
# only the pipeline's result is asserted).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
setup=$bindir/nemoperf-setup
launch=$bindir/nemoperf-launch
export NEMOPERF_DATADIR="${NEMOPERF_DATADIR:-$root}"
[ -x "$setup" ] && [ -x "$launch" ] || { echo "FAIL: nemoperf-setup/launch are not built (run make)"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is needed for tests/hfserver.py"; exit 1; }
unset RECIPE MODEL MODEL_SIZE TASK HF_TOKEN RUN_CONF_IMAGE HF_ENDPOINT GPU_TYPE JOB_TOTAL_GPUS WORKLOAD
tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-dfm-model.XXXXXX") || exit 1
srv_pid=
cleanup() {
    [ -n "$srv_pid" ] && { kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; }
    [ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
REPO=Wan-AI/Wan2.1-T2V-14B-Diffusers

# ---- the pipeline the stand-in serves ---------------------------------------------------
F=$tmp/files
python3 - "$F/$REPO" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
def put(path, body):
    p = os.path.join(d, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "wb").write(body if isinstance(body, bytes) else body.encode())
def blob(name, kb):
    return b"".join(hashlib.sha256(("%s/%d" % (name, i)).encode()).digest() for i in range(kb * 32))
put("model_index.json", json.dumps({"_class_name": "WanPipeline", "_diffusers_version": "0.33.0.dev0",
                                    "scheduler": ["diffusers", "UniPCMultistepScheduler"],
                                    "text_encoder": ["transformers", "UMT5EncoderModel"],
                                    "tokenizer": ["transformers", "T5TokenizerFast"],
                                    "transformer": ["diffusers", "WanTransformer3DModel"],
                                    "vae": ["diffusers", "AutoencoderKLWan"]}, indent=2))
put("scheduler/scheduler_config.json", '{"_class_name": "UniPCMultistepScheduler"}')
put("text_encoder/config.json", '{"architectures": ["UMT5EncoderModel"]}')
put("text_encoder/model-00001-of-00001.safetensors", blob("te", 40))
put("tokenizer/tokenizer_config.json", "{}")
put("tokenizer/spiece.model", blob("spm", 8))
put("transformer/config.json", '{"_class_name": "WanTransformer3DModel", "num_layers": 40}')
put("transformer/diffusion_pytorch_model.safetensors.index.json", '{"weight_map": {}}')
for i in (1, 2):
    put("transformer/diffusion_pytorch_model-0000%d-of-00002.safetensors" % i, blob("tr%d" % i, 200))
put("vae/config.json", "{}")
put("vae/diffusion_pytorch_model.safetensors", blob("vae", 20))
put("README.md", "# Wan2.1\n")
put("assets/logo.png", blob("logo", 4))
PY
python3 "$root/tests/hfserver.py" --files "$F" --public "$REPO" --log "$tmp/requests.log" >"$tmp/port" \
    2>"$tmp/server.err" &
srv_pid=$!
i=0
while [ ! -s "$tmp/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(head -1 "$tmp/port")
case $port in '' | *[!0-9]*) echo "FAIL: hfserver.py did not start: $(cat "$tmp/server.err")"; exit 1 ;; esac
EP=http://127.0.0.1:$port
ctl() { python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()" "$EP/_ctl/$1"; }
S=$tmp/stage
M=$S/hf/$REPO
mkdir -p "$S"
run() { # NAME: setup --skip-image --skip-pip, the archives' endpoint the stand-in (it has none: 404); $rc
    env RECIPE=wan2.1 STAGE_PATH="$S" HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" "$setup" --skip-image \
        --skip-pip >"$tmp/$1.out" 2>"$tmp/$1.err"
    rc=$?
}

# dry run: the pipeline's GETs, nothing created
env RECIPE=wan2.1 STAGE_PATH="$S" HF_ENDPOINT="$EP" "$setup" --skip-image --skip-pip --dry-run >"$tmp/dry" 2>&1 ||
    fail "dry run: $(cat "$tmp/dry")"
grep -q "^GET $EP/api/models/$REPO (its file list)" "$tmp/dry" && grep -q "model_index.json renamed into place last -> $M/" "$tmp/dry" &&
    [ ! -e "$S/hf" ] && ok "--dry-run names the pipeline's GETs and creates nothing" || fail "dry run: $(cat "$tmp/dry")"

# an HTML login page instead of a file: refused, and no model_index.json (the launch keeps refusing)
ctl "html?n=1"
: >"$tmp/requests.log"
run html
[ ! -e "$M/model_index.json" ] && grep -q "$REPO" "$tmp/html.err" && grep -q "Diffusers pipeline.*FAILED" "$tmp/html.out" &&
    ok "an HTML page instead of a file fails the pipeline, model_index.json not in place: $(grep -i html "$tmp/html.err" | head -1 | cut -c1-150)" ||
    fail "html: rc $rc $(cat "$tmp/html.out" "$tmp/html.err")"

# a transfer that keeps breaking (every attempt cut): setup fails, the files before it stay, model_index.json is
# not in place (it comes last), so the launch still refuses; the next run picks up from there
ctl reset
ctl "cut?bytes=1000&n=40"
run broken
[ "$rc" -ne 0 ] && [ ! -e "$M/model_index.json" ] && [ -f "$M/text_encoder/config.json" ] &&
    find "$M" -name '*.part' | grep -q . && ok "a transfer that keeps breaking fails setup; model_index.json not in place, the .part kept" ||
    fail "broken: rc $rc $(cat "$tmp/broken.out"; find "$M")"

# a transfer cut after 100 kB: resumed with a Range request; the whole pipeline byte for byte, nothing else
ctl reset
ctl "cut?bytes=100000&n=1"
: >"$tmp/requests.log"
run full
bad=0
for f in model_index.json scheduler/scheduler_config.json text_encoder/config.json \
    text_encoder/model-00001-of-00001.safetensors tokenizer/tokenizer_config.json tokenizer/spiece.model \
    transformer/config.json transformer/diffusion_pytorch_model.safetensors.index.json \
    transformer/diffusion_pytorch_model-00001-of-00002.safetensors \
    transformer/diffusion_pytorch_model-00002-of-00002.safetensors vae/config.json \
    vae/diffusion_pytorch_model.safetensors; do
    cmp -s "$M/$f" "$F/$REPO/$f" || { bad=1; echo "differs or missing: $f"; }
done
[ "$bad" -eq 0 ] && [ ! -e "$M/README.md" ] && [ ! -e "$M/assets" ] && ! find "$M" -name '*.part' -o -name '.nemoperf-*' | grep -q . &&
    grep -q "Diffusers pipeline: downloaded [1-9][0-9]*, already staged [1-9][0-9]*, outside the pipeline [1-9]" "$tmp/full.out" &&
    ok "the next run: the 12 files of the 5 components byte for byte (those of the broken run kept), README and assets left out, no .part left" ||
    fail "full: $(cat "$tmp/full.out" "$tmp/full.err"; find "$M")"
grep -q '"range": "bytes=' "$tmp/requests.log" && ok "the cut file was resumed (Range request)" ||
    fail "no resume: $(grep -v api "$tmp/requests.log" | head -3)"
# idempotent: no file request the second time
: >"$tmp/requests.log"
run again
[ "$rc" -eq 0 ] || grep -q "Diffusers pipeline: downloaded 0, already staged 1" "$tmp/again.out" && ! grep -q '/resolve/' "$tmp/requests.log" &&
    ok "re-run: the pipeline is kept, no file requested" || fail "re-run: $(cat "$tmp/again.out" "$tmp/requests.log")"

# the launch's check: an AutoModel row finds the staged pipeline (the checkouts, pip folder, image: stand-ins)
for r in DFM-9eaace14995a724c982fe53726a909be2edc93cb Megatron-Bridge-953aabf75c0500180dc14a6a76cf9e7e7c4baec7 \
    Megatron-LM-2d398b42fd4237fffb553109563d73ac099751c3 Automodel-a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5; do
    mkdir -p "$S/src/$r"
done
mkdir -p "$S/pip/wan2.1-14b/site-packages" && echo x >"$S/nvidia+nemo+25.11.sqsh"
env RECIPE=wan2.1 GPU_TYPE=h100 JOB_TOTAL_GPUS=8 STAGE_PATH="$S" "$launch" --dry-run >"$tmp/l.sh" 2>"$tmp/l.err" &&
    grep -q "pretrained_model_name_or_path=/nemoperf/hf/$REPO'" "$tmp/l.sh" && grep -q ",$M:/nemoperf/hf/$REPO'" "$tmp/l.sh" &&
    ok "launch runs the AutoModel row on the staged pipeline (mounted at /nemoperf/hf/$REPO)" ||
    fail "launch: $(cat "$tmp/l.err")"
rm "$M/model_index.json"
env RECIPE=wan2.1 GPU_TYPE=h100 JOB_TOTAL_GPUS=8 STAGE_PATH="$S" "$launch" --dry-run >/dev/null 2>"$tmp/l.err"
grep -q "not staged yet: the Hugging Face model $REPO" "$tmp/l.err" &&
    ok "without model_index.json the launch says the pipeline is not staged, naming $REPO" || fail "$(cat "$tmp/l.err")"
[ "$fails" -eq 0 ] && echo "34-setup-dfm-model: all ok" || { echo "34-setup-dfm-model: $fails failure(s)"; exit 1; }
