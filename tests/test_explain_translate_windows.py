"""Windows' and Visual Studio's messages on a machine set to another language
(knowledge/locales_extra.toml, read by stackpeel.explain.translate).

Windows has no message catalogue we can read, so these translations are kept by hand, each
text as users' pastes show it. A localized line, pasted as users paste it (after
``OSError: [WinError N]``, inside a traceback, with ``C:\\`` paths, in a build log), must get
the first cause its English original gets, and the evidence must show the log's own words.
"""

from __future__ import annotations

import re

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain import translate as T
from stackpeel.knowledge import _toml

TORCH_LIB = r"C:\Users\me\miniconda3\envs\sd\lib\site-packages\torch\lib"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\me\\app\\main.py", line 3, in <module>\n'
    "    import torch\n"
    '  File "C:\\Users\\me\\miniconda3\\envs\\sd\\lib\\site-packages\\torch\\__init__.py", line 148, in <module>\n'
    "    raise err\n"
)
SUBPROCESS = (
    "Traceback (most recent call last):\n"
    '  File "C:\\Users\\me\\app\\run.py", line 12, in <module>\n'
    "    subprocess.run(cmd, check=True)\n"
    '  File "C:\\Python311\\Lib\\subprocess.py", line 1538, in _execute_child\n'
    "    hp, ht, pid, tid = _winapi.CreateProcess(executable, args,\n"
)


def torch_dll(message: str, dll: str = "c10.dll", n: int = 126) -> str:
    return f'{TRACEBACK}OSError: [WinError {n}] {message} Error loading "{TORCH_LIB}\\{dll}" or one of its dependencies.\n'


