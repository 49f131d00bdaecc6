"""Tests of the example plugin: the verdicts from recorded facts, and one real run.

Run with the plugin installed (pip install -e .) in the environment that has stackpeel.
"""

import pytest

from stackpeel import check, registry
from stackpeel.checks.base import Context
from stackpeel.model import Status

from stackpeel_plugin_example.checks import CompilerVersion


def verdict(**facts):
    return CompilerVersion().evaluate(facts, Context(host={}, target={"python": "python3"}, deps={}))


def test_old_gcc_is_a_root_cause_with_the_observed_version():
    v = verdict(compiler="/usr/bin/gcc-8", version="8.3.0", major=8, is_gcc=True, minimum=9)
    assert v.status is Status.FAIL
    assert [f.code for f in v.findings] == ["example-compiler-too-old"]
    assert "8.3.0" in v.findings[0].message and "GCC 9 or newer" in v.findings[0].message


def test_no_compiler_is_a_symptom_of_the_toolchain():
    v = verdict(compiler=None, minimum=9)
    assert v.status is Status.FAIL and v.findings[0].code == "example-compiler-unusable"


def test_current_gcc_passes():
    assert verdict(compiler="/usr/bin/gcc", version="12.2.0", major=12, is_gcc=True, minimum=9).status is Status.PASS


def test_registered_and_runs_for_real():
    ids = {c.id: c for c in registry.load()}
    if "plugin.example.compiler_version" not in ids:
        pytest.fail("the plugin is not installed: pip install -e . (its entry point registers it)")
    assert ids["plugin.example.compiler_version"].origin.startswith("stackpeel-plugin-example ")
    result = check(only=["plugin.example"]).result("plugin.example.compiler_version")
    assert result.status in (Status.PASS, Status.FAIL), result.summary
