"""The knowledge base against the catalogue and the checks, and the corpus of real logs.

Every file under tests/corpus/explain/ is a log pasted in a public issue thread, with a
header naming the thread and the root cause it established::

    # source: https://github.com/<owner>/<repo>/issues/<n>
    # established: <what the thread found>
    # expected: <the code `stackpeel explain` must rank first from the log alone>
    # cause: <the thread's root cause, when the log alone shows only its symptom>
    # ---
    <the log, verbatim (trimmed to the relevant part)>
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest

from stackpeel import registry
from stackpeel.codes import all_codes
from stackpeel.explain import explain_text, match_codes, similar
from stackpeel.explain.knowledge import LAYER_ORDER, load
from stackpeel.knowledge import load as load_kb

CORPUS = Path(__file__).parent / "corpus" / "explain"

_split_spec = importlib.util.spec_from_file_location(
    "corpus_split", Path(__file__).resolve().parent.parent / "scripts" / "corpus_split.py")
corpus_split = importlib.util.module_from_spec(_split_spec)
sys.modules.setdefault("corpus_split", corpus_split)
_split_spec.loader.exec_module(corpus_split)

#: explained with the base rates of earlier threads (tests/conftest.py turns them off elsewhere)
USES_PRIORS = True


def _validation_repos():
    """Repositories of the validation part (SPLIT.toml; scripts/corpus_split.py): their
    logs measure explain (bench/explain_accuracy.py) and are never tuned to or asserted on."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    with open(CORPUS / "SPLIT.toml", "rb") as fh:
        return {r.lower() for r in tomllib.load(fh)["validation"]["repositories"]}


def _repository(path: Path) -> str:
    m = re.search(r"^# repository: (\S+)", path.read_text(encoding="utf-8"), re.M)
    return m.group(1).lower() if m else ""


# Training logs collected but not yet worked on (measured once as they are, bench/results/
# explain_accuracy-*-before.txt): exempt until the patterns for them are written.
PENDING_COLLECTIONS: set = set()


def _pending(path: Path) -> bool:
    m = re.search(r"^# collected: (\S+)", path.read_text(encoding="utf-8"), re.M)
    return bool(m) and m.group(1) in PENDING_COLLECTIONS


LOGS = sorted(p for p in CORPUS.glob("*.log") if _repository(p) not in _validation_repos() and not _pending(p))


def read_corpus(path: Path) -> Tuple[Dict[str, str], str]:
    text = path.read_text(encoding="utf-8")
    head, sep, body = text.partition("# ---\n")
    assert sep, f"{path.name}: no '# ---' line ends the header"
    meta = {}
    for line in head.splitlines():
        if line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            meta[key.strip()] = value.strip()
    # a name proposed in `# expected:` before its entry existed is that entry's alias
    # (knowledge/*.toml `aliases`): the code it names is what explain must answer
    for key in ("expected", "cause"):
        if key in meta:
            meta[key] = load_kb().canonical(meta[key])
    return meta, body


# -- knowledge base --------------------------------------------------------------

def test_every_code_the_kb_references_is_in_the_catalogue():
    catalogue = all_codes()
    missing = [c for c in load().referenced_codes() if c not in catalogue]
    assert not missing, f"log signatures name codes the knowledge base does not define: {missing}"


def test_kb_entries_are_well_formed():
    kb = load()
    assert len(kb.entries) >= 40
    for e in kb.entries:
        assert e.layer in LAYER_ORDER
        assert e.explanation and e.fix
        if e.kind == "symptom":
            assert e.could_be, f"symptom entry {e.id} must say what could cause it"
        for link in e.links:
            assert link.startswith("https://"), (e.id, link)
        for pat in e.patterns:
            assert not pat.pattern.startswith("^"), f"{e.id}: patterns are searched unanchored"


def test_each_live_check_really_emits_its_code():
    """The code -> check table must point at the check whose source emits the code,
    or a passing check would 'rule out' a cause it cannot see."""
    from shapes import check_source

    emits: Dict[str, set] = {}
    for cls in registry.load():
        src = check_source(cls)
        # finding("code", ...) directly, or the code handed to a shared helper
        # (kernels' _op_failed(self, facts, ctx, "kernel-op-failed")) outside the declaration
        body = re.sub(r"^\s*codes\s*=\s*\([^)]*\)", "", src, flags=re.M)
        direct = re.findall(r'finding\(\s*"([a-z0-9-]+)"', src)
        handed = [c for c in getattr(cls, "codes", ()) if re.search(rf'[(,]\s*"{re.escape(c)}"\s*[,)]', body)]
        for code in (*direct, *handed):
            emits.setdefault(code, set()).add(cls.id)
    wrong = {code: cid for code, cid in load().checks.items() if cid not in emits.get(code, set())}
    assert not wrong, f"[checks] entries whose check never emits the code: {wrong}"


# -- corpus ----------------------------------------------------------------------

