"""harv29c: the first harvest from forums, Q&A sites and blogs (not GitHub), scored blind
(docs/dev/harv29c.md).

Ten training-side pages (a blog post, NVIDIA's developer forum, a Stack Overflow mirror and
seven blog.gitcode.com write-ups of issue threads), sampled in search order. explain named four
first before any change. The miss the log itself can fix from the library's source:
- TensorFlow 1.x's own cuDNN check, which prints both compatibility versions in parentheses
  (``Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled
  with 5103 (compatibility version 5100)``): the signature only read XLA's later wording
  without them, so the Stack Overflow log was unknown (A1): ``library-version-mismatch``.
The message is TensorFlow's own text (tensorflow/stream_executor/cuda/cuda_dnn.cc, TF 1.x), run
through the wrappers pasted logs put around lines, with near-misses that must stay quiet.
"""

from __future__ import annotations

from test_explain_patterns import codes_of as _codes, family_tests

FAMILIES = {
    "library-version-mismatch": [
        # TF 1.x CudnnSupport::Init, runtime cuDNN older than the build (whosebug.com/question/2129428)
        "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with "
        "5103 (compatibility version 5100).  If using a binary install, upgrade your CuDNN library to "
        "match.  If building from sources, make sure the library loaded at runtime matches a compatible "
        "version specified during compile configuration.",
        # the same check with a runtime cuDNN newer than the build (TF 1.4 built for cuDNN 6, cuDNN 7 loaded)
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7003 "
        "(compatibility version 7000) but source was compiled with 6021 (compatibility version 6000).",
        # XLA's later wording, which the signature read before (kept as it was)
        "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs "
        "to have matching major version and equal or higher minor version.",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_stack_overflow_paste_is_named():
    # the three lines the question pasted: the device line, the check, and the conv op's CHECK
    text = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:838] Creating TensorFlow device (/gpu:0) "
            "-> (device: 0, name: Tesla K20m, pci bus id: 0000:02:00.0)\n"
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 5005 "
            "(compatibility version 5000) but source was compiled with 5103 (compatibility version 5100).  "
            "If using a binary install, upgrade your CuDNN library to match.\n"
            "F tensorflow/core/kernels/conv_ops.cc:457] Check failed: "
            "stream->parent()->GetConvolveAlgorithms(&algorithms)\n")
    assert _codes(text)[:1] == ["library-version-mismatch"]


def test_cudnn_loaded_without_a_mismatch_is_no_mismatch():
    # TF 1.x's loader reporting a cuDNN it opened, and a version print: no compiled-with line
    for text in (
        "I tensorflow/stream_executor/dso_loader.cc:135] successfully opened CUDA library libcudnn.so.5 locally\n",
        "I tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 7.6.5\n",
        "Loaded runtime CuDNN library: 5005 (compatibility version 5000)\n",
    ):
        assert "library-version-mismatch" not in _codes(text), text


def test_a_sentence_about_the_versions_is_no_signature():
    # a user's prose about the two versions, without TensorFlow's line
    text = "My runtime cuDNN is 5.0 but I think tensorflow was compiled with 5.1, what should I do?\n"
    assert _codes(text)[:1] != ["library-version-mismatch"]
