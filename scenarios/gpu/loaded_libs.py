#!/usr/bin/env python3
"""GPU scenarios for runtime_libs: which CUDA libraries a real process loads, and a shadowed
or second copy from another CUDA installation named as the root cause of what it breaks.

Run from the repository root on the GPU machine (scenarios/gpu/loaded_libs.sh wraps it):

    OUT=/some/dir python3 scenarios/gpu/loaded_libs.py [--python /path/to/python]

Optional: the wheel ``nvidia-cuda-runtime-cu12`` (about 0.9 MB) under ``.whl/`` for the
second-CUDA-runtime scenarios, and any ``nvidia-nccl-cu*`` wheel there for the NCCL shadow
when the machine has no second libnccl of its own.

Scenarios (each writes its files under $OUT/<name>/ and one line to $OUT/summary.txt):

  s0_real_stack     stackpeel's list against /proc/<pid>/maps of a real torch process that
                    ran a cuBLAS matmul and a cuDNN convolution
  s1_toolkit_llp    LD_LIBRARY_PATH=/usr/local/cuda/lib64 (the CUDA toolkit beside torch's
                    pip nvidia-* libraries): the workload's result, the shadows named
  s2_cu12_missing   a real extension linked against libcudart.so.12 (from the cu12 wheel,
                    laid out as /usr/local/cuda-12.4/lib64, outside the loader's path): 'cannot open shared object file'
                    named as library-missing with the copy on disk
  s3_cu12_twice     the same extension with the cu12 runtime on LD_LIBRARY_PATH beside
                    torch's CUDA 13 runtime: library-loaded-twice with both paths
  s4a/s4b_nccl_preload  another installation's libnccl.so.2 (the machine's own, then an older
                    one from a carried nvidia-nccl-cu12 wheel under .whl-nccl/) preloaded ahead of
                    torch's: a one-rank NCCL all-reduce; the copy named, and where the workload
                    fails, `stackpeel check` names runtime_libs.loaded as the root cause

A scenario whose needs are missing is reported as SKIP with the reason, never as PASS.
Exit status 0 unless a scenario FAILED.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "src"))

from stackpeel.checks.base import Context  # noqa: E402
from stackpeel.checks.runtime_libs import LoadedLibraries  # noqa: E402
from stackpeel.runner import run_probe  # noqa: E402

HOST = {"pkg_manager": "apt", "is_root": os.geteuid() == 0, "conda_prefix": None}
STACK = re.compile(r"/(libcuda|libcudart|libcublasLt|libcublas|libcudnn\w*|libnccl|libnvrtc|libnvJitLink|"
                   r"libcusparse\w*|libcufft|libcurand|libcusolver|libstdc\+\+|libgcc_s|libgomp)[-.]")

WORKLOAD = r"""
import os, sys, json
out = {}
import torch
out["torch"] = torch.__version__
out["cuda"] = torch.version.cuda
out["available"] = torch.cuda.is_available()
x = torch.randn(256, 256, device="cuda")
out["matmul"] = float((x @ x).sum().item())
conv = torch.nn.Conv2d(3, 8, 3).cuda()
out["conv"] = float(conv(torch.randn(1, 3, 32, 32, device="cuda")).sum().item())
out["cudnn"] = torch.backends.cudnn.version()
out["nccl"] = list(torch.cuda.nccl.version())
if os.environ.get("LOADED_LIBS_ALLREDUCE"):
    import torch.distributed as dist
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29517", rank=0, world_size=1)
    t = torch.ones(4, device="cuda")
    dist.all_reduce(t)
    out["allreduce"] = t.tolist()
    dist.destroy_process_group()
if os.environ.get("LOADED_LIBS_EXTRA"):
    mod = __import__(os.environ["LOADED_LIBS_EXTRA"])
    out["extra_runtime_version"] = mod.runtime_version()
