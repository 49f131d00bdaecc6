"""Which shared libraries of the CUDA stack a process really loads, and from where.

Standard library only; Python 3.8+; Linux (``/proc/self/maps``). Version reports say
what is installed; the dynamic loader picks one file per library at import time. This
probe imports torch and the compiled extensions of the kernel libraries that are
installed, each in a forked child of this process so that one that crashes or hangs
costs only its own entry, reads the child's own memory map, and describes every shared
object of the stack it finds there:

* path and version: file name, ELF SONAME and version definitions (read with ``struct``
  from the file), and the library's own version call through ctypes where one exists;
* owner: pip distribution (RECORD files), conda package (``conda-meta/*.json``),
  system package (dpkg's file lists, as ``dpkg -S`` reads them / ``rpm -qf``), or none;
* the copy its consumers' RUNPATH/RPATH would have picked (for the nvidia-* wheels, the one beside
  them, which torch preloads), when another one won (LD_PRELOAD, LD_LIBRARY_PATH, or a copy loaded
  earlier), and why; for an import that failed on a release-suffixed symbol (__nvJitLinkAddData_12_1),
  the newest release each copy defines (read from their dynamic symbol tables);
* every other copy on disk the loader could pick (LD_LIBRARY_PATH, the ldconfig cache,
  site-packages ``nvidia/*/lib``, conda ``lib``, ``/usr/local/cuda*``).

The probe's own process only forks, reads the children's answers and inspects files; it
may itself be a fork of stackpeel's preloading interpreter (runner/zygote.py) and then
already holds torch, exactly as the children would after importing it.
"""

import glob
import json
import os
import re
import select
import signal
import struct
import sys
import time

import _stackpeel_probe__common as common

#: libraries described in detail, by family (the file name without version and auditwheel hash)
STACK_FAMILIES = (
    "libcuda", "libcudart", "libcublas", "libcublasLt", "libcudnn", "libnccl", "libnvrtc", "libnvrtc-builtins",
    "libnvJitLink", "libcusparse", "libcusparseLt", "libcufft", "libcufftw", "libcurand", "libcusolver",
    "libcusolverMg", "libcupti", "libnvToolsExt", "libnvshmem_host", "libcufile", "libnvidia-ml",
    "libstdc++", "libgcc_s", "libgomp", "libiomp5", "libomp",
)
_FAMILY_SET = frozenset(STACK_FAMILIES)
#: cuDNN's sub-libraries (libcudnn_ops, libcudnn_cnn_infer...) count as the libcudnn family for version checks
_CUDNN_SUB = re.compile(r"^libcudnn_\w+$")
_SO_NAME = re.compile(r"^(lib[\w+.-]*?)(?:-[0-9a-f]{8})?\.so(?:\.([\d.]+))?$")

#: modules whose import loads compiled code of the stack, in import order; torch first
#: (causal-conv1d, mamba's selective scan, flash-attention 2, bitsandbytes, xformers, apex); FLA has no
#: compiled extension of its own: its kernels are Triton's
DEFAULT_IMPORTS = (
    "torch", "triton", "causal_conv1d_cuda", "selective_scan_cuda", "flash_attn_2_cuda", "bitsandbytes",
    "xformers._C", "apex_C",
)

#: version calls: family -> (symbol, how to call, how to decode)
VERSION_CALLS = {
    "libcuda": ("cuDriverGetVersion", "out_int", "cuda"),
    "libcudart": ("cudaRuntimeGetVersion", "out_int", "cuda"),
    "libcudnn": ("cudnnGetVersion", "ret_size", "cudnn"),
    "libnccl": ("ncclGetVersion", "out_int", "nccl"),
    "libcublasLt": ("cublasLtGetVersion", "ret_size", "cublas"),
    "libnvrtc": ("nvrtcVersion", "out_two", "two"),
    "libnvJitLink": ("nvJitLinkVersion", "out_two_u", "two"),
    "libcufft": ("cufftGetVersion", "out_int", "cufft"),
    "libcurand": ("curandGetVersion", "out_int", "cufft"),
}

MAX_OTHER = 400


# ----------------------------------------------------------------------------- names


def family_of(name):
    """'libcudart.so.12.8.90' -> 'libcudart'; 'libgomp-a34b3233.so.1' -> 'libgomp'; None if not a .so name."""
    m = _SO_NAME.match(os.path.basename(name))
    if not m:
        return None
    fam = m.group(1)
    return "libcudnn" if _CUDNN_SUB.match(fam) and not fam.startswith("libcudnn_frontend") else fam


def stem_of(name):
    """'libcudnn_ops.so.9' -> 'libcudnn_ops' (family_of folds cuDNN's sub-libraries into 'libcudnn')."""
    m = _SO_NAME.match(os.path.basename(name))
    return m.group(1) if m else None


def is_stack(family):
    return family in _FAMILY_SET


def name_version(name):
    """The version digits after '.so.' in a file name ('12.8.90'), or None."""
    m = _SO_NAME.match(os.path.basename(name))
    return m.group(2) if m and m.group(2) else None


# ----------------------------------------------------------------------------- ELF


