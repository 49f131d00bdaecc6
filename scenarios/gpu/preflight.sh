#!/usr/bin/env bash
# stackpeel.require under torchrun on a real GPU node, in one command (about 1-2 minutes):
#
#   OUT=/some/dir scenarios/gpu/preflight.sh [PYTHON]
#
# PYTHON (default python3) holds torch and triton; stackpeel is taken from this tree (src/).
# Three torchrun launches, one rank per GPU:
#   healthy   every rank calls require(triton.kernel_launch[,kernels.fla]); exactly one rank
#             checks, the others wait for its verdict; then every rank launches a real Triton
#             kernel on its GPU (the pass was true)
#   nocc      PATH without C compilers, fresh Triton cache: every rank stops with StackError
#             naming no-c-compiler, one rank checked
#   again     the healthy launch repeated: a new launch checks again (no stale verdict)
# Results: $OUT/summary.txt (PASS/FAIL per scenario) and $OUT/<scenario>.jsonl (a line per rank).
set -u
cd "$(dirname "$0")/../.."
PY=${1:-python3}
# an absolute path now: the no-compiler launch puts a PATH of symlinks first, and a venv's
# python reached through a symlink outside the venv does not find the venv's packages
PY=$(command -v "$PY") || { echo "no $1 on PATH" >&2; exit 2; }
export OUT=${OUT:-$(mktemp -d /tmp/preflight-XXXX)}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
N=${NPROC:-$("$PY" -c 'import torch; print(max(1, torch.cuda.device_count()))')}
CHECKS=triton.kernel_launch
"$PY" -c 'import fla' 2>/dev/null && CHECKS=$CHECKS,kernels.fla
export PREFLIGHT_CHECKS=${PREFLIGHT_CHECKS:-$CHECKS}
export STACKPEEL_PREFLIGHT_DIR="$OUT/verdicts"
: > "$OUT/summary.txt"

nocc_path() {  # symlinks to every program on PATH except C compilers (tests/conftest.py's recipe)
  local d="$OUT/nocc-bin"; mkdir -p "$d"
  IFS=: read -ra dirs <<< "$PATH"
  for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || continue
    for f in "$dir"/*; do
      b=$(basename "$f")
      case "$b" in cc|gcc|g++|c++|c89|c99|cpp|tcc|clang*|*-gcc|gcc-*|g++*|*-g++|*-cc) continue;; esac
      [ -x "$f" ] && [ ! -d "$f" ] && [ ! -e "$d/$b" ] && ln -s "$f" "$d/$b"
    done
  done
  echo "$d"
}

launch() {  # name, then env assignments for the ranks
  local name=$1; shift
  env "$@" timeout 300 "$PY" -m torch.distributed.run --standalone --nproc-per-node="$N" \
    scenarios/gpu/preflight_job.py > "$OUT/$name.jsonl" 2> "$OUT/$name.stderr"
  echo "$?"
}

verdict() {  # name, expected ok (true/false), expected root code or -
  "$PY" - "$OUT/$1.jsonl" "$2" "$3" "$N" "$1" <<'PYEOF'
import json, sys
path, want_ok, want_root, n, name = sys.argv[1], sys.argv[2] == "true", sys.argv[3], int(sys.argv[4]), sys.argv[5]
lines = [json.loads(l) for l in open(path) if l.startswith("{")]
checked = [l for l in lines if l["role"] == "checked"]
problems = []
if len(lines) != n: problems.append(f"{len(lines)} of {n} ranks answered")
if len(checked) != 1: problems.append(f"{len(checked)} ranks checked (want 1)")
if {l["ok"] for l in lines} != {want_ok}: problems.append(f"verdicts {[l['ok'] for l in lines]}")
if len({json.dumps(l["by"], sort_keys=True) for l in lines}) != 1: problems.append("ranks name different checkers")
if want_root != "-" and not all(any(want_root in r for r in l.get("roots", [])) for l in lines):
    problems.append(f"not every rank names {want_root}")
if want_ok and any(l.get("kernel") not in ("ok", "no GPU") for l in lines):
    problems.append("kernel after a pass: " + str([l.get("kernel") for l in lines]))
secs = sorted(l["seconds"] for l in lines) or ["-"]
print(f"{'FAIL' if problems else 'PASS'} {name}: {n} ranks, checked by {checked[0]['by'] if checked else None}, "
      f"require took {secs[0]}-{secs[-1]} s" + (f"; {'; '.join(problems)}" if problems else ""))
PYEOF
}

launch healthy > /dev/null; verdict healthy true - >> "$OUT/summary.txt"
# CC and CXX go too: they may name a compiler outside PATH (the lent H200 sets CC=/opt/gcc/bin/gcc)
launch nocc -u CC -u CXX PATH="$(nocc_path)" TRITON_CACHE_DIR="$OUT/empty-triton-cache" PREFLIGHT_LINGER=10 > /dev/null
verdict nocc false no-c-compiler >> "$OUT/summary.txt"
launch again > /dev/null; verdict again true - >> "$OUT/summary.txt"
echo "== summary ($OUT/summary.txt)"
cat "$OUT/summary.txt"
! grep -q '^FAIL' "$OUT/summary.txt"
