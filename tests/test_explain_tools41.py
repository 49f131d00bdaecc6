"""tools41: more error-line shapes in their programs' own formats, versions paired only where no
sentence of the log says otherwise, and three start-up notices that are no failure.

1. Neovim's ``[Process exited 1]``, systemd's ``status=1/FAILURE`` with its ``code=`` cut off,
   systemd-coredump's ``Process N (python3) of user N dumped core.``, ``ERR: ``/``ERR! `` tags (and
   ``[ERR]``, whose shape the line gate never let through) are error lines: at least *Unknown
   error* with a fingerprint. The other shapes of the brief (JetBrains' ``Process finished with
   exit code 1``, Compose's ``exited with code 139``, systemd's ``Main process exited``, the kernel's
   ``segfault at``, Kubernetes' ``Back-off``/``CrashLoopBackOff``/``OOMKilled``/``Exit Code: 137``,
   docker's ``Error response from daemon:``) already were; they are pinned here. Healthy near-misses
   stay silent.
2. ``combinations.contradicted_pairing``: a known-bad combination whose versions come from different
   sentences is dropped where the sentence one of them was read from states another value of the
   other ("It installed pytorch 2.4" ... "pip install torch==2.3.1 torchvision==0.18.1"). The reader
   ends a version at a sentence's period ("pytorch 2.4.") and reads no quantity ("torch  1.5 GB").
3. transformers' "PyTorch was not found. Models won't be available" / "None of PyTorch, TensorFlow
   >= 2.0, or Flax have been found" is a warning-level catch-all that needs a line using what torch
   provides (either wording alone is no failure: a warning signature's own line is not a possible
   failure beside itself, lead's fix c472f60c); a warning signature's hit no longer hides the log's
   other possible failures; TensorFlow's dso_loader line for
   TF-TRT's libnvinfer stays held back; onnxruntime's "Removing initializer" and "no shape specified"
   warnings stay no failure.
docs/dev/tools41.md.
"""
from __future__ import annotations

import pytest

from stackpeel import combinations
from stackpeel.explain.parser import error_shape, suspect_shape

from explain_helpers import answer, codes, silent


#: a healthy run's lines around the line under test (they must not decide anything)
AROUND = "epoch 1/3 loss 0.412\n{}\nepoch 2/3 loss 0.377\n"

# ----------------------------------------------------------------------------- 1. error-line shapes

#: new in tools41: silent before
NEW_ERROR_LINES = [
    # Neovim's :terminal (src/nvim/channel.c channel_process_exit_cb: "\r\n[Process exited %d]")
    "[Process exited 1]",
    "[Process exited 139]",
    # systemd's exit status with its "code=" cut off (a wrap, a paste)
    "status=1/FAILURE",
    "ExecStart=/usr/bin/python3 train.py (status=1/FAILURE)",
    "   Process: 4321 ExecStartPre=/usr/bin/nvidia-smi (status=203/EXEC)",
    # systemd-coredump (src/coredump/coredump.c)
    "Process 4321 (python3) of user 1000 dumped core.",
    "Dec 07 10:00:01 gpu1 systemd-coredump[4567]: Process 4321 (python3) of user 1000 dumped core.",
    # the short tags
    "ERR: invalid model path /models/x.gguf",
    "ERR! model path invalid",
    "gyp ERR! build error",
    "[ERR] tensor shapes differ",
]

#: the brief's other shapes, already error lines before tools41 (pinned)
PINNED_ERROR_LINES = [
    "Process finished with exit code 1",
    "Process finished with exit code -1073741819 (0xC0000005)",
    "exited with code 1",
    "train-1 exited with code 139",
    "Main process exited, code=exited, status=1/FAILURE",
    "train.service: Main process exited, code=exited, status=1/FAILURE",
    "kernel: python3[12345]: segfault at 0 ip 00007f1234567890 sp 00007ffd12345678 error 4 in "
    "libcuda.so.1[7f1234000000+1000000]",
    "  Warning  BackOff    2m (x5 over 3m)  kubelet  Back-off restarting failed container train in pod "
    "train-0_default(abc)",
    "train-0   0/1     CrashLoopBackOff   5 (2m ago)   10m",
    "      Reason:       OOMKilled",
    "      Exit Code:    137",
    "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].",
    "Error response from daemon: No such container: abc",
]


