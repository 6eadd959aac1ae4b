"""``GET /run_live`` (WebSocket): a live session, as google-adk serves it.

``/run_live?app_name=A&user_id=U&session_id=S[&modalities=TEXT]``: LiveRequest JSON frames in
(``{"content": ...}``, ``{"blob": ...}``, ``{"activity_start": {}}``, ``{"close": true}``),
Event JSON frames out. The Host, Origin and token checks are the same as for every route
(a browser, which cannot set headers on a WebSocket, may pass its token as ``?access_token=``).
The session must exist. A client that disconnects ends the live session the way a disposal
does: the model connection closes and the session records where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from adk_rx.cli.loader import AgentLoadError
from adk_rx.errors import AdkRxError
from adk_rx.live.queue import LiveRequest, LiveRequestQueue
from adk_rx.run_config import RunConfig, StreamingMode
from adk_rx.rx.awaitable import awaitable

from .runners import AppNotFoundError
from .shared import Server

__all__ = ["routes"]

POLICY_VIOLATION = 1008
UNSUPPORTED_DATA = 1003
_DONE = object()


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
        await ws.close(POLICY_VIOLATION, "session not found")
        return
    try:
        runner = await server.runners.get(app_name)
        session = await awaitable(
            runner.session_service.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
        )
    except (AppNotFoundError, AgentLoadError, AdkRxError) as exc:
        await ws.close(POLICY_VIOLATION, str(exc)[:120])
        return
    if session is None:
        await ws.close(POLICY_VIOLATION, "session not found")
        return
    await ws.accept()
    modalities = params.getlist("modalities") or None
    queue = LiveRequestQueue()
    outgoing: asyncio.Queue[Any] = asyncio.Queue()
    loop = asyncio.get_running_loop()

    def put(item: Any) -> None:
        loop.call_soon_threadsafe(outgoing.put_nowait, item)

    subscription = runner.run_live(
        user_id=user_id,
        session_id=session_id,
        live_request_queue=queue,
        run_config=RunConfig(streaming_mode=StreamingMode.BIDI, response_modalities=modalities),
    ).subscribe(
        on_next=lambda event: put(event.to_json()),
        on_error=lambda error: put({"error": f"{type(error).__name__}: {error}"}),
        on_completed=lambda: put(_DONE),
    )
    reader = asyncio.create_task(_read(ws, queue))
    try:
        while True:
            item = await outgoing.get()
            if item is _DONE:
                break
            if isinstance(item, dict):
                await ws.send_json(item)
                break
            await ws.send_text(item)
        with contextlib.suppress(Exception):
            await ws.close()
    except (WebSocketDisconnect, RuntimeError):
        pass  # the client went away while an answer was on its way
    finally:
        reader.cancel()
        subscription.dispose()  # a run still going is cancelled; the session stays valid


async def _read(ws: WebSocket, queue: LiveRequestQueue) -> None:
    try:
        while True:
            text = await ws.receive_text()
            try:
                request = LiveRequest.from_json(text)
            except AdkRxError as exc:
                await ws.close(UNSUPPORTED_DATA, str(exc)[:120])
                return
            if queue.is_closed:
                return
            queue.send(request)
    except WebSocketDisconnect:
        if not queue.is_closed:
            queue.close()  # ends the live session; the writer sees the stream complete


routes = [WebSocketRoute("/run_live", run_live)]
