"""The configuration layer: what the user set rather than what is broken underneath.

- ``config.known_combinations``: the installed versions, GPUs and driver against the table
  of known-bad combinations (``knowledge/combinations.toml``); versions come from package
  metadata, nothing is imported, so the evaluation takes milliseconds.
- ``config.environment``, ``config.triton_environment``, ``config.nccl_environment``: every
  variable the stack reads that names something (a program, a directory, an interface, an
  HCA) is checked against what exists; syntax of TORCH_CUDA_ARCH_LIST and
  PYTORCH_CUDA_ALLOC_CONF is checked the way torch parses it. The checks of the layers that
  read these variables require them, so a failure caused by a variable nests under it.
- ``config.module_origins``: a stack package whose ``import`` would load a stray file or
  folder (working directory, PYTHONPATH) instead of the installed distribution.
"""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .. import combinations as _combinations
from .. import facts as _facts
from ..model import Severity
from .base import Check


class _CallerCwd:
    """``probe_options`` computed when the probe starts: the directory stackpeel was run from
    (probes run in a scratch directory, but a user's ``python -c``/``-m`` sees this one)."""

    def __get__(self, obj, owner) -> Dict[str, Any]:
        try:
            return {"cwd": os.getcwd()}
        except OSError:  # the directory was removed under us
            return {}


# --------------------------------------------------------------------------- known-bad combinations

def observed_versions(facts: _facts.ConfigVersionsFacts) -> Dict[str, Any]:
    """The versions dict for :func:`stackpeel.combinations.match_combinations` from the
    ``config.versions`` probe's facts (package metadata, torch/version.py, NVML)."""
    versions: Dict[str, Any] = dict(facts["dists"] or {})
    if "triton" not in versions and versions.get("pytorch-triton"):
        versions["triton"] = versions["pytorch-triton"]
    versions["gpu_cc"] = [g.get("cc") for g in facts["gpus"] or [] if g.get("cc")]
    versions["driver"] = facts["driver"]
    dv = facts["cuda_driver_version"]
    versions["cuda_driver"] = f"{dv // 1000}.{(dv % 1000) // 10}" if isinstance(dv, int) and dv > 0 else None
    versions["cuda"] = facts["torch_cuda"]
    versions["python"] = facts["python"]
    versions["machine"] = facts["machine"]  # platform.machine() of the target: which build of a wheel it got
    tl = facts.get("fla_tilelang")
    if tl and not tl.get("usable"):
        versions.pop("tilelang", None)  # installed, but FLA will not dispatch to it: no workaround in place
    return versions


SEVERITY_ORDER = ("blocking", "degraded", "info")


class KnownCombinations(Check):
    """The installed versions (from package metadata: nothing is imported), the GPUs' compute
    capabilities and the driver, matched against stackpeel's table of combinations known to
    fail (``knowledge/combinations.toml``: FLA's Triton-on-Hopper guard, torch's Triton pins,
    drivers too old for a CUDA runtime, GPU architectures dropped by torch/CUDA/Triton
    releases, prebuilt wheels built for another torch ...). Each finding names the entry's
    source and is blocking only for what the entry says it breaks."""

    id = "config.known_combinations"
    title = "No known-bad combination of versions, GPU and driver"
    layer = "config"
    # no requirements: a known-bad combination is a root cause whatever else fails (on a
    # CPU-only box, transformers refusing this torch is no symptom of the missing driver).
    # The probe reads GPUs and driver through NVML itself.
    probe = "config.versions"
    facts = _facts.ConfigVersionsFacts
    timeout = 20.0
    codes = ("known-bad-combination", "fla-triton-hopper-gated-backward")

    def evaluate(self, facts, ctx):
        versions = observed_versions(facts)
        matches = _combinations.match_combinations(versions)
        # what torch.cuda and triton.import measure live (driver floors, dropped archs, Triton
        # pins) is theirs to report: the table keeps those entries for explain
        shown = [m for m in matches if not m.combination.covered_by]
        left = [m.id for m in matches if m.combination.covered_by]
        python = ctx.target.get("python") or "python"
        findings = []
        tl = facts.get("fla_tilelang") or {}
        unused = (f"tilelang {(facts['dists'] or {}).get('tilelang')} is installed, but FLA will not use it: "
                  + "; ".join(tl.get("why_not") or ())) if tl and not tl.get("usable") else ""
        for m in shown:
            e = m.combination
            commands = e.commands_for(python, versions)
            words = dict(severity=Severity(e.severity), evidence=unused if "tilelang" in e.unless else "",
                         combination=e.id, observed=m.describe(), gpu=e.gpu or "this GPU", breaks=e.breaks,
                         consequence_text=e.consequence, fix_text=e.fix, source=e.source,
                         **{f"command_{i}": cmd for i, cmd in enumerate(commands, start=1)})
            if e.code == "fla-triton-hopper-gated-backward":
                findings.append(ctx.finding("fla-triton-hopper-gated-backward", **words))
            else:
                findings.append(ctx.finding("known-bad-combination", **words))
        keep = {"versions": {k: v for k, v in versions.items() if v not in (None, [], "")},
                "matched": [m.id for m in matches], "left_to_live_checks": left,
                "table_version": _combinations.data_version()}
        n = len(_combinations.load())
        if not findings:
            return ctx.ok(f"none of {n} known-bad combinations matches" +
                          (f" ({', '.join(left)} left to torch.cuda / triton.import, which measure it live)"
                           if left else ""), **keep)
        worst = min(SEVERITY_ORDER.index(m.combination.severity) for m in shown)
        summary = "; ".join(dict.fromkeys(m.combination.breaks for m in shown
                                          if SEVERITY_ORDER.index(m.combination.severity) == worst))
        return ctx.verdict(f"known-bad combination: breaks {summary}", *findings, **keep)


