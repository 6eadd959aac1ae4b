"""``adk-rx api-server`` / ``adk-rx web``: the HTTP server over an agents folder.

ADK-compatible routes (``/list-apps``, sessions, ``/run``, ``/run_sse``, ``/run_live``) plus
server-owned invocations that a client can leave and reattach to (``.../invocations``), Host
and Origin checks and optional bearer tokens. :func:`create_app` builds the Starlette app
(tests drive it through httpx); :func:`serve` runs it on uvicorn.

One ``POST /run_sse``, followed through the modules and packages of the server:

1. ``app.py``: :func:`create_app` assembled the app once: the session service wrapped so it
   reports stored events (``invocations/tap.py``), one Runner per app of the folder built on
   first use (``runners.py``, over :mod:`adk_rx.loading`), the parts every route reads
   (``shared.py``), the bounds (``limits.py``) and the route table.
2. ``edge/``: the Host, Origin and token checks in front of every route; the route reads its
   body bounded, in ADK's shapes, and checks every id and field before anything is stored.
3. ``routes/``: ``run_routes.py`` finds the session, holds its turn across server processes
   (``cluster/``, with ``--broker-url``) and starts the run.
4. ``invocations/``: the run is a server-owned invocation; its events enter a bounded log
   that every client reads as server-sent events at its own pace, and a finished log stays
   readable for reattaching.
5. ``errors.py``: what the request may end in instead, each error with its HTTP status.

Beside them: ``traces/`` (the trace views of the dev pages), ``api/`` (``/openapi.json``
and ``/docs``, generated from the route table and the models of the bodies) and, with
``--a2a``, ``a2a/``: every app over A2A at ``/a2a/{app_name}``, each task one of the
server-owned invocations above, past the same edge.

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
