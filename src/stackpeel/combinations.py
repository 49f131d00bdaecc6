"""Known-bad combinations of versions, GPUs and drivers: a pure matcher over observed versions.

The data lives in ``knowledge/combinations.toml`` (its header documents the format). Each
entry holds a condition over observed versions, the finding code the combination produces,
what it breaks, its severity, fix and source. :func:`match_combinations` evaluates every
entry against a dict of observed versions, without importing anything: ``check`` feeds it
the versions its probes read from package metadata and the GPUs the driver reported;
``explain`` feeds it the versions a log prints (:func:`versions_from_text`).

Version specifiers are parsed here with the standard library (no ``packaging``):
comma-separated clauses ``==``, ``!=``, ``>=``, ``<=``, ``>``, ``<``, ``~=``, with ``==X.*``
and ``!=X.*`` prefix forms, ``*`` (present, any version). Comparisons follow PEP 440's
ordering of versions (``3.7.1rc1 < 3.7.1 < 3.7.1.post1``, ``0.6.0.dev0 < 0.6.0``) the way
libraries' own guards compare ``packaging.version.Version`` objects: a pre-release of V is
below V for ``<V`` too. A local label (``+cu130``) is ignored unless the clause names one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as _toml  # type: ignore[no-redef]

DATA_FILE = Path(__file__).resolve().parent / "knowledge" / "combinations.toml"

#: keys of the versions dict that are not distributions (the rest are distribution names)
SPECIAL_KEYS = ("gpu_cc", "driver", "cuda", "cuda_driver", "python", "machine")
#: special keys whose value is a name, not a version (:class:`NameSpecifier`)
NAME_KEYS = ("machine",)
#: special keys an entry cannot do without even for a log (``partial``): the host's architecture
#: decides which build of a wheel is installed, so an entry about one is never assumed of a log
#: that does not show it
NEVER_ASSUMED = ("machine",)
SEVERITIES = ("blocking", "degraded", "info")

_VERSION = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>\d*))?"
    r"(?:(?:-(?P<post_n1>\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(?P<post_n2>\d*)))?"
    r"(?:[-_.]?dev[-_.]?(?P<dev_n>\d*))?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$",
    re.IGNORECASE,
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


class SpecifierError(ValueError):
    """A version or specifier in the data file cannot be parsed."""


@dataclass(frozen=True, order=False)
class Version:
    """A PEP 440 version: ``release`` padded for comparison, pre/post/dev, local label."""

    text: str
    epoch: int
    release: Tuple[int, ...]
    pre: Optional[Tuple[int, int]]
    post: Optional[int]
    dev: Optional[int]
    local: Optional[str]

    def key(self, width: int = 0) -> tuple:
        rel = self.release + (0,) * max(0, width - len(self.release))
        # dev-only releases sort before pre-releases; a final release after them; post after that
        if self.pre is None and self.post is None and self.dev is not None:
            pre = (-1, 0)
        elif self.pre is None:
            pre = (3, 0)
        else:
            pre = self.pre
        post = -1 if self.post is None else self.post
        dev = float("inf") if self.dev is None else self.dev
        return (self.epoch, rel, pre, post, dev)

    def public(self) -> str:
        return self.text.split("+", 1)[0]


def parse_version(text: Any) -> Optional[Version]:
    """``Version`` for '2.11.0+cu130', '3.6.0', '0.6.0.dev0', '580.159.04', '9.0'; None if unparsable."""
    if text is None:
        return None
    s = str(text).strip()
    m = _VERSION.match(s)
    if not m:
        return None
    pre = None
    if m.group("pre_l"):
        pre = (_PRE_RANK[m.group("pre_l").lower()], int(m.group("pre_n") or 0))
    post = m.group("post_n1") if m.group("post_n1") is not None else m.group("post_n2")
    dev = m.group("dev_n")
    return Version(text=s, epoch=int(m.group("epoch") or 0),
                   release=tuple(int(p) for p in m.group("release").split(".")), pre=pre,
                   post=None if post is None else int(post or 0),
                   dev=None if dev is None else int(dev or 0),
                   local=m.group("local"))


def _cmp(a: Version, b: Version) -> int:
    width = max(len(a.release), len(b.release))
    ka, kb = a.key(width), b.key(width)
    return (ka > kb) - (ka < kb)


_CLAUSE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*(\S+?)\s*$")


@dataclass(frozen=True)
class Specifier:
    """A comma-separated set of version clauses; all must hold."""

    text: str
    clauses: Tuple[Tuple[str, str], ...]

    def contains(self, version: Any) -> bool:
        v = version if isinstance(version, Version) else parse_version(version)
        if v is None:
            return False
        return all(_clause_holds(op, target, v) for op, target in self.clauses)


def parse_specifier(text: str) -> Specifier:
    """Parse '>=3.4.0,<3.7.1', '==2.5.*', '!=2.5.1', '~=0.5.2', '*'. Raises SpecifierError."""
    s = str(text).strip()
    if s in ("*", ""):
        return Specifier(s, ())
    clauses = []
    for part in s.split(","):
        m = _CLAUSE.match(part)
        if not m:
            raise SpecifierError(f"cannot parse version clause {part.strip()!r} in {s!r}")
        op, target = m.group(1), m.group(2)
        base = target[:-2] if target.endswith(".*") else target
        if target.endswith(".*") and op not in ("==", "!="):
            raise SpecifierError(f"'.*' only goes with == or != ({part.strip()!r})")
        if parse_version(base) is None:
            raise SpecifierError(f"cannot parse version {target!r} in {s!r}")
        if op == "~=" and len(parse_version(base).release) < 2:
            raise SpecifierError(f"~= needs at least two release parts ({part.strip()!r})")
        clauses.append((op, target))
    return Specifier(s, tuple(clauses))


#: spellings of one architecture: platform.machine() says arm64 on macOS, AMD64 on Windows
_MACHINE_ALIASES = {"arm64": "aarch64", "amd64": "x86_64", "x64": "x86_64"}


def _machine_name(text: Any) -> str:
    name = str(text or "").strip().lower()
    return _MACHINE_ALIASES.get(name, name)


@dataclass(frozen=True)
class NameSpecifier:
    """A comma-separated set of name clauses for a key whose value is a name (``machine``):
    ``aarch64`` or ``==aarch64`` (that name), ``!=x86_64`` (any other); all must hold. Names
    compare in lower case, with platform.machine()'s other spellings (arm64, AMD64) folded in."""

    text: str
    clauses: Tuple[Tuple[str, str], ...]

    def contains(self, value: Any) -> bool:
        name = _machine_name(value)
        if not name:
            return False
        return all((name == target) == (op == "==") for op, target in self.clauses)


def parse_name_specifier(text: str) -> NameSpecifier:
    """Parse 'aarch64', '==aarch64', '!=x86_64', '*'. Raises SpecifierError."""
    s = str(text).strip()
    if s in ("*", ""):
        return NameSpecifier(s, ())
    clauses = []
    for part in s.split(","):
        m = re.match(r"^\s*(==|!=)?\s*([A-Za-z0-9_]+)\s*$", part)
        if not m:
            raise SpecifierError(f"cannot parse name clause {part.strip()!r} in {s!r}")
        clauses.append((m.group(1) or "==", _machine_name(m.group(2))))
    return NameSpecifier(s, tuple(clauses))


def _clause_holds(op: str, target: str, v: Version) -> bool:
    if op == "===":
        return v.text == target
    if target.endswith(".*"):
        prefix = parse_version(target[:-2])
        assert prefix is not None
        n = len(prefix.release)
        same = v.epoch == prefix.epoch and (v.release + (0,) * n)[:n] == prefix.release
        return same if op == "==" else not same
    t = parse_version(target)
    assert t is not None
    if t.local is None and v.local is not None:  # '==2.11.0' matches '2.11.0+cu130'
        v = parse_version(v.public()) or v
    c = _cmp(v, t)
    if op in ("==", "!=") and t.local is not None:  # '==2.11.0+cu130' names the build too
        same = c == 0 and (v.local or "").lower() == t.local.lower()
        return same if op == "==" else not same
    if op == "==":
        return c == 0
    if op == "!=":
        return c != 0
    if op == ">=":
        return c >= 0
    if op == "<=":
        return c <= 0
    if op == ">":
        return c > 0
    if op == "<":
        return c < 0
    if op == "~=":  # ~=X.Y.Z: >=X.Y.Z, ==X.Y.*
        prefix = ".".join(str(p) for p in t.release[:-1]) + ".*"
        return c >= 0 and _clause_holds("==", prefix, v)
    raise SpecifierError(op)  # pragma: no cover - _CLAUSE admits nothing else