# --------------------------------------------------------------------------- environment

def _shown(interfaces: Optional[Mapping[str, Any]]) -> str:
    if interfaces is None:
        return "none listed in /sys/class/net"
    return ", ".join(interfaces) or "none"


def ifname_matches(spec: str, names: Sequence[str]) -> List[str]:
    """Interfaces NCCL would consider for NCCL_SOCKET_IFNAME / NCCL_IB_HCA ``spec``: a
    comma-separated list of prefixes, '=' for exact names, a leading '^' to exclude; an
    entry's ':port' suffix (NCCL_IB_HCA) is ignored here."""
    s = spec.strip()
    exclude = s.startswith("^")
    if exclude:
        s = s[1:]
    exact = s.startswith("=")
    if exact:
        s = s[1:]
    wanted = [w.split(":")[0].strip() for w in s.split(",") if w.strip()]

    def hit(name: str) -> bool:
        return any(name == w if exact else name.startswith(w) for w in wanted)

    if exclude:
        return [n for n in names if not hit(n) and n != "lo"]
    return [n for n in names if hit(n)]


#: torch/utils/cpp_extension.py (torch 2.13): named architectures and the strings it accepts
NAMED_ARCHES = (("Kepler+Tesla", "3.7"), ("Kepler", "3.5+PTX"), ("Maxwell+Tegra", "5.3"), ("Maxwell", "5.0;5.2+PTX"),
                ("Pascal", "6.0;6.1+PTX"), ("Volta+Tegra", "7.2"), ("Volta", "7.0+PTX"), ("Turing", "7.5+PTX"),
                ("Ampere+Tegra", "8.7"), ("Ampere", "8.0;8.6+PTX"), ("Ada", "8.9+PTX"), ("Hopper", "9.0+PTX"),
                ("Blackwell+Tegra", "11.0"), ("Blackwell", "10.0;10.3;12.0;12.1+PTX"))
SUPPORTED_ARCHES = ("3.5", "3.7", "5.0", "5.2", "5.3", "6.0", "6.1", "6.2", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7",
                    "8.9", "9.0", "9.0a", "10.0", "10.0a", "11.0", "11.0a", "10.3", "10.3a", "12.0", "12.0a", "12.1",
                    "12.1a")


def invalid_arch_entries(value: str) -> List[str]:
    """Entries of TORCH_CUDA_ARCH_LIST that torch's ``_get_cuda_arch_flags`` rejects."""
    if not value or value == "native":
        return []
    s = value.replace(" ", ";")
    for name, expansion in NAMED_ARCHES:
        s = s.replace(name, expansion)
    valid = set(SUPPORTED_ARCHES) | {a + "+PTX" for a in SUPPORTED_ARCHES}
    return [a for a in s.split(";") if a not in valid]


