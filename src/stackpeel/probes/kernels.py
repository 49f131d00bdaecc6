"""Kernel libraries: flash-linear-attention, causal-conv1d, and what transformers binds.
Standard library only; Python 3.8+.

Each probe imports the library the way a training script does (torch first, warnings
recorded, a fresh ``TRITON_CACHE_DIR`` so a warm cache cannot make a broken toolchain look
healthy) and then recovers what the library swallowed by calling the same entry point
directly.

Two modes (``inp["mode"]``). ``deep`` imports the whole library, as a job does
(``import fla`` is 8 s on the CI machine and 17.6 s on the H200: it builds every layer,
model and autotuned kernel). The default runs only the code the verdict depends on:
FLA's own ``fla/utils/hardware.py`` (its device detection, which calls Triton's driver)
loaded under stand-in parent packages so that ``fla/__init__.py`` and its model registry
do not run, and, for transformers >= 5.15, the fast-path bindings read from the model
module's source (``@use_kernel_func_from_hub_with_fallback(func, package)``) and resolved
by transformers' own rule: the package is bound unless importing it raises. Importing FLA
fails only when a module it imports is missing or broken, so the default imports those
(torch, triton, einops, packaging, and FLA's own detection); when one of them fails it runs
transformers' real import to keep the exception transformers swallows. tests/test_speed.py
proves both modes reach the same verdicts on every fault the suite injects.
"""

import ast
import importlib
import os
import re
import shutil
import sys
import tempfile

import _stackpeel_probe__common as common

FLA_DISTS = ("fla-core", "flash-linear-attention")
FLA_FALLBACK_TEXT = "roll back to CPU"
CAUSAL_CONV1D_DISTS = ("causal-conv1d", "causal_conv1d")
#: version tag of causal-conv1d's prebuilt wheels, e.g. 1.7.0+cu13torch2.11cxx11abiTRUE
CC1D_TAG = re.compile(r"\+cu(\d+)torch(\d+\.\d+)cxx11abi(TRUE|FALSE)", re.I)

#: transformers model modules with gated-delta-net layers, newest first
GDN_MODULES = ("transformers.models.qwen3_next.modeling_qwen3_next",
               "transformers.models.qwen3_5.modeling_qwen3_5")
#: transformers <= 5.14: module-level names of the fast-path functions
LEGACY_FAST_NAMES = ("causal_conv1d_fn", "causal_conv1d_update", "chunk_gated_delta_rule",
                     "fused_recurrent_gated_delta_rule")


def _fresh_triton_cache():
    tmp = tempfile.mkdtemp(prefix="stackpeel-kernels-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton-cache")
    return tmp


def _dists(names):
    return {n: common.dist_version(n) for n in names if common.dist_version(n)}


def _deep(inp):
    return (inp or {}).get("mode") == "deep"


def _fla_detection(root, version):
    """Run FLA's device detection (``fla/utils/hardware.py``, module level: it calls
    ``get_available_device()`` -> ``triton.runtime.driver.active.get_current_target()``)
    without ``fla/__init__.py`` (layers, models, hundreds of kernels) or the rest of
    ``fla.utils``."""
    common.stub_package("fla", root, version)
    common.stub_package("fla.utils", os.path.join(root, "utils"))
    return importlib.import_module("fla.utils.hardware")


# --------------------------------------------------------------------------- kernels.fla

