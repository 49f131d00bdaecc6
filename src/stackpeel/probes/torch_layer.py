"""PyTorch's CUDA layer, measured inside the target interpreter.

Standard library only (torch is what is probed, imported here and nowhere else);
Python 3.8+. Importing torch is the slow part of a whole stackpeel run, so this probe
does it once and collects everything the torch layer needs: the build, is_available()
with torch's own warnings verbatim, device capabilities, the arch list, and one real
kernel launch.
"""

import os

import _stackpeel_probe__common as common

ENV_KEYS = ("CUDA_VISIBLE_DEVICES", "PYTORCH_NVML_BASED_CUDA_CHECK", "CUDA_HOME", "LD_LIBRARY_PATH",
            "TORCH_CUDA_ARCH_LIST", "CUDA_LAUNCH_BLOCKING")


def _warnings(box):
    return [w["category"] + ": " + w["message"] for w in box["warnings"]]


def _step(facts, name, fn):
    """Run one torch call with warnings and output recorded; returns (ok, value)."""
    with common.recorded() as box:
        try:
            value, ok = fn(), True
        except Exception as exc:
            value, ok = None, False
            facts["errors"][name] = common.exc_facts(exc)
    facts["warnings"].extend(w for w in _warnings(box) if w not in facts["warnings"])
    for stream in ("stdout", "stderr"):
        if box[stream]:
            facts["output"].append("%s (%s): %s" % (name, stream, box[stream]))
    return ok, value


def torch_cuda(inp):
    facts = {
        "installed": False, "dist_version": common.dist_version("torch"), "origin": common.find_spec_origin("torch"),
        "import_error": None, "version": None, "path": None, "cuda": None, "hip": None, "compiled_with_cuda": None,
        "available": False, "device_count": 0, "arch_list": [], "built_arch_flags": None, "capabilities": [],
        "devices": [], "op_ok": None, "op_result": None, "warnings": [], "errors": {}, "output": [],
        "env": {k: os.environ.get(k) for k in ENV_KEYS},
    }
    if facts["origin"] is None:
        return facts
    facts["installed"] = True
    with common.recorded() as box:
        try:
            import torch
        except BaseException as exc:  # a broken install can raise anything, even SystemExit
            facts["import_error"] = common.exc_facts(exc)
            torch = None
    facts["warnings"].extend(_warnings(box))
    if box["stderr"]:
        facts["output"].append("import (stderr): " + box["stderr"])
    if torch is None:
        return facts
    facts["version"] = getattr(torch, "__version__", None)
    facts["path"] = os.path.dirname(getattr(torch, "__file__", "") or "") or None
    ver = getattr(torch, "version", None)
    facts["cuda"] = getattr(ver, "cuda", None)
    facts["hip"] = getattr(ver, "hip", None)
    facts["compiled_with_cuda"] = bool(getattr(torch._C, "_has_cuda", False)) if hasattr(torch, "_C") else None
    tc = torch.cuda
    # the arch list the binary was built for, without initialising CUDA (get_arch_list() is [] when
    # is_available() is False, which must not be read as "no architectures")
    get_flags = getattr(torch._C, "_cuda_getArchFlags", None)
    if get_flags is not None:
        ok, flags = _step(facts, "_cuda_getArchFlags", get_flags)
        facts["built_arch_flags"] = flags.split() if ok and flags else None
    ok, available = _step(facts, "is_available", tc.is_available)
    facts["available"] = bool(available) if ok else False
    ok, count = _step(facts, "device_count", tc.device_count)
    facts["device_count"] = int(count) if ok and count is not None else 0
    ok, arch = _step(facts, "get_arch_list", tc.get_arch_list)
    facts["arch_list"] = list(arch) if ok and arch else []
    if not facts["available"]:
        return facts
    for i in range(min(facts["device_count"], 64)):
        dev = {"index": i, "name": None, "cc": None}
        ok, cap = _step(facts, "get_device_capability(%d)" % i, lambda i=i: tc.get_device_capability(i))
        if ok and cap:
            dev["cc"] = "%d.%d" % tuple(cap)
            facts["capabilities"].append(dev["cc"])
        ok, name = _step(facts, "get_device_name(%d)" % i, lambda i=i: tc.get_device_name(i))
        dev["name"] = name if ok else None
        facts["devices"].append(dev)

    def op():
        value = (torch.ones(1, device="cuda") + 1).item()
        tc.synchronize()
        return value

    ok, value = _step(facts, "op", op)
    facts["op_result"] = value
    facts["op_ok"] = bool(ok and value == 2)
    return facts