#: keys of torch's allocator config (c10/core/AllocatorConfig.cpp and c10/cuda/CUDAAllocatorConfig.cpp)
ALLOC_KEYS = ("max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold",
              "roundup_power2_divisions", "expandable_segments", "large_segment_size_mb",
              "pinned_use_background_threads", "pinned_max_round_threshold_mb", "pinned_max_cached_size_mb",
              "backend", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
              "pinned_num_register_threads", "per_process_memory_fraction", "graph_capture_record_stream_reuse",
              "pinned_use_hip_host_register", "release_lock_on_hipmalloc")
_BOOL = ("true", "false", "True", "False")


def alloc_conf_problems(value: str) -> List[str]:
    """What torch's allocator-config parser would reject in ``value`` (key:value,key:value)."""
    problems = []
    depth = 0
    items, cur = [], ""
    for ch in value:  # commas inside [..] (roundup_power2_divisions) do not split
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    for item in items:
        item = item.strip()
        if not item:
            continue
        if ":" not in item:
            problems.append(f"{item!r} has no ':value'")
            continue
        key, val = (p.strip() for p in item.split(":", 1))
        if key not in ALLOC_KEYS:
            problems.append(f"unknown key {key!r}")
        elif key in ("expandable_segments", "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
                     "pinned_use_background_threads") and val not in _BOOL:
            problems.append(f"{key} expects True or False, not {val!r}")
        elif key == "backend" and val not in ("native", "cudaMallocAsync"):
            problems.append(f"backend expects native or cudaMallocAsync, not {val!r}")
        elif key in ("max_split_size_mb", "max_non_split_rounding_mb", "large_segment_size_mb",
                     "pinned_num_register_threads", "pinned_max_round_threshold_mb",
                     "pinned_max_cached_size_mb") and not re.fullmatch(r"\d+", val):
            problems.append(f"{key} expects a number of MB, not {val!r}")
        elif key in ("garbage_collection_threshold", "per_process_memory_fraction") and \
                not re.fullmatch(r"\d*\.?\d+", val):
            problems.append(f"{key} expects a fraction, not {val!r}")
    return problems


def _path_problem(state: Mapping[str, Any], want: str, parent: Optional[Mapping[str, Any]] = None) -> Optional[str]:
    """Why a path cannot serve as ``want`` ('executable', 'dir', 'writable-dir'), else None."""
    if not state.get("exists"):
        if want == "writable-dir" and parent and parent.get("writable"):
            return None  # the library creates it
        why = "does not exist"
        if want == "writable-dir" and parent:
            why += f" and cannot be created (nearest existing directory {parent.get('path')} is not writable)"
        return why
    if want == "executable":
        if state.get("kind") == "dir":
            return "is a directory, not a program"
        if not state.get("executable"):
            return "is not executable"
    if want in ("dir", "writable-dir") and state.get("kind") != "dir":
        return "is not a directory"
    if want == "writable-dir" and not state.get("writable"):
        return "is not writable"
    return None


_VARIANT = lambda var: var.lower().replace("_", "-")  # noqa: E731
#: switches reported as info: variable -> (values that count as set, variant or None for 'other')
SWITCHES = {
    "CUDA_LAUNCH_BLOCKING": "cuda-launch-blocking", "TORCH_USE_CUDA_DSA": "torch-use-cuda-dsa",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "pytorch-no-cuda-memory-caching", "TRITON_INTERPRET": "triton-interpret",
    "NCCL_P2P_DISABLE": "nccl-p2p-disable", "NCCL_SHM_DISABLE": "nccl-shm-disable",
    "NCCL_IB_DISABLE": "nccl-ib-disable", "NCCL_DEBUG": "nccl-debug", "NCCL_NET": "other", "NCCL_P2P_LEVEL": "other",
    "NCCL_ALGO": "other", "NCCL_PROTO": "other", "NCCL_NVLS_ENABLE": "other", "NCCL_CUMEM_ENABLE": "other",
}
_OFF = ("", "0", "false", "False", "no", "off")


def _switch_findings(make, env: Mapping[str, str], names: Sequence[str]):
    """(var, finding) for each switch that is set; ``make(**words)`` builds the env-switch-set finding."""
    out = []
    for var in names:
        value = env.get(var)
        if value is None or (var != "NCCL_DEBUG" and SWITCHES[var] != "other" and value in _OFF):
            continue
        severity = None
        if var in ("TRITON_INTERPRET", "CUDA_LAUNCH_BLOCKING", "PYTORCH_NO_CUDA_MEMORY_CACHING") and value not in _OFF:
            severity = Severity.DEGRADED  # slows every run a lot
        out.append((var, make(variant=SWITCHES[var], severity=severity, var=var, value=value)))
    return out


