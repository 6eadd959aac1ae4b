"""LiveRequestQueue: the hot input of a live session, fed from any thread or task.

What the user sends while the model talks: contents (text turns, function responses),
realtime blobs (audio or video frames), activity start/end markers and, last, ``close()``.
The live flow subscribes to :meth:`LiveRequestQueue.requests` once and forwards each request
to the model connection, in the order they were sent.

Overflow policy (documented contract):

- realtime blobs are bounded: at most ``max_blobs`` wait for the connection; one more drops
  the **oldest** waiting blob (stale audio is worth less than fresh audio). The producer never
  blocks: ``send_realtime`` only appends under a short lock.
- contents, activity markers and ``close`` are never dropped (the buffer holding them is
  unbounded; a user does not type faster than a model reads).

Delivery never runs on the producer's thread: the first request after an idle spell schedules
one drain on ``scheduler`` (adk_rx's I/O pool by default), which hands every waiting request
to the subscriber in order, so a slow connection slows the drain, not the microphone.

Marble diagram (``c`` content, ``b`` blob, ``|`` close; ``max_blobs=2`` while the drain is
busy)::

    sent:       c--b1-b2-b3--c2--|
    delivered:  c-------b2-b3-c2-|      (b1, the oldest waiting blob, was dropped)
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar

import pydantic
from google.genai import types
from pydantic.alias_generators import to_camel
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.errors import ConfigurationError
from adk_rx.rx.schedulers import io_scheduler

__all__ = ["LiveRequest", "LiveRequestQueue"]


@dataclass(frozen=True, slots=True)
class LiveRequest:
    """One thing sent into a live session (exactly one field is set).

    Attributes:
        content: a content turn (text, or function responses).
        blob: a realtime audio or video frame.
        activity_start: the user started speaking (manual activity detection).
        activity_end: the user stopped speaking.
        close: end the live session.
    """

    __pydantic_config__: ClassVar[pydantic.ConfigDict] = pydantic.ConfigDict(
        alias_generator=to_camel, populate_by_name=True
    )

    content: types.Content | None = None
    blob: types.Blob | None = None
    activity_start: bool = False
    activity_end: bool = False
    close: bool = False

    def to_json(self) -> str:
        """The JSON frame of this request (camelCase, defaults left out)."""
        return _ADAPTER.dump_json(self, by_alias=True, exclude_defaults=True).decode()

    @classmethod
    def from_json(cls, data: str | bytes) -> LiveRequest:
        """Parses a frame (google-adk's LiveRequest JSON; snake_case or camelCase keys).

        Raises:
            ConfigurationError: the frame is not a live request (see :meth:`from_dict`).
        """
        try:
            raw: Any = _JSON.validate_json(data)
        except pydantic.ValidationError as exc:
            raise ConfigurationError(f"not a live request: {_first_error(exc)}") from exc
        return cls.from_dict(raw)

    @classmethod
    def from_dict(cls, data: Any) -> LiveRequest:
        """A request from a frame's parsed JSON.

        Raises:
            ConfigurationError: not an object, a field of the wrong type, or none of the
                fields set (unknown keys beside a known one are ignored, as google-adk does).
        """
        if not isinstance(data, dict):
            raise ConfigurationError(
                f"not a live request: a JSON object is expected, got {data!r:.40}"
            )
        data = dict(data)
        # google-adk sends activity markers as objects ({"activity_start": {}}).
        for key in ("activity_start", "activityStart", "activity_end", "activityEnd"):
            if key in data and isinstance(data[key], dict):
                data[key] = True
        try:
            request = _ADAPTER.validate_python(data)
        except pydantic.ValidationError as exc:
            raise ConfigurationError(f"not a live request: {_first_error(exc)}") from exc
        except (TypeError, AttributeError) as exc:
            # google-genai's enum fields raise AttributeError for a value that is no string.
            raise ConfigurationError(f"not a live request: {exc}") from exc
        if request == _EMPTY:
            raise ConfigurationError(
                "not a live request: it sets none of content, blob, activity_start, "
                "activity_end, close"
            )
        return request


_ADAPTER: pydantic.TypeAdapter[LiveRequest] = pydantic.TypeAdapter(LiveRequest)
_JSON: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(Any)
_EMPTY = LiveRequest()


def _first_error(exc: pydantic.ValidationError) -> str:
    """The first of pydantic's errors on one line (a WebSocket close reason is short)."""
    [first, *rest] = exc.errors(include_url=False, include_input=False)
    where = ".".join(str(step) for step in first["loc"])
    more = f" (and {len(rest)} more)" if rest else ""
    return f"{where}: {first['msg']}{more}" if where else f"{first['msg']}{more}"


class LiveRequestQueue:
    """A thread-safe, hot queue of :class:`LiveRequest` for one live session.

    Args:
        max_blobs: realtime blobs that may wait for the connection before the oldest is
            dropped (256 frames of 20 ms audio: about 5 s).
        scheduler: where requests are handed to the subscriber (default: adk_rx's I/O pool).
    """

    def __init__(self, max_blobs: int = 256, scheduler: abc.SchedulerBase | None = None) -> None:
        if max_blobs < 1:
            raise ConfigurationError(f"max_blobs must be at least 1, got {max_blobs}")
        self.max_blobs = max_blobs
        self._scheduler = scheduler
        self._lock = threading.Lock()
        self._waiting: deque[LiveRequest] = deque()
        self._blobs = 0
        self._closed = False
        self._draining = False
        self._observer: abc.ObserverBase[LiveRequest] | None = None
        self.dropped_blobs = 0
        """How many realtime blobs were dropped by the overflow policy so far."""

    # -- producers ----------------------------------------------------------------------------
    def send_content(self, content: types.Content) -> None:
        """Sends a content turn (never dropped)."""
        if not isinstance(content, types.Content):
            raise ConfigurationError(f"send_content takes a types.Content, got {content!r}")
        self.send(LiveRequest(content=content))

    def send_realtime(self, blob: types.Blob) -> None:
        """Sends an audio or video frame (the oldest waiting frame goes when full)."""
        if not isinstance(blob, types.Blob):
            raise ConfigurationError(f"send_realtime takes a types.Blob, got {blob!r}")
        self.send(LiveRequest(blob=blob))

    def send_activity_start(self) -> None:
        """Marks the start of the user's activity (speech)."""
        self.send(LiveRequest(activity_start=True))

    def send_activity_end(self) -> None:
        """Marks the end of the user's activity."""
        self.send(LiveRequest(activity_end=True))

    def close(self) -> None:
        """Ends the live session once everything sent before it was delivered (idempotent)."""
        with self._lock:
            if self._closed:
                return
        self.send(LiveRequest(close=True))

    def send(self, request: LiveRequest) -> None:
        """Sends any live request.

        Raises:
            ConfigurationError: the queue was closed.
        """
        with self._lock:
            if self._closed:
                raise ConfigurationError("the live request queue is closed")
            if request.close:
                self._closed = True
            if request.blob is not None:
                if self._blobs >= self.max_blobs:
                    self._drop_oldest_blob()
                self._blobs += 1
            self._waiting.append(request)
            start = self._observer is not None and not self._draining
            if start:
                self._draining = True
        if start:
            self._schedule_drain()

    @property
    def is_closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    def _drop_oldest_blob(self) -> None:
        for index, waiting in enumerate(self._waiting):
            if waiting.blob is not None:
                del self._waiting[index]
                self._blobs -= 1
                self.dropped_blobs += 1
                return

    # -- the consumer -------------------------------------------------------------------------
    def requests(self) -> Observable[LiveRequest]:
        """The requests as a hot Observable for one subscriber; completes after ``close``.

        Requests sent before the subscription wait for it. A second subscriber at a time is
        an error.
        """

        def subscribe(
            observer: abc.ObserverBase[LiveRequest], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            with self._lock:
                if self._observer is not None:
                    raise ConfigurationError("a live request queue feeds one live session")
                self._observer = observer
                start = bool(self._waiting) and not self._draining
                if start:
                    self._draining = True
            if start:
                self._schedule_drain()

            def detach() -> None:
                with self._lock:
                    if self._observer is observer:
                        self._observer = None

            return Disposable(detach)

        return Observable(subscribe)

    def _schedule_drain(self) -> None:
        (self._scheduler or io_scheduler()).schedule(lambda *_: self._drain())

    def _drain(self) -> None:
        while True:
            with self._lock:
                observer = self._observer
                if observer is None or not self._waiting:
                    self._draining = False
                    return
                request = self._waiting.popleft()
                if request.blob is not None:
                    self._blobs -= 1
            observer.on_next(request)
            if request.close:
                observer.on_completed()
                with self._lock:
                    self._draining = False
                return