# Training logs whose established cause no line of the log names: explain answers with
# what the log does show (or an unknown-error fingerprint). Kept visible as strict xfails
# so that fixing one is noticed; the aggregate floor below is what must hold.
KNOWN_MISSES: Dict[str, str] = {
    # harv45b (small LLM training codebases and course material, docs/dev/harv45b.md): the blind misses not fixed
    "fastbook-424-colab-pip-install-torchtext-requires-torch-1.8": "D/A2: pip's old resolver line 'torchtext 0.9.0 has requirement torch==1.8.0, but you'll have torch 1.7.1 which is incompatible' on Colab; pip-installed-release-incompatible leaves torch to pip-torch-pin-conflict, which reads only the newer wording and kernel packages as an extension built for another torch; the cause here (an old fastai pin pulling an older torch under Colab's torchtext) is a dependency clash no line tells from that sibling",
    "fastbook-580-chapter1-torch-2-no-attribute-utils-downgrade": "E: a bare \"AttributeError: module 'torch' has no attribute '_utils'\" inside torch.serialization while vision_learner loads weights; that PyTorch 2 pulled by `pip install fastbook` does not fit the notebook's stack is the reporter's finding (his torch 1.13.1 pin fixed it), no line names it; explain's resemblance guess is torch-too-old-for-package",
    "fastcore-177-patch-unexpected-keyword-as-prop-fastcore-1.3.2": "C/D: the paste holds two failures: the notebook's fastcore/fastai skew (TypeError: patch() got an unexpected keyword argument 'as_prop', read by fastcore-keyword-skew, second) and the terminal's scipy import failing on the container's libstdc++ ('GLIBCXX_3.4.22' not found), a real second problem read first; the thread's fix (fastcore 1.3.1) addressed the first",
    "fastai2-41-setup-takes-positional-arguments-fastcore-out-of-sync": "A1/E: Python's bare 'TypeError: setup() takes from 1 to 2 positional arguments but 3 were given' in fastai2/data/core.py beside fastcore/foundation.py frames; that the released fastcore lagged the fastai2 code is the commenter's finding (editable installs of both fixed it); first only by resemblance to other threads, so match_codes names nothing, and a rule on a bare positional-argument TypeError would be fitted to this log",
    # harv45c (GPU ML inside desktop applications, docs/dev/harv45c.md): the blind misses not fixed
    "dream-textures-293-torch-python-dll-126-add-on-run-in-older-blender": "E: Windows' 'WinError 126 ... Error loading \"...\\torch\\lib\\torch_python.dll\" or one of its dependencies' from the add-on's bundled torch; that the shortcut started an older Blender (another bundled Python than the one the dependencies were installed for) is the reporter's later finding, not in the paste (explain names msvc-runtime-missing)",
    "krita-ai-diffusion-2493-torchaudio-2.11-with-torch-2.4.1-winerror-127": "E: a bare 'OSError: [WinError 127] The specified procedure could not be found' with torch 2.4.1+cpu; that the DLL was torchaudio 2.11's (built for another torch) is the reporter's own digging, not in the log (explain names library-shadowed)",
    "krita-ai-diffusion-399-found-no-nvidia-driver-amd-rx-570-cuda-server": "D: torch's 'Found no NVIDIA driver on your system' from a CUDA build is what an NVIDIA machine without a driver prints too; that the card is an AMD RX 570 is only in the reporter's reply after the diagnosis (amd-gpu-no-torch-backend is second)",
    # harv45d (time series, weather/climate and geospatial ML, docs/dev/harv45d.md): the blind misses not
    # fixed, and two first only by resemblance (match_codes names nothing for them)
    "chronos-forecasting-76-transformers-4.41-decoder-start-token-id": "E: transformers' 'ValueError: `decoder_start_token_id` or `bos_token_id` has to be defined for encoder-decoder generation' is also what a model whose generation config lacks both ids raises; that transformers 4.41 broke Chronos is the maintainer's answer, no version is in the log",
    "leafmap-488-samgeo-notebook-older-than-installed-samgeo": "E/A3: the user's prose 'Golt `SamGeo.__init__() got an unexpected keyword argument` for both mask_multplier and erosion_kernel' (silent): that the notebook predates the installed samgeo API is the maintainer's answer, no version is in the log and a bare unexpected keyword is any caller's mistake",
    "pytorch-forecasting-729-val-dataloader-pytorch-lightning-1.5": "E: the title only, Lightning's 'NotImplementedError: `val_dataloader` must be implemented to be used with the Lightning Trainer', which a module without the hook raises too; that pytorch-lightning 1.5 broke the installed pytorch-forecasting is the users' finding (dataloader codes by a guess from the word)",
    "nbeats-forecast-5-thetas-dims-nbeats-pytorch-upgraded": "E: 'TypeError: __init__() got an unexpected keyword argument 'thetas_dims'' and the reporter's 'This code used to work': first only by resemblance to other threads, no signature reads a bare unexpected keyword; that nbeats-pytorch had been upgraded past 1.3.0 is the maintainer's answer",
    "pytorch-forecasting-383-tft-tutorial-yaml-str-name-old-release": "E: yaml's representer 'AttributeError: 'str' object has no attribute '__name__'' with no pytorch-forecasting or Lightning frame: first only by resemblance to other threads; that the installed pytorch-forecasting predates the Lightning release is the maintainer's answer",
    # harv45f (NLP toolkits outside Hugging Face on GPUs, docs/dev/harv45f.md): the blind misses not fixed (E)
    "spacy-6586-gpu-not-accessible-coworker-holds-gpu-memory": "E: thinc's require_gpu 'GPU is not accessible. Was the library installed correctly?' is raised whenever cupy cannot be imported or cannot use a device; that another user's process held all the GPU's memory is only the reporter's later sentence, not in the paste",
    "thinc-467-gpu-not-accessible-libcublas-10-missing": "E: the same require_gpu ValueError; that cupy-cuda101 could not load libcublas.so.10 is the reporter's finding after the paste (nvcc 10.1 and a 460 driver are all the log shows)",
    # harv45a (image/video decoding and CUDA vision libraries, docs/dev/harv45a.md): the blind miss not fixed (E)
    "dlib-1094-cuda-build-import-dll-failed-cudnn-not-on-path": "D: Windows' 'DLL failed. The specified module could not be found.' (retyped, no DLL named) is printed for any DLL the extension cannot find; that it was cuDNN's is only the maintainer's reading and the reporter's sentence that the build without DLIB_USE_CUDA imports, so library-missing is second (top-3) after extension-imported-without-torch",
    "dlib-499-no-cuda-capable-device-gpu-too-old": "E: dlib's CHECK_CUDA 'code: 38, reason: no CUDA-capable device is detected' names no GPU; the maintainer's cause (a GPU older than Kepler, below dlib's compute capability 3.0) is not in the paste, and the same line is printed with no driver or a hidden GPU, so no-nvidia-driver stays first",
    # harv44e (deep RL and GPU physics environments, docs/dev/harv44e.md): the blind miss not fixed (C2)
    "rl-1394-set-gym-args-not-found-no-gym-installed": "D: torchrl's implement_for 'Supported version of '_set_gym_args' has not been found' is raised both when neither gym nor gymnasium is installed (this thread: installing gym fixed it) and when the installed one is a release no implementation covers; the paste shows no gym version, so no rule can tell the two",
    "popjaxrl-5-no-gpu-tpu-found-cpu-jaxlib-on-colab": "C2: jax's bare 'No GPU/TPU found, falling back to CPU' on Colab; that the runtime had a GPU (so a driver) and jaxlib was the CPU build is only the reporter's 'The TPU/GPU was turned on', a user's sentence; framework-cpu-only-build is second after no-nvidia-driver",
    # harv44c (point-cloud and autonomous-driving perception stacks, docs/dev/harv44c.md): the blind misses not fixed
    "minkowskiengine-36-cpu-gemm-undefined-make-not-run": "D/E: MinkowskiEngine's backend fails with 'undefined symbol: ..cpu_gemm..' (its own BLAS wrapper from src/math_functions.cpp); here the library step (make) had not been run before setup.py, but the same symbol stays undefined when the BLAS named at build time is not linked into the backend (MinkowskiEngine 0.5.x), so the line does not say which; explain's guess is the torch mismatch",
    "open3d-1872-dll-load-failed-open3d-pybind-windows": "D: Windows' 'DLL load failed while importing open3d_pybind: The specified module could not be found.' names no DLL; a missing Visual C++ runtime (this thread: Open3D 0.10.0.1 links it statically) and any other missing DLL print the same line, so library-missing stays first and msvc-runtime-missing second (top-3)",
    # harv44d-2026-12-17 (pose estimation, tracking and video understanding, docs/dev/harv44d.md):
    # the blind misses not fixed
    "alphapose-614-deform-conv-cuda-undefined-thpvariableclass": "D: 'undefined symbol: THPVariableClass' of AlphaPose's compiled deform_conv_cuda is also what an extension loaded before torch prints (extension-imported-without-torch, which explain names); the maintainer's diagnosis (a torch install the op does not match, fixed by reinstalling) is not in the one pasted line",
    "sam2-144-video-predictor-ptx-unsupported-toolchain-extension": "D/C: torch's 'CUDA error: the provided PTX was compiled with an unsupported toolchain' from SAM 2's video predictor; that the PTX is SAM 2's own _C extension (built by a CUDA newer than the driver) and not torch's is the maintainer's finding, absent from the paste (explain names driver-too-old-for-torch)",
    "sam2-18-build-isolation-torch-cu121-against-nvcc-11.8": "C/E: torch's 'detected CUDA version (11.8) mismatches ... PyTorch (12.1)' under `pip install -e .` reads as nvcc-torch-cuda-mismatch; that the 12.1 torch was the one pip's isolated build environment fetched (no pip-build-env path in the paste) is the reporter's finding after --no-build-isolation built it",
    "towards-realtime-mot-117-cython-bbox-windows-gcc-flags": "E: only pip's 'Failed building wheel for cython-bbox ... exit status 1'; the compiler's D8021 line for the gcc flags (-Wno-cpp) that cython_bbox's setup.py passes to MSVC is not in the paste",
    "ultralytics-1775-track-lap-autoupdate-needs-msvc-build-tools": "E: ultralytics' 'Command 'pip install \"lap>=0.4\"' returned non-zero exit status 1' hides pip's output; lap has no wheels, so the missing C++ build tools (the reporter's fix) are one of several causes of a failed source build, none shown",
    # harv42d (state-space and linear-attention model kernels, docs/dev/harv42d.md): the blind misses not
    # fixed, both class E (the cause is not in the pasted text)
    "exllamav3-216-qwen35-gated-delta-net-old-fla": "the traceback is cut inside exllamav3's gated_delta_rule.py before its error line; the cause (a flash-linear-attention too old for exllamav3 0.0.37) is only in the reporter's later comment",
    "transformers-24148-rwkv-cuda-kernel-conda-cudatoolkit-no-nvcc": "only torch's 'ninja -v returned non-zero exit status 1' traceback around RwkvModel's kernel load; the cause (conda's cudatoolkit without a matching nvcc) is in the reporter's later comment, no compiler line was pasted",
    # harv42c (vision-language and multimodal models, docs/dev/harv42c.md): the blind misses not fixed
    "cogvlm-504-cli-demo-hf-past-key-values-str-shape-newest-transformers": "E/C: \"AttributeError: 'str' object has no attribute 'shape'\" at past_key_values[0][0].shape inside the cached remote modeling_cogvlm.py; that the newest transformers changed what the model's remote code receives (4.36.2 works) is the reporter's finding, not a line; a rule on a transformers_modules path plus an AttributeError would rest on this thread and GLM-4-479 only (explain names torch-too-old-for-package by resemblance)",
    "open-llava-video-r1-4-cannot-import-llavallamaforcausallm-llava-not-on-path": "E: LLaVA's llava/model/__init__.py swallows the real import error, so 'cannot import name LlavaLlamaForCausalLM from llava.model' says only that some import under it failed; that the repository's llava package was not on sys.path is the reporter's later finding (read as dependency-version-mismatch, the most common reason in other LLaVA threads)",
    "unsloth-2901-qwen2.5-vl-for-inference-transformers-4.53-compiled-module": "E: 'ValueError: not enough values to unpack (expected 2, got 1)' at 'cos, sin = position_embeddings' in unsloth's compiled Qwen2-VL module; that unsloth's patched code does not fit transformers 4.53 is the maintainer's answer, not a line",
    # harv41a (sharded and large-scale training frameworks at start-up, docs/dev/harv41a.md): the blind
    # misses not fixed
    "colossalai-1773-colossal-c-missing-no-full-cuda-toolkit": "No module named 'colossal_C' after a source install: that the full CUDA toolkit (nvcc) was missing when the extensions would have been built is the reporter's later finding, not in the paste (E: nvcc-missing); the line alone says only that the compiled module is absent",
    "colossalai-2771-op-builder-not-found-repo-root-shadows-package": "No module named 'colossalai.kernel.op_builder': that Python imported the repository's colossalai folder (run from the repository root) instead of the installed package is the maintainer's diagnosis; the working directory is not in the paste (E/C: module-shadowed)",
    "colossalai-3496-cpu-adam-jit-build-stuck-gcc-4.8.5": "the JIT build of cpu_adam never finishes and prints no error; the old gcc 4.8.5 behind it came from other users' answers (E: nothing in the log names the compiler)",
    "deepspeed-2302-cuda-oom-zero-not-enabled": "the user's sentence 'still gives CUDA-out-of-memory issue' (the OOM itself was a screenshot) and healthy step lines; that ZeRO was not enabled is the maintainer's reading of the screenshot (A3/E)",
    "dinov2-265-torch-2.1-fsdp-handles-attribute-removed": "AttributeError: '...' object has no attribute '_handles' from dinov2's FSDP helper on torch 2.1: a private FSDP attribute torch renamed, no message of its own to read as a version mismatch (A1 without a stable wording: a rule would fit this one attribute)",
    # harv41d (evaluation harnesses, benchmarks and demo apps, docs/dev/harv41d.md): the blind misses not fixed
    "mamba-16-lm-harness-eval-no-module-lm-eval-api-submodule": "E: 'No module named 'lm_eval.api'' from the repository's evals/lm_harness_eval.py after 'pip install lm_eval'; that the script wants the lm-evaluation-harness git submodule (3rdparty/, not the PyPI release) is the reporter's later finding and the README's, not in the paste",
    "mathneuro-3-lm-eval-batch-size-auto-illegal-memory-access": "C3: 'CUDA error: an illegal memory access was encountered' right after lm_eval's 'Passed argument batch_size = auto:4.0. Detecting largest batch size'; that the auto detection ran past the GPUs' memory is the maintainer's reading (one thread and one lm-eval review comment: not written as a rule); explain names the unclassified CUDA error",
    "opencompass-381-quick-start-openicl-infer-failed-hub-unreachable": "E: only torchrun's failure summary for openicl_infer.py is in the paste; that Hugging Face could not be reached is the maintainer's answer (the task's own log, which would say so, was not pasted)",
    "opencompass-88-run-py-no-module-named-opencompass-not-installed": "A2: 'No module named 'opencompass'' raised inside opencompass-0.1.0/opencompass/tasks/openicl_eval.py, read as python-package-not-installed; that the missing module is the project's own package (its name is a folder of the importing file's path: 'pip install -e .' was skipped) needs the traceback's path compared with the module name, which no rule does yet",
    "spark-tts-87-webui-server-without-gpu-torch-not-compiled-cuda": "A3/D: torch's 'Torch not compiled with CUDA enabled' and the reporter's 'no GPU really to speak of'; the torch is a CPU build (what explain names) and the host has no GPU at all (no-nvidia-driver, the label): the same log, told apart only by the user's sentence",
    # harv41c (mixture-of-experts, FP8 and low-precision kernels, docs/dev/harv41c.md): blind misses not fixed
    "deepgemm-330-prebuilt-wheel-other-torch-build-no-storage": "E: torch's generic 'Cannot access data pointer of Tensor that doesn't have storage' from deep_gemm.bf16_gemm_nt; that the preinstalled deep_gemm wheel was built against another torch build (rebuilding fixed it) is the reporter's later finding, not a line",
    "gpt-fast-124-rtx2080ti-int4-named-symbol-not-found": "C: a bare 'CUDA error: named symbol not found' from int4 quantization on an RTX 2080 Ti; that the int4 weight-only kernel needs Ampere is the maintainer's answer, and the log names neither the kernel nor the GPU in a form gpus.toml reads ('RTX2080Ti'); a rule on 'named symbol not found' plus the word int4 would rest on one thread",
    "transformerengine-115-extensions-imported-before-transformer-engine": "G: 'transformer_engine_extensions...so: undefined symbol: nvte_layernorm_bwd' from importing TE 0.5's pybind module before transformer_engine (which loads libtransformer_engine.so); labelled with the nearest code, extension-imported-without-torch (TE's core library in torch's place); no signature reads an undefined TE C-API symbol as an import order, and the same symbol is also what a TE core/extension version mix shows (explain guesses extension-torch-mismatch)",
    "triton-distributed-97-nvshmem-bootstrap-uid-ifname-eth0-missing": "G/A: Triton-distributed's launch script's warnings 'NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=eth0 does not exist...' (the maintainer quoted them from the attached log); labelled with the nearest code, env-nccl-socket-ifname-no-match (NVSHMEM's bootstrap variable in NCCL's place), which reads only NCCL's variables; the line is the project's own script, not NVSHMEM's",
    # harv40c (new Python releases and interpreters, docs/dev/harv40c.md): an old release built from its
    # sdist on a newer Python, where the paste stops before the compiler's or library's own error
    "stellaris-dashboard-154-python-3.12-numpy-1.24.1-sdist-build": "pip downloading numpy-1.24.1.tar.gz under /usr/local/lib/python3.12 and a 'Getting requirements to build wheel' traceback cut before its error line; that numpy 1.24 predates Python 3.12 (no cp312 wheel, source unbuildable there) is a version table, not a line (C3/E: package-too-old-for-python); explain ranks generic build causes",
    "cloud-pak-deployer-809-actions-python-3.12-numpy-1.23.3-build": "numpy==1.23.3's sdist on Actions' new default Python 3.12, traceback cut before its error line (C3/E, as stellaris-dashboard-154: package-too-old-for-python needs to know numpy 1.23 predates 3.12)",
    "sentencepiece-1104-windows-python-3.13-sdist-build-fails": "sentencepiece-0.2.0.tar.gz built on Windows Python 3.13, traceback cut inside setuptools' build_meta (C3/E: that 0.2.0 has no cp313 Windows wheel is not in the log; package-too-old-for-python)",
    "sentencepiece-945-windows-python-3.12-0.1.99-setup-py-winerror-2": "sentencepiece-0.1.99.tar.gz's setup.py on Windows Python 3.12 failing with FileNotFoundError [WinError 2] from subprocess (the build tool it calls is absent); that 0.1.99 has no 3.12 Windows wheel is a version fact (C3/E: package-too-old-for-python)",
    "codex-cli-128-python-3.12-aiohttp-msvc-14-required": "setuptools' 'Microsoft Visual C++ 14.0 or greater is required' while building aiohttp on Python 3.12, read as no-c-compiler (the direct cause of the build failure); the established fix was Python 3.11, whose wheels need no compiler (D/C3: package-too-old-for-python versus no-c-compiler is the same log)",
    # zai-org/GLM-4 moved to training with its alias group (session 39, THUDM/GLM-4 is training by the hash)
    "GLM-4-479-generationconfig-eos-token-tensor-transformers-444": "AttributeError on transformers' private '_eos_token_tensor' from a cached remote modeling_chatglm.py under transformers 4.44; that the remote code predates the transformers release came from the maintainer (C: the transformers_modules path plus the version the user names); resemblance named it only while the log was its own exemplar",
    "glm-4-68-cublas-not-supported-bf16": "the title's CUBLAS_STATUS_NOT_SUPPORTED from cublasGemmStridedBatchedEx and torch 2.1.2, no dtype or GPU name (the tracebacks were screenshots); that the GPU lacks bf16 came from the reporter's later answer (E); explain names the cuBLAS call failure",
    # harv40d (export and inference runtimes, docs/dev/harv40d.md): the blind misses not fixed
    "nanoowl-14-torch2trt-not-found-local-folder-shadowed-package": "ModuleNotFoundError: No module named 'torch2trt' inside the reporter's prose; that a torch2trt folder in the working directory shadowed the installed package is the reporter's later finding, not in the paste (E: explain reads python-package-not-installed, what the line says)",
    "tensorrtllm-backend-424-engine-trt-9.3-triton-trt-9.2-expecting-library-version": "the title retypes TensorRT's 'The engine plan file is not compatible with this version of TensorRT, expecting library version X got Y' as 'expecting [TensorRT] library version 9.2.0.5 got 9.3.0.1', and the pasted log ends before the error; transformers' start-up warning 'None of PyTorch, TensorFlow >= 2.0, or Flax have been found' (routine in a Triton TensorRT-LLM container) is the only program line; it read as torch-not-installed until tools41 made it a notice (now a low guess by resemblance) (A3/C1: a rule on the retyped title would be fitted to one user)",
    "triton-server-4869-helm-python-backend-dev-shm-64m-full": "a df line showing /dev/shm at 64M, 100 % used, and the reporter's sentence that a second model will not load; no program's message (the Python backend's 'use --shm-size' error was not pasted), and a full /dev/shm alone does not say which of its users failed (C: inference-server-shm-too-small needs the backend's line)",
    # harv40a (RLHF and post-training stacks: verl, OpenRLHF, TRL with vLLM, docs/dev/harv40a.md): blind misses not fixed
    "easyr1-63-full-tensor-attributeerror-needs-two-gpus": "E: an AttributeError ('Tensor' object has no attribute 'full_tensor') in EasyR1's weight loader; that the job ran on one GPU and EasyR1 needs two (its FSDP weights are then plain tensors, not DTensors) is the maintainer's answer, not in the log",
    "open-r1-617-grpo-hangs-creating-placement-group-ray-vllm-versions": "E: the title only ('Process hangs indefinitely at \"Creating a new placement group\"'); that only some ray and vllm version pairs work is the maintainer's answer",
    "openrlhf-1193-vllm-0.16-collective-rpc-failed-needs-openrlhf-0.9.5": "E: vLLM's 'Invocation of collective_rpc method failed' with the traceback cut before its exception; that OpenRLHF before 0.9.5 does not fit vLLM 0.16 is the maintainer's title, not a message",
    "trl-3139-trl-cli-invalid-choice-vllm-serve-trl-too-old": "A: TRL's argparse 'TRL CLI: error: argument command: invalid choice: 'vllm-serve'' (the installed trl predates the command); not written: one CLI's subcommand list, and a typo reads the same",
    "verl-1084-vllm-c-ops-no-rms-norm-torch-2.6-vs-vllm-0.6.3": "C/E: vLLM's ''_OpNamespace' '_C' object has no attribute 'rms_norm'' reads as custom-ops-not-registered (a symptom whose causes list extension-torch-mismatch); that torch 2.6 replaced the torch vllm 0.6.3 pins needs vllm's requirements, not in the log (its 'Failed to import from vllm._C' warning was a screenshot)",
    # harv39b (processes: fork/spawn, workers, signals, docs/dev/harv39b.md)
    "gluonts-756-num-workers-1-macos-spawn-main-guard": "a macOS spawn child's traceback cut after multiprocessing/spawn.py _fixup_main_from_path, before the RuntimeError's 'bootstrapping phase' text (B/E: the message is not in the paste; the frames alone do not say which error the re-run script raised)",
    # harv39a (file systems, permissions and caches, docs/dev/harv39a.md): blind misses not fixed
    "pytorch-91005-inductor-tmp-mounted-noexec": "the title ('Torch Dynamo/Inductor fails when /tmp is mounted noexec') and the start of a traceback that ends before its error line; the noexec /tmp is only the reporter's sentence (A3/E: the loader's 'failed to map segment from shared object', which built-library-on-noexec-mount reads, is not in the paste)",
    "wyoming-faster-whisper-27-read-only-root-nonexistent-home-hf-cache": "the title only ('OSError: [Errno 30] Read-only file system: /nonexistent'), read as read-only-filesystem; that the write was huggingface_hub's cache under HOME=/nonexistent is in the thread's answers, not the paste (E)",
    # harv39c (failures an environment variable caused, docs/dev/harv39c.md): the blind misses not fixed
    "pytorch-90543-cuda-visible-devices-gpu-uuid-device-count-0": "the reporter's prose and a device_count() of 0 under CUDA_VISIBLE_DEVICES=GPU-<uuid>, no error line; the cause (torch before 2.0 parsing the entries as integers) is only the user's sentence (A3: cuda-visible-devices-uuid-unparsed has no line to read)",
    "triton-4002-cache-filenotfound-home-triton-symlink": "the title's FileNotFoundError for a Triton cache object; the cause ($HOME/.triton a symlink off an NFS home, fixed by another HOME) is not in the paste (E: triton-cache-unusable)",
    "mmdetection-2108-dockerfile-torch-cuda-arch-list-lacks-7.5-t4": "a bare 'no kernel image' title with the reporter's sentence that the Dockerfile's ENV TORCH_CUDA_ARCH_LIST lacks 7.5 three lines below; the TORCH_CUDA_ARCH_LIST refine of no-kernel-image is local on purpose (a9ccf6f4: an env dump far from torch's error must not name the extension), so extension-arch-missing is second (C3)",
    "wyoming-faster-whisper-27-hf-hub-cache-home-nonexistent-read-only": "OSError [Errno 30] Read-only file system: '/nonexistent' reads as read-only-filesystem, which is what the line says; that the write was huggingface_hub's default cache under HOME=/nonexistent shows only through a link to file_download.py (C2/F: huggingface-cache-unwritable)",
    # harv38c (hangs and timeouts whose log holds only the symptom, docs/dev/harv38c.md)
    "vllm-2770-nccl-watchdog-timeout-cuda-graph-enforce-eager": "two NCCL watchdog timeout lines from vLLM's Ray workers; the cause (NCCL collectives mixed with CUDA graph launches, fixed by enforce_eager) is not in the paste and has no signature (E: nccl-cuda-graph-mixing-deadlock, harv38c, has no log line to read)",
    "diffsynth-538-client-socket-timed-out-smaller-dataset": "the title only (the TCPStore client's 'client socket has timed out after 1800000ms'); that the main rank was still preparing a large dataset (fixed by using less data) is not in the paste (E); collective-rendezvous-unreachable is the message's usual reading",
    "dsgn2-20-training-freezes-100-gpu-utilization-p2p": "the user's description of a multi-GPU freeze at 100 % utilisation, no log; nccl-p2p-blocked is second after the symptom collective-hang (D: nothing in the words singles out the peer-to-peer path)",
    "framepack-427-stuck-at-loading-checkpoint-shards-pagefile": "the title only ('Stuck at Loading checkpoint shards'); the Windows page file that fixed it is not in the paste (E)",
    "nccl-tests-217-all-reduce-perf-hangs-eset-web-access-protection": "NCCL_DEBUG=INFO start-up lines of a hanging all_reduce_perf; the cause (ESET Web Access Protection intercepting local sockets) is not in the paste and has no signature (E: host-security-software-intercepts-sockets, harv38c, has no log line to read)",
    # harv37c (blind misses left, docs/dev/harv37c.md): a device-order mix-up prints no error; a
    # hang and a silent corruption whose cause (IOMMU, ACS) is not in the paste
    "koboldcpp-1023-cuda-device-order-differs-from-nvidia-smi": "two GPU listings in different orders (nvidia-smi's PCI order, ggml_cuda_init's FASTEST_FIRST order) and the user's sentence that the launcher picks the other card; no error line, and cuda-device-order-mismatch has no signature (C: the evidence is the comparison of two listings)",
    "nccl-120-ryzen-all-gather-test-stuck-iommu-soft": "an all_gather test that hangs with no message, an empty ACSCtl grep and an AMD Ryzen CPU; the IOMMU cause (iommu=soft fixed it) is not in the paste (E)",
    "pytorch-84803-silent-corruption-gpu-to-gpu-iommu": "a GPU-to-GPU copy that returns zeros with no error (the user's sentence 'Silent data corruption when moving data between GPUs'); the IOMMU cause is not in the paste, and a rule on the user's wording would be fitted to one thread (A3/E)",
    # harv35c: a user's sentence that a custom image lacks the driver's EGL libraries; that the
    # toolkit mounts them only with NVIDIA_DRIVER_CAPABILITIES=graphics (or all) is the reporter's
    # later finding, and no program line is pasted (A3)
    "nvidia-docker-1350-custom-image-no-libegl-driver-capabilities": "the user's words 'there are no libEGL.so and libOpenGL.so inside container' (nvidia-driver-capabilities-missing): no loader or EGL error line, no NVIDIA_DRIVER_CAPABILITIES value in the paste (A3)",
    # harv34b (held back on its branch, restored by the lead: a blind log is not dropped for what
    # it does to the priors): nix's source-built torch has CUDA off unless cudaSupport / the
    # NVIDIA overlay is applied; the paste shows only is_available() False (E)
    "nix-stable-diffusion-14-nvidia-overlay-not-applied-cpu-torch": "a nix torch without the NVIDIA overlay (torch-cpu-only-build): the paste shows only 'Torch is not able to use GPU' and no nix package name or CUDA flag",
    "nixpkgs-189372-source-pytorch-without-cudasupport": "nixpkgs' source torch built without cudaSupport (torch-cpu-only-build): the paste shows only torch.cuda.is_available() False",
    # training-2026-12-01h (kbgrow2): the thread's cause is second in explain's ranking,
    # after the symptom the log shows; nothing in the log's text points to it
    "tio-206-nvidia-smi-kernel-update": "only nvidia-smi's 'couldn't communicate' line: a kernel update is the thread's story, not the log's",
    "cudarc-255-wsl-libcuda-ld-library-path": "cudarc cannot load libcuda (libcuda-missing): nothing in the paste says WSL",
    "llmdet-32-libcudart101-mmcv": "libcudart.so.10.1 missing (library-missing): that mmcv was built for CUDA 10.1 is the thread's finding",
    # training-2026-12-01i (kbgrow3): pastes found by symptom searches whose text does not hold
    # the thread's cause (a title, prose, or a symptom whose cause the thread found elsewhere)
    "bitsandbytes-pr337-wsl-gpu-not-detected": "a PR's title ('GPU not detected in Windows WSL'): no error line; the WSL libcuda directory is the PR's text",
    "colabtools-4950-causal-conv1d-build-colab-torch": "'Failed building wheel for causal-conv1d' (extension-build-failed): that no prebuilt wheel fit Colab's new torch is the thread's finding",
    "comfyui-7484-sage-attention-flag-no-triton": "the title only ('Unable to use normally --use-sage-attention'): Triton missing is a commenter's finding",
    "dcnv2-25-cuda-home-wrong-nvcc-path": "'.../bin/nvcc': No such file or directory reads as nvcc-missing; that CUDA_HOME was set wrong is the reporter's fix",
    "insightface-1905-nccl-virbr0-timeout": "prose ('NCCL was creating a socket for this branch ... would eventually time out'): no error line",
    "nas-without-training-2-driver-too-old-env-yml": "'torch.cuda.is_available() returning False' only: the driver too old for environment.yml's build is the reporter's later finding",
    "nvidia-docker-910-gpu-unavailable-after-wake": "a bulleted list ('cuda on the host stops working' after suspension): no error line",
    "sd-webui-forge-3113-rtx5090-kernel-problem": "'getting errors as a kernel' on an RTX 5090: the error itself is not in the paste",
    "transformers-48718-qwen35-fp32-chunk-loop-fla-missing": "a profile's prose ('because flash-linear-attention was not installed'): no error line",
    "vllm-17939-engine-core-gpu-mem-util-1": "vLLM's 'Engine core initialization failed. See root cause above.' with the root cause cut off: --gpu-memory-utilization=1 is the reporter's fix",
    # training-2026-12-01k (kbgrow5, LLM inference and serving)
    "aici-87-cuda-server-dies-needs-sm80": "a Rust backtrace of rllm-cuda's loader: the GPU's compute capability (below 8.0) is only in the maintainer's answer",
    "autoawq-398-no-kernel-image-old-gpu": "'no kernel image' with the GPU unnamed: torch's arch list and AutoAWQ's sm_75 minimum read alike",
    "autogptq-203-cuda-extension-torch-cu117": "'CUDA extension not installed' quoted in prose: the CUDA 11.8 toolkit against torch's cu117 is the reporter's later finding",
    "h2ogpt-1624-no-gpu-detected-torch-false": "prose only ('it still says no GPU detected', is_available() 'says False' on another line): the torch build is not printed",
    "ktransformers-1367-stuck-loading-layers-host-ram": "'stuck at loading model.layers.12' with no error: model-load-hang, host memory first of its causes; 128 GB for a 400 GB model is the maintainer's arithmetic",
    "ollama-7031-runner-0xc0000409-old-ollama": "'llama runner process has terminated: exit status 0xc0000409' only: the runner's reason (a model newer than Ollama 0.1.42) is not printed",
    "ollama-8606-tesla-m60-gpu-idle": "'the GPU is 0%' only: the Tesla M60 (sm_52, not in that Ollama build) is named only in a comment",
    "tabbyapi-417-gpus-must-be-ampere": "tabbyAPI's 'All GPUs must be ampere (30 series) or newer' is not in the sources the knowledge base reads",
    "tensorrt-llm-1515-fmha-unsupported-architecture-sm75": "TensorRT-LLM's bare 'Assertion failed: Unsupported architecture' (fmhaRunner.cpp) next to 'Compute capability: (7, 5)'",
    "vllm-7303-hang-after-load-host-memory": "'hangs after above logs' under vLLM's FlashInfer lines: model-load-hang, host memory first of its causes; the job's memory limit is a commenter's finding",
    "xinference-805-device-num-gpus-assert": "torch's 'device >= 0 && device < num_gpus' assert with no MIG word: the MIG reading and a GPU index the worker cannot see look alike",
    # training-2026-12-01m (kbgrow7): infrastructure users' pastes (titles, symptoms) whose text
    # does not hold the cause the thread found
    "deepvariant-619-cuda-error-unknown-singularity": "a title with a bare 'CUDA_ERROR_UNKNOWN': that nvidia_uvm was not loaded on a fresh instance is the thread's finding",
    "eessi-231-singularity-nvidia-smi-libnvidia-ml": "nvidia-smi's 'couldn't find libnvidia-ml.so' (nvml-unavailable): that a prefix shell cleared the LD_LIBRARY_PATH Singularity set is the thread's finding",
    "jetson-inference-622-libcudart-wrong-jetpack-wheel": "a title ('install-pytorch.sh ImportError: libcudart.so.10.0'): nothing in it says Jetson",
    "nvidia-auto-installer-64-kernel-module-missing": "a title and prose ('Nvidia kernel module missing' after installation): Secure Boot is the maintainer's question, not the log's",
    "nvidia-auto-installer-75-secure-boot-driver-not-loading": "nvidia-smi's 'couldn't communicate' after installing and rebooting: Secure Boot is the reporter's later finding",
    "pytorch-geometric-8948-conda-cpu-build": "'cpu version instead of cu121' only: that the package is pyg (not torch) is the thread's title and repository",
    # training-2026-12-01n (kbgrow8): research-code and extension users' pastes whose text does not
    # hold the thread's cause
    "apex-214-multiple-cuda-versions": "pip's 'setup.py ... --cuda_ext install ... failed with error code 1' only: several CUDA toolkits on the server is the reporter's finding",
    "flash-attention-389-max-jobs-ram": "prose ('it will raise errors ... MAX_JOBS=16'): the error log is not pasted; RAM running out is the maintainer's answer",
    "nerfstudio-1642-tcnn-no-arch-windows": "torch's 'No CUDA runtime is found, using CUDA_HOME=...' only, a notice every GPU-less build prints (healthy in kbdrift): the missing TCNN_CUDA_ARCHITECTURES is the answer in the thread",
    "jax-7118-cublas-not-initialized-preallocation": "the title 'CUBLAS_STATUS_NOT_INITIALIZED' (cublas-call-failed): that JAX's preallocation starved cuBLAS is the maintainer's answer",
    "rl-mpc-locomotion-19-libpython-not-found": "libpython3.8.so.1.0 not found reads as an OS package (system-library-missing); the thread's fixes are that or the conda environment's lib directory on LD_LIBRARY_PATH",
    "wsl-1788-no-cuda-in-wsl1": "prose ('it always says no graphic driver found'): nothing in the paste says WSL",
    # training-2026-12-01l (kbgrow6)
    "colossalai-774-no-cuda-ext": "ColossalAI 0.1's 'please install with cuda_ext' notice, quoted in prose; no ColossalAI 0.1 source was at hand to harvest its messages from",
    "pytorch-23363-docker-network-isolation": "NCCL's 'unhandled system error' with 'two docker container' in prose: /dev/shm's container clues outrank the network, nothing in the log names the bridge",
    # training-2026-12-01q (recall3)
    "protenix-28-fastfold-layer-norm-cuda-home": "a bare 'Error building extension': only the title's 'cuda cusparse and cuda_runtime.api' and prose name the headers",
    # training-2026-12-04apps23
    "comfyui-3d-pack-177-cuda-only-dependencies": "torch's 'Torch not compiled with CUDA enabled' in a code fence; the only Mac word is the title's lower-case 'is mac actually supported?', eight lines above (a bare 'mac' is no clue: MAC addresses)",
    # training-2026-12-01j (kbgrow4): a title, prose, or a bare exception name
    "fooocus-3-amd-windows-no-nvidia-driver": "torch's 'Found no NVIDIA driver': only the title ('AMD support') says the GPU is an AMD one",
    "comfyui-6649-needs-nvidia-gpu-rocm": "a title and the system line ('needs Nvidia GPU even specifying ROCm'): no error line",
    "multidiffusion-250-slow-after-update-driver": "one sentence ('generation became very slow after updating'): the driver's memory fallback is a commenter's finding",
    "whisperx-925-filenotfound-ffmpeg": "a bare 'FileNotFoundError' and the command line: ffmpeg missing from PATH is the commenters' finding",
    # training-2026-12-01p (recall2)
    "mu-got-7-cuda-unknown-error-vllm-memory": "a bare 'CUDA error: unknown error' under WSL: vLLM's gpu_memory_utilization is the reporter's later finding, not the log's",
    "wsl-6098-devices-busy-insider-build": "error 46 ('all CUDA-capable devices are busy or unavailable') with only 'windows: 20231' as context: no WSL word in the log to rank the WSL bridge",
    # CTranslate2's missing cuDNN 8 sub-library: explain answers library-missing first, as
    # faster-whisper-885 (training-2026-12-01h) labels the same cause; these threads were labeled
    # cudnn-unusable (explain's fourth candidate). One label for both is the lead's call.
    # training-2026-12-01s (recall5): NCCL's maintainer recognised a fixed bug from the thread, not the log
    "nccl-1024-unhandled-cuda-error-3090ti-ddp": "NCCL's bare 'Call to CUDA function failed' on two 3090 Ti: that NCCL 2.18.6 fixed it is the maintainer's finding",
    # training-2026-12-01o (recall1)
    "rodan-1332-vgpu-license-devices-busy": "'all CUDA-capable devices are busy or unavailable' only: that the VM's vGPU lost its license is the thread's finding (vgpu-unlicensed is offered second)",
    # training-2026-12-01r (recall4): the log names a cause next to the labeled one
    "causal-conv1d-69-setdevice-newer-torch": "causal_conv1d_cuda's undefined SetDevice symbol reads as the wheel built for another torch; only the PR says a fresh source build fails too (the source's API call)",
    "fla-612-gated-deltanet-bwd-b200-hoist-tmem": "Triton's compiler abort ('UNREACHABLE executed', triton-compiler-bug) on a _bwd_ kernel: the backward-only consequence is the thread's reading",
    "vmamba-378-sm120-no-kernel-image": "'no kernel image' with an RTX 50 and a torch nightly: torch's arch list first, extension-arch-missing second; the extensions' setup.py is named only in the reporter's later prose",
    # training-2026-12-02a (recall6): the log shows the symptom both WSL causes share
    "cuml-5624-cuinit-no-device-wsl2": "a title with WSL2 and cuInit's CUDA_ERROR_NO_DEVICE (wsl-gpu-unavailable): that the loader picked a libcuda outside the WSL driver's directory is the reporter's fix, not the paste",
    # training-2026-12-02b (recall7)
    "nccl-2076-remote-process-exited-ib-nodes": "ncclRemoteError with a socket 'Connection reset by peer' (collective-peer-lost): that some nodes' InfiniBand was faulty is the reporter's later finding",
    "audioldm-49-cufft-internal-error-stft": "a bare 'cuFFT error: CUFFT_INTERNAL_ERROR' (cuda-error-unclassified, the old cuFFT offered first in could_be): the RTX 4090 and the cu117 build are only in the commenters' answers",
    # training-2026-12-02e (sweepa, sampled by symptom): the paste shows the symptom, the thread the cause
    "numba-5793-cuinit-no-device-visible-minus-one": "cuInit's bare CUDA_ERROR_NO_DEVICE (no-nvidia-driver, the variable in could_be): the script's CUDA_VISIBLE_DEVICES=-1 is quoted only by the maintainer",
    "pytorch-docker-19-nvidia-smi-not-found-no-gpus-flag": "'`nvidia-smi` ... command not found' after nvcc works (no-nvidia-driver, device-nodes-missing second): the container is only in the issue's title (an image tag) and the missing --gpus in the reporter's fix",
    "homelab-monitor-203-gpu-not-detected-compose-env": "'GPU not detected', 'No errors in logs': no error line; the compose file's NVIDIA_* variables without the nvidia runtime are the maintainer's finding",
    # training-2026-12-02g (sweepc): sampled by symptom
    "pytorch-26800-cuda-extension-dll-module-not-found": "CPython <= 3.7's bare Windows 'DLL load failed: The specified module could not be found.' for a self-built CUDA extension (the weight-1 msvc-runtime-missing reading, library-missing second): that torch was not imported first is only the reporter's later answer",
    # training-2026-12-02h (sweepd, a symptom sweep)
    "llamafactory-8082-childfailed-stale-process-vram": "a bare torchrun ChildFailedError (launcher-worker-failed): that an earlier run still held the GPUs' memory is the reporter's later finding",
    # training-2026-12-02f (sweepb): a symptom sweep of build failures
    "wechatbot-25-gcc-failed-python-dev": "only setuptools' 'error: command 'gcc' failed with exit status 1' (extension-build-failed): that the Python headers were missing is the maintainer's answer, not the paste",
    # training-2026-12-02m (sweeph, a symptom sweep of kernel-compiler failures)
    "triton-windows-77-uv-python-no-libs": "only cl.EXE's failed cuda_utils.c command under BackendCompilerFailed (windows-compiler-unusable by its Visual Studio clue, python-headers-missing third): that uv's Python has no include\\Python.h and libs\\python312.lib is the maintainer's answer",
    # training-2026-12-02j (sweepe)
    "c3d-56-cublas-after-suspend": "only Caffe's 'Check failed status = CUBLAS_STATUS_SUCCESS': the machine's suspend is the thread's story, not the log's",
    "dnmp-13-illegal-memory-access-oom": "a bare 'an illegal memory access was encountered' at one iteration: that the scene's data ran the GPU out of memory is the reporter's finding",
    "mxnet-3486-driver-insufficient": "'CUDA driver version is insufficient' in prose with nothing that names the program (MXNet only in the title): torch's code stays first, the build's among what it could be",
    "ubuntu-for-robotics-3-error-35-libcuda1": "users' words 'error 35: cuda driver is insufficent' after installing the driver: the missing libcuda1 package is the fix, not the log's",
    # training-2026-12-02l (sweepg, a symptom sweep of multi-GPU and container errors)
    "vllm-7201-nccl-invalid-usage-tensor-parallel": "vLLM's bare 'NCCL error: invalid usage' (nccl-error): an NCCL built for a newer CUDA than the driver is the maintainer's answer",
    "nccl-tests-5-unhandled-cuda-error-nccl1": "nccl-tests' bare 'unhandled cuda error': that NCCL 1.0 is too old is the reporter's fix; only the version number says so",
    # training-2026-12-02r (sweepk, a sweep by generic queries)
    "cuda-python-17-wsl-dlopen-libcuda": "cuda-python's bare 'RuntimeError: Failed to dlopen libcuda.so' (libcuda-missing first): that it runs under WSL, where libcuda lives in /usr/lib/wsl/lib, is only in the issue's title and the maintainer's explanation",
    # training-2026-12-02p (sweepi, sampled by the blind sets' generic queries)
    "cutorch-270-segfault-gpu-memory-used-by-other": "a bare 'Segmentation fault (core dumped)' on require 'cutorch' (native-crash-in-gpu-library): that another user's job held the GPU's memory is the reporter's later finding",
    "faster-rcnn-pytorch-719-nvcc-gcc65": "only setuptools' 'command '/usr/local/cuda/bin/nvcc' failed with exit status 1', no compiler output: that gcc 6.5 was too new for that nvcc is the reporter's fix",
    # training-2026-12-02q (sweepj, sampled by the blind sets' generic queries)
    # training-2026-12-03p (harvp, programs' own messages from issue threads)
    "hidream-sampler-7-windows-triton-31-too-old": "inductor's 'Cannot find a working triton installation. Either the package is not installed or it is too old' (triton-not-installed): that Triton 3.1 was installed and too old for the torch is the reporter's fix; the log shows no Triton version",
    "nv-wavenet-92-undefined-symbol-stale-build": "'undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE' (extension-imported-without-torch, the usual reading of that symbol): that the extension was a stale build is the reporter's fix; only the IPython session's earlier 'import torch' argues against the import order",
    "nccl-473-unhandled-system-error-ipc": "NCCL's bare 'unhandled system error': nothing says container or /dev/shm",
    # the base rates of earlier threads (explain/priors.py, issue 8): the log shows only the symptom
    # (its expected code); the prior names the cause most threads with it established
    "anomaly-transformer-74-no-cuda-gpus-script-export": "'No CUDA GPUs are available' only: the prior puts cuda-visible-devices-hides-gpus (this thread's cause too) before the symptom",
    "cor-gs-23-no-cuda-gpus-set-device": "'No CUDA GPUs are available' only: the prior puts cuda-visible-devices-hides-gpus (this thread's cause too) before the symptom",
    "gptfuzz-pr5-no-cuda-gpus-hardcoded": "'No CUDA GPUs are available' only: the prior puts cuda-visible-devices-hides-gpus (this thread's cause too) before the symptom",
    # training-2026-12-04-symptom20 (bare symptoms whose thread established the cause; `# cause:` holds it)
    "time-series-library-10-script-exports-cuda-visible-devices": "'is_available()' False and 'No CUDA GPUs are available' only: the prior puts cuda-visible-devices-hides-gpus (this thread's cause too) before the symptom",
    "pytorch-43493-pip-cu102-installs-cpu-only": "a plain 'pip install torch' and 'is_available()' False: the prior puts cuda-visible-devices-hides-gpus before the symptom; that pip chose the CPU-only build is the thread's finding (torch-cpu-only-build third)",
    "centernet-933-cuda-runtime-error-30-uvm-reload": "a bare 'cuda runtime error (30): unknown error' is read as cuda-init-failed (labelled cuda-error-unclassified: it came mid-training); reloading nvidia_uvm, the thread's fix, is second among its causes",
    "pytorch-18620-cublas-rtx2080ti-cuda9": "'cublas runtime error : the GPU program failed to execute' beside 'cuda 9.0 with a RTX 2080 Ti': the RTX clue puts cuda-math-library-too-old-for-gpu before the cublas-call-failed symptom; the maintainers' 'CUDA 9 does not support RTX' is filed as torch-arch-not-supported (third)",
    # training-2026-12-03s (harvs, crash/kill symptoms whose thread established the cause)
    "pytorch-examples-548-illegal-memory-access-faulty-gpu": "a title with a bare 'an illegal memory access was encountered' (resembles dnmp-13's GPU out of memory): that the GPU itself was faulty is the reporter's finding after the vendor replaced it",
    # (videowalk-26, a bare CUDNN_STATUS_INTERNAL_ERROR, was here: since symptom20 the prior needs 60 %
    # of the threads, and GPU memory in two of four no longer puts gpu-out-of-memory before the symptom)
    # harvr (2026-12-03): only a version list and TensorFlow's CPU-only device list; no program message
    # names the missing CUDA 10.1 runtime (TF 2.1 logs 'Could not load dynamic library cudart64_101.dll' only at a lower log level)
    # harvx20 (2026-12-04): the only program line is XLA's driver-older-than-ptxas warning, which
    # kb5 made a healthy notice (test_explain_patterns_kb5 HEALTHY); the maintainer read it as the old driver
    # apps20: KoboldCpp stops on a bare GGML_ASSERT while running a model its release does not
    # support yet; only the release number (1.111.2) and the maintainers' knowledge say so
    "koboldcpp-2124-acestep-xl-older-version": "a bare GGML_ASSERT(ggml_can_repeat(b, a)) failed: that the KoboldCpp release predates the model is the maintainers' knowledge, not the log's",
    # apps22: an SD.Next user's prose only ('does not detect GPU, generates on CPU', the System
    # Info page quoted as '2.0.0+cpu Autocast half'); no program line states a failure, and which
    # of the no-GPU causes it is only the quoted '+cpu' says (a clue, read by the context rules)
    "sdnext-409-installer-put-cpu-torch-no-gpu-detected": "no program line: the user's sentence that SD.Next generates on the CPU and the System Info page's '2.0.0+cpu' quoted in prose; the installer's CPU build is the maintainer's reading",
    # training-2026-12-05h26 (harv26, sampled in search order): segfaults the thread fixed by
    # changing the order of two imports; the log is a bare segfault (class E: not in the log)
    "dobb-e-4-decord-imported-before-torch-segfault": "only 'Fatal Python error: Segmentation fault': importing torch before decord is the thread's fix, not the log's",
    "Anomaly_Prediction-18-segfault-fixed-by-import-order": "only 'segmentation fault (core dumped)' after 100 epochs: the tensorboardX import order is the thread's fix",
    # harv27-2026-12-05 (harv27, sampled in search order): the cause is in the thread's fix or the
    # user's own sentence, not in a line a program printed (classes E and A3)
    "FollowYourCanvas-2-segfault-loading-model-decord-import-order": "only 'Segmentation fauld (core dumped)' in a title: importing decord last is the thread's fix",
    "NVIDIA-caffe-492-nccl-unhandled-cuda-error-libnccl-for-cuda9": "NCCL's 'unhandled cuda error' through a Caffe CHECK: the libnccl2 package built for another CUDA is only in the reporter's fix",
    "nccl-tests-6-unhandled-cuda-error-nccl-built-for-other-cuda": "'unhandled cuda error' and the user's sentence 'my nccl depends on a different CUDA version (11.0)' (A3)",
    "deep-person-reid-375-cublas-runtime-error-rtx2080-cuda9": "a bare 'RuntimeError: cublas runtime error' (THC's reason cut off) and the user's sentence that an RTX 2080 needs CUDA 10 (A3/C3)",
    # harv28-2026-12-05 (harv28, sampled in search order): the cause is in a later answer (E) or the
    # line is one several causes print alike (D)
    "LLaVA-392-cudnn-not-initialized-worker-oom": "only a title with 'CUDNN_STATUS_NOT_INITIALIZED' (cudnn-unusable, its first reading): that the GPU was out of memory is a commenter's finding (E)",
    "tensorflow-10033-windows-dll-load-failed-cudnn-not-on-path": "a bare Windows 'DLL load failed: The specified module could not be found.' (msvc-runtime-missing first, library-missing second): which DLL, cuDNN's, is only the maintainer's answer (D/E)",
    # training-2026-12-05apps27: transformers' generic OSError alone; the Hub its first cause
    "lora-scripts-609-cant-load-clip-tokenizer-hub-blocked": "only transformers' generic 'Can't load tokenizer' (huggingface-load-failed, the Hub its first cause): that huggingface.co was blocked is the reporter's fix",
    # harv28b-2026-12-05 (harv28b, sampled in search order): the cause is in the thread or the user's
    # sentence, or two siblings the log cannot tell apart (classes E, A3, D)
    "unsloth-501-internal-triton-ptx-codegen-error-t4-bf16": "a title's bare 'Internal Triton PTX codegen error': bfloat16 on the T4 is the maintainer's finding (E)",
    "ColossalAI-3359-stuck-building-cpu-adam-kernel-stale-cache": "ColossalAI's 'No pre-built kernel is found, build and load ... during runtime now' (printed by every first JIT build) and the user's 'stuck at this stage' (A3)",
    "VMamba-313-selective-scan-cuda-not-defined-mamba-ssm-missing": "\"No module named 'selective_scan_cuda'\": mamba-ssm not installed and mamba-ssm built without its extension read alike (D)",
    # harv29-2026-12-05 (harv29, sampled by the final-line message in search order): the cause is
    # the reporter's finding (E) or the line is one two builds print alike (D)
    "npbgpp-5-segfault-torch-scatter-mismatch": "a bare 'Segmentation fault (core dumped)' at a model's instantiation: torch and torch-scatter not matching is the reporter's finding (E)",
    "FLAML-917-keyerror-bert-embeddings-transformers-outdated": "a KeyError on a checkpoint key in transformers' _load_pretrained_model: the outdated transformers is the maintainer's finding (E)",
    "mish-cuda-10-no-kernel-image-titan-x-arch-list": "'no kernel image' after 'Built with pytorch 1.7, cuda 10.2, TITAN X': torch's build and the extension's read alike (torch-arch-not-supported first, extension-arch-missing second) (D)",
    # harv30b (docs/dev/harv30b.md): platform and hardware threads, scored blind
    "aks-4870-a10-vgpu-unlicensed-devices-busy": "'CUDA-capable device(s) is/are busy or unavailable' and NVML's 'Unknown Error' on an Azure NVadsA10 v5 node: the unlicensed vGPU is in the reporter's prose ('noticing licensing issue') and the AKS team's follow-up, no licence line in the paste (E)",
    "lunar-58-winerror-127-c10-cuda-dll": "WinError 127 (a DLL found but a function missing) on torch\\lib\\c10_cuda.dll: stale DLLs of another torch left in torch\\lib is the maintainer's reading; a same-named DLL found first on PATH (library-shadowed) reads the same line (D)",
    "captcha-recognizer-2-fbgemm-dll-libomp140": "the maintainer retyped torch's line by hand ('Erro loading', curly quotes, an 'xxx' path, no WinError): library-missing first, msvc-runtime-missing second (B)",
    # harv31b (docs/dev/harv31b.md): research code building CUDA extensions, scored blind
    "draggan-30-cl-not-on-path": "the title quotes torch's warnings.warn source line with its template unfilled ('Error checking compiler version for {compiler}: {error}'), not the message: no-c-compiler first, windows-compiler-unusable third (B)",
    "mmdetection-2113-cuda-home-leading-colon": "\"/usr/local/cuda-9.0/bin/nvcc': No such file or directory\" with the leading ':' of CUDA_HOME cut off by the paste: a CUDA_HOME without nvcc (nvcc-missing) reads the same; the colon is the reporter's finding (E)",
    "nvdiffmodeling-7-renderutils-plugin-vs-cpp-components": "torch's bare \"Error building extension 'renderutils_plugin'\" on Windows paths: the Visual Studio C++ components missing is the reporter's finding after the maintainer's hint (E)",
    "tiny-cuda-nn-73-cxx14-flag-vs2019-cuda-10.2": "nvcc's 'The -std=c++14 flag is not supported with the configured host compiler. Flag will be ignored.' (VS 2019 16.8+ with CUDA 10.2, fixed by CUDA 11.4): nvcc is closed source, so no rule was written from its wording (A1)",
    # harv30-2026-12-05 (docs/dev/harv30.md): a Windows exit status carries no cause (E)
    "ollama-16645-llama-server-0xe06d7363-ancient-driver": "Ollama's 'llama-server process has terminated: exit status 0xe06d7363' (a C++ exception's NTSTATUS on Windows): the driver far older than the bundled CUDA runtime is the maintainer's reading of nvidia-smi (E)",
    # harv29b-2026-12-05 (docs/dev/harv29b.md): the blind misses not fixed
    "xtuner-925-qwen2-flash-attention-forward-removed-transformers-4.44": "xtuner's call of a method transformers 4.44 removed ('Qwen2FlashAttention2' object has no attribute '_flash_attention_forward'): the removal was not confirmed from transformers' source in time (A1)",
    "UniLab-624-windows-uv-sync-resolves-cpu-torch": "the reporter's sentence 'reports torch 2.7.0+cpu, torch.version.cuda None, torch.cuda.is_available False' (A3: the user's words, no program line)",
    "MinerU-3416-sglang-only-supports-sm75-v100": "'SGlang only supports sm 75 and above' in a user's issue form: the line's source (sglang or MinerU) was not found, so no signature was written (A1)",
    # harv29c-2026-12-05 (harv29c, forum and blog pages sampled in search order): a blog's retelling
    # in Chinese prose (A3), or a notice's title whose cause is in its body (C2)
    "gitcode-8e1396-triton-3-0-0-windows-no-matching-version": "a blog's Chinese prose of pip finding no Triton version on Windows (triton-not-installed by resemblance): no pip line is pasted (A3)",
    "gitcode-a54223-vllm-cannot-import-flash-attn-varlen-func-not-rebuilt": "a blog's Chinese prose of an ImportError from vllm_flash_attn (flash-attn-not-installed by its words): that the source checkout was not rebuilt after merging main is the thread's finding (A3/E)",
    "gitcode-caecd3-colab-tensorflow-2-15-cannot-dlopen-gpu-libraries": "a blog's Chinese description of TensorFlow's registration warnings and 'cannot dlopen some GPU libraries' (TensorRT codes by resemblance): no TensorFlow line is pasted (A3)",
    "gitcode-c2e9c4-triton-3-2-git-torch-2-6-dev-attrsdescriptor-aarch64": "a blog's Chinese account naming Triton's AttrsDescriptor class without Python's ImportError line: named first by resemblance to another thread only (the vocabulary word triton-attrs-descriptor ranks it too), no signature reads the prose, so match_codes names nothing (A3)",
    "nvidia-forums-242308-containers-losing-access-failed-to-initialize-nvml": "only NVIDIA's notice title 'Containers losing access to GPUs, Failed to Initialize NVML' (nvml-unavailable by its words): the systemd cgroup reload is the notice's body (C2)",
    # harv31-2026-12-05 (docs/dev/harv31.md): the blind misses not fixed
    "DistServe-52-no-kernel-image-swifttransformer-arch-list": "only torch's 'CUDA error: no kernel image is available for execution on the device' from offline.py: that the project's own CUDA library (SwiftTransformer) was built with the wrong TORCH_CUDA_ARCH_LIST is the reporter's later finding (E)",
    "unsloth-2863-cuda-invalid-argument-blackwell-triton-3.3.1": "only the title 'RuntimeError: CUDA error: invalid argument with Unsloth Blackwell Compatibility installation': Triton 3.3.1 with torch 2.7 on sm_120 is the maintainer's reading, no version is in the log (E)",
    # harv32-2026-12-06 (docs/dev/harv32.md): the blind misses not fixed
    "waifu2x-caffe-111-cudnn-internal-error-cudnn64-7-too-old-ja": "caffe's 'Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)  CUDNN_STATUS_INTERNAL_ERROR' (cudnn-call-failed, cudnn-unusable among its causes): that the cudnn64_7.dll was v7.1 while the build needs 7.3 is a commenter's and the maintainer's finding (E)",
    # harv31d-2026-12-05 (docs/dev/harv31d.md): the blind misses not fixed
    "FasterLivePortrait-8-container-stale-libnvidia-ml-symlink": "only nvidia-smi's 'couldn't find libnvidia-ml.so' inside the container (nvml-unavailable): that the image's libnvidia-ml.so.1/libcuda.so.1 links point at another driver's libraries is the answer's finding (E)",
    "triton-server-3773-container-21.10-driver-455-cuinit-no-device": "only 'No CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE) cuInit()=100' and 'Driver Version: 455.45.01': that Triton 21.10 (CUDA 11.4) needs driver 470 is the maintainer's support-matrix reading (E)",
    "vllm-23935-gke-l4-unspecified-platform-nvidia-lib64-not-on-ld-path": "only the title 'No platform detected, vLLM is running on UnspecifiedPlatform in Docker with Kubernetes' and a pip list: that GKE mounts libcuda under /usr/local/nvidia/lib64, off the CUDA 12.8 image's LD_LIBRARY_PATH, is the answer's finding (E)",
    # harv34c-2026-12-07 (docs/dev/harv34c.md): the blind misses not fixed (E, A3)
    "ascend-pytorch-7-npu-init-env-failed-python-deps-missing": "only CANN's 'EH9999 [Init][Env]init env failed!' and 'build op model failed, result = 500001' then 'Aborted (core dumped)': that the CANN Python dependencies (decorator, sympy, cffi ...) were not installed is the maintainer's finding, no line names a module (E)",
    "comfyui-installer-15-amd-install-pulls-cuda-torch": "the user's paraphrase 'No Nvidia drivers found on your system' (torch says 'Found no NVIDIA driver on your system') and pip taking torch-2.6.0-cp312-...-manylinux1_x86_64.whl from PyPI beside the ROCm extra index: the CUDA build on an AMD card is read from the wheel's name and the installer's AMD choice, no program line states it (A3)",
    "deepstream-yolo-164-xavier-invalid-instruction-openblas-coretype": "the reporter's 'Invalid instruction (Core dumped)' (no shell prints it: bash says 'Illegal instruction (core dumped)') on a Jetson Xavier; OPENBLAS_CORETYPE=ARMV8 fixed it (A3)",
    # harv33d-2026-12-06 (docs/dev/harv33d.md): the round-2 blind misses not fixed (E)
    "opencvsharp-123-nuget-opencv-without-cuda-device-count-0": "only the user's 'Cv2Gpu.GetCudaEnabledDeviceCount(); it always returns 0' (no error text): that the NuGet package's OpenCV dlls are built without CUDA is the reporter's finding after rebuilding them (E)",
    "opencvsharp-323-nuget-build-use-cuda-no": "only 'Cv2.GetCudaEnabledDeviceCount(); is still 0' and the GPU's name (no error text): that the package's native build says 'Use Cuda: NO' is a commenter's reading of its build information (E)",
    # harv33c-2026-12-06 (docs/dev/harv33c.md): the blind misses not fixed (round 2)
    "rhoai-maas-guide-53-fp8-model-on-t4-min-capability-80": "only vLLM's compressed-tensors check 'Quantization scheme is not supported for the current GPU. Min capability: 80. Current capability: 75.' (framework-gpu-arch-unsupported, as for the integer schemes): that the scheme is FP8 is the maintainer's answer, the message does not name it (E)",
    # harv32c-2026-12-06 (docs/dev/harv32c.md): the blind misses not fixed
    "cellbender-161-no-gpu-in-work-computer": "only CellBender's 'AssertionError: Trying to use CUDA, but CUDA is not available.' (torch-cuda-unavailable): that the work computer has no NVIDIA GPU at all is the reporter's finding (E)",
    "mxnet-6798-gpu-memory-held-by-another-program": "the paste ends inside MXNet's 'cudaMalloc failed: out of mem' (cut mid-word), and that another program held the shared DGX-1's GPU memory is the reporter's finding from nvidia-smi (E)",
    "rewriting-3-shared-tmp-torch-extensions-other-user": "the reporter retyped torch's line ('errono13 Permission denied:'/temp/torch_extensions/fused'', no space after the colon, /temp for /tmp); build-dir-unusable's signature reads Python's own 'Permission denied: '...torch_extensions' and a pattern for the retyping would be tuning (B, round 2)",
    # harv33b-2026-12-06 (docs/dev/harv33b.md): the blind misses not fixed
    "ColabFold-693-colab-numpy2-replaced-by-1.26-in-running-kernel": "the search excerpt cut the paste before its exception line (only 'ValueError  Traceback' and the frames): the cause is the reporter's own sentence (numpy 2 already imported, 1.26 installed under it), A3",
    "fast-stable-diffusion-2628-colab-v100-xformers-built-for-t4-a100": "only torch's bare 'no kernel image is available for execution on the device' (torch-arch-not-supported first, extension-arch-missing second): that the notebook's prebuilt xformers covers T4 and A100 but not V100 is the maintainer's finding (E)",
    "generative-virtual-screening-8-minikube-toolkit-not-set-up-nvidia-smi-not-in-path": "runc's 'exec: \"nvidia-smi\": executable file not found in $PATH' for the base image under kubectl reads device-nodes-missing first, container-toolkit-missing third: without the toolkit's hook neither the nodes nor the driver files arrive, and which one the runtime config lacked is the reporter's finding on minikube (D)",
    "skypilot-449-azure-dsvm-image-driver-drops-k80": "only nvidia-smi's 'couldn't communicate with the NVIDIA driver' on a K80 VM (no-nvidia-driver first): that the image's driver branch no longer drives Kepler is the maintainers' finding (PR #460 pins the image with driver 470), E",
    # harv33b round 2 (scored after the fixes, blind to them)
    "nvidia-docker-237-cuda-7.5-image-sm61-gtx1070": "nvcc's 'Value 'sm_61' is not defined for option 'gpu-architecture'' reads as nvcc-arch-dropped (CUDA 13 dropped sm_50-72): which way the gap goes is the image's CUDA 7.5 in the reporter's sentence, a version fact beside the symptom (C3)",
    # harv33-2026-12-06 (docs/dev/harv33.md): the blind misses not fixed
    "nccl-104-m40-8gpu-all-reduce-stalls-acs-enabled": "nccl-tests' header and 'it will be stalled' only: a hang (collective-hang, nccl-p2p-blocked second); that ACS blocked peer-to-peer is the NVIDIA answer's finding (E; silent before harv33 read 'stalled', A3)",
    "nccl-1141-deepspeed-two-nodes-eno1-not-the-route-br0": "NCCL_SOCKET_IFNAME=eno1 and 'remote process exited': that eno1 exists but is not the interface that carries the nodes' traffic (br0 does) is the reporter's finding; nccl-socket-ifname-wrong is its indistinguishable sibling (D)",
    "nccl-1267-ncclsocketinit-family-0-nccl-differs-between-nodes": "NCCL's 'connecting to address with family 0' alone, also what a NCCL_SOCKET_IFNAME naming no interface prints (nccl#1837); that the nodes ran different NCCL releases is the reporter's pip freeze (E)",
    "nccl-tests-219-internal-error-socket-ifname-differs-per-host": "nccl-tests' 'internal error' line only (nccl-socket-ifname-wrong second); that each host names its interface differently is the reporter's setup (E)",
    # harv34-2026-12-07 (docs/dev/harv34.md): the blind miss not fixed
    "mmdeploy-2177-rtx40-tensorrt-too-old-failed-to-create-engine": "mmdeploy's 'AssertionError: Failed to create TensorRT engine' only (explain: the symptom tensorrt-engine-build-failed, the expected cause third among its could-be, tools35): that the RTX 40 GPU needs TensorRT 8.5+ is the reporter's setup, neither the GPU nor the TensorRT release is in the log (E)",
    # harv43e-2026-12-16 (docs/dev/harv43e.md): the blind miss not fixed
    "cogvideoxwrapper-171-clear-fake-context-parallel-cache-diffusers-0.31": "only ''AutoencoderKLCogVideoX' object has no attribute '_clear_fake_context_parallel_cache'' (torch's Module.__getattr__ on a diffusers model): that the ComfyUI node was written for diffusers 0.30.x and diffusers 0.31 was installed is the users' finding (pinning 0.30.3) and the maintainer's (the node updated for 0.31); the same AttributeError follows any caller's typo or its own code, so the line alone does not name the release (E)",
    # harv43a-2026-12-16 (docs/dev/harv43a.md): the blind miss not fixed
    "gsplat-463-no-module-gsplat-optimizers-pypi-release-older-than-examples": "only 'No module named 'gsplat.optimizers'' after 'pip install gsplat': that the PyPI release (1.4.0) predates the module the repository's example scripts import is the commenters' finding; a dotted name missing from an installed package is as often a project folder shadowing it or a local module never installed (the training corpus' other dotted ModuleNotFoundErrors name five different causes), so the line alone does not name this one (E)",
    # harv43d-2026-12-16 (docs/dev/harv43d.md): the blind misses not fixed
    "qwen-12-modeling-file-requires-flash-attn": "the reporter's retyping of transformers' check_imports message ('were not found in your enviroment: flash_attn', '...environment: flash_atten.'): neither line is the program's text, which flash-attn-not-installed's signature reads; python-package-not-installed reads the generic part (A3)",
    "llamafactory-3866-qwen1.5-gptq-libcudart-12-old-auto-gptq": "the reporter's retyped loader line 'libcudart.so.12:cannot open shared object file:no such file or directory' (no spaces, lower case) beside auto-gptq's own 'CUDA extension not installed', which names kernel-extension-not-built; that auto-gptq 0.5.0 was built for another CUDA runtime is the maintainer's answer (A3, then C3)",
    "glm-4-472-too-many-values-to-unpack-remote-code-vs-transformers": "a bare 'ValueError: too many values to unpack (expected 2)' in prose beside transformers 4.43.3: that GLM-4's remote modeling code and that transformers release do not fit is the maintainer's answer; first only by resemblance (E)",
    # harv42a-2026-12-15 (docs/dev/harv42a.md): the blind miss not fixed
    "slotcon-9-encoderdecoder-not-in-mmengine-registry-mmseg-1": "mmengine's 'EncoderDecoder is not in the mmengine::model registry' KeyError (the title only): that the code was written for mmsegmentation 0.x and mmseg 1.x was installed is the reporter's finding; the same KeyError follows a module never imported (custom_imports) or a typo in the config, so the line alone does not name the cause (E)",
    # harv43c-2026-12-16 (docs/dev/harv43c.md): the blind misses not fixed
    "paddle-25846-whl-built-on-v100-run-on-p40-no-kernel-image": "Paddle 1.x's glog 'cudaGetLastError  no kernel image is available ... errno: 48': the only words naming Paddle are in the glog stack frames ('@ 0x... paddle::platform::CUDADeviceContext::Wait()'), which the scan does not keep for the framework refine, so torch's reading stays (B; that the wheel was built on a V100 machine and run on a P40 is the reporter's own line, no program's)",
    "paddle-models-389-gpu-image-run-without-nvidia-docker": "Paddle 0.x's 'Check failed: cudaSuccess == cudaStat (0 vs. 35) Cuda Error: CUDA driver version is insufficient' with the reporter's 'I do not use the GPU': that the GPU image ran under plain docker instead of nvidia-docker is the maintainer's finding, no line of the paste names docker (E)",
    "trocr-1-windows-paging-file-then-cuda-oom-batch-size": "two failures in one paste: Windows' '[WinError 1455] The paging file is too small' first (a real cause, read as windows-pagefile-too-small) and, after the reporter changed settings, torch's 'CUDA out of memory' (second); which one the thread fixed (the batch size) is the maintainer's reading of the later turn (C: which failure is the current one)",
    # harv41e-2026-12-14 (docs/dev/harv41e.md): the blind misses not fixed
    "micro-sam-1210-wrong-nifty-distribution": "only 'No module named 'nifty.tools'' and the reporter's listing of a nifty 9.2.0: that this is an unrelated PyPI project of the same import name (micro-sam needs DerThorsten/nifty from conda-forge) is the maintainers' answer; no code names an installed namesake distribution (labelled python-package-not-installed after the blind score)",
    "nnunet-672-cudnn-internal-error-ampere-venv": "cuDNN's bare 'CUDNN_STATUS_INTERNAL_ERROR' (title and the reporter's later turn, no traceback): read as the symptom cudnn-call-failed; that the venv's torch lacked Ampere kernels is the maintainer's explanation, not in the log",
    "stardist-228-dnn-library-not-found": "TensorFlow's 'DNN library is not found.' names cudnn-unusable; that the installed cuDNN is the wrong version comes from 'the first error message' the maintainer points at, which the stored paste cuts off",
    "totalsegmentator-275-residualencoderunet-import": "the title's 'cannot import name 'ResidualEncoderUNet'' without a 'from <module>' and the reporter's prose about dynamic_network_architectures 0.4 (the pasted trace is cut before the ImportError): a user's sentence, no program line to match",
    # harv35b-2026-12-08 (docs/dev/harv35b.md): the blind misses not fixed
    "jrottenberg-ffmpeg-233-nvenc-cannot-load-libcuda-no-gpu-in-compose": "ffmpeg's 'Cannot load libcuda.so.1' (nv-codec-headers' loader) in a compose service given no GPU: the line has no signature, and which root it means (no GPU passed to the container, no driver on a host) needs the container context (A1, then C2)",
    "so-vits-svc-22-cpu-training-not-allowed-torch-without-cuda": "the VITS trainer's 'CPU training is not allowed.' now names the symptom torch-cuda-unavailable (torch-cpu-only-build third); that the installed torch was the CPU build is only in the thread (E)",
    # harv34b-2026-12-07 (docs/dev/harv34b.md): the blind misses not fixed
    "exllama-65-apt-nvcc-115-too-old-for-torch-cu118": "a title 'Ninja: Build stopped: subcommand failed' beside nvcc's 'release 11.5' and a torch nightly from the cu118 index: tools35's nvcc-older-than-torch-cuda fact compares them (the torch index's cu118 included), but it narrows a failed extension build, and the title is the reporter's retelling of ninja's 'ninja: build stopped', which no signature reads (C3)",
    "gaussianpretrain-4-conda-cudatoolkit-113-installs-pytorch-cpu": "the user's sentence 'it shows that I installed `pytorch_cpu` rather than `pytorch_cuda`' after a conda command with cudatoolkit=11.3: no conda line is pasted (A3)",
    # harv32b-2026-12-06 (docs/dev/harv32b.md): the blind misses not fixed
    "fastertransformer-90-cublas-not-initialized-rtx3090-no-sm86": "FasterTransformer's 'CUDA runtime error: CUBLAS_STATUS_NOT_INITIALIZED' from encoder_gemm, read as the cuBLAS symptom: that the build lacked sm_86 is the maintainer's answer; the log only says the 2080 Ti works and the 3090 (8.6) does not (C3)",
    "maskrcnn-benchmark-1-c-undefined-symbol-gcc-4.8": "only '_C...so: undefined symbol: _ZN2at4cuda20getCurrentCUDAStreamEl', read as an extension built for another torch: that gcc 4.8 built it is the maintainer's answer, no compiler version is in the log (E)",
    # harv32b round 2 (scored after the first fix, blind to it)
    "apex-1051-rtx3080-arch-list-7.5-no-kernel-image": "the issue title repeats torch's 'no kernel image' line; since fix33 both copies read extension-arch-missing (the body's copy sits beside 'export TORCH_CUDA_ARCH_LIST=\"7.5\"'), 2nd after the first install's 'nvcc fatal: Unsupported gpu architecture' (nvcc-arch-unsupported weighs more) (C2)",
    "vl-bert-81-apex-no-kernel-image-rebuilt-on-gpu": "only torch's bare 'CUDA error: no kernel image is available for execution on the device': that apex had been built for another GPU is the reporter's fix (E)",
    # harv35d-2026-12-08 (blind misses left unfixed, docs/dev/harv35d.md)
    "tensorflow-25692-tf-nightly-missing-header-long-path": "the issue title only, 'pip install tf-nightly-2.0-preview on Windows 10: missing file TensorSyclConvertToDeviceExpression.h': that the install path passed 260 characters is the maintainer's answer, nothing in the log says so (E)",
    "stomanager1-50-torch-after-pyqt5-c10-dll": "the title 'torch error importing c10.dll' and the reporter's sentence about loading c10.dll on Windows (no loader line; an earlier import of PyQt5 that loads its older Visual C++ runtime is the reporter's finding): named first only by resemblance to other threads, no signature reads the prose, so match_codes names nothing (A3)",
    "torchstudio-20-missing-msvcp140-dll": "the reporter's own sentence 'complaints about several missing MSVCP140.dlls' (the loader's dialogs were screenshots): no program's line, and a rule for this phrasing would be written from the log it is scored on (A3)",
    # harv36c-2026-12-09 (blind misses left unfixed, docs/dev/harv36c.md)
    "decord-340-cuvidcreatevideoparser-docker-built-libnvcuvid": "decord's 'cuvidCreateVideoParser(&parser_, &parser_info_) failed with error:' with an empty error string: that decord was built in a docker image against a libnvcuvid that is not the host driver's is the reporter's finding, not in the log (E)",
    "nvpipe-48-undefined-reference-cuvidreconfiguredecoder": "the title only, a link error 'undefined reference to cuvidReconfigureDecoder, cuvidGetDecodeStatus': that the driver's libnvcuvid predates Video Codec SDK 8.2 is the maintainer's answer; the same link error comes from a stub or SDK mismatch (E)",
    "pytorch-10577-torch-save-write-input-output-error-disk-full": "torch 1.0's 'write(): fd 29 failed with Input/output error' from torch.save: EIO, not ENOSPC; a full disk is the commenter's finding, and EIO also means a failing disk or a network file system (E)",
    "vpf-473-cuda-error-system-driver-mismatch-docker": "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH in a container with driver 520.56.06 is read as driver-library-mismatch; that VPF's build needs driver 525 or newer is the maintainer's fact, not in the log (D/E)",
    "transformers-13472-permission-denied-root-cache": "only '[Errno 13] Permission denied: '/.cache'' after a from_pretrained snippet: named first by resemblance to other threads (a HOME of / in a container), no signature reads it, so match_codes names nothing; '/.cache' alone is every library's cache root (torch hub, pip, matplotlib), so no rule was written (A2/C)",
    # harv36a-2026-12-09 (docs/dev/harv36a.md): the blind misses not fixed
    "finetune-llms-3-transformers-4.14-needs-deepspeed-0.5.7": "the issue title 'deepspeed>=0.5.7 is required by recent versions of the transformers package' is the reporter's retelling; the search excerpt cuts the launcher's log before transformers' own 'deepspeed>=0.5.7 is required for a normal functioning of this module' line (A3)",
    "llamafactory-2256-require-version-transformers-4.36.2": "the traceback ends inside transformers/utils/versions.py under LLaMA-Factory's `require_version(\"transformers>=4.36.2\", ...)` call; the ImportError line naming the installed transformers is cut from the excerpt, and no rule reads a bare require_version call site (B, truncated paste); first only by resemblance to finetune-llms-3, another log of this harvest",
    "peft-1991-linear4bit-not-supported-old-peft-transformers": "the issue title 'Linear4bit not supported error when running QDoRA_finetuning.ipynb cookbook' only; that peft and transformers were too old for the cookbook is the reporter's closing comment (E)",
    "codellama-25-colab-finetune-childfailederror-host-ram": "torchrun's bare 'ChildFailedError:' title with no exit code or signal (host-oom-killed third, after launcher-worker-failed); that the Colab host RAM ran out is the commenters' observation and the maintainer's answer (E)",
    # harv36a round 2 (scored after round 1's rules, blind to any rule for it)
    "openchat-52-flash-attn-1-installed-code-needs-flash-attn-2": "openchat's 'NameError: name 'flash_attn_varlen_func' is not defined' reads the same when flash-attn is not installed at all (the import is guarded), so explain guesses flash-attn-not-installed from the words; that flash-attn<2 was installed is the reporter's pip command beside it (C3)",
    # harv36d-2026-12-09 (docs/dev/harv36d.md): the blind miss not fixed
    "ldms-1636-dcgm-sampler-hostengine-not-running": "the reporter's paraphrase 'DCGM sampler will fail with `Host Engine is disconnected or invalid` errors' (DCGM's own text is 'Host engine connection invalid/disconnected'); no program's line is pasted, and a rule for this wording would be written from the log it is scored on (A3)",
    # harv36b-2026-12-09 (docs/dev/harv36b.md): the blind misses not fixed
    "cupy-8045-rtx4080-cc89-old-cupy-invalid-source": "the issue title only, 'CUDA_ERROR_INVALID_SOURCE: device kernel image is invalid' (cuda-error-unclassified first, framework-gpu-arch-unsupported second): that a CuPy older than v11 does not know the RTX 4080's compute capability 8.9 is the maintainer's answer; neither the GPU nor the CuPy release is in the log (D, E)",
    "libgpuarray-289-no-binary-for-gpu-missing-ptxjitcompiler": "the issue title only, 'CUDA_ERROR_NO_BINARY_FOR_GPU' (read as the GPU missing from a build's architectures, its usual cause): that the driver's libnvidia-ptxjitcompiler.so was missing is the reporter's finding from the JIT's own log, which is not pasted (E)",
    "openmm-2760-compute-node-without-cuda-libcuda-libnvrtc": "the reporter's sentence that 'libcuda.so.1' and 'libnvrtc.so.10.1' can not be loaded on the compute node (libcuda-not-in-ldconfig first by words, libcuda-missing second): no loader line; that the compute node lacks the CUDA installation of the login node is the reporter's later finding (A3, D)",
    "openmm-3656-openmm-plugin-dir-base-env-no-cuda-platform": "OpenMM's 'There is no registered Platform called \"CUDA\"' and conda's PackagesNotFoundError for cudatoolkit==11.0 (package-no-matching-wheel by that line): that OPENMM_PLUGIN_DIR named the base environment's plugins is the reporter's later finding; the variable is not in the log (E)",
    # tools36: validation logs the alias map (ALIASES.toml) moved to training, scored as they were
    # (blind to them); not tuned here
    "ao-2901-torchao-rc-aborted-torch-nightly": "moved from validation with pytorch/ao (alias pytorch-labs/ao, tools36); ranked libstdcxx-too-old first, not torchao-torch-mismatch",
    "ao-2919-torchao-import-aborted-torch-abi": "moved from validation with pytorch/ao (alias pytorch-labs/ao, tools36); ranked native-crash-in-gpu-library first, not torchao-torch-mismatch",
    "sd-webui-amdgpu-469-backend-directml-flag-renamed": "moved from validation with lshqqytiger/stable-diffusion-webui-amdgpu (tools36); no-nvidia-driver is third after torch-cuda-unavailable",
    "sd-webui-amdgpu-480-amd-gpu-no-backend-flag": "moved from validation with lshqqytiger/stable-diffusion-webui-amdgpu (tools36); no-nvidia-driver is third after torch-cuda-unavailable",
    "whisper-cpp-1502-illegal-memory-access-cc61": "moved from validation with ggml-org/whisper.cpp (alias ggerganov/whisper.cpp, tools36); broken-package-release not ranked",
    "whisper-cpp-3449-no-gpu-found-built-without-cuda": "moved from validation with ggml-org/whisper.cpp (tools36); framework-cpu-only-build not ranked first",
    "whisper-cpp-876-nvcc-11-5-arch-native": "moved from validation with ggml-org/whisper.cpp (tools36); nvcc-arch-unsupported third, by a guess from words",
    "whisper-cpp-pr1554-cuda12-binary-driver-too-old": "moved from validation with ggml-org/whisper.cpp (tools36); silent, driver-too-old-for-build not read",
    # session 36 lead: oobabooga/textgen is text-generation-webui renamed (ALIASES.toml); its 9 logs moved to training, scored as they were
    "textgen-100-cpu-installer-first": "moved from validation with oobabooga/textgen (alias oobabooga/text-generation-webui, session 36 lead); unknown, torch-cpu-only-build not ranked",
    "textgen-2820-exllama-silent-torch-cuda-mismatch": "moved from validation with oobabooga/textgen (session 36 lead); unknown, nvcc-torch-cuda-mismatch not ranked",
    "textgen-3754-cuda-gptq-wheel-on-rocm-libcudart": "moved from validation with oobabooga/textgen (session 36 lead); library-missing first, cuda-extension-on-rocm not ranked",
    "textgen-4238-flash-attn-wheel-torch-mismatch": "moved from validation with oobabooga/textgen (session 36 lead); unknown, extension-torch-mismatch not ranked",
    # harv36e-2026-12-09 (docs/dev/harv36e.md): the blind miss not fixed
    "zed-ros2-wrapper-25-cuda-11.1-nppicom-library-notfound-findcuda": "CMake's 'CUDA_nppicom_LIBRARY (ADVANCED)' set to NOTFOUND under CUDA 11.1 (Unknown error since tools42: its error line is colcon's 'Failed <<< zed_components [..., exited with code 1]', whose status 1 named host-oom-killed by words): that a FindCUDA older than CUDA 11, which removed libnppicom, asks for it is the reporter's and a commenter's finding; no code names 'a FindCUDA (CMake's or a project's bundled copy) older than the toolkit' exactly, and which CMake release first knew CUDA 11's NPP split was not verified from CMake's source, so no rule was written",
    # harv36f-2026-12-09 (docs/dev/harv36f.md): the blind misses not fixed
    "autogptq-239-cuda-extension-not-installed-no-cuda-toolkit": "the reporter's retelling 'CUDA Extension not installed.' (capital E, AutoGPTQ prints 'CUDA extension not installed.') and 'it gives \"CUDA_HOME\" environment issue' for the source build: that no CUDA toolkit (nvcc) was installed is in the user's words only (A3, E)",
    "llama.cpp-17542-cuda-compat-12.9-geforce-unsupported-driver-combination": "CUDA's 803 'system has unsupported display driver / cuda driver combination' beside the reporter's 'cuda-compat-12.9': the cuda-compat refine names library-too-old-for-driver (a compat libcuda that does not fit the kernel driver); forward compatibility on GeForce cards is its sibling with the same fix, and the kernel driver's version is not in the log to tell them apart (D)",
    "ollama-10739-llama4-scout-runner-killed-59g-system-ram": "only Ollama's offload and system-memory INFO lines (memory.required.full 68.3 GiB, 4 of 49 layers on an 11.4 GiB GPU, 59.1 GiB free RAM): no failure line; that the kernel killed the runner is the maintainer's reading of the numbers (C3, E)",
    "ollama-2029-a100-ggml-cuda-error-nvlink-board-fault": "ggml-cuda.cu's bare 'CUDA error' and systemd's 'Processes still around after SIGKILL' (host-oom-killed guessed from the words): that the A100 server's NVLink board was faulty is the reporter's later finding (E)",
    "koboldcpp-778-cublas-dll-msvcp140-codecvt-ids-missing": "the title's 'FileNotFoundError: Could not find module [...] koboldcpp_cublas.dll' (no Windows error text) and the reporter's sentence that only MSVCP140_CODECVT_IDS.dll is missing from a dependency listing: named first by resemblance to other threads, no signature reads the sentence, so match_codes names nothing; a rule for this phrasing would be written from the log it is scored on (A3)",
    # harv37b-2026-12-10 (docs/dev/harv37b.md): the blind misses not fixed
    "torchaudio-99-torch-sox-undefined-symbol-old-mismatched-pytorch": "_torch_sox's 'undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE' (extension-imported-without-torch first by its weight-3 signature, extension-torch-mismatch second): the traceback's context shows torchaudio importing torch first, so torch was loaded and the symbol is missing because that torch is not the one _torch_sox was built against (soumith); a rule reading an `import torch` line of an IPython frame's context as 'torch was loaded' would be fitted to this paste (C)",
    "pytorch-90673-conda-libcusparse-12-for-cu117-torch-undefined-symbol": "ld.so's 'undefined symbol: cusparseSpSM_analysis, version libcusparse.so.11' in torch's libtorch_cuda_cu.so: library-shadowed (runtime_libs' cuda-library-undefined-symbol) ranks before its sibling cuda-library-shadowed (fourth); both read 'another copy of a CUDA library than torch's', and which copy (a conda libcusparse 12 vs a path's older one) is not in the line (D)",
    # harv37a-2026-12-10 (docs/dev/harv37a.md): the blind misses not fixed
    "comfyui-easy-install-33-rtx4090-sageattention-sm89-kernel-not-available": "SageAttention's 'SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.' on an RTX 4090: its core.py sets SM89_ENABLED from whether the compiled _qattn_sm89 module imports, so the same words come from a wheel built without sm_89 (extension-arch-missing, ranked first) and from a wheel built for another torch (the update that fixed it); only the GPU being an 8.9 card tells them apart, and no fact ties 'a 4090' to 8.9 (D, C2); extension-torch-mismatch second",
    "kangaroo-81-a100-gpuengine-no-kernel-image-wrong-ccap": "a C++ program's own 'GPUEngine: Kernel: no kernel image is available for execution on the device' on an A100, built with the wrong ccap: no torch, build flag or library named near it, so the bare message keeps torch-arch-not-supported first and extension-arch-missing second (C, D)",
    "tensorflow-windows-wheel-88-tensorcore-wheel-needs-compute-7.0-on-6.1": "the reporter's paraphrase 'the current version need a Minimum 7.0' and 'GPU compute capability 6.1' (TensorFlow's own 'The minimum required Cuda capability is 7.0' is not pasted): a rule for the prose would be written from the log it is scored on (A3)",
    "tensorflow-8006-quadro-fx2800m-compute-11-could-not-find-cudevice": "TensorFlow 1.0's CHECK 'could not find cuDevice' (stream_executor/cuda/cuda_driver.cc:94) beside the reporter's 'FX 2800M': no rule reads it (the same CHECK fails when no GPU is visible at all), so match_codes names nothing; named first blind only by resemblance to tensorflow-6083/6125 (same tf_jenkins path), a guess (C3)",
    "yolov12-33-titan-v-flashattention-not-available-on-this-device": "YOLOv12's warning 'FlashAttention is not available on this device. Using scaled_dot_product_attention instead.': ultralytics/nn/modules/block.py prints the same words when the GPU is below sm_80 and when `import flash_attn` fails, so the line cannot tell flash-attn-arch-unsupported from flash-attn-not-installed (D); unknown",
    # harv37d-2026-12-10 (docs/dev/harv37d.md): the blind misses not fixed
    "text-classification-models-tf-4-oom-gpu0-held-by-another-job": "TensorFlow 1.x's 'OOM when allocating tensor of shape [563354,256]' (gpu-out-of-memory since harv37d's wording fix); that a workmate's process held GPU 0 is in a later comment, not in the log (E)",
    "pytorch-14768-unable-to-open-shared-memory-object-too-many-open-files": "the title alone, torch's 'unable to open shared memory object XXX in read-write mode': dataloader-shm-too-small first; the maintainers' open-files diagnosis rests on the errno the message leaves out (its newer form ends ': Too many open files (24)', which the emfile signature reads) (D)",
    "graphormer-7-fork-errno-12-cannot-allocate-memory-needs-128gb-ram": "'OSError: [Errno 12] Cannot allocate memory' from os.fork(): cuda-initialized-before-fork first by a guess from the word 'fork'; ENOMEM from fork is host RAM (overcommit refusing a copy of a large process), a reading not written here because the same errno comes from mmap and vm.max_map_count limits (A1)",
    "sent2vec-98-bad-alloc-loading-model-on-8gb-ram-server": "C++'s 'terminate called after throwing an instance of std::bad_alloc' while loading a 16 GB model on an 8 GB server (the user's sentence): native-crash-in-gpu-library first by a guess; bad_alloc also comes from corrupt sizes and library bugs, so no signature reads it as host RAM (A1/A3)",
    "kubeflow-1261-keras-training-on-gke-killed-node-low-on-memory": "the title's quoted \"Killed\" and TensorFlow start-up lines; the shell's own 'Killed' line and Kubernetes' 'The node was low on resource: memory' are not in the paste (E)",
    # harv38a-2026-12-11 (docs/dev/harv38a.md): the blind misses not fixed
    "clearlinux-2410-gcc-kernel-differs-nvidia-dkms-gui-gone": "the title and prose only paraphrase the driver's compiler version check ('The GCC used for the compiling the kernel, 11.1.1, is different from the current GCC version 11.2.1', 'the dkms build command would not work'); the check's own lines (nvidia-kbuild-cc-version-check) are not pasted, and a rule on this wording would be fitted to one thread (A3)",
    "void-packages-13128-nvidia340-dkms-failed-cc-mismatch": "the Void hook's line is quoted only as '... FAILED!' and the compiler check only paraphrased ('The error message advises to set IGNORE_CC_MISMATCH to 1'); the driver's own lines are not pasted (A3)",
    "gpu-operator-15-driver-pod-compile-fails-nouveau-loaded": "the driver container's install log stops at 'Relinking NVIDIA driver ker'; that nouveau held the GPU (the reporter's fix) is in no line of the paste (E)",
    "ollama-11593-rtx6000-blackwell-cuda-init-failure-3-uvm-hmm": "ollama's 'cuda driver library init failure: 3' (cuInit returned CUDA_ERROR_NOT_INITIALIZED); the cause, nvidia_uvm's HMM support (uvm_disable_hmm=1 fixed it), is named nowhere in the paste, so nvidia-uvm-hmm-init-failure has no signature (E)",
    # harv38b-2026-12-11 (docs/dev/harv38b.md): the blind misses not fixed
    "ansible-role-cuda-23-openstack-vm-passthrough-kernel-devel-missing-nvidia-smi-failed": "nvidia-smi's 'couldn't communicate with the NVIDIA driver' after the user's 'booting into the latest CentOS 7.7 kernel': nvidia-module-missing-for-kernel third, behind open-kernel-module-unsupported-gpu and no-nvidia-driver; that the cloud image lacked kernel-devel is in a later comment (C3/E)",
    "floydhub-dockerfiles-3-pytorch-gpu-image-plain-docker-run-cuda-not-available": "torch.cuda.is_available() False after a plain `sudo docker run -t -i floydhub/pytorch:latest-gpu-py3` (no --gpus, no nvidia-docker): only the command line tells that no GPU was passed in, and no fact reads a docker run without a GPU option yet (C2)",
    "lxd-5618-container-cudagetdevicecount-30-nvidia-uvm-not-passed": "deviceQuery's 'cudaGetDeviceCount returned 30 -> unknown error' in an LXD container beside a working nvidia-smi: cuda-init-failed (a symptom) first, nvidia-uvm-missing third; that /dev/nvidia-uvm was not passed in is the reporter's later finding (C1/D)",
    "sd3.5-18-a100-mig-slurm-wrong-cuda-visible-devices-nvml-internal-assert": "the title alone, torch's 'NVML_SUCCESS == r INTERNAL ASSERT FAILED at CUDACachingAllocator.cpp', and 'A100 - 80GB in MIG Mode': the assert is the allocator's NVML query failing, after an out-of-memory on a MIG slice as often as with a wrong CUDA_VISIBLE_DEVICES; the log does not tell them apart (D/E)",
    "skypilot-568-aws-g5-a10g-ami-driver-450-too-old-nvidia-smi-failed": "nvidia-smi's 'couldn't communicate with the NVIDIA driver' and modinfo's 'version: 450.142.00' on an A10 (G5): that 450 predates the A10 needs a table of the first driver branch per GPU, which explain does not have (C3)",
    # harv39d: hardware faults whose cause is not in the pasted text (E)
    "mineru-426-unspecified-launch-failure-faulty-gpu": "only 'RuntimeError: CUDA error: unspecified launch failure' and the reporter's Chinese prose (the GPU stays unusable until a reboot; swapping in a card of the same model fixed it): a launch failure has program causes as often as hardware ones (E)",
    "mumax-58-cuda-illegal-instruction-overclocked-gpu": "'CUDA illegal instructions' and 'Unknwon CU result: 700' retold in prose; that the GPU was overclocked (maintainer: only seen on flaky, overclocked GPUs) is not in the log (E); harv39d stopped the shell-SIGILL reading of the CUDA wording, so explain now says nothing",
    "tensorflow-40042-gpu-overheated-slows-down": "TensorFlow step lines whose rate falls over time and a time(1) summary: no error and no temperature in the log; the reporter found the GPU overheating (E). gpu-thermal-throttling (harv39d) reads nvidia-smi's 'Thermal Slowdown : Active' when a log has it",
    # harv40b-2026-12-13 (docs/dev/harv40b.md): crashes without a Python traceback, the blind misses not fixed
    "mmdetection-24-train-segfault-ops-built-with-gcc-4.8": "a bare 'Segmentation fault' after mmdetection's 'workflow' line (native-crash-in-gpu-library guessed from the words): that the CUDA ops were built with gcc 4.8 against a conda PyTorch is the maintainer's answer, in no line of the paste (E)",
    "mocogan-11-segfault-torch-imported-before-tensorflow": "'Segmentation fault (core dumped)' while loggers.py imports tensorflow: that torch was imported first is a commenter's answer, not in the paste (E)",
    "numba-6604-import-numba-0.50-llvmlite-0.33-segfault-ubuntu20": "'Segmentation fault. core dumped.' after `pip install numba==0.50.1` and `import numba`: llvmlite 0.33 (the release numba 0.50.1 pins) is the reporter's finding, left out of the body (E)",
    "petastorm-372-make-batch-reader-segfault-pyarrow-0.13-torch": "a bare 'Segmentation fault (core dumped)' reading parquet into a torch DataLoader: pyarrow 0.13 (ARROW-5130) is the maintainer's answer, not in the paste (E)",
    "tensorflow-13615-import-torch-then-tensorflow-crash-testcpufeature": "gdb frames of torch's libTHC.so.1 under TensorFlow's TestCPUFeature and the 'Crashing code' / 'Work-around' import blocks, with no signal line: frames of two frameworks in one stack are not read as a cause (C)",
    "tensorflow-61551-protobuf-4.24.0-segfault-tf-2.12": "TensorFlow INFO/WARNING lines and a cut 'scripts/benchmark_CNN.sh: line 243: 1488387' (the signal text is cut off); protobuf 4.24.0 only in the reporter's sentence 'the root cause seems to be because of protobuf version 4.24.0' (A3: no rule reads 'works fine till <package> <version>')",
    "transformers-5359-segfault-after-import-sentencepiece-0.1.92": "'segmentation fault (core dumped)' after `import transformers` beside torch 1.4 (library-loaded-twice guessed from the words): sentencepiece 0.1.92 is the maintainer's answer, in no line of the paste (E)",
    "transformers-8206-import-transformers-segfault-sentencepiece-unpinned": "'segementation fault' (sic) on `import transformers` with torch 1.4: the unpinned sentencepiece release is the reporter's finding, left out of the body (E)",
    # harv41b-2026-12-14 (docs/dev/harv41b.md): graph/sparse/geometric libraries, the blind misses not fixed
    "dgl-5442-dgl-sparse-torch-1.9-no-sparse-library": "DGL's 'Cannot find DGL C++ sparse library at .../libdgl_sparse_pytorch_1.9.0.so' now names extension-torch-mismatch (no DGL library for this torch); that the torch is too old for dgl.sparse (1.12+), not too new, is the reporter's fix (updating torch), and the log carries no DGL release's torch range (D)",
    "dgl-5547-dgl-cu102-torch-1.12.1-libcudart-11.0": "the title 'OSError: libcudart.so.11.0: cannot open shared object file' (library-missing) beside 'dgl 1.0.2+cu102' and an untagged 'torch 1.12.1': that torch and DGL came from different CUDA builds is the maintainer's answer; the traceback was a screenshot (C3/E)",
    "minkowskiengine-305-me-0.5-needs-torch-1.7-exclude-dispatch-key-guard": "MinkowskiEngineBackend _C's undefined symbol c10::impl::ExcludeDispatchKeyGuard reads extension-torch-mismatch, a sibling reading; that ME 0.5 needs torch 1.7+ is only the reporter's sentence (A3/D)",
    "opencood-16-spconv-2.x-installed-project-needs-1.2.1": "'No module named spconv.core_cc' reads kernel-extension-not-built (spconv 2.x without its compiled module); that the project needs spconv 1.2.1 is the maintainer's answer, not in the log (E)",
    "pytorch-sparse-49-wheel-cu110-beside-torch-cu102": "torch-sparse's 'compiled with different CUDA versions. PyTorch has CUDA version 10.2 and torch_sparse has CUDA version 11.0' reads nvcc-torch-cuda-mismatch first, extension-torch-mismatch second: that the wheel came from the cu110 index is in pip's 'Added torch-sparse from .../torch-1.7.0%2Bcu110/...whl' line ten lines earlier, out of a refine context's reach (C2)",
    "spconv-579-libspconv-undefined-symbol-wrong-cuda-path": "the title only, 'spconv/libspconv.so: undefined symbol:' with the symbol cut off (guessed from the words): that spconv was built against the wrong CUDA path is the reporter's fix, nothing in the log says so (E)",
    # harv42b-2026-12-15 (docs/dev/harv42b.md): retrieval/vector search/recsys/tabular GPU ML, the blind misses not fixed
    "fbgemm-2191-jagged-2d-to-dense-libcudart-12-missing": "the search excerpt keeps only the traceback ending in 'No such operator fbgemm::jagged_2d_to_dense' (custom-ops-not-registered first, library-missing fourth): the 'libcudart.so.12: cannot open shared object file' line the maintainer quotes from the full paste is not in the log (E)",
    "faiss-4043-windows-python-3.12-no-faiss-gpu-cu11-wheel": "pip's 'No matching distribution found for faiss-gpu-cu11' (Windows, Python 3.12): first only by resemblance to other threads (low), so match_codes names nothing; the GPU-package list of pip-no-gpu-package-version has no faiss-gpu, and none was added: the search showed the same line in a validation-side thread (A2)",
    "free-auto-gpt-45-faiss-gpu-sdist-metadata-names-faiss-cpu": "pip's 'Generating metadata for package faiss-gpu produced metadata for project name faiss-cpu' / 'has inconsistent name' (silent): faiss-gpu publishes no wheel for this Python and its stub sdist names itself faiss-cpu; no rule written: the wording's other threads the search returned are on the validation side (A1)",
    "ml-on-gcp-89-dask-cuda-total-memory-import-distributed-newer": "the reporter's title splits the ImportError ('cannot import name 'TOTAL_MEMORY' from [BUG] 'distributed.worker'') and the body shows only the code frame `from distributed.worker import TOTAL_MEMORY` (unknown): the unedited line reads dependency-version-mismatch (B)",
    "thrust-1636-xgboost-illegal-address-nut-shorting-gpu": "XGBoost's 'cudaErrorIllegalAddress: an illegal memory access was encountered' (cuda-error-unclassified): that a nut left on the board shorted the GPU is the reporter's finding, no Xid or other hardware line is in the log (E)",
    # harv43b-2026-12-16 (docs/dev/harv43b.md): the blind miss not fixed (alphafold3-272 reads since lead43)
    "localcolabfold-240-jax-0.4.29-setup-tpu-ml-dtypes-conflict": "only ColabFold's caught 'jax.tools.colab_tpu.setup_tpu() was required for older JAX versions ...' (a newer JAX raises it for every caller; ColabFold catches it and falls back, so it prints whatever the cause) and the reporter's ml-dtypes conflict in prose; the error that followed was cut from the paste, and that jax 0.4.29 broke it is the maintainer's finding (E)",
    # harv45g-2026-12-18 (docs/dev/harv45g.md): music and audio generation, the blind hit that is only a resemblance
    "stable-audio-tools-48-pedalboard-074-no-matching-distribution-python": "pip's 'Could not find a version that satisfies the requirement pedalboard==0.7.4 (from versions: 0.8.2, ..., 0.8.9)' / 'No matching distribution found for pedalboard==0.7.4' (stable-audio-tools pins it; the reporter's newer Python has no 0.7.4 build): first only by resemblance to other threads, so match_codes names nothing; pedalboard is no GPU package for pip-no-gpu-package-version, and a rule on any pinned version missing from pip's list would also read a version that never existed (a typo, EmilianPostolache/stable-audio-controlnet#9's 1.0.16) (A2)",
}
# Training logs no signature explains whose cause explain guesses from the words of their error
# lines (knowledge/vocabulary.toml: confidence "low", basis "vocabulary"); match_codes, which
# only reads signatures, names nothing for them.
GUESSED = {
    # harv44a-2026-12-17 (docs/dev/harv44a.md): no CUDA message pasted, only the reporter's words
    "hat-4-gpu-oom-test-512-input-16gb": "the reporter's sentences 'I get gpu oom error when running test.py' and 'Both led to GPU OOM' (no CUDA out-of-memory line was pasted), gpu-out-of-memory first by a guess from the words 'gpu oom'",
    # harv41c-2026-12-14: FBGEMM's 'fbgemm_gpu_py.so: undefined symbol: _ZN3tbb6detail2r117deallocate_memoryEPv' (the issue title only; fixed by the torch release the wheel was built for), extension-torch-mismatch first by a guess from the words
    "fbgemm-4334-tbb-undefined-symbol-fixed-by-torch-2.7": "the title only, an fbgemm_gpu_py.so undefined symbol (a TBB one), extension-torch-mismatch first by a guess from the words 'fbgemm_gpu' and 'undefined symbol'",
    # harv39b
    "maskrcnn-benchmark-103-unable-to-open-shared-memory-object": "the title only (torch's 'unable to open shared memory object </torch_...> in read-write mode'), dataloader-shm-too-small first by a guess from the words 'shared memory'",
    # session 36: collected blind (holdout-2026-12-09, val36c) while axolotl-ai-cloud/axolotl was validation by the hash; tools36's alias group (OpenAccess-AI-Collective/axolotl) put it on the training side before it was scored
    "axolotl-3142-flash-attn-undefined-symbol": "a flash-attn 'undefined symbol' import error under axolotl, extension-torch-mismatch first by a guess from the words 'flash-attn' and 'undefined symbol' (scored once, as it came)",
    # session 36 lead: moved from validation with oobabooga/textgen (ALIASES.toml), right first by the words of bitsandbytes' setup lines
    "textgen-398-wsl-8bit-bitsandbytes-no-cudart": "moved from validation with oobabooga/textgen (session 36 lead): bitsandbytes-cuda-setup-failed first by a guess from words",
    "textgen-659-windows-loads-linux-bitsandbytes-cpu-so": "moved from validation with oobabooga/textgen (session 36 lead): bitsandbytes-cuda-setup-failed first by a guess from words",
    # harv37b-2026-12-10: libbitsandbytes.so's undefined '__fatbinwrap_38_cuda_device_runtime_compute_75_...' (the CUDA device runtime of another toolkit), read by its words
    "bitsandbytes-21-libbitsandbytes-fatbinwrap-undefined-cuda-mismatch": "bitsandbytes 0.x's 'libbitsandbytes.so: undefined symbol: __fatbinwrap_38_cuda_device_runtime_compute_75_...' (a build against another CUDA than the one loaded; TimDettmers), bitsandbytes-cuda-setup-failed first by a guess from the words",
    # harv35-2026-12-08: the issue title only, transformers' preface 'FlashAttention2 has been toggled on, but it cannot be used' without the reason after it (flash-attn-not-installed by its words)
    "comfyui-florence2-8-flashattention2-toggled-installed-in-system-python": "the issue title 'Error: FlashAttention2 has been toggled on, but it cannot be used [Windows 11]' (transformers' preface without its reason: the package missing, too old, or no CUDA device), read by its words",
    # harv34b-2026-12-07: GenRe-ShapeHD's build script's own 'cuda available but nvcc not found. Please add nvcc to $PATH', read by its words (nvcc-missing)
    "genre-shapehd-34-cuda-available-but-nvcc-not-found-sudo": "GenRe-ShapeHD's build script's 'cuda available but nvcc not found. Please add nvcc to $PATH' under sudo, read by the words nvcc and not found",
    # harv33d-2026-12-06: cuDF's 'This cuDF installation is missing the necessary PTX files that are <=50.' (a GPU older than RAPIDS supports), read by its words
    "cuml-5484-cc-50-gpu-unsupported-missing-ptx": "cuDF's import check 'RuntimeError: This cuDF installation is missing the necessary PTX files that are <=50.' on a compute capability 5.0 GPU, read by its words (framework-gpu-arch-unsupported)",
    # harv31d-2026-12-05: the reporter's sentence 'it is giving an error nvcc not found' (nvcc-missing by its words)
    "notebooks-111-runtime-image-nvcc-not-found-detectron2": "the reporter's sentence 'giving an error nvcc not found' after building a docker image, read by the words nvcc and not found",
    # harv32-2026-12-06: French bash's bare 'Processus arrêté' (strsignal(SIGKILL), locales.json reads it as 'Killed') after Wapiti's feature count; a bare 'Killed' reads by words in English too
    "wapiti-18-processus-arrete-fr-host-ram": "bash's bare 'Processus arrêté' (French 'Killed') ending a training run, read by the word killed",
    # harv31 round 2: triton-windows' 'Failed to find MSVC' warning quoted in the user's sentence (windows-compiler-unusable
    # by its words). tools32's signature reads the warning as windows_utils.py prints it, with its period
    # ('Failed to find MSVC.'); the reporter's quote drops the period, and the rule was not widened to the quote
    "triton-windows-78-failed-to-find-msvc-wrong-windows-sdk": "triton-windows' warning 'Failed to find MSVC' quoted in the reporter's sentence, read by the words MSVC and triton",
    # harv31c-2026-12-05: a bare 'Killed' under a checkpoint bar at 0 %, and the user's words
    "baichuan2-119-from-pretrained-killed-host-ram": "bash's bare 'Killed' under 'Loading checkpoint shards: 0%' and '程序被kill掉，报错信息只有killed'",
    # training-2026-12-02h (sweepd): bash's bare 'Killed' after the last line the program printed
    "lte-22-config-loaded-killed": "a bare 'Killed' after 'config loaded.'",
    "landmark-65-trainer-killed-progress": "bash's 'Killed' glued to the end of tqdm's bar ('4.03it/s]Killed')",
    # training-2026-12-01s (recall5): the users' words for a process the OOM killer ended
    "dsnet-5-berlin-killed-memory": "a bare 'Killed' after the arrays' shapes, and '总是出现Killed' (always Killed)",
    "landmark-38-process-killed-128gb": "'a process was killed and my device had 128GB of memory'",
    "cuhksz-csc4005-69-libcudart11-ld-path": "the retyped 'libcudart,so.11.0' (a comma for the dot) in the loader's 'error while loading shared libraries'",
    "nccl-799-ib-no-such-device-hca": "'No such device' next to NCCL, and NCCL_IB_DISABLE in the maintainer's hint",
    "triton-2110-libcuda-not-found-typo": "the retyped 'lidcuda.so not found', and ldconfig in the reporter's prose",
    "triton-pr1123-python310-headers-layout": "a PR's prose ('Triton seems to break ...') naming /usr/include/python3.X",
    # training-2026-12-01i (kbgrow3)
    "alignment-handbook-85-flash-attn-undefined-symbol": "'flash_attn_2_cuda...so: undefined symbol' in an issue's sentence",
    "codeformer-307-runs-on-cpu": "users' words: 'I use the CPU ... rather than the GPU'",
    "csnakes-750-requirements-cpu-torch": "users' words: 'torch cpu version installed'",
    "pinokio-978-wsl-installer-cpu-index": "users' words: 'it automatically install the cpu version of torch'",
    "nvidia-docker-804-os-upgrade-reboot-driver-lost": "nvidia-smi named in a list item, the OS upgrade and reboot-required as context",
    "pytorch-58431-init-process-group-stuck": "'stuck in init_process_group' and 'instance connectivity' in the title and prose",
    "pytorch-biggraph-99-slurm-no-route-to-host": "a bare 'RuntimeError: No route to host' in an issue title",
    # training-2026-12-01m (kbgrow7)
    "arjunausers-52-interactive-killed": "a bare 'Killed' after the epoch lines: the shell's report of a SIGKILL",
    # training-2026-12-01n (kbgrow8)
    "alphafold3-570-jax-touches-unsupported-gpu0": "the reporter's prose: 'do not support Compute Capability 12.0', jaxlib named (a clue)",
    "isaacgymenvs-52-segfault-no-vulkan": "'Segmentation fault (core dumped)' with an Isaac Gym example's name (a clue)",
    "open3d-922-sigabrt-import-after-torch": "a crash that goes away when the imports swap order (clues)",
    "open3d-5597-segv-open3d-before-torch": "SIGSEGV that goes away with 'the imports order' swapped (clues)",
    # training-2026-12-01l (kbgrow6)
    "llamafactory-7315-bus-error-shm": "the title's 'bus error, insufficient shared memery (shm)' retyped from the DataLoader message",
    "openrlhf-187-actor-killed-container-memory": "Ray's 'killed by SIGKILL by OOM killer due to high memory usage' among its list of possible causes",
    "torchx-540-ray-ports-limited": "'exposed ports on nodes are limited' in an issue title",
    "transformers-28280-nccl-hang-p2p": "'stuck with backend nccl, but works with gloo'",
    "trl-3436-fsdp-oom-rtx3080": "'OOM on 8*RTX3080' in an issue title",
    "xtuner-819-flash-attn-undefined-symbol-after-torch-upgrade": "'flash_attn_2_cuda...so: undefined symbol:' with the symbol cut off",
    # training-2026-12-01j (kbgrow4)
    "comfyui-wanvideowrapper-875-sampler-triton-broken": "users' words: 'some of the packages are not loaded (Triton)'",
    "fooocus-447-killed-no-swap": "a bare 'Killed' after the last progress line",
    "kohya-ss-1000-bitsandbytes-windowspath": "a title: \"TypeError: argument of type 'WindowsPath' is not iterable. (copy to bitsandbytes folder didnt help)\"",
    "kohya-ss-1775-bitsandbytes-cuda-setup-paths": "\"No module named 'bitsandbytes.cuda_setup.paths'\": the bitsandbytes word",
    # training-2026-12-02e (sweepa)
    "gpubtree-19-initialization-error-driver-cuda": "'CUDA error at ...pool_allocator.cuh 36: initialization error' in an issue's prose: CUDA's init-error words",
    # training-2026-12-03s (harvs): SIGKILL in the words of the line
    "af-sfmlearner-38-killed-savez-memory": "'程序显示了Killed' (Killed glued to Chinese text)",
    "digits-1362-detectnet-error-code-minus9": "'ERROR: error code -9' (a child's return code -9 is SIGKILL)",
    "langchain-chatchat-35-checkpoint-shards-killed": "bash's 'Killed' glued to the end of the shards' progress bar",
    "video-llava-13-checkpoint-shards-killed-0": "bash's 'Killed' glued to the end of the shards' progress bar",
    "selfmask-11-exit-code-137-sigkill": "PyCharm's 'exit code 137 (interrupted by signal 9:SIGKILL)'",
    "graspnet-baseline-89-loading-labels-killed-oom": "a bare 'Killed' after the loading bars",
    # harv28-2026-12-05 (harv28): retyped titles
    "mmdetection-3991-mmcv-ext-undefined-symbol-fromqualstring": "a title retyped as '_ext...so:undefined symbol: _ZN3c10...' (no space after the colon the loader prints)",
    "waifu2x-caffe-62-cannot-find-cudnn64-5-dll": "'Calling cuDNN failed, cannot find 「cudnn64_5.dll」' retyped with Japanese brackets",
    # harv29-2026-12-05 (harv29): the users' words for the OOM killer and a bare bus error
    "ECON-23-avatarizer-killed-host-ram-32g": "'shows killed in line 163' and a bare 'Killed'",
    "PyTorch-BigGraph-33-bus-error-docker-share-memory": "a bare 'Bus error (core dumped)' after the workers start",
    # harv29c-2026-12-05 (harv29c): blog retellings in Chinese prose that name the parts
    "gitcode-7b5eba-forge-xformers-torch-checkpoint-ignored-ops-import": "a blog's Chinese list of symptoms: xFormers' version warning and a torch.utils.checkpoint name it cannot import, read from the words",
    # harv38a-2026-12-11 (docs/dev/harv38a.md): Void's kernel hook quoted as "DKMS module ... failed to
    # build" (not the 'Building DKMS module: ... FAILED!' form its signature reads) and a make.log's
    # bare 'make: *** [Makefile:80: modules] Error 2'; named from the words DKMS / kernel-headers
    "void-packages-61087-nvidia580-dkms-fails-linux-7.1": "Void's 'DKMS module 'nvidia-580.142' failed to build, please check /var/lib/dkms' beside 'Building DKMS module 'nvidia-580.142' for kernel-7.1.0_1... FAILED!' (quoted module name): read from the DKMS words",
    "void-packages-53759-nvidia470-dkms-fails-kernel-6.12": "a DKMS make.log's 'make[2]: *** [/usr/src/kernel-headers-6.12.7_1/Makefile:1937: /var/lib/dkms/nvidia/470.239.06/build] Chyba 2' and 'DKMS fails to build': read from the DKMS words",
}
TOP1_FLOOR = 0.885  # 215/219 (98.2%) when written; 364/393 (92.6%) once kbgrow5 added 36 fresh serving logs (12 KNOWN_MISSES); 397/435 (91.3%) with kbgrow7's 42 infrastructure-user logs (9 more KNOWN_MISSES); 438/486 (90.1%) with kbgrow8's 51 research-code logs (10 more KNOWN_MISSES); 468/523 (89.5%) with kbgrow4's 37 image/audio/speech logs (7 more KNOWN_MISSES); 560 logs with kbgrow6's 37 fine-tuning logs (2 more); 592 with recall2's 32 cuda/torch/config logs (3 more); 620 logs with recall4's 60 kernels/runtime-libs logs (3 more); 781 with recall7's 27 cuda/config/multi_gpu/triton logs (2 more); 1961/2205 (88.9%) with harv41e's 10 blind-harvested bio-imaging logs (4 more KNOWN_MISSES), so the floor went from 0.89 to 0.885


