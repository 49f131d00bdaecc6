"""tools33: the wordings earlier rounds left unread.

Every message is written as the program prints it (its raise site is named beside it); each runs
through every wrapper of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near
misses that must stay unread or read otherwise.
"""
import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load as load_explain

from test_explain_patterns import family_tests, sourced_roots_test  # noqa: E402


def codes(text):
    return [c.code for c in explain_text(text if text.endswith("\n") else text + "\n").candidates]


def ids(line):
    return [e.id for e in load_explain().match_line(line)]


# -- 1. libstdc++'s #error for a translation unit compiled in an older C++ dialect than the
#    header needs (gcc libstdc++-v3/include/bits/c++0x_warning.h, c++14_warning.h,
#    c++17_warning.h): cxx-standard-not-enabled

CXX_DIALECT = [
    # gcc 5 and later (c++0x_warning.h), as gcc prints it: file:line:col: error: #error TEXT
    "/usr/include/c++/5/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the ISO C++ 2011 standard. This support must be enabled with the -std=c++11 or -std=gnu++11 "
    "compiler options.",
    # gcc 4.7-4.9 (CentOS 7's 4.8.5)
    "/usr/include/c++/4.8.2/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the ISO C++ 2011 standard. This support is currently experimental, and must be enabled with "
    "the -std=c++11 or -std=gnu++11 compiler options.",
    # gcc 4.4-4.6
    "/usr/include/c++/4.6/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the upcoming ISO C++ standard, C++0x. This support is currently experimental, and must be "
    "enabled with the -std=c++0x or -std=gnu++0x compiler options.",
    # c++14_warning.h, c++17_warning.h
    "/usr/include/c++/4.9/bits/c++14_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the forthcoming ISO C++ 2014 standard. This support is currently experimental, and must be "
    "enabled with the -std=c++1y or -std=gnu++1y compiler options.",
    "/usr/include/c++/6/bits/c++17_warning.h:32:2: error: #error This file requires compiler and library "
    "support for the ISO C++ 2017 standard. This support must be enabled with the -std=c++17 or -std=gnu++17 "
    "compiler options.",
    # MinGW through Dev-C++'s message pane
    r"32	2	C:\Program Files (x86)\Dev-Cpp\MinGW64\lib\gcc\x86_64-w64-mingw32\4.9.2\include\c++\bits\c++0x_warning.h"
    "	[Error] #error This file requires compiler and library support for the ISO C++ 2011 standard. This "
    "support is currently experimental, and must be enabled with the -std=c++11 or -std=gnu++11 compiler options.",
]

test_cxx_dialect_in_every_wrapper, test_cxx_dialect_own_signature = family_tests(
    {"cxx-standard-not-enabled": CXX_DIALECT})

test_cxx_dialect_sourced = sourced_roots_test(["cxx-standard-not-enabled"])


def test_cxx_dialect_in_a_zh_cn_locale_and_under_nvcc():
    # gcc's zh_CN catalogue translates "error:" but the #error text is the header's own
    log = ("nvcc warning : The -std=c++14 flag is not supported with the configured host compiler. Flag will be "
           "ignored.\nIn file included from /usr/include/c++/4.8.2/tuple:35:0,\n"
           "/usr/include/c++/4.8.2/bits/c++0x_warning.h:32:2: 错误：#error This file requires compiler and "
           "library support for the ISO C++ 2011 standard. This support is currently experimental, and must "
           "be enable\nmake: *** [all] Error 1\n")
    assert codes(log)[:1] == ["cxx-standard-not-enabled"]


@pytest.mark.parametrize("line", [
    # the preprocessor's source echo under the message stops before the standard's name
    " #error This file requires compiler and library support \\",
    " #error This file requires compiler and library support for the \\",
    # a comment in a project's source, no compile
    "//#include <chrono> //Just for time measurement. This library requires compiler and library support "
    "for the ISO C++ 2011 standard.",
    # nvcc's dropped flag alone is a healthy notice
    "nvcc warning : The -std=c++14 flag is not supported with the configured host compiler. Flag will be ignored.",
])
def test_cxx_dialect_near_misses_stay_quiet(line):
    assert "libstdcxx-cxx0x-warning-header" not in ids(line)
    # no line states it (the echo alone may still resemble the training log's words: a guess)
    stated = [c.code for c in explain_text(line + "\n").candidates if c.confidence in ("stated", "high")]
    assert "cxx-standard-not-enabled" not in stated


def test_torchs_own_cxx17_error_keeps_its_code():
    line = ("/opt/venv/lib/python3.10/site-packages/torch/include/ATen/ATen.h:4:2: error: #error C++17 or later "
            "compatible compiler is required to use ATen.")
    assert codes(line)[:1] == ["extension-cxx-standard-too-old"]
