"""Keep secrets out of everything stackpeel prints: the one redaction module.

Every text stackpeel prints passes through here: the report of ``check`` (its JSON form,
before any renderer sees it), ``explain``'s log excerpts (as lines are read, and the
finished output again), ``run``'s command lines, exception messages and crash dumps.

Three layers, all applied by :func:`scrub` / :func:`scrub_text`:

- **Environment values by allowlist.** Where a mapping of environment variables appears
  (``NAME: value`` with an upper-case name), only the values of variables known to be safe
  and useful for a diagnosis (:data:`SAFE_ENV`, :data:`SAFE_ENV_PREFIXES`) are shown; every
  other variable shows its name and ``<set>``. Values of variables that are not safe and
  look secret (by name, or by shape) are also replaced wherever they appear in text.
- **Credential shapes**, whether or not any variable holds them (:data:`DETECTORS`): JWTs,
  PEM private-key blocks (and their base64 body lines), ``Authorization: Basic/Bearer``
  headers, URL credentials with or without a user (``redis://:pw@host``), AWS, Google
  (``AIza...``), GitHub, GitLab, Slack, Hugging Face and OpenAI/Anthropic-style keys,
  ``--password=X`` / ``--token X`` arguments, ``key = value`` and ``NAME=value`` pairs whose
  key looks secret, and high-entropy tokens right after a secret-looking word.
- **Identity, on request** (``--redact``): user name, home directory and host name.

Each detector runs only on text that holds one of its literals, so a large log without
credentials costs a few substring searches; no pattern has nested quantifiers.
"""

from __future__ import annotations

import math
import os
import re
import socket
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

PLACEHOLDER = "<redacted>"
SET = "<set>"

#: environment variable names that look like they hold secrets (always hidden)
SECRET_NAME = re.compile(
    r"(TOKEN(?![A-Z])|SECRET|PASSW(OR)?D|PASSPHRASE|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|_KEY$|^KEY$|AUTH|"
    r"COOKIE|SESSION|SIGNATURE|DSN$|WEBHOOK|_PASS$|^PASS$)",
    re.IGNORECASE,
)

#: variables whose values are shown: what a diagnosis of the GPU stack reads, nothing else
SAFE_ENV = frozenset("""
    PATH LD_LIBRARY_PATH LD_PRELOAD LIBRARY_PATH CPATH C_INCLUDE_PATH PKG_CONFIG_PATH
    CC CXX CPP LD AR CFLAGS CXXFLAGS CPPFLAGS LDFLAGS CUDAHOSTCXX NVCC_APPEND_FLAGS NVCC_PREPEND_FLAGS
    PYTHONPATH PYTHONHOME PYTHONNOUSERSITE PYTHONSAFEPATH PYTHONDONTWRITEBYTECODE PYTHONUNBUFFERED
    VIRTUAL_ENV CONDA_PREFIX CONDA_DEFAULT_ENV CONDA_EXE CONDA_SHLVL PYENV_ROOT PYENV_VERSION PIPX_HOME
    HOME USER LOGNAME SHELL TERM LANG LANGUAGE TZ TMPDIR TEMP TMP PWD OLDPWD HOSTNAME
    XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR
    OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS KMP_AFFINITY
    HF_HOME HF_HUB_CACHE HF_HUB_OFFLINE HF_DATASETS_CACHE TRANSFORMERS_CACHE TRANSFORMERS_OFFLINE
    HF_HUB_ENABLE_HF_TRANSFER TOKENIZERS_PARALLELISM
    LOCAL_RANK RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GROUP_RANK NODE_RANK
    SLURM_JOB_ID SLURM_PROCID SLURM_LOCALID SLURM_NTASKS SLURM_JOB_NODELIST SLURM_STEP_GPUS
    KUBERNETES_SERVICE_HOST SINGULARITY_NAME APPTAINER_NAME
    NO_COLOR FORCE_COLOR COLUMNS LINES DISPLAY
""".split())
SAFE_ENV_PREFIXES = ("CUDA_", "NCCL_", "NVIDIA_", "TRITON_", "TORCH_", "PYTORCH_", "TORCHINDUCTOR_", "TORCHDYNAMO_",
                     "LC_", "CUDNN_", "CUBLAS_", "CUBLASLT_", "NVTE_", "FLA_", "XLA_", "ROCM_", "HIP_", "HSA_",
                     "ACCELERATE_", "DS_", "STACKPEEL_", "MAX_JOBS", "GPU_", "OMPI_COMM_WORLD_", "UCX_", "FI_")

