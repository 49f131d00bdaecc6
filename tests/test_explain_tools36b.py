"""tools36b (docs/dev/tools36b.md): what a log says about where it ran ranks or rules out causes.

1. The OS a log plainly comes from (``[host.NAME]`` signs) rules out, among guesses and base
   rates only, the causes whose ``platforms`` leave it out; a cause a line states stays.
2. A bare ``CUDA_ERROR_NO_BINARY_FOR_GPU`` / ``no kernel image`` in a log that names another
   framework anywhere and torch nowhere is that framework's build (a refine's ``far_unless``).
"""

from __future__ import annotations

import pytest

from stackpeel import knowledge
from stackpeel.explain import explain_text, host
from stackpeel.explain.knowledge import load
from stackpeel.explain.parser import scan_text as parse_text
from stackpeel.knowledge import KnowledgeError

#: the base rates (priors.json) are what item 1 rules out: keep them on (tests/conftest.py)
USES_PRIORS = True

GAP = "\n".join(f"step {i}: ok" for i in range(8))

# torch/utils/data/dataloader.py _try_get_data: RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly')
WORKER_EXITED = "RuntimeError: DataLoader worker (pid(s) 16732) exited unexpectedly"
WIN_FRAME = ('  File "C:\\ProgramData\\Anaconda3\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", '
             "line 774, in _try_get_data")
WIN_FRAME_SLASH = '  File "C:/CP/DL_REPOSITORIES/BASNet/basnet_test.py", line 76, in <module>'
LINUX_FRAME = ('  File "/home/user/miniconda3/lib/python3.10/site-packages/torch/utils/data/dataloader.py", '
               "line 774, in _try_get_data")


def _tb(*frames: str, exc: str = WORKER_EXITED) -> str:
    return "\n".join(["Traceback (most recent call last):", *frames, exc])


def _expl(text):
    return explain_text(text)


def _codes(text):
    return [c.code for c in _expl(text).candidates]


# ---------------------------------------------------------------------------------- 1. the host

@pytest.mark.parametrize("text, platform", [
    (_tb(WIN_FRAME), "windows"),
    (_tb(WIN_FRAME_SLASH), "windows"),
    (f"OSError: [WinError 126] The specified module could not be found. Error loading "
     f"\"caffe2_nvrtc.dll\"\n{WORKER_EXITED}", "windows"),
    (f"PS C:\\Users\\me\\proj> python train.py\n{GAP}\n{WORKER_EXITED}", "windows"),
    (_tb(LINUX_FRAME), "linux"),
    (f"ImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version not found\n{WORKER_EXITED}", "linux"),
    (f"{WORKER_EXITED}\nOS: Ubuntu 22.04.3 LTS (x86_64)", "linux"),
    (_tb('  File "/Users/me/proj/train.py", line 3, in <module>'), "macos"),
    (f"{WORKER_EXITED}\nOS: macOS 14.2 (arm64)", "macos"),
    (f"(base) me@PC:/mnt/c/Users/me/proj$ python train.py\n{WORKER_EXITED}", "linux"),   # WSL is Linux
])
def test_host_signs_name_the_platform(text, platform):
    got = host.platform_of(parse_text(text), load())
    assert got is not None and got[0] == platform


@pytest.mark.parametrize("text", [
    WORKER_EXITED,                                                      # nothing says where
    _tb(WIN_FRAME, LINUX_FRAME),                                        # two OSes: decides nothing
    f"PS C:\\Users\\me> docker run --gpus all img python train.py\n{WORKER_EXITED}",   # a Linux container
    f"see https://github.com/pytorch/pytorch/issues/1 for {WORKER_EXITED}",            # a URL's letters
    f"ERROR:/tmp is full\nStep 1:/ ok\n{WORKER_EXITED}",                 # a word before ':/' is no drive
    f"{WORKER_EXITED}\nthe docs say C++ is needed",
])
def test_no_single_platform(text):
    assert host.platform_of(parse_text(text), load()) is None


def test_windows_log_gets_no_dev_shm_base_rate():
    # basnet-32 (harv36c): the prior of dataloader-worker-exited is /dev/shm, which Windows lacks
    expl = _expl(_tb(WIN_FRAME_SLASH, WIN_FRAME))
    assert expl.candidates[0].code == "dataloader-worker-exited"
    assert "dataloader-shm-too-small" not in expl.candidates[0].could_be
    assert any("comes from windows" in n and "dataloader-shm-too-small" in n for n in expl.notes)


def test_linux_log_keeps_the_base_rate():
    expl = _expl(_tb(LINUX_FRAME))
    assert expl.candidates[0].code == "dataloader-shm-too-small"
    assert expl.candidates[0].basis == "prior"
    assert not any("comes from" in n for n in expl.notes)


def test_a_log_that_says_nothing_keeps_the_base_rate():
    assert _codes(WORKER_EXITED)[0] == "dataloader-shm-too-small"


def test_a_stated_cause_is_never_dropped():
    # NCCL's own line names /dev/shm: a Windows path elsewhere does not overrule the log's line
    text = (f"{WIN_FRAME}\nNCCL WARN Error: failed to extend /dev/shm/nccl-abc to 9637892 bytes\n"
            "torch.distributed.DistBackendError: NCCL error: unhandled system error")
    assert _codes(text)[0] == "nccl-shm-too-small"


