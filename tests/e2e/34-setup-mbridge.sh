#!/bin/sh
# 34-setup-mbridge.sh - ./setup for a Megatron-Bridge row (RECIPE=qwen3_30b_a3b ...) against tests/hfserver.py on
# loopback (the Hub's and GitHub codeload's stand-in: no internet here).  ONE run stages the row's container image,
# the Megatron-Bridge checkout of its release and the Hub files; --skip-hf / --skip-image skip only theirs.  A stub
# enroot on PATH writes the image (enroot cannot be installed here; 30-setup.sh covers the import itself).
# The Hub files the release's recipe reads (hf-files.tsv) land in the
# jobs' HF_HOME in huggingface_hub's cache layout (hub/models--org--name/snapshots/<commit>/, refs/main = the
# commit the Hub reports), byte for byte; a pinned revision gets no ref; a re-run downloads nothing; a cut
# transfer is resumed with a Range request; a trust_remote_code config brings its auto_map module; a gated repo
# without HF_TOKEN is refused before anything of it is written (exit 2; 36-setup-hf-access.sh: before the import); a bad CONTAINER / TASK exits 2 with nothing created; the
# token is never written.  Then launch finds everything staged; without the Hub files it refuses (exit 2).
. "$(dirname "$0")/hfserver-lib.inc"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-mb.XXXXXX") || exit 1
trap 'hfserver_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
TOKEN=hf_mb_secret_0ddba11
unset RECIPE MODEL MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN STAGE_PATH CONTAINER TASK NEMOPERF_DATADIR

# Kimi K2's config names its configuration module in auto_map (trust_remote_code, kimi_k2.py:64-65)
F=$tmp/files
mkdir -p "$F/moonshotai/Kimi-K2-Instruct"
cat >"$F/moonshotai/Kimi-K2-Instruct/config.json" <<'JSON'
{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2",
 "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config",
              "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"}}
JSON
echo "class DeepseekV3Config: pass" >"$F/moonshotai/Kimi-K2-Instruct/configuration_deepseek.py"
echo "class DeepseekV3ForCausalLM: pass" >"$F/moonshotai/Kimi-K2-Instruct/modeling_deepseek.py"

mb_archives "$tmp/arch" # Megatron-Bridge v0.6.0 / v0.5.0 as GitHub's codeload serves them
hfserver_start "$tmp" --token "$TOKEN" --files "$F" --archives "$tmp/arch" --public Qwen/Qwen3-30B-A3B \
    --public moonshotai/Kimi-K2-Instruct --public deepseek-ai/DeepSeek-V3
get() { python3 -c "import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())" "$EP/$1"; }
run() { # NAME VAR=VALUE... : setup --skip-image $OPTS with HF_ENDPOINT and the archives' endpoint; $rc, NAME.out/.err
    name=$1
    shift
    env HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" "$@" "$setup" --skip-image ${OPTS:-} >"$tmp/$name.out" \
        2>"$tmp/$name.err"
    rc=$?
}
S=$tmp/stage
Q=$S/mbridge/hf/hub/models--Qwen--Qwen3-30B-A3B

# ---- 26.08 (v0.6.0): Qwen3 30B-A3B is pinned to a revision (qwen3_moe.py:28-29): config and tokenizer ----------
ctl "cut?bytes=100000&n=1" # the first file body (config.json is small: the cut lands on tokenizer.json)
: >"$tmp/requests.log"
run q8 STAGE_PATH="$S" RECIPE=qwen3_30b_a3b
R=ad44e777bcd18fa416d9da3bd8f70d33ebb85d39
snap=$Q/snapshots/$R
if [ "$rc" -eq 0 ] && [ -s "$snap/config.json" ] && [ -s "$snap/tokenizer_config.json" ] && [ -s "$snap/tokenizer.json" ] &&
    [ ! -e "$Q/refs" ]; then
    ok "26.08 qwen3_30b_a3b: config.json and the tokenizer in snapshots/$R, no ref for a pinned revision"
else
    fail "26.08 qwen3_30b_a3b (rc $rc): $(cat "$tmp/q8.err") $(find "$S" -type f 2>&1 | head)"
fi
same=1
for f in config.json tokenizer_config.json tokenizer.json special_tokens_map.json; do
    get "Qwen/Qwen3-30B-A3B/resolve/$R/$f" >"$tmp/want" 2>/dev/null && cmp -s "$tmp/want" "$snap/$f" || same=0
