"""What the versions, GPUs and settings a log prints say about its failure (issue 8 items 3 and 5).

The scanner reads a log's facts (:class:`stackpeel.combinations.LogFacts`: versions from pip
lists, collect_env, conda lists, nvidia-smi's table, ``__version__`` prints, image tags; the
CUDA a torch build names; GPU names as compute capabilities; torch's arch list; "Is CUDA
available"; WSL/Colab/Kubernetes/Slurm/container context). :func:`evaluate` turns them into
findings, each with the codes of the log's evidence it accounts for and an honest confidence:

* **known-bad combinations** (``knowledge/combinations.toml``), evaluated by the same matcher
  ``stackpeel check`` uses (:func:`stackpeel.combinations.match_combinations`, ``partial=True``:
  a log prints only some versions);
* **state facts** a log proves on its own: a CPU-only torch next to an NVIDIA GPU or a CUDA
  failure; a driver whose CUDA major is below the one the torch build names; a GPU whose
  major capability no ``sm_`` of the printed arch list has; "Is CUDA available: False" with a
  GPU listed.

Confidence: ``high`` when the log's evidence holds the finding's own code or one of the
symptoms it produces (or "Is CUDA available: False" for a state that makes CUDA unusable);
``medium`` when only the facts hold and the log fails in the layer the finding breaks (an
evidenced code of that layer); ``context`` when the log shows no failure there: reported as a
note, never as a candidate. A partial combination match (a GPU, driver, CUDA or Python key the
log does not print) counts only when more than half of its condition was observed, and is one
step lower; an ``info`` entry is context only and a ``degraded``
one at most medium. Pure: reads only its arguments and the bundled tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from .. import combinations as _combinations
from ..knowledge import render_prose

#: the layer a distribution's failures show in (for combinations that name no code they explain)
DIST_LAYER = {
    "torch": "torch", "numpy": "torch", "triton": "triton", "pytorch-triton": "triton", "transformers": "kernels",
    "fla-core": "kernels", "flash-linear-attention": "kernels", "causal-conv1d": "kernels", "mamba-ssm": "kernels",
    "flash-attn": "kernels", "xformers": "kernels", "bitsandbytes": "kernels", "torchao": "kernels",
    "tilelang": "kernels", "vllm": "kernels", "tensorrt": "runtime_libs",
}
SPECIAL_LAYER = {"gpu_cc": "cuda", "driver": "cuda", "cuda": "torch", "cuda_driver": "cuda", "python": "torch"}
#: layers a CUDA failure shows in
CUDA_LAYERS = frozenset({"gpu", "cuda", "runtime_libs", "torch", "triton", "kernels", "multi_gpu"})
CONFIDENCES = ("high", "medium", "context")
#: symptoms a cause produces beyond the codes whose ``caused_by`` names it: a CUDA runtime the
#: driver cannot run and a torch without CUDA both leave torch.cuda.is_available() False
#: (torch/cuda/__init__.py), a driver too old fails cuInit / cudaGetDeviceCount; a GPU outside the
#: arch list fails its first kernel with a bare CUDA error ("no kernel image is available")
EXTRA_SYMPTOMS = {
    "torch-cpu-only-build": ("torch-cuda-unavailable",),
    "driver-too-old-for-torch": ("torch-cuda-unavailable", "cuda-init-failed", "driver-too-old-for-build"),
    "torch-arch-not-supported": ("cuda-error-unclassified", "extension-arch-missing"),
}


@dataclass(frozen=True)
class FactFinding:
    """One combination or state fact that holds for the log's facts."""

    code: str
    #: "combination" or "facts"
    basis: str
    #: "combination:<id>" or "state:<rule>"
    rule: str
    confidence: str
    #: (line, text, label) of the lines that state the facts it rests on
    evidence: Tuple[Tuple[int, str, str], ...]
    #: codes evidenced in the log that it accounts for
    explains: Tuple[str, ...]
    #: one sentence: the observed values, what breaks, the source
    explanation: str
    fix: str = ""
    links: Tuple[str, ...] = ()
    #: a short form of the explanation (for a note)
    summary: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"code": self.code, "basis": self.basis, "rule": self.rule, "confidence": self.confidence,
                "evidence": [{"line": n, "text": t, "label": lb} for n, t, lb in self.evidence],
                "explains": list(self.explains), "explanation": self.explanation}


def _lower(conf: str, steps: int = 1) -> str:
    return CONFIDENCES[min(len(CONFIDENCES) - 1, CONFIDENCES.index(conf) + steps)]


def _evidence(facts: _combinations.LogFacts, keys: Sequence[str], label: str) -> Tuple[Tuple[int, str, str], ...]:
    out: Dict[int, Tuple[int, str, str]] = {}
    for key in keys:
        where = facts.lines.get("gpu" if key == "gpu_cc" else key)
        if where and where[0] and where[0] not in out:
            out[where[0]] = (where[0], where[1], f"{label} [{key}]")
    return tuple(out[n] for n in sorted(out))


def _symptoms(code: str, catalogue: Mapping[str, Any]) -> Set[str]:
    spec = catalogue.get(code)
    return {code, *EXTRA_SYMPTOMS.get(code, ()), *(spec.causes if spec is not None else ())}


def _layers(codes: Sequence[str], catalogue: Mapping[str, Any]) -> Set[str]:
    out: Set[str] = set()
    for c in codes:
        spec = catalogue.get(c)
        if spec is None:
            continue
        if spec.layer != "config":
            out.add(spec.layer)
        for d in spec.causes:
            if d in catalogue:
                out.add(catalogue[d].layer)
    return out


#: the ``evidenced`` key of a log that fails where nothing places the failure (:func:`evaluate`)
UNPLACED = "<unplaced failure>"


