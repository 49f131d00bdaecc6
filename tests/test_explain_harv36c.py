"""harv36c: an unbiased harvest of data pipelines and model loading on GPU hosts (DataLoader workers,
DALI/decord/NVDEC video decoding, torch.load and checkpoints, safetensors, Hugging Face downloads
and caches), scored blind, and the general fixes its misses ask for (docs/dev/harv36c.md).

Twenty new training-side logs; explain named eleven first before any change. The fixed misses:
- huggingface_hub's snapshot_download message ``An error happened while trying to locate the files
  on the Hub, and we cannot find the appropriate snapshot folder for the specified revision on the
  local disk`` (harry0703/MoneyPrinterTurbo#156, unknown before); now ``huggingface-hub-unreachable``,
  with its local_files_only twin (``Cannot find an appropriate cached snapshot folder ... on the local
  disk and outgoing traffic has been disabled``);
- torch.save's ``unexpected pos N vs M`` without its ``inline_container.cc:N]`` prefix (pasted as
  ``inline_container.cc_595]``, JarodMica/StyleTTS-WebUI#18); now ``disk-full`` as before for the
  prefixed form;
- PermissionError on the Hugging Face cache root itself, HF_HOME set to a directory named
  ``huggingface`` that the container user may not write (tenstorrent/tt-inference-server#4574,
  first a wrong guess before); now ``huggingface-cache-unwritable``;
- torchvision's own ``video_reader video backend is not available`` / ``Not compiled with
  video_reader support`` (pytorch/vision#3283): a new code, ``torchvision-video-backend-not-built``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# huggingface_hub _snapshot_download.py snapshot_download (current wording, and the older one
# without the comma that harry0703/MoneyPrinterTurbo#156 pasted)
HF_SNAPSHOT = ("huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the files "
               "on the Hub, and we cannot find the appropriate snapshot folder for the specified revision on the "
               "local disk. Please check your internet connection and try again.")
HF_SNAPSHOT_OLD = ("huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate "
                   "the files on the Hub and we cannot find the appropriate snapshot folder for the specified "
                   "revision on the local disk. Please check your internet connection and try again.")
# the same function with local_files_only=True
HF_SNAPSHOT_OFFLINE = ("huggingface_hub.errors.LocalEntryNotFoundError: Cannot find an appropriate cached snapshot "
                       "folder for the specified revision on the local disk and outgoing traffic has been disabled. "
                       "To enable repo look-ups and downloads online, pass 'local_files_only=False' as input.")
# torch caffe2/serialize/inline_container.cc (the prefixed form, and the form without it)
UNEXPECTED_POS = ("RuntimeError: [enforce fail at inline_container.cc:337] . unexpected pos 256653056 vs "
                  "256652948")
UNEXPECTED_POS_BARE = "RuntimeError: unexpected pos 190007680 vs 190007572"
# huggingface_hub writing under HF_HOME when HF_HOME itself may not be written
HF_HOME_DENIED = "PermissionError: [Errno 13] Permission denied: '/home/container_app_user/cache_root/huggingface'"
HF_HOME_HUB_DENIED = "PermissionError: [Errno 13] Permission denied: '/data/shared/huggingface/hub'"
# torchvision/__init__.py set_video_backend and torchvision/io/video_reader.py
TV_VIDEO_READER = ("RuntimeError: video_reader video backend is not available. Please compile torchvision from "
                   "source and try again")
TV_VIDEO_READER_WARN = ("/opt/conda/lib/python3.7/site-packages/torchvision/__init__.py:64: UserWarning: "
                        "video_reader video backend is not available")
TV_CUDA = "RuntimeError: cuda video backend is not available."
TV_NOT_COMPILED = ("RuntimeError: Not compiled with video_reader support, to enable video_reader support, please "
                   "install ffmpeg (version 4.2 is currently supported) and build torchvision from source.")

FAMILIES = {
    "huggingface-hub-unreachable": [HF_SNAPSHOT, HF_SNAPSHOT_OLD, HF_SNAPSHOT_OFFLINE],
    "disk-full": [UNEXPECTED_POS, UNEXPECTED_POS_BARE],
    "huggingface-cache-unwritable": [HF_HOME_DENIED, HF_HOME_HUB_DENIED],
    "torchvision-video-backend-not-built": [TV_VIDEO_READER, TV_VIDEO_READER_WARN, TV_CUDA, TV_NOT_COMPILED],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_snapshot_download_wrapped_over_lines():
    # the message as a README or a long console wraps it: "appropriate" / "snapshot folder" split
    text = (
        "An error occurred while synchronizing the model Systran/faster-whisper-large-v3 from the Hugging Face Hub:\n"
        "An error happened while trying to locate the files on the Hub and we cannot find the appropriate\n"
        "snapshot folder for the specified revision on the local disk. Please check your internet connection "
        "and try again.\n"
    )
    assert _codes(text)[:1] == ["huggingface-hub-unreachable"]


def test_snapshot_download_after_a_connect_timeout():
    # the 'Got: <error>' line snapshot_download puts first
    text = (
        "Got: ConnectTimeout: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
        "exceeded with url: /api/models/ds4sd/docling-models/revision/v2.1.0\"))\n"
        "An error happened while trying to locate the files on the Hub, and we cannot find the appropriate "
        "snapshot folder for the specified revision on the local disk. Please check your internet connection "
        "and try again.\n"
    )
    assert _codes(text)[:1] == ["huggingface-hub-unreachable"]


def test_snapshot_near_misses_stay_quiet():
    for line in (
        "Fetching 11 files: 100%|##########| 11/11 [00:00<00:00, 12.19it/s]",
        "Returning existing local_dir `/models/qwen` as remote repo cannot be accessed in `snapshot_download`",
        "Looking for the appropriate snapshot folder in /root/.cache/huggingface/hub",
    ):
        assert "hf-local-entry-no-connection" not in _ids(line)
        assert "hf-offline-mode-cache-miss" not in _ids(line)


def test_styletts_epoch_save_names_the_full_disk():
    # JarodMica/StyleTTS-WebUI#18: the paste turned the colon of inline_container.cc:595 into '_'
    text = (
        "Error at the end of the first epoch:\n\n"
        "enforce fail at inline_container.cc_595] . unexpected pos 1457862912 vs 1457862800\n\n"
        "Dedicated GPU only reached 10.7 / 12 GB.\n"
    )
    assert _codes(text)[:1] == ["disk-full"]


def test_unexpected_pos_near_misses_stay_quiet():
    for line in (
        "ValueError: unexpected position 12 in stream",
        "parser: unexpected pos token at line 3",
        "warning: unexpected pos 12",
    ):
        assert "torch-save-write-failed" not in _ids(line)


def test_tt_server_hf_home_permission_names_the_cache():
    # tenstorrent/tt-inference-server#4574
    text = (
        "Failed to download model weights for tiiuae/Falcon3-7B-Instruct:\n"
        "  [Errno 13] Permission denied: '/home/container_app_user/cache_root/huggingface'\n"
        "Worker 0 device init failed: PermissionError ... Check cache directory permissions.\n"
        "[ERROR] llm_module.server_control: Inference server did not become healthy within 3600s\n"
    )
    assert _codes(text)[:1] == ["huggingface-cache-unwritable"]


def test_hf_home_near_misses_keep_their_reading():
    for line in (
        "PermissionError: [Errno 13] Permission denied: '/usr/lib/python3/dist-packages/huggingface_hub'",
        "PermissionError: [Errno 13] Permission denied: '/srv/models/huggingface_models'",
        "PermissionError: [Errno 13] Permission denied: '/workspace/huggingface.py'",
        "cp: cannot create directory '/data/huggingface': Permission denied",
    ):
        assert "hf-cache-permission-denied" not in _ids(line)


def test_torchvision_issue_text_names_the_unbuilt_backend():
    # pytorch/vision#3283, the reporter's sentence with the message in backticks
    text = (
        "I simply installed torchvision from conda (as advertised on pytorch.org). But "
        "`torchvision.set_video_backend('video_reader')` prints `video_reader video backend is not available. "
        "Please compile torchvision from source and try again`.\n"
    )
    assert _codes(text)[:1] == ["torchvision-video-backend-not-built"]


def test_video_backend_near_misses_stay_quiet():
    for line in (
        "Requested video backend is not available: FalVideoBackend",
        "Local video backend is not available at http://127.0.0.1:8000.",
        "Video backend is not available yet.",
        "torchvision.set_video_backend('pyav')",
        "Using video_reader backend for decoding",
    ):
        assert "torchvision-video-backend-unavailable" not in _ids(line)