done
[ $same -eq 1 ] && ok "the staged files are the Hub's bytes" || fail "staged files differ from the server's"
[ -f "$S/src/Megatron-Bridge-$V6/scripts/performance/bootstrap.py" ] && ! ls "$S"/*.sqsh >/dev/null 2>&1 &&
    grep -q "^source   NVIDIA-NeMo/Megatron-Bridge@$V6 .* (downloaded)" "$tmp/q8.out" &&
    ok "the same run staged Megatron-Bridge v0.6.0's checkout; --skip-image: no image" ||
    fail "checkout in the same run: $(cat "$tmp/q8.out" "$tmp/q8.err")"
grep -q "/resolve/$R/config.json" "$tmp/requests.log" && ok "files asked at the pinned revision" ||
    fail "no request at revision $R: $(head -3 "$tmp/requests.log")"
grep '"/Qwen/Qwen3-30B-A3B/resolve/[^"]*/tokenizer.json"' "$tmp/requests.log" | grep -q '"range": "bytes=100000-"' &&
    ok "the cut tokenizer.json was resumed from byte 100000 (Range request)" || fail "no resume of the cut file"
ls "$snap"/*.part >/dev/null 2>&1 && fail "a .part file was left" || true
grep -q 'tokenizer for 26.08 qwen3_30b_a3b pretrain: downloaded 3, already staged 0, not in repo 2' "$tmp/q8.out" ||
    fail "summary line: $(cat "$tmp/q8.out")"

# ---- re-run: nothing downloaded ------------------------------------------------------------------------------
run q8again STAGE_PATH="$S" RECIPE=qwen3_30b_a3b
[ "$rc" -eq 0 ] && [ "$(grep -c 'downloaded 0, already staged' "$tmp/q8again.out")" -eq 2 ] &&
    ok "re-run: every file already staged, nothing downloaded" || fail "re-run (rc $rc): $(cat "$tmp/q8again.out")"

# ---- 26.06 (v0.5.0): the same repo at main -> refs/main holds the commit the Hub reports ------------------------
run q6 STAGE_PATH="$S" RECIPE=qwen3_30b_a3b CONTAINER=26.06 TASK=pretrain
sha=$(cat "$Q/refs/main" 2>/dev/null)
hub=$(python3 -c "import hashlib; print(hashlib.sha1(b'Qwen/Qwen3-30B-A3B').hexdigest())") # hfserver's sha
if [ "$rc" -eq 0 ] && [ "$sha" = "$hub" ] && [ -s "$Q/snapshots/$sha/config.json" ] &&
    [ -s "$Q/snapshots/$sha/tokenizer_config.json" ]; then
    ok "26.06: refs/main = $sha (the Hub's), files in its snapshot"
else
    fail "26.06 (rc $rc): ref '$sha', want '$hub': $(cat "$tmp/q6.err")"
fi

# ---- trust_remote_code: Kimi K2's auto_map modules come along ----------------------------------------------------
run kimi STAGE_PATH="$S" RECIPE=kimi_k2
K=$S/mbridge/hf/hub/models--moonshotai--Kimi-K2-Instruct
ksha=$(cat "$K/refs/main" 2>/dev/null)
if [ "$rc" -eq 0 ] && cmp -s "$K/snapshots/$ksha/config.json" "$F/moonshotai/Kimi-K2-Instruct/config.json" &&
    cmp -s "$K/snapshots/$ksha/configuration_deepseek.py" "$F/moonshotai/Kimi-K2-Instruct/configuration_deepseek.py" &&
    cmp -s "$K/snapshots/$ksha/modeling_deepseek.py" "$F/moonshotai/Kimi-K2-Instruct/modeling_deepseek.py"; then
    ok "kimi_k2 (26.06 only): config.json and its 2 auto_map modules staged"
else
    fail "kimi_k2 (rc $rc): $(cat "$tmp/kimi.err") $(ls -R "$K" 2>&1 | head)"
fi

# ---- gated, no token: fails naming the repo, no ref written --------------------------------------------------------
run gated STAGE_PATH="$S" RECIPE=llama3_70b TASK=sft
L=$S/mbridge/hf/hub/models--meta-llama--Meta-Llama-3-70B
[ "$rc" -eq 2 ] && grep -q 'meta-llama/Meta-Llama-3-70B' "$tmp/gated.err" && grep -qi 'HF_TOKEN' "$tmp/gated.err" &&
    [ ! -e "$L" ] && ok "gated Llama 3 70B without HF_TOKEN: exit 2 (checked first), repo and HF_TOKEN named, nothing of it" ||
    fail "gated (rc $rc): $(cat "$tmp/gated.err")"
run gatedtok STAGE_PATH="$S" RECIPE=llama3_70b TASK=sft HF_TOKEN="$TOKEN"
[ "$rc" -eq 0 ] && [ -s "$L/snapshots/$(cat "$L/refs/main")/config.json" ] &&
    ok "with HF_TOKEN: staged" || fail "gated with token (rc $rc): $(cat "$tmp/gatedtok.err")"
# the LoRA row's converted checkpoint and SQuAD cache (exemplar-performance e249aa3 llama3/finetune/launch.sh:188-200):
# --dry-run shows the downloads and the job that makes them, nothing created (the job itself: 37-setup-mbridge-lora.sh)
OPTS=--dry-run run loradry STAGE_PATH="$S" RECIPE=llama3_70b TASK=lora HF_TOKEN="$TOKEN"
[ "$rc" -eq 0 ] && grep -q "^GET $EP/meta-llama/Meta-Llama-3-70B/resolve/main/.* -> $S/mbridge/repos/Meta-Llama-3-70B/" "$tmp/loradry.out" &&
    grep -q "convert_checkpoints.py.* import --hf-model .*/mbridge/repos/Meta-Llama-3-70B.* --megatron-path .*/mbridge/checkpoints/\.llama3_70b\.converting.* --torch-dtype bfloat16" "$tmp/loradry.out" &&
    grep -q "load_dataset(sys.argv\[1\], cache_dir=sys.argv\[2\])" "$tmp/loradry.out" && [ ! -e "$S/mbridge/checkpoints" ] &&
    ok "TASK=lora --dry-run: the base model and SQuAD downloads and the job making the checkpoint and the cache, nothing created" ||
    fail "lora dry-run (rc $rc): $(cat "$tmp/loradry.out" "$tmp/loradry.err")"

