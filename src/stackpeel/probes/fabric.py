"""NVLink fabric facts, read without CUDA: per-GPU fabric state from ``nvidia-smi`` (Not
Supported / Not Started / In Progress / Completed, and its status), the ``Fabric`` sections of
``nvidia-smi -q`` (clique, health), NVSwitch device nodes, a running Fabric Manager, and
``nvidia-smi topo -m``. Standard library only; Python 3.8+.
"""

import os
import re

import _stackpeel_probe__common as common

#: fields of ``nvidia-smi --query-gpu`` for the fabric (drivers >= 535 on Hopper and later)
FABRIC_FIELDS = ("index", "name", "uuid", "fabric.state", "fabric.status")


def _fabric_sections(text):
    """Per-GPU ``Fabric`` sections of ``nvidia-smi -q``: [{"bus_id", "state", "status", "clique_id",
    "cluster_uuid", "health_summary"}]. Older drivers print no such section: []."""
    gpus, cur, in_fabric, depth = [], None, False, 0
    for line in (text or "").splitlines():
        if line.startswith("GPU "):
            cur = {"bus_id": line[4:].strip()}
            gpus.append(cur)
            in_fabric = False
            continue
        if cur is None or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        key, sep, value = line.strip().partition(":")
        key, value = key.strip(), value.strip()
        if not sep and key == "Fabric":
            in_fabric, depth = True, indent
            continue
        if in_fabric and indent <= depth:
            in_fabric = False
        if in_fabric and sep:
            name = {"State": "state", "Status": "status", "CliqueId": "clique_id", "ClusterUUID": "cluster_uuid",
                    "Summary": "health_summary", "Bandwidth": "health_bandwidth"}.get(key)
            if name and name not in cur:
                cur[name] = value
    return [g for g in gpus if len(g) > 1]


def _fabric_manager_processes():
    """PIDs of a running ``nv-fabricmanager`` (only visible where it runs: the host, or the
    driver container; a VM guest or a plain container sees none)."""
    found = []
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open("/proc/%s/comm" % pid) as f:
                if f.read().strip() == "nv-fabricmanager":
                    found.append(int(pid))
        except (OSError, IOError):
            continue
    return found


def nvlink_fabric(inp):
    """What the NVLink fabric looks like to this machine, without CUDA: per-GPU fabric state from
    ``nvidia-smi`` (Not Supported / Not Started / In Progress / Completed, and its status), the
    ``Fabric`` sections of ``nvidia-smi -q`` (clique, health), NVSwitch device nodes, a running
    Fabric Manager, and ``nvidia-smi topo -m``."""
    facts = {}
    smi = common.which("nvidia-smi")
    facts["nvidia_smi"] = smi
    try:
        facts["nvswitch_nodes"] = sorted(n for n in os.listdir("/dev") if re.match(r"nvidia-nvswitch\d+$", n))
    except OSError:
        facts["nvswitch_nodes"] = None
    facts["fabric_manager_pids"] = _fabric_manager_processes()
    if not smi:
        return facts
    # the three queries at once: each opens the GPUs through the driver; one after the other they took
    # 0.20 s on an H200 (alone), which made this the slowest torch-free probe of a full run there
    q, full, topo = common.run_together([
        ([smi, "--query-gpu=" + ",".join(FABRIC_FIELDS), "--format=csv,noheader"], {"timeout": 15}),
        ([smi, "-q"], {"timeout": 30, "clip_output": False}),
        ([smi, "topo", "-m"], {"timeout": 15})])
    facts["query"] = {"rc": q["rc"], "stdout": q["stdout"], "stderr": q["stderr"], "error": q["error"]}
    gpus = []
    if q["rc"] == 0:
        for line in q["stdout"].splitlines():
            cells = [c.strip() for c in line.split(",")]
            if len(cells) == len(FABRIC_FIELDS) and cells[0].isdigit():
                gpus.append({"index": int(cells[0]), "name": cells[1], "uuid": cells[2], "state": cells[3],
                             "status": cells[4]})
    facts["gpus"] = gpus
    facts["sections"] = _fabric_sections(full["stdout"]) if full["rc"] == 0 else []
    if full["rc"] != 0:
        facts["q_error"] = {"rc": full["rc"], "stderr": common.clip(full["stderr"], 2000), "error": full["error"]}
    facts["topology"] = topo
    return facts
