"""Session 39, lead: transformers' refusal of Flash Attention 2 as users retype it ("doesn't")."""
import pytest

from stackpeel.explain import match_codes

CODE = "model-attention-implementation-unsupported"


@pytest.mark.parametrize("text", [
    # transformers/modeling_utils.py _check_and_enable_flash_attn_2, as raised
    "ValueError: ChatGLMForConditionalGeneration does not support Flash Attention 2.0 yet. Please request to add "
    "support where the model is hosted, on its model hub page",
    # retyped in prose (zai-org/GLM-4#83), quoted, prefixed
    "报错直接就是ChatGLMForConditionalGeneate doesn't support Flash Attention 2 yet..",
    "> `MyModel doesn't support Flash Attention 2.0 yet`",
    "[rank0]: ValueError: Foo does not support Flash Attention 2.0 yet.",
])
def test_named(text):
    assert CODE in match_codes(text)


@pytest.mark.parametrize("text", [
    "FlashAttention only supports Ampere GPUs or newer.",
    "this model doesn't support Flash Attention 3 yet",
    "Flash Attention 2 is now supported for Llama",
])
def test_not_named(text):
    assert CODE not in match_codes(text)
