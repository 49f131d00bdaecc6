"""A Python package that is not installed, and the model hub's remaining failures (apps27).

Worded from the programs' own source (docs/dev/apps27.md lists each):

- python-package-not-installed: CPython's ``No module named 'X'`` (importlib/_bootstrap.py
  _find_and_load_unlocked; Python 2's unquoted ``ImportError: No module named X``) and
  transformers' / diffusers' ``requires the X library but it was not found in your environment``
  (utils/import_utils.py BACKENDS_MAPPING, raised by requires_backends) and dynamic_module_utils.py
  check_imports. A generic root: every module with a code of its own keeps it;
- python-project-module-not-found: the program's own module (``utils``, ``models.common``) or a
  relative import outside a package (CPython's ``attempted relative import ...``);
- huggingface-load-failed: transformers' generic ``Can't load tokenizer for '...'`` (a symptom:
  the Hub unreachable, a wrong id or path, a gated repository);
- huggingface-hub-rate-limited: huggingface_hub hf_raise_for_status's 429;
- huggingface-cache-unwritable: PermissionError in the Hub cache directory.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import codes_of, family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "python-package-not-installed": [
        # CPython 3.6+ importlib._bootstrap._find_and_load_unlocked
        "ModuleNotFoundError: No module named 'cv2'",
        "ModuleNotFoundError: No module named 'sklearn'",
        "ModuleNotFoundError: No module named 'einops'",
        "ModuleNotFoundError: No module named 'google.protobuf'",
        # Python 2 / 3.5 Python/import.c: no quotes
        "ImportError: No module named yaml",
        # transformers utils/import_utils.py PROTOBUF_IMPORT_ERROR / SENTENCEPIECE_IMPORT_ERROR
        "ImportError: T5Converter requires the protobuf library but it was not found in your environment. "
        "Check out the instructions on the installation page of its repo: "
        "https://github.com/protocolbuffers/protobuf/tree/master/python#installation and follow the ones that "
        "match your environment. Please note that you may need to restart your runtime after installation.",
        "ImportError: LlamaTokenizer requires the SentencePiece library but it was not found in your "
        "environment. Check out the instructions on the installation page of its repo: "
        "https://github.com/google/sentencepiece#installation and follow the ones that match your environment.",
        # transformers DATASETS_IMPORT_ERROR (its emoji), AUDIO_IMPORT_ERROR
        "ImportError: load_dataset requires the 🤗 Datasets library but it was not found in your environment.",
        "ImportError: WhisperFeatureExtractor requires soundfile and soxr, which were not found in your "
        "environment. You can install them with pip: `pip install transformers[audio]`.",
        # transformers dynamic_module_utils.py check_imports (remote code)
        "ImportError: This modeling file requires the following packages that were not found in your "
        "environment: einops, timm. Run `pip install einops timm`",
    ],
    "python-project-module-not-found": [
        "ModuleNotFoundError: No module named 'utils'",
        "ModuleNotFoundError: No module named 'models.common'",
        "ImportError: attempted relative import with no known parent package",
        "ValueError: attempted relative import beyond top-level package",
        "ModuleNotFoundError: No module named '__main__.dataset'; '__main__' is not a package",
    ],
    "huggingface-hub-rate-limited": [
        # huggingface_hub 1.x utils/_http.py hf_raise_for_status, with and without the rate-limit headers
        "huggingface_hub.errors.HfHubHTTPError: 429 Too Many Requests: you have reached your 'resolvers' rate "
        "limit.",
        "huggingface_hub.errors.HfHubHTTPError: 429 Too Many Requests for url: "
        "https://huggingface.co/api/datasets/HuggingFaceFW/fineweb/tree/main.",
        # requests' raise_for_status under huggingface_hub 0.x
        "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
        "https://huggingface.co/api/models/bert-base-uncased/revision/main",
    ],
    "huggingface-cache-unwritable": [
        "PermissionError: [Errno 13] Permission denied: '/root/.cache/huggingface/hub/models--bert-base-uncased'",
        "PermissionError: [Errno 13] Permission denied: '/.cache/huggingface'",
        "OSError: [Errno 30] Read-only file system: '/shared/hf/hub/.locks/models--gpt2'",
    ],
    "modelscope-model-not-found": [
        # modelscope hub/errors.py handle_http_response (404): ModelScope's own code and fix
        "requests.exceptions.HTTPError: 404 Not Found: damo/nlp_corom_sentence-embedding does not exist or is "
        "not accessible, Request id: 1f2e for url: https://www.modelscope.cn/api/v1/models/damo/x/revisions",
    ],
    "modelscope-unreachable": [
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='www.modelscope.cn', port=443): Max "
        "retries exceeded with url: /api/v1/models/qwen/Qwen-7B/revisions",
    ],
}

# transformers' generic OSError: a symptom, the top candidate when nothing below it shows
SYMPTOMS = {
    "huggingface-load-failed": [
        # tokenization_utils_base.py
        "OSError: Can't load tokenizer for 'openai/clip-vit-large-patch14'. If you were trying to load it "
        "from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. "
        "Otherwise, make sure 'openai/clip-vit-large-patch14' is the correct path to a directory containing all "
        "relevant files for a CLIPTokenizer tokenizer.",
        # configuration_utils.py, modeling_utils.py, image_processing_base.py
        "OSError: Can't load the configuration of 'bert-base-uncased'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
        "OSError: Can't load the model for 'runwayml/stable-diffusion-v1-5'. If you were trying to load it from "
        "'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
        "OSError: Can't load image processor for 'google/vit-base-patch16-224'. If you were trying to load it "
        "from 'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
    ],
}

WRAPPERS = {"worker-pid": lambda m: "(Worker pid=1) " + m, "rank0": lambda m: "[rank0]: " + m}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(dict(FAMILIES, **SYMPTOMS), wrappers=WRAPPERS)

test_each_new_root_is_sourced = sourced_roots_test(
    ["python-package-not-installed", "python-project-module-not-found", "huggingface-hub-rate-limited",
     "huggingface-cache-unwritable"])


@pytest.mark.parametrize("line,code", [
    # a stack module with a code of its own keeps it (the generic root is explained by it)
    ("ModuleNotFoundError: No module named 'fla'", "kernel-library-not-installed"),
    ("ModuleNotFoundError: No module named 'flash_attn'", "flash-attn-not-installed"),
    ("ModuleNotFoundError: No module named 'selective_scan_cuda'", "kernel-extension-not-built"),
    ("ModuleNotFoundError: No module named 'amp_C'", "kernel-extension-not-built"),
    ("ModuleNotFoundError: No module named 'causal_conv1d_cuda'", "causal-conv1d-no-extension"),
    ("ModuleNotFoundError: No module named 'torch'", "torch-not-installed"),
    ("ModuleNotFoundError: No module named 'triton'", "triton-not-installed"),
    # triton.ops is a package Triton removed (triton-lang/triton#4156) that kernel libraries still
    # import (harv29); another missing Triton submodule stays the pin's reading
    ("ModuleNotFoundError: No module named 'triton.ops'", "triton-too-old-for-package"),
    ("ModuleNotFoundError: No module named 'triton.compiler.compiler'", "triton-torch-version-mismatch"),
    ("ModuleNotFoundError: No module named 'distutils'", "python-stdlib-module-removed"),
    ("ModuleNotFoundError: No module named '_lzma'", "python-stdlib-extension-missing"),
    ("ModuleNotFoundError: No module named 'setuptools'", "python-build-tools-missing"),
    ("ImportError: This modeling file requires the following packages that were not found in your "
     "environment: flash_attn. Run `pip install flash_attn`", "flash-attn-not-installed"),
    ("ImportError: Qwen2Model requires the bitsandbytes library but it was not found in your environment.",
     "kernel-library-not-installed"),
])
def test_a_module_with_its_own_code_keeps_it(line, code):
    codes = codes_of(line + "\n")
    assert codes[:1] == [code], codes
    if "python-package-not-installed" in codes:
        cand = explain_text(line + "\n").candidates[codes.index("python-package-not-installed")]
        assert codes.index("python-package-not-installed") > 0 and cand.confidence == "stated"


@pytest.mark.parametrize("line", [
    # torch's C extension, a transformers model a release does not have, a namespaced package's
    # submodule: version mismatches or broken installs, not a package to install
    "ModuleNotFoundError: No module named 'torch._C'",
    "ModuleNotFoundError: No module named 'transformers.models.llama4'",
    "ModuleNotFoundError: No module named 'diffusers.models.unet_2d_condition'",
    # a C extension's private module (python-soundfile's _soundfile_data)
    "ModuleNotFoundError: No module named '_soundfile_data'",
])
def test_submodules_and_private_modules_are_not_called_not_installed(line):
    assert "python-package-not-installed" not in codes_of(line + "\n")


@pytest.mark.parametrize("line", [
    "ModuleNotFoundError: No module named 'utils'",
    "ModuleNotFoundError: No module named 'models.yolo'",
    "ModuleNotFoundError: No module named 'src.data'",
])
def test_the_programs_own_module_is_not_called_not_installed(line):
    codes = codes_of(line + "\n")
    assert codes[:1] == ["python-project-module-not-found"] and "python-package-not-installed" not in codes


@pytest.mark.parametrize("line", [
    # an optional import that failed softly, as libraries log it: no code (the parser may still
    # count the line as an error it cannot explain, as before apps27). The bare "Could not import
    # X, some features disabled" is a low hint since tools29 (tests/test_explain_tools29.py)
    "WARNING: No module named 'tensorboard', TensorBoard logging disabled",
    "UserWarning: No module named 'wandb'; falling back to the console logger",
    "Failed to import tensorboard: No module named 'tensorboard' (optional: the TensorBoard callback is skipped)",
])
def test_optional_imports_name_no_code(line):
    assert codes_of(line + "\n") == []


test_installs_naming_packages_stay_healthy = healthy_test([
    "Successfully installed opencv-python-4.10.0.84 pyyaml-6.0.2",
    "Requirement already satisfied: scikit-learn in ./venv/lib/python3.11/site-packages (1.5.1)",
    "import cv2, yaml, sklearn  # all present",
])


@pytest.mark.parametrize("line", [
    # a 429 of another host, a permission error outside the Hub cache
    "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: https://api.github.com/repos/x/y",
    "PermissionError: [Errno 13] Permission denied: '/.cache'",
    "PermissionError: [Errno 13] Permission denied: '/root/.cache/torch/hub/checkpoints'",
])
def test_near_misses_name_no_new_hub_code(line):
    """No signature reads them (a low guess from resembling words of the corpus logs may)."""
    cands = explain_text(line + "\n").candidates
    stated = [c.code for c in cands if c.basis == "signature"]
    assert not {"huggingface-hub-rate-limited", "huggingface-cache-unwritable"} & set(stated), stated


@pytest.mark.parametrize("failure,code", [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "gpu-out-of-memory"),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
     "installed a driver from http://www.nvidia.com/Download/index.aspx", "no-nvidia-driver"),
])
def test_a_failed_optional_import_logged_as_a_warning_does_not_outrank_the_failure(failure, code):
    """Without its exception's name the message is a catch-all: a symptom the log states wins."""
    log = "WARNING:root:Failed to import tensorboard: No module named 'tensorboard'\n" + failure + "\n"
    codes = codes_of(log)
    assert codes[:1] == [code] and "python-package-not-installed" not in codes, codes


