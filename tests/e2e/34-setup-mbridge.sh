#!/bin/sh
# 34-setup-mbridge.sh - ./setup for a Megatron-Bridge row (RECIPE=qwen3_30b_a3b ...) against tests/hfserver.py on
# loopback (the Hub stand-in: no internet here): the Hub files the release's recipe reads (hf-files.tsv) land in the
# jobs' HF_HOME in huggingface_hub's cache layout (hub/models--org--name/snapshots/<commit>/, refs/main = the
# commit the Hub reports), byte for byte; a pinned revision gets no ref; a re-run downloads nothing; a cut
# transfer is resumed with a Range request; a trust_remote_code config brings its auto_map module; a gated repo
# without HF_TOKEN fails naming it and leaves no ref; a bad CONTAINER / TASK exits 2 with nothing created; the
# token is never written.  --skip-image: enroot cannot exist here (30-setup.sh covers the import).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
setup=$bindir/nemoperf-setup
[ -x "$setup" ] || { echo "FAIL: $setup is not built (run make)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-mb.XXXXXX") || exit 1
srv_pid=
trap 'if [ -n "$srv_pid" ]; then kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; fi; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
fails=0
ok() { echo "ok: $*"; }
fail() { fails=$((fails + 1)); echo "FAIL: $*"; }
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

python3 "$root/tests/hfserver.py" --token "$TOKEN" --files "$F" --public Qwen/Qwen3-30B-A3B \
    --public moonshotai/Kimi-K2-Instruct --log "$tmp/requests.log" >"$tmp/port" 2>"$tmp/server.err" &
srv_pid=$!
for i in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(head -1 "$tmp/port")
[ -n "$port" ] && [ "$port" -gt 0 ] 2>/dev/null || { echo "FAIL: tests/hfserver.py did not start: $(cat "$tmp/server.err")"; exit 1; }
EP=http://127.0.0.1:$port
ctl() { python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()" "$EP/_ctl/$1"; }
get() { python3 -c "import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())" "$EP/$1"; }
run() { # NAME VAR=VALUE... : setup --skip-image $OPTS with HF_ENDPOINT; $rc, NAME.out/.err
    name=$1
    shift
    env HF_ENDPOINT="$EP" "$@" "$setup" --skip-image ${OPTS:-} >"$tmp/$name.out" 2>"$tmp/$name.err"
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
[ "$rc" -eq 1 ] && grep -q 'meta-llama/Meta-Llama-3-70B' "$tmp/gated.err" && grep -qi 'HF_TOKEN' "$tmp/gated.err" &&
    [ ! -e "$L/refs" ] && ok "gated Llama 3 70B without HF_TOKEN: exit 1, repo and HF_TOKEN named, no ref" ||
    fail "gated (rc $rc): $(cat "$tmp/gated.err")"
run gatedtok STAGE_PATH="$S" RECIPE=llama3_70b TASK=lora HF_TOKEN="$TOKEN"
[ "$rc" -eq 0 ] && [ -s "$L/snapshots/$(cat "$L/refs/main")/config.json" ] &&
    ok "with HF_TOKEN: staged" || fail "gated with token (rc $rc): $(cat "$tmp/gatedtok.err")"

# ---- bad input: exit 2, named, nothing created -----------------------------------------------------------------------
run badc STAGE_PATH="$tmp/none" RECIPE=qwen3_30b_a3b CONTAINER=26.99
[ "$rc" -eq 2 ] && grep -q "CONTAINER: '26.99'" "$tmp/badc.err" && grep -q '26.08, 26.06' "$tmp/badc.err" &&
    [ ! -e "$tmp/none" ] && ok "CONTAINER=26.99: exit 2, allowed values named, nothing created" ||
    fail "bad container (rc $rc): $(cat "$tmp/badc.err")"
run badt STAGE_PATH="$tmp/none" RECIPE=qwen3_30b_a3b TASK=lora
[ "$rc" -eq 2 ] && grep -q "TASK: 'lora'" "$tmp/badt.err" && [ ! -e "$tmp/none" ] &&
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
