#!/bin/sh
# 31-setup-automodel.sh - ./setup for RECIPE=automodel against tests/hfserver.py on loopback (the Hub
# stand-in serves a files tree written here: a DeepSeek-V3-like config.json with auto_map and its two
# modules, and a two-shard safetensors model for the gated Llama LoRA row).  from_config: config.json
# and the remote code, no token needed for a public repo, no weights; from_pretrained: HF_TOKEN
# required (exit 2, nothing created), the disk check refuses before any shard is fetched, a cut
# transfer is resumed with a Range request, the shards arrive byte for byte; the token never lands on
# disk or in output.  --skip-image: enroot cannot exist here (30-setup.sh covers the import).
. "$(dirname "$0")/hfserver-lib.inc"
export NEMOPERF_DATADIR="${NEMOPERF_DATADIR:-$root}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-am.XXXXXX") || exit 1
trap 'hfserver_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
TOKEN=hf_am_secret_51c0ffee
unset RECIPE MODEL MODEL_SIZE RUN_CONF_IMAGE HF_TOKEN STAGE_PATH

# ---- the files the stand-in serves ------------------------------------------------------
F=$tmp/files
mkdir -p "$F/deepseek-ai/DeepSeek-V3" "$F/meta-llama/Llama-3.1-8B"
cat >"$F/deepseek-ai/DeepSeek-V3/config.json" <<'JSON'
{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
 "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config",
              "AutoModel": "modeling_deepseek.DeepseekV3Model",
              "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"}}
JSON
echo "class DeepseekV3Config: pass" >"$F/deepseek-ai/DeepSeek-V3/configuration_deepseek.py"
echo "class DeepseekV3Model: pass" >"$F/deepseek-ai/DeepSeek-V3/modeling_deepseek.py"
L=$F/meta-llama/Llama-3.1-8B
python3 - "$L" <<'PY'
import json, os, sys
d = sys.argv[1]
for i in (1, 2):
    with open(os.path.join(d, "model-0000%d-of-00002.safetensors" % i), "wb") as f:
        f.write(os.urandom(300000 + i))
json.dump({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096}, open(os.path.join(d, "config.json"), "w"))
json.dump({"version": "1.0"}, open(os.path.join(d, "tokenizer.json"), "w"))  # small: the cut below hits a shard
json.dump({"metadata": {"total_size": 600003},
           "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
                          "c": "model-00001-of-00002.safetensors"}},
          open(os.path.join(d, "model.safetensors.index.json"), "w"))
PY
cp "$L/model.safetensors.index.json" "$tmp/index.orig"

hfserver_start "$tmp" --token "$TOKEN" --files "$F" --public deepseek-ai/DeepSeek-V3
run() { # NAME VAR=VALUE... : setup --skip-image -q with HF_ENDPOINT; $rc, NAME.out/.err
    name=$1
    shift
    env HF_ENDPOINT="$EP" RECIPE=automodel "$@" "$setup" --skip-image -q >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
}
S=$tmp/stage

# ---- from_config, public repo, remote code ------------------------------------------------
run dsv3 STAGE_PATH="$S" MODEL=deepseek_v3_te_deepep
D=$S/hf/deepseek-ai/DeepSeek-V3
if [ "$rc" -eq 0 ] && cmp -s "$D/config.json" "$F/deepseek-ai/DeepSeek-V3/config.json" &&
    cmp -s "$D/configuration_deepseek.py" "$F/deepseek-ai/DeepSeek-V3/configuration_deepseek.py" &&
    cmp -s "$D/modeling_deepseek.py" "$F/deepseek-ai/DeepSeek-V3/modeling_deepseek.py" &&
    [ "$(ls "$D" | wc -l)" -eq 3 ]; then
    ok "from_config: config.json and the 2 auto_map modules staged, nothing else, no token needed"
else
    fail "from_config staging (rc $rc): $(cat "$tmp/dsv3.err") $(ls "$D" 2>&1)"
