"""harv45g: an unbiased harvest of music and general audio generation on GPUs (audiocraft's MusicGen
and AudioGen, demucs, bark, AudioLDM/AudioLDM2, stable-audio-tools, the audio web UIs around them),
scored blind, and the general fixes its misses ask for (docs/dev/harv45g.md).

Fourteen new training-side logs; explain named twelve first before any change (one of them only by
resemblance). The fixed misses:
- demucs's own ``When trying to load using ffmpeg, got the following error: FFmpeg is not installed.``
  (separate.py load_track, printed for the FileNotFoundError of the missing ffmpeg program) was read
  only as the reporter's words, so torchaudio's ``Couldn't find appropriate backend to handle uri``
  on the next line came first (A2, facebookresearch/demucs#558); now a signature of
  ``ffmpeg-not-found``;
- CPython's ``cannot import name 'X' from 'pkg' (unknown location)``: the module is a namespace
  package, a folder without __init__.py found before the installed package (an audiocraft folder
  inside the app's folder); read by the catch-all as a version mismatch (A2,
  facebookresearch/audiocraft#75); now ``module-shadowed``.
Each message is the library's or CPython's own text (from its source) or a training-side thread's
paste, run through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from test_explain_patterns import codes_of as _codes, family_tests, healthy_test, ids as _ids

# facebookresearch/demucs demucs/separate.py load_track (3.x and 4.x wording, and 2.x's 'Ffmpeg')
DEMUCS_FFMPEG = "When trying to load using ffmpeg, got the following error: FFmpeg is not installed."
DEMUCS_FFMPEG_OLD = "When trying to load using ffmpeg, got the following error: Ffmpeg is not installed."
# CPython Python/ceval.c import_from for a module without __file__ (facebookresearch/audiocraft#75, suno-ai/bark#195)
UNKNOWN_LOCATION = "ImportError: cannot import name 'MusicGen' from 'audiocraft.models' (unknown location)"
UNKNOWN_LOCATION_TOP = "ImportError: cannot import name 'SAMPLE_RATE' from 'bark' (unknown location)"

FAMILIES = {
    "ffmpeg-not-found": [DEMUCS_FFMPEG, DEMUCS_FFMPEG_OLD],
    "module-shadowed": [UNKNOWN_LOCATION, UNKNOWN_LOCATION_TOP],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)



def test_demucs_paste_names_ffmpeg_before_the_torchaudio_backend():
    # facebookresearch/demucs#558's shape: the torchaudio line that follows fails for the same reason
    text = (
        "Separating track song.mp3\n"
        "Could not load file song.mp3. Maybe it is not a supported file format? \n"
        + DEMUCS_FFMPEG + "\n"
        "When trying to load using torchaudio, got the following error: Couldn't find appropriate backend "
        "to handle uri song.mp3 and format None.\n"
    )
    assert _codes(text)[:1] == ["ffmpeg-not-found"]
    assert "demucs-load-track-ffmpeg-not-installed" in _ids(DEMUCS_FFMPEG)


def test_torchaudio_backend_alone_keeps_its_reading():
    # without demucs's ffmpeg line the torchaudio message keeps its own code
    text = ("RuntimeError: Couldn't find appropriate backend to handle uri song.mp3 and format None.\n")
    assert _codes(text)[:1] == ["torchaudio-backend-missing"]


def test_demucs_ffmpeg_read_failure_is_not_a_missing_program():
    # the other branch of load_track: ffmpeg ran but could not read the file (CalledProcessError)
    line = "When trying to load using ffmpeg, got the following error: FFmpeg could not read the file."
    assert "demucs-load-track-ffmpeg-not-installed" not in _ids(line)


def test_audiocraft_traceback_names_the_stray_folder():
    # facebookresearch/audiocraft#75's paste
    text = (
        "C:\\ai\\AudioCraft>python app.py\n"
        "Traceback (most recent call last):\n"
        'File "C:\\ai\\AudioCraft\\app.py", line 14, in\n'
        "from audiocraft.models import MusicGen\n"
        + UNKNOWN_LOCATION + "\n"
    )
    assert _codes(text)[:1] == ["module-shadowed"]


def test_unknown_location_gives_way_to_the_point_cloud_op_rule():
    # an uncompiled CUDA op of OpenPCDet keeps kernel-extension-not-built (djiajunustc/Voxel-R-CNN#10)
    line = "ImportError: cannot import name 'iou3d_nms_cuda' from 'pcdet.ops.iou3d_nms' (unknown location)"
    assert _codes(line + "\n")[:1] == ["kernel-extension-not-built"]


def test_near_misses_keep_their_reading():
    # a file-backed module: the catch-all version reading stays; a real namespace package of a
    # distribution (google, nvidia) is a package not installed, not a stray folder
    for line in (
        "ImportError: cannot import name 'MusicGen' from 'audiocraft.models' "
        "(/usr/lib/python3.10/site-packages/audiocraft/models/__init__.py)",
        "ImportError: cannot import name 'genai' from 'google' (unknown location)",
        "ImportError: cannot import name 'cudnn' from 'nvidia' (unknown location)",
    ):
        assert "import-from-namespace-package-unknown-location" not in _ids(line), line


test_healthy_lines_name_nothing = healthy_test([
    "Selected model is a bag of 1 models. You will see that many progress bars per track.",
    "Separated tracks will be stored in /home/user/separated/htdemucs",
    "Loading model facebook/musicgen-small",
    "from audiocraft.models import MusicGen",
])