def _grade(own: Set[str], layers: Set[str], evidenced: Mapping[str, Tuple[str, str]]) -> Tuple[str, Tuple[str, ...]]:
    """(confidence, the evidenced codes accounted for). A guess from words (kind "guess") tells
    only which layer failed: it never makes a finding sure. A failure nothing places (no line,
    clue or word says which layer: :data:`UNPLACED`) may be in any layer: a finding that wholly
    holds is then the likeliest cause on offer, at medium confidence."""
    hit = tuple(c for c, (kind, _) in evidenced.items() if c in own and kind != "guess")
    if hit:
        return "high", hit
    if UNPLACED in evidenced or any(layer in layers for _, layer in evidenced.values()):
        return "medium", ()
    return "context", ()


def evaluate(facts: _combinations.LogFacts, evidenced: Mapping[str, Tuple[str, str]],
             catalogue: Mapping[str, Any], entries: Optional[Mapping[str, str]] = None) -> List[FactFinding]:
    """Findings the log's facts support. ``evidenced``: code -> (kind, layer) of the candidates
    the log's lines already give (signatures and clue inferences: kind "root" or "symptom";
    guesses from words: kind "guess"); or, for a log that shows a failure nothing places, the
    single key :data:`UNPLACED`."""
    if not facts:
        return []
    v = facts.versions
    if facts.cuda_available is False and (facts.gpus or v.get("gpu_cc") or v.get("driver") or v.get("cuda_driver")):
        # "Is CUDA available: False" on a machine with a GPU is a failure the log states
        evidenced = {**evidenced,
                     "torch-cuda-unavailable": evidenced.get("torch-cuda-unavailable", ("symptom", "torch"))}
    out: List[FactFinding] = []
    out.extend(_combination_findings(facts, evidenced, catalogue))
    out.extend(_state_findings(facts, evidenced, catalogue, entries or {}))
    # the surest first: the first finding of a code makes its candidate, the others support it
    return sorted(out, key=lambda f: CONFIDENCES.index(f.confidence))


def _combination_findings(facts: _combinations.LogFacts, evidenced: Mapping[str, Tuple[str, str]],
                          catalogue: Mapping[str, Any]) -> List[FactFinding]:
    out = []
    for m in _combinations.match_combinations(facts.versions, partial=True):
        if _combinations.contradicted_pairing(facts, m.observed):
            # a sentence of the log pairs one of these versions with another value of the other
            # (tools41): the combination would hold only across sentences
            continue
        e = m.combination
        code = e.code
        if e.covered_by:  # the live check that covers it reports its own, more specific code
            code = next((c for c in e.explains if c in catalogue and catalogue[c].kind == "root"), e.code)
        if code == "known-bad-combination":
            # a line of the log already names what the combination produces (torchao's "Skipping
            # import of cpp extensions"): that specific code stays, the versions support it. So
            # does a code only the log's words guess (an `undefined symbol` beside a vLLM built
            # for another torch): the combination says which failure it is, the guess that the
            # log shows it; the finding stays as sure as the versions make it (a guess makes
            # nothing sure, _grade)
            code = next((c for c in e.explains if evidenced.get(c, ("guess",))[0] != "guess"),
                        next((c for c in e.explains if c in evidenced), code))
        if code == "known-bad-combination":
            # no line names what it produces: the root cause the entry names (triton-pre-volta:
            # triton-gpu-too-old) says more than "a known-bad combination"
            code = next((c for c in e.explains if c in catalogue and catalogue[c].kind == "root"), code)
        if code not in catalogue:
            continue
        own = {e.code, *(c for x in (code, *e.explains) for c in _symptoms(x, catalogue))}
        layers = _layers([c for c in (code, *e.explains)], catalogue)
        if not layers:
            layers = {DIST_LAYER.get(k) or SPECIAL_LAYER.get(k, "torch") for k in e.when}
        conf, hit = _grade(own, layers, evidenced)
        if m.missing:
            if m.strength <= 0.5:
                # half a condition or less: torch 2.10 alone says nothing about a GPU dropped from
                # its CUDA 12.8 builds, a driver alone nothing about the runtime it is too old for
                continue
            conf = _lower(conf)
            if conf == "context":
                continue  # half a combination and no failure it causes: not worth a note
        if e.severity == "info":
            conf = "context"
        elif e.severity == "degraded" and conf == "high" and not hit:
            conf = "medium"
        params = dict(observed=m.describe(), combination=e.id, breaks=e.breaks, gpu=e.gpu or "this GPU",
                      consequence_text=e.consequence, fix_text=e.fix, source=e.source)
        unknown = f" The log does not print {', '.join(m.missing)}." if m.missing else ""
        text = (f"{m.describe()}: known-bad combination ({e.id}). It breaks {e.breaks}. {e.consequence} "
                f"Source: {e.source}.{unknown}")
        spec = catalogue[e.code]
        fix = render_prose(spec.fix, params) if e.code == code else e.fix
        cmds = e.commands_for("python", facts.versions)
        if cmds:
            fix += " " + " / ".join(f"`{c}`" for c in cmds)
        out.append(FactFinding(code=code, basis="combination", rule=f"combination:{e.id}", confidence=conf,
                               evidence=_evidence(facts, list(m.observed), f"combination:{e.id}"),
                               explains=tuple(c for c in hit if c != code), explanation=text, fix=fix,
                               links=e.links, summary=f"{m.describe()}: {e.id} breaks {e.breaks}"))
    return out


def _entry_code(spec: str, entries: Optional[Mapping[str, str]]) -> str:
    """The code a line of signature entry ``entry:<id>`` stands for in this log ("" when no line
    of it is there, or, for ``entry:<id>=<code>``, when its line stands for another code)."""
    ident, _, want = spec[6:].partition("=")
    got = (entries or {}).get(ident, "")
    return got if not want or got == want else ""


