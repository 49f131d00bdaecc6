"""Recall of explain on logs sampled the way the blind sets are (sweepi): the first training-side
threads of generic queries ("RuntimeError: CUDA error", "Segmentation fault", "error while
loading shared libraries", "failed to build", "not compatible with the current PyTorch",
"out of memory", "NCCL", "nvidia-smi", "docker gpu", "cuda version"), 18 logs with
``# collected: training-2026-12-02p``.

The classes the misses showed, and the fix for each:

- a deformable-convolution extension's own launcher prints the CUDA error with its kernel's
  name (DCNv2/DCNv3 ``error in modulated_deformable_im2col_cuda: %s``, Deformable-DETR
  ``error in ms_deformable_im2col_cuda: %s``, mmcv-style ``error in deformable_im2col: %s``):
  'no kernel image' there is the extension's gap, not torch's (InternImage 257).
- the CUDA driver's ``CUDA_ERROR_INVALID_PTX`` (218, 'a PTX JIT compilation failed') in its
  spellings (cudaErrorInvalidPtx, ManagedCuda's ``ErrorInvalidPtx``, cuModuleLoad* returning
  218): PTX for an architecture above the GPU's (Ceres 49, Etarkangaroo 4); through torch or a
  torch extension the refinement names theirs.
- users' words for the nvcc/torch CUDA mismatch: ``my torch.version.cuda is 9.0.176, but my
  nvcc --version is 10.0`` (pytorch_scatter 45).
- ld.so's prefix with a CUDA library's soname and the tail cut off, as issue titles carry it
  (``error while loading shared libraries:libcudart.so.9.0``, KlausT/ccminer 149).
- nvidia-smi's 'couldn't communicate with the NVIDIA driver' inside a container started by a
  plain ``docker run`` (no --gpus, no NVIDIA runtime, no /dev/nvidia* device): the device
  nodes were never passed in (mattshma/bigdata 108).
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, users_words_test, codes_of as _codes

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "extension-arch-missing": [
        # InternImage ops_dcnv3 (a prebuilt wheel without the 2080 Ti's sm_75), DCNv2, Deformable-DETR, mmcv
        "error in dcnv3_im2col_cuda: no kernel image is available for execution on the device",
        "error in modulated_deformable_im2col_cuda: no kernel image is available for execution on the device",
        "error in ms_deformable_im2col_cuda: invalid device function",
        "error in deformable_im2col: no kernel image is available for execution on the device",
    ],
    "library-missing": [
        # ld.so's 'error while loading shared libraries: %s: %s', the reason cut off
        "error while loading shared libraries:libcudart.so.9.0",
        "./miner: error while loading shared libraries: libcudart.so.12",
        "cntk: error while loading shared libraries: libcublas.so.10",
    ],
    "framework-gpu-arch-unsupported": [
        # cuda.h / driver_types.h 218 and cuGetErrorString's text, ManagedCuda's enum name
        'a error runnig Cere 0.90 - error "ErrorInvalidPtx".',
        "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed",
        "cudaErrorInvalidPtx",
        # a program's own report of cuModuleLoad's result
        "error cuModuleLoad1-218, GTX 1080 Ti (28x64)=>(56x128)",
        "cuModuleLoadData failed: 218",
        "cuModuleLoadDataEx returned CUDA_ERROR_INVALID_PTX (218)",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# a reporter's own sentence, in a title, a quote, a list or an issue template
test_users_words_name_the_mismatch = users_words_test({
    "hi, i have a problem: my torch.version.cuda is 9.0.176, but my nvcc --version is 10.0  what can I do to fix the problem?":
        "nvcc-torch-cuda-mismatch",
    "PyTorch CUDA version is 11.8 but nvcc reports 12.1, so the extension does not build":
        "nvcc-torch-cuda-mismatch",
    "nvcc -V shows release 12.4, while torch.version.cuda is 11.8":
        "nvcc-torch-cuda-mismatch",
})


def test_a_cut_ld_so_line_with_another_reason_is_not_a_missing_library():
    codes = _codes("./app: error while loading shared libraries: libcudart.so.11.0: wrong ELF class: ELFCLASS32\n")
    assert codes[:1] == ["library-wrong-format"], codes


def test_a_torch_ptx_jit_failure_is_torchs_arch_gap():
    log = ('  File "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/linear.py", line 114, in forward\n'
           "RuntimeError: CUDA error: a PTX JIT compilation failed\n")
    assert _codes(log)[:1] == ["torch-arch-not-supported"]


def test_a_ptx_jit_failure_in_an_extension_is_the_extensions():
    log = ("  File \"/usr/lib/python3/site-packages/mylib/_ops.py\", line 9, in <module>\n"
           "    import mylib._C  # /usr/lib/python3/site-packages/mylib/_C.abi3.so\n"
           "RuntimeError: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\n")
    assert _codes(log)[:1] == ["extension-arch-missing"]


def test_the_invalid_ptx_signature_is_generic_and_lists_the_other_owners():
    kb = load()
    entries = [e for e in kb.match_line("cudaErrorInvalidPtx") if e.id == "cuda-invalid-ptx"]
    assert entries and entries[0].weight == 2
    assert {"extension-arch-missing", "torch-arch-not-supported", "driver-too-old-for-build"} <= set(entries[0].could_be)


def test_a_torch_no_kernel_image_without_an_extensions_name_stays_torchs():
    log = ("UserWarning: NVIDIA GeForce RTX 5070 Ti with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
           "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
    assert _codes(log)[:1] == ["torch-arch-not-supported"]


PLAIN_DOCKER_RUNS = [
    # bind-mounting the driver's files is not passing the GPU (mattshma/bigdata#108)
    "`sudo docker run -v /usr/bin:/usr/local/nvidia/bin -v /usr/lib64/nvidia:/usr/local/nvidia/lib -p 8888:8888 MY_DOCKER_IMAGE`",
    "$ docker run -it --rm nvidia/cuda:12.2.0-base-ubuntu22.04 bash",
    "[2024-05-08 10:00:01] docker run -d --name trainer myorg/trainer:latest",
]
SMI_FAILED = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."


@pytest.mark.parametrize("run", PLAIN_DOCKER_RUNS)
@pytest.mark.parametrize("gap", [0, 6])
def test_nvidia_smi_failing_in_a_plain_docker_run_is_the_missing_device_nodes(run, gap):
    log = "\n".join([run, *["step %d" % i for i in range(gap)], "root@3f2a9c:/# nvidia-smi", SMI_FAILED]) + "\n"
    assert _codes(log)[:1] == ["device-nodes-missing"]


@pytest.mark.parametrize("run", [
    "docker run --gpus all --rm nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi",
    "docker run --runtime=nvidia --rm nvidia/cuda:11.0-base nvidia-smi",
    "docker run --device=/dev/nvidia0 --device=/dev/nvidiactl myimage",
])
def test_a_docker_run_that_asks_for_the_gpu_does_not_read_as_missing_nodes(run):
    codes = _codes(run + "\n" + SMI_FAILED + "\n")
    assert codes[:1] != ["device-nodes-missing"], codes


def test_nvidia_smi_failing_on_a_host_stays_the_driver():
    codes = _codes("$ nvidia-smi\n" + SMI_FAILED + "\n")
    assert codes[:1] == ["no-nvidia-driver"], codes


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "torch.version.cuda is 11.8 and nvcc --version is 11.8",
    "nvcc 12.4 found; PyTorch CUDA version 12.4",
    "JIT-compiled the PTX for sm_86 in 0.3 s",
    "cuModuleLoadData: loaded module with 218 functions",
    "docker run --gpus all --rm nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi",
    "no error in dcnv3_im2col_cuda; all checks True",
    "libcudart.so.12 => /usr/local/cuda/lib64/libcudart.so.12 (0x00007f0e8c000000)",
])
