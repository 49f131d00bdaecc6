"""`nvidia-smi topo -m` and fabric facts of machines larger than the lent ones.

The 8-GPU matrices are real pastes from public threads (tests/data/multi_gpu/topo/, each file
names its source), cut short the way pastes are; the 2-GPU one is the lent H200 pair's own
output, recorded in docs/validation. No 4- or 8-GPU machine has been lent to the project yet:
these tests pin the parsing, not a verdict on real hardware.
"""

import json
from pathlib import Path

import pytest

from stackpeel.checks.multi_gpu import nvlink_layout, topology_links, topology_matrix

ROOT = Path(__file__).resolve().parents[1]
TOPO = Path(__file__).parent / "data" / "multi_gpu" / "topo"


def paste(name):
    return (TOPO / name).read_text().split("# ---\n", 1)[1]


def h200_pair_topology():
    report = json.loads((ROOT / "docs/validation/2026-11-29-h200/reports/multi-gpu-healthy.json").read_text())
    (p2p,) = [r for r in report["results"] if r["id"] == "multi_gpu.p2p"]
    return p2p["facts"]["topology"]["stdout"]


def test_lent_h200_pair_tabs_and_underlined_header():
    m = topology_matrix(h200_pair_topology())
    assert m["gpus"] == [0, 1] and m["links"] == {(0, 1): "NV18", (1, 0): "NV18"}
    assert m["cpu_affinity"] == {0: "0-31", 1: "0-31"} and m["numa"] == {0: "0", 1: "0"}
    assert nvlink_layout(m) == {"kind": "all-nvlink", "weak": [], "not_nvlink": [], "common": "NV18"}


def test_eight_a100_with_nine_nics_cut_in_the_last_row():
    m = topology_matrix(paste("nccl-933-8xA100-nv8.txt"))
    assert m["gpus"] == list(range(8)) and m["truncated"] == [7]
    assert m["links"][(0, 7)] == "NV8" and m["links"][(6, 5)] == "NV8" and m["links"][(7, 3)] == "NV8"
    assert (7, 4) not in m["links"]  # the paste ends there
    assert m["nics"][(0, "NIC2")] == "PIX" and m["nics"][(4, "NIC1")] == "PIX" and m["nics"][(3, "NIC8")] == "PIX"
    assert m["cpu_affinity"][0] == "0-47,96-143" and m["cpu_affinity"][4] == "48-95,144-191"
    assert m["numa"][3] == "0" and m["numa"][4] == "1"
    assert nvlink_layout(m)["kind"] == "all-nvlink" and nvlink_layout(m)["common"] == "NV8"


def test_eight_h100_without_header_line():
    m = topology_matrix(paste("vllm-6220-8xH100-nv18-noheader.txt"))
    assert m["gpus"] == list(range(6))
    assert all(m["links"][(i, j)] == "NV18" for i in range(5) for j in range(8) if i != j)
    assert len([k for k in m["nics"] if k[0] == 0]) == 18  # NIC columns numbered in order when unnamed
    assert m["cpu_affinity"][4] == "56-111" and m["numa"][4] == "1"


def test_tab_separated_matrix_with_nic_preamble():
    m = topology_matrix(paste("vllm-14537-8gpu-tabs-nics.txt"))
    assert m["gpus"] == [0, 1, 2] and m["links"][(1, 7)] == "NV18"
    assert len([k for k in m["nics"] if k[0] == 0]) == 56 and m["nics"][(0, "NIC0")] == "PXB"
    assert m["cpu_affinity"][1] == "0-55,112-167"


@pytest.mark.parametrize("cut", [3, 4, 5])
def test_a_gpu_that_lost_links_is_named(cut):
    """Derived from the real 8-GPU paste: one GPU's NVLinks to the others drop (as on a board
    whose fabric trained only partly); the layout names exactly that GPU's pairs."""
    lines = paste("nccl-933-8xA100-nv8.txt").splitlines()
    out = []
    for line in lines:
        cells = line.split()
        if cells and cells[0].startswith("GPU") and cells[0] != "GPU0" or (cells[:1] == ["GPU0"] and "X" in cells):
            i = int(cells[0][3:])
            row = cells[1:]
            for j in range(min(8, len(row))):
                if (i == cut) != (j == cut) and row[j].startswith("NV"):
                    row[j] = "NV2" if cut != 5 else "SYS"
            line = " ".join([cells[0]] + row)
        out.append(line)
    layout = nvlink_layout(topology_matrix("\n".join(out)))
    pairs = layout["not_nvlink"] if cut == 5 else layout["weak"]
    assert pairs and all(cut in p for p in pairs)
    assert layout["kind"] == ("partial-nvlink" if cut == 5 else "all-nvlink")
    assert layout["common"] == "NV8"


def test_topology_links_keeps_its_old_contract():
    assert topology_links(h200_pair_topology()) == {(0, 1): "NV18", (1, 0): "NV18"}
    assert topology_links("") == {} and nvlink_layout(topology_matrix(""))["kind"] == "unknown"
