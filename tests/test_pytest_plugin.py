"""The pytest plugin on a real small test suite (pytester, each run a real pytest process),
checking the real stack venv, and with every C compiler removed from PATH."""

from __future__ import annotations

import pytest

from conftest import no_compiler_path

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow

SUITE = '''
import pytest

@pytest.mark.needs_stack("toolchain.extension_build")
def test_builds_an_extension():
    pass

@pytest.mark.needs_stack("system.platform", "triton.build")
def test_needs_triton_to_build():
    pass

@pytest.mark.needs_stack("system.platform")
def test_needs_only_the_platform():
    pass

def test_needs_nothing():
    pass
'''

ROOT_CAUSE = "root cause no-c-compiler: No C compiler that Triton can find"


@pytest.fixture
def suite(pytester, monkeypatch, tmp_path):
    from importlib.metadata import entry_points

    if not any(ep.value == "stackpeel.pytest_plugin" for ep in entry_points(group="pytest11")):
        pytest.fail("stackpeel's pytest11 entry point is not installed in this venv: run "
                    "`pip install -e '.[test]'` again (pyproject.toml declares new entry points)")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for k in ("CC", "PYTHONPATH", "TRITON_CACHE_DIR"):
        monkeypatch.delenv(k, raising=False)
    pytester.makepyfile(test_gpu_library=SUITE)
    return pytester


def test_without_the_option_nothing_runs(suite, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", no_compiler_path(tmp_path))  # would skip two tests if anything checked
    result = suite.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    assert "plugins: stackpeel-" in result.stdout.str()  # loaded through its pytest11 entry point
    assert "= stackpeel =" not in result.stdout.str() and "checking" not in result.stdout.str()


def test_healthy_checks_let_the_marked_tests_run_and_the_report_closes_the_session(suite, stack_python):
    result = suite.runpytest_subprocess("--stackpeel", f"--stackpeel-python={stack_python}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    assert f"stackpeel: checking {stack_python} once" in out
    result.stdout.fnmatch_lines(["*= stackpeel =*", f"stackpeel *: {stack_python} (Python 3.*)*"])
    # the whole report of the checks the marks name and what they require: triton.build passes
    # on this CPU-only torch, which the report still names as a root cause (of torch.cuda)
    assert "Checks: " in out and "torch-cpu-only-build" in out


def test_no_compiler_skips_exactly_the_tests_that_need_it_with_the_root_cause(suite, stack_python, monkeypatch,
                                                                              tmp_path):
    monkeypatch.setenv("PATH", no_compiler_path(tmp_path))
    result = suite.runpytest_subprocess("--stackpeel", f"--stackpeel-python={stack_python}", "-v", "-rs",
                                        "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines([
        "*::test_builds_an_extension SKIPPED (stackpeel: *",
        "*::test_needs_triton_to_build SKIPPED (stackpeel: *",
        "*::test_needs_only_the_platform PASSED*",
        "*::test_needs_nothing PASSED*",
        f"SKIPPED [[]1[]] test_gpu_library.py:*: stackpeel: toolchain.extension_build blocked, {ROOT_CAUSE}",
        "SKIPPED [[]1[]] test_gpu_library.py:*: stackpeel: triton.build fails, root cause *no-c-compiler: No C "
        "compiler that Triton can find",
    ])
    out = result.stdout.str()
    assert "BLOCKING ROOT CAUSES" in out and " ✗ no-c-compiler: " in out and "apt-get install -y gcc" in out


def test_strict_makes_them_errors_at_setup(suite, stack_python, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", no_compiler_path(tmp_path))
    result = suite.runpytest_subprocess("--stackpeel=system", f"--stackpeel-python={stack_python}",
                                        "--stackpeel-strict", "-p", "no:cacheprovider")
    # an error at setup, not a failure of the test: pytest's own root-cause/symptom split
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_builds_an_extension*",
                                 f"stackpeel: toolchain.extension_build blocked, {ROOT_CAUSE}"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_unknown_checks_and_a_path_taken_for_checks_are_usage_errors(suite, stack_python):
    suite.makepyfile(test_typo='''
import pytest

@pytest.mark.needs_stack("toolchain.extension_buld")
def test_typo():
    pass
''')
    result = suite.runpytest_subprocess("--stackpeel", f"--stackpeel-python={stack_python}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*did you mean 'toolchain.extension_build'*"])
    result = suite.runpytest_subprocess("--stackpeel", "test_typo.py", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--stackpeel took 'test_typo.py' as the checks to run*"])
