"""Recall of explain on logs sampled by symptom (sweepe): 16 fresh training threads
(tests/corpus/explain/*.log with ``# collected: training-2026-12-02j``) taken in search order
for CUDA error symptoms (no kernel image, driver insufficient, cudaErrorInsufficientDriver,
device-side assert, illegal memory access, CUBLAS/CUDNN status errors, operation not supported,
forward compatibility, GPU is lost), then fixed by class from the programs that print them.

What the threads showed, and the class each fix covers:

- torch's ``CUDA error: operation not supported`` (cudaErrorNotSupported, 801) had no code: in the
  threads it is the cudaMallocAsync allocator backend (ComfyUI's default ``--cuda-malloc``) on a
  GPU without memory pools (Lightricks/ComfyUI-LTXVideo 108: 'switch the CUDA memory allocation to
  native'); with it, programs' own checks of cudaMallocAsync (jaxlib, the CUDA samples' helper)
  and torch's 'cudaMallocAsync does not yet support <feature>': ``cuda-malloc-async-unsupported``.
- ``GPU is lost`` right after a CJK letter ('显示GPU is lost', QwenLM/Qwen 629) named nothing: a
  CJK letter is a word character, so ``\\bGPU`` never matched there.
- a CUDA_VISIBLE_DEVICES value CUDA cannot parse, shown in the log ('CUDA_VISIBLE_DEVICES=[1,2,3]',
  pytorch/pytorch 1504, cuDNN then failing with CUDNN_STATUS_INTERNAL_ERROR).
- 'no kernel image' printed by a compiled extension's own error check (``cudaCheckError() failed :``,
  ``CUDA kernel failed :``, ``GPUassert:``; CSAILVision/unifiedparsing 6) or under a frame of a
  compiled extension package (fvdb, nv-tlabs/SCube 7) is the extension's missing arch, not torch's.
- cudaErrorInsufficientDriver without its prefix ('CUDAError InsufficientDriver', NVIDIA/cutlass
  2866), and cutlass/CuTe/cuda-python, MXNet and Caffe among the programs whose own build is
  too new for the driver; the runtime's 35 when no libcuda loads stays among what it could be.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import assert_sourced_root, family_tests, healthy_test

# code -> messages as the programs print them (each must rank the code first, whatever wraps it)
FAMILIES = {
    "cuda-malloc-async-unsupported": [
        # c10/cuda/CUDAException.cpp with cudaErrorNotSupported (ComfyUI-LTXVideo#108, ComfyUI#940)
        "RuntimeError: CUDA error: operation not supported",
        # jaxlib's check of its own cudaMallocAsync (jax-ml/jax#7273)
        "RuntimeError: third_party/py/jax/jaxlib/cusparse.cc:902: CUDA operation "
        "cudaMallocAsync(&buffer, bufferSize, stream) failed: operation not supported",
        # the CUDA samples' checkCudaErrors helper (flatironinstitute/finufft#445)
        "CUDA error at /src/cuda/memtransfer_wrapper.cu:33 code=801(cudaErrorNotSupported) "
        "\"cudaMallocAsync(&d_plan->binsize, numbins * sizeof(int), stream)\"",
        # c10/cuda/CUDAMallocAsyncAllocator.cpp TORCH_CHECK(false, ...)
        "RuntimeError: cudaMallocAsync does not yet support checkPoolLiveAllocations. If you need it, "
        "please file an issue describing your use case.",
        "RuntimeError: cudaMallocAsync does not yet support getIpcDevPtr. If you need it, please file "
        "an issue describing your use case.",
    ],
    "gpu-hardware-fault": [
        # nvidia-smi with NVML_ERROR_GPU_IS_LOST (JosephKJ/OWOD#81)
        "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system "
        "to recover this GPU",
        # after a CJK letter (QwenLM/Qwen#629)
        "使用web_demo.py应该怎样退出，Ctrl+c退出显卡会出现error，显示GPU is lost",
    ],
    "cuda-visible-devices-hides-gpus": [
        "CUDA_VISIBLE_DEVICES=[1,2,3] python train.py --gpu_id 0",
        "os.environ['CUDA_VISIBLE_DEVICES'] = '[0, 1]'",
        "CUDA_VISIBLE_DEVICES=cuda:1 python infer.py",
    ],
    "extension-arch-missing": [
        # a repository's own cudaCheckError() macro (CSAILVision/unifiedparsing#6)
        "cudaCheckError() failed : no kernel image is available for execution on the device",
        # the pointnet2-style CUDA_CHECK_ERRORS macro
        "CUDA kernel failed : no kernel image is available for execution on the device",
        # the gpuErrchk/GPUassert helper ('GPUassert: %s %s %d')
        "GPUassert: no kernel image is available for execution on the device /src/kernels.cu 110",
    ],
    "driver-too-old-for-build": [
        # cuda-python's error as the reporter wrote it (NVIDIA/cutlass#2866)
        "When I run examples/python/CuTeDSL/blackwell/dense_gemm.py on the Blackwell, I find the error "
        "CUDAError InsufficientDriver.",
        # a C program's own check ('[%s@%s:%d] InsufficientDriver')
        "[main@bench.cu:57] InsufficientDriver",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


def test_the_async_allocator_code_is_sourced():
    entry = assert_sourced_root("cuda-malloc-async-unsupported")
    assert entry.layer == "torch"
    assert "cudaMallocAsync" in entry.clues


def test_torch_operation_not_supported_is_not_weight_3():
    # other unsupported calls print the same words: the line alone is not the exact cause
    entries = [e for e in load().match_line("RuntimeError: CUDA error: operation not supported")
               if e.id == "torch-cuda-error-operation-not-supported"]
    assert entries and entries[0].weight == 2


def test_comfyui_operation_not_supported_log():
    # ComfyUI's start-up line names the backend; the error comes at the first memory query
    log = """Total VRAM 4096 MB, total RAM 16310 MB