def test_a_bare_retold_message_still_names_the_package_when_nothing_else_does():
    expl = explain_text("I get No module named 'einops' when I start it\n")
    assert [c.code for c in expl.candidates][:1] == ["python-package-not-installed"]


@pytest.mark.parametrize("message,codes", [
    ("No module named 'cv2'", ["python-package-not-installed"]),
    ("No module named 'causal_conv1d'", ["kernel-library-not-installed"]),
    ("No module named 'torch._C'", []),
])
def test_run_maps_a_swallowed_module_not_found(message, codes):
    from stackpeel.knowledge import load as load_kb

    assert load_kb().exception_codes("ModuleNotFoundError", message) == codes


def test_cant_load_names_the_hub_first_when_the_log_says_nothing_else():
    expl = explain_text(SYMPTOMS["huggingface-load-failed"][0] + "\n")
    top = expl.candidates[0]
    assert top.code == "huggingface-load-failed" and top.confidence == "symptom"
    assert list(top.could_be[:2]) == ["huggingface-hub-unreachable", "huggingface-model-not-found"]


def test_cant_load_with_a_proxy_error_above_names_the_network():
    log = ("requests.exceptions.ProxyError: Unable to connect to proxy, Tunnel connection failed: 407\n"
           + SYMPTOMS["huggingface-load-failed"][0] + "\n")
    codes = codes_of(log)
    assert codes[0] == "huggingface-hub-unreachable", codes