def _path_findings(make, facts: _facts.ConfigEnvironmentFacts, names: Sequence[str]):
    """(var, finding) for each variable naming an unusable path; ``make(**words)`` builds the
    env-path-unusable finding."""
    out = []
    env = facts["set"] or {}
    paths = facts["paths"] or {}
    programs = facts["programs"] or {}
    for var in names:
        if var not in env:
            continue
        value = env[var]
        problem = None
        if var in ("CC", "CXX"):
            if not value.strip():
                problem = "is set but empty"
            else:
                prog = programs.get(var) or {}
                if not prog.get("resolved"):
                    problem = f"names {prog.get('program')!r}, which is not on PATH" if os.sep not in str(
                        prog.get("program")) else "does not exist"
                else:
                    problem = _path_problem(prog.get("state") or {}, "executable")
                if problem is None and (prog.get("words") or 1) > 1 and var == "CC":
                    problem = "holds several words, but Triton runs CC as one program name"
        elif not value:
            problem = "is set but empty"
        else:
            state = paths.get(var) or {}
            if var in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH",
                       "TRITON_NVDISASM_PATH"):
                problem = _path_problem(state, "executable")
            elif var in ("TRITON_CACHE_DIR", "TRITON_HOME"):
                problem = _path_problem(state, "writable-dir", (facts["cache_parent"] or {}).get(var))
            else:
                problem = _path_problem(state, "dir")
                if problem is None and var == "TRITON_LIBCUDA_PATH" and not facts.get("libcuda_files"):
                    problem = "holds no libcuda.so*"
                if problem is None and var in ("CUDA_HOME", "CUDA_PATH") and \
                        not (facts.get("cuda_home_nvcc") or {}).get("executable") and \
                        (var == "CUDA_HOME" or "CUDA_HOME" not in env):
                    problem = "has no executable bin/nvcc"
        if problem:
            # TRITON_LIBCUDA_PATH only goes first among the directories Triton's link searches:
            # toolchain.libcuda_discovery judges whether the link then fails (blocking there)
            severity = Severity.DEGRADED if var in ("TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH",
                                                    "TRITON_LIBCUDA_PATH") else None
            out.append((var, make(variant=_VARIANT(var), severity=severity, var=var, value=value, problem=problem)))
    return out


class _PathVariables(Check):
    """A check of the path-naming variables ``names``: each set one must name something usable."""

    layer = "config"
    probe = "config.environment"
    facts = _facts.ConfigEnvironmentFacts
    timeout = 10.0
    codes = ("env-path-unusable",)
    names: tuple = ()

    def evaluate(self, facts, ctx):
        checked = [v for v in self.names if v in (facts["set"] or {})]
        pairs = _path_findings(lambda **w: ctx.finding("env-path-unusable", **w), facts, self.names)
        return _verdict(ctx, pairs, checked, {"checked": checked})


class CompilerEnvironment(_PathVariables):
    """CC and CXX name a program that exists and runs (Triton runs CC as one program name, and
    takes it over gcc and clang on PATH). toolchain.c_compiler nests under this check."""

    id = "config.compiler_environment"
    title = "CC and CXX name usable compilers"
    names = ("CC", "CXX")


class CudaHomeEnvironment(_PathVariables):
    """CUDA_HOME / CUDA_PATH name a CUDA toolkit with an executable bin/nvcc (torch's
    cpp_extension takes them as given). toolchain.nvcc nests under this check."""

    id = "config.cuda_home_environment"
    title = "CUDA_HOME and CUDA_PATH name a CUDA toolkit"
    names = ("CUDA_HOME", "CUDA_PATH")


