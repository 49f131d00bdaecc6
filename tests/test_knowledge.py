"""The knowledge base (src/stackpeel/knowledge/*.toml): one place for every finding code's words.

The format is docs/dev/KNOWLEDGE.md. These tests load the real files, build real checks and
run them through the real ``evaluate`` wrapper; broken knowledge-base files are written to a
temporary directory and loaded the way the bundled ones are.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from stackpeel import knowledge, registry
from stackpeel.checks.base import Check, Context, UndeclaredCode
from stackpeel.explain.knowledge import load as load_explain
from stackpeel.knowledge import KnowledgeError
from shapes import answer

HOST = {"pkg_manager": "apt", "is_root": True, "conda_prefix": None}


def _ctx() -> Context:
    return Context(HOST, {"python": "/usr/bin/python3"}, {})


# -- the bundled files ------------------------------------------------------------

def test_every_code_has_its_words_and_a_fix():
    kb = knowledge.load()
    assert len(kb.codes) >= 60
    for c in kb.codes.values():
        assert c.layer in knowledge.LAYERS and c.kind in knowledge.KINDS, c.code
        assert c.title and "{" not in c.title, c.code
        assert len(c.meaning) > 40 and "{" not in c.meaning, c.code
        assert len(c.fix) > 20, f"{c.code} has no fix"
        for link in c.links:
            assert link.startswith("https://"), (c.code, link)


def test_files_are_one_per_layer_plus_explain_only():
    kb = knowledge.load()
    for c in kb.codes.values():
        stem = c.file.rsplit(".", 1)[0]
        assert stem == c.layer or stem == knowledge.EXPLAIN_ONLY, (c.code, c.file)


def test_every_code_is_declared_by_a_check_or_explain_only():
    classes = registry.load()
    assert registry.uncovered_codes(classes) == []
    declared = {code for cls in classes for code in cls.codes}
    # explain-only means it: no check declares such a code
    assert not declared & set(knowledge.load().explain_only())
    for cls in classes:
        assert cls.codes, f"{cls.id} declares no finding codes"


def test_each_check_declares_exactly_the_codes_its_source_emits():
    """The declaration and the body agree: a declared code no finding() call names is
    dead wording; an emitted undeclared code is caught at run time (next test)."""
    from shapes import check_source

    for cls in registry.load():
        src = check_source(cls)
        named = set(re.findall(r'"([a-z0-9]+(?:-[a-z0-9]+)+)"', src)) & set(knowledge.load().codes)
        assert set(cls.codes) == named, (cls.id, sorted(set(cls.codes) ^ named))


def test_causes_is_the_inverse_of_caused_by():
    kb = knowledge.load()
    fallback = kb.get("fla-cpu-fallback")
    assert fallback.kind == "symptom" and "no-c-compiler" in fallback.caused_by
    assert "fla-cpu-fallback" in kb.get("no-c-compiler").causes
    for c in kb.codes.values():
        for effect in c.causes:
            assert c.code in kb.get(effect).caused_by


def test_log_signatures_become_explain_entries_with_the_codes_words():
    kb = knowledge.load()
    ex = load_explain()
    assert len(ex.entries) == len(kb.signatures()) >= 50
    for e in ex.entries:
        code = kb.get(e.codes[0])
        assert e.explanation == code.meaning
        assert e.fix == knowledge.render_prose(code.fix, {})
        assert not [p for p in code.params() if f"<{p}>" in e.fix], (code.code, e.fix)
    # the check that confirms a code live is one that declares it
    for code, cid in ex.checks.items():
        assert code in next(c for c in registry.load() if c.id == cid).codes


# -- findings rendered from templates -----------------------------------------------

def test_finding_renders_the_template_with_observed_values(tmp_path):
    path = tmp_path / "toolchain.toml"
    path.write_text(textwrap.dedent('''
        [no-c-compiler]
        layer = "toolchain"
        kind = "root"
        severity = "blocking"
        title = "No C compiler that Triton can find"
        meaning = "CC is unset and neither gcc nor clang is on PATH, so Triton cannot build its helper."
        message = "CC is unset and neither gcc nor clang is on PATH ({path})."
        messages.several-words = "CC={cc!r} holds several words."
        consequence = "Every Triton kernel fails."
        fix = "Install a C compiler."
        packages = {apt = "gcc libc6-dev"}
        commands = [["shell", "export CC={cc_path}"]]
    '''))
    kb = knowledge.load((str(path),))
    spec = kb.get("no-c-compiler")
    assert spec.render_message(params={"path": "/usr/bin:/bin"}) == \
        "CC is unset and neither gcc nor clang is on PATH (/usr/bin:/bin). Every Triton kernel fails."
    assert spec.render_message("several-words", {"cc": "ccache gcc"}).startswith("CC='ccache gcc' holds")
    assert "<path>" in spec.render_message(params={})  # a missing value shows, and the wording test fails
    assert spec.render_message((None, "several-words"), {"path": "/bin", "cc": "cc -m32"}) == (
        "CC is unset and neither gcc nor clang is on PATH (/bin). CC='cc -m32' holds several words. "
        "Every Triton kernel fails.")
    with pytest.raises(KeyError, match="no message variant 'nope'"):
        spec.render_message("nope", {})
    assert set(spec.params()) == {"path", "cc", "cc_path"}


def test_context_finding_uses_the_bundled_knowledge_base():
    f = _ctx().finding("no-c-compiler", message="legacy text", cc_path="/usr/bin/cc")
    spec = knowledge.get("no-c-compiler")
    assert (f.title, f.message, f.severity) == (spec.title, "legacy text", spec.severity)
    cmds = [c.command for c in f.remedy.commands]
    assert "apt-get update && apt-get install -y gcc libc6-dev" in cmds
    assert "export CC=/usr/bin/cc" in cmds
    with pytest.raises(KeyError, match="unknown finding code"):
        _ctx().finding("no-such-code", message="x")


# -- declarations are enforced ---------------------------------------------------------

class _Declares(Check):
    id = "test.declares"
    title = "declares one code, emits another"
    layer = "toolchain"
    codes = ("no-c-compiler",)

    def evaluate(self, facts, ctx):
        return ctx.verdict("x", ctx.finding(facts["code"], message="m"))


def test_a_check_emitting_an_undeclared_code_fails_under_the_test_suite(monkeypatch):
    check = _Declares()
    assert check.evaluate({"code": "no-c-compiler"}, _ctx()).findings[0].code == "no-c-compiler"
    with pytest.raises(UndeclaredCode, match=r"test.declares: emitted python-headers-missing"):
        check.evaluate({"code": "python-headers-missing"}, _ctx())
    monkeypatch.setenv("STACKPEEL_STRICT_CODES", "0")  # users' runs: the finding is kept, not lost
    assert check.evaluate({"code": "python-headers-missing"}, _ctx()).findings[0].code == "python-headers-missing"


def test_registry_rejects_a_code_the_knowledge_base_lacks():
    class Bad(Check):
        id = "test.bad"
        title = "bad"
        layer = "toolchain"
        codes = ("no-such-code",)

    with pytest.raises(registry.RegistryError, match="no-such-code"):
        registry.validate([Bad])

    class Str(Check):
        id = "test.str"
        title = "codes as a bare string"
        layer = "toolchain"
        codes = "no-c-compiler"  # type: ignore[assignment]

    with pytest.raises(registry.RegistryError, match="tuple"):
        registry.validate([Str])


# -- validation names the file and the code -----------------------------------------

GOOD = '''
[a-code]
layer = "toolchain"
kind = "root"
severity = "blocking"
title = "A title"
meaning = "What is true and why it matters, long enough to read."
fix = "Do this."
'''


@pytest.mark.parametrize("extra, error", [
    ('colour = "red"', r"toolchain\.toml \[a-code\]: unknown field\(s\) \['colour'\]"),
    ('caused_by = ["nope"]', r"toolchain\.toml \[a-code\]: caused_by names unknown code 'nope'"),
    ('causes = ["a-code"]', r"'causes' is derived"),
    ('message = "bad {template"', r"\[a-code\]: message: bad template"),
    ('[[a-code.log]]\nid = "x"\npatterns = ["(unclosed"]', r"\[a-code\] log #1 \(x\): bad regex"),
    ('[[a-code.log]]\nid = "x"\npatterns = ["ok pattern"]\nweight = 7', r"log #1 \(x\): weight must be 1\.\.3"),
])
def test_validation_errors_name_the_file_and_the_code(tmp_path, extra, error):
    path = tmp_path / "toolchain.toml"
    path.write_text(GOOD + extra + "\n")
    knowledge.load.cache_clear()
    try:
        with pytest.raises(KnowledgeError, match=error):
            knowledge.load((str(path),))
    finally:
        knowledge.load.cache_clear()


def test_a_code_defined_twice_is_refused(tmp_path):
    a, b = tmp_path / "toolchain.toml", tmp_path / "explain_only.toml"
    a.write_text(GOOD)
    b.write_text(GOOD)
    with pytest.raises(KnowledgeError, match=r"explain_only\.toml \[a-code\]: declared twice \(also in toolchain\.toml\)"):
        knowledge.load((str(a), str(b)))


def test_missing_fix_is_refused(tmp_path):
    path = tmp_path / "toolchain.toml"
    path.write_text(GOOD.replace('fix = "Do this."', ""))
    with pytest.raises(KnowledgeError, match=r"\[a-code\]: missing 'fix'"):
        knowledge.load((str(path),))


# -- messages rendered by the checks ----------------------------------------------------

def test_system_layer_messages_come_from_templates():
    from stackpeel.checks.system import Platform

    old = Platform().evaluate(answer(Platform, {"distro": "CentOS Linux 7", "arch": "x86_64", "container": None,
                                                "libc": "glibc", "libc_version": "2.17"}), _ctx())
    assert [f.message for f in old.findings] == [
        "glibc 2.17 is older than 2.28, the oldest that current PyTorch and Triton wheels (manylinux_2_28) "
        "support. pip cannot install their wheels here, or installs builds that fail to load."]
    musl = Platform().evaluate(answer(Platform, {"distro": "Alpine Linux v3.20", "arch": "x86_64", "container": "docker",
                                                 "libc": "musl", "libc_version": "1.2.5"}), _ctx())
    assert musl.findings[0].message.startswith("The C library is musl; PyTorch and Triton publish wheels for glibc")
    assert Platform().evaluate(answer(Platform, {"libc": "glibc", "libc_version": "2.39"}), _ctx()).findings == ()


def _committed_reports():
    import json
    from pathlib import Path

    from stackpeel.model import Report

    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "docs" / "validation").glob("*/reports/*.json"))
    paths.append(root / "tests" / "data" / "toolchain" / "h200_report.json")
    return [(p.name, Report.from_dict(json.loads(p.read_text()))) for p in paths]


def test_every_param_is_filled_in_the_findings_of_real_reports():
    """Today's evaluate bodies on the facts recorded on real machines (H200, CPU): no
    template param is left as ``<name>`` in any message or fix."""
    from stackpeel.replay import rediagnose

    kb = knowledge.load()
    n = 0
    for name, report in _committed_reports():
        for r in rediagnose(report).results:
            for f in r.findings:
                n += 1
                for param in kb.get(f.code).params():
                    assert f"<{param}>" not in f.message, (name, r.id, f.code, param, f.message)
                    assert f"<{param}>" not in f.remedy.text, (name, r.id, f.code, param, f.remedy.text)
    assert n >= 10


# -- one wording: check, explain, run and codes say the same ------------------------------

def test_check_explain_run_and_codes_render_the_same_title_and_fix(tmp_path):
    """no-c-compiler as each command prints it, each run for real: `check` on the stack venv
    with PATH emptied of compilers, `explain` on Triton's message, `run` on a program whose
    library swallows that error, `codes --format json`."""
    import json
    import os
    import subprocess
    import sys

    spec = knowledge.get("no-c-compiler")

    def sp(*args, env=None):
        return subprocess.run([sys.executable, "-m", "stackpeel", *args], capture_output=True, text=True,
                              timeout=300, env=env)

    codes = json.loads(sp("codes", "no-c-compiler", "--format", "json").stdout)[0]
    assert (codes["title"], codes["fix"], codes["meaning"]) == (spec.title, spec.fix, spec.meaning)

    msg = "Failed to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl."
    log = tmp_path / "err.log"
    log.write_text(f"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nRuntimeError: {msg}\n")
    expl = json.loads(sp("explain", str(log), "--no-live", "--format", "json").stdout)
    root = expl["candidates"][0]
    assert (root["code"], root["title"], root["fix"], root["explanation"]) == \
        ("no-c-compiler", spec.title, spec.fix, spec.meaning)

    prog = tmp_path / "swallow.py"
    prog.write_text("import warnings\ntry:\n    raise RuntimeError(%r)\nexcept RuntimeError:\n"
                    "    warnings.warn('roll back to CPU')\n" % msg)
    run = sp("run", "--all", "--", sys.executable, str(prog))
    assert f"evidence for  no-c-compiler: {spec.title}" in run.stderr, run.stderr[-2000:]

    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(sys.executable, bare / "python3")
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(bare)  # no gcc, no clang: what a slim image gives Triton
    chk = sp("check", "--python", sys.executable, "--only", "toolchain.c_compiler", "--format", "json", env=env)
    finding = next(f for r in json.loads(chk.stdout)["results"] for f in r["findings"] if f["code"] == "no-c-compiler")
    assert finding["title"] == spec.title
    assert finding["remedy"]["text"] == spec.fix
    # and the same severity: `codes` prints the knowledge base's, `check` the finding's
    assert codes["severity"] == finding["severity"] == spec.severity.value


def test_no_check_always_overrides_its_codes_severity():
    """A code's severity is one answer: `codes` and the docs print the knowledge base's, `check`
    the finding's. A check may raise or lower it for one observed situation (a variant), but a
    code whose every ctx.finding call in the built-in checks passes the same constant
    ``severity=Severity.X``, other than the knowledge base's, says two things about one cause
    (extension-cxx-standard-too-old was blocking in the knowledge base and always degraded in
    toolchain.cxx_compiler, tools28): change the knowledge base's severity instead."""
    import ast

    from shapes import check_source

    kb = knowledge.load()
    calls: dict = {}
    for cls in registry.load(plugins=False):
        tree = ast.parse(textwrap.dedent(check_source(cls)))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "finding" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                continue
            sev = next((k.value for k in node.keywords if k.arg == "severity"), None)
            const = sev.attr.lower() if isinstance(sev, ast.Attribute) and getattr(sev.value, "id", "") == "Severity" \
                else ("default" if sev is None else "computed")
            calls.setdefault(node.args[0].value, set()).add(const)
    assert len(calls) >= 50
    for code, seen in calls.items():
        if len(seen) == 1 and next(iter(seen)) not in ("default", "computed"):
            assert next(iter(seen)) == kb.get(code).severity.value, \
                (code, f"every check passes severity={next(iter(seen))}, the knowledge base says "
                       f"{kb.get(code).severity.value}")


