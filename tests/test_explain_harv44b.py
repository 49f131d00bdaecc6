"""harv44b: an unbiased harvest of diffusion-model training (kohya sd-scripts and its kohya_ss GUI,
LoRA_Easy_Training_Scripts, diffusers' training examples), scored blind, and the general fixes its
misses ask for (docs/dev/harv44b.md).

Nine new training-side logs; explain named six first before any change, one of them only by
resemblance. The fixed misses:
- sd-scripts' own NaN checks on VAE latents: ``NaN detected in latents: <image>`` (cache_batch_latents
  raises it; load_latents_from_disk prints it for a cache written that way) and ``NaN found in
  latents, replacing with zeros`` (the training loop): the SDXL VAE overflows in float16 unless
  --no_half_vae (A1, kohya-ss/sd-scripts#881, bmaltais/kohya_ss#2752); now ``fp16-nan-output``;
- the launchers' own Python version check: kohya_ss' ``... is not appropriate to run Kohya_ss GUI`` /
  ``The python version needs to be greater or equal to 3.10.9 and less than 3.11.0`` (later ``The
  Python version must be >= 3.10.9 and < 3.13.0.``) and the older ``Incompatible Python version:
  3.11.3 required 3.[9, 10]`` of the installers adapted from SD.Next's (A1, bmaltais/kohya_ss#2949,
  #1361); now ``package-no-matching-wheel``, the code of pip's own Requires-Python refusal;
- peft's dataclass configs refusing a keyword a newer peft added: ``LoraConfig.__init__() got an
  unexpected keyword argument 'use_dora'`` from diffusers' DreamBooth LoRA script on peft 0.7.0 (first
  only by resemblance, huggingface/diffusers#9664); now ``dependency-version-mismatch`` by signature.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# kohya-ss/sd-scripts library/train_util.py cache_batch_latents
NAN_CACHE = "RuntimeError: NaN detected in latents: /data/train/img/10_subject/0001.png"
# kohya-ss/sd-scripts library/train_util.py load_latents_from_disk
NAN_NPZ = "NaN detected in latents: /data/train/img/10_subject/0001.npz"
NAN_FLIPPED = "NaN detected in flipped latents: /data/train/img/10_subject/0001.npz"
# kohya-ss/sd-scripts train_network.py (latents encoded on the fly, without --cache_latents)
NAN_ZEROS = "NaN found in latents, replacing with zeros"
# bmaltais/kohya_ss setup/setup_common.py check_python_version
KOHYA_PY_1 = "ERROR    The current version of python (sys.version_info(major=3, minor=11, micro=0, releaselevel='final', serial=0)) is not appropriate to run Kohya_ss GUI"
KOHYA_PY_2 = "ERROR    The python version needs to be greater or equal to 3.10.9 and less than 3.11.0"
KOHYA_PY_3 = "ERROR    The Python version must be >= 3.10.9 and < 3.13.0."
# installers adapted from vladmandic/automatic installer.py check_python (kohya_ss' older setup, SD.Next)
LAUNCHER_PY_1 = "20:01:15-133757 ERROR    Incompatible Python version: 3.11.3 required 3.[9, 10]"
LAUNCHER_PY_2 = "RuntimeError: Incompatible Python version: 3.12.1 required 3.9-3.11"

# huggingface/peft tuners' @dataclass configs through CPython's dataclass __init__ (3.10+ qualified name)
PEFT_DORA = "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_dora'"
PEFT_LAYER_REPL = "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'layer_replication'"
PEFT_LOKR = "TypeError: LoKrConfig.__init__() got an unexpected keyword argument 'use_effective_conv2d'"

FAMILIES = {
    "dependency-version-mismatch": [PEFT_DORA, PEFT_LAYER_REPL, PEFT_LOKR],
    "fp16-nan-output": [NAN_CACHE, NAN_NPZ, NAN_FLIPPED, NAN_ZEROS],
    "package-no-matching-wheel": [KOHYA_PY_1, KOHYA_PY_2, KOHYA_PY_3, LAUNCHER_PY_1, LAUNCHER_PY_2],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_sdxl_latent_caching_traceback_names_the_fp16_vae():
    # kohya-ss/sd-scripts#653's shape: caching latents with the SDXL VAE in float16
    text = (
        "caching latents.\n"
        "checking cache validity...\n"
        "Traceback (most recent call last):\n"
        '  File "C:\\github\\d\\sd-scripts\\sdxl_train.py", line 185, in train\n'
        "    train_dataset_group.cache_latents(vae, args.vae_batch_size, args.cache_latents_to_disk, accelerator.is_main_process)\n"
        '  File "C:\\github\\d\\sd-scripts\\library\\train_util.py", line 2008, in cache_batch_latents\n'
        '    raise RuntimeError(f"NaN detected in latents: {info.absolute_path}")\n'
        "RuntimeError: NaN detected in latents: C:\\data\\img\\5_girl\\fengmian101.png\n"
    )
    assert _codes(text)[:1] == ["fp16-nan-output"]


def test_gui_users_words_around_the_message_name_the_fp16_vae():
    # bmaltais/kohya_ss#2752, the reporter's sentence quoting the message
    text = ('However if I try to train a Dreambooth checkpoint (not Lora), I get a "NaN detected in latents" error.\n')
    assert _codes(text)[:1] == ["fp16-nan-output"]


def test_nan_latents_near_misses_stay_quiet():
    for line in ("No NaN detected in latents",
                 "no NaN found in latents after 100 steps",
                 "# check NaN",
                 "if torch.any(torch.isnan(latents)):",
                 "NaN detected in latentspace_projection"):
        assert "sd-scripts-nan-in-latents" not in _ids(line), line


def test_kohya_setup_paste_names_the_python_the_gui_refuses():
    # bmaltais/kohya_ss#2949 as pasted
    text = (
        "17:28:19-921461 INFO     Kohya_ss GUI version: v24.1.7\n"
        "17:28:19-927968 INFO     Python version is 3.11.0 (main, Oct 24 2022, 18:26:48) [MSC v.1933 64 bit (AMD64)]\n"
        "17:28:19-929968 ERROR    The current version of python (sys.version_info(major=3, minor=11, micro=0,\n"
        "                         releaselevel='final', serial=0)) is not appropriate to run Kohya_ss GUI\n"
        "17:28:19-930968 ERROR    The python version needs to be greater or equal to 3.10.9 and less than 3.11.0\n"
    )
    assert _codes(text)[:1] == ["package-no-matching-wheel"]


def test_python_guard_near_misses_stay_quiet():
    for line in ("17:28:19-927968 INFO     Python version is 3.10.11 (tags/v3.10.11:7d4cc5a, Apr  5 2023, 00:38:17)",
                 "The Python version must be >= 3.10",
                 "print_with_time('Incompatible Python version! Required >= 3.4')",
                 "Incompatible Python version: 3.8",
                 "Kohya_ss GUI version: v25.0.3"):
        assert "launcher-python-version-guard" not in _ids(line), line


def test_diffusers_dreambooth_report_names_the_old_peft():
    # huggingface/diffusers#9664's description as pasted
    text = (
        "1. If run `accelerate launch train_dreambooth_lora_sdxl.py ...` then i get\n"
        "`subprocess.CalledProcessError: Command ... returned non-zero exit status 1.`\n"
        "1. If run `python train_dreambooth_lora_sdxl.py ...` then i get\n"
        "`TypeError: LoraConfig.__init__() got an unexpected keyword argument 'use_dora'`\n"
        "- peft version: 0.7.0\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_peft_config_near_misses_stay_quiet():
    for line in ("    unet_lora_config = LoraConfig(r=args.rank, use_dora=args.use_dora)",
                 "TypeError: __init__() got an unexpected keyword argument 'use_dora'",
                 "TypeError: MyLoraConfigLoader.__init__() got an unexpected keyword argument 'x'",
                 "LoraConfig.__init__() missing 1 required positional argument: 'r'"):
        assert "peft-config-keyword-newer-than-peft" not in _ids(line), line
