"""Recall of explain on threads sampled by symptom, the way the blind sets are sampled (sweepc):
21 fresh training threads (tests/corpus/explain/*.log with ``# collected: training-2026-12-02g``)
found by searching users' symptoms ("ImportError: undefined symbol", "Illegal instruction (core
dumped)", "No module named triton", ...) in search order, fixed by class from the programs that
print the messages.

What the threads showed, and the class each fix covers:

- an extension imported before torch (extension-imported-without-torch, a new code): the loader
  misses a symbol that every torch release exports, libtorch_python's ``THPVariableClass`` or
  ATen's ``at::UndefinedTensorImpl::_singleton`` (pytorch/extension-cpp#6, lufficc/SSD#125,
  pytorch#6097); a symbol that changed between releases stays extension-torch-mismatch.
- a CPU without the instructions a build needs (cpu-instruction-set-unsupported, a new code): the
  shell's SIGILL report ``Illegal instruction (core dumped)``, zsh's ``illegal hardware
  instruction``, its translations, and TensorFlow's cpu_feature_guard (Paddle#43, #58, #69003);
  CUDA's ``an illegal instruction was encountered`` is a GPU fault and stays out.
- Triton absent, retold: ``No module named 'triton'`` followed by any punctuation (a full-width
  bracket), and ``No triton module found`` / ``triton module not found`` (lora-scripts#92,
  Pallaidium#41).
- ``No module named 'triton. common'`` retyped with a space, under ComfyUI's compile-model node
  (torch.compile): torch's Inductor against another Triton (triton-windows#89).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import family_tests, healthy_test, users_words_test

FAMILIES = {
    "extension-imported-without-torch": [
        # the loader's words for libtorch_python's and ATen's always-exported symbols
        "ImportError: /home/u/anaconda3/lib/python3.6/site-packages/lltm_cpp.cpython-36m-x86_64-linux-gnu.so: undefined symbol: THPVariableClass",
        "ImportError: ./smtl_cuda.so: undefined symbol: THPVariableClass",
        "ImportError: /usr/lib/python3/dist-packages/my_ext.so: undefined symbol: THPVariable_Wrap",
        "undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE",
        "ImportError: /work/ext/_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE",
    ],
    "cpu-instruction-set-unsupported": [
        # the shell's report of a child killed by SIGILL, and its wordings
        "Illegal instruction (core dumped)",
        "Illegal instruction",
        "/usr/local/bin/paddle: line 46:  4977 Illegal instruction     (core dumped) ${DEBUGGER} $MYDIR/../opt/paddle/bin/paddle_trainer ${@:2}",
        "zsh: illegal hardware instruction  python -c 'import tensorflow'",
        "Fatal Python error: Illegal instruction",
        "Instrucción ilegal (`core' generado)",
        "非法指令 (核心已转储)",
        "Ungültiger Maschinenbefehl (Speicherabzug geschrieben)",
        # tensorflow/core/platform/cpu_feature_guard.cc
        "The TensorFlow library was compiled to use AVX instructions, but these aren't available on your machine.",
        "2024-01-02 10:00:00.000000: F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX2 instructions, but these aren't available on your machine.",
    ],
    "triton-not-installed": [
        "Error：No module named 'triton'【run install-cn.ps1 success ,run train.ps1 error】",
        "ModuleNotFoundError: No module named 'triton'.",
        "No triton module found",
        "triton module not found",
    ],
}


test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# users' prose carrying the same words
test_users_words = users_words_test({
    "after installing the extension an undefined symbol: THPVariableClass error is raised when I import it": "extension-imported-without-torch",
    "Running the script just prints Illegal instruction (core dumped) and exits": "cpu-instruction-set-unsupported",
    "No triton module found - happens every run": "triton-not-installed",
})


def test_a_symbol_that_changed_between_torch_releases_stays_a_build_for_another_torch():
    for line in ("ImportError: /x/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
                 "undefined symbol: _ZNK3c1017SymbolicShapeMeta18init_is_contiguousEv"):
        codes = [c.code for c in explain_text("step 1\n" + line + "\n").candidates]
        assert codes[:1] == ["extension-torch-mismatch"], (line, codes)


def test_the_always_exported_symbol_outranks_a_release_specific_one_on_the_same_line():
    line = ("`undefined symbol: _ZN2at19UndefinedTensorImpl10_singletonE` and "
            "`undefined symbol: _ZN6caffe26detail37_typeMetaDataInstance_preallocated_32E`.")
    codes = [c.code for c in explain_text(line + "\n").candidates]
    assert codes[:1] == ["extension-imported-without-torch"], codes


def test_cuda_illegal_instruction_is_a_gpu_fault_not_the_cpu():
    kb = load()
    for line in ("RuntimeError: CUDA error: an illegal instruction was encountered",
                 "CUDA error: Illegal instruction was encountered",
                 "cudaErrorIllegalInstruction: an illegal instruction was encountered"):
        assert "sigill-illegal-instruction" not in [e.id for e in kb.match_line(line)], line


def test_sigill_is_generic_and_says_what_else_it_could_be():
    kb = load()
    entries = [e for e in kb.match_line("Illegal instruction (core dumped)") if e.id == "sigill-illegal-instruction"]
    assert entries and entries[0].weight == 2 and "library-wrong-format" in entries[0].could_be


@pytest.mark.parametrize("line", [
    "ModuleNotFoundError: No module named 'triton. common'",
    "ModuleNotFoundError: No module named 'triton.common'",
])
def test_triton_common_under_a_compile_node_is_torch_against_another_triton(line):
    log = ("Hello, I am getting an error when using compile model node in ComfyUI: " + line + "\n"
           "triton :3.1.0\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[:1] == ["triton-torch-version-mismatch"], codes


def test_a_triton_submodule_is_not_triton_absent():
    kb = load()
    for line in ("ModuleNotFoundError: No module named 'triton.common'",
                 "ModuleNotFoundError: No module named 'triton_kernels'",
                 "No module named 'triton.backends.nvidia._C'"):
        ids = [e.id for e in kb.match_line(line)]
        assert "triton-not-installed-prose" not in ids and "triton-not-installed" not in ids, (line, ids)


# healthy lines with the same words name nothing
test_healthy_lines_name_nothing = healthy_test([
    "Your CPU supports instructions that this TensorFlow binary was not compiled to use: AVX2 FMA",
    "flags : fpu vme de pse tsc msr pae mce cx8 apic sep avx avx2 fma",
    "checking for THPVariableClass in libtorch_python.so... yes",
    "triton module found at /usr/lib/python3/site-packages/triton",
    "Loaded extension lltm_cpp (THPVariable_Wrap resolved)",
])