# --------------------------------------------------------------------------- entries

@dataclass(frozen=True)
class Combination:
    """One entry of the data file."""

    id: str
    code: str
    severity: str
    breaks: str
    consequence: str
    fix: str
    source: str
    when: Mapping[str, Union[Specifier, NameSpecifier]]
    unless: Mapping[str, Union[Specifier, NameSpecifier]] = field(default_factory=dict)
    commands: Tuple[Tuple[str, str], ...] = ()
    links: Tuple[str, ...] = ()
    #: check ids that measure the same thing live; ``check`` leaves the entry to them when they ran
    covered_by: Tuple[str, ...] = ()
    gpu: str = ""
    #: codes of the failures this combination produces (explain ranks them)
    explains: Tuple[str, ...] = ()

    def commands_for(self, python: str, versions: Mapping[str, Any], limit: int = 2) -> List[str]:
        """The entry's commands for one host (``check``) or one log (``explain``): ``{python}`` is
        the interpreter, ``{version:NAME}`` the version of distribution NAME in ``versions``
        without its local label (``2.7.0`` of ``2.7.0+cu126``: pip's ``==2.7.0`` keeps the
        installed CUDA build). A command whose version is unknown is left out."""
        out: List[str] = []
        for _, cmd in self.commands:
            missing = False

            def installed(m: "re.Match[str]") -> str:
                nonlocal missing
                v = versions.get(m.group(1))
                if not isinstance(v, str) or not v:
                    missing = True
                    return m.group(0)
                return v.split("+", 1)[0]

            text = _VERSION_FIELD.sub(installed, cmd.replace("{python}", python))
            if not missing and len(out) < limit:
                out.append(text)
        return out


#: ``{version:torch}`` in an entry's command: the version of that distribution
_VERSION_FIELD = re.compile(r"\{version:([A-Za-z0-9_.-]+)\}")


@dataclass(frozen=True)
class Match:
    """An entry whose condition holds for the observed versions."""

    combination: Combination
    #: key -> observed value that satisfied the condition (for gpu_cc: the matching cc)
    observed: Mapping[str, str]
    #: keys the condition names but the versions dict lacks (only with ``partial=True``)
    missing: Tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.combination.id

    @property
    def code(self) -> str:
        return self.combination.code

    @property
    def strength(self) -> float:
        """Share of the condition's keys that were observed (1.0 for a full match)."""
        total = len(self.combination.when)
        return (total - len(self.missing)) / total if total else 0.0

    def describe(self) -> str:
        """'fla-core 0.6.0, triton 3.6.0, GPU compute capability 9.0'."""
        parts = []
        for key, value in self.observed.items():
            label = {"gpu_cc": "GPU compute capability", "driver": "NVIDIA driver", "cuda": "CUDA runtime",
                     "cuda_driver": "driver CUDA version", "python": "Python", "machine": "host"}.get(key, key)
            parts.append(f"{label} {value}")
        return ", ".join(parts)


def _spec_table(raw: Any, where: str) -> Dict[str, Specifier]:
    if not isinstance(raw, Mapping):
        raise SpecifierError(f"{where} must be a table of key = specifier")
    return {normalize_name(k) if k not in SPECIAL_KEYS else k:
            parse_name_specifier(v) if k in NAME_KEYS else parse_specifier(v) for k, v in raw.items()}


def normalize_name(name: str) -> str:
    """PEP 503 name: 'Flash_Linear.Attention' -> 'flash-linear-attention'."""
    return re.sub(r"[-_.]+", "-", str(name)).lower()


REQUIRED = ("code", "severity", "breaks", "consequence", "fix", "source", "when")


def parse_entries(data: Mapping[str, Any]) -> List[Combination]:
    """Entries of a parsed data file; raises SpecifierError on any malformed entry."""
    out: List[Combination] = []
    seen = set()
    for raw in data.get("combination", []):
        cid = raw.get("id")
        if not cid:
            raise SpecifierError(f"an entry has no id: {raw!r}"[:200])
        if cid in seen:
            raise SpecifierError(f"{cid}: id used twice")
        seen.add(cid)
        missing = [k for k in REQUIRED if not raw.get(k)]
        if missing:
            raise SpecifierError(f"{cid}: lacks {', '.join(missing)}")
        if raw["severity"] not in SEVERITIES:
            raise SpecifierError(f"{cid}: severity {raw['severity']!r} is not one of {SEVERITIES}")
        out.append(Combination(
            id=cid, code=raw["code"], severity=raw["severity"], breaks=raw["breaks"].strip(),
            consequence=raw["consequence"].strip(), fix=raw["fix"].strip(), source=raw["source"].strip(),
            when=_spec_table(raw["when"], f"{cid}.when"), unless=_spec_table(raw.get("unless", {}), f"{cid}.unless"),
            commands=tuple((m, c) for m, c in raw.get("commands", ())), links=tuple(raw.get("links", ())),
            covered_by=tuple(raw.get("covered_by", ())), gpu=raw.get("gpu", ""),
            explains=tuple(raw.get("explains", ()))))
    return out


_CACHE: Dict[str, Tuple[float, List[Combination]]] = {}


def load(path: Optional[Path] = None) -> List[Combination]:
    """Entries of the data file (cached by path and mtime)."""
    p = Path(path or DATA_FILE)
    mtime = p.stat().st_mtime
    hit = _CACHE.get(str(p))
    if hit and hit[0] == mtime:
        return hit[1]
    with open(p, "rb") as f:
        entries = parse_entries(_toml.load(f))
    _CACHE[str(p)] = (mtime, entries)
    return entries


def data_version(path: Optional[Path] = None) -> int:
    with open(Path(path or DATA_FILE), "rb") as f:
        return int(_toml.load(f).get("version", 0))


def _observed_values(versions: Mapping[str, Any], key: str) -> List[str]:
    value = versions.get(key)
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, (list, tuple, set)):
        return [str(v) for v in value if v not in (None, "")]
    return [str(value)]


def normalize_versions(versions: Mapping[str, Any]) -> Dict[str, Any]:
    """Distribution names PEP 503-normalised; special keys kept as they are."""
    return {(k if k in SPECIAL_KEYS else normalize_name(k)): v for k, v in versions.items()}


def _holds(key: str, spec: Specifier, versions: Mapping[str, Any]) -> Optional[str]:
    """The observed value that satisfies ``spec`` (any GPU for gpu_cc), or None."""
    for value in _observed_values(versions, key):
        if spec.contains(value):
            return value
    return None


def match_combinations(versions: Mapping[str, Any], entries: Optional[Sequence[Combination]] = None,
                       partial: bool = False) -> List[Match]:
    """Entries whose condition holds for ``versions``.

    ``versions`` maps distribution names ('torch', 'triton', 'fla-core', 'causal-conv1d'...;
    any spelling) to version strings, plus ``gpu_cc`` (one '9.0' or a list, one per GPU),
    ``driver`` (NVIDIA driver, '580.159.04'), ``cuda`` (CUDA runtime torch was built with,
    '13.0'), ``cuda_driver`` (the driver's CUDA version, '13.0'), ``python`` ('3.12.3') and
    ``machine`` (platform.machine(): 'aarch64', 'x86_64').
    A key that is absent or None is unknown: the entry does not match, unless ``partial``
    is true, in which case an entry whose distributions are all known and hold, and whose
    GPU/driver/CUDA/Python keys hold where known, is returned with the unknown keys in
    ``missing`` (for a log that prints only some versions); ``machine`` is never assumed.
    An entry's ``unless`` condition, when every key of it holds, suppresses it.
    """
    vs = normalize_versions(versions)
    out: List[Match] = []
    for entry in load() if entries is None else entries:
        observed: Dict[str, str] = {}
        missing: List[str] = []
        ok = True
        for key, spec in entry.when.items():
            if not _observed_values(vs, key):
                # the entry is about a package the text never names, or a host it does not show
                if key not in SPECIAL_KEYS or key in NEVER_ASSUMED:
                    ok = False
                    break
                missing.append(key)
                continue
            hit = _holds(key, spec, vs)
            if hit is None:
                ok = False
                break
            observed[key] = hit
        if not ok or (missing and not partial) or not observed:
            continue
        if entry.unless and all(_holds(k, s, vs) is not None for k, s in entry.unless.items()):
            continue
        out.append(Match(entry, observed, tuple(missing)))
    order = {s: i for i, s in enumerate(SEVERITIES)}
    out.sort(key=lambda m: (len(m.missing), order[m.combination.severity]))
    return out


