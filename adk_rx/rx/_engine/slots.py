"""Lock-free disposables for one subscription's own handles.

RxPY's ``SerialDisposable``, ``SingleAssignmentDisposable`` and ``CompositeDisposable`` each
carry an ``RLock`` (an object the GC tracks, a C call to make it and two per use). The
runtime's stages already keep the one-writer rule: one inner at a time is subscribed into a
slot, by the one thread that drives the stage, while a disposal may come from any thread. For
that, ordering the writes is enough: :meth:`Slot.set` stores the new handle before it looks at
the disposed flag, and :meth:`Slot.dispose` sets the flag before it takes the handle, so
whichever of the two comes second disposes it (a handle may be disposed twice, which every
disposable allows). A thousand runs waiting on their models keep a few of these each.

    slot.disposable = a       (a subscribed)
    slot.disposable = b       (a disposed, b kept)
    slot.dispose()            (b disposed; anything set later is disposed at once)
"""

from __future__ import annotations

from reactivex import abc

__all__ = ["Both", "Slot"]


class Slot(abc.DisposableBase):
    """Holds the current handle of one writer; setting a new one disposes the old one.

    Used where RxPY's ``SerialDisposable`` (and, set once, ``SingleAssignmentDisposable``)
    would be, with the same ``disposable`` property and ``is_disposed`` flag.
    """

    __slots__ = ("_current", "is_disposed")

    def __init__(self) -> None:
        self._current: abc.DisposableBase | None = None
        self.is_disposed = False

    @property
    def disposable(self) -> abc.DisposableBase | None:
        """The handle held now (None once disposed)."""
        return self._current

    @disposable.setter
    def disposable(self, value: abc.DisposableBase | None) -> None:
        old = self._current
        self._current = value  # stored before the flag is read: see the module's docstring
        if self.is_disposed:
            self._current = None
            if value is not None:
                value.dispose()
        elif old is not None and old is not value:
            old.dispose()

    def dispose(self) -> None:
        """Disposes the handle held, and any set later."""
        self.is_disposed = True  # set before the handle is read: see the module's docstring
        current = self._current
        if current is not None:
            self._current = None
            current.dispose()


class Both(abc.DisposableBase):
    """Disposes two handles (RxPY's ``CompositeDisposable`` of a fixed pair, without a lock)."""

    __slots__ = ("_first", "_second")

    def __init__(self, first: abc.DisposableBase, second: abc.DisposableBase) -> None:
        self._first = first
        self._second = second

    def dispose(self) -> None:
        """Disposes both (each may be disposed more than once)."""
        self._first.dispose()
        self._second.dispose()
