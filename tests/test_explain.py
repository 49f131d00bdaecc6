"""stackpeel explain: the streaming parser, the cascade reasoning, the renderers, the
CLI and live confirmation. The corpus of real logs is in test_explain_corpus.py."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest

from stackpeel.cli import main
from stackpeel.explain import InputError, explain_stream, explain_text
from stackpeel.explain.live import confirm, plan, verdicts
from stackpeel.explain.parser import (CONTEXT_AFTER, HITS_PER_ENTRY, MAX_LINE, OTHER_ERRORS, TRACEBACKS_HEAD,
                                      TRACEBACKS_TAIL, LogScanner, scan_stream, scan_text, split_prefix)
from stackpeel.explain.reasoning import explain
from stackpeel.explain.render import render
from stackpeel.model import CheckResult, Diagnosis, Finding, Report, RootCause, Severity, Status

CC_ERR = ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
          "triton.knobs.build.impl.")
FLA_WARN = ("/venv/lib/python3.12/site-packages/fla/utils.py:62: UserWarning: Triton is not supported on current "
            "platform, roll back to CPU.")

#: the seed cascade: FLA's fallback warning, the swallowed cause, the final AttributeError
SEED = textwrap.dedent(f"""\
    INFO 12:00:01 loading model
    {FLA_WARN}
      warnings.warn(
    INFO 12:00:02 step 0
    Traceback (most recent call last):
      File "/venv/lib/python3.12/site-packages/triton/runtime/driver.py", line 20, in _initialize_obj
        self._obj = self._init_fn()
      File "/venv/lib/python3.12/site-packages/triton/runtime/build.py", line 32, in _build
        raise RuntimeError("Failed to find C compiler.")
    {CC_ERR}

    During handling of the above exception, another exception occurred:

    Traceback (most recent call last):
      File "/app/train.py", line 10, in <module>
        model(x)
      File "/venv/lib/python3.12/site-packages/fla/utils.py", line 200, in wrapper
        with custom_device_ctx(tensor.device.index):
    AttributeError: module 'torch.cpu' has no attribute 'device'
    """)


# -- parser ------------------------------------------------------------------------

def test_chained_tracebacks_context_and_cause():
    log = textwrap.dedent("""\
        Traceback (most recent call last):
          File "a.py", line 1, in <module>
        KeyError: 'x'

        During handling of the above exception, another exception occurred:

        Traceback (most recent call last):
          File "a.py", line 3, in <module>
        ValueError: first

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "a.py", line 5, in <module>
        RuntimeError: second
        """)
    r = scan_text(log)
    tbs = sorted(r.tracebacks, key=lambda t: t.index)
    assert [(t.exc_type, t.chain) for t in tbs] == [("KeyError", None), ("ValueError", "context"),
                                                     ("RuntimeError", "cause")]
    assert tbs[1].parent == tbs[0].index and tbs[2].parent == tbs[1].index
    expl = explain(r)
    assert [e.line for e in expl.exceptions] == [3, 9, 15]
    assert expl.exceptions[2].parent_line == 9


def test_multiline_exception_message_is_kept_and_bounded():
    log = "Traceback (most recent call last):\n  File \"x\", line 1, in f\ntriton.runtime.errors.PTXASError: PTXAS error\n" \
          "`ptxas` stderr:\nptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n\nafter\n"
    tb = scan_text(log).tracebacks[0]
    assert tb.exc_type == "triton.runtime.errors.PTXASError"
    assert "sm_121a" in tb.message and "after" not in tb.message


def test_ansi_colours_are_ignored():
    log = f"\x1b[31m{CC_ERR}\x1b[0m\n\x1b[1;33mWARNING\x1b[0m nothing\n"
    expl = explain_text(log)
    assert expl.root.code == "no-c-compiler"
    assert "\x1b" not in expl.root.evidence[0].text


def test_crlf_and_progress_bar_carriage_returns():
    log = "line one\r\n 10%|#  \r 50%|#####  \r100%|##########\r\n" + CC_ERR + "\r\nlast\r\n"
    expl = explain_text(log)
    ev = expl.root.evidence[0]
    assert ev.line == 3 and "\r" not in ev.text
    assert expl.lines == 4


def test_interleaved_ranks_keep_their_own_tracebacks():
    log = textwrap.dedent(f"""\
        [rank0]: Traceback (most recent call last):
        [rank1]: Traceback (most recent call last):
        [rank0]:   File "/app/train.py", line 3, in <module>
        [rank1]:   File "/app/train.py", line 3, in <module>
        [rank1]: ValueError: bad batch
        [rank0]: {CC_ERR}
        0: Traceback (most recent call last):
        1: some other output
        0:   File "x.py", line 1, in <module>
        0: OSError: disk
        """)
    r = scan_text(log)
    by_stream = {t.stream: (t.exc_type, t.exc_line) for t in r.tracebacks}
    assert by_stream == {"[rank0]:": ("RuntimeError", 6), "[rank1]:": ("ValueError", 5), "0:": ("OSError", 10)}
    expl = explain(r)
    assert expl.root.code == "no-c-compiler" and expl.root.evidence[0].stream == "[rank0]:"
    assert set(expl.streams) >= {"[rank0]:", "[rank1]:", "0:"}


@pytest.mark.parametrize("line, key, rest", [
    ("[rank3]: boom", "[rank3]:", "boom"),
    ("[default0]:boom", "[default0]:", "boom"),
    ("(RayWorkerWrapper pid=123, ip=10.0.0.1) boom", "(RayWorkerWrapper pid=123, ip=10.0.0.1)", "boom"),
    ("vllm-1  | boom", "vllm-1  |", "boom"),
    ("[1,0]<stderr>:boom", "[1,0]<stderr>:", "boom"),
    ("12: boom", "12:", "boom"),
    ("RuntimeError: boom", "", "RuntimeError: boom"),
])
def test_prefixes(line, key, rest):
    assert split_prefix(line) == (key, rest)


def test_literal_prefix_of_a_traceback_is_followed():
    log = "worker-0: Traceback (most recent call last):\nworker-0:   File \"x\", line 1, in f\nworker-0: NameError: y\n"
    tb = scan_text(log).tracebacks[0]
    assert (tb.exc_type, tb.exc_line, tb.truncated) == ("NameError", 3, False)


def test_truncated_traceback_is_marked_and_still_explained():
    log = "Traceback (most recent call last):\n  File \"/x/setup.py\", line 111, in <module>\n    if bare_me"
    r = scan_text("UserWarning: mamba_ssm was requested, but nvcc was not found.\n" + log)
    assert r.tracebacks[0].truncated and r.tracebacks[0].exc_type is None
    expl = explain(r)
    assert expl.root.code == "nvcc-missing"
    assert expl.exceptions[0].truncated


def test_binary_junk_inside_a_log_is_skipped():
    data = b"start\n\x00\x01\x02\xff\xfe garbage \x00\x00\n" + CC_ERR.encode() + b"\n\xc3\x28 end\n"
    expl = explain_stream(io.BytesIO(data))
    assert expl.root.code == "no-c-compiler" and expl.root.evidence[0].line == 3
    assert any("control/binary" in n for n in expl.notes)


def test_binary_input_is_refused():
    with pytest.raises(InputError):
        scan_stream(io.BytesIO(bytes(range(256)) * 64))


def test_gzip_and_utf16_inputs():
    expl = explain_stream(io.BytesIO(gzip.compress(SEED.encode())))
    assert expl.root.code == "no-c-compiler" and any("gzip" in n for n in expl.notes)
    expl = explain_stream(io.BytesIO(SEED.encode("utf-16")))
    assert expl.root.code == "no-c-compiler"


def test_any_chunking_gives_the_same_result():
    whole = scan_text(SEED)
    for size in (1, 7, 64):
        sc = LogScanner()
        for i in range(0, len(SEED), size):
            sc.feed(SEED[i:i + size])
        r = sc.close()
        assert [(h.entry, h.line.number) for h in r.hits] == [(h.entry, h.line.number) for h in whole.hits]
        assert [(t.exc_type, t.exc_line) for t in r.tracebacks] == [(t.exc_type, t.exc_line) for t in whole.tracebacks]


def test_very_long_line_is_cut_not_fatal():
    log = "x" * (MAX_LINE * 10) + CC_ERR + "\n" + CC_ERR + "\n"
    r = scan_text(log)
    assert r.cut_lines == 1 and r.lines == 2
    assert [h.line.number for h in r.hits] == [2]


def test_one_endless_line_without_newline_is_bounded():
    sc = LogScanner()
    for _ in range(200):
        sc.feed("y" * 100_000)
        assert len(sc._carry) <= MAX_LINE * 4
    assert sc.close().lines == 1


def test_kept_evidence_is_bounded_in_a_huge_noisy_log():
    """Whatever the size, only bounded samples are kept (counts stay exact)."""
    sc = LogScanner()
    block = (CC_ERR + "\nTraceback (most recent call last):\n  File \"x\", line 1, in f\nValueError: v\n"
             "gcc: error: something odd\n")
    for _ in range(3000):
        sc.feed(block)
    r = sc.close()
    assert r.hit_counts["triton-no-c-compiler"] == 3000
    assert len(r.hits) <= HITS_PER_ENTRY
    assert r.n_tracebacks == 3000 and len(r.tracebacks) <= TRACEBACKS_HEAD + TRACEBACKS_TAIL
    assert r.n_other_errors == 6000 and len(r.other_errors) <= OTHER_ERRORS  # gcc line + ValueError line
    expl = explain(r)
    assert expl.root.count == 3000
    assert any("tracebacks in the log" in n for n in expl.notes)


def test_hit_context_lines():
    r = scan_text("a\nb\n" + CC_ERR + "\nc\nd\ne\n")
    h = r.hits[0]
    assert [ln.text for ln in h.before] == ["a", "b"]
    assert [ln.text for ln in h.after] == ["c", "d"][:CONTEXT_AFTER]


HUGE_CHILD = r"""
import resource, sys
from stackpeel.explain.parser import scan_stream

class Lazy:
    '''A 64 MB log made on the fly: noise, the cause in the middle.'''
    def __init__(self):
        self.sent = 0
        self.noise = b"".join(b"[2024-01-01 00:00:%02d] INFO step=%d loss=0.123 lr=3e-4 tokens/s=12345\n" % (i % 60, i)
                             for i in range(10000))
    def read(self, n=-1):
        if self.sent >= 64 << 20:
            return b""
        if self.sent >= 32 << 20 and self.sent - len(self.noise) < 32 << 20:
            chunk = b"RuntimeError: Failed to find C compiler. Please specify via CC environment variable\n" + self.noise
        else:
            chunk = self.noise
        self.sent += len(chunk)
        return chunk

r = scan_stream(Lazy())
# this process's own peak: VmHWM belongs to the address space exec made. ru_maxrss keeps the
# high-water mark across exec, so it also counts the test runner this child was spawned from
# (154 MB once a full run had grown it: a failure that said nothing about the scan)
try:
    with open("/proc/self/status") as f:
        rss_mb = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")) / 1024
except (OSError, StopIteration, ValueError):
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(r.bytes >> 20, int(rss_mb), ",".join(h.entry for h in r.hits))
"""


def test_huge_stream_in_bounded_memory():
    out = subprocess.run([sys.executable, "-c", HUGE_CHILD], capture_output=True, text=True, timeout=120, check=True)
    mb, rss, hits = out.stdout.split()
    mb, rss = int(mb), int(rss)
    assert mb >= 64
    assert hits == "triton-no-c-compiler"
    assert rss < 150, f"peak RSS {rss} MB for a 64 MB log"


# -- reasoning -----------------------------------------------------------------------

def test_seed_cascade_names_the_deepest_cause():
    expl = explain_text(SEED)
    root = expl.root
    assert root.code == "no-c-compiler" and root.kind == "root"
    assert 10 in [ev.line for ev in root.evidence]
    assert "fla-cpu-fallback" in root.explains
    fla = next(c for c in expl.candidates if c.code == "fla-cpu-fallback")
    assert fla.kind == "symptom" and fla.explained_by == ("no-c-compiler",)
    assert sorted(ev.line for ev in fla.evidence) == [2, 19]
    last = expl.exceptions[-1]
    assert (last.type, last.chain, last.parent_line) == ("AttributeError", "context", 10)


def test_symptom_only_lists_lower_layers_deepest_first():
    expl = explain_text("RuntimeError: 0 active drivers ([]). There should only be one.\n")
    root = expl.root
    assert root.kind == "symptom" and root.code == "triton-no-active-driver"
    assert {"cuda-visible-devices-hides-gpus", "torch-cpu-only-build", "no-nvidia-driver"} <= set(root.could_be)
    ranks = ["system", "gpu", "cuda", "torch", "toolchain", "triton", "kernels", "multi_gpu"]
    from stackpeel.codes import all_codes
    layers = [ranks.index(all_codes()[c].layer) for c in root.could_be]
    assert layers == sorted(layers)
    assert any("symptoms only" in n for n in expl.notes)
    assert expl.exit_code == 1


def test_torch_cpu_attribute_error_alone_is_a_symptom():
    expl = explain_text("AttributeError: module 'torch.cpu' has no attribute 'device'\n")
    assert expl.root.code == "fla-cpu-fallback" and expl.root.kind == "symptom"
    assert "no-c-compiler" in expl.root.could_be


def test_unknown_error_is_not_silence():
    # an error no entry explains is reported as an unknown error with a stable fingerprint, exit 1
    log = "all fine\nTraceback (most recent call last):\n  File \"x\", line 1\nKeyError: 'k'\n"
    expl = explain_text(log)
    assert expl.candidates == () and expl.exit_code == 1
    assert expl.exceptions[0].type == "KeyError"
    assert expl.fingerprint and re.fullmatch(r"[0-9a-f]{12}", expl.fingerprint)
    assert "Unknown error" in render(expl, "text") and expl.fingerprint in render(expl, "text")
    assert "**Unknown error**" in render(expl, "markdown")
    assert json.loads(render(expl, "json"))["fingerprint"] == expl.fingerprint
    # the fingerprint ignores numbers, addresses and directories, so the same error elsewhere matches
    other = explain_text("Traceback (most recent call last):\n  File \"/home/b/y\", line 7\nKeyError: 'k'\n")
    assert other.fingerprint == expl.fingerprint
    assert explain_text(log.replace("KeyError", "ValueError")).fingerprint != expl.fingerprint


def test_no_error_is_no_problem():
    expl = explain_text("step 1 loss 0.5\nstep 2 loss 0.4\ndone\n")
    assert expl.candidates == () and expl.exit_code == 0 and expl.fingerprint is None
    assert "No error in this log" in render(expl, "text")


@pytest.mark.parametrize("log, top", [
    # the torch warning names the cause of the generic "no kernel image"
    ("UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch "
     "installation.\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "torch-arch-not-supported"),
    # inside a compiled extension's frames it is the extension's arch coverage
    ("Traceback (most recent call last):\n  File \"/v/causal_conv1d/causal_conv1d_interface.py\", line 9, in fwd\n"
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "extension-arch-missing"),
    # a root evidenced twice outranks a weaker generic root
    ("Failed building wheel for flash-attn\nOSError: CUDA_HOME environment variable is not set. Please set it\n",
     "nvcc-missing"),
    # NCCL's generic error is explained by the /dev/shm failure
    ("NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 9637892 bytes\n"
     "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error\n", "nccl-shm-too-small"),
])
def test_ranking_table(log, top):
    assert explain_text(log).root.code == top


def test_explain_is_pure():
    r = scan_text(SEED)
    assert explain(r).to_dict() == explain(r).to_dict()


# -- renderers -------------------------------------------------------------------------

def test_text_render():
    text = render(explain_text(SEED, source="train.log"), "text")
    lines = text.splitlines()
    assert lines[0] == "stackpeel explain: train.log (19 lines, 968 bytes)"
    assert lines[2].startswith("Root cause: no-c-compiler  [toolchain]")
    assert "  line 10: RuntimeError: Failed to find C compiler." in text
    assert "Symptoms it explains:" in text and "fla-cpu-fallback [kernels]" in text
    assert "(raised while handling the one at line 10)" in text
    assert all(len(ln) <= 300 for ln in lines)


def test_json_render_is_versioned_and_complete():
    d = json.loads(render(explain_text(SEED), "json"))
    assert d["schema_version"] == 1 and d["kind"] == "explain" and d["tool"]["name"] == "stackpeel"
    assert d["root_cause"] == "no-c-compiler" and d["exit_code"] == 1
    c = d["candidates"][0]
    assert {"code", "layer", "kind", "title", "evidence", "explanation", "fix", "links", "explains", "could_be",
            "check", "live"} <= set(c)
    assert c["check"] == "toolchain.c_compiler"
    assert d["exceptions"][-1]["chain"] == "context"


def test_markdown_render():
    md = render(explain_text(SEED), "markdown")
    assert md.startswith("## stackpeel explain")
    assert "### Root cause: `no-c-compiler`" in md and "| # | code |" in md


def test_render_nothing_known_and_bad_format():
    expl = explain_text("hello\n")
    assert "No known problem found" in render(expl, "text")
    assert "No known problem found" in render(expl, "markdown")
    assert json.loads(render(expl, "json"))["root_cause"] is None
    assert "No known problem found" in render(expl, "html")
    with pytest.raises(ValueError):
        render(expl, "pdf")


# -- CLI --------------------------------------------------------------------------------

def run_cli(args, capsys, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    rc = main(["explain", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_file_json(tmp_path, capsys):
    f = tmp_path / "train.log"
    f.write_text(SEED)
    rc, out, err = run_cli([str(f), "--no-live", "--format", "json"], capsys)
    assert rc == 1 and json.loads(out)["root_cause"] == "no-c-compiler" and not err


def test_cli_stdin(capsys, monkeypatch):
    rc, out, _ = run_cli(["-", "--no-live"], capsys, stdin=b"nothing to see\n", monkeypatch=monkeypatch)
    assert rc == 0 and "No known problem found" in out


@pytest.mark.parametrize("content, needle", [
    (b"", "is empty"),
    (b"\n \n\t\n", "is empty"),
    (bytes(range(256)) * 64, "looks binary"),
    (b"\x1f\x8b\x08\x00 corrupt gzip", "gzip"),
])
def test_cli_bad_input_is_a_clear_usage_error(tmp_path, capsys, content, needle):
    f = tmp_path / "in.log"
    f.write_bytes(content)
    rc, out, err = run_cli([str(f), "--no-live"], capsys)
    assert rc == 2 and needle in err and "Traceback" not in err and out == ""


def test_cli_missing_file_and_directory(tmp_path, capsys):
    rc, _, err = run_cli([str(tmp_path / "nope.log")], capsys)
    assert rc == 2 and "cannot read" in err
    rc, _, err = run_cli([str(tmp_path)], capsys)
    assert rc == 2 and "directory" in err


def test_cli_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    out = capsys.readouterr().out
    assert "0  no known problem found" in out and "1  a cause" in out and "2  usage error" in out


def test_cli_as_a_process_reads_a_pipe(tmp_path):
    p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", "--no-live"], input=SEED.encode(),
                       capture_output=True, timeout=60)
    assert p.returncode == 1 and b"Root cause: no-c-compiler" in p.stdout


# -- live confirmation --------------------------------------------------------------------

def _report(results, blocking=()):
    return Report(tool_version="0", created="now", target={"python": "/py"}, host={}, results=tuple(results),
                  diagnosis=Diagnosis(blocking=tuple(blocking)))


def _result(cid, status, codes=(), layer="toolchain"):
    findings = tuple(Finding(code=c, severity=Severity.BLOCKING, title=c, message=f"{c} here") for c in codes)
    return CheckResult(id=cid, title=cid, layer=layer, status=status, summary=f"{cid} {status.value}",
                       findings=findings)


def test_live_plan_and_verdicts():
    expl = explain_text(SEED)
    ids = plan(expl, known={"toolchain.c_compiler", "kernels.fla", "gpu.visible_devices"})
    assert ids[0] == "toolchain.c_compiler" and "kernels.fla" in ids
    v = verdicts(_report([_result("toolchain.c_compiler", Status.FAIL, ["no-c-compiler"]),
                          _result("kernels.fla", Status.PASS, layer="kernels")]),
                 ["no-c-compiler", "fla-cpu-fallback", "python-headers-missing"])
    assert v["no-c-compiler"].verdict == "confirmed"
    assert v["fla-cpu-fallback"].verdict == "ruled-out"
    assert "python-headers-missing" not in v


def test_live_confirm_with_a_fake_engine_promotes_a_live_root_for_a_symptom():
    expl = explain_text("RuntimeError: 0 active drivers ([]). There should only be one.\n")
    calls = []

    def fake_check(python=None, only=(), env=None):
        calls.append(list(only))
        return _report([_result("gpu.visible_devices", Status.FAIL, ["cuda-visible-devices-hides-gpus"], "gpu"),
                        _result("torch.cuda", Status.BLOCKED, layer="torch")],
                       [RootCause("gpu.visible_devices", ("cuda-visible-devices-hides-gpus",), Severity.BLOCKING)])

    out = confirm(expl, python="/py", check=fake_check,
                  known={"gpu.visible_devices", "torch.cuda", "triton.kernel_launch", "gpu.kernel_driver"})
    assert calls and "gpu.visible_devices" in calls[0]
    assert out.root.code == "cuda-visible-devices-hides-gpus" and out.root.live.verdict == "confirmed"
    assert "triton-no-active-driver" in out.root.explains
    assert out.live.ran and out.live.found == ("cuda-visible-devices-hides-gpus",)
    assert "confirmed by gpu.visible_devices" in render(out, "text")


def test_live_confirm_promotes_a_degraded_risk_a_log_line_could_be():
    """The H200 under `ulimit -v` 16 GiB (session 23): the program's log says only 'CUDA error: out
    of memory'; cuda.driver_api reports the limit as a degraded risk. That confirmed cause heads the
    answer; a risk no line of the log could be is not added."""
    oom = "torch.AcceleratorError: CUDA error: out of memory\n"
    risk = _result("cuda.driver_api", Status.WARN, layer="cuda")
    risk = replace(risk, findings=(Finding(code="address-space-limit", severity=Severity.DEGRADED,
                                           title="limit", message="limited to 16.0 GiB"),))

    out = confirm(explain_text(oom), python="/py", check=lambda **kw: _report([risk]), known={"cuda.driver_api"})
    assert out.root.code == "address-space-limit" and out.root.live.verdict == "confirmed"
    assert "gpu-out-of-memory" in out.root.explains
    # the allocator's own 'Tried to allocate' message is the job's size, not the limit: no candidate added
    full = explain_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.\n")
    out = confirm(full, python="/py", check=lambda **kw: _report([risk]), known={"cuda.driver_api"})
    assert out.root.code == "gpu-out-of-memory"


def test_live_failure_is_a_note_not_a_crash():
    def broken(**kw):
        raise RuntimeError("engine exploded")

    out = confirm(explain_text(CC_ERR), check=broken, known={"toolchain.c_compiler"})
    assert out.root.code == "no-c-compiler" and not out.live.ran and "engine exploded" in out.live.note


def test_live_end_to_end_toolchain_without_compiler(nocc_env):
    """The real engine, the real toolchain check, a PATH with no C compiler."""
    expl = explain_text(SEED)
    out = confirm(expl, python=sys.executable, env=nocc_env, known={"toolchain.c_compiler"})
    assert out.live.ran and out.live.checks == ("toolchain.c_compiler",)
    assert out.root.code == "no-c-compiler"
    assert out.root.live.verdict == "confirmed", out.root.live


def _here_log() -> str:
    """CC_ERR under a traceback frame of the checked interpreter's own site-packages."""
    import sysconfig
    purelib = sysconfig.get_paths()["purelib"]
    return ("Traceback (most recent call last):\n"
            f'  File "{purelib}/triton/runtime/build.py", line 32, in _build\n'
            "    raise RuntimeError(\"Failed to find C compiler.\")\n" + CC_ERR + "\n")


def test_live_end_to_end_rules_out_with_a_compiler(clean_env):
    import shutil
    if not (shutil.which("gcc") or shutil.which("cc") or clean_env.get("CC")):
        pytest.skip("no C compiler on this machine")
    out = confirm(explain_text(_here_log()), python=sys.executable, env=clean_env, known={"toolchain.c_compiler"})
    assert out.live.provenance == "same", out.live
    assert out.root.live.verdict == "ruled-out", out.root.live
    assert out.candidates[-1].code == "no-c-compiler"


def test_live_rules_nothing_out_for_a_log_from_elsewhere(clean_env):
    """A passing check here says nothing about the machine a pasted log came from: unless
    the log demonstrably comes from here, the verdict is inconclusive and the log's own
    evidence keeps its rank."""
    import shutil
    if not (shutil.which("gcc") or shutil.which("cc") or clean_env.get("CC")):
        pytest.skip("no C compiler on this machine")
    for log, where in ((CC_ERR, "unknown"), (SEED, "other")):  # SEED: /venv/lib/python3.12, not here
        out = confirm(explain_text(log), python=sys.executable, env=clean_env, known={"toolchain.c_compiler"})
        assert out.live.provenance == where, out.live
        assert out.root.code == "no-c-compiler" and out.root.live.verdict == "inconclusive", out.root.live
        assert "another" in out.root.live.detail
        assert "may come from another machine" in render(out, "text")
        assert json.loads(render(out, "json"))["live"]["provenance"] == where


def test_provenance_signs():
    from stackpeel.explain.live import provenance
    target = {"prefix": "/opt/env", "base_prefix": "/usr", "version": "3.11.7"}
    frame = 'Traceback (most recent call last):\n  File "{}/lib/python{}/site-packages/x.py", line 1, in f\n{}\n'
    same = explain_text(frame.format("/opt/env", "3.11", CC_ERR))
    assert provenance(same, target, hostname="")[0] == "same"
    older = explain_text(frame.format("/opt/env", "3.10", CC_ERR))
    assert provenance(older, target, hostname="")[0] == "other"
    windows = explain_text('  File "C:\\Users\\me\\venv\\lib\\site-packages\\triton\\build.py", line 3\n' + CC_ERR)
    assert provenance(windows, target, hostname="")[0] in ("other", "unknown")
    named = explain_text("node-gpu-17: " + CC_ERR + "\n")
    assert provenance(named, target, hostname="node-gpu-17") == ("same", "the log names this host (node-gpu-17)")
    assert provenance(explain_text(CC_ERR), target, hostname="node-gpu-17")[0] == "unknown"


def test_live_confirmed_cause_heads_the_confirmed_symptoms():
    """When the live run confirms both a symptom the log shows and the cause that explains
    it, the cause is the headline."""
    from stackpeel.explain.reasoning import LiveCheck, LiveSummary, with_live
    expl = explain_text("RuntimeError: 0 active drivers ([]). There should only be one.\n")
    sym = expl.root
    assert sym.kind == "symptom"
    cause = replace(sym, code="no-nvidia-driver", kind="root", explains=(sym.code,), could_be=(),
                    live=LiveCheck("confirmed", "gpu.kernel_driver", "fail"))
    out = with_live(expl, {sym.code: LiveCheck("confirmed", "triton.kernel_launch", "fail")},
                    LiveSummary(True, "/py", provenance="same"), [cause])
    assert [c.code for c in out.candidates][:2] == ["no-nvidia-driver", sym.code]
    assert render(out, "text").splitlines()[2].startswith("Root cause (confirmed live): no-nvidia-driver")


def test_live_seed_log_without_a_compiler_puts_no_c_compiler_first(stack_python, nocc_env, tmp_path):
    """Acceptance (issue item 4): live explain of the seed's log, on the stack venv with every
    C compiler removed from PATH, all checks the evidence points to: no-c-compiler first."""
    f = tmp_path / "seed.log"
    f.write_text(SEED)
    p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", str(f), "--format", "json",
                        "--python", stack_python], capture_output=True, text=True, env=nocc_env, timeout=600,
                       cwd=os.path.dirname(__file__))
    assert p.returncode == 1, p.stderr[-2000:]
    d = json.loads(p.stdout)
    assert d["live"]["ran"] and "toolchain.c_compiler" in d["live"]["checks"], d["live"]
    first = d["candidates"][0]
    assert first["code"] == "no-c-compiler" and first["live"]["verdict"] == "confirmed", first
    assert "fla-cpu-fallback" in first["explains"]


