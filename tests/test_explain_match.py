"""match_codes: the small API other commands (``stackpeel run``) use to link text to codes."""

from stackpeel.explain import match_codes


def test_c_compiler_message():
    assert match_codes("RuntimeError: Failed to find C compiler. Please specify via CC environment variable "
                       "or set triton.knobs.build.impl.") == ["no-c-compiler"]


def test_deepest_first_root_before_symptom():
    text = ("UserWarning: Triton is not supported on current platform, roll back to CPU.\n"
            "RuntimeError: Failed to find C compiler. Please specify via CC environment variable")
    assert match_codes(text) == ["no-c-compiler", "fla-cpu-fallback"]


def test_refinement_uses_the_text():
    text = ("ImportError: /venv/lib/python3.10/site-packages/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so: "
            "undefined symbol: _ZN3c104cuda9SetDeviceEi")
    assert match_codes(text) == ["causal-conv1d-torch-mismatch"]


def test_no_match_and_bad_input():
    assert match_codes("") == []
    assert match_codes("all good") == []
    assert match_codes(None) == []  # type: ignore[arg-type]


def test_generic_extension_abi_break_and_old_nvcc():
    assert match_codes("ImportError: /venv/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-linux-gnu"
                       ".so: undefined symbol: _ZN3c104cuda9SetDeviceEi") == ["extension-torch-mismatch"]
    assert match_codes("nvcc fatal   : Unsupported gpu architecture 'compute_120'") == ["nvcc-arch-unsupported"]
