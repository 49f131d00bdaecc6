"""harv44a: an unbiased harvest of face swap, face restoration and super-resolution tools (insightface,
FaceFusion, roop, SimSwap, GFPGAN, CodeFormer, Real-ESRGAN, BasicSR, the ncnn-vulkan upscalers, and
onnxruntime-gpu inside them), scored blind, and the general fixes its misses ask for
(docs/dev/harv44a.md).

Twenty new training-side logs; explain named thirteen first before any change. The fixed misses:
- onnxruntime 1.9+'s ``This ORT build has [...] enabled. Since ORT 1.9, you are required to explicitly
  set the providers parameter``: a caller written for an older onnxruntime (insightface 0.6 and older,
  SimSwap's copy of it) was read as a CPU-only onnxruntime from the provider list the message prints
  (A2, neuralchen/SimSwap#445); now ``dependency-version-mismatch``;
- its reverse, ``unexpected keyword argument 'provider_options'``: an onnxruntime older than the caller
  (insightface 0.7 on onnxruntime 1.4), named first only by resemblance (deepinsight/insightface#2635);
  now a signature of ``dependency-version-mismatch``;
- BasicSR's ``NameError: name 'fused_act_ext' is not defined`` (and upfirdn2d_ext, deform_conv_ext): the
  guarded import of an op a pip wheel never compiled; ranked an extension built for another torch first
  (A2, TencentARC/GFPGAN#90); now ``kernel-extension-not-built``;
- insightface's ``assert 'detection' in self.models``: the model pack not extracted where FaceAnalysis
  looks (A1, cubiq/ComfyUI_InstantID#11); now ``model-file-unopenable``;
- ncnn's ``no vulkan device`` (Real-ESRGAN / realsr / waifu2x ncnn-vulkan): no Vulkan driver for any GPU
  (A1, xinntao/Real-ESRGAN#76); now ``vulkan-driver-libs-missing``;
- GFPGAN's ``The unoptimized RealESRGAN is slow on CPU`` and CodeFormer's ``Running on CPU now! Make sure
  your PyTorch version matches your CUDA``: torch sees no CUDA, most often a CPU build of torch (A1,
  TencentARC/GFPGAN#229, #445); now ``torch-cpu-only-build`` as a fallback symptom;
- py-lmdb's ``Building py-lmdb from source on Windows requires the "patch-ng" python module``: pip builds
  lmdb from source because no wheel matches the Python (A1, xinntao/Real-ESRGAN#810); now
  ``package-no-matching-wheel``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests, healthy_test

# onnxruntime/python/onnxruntime_inference_collection.py InferenceSession._create_inference_session (1.9+)
ORT_PROVIDERS_GPU = ("ValueError: This ORT build has ['TensorrtExecutionProvider', 'CUDAExecutionProvider', "
                     "'CPUExecutionProvider'] enabled. Since ORT 1.9, you are required to explicitly set the "
                     "providers parameter when instantiating InferenceSession. For example, "
                     "onnxruntime.InferenceSession(..., providers=['TensorrtExecutionProvider', "
                     "'CUDAExecutionProvider', 'CPUExecutionProvider'], ...)")
# the CPU package's list since 1.16 (neuralchen/SimSwap#445's paste)
ORT_PROVIDERS_CPU = ("ValueError: This ORT build has ['AzureExecutionProvider', 'CPUExecutionProvider'] enabled. "
                     "Since ORT 1.9, you are required to explicitly set the providers parameter when "
                     "instantiating InferenceSession. For example, onnxruntime.InferenceSession(..., "
                     "providers=['AzureExecutionProvider', 'CPUExecutionProvider'], ...)")
# the reverse: an onnxruntime older than the provider_options keyword (deepinsight/insightface#2635, 1.4.0)
ORT_NO_PROVIDER_OPTIONS = "TypeError: __init__() got an unexpected keyword argument 'provider_options'"
ORT_NO_PROVIDER_OPTIONS_311 = ("TypeError: InferenceSession.__init__() got an unexpected keyword argument "
                               "'provider_options'")
# BasicSR basicsr/ops/fused_act/fused_act.py, upfirdn2d/upfirdn2d.py, dcn/deform_conv.py (guarded imports)
FUSED_ACT = "NameError: name 'fused_act_ext' is not defined"
UPFIRDN = "NameError: name 'upfirdn2d_ext' is not defined"
DEFORM_CONV = "NameError: name 'deform_conv_ext' is not defined"
# deepinsight/insightface python-package/insightface/app/face_analysis.py FaceAnalysis.__init__
NO_DETECTOR = "    assert 'detection' in self.models"
# Tencent/ncnn src/gpu.cpp find_default_vulkan_device_index
NO_VULKAN = "no vulkan device"
# TencentARC/GFPGAN inference_gfpgan.py; sczhou/CodeFormer inference_codeformer.py
GFPGAN_CPU = ("UserWarning: The unoptimized RealESRGAN is slow on CPU. We do not use it. If you really want to "
              "use it, please modify the corresponding codes.")
CODEFORMER_CPU = ("RuntimeWarning: Running on CPU now! Make sure your PyTorch version matches your CUDA.The "
                  "unoptimized RealESRGAN is slow on CPU. If you want to disable it, please remove "
                  "`--bg_upsampler` and `--face_upsample` in command.")
# jnwatson/py-lmdb setup.py
LMDB_PATCH_NG = 'Exception: Building py-lmdb from source on Windows requires the "patch-ng" python module.'

FAMILIES = {
    "dependency-version-mismatch": [ORT_PROVIDERS_GPU, ORT_PROVIDERS_CPU, ORT_NO_PROVIDER_OPTIONS,
                                    ORT_NO_PROVIDER_OPTIONS_311],
    "kernel-extension-not-built": [FUSED_ACT, UPFIRDN, DEFORM_CONV],
    "model-file-unopenable": [NO_DETECTOR],
    "vulkan-driver-libs-missing": [NO_VULKAN],
    "torch-cpu-only-build": [GFPGAN_CPU, CODEFORMER_CPU],
    "package-no-matching-wheel": [LMDB_PATCH_NG],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_simswap_traceback_names_the_old_caller_not_a_cpu_package():
    # neuralchen/SimSwap#196's shape: insightface 0.2's model_zoo builds the session without providers
    text = (
        "Traceback (most recent call last):\n"
        '  File "test_video_swapsingle.py", line 44, in <module>\n'
        "    app = Face_detect_crop(name='antelope', root='./insightface_func/models')\n"
        '  File "F:\\simswap\\lib\\site-packages\\insightface\\model_zoo\\model_zoo.py", line 23, in get_model\n'
        "    session = onnxruntime.InferenceSession(self.onnx_file, None)\n"
        '  File "F:\\simswap\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_inference_collection.py", '
        "line 364, in _create_inference_session\n"
        + ORT_PROVIDERS_CPU + "\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_provider_list_alone_still_reads_as_the_cpu_package():
    # the list printed by a script, with no refusal beside it, keeps its catch-all reading
    text = "Available providers: ['AzureExecutionProvider', 'CPUExecutionProvider']\nthe swap runs on the CPU\n"
    assert "ort-providers-without-gpu" in _ids("['AzureExecutionProvider', 'CPUExecutionProvider']")
    assert "onnxruntime-providers-argument-required" not in _ids(text.splitlines()[0])


def test_gfpgan_traceback_names_the_uncompiled_basicsr_op():
    # TencentARC/GFPGAN#190's shape: the first StyleGAN2 block calls the op the wheel never built
    text = (
        '  File "e:\\Anaconda3\\lib\\site-packages\\basicsr\\ops\\fused_act\\fused_act.py", line 92, in forward\n'
        "    out = fused_act_ext.fused_bias_act(input, bias, empty, 3, 0, negative_slope, scale)\n"
        + FUSED_ACT + "\n"
    )
    assert _codes(text)[:1] == ["kernel-extension-not-built"]


def test_other_ext_names_keep_the_generic_reading():
    # AutoAWQ's awq_ext and exllamav2_ext stay with the generic rule (extension-torch-mismatch)
    for line in ("NameError: name 'awq_ext' is not defined", "NameError: name 'exllamav2_ext' is not defined"):
        assert "basicsr-ext-not-compiled" not in _ids(line), line
        assert _codes(line + "\n")[:1] == ["extension-torch-mismatch"], line


def test_instantid_traceback_names_the_missing_model_pack():
    # cubiq/ComfyUI_InstantID#11 / #30's shape
    text = (
        '  File "/ComfyUI/custom_nodes/ComfyUI_InstantID/InstantID.py", line 282, in load_insight_face\n'
        "    model = FaceAnalysis(name=\"antelopev2\", root=INSIGHTFACE_DIR, providers=[provider + "
        "'ExecutionProvider',])\n"
        '  File "/venv/lib/python3.10/site-packages/insightface/app/face_analysis.py", line 43, in __init__\n'
        + NO_DETECTOR + "\n"
        "AssertionError\n"
    )
    assert _codes(text)[:1] == ["model-file-unopenable"]


def test_upscaler_paste_names_the_vulkan_driver():
    # xinntao/Real-ESRGAN#76's paste, in Chinese quotes
    text = "Portable版提示\n“no vulkan device\ninvalid gpu device”\nAMD Raedon核显+2060\n"
    assert _codes(text)[:1] == ["vulkan-driver-libs-missing"]


def test_gfpgan_warning_names_the_torch_build_and_gives_way_to_a_real_error():
    text = "I have an RTX 3080 but only the CPU is used\n" + GFPGAN_CPU + "\n"
    assert _codes(text)[:1] == ["torch-cpu-only-build"]
    # a fallback symptom: any other signature in the log outranks it
    text = GFPGAN_CPU + "\nRuntimeError: CUDA error: out of memory\n"
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_lmdb_install_paste_names_the_missing_wheel():
    # xinntao/Real-ESRGAN#810's paste
    text = (
        '        File "<string>", line 94, in <module>\n'
        "      " + LMDB_PATCH_NG + "\n"
        "      [end of output]\n"
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: subprocess-exited-with-error\n"
    )
    assert _codes(text)[:1] == ["package-no-matching-wheel"]


def test_near_misses_stay_quiet():
    for line, sig in (
        ("ort_session = onnxruntime.InferenceSession(path, providers=['CUDAExecutionProvider'])",
         "onnxruntime-providers-argument-required"),
        ("session = InferenceSession(path, providers=providers, provider_options=provider_options)",
         "onnxruntime-too-old-for-provider-options"),
        ("NameError: name 'fused_act' is not defined", "basicsr-ext-not-compiled"),
        ("building 'basicsr.ops.fused_act.fused_act_ext' extension", "basicsr-ext-not-compiled"),
        ("    self.det_model = self.models['detection']", "insightface-no-detection-model"),
        ("find model: /root/.insightface/models/buffalo_l/det_10g.onnx detection [1, 3, '?', '?'] 127.5 128.0",
         "insightface-no-detection-model"),
        ("[0 NVIDIA GeForce RTX 3060]  queueC=2[8]  queueG=0[16]  queueT=1[2]", "ncnn-no-vulkan-device"),
        ("vulkan device 0: NVIDIA GeForce RTX 3060 (no vulkan devices are skipped)", "ncnn-no-vulkan-device"),
        ("Use --bg_upsampler realesrgan for the background", "face-restorer-upsampler-on-cpu"),
        ("py-lmdb: Using bundled liblmdb with py-lmdb patches; override with LMDB_FORCE_SYSTEM=1 or LMDB_PURE=1.",
         "py-lmdb-windows-source-build-needs-patch-ng"),
    ):
        assert sig not in _ids(line), line


test_healthy_lines_name_nothing = healthy_test([
    "Applied providers: ['CUDAExecutionProvider', 'CPUExecutionProvider'], with options: {'CUDAExecutionProvider': {}}",
    "find model: /root/.insightface/models/buffalo_l/det_10g.onnx detection [1, 3, '?', '?'] 127.5 128.0",
    "[0 NVIDIA GeForce RTX 3060]  fp16-p/s/a=1/1/1  int8-p/s/a=1/1/1",
    "Successfully installed basicsr-1.4.2 facexlib-0.3.0 gfpgan-1.3.8 lmdb-1.6.2 realesrgan-0.3.0",
    "Processing 00.jpg ... Results are in the [results] folder.",
])