class Environment(Check):
    """Variables that steer the loader, extension builds and torch: LD_LIBRARY_PATH /
    LD_PRELOAD (entries that exist), TORCH_CUDA_ARCH_LIST and PYTORCH_CUDA_ALLOC_CONF (parsed as
    torch parses them), NVIDIA_VISIBLE_DEVICES, and debugging switches such as
    CUDA_LAUNCH_BLOCKING. (CC/CXX, CUDA_HOME and the Triton and NCCL variables have checks of
    their own, so that only the checks reading a variable nest under it.)"""

    id = "config.environment"
    title = "Environment variables for the loader, extension builds and torch"
    layer = "config"
    probe = "config.environment"
    facts = _facts.ConfigEnvironmentFacts
    timeout = 10.0
    codes = ("env-library-path-missing", "env-torch-cuda-arch-list-invalid", "env-alloc-conf-invalid",
             "env-nvidia-visible-devices-none", "env-switch-set")

    def evaluate(self, facts, ctx):
        env = facts["set"] or {}
        findings = []
        for var, entries in (facts["lists"] or {}).items():
            missing = [e["entry"] for e in entries if e.get("exists") is False and e.get("entry")]
            if missing:
                findings.append((var, ctx.finding(
                    "env-library-path-missing", variant="ld-preload" if var == "LD_PRELOAD" else None,
                    severity=Severity.DEGRADED if var == "LD_PRELOAD" else None, var=var,
                    entries=", ".join(missing))))
        arch = env.get("TORCH_CUDA_ARCH_LIST")
        if arch is not None:
            bad = invalid_arch_entries(arch)
            if bad:
                findings.append(("TORCH_CUDA_ARCH_LIST", ctx.finding(
                    "env-torch-cuda-arch-list-invalid", value=arch, bad=", ".join(repr(b) for b in bad))))
        for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
            if env.get(var):
                problems = alloc_conf_problems(env[var])
                if problems:
                    findings.append((var, ctx.finding("env-alloc-conf-invalid", var=var, value=env[var],
                                                      bad="; ".join(problems), keys=", ".join(ALLOC_KEYS[:9]))))
        nvd = env.get("NVIDIA_VISIBLE_DEVICES")
        if nvd is not None and nvd.strip().lower() in ("", "void", "none"):
            findings.append(("NVIDIA_VISIBLE_DEVICES", ctx.finding("env-nvidia-visible-devices-none", value=nvd)))
        findings += _switch_findings(lambda **w: ctx.finding("env-switch-set", **w), env,
                                     ("CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "PYTORCH_NO_CUDA_MEMORY_CACHING"))
        checked = [v for v in ("LD_LIBRARY_PATH", "LD_PRELOAD", "TORCH_CUDA_ARCH_LIST", "PYTORCH_CUDA_ALLOC_CONF",
                               "PYTORCH_ALLOC_CONF", "NVIDIA_VISIBLE_DEVICES") if v in env]
        return _verdict(ctx, findings, checked, {"checked": checked})


class TritonEnvironment(Check):
    """Variables Triton trusts without checking: TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH
    (an executable ptxas), TRITON_LIBCUDA_PATH (a directory holding libcuda.so.1),
    TRITON_CACHE_DIR / TRITON_HOME (a directory Triton can create and write), and
    TRITON_INTERPRET. toolchain checks that read these variables nest under this one."""

    id = "config.triton_environment"
    title = "Environment variables Triton reads"
    layer = "config"
    probe = "config.environment"
    facts = _facts.ConfigEnvironmentFacts
    timeout = 10.0
    codes = ("env-path-unusable", "env-switch-set")

    def evaluate(self, facts, ctx):
        env = facts["set"] or {}
        names = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_LIBCUDA_PATH", "TRITON_CACHE_DIR",
                 "TRITON_HOME", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH")
        findings = (_path_findings(lambda **w: ctx.finding("env-path-unusable", **w), facts, names) +
                    _switch_findings(lambda **w: ctx.finding("env-switch-set", **w), env, ("TRITON_INTERPRET",)))
        checked = [v for v in names + ("TRITON_INTERPRET",) if v in env]
        return _verdict(ctx, findings, checked, {"checked": checked})


class NcclEnvironment(Check):
    """Variables NCCL and gloo read to pick their network: NCCL_SOCKET_IFNAME (prefixes, '='
    exact, '^' exclude) and GLOO_SOCKET_IFNAME against /sys/class/net, NCCL_IB_HCA against
    /sys/class/infiniband, and transport switches (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE ...)
    as information. multi_gpu.nccl nests under this check."""

    id = "config.nccl_environment"
    title = "Environment variables NCCL and gloo read"
    layer = "config"
    probe = "config.environment"
    facts = _facts.ConfigEnvironmentFacts
    timeout = 10.0
    codes = ("env-nccl-socket-ifname-no-match", "env-nccl-ib-hca-no-match", "env-switch-set")

    def evaluate(self, facts, ctx):
        env = facts["set"] or {}
        ifaces = facts["interfaces"]
        names = list(ifaces or {})
        findings = []
        value = env.get("NCCL_SOCKET_IFNAME")
        # an empty value is not judged: how NCCL reads it is not established here
        if value and value.strip() and ifaces is not None and not ifname_matches(value, names):
            findings.append(("NCCL_SOCKET_IFNAME", ctx.finding(
                "env-nccl-socket-ifname-no-match", var="NCCL_SOCKET_IFNAME", value=value, interfaces=_shown(ifaces))))
        value = env.get("GLOO_SOCKET_IFNAME")
        if value is not None and ifaces is not None:
            bad = [n.strip() for n in value.split(",") if n.strip() not in names]
            if bad or not value.strip():
                findings.append(("GLOO_SOCKET_IFNAME", ctx.finding(
                    "env-nccl-socket-ifname-no-match", variant="gloo", var="GLOO_SOCKET_IFNAME", value=value,
                    bad=", ".join(bad) or repr(value), interfaces=_shown(ifaces))))
        value = env.get("NCCL_IB_HCA")
        if value is not None and value.strip():
            hcas = facts["ib_devices"]
            if not hcas or not ifname_matches(value, list(hcas)):
                findings.append(("NCCL_IB_HCA", ctx.finding(
                    "env-nccl-ib-hca-no-match", value=value,
                    hcas=", ".join(hcas) if hcas else "no /sys/class/infiniband devices")))
        switches = [v for v in SWITCHES if v.startswith("NCCL_")]
        findings += _switch_findings(lambda **w: ctx.finding("env-switch-set", **w), env, switches)
        checked = [v for v in ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "NCCL_IB_HCA"] + switches if v in env]
        return _verdict(ctx, findings, checked, {"checked": checked, "interface_names": names})


def _verdict(ctx, pairs, checked, keep):
    """``pairs``: (variable, finding). The summary names the variables, worst first."""
    if not pairs:
        return ctx.ok(f"checked {', '.join(checked)}" if checked else "none of the variables it checks is set",
                      **keep)
    order = {Severity.BLOCKING: 0, Severity.DEGRADED: 1, Severity.INFO: 2}
    ranked = sorted(pairs, key=lambda p: order[p[1].severity])
    names = list(dict.fromkeys(f"{var} ({f.severity.value})" for var, f in ranked))
    return ctx.verdict(", ".join(names[:6]) + (" ..." if len(names) > 6 else ""), *(f for _, f in pairs), **keep)


# --------------------------------------------------------------------------- shadowed modules

class ModuleOrigins(Check):
    """For torch, triton, fla, transformers, causal_conv1d, numpy and the other stack packages:
    where ``import`` would load them from (``importlib.machinery.PathFinder`` over sys.path as a
    program started from the current directory sees it, without importing anything), and
    whether that file belongs to the installed distribution. A stray ``triton/`` folder or
    ``torch.py`` in the working directory or on PYTHONPATH is its own root cause."""

    id = "config.module_origins"
    title = "Stack packages load from their installed distributions"
    layer = "config"
    probe = "config.module_origins"
    facts = _facts.ConfigModuleOriginsFacts
    probe_options = _CallerCwd()
    timeout = 20.0
    codes = ("module-shadowed",)

    def evaluate(self, facts, ctx):
        mods = facts["modules"] or []
        findings = []
        for m in mods:
            if m.get("matches") is False:
                findings.append(ctx.finding(
                    "module-shadowed", evidence=f"sys.path as `python -c` from {facts['cwd']} sees it: "
                    f"{facts['sys_path_head']}", module=m["module"], found=m.get("found"),
                    path_source=m.get("path_source") or "earlier on sys.path", dist=m.get("dist"),
                    version=m.get("version"), installed_at=m.get("installed_at") or "site-packages"))
        if not findings:
            return ctx.ok(f"{len(mods)} installed stack package(s) load from their distributions"
                          if mods else "no stack package installed")
        return ctx.verdict("shadowed: " + ", ".join(m["module"] for m in mods if m.get("matches") is False),
                           *findings)
