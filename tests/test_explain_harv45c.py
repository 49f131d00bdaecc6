"""harv45c: an unbiased harvest of GPU ML inside desktop applications (Krita AI Diffusion's managed
ComfyUI server, Blender add-ons such as dream-textures, editor assistants that start a local model
server such as Tabby), scored blind, and the general fixes its misses ask for (docs/dev/harv45c.md).

Twenty new training-side logs; explain named fifteen first before any change (one of them only by
resemblance). The fixed misses:
- clap's ``error: invalid value 'cuda' for '--device <DEVICE>'`` (``[possible values: cpu]``): a Rust
  CLI whose GPU backends are cargo features was built without the CUDA one (TabbyML/tabby#1163, A1);
  now ``framework-cpu-only-build``;
- ``exited with status code -1073741515``: Tabby's llama-server supervisor reports the child's exit
  status in words the number reader did not know, so STATUS_DLL_NOT_FOUND was never named
  (TabbyML/tabby#4117, silent); the exit-status context now reads ``with status code``;
- torch's ``fbgemm.dll`` loader failure as a user retypes it (``fbgemm.dll - The specified module could
  not be found``): named first only by resemblance (Acly/krita-ai-diffusion#965); now a signature of
  ``msvc-runtime-missing``.
Each message is a training-side thread's paste or the library's own text, run through the wrappers
pasted logs put around lines, with near-misses and healthy lines that keep their reading.
"""

from __future__ import annotations

from explain_helpers import codes, silent
from stackpeel.explain.numbers import read_numbers
from test_explain_patterns import family_tests, healthy_test, ids as _ids

# clap_builder's InvalidValue error for tabby's Device ValueEnum (TabbyML/tabby#1163's paste)
CLAP_CUDA = "error: invalid value 'cuda' for '--device <DEVICE>'"
CLAP_ROCM = "error: invalid value 'rocm' for '--device <DEVICE>'"
# torch's Windows DLL loader failure as users retype it (Acly/krita-ai-diffusion#965: the title and a comment)
FBGEMM_TITLE = "fbgemm.dll - The specified module could not be found"
FBGEMM_COMMENT = "As it is still giving the issue that fbgemm.dll or one of its dependencies are corrupted"
# Tabby's crates/llama-cpp-server/src/supervisor.rs (TabbyML/tabby#4117): 0xC0000135, STATUS_DLL_NOT_FOUND
TABBY_EXIT = "llama-server <embedding> exited with status code -1073741515"

FAMILIES = {
    "framework-cpu-only-build": [CLAP_CUDA, CLAP_ROCM],
    "msvc-runtime-missing": [FBGEMM_TITLE, FBGEMM_COMMENT],
    "library-missing": [TABBY_EXIT],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)



def test_tabby_paste_names_the_build_without_cuda():
    # TabbyML/tabby#1163's paste: clap's refusal, then the values this build has
    text = (
        "target/debug/tabby  serve  --model TabbyML/StarCoder-1B --port 8181   --device cuda\n"
        + CLAP_CUDA + "\n"
        "  [possible values: cpu]\n"
        "\n"
        "  tip: a similar value exists: 'cpu'\n"
    )
    assert codes(text)[:1] == ["framework-cpu-only-build"]


def test_supervisor_status_code_is_read_as_its_windows_name():
    line = ("2025-04-05T04:59:24.559048Z  WARN llama_cpp_server::supervisor: crates\\llama-cpp-server\\src\\"
            "supervisor.rs:124: llama-server <embedding> exited with status code -1073741515, args: `Command`")
    assert "STATUS_DLL_NOT_FOUND" in read_numbers(line)
    assert codes(line)[:1] == ["library-missing"]
    # the same words before an ordinary status name nothing (a bare 1 says no more than "failed")
    assert silent("worker exited with status code 0\n")


def test_near_misses_stay_quiet():
    for line, sig in (
        # a value the build does not list that is no GPU backend compiled out
        ("error: invalid value 'cpu' for '--device <DEVICE>'", "clap-device-value-not-compiled-in"),
        ("error: invalid value 'metal' for '--device <DEVICE>'", "clap-device-value-not-compiled-in"),
        ("error: invalid value 'cuda' for '--model <MODEL>'", "clap-device-value-not-compiled-in"),
        ("  [possible values: cpu, cuda, rocm, vulkan]", "clap-device-value-not-compiled-in"),
        # fbgemm.dll named where nothing failed
        ("Copying fbgemm.dll to the torch\\lib folder", "fbgemm-dll-not-loadable-retyped"),
        ("fbgemm.dll - 4.2 MB", "fbgemm-dll-not-loadable-retyped"),
    ):
        assert sig not in _ids(line), line


test_healthy_lines_name_nothing = healthy_test([
    "tabby serve --model TabbyML/StarCoder-1B --device cuda",
    "  [possible values: cpu, cuda]",
    "2025-04-05T04:59:12.906458Z  INFO tabby::serve: crates/tabby/src/serve/mod.rs:164: Listening at 0.0.0.0:8080",
    "llama-server <embedding> exited with status code 0",
    "C:\\venv\\Lib\\site-packages\\torch\\lib\\fbgemm.dll",
])
