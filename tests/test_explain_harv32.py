"""harv32: a twelfth unbiased harvest, framed on threads written in Japanese, Korean and European
languages, scored blind, and the general fixes its misses ask for (docs/dev/harv32.md).

Two misses came from programs printing their own, translated, messages:

- waifu2x-caffe (lltcggie/waifu2x-caffe#65): the GUI's CUDA check says ``Input can not be
  converted by GPU`` and, on its next line, why: ``The CUDA driver may not have been installed``
  (can_use_CUDA: no driver answers) or ``The CUDA driver version may be old`` (the driver is older
  than the CUDA runtime the program was built with); ``Your CUDA device is too old`` for a GPU
  below its minimum compute capability, ``cuDNN cannot be used`` for its cuDNN check. The texts
  come from the program's own catalogues, bin/lang/<language>.json, in twelve languages; the
  patterns below are those catalogues' strings, and so are the tests' texts.
- VOICEVOX/voicevox_core#645: ``DLL load failed while importing _rust: このオペレーティング システムでは
  %1 は実行されません。``, Windows' Japanese text for error 182 (ERROR_INVALID_ORDINAL, "The
  operating system cannot run %1."): the importing DLL wants an ordinal the DLL of that name the
  loader found lacks, a DLL of another build (read as the Visual C++ runtime by the generic
  "DLL load failed" rule). 182 now reads in English (locales_extra.toml: ja, zh_CN) and has a
  signature of ``library-shadowed``, the code of its name-twin 127.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text, match_codes
from stackpeel.explain.knowledge import load
from test_explain_patterns import codes_of as _codes, family_tests

# waifu2x-caffe bin/lang/*.json, as the catalogues spell them ("\r\n" is a line break in the
# dialog; a paste keeps the lines)
OLD_VERSION = {  # MessageCudaOldVersionError
    "english": "Input can not be converted by GPU\r\nThe CUDA driver version may be old \r\nPlease update the CUDA driver",
    "japanese": "GPUで変換出来ません。\r\nCUDAドライバーのバージョンが古い可能性があります。\r\nCUDAドライバーを更新して下さい。",
    "korean": "선택한 파일이 GPU를 사용하여 변환하지 못했습니다.\r\nCUDA 드라이버가 너무 오래된 것일 수도 있습니다.\r\n최신 CUDA 드라이버를 설치해 주십시오.",
    "russian": "Исходный файл не может быть преобразован GPU\r\nВерсия драйвера CUDA возможно устарела. \r\nПожалуйста обновите драйвер CUDA",
    "german": "Eingabe kann nicht mittels GPU umgewandelt werden.\r\nDie CUDA Treiberversion scheint veraltet.\r\nBitte aktualisiere den CUDA Treiber.",
    "french": "Le GPU ne peut pas effectuer la conversion\r\nLa version du pilote CUDA est peut-être trop ancienne \r\nVeuillez mettre à jour le pilote CUDA",
    "spanish": "La GPU no puede convertir el archivo de entrada.\r\nEs posible que la versión del controlador CUDA esté desactualizada.\r\nActualiza el controlador CUDA.",
    "portuguese_brazilian": "Entrada não pode ser convertida pela GPU\r\nA versão do driver CUDA é antiga \r\nPor favor atualize o driver CUDA",
    "turkish": "Girdi ekran kartı tarafından işlenemiyor.\r\nCUDA sürücüsü eski olabilir. \r\nLütfen CUDA sürücüsünü güncelleyin.",
    "italian": "L'input non puo essere elaborato dalla GPU\r\n I driver CUDA potrebbero non essere aggiornati. \r\nPer favore aggiorna i driver CUDA",
    "Chinese_Simplified": "无法使用 GPU 转换。\r\n可能是因为安装的 CUDA 驱动版本过旧。\r\n请更新驱动。",
    "czech": "Nelze použít GPU pro konverzi\r\nCUDA ovladač je asi zastaralí \r\nZkuste ho updatovat",
}
NOT_FIND = {  # MessageCudaNotFindError
    "english": "Input can not be converted by GPU\r\nThe CUDA driver may not have been installed. \r\nPlease install the CUDA driver",
    "japanese": "GPUで変換出来ません。\r\nCUDAドライバーがインストールされていない可能性があります。\r\nCUDAドライバーをインストールして下さい。",
    "korean": "GPU를 사용하여 변환할 수 없습니다.\r\nCUDA 드라이버가 설치되어 있지 않은 것일 수 있습니다. \r\nCUDA 드라이버를 다시 설치해 주십시오.",
    "russian": "Исходные файлы не могут быть преобразованы GPU\r\nДрайвер CUDA может быть не установлен. \r\nПожалуйста установите драйвер CUDA",
    "german": "Eingabe kann nicht mittels GPU umgewandelt werden.\r\nDer CUDA Treiber ist möglicherweise nicht installiert. \r\nInstalliere bitte den CUDA Treiber.",
    "french": "Le GPU ne peut pas effectuer la conversion\r\nLe pilote CUDA n'est peut-être pas installé. \r\nVeuillez installer le pilote CUDA",
    "spanish": "La GPU no puede convertir el archivo de entrada.\r\nEs posible que el controlador CUDA no esté instalado, instálalo.",
    "portuguese_brazilian": "Entrada não pode ser convertida pela GPU\r\nO driver CUDA não está instalado. \r\nPor favor instale o driver CUDA",
    "turkish": "Girdi ekran kartı tarafından işlenemiyor.\r\nCUDA sürücüsü yüklü olmayabilir. \r\nLütfen CUDA sürücüsünü yükleyin.",
    "italian": "L'input non puo essere elaborato dalla GPU\r\n I driver CUDA potrebbero non essere stati installati. \r\nPer favore installa i driver CUDA",
    "Chinese_Simplified": "无法使用 GPU 转换。\r\n可能是因为没有安装有效的 CUDA 驱动。\r\n请安装驱动。",
    "czech": "Nelze použít GPU pro konverzi\r\nCUDA ovladač možná není nainstalován. \r\nZkuste ho instalovat",
}
OLD_DEVICE = {  # MessageCudaOldDeviceError (the Turkish and Czech catalogues word it otherwise or lack it)
    "english": "Your CUDA device is too old.\r\nPlease use a device with Compute Capability 2.0 or later",
    "japanese": "CUDAデバイスが古いです。\r\nCompute Capability 2.0以上のデバイスを使用してください",
    "korean": "CUDA 장치가 오래 되었습니다.r\nCompute Capability 3.0 이상의 장치를 사용해 주십시오.",
    "russian": "Ваше устройство CUDA устарело.\r\nИспользуйте устройство с  Compute Capability 2.0 или выше.",
    "german": "Dein CUDA Gerät ist veraltet.\r\nBitte nutze ein Gerät mit Compute Capability 2.0 oder neuer",
    "spanish": "El dispositivo CUDA es muy antiguo.\r\nUsa un dispositivo compatible con Compute Capability 2.0 o posterior.",
    "portuguese_brazilian": "Seu dispositivo CUDA é antigo.\r\nPor favor use um dispositivo com Compute Capability 2.0 ou superior",
    "italian": "Il tuo dispositivo CUDA è troppo vecchio.\r\nPer favore usa un dispositivo con Compute Capability 2.0 o superiore",
    "Chinese_Simplified": "CUDA 设备过旧。\r\n请使用 Compute Capability (计算能力) 2.0 以上的设备。",
}
CUDNN = {  # MessagecuDNNNotFindError with the DLL's name filled in
    "english": "cuDNN cannot be used\r\n[cudnn64_7.dll]not found",
    "english (1.1.7)": "You can not use cuDNN\r\ncFailed to intialize cuDNN",
    "japanese": "cuDNNは使えません。\r\n「cudnn64_7.dll」が見つかりません。",
    "korean": "cuDNN을 사용할 수 없습니다. \r\ncudnn64_7.dll가 없습니다.",
    "russian": "Вы не можете использовать cuDNN\r\n[cudnn64_7.dll] не найден",
    "german": "cuDNN kann nicht genutzt werden\r\n[cudnn64_7.dll] konnte nicht gefunden werden",
    "french": "Impossible d'utiliser cuDNN\r\n[cudnn64_7.dll] est introuvable",
    "spanish": "No puedes usar cuDNN porque no se encontró [cudnn64_7.dll].",
    "portuguese_brazilian": "cuDNN não pode ser usado\r\n[cudnn64_7.dll]não encontrado",
    "turkish": "cuDNN kullanamazsınız,\r\n[cudnn64_7.dll]bulunamadı.",
    "italian": "cuDNN non puo essere usato\r\n[cudnn64_7.dll]non trovato",
    "Chinese_Simplified": "无法使用 cuDNN。\r\n找不到「cudnn64_7.dll」。",
    "czech": "cuDNN nemuže být použito\r\n[cudnn64_7.dll] nenalezeno",
}


def _paste(catalogue_text: str) -> str:
    """The dialog's text as a paste holds it: one line per line of the dialog."""
    return catalogue_text.replace("\r\n", "\n") + "\n"