def test_corpus_is_big_enough_and_real():
    assert len(LOGS) >= 40
    per_thread: Dict[str, int] = {}
    known = set(all_codes()) | set(load().referenced_codes())  # the catalogue test checks the rest
    proposed = set(corpus_split.load_split().get("codes", {}).get("proposed", []))
    for path in LOGS:
        meta, body = read_corpus(path)
        assert corpus_split.source_thread(meta.get("source", ""), meta.get("repository", "")), path.name
        assert meta.get("established"), path.name
        # a validation log the alias map moved to training (tools36) may expect a code the
        # validation collection proposed (SPLIT.toml [codes].proposed); it is a listed miss
        assert meta.get("expected") in known or (path.stem in KNOWN_MISSES and meta.get("expected") in proposed), \
            path.name
        if meta.get("cause"):
            assert meta["cause"] in known, path.name
        assert body.strip(), path.name
        per_thread[meta["source"]] = per_thread.get(meta["source"], 0) + 1
    # several logs of one thread are allowed (different pastes), but a thread must not dominate
    assert max(per_thread.values()) <= 3, sorted(per_thread.items(), key=lambda kv: -kv[1])[:3]
    assert set(KNOWN_MISSES) | set(GUESSED) <= {p.stem for p in LOGS}


def _explain(meta, body, path):
    """A corpus log explained without its own thread among the exemplars (leave-one-out): the
    guesses by resemblance must come from other threads, as they would for a user's log."""
    with similar.leaving_out(meta.get("source", "")):
        return explain_text(body, source=path.name)


