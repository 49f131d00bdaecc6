"""harv43d: an unbiased harvest of Chinese open-model repositories (ChatGLM/GLM, Qwen, InternLM,
Baichuan, DeepSeek, MiniCPM and their demo and fine-tune scripts), scored blind, and the general
fixes its misses ask for (docs/dev/harv43d.md).

Nineteen new training-side logs; explain named seven first before any change. The fixed misses all
come from one fact: these models ship their tokenizer and modeling code as remote code, written
against the transformers release of their day, and later transformers releases break it:
- transformers 4.34 made PreTrainedTokenizer.__init__ add the special tokens itself, which reads
  vocab_size before the remote slow tokenizer has built its SentencePiece model:
  ``'BaichuanTokenizer' object has no attribute 'sp_model'`` (InternLM, Yi, ...),
  ``'ChatGLMTokenizer' object has no attribute 'sp_tokenizer'`` / ``'tokenizer'``;
- transformers 4.45 passes ``padding_side`` to the tokenizer's ``_pad()``;
- transformers 4.48 dropped the ``is_torch_greater_or_equal_than_1_13`` flags of
  transformers.pytorch_utils that remote code imports;
- GenerationMixin's private ``_extract_past_from_model_output`` was re-signed, then removed;
and, the other way round, code importing ``transformers.models.qwen2`` from a release that
predates the model (model-architecture-unsupported).
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# transformers >= 4.34 tokenization_utils.py PreTrainedTokenizer.__init__ -> remote vocab_size
SP_MODEL_BAICHUAN = "AttributeError: 'BaichuanTokenizer' object has no attribute 'sp_model'"
SP_MODEL_INTERNLM = "AttributeError: 'InternLMTokenizer' object has no attribute 'sp_model'"
SP_TOKENIZER_CHATGLM = "AttributeError: 'ChatGLMTokenizer' object has no attribute 'sp_tokenizer'. Did you mean: '_tokenize'?"
TOKENIZER_CHATGLM = "AttributeError: 'ChatGLMTokenizer' object has no attribute 'tokenizer'. Did you mean: 'tokenize'?"
# transformers >= 4.45 tokenization_utils_base.py PreTrainedTokenizerBase.pad -> remote _pad
PAD_PADDING_SIDE = "TypeError: ChatGLM4Tokenizer._pad() got an unexpected keyword argument 'padding_side'"
# transformers >= 4.48 pytorch_utils.py without the is_torch_* flags
PYTORCH_UTILS_FLAG = ("ImportError: cannot import name 'is_torch_greater_or_equal_than_1_13' from "
                      "'transformers.pytorch_utils' (/opt/env/lib/python3.10/site-packages/transformers/pytorch_utils.py)")
# transformers generation/utils.py GenerationMixin._extract_past_from_model_output, re-signed then removed
EXTRACT_PAST_GONE = ("AttributeError: 'ChatGLMForConditionalGeneration' object has no attribute "
                     "'_extract_past_from_model_output'")
EXTRACT_PAST_RESIGNED = ("TypeError: GenerationMixin._extract_past_from_model_output() got an unexpected "
                         "keyword argument 'standardize_cache_format'")
# a model package transformers does not ship yet
QWEN2_PACKAGE = "ModuleNotFoundError: No module named 'transformers.models.qwen2'"

FAMILIES = {
    "dependency-version-mismatch": [SP_MODEL_BAICHUAN, SP_MODEL_INTERNLM, SP_TOKENIZER_CHATGLM,
                                    TOKENIZER_CHATGLM, PAD_PADDING_SIDE, PYTORCH_UTILS_FLAG,
                                    EXTRACT_PAST_GONE, EXTRACT_PAST_RESIGNED],
    "model-architecture-unsupported": [QWEN2_PACKAGE],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_internlm_traceback_names_the_transformers_release():
    # InternLM/InternLM#400's shape: the remote tokenizer's __init__ reaches transformers' own init
    text = (
        ">>> tokenizer = AutoTokenizer.from_pretrained(\"/root/autodl-tmp/internlm-chat-7b\", trust_remote_code=True)\n"
        "Traceback (most recent call last):\n"
        '  File "/root/.cache/huggingface/modules/transformers_modules/internlm-chat-7b/tokenization_internlm.py", line 68, in __init__\n'
        "    super().__init__(\n"
        '  File "/root/miniconda3/lib/python3.8/site-packages/transformers/tokenization_utils.py", line 366, in __init__\n'
        "    self._add_tokens(self.all_special_tokens_extended, special_tokens=True)\n"
        '  File "/root/.cache/huggingface/modules/transformers_modules/internlm-chat-7b/tokenization_internlm.py", line 92, in vocab_size\n'
        "    return self.sp_model.get_piece_size()\n"
        "AttributeError: 'InternLMTokenizer' object has no attribute 'sp_model'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_chatchat_worker_prefix_keeps_the_reading():
    # chatchat-space/Langchain-Chatchat's worker log prefixes every stderr line
    text = (
        "2023-10-24 13:48:11 | ERROR | stderr |   File \"/home/local/.cache/huggingface/modules/"
        "transformers_modules/chatglm2-6b/tokenization_chatglm.py\", line 104, in vocab_size\n"
        "2023-10-24 13:48:11 | ERROR | stderr |     return self.tokenizer.n_words\n"
        "2023-10-24 13:48:11 | ERROR | stderr | AttributeError: 'ChatGLMTokenizer' object has no attribute 'tokenizer'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_chinese_sentence_around_the_message_keeps_the_reading():
    # baichuan-inc/Baichuan2#269, the reporter's sentence
    text = ("在使用transformers 4.35.0版本时，会产生错误：AttributeError: 'BaichuanTokenizer' object has no "
            "attribute 'sp_model'.\n切换到4.30.0版本时可以正常运行~\n")
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_tokenizer_near_misses_stay_quiet():
    rule = "remote-tokenizer-built-after-init-transformers-4-34"
    for line in (
        # a fast tokenizer has no sp_model by design: code asking it for one is another cause
        "AttributeError: 'LlamaTokenizerFast' object has no attribute 'sp_model'",
        # code handed a tokenizer where it wanted a processor
        "AttributeError: 'LlamaTokenizer' object has no attribute 'tokenizer'",
        "AttributeError: 'BaichuanTokenizer' object has no attribute 'sp_model_kwargs'",
        "        self.sp_model = spm.SentencePieceProcessor(**self.sp_model_kwargs)",
        "    return self.sp_model.get_piece_size()",
        "Loaded BaichuanTokenizer with sp_model of 125696 pieces",
    ):
        assert rule not in _ids(line), line


def test_pytorch_utils_near_misses_stay_quiet():
    rule = "remote-code-imports-removed-pytorch-utils-flag"
    for line in (
        "from transformers.pytorch_utils import ALL_LAYERNORM_LAYERS, is_torch_greater_or_equal_than_1_13",
        "is_torch_greater_or_equal_than_1_13 = parsed_torch_version_base >= version.parse(\"1.13\")",
        "ImportError: cannot import name 'is_torch_greater_or_equal_than_1_13' from 'mymodels.utils'",
    ):
        assert rule not in _ids(line), line


def test_generation_helper_near_misses_stay_quiet():
    rule = "remote-code-calls-removed-generation-helper"
    for line in (
        "        model_kwargs[\"past_key_values\"] = self._extract_past_from_model_output(",
        "    def _extract_past_from_model_output(self, outputs, standardize_cache_format=False):",
        "AttributeError: 'ChatGLMForConditionalGeneration' object has no attribute 'chat'",
    ):
        assert rule not in _ids(line), line


def test_pad_near_misses_stay_quiet():
    rule = "remote-tokenizer-pad-lacks-padding-side"
    for line in (
        "TypeError: ChatGLMTokenizer._pad() got an unexpected keyword argument 'pad_to_multiple_of'",
        "tokenizer.padding_side = 'left'",
        "    encoded_inputs = self._pad(encoded_inputs, max_length=max_length, padding_side=padding_side)",
    ):
        assert rule not in _ids(line), line


def test_model_package_near_misses_stay_quiet():
    rule = "transformers-model-package-missing"
    for line in (
        # transformers itself missing is python-package-not-installed
        "ModuleNotFoundError: No module named 'transformers'",
        # a deprecated model moved under transformers.models.deprecated
        "ModuleNotFoundError: No module named 'transformers.models.deprecated.mctct'",
        "from transformers.models.qwen2 import Qwen2Config, Qwen2ForCausalLM",
        "ModuleNotFoundError: No module named 'transformers_stream_generator'",
    ):
        assert rule not in _ids(line), line
    assert "python-package-not-installed" in _codes("ModuleNotFoundError: No module named 'transformers'\n")


def test_qwen_tensorrt_llm_paste_names_the_old_transformers():
    # Tlntin/Qwen-TensorRT-LLM#92: tensorrt_llm 0.7.0 pins transformers 4.33.1, before Qwen2
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/Qwen-TensorRT-LLM/examples/qwen2/build.py", line 13, in <module>\n'
        "    from transformers.models.qwen2 import Qwen2Config, Qwen2ForCausalLM\n"
        "ModuleNotFoundError: No module named 'transformers.models.qwen2'\n"
    )
    assert _codes(text)[:1] == ["model-architecture-unsupported"]