def fla_facts(inp):
    dists = _dists(FLA_DISTS)
    facts = {"installed": bool(dists), "dists": dists,
             "version": dists.get("fla-core") or dists.get("flash-linear-attention"),
             "spec": common.find_spec_origin("fla"), "triton_installed": common.find_spec_origin("triton") is not None,
             "torch_installed": common.find_spec_origin("torch") is not None,
             "triton_version": common.dist_version("triton"), "device": None, "device_platform": None,
             "device_name": None, "device_torch_lib": None, "IS_NVIDIA": None, "import_error": None,
             "swallowed": None, "target": None, "fallback_warnings": [], "cuda_available": None}
    if not dists and not facts["spec"]:
        return facts
    tmp = _fresh_triton_cache()
    facts["triton_cache_dir"] = os.environ["TRITON_CACHE_DIR"]
    root = facts["spec"] if facts["spec"] and os.path.isdir(os.path.join(facts["spec"], "utils")) else None
    facts["import_path"] = "import fla.utils" if _deep(inp) or not root else "fla/utils/hardware.py only"
    try:
        with common.recorded() as box:
            torch = common.torch_facts(facts)
            try:
                if facts["import_path"] == "import fla.utils":
                    importlib.import_module("fla.utils")
                    fu = sys.modules["fla.utils"]
                else:
                    fu = _fla_detection(root, facts["version"])
            except Exception as exc:
                facts["import_error"] = common.exc_facts(exc)
                facts["import_error"]["missing_module"] = getattr(exc, "name", None)
                fu = None
            if fu is not None:
                for name in ("device", "device_platform", "device_name", "IS_NVIDIA", "IS_NVIDIA_HOPPER",
                             "IS_NVIDIA_BLACKWELL", "IS_TF32_SUPPORTED"):
                    value = getattr(fu, name, None)
                    facts[name] = value if isinstance(value, (str, bool, int, type(None))) else repr(value)
                lib = getattr(fu, "device_torch_lib", None)
                facts["device_torch_lib"] = getattr(lib, "__name__", repr(lib)) if lib is not None else None
                # the entry point FLA's get_available_device() calls: re-run it to get what FLA swallowed
                try:
                    import triton
                    target = triton.runtime.driver.active.get_current_target()
                    facts["target"] = {"backend": getattr(target, "backend", None),
                                       "arch": getattr(target, "arch", None)}
                except Exception as exc:
                    facts["swallowed"] = common.exc_facts(exc)
                if torch is not None and facts.get("cuda_available"):
                    try:
                        facts["gpu_name"] = torch.cuda.get_device_name(0)
                    except Exception:
                        pass
            # what else ``import fla`` needs (transformers' fallback imports the whole package):
            # kernels.transformers_fast_path joins this instead of importing torch again
            facts["import_deps_error"] = _why_unavailable(FLA_IMPORT_DEPS)
        facts["fallback_warnings"] = [w for w in box["warnings"] if FLA_FALLBACK_TEXT in w["message"]]
        facts["other_warnings"] = [w for w in box["warnings"] if FLA_FALLBACK_TEXT not in w["message"]][:10]
        facts["stderr"] = common.clip(box["stderr"], 3000)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts


# --------------------------------------------------------------------------- kernels.causal_conv1d

def _demangle(symbol):
    if not symbol or not common.which("c++filt"):
        return None
    res = common.run(["c++filt", symbol], timeout=10)
    out = (res.get("stdout") or "").strip()
    return out if res.get("rc") == 0 and out and out != symbol else None


def causal_conv1d_facts(inp):
    dists = _dists(CAUSAL_CONV1D_DISTS)
    version = next(iter(dists.values()), None)
    facts = {"installed": False, "version": version, "package": common.find_spec_origin("causal_conv1d"),
             "extension": common.find_spec_origin("causal_conv1d_cuda"), "import_error": None,
             "undefined_symbol": None, "undefined_symbol_demangled": None, "tag": None, "imported": False}
    facts["installed"] = bool(version or facts["package"])
    if not facts["installed"]:
        return facts
    m = CC1D_TAG.search(version or "")
    if m:
        facts["tag"] = {"cuda_major": int(m.group(1)), "torch": m.group(2), "cxx11abi": m.group(3).upper() == "TRUE"}
    tmp = _fresh_triton_cache()
    try:
        with common.recorded() as box:
            torch = common.torch_facts(facts)
            if torch is not None:
                try:
                    facts["torch_cxx11abi"] = bool(torch._C._GLIBCXX_USE_CXX11_ABI)
                except Exception:
                    facts["torch_cxx11abi"] = None
            try:
                mod = importlib.import_module("causal_conv1d")
                facts["imported"] = True
                facts["has_fn"] = callable(getattr(mod, "causal_conv1d_fn", None))
            except Exception as exc:
                err = common.exc_facts(exc)
                err["missing_module"] = getattr(exc, "name", None)
                facts["import_error"] = err
                sym = re.search(r"undefined symbol: (\S+)", err["message"])
                if sym:
                    facts["undefined_symbol"] = sym.group(1)
                    facts["undefined_symbol_demangled"] = _demangle(sym.group(1))
            if facts["imported"] and facts.get("has_fn") and facts.get("cuda_available"):
                facts["gpu_call"] = _causal_conv1d_gpu_call(torch, mod)
        facts["warnings"] = box["warnings"][:10]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts


