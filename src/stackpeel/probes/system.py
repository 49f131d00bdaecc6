"""System facts: distro, CPU arch, libc, container kind, user. Standard library only; 3.8+."""

import os
import platform
import sys
import sysconfig


def _read(path, limit=65536):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except (OSError, IOError):
        return None


def os_release():
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        text = _read(path)
        if text is None:
            continue
        out = {}
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() and not key.startswith("#"):
                out[key.strip()] = value.strip().strip('"').strip("'")
        return out
    return {}


def container_kind(env=None, root="/"):
    """Best guess at the container or VM layer we run in, with the signals that led to it.

    Returns (kind, signals). kind is one of wsl, docker, podman, kubernetes, lxc,
    systemd-nspawn, apptainer, none.
    """
    env = os.environ if env is None else env
    j = lambda p: os.path.join(root, p.lstrip("/"))  # noqa: E731
    signals = []
    osrelease = (_read(j("/proc/sys/kernel/osrelease")) or "").strip()
    if "microsoft" in osrelease.lower() or env.get("WSL_DISTRO_NAME") or os.path.exists(j("/dev/dxg")):
        signals.append("kernel release %r / WSL env / /dev/dxg" % osrelease)
        return "wsl", signals
    if env.get("KUBERNETES_SERVICE_HOST") or os.path.isdir(j("/var/run/secrets/kubernetes.io/serviceaccount")):
        signals.append("KUBERNETES_SERVICE_HOST or service-account dir")
        return "kubernetes", signals
    hosts = _read(j("/etc/hosts"), 200) or ""
    if hosts.startswith("# Kubernetes-managed hosts file"):
        signals.append("/etc/hosts is Kubernetes-managed")
        return "kubernetes", signals
    if env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER") or os.path.isdir(j("/.singularity.d")):
        signals.append("APPTAINER_CONTAINER/SINGULARITY_CONTAINER or /.singularity.d")
        return "apptainer", signals
    containerenv = _read(j("/run/.containerenv"))
    if containerenv is not None or env.get("container") == "podman":
        signals.append("/run/.containerenv or container=podman")
        return "podman", signals
    if os.path.exists(j("/.dockerenv")):
        signals.append("/.dockerenv exists")
        return "docker", signals
    marker = (_read(j("/run/systemd/container"), 200) or "").strip()
    pid1 = _read(j("/proc/1/environ")) or ""
    c_env = env.get("container", "")
    for value in (marker, c_env) + tuple(v[len("container="):] for v in pid1.split("\0") if v.startswith("container=")):
        if value in ("lxc", "lxc-libvirt"):
            signals.append("container=%s" % value)
            return "lxc", signals
        if value == "systemd-nspawn":
            signals.append("container=systemd-nspawn")
            return "systemd-nspawn", signals
        if value == "docker":
            signals.append("container=docker")
            return "docker", signals
    if os.path.exists(j("/dev/lxd/sock")) or os.path.exists(j("/dev/incus/sock")):
        signals.append("/dev/lxd/sock or /dev/incus/sock")
        return "lxc", signals
    cgroup = _read(j("/proc/self/cgroup")) or ""
    if "/docker/" in cgroup or "docker-" in cgroup:
        signals.append("/proc/self/cgroup names docker")
        return "docker", signals
    if "kubepods" in cgroup:
        signals.append("/proc/self/cgroup names kubepods")
        return "kubernetes", signals
    if "lxc.payload" in cgroup:
        signals.append("/proc/self/cgroup names lxc.payload")
        return "lxc", signals
    mountinfo = _read(j("/proc/self/mountinfo"), 1 << 20) or ""
    if "/docker/overlay2/" in mountinfo or "/var/lib/docker/containers/" in mountinfo:
        signals.append("mountinfo shows docker overlay")
        return "docker", signals
    if "lxcfs" in mountinfo:
        signals.append("lxcfs mounts in mountinfo")
        return "lxc", signals
    return "none", signals


def platform_facts(inp):
    osr = os_release()
    libc, libc_version = platform.libc_ver()
    kind, signals = container_kind()
    try:
        import pwd
        user = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, AttributeError):
        user = None
    return {
        "distro_id": osr.get("ID"),
        "distro_like": osr.get("ID_LIKE"),
        "distro": osr.get("PRETTY_NAME") or osr.get("NAME"),
        "distro_version": osr.get("VERSION_ID"),
        "arch": platform.machine(),
        "kernel": platform.release(),
        "libc": libc or ("musl" if os.path.exists("/lib/ld-musl-x86_64.so.1")
                         or os.path.exists("/lib/ld-musl-aarch64.so.1") else None),
        "libc_version": libc_version or None,
        "container": kind,
        "container_signals": signals,
        "is_root": hasattr(os, "geteuid") and os.geteuid() == 0,
        "user": user,
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "python_executable": sys.executable,
        "python_prefix": sys.prefix,
        "python_base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "in_venv": sys.prefix != getattr(sys, "base_prefix", sys.prefix),
        "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
        "slurm_job": os.environ.get("SLURM_JOB_ID"),
    }


def file_size_limit(inp):
    """RLIMIT_FSIZE (``ulimit -f``) of this process, in bytes, inherited from the job that runs
    stackpeel (stackpeel raises its own, and gives every probe the user's back): None where
    unlimited, or where the platform has no
    such limit (no ``resource`` module)."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    except (ImportError, AttributeError, OSError, ValueError):
        return {"soft": None, "hard": None}
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard}