def _major(v: Any) -> Optional[int]:
    p = _combinations.parse_version(v)
    return p.release[0] if p is not None else None


def _state_findings(facts: _combinations.LogFacts, evidenced: Mapping[str, Tuple[str, str]],
                    catalogue: Mapping[str, Any], entries: Optional[Mapping[str, str]] = None) -> List[FactFinding]:
    out: List[FactFinding] = []
    v = facts.versions
    gpu_shown = bool(facts.gpus or v.get("gpu_cc") or v.get("driver") or v.get("cuda_driver"))
    unavailable = facts.cuda_available is False and gpu_shown

    def add(code: str, rule: str, keys: Sequence[str], text: str, layers: Set[str] = CUDA_LAYERS) -> None:
        if code not in catalogue:
            return
        conf, hit = _grade(_symptoms(code, catalogue), set(layers), evidenced)
        spec = catalogue[code]
        out.append(FactFinding(code=code, basis="facts", rule=f"state:{rule}", confidence=conf,
                               evidence=_evidence(facts, keys, f"facts:{rule}"),
                               explains=tuple(c for c in hit if c != code), explanation=text,
                               fix=render_prose(spec.fix, {}), links=spec.links))

    # 1. a CPU-only torch build (torch/version.py: cuda = None; the +cpu wheels) next to an NVIDIA
    #    GPU or a CUDA failure: torch.cuda.is_available() is False whatever the driver
    if facts.torch_cpu and (gpu_shown or any(layer in CUDA_LAYERS for _, layer in evidenced.values())):
        what = f"torch {v.get('torch')}" if v.get("torch") else "this torch"
        seen = (f" while the log shows an NVIDIA GPU or driver ({', '.join(facts.gpus) or v.get('driver') or ''})"
                if gpu_shown else "")
        add("torch-cpu-only-build", "torch-cpu-build", ["torch_cpu", "cuda_available", "gpu", "driver"],
            f"{what} is a CPU-only build (a '+cpu' wheel, or 'CUDA used to build PyTorch: None'){seen}: it has no "
            "CUDA code, so torch.cuda.is_available() is False and every CUDA call fails "
            "(torch/version.py: cuda = None in CPU builds).")
    # 2. the driver's CUDA (nvidia-smi "CUDA Version") older in major than the CUDA the torch build
    #    names: within a major, CUDA minor-version compatibility lets a 12.x runtime run on any 12.x
    #    driver (NVIDIA's CUDA Compatibility guide), across majors the runtime refuses the driver
    cuda, drv = v.get("cuda"), v.get("cuda_driver")
    if not facts.torch_cpu and cuda and drv and _major(drv) is not None and _major(cuda) is not None \
            and _major(drv) < _major(cuda):
        add("driver-too-old-for-torch", "driver-cuda-below-build", ["cuda", "cuda_driver"],
            f"The driver supports CUDA {drv} (nvidia-smi's 'CUDA Version') but this torch build uses the CUDA "
            f"{cuda} runtime: a CUDA {_major(cuda)}.x runtime needs a driver of CUDA {_major(cuda)}.x or newer "
            "(NVIDIA CUDA Compatibility guide: minor-version compatibility holds only within a major), so CUDA "
            "initialisation fails with cudaErrorInsufficientDriver ('CUDA driver version is insufficient').")
    # 3. a GPU whose major capability no sm_ of the printed arch list has (torch's own rule,
    #    torch/cuda/__init__.py _check_cubins)
    if facts.arch_list and v.get("gpu_cc"):
        missing = [cc for cc in v["gpu_cc"] if _combinations.supports_capability(facts.arch_list, cc) is False]
        if missing:
            add("torch-arch-not-supported", "gpu-not-in-arch-list", ["gpu_cc", "arch_list"],
                f"The GPU ({', '.join(facts.gpus) or 'compute capability ' + ', '.join(missing)}; compute capability "
                f"{', '.join(missing)}) is not in this torch build's arch list ({' '.join(facts.arch_list)}): torch "
                "runs a GPU only when the list has an sm_ of the GPU's major (torch/cuda/__init__.py "
                "_check_cubins), so kernels fail with 'no kernel image is available for execution on the device'.")
    # 4. a prebuilt extension wheel built for another torch release than the log's torch: the
    #    wheel's name says which (flash-attn's setup.py names its wheels
    #    {name}-{version}+cu{cuda}torch{major.minor}cxx11abi{...}; mamba-ssm and causal-conv1d
    #    copy it), and a C++ extension only loads into the torch it was compiled against
    torch_mm = _combinations.parse_version(v.get("torch"))
    for dist, version, wcuda, wtorch in facts.wheels:
        if torch_mm is None or ".".join(map(str, torch_mm.release[:2])) == wtorch:
            continue
        add("extension-torch-mismatch", "wheel-built-for-other-torch", ["torch", f"wheel:{dist}"],
            f"The {dist} {version} wheel the log names was built for torch {wtorch} (CUDA {wcuda}), but the torch "
            f"in use is {v.get('torch')}: a C++/CUDA extension loads only into the torch release it was compiled "
            "against, so importing it fails with an undefined symbol (flash-attn's setup.py names each prebuilt "
            "wheel after the torch and CUDA it was built for).")
        break
    # 10. xFormers' own notice that its Triton kernels are off ("Triton is not available, some
    #    optimizations will not be enabled", xformers.info's "is_triton_available: False") with every
    #    GPU the log names below compute capability 8.0: since 0.0.24 _is_triton_available() returns
    #    False there before it imports triton (xformers/__init__.py: "Let's just drop support for
    #    triton kernels below A100"), so the notice is that gate, not a missing Triton. The notice is
    #    healthy on its own (xFormers runs on its CUDA kernels): like any state fact this is a
    #    candidate only in a log that fails (medium where nothing places the failure), a note
    #    otherwise. The bare sentence counts only in a log that shows xFormers (its version, a key
    #    of `python -m xformers.info`)
    off = str(facts.other.get("xformers_triton_off") or "")
    ccs = [c for c in (_release(x) for x in v.get("gpu_cc") or ()) if c]
    own = any(w in off for w in ("optimizations", "just a warning", "is_triton_available"))
    if off and ccs and all(c[:2] < (8, 0) for c in ccs) \
            and (own or v.get("xformers") or facts.other.get("xformers_info")):
        shown = ", ".join(facts.gpus) or "the GPU"
        add("triton-gpu-too-old", "xformers-triton-below-sm80", ["xformers_triton_off", "gpu_cc"],
            f"{shown} has compute capability {'.'.join(map(str, ccs[0][:2]))}: xFormers 0.0.24 and newer turn their "
            "Triton kernels off below compute capability 8.0 (xformers/__init__.py _is_triton_available: 'drop "
            "support for triton kernels below A100'), so its 'Triton is not available' here is that gate whether "
            "or not Triton is installed; xFormers' CUDA kernels still run.",
            layers={"triton", "kernels"})  # a failure elsewhere (an out-of-memory) is not its
    # 6-9. facts that pick the specific cause of a generic failure the log already shows (issue 8
    #    item 3; docs/dev/context-rules.md): each holds only when a line states one of the generic
    #    codes it narrows, so a version or GPU alone never makes a candidate
    for code, rule, keys, text, generic in _narrowing_facts(facts):
        # a generic code, or "entry:<id>": the signature entry of a line the log holds (its code), or
        # "entry:<id>=<code>": that entry's line standing for that code (not refined into another)
        hit = tuple(dict.fromkeys(_entry_code(c, entries) if c.startswith("entry:") else c for c in generic
                                  if (_entry_code(c, entries) if c.startswith("entry:")
                                      else evidenced.get(c, ("guess",))[0] != "guess")))
        if not hit or code not in catalogue or any(f.code == code for f in out):
            continue
        if any(kind == "root" and c not in generic and c not in hit and c != code
               for c, (kind, _) in evidenced.items()):
            continue  # a line states another cause: the facts do not compete with it
        spec = catalogue[code]
        out.append(FactFinding(code=code, basis="facts", rule=f"state:{rule}", confidence="high",
                               evidence=_evidence(facts, keys, f"facts:{rule}"),
                               explains=tuple(c for c in hit if c != code), explanation=text,
                               fix=render_prose(spec.fix, {}), links=spec.links))
    # 5. "Is CUDA available: False" with a GPU listed: the symptom, when no fact explains it
    #    (the caller adds the symptom's causes; a combination that explains it is ranked above it)
    if unavailable and not any(f.code in ("torch-cpu-only-build", "driver-too-old-for-torch") for f in out) \
            and "torch-cuda-unavailable" in catalogue:
        spec = catalogue["torch-cuda-unavailable"]
        out.append(FactFinding(
            code="torch-cuda-unavailable", basis="facts", rule="state:cuda-unavailable-with-gpu", confidence="high",
            evidence=_evidence(facts, ["cuda_available", "gpu", "driver"], "facts:cuda-unavailable-with-gpu"),
            explains=(), explanation=(
                "The log says 'Is CUDA available: False' while it lists an NVIDIA GPU or driver "
                f"({', '.join(facts.gpus) or v.get('driver') or ''}): torch cannot use the GPU the machine has."),
            fix=render_prose(spec.fix, {}), links=spec.links))
    return out