def _causal_conv1d_gpu_call(torch, mod):
    """One tiny call on the GPU, against the definition: reveals missing arch code (C6)."""
    out = {"ok": False}
    try:
        import torch.nn.functional as F
        batch, dim, seqlen, width = 1, 8, 16, 4
        x = torch.arange(batch * dim * seqlen, dtype=torch.float32).reshape(batch, dim, seqlen) / 100.0
        w = torch.arange(dim * width, dtype=torch.float32).reshape(dim, width) / 50.0
        expected = F.conv1d(x, w.unsqueeze(1), padding=width - 1, groups=dim)[..., :seqlen]
        got = mod.causal_conv1d_fn(x.cuda(), w.cuda(), None, activation=None)
        torch.cuda.synchronize()
        out["max_abs_err"] = float((got.float().cpu() - expected).abs().max().item())
        out["ok"] = out["max_abs_err"] < 1e-3
    except Exception as exc:
        out["error"] = common.exc_facts(exc)
    return out


# --------------------------------------------------------------------------- kernels.transformers_fast_path

def _find_binding(fn, depth=0):
    """The closure of transformers' hub-kernel fallback wrapper: (implementation, torch_function, cells)."""
    if depth > 4 or not callable(fn):
        return None
    code = getattr(fn, "__code__", None)
    closure = getattr(fn, "__closure__", None) or ()
    if code is not None and closure:
        cells = {}
        for name, cell in zip(code.co_freevars, closure):
            try:
                cells[name] = cell.cell_contents
            except ValueError:
                continue
        if "implementation" in cells and "torch_function" in cells:
            return cells
        for value in cells.values():
            if callable(value) and value is not fn:
                found = _find_binding(value, depth + 1)
                if found:
                    return found
    return None


