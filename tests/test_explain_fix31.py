"""Session 31's fixes (fix31), each with the text that shows it."""
import json

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load as load_explain
from stackpeel.knowledge import load as load_knowledge

from test_explain_patterns import codes


# -- 2. a signature's own ranked causes come before the code-level ones another signature brings

CUDA_FAILURE = "gpu1:2:2 [0] init.cc:100 NCCL WARN Cuda failure 1 'invalid argument'\n"


def test_a_signatures_own_causes_come_first_in_the_json():
    kb = load_explain()
    own = kb.by_id("nccl-result-unhandled-cuda-error").could_be
    general = load_knowledge().codes["nccl-error"].caused_by
    assert set(own) != set(general)
    # the generic NCCL WARN signature reads the same line with the code's caused_by
    assert {e.id for e in kb.match_line(CUDA_FAILURE.strip())} >= {"nccl-result-unhandled-cuda-error",
                                                                   "nccl-error-generic"}
    first = json.loads(json.dumps(explain_text(CUDA_FAILURE).to_dict()))["candidates"][0]
    assert first["code"] == "nccl-error"
    assert first["could_be"][:len(own)] == list(own)
    # the code-level causes still follow (a line can be misread), /dev/shm among them
    assert "nccl-shm-too-small" in first["could_be"][len(own):]


def test_every_entry_with_its_own_list_leads_with_it():
    # the system-error result's own causes (shm, sockets, memlock, InfiniBand) lead, in its order
    kb = load_explain()
    own = kb.by_id("nccl-result-system-error").could_be
    line = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system "
            "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n")
    nccl = [c for c in explain_text(line).candidates if c.code == "nccl-error"][0]
    assert nccl.could_be[:len(own)] == own


# -- 1. one signature reads the loader's `undefined symbol: nvml...`, with or without the library's path

@pytest.mark.parametrize("line", [
    "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: "
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "./nvidia-device-plugin: symbol lookup error: ./nvidia-device-plugin: undefined symbol: nvmlDeviceGetPciInfo_v3",
])
def test_one_signature_reads_an_undefined_nvml_symbol(line):
    ids = [e.id for e in load_explain().match_line(line) if "nvml-function-missing-in-driver" in e.codes]
    assert ids == ["nvml-symbol-undefined"]
    assert codes(line)[:1] == ["nvml-function-missing-in-driver"]


def test_pynvmls_own_error_is_still_read():
    line = "pynvml.nvml.NVMLError_FunctionNotFound: Function Not Found"
    assert [e.id for e in load_explain().match_line(line)] == ["pynvml-function-not-found"]
    assert codes(line)[:1] == ["nvml-function-missing-in-driver"]


# -- 3. a linker's undefined NVML symbol is a link line without -lnvidia-ml; the loader's is an old driver

@pytest.mark.parametrize("log", [
    # lld (ELF/Relocations.cpp reportUndefinedSymbol), as clang drives it
    "ld.lld: error: undefined symbol: nvmlInit_v2\n>>> referenced by main.c:12\n>>>               main.o:(main)\n"
    "clang: error: linker command failed with exit code 1 (use -v to see invocation)\n",
    "ld.lld: warning: undefined symbol: nvmlDeviceGetCount_v2\n>>> referenced by probe.c\n",
    # mold
    "mold: error: undefined symbol: nvmlDeviceGetHandleByIndex_v2\n>>> referenced by main.o\n",
    # GNU ld (bfd ldmain.c undefined_symbol) and gold
    "/usr/bin/ld: main.o: in function `main':\nmain.c:(.text+0x1a): undefined reference to `nvmlInit_v2'\n"
    "collect2: error: ld returned 1 exit status\n",
    "/usr/bin/ld.gold: error: main.o: undefined reference to 'nvmlShutdown'\n",
    # MSVC link.exe
    "main.obj : error LNK2019: unresolved external symbol nvmlInit_v2 referenced in function main\n",
    "gpu.obj : error LNK2001: unresolved external symbol __imp_nvmlDeviceGetCount_v2\n",
    # -lnvidia-ml on the line, no libnvidia-ml.so to find
    "/usr/bin/ld: cannot find -lnvidia-ml: No such file or directory\ncollect2: error: ld returned 1 exit status\n",
    "ld.lld: error: unable to find library -lnvidia-ml\n",
])
def test_a_linkers_nvml_failure_is_a_missing_link_library(log):
    got = codes(log)
    assert got[:1] == ["nvml-not-linked"], got
    assert "nvml-function-missing-in-driver" not in got


