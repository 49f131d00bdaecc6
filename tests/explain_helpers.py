"""What explain's tests share: the wrappers pasted logs put around a line, and the small
readers of explain's answer (its codes in order, the first one, the answer as JSON, silence).

A test file imports what it needs (``from explain_helpers import codes, wrapped``) instead of
writing its own two-line copy; ``tests/test_explain_patterns.py`` re-exports them for the files
that import them from there.
"""

from __future__ import annotations

import json
import textwrap
from typing import List, Optional

from stackpeel.explain import explain_text

WRAPPERS = {
    "plain": lambda m: m,
    "torchrun-rank": lambda m: "[rank3]: " + m,
    "python-logging": lambda m: "2024-05-01 12:00:00,123 - ERROR - " + m,
    "glog": lambda m: "E0501 12:00:00.123456  1234 worker.cc:42] " + m,
    "ray-worker": lambda m: "(RayWorkerWrapper pid=4821, ip=10.0.0.2) " + m,
    "vllm-worker": lambda m: "(VllmWorker rank=1 pid=4821) ERROR 05-01 12:00:00 [multiproc_executor.py:42] " + m,
    "docker-compose": lambda m: "trainer-1  | " + m,
    "prose-backticks": lambda m: "When I start training I get `" + m + "` right away.",
    "prose-quotes": lambda m: 'The error is "' + m + '" and nothing else.',
    "markdown-quote": lambda m: "> " + m,
    "word-wrapped-80": lambda m: "\n".join(textwrap.wrap(m, 80, break_long_words=False, break_on_hyphens=False)),
    "terminal-cut-80": lambda m: "\n".join(m[i:i + 80] for i in range(0, len(m), 80)),
    "crlf": lambda m: "step 1\r\n" + m + "\r\n",
    # whole-stream prefixes of container and service logs (bench/explain_invariance.py)
    "kubectl-prefix": lambda m: "[pod/trainer-0/main] " + m,
    "journald": lambda m: "May 01 12:00:00 gpu-node-3 python3[4242]: " + m,
    "docker-json": lambda m: json.dumps({"log": m + "\n", "stream": "stderr", "time": "2024-05-01T12:00:00.123456789Z"}),
}


def wrapped(wrap: str, text: str) -> str:
    """``text`` with each of its lines passed through ``WRAPPERS[wrap]`` (a whole log, wrapped line by line)."""
    return "\n".join(WRAPPERS[wrap](line) for line in text.splitlines()) + "\n"


def codes_of(text: str) -> List[str]:
    """The codes explain names for ``text``, in its order (the helper every pattern file uses)."""
    return [c.code for c in explain_text(text).candidates]


def codes(text: str) -> List[str]:
    """The codes explain names for ``text`` read as a log whose last line ends (a newline is
    added where ``text`` has none), in its order: the helper the files of single cases use."""
    return codes_of(text if text.endswith("\n") else text + "\n")


def first(text: str) -> Optional[str]:
    """The first code explain names for ``text`` (a newline added where it has none), or None."""
    found = codes(text)
    return found[0] if found else None


def answer(text: str) -> dict:
    """explain's whole answer for ``text``, as the JSON report holds it."""
    return explain_text(text).to_dict()


def silent(text: str) -> bool:
    """True when explain answers "No known problem": exit code 0 and no candidate."""
    d = answer(text)
    return d["exit_code"] == 0 and not d["candidates"]


#: a worker's own traceback, its exception in ``{child}`` (tools45's launchers start from it too)
WORKER_TRACEBACK = """Traceback (most recent call last):
  File "train.py", line 10, in <module>
    main()
  File "train.py", line 8, in main
    build(cfg)
{child}
"""
#: torchrun (torch.distributed.elastic) after a worker's own traceback: the worker's exception
#: goes in ``{child}``, its exit status in ``{status}`` (tools43, tools44)
TORCHRUN_CHILD_FAILED = WORKER_TRACEBACK + """ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: {status}) local_rank: 0 (pid: 1234) of binary: /usr/bin/python3
Traceback (most recent call last):
  File "/usr/local/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper
    return f(*args, **kwargs)
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  host      : node1
  rank      : 0 (local_rank: 0)
  exitcode  : {status} (pid: 1234)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
"""
