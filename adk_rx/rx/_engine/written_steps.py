"""``WrittenSteps``: a step generator and the writer of its items, driven as plain calls.

The generic body of a turn is two stages: :func:`~adk_rx.rx._engine.generator_stage.from_generator`
runs the step generator, and :func:`~adk_rx.rx._engine.concat_map_direct.concat_map_direct`
writes each item it emits (applied on arrival, then stored in order, then emitted). Here one
object does both for as long as it can: it sends the generator what it waits for, writes each
item of a yielded :class:`~adk_rx.rx._engine.sync.SyncObservable` (``write(item)`` answering at
once: its items are emitted) and, where the generator yields an Observable that answers later
(a model or tool on another thread), subscribes it itself and goes on from its completion, on
whatever thread completed it, still as plain calls::

    generator yields:   just(a)      inner (on another thread)       just(c)|
    write:              a -> a'      --b--|  b -> b'                 c -> c'
    emit:               a'           ------b'                        c'|

Only once a write itself has to wait (a store appending on another thread) does a
``concat_map_direct`` sink take over the writing, busy with that append: from then on the
items are applied as they arrive and stored and emitted in order, the generator running
ahead of the store, exactly as in the generic body; the end (or an error, once the writes
before it are done) follows the last write.

Disposal stops the loop before its next item, disposes the inner and the sink, and closes the
generator (its ``finally`` blocks run) as soon as it is not running.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from reactivex import Observable

from adk_rx.rx._engine.concat_map_direct import concat_map_sink
from adk_rx.rx._engine.generator_stage import Steps, WaitingSteps
from adk_rx.rx._engine.inner import Inner
from adk_rx.rx._engine.sync import SyncObservable

__all__ = ["Items", "StepsOwner", "Writer", "WrittenSteps"]

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)


class Writer(Protocol[T]):
    """What writes the items of :class:`WrittenSteps`: ``write`` is ``apply`` then ``store``."""

    def write(self, item: T, /) -> Observable[T]:
        """Applies and stores ``item``; its answer's items are emitted (a SyncObservable's at
        once). Called in order."""
        ...

    def apply(self, item: T, /) -> None:
        """The first half of ``write``, for the sink that takes over once a write waits (called
        on arrival)."""
        ...

    def store(self, item: T, /) -> Observable[T]:
        """The second half of ``write``, for that sink (called in order)."""
        ...


class Items(Protocol[T_contra]):
    """Where the written items go (an observer, of which only ``on_next`` is called)."""

    def on_next(self, item: T_contra, /) -> None:
        """One written item."""
        ...


class StepsOwner(Protocol):
    """Who hears of the end of :class:`WrittenSteps`."""

    def steps_done(self, _: None, /) -> None:
        """The steps ended and their items are written and emitted (called with None)."""
        ...

    def steps_failed(self, error: Exception, /) -> None:
        """The first error (once the writes before it are done)."""
        ...


_NONE: SyncObservable[Any] = SyncObservable(())


class _LetGo:
    """What a driver that let go calls in place of its writer, items and owner: nothing is
    written, emitted or told (one object for every driver)."""

    __slots__ = ()

    def write(self, _: Any, /) -> SyncObservable[Any]:
        return _NONE

    store = write

    def apply(self, _: Any, /) -> None:
        pass

    on_next = steps_done = steps_failed = apply


_LET_GO = _LetGo()


class WrittenSteps(WaitingSteps[T]):
    """Drives one step generator and writes its items (see the module's docstring).

    It keeps the objects it calls, not their bound methods: a run waiting on its model keeps
    fewer objects.

    Args:
        generator: the steps, run by :meth:`run`.
        writer: writes each item (``writer.write``), never one of type ``passes``; once a
            write waits, its ``apply`` and ``store`` halves (see :class:`Writer`).
        items: its ``on_next`` gets the written items.
        owner: its ``steps_done(None)`` is called at the end, its ``steps_failed(error)``
            with the first error.
        passes: the type of the items emitted as they are (nothing to write).
        mapped: what each item becomes before it is written (None: itself); the generator
            is still sent the item itself.
    """

    __slots__ = ("_items", "_mapped", "_owner", "_passes", "_sink", "_writer")

    def __init__(
        self,
        generator: Steps[T],
        writer: Writer[T],
        items: Items[T],
        owner: StepsOwner,
        passes: type[Any] | None,
        mapped: Callable[[T], T] | None,
    ) -> None:
        super().__init__()
        self._writer: Writer[T] | _LetGo = writer
        self._items: Items[T] | _LetGo = items
        self._owner: StepsOwner | _LetGo = owner
        self._passes = passes
        self._mapped = mapped
        self._generator = generator
        self._sink: Any = None  # the concat_map_direct sink, once a write waited

    def run(self, value: T | None = None, error: Exception | None = None) -> None:
        """Runs the generator (sent ``value``, or thrown ``error``) until it waits for an
        inner, ends or fails."""
        generator = self._generator
        if generator is None:
            return  # closed by a disposal
        mapped, emit, passes = self._mapped, self._items.on_next, self._passes
        while not self.disposed:
            try:
                if error is None:
                    item = generator.send(value)
                else:
                    item, error = generator.throw(error), None
            except StopIteration:
                self._generator = None
                if not self.disposed:
                    sink = self._sink
                    if sink is None:
                        owner = self._owner
                        # (_let_go, inline)
                        self._writer = self._items = self._owner = _LET_GO
                        owner.steps_done(None)
                    else:
                        sink.on_completed()  # after the writes still waiting
                return
            except Exception as exc:
                self._generator = None
                if not self.disposed:
                    sink = self._sink
                    if sink is None:
                        owner = self._owner
                        self._let_go()
                        owner.steps_failed(exc)
                    else:
                        sink.on_error(exc)  # after the writes still waiting (drain_on)
                return
            if type(item) is not SyncObservable:
                outcome = self._subscribe(item)
                if outcome is None:
                    return  # the inner's completion or error goes on from there
                value, error = outcome
                continue
            value = None
            values = item.values
            if values is None:
                try:
                    values = item.items_now()
                except Exception as exc:
                    error = exc  # raised inside the generator at its yield
                    continue
            for one in values:
                if self.disposed:
                    break
                value = one
                written = one if mapped is None else mapped(one)
                sink = self._sink
                if sink is not None:
                    sink.on_next(written)
                    continue
                if type(written) is passes:
                    emit(written)
                    continue
                stored = self._writer.write(written)
                if type(stored) is not SyncObservable:
                    self._writing(stored)
                    continue
                stored_now = stored.values  # an answer at once: its items are set
                for out in stored_now if stored_now is not None else stored.items_now():
                    if self.disposed:
                        break
                    emit(out)
        self._close()

    _resume = run

    def _writing(self, stored: Observable[T]) -> None:
        """A write waits: a sink takes over the writing, busy with it."""
        writer = self._writer
        self._sink = concat_map_sink(
            Inner(self._items.on_next, self._sink_failed, self._sink_done),
            writer.store,
            stored,
            on_arrival=writer.apply,
            drain_on=Exception,
            passes=self._passes,
        )

    def _sink_done(self) -> None:
        owner = self._owner
        self._let_go()
        if not self.disposed:
            owner.steps_done(None)

    def _sink_failed(self, error: Exception) -> None:
        owner = self._owner
        self._let_go()
        if not self.disposed:
            owner.steps_failed(error)

    def _let_go(self) -> None:
        """Once over, lets go of what it calls: it reaches back to the run that holds this
        driver, a reference cycle that would leave every finished run to the cyclic GC."""
        self._writer = self._items = self._owner = _LET_GO
        self._sink = None

    def _inner_next(self, item: T) -> None:
        """An item of the inner the generator waits for: written as the loop writes one."""
        if self.disposed:
            return
        self._last = item
        written = item if self._mapped is None else self._mapped(item)
        sink = self._sink
        if sink is not None:
            sink.on_next(written)
            return
        if type(written) is self._passes:
            self._items.on_next(written)
            return
        stored = self._writer.write(written)
        if type(stored) is not SyncObservable:
            self._writing(stored)
            return
        emit = self._items.on_next
        for out in stored.items_now():
            if self.disposed:
                return
            emit(out)

    on_next = _inner_next  # (as the observer of a stage it drives: no frame more per item)

    def dispose(self) -> None:
        """Stops before the next item, disposes the inner and the sink, closes the generator."""
        self.disposed = True
        sink = self._sink
        self._let_go()
        self._dispose_inner()
        if sink is not None:
            sink.dispose()
        self._close()