Device: cuda:0 NVIDIA GeForce GTX 960M : cudaMallocAsync
Traceback (most recent call last):
  File "C:\\ComfyUI\\comfy\\model_management.py", line 105, in get_total_memory
    _, mem_total_cuda = torch.cuda.mem_get_info(dev)
RuntimeError: CUDA error: operation not supported
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
"""
    expl = explain_text(log)
    assert [c.code for c in expl.candidates][:1] == ["cuda-malloc-async-unsupported"]
    assert expl.exit_code == 1


def test_no_kernel_image_under_an_extension_frame_is_the_extension():
    # nv-tlabs/SCube#7: the failing call is the compiled fvdb extension's
    log = """    fvdb_grids = fvdb.gridbatch_from_points(JaggedTensor(cropped_xyz), **kwargs)
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""
    assert [c.code for c in explain_text(log).candidates][:1] == ["extension-arch-missing"]


def test_torch_no_kernel_image_stays_torch():
    log = """  File "/usr/lib/python3/site-packages/torch/nn/modules/conv.py", line 456, in _conv_forward
    return F.conv2d(input, weight, bias, self.stride,
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""
    assert [c.code for c in explain_text(log).candidates][:1] == ["torch-arch-not-supported"]


def test_a_bare_insufficient_driver_still_offers_the_program_build_and_libcuda():
    entries = [e for e in load().match_line("CUDA driver version is insufficient for CUDA runtime version")
               if e.id == "driver-insufficient-for-runtime"]
    assert entries and {"driver-too-old-for-build", "libcuda-missing"} <= set(entries[0].could_be)


@pytest.mark.parametrize("prefix", ["", "[rank3]: ", "2024-06-01 10:00:00 ", "(Worker pid=4242) ", "> "])
def test_gpu_is_lost_after_prefixes_and_cjk(prefix):
    codes = [c.code for c in explain_text(prefix + "运行时显卡报错GPU is lost\n").candidates]
    assert codes[:1] == ["gpu-hardware-fault"], codes


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "Device: cuda:0 NVIDIA GeForce RTX 4070 SUPER : cudaMallocAsync",
    "export PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync",
    "python main.py --disable-cuda-malloc",
    "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1]",
    "export CUDA_VISIBLE_DEVICES=0,1",
    "os.environ['CUDA_VISIBLE_DEVICES'] = '0'",
    "TEST_F(CudaAdapterTest, ReportsInsufficientDriver)",
    "nvidia-smi shows all 8 GPUs healthy, none lost",
])
