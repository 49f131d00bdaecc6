"""Session 30's merge-review findings, each with the text that showed it.

DeepSpeed's newer CUTLASS wordings (op_builder/evoformer_attn.py; builder.warning keeps only the
last warning in the error jit_load raises), a linker's ``error: undefined symbol: nvml...`` (a
missing ``-lnvidia-ml``, not an old driver), NCCL's numbered ``Cuda failure 2 'out of memory'``
(checks.h CUCHECK), and the fix prose of two codes against transformers 5's arguments."""
import pytest

from stackpeel.explain import explain_text
from stackpeel.knowledge import load as load_knowledge

from test_explain_patterns import codes

JIT = ("RuntimeError: Unable to JIT load the evoformer_attn op due to it not being compatible due to "
       "hardware/software issue. ")


@pytest.mark.parametrize("tail", [
    "Possible values are: a path, DS_IGNORE_CUTLASS_DETECTION and DS_USE_CUTLASS_PYTHON_BINDINGS",
    "Please specify CUTLASS location directory as environment variable CUTLASS_PATH",
    "Please specify the CUTLASS repo directory as environment variable $CUTLASS_PATH",
    "Please use CUTLASS version >= 3.1.0",
])
def test_every_deepspeed_cutlass_wording_inside_the_load_error_is_read(tail):
    assert codes(JIT + tail)[:1] == ["deepspeed-cutlass-missing"]
    # a [rank0]: prefix and a quote keep it
    assert codes("[rank0]: " + JIT + tail)[:1] == ["deepspeed-cutlass-missing"]
    assert codes("> `" + JIT + tail + "`")[:1] == ["deepspeed-cutlass-missing"]


def test_the_bare_start_up_notice_stays_quiet():
    assert "deepspeed-cutlass-missing" not in codes(
        " [WARNING]  Please specify CUTLASS location directory as environment variable CUTLASS_PATH\n")


@pytest.mark.parametrize("line", [
    "ld.lld: error: undefined symbol: nvmlInit_v2\nclang: error: linker command failed with exit code 1",
    "mold: error: undefined symbol: nvmlDeviceGetHandleByIndex_v2",
])
def test_a_linkers_undefined_nvml_symbol_is_not_an_old_driver(line):
    assert "nvml-function-missing-in-driver" not in codes(line)


def test_the_loaders_undefined_nvml_symbol_still_is():
    assert codes("./nvidia-device-plugin: symbol lookup error: ./nvidia-device-plugin: "
                 "undefined symbol: nvmlDeviceGetPciInfo_v3")[:1] == ["nvml-function-missing-in-driver"]


@pytest.mark.parametrize("line", [
    "gpu1:2:2 [0] transport/nvls.cc:160 NCCL WARN Cuda failure 2 'out of memory'",
    "gpu1:2:2 [0] transport/nvls.cc:160 NCCL WARN Cuda failure 'out of memory'",
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error "
    "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nLast error:\nCuda failure 2 'out of memory'",
])
def test_nccls_numbered_out_of_memory_names_its_cause(line):
    assert codes(line)[:1] == ["gpu-out-of-memory"]


def test_an_unnamed_cuda_failure_in_nccl_is_read_by_the_unhandled_cuda_error_entry():
    first = explain_text("gpu1:2:2 [0] init.cc:100 NCCL WARN Cuda failure 1 'invalid argument'\n").candidates[0]
    assert first.code == "nccl-error"
    assert first.evidence[0].entry == "nccl-result-unhandled-cuda-error"
    assert "nccl-p2p-blocked" in first.could_be


@pytest.mark.parametrize("code", ["device-map-offload-folder-missing", "fp16-nan-output"])
def test_fix_prose_uses_the_arguments_transformers_5_takes(code):
    fix = load_knowledge().codes[code].fix
    assert "dtype=torch." in fix
    assert "`torch_dtype=torch" not in fix
    assert "`load_in_4bit`" not in fix
