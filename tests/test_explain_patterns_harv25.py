"""harv25: kernel libraries' build and import failures (docs/dev/harv25.md).

A round of real logs from flash-attn, xformers, apex, bitsandbytes, DeepSpeed's op builder, vLLM,
SGLang and torch's cpp_extension: explain already read 16 of the first 16. Two families it did
not read: FlashAttention's dtype check (float32 tensors reaching a kernel that computes only in
fp16/bf16: ``flash-attn-dtype-unsupported``, a new root) and an extension whose import needs a
CUDA driver API function the loaded libcuda lacks (sgl-kernel's green-context calls on a driver
older than CUDA 12.4: ``driver-too-old-for-build``, which the torch-symbol rule read as a torch
mismatch). Each message is the library's own text (the ``source`` of each signature) or a
training-side thread's paste, run through the wrappers pasted logs put around lines; each family
has near-misses that must stay unread or read as their own cause.
"""

from __future__ import annotations

from stackpeel.explain import explain_text, match_codes
from test_explain_patterns import assert_sourced_root, codes_of as _codes, family_tests, sourced_roots_test

FAMILIES = {
    "flash-attn-dtype-unsupported": [
        # flash-attention csrc/flash_attn/flash_api.cpp mha_fwd, as QwenLM/Qwen3#406 pasted it
        "RuntimeError: FlashAttention only support fp16 and bf16 data type",
        # the same through xinference's actor prefix inside the message
        "RuntimeError: [address=0.0.0.0:37093, pid=1304] FlashAttention only support fp16 and bf16 data type",
        # a user's sentence with a trailing full stop (ali-vilab/UniAnimate-DiT#40)
        "Have you encountered with problems when using FLASH ATTENTION: RuntimeError: FlashAttention only support fp16 and bf16 data type.",
    ],
    "driver-too-old-for-build": [
        # sgl-kernel common_ops on a driver without green contexts (sglang PR #8701's paste)
        "ImportError: /usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxDestroy",
        # the 12.5 stream call (sgl-project/sglang#8131)
        "ImportError: /opt/conda/lib/python3.10/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: cuGreenCtxStreamCreate",
        # an issue title, without the library's path (sgl-project/sglang#8432)
        "[Bug] undefined symbol: cuGreenCtxDestroy",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


test_new_root_is_sourced = sourced_roots_test(["flash-attn-dtype-unsupported"])


def test_dtype_root_says_to_run_attention_in_half_precision():
    entry = assert_sourced_root("flash-attn-dtype-unsupported")
    assert entry.layer == "kernels" and entry.severity == "blocking"
    assert "torch_dtype=torch.bfloat16" in entry.fix and "sdpa" in entry.fix


def test_dtype_error_with_the_unsloth_traceback_line():
    # unslothai/unsloth#827: the error, then the flash_attn_func call it came from
    text = ("RuntimeError: FlashAttention only support fp16 and bf16 data type\n\n"
            'File "/usr/local/lib/python3.10/site-packages/unsloth/models/llama.py", line 360\n\n'
            "A = flash_attn_func(Q, K, V, causal = True)\n")
    assert _codes(text)[:1] == ["flash-attn-dtype-unsupported"]


def test_dtype_error_in_prose_that_says_memory_was_short():
    # QwenLM/Qwen3#406: the user enabled flash_attention_2 "to save GPU memory" (显存不足);
    # those words must not turn the dtype error into an out-of-memory
    text = ("lora finetune时为了解决显存不足的问题在预训练模型的config.json中设置了_attn.implementation为flash_attention_2，进行模型推理时报错：\n"
            "RuntimeError: FlashAttention only support fp16 and bf16 data type\n")
    assert _codes(text)[:1] == ["flash-attn-dtype-unsupported"]


def test_transformers_float32_warning_alone_names_no_dtype_error():
    # transformers' warning at load: verl and other FSDP trainers print it at init and then run
    # under mixed precision, so on its own it is no failure of FlashAttention
    text = ("Flash Attention 2.0 only supports torch.float16 and torch.bfloat16 dtypes, but the current dype in "
            "Qwen2ForCausalLM is torch.float32. You should run training or inference using Automatic Mixed-Precision "
            "via the `with torch.autocast(device_type='torch_device'):` decorator, or load the model with the "
            "`torch_dtype` argument.\n")
    assert "flash-attn-dtype-unsupported" not in _codes(text)


def test_flash_attention_arch_check_stays_the_arch_code():
    # the neighbouring TORCH_CHECK of flash_api.cpp is about the GPU, not the dtype
    codes = _codes("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n")
    assert codes[:1] == ["flash-attn-arch-unsupported"]
    assert "flash-attn-dtype-unsupported" not in codes


def test_other_kernels_dtype_checks_are_no_flash_attention_signature():
    # FlashMoBA and Block-Sparse-Attention (kernels derived from FlashAttention 2) word their own
    # checks alike: the signature names FlashAttention only, so they are not matched by it; explain
    # may still offer the code by resemblance to the corpus (the cause, float32 inputs, is the same)
    for line in ("RuntimeError: FlashMoBA only support fp16 and bf16 data type",
                 "RuntimeError: BlockSparseAttention only support fp16 and bf16 data type"):
        assert "flash-attn-dtype-unsupported" not in match_codes(line), line
        for cand in explain_text(line + "\n").candidates:
            if cand.code == "flash-attn-dtype-unsupported":
                assert cand.basis == "similar", (line, cand.basis)


def test_green_context_symbol_with_the_environment_report():
    # sgl-project/sglang#8432: the title, then sglang's environment report naming driver 535
    text = ("[Bug] undefined symbol: cuGreenCtxDestroy\n\n### Environment\n\n"
            "CUDA_HOME: /usr/local/cuda-12.2\nNVCC: Cuda compilation tools, release 12.2, V12.2.128\n"
            "CUDA Driver Version: 535.86.10\nPyTorch: 2.7.1+cu126\nsgl_kernel: 0.2.7\n")
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_torch_symbol_in_the_same_library_stays_a_torch_mismatch():
    # sgl-project/sglang#5100: common_ops built for another torch (a mangled torch:: name)
    text = "ImportError: /usr/local/lib/python3.11/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSsb\n"
    codes = _codes(text)
    assert codes[:1] == ["extension-torch-mismatch"]
    assert "driver-too-old-for-build" not in codes[:1]


def test_other_driver_api_symbols_are_not_read_as_green_contexts():
    # a cu* symbol every driver has is a link problem of the extension, not an old driver
    codes = _codes("ImportError: /opt/ext/_ext.so: undefined symbol: cuModuleLoadData\n")
    assert "driver-too-old-for-build" not in codes[:1]
