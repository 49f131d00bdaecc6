"""apps20: the LLM applications' own model-loading messages (docs/dev/apps20.md).

llama.cpp's loader, as llama.cpp, Ollama, LM Studio, KoboldCpp and the bindings that vendor it
print it, refuses a GGUF newer than the build (an unknown pre-tokenizer, a tensor count or a
tensor the build does not know): ``model-architecture-unsupported``. A file that is not the
model at all (a Git LFS pointer, a saved web page, a cut-off download: GGUF, safetensors, torch
zip checkpoints, pickles, ONNX) is ``model-file-corrupt``.
llama.cpp's "not compiled with GPU offload support" warning stands for the CUDA initialisation
failure printed just before it (llama.cpp#10553). Each message is the library's own text (the
``source`` of each signature) or a training-side thread's paste; every family runs through the
wrappers pasted logs put around lines, and each has near-misses that must stay unread.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import assert_sourced_root, codes_of as _codes, family_tests, sourced_roots_test

FAMILIES = {
    "model-architecture-unsupported": [
        # llama-vocab.cpp, as llama.cpp#12021 pasted it
        "llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: 'deepseek-r1-qwen'",
        # the same through Ollama's runner (ollama#4529's title)
        "error loading model: error loading model vocabulary: unknown pre-tokenizer type: 'qwen2'",
        # llama-model-loader.cpp done_getting_tensors, as LM Studio's JSON (lmstudio-bug-tracker#77)
        # and llama.cpp.zig's log (Deins/llama.cpp.zig#4) show it
        "llama.cpp error: 'done_getting_tensors: wrong number of tensors; expected 292, got 291'",
        "error(llama_cpp): llama_model_load: error loading model: done_getting_tensors: wrong number of tensors; expected 292, got 291",
        # create_tensor, as KoboldCpp printed it (LostRuins/koboldcpp#1773)
        "llama_model_load: error loading model: missing tensor 'blk.92.nextn.embed_tokens.weight'",
    ],
    "model-file-corrupt": [
        # ggml/src/gguf.cpp gguf_init_from_file_impl on a Git LFS pointer ('vers...')
        "gguf_init_from_file_impl: invalid magic characters: 'vers', expected 'GGUF'",
        # ggml.c gguf_init_from_file (2023) on the same pointer
        "gguf_init_from_file: invalid magic number 73726576",
        # llama-model-loader.cpp llama_tensor_weight on a cut-off file
        "llama_model_load: error loading model: tensor 'blk.3.attn_qkv.weight' data is not within the file bounds, model is corrupted or incomplete",
        # Ollama fs/ggml Decode (ollama#3010) and server/download.go verifyBlob
        "Error: invalid file magic",
        "Error: digest mismatch, file must be downloaded again: want sha256:a92c55b71e45d620cee84ed774eef6113d41c39a28bb2da562a871b288f411cf, got sha256:c4780c4fd08ee1a8fb359941c87834d1ec566598224a5a199c2c978059b69350",
        # gguf-py GGUFReader
        "ValueError: GGUF magic invalid",
        # safetensors' safe_open on an LFS pointer and on a cut-off file (PKU-YuanGroup/MagicTime#21)
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer",
        # torch's zip reader on a truncated checkpoint (CompVis/stable-diffusion#93)
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
        # pickle on an LFS pointer (facebookresearch/sapiens#124)
        "_pickle.UnpicklingError: invalid load key, 'v'.",
        # onnxruntime Model::Load on an LFS pointer (commaai/commavq#12) and the onnx checker
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf: [ONNXRuntimeError] : 7 : INVALID_PROTOBUF : Load model from /home/mojo/commavq/models/decoder.onnx failed:Protobuf parsing failed.",
        "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:InvalidProtobuf] Load model from /tmp/test/./sensevoice-small-onnx/model.int8.onnx failed:Protobuf parsing failed.",
        "ValidationError: Unable to parse proto from file: /home/mojo/commavq/models/decoder.onnx. Please check if it is a valid protobuf file of proto.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


test_new_root_is_sourced = sourced_roots_test(["model-file-corrupt"])


def test_model_file_corrupt_is_blocking_and_says_how_to_look_at_the_file():
    entry = assert_sourced_root("model-file-corrupt")
    assert entry.severity == "blocking"
    assert "git-lfs" in str(entry.commands) and "sha256sum" in str(entry.commands)


def test_lm_studio_json_cause_and_quoted_titles():
    # lmstudio-bug-tracker#350: the cause sits inside a JSON string, quotes doubled
    text = '  "cause": "llama.cpp error: \'error loading model vocabulary: unknown pre-tokenizer type: \'deepseek-r1-qwen\'\'",\n'
    assert _codes(text)[:1] == ["model-architecture-unsupported"]
    # a title in prose: llama.cpp#3358 quotes the old loader's words after the format's name
    text = "Cannot load Xwin 7B (4-bit quant) GGUF model - invalid magic number\n"
    assert _codes(text)[:1] == ["model-file-corrupt"]
    # Ollama's create output, as ollama#3010 pasted it
    text = "$ollama create musicllm -f Modelfile\ntransferring model data\ncreating model layer\nError: invalid file magic\n"
    assert _codes(text)[:1] == ["model-file-corrupt"]


def test_offload_warning_after_a_cuda_init_failure_is_that_failure():
    # llama.cpp#10553: a CUDA build whose initialisation failed prints the CPU-build warning
    # next; the maintainer called the warning misleading
    text = ("ggml_cuda_init: failed to initialize CUDA: unknown error\n"
            "warning: not compiled with GPU offload support, --gpu-layers option will be ignored\n"
            "warning: see main README.md for information on enabling GPU BLAS support\n")
    assert _codes(text)[:1] == ["cuda-init-failed"]
    assert "framework-cpu-only-build" not in _codes(text)
    # the failure's own words still decide when they name a cause
    text = ("ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version\n"
            "warning: not compiled with GPU offload support, --gpu-layers option will be ignored\n")
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_offload_warning_alone_is_still_a_cpu_build():
    # llama.cpp#9153: a build without a GPU backend, nothing failed
    text = ("warning: not compiled with GPU offload support, --gpu-layers option will be ignored\n"
            "warning: see main README.md for information on enabling GPU BLAS support\n"
            "Log start\nmain: build = 3618 (3ba780e2)\n")
    assert _codes(text)[:1] == ["framework-cpu-only-build"]


def test_near_misses_stay_unread():
    for line in [
        # llama.cpp's healthy notices about the same things
        "llm_load_vocab: missing pre-tokenizer type, using: 'default'",
        "load: missing or unrecognized pre-tokenizer type, using: 'default'",
        "llama_model_loader: loaded meta data with 39 key-value pairs and 339 tensors from example.gguf (version GGUF V3 (latest))",
        "llama_model_loader: - type  f32:  241 tensors",
        # another program's magic numbers (fonts, pcap) and a file that is fine
        "sfnt/head: invalid magic number 5f0f3cf6",
        "Invalid magic number 0a0d0d0a",
        "verifying sha256 digest",
        # a tensor named in a healthy line
        "llm_load_tensors: offloaded 33/33 layers to GPU",
        # pickle's other load keys (a file of another format, not a pointer), torch's other
        # zip errors, safetensors' other header errors, an onnxruntime load that failed otherwise
        "_pickle.UnpicklingError: invalid load key, '\\x00'.",
        "_pickle.UnpicklingError: invalid load key, 'x'.",
        "RuntimeError: PytorchStreamReader failed locating file data.pkl: file not found",
        "safetensors_rust.SafetensorError: Error while deserializing header: InvalidHeaderStart",
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Load model from model.onnx failed:Node (Conv_0) Op (Conv) [ShapeInferenceError] Attribute dilations has incorrect size",
    ]:
        codes = set(match_codes(line))
        assert not codes & {"model-architecture-unsupported", "model-file-corrupt"}, (line, codes)
