"""GeminiLlm.connect: a live session over google-genai's live client (``client.aio.live``).

One task on the runtime loop owns the WebSocket for the whole connection: it opens the
session (``client.aio.live.connect``), then reads server messages and turns them into
:class:`LlmResponse` (text and audio as partial chunks, the complete text at the end of each
model turn, transcriptions, ``interrupted``, ``turn_complete``, function calls). Sends are
queued in order and written by the same task's sender, so a content sent before the session
is open waits for it instead of failing. Disposing ``receive()`` (or ``close()``) cancels the
task, which closes the WebSocket.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from google.genai import types
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.errors import ModelError
from adk_rx.models.live import BaseLlmConnection
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse, model_content
from adk_rx.rx import from_async
from adk_rx.rx.schedulers import runtime_loop

if TYPE_CHECKING:
    from google import genai

__all__ = ["GeminiLiveConnection", "live_connect_config"]

_CLOSED = object()


def live_connect_config(request: LlmRequest) -> types.LiveConnectConfig:
    """The session config: the request's live settings, system instruction and tools."""
    base = request.live_connect_config or types.LiveConnectConfig()
    return base.model_copy(
        update={
            "system_instruction": request.config.system_instruction,
            "tools": request.config.tools,
        }
    )


class GeminiLiveConnection(BaseLlmConnection):
    """A Gemini Live session; built by ``GeminiLlm.connect``."""

    def __init__(self, client: genai.Client, model: str, request: LlmRequest) -> None:
        self._client = client
        self._model = model
        self._config = live_connect_config(request)
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._outgoing: asyncio.Queue[Any] | None = None
        self._pending: list[Any] = []
        self._closed = False
        self._stop: Any = None  # disposes the session task
        self._observer: abc.ObserverBase[LlmResponse] | None = None

    # -- sending ------------------------------------------------------------------------------
    def send_history(self, contents: Sequence[types.Content]) -> Observable[None]:
        """Sends the history as one client content that does not complete the turn."""
        return self._send(("history", list(contents)))

    def send_content(self, content: types.Content) -> Observable[None]:
        """A user turn, or (when it carries function responses) a tool response."""
        return self._send(("content", content))

    def send_realtime(self, blob: types.Blob) -> Observable[None]:
        """An audio frame (``audio/*``) or a video frame (anything else)."""
        return self._send(("blob", blob))

    def send_activity_start(self) -> Observable[None]:
        """The user started speaking."""
        return self._send(("activity_start", None))

    def send_activity_end(self) -> Observable[None]:
        """The user stopped speaking."""
        return self._send(("activity_end", None))

    def _send(self, item: tuple[str, Any]) -> Observable[None]:
        def subscribe(observer: abc.ObserverBase[None], _: Any = None) -> abc.DisposableBase:
            entry = [item, observer]
            with self._lock:
                if self._closed:
                    observer.on_error(ModelError("the Gemini Live connection is closed"))
                    return Disposable()
                loop, queue = self._loop, self._outgoing
                if queue is None:
                    self._pending.append(entry)
            if queue is not None and loop is not None:
                loop.call_soon_threadsafe(queue.put_nowait, entry)
            return Disposable()

        return Observable(subscribe)

    # -- receiving ----------------------------------------------------------------------------
    def receive(self) -> Observable[LlmResponse]:
        """Opens the session on subscription; its responses until the connection ends."""

        def subscribe(
            observer: abc.ObserverBase[LlmResponse], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            with self._lock:
                self._loop = runtime_loop()
                self._observer = observer
            self._stop = from_async(self._session).subscribe(
                on_next=observer.on_next,
                on_error=lambda error: self._end(error),
                on_completed=lambda: self._end(None),
                scheduler=scheduler,
            )
            return Disposable(lambda: _void(self._shutdown()))  # disposed: nothing more is said

        return Observable(subscribe)

    def close(self) -> None:
        """Cancels the session task (the WebSocket closes); ``receive()`` completes."""
        observer = self._shutdown()
        if observer is not None:
            observer.on_completed()

    def _end(self, error: Exception | None) -> None:
        """The session ended by itself (the server closed, or it failed)."""
        observer = self._shutdown()
        if observer is None:
            return
        if error is None:
            observer.on_completed()
        else:
            observer.on_error(error)

    def _shutdown(self) -> abc.ObserverBase[LlmResponse] | None:
        with self._lock:
            if self._closed:
                return None
            self._closed = True
            pending, self._pending = self._pending, []
            observer, self._observer = self._observer, None
        for _, waiting in pending:
            waiting.on_error(ModelError("the Gemini Live connection closed before sending"))
        if self._stop is not None:
            self._stop.dispose()
        return observer

    async def _session(self) -> AsyncIterator[LlmResponse]:
        try:
            async with self._client.aio.live.connect(
                model=self._model, config=self._config
            ) as session:
                outgoing: asyncio.Queue[Any] = asyncio.Queue()
                with self._lock:
                    for entry in self._pending:
                        outgoing.put_nowait(entry)
                    self._pending = []
                    self._outgoing = outgoing
                sender = asyncio.create_task(_sender(session, outgoing))
                try:
                    async for response in _responses(session):
                        yield response
                finally:
                    sender.cancel()
        except asyncio.CancelledError:
            raise
        except ModelError:
            raise
        except Exception as exc:
            raise ModelError(f"Gemini Live session failed: {type(exc).__name__}: {exc}") from exc


async def _sender(session: Any, outgoing: asyncio.Queue[Any]) -> None:
    while True:
        (kind, payload), observer = await outgoing.get()
        try:
            await _write(session, kind, payload)
        except Exception as exc:
            observer.on_error(ModelError(f"Gemini Live send failed: {exc}"))
            continue
        observer.on_completed()


async def _write(session: Any, kind: str, payload: Any) -> None:
    if kind == "history":
        if payload:
            await session.send_client_content(turns=payload, turn_complete=False)
    elif kind == "content":
        responses = [p.function_response for p in payload.parts or [] if p.function_response]
        if responses:
            await session.send_tool_response(function_responses=responses)
        else:
            await session.send_client_content(turns=payload, turn_complete=True)
    elif kind == "blob":
        if (payload.mime_type or "").startswith("audio/"):
            await session.send_realtime_input(audio=payload)
        else:
            await session.send_realtime_input(video=payload)
    elif kind == "activity_start":
        await session.send_realtime_input(activity_start=types.ActivityStart())
    elif kind == "activity_end":
        await session.send_realtime_input(activity_end=types.ActivityEnd())


async def _responses(session: Any) -> AsyncIterator[LlmResponse]:
    """Server messages as responses, until the server closes the session."""
    text: list[str] = []
    while True:
        received = False
        async for message in session.receive():  # one model turn, then it returns
            received = True
            for response in _convert(message, text):
                yield response
        if not received:
            return  # the WebSocket closed


def _convert(message: types.LiveServerMessage, text: list[str]) -> list[LlmResponse]:
    out: list[LlmResponse] = []
    content = message.server_content
    if content is not None:
        if content.input_transcription is not None:
            out.append(LlmResponse(input_transcription=content.input_transcription, partial=True))
        if content.output_transcription is not None:
            out.append(LlmResponse(output_transcription=content.output_transcription, partial=True))
        turn = content.model_turn
        if turn is not None and turn.parts:
            text.extend(p.text for p in turn.parts if p.text and not p.thought)
            out.append(LlmResponse(content=model_content(*turn.parts), partial=True))
        if content.interrupted:
            text.clear()  # the rest of the answer was never said
            out.append(LlmResponse(interrupted=True))
        if content.turn_complete:
            if text:
                out.append(LlmResponse.text("".join(text)))
                text.clear()
            out.append(LlmResponse(turn_complete=True))
    if message.tool_call is not None and message.tool_call.function_calls:
        parts = [types.Part(function_call=call) for call in message.tool_call.function_calls]
        out.append(LlmResponse(content=model_content(*parts)))
    return out


def _void(_: Any) -> None:
    """Drops a value (a disposable's action returns nothing)."""
