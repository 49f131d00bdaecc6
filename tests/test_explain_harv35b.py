"""harv35b: an unbiased harvest of audio, speech and video pipelines on GPUs (faster-whisper,
whisperX and CTranslate2, torchaudio's backends, TTS and voice-conversion trainers, NeMo,
ffmpeg's NVENC/NVDEC), scored blind, and the general fixes its misses ask for
(docs/dev/harv35b.md).

Nineteen new training-side logs; explain named eleven first before any change. The fixed misses:
- A1, a program's own message: torchaudio 0.x-2.0 names the missing I/O backend itself, in three
  wordings nothing read (``Backend "soundfile" is not one of available backends: [...]`` from
  set_audio_backend, ``No audio I/O backend is available.`` from the no_backend stubs, and
  torchaudio.io's ``FFmpeg libraries are not found. Please install FFmpeg.``;
  pytorch/audio#837, #2925, C0untFloyd/bark-gui#6); now ``torchaudio-backend-missing``;
- A2, a specific message read only by a generic rule: cuDNN's sub-library version check
  (``cuDNN error: CUDNN_STATUS_VERSION_MISMATCH``, cuDNN 9's ``..._SUBLIBRARY_VERSION_MISMATCH``)
  fires when two cuDNN copies share a process (a pip nvidia-cudnn wheel beside torch's;
  MahmoudAshraf97/whisper-diarization#120); the generic ``cudnn-call-failed`` answered; now
  ``cuda-library-shadowed``;
- A1: the VITS family's trainers assert CUDA with their own words (``AssertionError: CPU training
  is not allowed.``; effusiveperiscope/so-vits-svc#22); explain answered unknown; now the symptom
  ``torch-cuda-unavailable``, which ranks its causes.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that must stay quiet.
"""

from __future__ import annotations

import pytest

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests, healthy_test

# pytorch/audio torchaudio/backend/utils.py set_audio_backend (0.5-2.0)
TA_SET_BACKEND = "RuntimeError: Backend \"soundfile\" is not one of available backends: ['sox', 'sox_io']."
TA_SET_BACKEND_EMPTY = 'RuntimeError: Backend "sox_io" is not one of available backends: [].'
# torchaudio/backend/no_backend.py load/save/info
TA_NO_BACKEND = "RuntimeError: No audio I/O backend is available."
# torchaudio/_extension.py _init_ffmpeg (0.12-0.14)
TA_FFMPEG = "ImportError: FFmpeg libraries are not found. Please install FFmpeg."
# cudnnGetErrorString through aten/src/ATen/cudnn/Exceptions.h and cudnn-frontend
CUDNN_VERSION = "RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH"
CUDNN_SUBLIB = "RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
CUDNN_SUBLIB_FE = "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failed: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
# jaywalnut310/vits train.py main() and its VITS-derived copies
VITS_CPU = 'AssertionError: CPU training is not allowed.'

