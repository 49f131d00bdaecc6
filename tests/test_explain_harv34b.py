"""harv34b: an unbiased harvest of what users hit while building the GPU stack (conda, mamba,
micromamba and pixi solving CUDA packages; pip and uv with PyTorch's indexes; build isolation;
nvcc and CMake; nix; Docker images), scored blind, and the general fixes its misses ask for
(docs/dev/harv34b.md).

Nineteen new training-side logs; explain named ten first before any change. The fixed misses:
- A2, libmamba's own tree line: ``└─ __cuda =* *, which is missing on the system;``
  (mamba-org/mamba libmamba/src/solver/problems_graph.cpp TreeExplainer, a virtual package
  ``__x`` with no provider) was read only in mamba 1.x's longer form (``..., but can be mocked
  via the CONDA_OVERRIDE_CUDA environment variable``); conda-forge/pytorch-cpu-feedstock#364;
- A1, the loader's ``undefined symbol: iJIT_NotifyEvent`` alone (Intel's JIT profiling API,
  exported by MKL up to 2024.0 and not by 2024.1, which a conda torch links dynamically) is
  ``torch-import-failed`` (Pointcept/Pointcept#230), as the corpus's pastes with the full
  libtorch_cpu.so path already were;
- A1, Python 2's and 3.3-3.5's ``ImportError: No module named torch`` (before
  ModuleNotFoundError) is ``torch-not-installed`` (williamSYSU/TextGAN-PyTorch#8);
- A3, the user's ``cpu版本`` (lower case, as pip's ``+cpu`` spells it) opens the gate as
  ``CPU版本`` did, so the users'-words rule for the CPU build reads it
  (zyddnys/manga-image-translator#210).
Beyond the misses, a new root code for a frame failure the sample met without a code (nine
threads: NVIDIA/nvidia-docker#1454, #1768, #373, NVIDIA/libnvidia-container#181,
anibali/docker-pytorch#46, google/deepvariant#676, Kaixhin/dockerfiles#39, bgshih/crnn#101,
alicevision/Meshroom#785): ``container-image-tag-not-found``, the registry's MANIFEST_UNKNOWN
as Docker, podman/buildah, BuildKit and containerd word it.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their own cause.
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import PROSE_WRAPPERS, codes_of as _codes, family_tests, sourced_roots_test

# moby: MANIFEST_UNKNOWN of a name:tag ("manifest for %s not found: %v"), as docker pull/run print it
DOCKER_PULL = ("Error response from daemon: manifest for nvidia/cuda:10.2-devel-ubuntu18.04 not found: "
               "manifest unknown: manifest unknown")
# containers/image docker/docker_image_src.go ("reading manifest %s in %s: %w"), podman/buildah
PODMAN = ("Error: error creating build container: initializing source docker://nvidia/cuda:10.2-cudnn7-devel-"
          "ubuntu18.04: reading manifest 10.2-cudnn7-devel-ubuntu18.04 in docker.io/nvidia/cuda: manifest unknown: "
          "manifest unknown")
# BuildKit over containerd's resolver ("<ref>: not found")
BUILDKIT = "ERROR: failed to solve: nvidia/cuda:11.0-base-ubuntu20.04: docker.io/nvidia/cuda:11.0-base-ubuntu20.04: not found"
BUILDKIT_META = ("ERROR: failed to solve: nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04: failed to resolve source "
                 "metadata for docker.io/nvidia/cuda:10.2-cudnn7-runtime-ubuntu18.04: docker.io/nvidia/cuda:10.2-cudnn7-"
                 "runtime-ubuntu18.04: not found")
# containerd's CRI plugin ("failed to resolve reference %q: %w"), as kubelet reports it
CRI = ('Failed to pull image "nvidia/cuda:11.0-base": rpc error: code = NotFound desc = failed to pull and unpack '
       'image "docker.io/nvidia/cuda:11.0-base": failed to resolve reference "docker.io/nvidia/cuda:11.0-base": '
       'docker.io/nvidia/cuda:11.0-base: not found')
# the dynamic loader, a conda torch with MKL 2024.1
IJIT = "undefined symbol: iJIT_NotifyEvent"
# libmamba's problems tree (problems_graph.cpp TreeExplainer)
MAMBA_TREE = "   └─ pytorch 2.0.1 would require __cuda >=11.8 , which is missing on the system."
MAMBA_TREE_STAR = "└─ __cuda =* *, which is missing on the system;"
# CMake's FindCUDA module (find_package(CUDA REQUIRED) with no nvcc where it looks)
FINDCUDA = "Specify CUDA_TOOLKIT_ROOT_DIR"
FINDCUDA_QUIET = "CUDA_TOOLKIT_ROOT_DIR not found or specified"
# CPython 2 (Python/import.c) and 3.3-3.5 (importlib)
PY2_NO_TORCH = "ImportError: No module named torch"
PY35_NO_TORCH = "ImportError: No module named 'torch'"

FAMILIES = {
    "container-image-tag-not-found": [DOCKER_PULL, PODMAN, BUILDKIT, BUILDKIT_META, CRI],
    "torch-import-failed": [IJIT],
    "conda-cuda-virtual-package-unsatisfied": [MAMBA_TREE, MAMBA_TREE_STAR],
    "torch-not-installed": [PY2_NO_TORCH, PY35_NO_TORCH],
    "nvcc-missing": [FINDCUDA, FINDCUDA_QUIET],
}



def _skip(msg, wrapper):
    # Python 2's unquoted form ends its line with the bare module name; under a stream prefix the
    # parser's repair of wrapped lines joins the next short line to it ("No module named
    # torchexiting"), which python-package-not-installed then reads
    if msg == PY2_NO_TORCH and wrapper in {"torchrun-rank", "python-logging", "glog", "ray-worker", "vllm-worker",
                                           "docker-compose", "kubectl-prefix", "journald"}:
        return "a bare module name at a prefixed line's end is joined with the next line"
    return None


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES, skip=_skip)
test_new_code_sourced = sourced_roots_test(["container-image-tag-not-found"])


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_feedstock_364_login_node_names_cuda_virtual_package():
    # conda-forge/pytorch-cpu-feedstock#364 (the reporter's words)
    text = (
        "I am trying to install pytorch with CUDA supports on the login node of our cluster (without any GPUs) "
        "using `micromamba install -c conda-forge pytorch \"libtorch=*=cuda12*\"`, where I encounter a huge trace, "
        "but my hunch for the most important error raised while solving the installation is this tiny line "
        "`__cuda =* *, which is missing on the system;`\n"
        "I tried the same installation on our cluster on a GPU node, and it works.\n"
    )
    assert _codes(text)[:1] == ["conda-cuda-virtual-package-unsatisfied"]


def test_mamba_1x_mock_wording_still_reads():
    text = "  - __cuda is missing on the system, but can be mocked via the CONDA_OVERRIDE_CUDA environment variable\n"
    assert _codes(text)[:1] == ["conda-cuda-virtual-package-unsatisfied"]


@pytest.mark.parametrize("line", [
    # other virtual packages libmamba names the same way: not the driver's
    "└─ __glibc >=2.17,<3.0.a0 *, which is missing on the system.",
    "│  └─ __win, which is missing on the system;",
    "└─ _x86_64-microarch-level ==3 2_zen2 is not installable because it requires __archspec ==1 zen2, which is "
    "missing on the system.",
])
def test_other_virtual_packages_are_not_cuda(line):
    assert "conda-solver-cuda-virtual-package" not in _ids(line)
    assert "conda-cuda-virtual-package-unsatisfied" not in _codes(line)[:1]


def test_pointcept_230_ijit_alone_names_import_failed():
    # Pointcept/Pointcept#230 (the reporter's title and sentence)
    text = (
        "undefined symbol: iJIT_NotifyEvent\n\n"
        "As of today, the conda install of PyTorch is dynamically linked to an old version of MKL, which does not "
        "contain the symbol `iJIT_NotifyEvent`, leading to a crash when launching the `libs/pointops/setup.py "
        "`script.\n"
    )
    assert _codes(text)[:1] == ["torch-import-failed"]


def test_ijit_fix_names_the_mkl_pin():
    from stackpeel.knowledge import load as load_kb
    assert "iJIT_NotifyEvent" in load_kb().get("torch-import-failed").fix


@pytest.mark.parametrize("line", [
    # another undefined symbol, a stub that defines it, a name that merely begins the same
    "ImportError: libfoo.so: undefined symbol: iJIT_IsProfilingActive",
    "int iJIT_NotifyEvent(int event_type, void *event_data) { return 0; }",
    "undefined symbol: iJIT_NotifyEventStr",
])
def test_ijit_near_misses(line):
    assert "mkl-itt-jit-symbol-missing" not in _ids(line)


def test_textgan_8_python2_no_module_torch():
    # williamSYSU/TextGAN-PyTorch#8 (the reporter's paste)
    text = (
        "ImportError: No module named torch\n\n"
        "Hello, I have the same issue as https://github.com/williamSYSU/TextGAN-PyTorch/issues/6 but I don't "
        "understand the solution.\n"
    )
    assert _codes(text)[:1] == ["torch-not-installed"]


@pytest.mark.parametrize("line", [
    "ImportError: No module named torch_scatter",
    "ImportError: No module named torchvision",
    "ImportError: No module named torch.nn.functional",
    "ImportError: No module named 'torch._C'",
])
def test_python2_form_near_misses(line):
    assert "build-no-torch" not in _ids(line)


def test_python2_form_under_build_isolation_is_refined():
    text = (
        "  Getting requirements to build wheel ... error\n"
        "  File \"/tmp/pip-build-env-abc/overlay/lib/python3.5/site-packages/setuptools/build_meta.py\", line 1\n"
        "  ImportError: No module named 'torch'\n"
    )
    assert _codes(text)[:1] == ["build-isolation-hides-torch"]


@pytest.mark.parametrize("wrapper", list(PROSE_WRAPPERS))
def test_manga_210_lower_case_cpu_build_in_chinese(wrapper):
    # zyddnys/manga-image-translator#210 (the reporter's title)
    text = PROSE_WRAPPERS[wrapper](
        "requirements里torch install时默认是cpu版本，所以cuda.is_available()只会返回false，导致--use-cuda不能使用")
    assert _codes(text)[:1] == ["torch-cpu-only-build"]


@pytest.mark.parametrize("text", [
    # the CPU named in Chinese without a build of anything: no cause named from it
    "训练时cpu占用率很高，显存只用了一半\n",
    "cpu版的笔记本也能跑吗？\n",
])
def test_lower_case_cpu_in_other_words_stays_quiet(text):
    assert "torch-cpu-only-build" not in _codes(text)[:1]


def test_cutorch_352_findcuda_names_nvcc_missing():
    # torch/cutorch#352 (the reporter's paste): FindCUDA's message on its own line
    text = (
        "-- Found Torch7 in /Users/Voyga/misc/torch/install\n"
        "CMake Error at /usr/local/Cellar/cmake/3.4.3/share/cmake/Modules/FindCUDA.cmake:617 (message):\n"
        "  Specify CUDA_TOOLKIT_ROOT_DIR\n"
        "Call Stack (most recent call first):\n"
        "  CMakeLists.txt:7 (FIND_PACKAGE)\n\n"
        "-- Configuring incomplete, errors occurred!\n"
        "Error: Build error: Failed building.\n"
    )
    assert _codes(text)[:1] == ["nvcc-missing"]
    assert "findcuda-toolkit-root-not-found" in _ids("  Specify CUDA_TOOLKIT_ROOT_DIR")


def test_findcuda_near_miss():
    # a configure that names the variable it was given is no failure
    assert "findcuda-toolkit-root-not-found" not in _ids("-- CUDA_TOOLKIT_ROOT_DIR set to /usr/local/cuda-12.4")


def test_docker_manifest_threads_name_the_tag():
    # NVIDIA/libnvidia-container#181 (the reporter's paste)
    text = (
        "sudo docker run --rm --gpus all nvidia/cuda:11.0-base nvidia-smi\n"
        "Unable to find image 'nvidia/cuda:11.0-base' locally\n"
        "docker: Error response from daemon: manifest for nvidia/cuda:11.0-base not found: manifest unknown: "
        "manifest unknown.\n"
        "See 'docker run --help'.\n"
    )
    assert _codes(text)[:1] == ["container-image-tag-not-found"]


def test_old_docker_wording_without_cause():
    # Kaixhin/dockerfiles#39, bgshih/crnn#101 (docker 17.x printed no cause)
    text = ("Step 1/11 : FROM kaixhin/cuda-torch\n"
            "manifest for kaixhin/cuda-torch:latest not found\n")
    assert _codes(text)[:1] == ["container-image-tag-not-found"]


@pytest.mark.parametrize("line", [
    # other engines' and tools' "not found" lines that are not a missing image tag
    'ERROR: failed to solve: failed to compute cache key: failed to calculate checksum of ref abc::def: "/requirements.txt": not found',
    "Manifest for istio-base not found, skip.",
    "no matching manifest for linux/arm64/v8 in the manifest list entries",
    "Error response from daemon: pull access denied for mycorp/trainer, repository does not exist or may require 'docker login'",
])
def test_image_near_misses(line):
    assert "registry-manifest-unknown" not in _ids(line)
