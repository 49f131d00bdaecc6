#!/bin/sh
# Validate the toolchain checks on a real GPU machine (run from the repo root).
#
#   OUT=/tmp/out sh tests/data/toolchain/gpu_validate.sh [/path/to/stack/python]
#
# Writes to $OUT: healthy.json (the full toolchain report), faults.txt (one block per injected
# fault: status, codes, roots), triton_view.txt (what Triton itself says for the same lookups),
# and pytest.log (tests/test_toolchain.py against this machine's stack). The faults are undone
# before the script ends; Python.h is moved aside and back only if the script may write there.
set -u
PY=${1:-$(command -v python3)}
OUT=${OUT:-/tmp/stackpeel-gpu-validate}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
SP="$PY -m stackpeel check --python $PY --format json"

summarise() {  # name, then the JSON report on stdin
  "$PY" -c '
import json, sys
name = sys.argv[1]
try:
    d = json.load(sys.stdin)
except ValueError as e:
    print("== %s: no report (%s)" % (name, e)); sys.exit()
print("== %s" % name)
for r in d["results"]:
    if r["layer"] == "toolchain":
        print("  %-28s %-7s %s | %s" % (r["id"], r["status"], [f["code"] for f in r["findings"]], r["summary"]))
        for f in r["findings"]:
            print("      msg: " + f["message"][:600])
            for c in (f.get("remedy") or {}).get("commands", []):
                print("      fix: " + c["command"])
print("  roots: %s" % [(x["check"], x["codes"], [s["check"] for s in x["symptoms"]])
                       for x in d["diagnosis"]["blocking"] + d["diagnosis"]["degraded"]])
' "$1" >>"$OUT/faults.txt" 2>&1
}

echo "python: $PY ($($PY -V 2>&1)); CC=${CC-unset}" >"$OUT/faults.txt"
$SP --only toolchain >"$OUT/healthy.json" 2>>"$OUT/faults.txt"
summarise healthy <"$OUT/healthy.json"

# no compiler: PATH without compilers, CC unset
NOCC=$(mktemp -d)
for d in $(echo "$PATH" | tr ':' ' '); do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    n=$(basename "$f")
    case "$n" in cc|gcc|g++|c++|c89|c99|cpp|tcc|clang*|*-gcc*|gcc-*|g++*|*-g++*|*-cc) continue ;; esac
    [ -e "$NOCC/$n" ] || ln -s "$f" "$NOCC/$n" 2>/dev/null
  done
done
env -u CC PATH="$NOCC" $SP --only toolchain.extension_build 2>>"$OUT/faults.txt" | summarise no-compiler
CC=/nonexistent/gcc $SP --only toolchain.extension_build 2>>"$OUT/faults.txt" | summarise bogus-CC
CC=${CC:-$(command -v gcc)} PATH=/nonexistent $SP --only toolchain.extension_build 2>>"$OUT/faults.txt" | summarise CC-but-empty-PATH

# Python.h moved aside (and back)
INC=$($PY -c "import sysconfig; s = sysconfig.get_default_scheme(); print(sysconfig.get_paths(scheme='posix_prefix' if s == 'posix_local' else s)['include'])")
if [ -w "$INC" ] && [ -f "$INC/Python.h" ]; then
  mv "$INC/Python.h" "$INC/Python.h.stackpeel-aside"
  $SP --only toolchain.extension_build 2>>"$OUT/faults.txt" | summarise no-Python.h
  mv "$INC/Python.h.stackpeel-aside" "$INC/Python.h"
else
  echo "== no-Python.h: skipped ($INC not writable)" >>"$OUT/faults.txt"
fi

# cache and ptxas faults
TRITON_CACHE_DIR=/proc/stackpeel/cache $SP --only toolchain.triton_cache 2>>"$OUT/faults.txt" | summarise cache-in-proc
TRITON_PTXAS_PATH=/nonexistent/ptxas TRITON_PTXAS_BLACKWELL_PATH=/nonexistent/ptxas $SP --only toolchain.ptxas \
  2>>"$OUT/faults.txt" | summarise ptxas-overrides-missing
CUDA_HOME=/nonexistent/cuda $SP --only toolchain.nvcc 2>>"$OUT/faults.txt" | summarise bad-CUDA_HOME
TRITON_LIBCUDA_PATH=/usr/local/cuda/lib64/stubs $SP --only toolchain.libcuda_discovery 2>>"$OUT/faults.txt" \
  | summarise libcuda-path-stubs

# Triton's own answers to the same questions
$PY - >"$OUT/triton_view.txt" 2>&1 <<'EOF'
import os, sys, sysconfig
import triton
print("triton", triton.__version__)
from triton import knobs
print("cache dir", knobs.cache.dir)
from triton.runtime import build
print("platform_key", build.platform_key())
from triton.backends.nvidia import driver as nd
try:
    print("libcuda_dirs", nd.libcuda_dirs())
except BaseException as e:
    print("libcuda_dirs raised", type(e).__name__, e)
from triton.backends.nvidia import compiler as nc
for arch in (80, 90, 100, 103, 110, 120, 121):
    try:
        t = nc.get_ptxas(arch)
        print("get_ptxas", arch, t.path, t.version)
    except BaseException as e:
        print("get_ptxas", arch, "raised", type(e).__name__, e)
try:
    import torch
    print("torch", torch.__version__, torch.version.cuda, torch.cuda.is_available(),
          torch.cuda.get_device_capability() if torch.cuda.is_available() else None)
except BaseException as e:
    print("torch raised", type(e).__name__, e)
EOF

# the test file against this machine's stack (GPU-only paths skip or adapt)
STACKPEEL_STACK_PYTHON=$PY timeout 400 $PY -m pytest -q -p no:cacheprovider tests/test_toolchain.py \
  >"$OUT/pytest.log" 2>&1
echo "pytest exit $?" >>"$OUT/pytest.log"
rm -rf "$NOCC"
