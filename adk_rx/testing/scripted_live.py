"""ScriptedLiveLlm: a live model that plays back a script, one item per content it receives.

Script grammar (``turns``): each ``send_content`` on the connection (a user turn, or the
function responses of the previous item's calls) takes the next item:

- a ``str``: a complete text answer, then ``turn_complete``;
- an ``LlmResponse``: emitted as given (``interrupted=True``, transcriptions, function calls,
  audio ...), then ``turn_complete`` unless it completes, interrupts or calls functions;
- a list: one streamed answer, emitted in order (``str`` items are partial text chunks; the
  complete text follows when every item was partial), then ``turn_complete`` as above;
- an exception: ``receive()`` errors with it;
- a callable ``(content) -> item``: computed when the content arrives.

Running out of items errors ``receive()``. Realtime blobs and the history are recorded, never
answered. ``.received`` lists every content and blob the connections got, in order;
``.requests`` the request of each ``connect``; ``.history`` what ``send_history`` sent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from google.genai import types
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.errors import ConfigurationError, ModelError
from adk_rx.models.base import BaseLlm
from adk_rx.models.live import BaseLlmConnection
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.rx._engine import sync
from adk_rx.testing.scripted import _stream

__all__ = ["ScriptedLiveConnection", "ScriptedLiveLlm"]


class ScriptedLiveLlm(BaseLlm):
    """A live model for tests; see the module docstring for the script grammar.

    Args:
        turns: the script, one item per content received.
        model: the model name it reports.
    """

    def __init__(self, turns: Iterable[Any], model: str = "scripted-live") -> None:
        super().__init__(model=model)
        self._turns = list(turns)
        self._lock = threading.Lock()
        self.requests: list[LlmRequest] = []
        self.history: list[list[types.Content]] = []
        self.received: list[types.Content | types.Blob] = []
        self.connections: list[ScriptedLiveConnection] = []

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Not supported: a ScriptedLiveLlm only answers live connections."""
        return Observable(
            lambda observer, _=None: (
                observer.on_error(
                    ConfigurationError("ScriptedLiveLlm answers live connections only (run_live)")
                )
                or Disposable()
            )
        )

    def connect(self, llm_request: LlmRequest) -> ScriptedLiveConnection:
        """Opens a scripted connection (recorded in ``requests`` and ``connections``)."""
        connection = ScriptedLiveConnection(self)
        with self._lock:
            self.requests.append(llm_request)
            self.connections.append(connection)
        return connection

    @property
    def remaining(self) -> int:
        """Script items not used yet."""
        with self._lock:
            return len(self._turns)

    def _next(self, content: types.Content) -> Any:
        with self._lock:
            self.received.append(content)
            if not self._turns:
                return ModelError(f"ScriptedLiveLlm script exhausted: no item left for {content!r}")
            item = self._turns.pop(0)
        return item(content) if callable(item) else item

    def _record(self, blob: types.Blob) -> None:
        with self._lock:
            self.received.append(blob)


class ScriptedLiveConnection(BaseLlmConnection):
    """One connection of a :class:`ScriptedLiveLlm`; answers on the thread that sends."""

    def __init__(self, llm: ScriptedLiveLlm) -> None:
        self._llm = llm
        self._lock = threading.Lock()
        self._observers: list[abc.ObserverBase[LlmResponse]] = []
        self.closed = False
        self.activity: list[str] = []

    def send_history(self, contents: Sequence[types.Content]) -> Observable[None]:
        """Records the history."""
        with self._llm._lock:
            self._llm.history.append(list(contents))
        return sync.empty()

    def send_content(self, content: types.Content) -> Observable[None]:
        """Takes the next script item and emits its responses on ``receive()``."""

        def subscribe(observer: abc.ObserverBase[None], _: Any = None) -> abc.DisposableBase:
            self._check_open()
            item = self._llm._next(content)
            if isinstance(item, BaseException):
                self._fail(item)
            else:
                for response in _responses(item):
                    self._emit(response)
            observer.on_completed()
            return Disposable()

        return Observable(subscribe)

    def send_realtime(self, blob: types.Blob) -> Observable[None]:
        """Records the blob."""

        def subscribe(observer: abc.ObserverBase[None], _: Any = None) -> abc.DisposableBase:
            self._check_open()
            self._llm._record(blob)
            observer.on_completed()
            return Disposable()

        return Observable(subscribe)

    def send_activity_start(self) -> Observable[None]:
        """Records the marker."""
        self.activity.append("start")
        return sync.empty()

    def send_activity_end(self) -> Observable[None]:
        """Records the marker."""
        self.activity.append("end")
        return sync.empty()

    def receive(self) -> Observable[LlmResponse]:
        """The scripted responses, as contents arrive; completes on ``close()``."""

        def subscribe(observer: abc.ObserverBase[LlmResponse], _: Any = None) -> abc.DisposableBase:
            with self._lock:
                if self.closed:
                    observer.on_completed()
                    return Disposable()
                self._observers.append(observer)
            return Disposable(self.close)  # disposing the stream closes the connection

        return Observable(subscribe)

    def close(self) -> None:
        """Completes ``receive()``."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            observers, self._observers = self._observers, []
        for observer in observers:
            observer.on_completed()

    def _check_open(self) -> None:
        if self.closed:
            raise ConfigurationError("the live connection is closed")

    def _emit(self, response: LlmResponse) -> None:
        with self._lock:
            observers = list(self._observers)
        for observer in observers:
            observer.on_next(response)

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            observers, self._observers = self._observers, []
            self.closed = True
        exc = error if isinstance(error, Exception) else ModelError(str(error))
        for observer in observers:
            observer.on_error(exc)


def _responses(item: Any) -> list[LlmResponse]:
    if isinstance(item, str):
        out = [LlmResponse.text(item)]
    elif isinstance(item, LlmResponse):
        out = [item]
    elif isinstance(item, list):
        out = _stream(item)
        if len(out) > len(item):  # the aggregate _stream added: live sends turn_complete apart
            out[-1] = out[-1].replace(turn_complete=None)
    else:
        raise TypeError(
            f"unsupported live script item {item!r}: use str, LlmResponse, list, an exception "
            "or a callable(content)"
        )
    if not any(r.turn_complete or r.interrupted or _calls(r) for r in out):
        out.append(LlmResponse(turn_complete=True))
    return out


def _calls(response: LlmResponse) -> bool:
    parts = response.content.parts if response.content else None
    return bool(parts) and any(p.function_call is not None for p in parts or [])
