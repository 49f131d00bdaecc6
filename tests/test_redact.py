"""Secrets planted in the environment appear in no output format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


from stackpeel import engine, render
from stackpeel.checks.base import Check
from stackpeel.redact import redact_report_dict, scrub_text, secret_values

FAULTS = str(Path(__file__).parent / "data" / "fault_probes")

SECRETS = {
    "HF_TOKEN": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "MY_DB_PASSWORD": "correct-horse-battery",
    "GITHUB_TOKEN": "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345",
}


class EchoEnv(Check):
    id = "system.echo_env"
    title = "leaky"
    layer = "system"
    probe = "faulty.echo_env"
    probes_dir = FAULTS

    def evaluate(self, facts, ctx):
        return ctx.verdict("leaks", ctx.finding("libc-unsupported", message="env: " + json.dumps(facts["env"]),
                                                evidence=facts["cmdline"], observed=facts["env"].get("HF_TOKEN")))


class EchoCrash(Check):
    id = "system.echo_crash"
    title = "leaky crash"
    layer = "system"
    probe = "faulty.echo_env_and_crash"
    probes_dir = FAULTS

    def evaluate(self, facts, ctx):  # pragma: no cover - never reached
        return ctx.ok("")


def _all_outputs(report):
    return [render(report, "text", verbose=True), render(report, "json"), render(report, "markdown", verbose=True)]


def test_planted_secrets_appear_in_no_format(clean_env):
    env = dict(clean_env, **SECRETS)
    report = engine.check(python=sys.executable, env=env, checks=[EchoEnv, EchoCrash])
    outs = _all_outputs(report)
    # the leaky probe really did see them (otherwise this test proves nothing)
    assert "<redacted>" in outs[1]
    for out in outs:
        for name, value in SECRETS.items():
            assert value not in out, f"{name} leaked"
        assert "hf_AbCd" not in out


def test_secret_shapes_are_caught_without_a_variable():
    text = ("token=hf_AbCdEfGhIjKlMnOpQrStUvWx AKIAIOSFODNN7EXAMPLE sk-proj-abcdefghijklmnopqrstuv "
            "https://user:s3cr3tpass@example.com/x Authorization: Bearer abcdefghijklmnopqrstuvwxyz")
    out = scrub_text(text, [])
    for leaked in ("hf_AbCd", "AKIAIOSFODNN7EXAMPLE", "sk-proj-abc", "s3cr3tpass", "abcdefghijklmnopqrstuvwxyz"):
        assert leaked not in out
    assert "https://<redacted>@example.com" in out and "Bearer <redacted>" in out


def test_secret_names_and_harmless_names():
    vals = secret_values({"HF_TOKEN": "abcd1234", "SSH_AUTH_SOCK": "/tmp/agent.sock", "PATH": "/usr/bin",
                          "NCCL_IB_DISABLE": "1", "API_KEY": "xyzw9876", "TRITON_CACHE_AUTOTUNING": "1"})
    assert set(vals) == {"abcd1234", "xyzw9876"}


def test_identity_redaction_hides_user_home_host():
    env = {"HOME": "/home/alice-research", "USER": "alice"}
    data = {"a": "/home/alice-research/.triton/cache owned by alice"}
    out = redact_report_dict(data, env, identity=True)
    assert "alice" not in json.dumps(out)


def test_cli_with_planted_secrets(clean_env, tmp_path):
    env = dict(clean_env, **SECRETS)
    env["CC"] = "/opt/" + SECRETS["MY_DB_PASSWORD"] + "/gcc"  # a secret inside a value a check reports
    for fmt in ("text", "json", "markdown"):
        out = tmp_path / f"r.{fmt}"
        proc = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", sys.executable, "--only",
                               "system,toolchain", "--format", fmt, "-o", str(out), "--redact"],
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        text = out.read_text() + proc.stdout + proc.stderr
        for name, value in SECRETS.items():
            assert value not in text, f"{name} leaked in {fmt}"


def test_explain_never_repeats_a_secret_from_the_log(clean_env, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                   "RuntimeError: Failed to find C compiler. Please specify via CC environment variable or set "
                   f"triton.knobs.build.impl. HF_TOKEN={SECRETS['HF_TOKEN']} key={SECRETS['WANDB_API_KEY']}\n")
    env = dict(clean_env, **SECRETS)
    for fmt in ("text", "json", "markdown"):
        p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", str(log), "--no-live", "--format", fmt],
                           env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 1, p.stderr
        assert "no-c-compiler" in p.stdout
        for value in SECRETS.values():
            assert value not in p.stdout and value[:12] not in p.stdout  # not even cut short


def test_run_report_never_repeats_a_secret(clean_env, tmp_path):
    prog = tmp_path / "leaky.py"
    prog.write_text("import os\nimport json\n"
                    "try:\n    json.loads(os.environ['MY_DB_PASSWORD'])\nexcept ValueError:\n    pass\n"
                    "try:\n    raise RuntimeError('auth failed with ' + os.environ['HF_TOKEN'])\n"
                    "except RuntimeError:\n    pass\n")
    env = dict(clean_env, **SECRETS)
    out = tmp_path / "report.json"
    p = subprocess.run([sys.executable, "-m", "stackpeel", "run", "--all", "--format", "json", "-o", str(out), "--",
                        sys.executable, str(prog)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert "auth failed with <redacted>" in text  # the swallowed exception is there, its secret is not
    for value in SECRETS.values():
        assert value not in text


# -- every credential shape, planted in every input path, absent from every output ---------------
#
# name -> (the text planted, the parts of it that must appear in no output). The values are
# fakes in the real formats; none is set as an environment variable whose name looks secret,
# so only the detectors and the allowlist stand between them and the output.

SHAPES = {
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzdGFja3BlZWwtcGxhbnQifQ.c2lnbmF0dXJlUGxhbnRlZDk5",
            ["eyJzdWIiOiJzdGFja3BlZWwtcGxhbnQifQ", "c2lnbmF0dXJlUGxhbnRlZDk5"]),
    "pem": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAplantedPEMbody0123456789abcdefghijklmnopQRSTUV\n"
            "-----END RSA PRIVATE KEY-----", ["MIIEpAIBAAKCAQEAplantedPEMbody0123456789"]),
    "basic-auth": ("Authorization: Basic c3RhY2twZWVsOnBsYW50ZWQ5OQ==", ["c3RhY2twZWVsOnBsYW50ZWQ5OQ"]),
    "bearer": ("Authorization: Bearer UGxhbnRlZEJlYXJlcjEyMzQ1Njc4", ["UGxhbnRlZEJlYXJlcjEyMzQ1Njc4"]),
    "url-user-password": ("https://alice:Pl4ntedUrlPassw0rd@example.com/repo.git", ["Pl4ntedUrlPassw0rd"]),
    "url-password-only": ("redis://:Pl4ntedRedisPw@cache:6379/0", ["Pl4ntedRedisPw"]),
    "url-token-user": ("https://ghp_Pl4ntedUrlTokenUser0123456789abcdef@github.com/x.git", ["Pl4ntedUrlTokenUser"]),
    "aws-access-key-id": ("AKIAPLANTEDKEY123456", ["AKIAPLANTEDKEY123456"]),
    "aws-secret-line": ("aws_secret_access_key = Pl4ntedAwsSecretKeyValue/K7MDENG/bPxRfiCY",
                        ["Pl4ntedAwsSecretKeyValue"]),
    "google-api-key": ("AIzaSyPl4ntedGoogleApiKey0123456789abcd", ["Pl4ntedGoogleApiKey"]),
    "github": ("ghp_Pl4ntedGithubToken0123456789abcdefgh", ["Pl4ntedGithubToken"]),
    "github-pat": ("github_pat_11Pl4ntedFineGrained_0123456789abcdefgh", ["Pl4ntedFineGrained"]),
    "huggingface": ("hf_Pl4ntedHuggingFaceToken0123456789", ["Pl4ntedHuggingFaceToken"]),
    "openai": ("sk-proj-Pl4ntedOpenAiKey0123456789abcdefgh", ["Pl4ntedOpenAiKey"]),
    "anthropic": ("sk-ant-api03-Pl4ntedAnthropicKey0123456789", ["Pl4ntedAnthropicKey"]),
    "slack": ("xoxb-123456789012-Pl4ntedSlackToken", ["Pl4ntedSlackToken"]),
    "gitlab": ("glpat-Pl4ntedGitlabToken012345", ["Pl4ntedGitlabToken"]),
    "argv-password-equals": ("--password=Pl4ntedArgvPassword", ["Pl4ntedArgvPassword"]),
    "argv-token-space": ("--token Pl4ntedArgvToken", ["Pl4ntedArgvToken"]),
    "name-value-unset": ("MYSERVICE_API_KEY=Pl4ntedNameValueKey", ["Pl4ntedNameValueKey"]),
    "yaml-key-value": ("db_password: Pl4ntedYamlPassword", ["Pl4ntedYamlPassword"]),
    "entropy-after-word": ("wandb: your API key is 0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e",
                           ["0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e"]),
}
LEAKS = [part for _, parts in SHAPES.values() for part in parts]
#: words of a healthy report that must survive redaction (no over-eager detector)
KEPT = ["tokenizers==0.19.1", "max_tokens=2048", "TOKENIZERS_PARALLELISM=false"]


def leaked(text: str):
    return [part for part in LEAKS if part in text]


def test_every_shape_is_caught_by_the_detectors_alone():
    for name, (planted, parts) in SHAPES.items():
        out = scrub_text(f"line before\n{planted}\nline after")
        assert not [p for p in parts if p in out], f"{name}: {out!r}"
        assert "line before" in out and "line after" in out
    text = " ".join(KEPT)
    assert scrub_text(text) == text


def _plant_env(clean_env):
    env = dict(clean_env)
    for i, (planted, _) in enumerate(SHAPES.values()):
        env[f"PLANTED_{i}"] = planted  # harmless-looking names: the allowlist, not the name, hides them
    return env


def test_env_path_all_formats(clean_env):
    report = engine.check(python=sys.executable, env=_plant_env(clean_env), checks=[EchoEnv])
    for out in _all_outputs(report):
        assert leaked(out) == []
    assert '"PLANTED_0": "<set>"' in render(report, "json")  # name shown, value not


def test_cc_path_check_all_formats(clean_env, tmp_path):
    env = dict(clean_env)
    env["CC"] = "gcc " + " ".join(p for p, _ in SHAPES.values())  # several words: the check quotes CC back
    for fmt in ("text", "json", "markdown"):
        p = subprocess.run([sys.executable, "-m", "stackpeel", "check", "--python", sys.executable, "--only",
                            "toolchain.c_compiler", "--format", fmt, "-v"], env=env, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode in (0, 1), p.stderr
        assert "CC=" in p.stdout  # the finding that quotes CC is there
        assert leaked(p.stdout + p.stderr) == [], fmt


def test_log_path_explain_all_formats(clean_env, tmp_path):
    log = tmp_path / "train.log"
    log.write_text("\n".join(p for p, _ in SHAPES.values()) + "\n" + " ".join(KEPT) + "\n"
                   "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                   "RuntimeError: Failed to find C compiler. Please specify via CC environment variable. "
                   + " ".join(p for p, _ in SHAPES.values() if "\n" not in p) + "\n")
    for fmt in ("text", "json", "markdown"):
        p = subprocess.run([sys.executable, "-m", "stackpeel", "explain", str(log), "--no-live", "--format", fmt],
                           env=clean_env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 1, p.stderr
        assert "no-c-compiler" in p.stdout
        assert leaked(p.stdout + p.stderr) == [], fmt


def test_argv_and_exception_paths_run_all_formats(clean_env, tmp_path):
    prog = tmp_path / "leaky.py"
    prog.write_text("import sys\n"
                    "for arg in sys.argv[1:]:\n"
                    "    try:\n        raise RuntimeError('request failed: ' + arg)\n"
                    "    except RuntimeError:\n        pass\n")
    args = [p for p, _ in SHAPES.values()]
    args = [w for a in args for w in (a.split(" ", 1) if a.startswith("--token") else [a])]
    for fmt in ("text", "json"):
        out = tmp_path / f"r.{fmt}"
        p = subprocess.run([sys.executable, "-m", "stackpeel", "run", "--all", "--format", fmt, "-o", str(out), "--",
                            sys.executable, str(prog), *args], env=clean_env, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        text = out.read_text()
        assert "request failed" in text  # the swallowed exceptions are reported
        assert leaked(text + p.stderr) == [], fmt


def _strings(obj):
    """Every string a scan result holds (dataclasses, lists, tuples, dicts), recursively."""
    import dataclasses
    if isinstance(obj, str):
        yield obj
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from _strings(getattr(obj, f.name))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def test_the_scan_redacts_everything_it_keeps_without_scrubbing_every_line():
    """explain scrubs credential shapes in what the scan keeps (hits, their context lines,
    tracebacks, other errors, clue lines, lines cut short), not in every line it reads:
    with no variable to name them, every shape planted next to each kind of kept text is
    still gone from the whole result, and the text around them stays."""
    from stackpeel.explain.knowledge import load
    from stackpeel.explain.parser import MAX_LINE, scan_text

    kb = load()
    clue = next(c for cs in kb.clues.values() for c in cs)
    one_line = [p for p, _ in SHAPES.values() if "\n" not in p]
    pem = next(p for p, _ in SHAPES.values() if "\n" in p)
    noise = "step 10 | loss 2.31 | tokens/s 51234 | lr 3e-4\n" * 2000  # the scan skips these lines
    log = (noise + "\n".join(one_line) + "\n" + pem + "\n"           # context before the hit
           + "Traceback (most recent call last):\n"
           + "".join(f'  File "/srv/{i}/train.py", line 3, in <module>\n' for i in range(2))
           + "RuntimeError: Failed to find C compiler. Please specify via CC environment variable. "
           + " ".join(one_line) + "\n" + "\n".join(one_line) + "\n"   # the message, then context after
           + noise + f"{clue} " + " ".join(one_line) + "\n"         # a clue line
           + "error: build failed " + " ".join(one_line) + "\n"    # an unexplained error line
           # a line longer than MAX_LINE with a token across the cut: scrubbed before it is cut
           + "error: " + "x" * (MAX_LINE - 7 - 1 - 16) + " " + SHAPES["github"][0] + "\n"
           + noise)
    result = scan_text(log, kb)
    assert any(h.entry for h in result.hits) and result.tracebacks and result.clues.get(clue)
    assert result.cut_lines == 1
    kept = "\n".join(_strings(result))
    assert "Failed to find C compiler" in kept and "<redacted>" in kept
    assert [part for part in LEAKS if part in kept] == []
    assert SHAPES["github"][0][:16] not in kept  # not even the part before the cut
