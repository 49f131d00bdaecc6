"""harv45e: an unbiased harvest of annotation and labeling tools with model-assisted labeling on GPUs
(AnyLabeling, label-studio-ml-backend, ISAT, SAM front-ends, supervision, and the onnxruntime-gpu, torch
and CUDA stacks inside them), scored blind, and the general fixes its misses ask for
(docs/dev/harv45e.md).

Ten new training-side logs; explain named eight first before any change. The two misses, both a
library's own message with no signature (A1):
- urllib's ``retrieval incomplete: got only N out of M bytes`` (urlretrieve's ContentTooShortError): a
  download that stopped early left a partial model file (vietanhdev/anylabeling#113, a SAM encoder
  .onnx); now ``model-file-corrupt``;
- ISAT's ``The checkpoint of [Segment anything] not existed``: the SAM checkpoint it was asked to load is
  not in its checkpoints folder (yatengLG/ISAT_with_segment_anything#3); now ``model-file-unopenable``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from explain_helpers import codes, first, silent
from test_explain_patterns import family_tests, healthy_test, ids as _ids

# python/cpython Lib/urllib/request.py urlretrieve (ContentTooShortError), as AnyLabeling prints it
URLRETRIEVE_SHORT = ("Could not download https://github.com/vietanhdev/anylabeling-assets/releases/download/v0.2.0/"
                     "segment_anything_vit_b_encoder_quant.onnx: <urlopen error retrieval incomplete: got only "
                     "98777600 out of 99827815 bytes>")
# the exception itself, as a traceback's last line shows it
URLRETRIEVE_SHORT_RAISED = ("urllib.error.ContentTooShortError: <urlopen error retrieval incomplete: got only "
                            "1048576 out of 2564936736 bytes>")
# yatengLG/ISAT_with_segment_anything ISAT/widgets/mainwindow.py (QMessageBox.warning text)
ISAT_NO_CHECKPOINT = ("The checkpoint of [Segment anything] not existed. If you want use quick annotate, please "
                      "download from https://github.com/facebookresearch/segment-anything#model-checkpoints")

FAMILIES = {
    "model-file-corrupt": [URLRETRIEVE_SHORT, URLRETRIEVE_SHORT_RAISED],
    "model-file-unopenable": [ISAT_NO_CHECKPOINT],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)



def test_anylabeling_paste_names_the_cut_download():
    # vietanhdev/anylabeling#113's paste: onnx cannot open the partial file, the re-download stops early
    text = (
        "WARNING:root:The model is invalid: Unable to open proto file: C:\\Users\\admin\\anylabeling_data\\models\\"
        "segment_anything_vit_b_quant-r20230416\\segment_anything_vit_b_encoder_quant.onnx. Please check if it "
        "is a valid proto.\n"
        "WARNING:root:Action: Delete and redownload...\n"
        + URLRETRIEVE_SHORT + "\n"
        "Error in loading model: Could not download or initialize encoder of Segment Anything.\n"
    )
    assert first(text) == "model-file-corrupt"


def test_isat_paste_wrapped_across_lines_names_the_missing_checkpoint():
    # yatengLG/ISAT_with_segment_anything#3's paste: the dialog text copied with a line break
    text = ("The checkpoint of [Segment anything] not existed.If you want use quick\n"
            "annotate,please download from https:// github.com/facebookresearch/segment- anything#model-checkpoints\n")
    assert not silent(text)
    assert codes(text)[:1] == ["model-file-unopenable"]


def test_near_misses_stay_quiet():
    for line, sig in (
        # a complete download, and urllib's other errors, are not a cut-short file
        ("Downloading: 100%|##########| 2564936736/2564936736 [01:02<00:00, 41.2MB/s]",
         "urlretrieve-download-cut-short"),
        ("urllib.error.URLError: <urlopen error [Errno 111] Connection refused>", "urlretrieve-download-cut-short"),
        ("got only 3 out of 4 GPUs", "urlretrieve-download-cut-short"),
        # ISAT's success line and its other dialogs
        ("Find the checkpoint named sam_vit_b_01ec64.pth.", "isat-sam-checkpoint-not-downloaded"),
        ("* Init SAM... *", "isat-sam-checkpoint-not-downloaded"),
        ("The checkpoint of [Segment anything] loaded.", "isat-sam-checkpoint-not-downloaded"),
    ):
        assert sig not in _ids(line), line


test_healthy_lines_name_nothing = healthy_test([
    "Downloading https://github.com/vietanhdev/anylabeling-assets/releases/download/v0.2.0/"
    "segment_anything_vit_b_encoder_quant.onnx to segment_anything_vit_b_encoder_quant.onnx",
    "Find the checkpoint named sam_vit_b_01ec64.pth.",
    "  - loading : C:\\ISAT_with_segment_anything-1.4.6\\ISAT\\checkpoints\\sam2.1_hiera_base_plus.pt",
    "* Init SAM finished *",
])