def entries_by_code(entries: Optional[Iterable[Combination]] = None) -> Dict[str, List[Combination]]:
    out: Dict[str, List[Combination]] = {}
    for e in load() if entries is None else entries:
        out.setdefault(e.code, []).append(e)
    return out


# --------------------------------------------------------------------------- versions a log prints

GPU_FILE = DATA_FILE.parent / "gpus.toml"

#: distributions whose versions logs print, with the spellings they appear under: every
#: distribution the table's conditions name (tests/test_combinations.py checks it)
_LOG_DISTS = (
    ("torch", r"torch|pytorch"), ("triton", r"triton|pytorch-triton"), ("fla-core", r"fla-core|fla_core"),
    ("flash-linear-attention", r"flash-linear-attention|flash_linear_attention"), ("transformers", r"transformers"),
    ("causal-conv1d", r"causal-conv1d|causal_conv1d"), ("mamba-ssm", r"mamba-ssm|mamba_ssm"),
    ("flash-attn", r"flash-attn|flash_attn"), ("xformers", r"xformers"), ("bitsandbytes", r"bitsandbytes"),
    ("numpy", r"numpy"), ("tilelang", r"tilelang"), ("vllm", r"vllm"), ("tensorrt", r"tensorrt(?:-cu1[1-3])?"),
    ("torchao", r"torchao"), ("torchvision", r"torchvision"), ("torchaudio", r"torchaudio"), ("sglang", r"sglang"),
    ("sgl-kernel", r"sgl-kernel|sgl_kernel"), ("flashinfer-python", r"flashinfer-python|flashinfer_python"),
    ("accelerate", r"accelerate"), ("deepspeed", r"deepspeed"),
)
# every repeat bounded: the scanner runs these on any line a log holds (linear on adversarial text)
# (a local label's dots are inner ones: "+rocm5.7", not the period that ends a sentence, tools41)
_VER = (r"v?(\d{1,6}\.\d{1,6}(?:\.\d{1,6}){0,4}(?:(?:a|b|rc|\.post|\.dev|post|dev)\d{0,6}){0,3}"
        r"(?:\+[A-Za-z0-9]{1,40}(?:\.[A-Za-z0-9]{1,40}){0,4})?)")
#: a number that is a quantity, not a release ("torch  1.5 GB of RAM", "vllm 0.9 GiB free", "numpy 1.2 s")
_NOT_A_RELEASE = (r"(?!\s{0,2}(?:[KMGT]i?B\b|[KMGT]b\b|%|x\b|it/s|s/it|ms\b|s\b|secs?\b|seconds?\b|minutes?\b"
                  r"|hours?\b|[GM]Hz\b))")
# the version ends at a sentence's period ("It installed pytorch 2.4."), not inside "2.4.x" (tools41)
# (the name starts its field: collect_env's "CUDA used to build PyTorch: 12.1" is the CUDA's field, not
# torch's version, tools41)
#: (the separator may be one cell border of a Markdown or box table: "| torch | 2.1.0 |", the
#: environment table of an issue template; tools43)
_DIST_SEP = r"(?:\s{0,3}(?:==|=|:)\s{0,3}|\s{1,40}|[ \t]{0,40}[|\u2502][ \t]{0,40})['\"`]?"
_DIST_RES = [(name, re.compile(r"(?<![\w./-])(?<!to build )(?:" + alts + r")(?:\.__version__|\s{1,3}version)?"
                               + _DIST_SEP + _VER +
                               r"(?!\w|\.\w)" + _NOT_A_RELEASE, re.IGNORECASE)) for name, alts in _LOG_DISTS]