def _describe(fn):
    if fn is None:
        return None
    return "%s.%s" % (getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", getattr(fn, "__name__", "?")))


def _why_unavailable(module_names):
    """Import what transformers tried to import and keep the exception it swallowed."""
    for name in module_names:
        try:
            importlib.import_module(name)
        except Exception as exc:
            err = common.exc_facts(exc)
            err["module"] = name
            return err
    return None


def transformers_facts(inp):
    """Default mode (transformers >= 5.15): torch-free. The bindings come from the model
    module's source (:func:`_source_bindings`); whether the kernel package imports is what
    ``kernels.fla`` and ``kernels.causal_conv1d`` found, joined in the check's ``evaluate``.
    Older transformers and ``--deep``: the model module is imported for real."""
    version = common.dist_version("transformers")
    facts = {"installed": bool(version), "version": version, "model_module": None, "bindings": [],
             "legacy": None, "import_error": None, "cuda_available": None,
             "fla_dists": _dists(FLA_DISTS), "causal_conv1d_version": next(iter(_dists(CAUSAL_CONV1D_DISTS).values()),
                                                                            None)}
    if not version:
        return facts
    options = inp.get("options") or {}
    modules = options.get("modules") or GDN_MODULES
    if not _deep(inp):
        if not any(_module_dir(name) for name in modules):
            return facts  # no gated-delta-net model in this transformers: nothing to import
        with common.recorded() as box:
            found = _source_bindings(modules, facts)
        if found:
            facts["bindings_from"] = "source"
            facts["warnings"] = box["warnings"][:10]
            facts["stderr"] = common.clip(box["stderr"], 3000)
            return facts
    tmp = _fresh_triton_cache()
    torch = None
    try:
        with common.recorded() as box:
            torch = common.torch_facts(facts)
            mod = None
            for name in modules:
                try:
                    import importlib.util
                    if importlib.util.find_spec(name) is None:
                        continue
                except Exception:
                    continue
                facts["model_module"] = name
                try:
                    mod = importlib.import_module(name)
                except Exception as exc:
                    facts["import_error"] = common.exc_facts(exc)
                break
            if mod is not None:
                facts["bindings_from"] = "import"
                _read_bindings(mod, facts)
        facts["warnings"] = [w for w in box["warnings"]][:10]
        facts["stderr"] = common.clip(box["stderr"], 3000)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if torch is None:
        facts["cuda_available"] = None
    return facts


def _read_bindings(mod, facts):
    mappings = {}
    try:
        hub = importlib.import_module("transformers.integrations.hub_kernels")
        mappings = dict(getattr(hub, "_KERNELS_INTERNAL_PATH_MAPPINGS", {}) or {})
    except Exception:
        pass
    for attr, value in sorted(vars(mod).items()):
        if not callable(value) or getattr(value, "__module__", None) != mod.__name__:
            continue
        cells = _find_binding(value)
        if not cells:
            continue
        impl, torch_fn = cells.get("implementation"), cells.get("torch_function")
        func_name, package = cells.get("func_name"), cells.get("package")
        entry = {"attr": attr, "func_name": func_name, "package": package, "implementation": _describe(impl),
                 "reference": impl is torch_fn, "implementation_module": getattr(impl, "__module__", None)}
        if entry["reference"] and package:
            internal = mappings.get(func_name)
            tried = [package] + (["%s.%s" % (package, internal)] if internal else [])
            entry["reason"] = _why_unavailable(tried)
        facts["bindings"].append(entry)
    if not facts["bindings"] and hasattr(mod, "is_fast_path_available"):
        legacy = {"is_fast_path_available": bool(getattr(mod, "is_fast_path_available")), "functions": {}}
        for name in LEGACY_FAST_NAMES:
            legacy["functions"][name] = _describe(getattr(mod, name, None))
        missing = [n for n, v in legacy["functions"].items() if v is None]
        if missing:
            pkgs = ["causal_conv1d"] if any("conv1d" in n for n in missing) else []
            if any("delta" in n for n in missing):
                pkgs += ["fla.ops.gated_delta_rule"]
            legacy["reasons"] = {p: _why_unavailable([p]) for p in pkgs}
        facts["legacy"] = legacy


# --------------------------------------------------------------------------- transformers, from source

#: what transformers' fallback decorator is called (5.15+)
HUB_DECORATOR = "use_kernel_func_from_hub_with_fallback"
#: modules whose failure makes ``import fla`` / ``fla.ops.gated_delta_rule`` raise; FLA's own
#: detection module is run after them (by stand-in packages, as kernels.fla does)
FLA_IMPORT_DEPS = ("torch", "triton", "triton.language", "einops", "packaging.version")
#: packages whose import another check runs (kernels.fla, kernels.causal_conv1d): the
#: transformers check joins their answer instead of importing them (and torch) again
JOINED_PACKAGES = ("fla", "causal_conv1d")


def _module_file(module_name):
    """The source file of a dotted module (``pkg/mod.py`` or ``pkg/mod/__init__.py``), found
    without importing any package."""
    top, _, rest = module_name.partition(".")
    root = common.find_spec_origin(top)
    if not root:
        return None
    if not os.path.isdir(root):  # a top-level module file (or a stray one shadowing a package)
        return root if not rest and root.endswith(".py") and os.path.isfile(root) else None
    base = os.path.join(root, *rest.split(".")) if rest else root
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if rest and path == os.path.join(root, "__init__.py"):
            continue
        if os.path.isfile(path):
            return path
    return None


def _module_dir(module_name):
    """The directory a dotted module's file would be in (its parent package's), or None."""
    top, _, rest = module_name.partition(".")
    root = common.find_spec_origin(top)
    if not root or not os.path.isdir(root):
        return None
    path = os.path.join(root, *rest.split(".")[:-1]) if rest else root
    return path if os.path.isdir(path) else None


def _binder(module_name, name, depth=0):
    """The module that defines ``name`` as found by ``getattr(module, name)`` after import,
    read from the sources: the module itself when it defines or assigns it, else where its
    ``from X import name`` points (followed a few hops). None when the source does not bind
    the name (or the module has no source here)."""
    path = _module_file(module_name)
    if not path or depth > 4:
        return None
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return None
    package = module_name if path.endswith("__init__.py") else module_name.rpartition(".")[0]
    for node in _statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return module_name
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return module_name
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) != name and alias.name != "*":
                    continue
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1])
                    source = base + ("." + node.module if node.module else "")
                else:
                    source = node.module or ""
                if alias.name == "*":  # from X import *: bound only if X binds it
                    found = _binder(source, name, depth + 1)
                    if found:
                        return found
                    continue
                if not node.module and node.level:  # from . import name: a submodule
                    return source + "." + alias.name if _module_file(source + "." + alias.name) else module_name
                return _binder(source, alias.name, depth + 1) or source
    return None