@pytest.mark.parametrize("line", NEW_ERROR_LINES + PINNED_ERROR_LINES)
def test_error_line_is_not_silent(line):
    for text in (line + "\n", AROUND.format(line)):
        d = answer(text)
        assert d["exit_code"] != 0, text
        assert d["candidates"] or d["n_unexplained"], text


@pytest.mark.parametrize("line", NEW_ERROR_LINES)
def test_new_error_line_has_a_shape_and_a_fingerprint(line):
    assert error_shape(line.split("kernel: ")[-1]) is not None
    d = answer(AROUND.format(line))
    assert d["candidates"] or d["fingerprint"], line


@pytest.mark.parametrize("line", ["      Reason:       OOMKilled", "      Exit Code:    137",
                                  "train-1 exited with code 137"])
def test_oom_shapes_name_the_oom_killer(line):
    assert "host-oom-killed" in codes(AROUND.format(line))


HEALTHY_LINES = [
    "[Process exited 0]",
    "[Process completed]",
    "Process finished with exit code 0",
    "app_1 exited with code 0",
    " Main PID: 1234 (code=exited, status=0/SUCCESS)",
    "status=0/SUCCESS",
    "      Exit Code:    0",
    "      Reason:       Completed",
    "    Last State:     Terminated",
    "ERR: 0",
    "ERR: none",
    "ERR: ",
    "STDERR: loading model weights",
    "ERRATA: see page 3",
    "gyp info ok",
    "--status=1/FAILURE is what the unit file's test expects",
]


@pytest.mark.parametrize("line", HEALTHY_LINES)
def test_healthy_near_miss_stays_silent(line):
    assert silent(AROUND.format(line)), line


def test_err_tag_only_at_a_word_start():
    assert error_shape("STDERR: x") is None
    assert error_shape("ERR: x") == "level"
    assert error_shape("  [rank0] ERR: x") == "level"


# ----------------------------------------------------------------------------- 2. versions paired across sentences

def versions(text: str) -> dict:
    return dict(combinations.facts_from_text(text).versions)


@pytest.mark.parametrize("line,want", [
    # collect_env (torch/utils/collect_env.py)
    ("PyTorch version: 2.1.0+cu121", {"torch": "2.1.0+cu121", "cuda": "12.1"}),
    ("CUDA used to build PyTorch: 12.1", {"cuda": "12.1"}),
    ("[pip3] torch==2.1.0", {"torch": "2.1.0"}),
    ("[pip3] torchvision==0.16.0+cu121", {"torchvision": "0.16.0+cu121"}),
    ("[conda] pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch",
     {"torch": "2.1.0", "cuda": "12.1"}),
    # the nvidia-smi header
    ("| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
     {"driver": "535.104.05", "cuda_driver": "12.2"}),
    # pip list, conda list
    ("torch                     2.1.0+rocm5.7", {"torch": "2.1.0+rocm5.7"}),
    ("transformers              4.41.2                   pypi_0    pypi", {"transformers": "4.41.2"}),
    # prose: a version ends at a sentence's period; a quantity is no version
    ("It installed pytorch 2.4.", {"torch": "2.4"}),
    ("I use torch 2.1.0+cu121. It fails.", {"torch": "2.1.0+cu121", "cuda": "12.1"}),
    ("I tried torch 2.4.x too", {}),
    ("with torch  1.5 GB of RAM left", {}),
    ("installed vllm  0.5 GiB free", {}),
    ("numpy   1.2 seconds per batch", {}),
])
def test_reader_lines(line, want):
    assert versions(line) == want


def test_segments_of_a_line():
    text = ("pulled torch 2.4 (its aarch64 wheel needs LSE); going back to torch 2.3.1 / torchvision 0.18.1 "
            "works. | numpy 1.26 |")
    assert combinations.segment_versions(text) == [
        {"torch": "2.4"}, {"torch": "2.3.1", "torchvision": "0.18.1"}, {"numpy": "1.26"}]


#: ultralytics/ultralytics#15835 (training side) in short: torch 2.4 in the title, the pair that works
#: on one line
CROSSED = """Raspberry Pi illegal Instruction pytorch 2.4
It installed pytorch 2.4
My detection program failed with an illegal instruction.
I got to work by going back with pip install torch==2.3.1 torchvision==0.18.1
"""


def _combination_notes(d: dict) -> list:
    return [f["rule"] for f in d["facts"]["findings"] if f["rule"].startswith("combination:")]