# ---- one run, no skip option: image, checkout and Hub files of RECIPE=deepseek_v3 CONTAINER=26.08 -----------------
mkdir -p "$tmp/stubs"
cat >"$tmp/stubs/enroot" <<'EOF'
#!/bin/sh
# stub enroot, tests only: enroot cannot be installed on this machine
[ "$1" = import ] && [ "$2" = --output ] || exit 2
printf 'hsqs stub image of %s\n' "$4" >"$3"
EOF
chmod 755 "$tmp/stubs/enroot"
S1=$tmp/one
: >"$tmp/requests.log"
env PATH="$tmp/stubs:$PATH" HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" STAGE_PATH="$S1" RECIPE=deepseek_v3 \
    CONTAINER=26.08 GPU_TYPE=gb300 "$setup" >"$tmp/one.out" 2>"$tmp/one.err"
rc=$?
D=$S1/mbridge/hf/hub/models--deepseek-ai--DeepSeek-V3
if [ "$rc" -eq 0 ] && [ -s "$S1/nvidia+nemo+26.08.sqsh" ] && [ -f "$S1/src/Megatron-Bridge-$V6/scripts/performance/run_script.py" ] &&
    [ -s "$D/snapshots/$(cat "$D/refs/main" 2>/dev/null)/config.json" ] && [ -z "$(find "$S1" -name '*.part' -o -name '.*tmp*')" ]; then
    ok "one ./setup run: nvidia+nemo+26.08.sqsh, Megatron-Bridge-$V6/ and DeepSeek-V3's config.json in the HF cache"
else
    fail "one run (rc $rc): $(cat "$tmp/one.out" "$tmp/one.err"; find "$S1" | head -30)"
fi
: >"$tmp/requests.log"
env PATH="$tmp/stubs:$PATH" HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" STAGE_PATH="$S1" RECIPE=deepseek_v3 \
    CONTAINER=26.08 GPU_TYPE=gb300 "$setup" >"$tmp/one2.out" 2>"$tmp/one2.err"