#: the oldest nvcc that compiles for a compute capability (the CUDA Toolkit release notes: sm_80
#: in 11.0, sm_86 in 11.1, sm_87 in 11.4, sm_89 and sm_90 in 11.8, sm_100 and sm_120 in 12.8,
#: sm_103 and sm_121 in 12.9, sm_110 in 13.0)
NVCC_FOR_CC = {"8.0": "11.0", "8.6": "11.1", "8.7": "11.4", "8.9": "11.8", "9.0": "11.8", "10.0": "12.8",
               "10.3": "12.9", "11.0": "13.0", "12.0": "12.8", "12.1": "12.9"}
#: the first CUDA release whose nvcc accepts an architecture, and the first that refuses it (CUDA Toolkit
#: release notes; CMake Modules/Internal/CMakeCUDAArchitecturesAll.cmake: 60-62 from 8.0, 70/72 from 9.0,
#: 75 from 10.0, 80 11.0, 86 11.1, 87 11.4, 89/90 11.8, 100/101/120 12.8, 103/121 12.9; 20/21 removed in
#: 9.0, 30 in 11.0, 35/37 in 12.0; CUDA 13.0 removed sm_50 to sm_72 and renamed sm_101 to sm_110)
NVCC_ARCH_ADDED = {60: (8, 0), 61: (8, 0), 62: (8, 0), 70: (9, 0), 72: (9, 0), 75: (10, 0), 80: (11, 0),
                   86: (11, 1), 87: (11, 4), 89: (11, 8), 90: (11, 8), 100: (12, 8), 101: (12, 8), 120: (12, 8),
                   103: (12, 9), 121: (12, 9), 110: (13, 0)}
NVCC_ARCH_DROPPED = {20: (9, 0), 21: (9, 0), 30: (11, 0), 32: (11, 0), 35: (12, 0), 37: (12, 0),
                     50: (13, 0), 52: (13, 0), 53: (13, 0), 60: (13, 0), 61: (13, 0), 62: (13, 0), 70: (13, 0),
                     72: (13, 0), 101: (13, 0)}
