"""Code that runs inside the *target* interpreter.

Rules for every module here:

- standard library only, and valid on Python 3.8 to 3.13 (no ``match``, no
  ``X | Y`` annotations evaluated at runtime, no ``str.removeprefix``...);
- the runner loads each file by path inside a child process, under the module name
  ``_stackpeel_probe_<name>``, so a probe named ``kernels`` cannot shadow a real
  library of that name. stackpeel's own process may import a pure helper from these
  modules (they are standard-library only), but never calls a probe function: probing
  happens in children;
- a probe is a function ``def name(inp: dict) -> dict``. ``inp["deps"]`` holds the facts of
  the checks it requires, ``inp["options"]`` its check's options. It returns facts
  (JSON-serialisable) and catches the failures it expects, recording them as facts
  (exception type, message, stderr); an unexpected exception becomes an ``error``
  result with its traceback;
- shared helpers live in ``_common.py``; import it as
  ``import _stackpeel_probe__common as common``. ``common.sibling(name)`` loads another
  probe module the same way the runner does.

This file itself is never loaded in the target interpreter.
"""