#: what pip says it installed or found: "Successfully installed torch-2.5.1 triton-3.1.0", a
#: wheel's file name ("Downloading torch-2.1.0+cu121-cp310-cp310-linux_x86_64.whl"), and
#: "Requirement already satisfied: torch>=2 in /venv/lib/python3.10/site-packages (2.1.0)"
_ALL_DISTS = "|".join(alts for _, alts in _LOG_DISTS)
_PIP_FORMS = (
    re.compile(r"(?<![\w./+-])(" + _ALL_DISTS + r")-" + _VER + r"(?=\s|,|$|-cp\d|-py\d)", re.IGNORECASE),
    re.compile(r"Requirement already satisfied: (" + _ALL_DISTS + r")(?![\w-])[^\s]{0,40} in [^\n]{1,300}?\(" + _VER
               + r"\)\s*$", re.IGNORECASE),
)
#: spelling (lower case) -> distribution key, for the pip forms
_DIST_OF = {alt.lower(): name for name, alts in _LOG_DISTS for alt in alts.replace("(?:-cu1[1-3])?", "").split("|")}
_CUDA_MM = r"(\d{1,2}\.\d)"
#: (key, regex, priority): a lower priority wins over a higher one whatever the line order;
#: among equal priorities the first line wins
_LOG_KEYS = (
    ("torch", re.compile(r"PyTorch version:\s*" + _VER), 0),
    ("cuda", re.compile(r"CUDA used to build PyTorch:\s*(\d+\.\d+)"), 0),
    ("cuda", re.compile(r"torch\.version\.cuda\s*[=:]?\s*['\"]?(\d+\.\d+)"), 1),
    # conda's build string and package: pytorch 2.1.0 py3.10_cuda12.1_cudnn8.9.2_0, pytorch-cuda 12.1
    ("cuda", re.compile(r"(?<![\w-])pytorch-cuda\s*(?:==|=|\s)\s*" + _CUDA_MM + r"\b"), 2),
    ("cuda", re.compile(r"(?<![\w-])pytorch\s+\d+\.\d+(?:\.\d+)?\s+\S{0,40}?[_-]cuda" + _CUDA_MM + r"[_.]"), 2),
    # the official images: pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime
    ("torch", re.compile(r"pytorch/pytorch:(\d+\.\d+\.\d+)-cuda"), 3),
    ("cuda", re.compile(r"pytorch/pytorch:\d+\.\d+\.\d+-cuda" + _CUDA_MM), 3),
    ("driver", re.compile(r"(?:Nvidia driver version|Driver Version):\s*(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE), 0),
    ("cuda_driver", re.compile(r"\bCUDA Version:\s*(\d+\.\d+)"), 0),
    ("python", re.compile(r"Python version:\s*(3\.\d+\.\d+)"), 0),
    ("python", re.compile(r"^Python (3\.\d+\.\d+)\b"), 1),
    # a conda spec or a hand-written list: python=3.11, python 3.12.7
    ("python", re.compile(r"(?<![\w./-])python(?:\s{0,3}={1,2}\s{0,3}|\s{1,3})(3\.\d{1,2}(?:\.\d{1,3})?)(?![\d.])"), 2),
    # the host's architecture: collect_env's "OS: Ubuntu 22.04.4 LTS (aarch64)" (get_os appends
    # platform.machine()), then a wheel's platform tag ("torch-2.14.0+cu126-cp311-cp311-manylinux_2_28_aarch64.whl")
    ("machine", re.compile(r"^OS:\s[^\n]{1,80}\((aarch64|x86_64|arm64)\)\s*$"), 0),
    ("machine", re.compile(r"(?:manylinux\w{0,20}|linux)_(aarch64|x86_64)\.whl\b"), 1),
)
#: a prebuilt wheel of an extension, named as flash-attn's setup.py names the wheels it publishes
#: (and mamba-ssm and causal-conv1d copy): {name}-{version}+cu{cuda}torch{major.minor}cxx11abi{TRUE|FALSE}
_WHEEL_RE = re.compile(r"\b(flash_attn|mamba_ssm|causal_conv1d|"
                       r"selective_scan)-(\d{1,4}(?:\.\d{1,4}){1,3}(?:\.post\d{1,3})?)"
                       r"\+cu(\d{2,3})torch(\d{1,2}\.\d{1,2})cxx11abi(TRUE|FALSE)")
#: facts that are no version of the matcher: (key, regex); the first line wins
_FACT_RES = (
    # torch's out-of-memory message with its numbers (c10/cuda/CUDACachingAllocator.cpp): since torch
    # 2.1 "GPU 0 has a total capacity of X of which Y is free. [Process N has Z memory in use. ...]
    # Including non-PyTorch memory, this process has W memory in use" (2.1 spelled it "capacty");
    # before, "(GPU 0; X total capacity; A already allocated; Y free; R reserved in total by PyTorch)".
    # Read by explain.facts (torch_oom_numbers) for what other processes hold
    ("torch_oom", re.compile(r"(has a total capac(?:i)?ty of [\d.]{1,10} ?[KMGT]?i?B of which [\d.]{1,10} ?[KMGT]?i?B "
                             r"is free\.[^\n]{0,1200}?this process has [\d.]{1,10} ?[KMGT]?i?B memory in use)")),
    ("torch_oom", re.compile(r"(\(GPU \d{1,3}; [\d.]{1,10} ?[KMGT]?i?B total capacity; [\d.]{1,10} ?[KMGT]?i?B already "
                             r"allocated; [\d.]{1,10} ?[KMGT]?i?B free; [\d.]{1,10} ?[KMGT]?i?B reserved in total by "
                             r"PyTorch\))")),
    # torch's own arch list: its warning ("supports CUDA capabilities sm_50 sm_60 ...") or a
    # printed torch.cuda.get_arch_list() (['sm_50', 'sm_60', ...]); nvcc -gencode lines are not
    ("arch_list", re.compile(r"supports CUDA capabilities ((?:(?:sm|compute)_\d{2,3}a?\s*){1,30})")),
    ("arch_list", re.compile(r"(?:arch_list\(\)|arch list)\W{0,10}(\[(?:\s*'(?:sm|compute)_\d{2,3}a?',?){1,30}\s*\])")),
    ("arch_list", re.compile(r"^\s*(\[(?:\s*'sm_\d{2,3}a?',){2,30}\s*'(?:sm|compute)_\d{2,3}a?'\s*\])\s*$")),
    # the signal a launcher reports its worker died of (tools45): torch elastic's 'Signal 9 (SIGKILL)
    # received by PID' and its statuses ('exitcode  : -9', DeepSpeed's 'exits with return code = -9',
    # CalledProcessError's 'returned non-zero exit status 137', mpirun's 'Exit code:    137') as
    # explain.numbers reads them ('-9 [SIGKILL: Killed]'), CPython's "died with <Signals.SIGKILL: 9>",
    # mpirun's 'exited on signal 9 (Killed)' (help-orterun.txt), srun's 'task 0: Killed' (launch.c:409,
    # strsignal). Read by explain.facts (_narrowing_facts) for launcher-worker-failed
    ("worker_signal", re.compile(r"(?:exitcode\s{0,4}:\s{0,4}|exits with return code = |returned non-zero exit status "
                                 r"|\bExit code:\s{1,8})-?\d{1,4} \[(SIG[A-Z]{2,6}):")),
    ("worker_signal", re.compile(r"\bSignal \d{1,2} \((SIG[A-Z]{2,6})\) received by PID")),
    ("worker_signal", re.compile(r"died with <Signals\.(SIG[A-Z]{2,6}): \d")),
    ("worker_signal", re.compile(r"exited on signal \d{1,2}(?: \[[^\]\n]{1,80}\])? \((Killed|Segmentation fault|Aborted"
                                 r"|Bus error|Terminated)\)")),
    ("worker_signal", re.compile(r": tasks? [\d,\[\]-]{1,60}: "
                                 r"(Killed|Segmentation fault|Aborted|Bus error|Terminated)\b")),
    ("cuda_available", re.compile(r"Is CUDA available:\s*(True|False|Yes|No)\b")),
    ("cuda_available", re.compile(r"cuda\.is_available\(\)\s*(?:[=:]|->|returns?|is)\s*(True|False)\b")),
    ("cuda_build", re.compile(r"CUDA used to build PyTorch:\s*(None)\b")),
    ("cuda_build", re.compile(r"torch\.version\.cuda\s*[=:]?\s*(None)\b")),
    ("rocm", re.compile(r"ROCM used to build PyTorch:\s*(\d+\.\d+)")),
    ("nvcc", re.compile(r"Cuda compilation tools, release (\d+\.\d+)")),
    ("nvcc", re.compile(r"The CUDA compiler identification is NVIDIA (\d+\.\d+)")),
    # the toolkit's own directory in the nvcc command a build prints ("/usr/local/cuda-11.0/bin/nvcc -gencode
    # ..."), CMake's FindCUDA ("-- Found CUDA: /usr/local/cuda (found version \"7.5\")")
    ("nvcc", re.compile(r"/cuda-(\d{1,2}\.\d)/bin/nvcc\b")),
    ("nvcc", re.compile(r"Found CUDA: \S{1,200} \(found (?:suitable )?(?:exact )?version \"(\d{1,2}\.\d)")),
    # the driver branch a package or installer names ("nvidia-driver-535", "nvidia-headless-550-server",
    # "NVIDIA-Linux-x86_64-535.104.05.run", "cuda-drivers-545"): what is installed even where nvidia-smi fails
    ("driver_branch", re.compile(r"\bnvidia-(?:driver|headless|utils|dkms|kernel-common|compute-utils)-(\d{3})\b")),
    ("driver_branch", re.compile(r"\bNVIDIA-Linux-(?:x86_64|aarch64)-(\d{3})\.\d")),
    ("driver_branch", re.compile(r"\bcuda-drivers-(\d{3})\b")),
    # the branch named only in a sentence ("I installed driver 535", "driver version 550", "the 470 driver",
    # "the 535.xx NVIDIA drivers"): read after the package and installer names, which outrank it (tools35);
    # a GeForce model before "driver" (GTX 470, GT 520) is a GPU, not a branch
    ("driver_branch_said", re.compile(r"\b[Dd]rivers?\s{1,3}(?:version\s{1,3}|branch\s{1,3}|v)?([345]\d\d)"
                                      r"(?:\.(?:xx|\d{1,3}))*\b(?![.\d])")),
    ("driver_branch_said", re.compile(r"(?<!GTX )(?<!GT )(?<!RTX )(?<!GeForce )(?<!Quadro )(?<![\w.-])([345]\d\d)"
                                      r"(?:\.xx)?\s{1,3}(?:series\s{1,3})?"
                                      r"(?:(?:NVIDIA|Nvidia|nvidia|proprietary)\s{1,3})?[Dd]rivers?\b")),
    # the architecture nvcc refused ("nvcc fatal : Unsupported gpu architecture 'compute_35'", "nvcc fatal
    # : Value 'sm_61' is not defined for option 'gpu-architecture'")
    ("nvcc_rejected_arch", re.compile(r"Unsupported gpu architecture .(?:compute|sm)_(\d{2,3})[af]?(?![\d.;,])")),
    ("nvcc_rejected_arch",
     re.compile(r"Value .(?:compute|sm)_(\d{2,3})[af]?. is not defined for option .gpu-architecture")),
    # the PyTorch wheel index a pip command names ("--index-url https://download.pytorch.org/whl/nightly/cu118"):
    # the CUDA of the torch it installs, where the log prints no torch version (tools35, turboderp/exllama#65)
    ("torch_index_cuda", re.compile(r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu(\d{3})\b")),
    ("image_cuda", re.compile(r"\bFROM\s+(?:--platform=\S{1,40}\s+)?(?:\S{1,80}/)?nvidia/cuda:(\d+\.\d+)")),
    ("os", re.compile(r"^OS:\s*(\S[^\n]{0,80}?)\s*$")),
    # `python -m xformers.info`'s own keys (xformers/info.py print_info): the log shows xFormers
    ("xformers_info", re.compile(r"\b(gpu\.compute_capability|is_triton_available):")),
    # xFormers' notice that its Triton kernels are off: sparse/blocksparse_tensor.py (0.0.16-0.0.27,
    # "Triton is not available, some optimizations will not be enabled.\nThis is just a warning: triton
    # is not available"), xformers.info's "is_triton_available: False", the bare sentence ending a line
    # (an issue's title); not "A matching Triton is not available" (the import of triton failed)
    ("xformers_triton_off", re.compile(r"((?<!matching )\bTriton is not available(?:, some optimizations will not be "
                                       r"enabled|\s*$)|This is just a warning: triton is not available|"
                                       r"\bis_triton_available:\s{1,60}False\b)")),
    # a GPU's capability in the words of torch, vLLM, deviceQuery
    ("gpu_cc", re.compile(r"with CUDA capability sm_(\d{2,3})\b")),
    # not a requirement ("GPUs with compute capability 8.0 or higher": SageAttention's assertion)
    ("gpu_cc", re.compile(r"(?:has|have|with) (?:a )?compute capability (?:of )?(\d{1,2}\.\d)\b"
                          r"(?! or (?:higher|above|newer|later|greater))(?!\+)")),
    ("gpu_cc", re.compile(r"CUDA Capability Major/Minor version number:\s*(\d{1,2}\.\d)")),
    # "compute_capability: 7.5" (xFormers' info), "Compute Capability: 8.6", "**Compute Capability:** 12.0";
    # not a requirement ("minimum compute capability: 8.0")
    ("gpu_cc", re.compile(r"(?<![Mm]inimum )(?<![Rr]equired )(?<![Rr]equires )(?<!min )\b[Cc]ompute[ _][Cc]apability"
                          r"\**\s{0,3}[:=]\**\s{0,3}(\d{1,2})\.(\d)\b")),
    # ggml-cuda's device list (llama.cpp, Ollama, whisper.cpp: "  Device 0: NVIDIA GeForce RTX 4090, compute
    # capability 8.9, VMM: yes") and Ollama's "inference compute" record (types.go: "library=cuda
    # variant=v12 compute=8.6", or compute="5.2")
    ("gpu_cc", re.compile(r"\bDevice \d{1,2}: [^,\n]{2,80}, compute capability (\d{1,2})\.(\d)\b")),
    ("gpu_cc", re.compile(r"inference compute\"[^\n]{0,200}?\bcompute=\"?(\d{1,2})\.(\d)\b")),
    # torch.cuda.get_device_capability()'s tuple: "capability: (8, 6)", "get_device_capability() (8, 6)"
    ("gpu_cc", re.compile(r"[Cc]apability(?:\(\d?\))?[\s:=]{0,4}\((\d{1,2}),\s?(\d)\)")),
    # a capability in parentheses after the GPU or its capability: "RTX 3090 (sm_86)", "12.0 (`sm_120`)"
    ("gpu_cc", re.compile(r"(?:GPU|[Cc]apability|GeForce|RTX|Tesla)\b[^()\n]{0,60}\(`?sm_(\d{2,3})`?\)")),
)
#: the NCCL release a process loaded, as NCCL prints it at its first communicator (src/init.cc
#: showVersion: "NCCL version 2.18.1+cuda12.1", INFO under NCCL_DEBUG=INFO, VERSION under
#: NCCL_DEBUG=VERSION/WARN) and as torch's c10d appends it to every NCCL error
#: (torch/csrc/distributed/c10d/NCCLUtils ncclGetErrorWithVersion: "..., NCCL version 2.14.3"); not
#: the "compiled with NCCL version" of NCCL's own too-old check (src/dev_runtime.cc). Every distinct
#: value is kept: two of them are ranks running different NCCL releases
_NCCL_VERSION_RE = re.compile(r"(?<!compiled with )\bNCCL version (\d{1,2}\.\d{1,3}\.\d{1,3})\b")
#: words of the setting a log was made in (the context facts); each found anywhere in a line
CONTEXT_WORDS = (
    ("wsl", re.compile(r"microsoft-standard-WSL|\bWSL ?2?\b|/usr/lib/wsl/")),
    ("colab", re.compile(r"google\.colab|\bColab\b|/content/drive")),
    ("kubernetes", re.compile(r"\bkubectl\b|\bKubernetes\b|\bkubelet\b|\bk8s\b")),
    ("slurm", re.compile(r"\bSLURM_\w+|\bsrun\b|\bsbatch\b|\bslurmstepd\b")),
    ("container", re.compile(r"\bdocker (?:run|exec|compose)\b|\bFROM\s+\S{1,80}:\S|\bpodman run\b|/\.dockerenv")),
    ("windows", re.compile(r"\b[A-Z]:\\(?:Users|Program Files|ProgramData)\\|\bwin32\b|Windows-1\d")),
)
#: literals, one of which every line that holds a fact contains: the scanner's facts gate
#: (explain reads only the lines that hold one of them)
FACT_LITERALS = (
    "ersion", "CUDA", "Cuda", "cuda", "NVIDIA", "Tesla", "GeForce", "Quadro", "RTX", "GTX", "TITAN", "Jetson",
    "Orin", "Xavier", "H100", "H200", "H800", "A100", "A800", "V100", "P100", "B200", "B300", "GB10", "L40", "K80",
    "torch", "triton", "fla", "flash", "transformers", "causal", "mamba", "xformers", "bitsandbytes", "numpy",
    "tilelang", "vllm", "tensorrt", "torchao", "sm_", "capabilit", "Capabilit", "WSL", "wsl/", "colab", "Colab",
    "/content/", "kube", "k8s", "SLURM", "srun", "sbatch", "slurm", "docker", "FROM ", "podman", "win32", ":\\",
    "Windows-1", "OS: ", "Python 3.", "gpu architecture", "gpu-architecture", "Found CUDA", "nvidia-",
    "python=", "python ", "cxx11abi", "satisfied", "Triton is not available", "river",
    # GPU names people type glued or in lower case (tools43: "rtx2080ti", "a100-80g", "h100sxm")
    "rtx", "gtx", "Rtx", "a100", "h100", "h200", "v100", "a800", "h800", "l40s",
    # a launcher's report of its worker's signal (tools45: the worker_signal fact)
    "exitcode", "return code =", "exit status", "Exit code:", "Signal ", "<Signals.", "on signal", ": task",
)


@dataclass(frozen=True)
class GpuModel:
    """One row of ``knowledge/gpus.toml``: the names of a GPU family and its compute capability.
    ``glued`` holds, for each pattern that names a model number, the same name written as
    people also type it (:func:`glued_pattern`: "rtx2080ti", "a100-80g", "H100SXM")."""

    cc: str
    name: str
    patterns: Tuple["re.Pattern[str]", ...]
    glued: Tuple["re.Pattern[str]", ...] = ()


def glued_pattern(source: str) -> Optional[str]:
    """The spelling of a gpus.toml pattern that reads a GPU name written without its spaces,
    in lower case, or with a suffix glued to the model number (tools43): "RTX2080Ti",
    "rtx 3090", "a100-80g", "H100SXM5", "nvidia_a100". A space outside a character class may be
    absent, or an underscore or hyphen; a ``\\b`` after the model number becomes "no digit
    follows" (a letter may: "Ti", "SXM", "G"), one before it "no letter or digit before" (an
    underscore may: "nvidia_a100"); the match is case-insensitive. Only patterns
    with a digit in them (a model number) get one: a name of words alone ("Orin", "Xavier",
    "TITAN RTX") stays as written, case-sensitive. :func:`gpus_in_line` accepts a glued match
    only where the name itself says it is a GPU (:func:`_glued_says_gpu`)."""
    if not re.search(r"[0-9]", source) and "\\d" not in source:
        return None
        return None
    out: List[str] = []
    i, in_class = 0, False
    while i < len(source):
        c = source[i]
        if c == "\\" and i + 1 < len(source):
            pair = source[i:i + 2]
            if pair == "\\b" and not in_class:
                out.append("(?![0-9])" if i > 0 else "(?<![A-Za-z0-9])")
            else:
                out.append(pair)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
        elif c == "[":
            in_class = True
            out.append(c)
        elif c == " ":
            out.append("[ _-]")
            if source[i + 1:i + 2] != "?":
                out.append("?")
        else:
            out.append(c)
        i += 1
    return "(?i)" + "".join(out)


#: a vendor word just before a lower-case match ("nvidia_a100", "tesla-v100", "geforce rtx4090")
_GLUED_VENDOR_BEFORE_RE = re.compile(r"(?i)(?:nvidia|tesla|geforce|quadro)[ _-]?$")


def gpu_table(path: Optional[Path] = None) -> List[GpuModel]:
    """The rows of ``knowledge/gpus.toml`` (most specific first); raises SpecifierError when a
    row lacks ``cc``, ``name`` or ``patterns`` or a pattern does not compile."""
    p = Path(path or GPU_FILE)
    hit = _CACHE.get(str(p))
    if hit and hit[0] == p.stat().st_mtime:
        return hit[1]  # type: ignore[return-value]
    with open(p, "rb") as f:
        data = _toml.load(f)
    rows = []
    for i, raw in enumerate(data.get("gpu", [])):
        if not raw.get("cc") or not raw.get("name") or not raw.get("patterns"):
            raise SpecifierError(f"{p.name} [[gpu]] #{i + 1}: needs cc, name and patterns")
        if parse_version(raw["cc"]) is None:
            raise SpecifierError(f"{p.name} [[gpu]] #{i + 1}: cc {raw['cc']!r} is no version")
        try:
            pats = tuple(re.compile(x) for x in raw["patterns"])
            glued = tuple(re.compile(g) for g in (glued_pattern(x) for x in raw["patterns"]) if g)
        except re.error as exc:
            raise SpecifierError(f"{p.name} [[gpu]] #{i + 1}: bad pattern: {exc}") from None
        rows.append(GpuModel(raw["cc"], raw["name"], pats, glued))
    _CACHE[str(p)] = (p.stat().st_mtime, rows)  # type: ignore[assignment]
    _any_glued(rows)  # compiled with the table, not at the first line read
    return rows


def gpus_in_line(line: str, table: Optional[Sequence[GpuModel]] = None) -> List[Tuple[str, str]]:
    """(the GPU name as the line prints it, compute capability) for each GPU the line names;
    the first row of the table that matches a span wins it."""
    out: List[Tuple[str, str]] = []
    taken: List[Tuple[int, int]] = []
    rows = gpu_table() if table is None else table
    for row in rows:
        for rx in row.patterns:
            for m in rx.finditer(line):
                if any(m.start() < e and s < m.end() for s, e in taken):
                    continue
                taken.append(m.span())
                out.append((m.group(0), row.cc))
    # then the names written glued or in lower case (tools43), where the text says it is a GPU;
    # one search of all their spellings first, so a line that names none costs one pass (none at
    # all for a line without a digit: every glued spelling holds a model number)
    any_glued = _any_glued(rows) if _GLUED_HINT_RE.search(line.lower()) else None
    for row in rows if any_glued is not None and any_glued.search(line) else ():
        for rx in row.glued:
            for m in rx.finditer(line):
                if any(m.start() < e and s < m.end() for s, e in taken):
                    continue
                tail = line[m.start():m.end() + 8]
                if not (_glued_says_gpu(tail) or _GLUED_VENDOR_BEFORE_RE.search(line[max(0, m.start() - 9):m.start()])):
                    continue
                taken.append(m.span())
                out.append((m.group(0), row.cc))
    return out


#: what every glued spelling holds, searched in the line in lower case (one cheap pass before the
#: per-row spellings): a letter, maybe a separator, and a model number ("rtx2080", "a100", "mx 150"),
#: or a 40x0 before "ti"
_GLUED_HINT_RE = re.compile(r"[a-z][ _-]?[0-9]{2}|[0-9]{4}[ _-]?ti")
_ANY_GLUED: Dict[int, Tuple[Sequence[GpuModel], Optional["re.Pattern[str]"]]] = {}


def _any_glued(rows: Sequence[GpuModel]) -> Optional["re.Pattern[str]"]:
    """One regex of every glued spelling of ``rows`` (None when there is none), built once per table."""
    hit = _ANY_GLUED.get(id(rows))
    if hit is not None and hit[0] is rows:
        return hit[1]
    alts = [rx.pattern[len("(?i)"):] for row in rows for rx in row.glued]
    rx = re.compile("(?i)(?:" + "|".join(alts) + ")") if alts else None
    _ANY_GLUED[id(rows)] = (rows, rx)
    return rx


def _glued_says_gpu(text: str) -> bool:
    """Whether a glued match (with the few characters after it) says by itself that it is a GPU:
    a capital letter in the matched name as the vendor writes it ("RTX2080Ti", "H100SXM"), a series
    or vendor word first ("rtx", "gtx", "quadro", "tesla", "nvidia", "geforce", "jetson", "titan"),
    or a GPU's suffix after the number (a memory size "-80g"/"80gb", "sxm", "pcie", "nvl", "ti",
    "super"). A lone "p100" or "a100" in lower case (a latency percentile, a run's name) is no GPU,
    unless a vendor word stands just before it (:data:`_GLUED_VENDOR_BEFORE_RE`)."""
    head = re.match(r"[A-Za-z]{0,8}[0-9]{1,5}", text)
    name = head.group(0) if head else text
    if re.search(r"[A-Z]", name):
        return True
    low = text.lower()
    return bool(re.match(r"(?:rtx|gtx|quadro|tesla|nvidia|geforce|jetson|titan)", low)
                or re.match(r"[a-z]{0,8}[0-9]{1,5}[ _-]?(?:sxm|pcie|nvl|ti(?![a-z])|super|[0-9]{1,3} ?gb?(?![a-z]))",
                            low))


@dataclass(frozen=True)
class LogFacts:
    """What a log states about the stack it ran on.

    ``versions`` is the dict :func:`match_combinations` takes (distributions, ``cuda``,
    ``driver``, ``cuda_driver``, ``python``, ``gpu_cc``); the other fields are facts no
    combination names but that explain's state rules read. ``lines`` maps each fact's key to
    (line number, line text) of the line it was read from (line numbers as the caller gave)."""

    versions: Mapping[str, Any] = field(default_factory=dict)
    #: GPU names the log prints, as printed ("NVIDIA H200", "Tesla T4")
    gpus: Tuple[str, ...] = ()
    #: the arch list a torch build prints (torch.cuda.get_arch_list(), its warning)
    arch_list: Tuple[str, ...] = ()
    #: "Is CUDA available": True / False / None (not printed)
    cuda_available: Optional[bool] = None
    #: the torch build is CPU-only: a "+cpu" version, "CUDA used to build PyTorch: None",
    #: a conda "cpu" build; None when the log does not say
    torch_cpu: Optional[bool] = None
    #: other facts: nvcc (the toolkit's release), image_cuda (a FROM nvidia/cuda:X image),
    #: os, rocm, xformers_info (a key `python -m xformers.info` prints), xformers_triton_off
    #: (xFormers' notice that its Triton kernels are off), nvcc_rejected_arch (the architecture nvcc
    #: refused, "61"), driver_branch (a driver package's branch, "535"), nccl_versions (two or more different
    #: NCCL releases the log's ranks print, "2.18.1, 2.19.3"), driver_branch_said (a branch a sentence
    #: names, "the 535 driver"), torch_index_cuda (the CUDA of a PyTorch wheel index a pip command
    #: names, "118"), worker_signal (the signal a launcher reports its worker died of: "SIGKILL", or
    #: the strsignal text mpirun and srun print, "Killed")
    other: Mapping[str, str] = field(default_factory=dict)
    #: settings the log shows: wsl, colab, kubernetes, slurm, container, windows
    context: Tuple[str, ...] = ()
    lines: Mapping[str, Tuple[int, str]] = field(default_factory=dict)
    #: prebuilt extension wheels the log names: (distribution, version, CUDA, torch major.minor)
    #: from their file names ("mamba_ssm-1.0.1+cu118torch1.12cxx11abiTRUE-cp39-...whl")
    wheels: Tuple[Tuple[str, str, str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.versions or self.gpus or self.arch_list or self.cuda_available is not None
                    or self.torch_cpu is not None or self.other or self.context or self.wheels)

    def to_dict(self) -> Dict[str, Any]:
        return {"versions": dict(self.versions), "gpus": list(self.gpus), "arch_list": list(self.arch_list),
                "cuda_available": self.cuda_available, "torch_cpu": self.torch_cpu, "other": dict(self.other),
                "context": list(self.context),
                "wheels": [{"dist": d, "version": v, "cuda": c, "torch": t} for d, v, c, t in self.wheels],
                "lines": {k: {"line": n, "text": t} for k, (n, t) in self.lines.items()}}


def _cuda_of_label(version: str) -> Optional[str]:
    """'2.1.0+cu121' -> '12.1', '2.11.0+cu130' -> '13.0', '1.13.1+cu117' -> '11.7'."""
    m = re.search(r"\+cu(\d{2,3})$", version)
    if not m:
        return None
    d = m.group(1)
    return f"{d[:-1]}.{d[-1]}"


class FactCollector:
    """Collects the facts of a log line by line (the scanner feeds it the lines its facts gate
    flags, in order, in bounded memory); :meth:`result` gives the :class:`LogFacts`. Each key
    keeps the value of the first line that states it (a source of lower priority number wins:
    collect_env's "PyTorch version:" over a pip line). Every pattern is anchored on a literal
    and bounded: linear in the text."""

    #: characters of a line that are read
    LINE_CHARS = 2000

    def __init__(self) -> None:
        self._table = gpu_table()
        self._best: Dict[str, Tuple[Tuple[int, int], str]] = {}   # key -> ((priority, line), value)
        self._where: Dict[str, Tuple[int, str]] = {}
        self._gpus: Dict[str, None] = {}
        self._ccs: Dict[str, None] = {}
        self._facts: Dict[str, str] = {}
        self._context: Dict[str, None] = {}
        self._wheels: List[Tuple[str, str, str, str]] = []
        self._nccl: Dict[str, None] = {}

    def _put(self, key: str, value: str, prio: int, number: int, text: str) -> None:
        if key not in self._best or (prio, number) < self._best[key][0]:
            self._best[key] = ((prio, number), value)
            self._where[key] = (number, text.strip()[:300])

    def add(self, number: int, text: str) -> None:
        if not text:
            return
        text = text[:self.LINE_CHARS]
        where = self._where
        for key, rx, prio in _LOG_KEYS:
            m = rx.search(text)
            if m:
                self._put(key, m.group(1), prio, number, text)
        for name, rx in _DIST_RES:
            m = rx.search(text)
            if m:
                self._put(name, m.group(1), 5, number, text)
        if "-" in text or "satisfied" in text:
            for rx in _PIP_FORMS:
                for m in rx.finditer(text):
                    name = _DIST_OF.get(m.group(1).lower().replace("_", "-"), _DIST_OF.get(m.group(1).lower()))
                    if name:
                        self._put(name, m.group(2), 4, number, text)
        for key, rx in _FACT_RES:
            m = rx.search(text)
            if not m:
                continue
            if key == "gpu_cc":
                v = m.group(1) if m.lastindex == 1 else f"{m.group(1)}.{m.group(2)}"
                self._ccs.setdefault(v if "." in v else f"{v[:-1]}.{v[-1]}", None)
                where.setdefault("gpu", (number, text.strip()[:300]))
            elif key not in self._facts:
                self._facts[key] = m.group(1).strip()
                where.setdefault(key, (number, text.strip()[:300]))
        if "NCCL version" in text:
            for m in _NCCL_VERSION_RE.finditer(text):
                if m.group(1) not in self._nccl:
                    self._nccl[m.group(1)] = None
                    where.setdefault("nccl_versions", (number, text.strip()[:300]))
                    if len(self._nccl) == 2:  # the line of the second release is the one that shows it
                        where["nccl_versions"] = (number, text.strip()[:300])
        for m in _WHEEL_RE.finditer(text):
            wheel = (m.group(1).replace("_", "-"), m.group(2), _cuda_of_label("+cu" + m.group(3)) or "", m.group(4))
            if wheel not in self._wheels:
                self._wheels.append(wheel)
                where.setdefault(f"wheel:{wheel[0]}", (number, text.strip()[:300]))
        for name, cc in gpus_in_line(text, self._table):
            self._gpus.setdefault(name, None)
            self._ccs.setdefault(cc, None)
            where.setdefault("gpu", (number, text.strip()[:300]))
        for key, rx in CONTEXT_WORDS:
            if key not in self._context and rx.search(text):
                self._context[key] = None
                where.setdefault(f"context:{key}", (number, text.strip()[:300]))

    def result(self) -> LogFacts:
        where = dict(self._where)
        facts = dict(self._facts)
        versions: Dict[str, Any] = {k: v for k, (_, v) in self._best.items()}
        torch_v = str(versions.get("torch") or "")
        label_cuda = _cuda_of_label(torch_v)
        if label_cuda and "cuda" not in versions:
            versions["cuda"] = label_cuda
            where["cuda"] = where.get("torch", (0, ""))
        if self._ccs:
            versions["gpu_cc"] = list(self._ccs)
        torch_cpu: Optional[bool] = None
        if torch_v.endswith("+cpu") or (facts.get("cuda_build") == "None" and "rocm" not in facts):
            torch_cpu = True
            where["torch_cpu"] = (where.get("torch", (0, "")) if torch_v.endswith("+cpu")
                                  else where.get("cuda_build", (0, "")))
        elif versions.get("cuda"):
            torch_cpu = False
        if len(self._nccl) > 1:
            facts["nccl_versions"] = ", ".join(self._nccl)
        else:
            where.pop("nccl_versions", None)
        avail = facts.pop("cuda_available", None)
        arch = facts.pop("arch_list", "")
        facts.pop("cuda_build", None)
        return LogFacts(
            versions=versions, gpus=tuple(self._gpus),
            arch_list=tuple(re.findall(r"(?:sm|compute)_\d{2,3}a?", arch)),
            cuda_available=None if avail is None else avail in ("True", "Yes"), torch_cpu=torch_cpu,
            other=facts, context=tuple(self._context), lines=where, wheels=tuple(self._wheels))


def facts_from_lines(lines: Iterable[Tuple[int, str]]) -> LogFacts:
    """The facts ``lines`` ((number, text) pairs, in order) state (:class:`FactCollector`)."""
    c = FactCollector()
    for number, text in lines:
        c.add(number, text)
    return c.result()


#: torch's out-of-memory message begun on a line its numbers did not all fit on
_OOM_START_RE = re.compile(r"has a total capac(?:i)?ty of|\(GPU \d{1,3}; [\d.]{1,10} ?[KMGT]?i?B total capacity"
                           r"|CUDA out of memory\. Tried to allocate")
_OOM_RES = tuple(rx for key, rx in _FACT_RES if key == "torch_oom")
#: what a logger or a launcher puts before each piece of a wrapped message: indentation, "[rank3]:"
_WRAP_PREFIX_RE = re.compile(r"^\s{0,40}(?:\[(?:rank|default)?\d{0,5}\]:?\s{0,4})?")
#: lines after the first one a wrapped message is read across (torch's newer message, with three
#: processes listed, is about 600 characters: eight lines of a terminal 80 columns wide)
OOM_WRAP_LINES = 10


def torch_oom_across(lines: Sequence[str]) -> Optional[str]:
    """torch's out-of-memory message (the ``torch_oom`` fact's text) from a line and the lines after it,
    where a paste or a logger wrapped it at word boundaries (tools38 read it on one line only): the
    pieces joined with a space, each without its indentation or rank prefix. None when the first line
    holds the numbers whole, does not start the message, or no join holds them."""
    if not lines or not _OOM_START_RE.search(lines[0]) or any(rx.search(lines[0]) for rx in _OOM_RES):
        return None
    text = lines[0].rstrip()
    for nxt in lines[1:1 + OOM_WRAP_LINES]:
        piece = _WRAP_PREFIX_RE.sub("", nxt, count=1).strip()
        if not piece:
            return None
        text = f"{text} {piece}"
        if any(rx.search(text) for rx in _OOM_RES):
            return text
    return None


def facts_from_text(text: str) -> LogFacts:
    """:func:`facts_from_lines` over the lines of ``text`` (numbered from 1)."""
    return facts_from_lines(enumerate(text.splitlines(), 1))


def versions_from_text(text: str) -> Dict[str, Any]:
    """The versions a log prints, as a dict for :func:`match_combinations` (``partial=True``):
    ``pip list``/``pip freeze`` and conda lines, ``python -m torch.utils.collect_env`` fields,
    the nvidia-smi header, ``X.__version__`` prints, the CUDA a torch build names (``+cu121``,
    ``CUDA used to build PyTorch``, conda's ``cuda12.1`` build), official image tags, and GPU
    model names mapped to their compute capability (``knowledge/gpus.toml``)."""
    return dict(facts_from_text(text).versions)


# --------------------------------------------------------------------------- state facts

# --------------------------------------------------------------------------- pairings a log contradicts

#: where a sentence or a table's field ends inside a line: a period, semicolon, "!" or "?" before
#: white space (not the dots of "2.3.1"), a "|" between fields (tools41)
_SEGMENT_END_RE = re.compile(r"[.;!?](?=\s)|\|")
#: the keys a contradiction is read for: versions, one value each (not a GPU's list of capabilities)
_PAIRED_KEYS_SKIP = ("gpu_cc", "machine")


def segment_versions(text: str) -> List[Dict[str, Any]]:
    """The versions each sentence or field of ``text`` (one line) states, in order: the reader
    run on each piece alone (:data:`_SEGMENT_END_RE` cuts them), pieces that state none left out."""
    out: List[Dict[str, Any]] = []
    start = 0
    for m in [*_SEGMENT_END_RE.finditer(text), None]:
        piece = text[start:m.start() if m is not None else len(text)]
        start = m.end() if m is not None else len(text)
        if piece.strip():
            vs = dict(facts_from_lines([(1, piece)]).versions)
            if vs:
                out.append(vs)
    return out


def _same_version(a: Any, b: Any) -> bool:
    pa, pb = parse_version(a), parse_version(b)
    if pa is None or pb is None:
        return str(a) == str(b)
    return _cmp(pa, pb) == 0


def contradicted_pairing(facts: "LogFacts", keys: Iterable[str]) -> Optional[Tuple[str, str, str]]:
    """Whether the log itself says two of ``keys`` did not go together (tools41): the sentence
    (or field) ``b``'s value was read from states another value of ``a`` than the one the log's
    facts hold for ``a`` ("It installed pytorch 2.4" ... "going back with pip install torch==2.3.1
    torchvision==0.18.1": torchvision 0.18.1 went with torch 2.3.1, so torch 2.4 with torchvision
    0.18.1 is a pairing across sentences that no line states). Returns (a, b, the value of a
    stated beside b), or None when no sentence contradicts the pairing. Facts read from different
    lines that no sentence contradicts (collect_env's torch on one line, its CUDA on the next)
    still pair."""
    keys = [k for k in keys if k not in _PAIRED_KEYS_SKIP]
    vs = facts.versions
    for b in keys:
        where = facts.lines.get(b)
        if not where or b not in vs:
            continue
        for seg in segment_versions(where[1]):
            if b not in seg or not _same_version(seg[b], vs[b]):
                continue
            for a in keys:
                if a != b and a in seg and a in vs and not _same_version(seg[a], vs[a]):
                    return a, b, str(seg[a])
    return None


#: the arch lists the official Linux x86_64 torch wheels ship, per release and CUDA variant
WHEELS_FILE = DATA_FILE.parent / "torch_wheels.toml"
#: how a row of :data:`WHEELS_FILE` was established, surest first
WHEEL_BASES = ("torch-source", "measured", "release-branch", "pull-request")
_RELEASE_RE = re.compile(r"^\d{1,2}\.\d{1,2}$")
_ARCH_RE = re.compile(r"^(?:sm|compute)_\d{2,3}a?$")


@dataclass(frozen=True)
class TorchWheel:
    """One row of ``knowledge/torch_wheels.toml``: the cubins (``sm``) and PTX (``ptx``) of the
    official Linux x86_64 wheels of the torch releases ``torch`` (major.minor) built with the CUDA
    releases ``cuda``, as ``torch.cuda.get_arch_list()`` prints them, and where that was read."""

    torch: Tuple[str, ...]
    cuda: Tuple[str, ...]
    sm: Tuple[str, ...]
    ptx: Tuple[str, ...]
    basis: str
    source: str

    @property
    def arch_list(self) -> Tuple[str, ...]:
        return self.sm + self.ptx


_WHEELS: Dict[str, List[TorchWheel]] = {}


def torch_wheels(path: Optional[Path] = None) -> List[TorchWheel]:
    """The rows of ``knowledge/torch_wheels.toml``; a malformed row raises :class:`SpecifierError`
    (an unknown basis, an arch that is not ``sm_XY``/``compute_XY``, a release that is not
    major.minor, a release and CUDA variant two rows both claim)."""
    key = str(path or WHEELS_FILE)
    if key in _WHEELS:
        return _WHEELS[key]
    with open(key, "rb") as fh:
        data = _toml.load(fh)
    rows: List[TorchWheel] = []
    seen: Dict[Tuple[str, str], int] = {}
    for n, raw in enumerate(data.get("wheel", []), 1):
        where = f"{Path(key).name} wheel #{n}"
        row = TorchWheel(torch=tuple(raw.get("torch", ())), cuda=tuple(raw.get("cuda", ())),
                         sm=tuple(raw.get("sm", ())), ptx=tuple(raw.get("ptx", ())),
                         basis=str(raw.get("basis", "")), source=str(raw.get("source", "")))
        if row.basis not in WHEEL_BASES or not row.source or not row.torch or not row.cuda or not row.sm:
            raise SpecifierError(f"{where}: torch, cuda, sm, basis ({'/'.join(WHEEL_BASES)}) and source are required")
        bad = [x for x in row.torch + row.cuda if not _RELEASE_RE.match(x)] \
            + [a for a in row.sm if not a.startswith("sm_") or not _ARCH_RE.match(a)] \
            + [a for a in row.ptx if not a.startswith("compute_") or not _ARCH_RE.match(a)]
        if bad:
            raise SpecifierError(f"{where}: malformed {', '.join(bad)}")
        for pair in ((t, c) for t in row.torch for c in row.cuda):
            if pair in seen:
                raise SpecifierError(f"{where}: torch {pair[0]} CUDA {pair[1]} is also in wheel #{seen[pair]}")
            seen[pair] = n
        rows.append(row)
    _WHEELS[key] = rows
    return rows


def torch_wheel_rows(torch_version: Any, cuda: Any = None) -> List[TorchWheel]:
    """The rows of :func:`torch_wheels` a torch version is one of: the row of its CUDA variant (its
    ``+cuNNN`` label, else ``cuda``), or, when neither says the variant, every row of its release.
    Empty for a version the table cannot speak for: a nightly or release candidate (they can carry
    PTX the release lacks), a ``+cpu``/``+rocm`` build, a label that is no CUDA variant, a release or
    variant the table lacks."""
    v = parse_version(torch_version)
    if v is None or v.pre is not None or v.dev is not None or len(v.release) < 2:
        return []
    release = f"{v.release[0]}.{v.release[1]}"
    variant: Optional[str] = None
    if v.local:
        # "cu121"; 1.13's and 2.0's PyPI wheels were promoted as "+cu117.with.pypi.cudnn"
        m = re.match(r"cu(\d{2,3})(?:[._]|$)", v.local)
        if not m:
            return []
        variant = f"{m.group(1)[:-1]}.{m.group(1)[-1]}"
    elif cuda:
        c = parse_version(cuda)
        variant = f"{c.release[0]}.{c.release[1]}" if c is not None and len(c.release) >= 2 else None
    rows = [r for r in torch_wheels() if release in r.torch]
    if variant is not None:
        rows = [r for r in rows if variant in r.cuda]
    return rows


def supports_capability(arch_list: Sequence[str], cc: str) -> Optional[bool]:
    """Whether a torch build whose ``get_arch_list()`` is ``arch_list`` runs on a GPU of
    compute capability ``cc``, by torch's own rule (torch/cuda/__init__.py ``_check_cubins``:
    "NVIDIA GPU compute architectures are backward compatible within major version", so the
    GPU is supported when any ``sm_XY`` of the list has the GPU's major); None when the list
    holds no ``sm_`` entry or ``cc`` is unparsable."""
    sms = [int(re.sub(r"\D", "", a.split("_", 1)[1])) for a in arch_list if a.startswith("sm_")]
    v = parse_version(cc)
    if not sms or v is None:
        return None
    return any(sm // 10 == v.release[0] for sm in sms)
