#!/bin/sh
# 32-setup-dfm.sh - RECIPE=wan2.1 ./setup stages the four pinned checkouts (DFM, Megatron-Bridge, Megatron-LM, and
# Automodel for the AutoModel rows)
# from commit archives over real HTTP with real libcurl.  Stand-in: tests/hfserver.py --archives plays GitHub's
# codeload on loopback (no internet here), serving tarballs this test writes with the layout GitHub gives them
# (one top folder <name>-<commit>).  Cases: --dry-run, a download cut short mid-body (the .part is resumed with a
# Range request), a download that keeps failing (setup fails, the .part stays, nothing at the target, the next
# run resumes), a corrupted archive and one of another commit (refused, deleted, nothing half-unpacked), the
# full run, idempotence (no request at all the second time).
. "$(dirname "$0")/hfserver-lib.inc"
export NEMOPERF_DATADIR="${NEMOPERF_DATADIR:-$root}"
unset RECIPE MODEL MODEL_SIZE TASK HF_TOKEN RUN_CONF_IMAGE HF_ENDPOINT

tmp=$(mktemp -d "${TMPDIR:-/tmp}/np-setup-dfm.XXXXXX") || exit 1
trap 'hfserver_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

DFM=NVIDIA-NeMo/DFM@9eaace14995a724c982fe53726a909be2edc93cb
MB=NVIDIA-NeMo/Megatron-Bridge@953aabf75c0500180dc14a6a76cf9e7e7c4baec7
MLM=NVIDIA/Megatron-LM@2d398b42fd4237fffb553109563d73ac099751c3
AM=NVIDIA-NeMo/Automodel@a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5
# archive <owner/name@sha> [top-folder-commit] : a tarball as GitHub names it, ~300 KB (several reads)
archive() {
    python3 - "$tmp/arch" "$1" "${2:-}" <<'PY'
import io, os, sys, tarfile, hashlib
out, spec, other = sys.argv[1], sys.argv[2], sys.argv[3]
repo, sha = spec.split("@")
name = repo.split("/")[1]
os.makedirs(os.path.join(out, repo), exist_ok=True)
top = "%s-%s" % (name, other or sha)
with tarfile.open(os.path.join(out, repo, sha + ".tar.gz"), "w:gz") as t:
    for path, n in (("README.md", 1), ("examples/megatron/recipes/wan/pretrain_wan.py", 1), ("data/blob.bin", 300)):
        body = b"".join(hashlib.sha256(("%s/%s/%d" % (spec, path, i)).encode()).digest() for i in range(n * 32))
        ti = tarfile.TarInfo(top + "/" + path)
        ti.size = len(body)
        t.addfile(ti, io.BytesIO(body))
PY
}
for r in "$DFM" "$MB" "$MLM" "$AM"; do archive "$r"; done

hfserver_start "$tmp" --archives "$tmp/arch"
S=$tmp/stage
mkdir -p "$S"
# --skip-hf: the AutoModel rows' Diffusers pipeline is 34-setup-dfm-model.sh's
run() { env RECIPE=wan2.1 STAGE_PATH="$S" NEMOPERF_ARCHIVE_ENDPOINT="$EP" "$setup" --skip-image --skip-pip --skip-hf "$@"; }
dfm_dir=$S/src/DFM-9eaace14995a724c982fe53726a909be2edc93cb
mb_dir=$S/src/Megatron-Bridge-953aabf75c0500180dc14a6a76cf9e7e7c4baec7
mlm_dir=$S/src/Megatron-LM-2d398b42fd4237fffb553109563d73ac099751c3
am_dir=$S/src/Automodel-a5f06522d4f8ef67bb9bbdd9502e50ae27d2fee5

# dry run: the four GETs, nothing created
run --dry-run >"$tmp/dry" 2>&1 || fail "dry run: $(cat "$tmp/dry")"
[ "$(grep -c "^GET $EP/NVIDIA.*/tar.gz/[0-9a-f]\{40\} -> " "$tmp/dry")" -eq 4 ] && [ ! -e "$S/src" ] &&
    ok "--dry-run lists the four archive GETs and creates nothing" || fail "dry run: $(cat "$tmp/dry")"

# a download that keeps being cut (more often than the retries): setup fails, the .part stays, no target
ctl "cut?bytes=20000&n=50"
run >"$tmp/o1" 2>"$tmp/e1" && fail "setup succeeded with every download cut"
[ ! -e "$dfm_dir" ] && ls "$S/src"/.DFM-*.tar.gz.part >/dev/null 2>&1 &&
    ok "interrupted downloads: setup fails, the .part is kept, nothing at the target" ||
    fail "after the cut downloads: $(ls -la "$S/src" 2>&1) $(cat "$tmp/e1")"