def test_cant_load_a_local_path_names_the_model_or_path():
    log = ("OSError: Can't load the configuration of './output/checkpoint-500'. If you were trying to load it "
           "from 'https://huggingface.co/models', make sure you don't have a local directory with the same name.\n")
    assert codes_of(log)[0] == "huggingface-model-not-found"


def test_cant_load_over_a_stated_cause_names_the_cause():
    log = ("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
           "cached files and it looks like bert-base-uncased is not the path to a directory containing a file "
           "named config.json.\n" + SYMPTOMS["huggingface-load-failed"][1] + "\n")
    assert codes_of(log)[:2] == ["huggingface-hub-unreachable", "huggingface-load-failed"]


def test_import_names_that_differ_from_their_distributions_are_in_the_fix():
    from stackpeel.knowledge import load as load_kb

    fix = load_kb().get("python-package-not-installed").fix
    for pair in ("cv2 -> opencv-python", "PIL -> pillow", "sklearn -> scikit-learn", "yaml -> pyyaml",
                 "google.protobuf -> protobuf", "skimage -> scikit-image"):
        assert pair in fix


def test_a_429_under_transformers_specific_connection_error_names_the_rate_limit():
    """transformers utils/hub.py cached_file wraps the Hub's HTTP error (transformers#21129's paste)."""
    wrapper = "OSError: There was a specific connection error when trying to load flax-community/roberta-base-thai:\n"
    quoted = ("429 Client Error: Too Many Requests for url: "
              "https://huggingface.co/flax-community/roberta-base-thai/resolve/main/config.json\n")
    assert codes_of(wrapper + quoted)[:2] == ["huggingface-hub-rate-limited", "huggingface-hub-unreachable"]
    # alone, the wrapper still reads as the Hub not answering
    assert codes_of(wrapper)[:1] == ["huggingface-hub-unreachable"]


@pytest.mark.parametrize("message,code", [
    ("No module named 'utils'", "python-project-module-not-found"),
    ("No module named 'models.common'", "python-project-module-not-found"),
    ("No module named 'cv2'", "python-package-not-installed"),
])
def test_run_reads_a_project_folder_as_explain_does(message, code):
    # stackpeel run maps a swallowed exception by the same knowledge: never `pip install utils`
    import stackpeel.knowledge as K
    assert K.load().exception_codes("ModuleNotFoundError", message) == [code]


def test_run_reads_a_relative_import_outside_a_package_as_the_project():
    import stackpeel.knowledge as K
    got = K.load().exception_codes("ImportError", "attempted relative import with no known parent package")
    assert got == ["python-project-module-not-found"]