print("RESULT " + json.dumps(out), flush=True)
"""

CU12_EXT = r"""
#include <Python.h>
int cudaRuntimeGetVersion(int *v);
static PyObject *rt(PyObject *self, PyObject *args) { int v = 0; cudaRuntimeGetVersion(&v); return PyLong_FromLong(v); }
static PyMethodDef M[] = {{"runtime_version", rt, METH_NOARGS, ""}, {0}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "cu12_ext", 0, -1, M};
PyMODINIT_FUNC PyInit_cu12_ext(void) { return PyModule_Create(&D); }
"""


class Run:
    def __init__(self, out: Path, python: str):
        self.out, self.python = out, python
        self.gpu = False
        self.wheels = REPO / ".whl"
        self.lines = []
        self.failed = False

    def record(self, name: str, verdict: str, detail: str):
        line = f"{verdict:<5} {name}: {detail}"
        print(line, flush=True)
        self.lines.append(line)
        if verdict == "FAIL":
            self.failed = True
        (self.out / "summary.txt").write_text("\n".join(self.lines) + "\n")


def env_with(**changes):
    env = dict(os.environ)
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def probe(python, env, imports=None, budget=180):
    opts = {"budget_s": budget}
    if imports:
        opts["imports"] = imports
    ans = run_probe(python, "runtime_libs.loaded_libs", {"options": opts, "deps": {}}, timeout=budget + 30, env=env)
    if ans.failure:
        return None, f"probe failed: {ans.failure.reason}: {ans.failure.detail}"
    verdict = LoadedLibraries().evaluate(ans.facts, Context(HOST, {"python": python}, {}))
    return (ans.facts, verdict), None


def save_check(d: Path, facts, verdict):
    d.mkdir(parents=True, exist_ok=True)
    (d / "facts.json").write_text(json.dumps(facts, indent=1, default=repr))
    (d / "verdict.json").write_text(json.dumps({
        "status": verdict.status.value, "summary": verdict.summary,
        "findings": [f.to_dict() for f in verdict.findings]}, indent=1))
    text = [f"status: {verdict.status.value}", f"summary: {verdict.summary}", ""]
    for f in verdict.findings:
        text += [f"[{f.code}] ({f.severity.value}) {f.message}", f"  fix: {f.remedy.text}"]
        text += [f"  $ {c.command}" for c in f.remedy.commands]
        text.append("")
    (d / "check.txt").write_text("\n".join(text))


def workload(python, env, d: Path, timeout=240):
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run([python, "-c", WORKLOAD], env=env, capture_output=True, text=True, timeout=timeout)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as exc:
        rc, text = None, f"timed out after {timeout}s\n{exc.stdout or ''}{exc.stderr or ''}"
    (d / "workload.log").write_text(text)
    m = re.search(r"^RESULT (.*)$", text, re.M)
    return rc, (json.loads(m.group(1)) if m else None), text, time.monotonic() - t0


def explain(python, env, d: Path):
    """stackpeel explain on the workload's log, live in the same environment."""
    p = subprocess.run([python, "-m", "stackpeel", "explain", "--python", python, "--format", "json",
                        str(d / "workload.log")], env=dict(env, PYTHONPATH=str(REPO / "src")),
                       capture_output=True, text=True, timeout=300)
    (d / "explain.json").write_text(p.stdout + p.stderr)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