#: the last NVIDIA driver branch that drives a GPU architecture (NVIDIA's legacy GPU list: Fermi 390.xx,
#: Kepler 470.xx; the 580 release notes: the last branch for Maxwell, Pascal and Volta); keyed by
#: (major,) or (major, minor)
LAST_DRIVER_BRANCH_FOR_CC = {(2,): 390, (3,): 470, (5,): 580, (6,): 580, (7, 0): 580, (7, 2): 580}
#: the first torch release whose torch.compile (Dynamo) runs on a Python minor; older ones raise
#: "Python 3.x+ not yet supported for torch.compile" / "Dynamo is not supported on Python 3.x+"
#: (torch/_dynamo/eval_frame.py check_if_dynamo_supported)
COMPILE_PYTHON_FROM = {(3, 11): (2, 1), (3, 12): (2, 4), (3, 13): (2, 6), (3, 14): (2, 9)}
#: the signal a launcher names (the worker_signal fact: a name, or the strsignal text mpirun and srun print)
_WORKER_SIGNALS = {"SIGKILL": "SIGKILL", "Killed": "SIGKILL", "SIGSEGV": "SIGSEGV", "Segmentation fault": "SIGSEGV",
                   "SIGABRT": "SIGABRT", "Aborted": "SIGABRT", "SIGBUS": "SIGBUS", "Bus error": "SIGBUS",
                   "SIGTERM": "SIGTERM", "Terminated": "SIGTERM"}
#: generic codes a C++/CUDA extension build that fails shows
BUILD_GENERIC = ("extension-build-failed", "kernel-extension-not-built")
#: generic codes of a failing NCCL communicator (and the signature whose family-0 line a peer of
#: another release produces)
NCCL_GENERIC = ("nccl-error", "nccl-allreduce-failed", "collective-hang", "entry:nccl-no-socket-interface")
#: generic codes of a failing torch.compile / Triton kernel
COMPILE_GENERIC = ("torch-compile-failed", "triton-compiler-bug")


def _release(v: Any) -> Optional[Tuple[int, ...]]:
    p = _combinations.parse_version(str(v).rstrip(".")) if v else None
    return tuple(p.release) if p is not None else None


def _arch_runs(arch_list: Sequence[str], cc: Tuple[int, ...]) -> bool:
    """Whether an arch list holds code a GPU of capability ``cc`` runs: a cubin sm_XY of its major
    with Y not above its minor, or PTX compute_XY not above it (JIT-compiled by the driver)."""
    major, minor = cc[0], (cc[1] if len(cc) > 1 else 0)
    for a in arch_list:
        kind, _, num = a.partition("_")
        digits = "".join(ch for ch in num if ch.isdigit())
        if len(digits) < 2:
            continue
        m, n = int(digits[:-1]), int(digits[-1])
        if kind == "sm" and m == major and n <= minor and not num.endswith("a"):
            return True
        if kind == "compute" and (m, n) <= (major, minor):
            return True
    return False


_SIZE_RE = re.compile(r"([\d.]{1,10}) ?([KMGT]?)i?B")
_UNITS = {"": 1 / 2 ** 30, "K": 1 / 2 ** 20, "M": 1 / 2 ** 10, "G": 1.0, "T": 2.0 ** 10}
#: what a process holds on a GPU besides the memory torch reserves (its CUDA context, cuBLAS's
#: workspace), GiB: the older message counts only torch's reserved memory
OOM_CONTEXT_GIB = 1.0
#: the share of the GPU others must hold: the newer message counts all of this process's memory;
#: the older one cannot see what other libraries of the process allocate outside torch's allocator
#: (tiny-cuda-nn in nerfstudio, CuPy, TensorRT), so it needs a wider margin (instruct-nerf2nerf#33:
#: 13.5 of 23.7 GiB outside torch's reserve, the job's own images too large)
OOM_OTHERS_SHARE = {"new": 0.5, "old": 0.75}


def torch_oom_numbers(text: str) -> Optional[Tuple[float, float, float, str]]:
    """(total, free, this process, "new" or "old") in GiB from torch's out-of-memory numbers (the
    ``torch_oom`` fact); for the older message, this process is what torch reserved plus
    :data:`OOM_CONTEXT_GIB`."""
    sizes = []
    for m in _SIZE_RE.finditer(text or ""):
        try:
            sizes.append(float(m.group(1)) * _UNITS[m.group(2)])
        except ValueError:
            return None
    if "this process has" in text and len(sizes) >= 3:
        return sizes[0], sizes[1], sizes[-1], "new"
    if "reserved in total by PyTorch" in text and len(sizes) == 4:
        return sizes[0], sizes[2], sizes[3] + OOM_CONTEXT_GIB, "old"
    return None