#: (message, language, English paste, the same paste as that language's Windows prints it)
CASES = [
    # cmd.exe, its two lines as the console prints them, and joined as an issue title joins them
    ("cmd", "zh_CN",
     "C:\\Users\\me\\proj>nvcc --version\n'nvcc' is not recognized as an internal or external command,\noperable program or batch file.\n",
     "C:\\Users\\me\\proj>nvcc --version\n'nvcc' 不是内部或外部命令，也不是可运行的程序\n或批处理文件。\n"),
    ("cmd", "zh_CN-joined",
     "'nvcc' is not recognized as an internal or external command, operable program or batch file.\n",
     "'nvcc' 不是内部或外部命令，也不是可运行的程序 或批处理文件。\n"),
    ("cmd", "ja",
     "C:\\Users\\me\\proj>nvcc -V\n'nvcc' is not recognized as an internal or external command,\noperable program or batch file.\n",
     "C:\\Users\\me\\proj>nvcc -V\n'nvcc' は、内部コマンドまたは外部コマンド、\n操作可能なプログラムまたはバッチ ファイルとして認識されていません。\n"),
    # PowerShell (the second sentence wraps at the console's width; CategoryInfo stays English)
    ("powershell", "zh_CN",
     "PS C:\\Users\\me> nvcc -V\nnvcc : The term 'nvcc' is not recognized as the name of a cmdlet, function, script file, or operable program. Check the spelling of the name, or if a path was included, verify that the path is correct and try again.\n"
     "At line:1 char:1\n+ nvcc -V\n+ ~~~~\n    + CategoryInfo          : ObjectNotFound: (nvcc:String) [], CommandNotFoundException\n",
     "PS C:\\Users\\me> nvcc -V\nnvcc : 无法将“nvcc”项识别为 cmdlet、函数、脚本文件或可运行程序的名称。请检查名称的拼写，如果包括路径，请确保路径正确，\n然后再试一次。\n"
     "所在位置 行:1 字符: 1\n+ nvcc -V\n+ ~~~~\n    + CategoryInfo          : ObjectNotFound: (nvcc:String) [], CommandNotFoundException\n"),
    # [WinError 126] from torch's DLL loader (ctypes.WinError keeps the period)
    ("126", "zh_CN", torch_dll("The specified module could not be found."), torch_dll("找不到指定的模块。")),
    ("126", "ru", torch_dll("The specified module could not be found.", "fbgemm.dll"), torch_dll("Не найден указанный модуль.", "fbgemm.dll")),
    ("126", "pt_BR", torch_dll("The specified module could not be found.", "fbgemm.dll"),
     torch_dll("Não foi possível encontrar o módulo especificado.", "fbgemm.dll")),
    ("126", "ko", torch_dll("The specified module could not be found.", "fbgemm.dll"), torch_dll("지정된 모듈을 찾을 수 없습니다.", "fbgemm.dll")),
    # ... and from ctypes.CDLL itself (OSError formats it and strips the trailing period)
    ("126", "es",
     "  File \"C:\\Python38\\lib\\ctypes\\__init__.py\", line 364, in __init__\n    self._handle = _dlopen(self._name, mode)\nOSError: [WinError 126] The specified module could not be found\n",
     "  File \"C:\\Python38\\lib\\ctypes\\__init__.py\", line 364, in __init__\n    self._handle = _dlopen(self._name, mode)\nOSError: [WinError 126] No se puede encontrar el módulo especificado\n"),
    ("127", "zh_CN", torch_dll("The specified procedure could not be found.", "torch_python.dll", 127),
     torch_dll("找不到指定的程序。", "torch_python.dll", 127)),
    ("193", "zh_CN",
     "  File \"C:\\Python36\\lib\\ctypes\\__init__.py\", line 348, in __init__\n    self._handle = _dlopen(self._name, mode)\nOSError: [WinError 193] %1 is not a valid Win32 application\n",
     "  File \"C:\\Python36\\lib\\ctypes\\__init__.py\", line 348, in __init__\n    self._handle = _dlopen(self._name, mode)\nOSError: [WinError 193] %1 不是有效的 Win32 应用程序。\n"),
    ("1114", "zh_CN", torch_dll("A dynamic link library (DLL) initialization routine failed.", n=1114),
     torch_dll("动态链接库(DLL)初始化例程失败。", n=1114)),
    ("1114", "es", torch_dll("A dynamic link library (DLL) initialization routine failed.", n=1114),
     torch_dll("Error en una rutina de inicialización de biblioteca de vínculos dinámicos (DLL).", n=1114)),
    ("1455", "zh_CN", torch_dll("The paging file is too small for this operation to complete.", "cudnn_cnn_infer64_8.dll", 1455),
     torch_dll("页面文件太小，无法完成操作。", "cudnn_cnn_infer64_8.dll", 1455)),
    ("2", "zh_CN", SUBPROCESS + "FileNotFoundError: [WinError 2] The system cannot find the file specified\n",
     SUBPROCESS + "FileNotFoundError: [WinError 2] 系统找不到指定的文件。\n"),
    # Visual Studio's compiler and linker, as a torch extension's build prints them
    ("C1083", "zh_CN",
     "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\include\\crt/host_config.h(231): fatal error C1083: Cannot open include file: 'crtdefs.h': No such file or directory\n",
     "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\include\\crt/host_config.h(231): fatal error C1083: 无法打开包括文件: “crtdefs.h”: No such file or directory\n"),
    ("LNK1181", "zh_CN", "LINK : fatal error LNK1181: cannot open input file 'cudart.lib'\n",
     "LINK : fatal error LNK1181: 无法打开输入文件“cudart.lib”\n"),
    ("LNK2001", "zh_CN",
     "my_lib.obj : error LNK2001: unresolved external symbol __imp_THFloatTensor_fill\n.\\_my_lib.pyd : fatal error LNK1120: 1 unresolved externals\n",
     "my_lib.obj : error LNK2001: 无法解析的外部符号 __imp_THFloatTensor_fill\n.\\_my_lib.pyd : fatal error LNK1120: 1 个无法解析的外部命令\n"),
    ("LNK2019", "zh_CN",
     "nms.obj : error LNK2019: unresolved external symbol cudaMalloc referenced in function nms_cuda\n",
     "nms.obj : error LNK2019: 无法解析的外部符号 cudaMalloc，该符号在函数 nms_cuda 中被引用\n"),
    ("LNK2019", "zh_CN-vs2022",
     "nms.obj : error LNK2019: unresolved external symbol cudaMalloc referenced in function nms_cuda\n",
     "nms.obj : error LNK2019: 无法解析的外部符号 cudaMalloc，函数 nms_cuda 中引用了该符号\n"),
    ("LNK1120", "zh_CN", "ext.pyd : fatal error LNK1120: 4 unresolved externals\n", "ext.pyd : fatal error LNK1120: 4 个无法解析的外部命令\n"),
]


