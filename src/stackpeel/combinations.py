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
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - exercised on 3.9/3.10
    import tomli as _toml  # type: ignore[no-redef]

DATA_FILE = Path(__file__).resolve().parent / "knowledge" / "combinations.toml"

#: keys of the versions dict that are not distributions (the rest are distribution names)
SPECIAL_KEYS = ("gpu_cc", "driver", "cuda", "cuda_driver", "python")
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
    when: Mapping[str, Specifier]
    unless: Mapping[str, Specifier] = field(default_factory=dict)
    commands: Tuple[Tuple[str, str], ...] = ()
    links: Tuple[str, ...] = ()
    #: check ids that measure the same thing live; ``check`` leaves the entry to them when they ran
    covered_by: Tuple[str, ...] = ()
    gpu: str = ""
    #: codes of the failures this combination produces (explain ranks them)
    explains: Tuple[str, ...] = ()


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
                     "cuda_driver": "driver CUDA version", "python": "Python"}.get(key, key)
            parts.append(f"{label} {value}")
        return ", ".join(parts)


def _spec_table(raw: Any, where: str) -> Dict[str, Specifier]:
    if not isinstance(raw, Mapping):
        raise SpecifierError(f"{where} must be a table of key = specifier")
    return {normalize_name(k) if k not in SPECIAL_KEYS else k: parse_specifier(v) for k, v in raw.items()}


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
    '13.0'), ``cuda_driver`` (the driver's CUDA version, '13.0') and ``python`` ('3.12.3').
    A key that is absent or None is unknown: the entry does not match, unless ``partial``
    is true, in which case an entry whose distributions are all known and hold, and whose
    GPU/driver/CUDA/Python keys hold where known, is returned with the unknown keys in
    ``missing`` (for a log that prints only some versions).
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
                if key not in SPECIAL_KEYS:  # the entry is about a package the text never names
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

#: distributions whose versions logs print, with the spellings they appear under
_LOG_DISTS = (
    ("torch", r"torch|pytorch"), ("triton", r"triton|pytorch-triton"), ("fla-core", r"fla-core|fla_core"),
    ("flash-linear-attention", r"flash-linear-attention|flash_linear_attention"), ("transformers", r"transformers"),
    ("causal-conv1d", r"causal-conv1d|causal_conv1d"), ("mamba-ssm", r"mamba-ssm|mamba_ssm"),
    ("flash-attn", r"flash-attn|flash_attn"), ("xformers", r"xformers"), ("bitsandbytes", r"bitsandbytes"),
    ("numpy", r"numpy"), ("tilelang", r"tilelang"), ("vllm", r"vllm"), ("tensorrt", r"tensorrt(?:-cu1[1-3])?"),
)
_VER = r"v?(\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|\.post|\.dev|post|dev)\d*)*(?:\+[A-Za-z0-9.]+)?)"
_DIST_RES = [(name, re.compile(r"(?<![\w./-])(?:" + alts + r")(?:\.__version__)?\s*(?:==|=|:|\s)\s*['\"]?" + _VER +
                               r"(?![\w.])", re.IGNORECASE)) for name, alts in _LOG_DISTS]
_LOG_KEYS = (
    ("torch", re.compile(r"PyTorch version:\s*" + _VER)),
    ("cuda", re.compile(r"CUDA used to build PyTorch:\s*(\d+\.\d+)")),
    ("cuda", re.compile(r"torch\.version\.cuda\s*[=:]\s*['\"]?(\d+\.\d+)")),
    ("driver", re.compile(r"(?:Nvidia driver version|Driver Version):\s*(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)),
    ("cuda_driver", re.compile(r"\bCUDA Version:\s*(\d+\.\d+)")),
    ("python", re.compile(r"Python version:\s*(3\.\d+\.\d+)")),
)
#: GPU model names as logs print them -> compute capability (NVIDIA's CUDA GPUs list)
GPU_CC = (
    (r"GB10\b", "12.1"), (r"RTX (?:PRO )?50\d0|RTX PRO \d{4} Blackwell|RTX 50", "12.0"),
    (r"\bB300|GB300", "10.3"), (r"\bB200|GB200|\bB100", "10.0"),
    (r"\bH100|\bH200|\bH800|\bH20\b|GH200", "9.0"),
    (r"\bL40S?\b|\bL4\b|\bL20\b|RTX 40\d0|RTX \d000 Ada|RTX 6000 Ada", "8.9"),
    (r"\bA100|\bA800|\bA30\b", "8.0"),
    (r"\bA10G?\b|\bA40\b|\bA16\b|\bA2\b|RTX 30\d0|RTX A\d000", "8.6"),
    (r"\bT4\b|RTX 20\d0|GTX 16\d0|TITAN RTX|Quadro RTX", "7.5"),
    (r"V100|TITAN V\b", "7.0"),
    (r"P100", "6.0"), (r"P40\b|P4\b|GTX 10\d0|TITAN Xp", "6.1"),
    (r"\bM40\b|GTX 9\d0|TITAN X\b", "5.2"),
)
_GPU_RES = [(re.compile(p), cc) for p, cc in GPU_CC]


def versions_from_text(text: str) -> Dict[str, Any]:
    """The versions a log prints, as a dict for :func:`match_combinations` (``partial=True``):
    ``pip list``/``pip freeze`` lines, ``python -m torch.utils.collect_env`` fields, the
    nvidia-smi header, ``X.__version__`` prints, and GPU model names mapped to their compute
    capability. The first value seen for a key wins."""
    out: Dict[str, Any] = {}
    for key, rx in _LOG_KEYS:
        m = rx.search(text)
        if m and key not in out:
            out[key] = m.group(1)
    for name, rx in _DIST_RES:
        m = rx.search(text)
        if m and name not in out:
            out[name] = m.group(1)
    ccs: List[str] = []
    for rx, cc in _GPU_RES:
        if rx.search(text) and cc not in ccs:
            ccs.append(cc)
    if ccs:
        out["gpu_cc"] = ccs
    return out
