"""A Gemini Live protocol server on 127.0.0.1 (TLS, WebSocket) for GeminiLlm.connect tests.

It speaks the Live API's JSON messages: ``setup`` in, ``setupComplete`` out; then
``clientContent`` / ``realtimeInput`` / ``toolResponse`` in (recorded, snake_case or camelCase
keys), and for each client content that completes a turn, and each tool response, the next
scripted list of server messages out (``serverContent`` with ``modelTurn``, ``interrupted``,
``turnComplete``, transcriptions, or ``toolCall``). The test's client trusts the server's
certificate through a throwaway CA (trustme).
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import trustme
from websockets.asyncio.server import ServerConnection, serve


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def snake_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_snake(k): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


@dataclass
class LiveServer:
    """Push scripted replies with ``script.append([...messages])``; read ``received``."""

    url: str = ""
    client_ssl: ssl.SSLContext | None = None
    script: deque[list[dict[str, Any]]] = field(default_factory=deque)
    received: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    connections: int = 0
    closed: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Future[None] | None = None
    _thread: threading.Thread | None = None

    async def _handle(self, ws: ServerConnection) -> None:
        self.connections += 1
        self.paths.append(ws.request.path if ws.request else "")
        try:
            async for raw in ws:
                message = snake_keys(json.loads(raw))
                with self.arrived:
                    self.received.append(message)
                    self.arrived.notify_all()
                if "setup" in message:
                    await ws.send(json.dumps({"setupComplete": {}}))
                elif self._answers(message) and self.script:
                    for reply in self.script.popleft():
                        await ws.send(json.dumps(reply))
        except Exception:
            pass
        finally:
            self.closed.set()

    @staticmethod
    def _answers(message: dict[str, Any]) -> bool:
        content = message.get("client_content")
        if content is not None:
            return bool(content.get("turn_complete"))
        return "tool_response" in message

    def start(self) -> LiveServer:
        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1")
        server_ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        cert.configure_cert(server_ssl)
        self.client_ssl = ssl.create_default_context()
        ca.configure_trust(self.client_ssl)
        ready = threading.Event()

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = self._loop.create_future()
            async with serve(self._handle, "127.0.0.1", 0, ssl=server_ssl) as server:
                port = next(iter(server.sockets)).getsockname()[1]
                self.url = f"https://127.0.0.1:{port}"
                ready.set()
                await self._stop

        self._thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
        self._thread.start()
        assert ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set_result, None)
        if self._thread is not None:
            self._thread.join(10)

    def wait_for(self, kind: str, timeout: float = 10) -> bool:
        """Waits until a message of ``kind`` (e.g. ``"client_content"``) arrived."""
        with self.arrived:
            return self.arrived.wait_for(lambda: bool(self.of_kind(kind)), timeout)

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [m[kind] for m in self.received if kind in m]
