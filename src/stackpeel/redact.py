"""Keep secrets out of every report.

Two layers, both applied to the report's JSON form so that no renderer can forget:

- **Secrets, always.** Values of environment variables whose *names* look secret
  (``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*_KEY``, ``*CREDENTIAL*``...) are replaced
  wherever they appear, and so is any text shaped like a well-known credential
  (Hugging Face ``hf_...``, GitHub ``ghp_...``, AWS ``AKIA...``, ``sk-...`` API keys, Slack
  tokens, passwords in URLs, ``Bearer`` headers) even when no variable holds it.
- **Identity, on request** (``--redact``): user name, home directory and host name.
"""

from __future__ import annotations

import os
import re
import socket
from typing import Any, Iterable, List, Mapping, Optional

SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|_KEY$|^KEY$|AUTH|COOKIE|SESSION|"
    r"SIGNATURE|DSN$|WEBHOOK)",
    re.IGNORECASE,
)
#: names that match the pattern above but hold no secret and are useful to show
NOT_SECRET = {"SSH_AUTH_SOCK", "XAUTHORITY", "TRITON_CACHE_AUTOTUNING"}
PLACEHOLDER = "<redacted>"

#: (literals, pattern, replacement): the pattern runs only on text holding one of its literals,
#: so a 100 MB log without credentials costs a few substring searches
SECRET_SHAPES = [
    (("hf_",), r"hf_[A-Za-z0-9]{20,}", PLACEHOLDER),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"gh[pousr]_[A-Za-z0-9]{20,}", PLACEHOLDER),
    (("github_pat_",), r"github_pat_[A-Za-z0-9_]{20,}", PLACEHOLDER),
    (("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", PLACEHOLDER),
    (("sk-",), r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}", PLACEHOLDER),
    (("xox",), r"xox[abposr]-[A-Za-z0-9\-]{10,}", PLACEHOLDER),
    (("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}", PLACEHOLDER),
    (("earer", "EARER"), r"([Bb][Ee][Aa][Rr][Ee][Rr]\s+)[A-Za-z0-9._\-~+/]{16,}=*", r"\1" + PLACEHOLDER),
    (("@",), r"://[^/\s:@]+:[^/\s@]+@", "://" + PLACEHOLDER + "@"),  # user:password@ in URLs
]
_SHAPES = [(lits, re.compile(pat), repl) for lits, pat, repl in SECRET_SHAPES]


def secret_values(environ: Mapping[str, str]) -> List[str]:
    """Values of environment variables whose names look like they hold secrets."""
    out = []
    for name, value in environ.items():
        if name in NOT_SECRET or not SECRET_NAME.search(name):
            continue
        if value and len(value) >= 4:
            out.append(value)
    return sorted(set(out), key=len, reverse=True)


def identity_values(environ: Mapping[str, str]) -> List[str]:
    vals = []
    home = environ.get("HOME") or os.path.expanduser("~")
    if home and home not in ("/", "/root"):
        vals.append(home)
    for v in (environ.get("USER"), environ.get("LOGNAME")):
        if v and len(v) >= 3 and v != "root":
            vals.append(v)
    try:
        host = socket.gethostname()
        if host and len(host) >= 3 and host != "localhost":
            vals.append(host)
    except OSError:
        pass
    return sorted(set(vals), key=len, reverse=True)


def scrub_text(text: str, values: Iterable[str], shapes: bool = True) -> str:
    for v in values:
        if v in text:
            text = text.replace(v, PLACEHOLDER)
    if shapes:
        for literals, pattern, repl in _SHAPES:
            if any(lit in text for lit in literals):
                text = pattern.sub(repl, text)
    return text


def scrub(obj: Any, values: Iterable[str], shapes: bool = True) -> Any:
    """Return a copy of a JSON-like structure with secrets replaced in keys and strings."""
    values = list(values)
    if isinstance(obj, str):
        return scrub_text(obj, values, shapes)
    if isinstance(obj, Mapping):
        return {scrub(k, values, shapes): scrub(v, values, shapes) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [scrub(v, values, shapes) for v in obj]
    return obj


def redact_report_dict(data: Mapping[str, Any], environ: Optional[Mapping[str, str]] = None,
                       identity: bool = False) -> Any:
    environ = os.environ if environ is None else environ
    values = secret_values(environ)
    if identity:
        values = sorted(set(values) | set(identity_values(environ)), key=len, reverse=True)
    return scrub(data, values)


def scrub_output(text: str, environ: Optional[Mapping[str, str]] = None) -> str:
    """Last line of defence for renderers of text stackpeel did not produce itself (a pasted
    log, a monitored program's exception messages): secrets out of the finished output."""
    return scrub_text(text, secret_values(os.environ if environ is None else environ))
