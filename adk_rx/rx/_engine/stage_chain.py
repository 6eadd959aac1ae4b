"""``StageChain``: a run made of stages, one subscription at a time, with a life cycle.

A run (one invocation of the Runner) goes through stages: read the session, store the
message, run the agent. Each stage is an Observable subscribed only once the previous one
completed; the value it ends with (its last item) is handed to the code that builds the next
stage. Chaining them with plain callbacks instead of ``concat``/``flat_map`` keeps the items of
the last stage (the agent's events) crossing no extra layer on their way to the subscriber.

The chain's life cycle is an Enum, guarded by a lock (one for every chain: each holds it for a
state read and write, and a thousand runs waiting on their models then keep no lock each), so a
stop that races a completion on another thread is decided once::

    WAITING --begin()--> RUNNING --stop()--> STOPPING --settle()--> DONE
                                 --finish()-----------------------> DONE
    WAITING --cancel_waiting()--------------------------------------> DONE

Marble diagram (``then`` builds the next stage from the last item of the one before)::

    stage 1:        --s|
    then(s) -> stage 2:  --m|
    then(m) -> stage 3:       --e1--e2|
    chain (items of the stages given an ``on_next``):  ----------e1--e2|

A stage that fails, or a ``then`` that raises, goes to the owner's ``chain_failed`` (once, and
only while RUNNING); after a stop no further stage is subscribed and late items are dropped.
Once DONE the chain lets go of its owner: the owner holds the chain, a reference cycle that
would leave every finished run to the cyclic GC. The chain keeps its owner, not a bound method
of it, and is itself the slot of the stage subscribed now: a run waiting on its model keeps
fewer objects.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum
from typing import Any, Protocol, TypeVar

from reactivex import Observable, abc

from adk_rx.rx._engine import sync
from adk_rx.rx._engine.slots import Slot

__all__ = ["ChainOwner", "RunState", "StageChain"]

T = TypeVar("T")


_LOCK = threading.Lock()  # every chain's (see the module's docstring)


class ChainOwner(Protocol):
    """Who a :class:`StageChain` reports its first error to."""

    def chain_failed(self, error: Exception, /) -> None:
        """The first error of a stage (or of the code between stages) while running."""
        ...


class _Gone:
    """The owner of a chain that is over: it hears of nothing (one for every chain)."""

    __slots__ = ()

    def chain_failed(self, error: Exception, /) -> None:
        pass


_GONE = _Gone()


class RunState(Enum):
    """Where a chain is in its life cycle."""

    WAITING = "waiting"  # not started (e.g. queued behind another run)
    RUNNING = "running"  # stages are being subscribed
    STOPPING = "stopping"  # stopped or failed; cleanup in progress
    DONE = "done"  # over: nothing more happens


class StageChain(Slot):
    """Subscribes stages one after another while the chain is RUNNING.

    It is the slot of the stage subscribed now (or of the body its owner runs in its place):
    setting ``disposable`` replaces it, ``dispose()`` disposes it and any set later.

    Args:
        owner: its ``chain_failed`` is called once with the first error of a stage (or of
            the code between stages) while the chain is running.
    """

    __slots__ = ("_owner", "state")

    def __init__(self, owner: ChainOwner) -> None:  # pyright: ignore[reportMissingSuperCall]
        self._current: abc.DisposableBase | None = None  # Slot's state, set here: one call less
        self.is_disposed = False
        self._owner: ChainOwner = owner
        self.state = RunState.WAITING

    @property
    def is_running(self) -> bool:
        """True while stages may still be subscribed and their items delivered."""
        return self.state is RunState.RUNNING

    # -- life cycle: each transition happens once, whoever calls it first -------------------
    def _move(self, expected: RunState, to: RunState) -> bool:
        with _LOCK:
            if self.state is not expected:
                return False
            self.state = to
            if to is RunState.DONE:
                self._owner = _GONE
            return True

    def begin(self) -> bool:
        """WAITING -> RUNNING; False if the chain was cancelled while it waited."""
        with _LOCK:  # (as _move, inline: once per run)
            if self.state is not RunState.WAITING:
                return False
            self.state = RunState.RUNNING
            return True

    def cancel_waiting(self) -> RunState:
        """WAITING -> DONE; returns the state found (only WAITING means it was cancelled)."""
        with _LOCK:
            found = self.state
            if found is RunState.WAITING:
                self.state = RunState.DONE
                self._owner = _GONE
            return found

    def stop(self) -> bool:
        """RUNNING -> STOPPING; True for the one caller that stopped it."""
        return self._move(RunState.RUNNING, RunState.STOPPING)

    def finish(self) -> bool:
        """RUNNING -> DONE (the last stage completed); True for the one caller that did."""
        with _LOCK:  # (as _move, inline: once per run)
            if self.state is not RunState.RUNNING:
                return False
            self.state = RunState.DONE
            self._owner = _GONE
            return True

    def settle(self) -> None:
        """STOPPING -> DONE, once the cleanup after a stop is over."""
        with _LOCK:
            self.state = RunState.DONE
            self._owner = _GONE

    # -- stages ---------------------------------------------------------------------------
    def step(
        self,
        build: Callable[[], Observable[T]],
        then: Callable[[Any], None],
        on_next: Callable[[T], None] | None = None,
    ) -> None:
        """Subscribes ``build()`` as the current stage; ``then(last item or None)`` follows it.

        With ``on_next`` every item goes there (and ``then`` gets None).
        """
        if self.state is not RunState.RUNNING:
            return
        try:
            source = build()
            if on_next is None and type(source) is sync.SyncObservable:
                values = source.items_now()  # already here: no subscription
                if self.state is RunState.RUNNING:
                    then(values[-1] if values else None)
                return
        except Exception as exc:
            self.fail(exc)
            return
        stage = _Stage(self, then)
        # Each stage runs inside the chain owner's guarded subscription: no extra wrapper. Its
        # handle goes into the chain (its slot) before it is subscribed, so a stop that comes
        # while it is still producing inside subscribe() reaches it.
        sync.subscribe_inner(source, stage, into=self, relay=on_next or stage.keep)

    def fail(self, error: Exception) -> None:
        """Reports ``error`` to the owner's ``chain_failed`` (the owner decides how it
        stops)."""
        self._owner.chain_failed(error)


class _Stage:
    """One stage's last item and what follows it, and the observer of the stage's end (one
    object, not closures or bound methods: a run waiting on its model keeps its stage alive).
    Its items go to the relay it is subscribed with (``keep``, or the chain's ``on_next``)."""

    __slots__ = ("chain", "last", "then")

    def __init__(self, chain: StageChain, then: Callable[[Any], None]) -> None:
        self.chain = chain
        self.then = then
        self.last: Any = None

    def keep(self, value: Any) -> None:
        self.last = value

    def on_error(self, error: Exception) -> None:
        self.chain.fail(error)

    def on_completed(self) -> None:
        chain = self.chain
        if chain.state is not RunState.RUNNING:
            return
        try:
            self.then(self.last)
        except Exception as exc:
            chain.fail(exc)
