"""``adk-rx api-server`` / ``adk-rx web``: the HTTP server over an agents folder.

ADK-compatible routes (``/list-apps``, sessions, ``/run``, ``/run_sse``) plus server-owned
invocations that a client can leave and reattach to (``.../invocations``), Host / Origin
checks and optional bearer tokens. :func:`create_app` builds the Starlette app (tests drive
it through httpx); :func:`serve` runs it on uvicorn.

The names are imported on first use, so ``adk-rx`` can build its option parser (which
reads :mod:`.limits`) without loading the web stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app, serve
    from .limits import Limits

__all__ = ["Limits", "create_app", "serve"]

_HOMES = {"Limits": ".limits", "create_app": ".app", "serve": ".app"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