def _narrowing_facts(facts: _combinations.LogFacts) -> List[Tuple[str, str, List[str], str, Tuple[str, ...]]]:
    """(code, rule, fact keys, explanation, the generic codes it narrows) for each fact of the log
    that decides the specific cause of a generic build or compile failure."""
    v = facts.versions
    out: List[Tuple[str, str, List[str], str, Tuple[str, ...]]] = []
    # torch's out-of-memory numbers: when the GPU's memory in use by others (total - free - this
    # process) is at least half the GPU (OOM_OTHERS_SHARE), other processes hold it and this job got
    # what was left (tools38; c10/cuda/CUDACachingAllocator.cpp prints the numbers and the processes)
    oom = torch_oom_numbers(str(facts.other.get("torch_oom") or ""))
    if oom and oom[0] >= 1.0 and oom[0] - oom[1] - oom[2] >= OOM_OTHERS_SHARE[oom[3]] * oom[0]:
        total, free, mine, _ = oom
        out.append(("gpu-memory-held-by-other-processes", "oom-memory-held-by-others", ["torch_oom"],
                    f"torch's out-of-memory message says the GPU has {total:.2f} GiB, {free:.2f} GiB free, and this "
                    f"process holds about {mine:.2f} GiB: the other {total - free - mine:.2f} GiB are held by other "
                    "processes (c10/cuda/CUDACachingAllocator.cpp prints these numbers and lists them: 'Process N "
                    "has ... memory in use').", ("gpu-out-of-memory",)))
    nvcc, cuda = _release(facts.other.get("nvcc")), _release(v.get("cuda"))
    # no torch version printed: the CUDA of the PyTorch index a pip command installed torch from
    index = facts.other.get("torch_index_cuda") or ""
    torch_cuda = v.get("cuda") or (f"{index[:-1]}.{index[-1]}" if index else None)
    cuda = cuda or _release(torch_cuda)
    ccs = [c for c in (_release(x) for x in v.get("gpu_cc") or ()) if c]
    # nvcc's major differs from the CUDA major torch was built with: torch.utils.cpp_extension
    # (_check_cuda_version) refuses to build ("The detected CUDA version (X) mismatches ...")
    if nvcc and cuda and not facts.torch_cpu and nvcc[0] != cuda[0]:
        out.append(("nvcc-torch-cuda-mismatch", "nvcc-major-differs-from-torch-cuda", ["nvcc", "cuda"],
                    f"nvcc is CUDA {facts.other['nvcc']} but torch was built with CUDA {v.get('cuda')}: "
                    "torch.utils.cpp_extension builds an extension only with an nvcc of the same CUDA major "
                    "(_check_cuda_version raises 'The detected CUDA version ... mismatches the version that was "
                    "used to compile PyTorch').", BUILD_GENERIC))
    # nvcc of the same major but an older minor than torch's CUDA: cpp_extension only warns ("minor
    # version mismatch ... Most likely this shouldn't be a problem"), but torch's headers and the CUDA
    # wheels' headers it includes use what the newer minor added, so the build fails in the compiler
    # (turboderp/exllama#65: nvcc 11.5 against a cu118 torch; CUDA 11.8 installed, it built)
    elif nvcc and cuda and not facts.torch_cpu and nvcc[0] == cuda[0] and nvcc[:2] < cuda[:2]:
        keys = ["nvcc", "cuda" if v.get("cuda") else "torch_index_cuda"]
        out.append(("nvcc-torch-cuda-mismatch", "nvcc-older-than-torch-cuda", keys,
                    f"nvcc is CUDA {facts.other['nvcc']}, older than the CUDA {torch_cuda} torch was built with: "
                    "torch.utils.cpp_extension only warns about a minor-version mismatch, but the headers of torch "
                    "and of the CUDA libraries it includes expect the newer release, so the extension fails to "
                    "compile.", BUILD_GENERIC))
    # nvcc older than the GPU's architecture: it rejects -gencode arch=compute_XY for it
    elif nvcc and ccs:
        need = [(".".join(map(str, c[:2])), NVCC_FOR_CC[".".join(map(str, c[:2]))]) for c in ccs
                if ".".join(map(str, c[:2])) in NVCC_FOR_CC]
        old = [(cc, n) for cc, n in need if nvcc[:2] < _release(n)[:2]]  # type: ignore[index]
        if old and len(old) == len(ccs):
            cc, n = old[0]
            out.append(("nvcc-arch-unsupported", "nvcc-older-than-gpu-arch", ["nvcc", "gpu_cc"],
                        f"nvcc is CUDA {facts.other['nvcc']} but the GPU has compute capability {cc}, which nvcc "
                        f"compiles for only from CUDA {n} (CUDA Toolkit release notes): building for this GPU "
                        f"fails with \"Unsupported gpu architecture 'compute_{cc.replace('.', '')}'\".",
                        BUILD_GENERIC))
    # every GPU the log names is older than compute capability 7.0, the oldest Triton compiles for
    # (torch/_inductor: "Found ... which is too old to be supported by the triton GPU compiler")
    if ccs and all(c[:2] < (7, 0) for c in ccs):
        shown = ", ".join(facts.gpus) or "the GPU"
        out.append(("triton-gpu-too-old", "gpu-older-than-triton-supports", ["gpu_cc"],
                    f"{shown} has compute capability {'.'.join(map(str, ccs[0][:2]))}; Triton, which torch.compile "
                    "and Triton kernels run on, supports compute capability 7.0 and newer only (torch/_inductor's "
                    "'too old to be supported by the triton GPU compiler').", COMPILE_GENERIC))
    # a kernel image the driver refuses (CUDA_ERROR_INVALID_IMAGE) on a GPU below compute capability
    # 7.0: Triton's cause (a ptxas newer than the driver) needs 7.0, so the binary has no kernels
    # for this GPU's architecture (cuda.h: "the device kernel image is invalid")
    if ccs and all(c[:2] < (7, 0) for c in ccs):
        shown = ", ".join(facts.gpus) or "the GPU"
        out.append(("framework-gpu-arch-unsupported", "invalid-image-on-gpu-below-7", ["gpu_cc"],
                    f"The driver refused the program's kernel image (CUDA_ERROR_INVALID_IMAGE) on {shown}, compute "
                    f"capability {'.'.join(map(str, ccs[0][:2]))}: the build has no kernels (no cubin and no PTX) "
                    "for this architecture. Triton's cause of the same error, a ptxas newer than the driver, "
                    "needs compute capability 7.0 or newer.", ("entry:cuda-invalid-image",)))
    # "no kernel image is available" although torch's printed arch list holds a cubin for every GPU
    # the log names (an sm_ of the GPU's major and a minor not above its own: binary compatibility,
    # CUDA C Programming Guide; or a compute_ PTX not above it): torch's own kernels run there, so the
    # kernel without an image is an extension's
    if ccs and facts.arch_list and all(_arch_runs(facts.arch_list, c) for c in ccs):
        out.append(("extension-arch-missing", "gpu-in-torch-arch-list", ["gpu_cc", "arch_list"],
                    f"The GPU (compute capability {', '.join('.'.join(map(str, c[:2])) for c in ccs)}) is in this "
                    f"torch build's arch list ({' '.join(facts.arch_list)}), so torch's own kernels have an image "
                    "for it: the kernel without one belongs to an extension built without this GPU's architecture "
                    "(its TORCH_CUDA_ARCH_LIST or prebuilt wheel).", ("entry:no-kernel-image",)))
    # the same when the log prints no arch list but a torch version: the arch list of the published
    # Linux x86_64 wheels of that release (knowledge/torch_wheels.toml, docs/dev/archtable44.md), of its
    # CUDA variant when the log says which (the +cuNNN label, torch.version.cuda, the wheel index),
    # else of every variant of the release, which must all run the GPU. Conda's and Windows' lists
    # of 2.1-2.5 hold these and more, but Windows' later lists are not in the table, so a Windows
    # log is left out; so is a host the log shows is not x86_64
    elif ccs and not facts.arch_list and v.get("torch") and "windows" not in facts.context \
            and v.get("machine") in (None, "x86_64"):
        rows = _combinations.torch_wheel_rows(v["torch"], torch_cuda)
        if rows and all(_arch_runs(r.arch_list, c) for r in rows for c in ccs):
            shown = ", ".join(".".join(map(str, c[:2])) for c in ccs)
            which = (f"the published Linux wheel of torch {v['torch']} ships {' '.join(rows[0].arch_list)}"
                     if len(rows) == 1 else
                     f"every published Linux wheel of torch {v['torch']}, whichever its CUDA variant, ships code "
                     f"for it ({' / '.join(' '.join(r.arch_list) for r in rows)})")
            out.append(("extension-arch-missing", "gpu-in-published-torch-arch-list", ["gpu_cc", "torch"],
                        f"The GPU has compute capability {shown} and {which}, so torch's own kernels have an "
                        "image for it: the kernel without one belongs to an extension built without this GPU's "
                        "architecture (its TORCH_CUDA_ARCH_LIST or prebuilt wheel). `python -c \"import torch; "
                        "print(torch.cuda.get_arch_list())\"` prints the list of the torch installed. Where the "
                        f"published list was read: {'; '.join(dict.fromkeys(r.source for r in rows))}.",
                        ("entry:no-kernel-image",)))
    # cudart's 35 ("CUDA driver version is insufficient for CUDA runtime version") although the
    # driver's own CUDA (nvidia-smi's "CUDA Version") is of the runtime's major or newer: minor-version
    # compatibility (NVIDIA's CUDA Compatibility guide) lets that driver run this runtime, so cudart
    # did not reach it: it found no usable libcuda (the driver's libcuda package missing, a toolkit
    # stub or another driver's libcuda first on the loader path), and answers 35 for that too
    drv = _release(v.get("cuda_driver"))
    if drv and cuda and not facts.torch_cpu and drv[0] >= cuda[0]:
        out.append(("libcuda-missing", "driver-new-enough-for-runtime", ["cuda_driver", "cuda"],
                    f"The driver supports CUDA {v.get('cuda_driver')} (nvidia-smi's 'CUDA Version') and this torch "
                    f"uses the CUDA {v.get('cuda')} runtime, which that driver runs (minor-version compatibility "
                    "within a major, NVIDIA's CUDA Compatibility guide): the runtime's 'driver version is "
                    "insufficient' then means it found no usable libcuda.so.1 (the driver's libcuda package "
                    "missing, or a stub or another driver's libcuda first on the loader path).",
                    ("entry:driver-insufficient-for-runtime=driver-too-old-for-torch",)))
    # the architecture nvcc refused, read with the nvcc release the log names (nvcc --version's "release
    # X.Y", the /usr/local/cuda-X.Y/bin/nvcc of the build command, CMake's "Found CUDA ... version", an
    # nvidia/cuda:X.Y image): the architecture alone does not say which way the gap goes (CUDA 13
    # dropped sm_50..sm_72, which CUDA 7.5 did not know yet either)
    arch = str(facts.other.get("nvcc_rejected_arch") or "")
    rel = nvcc or _release(facts.other.get("image_cuda"))
    shown = facts.other.get("nvcc") or facts.other.get("image_cuda")
    keys = ["nvcc_rejected_arch", "nvcc" if facts.other.get("nvcc") else "image_cuda"]
    if arch.isdigit() and rel and len(rel) >= 2:
        added, dropped = NVCC_ARCH_ADDED.get(int(arch)), NVCC_ARCH_DROPPED.get(int(arch))
        if added and tuple(rel[:2]) < added:
            out.append(("nvcc-arch-unsupported", "nvcc-older-than-rejected-arch", keys,
                        f"nvcc refused sm_{arch} and the log's nvcc is CUDA {shown}: nvcc knows sm_{arch} only from "
                        f"CUDA {'.'.join(map(str, added))} (CUDA Toolkit release notes; CMake's "
                        "CMakeCUDAArchitecturesAll.cmake), so the toolkit is too old for this architecture, not "
                        "too new.", ("entry:nvcc-dropped-arch", "entry:nvcc-unsupported-arch=nvcc-arch-dropped")))
        elif dropped and tuple(rel[:2]) >= dropped:
            out.append(("nvcc-arch-dropped", "nvcc-newer-than-rejected-arch", keys,
                        f"nvcc refused sm_{arch} and the log's nvcc is CUDA {shown}: CUDA "
                        f"{'.'.join(map(str, dropped))} dropped sm_{arch} (CUDA Toolkit release notes; CMake's "
                        "CMakeCUDAArchitecturesAll.cmake), so the build's architecture list is too old for this "
                        "toolkit, not the toolkit too old.", ("entry:nvcc-unsupported-arch",)))
    # a GPU whose architecture the installed driver branch no longer drives: NVIDIA's legacy GPU list
    # (nvidia.com/drivers/unix/legacy-gpu) leaves Fermi (2.x) to 390.xx and Kepler (3.x) to 470.xx, and
    # the 580 branch is the last for Maxwell, Pascal and Volta (5.x-7.0); a newer branch's kernel module
    # ignores the GPU ("NVRM: ... is supported through the NVIDIA 470.xx Legacy drivers"), so nvidia-smi
    # and CUDA find no driver. A log with the GPU and no driver branch says nothing (a VM without any
    # driver prints the same lines)
    said = "driver_branch" if facts.other.get("driver_branch") else "driver_branch_said"
    branch = _release(facts.other.get(said)) or _release(v.get("driver"))
    if ccs and branch:
        last = [LAST_DRIVER_BRANCH_FOR_CC.get(c[:2]) or LAST_DRIVER_BRANCH_FOR_CC.get(c[:1]) for c in ccs]
        if all(last) and all(branch[0] > b for b in last):  # type: ignore[operator]
            shown = ", ".join(facts.gpus) or "the GPU"
            cc = ".".join(map(str, ccs[0][:2]))
            out.append(("proprietary-kernel-module-unsupported-gpu", "driver-branch-dropped-gpu",
                        ["gpu_cc", said if facts.other.get(said) else "driver"],
                        f"{shown} (compute capability {cc}) with driver branch {branch[0]}: NVIDIA's last branch for "
                        f"this GPU is {max(last)}.xx (NVIDIA's legacy GPU list), so the installed driver's kernel "
                        "module ignores it ('is supported through the NVIDIA ... Legacy drivers') and nvidia-smi "
                        "and CUDA find no driver.", ("no-nvidia-driver", "cuda-devices-unavailable")))
    # two different NCCL releases among the log's ranks ("NCCL version 2.18.1" on one node, "2.19.3" on
    # another): NCCL refuses a communicator whose peers differ (src/init.cc initTransportsRank: "Mismatched
    # NCCL version detected"), and before that check the bootstrap exchanges raw structs whose layout
    # changes between releases (src/bootstrap.cc), so a peer reads a zeroed address and fails with
    # "ncclSocketInit: connecting to address with family 0" / "unhandled system error" (nccl#1267):
    # the differing releases, not the interface, are then the cause
    if facts.other.get("nccl_versions"):
        out.append(("collective-mismatch-across-ranks", "nccl-versions-differ-between-ranks", ["nccl_versions"],
                    f"The log's ranks print different NCCL releases ({facts.other['nccl_versions']}): NCCL needs "
                    "the same release on every rank (src/init.cc initTransportsRank refuses peers of another "
                    "version, and the bootstrap before it exchanges structs whose layout differs between "
                    "releases, so a peer can read a zeroed address: 'connecting to address with family 0', "
                    "'unhandled system error').", NCCL_GENERIC))
    # the signal a launcher reports its worker died of (tools45): SIGKILL, which no Python exception
    # sends and which the kernel's OOM killer and a memory cgroup's limit do (launcher-worker-failed's
    # and host-oom-killed's own words: torchrun's 'exitcode: -9', a container's exit status 137 = 128+9,
    # srun's 'task 0: Killed', mpirun's 'exited on signal 9 (Killed)'). Only where a line shows the
    # launcher's report (the generic code) and no line states another cause (a worker's traceback a
    # signature reads keeps its cause: the loop below); SIGSEGV and SIGABRT name no one code (the
    # launcher-worker-native-crash signature narrows that could-be), SIGTERM is the launcher's own
    sig = _WORKER_SIGNALS.get(str(facts.other.get("worker_signal") or ""))
    if sig == "SIGKILL":
        out.append(("host-oom-killed", "launcher-worker-sigkill", ["worker_signal"],
                    "The launcher reports that its worker was killed by SIGKILL (signal 9; exit status 137 = "
                    "128+9 from a shell or a container): no Python exception ends a process so; the kernel's "
                    "OOM killer, or the memory limit of the container or the job, sends it.",
                    ("launcher-worker-failed",)))
    # a Python newer than the torch release's torch.compile supports
    py, torch = _release(v.get("python")), _release(str(v.get("torch") or "").split("+")[0])
    if py and torch and len(py) >= 2 and tuple(py[:2]) in COMPILE_PYTHON_FROM \
            and tuple(torch[:2]) < COMPILE_PYTHON_FROM[tuple(py[:2])]:
        first = ".".join(map(str, COMPILE_PYTHON_FROM[tuple(py[:2])]))
        out.append(("torch-compile-python-unsupported", "python-newer-than-torch-compile", ["python", "torch"],
                    f"Python {v.get('python')} with torch {v.get('torch')}: torch.compile supports Python "
                    f"{py[0]}.{py[1]} only from torch {first} (torch/_dynamo/eval_frame.py "
                    "check_if_dynamo_supported raises before compiling).", COMPILE_GENERIC))
    return out


def context_note(f: FactFinding) -> str:
    """The note for a finding that holds but is no candidate: the log shows no failure it causes."""
    what = f.summary or f.explanation
    return (f"the log's versions and GPUs match {f.rule} ({f.code}: {what}), but the log shows no failure in the "
            "layer it breaks: context, not the cause of this log's error")


__all__ = ["FactFinding", "context_note", "evaluate"]
