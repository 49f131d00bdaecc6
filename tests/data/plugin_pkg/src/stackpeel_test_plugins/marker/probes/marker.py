import os
import time


def counted(inp):
    """One line per run: the local rank and pid that ran it; then sleeps
    $STACKPEEL_TEST_MARKER_SLEEP seconds (a rank 0 that a test kills while it checks)."""
    path = os.environ.get("STACKPEEL_TEST_MARKER")
    rank = os.environ.get("LOCAL_RANK", "-")
    if path:
        with open(path, "a") as f:
            f.write("%s %d\n" % (rank, os.getpid()))
    time.sleep(float(os.environ.get("STACKPEEL_TEST_MARKER_SLEEP") or 0))
    return {"path": path, "rank": rank, "written": bool(path)}