def test_a_windows_only_cause_is_not_guessed_on_linux():
    # the page-file code is Windows-only: ruled out of guesses on a plain Linux log
    kb = load()
    assert host.ruled_out("windows-pagefile-too-small", "linux", kb)
    assert not host.ruled_out("windows-pagefile-too-small", "windows", kb)
    assert host.ruled_out("dataloader-shm-too-small", "windows", kb)
    assert host.ruled_out("apple-mps-unavailable", "linux", kb)
    assert not host.ruled_out("dataloader-worker-exited", "windows", kb)     # no platforms: any OS
    assert not host.ruled_out("dataloader-shm-too-small", None, kb)


def _doc(table_name, table):
    base = {"a-code": {"layer": "system", "kind": "root", "severity": "blocking", "title": "A",
                       "meaning": "m", "fix": "f"}}
    base[table_name] = table
    return [("system.toml", base)]


@pytest.mark.parametrize("doc, message", [
    (_doc("host", {"win": {"platform": "dos", "pattern": "x", "means": "m"}}), "platform must be one of"),
    (_doc("host", {"win": {"platform": "windows", "pattern": "(", "means": "m"}}), "bad regex"),
    (_doc("host", {"win": {"platform": "windows", "pattern": "x"}}), "a host sign is"),
    (_doc("host", {"Win": {"platform": "windows", "pattern": "x", "means": "m"}}), "lower-case words"),
])
def test_host_tables_are_validated(doc, message):
    with pytest.raises(KnowledgeError, match=message):
        knowledge.parse(doc)


@pytest.mark.parametrize("platforms", [["linux", "linux"], ["bsd"], ["linux", "windows", "macos"], "linux"])
def test_platforms_are_validated(platforms):
    doc = _doc("b-code", {"layer": "system", "kind": "root", "severity": "blocking", "title": "B",
                          "meaning": "m", "fix": "f", "platforms": platforms})
    with pytest.raises(KnowledgeError, match="platforms"):
        knowledge.parse(doc)


def test_host_table_is_no_code():
    kb = knowledge.load()
    assert "host" not in kb.codes
    assert {h.platform for h in kb.hosts.values()} == set(knowledge.PLATFORMS)
    assert kb.get("dataloader-shm-too-small").platforms == ("linux",)


# ----------------------------------------------------------------- 2. no kernel image beyond torch

NO_BINARY = "CUDA_ERROR_NO_BINARY_FOR_GPU"
NO_IMAGE = "error: no kernel image is available for execution on the device"


def _far(frame: str, last: str) -> str:
    """A traceback through ``frame``, a run of ordinary lines, then the bare error far below it."""
    return f"Traceback (most recent call last):\n{frame}\nValueError: retrying\n{GAP}\n{last}"


@pytest.mark.parametrize("text", [
    _far('  File "/opt/venv/lib/python3.11/site-packages/cupy/_core/core.pyx", line 1', f"ERROR {NO_BINARY}"),
    _far('  File "/home/u/.local/lib/python3.10/site-packages/numba/cuda/dispatcher.py", line 5', NO_BINARY),
    _far('  File "/home/u/venv/lib/python3.9/site-packages/tensorflow/python/eager/execute.py", line 2',
         NO_IMAGE),
    _far('  File "/home/u/venv/lib/python3.11/site-packages/jax/_src/dispatch.py", line 9', NO_IMAGE),
    f"Error: called `Result::unwrap()` on an `Err` value: cust error\n{GAP}\n{NO_BINARY}",
    f"pygpu.gpuarray.GpuArrayException: {NO_BINARY}",
])
def test_no_kernel_image_without_torch_is_the_frameworks(text):
    cands = _expl(text).candidates
    assert cands[0].code == "framework-gpu-arch-unsupported"
    assert "torch-arch-not-supported" not in [c.code for c in cands]


@pytest.mark.parametrize("text", [
    NO_BINARY,                                                               # no framework named
    f"import cupy\nimport torch\n{GAP}\nRuntimeError: CUDA {NO_IMAGE}",      # torch is there
    f"numba 0.58\n{GAP}\n  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1\n"
    f"RuntimeError: CUDA {NO_IMAGE}",                                         # torch's frame
    f"cupy is installed\n{GAP}\nRuntimeError: CUDA {NO_IMAGE}\nCUDA kernel errors might be asynchronously "
    "reported. Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    f"the custom kernel\n{GAP}\n{NO_BINARY}",                                # 'custom' is no cust
])
def test_no_kernel_image_with_torch_or_no_framework_stays_torchs(text):
    assert _codes(text)[0] == "torch-arch-not-supported"


def test_a_stated_cause_outranks_the_far_framework_reading():
    # nvcc's own refusal is stated; the far framework reading is an inference
    text = f"import cupy\n{GAP}\n{NO_BINARY}\nnvcc fatal   : Unsupported gpu architecture 'compute_89'"
    assert _codes(text)[0] != "framework-gpu-arch-unsupported"


def test_far_unless_is_validated():
    bad = {"layer": "system", "kind": "root", "severity": "blocking", "title": "B", "meaning": "m", "fix": "f",
           "log": [{"id": "b-sig", "patterns": ["Something broke"], "refine": [
               {"context": "x", "code": "a-code", "far_unless": "("}]}]}
    with pytest.raises(KnowledgeError, match="far_unless"):
        knowledge.parse(_doc("b-code", bad))
    both = dict(bad, log=[{"id": "b-sig", "patterns": ["Something broke"], "refine": [
        {"context": "x", "code": "a-code", "far_unless": "y", "local": True}]}])
    with pytest.raises(KnowledgeError, match="refine entries"):
        knowledge.parse(_doc("b-code", both))
