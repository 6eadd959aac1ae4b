"""The three kinds of model the comparisons run adk_rx with (``--model=KIND``).

* ``scripted``: :class:`adk_rx.testing.ScriptedLlm`, the library's own fake;
* ``user``: a model written as a user writes one, a ``BaseLlm`` whose ``generate_content``
  returns a cold Observable that emits its responses while it is subscribed (``rx.create``
  with immediate ``on_next``), with no hint to adk_rx that it answers at once;
* ``thread``: the same model emitting from another thread, as a network client's reader
  thread does.

Each takes the same script: one item per model call, a ``str`` (a text reply), an
``LlmResponse``, or a list of responses (one streamed call).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import reactivex as rx
from reactivex import Observable, abc
from reactivex.disposable import Disposable

from adk_rx.models import BaseLlm, LlmRequest, LlmResponse
from adk_rx.testing import ScriptedLlm

KINDS = ("scripted", "user", "thread")
KIND = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--model=")), "scripted")
if KIND not in KINDS:
    raise SystemExit(f"--model must be one of {', '.join(KINDS)}, got {KIND!r}")

_DONE = Disposable()
_READER = ThreadPoolExecutor(1, thread_name_prefix="network-reader")


def _responses(item: Any) -> list[LlmResponse]:
    if isinstance(item, str):
        return [LlmResponse.text(item)]
    if isinstance(item, LlmResponse):
        return [item]
    return list(item)


class UserLlm(BaseLlm):
    """A user's model: each call's responses emitted on subscribe, in order."""

    def __init__(self, script: Iterable[Any]) -> None:
        super().__init__(model="user")
        self._script = [_responses(item) for item in script]
        self._next = 0
        self._lock = threading.Lock()

    def _take(self) -> list[LlmResponse]:
        with self._lock:
            item = self._script[self._next]
            self._next += 1
        return item

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        def subscribe(observer: abc.ObserverBase[LlmResponse], _: Any = None) -> Disposable:
            for response in self._take():
                observer.on_next(response)
            observer.on_completed()
            return _DONE

        return rx.create(subscribe)


class ThreadLlm(UserLlm):
    """The user's model answering from another thread, as a network client does."""

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        def subscribe(observer: abc.ObserverBase[LlmResponse], _: Any = None) -> Disposable:
            item = self._take()

            def read() -> None:
                for response in item:
                    observer.on_next(response)
                observer.on_completed()

            _READER.submit(read)
            return _DONE

        return rx.create(subscribe)


def model(script: Iterable[Any], kind: str = KIND) -> BaseLlm:
    """A model of ``kind`` that plays ``script``."""
    if kind == "user":
        return UserLlm(script)
    if kind == "thread":
        return ThreadLlm(script)
    return ScriptedLlm(script, keep_requests=False)
