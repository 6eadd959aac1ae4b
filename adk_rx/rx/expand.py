"""``expand``: every item is emitted and fed back through ``project``, recursively (RxJS's expand).

A graph of work is a stream that grows from its own items: a finished node says which
nodes run next, and their items say what runs after them. ``expand(project)`` emits each
item of the source and passes it to ``project``, whose Observable is merged in; its items are
emitted and projected in turn. The result completes once the source and every projected
Observable have completed; an error anywhere errors it and disposes the rest.

Stock RxPY has no ``expand`` and a ``Subject`` fed back into ``merge`` cannot tell when the
work is over (the subject never completes by itself). Projection runs as a trampoline: an
item that a projected Observable emits while the operator is already projecting is queued
and projected by the same loop, so a long chain of synchronous steps (a graph loop that
runs a thousand times) never deepens the stack, and ``project`` is never called by two
threads at once (it may keep plain state without a lock). Items reach the observer
serialized, as merge's do. A projected Observable whose items are already here (an
``adk_rx.rx.single`` / ``maybe`` / ``completable``, the engine's synchronous Observables) is
not subscribed: its items are taken as they are, so a step of plain calls costs no
subscription.

Marble diagram (``project(n)`` emits ``n-1`` while n > 0)::

    source:     --2-------------|
    project(2):    --1|
    project(1):       --0|
    expand:     --2----1---0----|

Disposing the subscription disposes the source and every projected Observable at once;
nothing is projected or subscribed after that.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable, SingleAssignmentDisposable

from adk_rx.rx._engine.sync import SyncObservable

__all__ = ["expand"]

T = TypeVar("T")


def expand(
    project: Callable[[T], Observable[T]],
) -> Callable[[Observable[T]], Observable[T]]:
    """Emits every item and merges in ``project(item)``, recursively, until all completed.

    Args:
        project: called with each item (source or projected), one call at a time; returns
            the Observable of the items it leads to (empty when it leads nowhere).
    """

    def operator(source: Observable[T]) -> Observable[T]:
        def subscribe(
            observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            return _Expansion[T](project, observer, scheduler).start(source)

        return Observable(subscribe)

    return operator


class _Expansion(Generic[T]):
    """One subscription of ``expand``: the queue of items to project and the live inners."""

    def __init__(
        self,
        project: Callable[[T], Observable[T]],
        observer: abc.ObserverBase[T],
        scheduler: abc.SchedulerBase | None,
    ) -> None:
        self._project = project
        self._observer = observer
        self._scheduler = scheduler
        self._lock = threading.RLock()  # an observer disposing from on_next re-enters
        self._group = CompositeDisposable()
        self._pending: deque[T] = deque()
        self._active = 1  # the source, until it completes; then each live inner
        self._draining = False
        self._done = False

    def start(self, source: Observable[T]) -> abc.DisposableBase:
        inner = SingleAssignmentDisposable()
        self._group.add(inner)
        inner.disposable = source.subscribe(
            self._on_next,
            self._on_error,
            lambda: self._on_inner_completed(inner),
            scheduler=self._scheduler,
        )
        self._drain()
        return CompositeDisposable(Disposable(self._stop), self._group)

    def _stop(self) -> None:
        with self._lock:
            self._done = True
            self._pending.clear()

    def _on_next(self, item: T) -> None:
        with self._lock:
            if self._done:
                return
            self._observer.on_next(item)
            self._pending.append(item)
        self._drain()

    def _on_error(self, error: Exception) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
            self._pending.clear()
        self._group.dispose()
        self._observer.on_error(error)

    def _on_inner_completed(self, inner: abc.DisposableBase) -> None:
        self._group.remove(inner)
        with self._lock:
            self._active -= 1
        self._drain()

    def _drain(self) -> None:
        with self._lock:
            if self._draining:
                return  # the thread that drains now projects the new items too
            self._draining = True
        while True:
            with self._lock:
                if self._done or not self._pending:
                    self._draining = False
                    finished = not self._done and self._active == 0
                    if finished:
                        self._done = True
                    break
                item = self._pending.popleft()
            try:
                projected = self._project(item)
                values = projected.items_now() if type(projected) is SyncObservable else None
            except Exception as exc:  # a failing project errors the stream
                with self._lock:
                    self._draining = False
                self._on_error(exc)
                return
            if values is not None:  # already here: taken without a subscription
                with self._lock:
                    if self._done:
                        continue
                    for value in values:
                        if self._done:
                            break  # disposed from inside on_next
                        self._observer.on_next(value)
                        self._pending.append(value)
                continue
            with self._lock:
                self._active += 1
            inner = SingleAssignmentDisposable()
            self._group.add(inner)
            inner.disposable = projected.subscribe(
                self._on_next,
                self._on_error,
                lambda inner=inner: self._on_inner_completed(inner),
                scheduler=self._scheduler,
            )
        if finished:
            self._observer.on_completed()
