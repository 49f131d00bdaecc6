"""Recall of explain on multi-GPU and GPU-container symptoms, from a symptom sweep (sweepg): 7 fresh
training threads (tests/corpus/explain/*.log with ``# collected: training-2026-12-02l``) taken in
search order for the symptoms users paste when NCCL, torch.distributed, the NVIDIA container hook
or a GPU scheduler fails (NCCL unhandled cuda error / invalid usage, ProcessGroupGloo socket
timeout, DistNetworkError, could not select device driver, NVML version mismatch, hook errors,
insufficient nvidia.com/gpu, deepspeed return codes). 4 of 7 ranked first before any rule; the
class the misses showed:

- ``could not select device driver "" with capabilities: [[gpu]]`` while the Docker CLI talks to
  Docker Desktop for Linux (its ``desktop-linux`` context is the current one, its socket is
  ``~/.docker/desktop/docker.sock``): Desktop runs containers in a VM with no NVIDIA runtime, so
  the refusal is docker-nvidia-runtime-not-registered, not a missing toolkit on the host
  (NVIDIA/nvidia-container-toolkit 814; elezar in #83: Desktop's VM has no toolkit). Docker
  Desktop for Windows (npipe, GPU support through WSL 2) and macOS (/Users) stay the toolkit.

- the NVIDIA runtime's own words when its prestart hook binary is missing (a partial install, a
  broken package release: NVIDIA/nvidia-container-runtime 68): ``inject NVIDIA hook: stat
  /usr/bin/nvidia-container-runtime-hook: no such file or directory`` (nvidia-container-runtime
  main.go) and the toolkit's ``failed to locate NVIDIA Container Runtime Hook`` (its runtime
  modifier; NVIDIA/nvidia-docker 1714): container-toolkit-missing, as Docker's ``exec:
  "nvidia-container-runtime-hook": executable file not found`` already was.

A refined line now carries the words (meaning and fix) of the code it was refined to, not those
of the code its signature is filed under.

Two threads stay misses (tests/test_explain_corpus.py): vLLM's bare ``NCCL error: invalid usage``
(an NCCL built for a newer CUDA than the driver is the maintainer's answer) and nccl-tests'
``'unhandled cuda error'`` under NCCL 1.0 (only the version number says so).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test

# code -> messages (each must rank the code first, whatever wraps it)
FAMILIES = {
    "container-toolkit-missing": [
        # nvidia-container-runtime main.go: exitOnError(addNVIDIAHook(&spec), "inject NVIDIA hook"),
        # as the runtime's log and Docker's error response print it (NVIDIA/nvidia-container-runtime#68)
        "2019/07/23 17:28:30 ERROR: nvidia-container-runtime: inject NVIDIA hook: stat "
        "/usr/bin/nvidia-container-runtime-hook: no such file or directory",
        "2019/07/23 14:19:45 ERROR: inject NVIDIA hook: stat /usr/bin/nvidia-container-runtime-hook: no such file or directory",
        "ERROR: inject NVIDIA hook: stat /usr/bin/nvidia-container-toolkit: no such file or directory",
        # the toolkit's runtime modifier ('failed to locate NVIDIA Container Runtime Hook: %v'), as
        # NVIDIA/nvidia-docker#1714's title quotes it
        "failed to locate NVIDIA Container Runtime Hook",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

# healthy lines of the same programs name nothing
test_healthy_hook_lines_name_nothing = healthy_test([
    "2024/01/05 10:00:00 Using prestart hook path: /usr/bin/nvidia-container-runtime-hook",
    "2019/07/23 14:19:45 Prestart hook added, executing runc",
])

# moby daemon/devices.go: fmt.Errorf("could not select device driver %q with capabilities: %v", ...)
REFUSAL = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].'
REFUSAL_NVIDIA = 'Error response from daemon: could not select device driver "nvidia" with capabilities: [[gpu]]'

# `docker context ls` rows as the Docker CLI prints them (the current context carries " *")
CTX_HEADER = "NAME              DESCRIPTION                               DOCKER ENDPOINT                                     ERROR"
CTX_DEFAULT = "default           Current DOCKER_HOST based configuration   unix:///var/run/docker.sock                         "
CTX_DESKTOP_CURRENT = "desktop-linux *   Docker Desktop                            unix:///home/papillon/.docker/desktop/docker.sock"
CTX_DESKTOP_IDLE = "desktop-linux     Docker Desktop                            unix:///home/papillon/.docker/desktop/docker.sock"
CTX_DEFAULT_CURRENT = "default *         Current DOCKER_HOST based configuration   unix:///var/run/docker.sock                         "
# Docker Desktop for Windows and macOS: the same context name, other endpoints
CTX_DESKTOP_WINDOWS = "desktop-linux *   Docker Desktop                            npipe:////./pipe/dockerDesktopLinuxEngine"
CTX_DESKTOP_MAC = "desktop-linux *   Docker Desktop                            unix:///Users/ana/.docker/run/docker.sock"
# the Docker CLI when the Desktop daemon is its endpoint and not running (cli/command/cli.go)
DESKTOP_SOCKET_DOWN = ("Cannot connect to the Docker daemon at unix:///home/ana/.docker/desktop/docker.sock. "
                       "Is the docker daemon running?")

DESKTOP = "docker-nvidia-runtime-not-registered"
TOOLKIT = "container-toolkit-missing"


def _first(text: str) -> str:
    return [c.code for c in explain_text(text + "\n").candidates][:1][0]


def _wrap(lines, how):
    if how == "plain":
        return "\n".join(lines)
    if how == "quoted":
        return "\n".join("> " + line for line in lines)
    if how == "fenced":
        return "```\n" + "\n".join(lines) + "\n```"
    if how == "timestamped":
        return "\n".join(f"2024-12-26T10:0{i}:00.000Z {line}" for i, line in enumerate(lines))
    if how == "prose":
        return "I get this error\n`" + lines[0] + "`\nand then:\n" + "\n".join(lines[1:])
    raise ValueError(how)


WRAPS = ["plain", "quoted", "fenced", "timestamped", "prose"]

DESKTOP_LOGS = {
    "context-ls-after": [REFUSAL, "docker context ls", CTX_HEADER, CTX_DEFAULT, CTX_DESKTOP_CURRENT],
    "context-ls-before": ["$ docker context ls", CTX_HEADER, CTX_DEFAULT, CTX_DESKTOP_CURRENT,
                          "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi", REFUSAL],
    "compose-nvidia-driver": [REFUSAL_NVIDIA, CTX_DESKTOP_CURRENT],
    "desktop-socket-down": [DESKTOP_SOCKET_DOWN, "after starting Docker Desktop again:", REFUSAL],
}


@pytest.mark.parametrize("how", WRAPS)
@pytest.mark.parametrize("name", list(DESKTOP_LOGS))
def test_refusal_under_docker_desktop_for_linux_is_its_daemon_without_nvidia(name, how):
    assert _first(_wrap(DESKTOP_LOGS[name], how)) == DESKTOP


TOOLKIT_LOGS = {
    "alone": [REFUSAL],
    "default-current": [REFUSAL, CTX_HEADER, CTX_DEFAULT_CURRENT, CTX_DESKTOP_IDLE],
    "windows-desktop": [REFUSAL, CTX_HEADER, CTX_DESKTOP_WINDOWS],
    "mac-desktop": [REFUSAL, CTX_HEADER, CTX_DESKTOP_MAC],
    "words-only": [REFUSAL, "I also have Docker Desktop installed on this Ubuntu box"],
}


@pytest.mark.parametrize("how", WRAPS)
@pytest.mark.parametrize("name", list(TOOLKIT_LOGS))
def test_refusal_elsewhere_stays_the_missing_toolkit(name, how):
    assert _first(_wrap(TOOLKIT_LOGS[name], how)) == TOOLKIT


def test_refined_line_carries_the_refined_codes_words():
    expl = explain_text("\n".join(DESKTOP_LOGS["context-ls-after"]) + "\n")
    top = expl.candidates[0]
    assert top.code == DESKTOP
    assert "docker context use default" in top.fix
    assert "runtime" in top.explanation and "device nodes" not in top.explanation
    # the unrefined refusal keeps the toolkit's own words
    plain = explain_text(REFUSAL + "\n").candidates[0]
    assert plain.code == TOOLKIT and "device nodes" in plain.explanation


@pytest.mark.parametrize("line", [CTX_DESKTOP_CURRENT, CTX_DEFAULT_CURRENT, DESKTOP_SOCKET_DOWN.split(".")[0] + ".docker/desktop/docker.sock",
                                  "docker context use desktop-linux", "Current context is now \"desktop-linux\""])
def test_context_lines_alone_name_nothing(line):
    expl = explain_text(line + "\n")
    assert DESKTOP not in [c.code for c in expl.candidates if c.kind == "root" and c.evidence]
