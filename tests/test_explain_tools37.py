"""tools37: a signature that counts only beside a GPU fact (``requires``, docs/dev/KNOWLEDGE.md).

openai-whisper's 'FP16 is not supported on CPU; using FP32 instead' and CTranslate2's 'The compute
type inferred from the saved model is float16, but the target device or backend do not support
efficient float16 computation' are routine on a host with no GPU: read alone they would mislabel
every CPU-only user's log. Where the log shows that an NVIDIA GPU was there or was expected (a GPU
named, nvidia-smi's output, a CUDA device asked for, a CUDA release installed) they name a cause:
torch sees no CUDA (most often a CPU build: dsymbol/decipher#8), and the GPU has no efficient
float16 (CTranslate2 asks for FP16 tensor cores, cc >= 7.0: SYSTRAN/faster-whisper#727).
"""
from __future__ import annotations

import pytest

from stackpeel import knowledge
from stackpeel.knowledge import REQUIRE_FACTS, KnowledgeError

from explain_helpers import codes_of as _codes

WHISPER = ("/usr/lib/python3.10/site-packages/whisper/transcribe.py:114: UserWarning: FP16 is not supported "
           "on CPU; using FP32 instead\n  warnings.warn(\"FP16 is not supported on CPU; using FP32 instead\")")
CT2 = ("[2024-03-06 11:43:38.305] [ctranslate2] [thread 2816] [warning] The compute type inferred from the saved "
       "model is float16, but the target device or backend do not support efficient float16 computation. The "
       "model weights have been automatically converted to use the float32 compute type instead.")
CT2_INT8 = ("[2024-01-18 10:01:47.937] [ctranslate2] [thread 7] [warning] The compute type inferred from the saved "
            "model is int8_float16, but the target device or backend do not support efficient int8_float16 "
            "computation. The model weights have been automatically converted to use the int8_float32 compute "
            "type instead.")

NVIDIA_SMI = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
|-------------------------------+----------------------+----------------------+
|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |
+-------------------------------+----------------------+----------------------+"""

#: what shows that a GPU was there or was expected, each alone beside the warning
GPU_FACTS = [
    "So I have a 3060 and a core i9-12900kf and when im using it im getting the error:",
    "I have an RTX 4090 but it is very slow",
    "GPU: NVIDIA GeForce RTX 3080",
    "running on a Tesla T4 in the cloud",
    "model = whisper.load_model('base', device='cuda')",
    "whisper audio.mp3 --device cuda --model medium",
    "CUDA_VISIBLE_DEVICES=0 python transcribe.py",
    "installed: cuda 11.8, cudnn: 9.",
    "I bought my graphics card for this",
    NVIDIA_SMI,
]

#: what does not: a CPU-only host, a CPU asked for, a GPU of another vendor, numbers that are no GPU
NO_GPU_FACTS = [
    "",
    "Running on my laptop (Intel i7, no dedicated graphics).",
    "whisper audio.mp3 --device cpu --model medium",
    "model = WhisperModel('small', device='cpu', compute_type='int8')",
    "I don't have a GPU, this is a CPU-only VPS",
    "AMD Radeon RX 6800 XT, ROCm not installed",
    "Apple M1 Pro, macOS 14",
    "It took 3060 seconds to finish in 2080 runs.",
    "torch==2.1.0+cpu",
]


@pytest.mark.parametrize("fact", GPU_FACTS, ids=range(len(GPU_FACTS)))
def test_whisper_fp16_warning_beside_a_gpu_fact_names_torch_not_seeing_it(fact):
    codes = _codes(f"{fact}\n{WHISPER}\n")
    assert codes[:1] == ["torch-cpu-only-build"], codes


@pytest.mark.parametrize("fact", NO_GPU_FACTS, ids=range(len(NO_GPU_FACTS)))
def test_whisper_fp16_warning_without_a_gpu_fact_is_silent(fact):
    assert _codes(f"{fact}\n{WHISPER}\nTranscribing audio.mp3 ...\n[00:00.000 --> 00:02.000] Hello\n") == []


@pytest.mark.parametrize("fact", GPU_FACTS, ids=range(len(GPU_FACTS)))
@pytest.mark.parametrize("line", [CT2, CT2_INT8], ids=["float16", "int8_float16"])
def test_ctranslate2_float16_warning_beside_a_gpu_fact_names_the_gpu_lacking_float16(fact, line):
    codes = _codes(f"{fact}\n{line}\n")
    assert codes[:1] == ["gpu-arch-lacks-dtype"], codes


@pytest.mark.parametrize("fact", NO_GPU_FACTS, ids=range(len(NO_GPU_FACTS)))
def test_ctranslate2_float16_warning_without_a_gpu_fact_is_silent(fact):
    assert _codes(f"{fact}\n{CT2}\n[0.00s -> 2.00s]  Et voila.\n") == []


def test_a_gpu_fact_far_from_the_warning_counts():
    """The GPU named in nvidia-smi's header at the top of a long paste, the warning at its end."""
    filler = "\n".join(f"[{i:02d}.00s -> {i + 1:02d}.00s]  some transcribed words" for i in range(200))
    assert _codes(f"{NVIDIA_SMI}\n{filler}\n{CT2}\n")[:1] == ["gpu-arch-lacks-dtype"]