@pytest.mark.parametrize("log", [
    "./nvidia-device-plugin: symbol lookup error: ./nvidia-device-plugin: undefined symbol: nvmlDeviceGetPciInfo_v3\n",
    "AttributeError: /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: undefined symbol: nvmlDeviceGetMemoryInfo_v2\n",
])
def test_the_loaders_undefined_nvml_symbol_keeps_the_old_driver_reading(log):
    got = codes(log)
    assert got[:1] == ["nvml-function-missing-in-driver"], got
    assert "nvml-not-linked" not in got


def test_nvml_not_linked_has_a_fix_and_is_explain_only():
    code = load_knowledge().codes["nvml-not-linked"]
    assert "-lnvidia-ml" in code.fix and "stubs" in code.fix
    assert code.file.endswith("explain_only.toml")


# -- 5. Windows exit statuses printed bare: every shape read by name; a cause only where the status gives one

from stackpeel.explain import numbers  # noqa: E402

SHAPES = ["Process finished with exit code {}", "error: process exited with code {}", "Command returned {}",
          "subprocess.CalledProcessError: Command 'x.exe' returned non-zero exit status {}."]
#: (forms of one status, the name ntstatus.h or vcruntime's ehdata.h gives it)
STATUSES = [
    (("0xC0000005", "-1073741819", "3221225477"), "STATUS_ACCESS_VIOLATION"),
    (("0xC0000409", "-1073740791", "3221226505"), "STATUS_STACK_BUFFER_OVERRUN"),
    (("0xC000001D", "-1073741795", "3221225501"), "STATUS_ILLEGAL_INSTRUCTION"),
    (("0xe06d7363", "0xE06D7363", "-529697949", "3765269347"), "EH_EXCEPTION_NUMBER"),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("forms, name", STATUSES, ids=[s[1] for s in STATUSES])
def test_every_shape_of_a_windows_exit_status_is_read_by_name(shape, forms, name):
    for form in forms:
        line = shape.format(form)
        assert name in numbers.read_numbers(line), line
        assert explain_text(line + "\n").has_errors, line


def test_msvcs_cxx_exception_code_is_named_for_what_it_is_not_an_ntstatus():
    line = numbers.read_numbers("error: process exited with code 0xE06D7363")
    assert "[EH_EXCEPTION_NUMBER: an uncaught C++ exception (Microsoft C++ runtime), not an NTSTATUS]" in line
    assert "STATUS_" not in line


@pytest.mark.parametrize("form", ["0xE06D7363", "-529697949", "3765269347"])
def test_an_uncaught_cxx_exception_is_named_and_its_cause_left_unknown(form):
    cands = explain_text(f"Process finished with exit code {form}\n").candidates
    # the symptom itself first, no cause stated or guessed: the causes it can have are its could_be
    assert [c.code for c in cands] == ["msvc-cxx-exception-uncaught"]
    assert (cands[0].kind, cands[0].confidence) == ("symptom", "symptom")
    assert cands[0].could_be[:1] == ("windows-pagefile-too-small",)


@pytest.mark.parametrize("form", ["0xC000001D", "-1073741795", "3221225501"])
def test_an_illegal_instruction_status_names_the_cpu_cause(form):
    for shape in SHAPES:
        assert codes(shape.format(form) + "\n")[:1] == ["cpu-instruction-set-unsupported"]


@pytest.mark.parametrize("line", [
    "the query returned 123456789 rows",   # nine digits, positive, below 0xC0000000: a count
    "cudaMemGetInfo returned 2147483648",  # below 0xC0000000
    "returned -12",                         # a small negative: no Windows status
])
def test_a_bare_returned_number_that_no_windows_status_can_be_stays(line):
    assert "STATUS_" not in numbers.read_numbers(line) and "EH_EXCEPTION" not in numbers.read_numbers(line)