def maps_of_real_process(python, env, d: Path):
    code = ("import sys, torch\nok = torch.cuda.is_available()\nif ok:\n"
            "    x = torch.randn(64, 64, device='cuda'); (x @ x).sum().item()\n"
            "    torch.nn.Conv2d(3, 4, 3).cuda()(torch.randn(1, 3, 8, 8, device='cuda')).sum().item()\n"
            "print('ready', ok, flush=True)\nsys.stdin.read()\n")
    p = subprocess.Popen([python, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline().split()
        maps = set()
        with open(f"/proc/{p.pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/") and ".so" in os.path.basename(parts[5].strip()):
                    maps.add(parts[5].strip())
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    (d / "reference_maps.txt").write_text("\n".join(sorted(maps)) + "\n")
    return maps, (len(first) > 1 and first[1] == "True")


def s0(run: Run, python):
    d = run.out / "s0_real_stack"
    d.mkdir(parents=True, exist_ok=True)
    got, err = probe(python, env_with())
    if err:
        return run.record("s0_real_stack", "FAIL", err)
    facts, verdict = got
    save_check(d, facts, verdict)
    ref, gpu = maps_of_real_process(python, env_with(), d)
    mine = {r["path"] for r in facts["loaded"]} | set(facts["others"])
    ref_stack = {p for p in ref if STACK.search(p)}
    mine_stack = {p for p in mine if STACK.search(p)}
    only_ref, only_mine = sorted(ref_stack - mine_stack), sorted(mine_stack - ref_stack)
    (d / "comparison.json").write_text(json.dumps({"both": sorted(ref_stack & mine_stack), "only_reference": only_ref,
                                                   "only_probe": only_mine}, indent=1))
    libs = ", ".join(f"{r['stem']} {r.get('version') or '?'} [{(r.get('owner') or {}).get('name') or 'no package'}]"
                     for r in facts["loaded"])
    fams = {r["family"] for r in facts["loaded"]}
    want = {"libcuda", "libcudart", "libcublas", "libcudnn", "libnccl"} if gpu else {"libgomp", "libstdc++"}
    missing = want - fams
    # the reference ran a matmul and a convolution: cuDNN's sub-libraries load lazily there
    lazy = [p for p in only_ref if re.search(r"libcudnn_|libcublasLt|libnvrtc|libnvJitLink|libcusparse", p)]
    run.gpu = gpu
    verdict_word = "PASS" if not missing and set(only_ref) <= set(lazy) else "FAIL"
    run.record("s0_real_stack", verdict_word,
               f"gpu={gpu}; loaded: {libs}; families missing: {sorted(missing) or 'none'}; only in the real process "
               f"(lazy loads after a matmul/conv: {len(lazy)}): {only_ref or 'none'}; only in the probe: "
               f"{only_mine or 'none'}")


def s1(run: Run, python):
    name = "s1_toolkit_llp"
    if not run.gpu:
        return run.record(name, "SKIP", "torch sees no GPU here: the workload needs one")
    libdir = next((d for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib")
                   if os.path.isdir(d)), None)
    if not libdir:
        return run.record(name, "SKIP", "no CUDA toolkit under /usr/local/cuda")
    d = run.out / name
    env = env_with(LD_LIBRARY_PATH=libdir + (":" + os.environ["LD_LIBRARY_PATH"]
                                               if os.environ.get("LD_LIBRARY_PATH") else ""))
    rc, res, text, took = workload(python, env, d)
    got, err = probe(python, env)
    if err:
        return run.record(name, "FAIL", err)
    facts, verdict = got
    save_check(d, facts, verdict)
    from_toolkit = [r for r in facts["loaded"] if os.path.realpath(libdir) in r["realpath"]
                    or r["realpath"].startswith("/usr/local/cuda")]
    shadows = [f for f in verdict.findings if f.code in ("library-shadowed", "library-version-mismatch",
                                                          "library-loaded-twice")]
    # a toolkit library counts when torch's packages ship their own copy of it (the probe found one)
    shadowing = [r for r in from_toolkit if r.get("expected")]
    named = [r["stem"] for r in shadowing if any(r["realpath"] in f.message for f in shadows)]
    detail = (f"workload rc={rc} ({'ok' if res else 'failed'}) in {took:.0f}s; loaded from the toolkit: "
              f"{[r['realpath'] for r in from_toolkit] or 'nothing'}; findings: "
              f"{[f.code for f in verdict.findings] or 'none'}")
    if rc != 0:
        ex = explain(python, env, d) or {}
        codes = [c["code"] for c in ex.get("candidates", [])]
        detail += f"; explain candidates: {codes}"
        (d / "failure_tail.txt").write_text(text[-4000:])
        ok = any(c in ("library-shadowed", "library-version-mismatch", "library-missing", "library-loaded-twice")
                 for c in codes) or bool(shadows)
        return run.record(name, "PASS" if ok else "FAIL", detail)
    if not shadowing:
        return run.record(name, "INFO", detail + " (nothing of the toolkit replaced a copy torch's packages ship)")
    return run.record(name, "PASS" if len(named) == len(shadowing) else "FAIL",
                      detail + f"; shadowing torch's own copies: {[r['stem'] for r in shadowing]}; named: {named}")


def _cu12(run: Run, tmp: Path):
    wheels = sorted(glob.glob(str(run.wheels / "nvidia_cuda_runtime_cu12-*.whl")) +
                    glob.glob(str(REPO / ".whl-cu12" / "nvidia_cuda_runtime_cu12-*.whl")))
    if not wheels:
        return None, f"no nvidia_cuda_runtime_cu12 wheel in {run.wheels}"
    site = tmp / "cu12" / "site-packages"
    with zipfile.ZipFile(wheels[-1]) as z:
        z.extractall(site)
    lib = next(iter(glob.glob(str(site / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12*"))), None)
    if not lib:
        return None, f"no libcudart.so.12 in {wheels[-1]}"
    return (Path(wheels[-1]).name, site, Path(lib).parent), None


def _build_ext(python, libdir: Path, mods: Path):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if not gcc:
        return "no C compiler"
    inc = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                         capture_output=True, text=True).stdout.strip()
    suffix = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                            capture_output=True, text=True).stdout.strip()
    mods.mkdir(parents=True, exist_ok=True)
    (mods / "cu12_ext.c").write_text(CU12_EXT)
    p = subprocess.run([gcc, "-shared", "-fPIC", f"-I{inc}", "cu12_ext.c", f"-L{libdir}", "-l:libcudart.so.12",
                        "-o", f"cu12_ext{suffix}"], cwd=mods, capture_output=True, text=True)
    return None if p.returncode == 0 else f"build failed: {p.stderr[-500:]}"


#: installation directories the scenarios made outside their temporary directory
CREATED: list = []


def _other_installation(name: str, tmp: Path) -> Path:
    """A directory laid out like another CUDA installation on the machine (/usr/local/<name>/lib64
    where we may write there, as the GPU machines' root may; a temporary one otherwise)."""
    base = Path(os.environ.get("LOADED_LIBS_INSTALL_ROOT", "/usr/local")) / name
    try:
        if not base.exists():
            CREATED.append(base)  # removed when the scenarios end
        (base / "lib64").mkdir(parents=True, exist_ok=True)
        return base / "lib64"
    except OSError:
        (tmp / name / "lib64").mkdir(parents=True, exist_ok=True)
        return tmp / name / "lib64"


def s2_s3(run: Run, python, tmp: Path):
    cu12, why = _cu12(run, tmp)
    if cu12 is None:
        run.record("s2_cu12_missing", "SKIP", why)
        return run.record("s3_cu12_twice", "SKIP", why)
    wheel, site, _ = cu12
    # the CUDA 12 runtime as a second CUDA installation, not as a site-packages folder: torch's own
    # preloading searches sys.path for nvidia/cuda_runtime/lib and would load it itself (the first
    # H200 run of this scenario put it on PYTHONPATH and torch did exactly that)
    libdir = _other_installation("cuda-12.4", tmp)
    for f in glob.glob(str(site / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12*")):
        shutil.copy(f, libdir / os.path.basename(f))
    mods = tmp / "mods"
    why = _build_ext(python, libdir, mods)
    if why:
        run.record("s2_cu12_missing", "SKIP", why)
        return run.record("s3_cu12_twice", "SKIP", why)
    # s2: the runtime is on disk in another installation but not on the loader's path
    d = run.out / "s2_cu12_missing"
    env = env_with(PYTHONPATH=f"{mods}", LOADED_LIBS_EXTRA="cu12_ext")
    rc, res, text, _ = workload(python, env, d)
    got, err = probe(python, env, imports=["torch", "cu12_ext"])
    if err:
        run.record("s2_cu12_missing", "FAIL", err)
    else:
        facts, verdict = got
        save_check(d, facts, verdict)
        f = next((f for f in verdict.findings if f.code == "library-missing"), None)
        ok = rc != 0 and f is not None and "libcudart.so.12" in f.message and str(libdir) in f.message
        run.record("s2_cu12_missing", "PASS" if ok else "FAIL",
                   f"{wheel} unpacked as {libdir}; workload rc={rc}; "
                   f"finding: {f.message if f else [x.code for x in verdict.findings]}")
    # s3: with the cu12 runtime on LD_LIBRARY_PATH the extension loads beside torch's CUDA 13 runtime
    if not run.gpu:
        return run.record("s3_cu12_twice", "SKIP", "torch sees no GPU here (a CPU torch loads no CUDA runtime)")
    d = run.out / "s3_cu12_twice"
    env = env_with(PYTHONPATH=f"{mods}", LD_LIBRARY_PATH=str(libdir), LOADED_LIBS_EXTRA="cu12_ext")
    rc, res, text, _ = workload(python, env, d)
    got, err = probe(python, env, imports=["torch", "cu12_ext"])
    if err:
        return run.record("s3_cu12_twice", "FAIL", err)
    facts, verdict = got
    save_check(d, facts, verdict)
    f = next((f for f in verdict.findings if f.code == "library-loaded-twice" and "libcudart" in f.message), None)
    torch_rt = next((r["realpath"] for r in facts["loaded"] if r["family"] == "libcudart"
                     and str(libdir) not in r["realpath"]), None)
    ok = f is not None and str(libdir) in f.message and (torch_rt is None or torch_rt in f.message)
    run.record("s3_cu12_twice", "PASS" if ok else "FAIL",
               f"workload rc={rc} result={res}; finding: {f.message if f else [x.code for x in verdict.findings]}")


def full_check(python, env, d: Path):
    """The whole `stackpeel check` in that environment: which root cause heads the report."""
    p = subprocess.run([python, "-m", "stackpeel", "check", "--python", python, "--fresh", "--format", "json"],
                       env=dict(env, PYTHONPATH=str(REPO / "src")), capture_output=True, text=True, timeout=400)
    (d / "check.json").write_text(p.stdout)
    (d / "check.stderr").write_text(p.stderr)
    try:
        report = json.loads(p.stdout)
    except ValueError:
        return None, []
    roots = [(b["check"], b["codes"], [s.get("check") if isinstance(s, dict) else s for s in b.get("symptoms", [])])
             for b in report["diagnosis"]["blocking"]]
    return report, roots


def _nccl_copies(run: Run, torch_nccl: str, facts, tmp: Path):
    """(label, path) of libnccl copies other than torch's: the machine's own, then carried wheels
    (.whl-nccl/*.whl, or its parts part00.. reassembled), each laid out as its own installation."""
    out = []
    for c in facts["copies"].get("libnccl", []):
        if c["realpath"] != torch_nccl:
            out.append(("machine", c["realpath"]))
    deadline = time.monotonic() + 20  # a bounded walk: big images hold many files
    for root in ("/usr/lib", "/usr/local", "/opt"):
        for dirpath, dirnames, filenames in os.walk(root):
            if time.monotonic() > deadline:
                break
            for fn in filenames:
                if fn.startswith("libnccl.so.2"):
                    real = os.path.realpath(os.path.join(dirpath, fn))
                    if real != torch_nccl and all(real != p for _, p in out) and os.path.isfile(real):
                        out.append(("machine", real))
    carried = REPO / ".whl-nccl"
    wheels = sorted(glob.glob(str(carried / "nvidia_nccl_cu*.whl"))) + sorted(glob.glob(str(run.wheels / "nvidia_nccl_cu*.whl")))
    parts = sorted(glob.glob(str(carried / "part*")))
    if not wheels and parts:
        whole = tmp / "nvidia_nccl_cu12-2.21.5-py3-none-manylinux2014_x86_64.whl"
        with open(whole, "wb") as w:
            for part in parts:
                w.write(Path(part).read_bytes())
        wheels = [str(whole)]
    for wheel in wheels:
        version = Path(wheel).name.split("-")[1]
        libdir = _other_installation(f"nccl-{version}", tmp)
        try:
            with zipfile.ZipFile(wheel) as z:
                name = next(n for n in z.namelist() if n.endswith("/libnccl.so.2"))
                (libdir / "libnccl.so.2").write_bytes(z.read(name))
            out.append((f"wheel {Path(wheel).name}", str(libdir / "libnccl.so.2")))
        except (zipfile.BadZipFile, StopIteration, OSError) as exc:
            out.append((f"wheel {Path(wheel).name} unusable: {exc}", ""))
    return out


def s4(run: Run, python, tmp: Path):
    """Another installation's libnccl preloaded ahead of torch's (LD_PRELOAD: torch loads its NCCL
    by absolute path, so LD_LIBRARY_PATH alone cannot shadow it, as the first H200 run showed)."""
    got, err = probe(python, env_with())
    if err:
        return run.record("s4_nccl", "FAIL", err)
    facts, _ = got
    torch_nccl = next((r["realpath"] for r in facts["loaded"] if r["family"] == "libnccl"), None)
    if not torch_nccl:
        return run.record("s4_nccl", "SKIP", "torch loads no libnccl here")
    copies = _nccl_copies(run, torch_nccl, facts, tmp)
    if not copies:
        return run.record("s4_nccl", "SKIP", f"no libnccl.so.2 on this machine besides torch's {torch_nccl}; carry "
                                             "a nvidia-nccl-cu12 wheel in .whl-nccl/ to run it")
    for i, (label, other) in enumerate(copies[:2]):
        name = f"s4{'ab'[i]}_nccl_preload"
        if not other:
            run.record(name, "SKIP", label)
            continue
        d = run.out / name
        env = env_with(LD_PRELOAD=other, LOADED_LIBS_ALLREDUCE="1")
        rc, res, text, took = workload(python, env, d)
        got, err = probe(python, env)
        if err:
            run.record(name, "FAIL", err)
            continue
        pf, verdict = got
        save_check(d, pf, verdict)
        named = [f for f in verdict.findings if other in f.message]
        report, roots = full_check(python, env, d)
        first = roots[0] if roots else None
        detail = (f"LD_PRELOAD={other} ({label}); workload rc={rc} result={res}; runtime_libs findings naming it: "
                  f"{[(f.code, f.severity.value) for f in named]}; check's root causes: {roots}")
        if rc != 0:
            ex = explain(python, env, d) or {}
            detail += f"; explain (live) ranks: {[c['code'] for c in ex.get('candidates', [])][:4]}"
            ok = bool(named) and first is not None and first[0] == "runtime_libs.loaded"
        else:
            # the workload survived: naming the copy is all that is asked, and no blocking cause is invented
            ok = bool(named)
            detail += " (the workload ran: the copy is named, nothing failed for it to explain)"
        run.record(name, "PASS" if ok else "FAIL", detail)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=shutil.which("python3") or sys.executable)
    ap.add_argument("--out", default=os.environ.get("OUT") or tempfile.mkdtemp(prefix="loaded-libs-"))
    ap.add_argument("--wheels", default=str(REPO / ".whl"), help="folder of carried wheels (default .whl/)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run = Run(out, args.python)
    run.wheels = Path(args.wheels)
    info = subprocess.run(["sh", "-c", f"nvidia-smi -L; {args.python} -m pip list 2>/dev/null | grep -i -E "
                           "'^(torch|triton|nvidia-|cupy|jax)'; ls -l /usr/local/ | grep -i cuda; "
                           "ls /usr/local/cuda/lib64 2>/dev/null | grep -E 'cudart|cublas|nccl|cudnn|nvJitLink|nvrtc'"],
                          capture_output=True, text=True, timeout=120)
    (out / "machine.txt").write_text(info.stdout + info.stderr)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="loaded-libs-") as tmp:
        for step in (lambda: s0(run, args.python), lambda: s1(run, args.python),
                     lambda: s2_s3(run, args.python, Path(tmp)), lambda: s4(run, args.python, Path(tmp))):
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - one scenario's bug must not hide the others
                run.record(getattr(step, "__name__", "scenario"), "FAIL", f"{type(exc).__name__}: {exc}")
    for made in CREATED:
        shutil.rmtree(made, ignore_errors=True)
    run.record("total", "INFO", f"{time.monotonic() - t0:.0f} s; results in {out}")
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