@pytest.mark.parametrize("message, lang, english, localized", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_a_localized_windows_line_gets_the_answer_of_its_english_original(message, lang, english, localized):
    want = explain_text(english).candidates
    assert want, english
    got = explain_text(localized).candidates
    assert got and got[0].code == want[0].code, (lang, [c.code for c in got][:3], want[0].code)
    shown = [e.text for e in got[0].evidence]
    assert shown and all(s in localized for s in shown), (localized, shown)  # the log's own words
    assert any(not s.isascii() for s in shown), shown  # the localized line itself is the evidence


PIP_5 = "ERROR: Could not install packages due to an OSError: [WinError 5] {}: 'C:\\\\Python311\\\\Scripts\\\\pip.exe'\n"


@pytest.mark.parametrize("english, localized", [
    (PIP_5.format("Access is denied"), PIP_5.format("拒绝访问。")),
    (PIP_5.format("Access is denied"), PIP_5.format("Accès refusé")),
    ("FileNotFoundError: [WinError 3] The system cannot find the path specified: 'C:\\\\sd\\\\localizations'\n",
     "FileNotFoundError: [WinError 3] 系统找不到指定的路径。: 'C:\\\\sd\\\\localizations'\n"),
    ("PermissionError: [WinError 32] The process cannot access the file because it is being used by another process: 'temp.mp4'\n",
     "PermissionError: [WinError 32] 另一个程序正在使用此文件，进程无法访问。: 'temp.mp4'\n"),
])
def test_a_message_no_entry_explains_gets_the_fingerprint_of_its_english_original(english, localized):
    """No finding names [WinError 5], [WinError 3] or [WinError 32] alone; the localized line is
    still read in English (the "。" Python keeps, where it strips an ASCII period, goes with it),
    so the unknown error is recognised as the same one across languages."""
    assert explain_text(localized).fingerprint == explain_text(english).fingerprint is not None


@pytest.mark.parametrize("line, english", [
    ("'nvcc' 不是内部或外部命令，也不是可运行的程序 或批处理文件。",
     "'nvcc' is not recognized as an internal or external command, operable program or batch file."),
    ("'git' は、内部コマンドまたは外部コマンド、操作可能なプログラムまたはバッチ ファイルとして認識されていません。",
     "'git' is not recognized as an internal or external command,operable program or batch file."),
    ("OSError: [WinError 126] Не найден указанный модуль", "OSError: [WinError 126] The specified module could not be found"),
    ("OSError: [WinError 126] Не найден указанный модуль.", "OSError: [WinError 126] The specified module could not be found."),
    ("OSError: [WinError 193] %1 不是有效的 Win32 应用程序。", "OSError: [WinError 193] %1 is not a valid Win32 application"),
    ("x.obj : error LNK2019: 无法解析的外部符号 \"void __cdecl f(void)\" (?f@@YAXXZ)，该符号在函数 main 中被引用",
     "x.obj : error LNK2019: unresolved external symbol \"void __cdecl f(void)\" (?f@@YAXXZ) referenced in function main"),
    ("getchmodule.c(2): fatal error C1083: 无法打开包括文件: “termios.h”: No such file or directory",
     "getchmodule.c(2): fatal error C1083: Cannot open include file: 'termios.h': No such file or directory"),
])
def test_lines_users_paste_read_in_english(line, english):
    assert T.translate(line) == english


def test_every_language_of_a_hand_kept_entry_names_where_its_text_was_seen():
    with T.EXTRA.open("rb") as fh:
        messages = _toml.load(fh)["message"]
    assert len(messages) >= 20
    for m in messages:
        for lang in m["tr"]:
            # the source says, per language, where the text was seen (a thread or a page)
            assert re.search(rf"\b{lang}\b[^;]*https?://", m["source"]), (m["english"], lang)
