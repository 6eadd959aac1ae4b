"""Whether this machine can take a child's network away, and the command that does it.

A child run under ``unshare --map-root-user --net`` gets a new user namespace (the code's
"root" is root only there, so it cannot raise the limits it was given back) and a new
network namespace with nothing in it, not even a loopback that is up: no address, local or
remote, is reachable. Where user namespaces are off, a process that is already root can still
take ``unshare --net`` alone. Each is probed once per process by running ``true`` under it; a
machine that allows neither (another OS, no ``unshare``, namespaces disabled) is told
apart with the reason, so the sandbox can refuse clearly instead of running with the network.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading

__all__ = ["network_isolation"]

_CANDIDATES: tuple[tuple[str, ...], ...] = (("--map-root-user", "--net"), ("--net",))

_lock = threading.Lock()
_found: dict[str | None, tuple[tuple[str, ...] | None, str]] = {}


def network_isolation() -> tuple[tuple[str, ...] | None, str]:
    """The command prefix that runs a child without network, or None and why not."""
    unshare = shutil.which("unshare")
    with _lock:
        known = _found.get(unshare)
        if known is None:
            known = _found[unshare] = _probe(unshare)
        return known


def _probe(unshare: str | None) -> tuple[tuple[str, ...] | None, str]:
    if not sys.platform.startswith("linux"):
        return None, f"network namespaces are Linux only (this is {sys.platform})"
    if unshare is None:
        return None, "the unshare command (util-linux) is not on PATH"
    reasons: list[str] = []
    for flags in _CANDIDATES:
        command = (unshare, *flags)
        try:
            done = subprocess.run([*command, "true"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            reasons.append(f"{' '.join(flags)}: {exc}")
            continue
        if done.returncode == 0:
            return command, ""
        error = done.stderr.decode("utf-8", errors="replace").strip()
        reasons.append(f"{' '.join(flags)}: {error or f'status {done.returncode}'}")
    return None, "unshare could not make a network namespace (" + "; ".join(reasons) + ")"
