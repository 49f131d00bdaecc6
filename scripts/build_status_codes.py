#!/usr/bin/env python3
"""Build src/stackpeel/knowledge/status_codes.json: the names (and, where the library's own
string function gives one, the texts) of the numeric status codes a GPU stack's logs print
as bare numbers: ``exited with code 132``, ``exit code -1073741819``, ``CUDA error 35``,
``cudaGetDeviceCount returned 804``, ``NCCL error 2``, ``HRESULT 0x887a0006``, a Vulkan call
that returned ``-4``. :mod:`stackpeel.explain.numbers` appends the name to such a number so
the signatures, written for the names and texts, meet it.

Nothing is typed by hand: every value is read from the vendor's header and every text from
the vendor's own library (loaded with ctypes and asked, as a program asks it):

==============  ==========================================  ==========================================
namespace       values (header)                              texts
==============  ==========================================  ==========================================
cudaError       nvidia-cuda-runtime-cu12 driver_types.h     libcudart.so.12 cudaGetErrorString
CUresult        nvidia-cuda-runtime-cu12 cuda.h (the driver  none: cuGetErrorString lives in the
                API header ships in the runtime wheel)      driver's libcuda.so, which no wheel ships
ncclResult      nvidia-nccl-cu12 nccl.h                     libnccl.so.2 ncclGetErrorString
cublasStatus    nvidia-cublas-cu12 cublas_api.h             libcublas.so.12 cublasGetStatusString
cudnnStatus     nvidia-cudnn-cu12 cudnn_graph.h (cuDNN 9)   none (cudnnGetErrorString gives the name)
nvmlReturn      nvidia-ml-py pynvml.py NVML_ERROR_*         none (nvmlErrorString is in the driver)
NTSTATUS        Debian mingw-w64-common ntstatus.h          none (the names are what users search)
HRESULT         Debian mingw-w64-common winerror.h          none
VkResult        Debian libvulkan-dev vulkan_core.h          none
signal          Python's signal module on Linux x86-64      signal.strsignal (glibc's descriptions)
==============  ==========================================  ==========================================

Which values are kept: every value of the CUDA, NCCL, cuBLAS, cuDNN, NVML and Vulkan enums
(all of them are results of calls a GPU stack makes), signals 1-31 (the standard ones; the
real-time ones are nobody's exit status). Of Windows' thousands of NTSTATUS and HRESULT values
only those a crashing or failing process reports as its exit status or a GPU API returns
(:data:`NTSTATUS_KEEP`, :data:`HRESULT_KEEP`): a number outside them is left as it is, so a
process's own exit code is never given a Windows name it does not have.

    python scripts/build_status_codes.py              # download the packages, rewrite the file
    python scripts/build_status_codes.py --from DIR   # read wheels/.debs (or their unpacked trees) under DIR
    python scripts/build_status_codes.py --check      # exit 1 if the file is not current

Downloading needs ``pip download`` (PyPI) and ``apt-get download`` (Debian or Ubuntu).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import signal
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "stackpeel" / "knowledge" / "status_codes.json"

#: the wheels read (pinned: the file records these versions)
WHEELS = {
    "nvidia-cuda-runtime-cu12": "12.9.79",
    "nvidia-nccl-cu12": "2.32.3",
    "nvidia-cublas-cu12": "12.9.3.13",
    "nvidia-cudnn-cu12": "9.28.0.42",
    "nvidia-ml-py": "13.615.71",
}
#: the Debian packages read (the version apt-get downloads is recorded)
DEBS = ("mingw-w64-common", "libvulkan-dev")

#: the NTSTATUS values a failing process reports as its exit status (Windows makes an unhandled
#: exception's code the process's exit code: ``Process finished with exit code -1073741819
#: (0xC0000005)``): faults (access violation, in-page error, illegal/privileged instruction,
#: divide by zero, stack overflow), the loader's failures (DLL not found, entry point or ordinal
#: not found, DLL init failed, bad image), the C runtime's fail-fast exits (stack buffer overrun,
#: heap corruption, invalid CRT parameter, fail fast), memory (no memory, commitment limit) and
#: Ctrl-C
NTSTATUS_KEEP = (
    "STATUS_ACCESS_VIOLATION", "STATUS_IN_PAGE_ERROR", "STATUS_INVALID_PARAMETER",
    "STATUS_NO_MEMORY", "STATUS_ILLEGAL_INSTRUCTION", "STATUS_INVALID_IMAGE_FORMAT",
    "STATUS_ARRAY_BOUNDS_EXCEEDED", "STATUS_FLOAT_DIVIDE_BY_ZERO", "STATUS_FLOAT_INVALID_OPERATION",
    "STATUS_INTEGER_DIVIDE_BY_ZERO", "STATUS_PRIVILEGED_INSTRUCTION", "STATUS_STACK_OVERFLOW",
    "STATUS_COMMITMENT_LIMIT", "STATUS_DLL_NOT_FOUND", "STATUS_ORDINAL_NOT_FOUND",
    "STATUS_ENTRYPOINT_NOT_FOUND", "STATUS_CONTROL_C_EXIT", "STATUS_DLL_INIT_FAILED",
    "STATUS_HEAP_CORRUPTION", "STATUS_STACK_BUFFER_OVERRUN", "STATUS_INVALID_CRUNTIME_PARAMETER",
    "STATUS_ASSERTION_FAILURE", "STATUS_INVALID_IMAGE_HASH", "STATUS_FAIL_FAST_EXCEPTION",
)
#: HRESULTs: every DXGI_ERROR_* (what D3D11/D3D12 and the GPU drivers return: the device
#: removed/hung/reset family first of all) and the generic out-of-memory / failure codes
HRESULT_PREFIXES = ("DXGI_ERROR_",)
HRESULT_KEEP = ("E_OUTOFMEMORY", "E_FAIL", "E_INVALIDARG")


def _enum(text: str, start: str, end: str, name_re: str) -> Dict[int, str]:
    """``NAME = number`` pairs of the C enum that begins at ``start`` and ends at ``end``."""
    i = text.index(start)
    body = text[i:text.index(end, i)]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out: Dict[int, str] = {}
    for m in re.finditer(rf"^\s*({name_re})\s*=\s*(-?(?:0x[0-9A-Fa-f]+|\d+))\s*,?", body, re.M):
        value = int(m.group(2), 0)
        out.setdefault(value, m.group(1))  # an alias (a later name for the same value) is not kept
    return out


def _defines(text: str, names_re: str) -> Dict[str, int]:
    return {m.group(1): int(m.group(2), 16) for m in re.finditer(
        rf"^#define\s+({names_re})\s+(?:\(\(NTSTATUS\)|_HRESULT_TYPEDEF_\()\s*(0x[0-9A-Fa-f]{{8}})", text, re.M)}


def _lib(path: Path, preload: Tuple[Path, ...] = ()) -> Optional[ctypes.CDLL]:
    try:
        for p in preload:
            ctypes.CDLL(str(p), mode=ctypes.RTLD_GLOBAL)
        return ctypes.CDLL(str(path))
    except OSError as exc:
        print(f"  {path.name}: not loadable ({exc}); texts left out", file=sys.stderr)
        return None


def _texts(lib: Optional[ctypes.CDLL], func: str, values) -> Dict[int, str]:
    if lib is None:
        return {}
    f = getattr(lib, func)
    f.restype = ctypes.c_char_p
    f.argtypes = [ctypes.c_int]
    return {v: f(v).decode("utf-8", "replace") for v in values}


def _find(tree: Path, rel: str) -> Path:
    found = sorted(tree.rglob(rel))
    if not found:
        raise SystemExit(f"{rel} not found under {tree}")
    return found[0]


def _unpack(src: Path, dest: Path) -> Dict[str, str]:
    """Unpack the wheels and .debs under ``src`` into ``dest``; their versions by package."""
    versions: Dict[str, str] = {}
    for whl in sorted(src.glob("*.whl")):
        name, version = whl.name.split("-")[:2]
        versions[name.replace("_", "-")] = version
        with zipfile.ZipFile(whl) as z:
            for member in z.namelist():
                if member.endswith((".h", ".py")) or re.search(
                        r"lib(?:cudart|nccl|cublas|cublasLt|cudnn_graph)\.so\.\d+$", member):
                    z.extract(member, dest)
    for deb in sorted(src.glob("*.deb")):
        name, version = deb.name.split("_")[:2]
        versions[name] = version.replace("%3a", ":")
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
    return versions


def build(tree: Path, versions: Dict[str, str]) -> dict:
    ns: Dict[str, Dict[str, List[str]]] = {}
    sources: Dict[str, dict] = {}

    def put(space: str, values: Dict[int, str], texts: Dict[int, str], key=str) -> None:
        ns[space] = {key(v): ([name, texts[v]] if texts.get(v) and texts[v] != name else [name])
                     for v, name in sorted(values.items())}

    inc = _find(tree, "cuda_runtime/include/driver_types.h").parent
    lib = inc.parent / "lib"
    cudart = _lib(lib / "libcudart.so.12")
    values = _enum((inc / "driver_types.h").read_text(), "enum __device_builtin__ cudaError", "};", r"cuda\w+")
    put("cudaError", values, _texts(cudart, "cudaGetErrorString", values))
    sources["cudaError"] = {"package": "nvidia-cuda-runtime-cu12", "version": versions["nvidia-cuda-runtime-cu12"],
                            "file": "nvidia/cuda_runtime/include/driver_types.h (enum cudaError)",
                            "texts": "cudaGetErrorString of nvidia/cuda_runtime/lib/libcudart.so.12" if cudart else ""}
    values = _enum((inc / "cuda.h").read_text(), "typedef enum cudaError_enum", "} CUresult;", r"CUDA_\w+")
    put("CUresult", values, {})
    sources["CUresult"] = {"package": "nvidia-cuda-runtime-cu12", "version": versions["nvidia-cuda-runtime-cu12"],
                           "file": "nvidia/cuda_runtime/include/cuda.h (enum cudaError_enum / CUresult)",
                           "texts": "none: cuGetErrorString is in the driver's libcuda.so, which no wheel or Debian main package ships"}

    nccl_h = _find(tree, "nccl/include/nccl.h")
    values = _enum(nccl_h.read_text().replace("typedef enum { ncclSuccess", "typedef enum {\n ncclSuccess"),
                   "typedef enum {\n ncclSuccess", "} ncclResult_t;", r"nccl\w+")
    values = {v: n for v, n in values.items() if n != "ncclNumResults"}
    libnccl = _lib(nccl_h.parent.parent / "lib" / "libnccl.so.2")
    put("ncclResult", values, _texts(libnccl, "ncclGetErrorString", values))
    sources["ncclResult"] = {"package": "nvidia-nccl-cu12", "version": versions["nvidia-nccl-cu12"],
                             "file": "nvidia/nccl/include/nccl.h (ncclResult_t)",
                             "texts": "ncclGetErrorString of nvidia/nccl/lib/libnccl.so.2" if libnccl else ""}

    cublas_h = _find(tree, "cublas/include/cublas_api.h")
    values = _enum(cublas_h.read_text(), "typedef enum {\n  CUBLAS_STATUS_SUCCESS", "} cublasStatus_t;", r"CUBLAS_STATUS_\w+")
    clib = cublas_h.parent.parent / "lib"
    libcublas = _lib(clib / "libcublas.so.12", (lib / "libcudart.so.12", clib / "libcublasLt.so.12"))
    put("cublasStatus", values, _texts(libcublas, "cublasGetStatusString", values))
    sources["cublasStatus"] = {"package": "nvidia-cublas-cu12", "version": versions["nvidia-cublas-cu12"],
                               "file": "nvidia/cublas/include/cublas_api.h (cublasStatus_t)",
                               "texts": "cublasGetStatusString of nvidia/cublas/lib/libcublas.so.12" if libcublas else ""}

    cudnn_h = _find(tree, "cudnn/include/cudnn_graph.h")
    values = _enum(cudnn_h.read_text(), "typedef enum {\n    CUDNN_STATUS_SUCCESS", "} cudnnStatus_t;", r"CUDNN_STATUS_\w+")
    put("cudnnStatus", values, {})
    sources["cudnnStatus"] = {"package": "nvidia-cudnn-cu12", "version": versions["nvidia-cudnn-cu12"],
                              "file": "nvidia/cudnn/include/cudnn_graph.h (cudnnStatus_t, cuDNN 9 numbering; cuDNN 8's smaller numbers are not read)",
                              "texts": "none: cudnnGetErrorString returns the name"}

    pynvml = _find(tree, "pynvml.py")
    values = {int(m.group(2)): m.group(1) for m in re.finditer(
        r"^(NVML_(?:SUCCESS|ERROR_\w+))\s*=\s*(\d+)\s*$", pynvml.read_text(), re.M)}
    put("nvmlReturn", values, {})
    sources["nvmlReturn"] = {"package": "nvidia-ml-py", "version": versions["nvidia-ml-py"],
                             "file": "pynvml.py (NVML_SUCCESS, NVML_ERROR_*: nvmlReturn_t)", "texts": "none"}

    ntstatus = _find(tree, "mingw-w64/include/ntstatus.h").read_text()
    found = _defines(ntstatus, "|".join(NTSTATUS_KEEP))
    missing = set(NTSTATUS_KEEP) - set(found)
    if missing:
        raise SystemExit(f"ntstatus.h lacks {sorted(missing)}")
    put("NTSTATUS", {v: n for n, v in found.items()}, {}, key=lambda v: f"0x{v:08X}")
    winerror = _find(tree, "mingw-w64/include/winerror.h").read_text()
    found = _defines(winerror, "|".join([*(p + r"\w+" for p in HRESULT_PREFIXES), *HRESULT_KEEP]))
    by_value: Dict[int, str] = {}
    for n, v in found.items():
        by_value.setdefault(v, n)
    put("HRESULT", by_value, {}, key=lambda v: f"0x{v:08X}")
    for space, what in (("NTSTATUS", "ntstatus.h: NTSTATUS_KEEP of scripts/build_status_codes.py"),
                        ("HRESULT", "winerror.h: DXGI_ERROR_*, E_OUTOFMEMORY, E_FAIL, E_INVALIDARG")):
        sources[space] = {"package": "mingw-w64-common (Debian)", "version": versions["mingw-w64-common"],
                          "file": f"/usr/share/mingw-w64/include/{what}", "texts": "none"}

    vk = _find(tree, "include/vulkan/vulkan_core.h").read_text()
    values = _enum(vk, "typedef enum VkResult {", "} VkResult;", r"VK_\w+")
    put("VkResult", {v: n for v, n in values.items() if n != "VK_RESULT_MAX_ENUM"}, {})
    header = re.search(r"#define VK_HEADER_VERSION (\d+)", vk).group(1)
    sources["VkResult"] = {"package": "libvulkan-dev (Debian)", "version": versions["libvulkan-dev"],
                           "file": f"/usr/include/vulkan/vulkan_core.h (VkResult, VK_HEADER_VERSION {header})", "texts": "none"}

    sigs = {s.value: s.name for s in signal.Signals if 1 <= s.value <= 31}
    put("signal", sigs, {v: signal.strsignal(v) or "" for v in sigs})
    sources["signal"] = {"package": f"Python {sys.version.split()[0]} signal module on {sys.platform} x86-64",
                         "version": "glibc strsignal", "file": "signal.Signals 1-31", "texts": "signal.strsignal"}
    return {
        "about": "Numeric status codes and their names (and library texts) for stackpeel.explain.numbers; "
                 "written by scripts/build_status_codes.py, do not edit by hand",
        "sources": sources,
        "namespaces": ns,
    }


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", type=Path, help="a folder holding the wheels and .debs already downloaded")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is not what the sources give")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        src = args.src
        if src is None:
            src = Path(tmp) / "dl"
            src.mkdir()
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(src),
                            *(f"{n}=={v}" for n, v in WHEELS.items())], check=True)
            subprocess.run(["apt-get", "download", *DEBS], cwd=src, check=True)
        tree = Path(tmp) / "tree"
        versions = _unpack(src, tree)
        doc = build(tree, versions)
    text = json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.is_file() else ""
        if current != text:
            print(f"{OUT} is not current", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    counts = {k: len(v) for k, v in doc["namespaces"].items()}
    print(f"wrote {OUT}: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
