"""harv35d: an unbiased harvest of native-Windows GPU ML stacks (torch's DLLs and the Visual C++
runtime, MSVC for extension builds, Windows' path limit, NCCL on Windows, Windows wheels of
flash-attn and bitsandbytes), scored blind, and the general fixes its misses ask for
(docs/dev/harv35d.md).

Fifteen new training-side logs; explain named ten first before any change. The fixed misses:
- A2: Python 3.8+'s ctypes wording for a torch DLL whose dependency is missing,
  ``FileNotFoundError: Could not find module '...\\torch\\lib\\c10.dll' (or one of its
  dependencies)`` (torch 1.5-1.x loads torch\\lib with ctypes.CDLL; pytorch/pytorch#39734: c10.dll
  needed msvcp140.dll), read as library-missing; now refined to ``msvc-runtime-missing`` for the
  CPU-side DLLs torch ships itself, as torch-dll-dependencies' WinError 126 line already was;
- A1: pip's ENOENT line on a Windows path past 260 characters without the HINT (pip before 20.3
  said ``EnvironmentError`` and printed no HINT; pytorch/pytorch#23823), unknown before; now
  ``windows-long-paths-disabled``, on pip's own condition for the HINT (len(filename) > 260);
- A2: CPython's ``DLL load failed while importing flash_attn_2_cuda`` with its reason cut off
  (turboderp-org/exllamav2#358), read from words as flash-attn-not-installed; now the Windows
  extension loader's signature of ``extension-torch-mismatch`` also reads the cut line.
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# CPython Modules/_ctypes (Python 3.8+ on Windows): FileNotFoundError "Could not find module '%S'
# (or one of its dependencies). Try using the full path with constructor syntax.", raised by
# torch 1.5-1.x's torch/__init__.py ctypes.CDLL(dll) for each DLL in torch\lib
C10_CTYPES = ("FileNotFoundError: Could not find module 'C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python38"
              "\\lib\\site-packages\\torch\\lib\\c10.dll' (or one of its dependencies). Try using the full path "
              "with constructor syntax.")
FBGEMM_CTYPES = ("FileNotFoundError: Could not find module 'D:\\envs\\ml\\lib\\site-packages\\torch\\lib\\fbgemm.dll' "
                 "(or one of its dependencies). Try using the full path with constructor syntax.")

# pypa/pip create_os_error_message: "Could not install packages due to an OSError: " + str(error)
# ("EnvironmentError" before pip 20.3); str(OSError) prints the file name's repr, backslashes doubled
_STORE = ("C:\\Users\\jonasheidelberg\\AppData\\Local\\Packages\\PythonSoftwareFoundation.Python.3.7_qbz5n2kfra8p0\\LocalCache"
          "\\local-packages\\Python37\\site-packages\\caffe2\\python\\serialized_test\\data\\operator_test\\"
          "collect_and_distribute_fpn_rpn_proposals_op_test.test_collect_and_dist.zip")
_TORCH_H = ("C:\\Users\\someone.lastname\\OneDrive - Contoso Research Laboratories\\Documents\\GitHub\\experiments\\stable-diffusion-trainer\\kohya_ss\\venv\\Lib\\site-packages\\"
            "torch\\include\\ATen\\native\\transformers\\cuda\\mem_eff_attention\\iterators\\"
            "predicated_tile_access_iterator_residual_last.h")
assert len(_STORE) > 260 and len(_TORCH_H) > 260
PIP_ENV_ERROR = ("ERROR: Could not install packages due to an EnvironmentError: [Errno 2] No such file or directory: "
                 + repr(_STORE))
PIP_OS_ERROR = ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
                + repr(_TORCH_H))

# CPython Python/dynload_win.c: "DLL load failed while importing %s: %s", pasted without the reason
FLASH_CUT = "ImportError: DLL load failed while importing flash_attn_2_cuda"
AWQ_CUT = "ImportError: DLL load failed while importing awq_ext"

FAMILIES = {
    "msvc-runtime-missing": [C10_CTYPES, FBGEMM_CTYPES],
    "windows-long-paths-disabled": [PIP_ENV_ERROR, PIP_OS_ERROR],
    "extension-torch-mismatch": [FLASH_CUT, AWQ_CUT],
}


test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def test_pytorch_39734_paste_names_the_runtime():
    # pytorch/pytorch#39734: the reporter's error line, backticked, in the issue template
    text = ("On Windows 10 2004, `import torch` will result in a FileNotFoundError.\n"
            "Error message:\n"
            "`FileNotFoundError: Could not find module '...\\c10.dll' (or one of its dependencies)`\n"
            " - PyTorch Version (e.g., 1.0): 1.5.0+cpu\n - OS (e.g., Linux): Windows 10 2004\n")
    assert _codes(text)[:1] == ["msvc-runtime-missing"]


def test_ctypes_traceback_from_torch_init():
    # the traceback torch 1.5's __init__ prints on Python 3.8 (ctypes.CDLL(dll) in its DLL loop)
    text = ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
            '  File "C:\\Python38\\lib\\site-packages\\torch\\__init__.py", line 81, in <module>\n'
            "    ctypes.CDLL(dll)\n"
            '  File "C:\\Python38\\lib\\ctypes\\__init__.py", line 373, in __init__\n'
            "    self._handle = _dlopen(self._name, mode)\n" + C10_CTYPES + "\n")
    assert _codes(text)[:1] == ["msvc-runtime-missing"]


def test_pytorch_23823_paste_names_the_path_limit():
    # pytorch/pytorch#23823: pip 19's line inside a markdown quote, backticked, the path's repr
    text = ("`pip3 install https://download.pytorch.org/whl/cpu/torch-1.1.0-cp37-cp37m-win_amd64.whl`\n"
            "fails with an error message:\n\n> `" + PIP_ENV_ERROR + "`\n\n"
            "## System Info\nPyTorch version: 1.1.0\nOS: Microsoft Windows 10 Pro, Version 1903\n")
    assert _codes(text)[:1] == ["windows-long-paths-disabled"]


def test_pip_error_with_hint_keeps_its_reading():
    # pip 20.3+ prints the HINT after the line: both lines name the same code
    text = PIP_OS_ERROR + ("\nHINT: This error might have occurred since this system does not have Windows Long "
                           "Path support enabled. You can find information on how to enable this at "
                           "https://pip.pypa.io/warnings/enable-long-paths\n")
    assert _codes(text)[:1] == ["windows-long-paths-disabled"]


def test_exllamav2_358_paste_names_the_torch_mismatch():
    # turboderp-org/exllamav2#358: the two lines the reporter pasted
    text = "    import flash_attn_2_cuda as flash_attn_cuda\nImportError: DLL load failed while importing flash_attn_2_cuda\n"
    assert _codes(text)[:1] == ["extension-torch-mismatch"]


# --- near-misses: the same shapes that stay with their own readings


def test_ctypes_other_dll_stays_library_missing():
    # a program's own DLL (llama-cpp-python), and a torch\lib DLL that is not one of the CPU-side
    # ones (caffe2_nvrtc.dll: pytorch/pytorch#37022 was a packaging bug, not the runtime)
    for dll in ("C:\\llama\\llama_cpp\\lib\\llama.dll", "C:\\m\\lib\\site-packages\\torch\\lib\\caffe2_nvrtc.dll"):
        got = _codes(f"FileNotFoundError: Could not find module '{dll}' (or one of its dependencies). Try using "
                     "the full path with constructor syntax.\n")
        assert got[:1] == ["library-missing"], (dll, got)


def test_pip_enoent_short_or_posix_path_is_not_the_path_limit():
    short = ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: "
             "'C:\\\\Users\\\\me\\\\project\\\\requirements-gpu.txt'\n")
    posix = ("ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: '/home/"
             + "a" * 300 + "/setup.py'\n")
    for text in (short, posix):
        assert "windows-long-paths-disabled" not in _codes(text), text[:90]


def test_pip_permission_error_is_not_the_path_limit():
    text = ("ERROR: Could not install packages due to an OSError: [WinError 5] Access is denied: 'C:\\\\Users\\\\me"
            "\\\\venv\\\\Lib\\\\site-packages\\\\~orch\\\\lib\\\\asmjit.dll'\nConsider using the `--user` option or "
            "check the permissions.\n")
    assert "windows-long-paths-disabled" not in _codes(text)


def test_flash_attn_dll_init_failure_stays_the_runtime():
    # WinError 1114 through the extension loader is the Visual C++ runtime (dll-init-failed-other-loaders)
    text = ("ImportError: DLL load failed while importing flash_attn_2_cuda: A dynamic link library (DLL) "
            "initialization routine failed.\n")
    assert _codes(text)[:1] == ["msvc-runtime-missing"]


def test_cut_line_of_a_non_extension_module_is_not_the_extension_signature():
    # the cut shape on a module that is no compiled kernel library (a GUI toolkit's), and the cut
    # line of a kernel library with text after it on the line: the signature reads neither
    kb = load()
    for line in ("ImportError: DLL load failed while importing QtCore",
                 "ImportError: DLL load failed while importing flash_attn_2_cuda (see the log above)"):
        assert "windows-extension-dll-load-failed" not in [e.id for e in kb.match_line(line)], line
