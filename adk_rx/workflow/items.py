"""What a node's code hands back, as an Observable of items (one concept: the call's shape).

A node's ``_run_impl`` (and a FunctionNode's function) may be written in any of the shapes
Python offers; each becomes a cold Observable of the items it yields:

* a plain value: that one item (``None``: no item), produced inline, on the calling thread;
* a generator: its items, pulled inline one by one (disposing closes it);
* a coroutine or an async generator: run as a task on the runtime loop (``from_async``),
  cancelled by disposal;
* an Observable: used as it is (an Rx-native node).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.rx import from_async

__all__ = ["is_lazy", "items_of"]


def _pulled(generator: Generator[Any, Any, Any]) -> Observable[Any]:
    # Stock from_iterable pulls one item per trampoline step and stops when disposed; the
    # generator is closed when the subscription ends either way.
    return rx.from_iterable(generator).pipe(ops.finally_action(generator.close))


def is_lazy(result: Any) -> bool:
    """True when a call's result yields its items later (an Observable, a generator, a
    coroutine or an async generator), False for a plain value."""
    return (
        isinstance(result, Observable)
        or inspect.isgenerator(result)
        or inspect.isawaitable(result)
        or inspect.isasyncgen(result)
    )


def items_of(call: Callable[[], Any]) -> Observable[Any]:
    """A cold Observable of the items of ``call()`` (called once per subscription)."""

    def build(_: Any) -> Observable[Any]:
        result = call()
        if isinstance(result, Observable):
            return result  # pyright: ignore[reportUnknownVariableType]
        if inspect.isgenerator(result):
            return _pulled(result)
        if inspect.isawaitable(result) or inspect.isasyncgen(result):
            return from_async(lambda: result)  # pyright: ignore[reportUnknownLambdaType]
        return rx.empty() if result is None else rx.just(result)

    return rx.defer(build)
