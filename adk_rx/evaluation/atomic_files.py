"""How evaluation writes files: whole or not at all, one writer of a folder at a time.

* :func:`write_atomically` writes the new text to a temporary file beside the target, flushes
  it to disk and renames it over the target. A rename is atomic, so a reader (or a crash at
  any point) sees the old file or the new one, never a mix; a crash leaves at most a hidden
  ``.<name>.<random>.tmp`` file behind, which no glob for ``*.evalset.json`` picks up.
* :func:`exclusive` holds an exclusive lock on a lock file for the length of a
  read-modify-write, so threads and processes that share a folder take turns and none loses
  another's change. It is ``flock``: tied to the open file, so two threads of one process
  exclude each other too, and dropped by the kernel when a process dies. Without ``fcntl``
  (Windows) a lock of this process stands in.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: writers of this process only
    fcntl = None

__all__ = ["exclusive", "write_atomically"]

_PROCESS_LOCK = threading.Lock()


def write_atomically(path: Path, text: str) -> None:
    """Replaces ``path`` with ``text`` (UTF-8) in one rename; creates its folder if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    # 0o666 less the umask, as an ordinary open would give the file.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())  # the bytes are on disk before the name points at them
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


@contextlib.contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Holds an exclusive lock on ``lock_file`` (created if missing) until the block ends."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        with _PROCESS_LOCK:
            yield
        return
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the file drops its lock