def _ranked(expl):
    return [c.code for c in expl.candidates]


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_corpus_top1(path):
    if path.stem in KNOWN_MISSES:
        pytest.xfail(KNOWN_MISSES[path.stem])
    meta, body = read_corpus(path)
    expl = _explain(meta, body, path)
    assert expl.root is not None, f"nothing found; expected {meta['expected']}"
    assert expl.root.code == meta["expected"], _ranked(expl)
    assert expl.root.evidence and all(ev.line >= 1 for ev in expl.root.evidence)
    assert expl.exit_code == 1
    assert (expl.root.basis == "vocabulary") == (path.stem in GUESSED), (expl.root.basis, expl.root.confidence)
    cause = meta.get("cause")
    if cause:
        # the thread's root cause is not in the log: it must be offered as a lower layer
        assert cause in expl.root.could_be or cause in expl.codes, expl.root.could_be


def test_corpus_top1_floor_and_no_silence():
    """Over the whole training corpus: top-1 at or above the floor, and no log that shows an
    error gets silence (it gets a candidate or an unknown-error fingerprint)."""
    hits, silent = 0, []
    for path in LOGS:
        meta, body = read_corpus(path)
        expl = _explain(meta, body, path)
        hits += bool(expl.root and expl.root.code == meta["expected"])
        if not expl.candidates and not expl.fingerprint:
            silent.append(path.name)
        if expl.has_errors:
            assert expl.exit_code == 1, path.name
    assert hits / len(LOGS) >= TOP1_FLOOR, f"top-1 {hits}/{len(LOGS)}"
    assert len(LOGS) - hits <= len(KNOWN_MISSES), f"top-1 {hits}/{len(LOGS)}: a new miss"
    # a paste may hold no error line at all (a PR's prose); it must then say so, never be wrong
    for name in silent:
        assert Path(name).stem in KNOWN_MISSES, name


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_corpus_match_codes_agrees(path):
    """match_codes (the pattern-only API `stackpeel run` uses) names the expected code from
    the text explain cites; where explain inferred the root from clues, match_codes names
    the symptom it explains (or the code a far context line refined a generic line to)."""
    if path.stem in KNOWN_MISSES or path.stem in GUESSED:
        pytest.skip(KNOWN_MISSES.get(path.stem) or GUESSED[path.stem])
    meta, body = read_corpus(path)
    expl = _explain(meta, body, path)
    codes = match_codes(body)
    if expl.root.basis in ("facts", "combination"):
        # a root read from the versions and GPUs the log prints (explain/facts.py, e.g. a
        # '2.0.1+cpu' torch, or a known-bad combination naming the failure the log's words only
        # guess): no signature names it, so there is nothing for match_codes to agree with
        assert expl.root.facts and meta["expected"] == expl.root.code, (expl.root.basis, expl.root.facts)
        return
    if expl.root.basis == "prior":
        # a base-rate guess (explain/priors.py): no line names it; match_codes names the symptom
        # whose earlier threads it was the cause of (in the text explain cites where the parser
        # joined lines first: a REPL's '>>> torch.cuda.is_available()' and its 'False' below it)
        cited = "\n".join(ev.text for ev in expl.root.evidence)
        assert expl.root.prior and expl.root.prior[0] in expl.root.explains, codes
        assert expl.root.prior[0] in codes or expl.root.prior[0] in match_codes(cited), codes
        return
    if expl.root.confidence == "inferred":
        # inferred from a symptom it explains, or a generic line a context line far from it
        # refined (reasoning._refined): match_codes names the symptom, or the refined code
        assert set(expl.root.explains) & set(codes) or meta["expected"] in codes, (expl.root.explains, codes)
    else:
        cited = "\n".join(ev.text for ev in expl.root.evidence)
        assert meta["expected"] in codes or meta["expected"] in match_codes(cited), codes


def test_no_log_is_listed_twice_among_the_known_misses_or_the_guessed():
    """A dict literal keeps the last of two equal keys without a word: a merge of two branches that
    each rewrote a log's note left both (session 35, mmdeploy-2177), and a third edit would then
    change a note nobody reads. Each log is listed once."""
    import ast

    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    seen = {}
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id in ("KNOWN_MISSES", "GUESSED") \
                and isinstance(node.value, ast.Dict):
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            seen[target.id] = keys
            assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})
    assert set(seen) == {"KNOWN_MISSES", "GUESSED"} and all(seen.values())
