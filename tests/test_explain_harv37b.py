"""harv37b: an unbiased harvest of ABI and binary compatibility after an upgrade (extensions built for
another torch, NumPy 2 under NumPy 1 builds, protobuf gencode/runtime clashes, wheels for another
Python, glibc), scored blind, and the general fixes its misses asked for (docs/dev/harv37b.md).

Twenty-four new training-side logs; explain named fifteen first before any change. The fixed misses:
- protobuf's own version checks, both unknown before: the Python/Java runtime's ``Detected
  mismatched Protobuf Gencode/Runtime major versions when loading a2a.proto`` / ``Detected
  incompatible Protobuf Gencode/Runtime versions ... Runtime version cannot be older than the linked
  gencode version`` (runtime_version.py; a2aproject/a2a-python#192, rules_proto_grpc#404) and the C++
  library's ``This program requires version 3.6.1 of the Protocol Buffer runtime library, but the
  installed version is 3.6.0`` (stubs/common.cc VerifyVersion; google/sentencepiece#294); now
  ``dependency-version-mismatch``;
- torch's stable C ABI names undefined in an abi3 extension (``libtorchaudio.abi3.so: undefined
  symbol: torch_dtype_float4_e2m1fn_x2``, ``aoti_torch_abi_version``; shim.h), read before only by
  a guess from words; now ``extension-torch-mismatch``;
- NumPy 2's message pasted from its second half (``downgrade to 'numpy<2' or try to upgrade the
  affected module``), which explain had read as a GPU problem; now ``numpy-abi-mismatch``;
- pip's ``X.whl is not a supported wheel on this platform`` for a wheel outside the GPU packages the
  old signature names (tensorflow-1.3.0-cp27-cp27m...); now ``package-no-matching-wheel`` (weight 2);
- CPython 2's unicode-width ABI (``undefined symbol: PyUnicodeUCS4_DecodeUTF8``, gevent#549); now
  ``extension-python-version-mismatch``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# protocolbuffers/protobuf python/google/protobuf/runtime_version.py ValidateProtobufRuntimeVersion
PB_MAJOR = ("google.protobuf.runtime_version.VersionError: Detected mismatched Protobuf Gencode/Runtime major "
            "versions when loading a2a.proto: gencode 6.31.1 runtime 5.29.5. Same major version is required. "
            "See Protobuf version guarantees at https://protobuf.dev/support/cross-version-runtime-guarantee.")
PB_OLDER = ("google.protobuf.runtime_version.VersionError: Detected incompatible Protobuf Gencode/Runtime "
            "versions when loading protos/brand_inference.proto: gencode 5.29.2 runtime 5.27.2. Runtime "
            "version cannot be older than the linked gencode version.")
# the Java runtime's RuntimeVersion (the same words)
PB_JAVA = ("com.google.protobuf.RuntimeVersion$ProtobufRuntimeVersionException: Detected mismatched Protobuf "
           "Gencode/Runtime version suffixes when loading Thing: gencode 4.26.0, runtime 4.26.0-rc3. "
           "Version suffixes must be the same.")
# src/google/protobuf/stubs/common.cc internal::VerifyVersion (both directions)
LIBPB_OLD = ("[libprotobuf FATAL external/protobuf_archive/src/google/protobuf/stubs/common.cc:68] This program "
             "requires version 3.6.1 of the Protocol Buffer runtime library, but the installed version is 3.6.0."
             "  Please update your library.")
LIBPB_NEW = ("[libprotobuf FATAL google/protobuf/stubs/common.cc:87] This program was compiled against version "
             "3.9.2 of the Protocol Buffer runtime library, which is not compatible with the installed version "
             "(3.17.3).  Contact the program author for an update.")
# torch's stable C shim (torch/csrc/stable/c/shim.h, torch/csrc/inductor/aoti_torch/c/shim.h)
STABLE_DTYPE = ("OSError: /home/u/miniconda3/envs/wan2gp/lib/python3.11/site-packages/torchaudio/lib/"
                "libtorchaudio.abi3.so: undefined symbol: torch_dtype_float4_e2m1fn_x2")
STABLE_AOTI = ("OSError: /usr/local/lib/python3.10/dist-packages/torchaudio/lib/libtorchaudio.so: "
               "undefined symbol: aoti_torch_abi_version")
STABLE_MAC = ("OSError: dlopen(/opt/venv/lib/python3.12/site-packages/torchaudio/lib/_torchaudio.abi3.so, 0x0006): "
              "Symbol not found: _aoti_torch_abi_version")
# numpy/core/_multiarray_umath.py __getattr__ (its later lines)
NUMPY_TAIL = "downgrade to 'numpy<2' or try to upgrade the affected module."
NUMPY_EXPECT = "We expect that some modules will need time to support NumPy 2."
# pypa/pip req/constructors.py
PIP_WHEEL = ("ERROR: tensorflow-1.3.0-cp27-cp27m-manylinux1_x86_64.whl is not a supported wheel on this "
             "platform.")
PIP_WHEEL_GENN = "ERROR: pygenn-4.7.1-cp37-cp37m-linux_x86_64.whl is not a supported wheel on this platform."
# CPython 2.7 Include/unicodeobject.h (UCS2/UCS4 renames)
UCS4 = ("ImportError: /usr/local/lib/python2.7/dist-packages/gevent/_semaphore.so: undefined symbol: "
        "PyUnicodeUCS4_DecodeUTF8")
UCS2 = "ImportError: /tmp/venv/lib/python2.7/site-packages/netifaces.so: undefined symbol: PyUnicodeUCS2_FromString"

FAMILIES = {
    "dependency-version-mismatch": [PB_MAJOR, PB_OLDER, PB_JAVA, LIBPB_OLD, LIBPB_NEW],
    "extension-torch-mismatch": [STABLE_DTYPE, STABLE_AOTI, STABLE_MAC],
    "numpy-abi-mismatch": [NUMPY_TAIL, NUMPY_EXPECT],
    "package-no-matching-wheel": [PIP_WHEEL, PIP_WHEEL_GENN],
    "extension-python-version-mismatch": [UCS4, UCS2],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_a2a_paste_names_the_protobuf_pair():
    # a2aproject/a2a-python#192 (the reporter's paste)
    text = (
        '  File "/Users/x/a2a-samples/.venv/lib/python3.13/site-packages/google/protobuf/runtime_version.py", '
        "line 50, in _ReportVersionError\n"
        "    raise VersionError(msg)\n" + PB_MAJOR + "\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_libprotobuf_fatal_with_its_terminate_line():
    # google/sentencepiece#294: the FATAL line, its continuation and the C++ terminate line
    text = (
        LIBPB_OLD + "  If you compiled the program yourself, make sure that your headers are from the same "
        "version of Protocol Buffers as your link-time library.  \n"
        '(Version verification failed in "/repo/sentencepiece/src/builtin_pb/sentencepiece_model.pb.cc".)\n'
        "terminate called after throwing an instance of 'google::protobuf::FatalException'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_protobuf_near_misses_keep_their_reading():
    # protobuf's warning for an older gencode (the run goes on), a healthy version print, prose
    for line in ("UserWarning: Protobuf gencode version 5.27.2 is older than the runtime version 5.28.1 at "
                 "nanopb.proto. Please avoid checked-in Protobuf gencode that can be obsolete.",
                 "libprotoc 3.6.1",
                 "This program requires version 3 of Python."):
        assert not {"protobuf-gencode-runtime-version-check", "libprotobuf-verify-version-failed"} & set(
            _ids(line))


def test_torchaudio_traceback_names_the_torch_pair():
    # deepbeepmeep/Wan2GP#1479: the traceback ends in torchaudio's import, the OSError under it
    text = (
        "Traceback (most recent call last):\n"
        '  File "/workspace/models/ltx2/ltx2.py", line 8, in <module>\n'
        "    import torchaudio\n"
        '  File "/usr/local/lib/python3.10/dist-packages/torchaudio/__init__.py", line 7, in <module>\n'
        + STABLE_AOTI + "\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


def test_stable_symbol_near_misses_keep_their_reading():
    # an extension's own C name that merely starts with 'torch', another library's symbol, and a
    # healthy 'aoti_torch' mention
    assert "extension-undefined-torch-stable-c-symbol" not in _ids(
        "ImportError: /x/site-packages/torch_scatter/_version_cuda.so: undefined symbol: torchscatter_init")
    assert "extension-undefined-torch-stable-c-symbol" not in _ids(
        "OSError: /x/libfoo.so: undefined symbol: cudaGetDriverEntryPoint")
    assert "extension-undefined-torch-stable-c-symbol" not in _ids(
        "INFO: aoti_torch_abi_version() returned 2")


def test_numpy_message_pasted_from_its_middle():
    # CameronBodine/PINGMapper#123: the paste starts at the message's second half, a TensorFlow traceback
    text = (
        NUMPY_TAIL + "\n" + NUMPY_EXPECT + "\n\n"
        'Traceback (most recent call last):  File "C:\\Users\\u\\PINGMapper\\gui_main.py", line 9, in <module>\n'
        '  File "C:\\Users\\u\\miniconda3\\envs\\ping\\Lib\\site-packages\\tensorflow\\__init__.py", line 45, '
        "in <module>\n"
        "    from tensorflow._api.v2 import __internal__\n"
    )
    assert _codes(text)[:1] == ["numpy-abi-mismatch"]


def test_numpy_near_misses_stay_quiet():
    # advice in prose that is not NumPy's message
    for line in ("You may want to downgrade numpy to 1.26 to fix this.",
                 "We expect that some users will need time to upgrade."):
        assert "numpy-c-api-mismatch" not in _ids(line)


def test_pip_wheel_near_misses_keep_their_reading():
    # pip's healthy lines about wheel files
    for line in ("Processing ./tensorflow-1.3.0-cp27-cp27mu-manylinux1_x86_64.whl",
                 "Successfully built pygenn-4.7.1-cp38-cp38-linux_x86_64.whl",
                 "Created wheel for foo: filename=foo-1.0-py3-none-any.whl"):
        assert "pip-wheel-not-supported-here" not in _ids(line)


def test_ucs_near_misses_keep_their_reading():
    # a Python 3 C-API name and a healthy configure line
    assert "python2-unicode-width-abi-symbol" not in _ids(
        "ImportError: /x/str_util.cpython-312-x86_64-linux-gnu.so: undefined symbol: PyUnicode_AS_UNICODE")
    assert "python2-unicode-width-abi-symbol" not in _ids("checking for UCS-4 tcl... no (PyUnicodeUCS4 ok)")