rc=$?
[ "$rc" -eq 0 ] && ! grep -q '/tar.gz/' "$tmp/requests.log" &&
    grep -q '^source .*(already staged)' "$tmp/one2.out" && grep -q 'downloaded 0, already staged 1' "$tmp/one2.out" &&
    ok "its re-run: checkout and Hub file already staged" || fail "re-run of the one run (rc $rc): $(cat "$tmp/one2.out" "$tmp/one2.err")"
# --skip-hf skips the Hub files only
S2=$tmp/nohf
env PATH="$tmp/stubs:$PATH" HF_ENDPOINT="$EP" NEMOPERF_ARCHIVE_ENDPOINT="$EP" STAGE_PATH="$S2" RECIPE=deepseek_v3 \
    CONTAINER=26.08 GPU_TYPE=gb300 "$setup" --skip-hf >"$tmp/nohf.out" 2>"$tmp/nohf.err"
rc=$?
[ "$rc" -eq 0 ] && [ -s "$S2/nvidia+nemo+26.08.sqsh" ] && [ -d "$S2/src/Megatron-Bridge-$V6" ] && [ ! -e "$S2/mbridge/hf" ] &&
    ok "--skip-hf: image and checkout, no Hub file" || fail "--skip-hf (rc $rc): $(cat "$tmp/nohf.err")"
# launch finds the one run's three parts; without the Hub files it refuses, naming the file and the ./setup to run
launch=$bindir/nemoperf-launch
env STAGE_PATH="$S1" RECIPE=deepseek_v3 CONTAINER=26.08 GPU_TYPE=gb300 "$launch" --dry-run >/dev/null 2>"$tmp/l1.err"
rc=$?
[ "$rc" -eq 0 ] && ! grep -q 'not staged' "$tmp/l1.err" && ok "launch --dry-run after the one run: nothing reported not staged" ||
    fail "launch after the one run (rc $rc): $(cat "$tmp/l1.err")"
env STAGE_PATH="$S2" RECIPE=deepseek_v3 CONTAINER=26.08 GPU_TYPE=gb300 "$launch" >/dev/null 2>"$tmp/l2.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'deepseek-ai/DeepSeek-V3@main: config.json' "$tmp/l2.err" &&
    grep -q 'run RECIPE=deepseek_v3 CONTAINER=26.08 [^ ]*setup' "$tmp/l2.err" && [ -z "$(ls -A "$S2/experiments")" ] &&
    ok "launch after --skip-hf: exit 2 naming config.json and RECIPE=deepseek_v3 CONTAINER=26.08 ./setup" ||
    fail "launch without the Hub files (rc $rc): $(cat "$tmp/l2.err")"

# ---- bad input: exit 2, named, nothing created -----------------------------------------------------------------------
run badc STAGE_PATH="$tmp/none" RECIPE=qwen3_30b_a3b CONTAINER=26.99
[ "$rc" -eq 2 ] && grep -q "CONTAINER=26.99" "$tmp/badc.err" && grep -q '26.08, 26.06' "$tmp/badc.err" &&
    [ ! -e "$tmp/none" ] && ok "CONTAINER=26.99: exit 2, allowed values named, nothing created" ||
    fail "bad container (rc $rc): $(cat "$tmp/badc.err")"
run badt STAGE_PATH="$tmp/none" RECIPE=qwen3_30b_a3b TASK=lora
[ "$rc" -eq 2 ] && grep -q "TASK=lora" "$tmp/badt.err" && [ ! -e "$tmp/none" ] &&
    ok "TASK=lora for qwen3_30b_a3b: exit 2, nothing created" || fail "bad task (rc $rc): $(cat "$tmp/badt.err")"
OPTS=--dry-run run dry STAGE_PATH="$tmp/none" RECIPE=nemotron_3_super
[ "$rc" -eq 0 ] && grep -q 'nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-BF16@main' "$tmp/dry.out" &&
    grep -q 'nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16@main' "$tmp/dry.out" && [ ! -e "$tmp/none" ] &&
    ok "--dry-run: Super's config and Nano's tokenizer (nemotron_3_super.py:44,59) listed, nothing created" ||
    fail "dry run (rc $rc): $(cat "$tmp/dry.out" "$tmp/dry.err")"

grep -rq "$TOKEN" "$S" "$tmp"/*.out "$tmp"/*.err && fail "the token was written somewhere" ||
    ok "the token is in no staged file or output"
echo "34-setup-mbridge: $fails failure(s)"
[ "$fails" -eq 0 ]