def _source_bindings(modules, facts):
    """transformers >= 5.15: each fallback-decorated function of the model module, from its
    source, with what transformers' rule (``import package``, then the attribute, else the
    module ``package.internal_path``) would resolve to, read from the kernel package's
    source. Returns False when the module has no such decorators (older transformers).

    ``source_bindings`` entries with ``"resolved": False`` wait for the verdict: the package's
    sources provide the function, and whether ``import package`` raises is what
    ``kernels.fla`` / ``kernels.causal_conv1d`` found (``evaluate`` joins them, no torch here).
    Where the sources do not provide it, or for a package no other check imports, this probe
    runs transformers' import for real (cheap when it fails: the exception is the reason)."""
    for name in modules:
        path = _module_file(name)
        if not path:
            continue
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read())
        except (OSError, SyntaxError, ValueError):
            return False
        found = _decorated(tree)
        if not found:
            return False
        facts["model_module"] = name
        mappings = _internal_mappings()
        out = []
        for attr, func_name, package, internal in found:
            if not func_name or not package:
                continue
            internal = mappings.get(func_name, internal)
            module_path = package if internal is None else "%s.%s" % (package, internal)
            origin = common.find_spec_origin(package)
            binder = _binder(module_path, func_name) if origin else None
            entry = {"attr": attr, "func_name": func_name, "package": package, "module_path": module_path,
                     "origin": origin, "resolved": False,
                     "implementation": "%s.%s" % (binder, func_name) if binder else None}
            if binder is None or package not in JOINED_PACKAGES:
                impl, err = _transformers_import(package, module_path, func_name, internal)
                entry.update(resolved=True, implementation=impl, reason=err)
            out.append(entry)
        facts["source_bindings"] = out
        return True
    return False


def _statements(body):
    """The statements of a module as its import runs them: into ``if``/``try``/``with`` and
    class bodies, not into function bodies (a third of the time of ``ast.walk`` there)."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in _statements(inner):
                    yield sub


def _decorated(tree):
    """(function, func_name, package, internal_path) for each fallback-decorated function."""
    found = []
    for node in _statements(tree.body):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            if not isinstance(dec, ast.Call):
                continue
            fn = dec.func
            name = fn.id if isinstance(fn, ast.Name) else getattr(fn, "attr", None)
            if name != HUB_DECORATOR:
                continue
            args = [a.value if isinstance(a, ast.Constant) else None for a in dec.args]
            kw = {k.arg: k.value.value for k in dec.keywords if isinstance(k.value, ast.Constant)}
            args += [None] * (3 - len(args))
            found.append((node.name, kw.get("func_name", args[0]), kw.get("package", args[1]),
                          kw.get("internal_path", args[2])))
    return found


def _internal_mappings():
    path = _module_file("transformers.integrations.hub_kernels")
    if not path:
        return {}
    try:
        with open(path) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(getattr(t, "id", None) == "_KERNELS_INTERNAL_PATH_MAPPINGS" for t in targets) and node.value is not None:
            try:
                return dict(ast.literal_eval(node.value))
            except (ValueError, SyntaxError):
                return {}
    return {}


def _transformers_import(package, module_path, func_name, internal):
    """transformers' own resolution (hub_kernels.use_kernel_func_from_hub_with_fallback), run
    for real: (implementation description or None, the exception it swallows or None)."""
    try:
        module = importlib.import_module(package)
        impl = module
        for part in ("%s.%s" % (internal, func_name) if internal else func_name).split("."):
            impl = getattr(impl, part, None)
            if impl is None:
                break
        if impl is None and module_path != package:
            impl = getattr(importlib.import_module(module_path), func_name, None)
        return (_describe(impl) if impl is not None else None), None
    except Exception as exc:
        err = common.exc_facts(exc)
        err["module"] = package
        return None, err


# --------------------------------------------------------------------------- --deep: real ops

def _step(steps, name, fn):
    """Run one timed step; record seconds and the exception verbatim. Returns (ok, value)."""
    import time
    entry = {"name": name, "ok": False, "seconds": None}
    steps.append(entry)
    t0 = time.monotonic()
    try:
        value = fn()
        entry["ok"] = True
        return True, value
    except Exception as exc:
        entry["error"] = common.exc_facts(exc)
        entry["error"]["raised_in"] = _raised_in(exc)
        return False, None
    finally:
        entry["seconds"] = round(time.monotonic() - t0, 3)


def _raised_in(exc):
    """``path/inside/site-packages.py:function`` of the innermost frame."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return None
    code = last.tb_frame.f_code
    path = code.co_filename
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep):
        if marker in path:
            path = path.split(marker, 1)[1]
    return "%s:%d (%s)" % (path, last.tb_lineno, code.co_name)


