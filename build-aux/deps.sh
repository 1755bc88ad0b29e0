#!/bin/sh
# deps.sh - install what nemoperf needs with apt-get when it is missing.
# Usage: deps.sh check|bench|fuzz   (check = build + unit + integration tests)
set -eu
what=${1:-check}
pkgs="build-essential pkg-config libcurl4-openssl-dev libpcre2-dev libjansson-dev libcairo2-dev libfontconfig-dev check libsqlite3-dev libpq-dev"
case $what in
check) pkgs="$pkgs munge slurm-wlm slurmrestd slurm-wlm-jwt-plugin curl python3 python3-numpy python3-jsonschema debootstrap postgresql" ;;
bench) pkgs="$pkgs ripgrep python3" ;;
fuzz)  pkgs="$pkgs clang" ;;
esac
missing=
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: missing packages:$missing (run as root or install them with apt-get)" >&2
    exit 1
fi
echo "deps.sh: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
