"""harv42c: an unbiased harvest of vision-language and multimodal model threads (Qwen-VL,
InternVL, MiniCPM-V, CogVLM, BLIP/LAVIS, LLaVA, video-LLMs), scored blind, and the general fixes
its misses ask for (docs/dev/harv42c.md).

Twenty-one new training-side logs; explain named twelve first before any change. The fixed
misses (a program's own message with no signature, or a Mac it did not use):
- transformers' refusal to run a model repository's own code without ``trust_remote_code=True``
  (``requires you to execute the configuration file in that repo on your local machine``, and
  vLLM's ``--trust-remote-code`` hint; vllm-project/vllm#9531): the new code
  ``huggingface-remote-code-not-trusted``;
- LAVIS' ``BLIP models are not compatible with transformers>=4.27`` assertion (salesforce/LAVIS#310)
  and WAS Node Suite's ``transformers==4.26.1 is required for BLIP models``
  (WASasquatch/was-node-suite-comfyui#293): ``dependency-version-mismatch``;
- vLLM 0.4-0.6's ``assert "factor" in rope_scaling`` (QwenLM/Qwen2-VL#123):
  ``dependency-version-mismatch``, could be ``model-architecture-unsupported``;
- FastChat's and LLaVA's flash-attn monkey patch warning ``Flash attention is only supported on
  A100 or H100 GPU during training`` (haotian-liu/LLaVA#641, which was silent):
  ``flash-attn-arch-unsupported``, not where the patch falls back to plain attention;
- transformers' ``Using `bitsandbytes` 8-bit quantization requires Accelerate`` on a Mac
  (OpenBMB/MiniCPM-V#215): ``cuda-on-macos``, read only where the log shows a Mac;
- pip's ``(from versions: none)`` for decord, the video reader with no macOS, aarch64 or
  newer-Python wheel (salesforce/LAVIS#1, #122, hits blind only by resemblance):
  ``package-no-matching-wheel``.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# transformers dynamic_module_utils.py resolve_trust_remote_code (both wordings)
TRC_CONFIG = ("ValueError: Loading OpenGVLab/InternVL2-8B requires you to execute the configuration file in that "
              "repo on your local machine. Make sure you have read the code there to avoid malicious use, then set "
              "the option `trust_remote_code=True` to remove this error.")
TRC_MODELING = ("ValueError: Loading THUDM/cogvlm-chat-hf requires you to execute the modeling file in that repo "
                "on your local machine. Make sure you have read the code there to avoid malicious use, then set the "
                "option `trust_remote_code=True` to remove this error.")
TRC_CUSTOM = ("ValueError: The repository for THUDM/cogvlm2-llama3-chat-19B contains custom code which must be "
              "executed to correctly load the model. You can inspect the repository content at "
              "https://hf.co/THUDM/cogvlm2-llama3-chat-19B.")
# vllm transformers_utils/config.py get_config
TRC_VLLM = ("ValueError: Failed to load the model config. If the model is a custom model not yet available in the "
            "HuggingFace transformers library, consider setting `trust_remote_code=True` in LLM or using the "
            "`--trust-remote-code` flag in the CLI.")
# salesforce/LAVIS lavis/models/blip_models/blip.py BlipBase.__init__
LAVIS = ("AssertionError: BLIP models are not compatible with transformers>=4.27, run pip install "
         "transformers==4.25 to downgrade")
# WASasquatch/was-node-suite-comfyui WAS_Node_Suite.py
WAS = ("WAS Node Suite Error: `transformers==4.26.1` is required for BLIP models. Please run the "
       "`C:\\ComfyUI\\custom_nodes\\was-node-suite-comfyui\\requirements.txt` through ComfyUI's python executable.")
# lm-sys/FastChat fastchat/train/llama_flash_attn_monkey_patch.py (and LLaVA's copy), via warnings.warn
FASTCHAT = ("/root/LLaVA/llava/train/llama_flash_attn_monkey_patch.py:108: UserWarning: Flash attention is only "
            "supported on A100 or H100 GPU during training due to head dim > 64 backward.ref: "
            "https://github.com/HazyResearch/flash-attention/issues/190#issuecomment-1523359593")
# pip for decord (no wheel for this interpreter or platform)
DECORD_NONE = "ERROR: Could not find a version that satisfies the requirement decord (from versions: none)"
DECORD_PIN = ("ERROR: Could not find a version that satisfies the requirement decord>=0.6.0 (from lavis) "
              "(from versions: none)")
DECORD_NOMATCH = "ERROR: No matching distribution found for decord"

FAMILIES = {
    "huggingface-remote-code-not-trusted": [TRC_CONFIG, TRC_MODELING, TRC_CUSTOM, TRC_VLLM],
    "dependency-version-mismatch": [LAVIS, WAS],
    "flash-attn-arch-unsupported": [FASTCHAT],
    "package-no-matching-wheel": [DECORD_NONE, DECORD_PIN, DECORD_NOMATCH],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_vllm_serve_without_trust_remote_code():
    # vllm-project/vllm#9531 as the reporter typed it (lower-cased ValueError)
    text = ("[Usage]: When using vllm to start the interpl2-8b model service, an error occurs.\n"
            "valueerror: loading internvl2-8b/ requires you to execute the configuration file in that repo on your "
            "local machine. make sure you have read the code there to avoid malicious use, then set the option "
            "'trust_remote_code=true\u2019 to remove this error.\n")
    assert _codes(text)[:1] == ["huggingface-remote-code-not-trusted"]


def test_vllm_traceback_names_remote_code():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/transformers_utils/config.py", line 58, in get_config\n'
        "    config = AutoConfig.from_pretrained(\n"
        "ValueError: Loading /models/MiniCPM-V-2_6 requires you to execute the configuration file in that repo on "
        "your local machine. Make sure you have read the code there to avoid malicious use, then set the option "
        "`trust_remote_code=True` to remove this error.\n"
        "\n"
        "During handling of the above exception, another exception occurred:\n"
        + TRC_VLLM + "\n"
    )
    assert _codes(text)[:1] == ["huggingface-remote-code-not-trusted"]


def test_remote_code_near_misses_stay_quiet():
    for line in (
        "model = AutoModel.from_pretrained(path, trust_remote_code=True, torch_dtype=torch.bfloat16)",
        "vllm serve OpenGVLab/InternVL2-8B --trust-remote-code --max-model-len 8192",
        '        if (not trust_remote_code and "requires you to execute the configuration file" in str(e)):',
        "trust_remote_code: true",
    ):
        assert "transformers-trust-remote-code-required" not in _ids(line), line


def test_lavis_assertion_in_a_traceback():
    # salesforce/LAVIS#310's paste, the load_model_and_preprocess traceback before it
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/user/caption.py", line 9, in <module>\n'
        "    model, vis_processors, _ = load_model_and_preprocess(name=\"blip_caption\", model_type=\"base_coco\")\n"
        '  File "/home/user/LAVIS/lavis/models/blip_models/blip.py", line 24, in __init__\n'
        '    assert transformers_version < version.parse("4.27"), "BLIP models are not compatible with '
        'transformers>=4.27, run pip install transformers==4.25 to downgrade"\n'
        + LAVIS + "\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_transformers_pin_near_misses_stay_quiet():
    for line in (
        "Requirement already satisfied: transformers==4.26.1 in ./venv/lib/python3.10/site-packages",
        "transformers==4.26.1",
        "`transformers>=4.37.0` is required for Qwen2 models",
        "salesforce-lavis 1.0.2 requires transformers<4.27,>=4.25.0, but you have transformers 4.40.0 which is "
        "incompatible.",
    ):
        assert "app-transformers-pin-check" not in _ids(line), line


def test_vllm_rope_scaling_assertion():
    # QwenLM/Qwen2-VL#123: vLLM 0.6's max_model_len check on Qwen2-VL's rewritten rope_scaling
    text = (
        '  File "/usr/local/venv/model_llm/lib/python3.10/site-packages/vllm/config.py", line 222, in __init__\n'
        "    self.max_model_len = _get_and_verify_max_len(\n"
        '  File "/usr/local/venv/model_llm/lib/python3.10/site-packages/vllm/config.py", line 1739, in '
        "_get_and_verify_max_len\n"
        '    assert "factor" in rope_scaling\n'
        "AssertionError\n"
    )
    codes = _codes(text)
    assert codes[:1] == ["dependency-version-mismatch"]
    assert "vllm-rope-scaling-factor-assert" in _ids('    assert "factor" in rope_scaling')


def test_rope_scaling_near_misses_stay_quiet():
    for line in (
        "rope_scaling = {'type': 'dynamic', 'factor': 2.0}",
        '    if "factor" in rope_scaling:',
        "Unrecognized keys in `rope_scaling` for 'rope_type'='default': {'mrope_section'}",
    ):
        assert "vllm-rope-scaling-factor-assert" not in _ids(line), line


def test_llava_flash_attn_warning_then_the_failure():
    # the warning LLaVA's train_mem.py prints on a V100, then flash-attn's own refusal
    text = (
        FASTCHAT + "\n"
        "  warnings.warn(\n"
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n"
    )
    assert _codes(text)[:1] == ["flash-attn-arch-unsupported"]


def test_fastchat_fallback_copy_is_not_a_failure():
    # FastChat's gpt_neox patch adds 'Resorting to plain attention...' and runs without flash-attn
    text = (
        "/root/FastChat/fastchat/train/llama2_flash_attn_monkey_patch.py:12: UserWarning: Flash attention is only "
        "supported on A100 or H100 GPU during training due to head dim > 64 backward.ref: "
        "https://github.com/HazyResearch/flash-attention/issues/190#issuecomment-1523359593"
        "Resorting to plain attention...\n"
    )
    assert "flash-attn-arch-unsupported" not in _codes(text)


def test_bitsandbytes_requires_accelerate_on_a_mac():
    # OpenBMB/MiniCPM-V#215 (title: the M3 chip named in Chinese) and an English MacBook paste
    assert _codes("我的M3芯片本地运行MiniCPM-Llama3-V-2_5-int4得到了报错Using `bitsandbytes` 8-bit quantization "
                  "requires Accelerate\n")[:1] == ["cuda-on-macos"]
    text = (
        "Running on my MacBook Pro (Apple M2 Max), macOS 14.4\n"
        "ImportError: Using `bitsandbytes` 4-bit quantization requires Accelerate: `pip install accelerate` and "
        "the latest version of bitsandbytes: `pip install -i https://pypi.org/simple/ bitsandbytes`\n"
    )
    assert _codes(text)[:1] == ["cuda-on-macos"]


def test_bitsandbytes_requires_accelerate_elsewhere_keeps_quiet():
    # without a Mac the words may mean a missing accelerate: the Mac rule does not read them
    text = ("ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install accelerate` and "
            "the latest version of bitsandbytes: `pip install -i https://pypi.org/simple/ bitsandbytes`\n")
    assert "cuda-on-macos" not in _codes(text)
    assert "transformers-bnb-requires-accelerate-on-mac" not in _ids(
        "ImportError: Using `aqlm` quantization requires Accelerate: `pip install accelerate`")


def test_decord_near_misses_stay_quiet():
    for line in (
        "Successfully installed decord-0.6.0",
        "Requirement already satisfied: decord in ./venv/lib/python3.10/site-packages (0.6.0)",
        "ERROR: Could not find a version that satisfies the requirement decordx (from versions: none)",
    ):
        assert "pip-no-gpu-package-version" not in _ids(line), line