FAMILIES = {
    "driver-too-old-for-build": [
        "The CUDA driver version may be old",
        "CUDAドライバーのバージョンが古い可能性があります。",
        # the dialog's first line alone (a paste that kept only it, lltcggie/waifu2x-caffe#65)
        "Input can not be converted by GPU",
    ],
    "no-nvidia-driver": [
        "The CUDA driver may not have been installed.",
        "Драйвер CUDA может быть не установлен.",
    ],
    "framework-gpu-arch-unsupported": ["Your CUDA device is too old."],
    "cudnn-unusable": ["cuDNN cannot be used", "cuDNNは使えません。"],
    "library-shadowed": [
        # CPython's extension loader and torch's loader with Windows' English text for 182
        "ImportError: DLL load failed while importing _rust: The operating system cannot run %1.",
        'OSError: [WinError 182] The operating system cannot run %1. Error loading '
        '"C:\\env\\Lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
    ],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


@pytest.mark.parametrize("lang", list(OLD_VERSION))
def test_driver_old_dialog_in_every_catalogue_language(lang):
    assert _codes(_paste(OLD_VERSION[lang]))[:1] == ["driver-too-old-for-build"]


@pytest.mark.parametrize("lang", list(NOT_FIND))
def test_driver_not_found_dialog_in_every_catalogue_language(lang):
    # no driver answers first; a driver older than the build is the other reading
    codes = _codes(_paste(NOT_FIND[lang]))
    assert codes[:2] == ["no-nvidia-driver", "driver-too-old-for-build"], codes


@pytest.mark.parametrize("lang", list(OLD_DEVICE))
def test_old_device_dialog_in_every_catalogue_language(lang):
    assert _codes(_paste(OLD_DEVICE[lang]))[:1] == ["framework-gpu-arch-unsupported"]


@pytest.mark.parametrize("lang", list(CUDNN))
def test_cudnn_dialog_in_every_catalogue_language(lang):
    assert _codes(_paste(CUDNN[lang]))[:1] == ["cudnn-unusable"]


@pytest.mark.parametrize("lang", ["english", "japanese", "german", "portuguese_brazilian"])
def test_first_line_alone_ranks_an_old_driver_then_none(lang):
    # the dialog's first line is shared by NotFind and OldVersion: a ranked answer, not silence,
    # an old driver first and a missing one as what it could also be
    first = OLD_VERSION[lang].split("\r\n")[0]
    expl = explain_text(first + "\n")
    assert [c.code for c in expl.candidates][:1] == ["driver-too-old-for-build"] and expl.exit_code == 1
    sig = next(e for e in load().match_line(first) if e.id == "waifu2x-caffe-cannot-convert-by-gpu")
    assert "no-nvidia-driver" in sig.could_be


def test_the_harvest_paste_as_written():
    # lltcggie/waifu2x-caffe#65: the title and the reporter's question, no second dialog line
    text = ("Input can not be converted by GPU (version 1.1.8)\n\n1.1.8\nCurrent Nvidia driver version 368.69\n"
            "Is there a way to update to CUDA 8.0 while maintaining 368.69?\n")
    assert _codes(text)[:1] == ["driver-too-old-for-build"]


def test_dialog_quoted_and_prefixed():
    # a paste in a markdown quote, and behind Video2X's log prefix
    quoted = "> " + "\n> ".join(OLD_VERSION["japanese"].split("\r\n")) + "\n"
    assert _codes(quoted)[:1] == ["driver-too-old-for-build"]
    prefixed = "".join(f"2020-09-19 14:02:00.431 | ERROR    | {line}\n" for line in OLD_VERSION["english"].split("\r\n"))
    assert _codes(prefixed)[:1] == ["driver-too-old-for-build"]


def test_182_in_japanese_and_chinese_reads_in_english():
    ja = "ImportError: DLL load failed while importing _rust: このオペレーティング システムでは %1 は実行されません。"
    zh = ('OSError: [WinError 182] 操作系统无法运行 %1。 Error loading '
          '"D:\\anaconda3\\envs\\gpu\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.')
    for line in (ja, zh):
        assert _codes("Traceback (most recent call last):\n" + line + "\n")[:1] == ["library-shadowed"]


def test_the_182_harvest_paste_as_written():
    # VOICEVOX/voicevox_core#645 inside its markdown fence, with the user's Japanese around it
    text = ("Python版を実行した時にこのようなエラーが表示されました。\n\n```\n"
            "$ PYTHONPATH=. python ../example/python/run.py\nTraceback (most recent call last):\n"
            '  File "C:\\Users\\u\\voicevox_core\\.venv\\Lib\\site-packages\\voicevox_core\\_models.py", line 7, in <module>\n'
            "    from ._rust import _to_zenkaku, _validate_pronunciation\n"
            "ImportError: DLL load failed while importing _rust: このオペレーティング システムでは %1 は実行されません。\n```\n")
    assert _codes(text)[:1] == ["library-shadowed"]


def _signature_ids(line: str):
    return {e.id for e in load().match_line(line)}


@pytest.mark.parametrize("line", [
    # waifu2x-caffe's own success texts (MessagecuDNNOK, a finished conversion)
    "You can use cuDNN",
    "cuDNNを使えます。",
    "Successful converted",
    # a user's sentence about drivers, not the program's dialog
    "I think my CUDA driver is old, the GPU conversion is slow",
    "The GPU can convert the file now",
])
def test_near_misses_match_no_waifu2x_signature(line):
    assert not {i for i in _signature_ids(line) if i.startswith("waifu2x-caffe")}, _signature_ids(line)


@pytest.mark.parametrize("line", [
    # Windows' neighbours of 182: 126 (a DLL missing) and 193 (a DLL of another architecture)
    "OSError: [WinError 126] The specified module could not be found. Error loading \"c10.dll\" or one of its dependencies.",
    "ImportError: DLL load failed while importing _C: %1 is not a valid Win32 application.",
    # prose about an operating system that cannot run a program
    "The operating system cannot run this installer on Windows 7",
])
def test_182_near_misses_are_not_read_as_another_build(line):
    assert "windows-dll-invalid-ordinal" not in _signature_ids(line)
    assert "library-shadowed" not in match_codes(line)


def test_every_new_signature_names_its_source():
    from stackpeel.knowledge import load as load_kb

    kb = load_kb()
    ids = {"waifu2x-caffe-cuda-driver-old", "waifu2x-caffe-cannot-convert-by-gpu", "waifu2x-caffe-cuda-device-old",
           "waifu2x-caffe-cuda-driver-not-found", "waifu2x-caffe-cudnn-cannot-be-used", "windows-dll-invalid-ordinal"}
    found = {sig.id: sig for sig in kb.signatures() if sig.id in ids}
    assert set(found) == ids
    assert all("waifu2x-caffe" in s.source or "winerror.h" in s.source for s in found.values())