def test_cli_live_runs_checks(tmp_path, nocc_env):
    f = tmp_path / "seed.log"
    f.write_text(CC_ERR + "\n")
    env = dict(nocc_env)
    p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", str(f), "--format", "json",
                        "--python", sys.executable], capture_output=True, env=env, timeout=120,
                       cwd=os.path.dirname(__file__))
    assert p.stdout.strip(), p.stderr[-2000:]  # no report at all: say why
    d = json.loads(p.stdout)
    assert p.returncode == 1 and d["live"]["ran"]
    assert d["candidates"][0]["live"]["verdict"] == "confirmed"


def test_fuzz_never_crashes():
    """Random mixes of log fragments, control bytes and broken UTF-8: a result or InputError, never a crash."""
    import random
    rng = random.Random(7)
    alphabet = [b"\x00", b"\r", b"\n", b"\x1b[31m", b"\x1b]0;t\x07", b"Traceback (most recent call last):\n",
                b"  File \"a\", line 1, in f\n", CC_ERR.encode() + b"\n", b"[rank0]: ", b"0: ", b"(pid=3) ",
                b"During handling of the above exception, another exception occurred:\n",
                b"The above exception was the direct cause of the following exception:\n", b"\xff\xfe", b"x" * 40,
                b"\t", b"  ", b"ValueError: v\n", b"NCCL WARN Error: failed to extend /dev/shm/nccl-x\n",
                "é".encode(), b"\xc3", b"\x1f\x8b", FLA_WARN.encode() + b"\n"]
    for _ in range(400):
        blob = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 50)))
        try:
            expl = explain_stream(io.BytesIO(blob))
        except InputError:
            pass
        else:
            for fmt in ("text", "json", "markdown"):
                assert render(expl, fmt)
        assert explain_text(blob.decode("utf-8", "replace")).exit_code in (0, 1)
