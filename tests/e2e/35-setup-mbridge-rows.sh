#!/bin/sh
# 35-setup-mbridge-rows.sh - RECIPE=deepseek_v3 ./setup (CONTAINER/DTYPE/GPU_TYPE as for launch) stages the container
# image of the row's version and the Megatron-Bridge checkout at the release commit (26.08: v0.6.0 51885cf,
# 26.06: v0.5.0 fcbb603), through the pinned-archive code DFM uses, over real HTTP with real libcurl.
# Stand-in: tests/hfserver.py --archives plays GitHub's codeload on loopback (no internet here), serving tarballs
# written with GitHub's layout (one top folder <name>-<commit>); the image step is checked in --dry-run only (no
# enroot here).  Then launch finds what setup staged (no "not staged" for the checkout).  --skip-hf throughout: the
# Hub files of the same run are 34-setup-mbridge.sh's.
. "$(dirname "$0")/hfserver-lib.inc"
launch=$bindir/nemoperf-launch
[ -x "$launch" ] || { echo "FAIL: $launch is not built (run make)"; exit 1; }
unset RECIPE MODEL MODEL_SIZE TASK HF_TOKEN RUN_CONF_IMAGE HF_ENDPOINT CONTAINER DTYPE GPU_TYPE JOB_TOTAL_GPUS WORKLOAD

tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-mb.XXXXXX") || exit 1
trap 'hfserver_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mb_archives "$tmp/arch"
hfserver_start "$tmp" --archives "$tmp/arch"
S=$tmp/stage
mkdir -p "$S"
run() { env STAGE_PATH="$S" NEMOPERF_ARCHIVE_ENDPOINT="$EP" "$@"; }

# dry run: the image of 26.08 and the v0.6.0 archive, nothing created
run RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 "$setup" --skip-hf --dry-run >"$tmp/dry" 2>"$tmp/dry.err" || fail "dry run: $(cat "$tmp/dry.err")"
grep -q "nemo:26.08" "$tmp/dry" && grep -q "^GET $EP/NVIDIA-NeMo/Megatron-Bridge/tar.gz/$V6 -> " "$tmp/dry" &&
    grep -q "CONTAINER not set: staging 26.08" "$tmp/dry.err" && [ ! -e "$S/src" ] &&
    ok "--dry-run: the nemo:26.08 image and Megatron-Bridge v0.6.0's archive, CONTAINER's default said, nothing created" ||
    fail "dry run: $(cat "$tmp/dry" "$tmp/dry.err")"
# the checkout at the release commit; launch then finds it
run RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 "$setup" --skip-hf --skip-image >"$tmp/o1" 2>"$tmp/e1" || fail "setup: $(cat "$tmp/e1")"
[ -f "$S/src/Megatron-Bridge-$V6/scripts/performance/bootstrap.py" ] && [ -f "$S/src/Megatron-Bridge-$V6/.nemoperf-commit" ] &&
    [ ! -e "$S/mbridge/hf" ] && ! grep -q '^hf ' "$tmp/o1" &&
    ok "RECIPE=deepseek_v3 ./setup --skip-hf stages Megatron-Bridge at v0.6.0 ($V6), no Hub file" ||
    fail "checkout: $(cat "$tmp/o1" "$tmp/e1")"
run RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 "$launch" --dry-run >/dev/null 2>"$tmp/l1"
grep -q "not staged yet: NVIDIA-NeMo/Megatron-Bridge" "$tmp/l1" && fail "launch does not see the checkout: $(cat "$tmp/l1")" ||
    ok "launch finds the staged checkout"
# CONTAINER=26.06: the v0.5.0 checkout; TASK=sft of the 26.06 Llama 3 70B rows too
run RECIPE=llama3_70b TASK=sft CONTAINER=26.06 GPU_TYPE=h100 "$setup" --skip-hf --skip-image >"$tmp/o2" 2>"$tmp/e2" &&
    [ -f "$S/src/Megatron-Bridge-$V5/scripts/performance/run_script.py" ] &&
    ok "TASK=sft CONTAINER=26.06 RECIPE=llama3_70b stages Megatron-Bridge at v0.5.0" || fail "26.06: $(cat "$tmp/o2" "$tmp/e2")"