_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{1,63}$")


def secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name)) and name not in ("SSH_AUTH_SOCK", "XAUTHORITY", "TRITON_CACHE_AUTOTUNING")


def env_value_shown(name: str) -> bool:
    """Is this variable on the allowlist (and not secret by its name)?"""
    if secret_name(name):
        return False
    return name in SAFE_ENV or name.startswith(SAFE_ENV_PREFIXES)


def env_view(environ: Mapping[str, str]) -> dict:
    """A mapping of environment variables as stackpeel may print it."""
    return {k: (v if env_value_shown(k) else SET) for k, v in environ.items()}


# -- shapes --------------------------------------------------------------------------------------

def _entropy(s: str) -> float:
    counts = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def token_like(s: str, min_len: int = 16) -> bool:
    """Long, mixed letters and digits, high entropy: a key rather than a word, path or version."""
    s = s.strip("\"'`,;()[]{}<>")
    if len(s) < min_len or PLACEHOLDER in s or " " in s:
        return False
    if s.count("/") > 2 or s.count(".") > 2 or s.startswith(("/", "~", ".")):
        return False  # a path, a dotted name
    letters = sum(ch.isalpha() for ch in s)
    digits = sum(ch.isdigit() for ch in s)
    return letters >= 4 and digits >= 2 and _entropy(s) >= 3.2


_SECRET_WORD = (r"(?:pass(?:word|wd|phrase)?|pwd|secrets?|token|api[_\-]?keys?|apikey|access[_\-]?keys?|"
                r"private[_\-]?keys?|auth[_\-]?(?:key|token)|credentials?|client[_\-]?secret|cookie|dsn|"
                r"session[_\-]?(?:id|key|token))")
#: where a secret word starts a key component: not inside a lower-case word ("bypass",
#: "mytoken"), but after "_", "-", ".", upper case ("DBPASSWORD") or at a camel-case hump ("apiToken")
_START = r"(?:(?<![a-z])|(?=[A-Z]))"
_END = r"(?![A-Za-z0-9])"
#: ``key = value``, ``NAME=value``, ``"key": "value"``, ``key: value`` whose key holds a secret
#: word as a whole component (``tokenizers`` and ``max_tokens`` are not keys of secrets)
_KEY_VALUE = re.compile(
    r"(" + _START + r"(?i:" + _SECRET_WORD + r")" + _END + r"[A-Za-z0-9_.\-]{0,20}"
    r"[\"']?[ \t]*(?:=|:(?!//))[ \t]*)([\"']?)([^\s\"',;&]{1,4096})")
_ARG = re.compile(r"((?<![A-Za-z0-9_\-])--?[A-Za-z0-9_\-]{0,40}?" + _START + r"(?i:" + _SECRET_WORD + r")" + _END +
                  r"[A-Za-z0-9_\-]{0,40})(=|[ \t]+)(?!-)([^\s\"']{1,4096}|\"[^\"]{0,4096}\"|'[^']{0,4096}')")
_ARG_FLAG = re.compile(r"^--?[A-Za-z0-9_\-]{0,40}?" + _START + r"(?i:" + _SECRET_WORD + r")" + _END +
                       r"[A-Za-z0-9_\-]{0,40}$")
_WORD_THEN_TOKEN = re.compile(r"(" + _START + r"(?i:" + _SECRET_WORD + r"|(?:api|access|secret|private) keys?)" + _END +
                              r"[^\n]{0,24}?)([A-Za-z0-9_\-+/=.~]{16,512})")
_PEM_LINE = re.compile(r"(?m)^[ \t]*[A-Za-z0-9+/]{40,512}={0,2}[ \t]*$")
#: words any of the key/argv/word detectors needs, lower-cased
_SECRET_LITERALS = ("pass", "pwd", "secret", "token", "key", "credential", "cookie", "dsn", "session")

_NOT_SECRET_VALUES = {"none", "null", "true", "false", "0", "1", "yes", "no", "unset", "set", "<set>", PLACEHOLDER,
                      "required", "optional", "str", "string", "bool", "int", "***", "xxx", "..."}