def test_the_warning_gives_way_to_a_failure_another_line_states():
    """Beside a GPU fact the warning is a fallback: whisper's ffmpeg failure is the cause."""
    text = (f"GPU: NVIDIA GeForce RTX 3060\n{WHISPER}\nTraceback (most recent call last):\n"
            '  File "C:\\app\\transcribe.py", line 5, in <module>\n'
            "FileNotFoundError: [WinError 2] The system cannot find the file specified\n"
            "ffmpeg was not found on PATH\n")
    codes = _codes(text)
    assert "torch-cpu-only-build" not in codes[:1], codes


def test_near_misses_of_the_wording_are_not_read():
    for line in ("FP16 is supported on CUDA; using FP16",
                 "Requested float16 compute type on CPU, use int8 instead",
                 "The compute type was set to float16 by the user"):
        assert _codes(f"GPU: NVIDIA GeForce RTX 3060\n{line}\n") == [], line


# -- the loader: `requires` is validated knowledge data

CODE = {"layer": "torch", "kind": "root", "severity": "blocking", "title": "A", "meaning": "m", "fix": "f"}
GPU_CTX = {"gpu-here": {"pattern": r"\bGeForce\b", "means": "a GPU"}}


def _doc(requires, contexts=None):
    data = {"a-code": {**CODE, "log": [{"id": "a-sig", "patterns": ["Some warning text"], "requires": requires}]}}
    if contexts is not None:
        data["context"] = contexts
    return [("torch.toml", data)]


def test_requires_names_a_shared_context_and_facts():
    kb = knowledge.parse(_doc({"context_name": "gpu-here", "facts": ["gpus", "driver"]}, GPU_CTX))
    req = kb.codes["a-code"].logs[0].requires
    assert (req.context, req.name, req.facts) == (r"\bGeForce\b", "gpu-here", ("gpus", "driver"))


def test_requires_may_be_an_inline_regex_and_a_context_only_requires_reads_is_used():
    kb = knowledge.parse(_doc({"context": r"nvidia-smi"}))
    assert kb.codes["a-code"].logs[0].requires.context == "nvidia-smi"
    knowledge.parse(_doc({"context_name": "gpu-here"}, GPU_CTX))  # no "no refine names it"


@pytest.mark.parametrize("requires, error", [
    ({"context_name": "gpu"}, r"\[a-code\] log #1 \(a-sig\): requires names unknown context 'gpu'"),
    ({"context": "x", "context_name": "gpu-here"}, "requires is "),
    ({}, "requires is "),
    ("GeForce", "requires is "),
    ({"facts": ["gpus"]}, "requires is "),
    ({"context": "(GeForce"}, "bad requires regex"),
    ({"context": "GeForce", "facts": ["gpu"]}, r"requires names unknown fact\(s\) \['gpu'\]"),
    ({"context": "GeForce", "facts": ["gpus", "gpus"]}, "distinct names"),
    ({"context": "GeForce", "facts": "gpus"}, "distinct names"),
    ({"context": "GeForce", "where": "near"}, "requires is "),
])
def test_the_loader_refuses_a_bad_requires(requires, error):
    with pytest.raises(KnowledgeError, match=error):
        knowledge.parse(_doc(requires, GPU_CTX))


def test_the_built_in_requires_name_known_facts_only():
    kb = knowledge.load()
    reqs = [s.requires for c in kb.codes.values() for s in c.logs if s.requires is not None]
    assert {"whisper-fp16-on-cpu", "ctranslate2-float16-converted-to-float32"} <= {
        s.id for c in kb.codes.values() for s in c.logs if s.requires is not None}
    assert all(set(r.facts) <= set(REQUIRE_FACTS) for r in reqs)


# -- item 3: a package that runs only on Linux or macOS, used on native Windows

