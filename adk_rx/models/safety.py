"""The real-call switch: provider adapters refuse to reach a real model unless allowed.

A test suite that builds an agent on ``"gemini-2.5-flash"`` by mistake must fail fast, not
spend money or leak a prompt. So every provider adapter asks :func:`check_real_call` before
it opens a connection. Calls to a loopback host (``127.0.0.1``, ``::1``, ``localhost``) are
always allowed: that is a local fake server or a local model (Ollama, llama.cpp).

Anything else is decided by the first of these that is set:

1. ``allow_real_model_calls(True)`` (or ``False``) in the process;
2. the environment variable ``ADK_RX_ALLOW_REAL_MODEL_CALLS`` (``1``/``true``/``yes`` or
   ``0``/``false``/``no``);
3. otherwise real calls are allowed: an application just works.

adk_rx's own test suite turns the switch off for the whole session (``tests/conftest.py``),
so no test can reach a hosted model by accident; do the same in yours.
"""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from adk_rx.errors import ConfigurationError

__all__ = [
    "ENV_VAR",
    "allow_real_model_calls",
    "check_real_call",
    "is_loopback_url",
    "real_model_calls",
    "real_model_calls_allowed",
]

ENV_VAR = "ADK_RX_ALLOW_REAL_MODEL_CALLS"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

_lock = threading.Lock()
_allowed: bool | None = None  # None: not set in the process; the environment decides


def allow_real_model_calls(allowed: bool | None) -> None:
    """Allows (True) or refuses (False) calls to non-local model servers in this process.

    Args:
        allowed: the new setting; ``None`` hands the decision back to the environment variable.
    """
    global _allowed
    with _lock:
        _allowed = allowed


def real_model_calls_allowed() -> bool:
    """Whether a call to a non-local model server would go out now."""
    with _lock:
        allowed = _allowed
    if allowed is not None:
        return allowed
    raw = os.environ.get(ENV_VAR, "").strip().lower()
    if raw in _TRUE or not raw:
        return True
    if raw not in _FALSE:
        raise ConfigurationError(f"{ENV_VAR}={raw!r}: use 1/true/yes or 0/false/no")
    return False


@contextmanager
def real_model_calls(allowed: bool) -> Iterator[None]:
    """Sets the switch for the duration of a ``with`` block, then restores it."""
    global _allowed
    with _lock:
        previous, _allowed = _allowed, allowed
    try:
        yield
    finally:
        with _lock:
            _allowed = previous


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine (a loopback address or ``localhost``)."""
    host = urlsplit(url if "//" in url else f"//{url}").hostname
    if host is None:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_real_call(url: str | None, *, provider: str) -> None:
    """Raises unless a call to ``url`` may go out.

    Args:
        url: the base URL the adapter is about to call; ``None`` means the provider default,
            which is a real service.
        provider: the adapter's name, for the message.

    Raises:
        ConfigurationError: the URL is not local and real model calls are not allowed.
    """
    if url is not None and is_loopback_url(url):
        return
    if real_model_calls_allowed():
        return
    target = url or "its default endpoint"
    raise ConfigurationError(
        f"{provider} refused to call {target}: real model calls are disabled. Allow them with "
        f"adk_rx.models.safety.allow_real_model_calls(True) or {ENV_VAR}=1 "
        "(local servers on 127.0.0.1/localhost are always allowed)."
    )
