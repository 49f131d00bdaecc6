"""Peak bytes a command writes to its temporary directory (tmp25).

    unshare -m sh -c 'mount -t tmpfs -o size=4g tmpfs /mnt && python3 scripts/tmp_peak.py /mnt -- CMD ...'

runs CMD with TMPDIR=DIR and samples the used bytes of DIR's file system (statvfs) every 2 ms; prints
the peak over the start and the largest files seen at that peak. DIR should be a file system of its own
(a fresh tmpfs): anything else writing there counts too. Standard library only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import List, Tuple


def used(path: str) -> int:
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def files(path: str) -> List[Tuple[int, str]]:
    out = []
    for root, _, names in os.walk(path):
        for name in names:
            try:
                out.append((os.lstat(os.path.join(root, name)).st_size, os.path.join(root, name)))
            except OSError:
                pass
    return sorted(out, reverse=True)[:10]


def main(argv: List[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, cmd = argv[0], argv[2:]
    base, peak, at_peak = used(path), 0, []
    proc = subprocess.Popen(cmd, env=dict(os.environ, TMPDIR=path))
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, at_peak
        while not stop.is_set():
            now = used(path) - base
            if now > peak:
                peak, at_peak = now, files(path)
            time.sleep(0.002)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    rc = proc.wait()
    stop.set()
    t.join()
    print(f"tmp_peak: {peak / 1024:.0f} KiB at peak in {path} (exit status {rc})")
    for size, name in at_peak:
        print(f"  {size:>12} {name}")
    return rc


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
