"""apps21: torch's own readers on a model checkpoint cut short or damaged (docs/dev/apps21.md).

The applications that load a torch checkpoint (ComfyUI and its custom nodes, the A1111 family,
research repositories' demo scripts) pass torch's words through: the zip reader's miniz error
``PytorchStreamReader failed reading file data/N: invalid header or archive is corrupted`` and
the legacy reader's ``unexpected EOF, expected N more bytes. The file might be corrupted.``.
Both are ``model-file-corrupt``: the bytes on disk are not the whole checkpoint. Each message is
torch's own text (caffe2/serialize/inline_container.cc PyTorchStreamReader::valid,
torch/csrc/serialization.cpp doRead) as a training-side thread pasted it; every message runs
through the wrappers pasted logs put around lines, and near-misses must stay unread.
"""

from __future__ import annotations

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "model-file-corrupt": [
        # torch/csrc/serialization.cpp doRead, as yichen928/STRL#2 and YuvalNirkin/fsgan#18 pasted it
        "RuntimeError: unexpected EOF, expected 9781136 more bytes. The file might be corrupted.",
        "RuntimeError: unexpected EOF, expected 1880922 more bytes. The file might be corrupted.",
        # the same, through ComfyUI's executor (the prefix its log puts before a node's exception)
        "!!! Exception during processing !!! unexpected EOF, expected 8925839 more bytes. The file might be corrupted.",
        # torch before 1.0 printed no byte count
        "RuntimeError: unexpected EOF. The file might be corrupted.",
        # inline_container.cc PyTorchStreamReader::valid with miniz's MZ_ZIP_INVALID_HEADER_OR_CORRUPTED
        # (Tencent-Hunyuan/HunyuanVideo#73, xinyu1205/recognize-anything#105)
        "RuntimeError: PytorchStreamReader failed reading file data/3: invalid header or archive is corrupted",
        "RuntimeError: PytorchStreamReader failed reading file data/8: invalid header or archive is corrupted",
        # the same error on the archive as a whole (miniz on open)
        "RuntimeError: PytorchStreamReader failed reading zip archive: invalid header or archive is corrupted",
        # torch after pytorch#170244 appends a sentence; the message's head is unchanged
        "RuntimeError: PytorchStreamReader failed reading file .format_version: invalid header or archive is corrupted. This is an internal miniz error. If you are seeing this error, there is a high likelihood that your checkpoint file is corrupted.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_quoted_in_prose_and_in_a_title():
    # an issue title quoting the message in backquotes (visinf/lnfmm#3's wording)
    text = "I ran into the error `RuntimeError: unexpected EOF, expected 170260432 more bytes. The file might be corrupted.` while loading the released pre-trained model weight.\n"
    assert _codes(text)[:1] == ["model-file-corrupt"]
    # SD.Next's rich traceback box, then its gradio line (vladmandic/sdnext#551)
    text = ("\u2502   1050 \u2502   \u2502   typed_storage = deserialized_objects[key]   \u2502\n"
            "RuntimeError: unexpected EOF, expected 3786101 more bytes. The file might be corrupted.\n"
            "gradio call: RuntimeError\n")
    assert _codes(text)[:1] == ["model-file-corrupt"]


def test_traceback_heads_with_the_file():
    text = (
        "Traceback (most recent call last):\n"
        '  File "test.py", line 56, in <module>\n'
        "    ckpt = torch.load(args.ckpt)\n"
        '  File "/root/miniconda3/envs/x/lib/python3.8/site-packages/torch/serialization.py", line 1112, in load_tensor\n'
        "    storage = zip_file.get_storage_from_record(name, numel, torch.UntypedStorage)._typed_storage()._untyped_storage\n"
        "RuntimeError: PytorchStreamReader failed reading file data/104: invalid header or archive is corrupted\n"
    )
    assert _codes(text)[:1] == ["model-file-corrupt"]


def test_near_misses_stay_unread():
    for line in [
        # Go's and other programs' bare EOF errors (downloaders, Docker pulls)
        "Error: unexpected EOF",
        "error pulling image configuration: unexpected EOF",
        "unexpected EOF while reading response",
        # torch's other reader errors: a record missing from a whole archive, an I/O failure
        "RuntimeError: PytorchStreamReader failed locating file data.pkl: file not found",
        "RuntimeError: PytorchStreamReader failed reading file data/0: file read failed",
        # a healthy torch.load and a different "corrupted" warning
        "Loading checkpoint shards: 100%|##########| 2/2 [00:03<00:00,  1.52s/it]",
        "WARNING: the cache index might be corrupted, rebuilding",
    ]:
        codes = set(match_codes(line))
        assert "model-file-corrupt" not in codes, (line, codes)


# apps21b: CTranslate2's CUDA_CHECK on an allocation that does not fit
OOM_FAMILIES = {
    "gpu-out-of-memory": [
        # include/ctranslate2/cuda/utils.h CUDA_CHECK, as Purfview/whisper-standalone-win#50 pasted it
        "RuntimeError: CUDA failed with error out of memory",
        # the same in whisperX#315's title and prose, and stt#65's shortened title
        "Cuda failed with error out of memory",
        "I am unexpectedly getting `cuda failed with error out of memory` after sometime of running",
        "cuda failed Out of memory",
    ],
}

test_oom_in_every_wrapper, test_oom_own_signature = family_tests(OOM_FAMILIES)


def test_ctranslate2_traceback_heads_with_oom():
    text = (
        "Standalone Faster-Whisper r141.3 running on: CUDA\n"
        "Traceback (most recent call last):\n"
        'File "faster_whisper\\transcribe.py", line 125, in init\n'
        "RuntimeError: CUDA failed with error out of memory\n"
        "[16468] Failed to execute script 'main' due to unhandled exception!\n"
    )
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_ctranslate2_near_misses_are_not_oom():
    for line in [
        # CTranslate2's other CUDA failures name other causes
        "RuntimeError: CUDA failed with error unknown error",
        "RuntimeError: CUDA failed with error invalid device ordinal",
        # host-side and non-GPU memory failures
        "the job failed with error: out of memory on the host",
        "cudaHostAlloc failed out of memory",
    ]:
        assert "gpu-out-of-memory" not in set(match_codes(line)), line


# apps21c: CTranslate2's model.bin that is not the model (no log with an established cause was
# harvested; the binary version is the file's first four bytes, 'vers' for a Git LFS pointer)
CT2_FAMILIES = {
    "model-file-corrupt": [
        # src/models/model.cc check_version on a Git LFS pointer (faster-whisper#959's title)
        "RuntimeError: Unsupported model binary version. This executable supports models with binary version v6 or below, but the model has binary version v1936876918. This usually means that the model was generated by a later version of CTranslate2. (Forward compatibility is not guaranteed.)",
        # the same on a saved web page ('<!DO')
        "RuntimeError: Unsupported model binary version. This executable supports models with binary version v6 or below, but the model has binary version v1329865020.",
        # report_stream_error on a model.bin cut short
        "RuntimeError: File model.bin is incomplete: failed to read a buffer of size 3276800 at position 1509949440",
    ],
}

test_ct2_in_every_wrapper, test_ct2_own_signature = family_tests(CT2_FAMILIES)


def test_ct2_other_binary_versions_stay_unread():
    for line in [
        # a model from a newer CTranslate2 really is newer: a small version number
        "RuntimeError: Unsupported model binary version. This executable supports models with binary version v5 or below, but the model has binary version v6.",
        # 'PK\x03\x04': a PyTorch zip checkpoint given as model.bin (not converted), a different fix
        "RuntimeError: Unsupported model binary version. This executable supports models with binary version v6 or below, but the model has binary version v67324752.",
        # the number inside another digit run
        "but the model has binary version v19368769180",
        # CTranslate2's healthy load log
        "[ctranslate2] [thread 1] [info]  - Binary version: 6",
    ]:
        assert "model-file-corrupt" not in set(match_codes(line)), line
