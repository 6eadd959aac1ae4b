"""What the A2A tests share: an ASGI app served on a loopback port in a thread, runs read
whole, the helper agent built in process."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn
from reactivex import operators as ops

from adk_rx import Event, Runner
from tests.cli.server_process import free_port

__all__ = ["events_of", "served"]


@contextlib.contextmanager
def served(make_app: Any) -> Iterator[str]:
    """Serves ``make_app(port)`` with uvicorn on 127.0.0.1 until the block ends; its URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(make_app(port), host="127.0.0.1", port=port, log_level="warning")
    )
    started = threading.Event()
    thread = threading.Thread(target=server.run, name="a2a-test-server", daemon=True)
    original = server.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        started.set()

    server.startup = startup  # type: ignore[method-assign]
    thread.start()
    assert started.wait(30), "the A2A test server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


def events_of(runner: Runner, session_id: str, text: str, **kwargs: Any) -> list[Event]:
    """Every event of one turn (partial ones included)."""
    return (
        runner.run_async(user_id="user", session_id=session_id, new_message=text, **kwargs)
        .pipe(ops.to_list())
        .run()
    )