def test_every_literal_variant_a_check_passes_exists():
    """ctx.finding("code", "variant", ...) in the checks' source: each literal variant (or
    both arms of a conditional) is a messages.<variant> of that code."""
    import ast

    from shapes import check_source

    kb = knowledge.load()
    seen = 0
    for cls in registry.load():
        tree = ast.parse(textwrap.dedent(check_source(cls)))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "finding" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                continue
            code = kb.get(node.args[0].value)
            if len(node.args) < 2:
                assert code.message or any(k.arg == "message" for k in node.keywords), (cls.id, code.code)
                continue
            arg = node.args[1]
            arms = [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]
            arms = [e for a in arms for e in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a])]
            for a in arms:
                if isinstance(a, ast.Constant):
                    seen += 1
                    if a.value is None:
                        assert code.message, (cls.id, code.code)
                    else:
                        assert a.value in code.messages, (cls.id, code.code, a.value)
    assert seen >= 5


def test_no_built_in_check_writes_its_own_message():
    """Every message comes from the knowledge base: no `message=` in the checks' source,
    and every code a check declares has a message or message variants to render."""
    import ast
    from shapes import check_source

    kb = knowledge.load()
    for cls in registry.load(plugins=False):
        tree = ast.parse(textwrap.dedent(check_source(cls)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "finding":
                assert not any(k.arg == "message" for k in node.keywords), (cls.id, ast.dump(node)[:200])
        for code in cls.codes:
            assert kb.get(code).message or kb.get(code).messages, (cls.id, code)


def test_context_sentence_renders_one_variant():
    text = Context.sentence("transformers-fast-path-unavailable", "part-not-installed",
                            funcs="chunk_gated_delta_rule", name="flash-linear-attention")
    assert text == "chunk_gated_delta_rule use the PyTorch reference because flash-linear-attention is not installed"


def test_every_param_is_documented_in_its_files_header():
    from pathlib import Path

    kb = knowledge.load()
    for path in knowledge.default_files():
        head = "\n".join(line for line in Path(path).read_text().splitlines() if line.startswith("#"))
        for c in kb.codes.values():
            if c.file == path.name:
                for p in c.params():
                    assert f"``{p}``" in head, f"{path.name} [{c.code}] uses {{{p}}}: document it in the header"


def test_exception_shapes_give_run_its_codes(tmp_path):
    """[[code.exception]] shapes: the type (qualified, bare or *) and a regex on the message."""
    from stackpeel.explain import match_codes
    from stackpeel.unmask.report import codes_for_exception_text

    path = tmp_path / "toolchain.toml"
    path.write_text(GOOD + textwrap.dedent('''
        [[a-code.exception]]
        type = "subprocess.CalledProcessError"
        message = "returned non-zero exit status 1"
        [[a-code.exception]]
        type = "*"
        message = "cc1: fatal"
    '''))
    kb = knowledge.load((str(path),))
    assert kb.exception_codes("CalledProcessError", "Command '['gcc']' returned non-zero exit status 1.") == ["a-code"]
    assert kb.exception_codes("subprocess.CalledProcessError", "returned non-zero exit status 1") == ["a-code"]
    assert kb.exception_codes("OSError", "cc1: fatal error") == ["a-code"]
    assert kb.exception_codes("CalledProcessError", "returned non-zero exit status 2") == []
    # run's matcher: exception shapes first, then the log signatures of the bundled knowledge base
    text = "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set x."
    assert codes_for_exception_text(text, kb, match_codes) == ["no-c-compiler"]
    assert codes_for_exception_text("OSError: cc1: fatal error", kb, match_codes)[0] == "a-code"


def test_a_fix_leaves_out_the_parenthesis_of_a_value_it_does_not_know():
    spec = knowledge.get("c-compiler-broken")
    assert knowledge.render_prose(spec.fix, {}).endswith("when the compiler found on PATH fails, reinstall it.")
    assert knowledge.render_prose(spec.fix, {"compiler_pkg": "gcc"}).endswith("reinstall it (gcc).")
    nccl = knowledge.get("nccl-shm-too-small")
    assert "`emptyDir: {medium: Memory}`" in knowledge.render_prose(nccl.fix, {})  # escaped braces stay


def test_registry_refuses_a_check_whose_probe_does_not_exist():
    class NoFunction(Check):
        id = "test.no_function"
        title = "probe function missing"
        layer = "toolchain"
        probe = "toolchain.no_such_probe"

    with pytest.raises(registry.RegistryError, match="no_such_probe.*toolchain.py does not define"):
        registry.validate([NoFunction])

    class NoModule(Check):
        id = "test.no_module"
        title = "probe module missing"
        layer = "toolchain"
        probe = "nowhere.c_compiler"

    with pytest.raises(registry.RegistryError, match="nowhere.py, which does not exist"):
        registry.validate([NoModule])


# -- the parsed bundled files, kept between runs ------------------------------------

@pytest.fixture
def kb_copy(tmp_path, monkeypatch):
    """The bundled files copied to a directory of their own, loaded as the bundled ones, with a
    cache directory of their own."""
    import shutil
    d = tmp_path / "kb"
    d.mkdir()
    for f in knowledge.default_files():
        shutil.copy(f, d / f.name)
    monkeypatch.setattr(knowledge, "KB_DIR", d)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    knowledge.load.cache_clear()
    yield d
    knowledge.load.cache_clear()


def _fresh():
    knowledge.load.cache_clear()
    return knowledge.load()


def test_the_parsed_files_are_kept_and_give_the_same_knowledge_base(kb_copy, tmp_path):
    first = _fresh()
    entry = tmp_path / "cache" / "stackpeel" / "knowledge-documents.json"
    assert entry.is_file() and oct(entry.stat().st_mode & 0o777) == "0o600"
    again = _fresh()  # from the entry
    assert again.codes == first.codes and again.aliases == first.aliases and again.files == first.files


def test_a_changed_file_is_parsed_again_and_a_bad_regex_still_refused(kb_copy):
    _fresh()
    toml = kb_copy / "gpu.toml"
    text = toml.read_text()
    code = next(c for c in _fresh().codes.values() if c.file == "gpu.toml" and c.logs)
    toml.write_text(text.replace(code.title, code.title + " (edited)", 1))
    assert _fresh().codes[code.code].title == code.title + " (edited)"
    # a pattern that does not compile, in a file whose earlier content was kept: refused as always
    assert "patterns = [" in text
    bad = text.replace("patterns = [", 'patterns = ["unbalanced (group", ', 1)
    toml.write_text(bad)
    with pytest.raises(KnowledgeError, match="bad regex"):
        _fresh()


def test_an_entry_someone_else_could_write_is_ignored(kb_copy, tmp_path):
    first = _fresh()
    entry = tmp_path / "cache" / "stackpeel" / "knowledge-documents.json"
    import json
    data = json.loads(entry.read_text())
    data["documents"][0][1] = {}  # a tampered entry: the first file's codes gone
    entry.write_text(json.dumps(data))
    entry.chmod(0o666)  # writable by others: never read
    assert _fresh().codes == first.codes
    entry.chmod(0o600)
    entry.write_text("not json")
    assert _fresh().codes == first.codes
