"""harv41b: an unbiased harvest of graph, sparse and geometric deep-learning libraries (PyG and
torch-scatter/sparse/cluster, DGL, spconv, MinkowskiEngine, FBGEMM, Open3D-ML, kaolin), scored
blind, and the general fixes its misses ask for (docs/dev/harv41b.md).

Twenty-two new training-side logs; explain named eleven first before any change. The fixes, each
from the library's own source:
- Open3D's torch-version refusal ``Version mismatch: Open3D needs PyTorch version 1.7.*, but
  version 1.8.2 is installed!`` (open3d/ml/torch/__init__.py; isl-org/Open3D-ML#430, unknown
  before); now ``extension-torch-mismatch``;
- DGL's per-torch libraries: ``Cannot find DGL C++ sparse library at .../libdgl_sparse_pytorch_1.9.0.so``
  and ``... graphbolt library at .../libgraphbolt_pytorch_2.3.0.so`` (dgl/sparse/__init__.py,
  dgl/graphbolt/__init__.py), and a user's ``There is no such file `graphbolt_pytorch_2.4.1.dll``
  (dmlc/dgl#7809, silent before); now ``extension-torch-mismatch``;
- kaolin's range check ``Kaolin requires PyTorch >=1.6.0, <=1.13.0, but found version 1.13.1``
  (setup.py; NVIDIAGameWorks/kaolin#694) was read as torch-too-old by two minimum-version
  signatures; a range with an upper bound is now ``dependency-version-mismatch``;
- PyG's companions built from PyPI's source distribution because no data.pyg.org wheel fitted
  (``Failed building wheel for torch-scatter``, pip's ``╰─> torch-scatter``; rusty1s/pytorch_scatter#283,
  pyg-team/pytorch_geometric#2971); now ``package-no-matching-wheel`` at weight 1, so a specific
  build cause (nvcc's CUDA against torch's) stays first.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# isl-org/Open3D python/open3d/ml/torch/__init__.py (current spelling and the older 'Pytorch')
OPEN3D = "Exception: Version mismatch: Open3D needs PyTorch version 1.7.*, but version 1.8.2 is installed!"
OPEN3D_OLD = "Exception: Version mismatch: Open3D needs Pytorch version 1.8.*, but version 2.0.1+cpu is installed!"
# dmlc/dgl python/dgl/sparse/__init__.py and python/dgl/graphbolt/__init__.py
DGL_SPARSE = ("FileNotFoundError: Cannot find DGL C++ sparse library at /root/miniconda3/envs/crime/lib/"
              "python3.8/site-packages/dgl/dgl_sparse/libdgl_sparse_pytorch_1.9.0.so")
DGL_GRAPHBOLT = ("FileNotFoundError: Cannot find DGL C++ graphbolt library at /home/james/src/jbm/dgl/python/"
                 "dgl/graphbolt/libgraphbolt_pytorch_2.3.0.so")
DGL_GRAPHBOLT_WIN = ("FileNotFoundError: Cannot find DGL C++ graphbolt library at C:\\Users\\me\\venv\\Lib\\"
                     "site-packages\\dgl\\graphbolt\\graphbolt_pytorch_2.4.1.dll")
# NVIDIAGameWorks/kaolin setup.py (an older and the current wording)
KAOLIN_OLD = "ImportError: Kaolin requires PyTorch >=1.6.0, <=1.13.0, but found version 1.13.1 instead."
KAOLIN_NEW = ("ImportError: Kaolin requires PyTorch >= 1.6.0, <= 2.8.0, but found version 2.9.1+cu128. "
              "Set IGNORE_TORCH_VER=1 to proceed with this version.")
# pip's wheel builder on a PyG companion
PYG_WHEEL = "ERROR: Failed building wheel for torch-scatter"
PYG_WHEEL_SPARSE = "ERROR: Failed building wheel for torch-sparse"

FAMILIES = {
    "extension-torch-mismatch": [OPEN3D, OPEN3D_OLD, DGL_SPARSE, DGL_GRAPHBOLT, DGL_GRAPHBOLT_WIN],
    "dependency-version-mismatch": [KAOLIN_OLD, KAOLIN_NEW],
    "package-no-matching-wheel": [PYG_WHEEL, PYG_WHEEL_SPARSE],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_open3d_import_traceback():
    # isl-org/Open3D-ML#635's paste (the traceback ends in Open3D's own raise)
    text = (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "/lustre03/project/6070689/harishs/open3d/lib/python3.9/site-packages/open3d/ml/torch/__init__.py",'
        " line 39, in <module>\n"
        "    raise Exception('Version mismatch: Open3D needs PyTorch version {}, but '\n"
        "Exception: Version mismatch: Open3D needs PyTorch version 1.8.*, but version 2.0.1+cpu is installed!\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


def test_open3d_near_misses():
    # Open3D's CUDA warning and its 'not built with PyTorch support' are other readings
    assert "open3d-ml-torch-version-mismatch" not in _ids(
        "Warning: Open3D was built with CUDA 11.0 but PyTorch was built with CUDA 11.1. Falling back to CPU for now.")
    assert "open3d-ml-torch-version-mismatch" not in _ids("Exception: Open3D was not built with PyTorch support!")
    # the source line itself, printed in a traceback, has no version in it
    assert "open3d-ml-torch-version-mismatch" not in _ids(
        "    raise Exception('Version mismatch: Open3D needs PyTorch version {}, but '")


def test_dgl_user_words_name_the_missing_library():
    # dmlc/dgl#7809: the reporter's sentence, not DGL's message
    text = "graphbolt_pytorch_2.4.1.dll\n\n## Bug\n\nThere is no such file `graphbolt_pytorch_2.4.1.dll`.\n"
    assert _codes(text)[:1] == ["extension-torch-mismatch"]
    assert "dgl-library-missing-for-torch-version" in _ids(
        "Could not find libgraphbolt_pytorch_2.2.2.so in dgl/graphbolt")


def test_dgl_near_misses():
    ids = "dgl-library-missing-for-torch-version"
    # the library was found but did not load: another cause (a missing CUDA library, a symbol)
    assert ids not in _ids("ImportError: Cannot load DGL C++ sparse library")
    assert ids not in _ids("ImportError: Cannot load Graphbolt C++ library")
    # the TensorDispatcher's optional adapter (DGL: safe to ignore)
    assert ids not in _ids(
        "[21:43:56] /opt/dgl/src/runtime/tensordispatch.cc:43: TensorDispatcher: dlopen failed: /home/u/env/lib/"
        "python3.7/site-packages/dgl/tensoradapter/pytorch/libtensoradapter_pytorch_1.10.1.so: cannot open "
        "shared object file: No such file or directory")
    # a build copying the library is no failure
    assert ids not in _ids(
        "copying build/lib/dgl/graphbolt/libgraphbolt_pytorch_2.1.0.so -> /opt/conda/lib/python3.10/site-packages")


def test_kaolin_range_is_not_read_as_too_old():
    text = "documentation confusion\n\nand when I installed I have this\n\n" + KAOLIN_OLD + "If yo\n"
    codes = _codes(text)
    assert codes[:1] == ["dependency-version-mismatch"]
    assert "torch-too-old-for-package" not in codes


def test_minimum_version_messages_keep_their_reading():
    # a plain minimum is still torch-too-old-for-package
    assert _codes("ImportError: Kaolin requires PyTorch >= 1.5.0 to build its extensions\n")[:1] == [
        "torch-too-old-for-package"]
    assert _codes("RuntimeError: this op requires PyTorch >= 2.1, found 2.0.1\n")[:1] == [
        "torch-too-old-for-package"]
    # kaolin's 'couldn't find the module' is no range failure
    assert "torch-outside-supported-range" not in _ids(
        "ImportError: Kaolin requires PyTorch >=1.5.0, <=2.2.0, but couldn't find the module installed.")
    # a README or install note stating the range is no failure either
    assert "torch-outside-supported-range" not in _ids("Note: Kaolin requires PyTorch <= 2.8.0. If you have issues, skip this.")


def test_pyg_source_build_pip_tail():
    # rusty1s/pytorch_scatter#283: only pip's tail of the failed source build
    text = (
        "  note: This error originates from a subprocess, and is likely not a problem with pip.\n"
        "error: legacy-install-failure\n\n"
        "× Encountered error while trying to install package.\n"
        "╰─> torch-scatter\n\n"
        "note: This is an issue with the package mentioned above, not pip.\n"
    )
    assert _codes(text)[:1] == ["package-no-matching-wheel"]


def test_pyg_source_build_nvcc_failed():
    # pyg-team/pytorch_geometric#2971: the generic nvcc failure beside the failed companion wheel
    text = (
        "error: command '/usr/local/cuda-10.1/bin/nvcc' failed with exit status 1\n"
        "ERROR: Failed building wheel for torch-scatter\n"
        "pip install torch-scatter torch-sparse -f https://pytorch-geometric.com/whl/torch-1.8.2+cu101.html\n"
    )
    assert _codes(text)[:1] == ["package-no-matching-wheel"]


def test_pyg_source_build_specific_cause_stays_first():
    # a source build whose own line names the cause keeps it (nvcc's CUDA against torch's)
    text = (
        "RuntimeError:\n"
        "The detected CUDA version (10.0) mismatches the version that was used to compile\n"
        "PyTorch (9.0). Please make sure to use the same CUDA versions.\n"
        "ERROR: Failed building wheel for torch-scatter\n"
    )
    assert _codes(text)[:1] == ["nvcc-torch-cuda-mismatch"]


def test_pyg_source_build_near_misses():
    ids = "pyg-companion-built-from-source-failed"
    assert ids not in _ids("Building wheel for torch-scatter (setup.py) ... done")
    assert ids not in _ids("Successfully built torch-scatter torch-sparse")
    assert ids not in _ids("ERROR: Failed building wheel for torchvision")
    assert ids not in _ids("ERROR: Failed building wheel for torch")
    assert ids not in _ids("╰─> torchsparse")
