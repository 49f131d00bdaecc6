"""harv36a: an unbiased harvest of LLM fine-tuning frameworks and their GPU stacks (trl, peft,
LLaMA-Factory, ms-swift, unsloth, FastChat, LMFlow and their vLLM, flash-attn, bitsandbytes and
DeepSpeed installs), scored blind, and the general fixes its misses ask for (docs/dev/harv36a.md).

Eighteen new training-side logs in round 1; explain named eleven first before any change. The
fixed misses (A1, a program's own message with no signature):
- vLLM's engine arguments are a dataclass, and a caller written for another vLLM release fails in
  its generated __init__: ``TypeError: EngineArgs.__init__() got an unexpected keyword argument
  'worker_extension_cls'`` (huggingface/trl#3304: trl's vllm-serve with an older vLLM); now
  ``dependency-version-mismatch``;
- a peft or transformers newer than the installed bitsandbytes: ``AttributeError: 'Linear4bit'
  object has no attribute 'compute_dtype'`` (huggingface/peft#1235) and ``module
  'bitsandbytes.nn' has no attribute 'Linear4bit'`` (bitsandbytes 0.38 and older); now
  ``dependency-version-mismatch``.
Each message is the program's own text or a training-side thread's paste, run through the
wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# Python 3.10+'s TypeError from vLLM's dataclass EngineArgs (huggingface/trl#3304)
ENGINE_ARGS = ("TypeError: EngineArgs.__init__() got an unexpected keyword argument "
               "'worker_extension_cls'")
# the async engine's subclass (AsyncEngineArgs), as an OpenAI-server or rollout worker builds it
ASYNC_ENGINE_ARGS = ("TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument "
                     "'enable_sleep_mode'")
# peft's LoRA wrapper on a 4-bit layer of an older bitsandbytes (huggingface/peft#1209, #1235)
LINEAR4BIT_ATTR = "AttributeError: 'Linear4bit' object has no attribute 'compute_dtype'"
# peft or transformers importing the 4-bit layer from bitsandbytes 0.38 (bitsandbytes#416)
LINEAR4BIT_MODULE = "AttributeError: module 'bitsandbytes.nn' has no attribute 'Linear4bit'"
# Python 3.11's suggestion suffix (the bitsandbytes-windows fork without 4-bit layers)
LINEAR4BIT_MODULE_HINT = ("AttributeError: module 'bitsandbytes.nn' has no attribute 'Linear4bit'. "
                          "Did you mean: 'Linear8bitLt'?")

FAMILIES = {
    "dependency-version-mismatch": [ENGINE_ARGS, ASYNC_ENGINE_ARGS, LINEAR4BIT_ATTR, LINEAR4BIT_MODULE,
                                    LINEAR4BIT_MODULE_HINT],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_trl_vllm_serve_traceback_names_the_version_skew():
    # huggingface/trl#3304 (the reporter's paste)
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/trl", line 8, in <module>\n'
        "    sys.exit(main())\n"
        '  File "/usr/local/lib/python3.10/dist-packages/trl/scripts/vllm_serve.py", line 238, in main\n'
        "    llm = LLM(\n"
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/llm.py", line 212, in __init__\n'
        "    engine_args = EngineArgs(\n"
        "TypeError: EngineArgs.__init__() got an unexpected keyword argument 'worker_extension_cls'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_engine_args_from_a_ray_rollout_worker():
    # the same TypeError as a Ray actor prints it (verl/OpenRLHF rollouts)
    text = ("(LLMRayActor pid=585804) TypeError: AsyncEngineArgs.__init__() got an unexpected keyword "
            "argument 'worker_extension_cls'\n")
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_engine_args_near_misses_stay_quiet():
    # Python 3.9's wording names no class: not read
    assert "vllm-engine-args-unexpected-keyword" not in _ids(
        "TypeError: __init__() got an unexpected keyword argument 'worker_extension_cls'")
    # another class's unexpected keyword (a user's own call into transformers)
    assert "vllm-engine-args-unexpected-keyword" not in _ids(
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'")
    # SGLang's ServerArgs is not vLLM's EngineArgs
    assert "vllm-engine-args-unexpected-keyword" not in _ids(
        "TypeError: ServerArgs.__init__() got an unexpected keyword argument 'enable_dp_attention'")
    # a healthy log line naming the class
    assert "vllm-engine-args-unexpected-keyword" not in _ids(
        "INFO 04-16 10:00:01 arg_utils.py:1234] EngineArgs(model='Qwen/Qwen2.5-7B', tensor_parallel_size=8)")


def test_peft_get_peft_model_traceback_names_the_old_bitsandbytes():
    # huggingface/peft#1209 (a commenter's notebook traceback, the reporter's code)
    text = (
        "AttributeError                            Traceback (most recent call last)\n"
        "----> 2 model = get_peft_model(model, lora_config)\n"
        "/usr/local/lib/python3.10/dist-packages/peft/mapping.py in get_peft_model(model, peft_config, "
        "adapter_name, mixed)\n"
        "AttributeError: 'Linear4bit' object has no attribute 'compute_dtype'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_peft_import_with_bitsandbytes_without_4bit_layers():
    # bitsandbytes#416: peft with 4-bit support imported beside bitsandbytes 0.38
    text = (
        "  File \"/usr/local/lib/python3.10/dist-packages/peft/tuners/lora.py\", line 40, in <module>\n"
        "    class Linear4bit(bnb.nn.Linear4bit, LoraLayer):\n"
        "AttributeError: module 'bitsandbytes.nn' has no attribute 'Linear4bit'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_linear4bit_near_misses_stay_quiet():
    # another attribute on the layer can be peft's own bug: not read
    assert "bitsandbytes-linear4bit-too-old-for-caller" not in _ids(
        "AttributeError: 'Linear4bit' object has no attribute 'lora_A'")
    # the 8-bit layer missing is the broken CUDA setup's doing, not this rule's
    assert "bitsandbytes-linear4bit-too-old-for-caller" not in _ids(
        "AttributeError: module 'bitsandbytes.nn' has no attribute 'Linear8bitLt'")
    # a healthy model print naming the layer
    assert "bitsandbytes-linear4bit-too-old-for-caller" not in _ids(
        "(q_proj): Linear4bit(in_features=4096, out_features=4096, bias=False)")
    # peft's own class of the same name in a repr
    assert "bitsandbytes-linear4bit-too-old-for-caller" not in _ids(
        "(q_proj): lora.Linear4bit(")