class _Elf(object):
    """Just enough of an ELF file: dynamic section, version definitions and needs."""

    SHT_DYNAMIC, SHT_DYNSYM, SHT_VERDEF, SHT_VERNEED = 6, 11, 0x6FFFFFFD, 0x6FFFFFFE
    DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH = 1, 14, 15, 29

    def __init__(self, f):
        self.f = f
        ident = f.read(16)
        if len(ident) < 16 or ident[:4] != b"\x7fELF":
            raise ValueError("not an ELF file")
        self.is64 = ident[4] == 2
        self.end = "<" if ident[5] == 1 else ">"
        hdr = f.read(48 if self.is64 else 36)
        if self.is64:
            (_, _, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = struct.unpack(self.end + "HHIQQQIHHHHHH",
                                                                                           hdr)
        else:
            (_, _, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = struct.unpack(self.end + "HHIIIIIHHHHHH",
                                                                                           hdr)
        self.sections = []
        if not shoff or not shnum or shnum > 65000:
            return
        f.seek(shoff)
        raw = f.read(shentsize * shnum)
        fmt = self.end + ("IIQQQQIIQQ" if self.is64 else "IIIIIIIIII")
        size = struct.calcsize(fmt)
        for i in range(shnum):
            chunk = raw[i * shentsize:i * shentsize + size]
            if len(chunk) < size:
                break
            name, stype, _, _, off, sz, link, info, _, entsize = struct.unpack(fmt, chunk)
            self.sections.append((stype, off, sz, link, info, entsize))

    def _read(self, off, size):
        self.f.seek(off)
        return self.f.read(min(size, 64 * 1024 * 1024))

    def _string(self, strtab, index, cache):
        key = (strtab, index)
        if key in cache:
            return cache[key]
        _, off, sz, _, _, _ = self.sections[strtab]
        if index >= sz:
            return ""
        out = b""
        pos = off + index
        while len(out) < 4096:
            self.f.seek(pos)
            chunk = self.f.read(256)
            if not chunk:
                break
            cut = chunk.find(b"\0")
            if cut >= 0:
                out += chunk[:cut]
                break
            out += chunk
            pos += len(chunk)
        text = out.decode("utf-8", "replace")
        cache[key] = text
        return text

    def describe(self):
        info = {"soname": None, "needed": [], "rpath": [], "runpath": [], "defines": [], "needs": {}}
        cache = {}
        for stype, off, sz, link, count, _ in self.sections:
            if stype == self.SHT_DYNAMIC and link < len(self.sections):
                fmt = self.end + ("qQ" if self.is64 else "iI")
                step = struct.calcsize(fmt)
                data = self._read(off, sz)
                for i in range(0, len(data) - step + 1, step):
                    tag, val = struct.unpack(fmt, data[i:i + step])
                    if tag == 0:
                        break
                    if tag == self.DT_NEEDED:
                        info["needed"].append(self._string(link, val, cache))
                    elif tag == self.DT_SONAME:
                        info["soname"] = self._string(link, val, cache)
                    elif tag == self.DT_RPATH:
                        info["rpath"] = [p for p in self._string(link, val, cache).split(":") if p]
                    elif tag == self.DT_RUNPATH:
                        info["runpath"] = [p for p in self._string(link, val, cache).split(":") if p]
            elif stype == self.SHT_VERDEF and link < len(self.sections):
                data = self._read(off, sz)
                pos = 0
                for _ in range(min(count or 10000, 10000)):
                    if pos + 20 > len(data):
                        break
                    _, flags, _, cnt, _, aux, nxt = struct.unpack(self.end + "HHHHIII", data[pos:pos + 20])
                    if cnt and not flags & 1 and pos + aux + 8 <= len(data):  # VER_FLG_BASE: the file's own name
                        name_off, = struct.unpack(self.end + "I", data[pos + aux:pos + aux + 4])
                        info["defines"].append(self._string(link, name_off, cache))
                    if not nxt:
                        break
                    pos += nxt
            elif stype == self.SHT_VERNEED and link < len(self.sections):
                data = self._read(off, sz)
                pos = 0
                for _ in range(min(count or 10000, 10000)):
                    if pos + 16 > len(data):
                        break
                    _, cnt, file_off, aux, nxt = struct.unpack(self.end + "HHIII", data[pos:pos + 16])
                    names = []
                    apos = pos + aux
                    for _ in range(min(cnt, 1000)):
                        if apos + 16 > len(data):
                            break
                        _, _, _, name_off, anext = struct.unpack(self.end + "IHHII", data[apos:apos + 16])
                        names.append(self._string(link, name_off, cache))
                        if not anext:
                            break
                        apos += anext
                    info["needs"][self._string(link, file_off, cache)] = names
                    if not nxt:
                        break
                    pos += nxt
        return info

    def defined_symbols(self, prefix):
        """Names of the dynamic symbols this file defines (not merely uses) that start with ``prefix``."""
        out = []
        for stype, off, sz, link, _, entsize in self.sections:
            if stype != self.SHT_DYNSYM or link >= len(self.sections):
                continue
            fmt = self.end + ("IBBHQQ" if self.is64 else "IIIBBH")
            step = entsize or struct.calcsize(fmt)
            data = self._read(off, sz)
            strtab = self.sections[link]
            names = self._read(strtab[1], strtab[2])
            want = prefix.encode("utf-8")
            for i in range(0, len(data) - struct.calcsize(fmt) + 1, step):
                fields = struct.unpack(fmt, data[i:i + struct.calcsize(fmt)])
                name_off, shndx = fields[0], (fields[3] if self.is64 else fields[5])
                if not shndx or name_off >= len(names) or not names.startswith(want, name_off):
                    continue
                end = names.find(b"\0", name_off)
                out.append(names[name_off:end if end >= 0 else len(names)].decode("utf-8", "replace"))
        return sorted(set(out))


def elf_info(path):
    """SONAME, NEEDED, RPATH, RUNPATH, version definitions and needs of ``path``; {"error"} if unreadable."""
    try:
        with open(path, "rb") as f:
            return _Elf(f).describe()
    except (OSError, ValueError, struct.error) as exc:
        return {"error": "%s: %s" % (type(exc).__name__, exc)}


def defined_symbols(path, prefix):
    """The dynamic symbols ``path`` defines that start with ``prefix``; None if unreadable."""
    try:
        with open(path, "rb") as f:
            return _Elf(f).defined_symbols(prefix)
    except (OSError, ValueError, struct.error):
        return None


def symbol_release(path, symbol):
    """For a release-suffixed symbol ('__nvJitLinkAddData_12_1': nvJitLink adds one per CUDA release),
    whether ``path`` defines it and the newest release of the same name it does define:
    {"defines": bool, "newest": "__nvJitLinkAddData_12_0"}; None when the symbol has no such suffix
    or the file cannot be read."""
    m = re.match(r"^(\w+?_)(\d+)_(\d+)$", symbol or "")
    if not m:
        return None
    names = defined_symbols(path, m.group(1))
    if names is None:
        return None
    same = [n for n in names if re.match(re.escape(m.group(1)) + r"\d+_\d+$", n)]
    return {"defines": symbol in names, "newest": max(same, key=_vkey) if same else None}


def _vkey(name):
    return tuple(int(x) for x in re.findall(r"\d+", name))


def newest(defines, prefix):
    """The newest version definition with ``prefix`` ('GLIBCXX_'), or None."""
    got = [d for d in defines or () if d.startswith(prefix) and re.match(re.escape(prefix) + r"[\d.]+$", d)]
    return max(got, key=_vkey) if got else None


# ----------------------------------------------------------------------------- maps


def read_maps(pid="self"):
    """Unique file-backed mappings that are shared objects, in load order: [{path, inode, deleted}]."""
    out, seen = [], set()
    try:
        with open("/proc/%s/maps" % pid) as f:
            lines = f.readlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        if not path.startswith("/"):
            continue
        deleted = path.endswith(" (deleted)")
        if deleted:
            path = path[:-len(" (deleted)")]
        base = os.path.basename(path)
        if ".so" not in base:
            continue
        if path in seen:
            continue
        seen.add(path)
        out.append({"path": path, "inode": int(parts[4]) if parts[4].isdigit() else None, "deleted": deleted})
    return out


# ----------------------------------------------------------------------------- the child's side


def _decode(kind, value):
    if value is None:
        return None
    if kind == "cuda":
        return "%d.%d" % (value // 1000, (value % 1000) // 10)
    if kind == "cudnn":
        if value < 10000:  # cuDNN 8: major*1000 + minor*100 + patch
            return "%d.%d.%d" % (value // 1000, (value % 1000) // 100, value % 100)
        return "%d.%d.%d" % (value // 10000, (value % 10000) // 100, value % 100)
    if kind == "nccl":
        if value >= 20900:
            return "%d.%d.%d" % (value // 10000, (value % 10000) // 100, value % 100)
        return "%d.%d.%d" % (value // 1000, (value % 1000) // 100, value % 100)
    if kind == "cublas":
        return "%d.%d.%d" % (value // 10000, (value % 10000) // 100, value % 100)
    if kind == "cufft":
        return "%d.%d.%d" % (value // 1000, (value % 1000) // 100, value % 100)
    if kind == "two":
        return "%d.%d" % value
    return str(value)


def library_version_call(path, family):
    """The library's own version call on the already-loaded ``path`` (RTLD_NOLOAD: never loads
    anything new). Returns (text, raw, symbol) or None."""
    spec = VERSION_CALLS.get(family)
    if spec is None:
        return None
    import ctypes
    symbol, how, kind = spec
    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LOCAL", 0))
        fn = getattr(lib, symbol)
    except (OSError, AttributeError):
        return None
    try:
        if how == "out_int":
            v = ctypes.c_int(0)
            fn.argtypes, fn.restype = [ctypes.POINTER(ctypes.c_int)], ctypes.c_int
            if fn(ctypes.byref(v)) != 0:
                return None
            raw = v.value
        elif how == "ret_size":
            fn.argtypes, fn.restype = [], ctypes.c_size_t
            raw = int(fn())
        else:
            ctype = ctypes.c_uint if how == "out_two_u" else ctypes.c_int
            a, b = ctype(0), ctype(0)
            fn.argtypes, fn.restype = [ctypes.POINTER(ctype), ctypes.POINTER(ctype)], ctypes.c_int
            if fn(ctypes.byref(a), ctypes.byref(b)) != 0:
                return None
            raw = (a.value, b.value)
        return {"text": _decode(kind, raw), "raw": raw, "symbol": symbol}
    except Exception:
        return None


def _torch_declared():
    """What the imported torch says it was built with, and the versions its wheel pins."""
    torch = sys.modules.get("torch")
    out = {"version": None, "cuda": None, "cudnn_compile": None, "cudnn_runtime": None, "nccl_runtime": None,
           "requires": {}}
    if torch is None:
        return out
    out["version"] = getattr(torch, "__version__", None)
    out["cuda"] = getattr(getattr(torch, "version", None), "cuda", None)
    try:
        comp = torch._C._cudnn.getCompileVersion()
        out["cudnn_compile"] = ".".join(str(x) for x in comp)
    except Exception:
        pass
    if not out["cuda"]:
        return out
    # what any CUDA program does first: initialise CUDA (loads libcuda), and what torch says it
    # loaded: cuDNN (torch checks it against its compile version here) and NCCL
    with common.recorded() as box:
        try:
            out["cuda_available"] = bool(torch.cuda.is_available())
        except Exception as exc:  # noqa: BLE001
            out["cuda_error"] = common.exc_facts(exc)
        try:
            v = torch.backends.cudnn.version()
            out["cudnn_runtime"] = _decode("cudnn", v) if isinstance(v, int) else None
        except Exception as exc:  # noqa: BLE001 - 'cuDNN version incompatibility' is a RuntimeError
            out["cudnn_error"] = common.exc_facts(exc)
        try:
            nccl = getattr(torch.cuda, "nccl", None)
            v = nccl.version() if nccl is not None else None
            out["nccl_runtime"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else v
        except Exception as exc:  # noqa: BLE001
            out["nccl_error"] = common.exc_facts(exc)
    out["warnings"] = [w["category"] + ": " + w["message"] for w in box["warnings"]]
    return out


def _requires(dist):
    try:
        from importlib import metadata
        reqs = metadata.requires(dist) or []
    except Exception:
        return {}
    out = {}
    for req in reqs:
        m = re.match(r"^\s*(nvidia-[\w.-]+?)\s*==\s*([\w.]+)", req)
        if m and ("extra ==" not in req):
            out[m.group(1)] = m.group(2)
    return out


def _child(modules, wfd):
    """In the forked child: import ``modules`` in order, reporting each step, then the map."""
    def say(obj):
        data = (json.dumps(obj, default=repr) + "\n").encode()
        while data:
            n = os.write(wfd, data)
            data = data[n:]

    for name in modules:
        say({"start": name})
        with common.recorded() as box:
            try:
                __import__(name)
                err = None
            except BaseException as exc:  # noqa: BLE001 - an import may raise anything
                err = common.exc_facts(exc)
        say({"done": name, "error": err, "stderr": box["stderr"][-2000:]})
    declared = _torch_declared()  # before the map: initialising CUDA loads libcuda and cuDNN
    maps = read_maps() or []
    versions = {}
    for entry in maps:
        fam = family_of(entry["path"])
        base = os.path.basename(entry["path"])
        if fam in VERSION_CALLS and not (fam == "libcudnn" and not base.startswith("libcudnn.so")):
            got = library_version_call(entry["path"], fam)
            if got:
                versions[entry["path"]] = got
    say({"maps": maps, "versions": versions, "torch": declared})


def import_in_children(modules, deadline):
    """Import ``modules`` in forked children; a crash or hang ends one child, and the next
    one carries on after the module that broke. Returns (steps, final answer or None)."""
    steps, final = [], None
    remaining = list(modules)
    while remaining:
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.close(rfd)
                _child(remaining, wfd)
                os._exit(0)
            except BaseException:  # noqa: BLE001
                os._exit(70)
        os.close(wfd)
        buf, current, answer, timed_out = b"", None, None, False
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([rfd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(rfd, 1 << 16)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line.decode("utf-8", "replace"))
                except ValueError:
                    continue
                if "start" in msg:
                    current = msg["start"]
                elif "done" in msg:
                    steps.append({"module": msg["done"], "ok": msg["error"] is None, "error": msg["error"],
                                  "stderr": msg.get("stderr") or "", "crashed": None})
                    remaining.remove(msg["done"])
                    current = None
                elif "maps" in msg:
                    answer = msg
        os.close(rfd)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _, status = os.waitpid(pid, 0)
        if answer is not None and not remaining:
            final = answer
            break
        # the child died (or hung) while importing ``current``: record it, go on after it
        how = {"timed_out": timed_out}
        if os.WIFSIGNALED(status):
            how["signal"] = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            how["exit_code"] = os.WEXITSTATUS(status)
        culprit = current or (remaining[0] if remaining else None)
        if culprit is None:
            break
        steps.append({"module": culprit, "ok": False, "error": None, "stderr": "", "crashed": how})
        remaining.remove(culprit)
        if timed_out:
            break
    return steps, final


# ----------------------------------------------------------------------------- owners


def _site_dirs():
    out = []
    for p in sys.path:
        if p and os.path.isdir(p) and os.path.basename(p) in ("site-packages", "dist-packages"):
            out.append(os.path.realpath(p))
    return out


class Owners(object):
    """Who installed a file: pip distribution, conda package, system package, or none.
    ``pre``: the facts of :func:`loaded_libs_prework` (its pip index and the system owners
    it looked up), so that only paths it did not see are looked up again."""

    def __init__(self, pre=None):
        pre = pre or {}
        self._pip = dict(pre["pip"]) if isinstance(pre.get("pip"), dict) else None
        self._conda = {}
        self._system = dict(pre["system_owners"]) if isinstance(pre.get("system_owners"), dict) else {}

    def _pip_index(self):
        if self._pip is not None:
            return self._pip
        self._pip = {}
        try:
            from importlib import metadata
            dists = list(metadata.distributions())
        except Exception:
            return self._pip
        for dist in dists:
            try:
                text = dist.read_text("RECORD") or ""
            except Exception:
                continue
            base = None
            for line in text.splitlines():
                rel = line.split(",", 1)[0]
                if ".so" not in rel:
                    continue
                if base is None:  # the metadata (an e-mail parse) only of the dists that ship a library
                    try:
                        meta = dist.metadata
                        name, version = meta["Name"], meta["Version"]
                        base = str(dist.locate_file(""))
                    except Exception:
                        break
                path = os.path.realpath(os.path.join(base, rel))
                self._pip[path] = {"kind": "pip", "name": name, "version": version}
        return self._pip

    def _conda_index(self, prefix):
        if prefix in self._conda:
            return self._conda[prefix]
        index = {}
        for meta in glob.glob(os.path.join(prefix, "conda-meta", "*.json"))[:3000]:
            try:
                with open(meta) as f:
                    data = json.load(f)
            except (OSError, ValueError):
                continue
            for rel in data.get("files") or ():
                if ".so" in rel:
                    index[os.path.realpath(os.path.join(prefix, rel))] = {
                        "kind": "conda", "name": data.get("name"), "version": data.get("version"),
                        "channel": data.get("channel")}
        self._conda[prefix] = index
        return index

    @staticmethod
    def _conda_prefix(path):
        d = os.path.dirname(path)
        for _ in range(6):
            if os.path.isdir(os.path.join(d, "conda-meta")):
                return d
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        return None

    def resolve(self, paths):
        """{path: owner} for ``paths`` (real paths). One dpkg/rpm call for the system ones."""
        out, system = {}, []
        pip = None
        for path in paths:
            if "-packages" in path:
                pip = pip if pip is not None else self._pip_index()
                if path in pip:
                    out[path] = pip[path]
                    continue
            prefix = self._conda_prefix(path)
            if prefix:
                got = self._conda_index(prefix).get(path)
                if got:
                    out[path] = got
                    continue
            if path.startswith(("/usr/", "/lib", "/opt/")):
                system.append(path)
            else:
                out[path] = {"kind": "none", "name": None, "version": None}
        if system:
            ask = [p for p in system if p not in self._system]
            if ask:
                got = _system_owners(ask)
                for p in ask:
                    self._system[p] = got.get(p)
            for p in system:
                if self._system.get(p):
                    out[p] = dict(self._system[p])
        for path in paths:
            out.setdefault(path, {"kind": "none", "name": None, "version": None})
        return out


#: dpkg's database, where ``dpkg -S`` reads which package installed a file (one
#: ``info/<package>.list`` per package, a path a line)
DPKG_ADMINDIR = "/var/lib/dpkg"


def _dpkg_admindir():
    """The database ``dpkg -S`` would read, when it is the default one this probe can read
    itself; None when dpkg is configured elsewhere (``DPKG_ADMINDIR``, an ``admindir`` line
    in its configuration): then ``dpkg -S`` answers."""
    if os.environ.get("DPKG_ADMINDIR"):
        return None
    for cfg in ["/etc/dpkg/dpkg.cfg"] + sorted(glob.glob("/etc/dpkg/dpkg.cfg.d/*")):
        try:
            with open(cfg, "rb") as f:
                if any(line.strip().startswith(b"admindir") for line in f):
                    return None
        except OSError:
            continue
    return DPKG_ADMINDIR if os.path.isdir(os.path.join(DPKG_ADMINDIR, "info")) else None


def dpkg_list_owners(files, admindir=DPKG_ADMINDIR):
    """{path: package} for the ``files`` some package's ``info/*.list`` names, as ``dpkg -S``
    prints it (``libstdc++6:amd64``: the list's file name, which carries the architecture
    exactly where dpkg's name does); the first package in name order when several list it.
    Reads the lists itself: ``dpkg -S`` parses every list into its file database first, about
    0.13 s on a Debian image with 900 packages, against 0.04 s for finding a few lines here;
    this probe sits on the critical path of ``stackpeel check``. None when the database cannot
    be read (the caller asks ``dpkg -S``)."""
    info = os.path.join(admindir, "info")
    try:
        names = sorted(n for n in os.listdir(info) if n.endswith(".list"))
    except OSError:
        return None
    wanted = {os.fsencode(f): f for f in files}
    out = {}
    for n in names:
        try:
            with open(os.path.join(info, n), "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        for line in wanted.keys() & data.split(b"\n"):
            out.setdefault(wanted[line], n[:-len(".list")])
    return out


def _system_owners(paths):
    out = {}
    if common.which("dpkg-query") or common.which("dpkg"):
        # merged /usr: dpkg may list /lib/... for a file seen at /usr/lib/... and vice versa
        ask = {}
        for p in paths:
            ask[p] = p
            if p.startswith("/usr/lib"):
                ask[p[4:]] = p
            elif p.startswith("/lib"):
                ask["/usr" + p] = p
        admindir = _dpkg_admindir()
        listed = dpkg_list_owners(sorted(ask), admindir) if admindir else None
        if listed is not None:
            for fpath in sorted(ask):
                if fpath in listed:
                    out.setdefault(ask[fpath], {"kind": "system", "manager": "dpkg", "name": listed[fpath],
                                                "version": None})
        else:
            res = common.run(["dpkg", "-S"] + sorted(ask), timeout=15, clip_output=False)
            for line in (res.get("stdout") or "").splitlines():
                pkg, sep, fpath = line.partition(": ")
                fpath = fpath.strip()
                if not sep or fpath not in ask or "diversion" in pkg:
                    continue
                name = pkg.split(",")[0].strip()
                out.setdefault(ask[fpath], {"kind": "system", "manager": "dpkg", "name": name, "version": None})
        names = sorted({o["name"] for o in out.values()})
        if names:
            q = common.run(["dpkg-query", "-W", "-f", "${Package}:${Architecture} ${Version}\\n"] +
                           names, timeout=15, clip_output=False)
            vers = {}
            for line in (q.get("stdout") or "").splitlines():
                n, _, v = line.partition(" ")
                vers[n] = v
                vers[n.split(":")[0]] = v
            for o in out.values():
                o["version"] = vers.get(o["name"]) or vers.get(o["name"].split(":")[0])
    elif common.which("rpm"):
        for p in paths[:60]:
            res = common.run(["rpm", "-qf", "--qf", "%{NAME} %{VERSION}-%{RELEASE}\\n", p], timeout=10)
            line = (res.get("stdout") or "").strip().splitlines()
            if res.get("rc") == 0 and line:
                n, _, v = line[0].partition(" ")
                out[p] = {"kind": "system", "manager": "rpm", "name": n, "version": v}
    return out


# ----------------------------------------------------------------------------- copies on disk


def _env_dirs(name):
    return [d for d in (os.environ.get(name) or "").replace(";", ":").split(":") if d]


def _ldconfig_paths():
    exe = common.which("ldconfig") or ("/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else None)
    if not exe:
        return []
    res = common.run([exe, "-p"], timeout=10, clip_output=False)
    out = []
    for line in (res.get("stdout") or "").splitlines():
        _, sep, path = line.rpartition(" => ")
        if sep:
            out.append(path.strip())
    return out


def search_dirs(loaded_dirs):
    """(directory, where it comes from) the loader or the packages could take a library from."""
    dirs = []
    for d in _env_dirs("LD_LIBRARY_PATH"):
        dirs.append((d, "LD_LIBRARY_PATH"))
    for site in _site_dirs():
        for d in sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib"))) + \
                sorted(glob.glob(os.path.join(site, "nvidia", "cu*", "lib"))):
            dirs.append((d, "pip nvidia"))
        for d in ("torch/lib", "triton/backends/nvidia/lib"):
            dirs.append((os.path.join(site, d), "pip " + d.split("/")[0]))
    for prefix in {sys.prefix, os.environ.get("CONDA_PREFIX") or ""}:
        if prefix and os.path.isdir(os.path.join(prefix, "conda-meta")):
            dirs.append((os.path.join(prefix, "lib"), "conda"))
    for d in sorted(glob.glob("/usr/local/cuda*/lib64")) + sorted(glob.glob("/usr/local/cuda*/targets/*/lib")) + \
            sorted(glob.glob("/usr/local/cuda*/compat")):
        dirs.append((d, "CUDA toolkit"))
    for d in loaded_dirs:
        dirs.append((d, "next to a loaded library"))
    return dirs


def find_copies(families, loaded_dirs, listings=None, ldconfig=None):
    """Every file of ``families`` in the search directories and the ldconfig cache, by real path.
    ``listings`` ({directory: names, or None when it cannot be listed}) and ``ldconfig`` (the
    cache's paths): read already (:func:`loaded_libs_prework`); a directory not in them is read now."""
    found = {}

    def add(path, source):
        fam = family_of(path)
        if fam not in families:
            return
        try:
            real = os.path.realpath(path)
            if not os.path.isfile(real):
                return
        except OSError:
            return
        entry = found.setdefault(real, {"path": path, "realpath": real, "family": fam, "names": [], "found_in": []})
        if path not in entry["names"]:
            entry["names"].append(path)
        if source not in entry["found_in"]:
            entry["found_in"].append(source)

    listed = set()
    for d, source in search_dirs(loaded_dirs):
        key = (os.path.realpath(d), source)
        if key in listed:
            continue
        listed.add(key)
        if listings is not None and d in listings:
            names = listings[d]
            if names is None:
                continue
        else:
            try:
                names = os.listdir(d)
            except OSError:
                continue
        for n in names:
            if ".so" in n:
                add(os.path.join(d, n), source)
    for path in (_ldconfig_paths() if ldconfig is None else ldconfig):
        add(path, "ldconfig cache")
    return found


def loaded_libs_prework(inp):
    """What :func:`loaded_libs` reads without importing anything, read at once in a torch-free
    process while the preloading interpreter still imports torch (runtime_libs.loaded's
    ``prework``): the pip index of shared objects, the listings of the search directories that
    do not depend on what loads, the ldconfig cache, and the system package of every copy of a
    stack library found there. loaded_libs gives the same facts with or without it."""
    start = time.monotonic()
    listings = {}
    for d, _ in search_dirs([]):
        if d not in listings:
            try:
                listings[d] = [n for n in os.listdir(d) if ".so" in n]
            except OSError:
                listings[d] = None
    ldconfig = _ldconfig_paths()
    copies = find_copies(_FAMILY_SET, [], listings, ldconfig)
    system = sorted(p for p in copies if p.startswith(("/usr/", "/lib", "/opt/")))
    owned = _system_owners(system) if system else {}
    return {"pip": Owners()._pip_index(), "listings": listings, "ldconfig": ldconfig,
            "system_owners": dict((p, owned.get(p)) for p in system),
            "duration_s": round(time.monotonic() - start, 3)}


# ----------------------------------------------------------------------------- the loader's choice


def _expand(dirs, origin):
    out = []
    for d in dirs:
        d = d.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)
        d = d.replace("$LIB", "lib64" if struct.calcsize("P") == 8 else "lib").replace("$PLATFORM", "")
        out.append(os.path.normpath(d))
    return out


_NVIDIA_WHEEL_DIR = re.compile(r"^(.*/nvidia)/[^/]+/lib$")
_NOT_SHIPPED_BY_WHEELS = frozenset(("libstdc++", "libgcc_s", "libgomp", "libiomp5", "libomp", "libcuda",
                                    "libnvidia-ml"))


def shipped_copy(soname, consumer, info):
    """The copy of ``soname`` that ``consumer``'s own package set ships, and how it is reached:
    (path, "RPATH" | "RUNPATH" | "nvidia wheels") or (None, None). Its RPATH/RUNPATH first; for a
    consumer in one of the nvidia-* wheels' lib folders, the same soname in that folder or a
    sibling one: CUDA 13's wheels share nvidia/cu13/lib, while CUDA 12's cusparse (nvidia/cusparse/lib)
    has no RUNPATH at all and its libnvJitLink.so.12 lies in nvidia/nvjitlink/lib. torch loads those
    copies itself (torch/__init__.py _preload_cuda_deps), so they are the ones it was built with."""
    origin = os.path.dirname(consumer)
    for how in ("rpath", "runpath"):
        for d in _expand(info.get(how) or [], origin):
            cand = os.path.join(d, soname)
            if os.path.exists(cand):
                return cand, how.upper()
    m = _NVIDIA_WHEEL_DIR.match(os.path.realpath(origin))
    # only CUDA's own libraries: the C++/OpenMP runtimes and the driver's are never the wheels' to ship
    if m and family_of(soname) not in _NOT_SHIPPED_BY_WHEELS:
        own = os.path.join(os.path.realpath(origin), soname)
        for cand in [own] + sorted(glob.glob(os.path.join(m.group(1), "*", "lib", soname))):
            if os.path.exists(cand):
                return cand, "nvidia wheels"
    return None, None


def _expected_copy(soname, consumers, infos):
    """The file a consumer's own package ships for ``soname`` (:func:`shipped_copy`): (path, consumer,
    how) or (None, None, None). The largest consumer speaks for its package (libtorch_cpu.so rather
    than libshm.so)."""
    def size(path):
        try:
            return os.path.getsize(path)
        except OSError:
            return 0
    for c in sorted(consumers, key=size, reverse=True):
        cand, how = shipped_copy(soname, c, infos.get(c) or {})
        if cand:
            return cand, c, how
    return None, None, None


# ----------------------------------------------------------------------------- imports that failed

#: symbol prefix -> the library family that defines it (for 'undefined symbol' without a version)
SYMBOL_FAMILIES = (("__nvJitLink", "libnvJitLink"), ("nvJitLink", "libnvJitLink"), ("cublasLt", "libcublasLt"),
                   ("cublas", "libcublas"), ("cudnn", "libcudnn"), ("nccl", "libnccl"), ("nvrtc", "libnvrtc"),
                   ("cusparseLt", "libcusparseLt"), ("cusparse", "libcusparse"), ("cufft", "libcufft"),
                   ("curand", "libcurand"), ("cusolver", "libcusolver"), ("cuda", "libcudart"),
                   ("GOMP_", "libgomp"), ("omp_", "libgomp"))


def _ldconfig_map():
    out = {}
    for path in _ldconfig_paths():
        out.setdefault(os.path.basename(path), path)
    return out


def resolve(soname, consumer, info, ldcache):
    """Where the loader would take ``soname`` from for ``consumer`` (ld.so(8) order), as
    (path, how, the entry that decided); (None, None, None) if nowhere."""
    for raw in (os.environ.get("LD_PRELOAD") or "").replace(":", " ").split():
        if os.path.basename(raw) == soname or (elf_info(raw).get("soname") == soname):
            return raw, "LD_PRELOAD", raw
    origin = os.path.dirname(consumer)
    if info.get("rpath") and not info.get("runpath"):
        for d in _expand(info["rpath"], origin):
            if os.path.exists(os.path.join(d, soname)):
                return os.path.join(d, soname), "RPATH", d
    for d in _env_dirs("LD_LIBRARY_PATH"):
        if os.path.exists(os.path.join(d, soname)):
            return os.path.join(d, soname), "LD_LIBRARY_PATH", d
    for d in _expand(info.get("runpath") or [], origin):
        if os.path.exists(os.path.join(d, soname)):
            return os.path.join(d, soname), "RUNPATH", d
    if soname in ldcache:
        return ldcache[soname], "ldconfig cache", ldcache[soname]
    for d in ("/lib64", "/usr/lib64", "/lib", "/usr/lib"):
        if os.path.exists(os.path.join(d, soname)):
            return os.path.join(d, soname), "default path", d
    return None, None, None


def failed_import_shadows(failures, owners):
    """For 'undefined symbol' and 'version ... not found' errors of imports that failed (their
    libraries are unloaded again, so the map cannot show them): the copy the loader picks for
    the failing object, and the one its own RUNPATH/RPATH points at."""
    out, ldcache = [], None
    for item in failures:
        for v in item.get("version_needed") or ():
            # 'libgomp.so.1: version `GOMP_5.0' not found (required by X)': the loader took a copy too
            # old for X; a C++ runtime too old is libstdcxx-too-old (cxx_needs), not a shadow
            if v["version"].startswith(("GLIBCXX_", "CXXABI_", "GLIBC_")):
                continue
            consumer, lib = v["required_by"], v["library"]
            info = elf_info(consumer)
            soname = elf_info(lib).get("soname") or os.path.basename(lib)
            shipped, shipped_how = shipped_copy(soname, consumer, info)
            real = os.path.realpath(lib)
            how, entry = None, None
            for raw in (os.environ.get("LD_PRELOAD") or "").replace(":", " ").split():
                if os.path.realpath(raw) == real:
                    how, entry = "LD_PRELOAD", raw
            for d in _env_dirs("LD_LIBRARY_PATH"):
                if how is None and os.path.realpath(d) == os.path.dirname(real):
                    how, entry = "LD_LIBRARY_PATH", d
            out.append({"module": item.get("module"), "consumer": consumer, "symbol": v["version"],
                        "soname": soname, "family": family_of(soname), "would_load": real, "how": how or "loaded",
                        "entry": entry, "expected": shipped, "expected_how": shipped_how,
                        "expected_realpath": os.path.realpath(shipped) if shipped else None,
                        "owner": owners.resolve([real])[real],
                        "expected_owner": owners.resolve([os.path.realpath(shipped)])[os.path.realpath(shipped)]
                        if shipped else None, "version": None})
        for u in item.get("undefined_symbol") or ():
            consumer, symbol, wanted = u["object"], u["symbol"], u.get("version")
            info = elf_info(consumer)
            if info.get("error"):
                continue
            soname = wanted if wanted and ".so" in wanted else None
            if soname is None:
                fam = next((f for prefix, f in SYMBOL_FAMILIES if symbol.startswith(prefix)), None)
                soname = next((n for n in info.get("needed") or () if family_of(n) == fam), None) if fam else None
            if soname is None:
                continue
            if ldcache is None:
                ldcache = _ldconfig_map()
            got, how, entry = resolve(soname, consumer, info, ldcache)
            shipped, shipped_how = shipped_copy(soname, consumer, info)
            real_got = os.path.realpath(got) if got else None
            row = {"module": item.get("module"), "consumer": consumer, "symbol": symbol, "soname": soname,
                   "family": family_of(soname), "would_load": real_got, "how": how, "entry": entry,
                   "expected": shipped, "expected_how": shipped_how,
                   "expected_realpath": os.path.realpath(shipped) if shipped else None,
                   "owner": owners.resolve([real_got])[real_got] if real_got else None,
                   "expected_owner": owners.resolve([os.path.realpath(shipped)])[os.path.realpath(shipped)]
                   if shipped else None}
            if real_got:
                row["version"] = name_version(real_got) if name_version(real_got) and "." in name_version(
                    real_got) else (row["owner"] or {}).get("version")
                # a release-suffixed symbol (__nvJitLinkAddData_12_1) says which release each copy is
                row["symbol_release"] = symbol_release(real_got, symbol)
                if shipped:
                    row["expected_symbol_release"] = symbol_release(shipped, symbol)
                newest = (row["symbol_release"] or {}).get("newest")
                if not row["version"] and newest:
                    row["version"] = ".".join(newest.rsplit("_", 2)[1:])
            out.append(row)
    return out


# ----------------------------------------------------------------------------- the probe


def _parse_import_libs(text):
    """Library names and paths an import error names ('libcudart.so.11.0: cannot open ...')."""
    out = {"cannot_open": [], "undefined_symbol": [], "version_needed": []}
    for m in re.finditer(r"(lib[\w+.-]+\.so[\w.]*): cannot open shared object file", text or ""):
        out["cannot_open"].append(m.group(1))
    for m in re.finditer(r"(/\S+\.so[\w.]*): undefined symbol: (\w+)(?:, version ([\w.]+))?", text or ""):
        out["undefined_symbol"].append({"object": m.group(1), "symbol": m.group(2), "version": m.group(3)})
    for m in re.finditer(r"(/\S+\.so[\w.]*): version [`']([\w.]+)' not found \(required by (/\S+?)\)", text or ""):
        out["version_needed"].append({"library": m.group(1), "version": m.group(2), "required_by": m.group(3)})
    return out


def loaded_libs(inp):
    start = time.monotonic()
    opts = inp.get("options") or {}
    facts = {
        "supported": os.path.exists("/proc/self/maps") and hasattr(os, "fork"),
        "env": {k: os.environ.get(k) for k in ("LD_LIBRARY_PATH", "LD_PRELOAD", "CONDA_PREFIX", "CUDA_HOME")},
        "imports": [], "torch": None, "loaded": [], "others": [], "others_count": 0, "copies": {},
        "import_libraries": [], "failed_import_shadows": [], "cxx_needs": [], "duration_s": None,
    }
    if not facts["supported"]:
        facts["reason"] = "no /proc/self/maps or fork() on %s" % sys.platform
        return facts
    wanted = opts.get("imports") or DEFAULT_IMPORTS
    modules = []
    for name in wanted:
        top = name.split(".")[0]
        if common.find_spec_origin(top) is not None:
            modules.append(name)
    budget = float(opts.get("budget_s") or 100)
    steps, final = import_in_children(modules, time.monotonic() + budget)
    facts["imports"] = steps
    imported = time.monotonic()
    if final is None:
        facts["duration_s"] = round(time.monotonic() - start, 3)
        facts["reason"] = "no child finished its imports"
        return facts
    torch = final.get("torch") or {}
    torch["requires"] = _requires("torch") if torch.get("version") else {}
    facts["torch"] = torch

    maps = final["maps"]
    versions = final.get("versions") or {}

    infos = {}
    stack, others = [], []
    for entry in maps:
        path = entry["path"]
        fam = family_of(path)
        if fam and is_stack(fam):
            stack.append(entry)
        else:
            others.append(path)
    # DT_NEEDED of every loaded object tells who consumes whom
    for entry in maps:
        infos[entry["path"]] = elf_info(entry["path"])
    by_soname = {}
    for entry in maps:
        info = infos[entry["path"]]
        for need in info.get("needed") or ():
            by_soname.setdefault(need, []).append(entry["path"])

    failed_names = []
    for step in steps:
        err = step.get("error") or {}
        failed_names += re.findall(r"(lib[\w+.-]+\.so[\w.]*): cannot open shared object file",
                                   (err.get("message") or "") + " ".join(c.get("message") or ""
                                                                         for c in err.get("chain") or ()))
    pre = inp.get("prework") if isinstance(inp.get("prework"), dict) else None
    owners = Owners(pre)
    copies = find_copies(set(f for f in (family_of(e["path"]) for e in stack) if f) |
                         set(f for f in (family_of(n) for n in failed_names) if f) | {
        "libcudart", "libcudnn", "libnccl", "libcublas", "libcublasLt", "libstdc++", "libgomp", "libnvJitLink",
        "libnvrtc", "libcuda"}, sorted({os.path.dirname(e["path"]) for e in stack}),
        (pre or {}).get("listings"), (pre or {}).get("ldconfig"))
    all_paths = sorted(set(os.path.realpath(e["path"]) for e in stack) | set(copies))
    owned = owners.resolve(all_paths)

    for entry in stack:
        path = entry["path"]
        real = os.path.realpath(path)
        info = infos.get(path) or {}
        fam = family_of(path)
        soname = info.get("soname")
        consumers = sorted(set(by_soname.get(soname or "", []) + by_soname.get(os.path.basename(path), [])))
        expected, consumer, found_by = _expected_copy(soname or os.path.basename(path), consumers, infos)
        if expected and os.path.realpath(expected) == real:
            expected = consumer = found_by = None
        via, via_entry = None, None
        for raw in (os.environ.get("LD_PRELOAD") or "").replace(":", " ").split():
            if os.path.realpath(raw) == real:
                via, via_entry = "LD_PRELOAD", raw
                break
        if via is None:
            for raw in _env_dirs("LD_LIBRARY_PATH"):
                if os.path.realpath(raw) in (os.path.dirname(real), os.path.realpath(os.path.dirname(path))) and \
                        os.path.exists(os.path.join(raw, soname or os.path.basename(path))):
                    via, via_entry = "LD_LIBRARY_PATH", raw
                    break
        version, source = None, None
        call = versions.get(path)
        owner = owned.get(real) or {"kind": "none"}
        if call:
            version, source = call["text"], call["symbol"] + "()"
        if fam == "libstdc++":
            version, source = newest(info.get("defines"), "GLIBCXX_"), "version definitions"
        elif fam == "libgomp" and not version:
            version, source = newest(info.get("defines"), "GOMP_"), "version definitions"
        elif fam == "libgcc_s" and not version:
            version, source = newest(info.get("defines"), "GCC_"), "version definitions"
        if not version and owner.get("kind") in ("pip", "conda") and owner.get("version"):
            version, source = owner["version"], "%s package %s" % (owner["kind"], owner.get("name"))
        if not version and name_version(real) and len(name_version(real).split(".")) > 1:
            version, source = name_version(real), "file name"
        row = {
            "path": path, "realpath": real, "family": fam, "stem": stem_of(real), "soname": soname, "version": version,
            "version_source": source, "version_call": call, "owner": owner, "via": via, "via_entry": via_entry,
            "deleted": entry.get("deleted"), "consumers": consumers[:8],
            "expected": {"path": expected, "realpath": os.path.realpath(expected), "consumer": consumer,
                         "found_by": found_by,
                         "owner": owners.resolve([os.path.realpath(expected)])[os.path.realpath(expected)]}
            if expected else None,
        }
        if fam == "libstdc++":
            row["provides"] = sorted((d for d in info.get("defines") or () if d.startswith(("GLIBCXX_", "CXXABI_"))),
                                     key=_vkey)[-3:]
        if info.get("error"):
            row["elf_error"] = info["error"]
        facts["loaded"].append(row)

    loaded_real = {r["realpath"] for r in facts["loaded"]}
    for real, c in sorted(copies.items()):
        if real in loaded_real:
            continue
        info = elf_info(real)
        fam = c["family"]
        item = dict(c, soname=info.get("soname"), owner=owned.get(real) or {"kind": "none"},
                    version=(name_version(real) if name_version(real) and "." in name_version(real) else None))
        if fam == "libstdc++":
            item["version"] = newest(info.get("defines"), "GLIBCXX_")
            item["provides_glibcxx"] = item["version"]
        elif fam in ("libgomp", "libgcc_s"):  # their file names carry no release: their symbol versions do
            item["version"] = newest(info.get("defines"), "GOMP_" if fam == "libgomp" else "GCC_")
        elif (item["owner"].get("kind") in ("pip", "conda")) and item["owner"].get("version"):
            item["version"] = item["owner"]["version"]
        facts["copies"].setdefault(fam, []).append(item)

    # C++ runtime needs: the loaded objects and the extensions that failed to load
    stdcxx = next((r for r in facts["loaded"] if r["family"] == "libstdc++"), None)
    provided = set(d for d in (infos.get(stdcxx["path"], {}).get("defines") or ())) if stdcxx else set()
    candidates = [e["path"] for e in maps]
    for step in steps:
        err = step.get("error") or {}
        text = (err.get("message") or "") + "\n" + "\n".join(c.get("message") or "" for c in err.get("chain") or ())
        libs = _parse_import_libs(text)
        if any(libs.values()):
            facts["import_libraries"].append(dict(libs, module=step["module"]))
        for v in libs["version_needed"]:
            if v["required_by"] not in candidates:
                candidates.append(v["required_by"])
    facts["failed_import_shadows"] = failed_import_shadows(facts["import_libraries"], owners)
    for path in candidates:
        info = infos.get(path) or elf_info(path)
        needs = [n for n in (info.get("needs") or {}).get("libstdc++.so.6", ()) if n.startswith("GLIBCXX_")]
        if not needs:
            continue
        top = max(needs, key=_vkey)
        missing = sorted((n for n in needs if provided and n not in provided), key=_vkey)
        facts["cxx_needs"].append({"object": path, "newest": top, "missing": missing,
                                   "loaded": path in infos})
    needy = [r for r in facts["cxx_needs"] if r["loaded"]]
    if needy:
        top = max(needy, key=lambda r: _vkey(r["newest"]))
        facts["cxx_newest_needed"] = {"object": top["object"], "version": top["newest"]}
    facts["cxx_provided"] = newest(provided, "GLIBCXX_")
    facts["cxx_needs"] = sorted((r for r in facts["cxx_needs"] if r["missing"]), key=lambda r: r["object"])

    facts["others_count"] = len(others)
    facts["others"] = others[:MAX_OTHER]
    end = time.monotonic()
    facts["duration_s"] = round(end - start, 3)
    # the imports (what the process pays anyway) apart from this probe's own reading and lookups
    facts["timings"] = {"imports_s": round(imported - start, 3), "analysis_s": round(end - imported, 3)}
    return facts
