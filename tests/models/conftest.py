"""Fixtures for the model tests: a scripted provider server, and no real model calls."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest
import uvicorn

from adk_rx.models import safety

from ._fakes import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """A fresh scripted server on 127.0.0.1:<free port>, stopped after the test."""
    fake = FakeServer()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    fake.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(fake, log_level="critical", lifespan="off", timeout_graceful_shutdown=1)
    uv = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(uv.serve(sockets=[sock])), name="fake-provider", daemon=True
    )
    thread.start()
    try:
        yield fake
    finally:
        uv.should_exit = True
        uv.force_exit = True
        thread.join(timeout=10)
        sock.close()


@pytest.fixture(autouse=True)
def _refuse_real_calls() -> Iterator[None]:
    """No test here may reach a real provider, whatever the environment says."""
    with safety.real_model_calls(False):
        yield
