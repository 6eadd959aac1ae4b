"""Fixtures for the server tests: one agents folder per module, an app factory, a client."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import unique_app, write_agents

BASE = "http://127.0.0.1:8000"


@pytest.fixture(scope="module")
def agents() -> tuple[Path, str]:
    app = unique_app("srv")
    root = write_agents(Path(tempfile.mkdtemp(prefix="adk_rx_server_")), app)
    return root, app


@pytest.fixture
def app_name(agents: tuple[Path, str]) -> str:
    return agents[1]


@pytest.fixture
def make_app(agents: tuple[Path, str]) -> Callable[..., Any]:
    def make(**options: Any) -> Any:
        options.setdefault("session_service", InMemorySessionService())
        return create_app(agents[0], **options)

    return make


@pytest_asyncio.fixture
async def client(make_app: Callable[..., Any]) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=make_app())
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        yield http
