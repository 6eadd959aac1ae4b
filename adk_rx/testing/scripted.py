"""ScriptedLlm: a model that plays back a script, one item per model call."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable

from adk_rx.errors import ModelError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse, model_content
from adk_rx.rx._engine.sync import items

__all__ = ["ScriptedLlm"]

ScriptItem = Any  # str | LlmResponse | list[...] | Exception | Callable[[LlmRequest], ...]


def _stream(items: list[Any]) -> list[LlmResponse]:
    """A streamed call: str items are partial text chunks; the aggregate is added if missing."""
    out: list[LlmResponse] = []
    for item in items:
        if isinstance(item, str):
            out.append(LlmResponse(content=model_content(types.Part(text=item)), partial=True))
        elif isinstance(item, LlmResponse):
            out.append(item)
        else:
            raise TypeError(f"a streamed script item must be str or LlmResponse, got {item!r}")
    if out and all(r.partial for r in out):
        text = "".join(r.get_text() for r in out)
        out.append(LlmResponse(content=model_content(types.Part(text=text)), turn_complete=True))
    return out


def _prepare(item: Any) -> Any:
    if isinstance(item, str):
        return [LlmResponse(content=model_content(types.Part(text=item)))]
    if isinstance(item, LlmResponse):
        return [item]
    if isinstance(item, list):
        return _stream(item)
    if isinstance(item, Exception) or callable(item):
        return item
    raise TypeError(
        f"unsupported script item {item!r}: use str, LlmResponse, list, an exception or a "
        "callable(LlmRequest)"
    )


class ScriptedLlm(BaseLlm):
    """Plays back a script: each model call takes the next item.

    Items: a ``str`` (a model text reply), an ``LlmResponse``, a ``list`` (one streamed call:
    its responses emitted in order; ``str`` items are partial text chunks and an aggregate
    is appended when the list has only partials), an exception (the call errors), or a
    callable ``(LlmRequest) -> item``. Running out of items errors the call.

    Args:
        script: the items, one per model call.
        model: the model name.
        keep_requests: keep every request in ``requests`` (turn it off for a long load run,
            where the kept requests would grow the heap the GC walks).

    Attributes:
        requests: every LlmRequest received, in order (while ``keep_requests``).
    """

    def __init__(
        self, script: Iterable[ScriptItem] = (), model: str = "scripted", keep_requests: bool = True
    ) -> None:
        super().__init__(model=model)
        self._script = [_prepare(item) for item in script]
        self._next = 0
        self._lock = threading.Lock()
        self._keep = keep_requests
        self.requests: list[LlmRequest] = []

    def add(self, *items: ScriptItem) -> ScriptedLlm:
        """Appends items to the script; returns self."""
        with self._lock:
            self._script.extend(_prepare(item) for item in items)
        return self

    @property
    def remaining(self) -> int:
        """How many script items are left."""
        return len(self._script) - self._next

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Emits the next script item's responses (cold: the item is taken at subscribe)."""

        def subscribe(observer: Any, scheduler: Any = None) -> Any:
            with self._lock:
                if self._keep:
                    self.requests.append(llm_request)
                index = self._next
                self._next += 1
                item = self._script[index] if index < len(self._script) else None
            if item is None:
                observer.on_error(
                    ModelError(
                        f"ScriptedLlm ran out of responses: call {index + 1} but the script has "
                        f"{len(self._script)} item(s)"
                    )
                )
                return None
            if isinstance(item, list):  # the common case: emit here, no inner subscription
                for response in item:
                    if getattr(observer, "is_stopped", False):
                        return None
                    observer.on_next(response)
                observer.on_completed()
                return None
            return _play(item, llm_request).subscribe(observer, scheduler=scheduler)

        return rx.create(subscribe)


def _play(item: Any, request: LlmRequest) -> Observable[LlmResponse]:
    if isinstance(item, Exception):
        return rx.throw(item)
    if isinstance(item, list):
        return items(item)
    fn: Callable[[LlmRequest], Any] = item
    try:
        produced = fn(request)
    except Exception as exc:
        return rx.throw(exc)
    if isinstance(produced, Observable):
        return produced
    return _play(_prepare(produced), request)
