#!/bin/sh
# 01-install.sh - make install/uninstall honour PREFIX and DESTDIR, and the installed tools find their data.
set -u
T=$(mktemp -d /tmp/np-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

make -s install DESTDIR="$T/root" PREFIX=/opt/np > "$T/log" 2>&1 || { bad "make install failed"; cat "$T/log"; }
R="$T/root/opt/np"
for f in bin/nemoperf-parse bin/nemoperf-launch bin/nemoperf-setup bin/nemoperf-synth \
         share/nemoperf/recipes/llama3.1.json share/nemoperf/reference/llama3.1.tsv share/nemoperf/driver/nemoperf_nemo.py \
         share/man/man1/nemoperf-parse.1 share/man/man1/nemoperf-launch.1 share/man/man1/nemoperf-setup.1; do
    [ -f "$R/$f" ] && ok "installed $f" || bad "missing $R/$f"
done
# the installed parse finds its recipes beside itself (no source tree involved)
d="$T/logs/pretrain_nemotron4_15b_fp8_16"
mkdir -p "$d"
i=0
while [ $i -lt 50 ]; do
    printf 'Training epoch 0, iteration %d/49 | global_batch_size: 64 | global_step: %d | reduced_train_loss: 9.1 | train_step_timing in s: 1.98 | consumed_samples: %d\n' $i $i $(((i + 1) * 64))
    i=$((i + 1))
done > "$d/log-pretrain_nemotron4_15b_fp8_16_1_0.out"
(cd / && "$R/bin/nemoperf-parse" -f csv --reference "$T/logs") > "$T/out" 2>&1 \
    && grep -q ',132395.9596,.*,ok,.*,132396,.*,PASS,steady,' "$T/out" && ok "installed nemoperf-parse reads installed recipes and reference" \
    || { bad "installed parse:"; cat "$T/out"; }
"$R/bin/nemoperf-launch" --list > "$T/list" 2>&1 && grep -q 'nemotron4' "$T/list" && ok "installed launch --list" \
    || { bad "installed launch --list"; head "$T/list"; }
make -s uninstall DESTDIR="$T/root" PREFIX=/opt/np > "$T/log" 2>&1 || bad "make uninstall failed"
left=$(find "$T/root" -type f | wc -l)
[ "$left" -eq 0 ] && ok "uninstall removed every file" || { bad "uninstall left $left files"; find "$T/root" -type f | head; }
echo "01-install: $fail failed"
[ $fail -eq 0 ]
