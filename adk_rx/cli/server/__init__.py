"""``adk-rx api-server`` / ``adk-rx web``: the HTTP server over an agents folder.

ADK-compatible routes (``/list-apps``, sessions, ``/run``, ``/run_sse``) plus server-owned
invocations that a client can leave and reattach to (``.../invocations``), Host / Origin
checks and optional bearer tokens. :func:`create_app` builds the Starlette app (tests drive
it through httpx); :func:`serve` runs it on uvicorn.
"""

from .app import create_app, serve
from .registry import Limits

__all__ = ["Limits", "create_app", "serve"]
