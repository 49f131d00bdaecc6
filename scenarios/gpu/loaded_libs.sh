#!/usr/bin/env bash
# runtime_libs on a real GPU machine, in one command (about 2-3 minutes on an H200):
#
#   OUT=/some/dir scenarios/gpu/loaded_libs.sh [PYTHON]
#
# PYTHON defaults to python3 (the interpreter that holds torch). Carried wheels, if any, are read
# from .whl/ : nvidia-cuda-runtime-cu12==12.4.127 (0.9 MB) enables the second-CUDA-runtime
# scenarios (s2, s3); a nvidia-nccl-cu12 wheel enables s4 where the machine has no second libnccl.
# Results: $OUT/summary.txt (one PASS/FAIL/SKIP/INFO line per scenario) and a folder per scenario
# with the probe's facts, the check's findings, the workload's log and explain's answer.
set -u
cd "$(dirname "$0")/../.."
PY=${1:-python3}
export OUT=${OUT:-$(mktemp -d /tmp/loaded-libs-XXXX)}
mkdir -p "$OUT"
# the NVLink-multicast guards the GPU machines ask for stay set for every child
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
timeout 540 "$PY" scenarios/gpu/loaded_libs.py --python "$(command -v "$PY")" --out "$OUT"
rc=$?
echo "== summary ($OUT/summary.txt)"
cat "$OUT/summary.txt"
exit $rc