_KEY_BEFORE = re.compile(r"[A-Za-z0-9_]{0,40}$")


def _kv(m: "re.Match") -> str:
    key = m.group(1)
    whole = _KEY_BEFORE.search(m.string, max(0, m.start() - 40), m.start()).group(0) + key
    if re.match(r"(?:OLD)?PWD\b", whole):  # the shell's working directory
        return m.group(0)
    value = m.group(3)
    if (value.lower() in _NOT_SECRET_VALUES or value.startswith(("$", "{", "%(", "<")) or set(value) <= {"*", "x", "X"}
            or (value.isdigit() and len(value) <= 4)):
        return m.group(0)
    return key + m.group(2) + PLACEHOLDER


def _arg(m: "re.Match") -> str:
    return m.group(1) + m.group(2) + PLACEHOLDER


def _word_token(m: "re.Match") -> str:
    return m.group(1) + PLACEHOLDER if token_like(m.group(2)) else m.group(0)


def _pem_line(m: "re.Match") -> str:
    s = m.group(0).strip()
    mixed = any(c.islower() for c in s) and any(c.isupper() for c in s) and any(c.isdigit() for c in s)
    return m.group(0).replace(s, PLACEHOLDER) if mixed else m.group(0)


Replacement = Union[str, Callable[["re.Match"], str]]