# CONFIG_VARIANT=v1 as the launch reads it: the container that publishes the variant (26.06: DeepSeek V3 GB300 v1)
run RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 CONFIG_VARIANT=v1 "$setup" --skip-hf --dry-run >"$tmp/cv" 2>"$tmp/cv.err" &&
    grep -q "nemo:26.06" "$tmp/cv" && grep -q "CONTAINER not set: staging 26.06, .*CONFIG_VARIANT=v1" "$tmp/cv.err" &&
    ok "CONFIG_VARIANT=v1: 26.06's image and checkout, as the launch takes" || fail "CONFIG_VARIANT=v1: $(cat "$tmp/cv" "$tmp/cv.err")"
run RECIPE=deepseek_v3 DTYPE=fp8_mx GPU_TYPE=gb300 CONFIG_VARIANT=v9 "$setup" --skip-hf --dry-run >/dev/null 2>"$tmp/cv9"
[ $? -eq 2 ] && grep -q "CONFIG_VARIANT=v9: deepseek_v3 has no published row with it; allowed: v2, v1" "$tmp/cv9" &&
    ok "CONFIG_VARIANT=v9: exit 2, the variants listed" || fail "CONFIG_VARIANT=v9: $(cat "$tmp/cv9")"
# idempotent: no request the second time
: >"$tmp/requests.log"
run RECIPE=deepseek_v3 CONTAINER=26.08 GPU_TYPE=gb300 DTYPE=MXFP8 "$setup" --skip-hf --skip-image >"$tmp/o3" 2>"$tmp/e3" &&
    grep -q "already staged" "$tmp/o3" && [ ! -s "$tmp/requests.log" ] && ok "a second run keeps the checkout, no request" ||
    fail "second run: $(cat "$tmp/o3" "$tmp/e3")"
# refusals name the variable and list what exists; nothing created
for bad in "DTYPE=nvfp4:fp8_mx" "CONTAINER=24.12:26.08, 26.06" "GPU_TYPE=h200:gb300"; do
    kv=${bad%%:*} want=${bad#*:}
    mkdir -p "$tmp/none"
    run RECIPE=deepseek_v3 GPU_TYPE=gb300 "$kv" STAGE_PATH="$tmp/none" "$setup" --skip-hf --skip-image >/dev/null 2>"$tmp/e4"
    rc=$?
    [ $rc -eq 2 ] && grep -q "${kv}.*allowed: .*$want" "$tmp/e4" && [ -z "$(ls -A "$tmp/none")" ] && ok "$kv: exit 2: $(cut -c1-140 "$tmp/e4")" ||
        fail "$kv: rc=$rc $(cat "$tmp/e4")"
done
# an unknown RECIPE names both namespaces; a near miss of a Megatron-Bridge name gets it suggested
run RECIPE=nosuch "$setup" --dry-run >/dev/null 2>"$tmp/e5"
grep -q "RECIPE=nosuch: unknown recipe; allowed: NeMo recipes: .*llama3.1.*; Megatron-Bridge recipes: .*deepseek_v3" "$tmp/e5" &&
    ok "an unknown RECIPE lists NeMo's and Megatron-Bridge's names" || fail "$(cat "$tmp/e5")"
run RECIPE=deepsek_v3 "$setup" --dry-run >/dev/null 2>"$tmp/e6"
grep -q "RECIPE=deepsek_v3: unknown recipe; did you mean deepseek_v3" "$tmp/e6" && ok "RECIPE=deepsek_v3: did you mean deepseek_v3" ||
    fail "$(cat "$tmp/e6")"
run RECIPE=deepsek_v3 CONTAINER=26.06 "$setup" --dry-run >/dev/null 2>"$tmp/e7"
grep -q "RECIPE=deepsek_v3: not a Megatron-Bridge performance recipe of CONTAINER=26.06; did you mean deepseek_v3?" "$tmp/e7" &&
    ok "RECIPE=deepsek_v3 CONTAINER=26.06: did you mean deepseek_v3" || fail "$(cat "$tmp/e7")"

[ "$fails" -eq 0 ] && echo "35-setup-mbridge-rows: all ok" || { echo "35-setup-mbridge-rows: $fails failure(s)"; exit 1; }
