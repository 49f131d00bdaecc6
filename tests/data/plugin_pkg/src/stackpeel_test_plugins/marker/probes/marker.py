import os


def counted(inp):
    path = os.environ.get("STACKPEEL_TEST_MARKER")
    rank = os.environ.get("LOCAL_RANK", "-")
    if path:
        with open(path, "a") as f:
            f.write("%s %d\n" % (rank, os.getpid()))
    return {"path": path, "rank": rank, "written": bool(path)}
