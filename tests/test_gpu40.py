"""gpu40: gpu.nvml reads each GPU's temperature and clock event ("throttle") reasons live and
reports ``gpu-thermal-throttling`` when heat or the power brake slows a GPU now.

The bit values are nvml.h's (NVML API reference, "Clocks Event Reasons"):

    nvmlClocksEventReasonGpuIdle                    0x0000000000000001LL
    nvmlClocksEventReasonApplicationsClocksSetting  0x0000000000000002LL
    nvmlClocksEventReasonSwPowerCap                 0x0000000000000004LL
    nvmlClocksThrottleReasonHwSlowdown              0x0000000000000008LL
    nvmlClocksEventReasonSyncBoost                  0x0000000000000010LL
    nvmlClocksEventReasonSwThermalSlowdown          0x0000000000000020LL
    nvmlClocksThrottleReasonHwThermalSlowdown       0x0000000000000040LL
    nvmlClocksThrottleReasonHwPowerBrakeSlowdown    0x0000000000000080LL
    nvmlClocksEventReasonDisplayClockSetting        0x0000000000000100LL

and nvmlTemperatureThresholds_t: SHUTDOWN 0, SLOWDOWN 1, MEM_MAX 2, GPU_MAX 3.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stackpeel import knowledge
from stackpeel.checks import gpu as gpu_checks
from stackpeel.model import Severity, Status
from test_gpu_layers import (DATA, PROBES_DIR, codes, evaluate, fake_env, load_probe, make_tree,  # noqa: F401
                             run_fake, _nvml_facts)
from test_gpu_layers import fake_libs  # noqa: F401  (the fixture)
from test_explain_patterns import codes as explain_codes

NVML_H = {
    "GPU Idle": 0x1, "Applications Clocks Setting": 0x2, "SW Power Cap": 0x4, "HW Slowdown": 0x8,
    "Sync Boost": 0x10, "SW Thermal Slowdown": 0x20, "HW Thermal Slowdown": 0x40,
    "HW Power Brake Slowdown": 0x80, "Display Clock Setting": 0x100,
}
H100_THRESHOLDS = {"shutdown": 92, "slowdown": 89, "mem_max": 95, "gpu_max": 87}
OK = {"gpu.device_nodes": Status.PASS}


# --- the probe's decoding ------------------------------------------------------------------

def test_bit_table_is_nvml_h():
    gpu = load_probe("gpu")
    assert dict((name, bit) for bit, name in gpu.CLOCK_EVENT_REASONS) == NVML_H
    assert dict(gpu.TEMPERATURE_THRESHOLDS) == {"shutdown": 0, "slowdown": 1, "mem_max": 2, "gpu_max": 3}


@pytest.mark.parametrize("mask, names", [
    (0x0, []),
    (0x1, ["GPU Idle"]),
    (0x6, ["Applications Clocks Setting", "SW Power Cap"]),
    (0x48, ["HW Slowdown", "HW Thermal Slowdown"]),
    (0x88, ["HW Slowdown", "HW Power Brake Slowdown"]),
    (0x1ff, list(NVML_H)),
    (0x20 | 0x400, ["SW Thermal Slowdown", "0x400"]),  # a bit a newer nvml.h may name: kept, in hex
    (1 << 63, ["0x8000000000000000"]),
    (None, None),
])
def test_decode(mask, names):
    assert load_probe("gpu").decode_clock_event_reasons(mask) == names


# --- gpu.nvml's verdict from recorded facts ----------------------------------------------------

def _dev(mask, temp=41, thresholds=None, errors=None, index=0, name="NVIDIA H100 80GB HBM3"):
    gpu = load_probe("gpu")
    return {"index": index, "name": name, "uuid": f"GPU-{index}", "cc": "9.0", "cc_major": 9, "cc_minor": 0,
            "error": None,
            "slowdown": {"temperature_c": temp, "reasons_mask": mask,
                         "reasons_call": None if mask is None else "nvmlDeviceGetCurrentClocksEventReasons",
                         "reasons": gpu.decode_clock_event_reasons(mask),
                         "thresholds_c": dict(H100_THRESHOLDS if thresholds is None else thresholds),
                         "errors": errors or {}}}


def _facts(*devs):
    return _nvml_facts(devices=list(devs), device_count=len(devs))


@pytest.mark.parametrize("mask", [0x0, 0x1, 0x2, 0x4, 0x7, 0x8, 0x10, 0x100, 0x1 | 0x4 | 0x10 | 0x100])
def test_healthy_reasons_pass(mask):
    """Idle, application clocks, the SW power cap, sync boost, the display clock, and HW Slowdown
    alone (P-state changes) are how a healthy GPU runs: no finding."""
    v = evaluate(gpu_checks.Nvml, _facts(_dev(mask, temp=33), _dev(0x1, temp=45, index=1)), {}, OK)
    assert v.status is Status.PASS and not v.findings
    assert "no thermal or power-brake clock slowdown on 2 GPU(s) (33-45 C)" in v.summary


@pytest.mark.parametrize("mask, shown, brake", [
    (0x20, "SW Thermal Slowdown", False),
    (0x40, "HW Thermal Slowdown", False),
    (0x48, "HW Slowdown, HW Thermal Slowdown", False),
    (0x80, "HW Power Brake Slowdown", True),
    (0x88 | 0x4 | 0x1, "HW Slowdown, HW Power Brake Slowdown", True),
])
def test_each_fault_reason_warns(mask, shown, brake):
    v = evaluate(gpu_checks.Nvml, _facts(_dev(0x1, temp=40), _dev(mask, temp=91, index=1)), {}, OK)
    assert v.status is Status.WARN and codes(v) == ["gpu-thermal-throttling"]
    f = v.findings[0]
    assert f.severity is Severity.DEGRADED
    assert f"GPU 1 (NVIDIA H100 80GB HBM3) is slowing its clocks now: {shown} active" in f.message
    assert f"(NVML clock event reasons {mask:#x})" in f.message
    assert ("its temperature is 91 C (the driver's thresholds: max operating 87 C, slowdown 89 C, shutdown 92 C)"
            in f.message)
    assert ("power-brake signal" in f.message) is brake
    assert "SW Power Cap" not in f.message.split("(NVML")[0]  # a cap alone is no fault: not named
    assert f"nvmlDeviceGetCurrentClocksEventReasons(GPU 1): {mask:#x} = " in f.evidence
    assert "nvmlDeviceGetTemperature(GPU 1): 91 C" in f.evidence
    assert "nvidia-smi -q -d TEMPERATURE,PERFORMANCE" in f.remedy.text or any(
        "nvidia-smi -q -d TEMPERATURE,PERFORMANCE" in c.command for c in f.remedy.commands)
    # the other GPU is still summarised as calm
    assert "no thermal or power-brake clock slowdown on 1 GPU(s) (40 C)" in v.summary


def test_fault_with_temperature_and_thresholds_unreadable():
    dev = _dev(0x40, temp=None, thresholds={},
               errors={"nvmlDeviceGetTemperature": {"code": 3, "name": "NVML_ERROR_NOT_SUPPORTED", "message": None}})
    v = evaluate(gpu_checks.Nvml, _facts(dev), {}, OK)
    assert codes(v) == ["gpu-thermal-throttling"]
    assert "its temperature is unknown (NVML_ERROR_NOT_SUPPORTED)." in v.findings[0].message
    assert "<" not in v.findings[0].message


@pytest.mark.parametrize("error, said", [
    ({"code": 3, "name": "NVML_ERROR_NOT_SUPPORTED", "message": "Not Supported",
      "call": "nvmlDeviceGetCurrentClocksThrottleReasons"}, "NVML_ERROR_NOT_SUPPORTED"),
    ({"code": None, "name": "symbol missing", "call": None,
      "message": "nvmlDeviceGetCurrentClocksEventReasons / nvmlDeviceGetCurrentClocksThrottleReasons"},
     "symbol missing"),
    ({"code": 15, "name": "NVML_ERROR_GPU_IS_LOST", "message": "GPU is lost", "call": "x"}, "NVML_ERROR_GPU_IS_LOST"),
])
def test_unreadable_reasons_are_said_not_guessed(error, said):
    dev = _dev(None, errors={"clock_event_reasons": error})
    v = evaluate(gpu_checks.Nvml, _facts(dev), {}, OK)
    assert v.status is Status.PASS and not v.findings
    assert f"clock slowdown reasons could not be read (GPU 0: {said})" in v.summary
    assert "no thermal" not in v.summary


def test_facts_recorded_before_gpu40_read_as_before():
    v = evaluate(gpu_checks.Nvml, _nvml_facts(), {}, OK)
    assert v.status is Status.PASS and "slowdown" not in v.summary and "clock" not in v.summary


def test_code_lives_in_the_gpu_layer_with_its_wording():
    spec = knowledge.get("gpu-thermal-throttling")
    assert spec.layer == "gpu" and spec.severity is Severity.DEGRADED
    assert spec.title == "The GPU slows itself down because it is too hot"
    assert "gpu-thermal-throttling" in gpu_checks.Nvml.codes
    here = Path(gpu_checks.__file__).parents[1] / "knowledge"
    assert "[gpu-thermal-throttling]" in (here / "gpu.toml").read_text()
    assert "[gpu-thermal-throttling]" not in (here / "explain_only.toml").read_text()
    assert "[[gpu-thermal-throttling.log]]" in (here / "gpu.toml").read_text()


@pytest.mark.parametrize("line", [
    "    HW Thermal Slowdown               : Active",
    "[rank0]:     SW Thermal Slowdown           : Active",
])
def test_nvidia_smi_lines_still_explain(line):
    assert explain_codes("nvidia-smi -q\n    Clocks Event Reasons\n" + line)[:1] == ["gpu-thermal-throttling"]


@pytest.mark.parametrize("line", [
    "    HW Thermal Slowdown               : Not Active",
    "    SW Power Cap                      : Active",
    "    HW Power Brake Slowdown           : Not Active",
])
def test_nvidia_smi_healthy_lines_do_not(line):
    assert "gpu-thermal-throttling" not in explain_codes("nvidia-smi -q\n    Clocks Event Reasons\n" + line)


# --- the probe through ctypes, on the fake NVML ---------------------------------------------

@pytest.mark.parametrize("reasons, temp, code", [(None, None, None), ("0x48", "93", "gpu-thermal-throttling"),
                                                 ("0x4", None, None)])
def test_probe_end_to_end(tmp_path, fake_libs, clean_env, reasons, temp, code):  # noqa: F811
    """The real probe in a child, its answer validated against the declared shape by the runner."""
    extra = {k: v for k, v in (("FAKE_NVML_CLOCK_REASONS", reasons), ("FAKE_NVML_TEMP", temp)) if v is not None}
    report = run_fake(make_tree(tmp_path / "root"), fake_env(clean_env, fake_libs["good"], **extra))
    r = report.result("gpu.nvml")
    slow = r.facts["devices"][0]["slowdown"]
    assert slow["reasons_call"] == "nvmlDeviceGetCurrentClocksEventReasons"
    assert slow["reasons_mask"] == int(reasons or "0x1", 16) and slow["thresholds_c"] == H100_THRESHOLDS
    assert slow["temperature_c"] == int(temp or 34)
    assert [f.code for f in r.findings] == ([code] if code else [])
    assert r.status is (Status.WARN if code else Status.PASS)


def _probe_with(tmp_path, defines, env):
    """nvml_facts on a fake NVML built with ``defines``, in a fresh interpreter."""
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the fake NVML")
    lib = tmp_path / "libnvidia-ml.so.1"
    subprocess.run(["gcc", "-Wall", "-shared", "-fPIC", *defines, "-o", str(lib), str(DATA / "fake_nvml.c")],
                   check=True, capture_output=True, timeout=60)
    code = ("import importlib.util, json, sys\n"
            "for mod in ('_common', 'gpu'):\n"
            "    spec = importlib.util.spec_from_file_location('_stackpeel_probe_' + mod, sys.argv[1] + '/' + mod + '.py')\n"
            "    m = importlib.util.module_from_spec(spec); sys.modules['_stackpeel_probe_' + mod] = m\n"
            "    spec.loader.exec_module(m)\n"
            "print(json.dumps(m.nvml_facts(sys.argv[2])))\n")
    out = subprocess.run([sys.executable, "-c", code, str(PROBES_DIR), str(lib)], capture_output=True, text=True,
                         timeout=60, env=dict(env, FAKE_GPUS="NVIDIA H100 80GB HBM3:9.0;NVIDIA H100 80GB HBM3:9.0"))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_probe_falls_back_to_the_pre_r535_name(tmp_path, clean_env):
    facts = _probe_with(tmp_path, ["-DFAKE_NVML_OLD_CLOCKS"], dict(clean_env, FAKE_NVML_CLOCK_REASONS="0x20"))
    for dev in facts["devices"]:
        assert dev["slowdown"]["reasons_call"] == "nvmlDeviceGetCurrentClocksThrottleReasons"
        assert dev["slowdown"]["reasons"] == ["SW Thermal Slowdown"] and not dev["slowdown"]["errors"]
    v = evaluate(gpu_checks.Nvml, facts, {}, OK)
    assert codes(v) == ["gpu-thermal-throttling", "gpu-thermal-throttling"]


def test_probe_without_either_symbol_records_it(tmp_path, clean_env):
    facts = _probe_with(tmp_path, ["-DFAKE_NVML_NO_CLOCKS"], dict(clean_env, FAKE_NVML_THRESHOLDS="0"))
    slow = facts["devices"][0]["slowdown"]
    assert slow["reasons_mask"] is None and slow["reasons_call"] is None and slow["thresholds_c"] == {}
    assert slow["errors"]["clock_event_reasons"]["name"] == "symbol missing"
    assert slow["temperature_c"] == 34
    v = evaluate(gpu_checks.Nvml, facts, {}, OK)
    assert v.status is Status.PASS and "clock slowdown reasons could not be read (GPU 0, 1: symbol missing)" in v.summary


def test_probe_when_the_call_fails(tmp_path, clean_env):
    facts = _probe_with(tmp_path, [], dict(clean_env, FAKE_NVML_CLOCK_REASONS="-", FAKE_NVML_TEMP="-1"))
    slow = facts["devices"][0]["slowdown"]
    assert slow["reasons_mask"] is None and slow["temperature_c"] is None
    assert slow["errors"]["clock_event_reasons"]["name"] == "NVML_ERROR_NOT_SUPPORTED"
    assert slow["errors"]["nvmlDeviceGetTemperature"]["name"] == "NVML_ERROR_NOT_SUPPORTED"
    v = evaluate(gpu_checks.Nvml, facts, {}, OK)
    assert "clock slowdown reasons could not be read (GPU 0, 1: NVML_ERROR_NOT_SUPPORTED)" in v.summary
