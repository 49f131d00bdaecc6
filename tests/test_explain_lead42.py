"""lead42: structured log records at error level are error lines.

Go's log/slog TextHandler prints its level in capitals (``level=ERROR``; ollama's server log), and zap,
logrus and slog's JSONHandler write a ``"level"`` key beside the message. Before, only logrus' lowercase
``level=error`` was read, so an ollama record such as ``level=ERROR ... msg="llama runner process has
terminated"`` answered "No error in this log". A configuration's ``log_level`` and a ``"level"`` key
without a message stay settings, not records (tools42's HEALTHY_ERROR_WORDS_RE).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.parser import error_shape

RECORDS = [
    # ollama (Go log/slog TextHandler)
    'time=2025-03-02T06:28:39.656Z level=ERROR source=server.go:421 msg="llama runner process has terminated"',
    'time=2025-01-01T10:00:00Z level=FATAL msg="could not start server"',
    # slog JSONHandler
    '{"time":"2025-01-01T10:00:00Z","level":"ERROR","msg":"llama runner process has terminated"}',
    # zap production config
    '{"level":"error","ts":1700000000.1,"caller":"plugin/server.go:120","msg":"allocation rejected"}',
    # logrus JSONFormatter (keys sorted: level before msg)
    '{"level":"fatal","msg":"failed to initialize NVML","time":"2025-01-01T10:00:00Z"}',
    # message first, then the level
    '{"message": "worker exited", "severity": "ERROR"}',
]

SETTINGS = [
    "log_level: ERROR",
    '{"log_level": "error", "port": 11434}',
    '{"level": "error"}',
    'time=2025-01-01T10:00:00Z level=INFO msg="error count 0"',
    '{"level":"info","msg":"loaded 0 errors"}',
    '{"level":"warn","msg":"retrying"}',
]


@pytest.mark.parametrize("line", RECORDS)
def test_error_level_record_is_an_error_line(line):
    assert error_shape(line) is not None


@pytest.mark.parametrize("line", SETTINGS)
def test_settings_and_lower_levels_are_not_error_lines(line):
    assert error_shape(line) is None


@pytest.mark.parametrize("line", RECORDS)
def test_error_level_record_is_not_answered_with_silence(line):
    d = explain_text(line + "\n").to_dict()
    assert d["exit_code"] != 0 and (d["candidates"] or d["fingerprint"])


@pytest.mark.parametrize("line", SETTINGS)
def test_settings_stay_silent(line):
    d = explain_text(line + "\n").to_dict()
    assert d["exit_code"] == 0 and not d["candidates"]


def test_decoded_error_record_keeps_its_signature():
    # the level only adds a logger's prefix: the message's own signature still names the cause
    line = '{"level":"error","ts":1.5,"msg":"failed to initialize NVML: Driver/library version mismatch"}'
    plain = "failed to initialize NVML: Driver/library version mismatch"
    codes = [c["code"] for c in explain_text(line + "\n").to_dict()["candidates"]]
    assert codes and codes[:1] == [c["code"] for c in explain_text(plain + "\n").to_dict()["candidates"]][:1]


def test_docker_json_file_records_are_read_as_before():
    line = '{"log":"Segmentation fault (core dumped)\\n","stream":"stderr","time":"2025-01-01T00:00:00Z"}'
    assert explain_text(line + "\n").to_dict()["exit_code"] != 0
    info = '{"log":"loading weights\\n","stream":"stdout","time":"2025-01-01T00:00:00Z"}'
    d = explain_text(info + "\n").to_dict()
    assert d["exit_code"] == 0 and not d["candidates"]
