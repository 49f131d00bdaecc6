"""harv44e: an unbiased harvest of deep reinforcement learning and GPU physics environments
(stable-baselines3, TorchRL / tensordict, MuJoCo / MJX / dm_control, Gymnasium, EnvPool, JAX RL),
scored blind, and the general fixes its misses ask for (docs/dev/harv44e.md).

Seventeen new training-side logs; explain named five first before any change. The fixed misses:
- MuJoCo's Python bindings lack a field the caller's release reads (``'MjModel' object has no
  attribute 'bvh_geomid'``, ``'mujoco._structs.MjData' object has no attribute 'solver_iter'``,
  ``'mujoco._specs.MjSpec' object has no attribute 'find_body'``): dm_control, Gymnasium or MuJoCo
  Playground paired with another mujoco release (A1); now ``dependency-version-mismatch``;
- dm_control's import check ``MuJoCo library version (210) does not match header version (211)``
  (A2: read as nvcc vs torch CUDA) and old dm_control's ctypes ``libmujoco210.so: undefined symbol:
  mj_certQuestion`` (A2: read as a torch extension); now ``dependency-version-mismatch``;
- stable-baselines3 1.x given a gymnasium env: ``The algorithm only supports (<class
  'gym.spaces.discrete.Discrete'>,) as action spaces but Discrete(4) was provided`` and
  ``Unsupported structured space '<class 'gymnasium.spaces.dict.Dict'>'`` (A1); now
  ``dependency-version-mismatch``;
- tensordict before 0.6.2 beside torch 2.6+: ``cannot import name 'ForkingPickler' from
  'torch.multiprocessing.reductions'`` (A1, guessed as torch too old); now
  ``dependency-version-mismatch``;
- macOS dyld's ``Symbol not found: __ZN8pybind116detail11type_casterIN2at6Tensor...`` with
  ``Expected in: .../torch/lib/libtorch_python.dylib`` (torchrl built for torch 2.0 under torch 1.x);
  now ``extension-torch-mismatch``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# google-deepmind/mujoco python/mujoco/structs.cc, specs.cc (pybind11 classes; AttributeError on a missing field)
BVH = "AttributeError: 'MjModel' object has no attribute 'bvh_geomid'"
SOLVER_ITER = "AttributeError: 'mujoco._structs.MjData' object has no attribute 'solver_iter'"
FIND_BODY = "AttributeError: 'mujoco._specs.MjSpec' object has no attribute 'find_body'"
ACTADR = "AttributeError: 'MjModel' object has no attribute 'actuator_actadr'"
# google-deepmind/dm_control dm_control/mujoco/wrapper/core.py (module-level version check)
HEADER = "dm_control.mujoco.wrapper.core.Error: MuJoCo library version (210) does not match header version (211)"
# CPython ctypes CDLL.__getattr__ carrying dlsym's error, dm_control 0.0.x mjbindings/functions.py
CTYPES = "AttributeError: /home/u/.mujoco/mujoco210/bin/libmujoco210.so: undefined symbol: mj_certQuestion"
# DLR-RM/stable-baselines3 common/base_class.py BaseAlgorithm.__init__ (1.x: gym's spaces)
SB3_DISCRETE = ("AssertionError: The algorithm only supports (<class 'gym.spaces.box.Box'>, <class "
                "'gym.spaces.discrete.Discrete'>, <class 'gym.spaces.multi_discrete.MultiDiscrete'>, <class "
                "'gym.spaces.multi_binary.MultiBinary'>) as action spaces but Discrete(2) was provided")
SB3_BOX = ("AssertionError: The algorithm only supports (<class 'gym.spaces.box.Box'>,) as action spaces "
           "but Box(-1.0, 1.0, (3,), float32) was provided")
# DLR-RM/stable-baselines3 common/vec_env/util.py obs_space_info (1.x)
SB3_DICT = "AssertionError: Unsupported structured space '<class 'gymnasium.spaces.dict.Dict'>'"
# pytorch/tensordict tensordict/_reductions.py before 0.6.2, under torch 2.6+
FORKING = ("ImportError: cannot import name 'ForkingPickler' from 'torch.multiprocessing.reductions' "
           "(/opt/conda/lib/python3.11/site-packages/torch/multiprocessing/reductions.py)")
# macOS dyld for torchrl's _torchrl.so built against another torch (pytorch/rl#1308)
DYLD = ("ImportError: dlopen(/opt/env/lib/python3.9/site-packages/torchrl/_torchrl.so, 0x0002): Symbol not found: "
        "__ZN8pybind116detail11type_casterIN2at6TensorEvE4castERKS3_NS_19return_value_policyENS_6handleE")

FAMILIES = {
    "dependency-version-mismatch": [BVH, SOLVER_ITER, FIND_BODY, ACTADR, HEADER, CTYPES,
                                    SB3_DISCRETE, SB3_BOX, SB3_DICT, FORKING],
    "extension-torch-mismatch": [DYLD],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_dm_control_suite_traceback_names_the_release_pair():
    # google-deepmind/dm_control#430's shape: suite.load walking the fields of its release
    text = (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 4, in <module>\n'
        '  File "/venv/lib/python3.10/site-packages/dm_control/mujoco/index.py", line 628, in struct_indexer\n'
        "    attr = getattr(struct, field_name)\n"
        "AttributeError: 'MjModel' object has no attribute 'bvh_geomid'\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_gymnasium_render_quote_names_the_release_pair():
    # google-deepmind/mujoco#1107: the message quoted in a sentence, no traceback
    text = ("When using version 3.0.0 of MuJoCo and working with Gymnasium I'm getting the following error\n\n"
            "'mujoco._structs.MjData' object has no attribute 'solver_iter'\n\n"
            "Downgrading to version 2.3.7 fixes the issue.\n")
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_mujoco_binding_near_misses_stay_quiet():
    for line in ("AttributeError: 'MjModelWrapper' object has no attribute 'geom_xpos'",
                 "AttributeError: 'PyMjModel' object has no attribute 'data'",
                 "AttributeError: 'Model' object has no attribute 'bvh_geomid'",
                 "    mj_model = mujoco.MjModel.from_xml_path(path)",
                 "model.bvh_geomid has shape (0,)"):
        assert "mujoco-binding-field-missing" not in _ids(line), line


def test_header_and_ctypes_near_misses_stay_quiet():
    for line in ("MuJoCo library version 210, header version 210",
                 "FMOD lib version 2 does not match header version 3",
                 "OSError: /usr/lib/libmujoco210.so: cannot open shared object file: No such file or directory",
                 "libmujoco200.so: undefined symbol: __glewBindBuffer",
                 "MuJoCo version 3.1.6"):
        ids = _ids(line)
        assert "dm-control-mujoco-header-version" not in ids, line
        assert "mujoco-ctypes-function-missing" not in ids, line


def test_sb3_paste_with_code_names_the_release_pair():
    # Farama-Foundation/Gymnasium#348: SB3 1.7 with gymnasium 0.27
    text = (
        "the error `The algorithm only supports (<class 'gym.spaces.discrete.Discrete'>,) as action spaces "
        "but Discrete(4) was provided` will raised by the underlying code example.\n"
        "import gymnasium as gym\nfrom stable_baselines3 import DQN\n"
        "**Ubuntu 16.04, Python 3.8.16, stable-baselines3 1.7.0, gymnasium 0.27.1**\n"
    )
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_sb3_genuinely_unsupported_space_stays_quiet():
    # a space SB3 does not support at all (a Tuple action space, a Box given to DQN) is no version pair
    for line in ("AssertionError: The algorithm only supports (<class 'gym.spaces.discrete.Discrete'>,) as action "
                 "spaces but Box(-1.0, 1.0, (2,), float32) was provided",
                 "AssertionError: The algorithm only supports (<class 'gymnasium.spaces.box.Box'>,) as action "
                 "spaces but Tuple(Discrete(2), Discrete(3)) was provided",
                 "AssertionError: The algorithm only supports (<class 'gym.spaces.box.Box'>,) as action spaces "
                 "but MultiDiscrete([2 3]) was provided",
                 "AssertionError: Unsupported structured space '<class 'gymnasium.spaces.graph.Graph'>'",
                 "AssertionError: Unsupported structured space '<class 'gym.spaces.dict.Dict'>'"):
        assert "sb3-gym-gymnasium-space-classes" not in _ids(line), line


def test_forkingpickler_is_not_read_as_torch_too_old():
    # Zhefan-Xu/NavRL#99: the message quoted in the reporter's sentence; torch is the newer side
    text = ('an error occurred when I ran "rosrun navigation_runner navigation_node.py": "ImportError: cannot '
            "import name 'ForkingPickler' from 'torch.multiprocessing.reductions'\", and upgrading the "
            "tensordict version did not solve the problem either.\n")
    assert _codes(text)[:1] == ["dependency-version-mismatch"]


def test_forkingpickler_near_misses_stay_quiet():
    for line in ("from torch.multiprocessing.reductions import ForkingPickler",
                 "ImportError: cannot import name 'ForkingPickler' from 'multiprocessing.reduction'",
                 "ImportError: cannot import name 'rebuild_storage_fd' from 'torch.multiprocessing.reductions'"):
        assert "tensordict-forkingpickler-newer-torch" not in _ids(line), line


def test_torchrl_macos_paste_names_the_torch_pair():
    # pytorch/rl#1308 as pasted: the Referenced from / Expected in lines under the dlopen error
    text = (
        "ImportError: dlopen(/Users/u/env/lib/python3.9/site-packages/torchrl/_torchrl.so, 0x0002): Symbol not found: "
        "__ZN8pybind116detail11type_casterIN2at6TensorEvE4castERKS3_NS_19return_value_policyENS_6handleE\n"
        "  Referenced from: <26B157A6-9DAD-3C58-9A74-E4A5EEF6F011> /Users/u/env/lib/python3.9/site-packages/torchrl/_torchrl.so\n"
        "  Expected in:     <8F09D9D9-3AB7-367A-B2FF-80087FA15C9E> /Users/u/env/lib/python3.9/site-packages/torch/lib/libtorch_python.dylib\n"
    )
    assert _codes(text)[:1] == ["extension-torch-mismatch"]
    assert "dyld-torch-symbol-not-found" in _ids(
        "  Expected in:     <8F09D9D9-3AB7-367A-B2FF-80087FA15C9E> /opt/env/site-packages/torch/lib/libtorch_python.dylib")


def test_dyld_near_misses_stay_quiet():
    for line in ("  Expected in: /usr/lib/libSystem.B.dylib",
                 "  Expected in:     <8F09D9D9-3AB7-367A-B2FF-80087FA15C9E> /opt/homebrew/lib/libomp.dylib",
                 "Symbol not found: __ZN8pybind116detail11type_casterIbvE4loadENS_6handleEb"):
        assert "dyld-torch-symbol-not-found" not in _ids(line), line


def test_envpool_without_a_wheel_for_this_platform():
    # sail-sg/envpool#153: macOS, where envpool published no wheel (it ships no source distribution)
    text = ("ERROR: Could not find a version that satisfies the requirement envpool (from versions: none)\n"
            "ERROR: No matching distribution found for envpool\n")
    assert _codes(text)[:1] == ["package-no-matching-wheel"]
    for line in ("ERROR: No matching distribution found for envpoolx",
                 "Successfully installed envpool-0.8.4",
                 "ERROR: No matching distribution found for envs"):
        assert "pip-no-gpu-package-version" not in _ids(line), line


# Gymnasium 1.0 removed gymnasium/wrappers/compatibility.py (EnvCompatibility, LegacyEnv)
GYMNASIUM_COMPAT = "ModuleNotFoundError: No module named 'gymnasium.wrappers.compatibility'"


def test_gymnasium_1_compatibility_module_is_a_release_pair():
    # pytorch/rl#2495: the message in backquotes in the reporter's sentence, versions beside it
    text = ("returns `ModuleNotFoundError: No module named 'gymnasium.wrappers.compatibility'` with "
            "`gymnasium==1.0.0` & `torchrl==0.5.0`.\n")
    assert _codes(text)[:1] == ["dependency-version-mismatch"]
    assert _codes("step 1/10\n" + GYMNASIUM_COMPAT + "\nexiting\n")[:1] == ["dependency-version-mismatch"]
    for line in ("ModuleNotFoundError: No module named 'gymnasium'",
                 "from gymnasium.wrappers.compatibility import EnvCompatibility",
                 "ModuleNotFoundError: No module named 'gymnasium.wrappers.compatibility_v2'"):
        assert "gymnasium-1-compatibility-module-removed" not in _ids(line), line
