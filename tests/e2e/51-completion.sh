#!/bin/sh
# 51-completion.sh - the bash completion (share/bash-completion/completions/nemoperf) completes what a user
# types: `nemoperf-parse --format <TAB>`, recipes and GPU types read from the real `nemoperf-launch --list`,
# options of the three tools, plot file names; and `make install` puts it where bash-completion looks.
# Completion is driven the way bash does it (COMP_WORDS/COMP_CWORD, then the registered function), in bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
shopt -s extglob   # bash-completion turns it on; the plot file filter uses it
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bindir=${NP_BIN:-bin}
case $bindir in /*) ;; *) bindir=$root/$bindir ;; esac
fails=0
ok() { echo "51-completion: ok: $*"; }
fail() { echo "51-completion: FAIL: $*" >&2; fails=$((fails + 1)); }
W=$(mktemp -d "${TMPDIR:-/tmp}/np-compl.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT

. "$root/share/bash-completion/completions/nemoperf" || { echo "cannot source the completion" >&2; exit 1; }

# complete WORD... : COMPREPLY for the last word, as bash's programmable completion would compute it
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    local spec fn
    spec=$(complete -p "${1##*/}" 2>/dev/null || complete -p "$1")
    fn=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
    COMPREPLY=()
    "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

got=$(complete_words nemoperf-parse --format "")
[ "$got" = "csv json markdown table" ] && ok "nemoperf-parse --format <TAB>: $got" || fail "--format <TAB> gave '$got'"
got=$(complete_words nemoperf-parse -f m)
[ "$got" = "markdown" ] && ok "nemoperf-parse -f m<TAB>: $got" || fail "-f m<TAB> gave '$got'"
got=$(complete_words nemoperf-parse --pl)
[ "$got" = "--plot" ] && ok "nemoperf-parse --pl<TAB>: --plot" || fail "--pl<TAB> gave '$got'"
got=$(complete_words nemoperf-parse --dtype "")
[ "$got" = "bf16 fp8 fp8_cs fp8_mx nvfp4" ] && ok "--dtype <TAB>: $got" || fail "--dtype <TAB> gave '$got'"

# values read from the real --list (columns found by name), beside the completed program
# (from --list --format json: every row, the AutoModel ones included, whatever the text layout)
want_recipes=$("$bindir/nemoperf-launch" --list --format json |
    python3 -c 'import json,sys; print(" ".join(sorted({r["recipe"] for r in json.load(sys.stdin)})))')
got=$(complete_words "$bindir/nemoperf-parse" --recipe "")
[ -n "$got" ] && [ "$got" = "$want_recipes" ] && ok "nemoperf-parse --recipe <TAB>: $got" || fail "--recipe <TAB> gave '$got', want '$want_recipes'"
got=$(complete_words "$bindir/nemoperf-launch" --gpu "")
[ "$got" = "b200 b300 gb200 gb300 h100" ] && ok "nemoperf-launch --gpu <TAB>: $got" || fail "launch --gpu <TAB> gave '$got'"
got=$(complete_words "$bindir/nemoperf-parse" --size 40)
[ "$got" = "405b" ] && ok "nemoperf-parse --size 40<TAB>: $got" || fail "--size 40<TAB> gave '$got'"
got=$(cd "$root" && complete_words ./launch --format "")
[ "$got" = "json table" ] && ok "./launch --format <TAB>: $got" || fail "./launch --format <TAB> gave '$got'"
got=$(complete_words nemoperf-setup --sk)
[ "$got" = "--skip-hf --skip-image --skip-pip" ] && ok "nemoperf-setup --sk<TAB>: $got" || fail "setup --sk<TAB> gave '$got'"
: >"$W/sweep.png"; : >"$W/sweep.txt"; mkdir "$W/sub"
got=$(cd "$W" && complete_words nemoperf-parse --plot "")
[ "$got" = "sub sweep.png" ] && ok "--plot <TAB> offers pictures and folders: $got" || fail "--plot <TAB> gave '$got'"

# make install puts it where bash-completion looks ($PREFIX/share/bash-completion/completions/<command>)
make -s -C "$root" install DESTDIR="$W/root" PREFIX=/usr/local >"$W/log" 2>&1 || { fail "make install"; cat "$W/log"; }
for t in launch parse setup; do
    f=$W/root/usr/local/share/bash-completion/completions/nemoperf-$t
    [ -f "$f" ] && grep -q "complete -F _nemoperf_$t nemoperf-$t" "$f" && ok "installed $f" || fail "missing $f"
done
if [ -f /usr/share/bash-completion/bash_completion ]; then
    # bash-completion's own loader finds it there (XDG_DATA_DIRS)
    got=$(XDG_DATA_DIRS="$W/root/usr/local/share" bash -c '. /usr/share/bash-completion/bash_completion
        __load_completion nemoperf-parse && complete -p nemoperf-parse' 2>&1)
    case $got in *_nemoperf_parse*) ok "bash-completion's loader finds it: $got" ;; *) fail "loader: $got" ;; esac
fi
[ "$fails" -eq 0 ] && echo "51-completion: all checks passed" || exit 1
