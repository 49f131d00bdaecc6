"""Plugins: real distributions installed into a fresh venv (tests/conftest.py ``plugin_venv``):
templates/plugin (a working check with a probe and two codes) and tests/data/plugin_pkg (a
marker plugin, and one plugin per way of breaking). Every run is a real ``stackpeel`` process
of that venv diagnosing the stack venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, no_compiler_path

pytestmark = pytest.mark.slow

BROKEN = {
    "plugin.broken_import": ("plugin-load", "ImportError: stackpeel-test-plugins: this plugin needs libfoo"),
    "plugin.broken_toml": ("plugin-load", "knowledge base is invalid: bad.toml"),
    "plugin.broken_decl": ("plugin-load", "probe 'nowhere.nothing' names"),
    "plugin.broken_ns": ("plugin-load", "a plugin's finding codes start with 'broken-ns-'"),
    "plugin.broken_probe.raises": ("probe-exception", "OSError: libfoo.so.1"),
    "plugin.broken_probe.segfaults": ("signal", "SIGSEGV"),
    "plugin.broken_probe.junk": ("bad-output", "returned list, not a dict"),
    "plugin.broken_eval.divides": ("evaluate-exception", "division by zero"),
    "plugin.broken_eval.undeclared": ("evaluate-exception", "emitted broken-eval-never but declares only codes = ()"),
}


def stackpeel(venv, *args, env=None, timeout=300):
    return subprocess.run([str(venv / "bin" / "stackpeel"), *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=str(venv.parent))


@pytest.fixture
def env(clean_env, tmp_path):
    return dict(clean_env, STACKPEEL_TEST_MARKER=str(tmp_path / "marks"), XDG_CACHE_HOME=str(tmp_path / "cache"))


def test_list_shows_each_plugin_check_with_its_distribution(plugin_venv, env):
    p = stackpeel(plugin_venv, "list", env=env)
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if "plugin.example.compiler_version" in ln)
    assert "[from stackpeel-plugin-example 0.1.0]" in line and "requires toolchain.c_compiler" in line
    assert "  toolchain.c_compiler " in p.stdout and "[from" not in next(
        ln for ln in p.stdout.splitlines() if "  toolchain.c_compiler " in ln)
    data = {c["id"]: c for c in json.loads(stackpeel(plugin_venv, "list", "--format", "json", env=env).stdout)}
    assert data["plugin.example.compiler_version"]["origin"] == "stackpeel-plugin-example 0.1.0"
    assert data["plugin.example.compiler_version"]["codes"] == ["example-compiler-too-old",
                                                              "example-compiler-unusable"]
    assert data["toolchain.c_compiler"]["origin"] == "builtin"
    # each broken plugin is one entry of its own, attributed to its distribution
    assert data["plugin.broken_import"]["origin"] == "stackpeel-test-plugins 0.0.1"
    off = {c["id"] for c in json.loads(stackpeel(plugin_venv, "list", "--format", "json", "--no-plugins",
                                                 env=env).stdout)}
    assert "toolchain.c_compiler" in off and not any(i.startswith("plugin.") for i in off)
    by_env = {c["id"] for c in json.loads(stackpeel(plugin_venv, "list", "--format", "json",
                                                    env=dict(env, STACKPEEL_NO_PLUGINS="1")).stdout)}
    assert by_env == off


def test_codes_documents_plugin_codes_but_never_lets_one_reword_a_builtin(plugin_venv, env):
    p = stackpeel(plugin_venv, "codes", "example-compiler-too-old", env=env)
    assert p.returncode == 0 and "older than the example library supports" in p.stdout
    assert "export CC=/usr/bin/gcc-12" in p.stdout
    builtin = stackpeel(plugin_venv, "codes", "no-c-compiler", "--format", "json", env=env)
    assert json.loads(builtin.stdout)[0]["title"] == "No C compiler that Triton can find"
    assert stackpeel(plugin_venv, "codes", "example-compiler-too-old", "--no-plugins", env=env).returncode == 2


def test_plugin_check_runs_and_each_broken_plugin_is_its_own_error(plugin_venv, env, stack_python):
    p = stackpeel(plugin_venv, "check", "--python", stack_python, "--only", "plugin,toolchain", "--format", "json",
                  "--fresh", env=env)
    assert p.returncode == 1, p.stderr  # errors: stackpeel does not claim health it could not measure
    report = json.loads(p.stdout)
    results = {r["id"]: r for r in report["results"]}
    good = results["plugin.example.compiler_version"]
    assert good["status"] == "pass" and good["facts"]["compiler"] and good["facts"]["major"] >= 9
    assert good["requires"] == ["toolchain.c_compiler"]
    assert results["plugin.marker.counted"]["status"] == "pass"
    for cid, (reason, text) in BROKEN.items():
        r = results[cid]
        assert r["status"] == "error", (cid, r["summary"])
        assert r["failure"]["reason"] == reason, (cid, r["failure"])
        assert text in r["summary"] + r["failure"]["detail"] + r["failure"]["stderr_tail"], (cid, r)
    for cid in ("plugin.broken_import", "plugin.broken_toml", "plugin.broken_decl", "plugin.broken_ns"):
        assert "stackpeel-test-plugins 0.0.1" in results[cid]["summary"]
    assert "evaluation by the plugin broken_eval (stackpeel-test-plugins 0.0.1)" in \
        results["plugin.broken_eval.divides"]["summary"]
    # the broken plugins harm nothing else: the built-ins end as they do without any plugin
    off = json.loads(stackpeel(plugin_venv, "check", "--python", stack_python, "--only", "toolchain,system.platform", "--format",
                               "json", "--fresh", "--no-plugins", env=env).stdout)
    builtin = {r["id"]: r["status"] for r in report["results"] if not r["id"].startswith("plugin.")}
    assert builtin == {r["id"]: r["status"] for r in off["results"]}
    assert builtin["toolchain.extension_build"] == "pass"
    assert report["diagnosis"]["blocking"] == off["diagnosis"]["blocking"]
    assert sorted(report["diagnosis"]["errors"]) == sorted(BROKEN)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(report, json.loads((ROOT / "docs" / "report.schema.json").read_text()))


def test_plugin_finding_is_nested_under_the_builtin_root_cause(plugin_venv, env, stack_python, tmp_path):
    env = dict(env, PATH=no_compiler_path(tmp_path))
    p = stackpeel(plugin_venv, "check", "--python", stack_python, "--only", "plugin.example", "--format", "json",
                  "--fresh", env=env)
    report = json.loads(p.stdout)
    assert p.returncode == 1
    roots = report["diagnosis"]["blocking"]
    assert [r["codes"] for r in roots] == [["no-c-compiler"]]
    assert roots[0]["symptoms"] == [{"check": "plugin.example.compiler_version",
                                     "path": ["toolchain.c_compiler", "plugin.example.compiler_version"]}]
    mine = next(r for r in report["results"] if r["id"] == "plugin.example.compiler_version")
    assert [f["code"] for f in mine["findings"]] == ["example-compiler-unusable"]
    text = stackpeel(plugin_venv, "check", "--python", stack_python, "--only", "plugin.example", "--fresh",
                     "--no-color", env=env).stdout
    assert "no-c-compiler explains:" in text
    assert text.index("[example-compiler-unusable]") > text.index("no-c-compiler explains:")


def test_the_template_tests_pass_against_the_installed_template(plugin_venv, env, stack_python):
    """templates/plugin/tests run as a plugin author runs them: pytest, the plugin installed
    (this test's interpreter has pytest; the fresh venv's site-packages come first)."""
    site = next((plugin_venv / "lib").glob("python3*/site-packages"))
    env = dict(env, PYTHONPATH=str(site), VIRTUAL_ENV=str(os.path.dirname(os.path.dirname(stack_python))))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:stackpeel",
                        str(ROOT / "templates" / "plugin" / "tests")], capture_output=True, text=True, env=env,
                       timeout=300, cwd=str(plugin_venv.parent))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "4 passed" in p.stdout


def test_builtins_are_registered_through_the_same_entry_point_group():
    """stackpeel's own pyproject declares every built-in module under stackpeel.checks, and
    the installed metadata is what the registry reads."""
    import tomllib

    from stackpeel import plugins, registry

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["stackpeel.checks"]
    assert sorted(declared.values()) == sorted(registry.BUILTIN_MODULES)
    found = plugins.discover(third_party=False)
    assert [p.module for p in found] == list(registry.BUILTIN_MODULES) and all(p.builtin for p in found)
    assert {c.id for p in found for c in p.classes} == {c.id for c in registry.load(plugins=False)}


def test_a_repeat_run_reuses_plugin_results_until_its_wording_changes(plugin_venv, env, stack_python):
    def run():
        p = stackpeel(plugin_venv, "check", "--python", stack_python, "--only", "plugin.example", env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stderr

    run()
    assert "results reused" in run()
    toml = next(plugin_venv.glob("lib/python3*/site-packages/stackpeel_plugin_example/knowledge/example.toml"))
    st = toml.stat()
    os.utime(toml, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert "results reused" not in run()