fi
grep -q '2 remote-code module(s), 0 weight shard(s)' "$tmp/dsv3.out" || fail "summary line: $(cat "$tmp/dsv3.out")"
run dsv3again STAGE_PATH="$S" MODEL=deepseek_v3_te_deepep
grep -q 'downloaded 0, already staged 3' "$tmp/dsv3again.out" && [ "$rc" -eq 0 ] &&
    ok "re-run: everything already staged, nothing downloaded" || fail "re-run: $(cat "$tmp/dsv3again.out")"

# ---- from_pretrained, gated --------------------------------------------------------------
S2=$tmp/stage2
run nohf STAGE_PATH="$S2" MODEL=llama3_1_8b_peft_benchmark
[ "$rc" -eq 2 ] && grep -q 'HF_TOKEN: not set' "$tmp/nohf.err" && grep -q 'meta-llama/Llama-3.1-8B' "$tmp/nohf.err" &&
    [ ! -e "$S2" ] && ok "gated weights without HF_TOKEN: exit 2, named, nothing created" ||
    fail "no token: rc $rc $(cat "$tmp/nohf.err")"
# the disk check: an index claiming 1 PB is refused before any shard is requested
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['metadata']['total_size']=1e15; json.dump(d,open(sys.argv[1],'w'))" \
    "$L/model.safetensors.index.json"
: >"$tmp/requests.log"
run disk STAGE_PATH="$S2" MODEL=llama3_1_8b_peft_benchmark HF_TOKEN="$TOKEN"
[ "$rc" -eq 1 ] && grep -q 'the weights need .* GB more' "$tmp/disk.err" && ! grep -q 'safetensors"' "$tmp/requests.log" &&
    ! grep -q -- '-of-00002.safetensors' "$tmp/requests.log" && ok "disk check: refused before any shard ($(sed -n 's/.*: \(the weights need [^;]*\);.*/\1/p' "$tmp/disk.err"))" ||
    fail "disk check: rc $rc $(cat "$tmp/disk.err")"
cp "$tmp/index.orig" "$L/model.safetensors.index.json"
rm -f "$S2/hf/meta-llama/Llama-3.1-8B/model.safetensors.index.json"
# a transfer cut after 100 kB: hf.c keeps the prefix as .part and resumes it with a Range request
ctl "cut?bytes=100000&n=1"
: >"$tmp/requests.log"
run weights STAGE_PATH="$S2" MODEL=llama3_1_8b_peft_benchmark HF_TOKEN="$TOKEN"
W=$S2/hf/meta-llama/Llama-3.1-8B
if [ "$rc" -eq 0 ] && cmp -s "$W/model-00001-of-00002.safetensors" "$L/model-00001-of-00002.safetensors" &&
    cmp -s "$W/model-00002-of-00002.safetensors" "$L/model-00002-of-00002.safetensors" &&
    cmp -s "$W/model.safetensors.index.json" "$L/model.safetensors.index.json" && ! ls "$W"/*.part >/dev/null 2>&1; then
    ok "from_pretrained: index and 2 shards staged byte for byte (the index names shard 1 twice: fetched once)"
else
    fail "weights: rc $rc $(cat "$tmp/weights.err") $(ls -la "$W")"
fi
grep -q 'transfer closed with 200001 bytes remaining' "$tmp/weights.err" &&
    grep 'safetensors"' "$tmp/requests.log" | grep -q '"range": "bytes=100000-"' &&
    ok "the cut shard was resumed from byte 100000 (Range request)" || fail "no resume of the cut shard"
[ "$(grep -c 'model-00001-of-00002.safetensors"' "$tmp/requests.log")" -eq 2 ] ||
    fail "shard 1: expected the cut request and one resume"
run again STAGE_PATH="$S2" MODEL=llama3_1_8b_peft_benchmark HF_TOKEN="$TOKEN"
grep -q 'downloaded 0, ' "$tmp/again.out" && [ "$rc" -eq 0 ] && ok "re-run: the weights are kept, nothing downloaded" ||
    fail "re-run: $(cat "$tmp/again.out")"
grep -rq "$TOKEN" "$S" "$S2" "$tmp"/*.out "$tmp"/*.err "$tmp/requests.log" && fail "the token was written somewhere" ||
    ok "the token is in no staged file, output or server log"
echo "31-setup-automodel: $fails failure(s)"
[ "$fails" -eq 0 ]