#: (name, lower-case literals, pattern, replacement). A detector runs on a text only if its
#: lower-cased form holds one of its literals (no literals: always).
DETECTORS: List[Tuple[str, Tuple[str, ...], str, Replacement]] = [
    ("pem-body-line", (), _PEM_LINE.pattern, _pem_line),
    ("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", PLACEHOLDER),
    ("authorization-header", ("authorization",),
     r"(?i)(authorization[\"']?[ \t]*[:=][ \t]*[\"']?)(?:(basic|bearer|token|digest|negotiate|ntlm)[ \t]+)?"
     r"([^\s\"',]{1,4096})",
     lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + PLACEHOLDER),
    ("bearer", ("bearer",), r"(?i)(\bbearer\s+)[A-Za-z0-9._\-~+/]{12,}=*", r"\1" + PLACEHOLDER),
    ("basic-auth", ("basic",), r"(?i)(\bbasic\s+)[A-Za-z0-9+/]{12,}={0,2}", r"\1" + PLACEHOLDER),
    ("url-credentials", ("@",), r"://[^/\s:@]{0,256}:[^/\s@]{1,1024}@", "://" + PLACEHOLDER + "@"),
    ("url-token-user", ("@",), r"://[A-Za-z0-9_\-]{20,256}@", "://" + PLACEHOLDER + "@"),
    ("huggingface", ("hf_",), r"\bhf_[A-Za-z0-9]{20,}", PLACEHOLDER),
    ("github", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{20,}", PLACEHOLDER),
    ("github-pat", ("github_pat_",), r"github_pat_[A-Za-z0-9_]{20,}", PLACEHOLDER),
    ("gitlab", ("glpat-",), r"glpat-[A-Za-z0-9_\-]{20,}", PLACEHOLDER),
    ("aws-access-key", ("akia", "asia"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", PLACEHOLDER),
    ("google-api-key", ("aiza",), r"\bAIza[0-9A-Za-z_\-]{30,}", PLACEHOLDER),
    ("openai-style", ("sk-",), r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{20,}", PLACEHOLDER),
    ("slack", ("xox",), r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", PLACEHOLDER),
]
#: detectors that need a secret word: run line by line, on the lines that hold one
WORD_DETECTORS = [("argv-secret", _ARG, _arg), ("key-value", _KEY_VALUE, _kv),
                  ("word-then-token", _WORD_THEN_TOKEN, _word_token)]
_HAS_SECRET_WORD = re.compile("|".join(_SECRET_LITERALS))
_COMPILED = [(name, lits, re.compile(pat), repl) for name, lits, pat, repl in DETECTORS]


_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}-----")
PEM_MAX = 16384     # a 8192-bit RSA key is under 7 KB in PEM


def scrub_pem(text: str) -> str:
    """Private-key blocks, BEGIN to END (or the BEGIN line alone when no END follows within
    PEM_MAX): every END is found once, so text full of BEGIN lines stays linear."""
    import bisect

    ends = [(m.start(), m.end()) for m in _PEM_END.finditer(text)] if "-----END" in text else []
    starts = [e[0] for e in ends]
    out, pos = [], 0
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < pos:
            continue  # inside a block already replaced
        i = bisect.bisect_left(starts, m.end())
        out.append(text[pos:m.start()])
        out.append(PLACEHOLDER)
        pos = ends[i][1] if i < len(ends) and starts[i] - m.end() <= PEM_MAX else m.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def scrub_shapes(text: str) -> str:
    if "-----BEGIN" in text:
        text = scrub_pem(text)
    lower = text.lower()
    for _name, literals, pattern, repl in _COMPILED:
        if not literals or any(lit in lower for lit in literals):
            text = pattern.sub(repl, text)
            lower = text.lower() if literals else lower
    if _HAS_SECRET_WORD.search(lower):
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if _HAS_SECRET_WORD.search(line.lower()):
                for _name, pattern, repl in WORD_DETECTORS:
                    line = pattern.sub(repl, line)
                lines[i] = line
        text = "\n".join(lines)
    return text


# -- values from the environment ------------------------------------------------------------------

def secret_values(environ: Mapping[str, str]) -> List[str]:
    """Values to replace wherever they appear: those of variables whose names look secret, and
    token-like values of variables that are not on the allowlist."""
    out = []
    for name, value in environ.items():
        if not value or len(value) < 4:
            continue
        if secret_name(name) or (not env_value_shown(name) and token_like(value, 12)):
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
    from .host import machine_identity  # the machine id names this machine as surely as its host name
    mid = machine_identity().get("machine_id")
    if mid and len(mid) >= 8:
        vals.append(mid)
    try:
        host = socket.gethostname()
        if host and len(host) >= 3 and host != "localhost":
            vals.append(host)
    except OSError:
        pass
    return sorted(set(vals), key=len, reverse=True)


def scrub_text(text: str, values: Iterable[str] = (), shapes: bool = True) -> str:
    for v in values:
        if v in text:
            text = text.replace(v, PLACEHOLDER)
    return scrub_shapes(text) if shapes else text


def scrub_argv(argv: Sequence[str], values: Iterable[str] = ()) -> List[str]:
    """A command line as it may be printed: ``--token X`` hides X, ``--password=X`` hides X."""
    values = list(values)
    out: List[str] = []
    hide_next = False
    for a in argv:
        if not isinstance(a, str):
            out.append(a)
            continue
        if hide_next and not a.startswith("-"):
            out.append(PLACEHOLDER)
            hide_next = False
            continue
        hide_next = bool(_ARG_FLAG.match(a))
        out.append(scrub_text(a, values))
    return out


def scrub(obj: Any, values: Iterable[str] = (), shapes: bool = True) -> Any:
    """A copy of a JSON-like structure with secrets replaced in keys and strings, environment
    mappings shown by allowlist, and lists of strings read as command lines."""
    values = list(values)
    if isinstance(obj, str):
        return scrub_text(obj, values, shapes)
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            key = scrub(k, values, shapes)
            if isinstance(k, str) and isinstance(v, str) and _ENV_NAME.match(k) and not env_value_shown(k):
                out[key] = SET if v else v
            else:
                out[key] = scrub(v, values, shapes)
        return out
    if isinstance(obj, (list, tuple)):
        if obj and all(isinstance(v, str) for v in obj):
            return scrub_argv(obj, values) if shapes else [scrub_text(v, values, shapes) for v in obj]
        return [scrub(v, values, shapes) for v in obj]
    return obj


def scrub_fields(obj: Any, values: Iterable[str] = (), shapes: bool = True) -> Any:
    """A copy of a frozen dataclass tree (``explain``'s :class:`Explanation`) with every string
    field scrubbed. For renderers whose output is markup (HTML): scrubbing the finished page
    would also rewrite its own style and script (``--pass:#1a7f37`` reads as a secret pair)."""
    import dataclasses

    values = list(values)
    if isinstance(obj, str):
        return scrub_text(obj, values, shapes)
    if isinstance(obj, tuple):
        return tuple(scrub_fields(v, values, shapes) for v in obj)
    if isinstance(obj, list):
        return [scrub_fields(v, values, shapes) for v in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: scrub_fields(getattr(obj, f.name), values, shapes) for f in dataclasses.fields(obj)
                   if f.init}
        return dataclasses.replace(obj, **changes)
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
