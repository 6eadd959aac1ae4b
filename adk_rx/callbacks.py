"""Callbacks: plain, ``async def`` or Observable-returning; the first non-None result wins.

A hook runs a chain of callables (plugins first, then the agent's own). Each returns
``None`` to let the next one run, or a value that replaces the step. The chain is lazy:
after the first value, later callbacks are not called.

    first_result([f1, f2, f3]):   f1 -> None, f2 -> x   ==>   --x|   (f3 never called)
                                  all None              ==>   --|
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.errors import AdkRxError, CallbackError, ConfigurationError, StateValueError
from adk_rx.rx._engine import sync
from adk_rx.rx.bridges import from_async

if TYPE_CHECKING:
    from adk_rx.plugins import PluginManager

__all__ = ["as_callback_list", "callback_chain", "first_result", "has_callbacks", "lift_result"]

T = TypeVar("T")
Thunk = Callable[[], Any]

_EMPTY_MARK = object()


def as_callback_list(value: Any) -> tuple[Callable[..., Any], ...]:
    """Normalises a callback argument: None, one callable, or a list of callables.

    Raises:
        ConfigurationError: something in ``value`` is not callable.
    """
    if value is None:
        return ()
    if callable(value):
        return (value,)
    if isinstance(value, list | tuple):
        for cb in value:
            if not callable(cb):
                raise ConfigurationError(f"callback {cb!r} is not callable")
        return tuple(value)
    raise ConfigurationError(f"a callback must be a callable or a list of callables, got {value!r}")


def _describe(thunk: Thunk) -> str:
    fn = getattr(thunk, "__adk_callback__", thunk)
    return getattr(fn, "__qualname__", None) or repr(fn)


def _wrap(exc: Exception, thunk: Thunk) -> Exception:
    if isinstance(exc, StateValueError) and exc.writer is None:
        named = StateValueError(exc.key, exc.problem, f"callback {_describe(thunk)}")
        named.__cause__ = exc
        return named
    if isinstance(exc, AdkRxError):
        return exc
    err = CallbackError(f"callback {_describe(thunk)} raised {type(exc).__name__}: {exc}")
    err.__cause__ = exc
    return err


def lift_result(result: Any) -> Observable[Any] | None:
    """An Observable for a callback's awaitable / Observable result, or None for a value."""
    if isinstance(result, Observable):
        return result.pipe(ops.take(1))
    if inspect.isawaitable(result):
        awaitable = result

        async def wait() -> Any:
            return await awaitable

        return from_async(wait)
    return None


def first_result(thunks: Sequence[Thunk]) -> Observable[Any]:
    """Runs ``thunks`` in order; emits the first non-None result (a Maybe).

    Synchronous callbacks run inline at subscribe time; an awaitable or Observable result
    is awaited before the next callback is considered. An exception becomes a
    :class:`CallbackError` (AdkRxError subclasses pass through unchanged).
    """

    def run_from(start: int) -> Observable[Any]:
        for index in range(start, len(thunks)):
            thunk = thunks[index]
            try:
                result = thunk()
            except Exception as exc:
                return rx.throw(_wrap(exc, thunk))
            if result is None:
                continue
            lifted = lift_result(result)
            if lifted is None:
                return sync.just(result)
            nxt = index + 1

            def after(value: Any, nxt: int = nxt) -> Observable[Any]:
                if value is _EMPTY_MARK or value is None:
                    return run_from(nxt)
                return sync.just(value)

            def on_error(exc: Exception, _: Any, thunk: Thunk = thunk) -> Observable[Any]:
                return rx.throw(_wrap(exc, thunk))

            return lifted.pipe(
                ops.default_if_empty(_EMPTY_MARK),
                ops.catch(on_error),
                ops.flat_map(after),
            )
        return sync.empty()

    if not thunks:
        return sync.empty()
    return rx.defer(lambda _: run_from(0))


def has_callbacks(
    plugins: PluginManager | None, hook: str, callbacks: Sequence[Callable[..., Any]]
) -> bool:
    """True when a plugin overrides ``hook`` or the agent has callbacks for it."""
    return bool(callbacks) or (plugins is not None and hook in plugins.hooks)


def callback_chain(
    plugins: PluginManager | None,
    hook: str,
    callbacks: Sequence[Callable[..., Any]],
    args: tuple[Any, ...],
    **kwargs: Any,
) -> Observable[Any]:
    """One hook: the plugins' ``hook`` first, then the agent's callbacks; a Maybe.

    Plugins are called with ``kwargs`` (keyword arguments, as the plugin hooks are
    documented); the agent's callbacks with ``args`` (positional). The first non-None
    result wins and later callbacks are not called (see :func:`first_result`).
    """
    thunks: list[Thunk] = plugins.thunks(hook, **kwargs) if plugins is not None else []
    for cb in callbacks:
        thunks.append(_bind(cb, args))
    return first_result(thunks)


def _bind(cb: Callable[..., Any], args: tuple[Any, ...]) -> Thunk:
    def call() -> Any:
        return cb(*args)

    call.__adk_callback__ = cb  # type: ignore[attr-defined]
    return call
