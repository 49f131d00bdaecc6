#!/usr/bin/env bash
# Stage one device call's carried folder: the FLA wheels, nvJitLink 13.0.39's library (xz, checked), the src to
# test as B, and go.sh / run.sh themselves. Run it from a worktree of the branch whose src is B (scripts/device/README.md).
#
#   CHECKOUT=<the checkout the device tool sends> [STAGE=.whl-dev] [CACHE=/tmp/stackpeel-device-cache] \
#     [BREV=HEAD] bash scripts/device/stage.sh
#
# CHECKOUT: the device tool sends this checkout (not the worktree): STAGE goes inside it, and must be ignored there
#   (the main checkout's .gitignore has /.whl-*/). Nothing tracked in CHECKOUT is touched.
# STAGE:    the carried folder's name, relative to CHECKOUT (name it in the run's `carry`).
# CACHE:    kept between tries and sessions: the wheels and the xz piece are made there once (xz -9e of the 98.8 MB
#           library takes about 7 minutes on a shared 2-core machine; stage before the first try).
# BREV:     the revision of this worktree whose src/ is B (default HEAD; `WORKTREE` copies the working tree's src).
# DRY=1:    stage and check, and say so (the same as a real staging: there is nothing to send from here).
# NVJ=0:    leave out nvJitLink 13.0.39's piece (26.1 MB): the two older-nvjitlink scenarios then skip.
# FULL=1:   carry B's paths whole, not only the files that differ from the sent checkout's.
set -eu
CHECKOUT=${CHECKOUT:?set CHECKOUT to the checkout the device tool sends}
STAGE=${STAGE:-.whl-dev}; CACHE=${CACHE:-/tmp/stackpeel-device-cache}; BREV=${BREV:-HEAD}
HERE=$(cd "$(dirname "$0")" && pwd); TREE=$(git -C "$HERE" rev-parse --show-toplevel)
case $STAGE in /*|*..*) echo "STAGE must be a folder name inside CHECKOUT" >&2; exit 2;; esac
S=$CHECKOUT/$STAGE
git -C "$CHECKOUT" check-ignore -q "$STAGE/x" || { echo "$STAGE is not ignored in $CHECKOUT: it would travel as an untracked file and show in its status" >&2; exit 2; }
SHA=8b56de439f60292ca674bfcf2eed447d3bb72bc7103a7fb4e841b679451141b4   # libnvJitLink.so.13 of nvidia-nvjitlink 13.0.39
t0=$(date +%s)
mkdir -p "$CACHE"; rm -rf "$S"; mkdir -p "$S/nvj"
cd "$CACHE"
ls fla_core-0.6.0-*.whl flash_linear_attention-0.6.0-*.whl >/dev/null 2>&1 || \
  python3 -m pip download -q --no-deps --only-binary=:all: -d . fla-core==0.6.0 flash-linear-attention==0.6.0
if [ "${NVJ:-1}" = 1 ] && { ! [ -f p1 ] || ! xz -dc p1 | sha256sum | grep -q "^$SHA "; }; then
  ls nvidia_nvjitlink-13.0.39-*.whl >/dev/null 2>&1 || python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_12_x86_64 -d . nvidia-nvjitlink==13.0.39
  unzip -p nvidia_nvjitlink-13.0.39-*.whl nvidia/cu13/lib/libnvJitLink.so.13 | xz --x86 --lzma2=preset=9e -T1 -c > p1.tmp
  mv p1.tmp p1
fi
cp fla_core-0.6.0-*.whl flash_linear_attention-0.6.0-*.whl "$S/"; [ "${NVJ:-1}" = 1 ] && cp p1 "$S/nvj/p1"
cd "$TREE"
# B's src, and the fault suite as B has it (its scenarios and the bench module it ranks with): the suite puts the
# src beside its own scenarios/ first on PYTHONPATH, so the checkout's copy would test A whatever PYTHONPATH says.
# The tree that travels is at most 64 MiB with the carried folder, and the main checkout alone was 35 MB in session
# 38: where the sent checkout is clean at a commit this repository has, only B's files that differ from it travel
# (srcB.tgz, srcB.deleted: go.sh lays them over a copy of A's); else (or FULL=1) B's whole paths.
BPATHS="src scenarios bench/explain_accuracy.py scripts/corpus_split.py"
ABASE=$(git -C "$CHECKOUT" rev-parse HEAD)
rm -f "$S/srcB.deleted"
if [ "$BREV" = WORKTREE ]; then
  tar czf "$S/srcB.tgz" --exclude=__pycache__ $BPATHS; BDESC="$(git rev-parse --short HEAD) + the working tree's changes, whole"
elif [ -z "${FULL:-}" ] && git cat-file -e "$ABASE^{commit}" 2>/dev/null && git -C "$CHECKOUT" diff --quiet HEAD -- $BPATHS \
     && [ -z "$(git -C "$CHECKOUT" ls-files -o --exclude-standard -- $BPATHS)" ]; then
  CHANGED=$(git diff --no-renames --name-only --diff-filter=d "$ABASE" "$BREV" -- $BPATHS)
  git diff --no-renames --name-only --diff-filter=D "$ABASE" "$BREV" -- $BPATHS > "$S/srcB.deleted"
  if [ -n "$CHANGED" ]; then git archive --format=tar "$BREV" $CHANGED | gzip -9 > "$S/srcB.tgz"
  else tar czf "$S/srcB.tgz" -T /dev/null; fi
  BDESC="$(git log -1 --format='%h %s' "$BREV" | cut -c1-100) [over A: $(echo "$CHANGED" | grep -c . || true) files, $(grep -c . "$S/srcB.deleted" || true) deleted]"
else
  git archive --format=tar "$BREV" $BPATHS | gzip -9 > "$S/srcB.tgz"; BDESC="$(git log -1 --format='%h %s' "$BREV" | cut -c1-100) [whole]"
fi
[ "${NVJ:-1}" = 1 ] || { rmdir "$S/nvj"; BDESC="$BDESC; no nvJitLink piece (NVJ=0: the older-nvjitlink scenarios skip)"; }
cp "$HERE/go.sh" "$HERE/run.sh" "$S/"
{
  echo "staged: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "scripts: $(git log -1 --format='%h' -- scripts/device)$(git diff --quiet HEAD -- scripts/device || echo ' (+ uncommitted changes)')"
  echo "A (the sent checkout's src): $(git -C "$CHECKOUT" log -1 --format='%h %s' | cut -c1-100)$(git -C "$CHECKOUT" diff --quiet HEAD -- src || echo ' (+ uncommitted changes)')"
  echo "B ($STAGE/srcB.tgz): $BDESC"
} > "$S/stage.txt"
cat "$S/stage.txt"
du -sb "$S" | awk -v s=$(( $(date +%s) - t0 )) '{printf "staged %.1f MiB in %s (%d s)\n", $1 / 1048576, $2, s}'
[ -z "${DRY:-}" ] || echo "dry run: nothing is sent from here; remove $S when done (rm -rf)"
