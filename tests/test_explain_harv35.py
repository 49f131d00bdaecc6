"""harv35: an unbiased harvest of image and video generation UIs (ComfyUI and its custom nodes,
A1111/Forge, kohya/lora-scripts trainers, diffusers pipelines, xformers/flash-attn in embedded
Pythons), scored blind, and the general fixes its misses ask for (docs/dev/harv35.md).

Twenty new training-side logs (15 in round 1, 5 in round 2); explain named sixteen first before
any change. The fixed misses (all A1, a program's own message with no signature):
- an application's or a node's own torch minimum check: kijai's ComfyUI wrappers raise
  ``torch.backends.cuda.matmul.allow_fp16_accumulation is not available in this version of torch,
  requires torch 2.7.0.dev2025 02 26 nightly minimum currently`` (kijai/ComfyUI-WanVideoWrapper#1994)
  and lora-scripts warns ``Torch version is lower than 2.3.0, which may not be able to train FLUX
  model properly`` (Akegarasu/lora-scripts#501, which was silent); now ``torch-too-old-for-package``;
- ComfyUI-nunchaku's start-up check ``ComfyUI-nunchaku 0.3.4 is not compatible with nunchaku
  0.3.1`` (nunchux-ai/nunchaku#606); now ``dependency-version-mismatch``;
- the Windows loader's dialog for xformers' ``_C.pyd`` after a torch update (``The procedure entry
  point ... could not be located in the dynamic link library ...\\xformers\\_C.pyd``,
  Comfy-Org/ComfyUI#4785); now ``xformers-no-cuda-ops``.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# kijai/ComfyUI-WanVideoWrapper nodes_model_loading.py (and HunyuanVideoWrapper, KJNodes)
FP16_ACC = ("ValueError: torch.backends.cuda.matmul.allow_fp16_accumulation is not available in this version "
            "of torch, requires torch 2.7.0.dev2025 02 26 nightly minimum currently")
# the musubi-tuner forks' wording (no 'currently')
FP16_ACC_MUSUBI = ("ValueError: torch.backends.cuda.matmul.allow_fp16_accumulation is not available in this "
                   "version of torch, requires torch 2.7.0.dev2025 02 26 nightly minimum")
# Akegarasu/lora-scripts mikazuki/launch_utils.py check_torch_gpu (the current and the older wording)
LORA_SCRIPTS_NEW = ("WARNING  Torch version is lower than 2.3.0, which may not be able to train FLUX model "
                    "properly. Please re-run the installation script (install.ps1 or install.bash) to upgrade Torch.")
LORA_SCRIPTS_OLD = ("11:21:04-887737 WARNING  Torch version is lower than 2.3.0, which may not be able to train "
                    "FLUX model properly. Consider upgrading to a newer version.")
# nunchaku-tech/ComfyUI-nunchaku __init__.py
NUNCHAKU = ("ComfyUI-nunchaku 1.0.1 is not compatible with nunchaku 0.3.1+torch2.7. "
            "Please update nunchaku to a supported version in ['v1.0.0', 'v1.0.1'].")
# the Windows loader's STATUS_ENTRYPOINT_NOT_FOUND dialog on xformers' extension
XF_ENTRY = ("The procedure entry point ?parseSchema@jit@torch@@YA?AUFunctionSchema@c10@@AEBV?$basic_string@DU?"
            "$char_traits@D@std@@V?$allocator@D@2@@std@@_N@Z could not be located in the dynamic link library "
            "F:\\AI\\ComfyUI_windows_portable\\python_embeded\\Lib\\site-packages\\xformers\\_C.pyd.")

FAMILIES = {
    "torch-too-old-for-package": [FP16_ACC, FP16_ACC_MUSUBI, LORA_SCRIPTS_NEW, LORA_SCRIPTS_OLD],
    "dependency-version-mismatch": [NUNCHAKU],
    "xformers-no-cuda-ops": [XF_ENTRY],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_wanvideo_loader_traceback_names_the_old_torch():
    # kijai/ComfyUI-WanVideoWrapper#1994 and the ComfyUI error report around it
    text = (
        "# ComfyUI Error Report\n## Error Details\n- **Node Type:** WanVideoModelLoader\n"
        "- **Exception Type:** ValueError\n"
        "- **Exception Message:** torch.backends.cuda.matmul.allow_fp16_accumulation is not available in this "
        "version of torch, requires torch 2.7.0.dev2025 02 26 nightly minimum currently\n"
        "## Stack Trace\n"
        '  File "/root/ComfyUI/execution.py", line 496, in execute\n'
    )
    assert _codes(text)[:1] == ["torch-too-old-for-package"]


def test_fp16_accumulation_quoted_in_prose():
    # a user quoting the message in a sentence, backticked
    text = ("WanVideo fails with `torch.backends.cuda.matmul.allow_fp16_accumulation is not available in this "
            "version of torch, requires torch 2.7.0 nightly currently` - how do I fix it?\n")
    assert _codes(text)[:1] == ["torch-too-old-for-package"]


def test_lora_scripts_start_up_names_the_old_torch():
    # Akegarasu/lora-scripts#501 (the reporter's paste, its English and Chinese warning)
    text = (
        " Torch 2.2.1+cu118\n"
        "11:21:04-887737 WARNING  Torch version is lower than 2.3.0, which may not be able to train FLUX model "
        "properly. Consider\n"
        "                         upgrading to a newer version.\n"
        "11:21:04-890826 WARNING  ！！！Torch 版本低于 2.3.0，将无法正常训练 FLUX 模型。请考虑升级到更新的版本。！！！\n"
        "11:21:04-893821 INFO     Torch backend: nVidia CUDA 11.8 cuDNN 8700\n"
    )
    assert _codes(text)[:1] == ["torch-too-old-for-package"]


def test_torch_minimum_near_misses_stay_quiet():
    # other libraries' own wordings that are not a failing check
    for line in ("Warning: torch version is lower than 2.3, export may not work properly.",
                 '    reason="torch version is lower than 1.12.0",'):
        # (tools35b moved lora-scripts' wording to its own fallback signature)
        assert not {"app-torch-minimum-check", "lora-scripts-torch-flux-warning"} & set(_ids(line))
    assert "app-torch-minimum-check" not in _ids(
        "torch.backends.cuda.matmul.allow_fp16_accumulation = True")
    assert "app-torch-minimum-check" not in _ids(
        "Feature X is not available in this version of torchvision, requires torchvision 0.20")


def test_nunchaku_paste_names_the_wheel_pair():
    # nunchux-ai/nunchaku#606 and the start-up banner ComfyUI-nunchaku prints around the check
    text = (
        "======================================== ComfyUI-nunchaku Initialization ========================================\n"
        "Nunchaku version: 0.3.2.dev20250703\n"
        "ComfyUI-nunchaku version: 0.3.3\n"
        "ComfyUI-nunchaku 0.3.3 is not compatible with nunchaku 0.3.2.dev20250703. Please update nunchaku to a "
        "supported version in ['v0.3.1'].\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_nunchaku_near_misses_stay_quiet():
    # the banner's version lines alone, and a healthy start
    assert "comfyui-nunchaku-wheel-version-check" not in _ids("ComfyUI-nunchaku version: 1.0.1")
    assert "comfyui-nunchaku-wheel-version-check" not in _ids("Nunchaku version: 1.0.1")
    assert "comfyui-nunchaku-wheel-version-check" not in _ids(
        "ComfyUI-nunchaku is compatible with nunchaku 1.0.1")


def test_xformers_entry_point_dialog_split_over_lines():
    # Comfy-Org/ComfyUI#4785: the dialog typed in with the path on its own line
    text = (
        "I get this errors after update to Pytorch 2.3.1 ::\n"
        "conda install pytorch==2.3.1 torchvision==0.18.1 torchaudio==2.3.1 pytorch-cuda=12.1 -c pytorch -c nvidia\n\n"
        '"" the procedure entry point\n'
        "element size@tensoriteratorbase@at@QEBA_JH@Z\n"
        "could not be locate in the dynamic link library\n"
        'k:\\ComfyUI\\ComfyUI_Ex\\python_miniconda_env\\ComfyUI\\lib\\site-packages\\xformers\\_C.pyd. ""\n'
    )
    assert _codes(text)[:1] == ["xformers-no-cuda-ops"]


def test_xformers_entry_point_near_misses_keep_their_reading():
    # the same dialog for another library is not xformers'; xformers' files named in other lines
    assert "xformers-c-pyd-entry-point-not-found" not in _ids(
        "The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the dynamic link "
        "library C:\\Windows\\System32\\nvcuda.dll.")
    assert "xformers-c-pyd-entry-point-not-found" not in _ids(
        "The procedure entry point ?x@y@@ could not be located in the dynamic link library "
        "C:\\venv\\Lib\\site-packages\\torchaudio\\lib\\_torchaudio.pyd.")
    assert "xformers-c-pyd-entry-point-not-found" not in _ids(
        "  copying build\\lib.win-amd64-cpython-310\\xformers\\_C.pyd -> C:\\venv\\Lib\\site-packages\\xformers")
    assert "xformers-c-pyd-entry-point-not-found" not in _ids(
        "Removing file or directory c:\\venv\\lib\\site-packages\\xformers\\_C.pyd")
