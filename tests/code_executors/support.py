"""Helpers for the code-execution tests: a FIFO the child reports on, and pid checks.

A child program announces what it started by writing pids to a FIFO; the test blocks reading
it, so it knows the program is running without polling or sleeping.
"""

from __future__ import annotations

import os
import select
from pathlib import Path


def make_fifo(directory: Path) -> Path:
    """A named pipe in ``directory``."""
    path = directory / "ready.fifo"
    os.mkfifo(path)
    return path


def read_pids(fifo: Path) -> list[int]:
    """Blocks until the child wrote its line of pids to ``fifo`` and closed it."""
    with open(fifo, encoding="utf-8") as reader:
        return [int(p) for p in reader.read().split()]


def announce(fifo: Path, *extra: str) -> str:
    """Code that writes its pid (and ``extra`` pid expressions) to ``fifo``."""
    pids = " + ' ' + ".join(["str(os.getpid())", *extra])
    return f"import os\nwith open({str(fifo)!r}, 'w') as _f:\n    _f.write({pids})\n"


def is_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, killed and waiting for its reaper, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_exit(pid: int, timeout: float = 10.0) -> bool:
    """Blocks until ``pid`` exits (its pidfd turns readable); False if it still runs."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        return bool(ready)
    finally:
        os.close(fd)