def test_combination_across_sentences_is_dropped():
    f = combinations.facts_from_text(CROSSED)
    assert f.versions["torch"] == "2.4" and f.versions["torchvision"] == "0.18.1"
    assert combinations.contradicted_pairing(f, ["torchvision", "torch"]) == ("torch", "torchvision", "2.3.1")
    d = answer(CROSSED)
    assert "combination:torchvision-0.18-torch" not in _combination_notes(d)
    assert "torchvision-0.18-torch" not in d["facts"]["combinations"]


def test_combination_stated_together_still_holds():
    text = "Successfully installed torch-2.4.0 torchvision-0.18.1\nRuntimeError: operator torchvision::nms does not exist\n"
    d = answer(text)
    assert "combination:torchvision-0.18-torch" in _combination_notes(d)


def test_combination_from_separate_lines_no_sentence_contradicts():
    # collect_env states each version on its own line: they pair
    text = ("PyTorch version: 2.4.0+cu121\nIs debug build: False\n[pip3] torchvision==0.18.1\n"
            "RuntimeError: operator torchvision::nms does not exist\n")
    f = combinations.facts_from_text(text)
    assert combinations.contradicted_pairing(f, ["torchvision", "torch"]) is None
    assert "combination:torchvision-0.18-torch" in _combination_notes(answer(text))


def test_same_version_spelled_twice_is_no_contradiction():
    text = "torch 2.4 is installed\nI ran pip install torch==2.4.0 torchvision==0.18.1\n"
    f = combinations.facts_from_text(text)
    assert combinations.contradicted_pairing(f, ["torchvision", "torch"]) is None


# ----------------------------------------------------------------------------- 3. notices that are no failure

NOTICE_NEW = ("PyTorch was not found. Models won't be available and only tokenizers, configuration and file/data "
              "utilities can be used.")
NOTICE_OLD = ("None of PyTorch, TensorFlow >= 2.0, or Flax have been found. Models won't be available and only "
              "tokenizers, configuration and file/data utilities can be used.")


def test_transformers_notice_alone_names_nothing():
    # the 4.x wording holds no word of failure: silent
    assert silent(NOTICE_OLD + "\n")
    assert silent(NOTICE_OLD + "\ntokenizer loaded, 32000 tokens\nwrote 1200 shards\n")
    # the newer one says "not found", so by its words a possible failure, never an error line; but its
    # own warning signature (transformers-no-framework-notice) reads it as the notice a tokenizer-only
    # process prints, so alone it is no failure (as every warning signature's line alone, rev32fix,
    # src38, src40) and never torch-not-installed
    assert error_shape(NOTICE_NEW) is None and suspect_shape(NOTICE_NEW) == "suspect"
    for text in (NOTICE_NEW + "\n", NOTICE_NEW + "\ntokenizer loaded, 32000 tokens\nwrote 1200 shards\n"):
        assert silent(text), text


def test_warning_signature_leaves_the_possible_failures_beside_it():
    # tensorrtllm_backend#424's tail (training side): TensorRT-LLM's WARNING records that say
    # something could not be read, and transformers' notice; before tools41 the notice read as
    # torch-not-installed, and its (warning) hit must not make the records "no error"
    text = ("[TensorRT-LLM][WARNING] Parameter max_lora_rank cannot be read from json:\n"
            "[TensorRT-LLM][INFO] MPI size: 1, rank: 0\n" + NOTICE_OLD + "\n")
    d = answer(text)
    assert d["exit_code"] == 1 and d["suspect_only"] and not d["candidates"]


@pytest.mark.parametrize("notice", [NOTICE_NEW, NOTICE_OLD])
def test_transformers_notice_beside_a_tokenizer_failure_names_nothing(notice):
    text = (notice + "\nTraceback (most recent call last):\n  File \"prep.py\", line 7, in <module>\n"
            "    ids = tokenizer(batch)[\"input_ids\"]\nKeyError: 'input_ids'\n")
    d = answer(text)
    assert d["exit_code"] == 1 and "torch-not-installed" not in codes(text)
    assert d["n_unexplained"] == 1
    # a Triton backend's failure beside it (tensorrtllm_backend's preprocessing model)
    text = notice + "\nE0101 12:00:00.000 1 model.cc:100] failed to load 'ensemble' version 1: Internal: unexpected\n"
    assert "torch-not-installed" not in codes(text)


