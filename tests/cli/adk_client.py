"""Support for the google-adk compatibility tests: an in-process client and google-adk's models.

google-adk (the ``compat`` extra) is only needed to check answers against its own pydantic
models; a test that needs it skips with the reason when it is not installed.
"""

from __future__ import annotations

import contextlib
import importlib
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import unique_app, user_text, write_agents

__all__ = ["BASE", "adk", "agents_folder", "client_for", "run_body"]

BASE = "http://127.0.0.1:8000"


def adk(module: str) -> Any:
    """A google-adk module, or a skip when google-adk is not installed."""
    pytest.importorskip("google.adk", reason="google-adk is not installed (the compat extra)")
    return importlib.import_module(f"google.adk.{module}")


def agents_folder(prefix: str = "adk") -> tuple[Path, str]:
    """A fresh agents folder with one scripted app; (folder, app name)."""
    app = unique_app(prefix)
    root = write_agents(Path(tempfile.mkdtemp(prefix="adk_rx_compat_")), app)
    return root, app


@contextlib.asynccontextmanager
async def client_for(root: Path, **options: Any) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client on the app of ``root`` (in-memory sessions unless given)."""
    options.setdefault("session_service", InMemorySessionService())
    transport = httpx.ASGITransport(app=create_app(root, **options))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        yield http


def run_body(app: str, text: str, user: str = "u1", sid: str = "s1", **extra: Any) -> dict:
    """A ``/run`` body in google-adk's camelCase spelling (what its UI sends)."""
    return {
        "appName": app,
        "userId": user,
        "sessionId": sid,
        "newMessage": user_text(text),
        **extra,
    }