UVLOOP_PIP = r"""Collecting uvloop==0.19.0
  Using cached uvloop-0.19.0.tar.gz (2.3 MB)
  Installing build dependencies ... done
  Getting requirements to build wheel ... error
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [17 lines of output]
      Traceback (most recent call last):
        File "C:\Users\me\venv\lib\site-packages\pip\_vendor\pyproject_hooks\_in_process\_in_process.py", line 353, in <module>
          main()
        File "C:\Users\me\AppData\Local\Temp\pip-build-env-4k7r52au\overlay\Lib\site-packages\setuptools\build_meta.py", line 317, in run_setup
          exec(code, locals())
        File "<string>", line 8, in <module>
      RuntimeError: uvloop does not support Windows at the moment
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error
"""

VLLM_ASSERT_WINDOWS = r"""(venv) PS C:\Users\me\vllm> pip install -e .
      Traceback (most recent call last):
        File "<string>", line 24, in <module>
      AssertionError: vLLM only supports Linux platform (including WSL).
      [end of output]
  error: subprocess-exited-with-error
"""

VLLM_ASSERT_MAC = """(venv) me@MacBook-Pro ~ % pip install vllm
      Traceback (most recent call last):
        File "<string>", line 24, in <module>
      AssertionError: vLLM only supports Linux platform (including WSL).
  error: subprocess-exited-with-error
"""

VLLM_WARNING = r"""WARNING:setup.py:vLLM only supports Linux platform (including WSL) and MacOS.Building on win32, so vLLM may not be able to run correctly
Successfully installed vllm-0.8.4
(venv) PS C:\work> python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-0.5B
Traceback (most recent call last):
  File "C:\work\venv\Lib\site-packages\vllm\platforms\__init__.py", line 10, in <module>
RuntimeError: Failed to infer device type
"""

FCNTL = r"""Traceback (most recent call last):
  File "C:\Users\me\proj\venv\Scripts\gunicorn.exe\__main__.py", line 4, in <module>
  File "C:\Users\me\proj\venv\Lib\site-packages\gunicorn\app\wsgiapp.py", line 9, in <module>
    from gunicorn.app.base import Application
  File "C:\Users\me\proj\venv\Lib\site-packages\gunicorn\util.py", line 8, in <module>
    import fcntl
ModuleNotFoundError: No module named 'fcntl'
"""

SIGALRM = r"""  File "D:\ml\train.py", line 40, in main
    signal.signal(signal.SIGALRM, handler)
AttributeError: module 'signal' has no attribute 'SIGALRM'
"""

OS_FORK = r"""  File "C:\ml\launch.py", line 12, in spawn
    pid = os.fork()
AttributeError: module 'os' has no attribute 'fork'
"""


@pytest.mark.parametrize("text", [UVLOOP_PIP, VLLM_ASSERT_WINDOWS, VLLM_WARNING, FCNTL, SIGALRM, OS_FORK],
                         ids=["uvloop", "vllm-assert", "vllm-warning", "fcntl", "sigalrm", "os-fork"])
def test_a_posix_only_package_on_native_windows_is_named(text):
    codes = _codes(text)
    assert codes[:1] == ["package-not-on-native-windows"], codes


def test_vllm_old_assertion_on_a_mac_does_not_say_windows():
    assert "package-not-on-native-windows" not in _codes(VLLM_ASSERT_MAC)


def test_vllm_build_warning_alone_is_silent():
    """The warning of a build that goes on names its cause only beside a failure."""
    text = ("WARNING:setup.py:vLLM only supports Linux platform (including WSL) and MacOS.Building on win32, so vLLM "
            "may not be able to run correctly\nSuccessfully installed vllm-0.8.4\n")
    assert "package-not-on-native-windows" not in _codes(text)


@pytest.mark.parametrize("line", [
    "ModuleNotFoundError: No module named 'fcntl_utils'",
    "ModuleNotFoundError: No module named 'pwdlib'",
    "AttributeError: module 'os' has no attribute 'sched_getaffinity'",   # absent on macOS too
    "AttributeError: module 'signal' has no attribute 'SIGINT_HANDLER'",
    "uvloop does support Linux and macOS",
    "vLLM supports Linux platform (including WSL) and MacOS",
    "RuntimeError: uvloop requires Python 3.8 or greater",
])
def test_near_misses_of_the_windows_wordings(line):
    assert "package-not-on-native-windows" not in _codes(f"Traceback (most recent call last):\n  File \"x.py\", line 1\n{line}\n")
