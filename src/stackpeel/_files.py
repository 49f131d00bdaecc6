"""Writing a whole file or nothing: the one helper the CLI's ``--output`` and the result cache
share (standard library only)."""

from __future__ import annotations

import os
import tempfile


def replace_file(path: str, text: str, mode: int, prefix: str = ".stackpeel-") -> None:
    """Write ``text`` to a temporary file beside ``path`` (``prefix`` names it), set ``mode``,
    and rename it over ``path``: a reader sees the old file or the new one, never a part. On
    any failure the temporary file is removed and the error raised."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