ctl reset
# the next run resumes (Range) and stages all three
run >"$tmp/o2" 2>"$tmp/e2" || fail "setup after the cuts: $(cat "$tmp/e2")"
grep -q '"range": "bytes=[1-9]' "$tmp/requests.log" && ok "the next run resumed the .part with a Range request" ||
    fail "no Range request: $(tail -3 "$tmp/requests.log")"
for d in "$dfm_dir" "$mb_dir" "$mlm_dir" "$am_dir"; do
    [ -f "$d/examples/megatron/recipes/wan/pretrain_wan.py" ] && [ -f "$d/.nemoperf-commit" ] && [ "$(wc -c <"$d/data/blob.bin")" -eq 307200 ] ||
        fail "checkout $d incomplete: $(ls -la "$d" 2>&1)"
done
[ "$(grep -c '^source .*(downloaded)' "$tmp/o2")" -eq 4 ] && ok "the four checkouts are staged whole, with their marker" ||
    fail "results: $(cat "$tmp/o2")"
ls -a "$S/src" | grep -q '\.part\|\.tar\.gz\|unpack' && fail "leftovers: $(ls -a "$S/src")" || ok "no archive or temporary folder left"

# idempotent: nothing requested the second time
ctl reset
run >"$tmp/o3" 2>"$tmp/e3" || fail "second run: $(cat "$tmp/e3")"
ctl log 2>/dev/null
n=$(python3 -c "import sys, urllib.request; print(len(urllib.request.urlopen(sys.argv[1]).read().splitlines()))" "$EP/_ctl/log")
[ "$n" -eq 0 ] && [ "$(grep -c '(already staged)' "$tmp/o3")" -eq 4 ] && ok "a second run keeps the checkouts, no request" ||
    fail "second run: $n requests; $(cat "$tmp/o3")"

# a corrupted archive (truncated gzip, served whole): refused, deleted, nothing half-unpacked; fixed: staged
rm -rf "$mlm_dir"
f=$tmp/arch/NVIDIA/Megatron-LM/2d398b42fd4237fffb553109563d73ac099751c3.tar.gz
cp "$f" "$tmp/good.tar.gz"
head -c 150000 "$tmp/good.tar.gz" >"$f"
run >"$tmp/o4" 2>"$tmp/e4" && fail "a corrupted archive was accepted"
grep -q "corrupt" "$tmp/e4" && [ ! -e "$mlm_dir" ] && ! ls -a "$S/src" | grep -q 'Megatron-LM.*\(tar.gz\|unpack\)' &&
    ok "a corrupted archive is refused and deleted; nothing at the target: $(grep corrupt "$tmp/e4" | head -1 | cut -c1-160)" ||
    fail "corrupted: $(cat "$tmp/e4"); $(ls -a "$S/src")"
# another commit's archive under this commit's name: refused
archive "$MLM" 0000000000000000000000000000000000000000
run >"$tmp/o5" 2>"$tmp/e5" && fail "another commit's archive was accepted"
grep -q "not Megatron-LM-2d398b42fd4237fffb553109563d73ac099751c3" "$tmp/e5" && [ ! -e "$mlm_dir" ] &&
    ok "an archive of another commit is refused" || fail "wrong commit: $(cat "$tmp/e5")"
cp "$tmp/good.tar.gz" "$f"
run >"$tmp/o6" 2>"$tmp/e6" && [ -f "$mlm_dir/.nemoperf-commit" ] && ok "the good archive is staged afterwards" ||
    fail "after the fix: $(cat "$tmp/e6")"
# a foreign folder at the target is not overwritten
rm -rf "$mb_dir" && mkdir -p "$mb_dir" && echo mine >"$mb_dir/keep"
run >"$tmp/o7" 2>"$tmp/e7" && fail "a foreign folder at the target was accepted"
grep -q "move it away" "$tmp/e7" && [ -f "$mb_dir/keep" ] && ok "a folder nemoperf did not stage is left alone, named" ||
    fail "foreign folder: $(cat "$tmp/e7")"

[ "$fails" -eq 0 ] && echo "32-setup-dfm: all ok" || { echo "32-setup-dfm: $fails failure(s)"; exit 1; }
