"""tools34: the wordings earlier rounds left unread (tools33, harv33, harv33b, harv33c, harv33d).

Every message is written as the program prints it (its raise site is named beside it); each runs
through wrappers of test_explain_patterns.WRAPPERS (prefixed, quoted, wrapped), with near misses
that must stay unread or read otherwise.
"""
import pytest

from stackpeel.combinations import facts_from_text
from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load as load_explain

from test_explain_patterns import WRAPPERS  # noqa: E402


def codes(text):
    return [c.code for c in explain_text(text if text.endswith("\n") else text + "\n").candidates]


def ids(line):
    return [e.id for e in load_explain().match_line(line)]


def wrapped(wrap, text):
    return "\n".join(WRAPPERS[wrap](line) for line in text.splitlines()) + "\n"


SOME_WRAPPERS = ["plain", "torchrun-rank", "python-logging", "docker-compose", "markdown-quote",
                 "prose-quotes", "word-wrapped-80"]

# -- 1. NCCL releases that differ between nodes behind the family-0 / "unhandled system error"
#    lines: NCCL prints its release at the first communicator (src/init.cc showVersion: VERSION_STRING
#    "NCCL version X.Y.Z+cudaA.B"), torch's c10d appends it to every NCCL error (", NCCL version
#    X.Y.Z"); peers of another release fail in the bootstrap (src/misc/socket.cc ncclSocketInit's
#    "family %d is neither AF_INET") or in initTransportsRank ("Mismatched NCCL version detected")

FAMILY_0 = ("misc/socket.cc:484 NCCL WARN ncclSocketInit: connecting to address  with family 0 is neither "
            "AF_INET(2) nor AF_INET6(10)")
C10D_ERROR = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
              "ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), "
              "NCCL version {v}")


def _two_nodes(v1, v2, failure=FAMILY_0):
    return (f"node1:12:12 [0] NCCL INFO NCCL version {v1}+cuda12.1\n"
            f"node2:40:40 [0] NCCL INFO NCCL version {v2}+cuda12.2\n"
            f"node1:12:80 [0] {failure}\n"
            "node1:12:80 [0] NCCL INFO bootstrap.cc:98 -> 3\n"
            + C10D_ERROR.format(v=v1) + "\n")


@pytest.mark.parametrize("wrap", SOME_WRAPPERS)
def test_nccl_releases_differing_between_nodes_rank_first(wrap):
    cands = explain_text(wrapped(wrap, _two_nodes("2.18.1", "2.19.3"))).candidates
    assert [c.code for c in cands][:1] == ["collective-mismatch-across-ranks"], [c.code for c in cands]
    assert "nccl-socket-ifname-wrong" in cands[0].explains


def test_nccl_releases_differing_in_c10d_errors_alone():
    # no NCCL_DEBUG: only torch's error lines, one per rank, each with its own release
    log = ("[rank0]: " + C10D_ERROR.format(v="2.14.3") + "\n"
           "[rank1]: " + C10D_ERROR.format(v="2.18.1") + "\n")
    assert codes(log)[:1] == ["collective-mismatch-across-ranks"]


def test_nccl_version_fact_reads_every_distinct_release():
    f = facts_from_text(_two_nodes("2.18.1", "2.19.3"))
    assert f.other.get("nccl_versions") == "2.18.1, 2.19.3"


def test_same_nccl_release_on_every_node_keeps_the_interface_reading():
    assert codes(_two_nodes("2.18.1", "2.18.1"))[:1] == ["nccl-socket-ifname-wrong"]
    assert "nccl_versions" not in facts_from_text(_two_nodes("2.18.1", "2.18.1")).other


def test_nccl_too_old_line_is_not_two_releases():
    # src/dev_runtime.cc: one process, the release it was compiled with and the one it loaded
    line = ("NCCL WARN NCCL library is too old. This application was compiled with NCCL version 2.21.5, but "
            "is running with NCCL library version 2.18.1.")
    assert "nccl_versions" not in facts_from_text(line + "\nNCCL INFO NCCL version 2.18.1+cuda12.1\n").other
    assert codes(line)[:1] == ["cuda-library-shadowed"]


def test_differing_nccl_releases_alone_stay_quiet():
    # two releases and no failure: a note at most, never a candidate
    log = "NCCL INFO NCCL version 2.18.1+cuda12.1\nNCCL INFO NCCL version 2.19.3+cuda12.2\ntraining done\n"
    assert codes(log) == []
