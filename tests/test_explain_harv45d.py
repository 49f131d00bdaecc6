"""harv45d: an unbiased harvest of time series, weather/climate and geospatial ML on GPUs (PhysicsNeMo /
Modulus, gluonts, neuralforecast, Lag-Llama, darts, pytorch-forecasting, TimesFM, Chronos, rasterio /
GDAL / PROJ), scored blind, and the general fixes its misses ask for (docs/dev/harv45d.md).

Twenty new training-side logs; explain named eleven first before any change. The fixed misses:
- PROJ's ``... proj.db contains DATABASE.LAYOUT.VERSION.MINOR = 2 whereas a number >= 3 is expected. It
  comes from another PROJ installation.``: PROJ_DATA / PROJ_LIB naming another installation's data
  (A1, OSGeo/gdal#10381); now ``env-path-unusable``;
- macOS dyld's ``Library not loaded: /opt/homebrew/opt/gdal/lib/libgdal.29.dylib``: an extension built
  against a Homebrew library that an upgrade replaced (A1, rasterio/rasterio#2412, first only by a guess
  from the word 'dlopen'); now ``library-missing``;
- ``No module named 'physicsnemo.sym'``: PhysicsNeMo-Sym is a separate distribution (A1,
  NVIDIA/physicsnemo#897); now ``python-package-not-installed``;
- ``No module named 'neuralforecast.data'`` / ``'gluonts.torch.modules.loss'`` / ``'modulus.variables'``
  (and ``'pytorch_lightning.core.lightning'``): submodules a release removed, imported by code written for
  the older release (A1, Nixtla/neuralforecast#680, lag-llama#67, nvidia-modulus-airfoil-optimisation#3);
  now ``dependency-version-mismatch``;
- Lightning 2.1's ``The classmethod `X.load_from_checkpoint` cannot be called on an instance``: a library
  (gluonts 0.13) written for an older Lightning (A1, awslabs/gluonts#3050); now
  ``dependency-version-mismatch``.
Each message is the library's own text (from its source) or a training-side thread's paste, run through
the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from explain_helpers import codes, first
from test_explain_patterns import family_tests, healthy_test, ids as _ids

# OSGeo/PROJ src/iso19111/factory.cpp, the proj.db layout check, as GDAL prints it
PROJ_MINOR = ("ERROR 1: PROJ: proj_create_from_database: C:\\Program Files\\PostgreSQL\\16\\share\\contrib\\"
              "postgis-3.4\\proj\\proj.db contains DATABASE.LAYOUT.VERSION.MINOR = 2 whereas a number >= 5 is "
              "expected. It comes from another PROJ installation.")
PROJ_LACKS = ("ERROR 1: PROJ: proj_create_from_database: /opt/conda/share/proj/proj.db lacks "
              "DATABASE.LAYOUT.VERSION.MAJOR / DATABASE.LAYOUT.VERSION.MINOR metadata. It comes from another PROJ "
              "installation.")
# Apple dyld's load error for an extension linked against a Homebrew library (rasterio/rasterio#2412's shape)
DYLD_ARM = ("ImportError: dlopen(/Users/me/venv/lib/python3.11/site-packages/rasterio/_base.cpython-311-darwin.so, "
            "0x0002): Library not loaded: /opt/homebrew/opt/gdal/lib/libgdal.34.dylib")
DYLD_INTEL = ("ImportError: dlopen(/usr/local/lib/python3.9/site-packages/pyproj/_datadir.cpython-39-darwin.so, 2): "
              "Library not loaded: /usr/local/opt/proj/lib/libproj.25.dylib")
# PhysicsNeMo-Sym / Modulus-Sym: separate distributions installed into the core package's namespace
PHYSICSNEMO_SYM = "ModuleNotFoundError: No module named 'physicsnemo.sym'"
MODULUS_SYM = "ModuleNotFoundError: No module named 'modulus.sym'"
# submodules a release removed
NEURALFORECAST_DATA = "ModuleNotFoundError: No module named 'neuralforecast.data'"
GLUONTS_LOSS = "ModuleNotFoundError: No module named 'gluonts.torch.modules.loss'"
MODULUS_VARIABLES = "ModuleNotFoundError: No module named 'modulus.variables'"
PL_CORE_LIGHTNING = "ModuleNotFoundError: No module named 'pytorch_lightning.core.lightning'"
# Lightning-AI/pytorch-lightning src/lightning/pytorch/utilities/model_helpers.py _restricted_classmethod_impl
LIGHTNING_INSTANCE = ("TypeError: The classmethod `DeepARLightningModule.load_from_checkpoint` cannot be called on "
                      "an instance. Please call it on the class type and make sure the return value is used.")

FAMILIES = {
    "env-path-unusable": [PROJ_MINOR, PROJ_LACKS],
    "library-missing": [DYLD_ARM, DYLD_INTEL],
    "python-package-not-installed": [PHYSICSNEMO_SYM, MODULUS_SYM],
    "dependency-version-mismatch": [NEURALFORECAST_DATA, GLUONTS_LOSS, MODULUS_VARIABLES, PL_CORE_LIGHTNING,
                                    LIGHTNING_INSTANCE],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)



def test_gdal_paste_cut_inside_the_word_names_the_proj_variable():
    # OSGeo/gdal#10381's paste: the line is broken inside 'DATABASE.LAYOUT'; the sentence after it is whole
    text = ("Give me bug with GDAL 3.9.1Warning 1: PROJ: proj_create_from_database: C:\\Program Files\\GDAL\\projlib\\"
            "proj.db contains DATABASE.LAY\n"
            "OUT.VERSION.MINOR = 2 whereas a number >= 3 is expected. It comes from another PROJ installation.\n")
    assert first(text) == "env-path-unusable"


def test_rasterio_import_on_macos_names_the_missing_homebrew_library():
    text = (
        "ImportError: dlopen(/Users/u/venv/lib/python3.9/site-packages/rasterio/_base.cpython-39-darwin.so, 0x0002): "
        "Library not loaded: /opt/homebrew/opt/gdal/lib/libgdal.29.dylib\n"
        "  Referenced from: /Users/u/venv/lib/python3.9/site-packages/rasterio/_base.cpython-39-darwin.so\n"
        "  Reason: tried: '/opt/homebrew/opt/gdal/lib/libgdal.29.dylib' (no such file), "
        "'/usr/local/lib/libgdal.29.dylib' (no such file)\n"
    )
    assert first(text) == "library-missing"


def test_physicsnemo_sym_in_markdown_bold_names_the_separate_package():
    # NVIDIA/physicsnemo#897's shape: the import and the error inside one bold span
    text = ("I got this error  **from physicsnemo.sym.eq.pdes.navier_stokes import NavierStokes\n"
            "ModuleNotFoundError: No module named 'physicsnemo.sym'**.   i have tried to check that module\n")
    assert first(text) == "python-package-not-installed"
    assert "physicsnemo-sym-not-installed" in _ids("ModuleNotFoundError: No module named 'physicsnemo.sym'**.")


def test_modulus_example_traceback_names_the_older_release():
    text = (
        "Traceback (most recent call last):\n"
        '  File "src/ldc_2d.py", line 3, in <module>\n'
        "    from modulus.variables import Variables\n"
        + MODULUS_VARIABLES + "\n"
    )
    assert first(text) == "dependency-version-mismatch"


def test_gluonts_training_traceback_names_the_lightning_pair():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/site-packages/gluonts/torch/model/estimator.py", line 237, in train\n'
        "    return self.train_model(\n"
        + LIGHTNING_INSTANCE + "\n"
    )
    assert first(text) == "dependency-version-mismatch"


def test_near_misses_keep_their_reading():
    for line, sig in (
        # the top-level package missing is the generic reading, not a removed submodule
        ("ModuleNotFoundError: No module named 'neuralforecast'", "timeseries-library-module-removed"),
        ("ModuleNotFoundError: No module named 'physicsnemo'", "physicsnemo-sym-not-installed"),
        # other submodules of the same packages are not this rule's
        ("ModuleNotFoundError: No module named 'neuralforecast.database'", "timeseries-library-module-removed"),
        ("ModuleNotFoundError: No module named 'gluonts.torch.modules'", "timeseries-library-module-removed"),
        ("ModuleNotFoundError: No module named 'pytorch_lightning.core.module'", "timeseries-library-module-removed"),
        ("ModuleNotFoundError: No module named 'physicsnemo.symbolic'", "physicsnemo-sym-not-installed"),
        # Lightning before 2.1 only warned, and another classmethod is not restricted
        ("UserWarning: The classmethod LitModel.load_from_checkpoint was called on an instance. Please call this "
         "method on the class type (LitModel) and make sure the return value is used",
         "lightning-load-from-checkpoint-on-instance"),
        ("TypeError: The classmethod `Model.from_config` cannot be called on an instance",
         "lightning-load-from-checkpoint-on-instance"),
        # PROJ's other errors, and dyld's libraries that are not Homebrew's
        ("ERROR 1: PROJ: proj_create_from_database: crs not found", "proj-db-from-another-proj-installation"),
        ("Library not loaded: @rpath/libtorch_cpu.dylib", "macos-homebrew-library-not-loaded"),
        ("Library not loaded: /System/Library/Frameworks/Metal.framework/Metal", "macos-homebrew-library-not-loaded"),
    ):
        assert sig not in _ids(line), line


def test_top_level_package_missing_stays_the_generic_code():
    assert codes("ModuleNotFoundError: No module named 'neuralforecast'")[:1] == ["python-package-not-installed"]


test_healthy_lines_name_nothing = healthy_test([
    "PROJ data found in wheel, setting to '/venv/lib/python3.11/site-packages/rasterio/proj_data'.",
    "Successfully installed gluonts-0.14.4 neuralforecast-1.7.4 nvidia-physicsnemo-1.1.0 nvidia-physicsnemo.sym-2.0.0",
    "Restoring states from the checkpoint path at lightning_logs/version_0/checkpoints/epoch=4-step=250.ckpt",
    "model = DeepARLightningModule.load_from_checkpoint(checkpoint_path)",
    "from physicsnemo.sym.hydra import to_absolute_path, instantiate_arch",
])