def _err_ratio(got, ref):
    """FLA's own measure (fla.utils.testing.get_err_ratio): RMS of the difference over RMS of
    the reference; plus the max absolute error."""
    got, ref = got.detach().float().cpu(), ref.detach().float().cpu()
    diff = got - ref
    rms_ref = float(ref.pow(2).mean().sqrt().item()) or 1e-12
    return {"ratio": float(diff.pow(2).mean().sqrt().item()) / rms_ref, "max_abs": float(diff.abs().max().item()),
            "finite": bool(got.isfinite().all().item())}


def _compare(steps, name, pairs, tolerance):
    """A step that compares named (got, reference) tensors; fails with the numbers."""
    def check():
        out = {}
        for label, got, ref in pairs:
            out[label] = _err_ratio(got, ref)
        bad = {k: v for k, v in out.items() if not v["finite"] or v["ratio"] > tolerance}
        if bad:
            raise AssertionError("results differ from the reference beyond a ratio of %g: %s"
                                 % (tolerance, ", ".join("%s ratio %.3g max abs %.3g%s" % (
                                     k, v["ratio"], v["max_abs"], "" if v["finite"] else " (non-finite values)")
                                     for k, v in sorted(bad.items()))))
        return out
    ok, out = _step(steps, name, check)
    if ok:
        steps[-1]["errors"] = out
    else:
        steps[-1]["wrong_result"] = True
    return ok


def _deep_start(facts):
    """Empty Triton and Inductor caches (what a new container has), torch imported."""
    tmp = _fresh_triton_cache()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor-cache")
    facts["caches"] = "empty (fresh TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR)"
    return tmp


#: what torch.compile's C++ backend writes in its temporary directory on empty caches, measured
#: (scripts/tmp_peak.py, torch 2.13 CPU, tmp25): 149 MiB, almost all of it one precompiled header
#: (torchinductor_<user>/precompiled_headers/*.h.gch). Under it the compile fails with a misleading
#: `CppCompileError: C++ compile error` (g++ cannot write the header), so it is not attempted (tmp26)
COMPILE_TMP_PEAK = 149 << 20


def _room(path):
    """{"dir", "free_bytes", "need_bytes"} of the file system holding ``path``."""
    try:
        st = os.statvfs(path)
        free = st.f_bavail * st.f_frsize
    except OSError:
        free = None
    return {"dir": os.path.dirname(os.path.abspath(path)), "free_bytes": free, "need_bytes": COMPILE_TMP_PEAK}


def torch_compile_op(inp):
    """A small function through torch.compile (Inductor: a C++ kernel on CPU, Triton on
    CUDA), forward and backward, on empty caches, against eager torch."""
    facts = {"steps": [], "skipped": None, "devices": []}
    if not common.find_spec_origin("torch"):
        facts["skipped"] = "torch is not installed"
        return facts
    tmp = _deep_start(facts)
    # Inductor writes in tempfile.gettempdir() (this probe's: stackpeel's scratch, in the user's
    # temporary directory, or in /dev/shm or the cache folder where that is unusable)
    facts["room"] = _room(tmp)
    if facts["room"]["free_bytes"] is not None and facts["room"]["free_bytes"] < COMPILE_TMP_PEAK:
        shutil.rmtree(tmp, ignore_errors=True)
        return facts
    try:
        with common.recorded() as box:
            torch = common.torch_facts(facts)
            if torch is None:
                facts["skipped"] = "torch does not import (see torch.cuda)"
                return facts
            facts["devices"] = ["cpu"] + (["cuda"] if facts.get("cuda_available") else [])
            for dev in facts["devices"]:
                _compile_on(torch, dev, facts["steps"])
        facts["warnings"] = box["warnings"][:10]
        facts["stderr"] = common.clip(box["stderr"], 4000)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts


def _compile_on(torch, dev, steps):
    import torch.nn.functional as F

    def fn(x, w):
        return F.gelu(x @ w).sin() * 2.0 + x.sum(dim=-1, keepdim=True)

    gen = torch.Generator().manual_seed(0)
    x0 = torch.randn(16, 32, generator=gen)
    w0 = torch.randn(32, 32, generator=gen) / 6.0
    x, w = x0.to(dev).requires_grad_(), w0.to(dev).requires_grad_()
    ref = fn(x, w)
    ref.sum().backward()
    ref_grads = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    try:
        torch._dynamo.reset()
    except Exception:
        pass
    compiled = torch.compile(fn, fullgraph=True)
    ok, out = _step(steps, "%s: forward (compile and run)" % dev, lambda: compiled(x, w))
    if not ok:
        return
    ok, _ = _step(steps, "%s: backward (compile and run)" % dev, lambda: out.sum().backward())
    if not ok:
        return
    _compare(steps, "%s: compare with eager" % dev,
             [("output", out, ref), ("grad x", x.grad, ref_grads[0]), ("grad w", w.grad, ref_grads[1])], 1e-3)


def fla_ops(inp):
    """FLA's gated delta rule (``chunk_gated_delta_rule``, what transformers binds) forward
    and backward against FLA's own naive recurrent reference, then a ``GatedDeltaNet`` layer
    forward and backward, on an empty Triton cache."""
    facts = {"steps": [], "skipped": None, "installed": bool(_dists(FLA_DISTS)), "dists": _dists(FLA_DISTS),
             "triton_version": common.dist_version("triton")}
    if not facts["installed"] and not common.find_spec_origin("fla"):
        facts["skipped"] = "flash-linear-attention is not installed"
        return facts
    tmp = _deep_start(facts)
    try:
        with common.recorded() as box:
            torch = common.torch_facts(facts)
            if torch is None:
                facts["skipped"] = "torch does not import (see torch.cuda)"
            elif not facts.get("cuda_available"):
                facts["skipped"] = ("torch.cuda.is_available() is False: FLA's ops are Triton GPU kernels, "
                                    "there is nothing to run them on")
            else:
                _fla_steps(torch, facts["steps"], facts)
        facts["warnings"] = box["warnings"][:10]
        facts["stderr"] = common.clip(box["stderr"], 4000)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts


def _fla_steps(torch, steps, facts):
    ok, mods = _step(steps, "import fla", lambda: (importlib.import_module("fla"),
                                                   importlib.import_module("fla.ops.gated_delta_rule"),
                                                   importlib.import_module("fla.ops.gated_delta_rule.naive")))
    if not ok:
        return
    _, ops, naive = mods
    try:
        facts["gpu_name"] = torch.cuda.get_device_name(0)
        facts["cc"] = "%d.%d" % torch.cuda.get_device_capability(0)
    except Exception:
        pass
    import torch.nn.functional as F
    gen = torch.Generator().manual_seed(0)
    B, T, H, K, V = 1, 128, 2, 64, 64

    def leaf(t):
        return t.cuda().requires_grad_()
    q = leaf(F.normalize(torch.randn(B, T, H, K, generator=gen), dim=-1))
    k = leaf(F.normalize(torch.randn(B, T, H, K, generator=gen), dim=-1))
    v = leaf(torch.randn(B, T, H, V, generator=gen))
    g = leaf(F.logsigmoid(torch.randn(B, T, H, generator=gen)))
    beta = leaf(torch.randn(B, T, H, generator=gen).sigmoid())
    do = torch.randn(B, T, H, V, generator=gen).cuda()
    leaves = (q, k, v, g, beta)
    ref, _ = naive.naive_recurrent_gated_delta_rule(q, k, v, beta, g)
    (ref * do).sum().backward()
    ref_grads = [t.grad.clone() for t in leaves]
    for t in leaves:
        t.grad = None
    ok, out = _step(steps, "chunk_gated_delta_rule forward (compile and run)",
                    lambda: ops.chunk_gated_delta_rule(q, k, v, g, beta)[0])
    if not ok:
        return
    torch.cuda.synchronize()
    forward_ok = _compare(steps, "forward compared with naive_recurrent_gated_delta_rule", [("o", out, ref)], 5e-3)
    ok, _ = _step(steps, "chunk_gated_delta_rule backward (compile and run)",
                  lambda: ((out * do).sum().backward(), torch.cuda.synchronize()))
    if ok:
        _compare(steps, "gradients compared with the reference",
                 [("d" + n, t.grad, r) for n, t, r in zip(("q", "k", "v", "g", "beta"), leaves, ref_grads)], 1e-2)
    if not (forward_ok and ok):  # the layer runs the same kernels: its failure would say nothing new
        return
    layers = importlib.import_module("fla.layers")
    layer_box = {}

    def layer_fwd():
        layer = layers.GatedDeltaNet(hidden_size=256, num_heads=2, head_dim=64, expand_v=1.0).cuda()
        x = torch.randn(1, 128, 256, generator=gen).cuda().requires_grad_()
        y = layer(x)[0]
        torch.cuda.synchronize()
        if not bool(y.isfinite().all().item()):
            raise AssertionError("GatedDeltaNet output has non-finite values")
        layer_box["y"] = y
    ok, _ = _step(steps, "GatedDeltaNet layer forward", layer_fwd)
    if ok:
        _step(steps, "GatedDeltaNet layer backward",
              lambda: (layer_box["y"].float().pow(2).mean().backward(), torch.cuda.synchronize()))


def causal_conv1d_ops(inp):
    """causal_conv1d_fn forward and backward against its definition (a depthwise conv1d
    cut to causal length, then SiLU)."""
    dists = _dists(CAUSAL_CONV1D_DISTS)
    facts = {"steps": [], "skipped": None, "version": next(iter(dists.values()), None)}
    if not dists and not common.find_spec_origin("causal_conv1d"):
        facts["skipped"] = "causal-conv1d is not installed"
        return facts
    tmp = _deep_start(facts)
    try:
        with common.recorded() as box:
            torch = common.torch_facts(facts)
            if torch is None:
                facts["skipped"] = "torch does not import (see torch.cuda)"
            elif not facts.get("cuda_available"):
                facts["skipped"] = "torch.cuda.is_available() is False: causal-conv1d's kernels are CUDA kernels"
            else:
                _conv_steps(torch, facts["steps"])
        facts["warnings"] = box["warnings"][:10]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return facts


def _conv_steps(torch, steps):
    ok, mod = _step(steps, "import causal_conv1d", lambda: importlib.import_module("causal_conv1d"))
    if not ok:
        return
    import torch.nn.functional as F
    gen = torch.Generator().manual_seed(0)
    B, D, L, W = 2, 64, 128, 4
    x = torch.randn(B, D, L, generator=gen).cuda().requires_grad_()
    w = (torch.randn(D, W, generator=gen) / 2).cuda().requires_grad_()
    b = torch.randn(D, generator=gen).cuda().requires_grad_()
    dout = torch.randn(B, D, L, generator=gen).cuda()
    ref = F.silu(F.conv1d(x, w.unsqueeze(1), b, padding=W - 1, groups=D)[..., :L])
    (ref * dout).sum().backward()
    ref_grads = [t.grad.clone() for t in (x, w, b)]
    for t in (x, w, b):
        t.grad = None
    ok, out = _step(steps, "causal_conv1d_fn forward", lambda: mod.causal_conv1d_fn(x, w, b, activation="silu"))
    if not ok:
        return
    torch.cuda.synchronize()
    _compare(steps, "forward compared with torch conv1d", [("out", out, ref)], 1e-3)
    ok, _ = _step(steps, "causal_conv1d_fn backward", lambda: ((out * dout).sum().backward(), torch.cuda.synchronize()))
    if ok:
        _compare(steps, "gradients compared with torch", [("d" + n, t.grad, r) for n, t, r in
                                                          zip(("x", "weight", "bias"), (x, w, b), ref_grads)], 1e-3)
