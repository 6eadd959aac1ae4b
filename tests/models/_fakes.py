"""Fakes for the model tests: a scripted provider server on 127.0.0.1 and a virtual clock.

The server is a plain ASGI app under uvicorn in a thread, listening on a socket bound before
the thread starts (so no wait for start-up). Each request gets the next scripted reply; every
request is recorded. Replies can stream SSE frames, cut the connection in the middle, or
hang until the client goes away (which sets ``server.disconnected``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import socket
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from reactivex import Observable
from reactivex.testing import TestScheduler

from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.resilience import RetryNotice
from adk_rx.rx import runtime_loop

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


@dataclass
class Exchange:
    """One request as the server saw it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Reply = Callable[["FakeServer", Exchange, Receive, Send], Awaitable[None]]


class StreamCut(Exception):
    """Raised inside a reply to drop the connection in the middle of a body."""


@dataclass
class FakeServer:
    """The scripted provider. ``push`` replies, call the adapter, inspect ``exchanges``."""

    url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    exchanges: list[Exchange] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    first_chunk_sent: threading.Event = field(default_factory=threading.Event)

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        exchange = Exchange(
            method=scope["method"],
            path=scope["path"],
            query=scope["query_string"].decode(),
            headers={k.decode().lower(): v.decode() for k, v in scope["headers"]},
            body=body,
        )
        self.exchanges.append(exchange)
        reply = self.replies.popleft() if self.replies else json_reply({"error": "unscripted"}, 599)
        await reply(self, exchange, receive, send)


@contextlib.contextmanager
def serving_fake() -> Iterator[FakeServer]:
    """A fresh scripted server on 127.0.0.1:<free port> (uvicorn in a thread) until the
    block ends. The socket is bound before the thread starts, so there is no wait."""
    with serving(FakeServer()) as fake:
        yield fake


App = Any  # an ASGI app with a ``url`` attribute


@contextlib.contextmanager
def serving(fake: App) -> Iterator[App]:
    """Serves the ASGI app ``fake`` on 127.0.0.1:<free port> until the block ends; sets its
    ``url``."""
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


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A complete JSON answer."""
    return raw_reply(
        json.dumps(body), status, {"content-type": "application/json", **(headers or {})}
    )


def raw_reply(text: str, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    """A complete answer with any body (e.g. malformed JSON)."""

    async def reply(server: FakeServer, _: Exchange, __: Receive, send: Send) -> None:
        data = text.encode()
        all_headers = {"content-length": str(len(data)), **(headers or {})}
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(k.encode(), v.encode()) for k, v in all_headers.items()],
            }
        )
        await send({"type": "http.response.body", "body": data})

    return reply


def unanswered_tool_calls(body: Any) -> list[str]:
    """The ids of assistant ``tool_calls`` that no ``tool`` message right after answers."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    missing: list[str] = []
    for i, message in enumerate(messages):
        wanted = [c.get("id") for c in message.get("tool_calls") or []]
        if message.get("role") != "assistant" or not wanted:
            continue
        answered: set[str] = set()
        for later in messages[i + 1 :]:
            if later.get("role") != "tool":
                break
            answered.add(later.get("tool_call_id"))
        missing += [call_id for call_id in wanted if call_id not in answered]
    return missing


def orphan_tool_results(body: Any) -> list[str]:
    """The ``tool_call_id`` of each ``tool`` message that answers no call of the assistant
    message right before it (and the ``tool`` messages between them)."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    orphans: list[str] = []
    asked: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in asked:
                orphans.append(str(message.get("tool_call_id")))
            continue
        asked = {c.get("id") for c in message.get("tool_calls") or []}
    return orphans


def strict_history(reply: Reply) -> Reply:
    """``reply``, unless the request has an unanswered tool call or a tool result that
    answers no call: then a 400, as OpenAI does."""

    async def checked(server: FakeServer, exchange: Exchange, receive: Receive, send: Send) -> None:
        missing = unanswered_tool_calls(exchange.json())
        orphans = orphan_tool_results(exchange.json())
        if not missing and not orphans:
            await reply(server, exchange, receive, send)
            return
        message = (
            "An assistant message with 'tool_calls' must be followed by tool "
            f"messages responding to each 'tool_call_id'. Missing: {', '.join(missing)}"
            if missing
            else "Invalid parameter: messages with role 'tool' must be a response to a "
            f"preceding message with 'tool_calls'. Unanswerable: {', '.join(orphans)}"
        )
        error = {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": None,
        }
        await json_reply({"error": error}, 400)(server, exchange, receive, send)

    return checked


def sse_reply(frames: list[Any], *, cut: bool = False, hang: bool = False) -> Reply:
    """An SSE stream: each frame is a JSON value (sent as ``data: <json>``) or a raw string.

    Args:
        frames: what to send, in order.
        cut: drop the connection after the frames, without ending the body.
        hang: after the frames, wait until the client disconnects (sets ``disconnected``).
    """

    async def reply(server: FakeServer, _: Exchange, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for frame in frames:
            text = frame if isinstance(frame, str) else f"data: {json.dumps(frame)}\n\n"
            await send({"type": "http.response.body", "body": text.encode(), "more_body": True})
            server.first_chunk_sent.set()
        if cut:
            raise StreamCut("the test server drops the connection mid-stream")
        if hang:
            while (await receive())["type"] != "http.disconnect":
                pass
            server.disconnected.set()
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return reply


class VirtualClock:
    """Drives retry timers in virtual time: ``TestScheduler`` plus the notices of ``on_retry``.

    Pass ``clock.scheduler`` and ``clock.on_retry`` to a model, then ``clock.run(observable)``:
    each time a retry is scheduled, the clock advances by exactly its delay.
    """

    def __init__(self) -> None:
        self.scheduler = TestScheduler()
        self.notices: list[RetryNotice] = []
        self._queue: queue.Queue[RetryNotice | None] = queue.Queue()

    def on_retry(self, notice: RetryNotice) -> None:
        self.notices.append(notice)
        self._queue.put(notice)

    @property
    def now(self) -> float:
        """Virtual seconds since the start."""
        return self.scheduler.clock

    def run(self, observable: Observable[LlmResponse]) -> list[LlmResponse]:
        """Subscribes, advances virtual time through every retry, returns the items or raises."""
        items: list[LlmResponse] = []
        errors: list[Exception] = []

        def finish(error: Exception | None = None) -> None:
            if error is not None:
                errors.append(error)
            self._queue.put(None)

        observable.subscribe(items.append, finish, finish)
        while (notice := self._queue.get(timeout=20)) is not None:
            self.scheduler.advance_by(notice.delay)
        if errors:
            raise errors[0]
        return items


def _is_litellm_worker(task: asyncio.Task[Any]) -> bool:
    # LiteLLM starts one logging worker per event loop at its first call and keeps it for the
    # life of the loop, by design: not a task a call left behind.
    return "LoggingWorker" in repr(task.get_coro())


def unfinished_tasks(timeout: float = 5.0) -> set[asyncio.Task[Any]]:
    """Tasks still running on adk_rx's background loop once the others had ``timeout`` to end
    (LiteLLM's logging worker aside)."""

    async def leftover() -> set[asyncio.Task[Any]]:
        others = asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]
        others = {t for t in others if not _is_litellm_worker(t)}
        if others:
            await asyncio.wait(others, timeout=timeout)
        return {t for t in others if not t.done()}

    return asyncio.run_coroutine_threadsafe(leftover(), runtime_loop()).result(timeout + 5)
