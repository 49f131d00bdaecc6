#!/usr/bin/env bash
# gpu37 (from gpu36b): stage one device call's carried folder (run from a worktree of the branch to measure as B).
#   bash stage.sh CHECKOUT [CACHE]
# CHECKOUT: the checkout the device tool sends (main); the folder CHECKOUT/.whl-g37 is ignored by `/.whl-*/`.
# CACHE: a folder kept between sessions' tries (default /tmp/g36b): the nvJitLink wheel and its xz (p1) are made
# once there; xz -9e of the 98.8 MB library takes about 7 minutes on a shared 2-core machine, so stage before
# the first try. Then, in the device call (carry [".whl-g37"], from the checkout's root):
#   [DEADLINE=560] [ABROUNDS=4] [PART=VT] bash .whl-g37/go.sh
# and remove CHECKOUT/.whl-g37 at the end.
set -eu
CHECKOUT=$1; CACHE=${2:-/tmp/g36b}; HERE=$(cd "$(dirname "$0")" && pwd)
SHA=8b56de439f60292ca674bfcf2eed447d3bb72bc7103a7fb4e841b679451141b4   # libnvJitLink.so.13 of nvidia-nvjitlink 13.0.39
S=$CHECKOUT/.whl-g37; mkdir -p "$CACHE" "$S/nvj"
cd "$CACHE"
ls fla_core-0.6.0-*.whl flash_linear_attention-0.6.0-*.whl >/dev/null 2>&1 || \
  python3 -m pip download -q --no-deps --only-binary=:all: -d . fla-core==0.6.0 flash-linear-attention==0.6.0
if ! [ -f p1 ] || ! xz -dc p1 | sha256sum | grep -q "^$SHA "; then
  ls nvidia_nvjitlink-13.0.39-*.whl >/dev/null 2>&1 || python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_12_x86_64 -d . nvidia-nvjitlink==13.0.39
  unzip -p nvidia_nvjitlink-13.0.39-*.whl nvidia/cu13/lib/libnvJitLink.so.13 | xz --x86 --lzma2=preset=9e -T1 -c > p1.tmp
  mv p1.tmp p1
fi
cp fla_core-0.6.0-*.whl flash_linear_attention-0.6.0-*.whl "$S/"; cp p1 "$S/nvj/p1"
cd "$HERE"; git -C "$(git rev-parse --show-toplevel)" archive --format=tar HEAD src | gzip -9 > "$S/srcB.tgz"
cp "$HERE/run1.sh" "$HERE/go.sh" "$S/"
du -sb "$S" | awk '{printf "staged %.1f MiB in %s\n", $1 / 1048576, $2}'
