"""harv31c: a tenth unbiased harvest, framed on threads written in other languages (Chinese,
Japanese, Korean, Russian, Spanish, Portuguese), scored blind, and the general fix its miss asks
for (docs/dev/harv31c.md).

Eleven new training-side logs; explain named ten first before any change. The miss was the
Windows loader's error 1114 (ERROR_DLL_INIT_FAILED: a DLL's DllMain failed, most often because
the Visual C++ runtime loaded is older than the one the DLL was built with) printed by a loader
other than torch's: .NET's ``Unable to load DLL 'onnxruntime' or one of its dependencies:
<Windows' text> (0x8007045A)`` in Chinese (babalae/better-genshin-impact#1741), read as
onnxruntime's CUDA libraries. The same error through CPython's extension loader (``DLL load failed
while importing onnxruntime_pybind11_state: <text>``, lazydog28/mc_auto_boss#205) was a hit only
by resemblance. Both now have a signature of ``msvc-runtime-missing``; the HRESULT reads the same
in every language, and Windows' Japanese and Traditional Chinese texts for 1114 now read in
English (locales_extra.toml), as the Simplified Chinese one already did.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import match_codes
from test_explain_patterns import codes_of as _codes, family_tests

# Windows' text for 1114 in English, Simplified Chinese (seen in the harvest's threads),
# Japanese (mattyamonaca/layerdivider#52) and Traditional Chinese (xxxxue/xDM#4).
EN = "A dynamic link library (DLL) initialization routine failed."
ZH_CN = "动态链接库(DLL)初始化例程失败。"
JA = "ダイナミック リンク ライブラリ (DLL) 初期化ルーチンの実行に失敗しました。"
ZH_TW = "動態連結程式庫 (DLL) 初始化例行程序失敗。"

FAMILIES = {
    "msvc-runtime-missing": [
        # CPython's extension loader (Python/dynload_win.c) on onnxruntime's pyd
        "ImportError: DLL load failed while importing onnxruntime_pybind11_state: " + EN,
        # .NET's DllNotFoundException with Windows' text and the HRESULT
        "System.DllNotFoundException: Unable to load DLL 'onnxruntime' or one of its dependencies: "
        + EN + " (0x8007045A)",
        # the same, as a later Windows words it ('The dynamic link library ...')
        "Unable to load DLL 'MaaToolkit' or one of its dependencies: The dynamic link library (DLL) "
        "initialization routine failed. (0x8007045A)",
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


@pytest.mark.parametrize("text", [ZH_CN, JA, ZH_TW], ids=["zh_CN", "ja", "zh_TW"])
def test_python_loader_line_in_each_language(text):
    line = "ImportError: DLL load failed while importing onnxruntime_pybind11_state: " + text
    assert _codes("Traceback (most recent call last):\n" + line + "\n")[:1] == ["msvc-runtime-missing"]


@pytest.mark.parametrize("text", [ZH_CN, JA, ZH_TW], ids=["zh_CN", "ja", "zh_TW"])
def test_dotnet_loader_line_in_each_language(text):
    line = "Unable to load DLL 'onnxruntime' or one of its dependencies: " + text + "(0x8007045A)"
    assert _codes(line + "\n")[:1] == ["msvc-runtime-missing"]


def test_torch_loader_line_in_japanese():
    # torch's own loader (the existing rule) now reads Windows' Japanese text too
    line = ('OSError: [WinError 1114] ' + JA + ' Error loading "C:\\env\\Lib\\site-packages\\torch\\lib\\c10.dll" '
            'or one of its dependencies.')
    assert _codes(line + "\n")[:1] == ["msvc-runtime-missing"]


def test_dotnet_hresult_reads_in_a_language_without_a_translation():
    # the HRESULT is the same whatever Windows' language; Windows' Russian text for 1114 (as
    # pasted logs show it after "[WinError 1114]") has no entry in locales_extra.toml
    line = ("Unable to load DLL 'onnxruntime' or one of its dependencies: Произошел сбой в программе "
            "инициализации библиотеки динамической компоновки (DLL). (0x8007045A)")
    assert _codes(line + "\n")[:1] == ["msvc-runtime-missing"]


def test_the_harvest_paste_quoted_and_in_bold():
    # babalae/better-genshin-impact#1741 as pasted: the line twice, once in markdown bold,
    # no space before the HRESULT, none after the DLL's name
    text = ("Unable to load DLL 'onnxruntime'or one of its dependencies: " + ZH_CN + "(0x8007045A)\n"
            "启动程序后出现报错：**Unable to load DLL 'onnxruntime'or one of its dependencies: "
            + ZH_CN + "(0x8007045A)**\n")
    assert _codes(text)[:1] == ["msvc-runtime-missing"]


def test_the_python_loader_line_wrapped_in_a_traceback_behind_a_prefix():
    text = (
        "ComfyUI-WhisperX module for custom nodes: Traceback (most recent call last):\n"
        '  File "D:\\env\\Lib\\site-packages\\onnxruntime\\capi\\_pybind_state.py", line 32, in <module>\n'
        "    from .onnxruntime_pybind11_state import *  # noqa\n"
        "ImportError: DLL load failed while importing onnxruntime_pybind11_state: " + ZH_CN + "\n"
    )
    assert _codes(text)[:1] == ["msvc-runtime-missing"]


@pytest.mark.parametrize("line", [
    # another Windows error through the same loaders: a module not found (126) is not 1114
    "Unable to load DLL 'onnxruntime' or one of its dependencies: The specified module could not be found. (0x8007007E)",
    "Unable to load DLL 'onnxruntime' or one of its dependencies: Access is denied. (0x80070005)",
    # Linux .NET's wording has no HRESULT and names a shared library
    "Unable to load shared library 'libonnxruntime' or one of its dependencies. In order to help diagnose "
    "loading problems, consider setting the LD_DEBUG environment variable",
])
def test_near_misses_are_not_read_as_the_runtime(line):
    assert _codes("step 1\n" + line + "\n")[:1] != ["msvc-runtime-missing"]


def test_the_bare_hresult_is_not_the_signature():
    # the HRESULT in a program's own line, without a loader's words, matches no signature; explain
    # may still offer the runtime by the line's resemblance to better-genshin-impact#1741 (it is
    # the same Windows error), which is a weaker reading and not this rule's
    line = "Weaver.dll failed with status 0x8007045A"
    assert "msvc-runtime-missing" not in match_codes(line)
