"""Shared refine contexts (``[context.NAME]``, docs/dev/KNOWLEDGE.md): a regex that several
refines read is written once and named; the loader refuses an unknown name, an unused context,
a name declared twice and a context that does not compile. The built-in files' shared contexts
resolve to the regexes the refines held inline before (explain's answers do not move)."""
from collections import Counter

import pytest

from stackpeel import knowledge
from stackpeel.explain import explain_text
from stackpeel.knowledge import KnowledgeError

CODE = {"layer": "torch", "kind": "root", "severity": "blocking", "title": "A", "meaning": "m", "fix": "f"}


def _doc(refine, contexts=None):
    data = {"a-code": {**CODE, "log": [{"id": "a-sig", "patterns": ["Some failure text"], "refine": refine}]},
            "b-code": dict(CODE, title="B")}
    if contexts is not None:
        data["context"] = contexts
    return [("torch.toml", data)]


MAC = {"mac-host": {"pattern": r"\bDarwin\b", "means": "a Mac"}}


def test_a_refine_names_a_shared_context():
    kb = knowledge.parse(_doc([{"context_name": "mac-host", "code": "b-code"}], MAC))
    (rule,) = kb.codes["a-code"].logs[0].refine
    assert (rule.context, rule.code, rule.name) == (r"\bDarwin\b", "b-code", "mac-host")
    assert "context" not in kb.codes  # the table is no code


@pytest.mark.parametrize("refine, contexts, error", [
    ([{"context_name": "mac", "code": "b-code"}], MAC, r"\[a-code\] log #1 \(a-sig\): refine names unknown context 'mac'"),
    ([{"context": "Darwin", "code": "b-code"}], MAC, r"torch\.toml \[context\.mac-host\]: no refine names it"),
    ([{"context_name": "mac-host", "code": "b-code"}], {"mac-host": {"pattern": "(Darwin", "means": "a Mac"}},
     r"\[context\.mac-host\]: bad regex"),
    ([{"context_name": "mac-host", "code": "b-code"}], {"mac-host": {"pattern": "Darwin"}},
     r"\[context\.mac-host\]: a context is \{pattern = regex, means = text\}"),
    ([{"context_name": "mac-host", "code": "b-code"}], {"Mac": {"pattern": "Darwin", "means": "a Mac"}},
     r"\[context\.Mac\]: a context's name is lower-case"),
    ([{"context_name": "mac-host", "context": "x", "code": "b-code"}], MAC, "refine entries are"),
])
def test_the_loader_refuses_a_bad_context(refine, contexts, error):
    with pytest.raises(KnowledgeError, match=error):
        knowledge.parse(_doc(refine, contexts))


def test_a_context_is_declared_once_across_files():
    docs = _doc([{"context_name": "mac-host", "code": "b-code"}], MAC) + [("gpu.toml", {"context": MAC})]
    with pytest.raises(KnowledgeError, match=r"gpu\.toml \[context\.mac-host\]: declared twice \(also in torch\.toml\)"):
        knowledge.parse(docs)


def test_no_refine_regex_of_the_built_in_files_is_written_twice():
    kb = knowledge.load()
    inline = Counter(r.context for c in kb.codes.values() for s in c.logs for r in s.refine if not r.name)
    assert [rx for rx, n in inline.items() if n > 1] == []
    named = Counter(r.name for c in kb.codes.values() for s in c.logs for r in s.refine if r.name)
    # mac-host: torch's three CPU-build signatures, and (harv33c) bitsandbytes' three CPU-library
    # fallback signatures (a Mac had no CUDA build of it, bitsandbytes#485)
    assert named["mac-host"] == 6 and len(named) >= 20
    # an inline refine never spells a shared context's regex again
    shared = {r.context for c in kb.codes.values() for s in c.logs for r in s.refine if r.name}
    assert not shared & set(inline)


STUB = ("RuntimeError: Cannot initialize CUDA without ATen_cuda library. PyTorch splits its backend into two "
        "shared libraries: a CPU library and a CUDA library\n")


@pytest.mark.parametrize("text", [
    "Darwin Kernel Version 23.4.0\n" + STUB,
    "/Users/ana/venv/bin/python train.py\nAssertionError: Torch not compiled with CUDA enabled\n",
    " ## Warning: The installed version of PyTorch is 2.3.0 and does not support CUDA or ROCm.\n"
    "Python 3.11 on my MacBook Pro\n",
])
def test_the_three_cpu_torch_signatures_read_the_shared_mac_context(text):
    assert [c.code for c in explain_text(text).candidates][:1] == ["cuda-on-macos"]