FAMILIES = {
    "torchaudio-backend-missing": [TA_SET_BACKEND, TA_SET_BACKEND_EMPTY, TA_NO_BACKEND, TA_FFMPEG],
    "cuda-library-shadowed": [CUDNN_VERSION, CUDNN_SUBLIB, CUDNN_SUBLIB_FE],
    "torch-cuda-unavailable": [VITS_CPU],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_each_message_is_read_by_its_new_signature():
    for msg in (TA_SET_BACKEND, TA_SET_BACKEND_EMPTY, TA_NO_BACKEND, TA_FFMPEG):
        assert "torchaudio-0x-backend-unavailable" in _ids(msg), msg
    for msg in (CUDNN_VERSION, CUDNN_SUBLIB, CUDNN_SUBLIB_FE):
        assert "cudnn-sublibrary-version-mismatch" in _ids(msg), msg
    assert "vits-cpu-training-not-allowed" in _ids(VITS_CPU)


def test_set_audio_backend_in_a_repl_paste():
    # pytorch/audio#837: the reporter's REPL session after a conda install
    text = (
        ">>> import torchaudio\n"
        '>>> torchaudio.set_audio_backend("soundfile")\n'
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        '  File "/home/u/anaconda3/envs/pytorch/lib/python3.8/site-packages/torchaudio/backend/utils.py",'
        " line 40, in set_audio_backend\n"
        "    raise RuntimeError(\n" + TA_SET_BACKEND + "\n"
        ">>> torchaudio.__version__\n'0.6.0a0+f17ae39'\n"
    )
    assert _codes(text)[:1] == ["torchaudio-backend-missing"]


def test_no_backend_quoted_with_its_raise_line():
    # C0untFloyd/bark-gui#6: the traceback's last frame quoted, the raise line and the error
    text = (
        'When cloning voice, this error raising^\n'
        '"  File "X:\\LC\\bark-gui\\venv\\lib\\site-packages\\torchaudio\\backend\\no_backend.py", line 16, in load\n'
        'raise RuntimeError("No audio I/O backend is available.")\n'
        'RuntimeError: No audio I/O backend is available.  "\n'
        "How to fix it?\n"
    )
    assert _codes(text)[:1] == ["torchaudio-backend-missing"]


def test_streamreader_import_names_the_ffmpeg_backend():
    # pytorch/audio#2925: torchaudio.io's StreamReader on a nightly without FFmpeg
    text = (
        '  File "/home/ai/run_cuvid.py", line 12, in <module>\n'
        "    from torchaudio.io import StreamReader, StreamWriter\n"
        '  File "/home/ai/envs/hsm/lib/python3.9/site-packages/torchaudio/_extension.py", line 73, in _init_ffmpeg\n'
        '    raise ImportError("FFmpeg libraries are not found. Please install FFmpeg.") from err\n'
        + TA_FFMPEG + "\n"
    )
    assert _codes(text)[:1] == ["torchaudio-backend-missing"]


def test_cudnn_version_mismatch_in_a_colab_traceback_names_the_second_copy():
    # MahmoudAshraf97/whisper-diarization#120: NeMo's MSDD model moved to the GPU
    text = (
        "----> 2 msdd_model = NeuralDiarizer(cfg=create_config(temp_path)).to(\"cuda\")\n"
        "12 frames\n"
        "--> 206                     torch._cudnn_rnn_flatten_weight(\n"
        "    207                         self._flat_weights, num_weights,\n\n"
        + CUDNN_VERSION + "\n"
    )
    codes = _codes(text)
    assert codes[:1] == ["cuda-library-shadowed"], codes


def test_cudnn_mismatch_fix_names_the_duplicate_wheel():
    from stackpeel.knowledge import load as load_kb
    entry = load_kb().codes["cuda-library-shadowed"]
    assert "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH" in entry.meaning
    assert "nvidia-cudnn" in entry.meaning


def test_vits_assertion_in_its_traceback_ranks_the_symptom():
    # effusiveperiscope/so-vits-svc#22
    text = (
        "CUDA 12.1 installed\n"
        '  File "train.py", line 47, in main\n'
        '    assert torch.cuda.is_available(), "CPU training is not allowed."\n'
        + VITS_CPU + "\n"
    )
    assert _codes(text)[:1] == ["torch-cuda-unavailable"]


# near-misses: lines about the same libraries that state no failure; none of the new signatures
# (nor any other signature of their codes) reads them
NEAR_MISSES = [
    "UserWarning: set_audio_backend is a no-op when the I/O backend dispatcher is enabled.",
    "torchaudio.list_audio_backends() -> ['ffmpeg', 'soundfile']",
    'Backend "soundfile" is one of the available backends: [\'sox_io\', \'soundfile\']',
    "FFmpeg libraries are found in /usr/lib/x86_64-linux-gnu (libavutil.so.58)",
    "cuDNN version: 90100 (CUDNN_STATUS_SUCCESS)",
    "CPU training is allowed with --device cpu (slow)",
    "# assert torch.cuda.is_available(), CPU training would be slow but works",
]
NEW_IDS = {"torchaudio-0x-backend-unavailable", "cudnn-sublibrary-version-mismatch", "vits-cpu-training-not-allowed"}


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_matches_no_new_signature(line):
    kb = load()
    hits = kb.match_line(line)
    assert not NEW_IDS & {e.id for e in hits}, [e.id for e in hits]
    assert not {"torchaudio-backend-missing", "cuda-library-shadowed"} & {c for e in hits for c in e.codes_for(line)}


# the near-misses explain as a whole leaves quiet (two others keep older readings: a word guess on
# 'cuDNN', a resemblance of a torchaudio UserWarning to a corpus log; neither comes from these rules)
test_near_misses_stay_quiet = healthy_test([m for m in NEAR_MISSES if not m.startswith(("UserWarning", "cuDNN version"))])


@pytest.mark.parametrize("line", [
    # another cuDNN failure keeps its own (generic) reading
    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
    # torchaudio built without FFmpeg is not a missing library
    "RuntimeError: torchaudio is not compiled with FFmpeg integration. Please set USE_FFMPEG=1 when compiling torchaudio.",
])
def test_other_failures_keep_their_reading(line):
    ids = _ids(line)
    assert "cudnn-sublibrary-version-mismatch" not in ids and "torchaudio-0x-backend-unavailable" not in ids, ids