@pytest.mark.parametrize("notice", [NOTICE_NEW, NOTICE_OLD])
def test_transformers_notice_names_torch_where_a_model_needed_it(notice):
    text = (notice + "\nTraceback (most recent call last):\n  File \"run.py\", line 5, in <module>\n"
            "    model = AutoModelForCausalLM.from_pretrained(name)\n"
            "AttributeError: 'NoneType' object has no attribute 'from_pretrained'\n")
    assert codes(text)[:1] == ["torch-not-installed"]
    text = (notice + "\nTraceback (most recent call last):\n  File \"train.py\", line 2, in <module>\n"
            "    x = torch.zeros(3)\nNameError: name 'torch' is not defined\n")
    assert codes(text)[:1] == ["torch-not-installed"]


def test_transformers_notice_never_outranks_another_signature():
    assert codes(NOTICE_OLD + "\nimport torch\nRuntimeError: CUDA error: out of memory\n")[:1] == ["gpu-out-of-memory"]
    assert "torch-not-installed" not in codes(NOTICE_OLD + "\nimport torch\nRuntimeError: CUDA error: out of memory\n")


def test_transformers_import_errors_still_name_torch():
    for line in ("ImportError: AutoModelForCausalLM requires the PyTorch library but it was not found in your "
                 "environment.",
                 "AutoModelForCausalLM requires PyTorch >= 2.6, but PyTorch was not found or an older version is "
                 "installed."):
        assert codes(line + "\n")[:1] == ["torch-not-installed"], line


TF_TRT = [
    "2023-06-01 10:00:00.123456: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could "
    "not find TensorRT",
    "2023-06-01 10:00:00.123456: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
    "Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: "
    "No such file or directory; LD_LIBRARY_PATH: /usr/local/nvidia/lib:/usr/local/nvidia/lib64",
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libnvinfer_plugin.so.7'; dlerror: libnvinfer_plugin.so.7: cannot open shared object file: No such file or "
    "directory",
]


def test_tf_trt_start_up_lines_are_no_error_lines():
    # TF-TRT's own notice is a start-up notice: silent
    assert silent(TF_TRT[0] + "\n")
    # TensorFlow's dso_loader warning on libnvinfer says "cannot open": held back (no error line),
    # alone a possible failure by the documented rule, with no cause named
    for line in TF_TRT[1:]:
        assert error_shape(line) is None
        d = answer(line + "\nEpoch 1/10\n100/100 [==============================] - 3s 20ms/step - loss: 0.31\n")
        assert d["suspect_only"] and not d["candidates"], line


def test_tf_trt_notice_beside_a_failure_is_not_its_cause():
    text = TF_TRT[1] + "\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    d = answer(text)
    assert d["exit_code"] == 1 and "library-missing" not in codes(text)
    # a GPU library TensorFlow needs (libcudart, libcudnn) still counts
    text = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
            "'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
            "W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850] Cannot dlopen some GPU libraries. Please make "
            "sure the missing libraries mentioned above are installed properly if you would like to use GPU.\n")
    assert not silent(text)


ORT_WARNINGS = [
    "2024-01-01 10:00:00.0000000 [W:onnxruntime:, graph.cc:3593 CleanUnusedInitializersAndNodeArgs] Removing "
    "initializer '/model/Constant_output_0'. It is not used by any node and should be removed from the model.",
    "Removing initializer 'onnx::Conv_123'. It is not used by any node and should be removed from the model.",
    "TensorRT input: input has no shape specified, please use the shape inference tool",
    "2024-01-01 10:00:00.0000000 [W:onnxruntime:Default, tensorrt_execution_provider.h:84 log] [2024-01-01 "
    "10:00:00 WARNING] input: input has no shape specified, please use the shape inference tool",
    "2024-01-01 10:00:00.0000000 [W:onnxruntime:, execution_frame.cc:857 VerifyOutputSizes] Expected shape from "
    "model of {} does not match actual shape of {1} for output output",
]


@pytest.mark.parametrize("line", ORT_WARNINGS)
def test_onnxruntime_warnings_are_no_failure(line):
    assert error_shape(line) is None
    assert silent(line + "\n")
    # beside a failure they name nothing: the failure's own line is the one left unexplained
    text = (line + "\nTraceback (most recent call last):\n  File \"infer.py\", line 9, in <module>\n"
            "    out = sess.run(None, feeds)\nValueError: operands could not be broadcast together\n")
    d = answer(text)
    assert d["exit_code"] == 1 and d["n_unexplained"] == 1 and not d["candidates"]
