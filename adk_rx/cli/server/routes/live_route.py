"""``GET /run_live`` (WebSocket): a live session, as google-adk serves it.

``/run_live?app_name=A&user_id=U&session_id=S[&modalities=TEXT]``: LiveRequest JSON frames in
(``{"content": ...}``, ``{"blob": ...}``, ``{"activity_start": {}}``, ``{"close": true}``),
Event JSON frames out. The Host, Origin and token checks are the same as for every route
(a browser, which cannot set headers on a WebSocket, may pass its token as ``?access_token=``).
The session must exist and be the caller's: a missing app or session, or another user's,
answers the handshake with 404 (the HTTP routes' answer) and is never opened.

Each frame is checked as a request body is, before anything of it is stored, and a frame the
route refuses ends the socket with a close code and a short reason:

* **1009** (message too big): larger than ``Limits.max_body_bytes``. uvicorn gets the same
  bound (``ws_max_size``), so a larger frame is cut off before it is buffered whole;
* **1003** (unsupported data): a binary frame, text that is not standard JSON or is nested
  too deep, JSON that is not a live request, or a content the server refuses (more parts than
  ``Limits.max_parts``, none, or a ``function_call`` part);
* **1000** after ``Limits.run_timeout`` seconds in which no frame passed either way (a client
  that connects and goes quiet does not hold its session forever).

However the socket ends (a refusal, ``{"close": true}``, the client vanishing), the live run
ends with it the way a disposal ends a run: the model connection closes and the session records
where it stopped. The socket is closed only once the session is released, so a client that
sees the close may start its next ``/run`` or live connection on the session at once. Frames
after ``{"close": true}`` are ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from adk_rx.errors import AdkRxError, ConfigurationError
from adk_rx.live.queue import LiveRequest, LiveRequestQueue
from adk_rx.loading.loader import AgentLoadError
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.rx._engine.awaitable import awaitable

from ..edge.body_reader import decode_json
from ..edge.validation import check_message
from ..errors import BodyTooLargeError, RequestRejectedError
from ..limits import Limits
from ..runners import AppNotFoundError
from ..shared import Server

if TYPE_CHECKING:
    from adk_rx.runner import Runner

__all__ = ["parse_frame", "routes"]

NORMAL = 1000
UNSUPPORTED_DATA = 1003
POLICY_VIOLATION = 1008
MESSAGE_TOO_BIG = 1009
_MAX_REASON_BYTES = 123  # the WebSocket protocol's bound on a close reason
_RELEASE_WAIT = 10.0  # seconds a closing socket waits for its run to release the session
_INLINE_CHARS = 64 * 1024  # a larger frame is parsed on a worker thread, off the event loop
_DONE = object()


@dataclass(frozen=True, slots=True)
class _Close:
    """How the socket ends: a close frame to send, or nothing (the client is gone)."""

    code: int
    reason: str = ""


_GONE = _Close(1006)  # the client went away: nothing to send


async def run_live(ws: WebSocket) -> None:
    server: Server = ws.app.state.server
    params = ws.query_params
    app_name = params.get("app_name", "")
    user_id = params.get("user_id", "")
    session_id = params.get("session_id", "")
    caller = ws.scope.get("state", {}).get("user")
    if not (app_name and user_id and session_id):
        await ws.close(POLICY_VIOLATION, "app_name, user_id and session_id are required")
        return
    if caller is not None and caller != user_id:
        await _not_found(ws, "session not found")
        return
    try:
        runner = await server.runners.get(app_name)
        session = await awaitable(
            runner.session_service.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
        )
    except AppNotFoundError as exc:
        await _not_found(ws, str(exc))
        return
    except (AgentLoadError, AdkRxError) as exc:
        await ws.close(POLICY_VIOLATION, _reason(str(exc)))
        return
    if session is None:
        await _not_found(ws, "session not found")
        return
    await ws.accept()
    live = _LiveSocket(ws, runner, server.limits, user_id, session_id)
    await live.serve(params.getlist("modalities") or None)


def parse_frame(text: str, limits: Limits) -> LiveRequest:
    """A text frame as a live request, checked as a request body is.

    Raises:
        BodyTooLargeError: larger than ``limits.max_body_bytes``.
        ConfigurationError: not standard JSON, not a live request, or a content the server
            refuses (see :func:`~adk_rx.cli.server.edge.validation.check_message`).
    """
    limit = limits.max_body_bytes
    if len(text) > limit or len(text.encode()) > limit:
        raise BodyTooLargeError(f"the frame is larger than {limit} bytes (the server's limit)")
    data = decode_json(text, limits)
    content = data.get("content") if isinstance(data, dict) else None
    parts = content.get("parts") if isinstance(content, dict) else None
    if isinstance(parts, list) and len(parts) > limits.max_parts:
        # Counted before pydantic builds a Part of each (690,000 empty parts: 11 s of CPU).
        raise RequestRejectedError(
            f"the content has {len(parts)} parts, more than the server's limit ({limits.max_parts})"
        )
    request = LiveRequest.from_dict(data)
    if request.content is not None:
        if not request.content.parts:
            raise RequestRejectedError("the content has no parts")
        check_message(request.content, limits)
    return request


class _LiveSocket:
    """One accepted socket: a reader, a writer and an idle watch, around one live run."""

    def __init__(
        self, ws: WebSocket, runner: Runner, limits: Limits, user_id: str, session_id: str
    ) -> None:
        self.ws = ws
        self.runner = runner
        self.limits = limits
        self.user_id = user_id
        self.session_id = session_id
        self.loop = asyncio.get_running_loop()
        self.queue = LiveRequestQueue()
        self.outgoing: asyncio.Queue[Any] = asyncio.Queue()
        self.released = asyncio.Event()
        self.last_frame = self.loop.time()

    async def serve(self, modalities: list[str] | None) -> None:
        """Runs the live session until the socket or the run ends, then closes both."""
        ids = {"user_id": self.user_id, "session_id": self.session_id}
        # Queued behind another run on the session, this socket's close does not wait for it.
        first = not self.runner.is_busy(**ids)
        config = RunConfig(streaming_mode=StreamingMode.BIDI, response_modalities=modalities)
        subscription = self.runner.run_live(
            **ids, live_request_queue=self.queue, run_config=config
        ).subscribe(
            on_next=lambda event: self._put(event.to_json()),
            on_error=lambda error: self._put({"error": f"{type(error).__name__}: {error}"}),
            on_completed=lambda: self._put(_DONE),
        )
        if first:  # queued right behind this run: completes once it released the session
            self.runner.when_idle(**ids).subscribe(on_completed=self._on_released)
        tasks = [asyncio.create_task(work) for work in (self._read(), self._write(), self._idle())]
        try:
            finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            close = finished.pop().result()
        finally:
            for task in tasks:
                task.cancel()
            subscription.dispose()  # a run still going is cancelled; the session stays valid
        if close is _GONE:
            return
        if first:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.released.wait(), _RELEASE_WAIT)
        with contextlib.suppress(Exception):  # the client may have gone meanwhile
            await self.ws.close(close.code, _reason(close.reason))

    def _on_released(self) -> None:
        self.loop.call_soon_threadsafe(self.released.set)

    def _put(self, item: Any) -> None:
        self.loop.call_soon_threadsafe(self.outgoing.put_nowait, item)

    async def _read(self) -> _Close:
        closing = False
        while True:
            message = await self.ws.receive()
            if message["type"] == "websocket.disconnect":
                return _GONE
            self.last_frame = self.loop.time()
            if closing:
                continue  # the session is ending; what comes after close is not read
            text = message.get("text")
            if text is None:
                return _Close(UNSUPPORTED_DATA, "binary frames are not read; send JSON text")
            try:
                if len(text) > _INLINE_CHARS:  # parsing it would hold up every other request
                    request = await asyncio.to_thread(parse_frame, text, self.limits)
                else:
                    request = parse_frame(text, self.limits)
            except BodyTooLargeError as exc:
                return _Close(MESSAGE_TOO_BIG, str(exc))
            except ConfigurationError as exc:
                return _Close(UNSUPPORTED_DATA, str(exc))
            closing = request.close
            self.queue.send(request)

    async def _write(self) -> _Close:
        try:
            while True:
                item = await self.outgoing.get()
                if item is _DONE:
                    return _Close(NORMAL)
                self.last_frame = self.loop.time()
                if isinstance(item, dict):  # the run failed: say why, then close
                    await self.ws.send_json(item)
                    return _Close(NORMAL)
                await self.ws.send_text(item)
        except (WebSocketDisconnect, RuntimeError):
            return _GONE  # the client went away while an answer was on its way

    async def _idle(self) -> _Close:
        timeout = self.limits.run_timeout
        if timeout is None:  # no deadline: never resolves; the other tasks end the socket
            return await self.loop.create_future()
        while (left := self.last_frame + timeout - self.loop.time()) > 0:
            await asyncio.sleep(left)
        return _Close(NORMAL, f"no frame either way for {timeout:g} s; the live session ended")


async def _not_found(ws: WebSocket, detail: str) -> None:
    """Refuses the handshake with 404, as the HTTP routes answer (403 where the server
    cannot send an HTTP answer to a WebSocket handshake)."""
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        await ws.send_denial_response(JSONResponse({"detail": detail}, status_code=404))
    else:
        await ws.close(POLICY_VIOLATION, _reason(detail))


def _reason(text: str) -> str:
    """``text`` cut to fit a close frame (at most 123 bytes of UTF-8)."""
    return text.encode()[:_MAX_REASON_BYTES].decode(errors="ignore")


routes = [WebSocketRoute("/run_live", run_live)]
