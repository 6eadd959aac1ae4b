"""The single writer of an invocation's session: apply each event, then persist it, in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.events import Event
from adk_rx.plugins import PluginManager
from adk_rx.resumability.stored import StoredEvents
from adk_rx.runner.records import OpenCalls
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.pending import PendingResult
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.stage_chain import RunState, StageChain
from adk_rx.rx._engine.sync import SyncObservable
from adk_rx.sessions.base import BaseSessionService
from adk_rx.sessions.session import Session

__all__ = ["SessionWriter"]

_NOTHING = sync.empty()


class SessionWriter(OpenCalls):
    """Applies events to the invocation's session view and appends them to the store.

    It is also the record of the stored calls that still have no stored response (its
    :class:`OpenCalls` part: ``by_id``, ``last_author``, ``stop_records``), kept on the
    writer itself rather than in an object of its own: a waiting run keeps fewer objects.

    Attributes:
        inflight: completes when the latest append is over (a stop waits for it before it
            writes its own records, so they never land before an event already on its way).
        stored: the ids of the events stored so far, with a wait for one of them; kept only
            when someone waits (a resumable app's tools wait for their call to be stored).
    """

    __slots__ = ("_chain", "_service", "_session", "inflight", "stored")

    def __init__(  # pyright: ignore[reportMissingSuperCall]
        self, service: BaseSessionService, session: Session, chain: StageChain
    ) -> None:
        self.by_id = {}  # (OpenCalls' state, set here: one call less)
        self.last_author = None
        self._service = service
        self._session = session
        self._chain = chain  # its events are stored while it runs
        self.inflight: Observable[Any] = _NOTHING
        self.stored: StoredEvents | None = None

    def _track(self, event: Event) -> None:
        self.track(event)
        if self.stored is not None:
            self.stored.mark(event.id)

    def apply(self, event: Event) -> None:
        """Step 1: the next model step sees the event at once (partial events are skipped)."""
        if not event.partial:
            self._session.mark_applied(event)

    def write(self, event: Event) -> Observable[Event]:
        """Steps 1 and 2: applied, then :meth:`persist`-ed (a partial event: neither, it is
        emitted as it is)."""
        if event.partial:
            return sync.just(event)
        self._session.mark_applied(event)
        return self.persist(event)

    def store(self, event: Event) -> Observable[Event]:
        """Step 2 of an event applied already: :meth:`persist`-ed (a partial one is not)."""
        return sync.just(event) if event.partial else self.persist(event)

    def persist(self, event: Event) -> Observable[Event]:
        """Starts the append now; disposing the result does not abort the append.

        A store that appended at once gives a SyncObservable of the stored event (nothing
        for a late event, once the run stopped); one that appends later, its running append.
        """
        if self._chain.state is not RunState.RUNNING:
            return _NOTHING  # stopped: a late event is neither stored nor emitted
        appended = self._service.append_event(self._session, event)
        if type(appended) is not SyncObservable:
            appended = settle(appended)
        if type(appended) is SyncObservable:  # a store that answers at once (in memory)
            self.inflight = _NOTHING
            try:
                answered = appended.items_now()
            except Exception as exc:
                return rx.throw(exc)
            track, stored = self.track, self.stored
            for one in answered:  # (as _track, without a call per event)
                track(one)
                if stored is not None:
                    stored.mark(one.id)
            return appended if appended.values is not None else SyncObservable(answered)
        append: PendingResult[Event] = PendingResult(self._track)
        # Inside the invocation's guarded subscription: no wrapper layer; the append is not
        # disposed with the run (a stop waits for it instead, through ``inflight``).
        sync.subscribe_inner(
            appended,
            append.on_next,
            append.on_error,
            append.on_completed,
        )
        stored = append.result_now()
        if stored is not None:
            self.inflight = _NOTHING
            return sync.just(stored)  # an in-memory store: no subject, no inner subscription
        self.inflight = append.subject
        return append.subject

    def persist_then_hook(
        self, event: Event, plugins: PluginManager, ctx: InvocationContext | None
    ) -> Observable[Event]:
        """Persists ``event`` (not a partial one), then lets the plugins' on_event_callback
        replace what is emitted."""
        stored = sync.just(event) if event.partial else self.persist(event)

        def hook(e: Event) -> Observable[Event]:
            return plugins.first("on_event_callback", invocation_context=ctx, event=e).pipe(
                ops.default_if_empty(e)
            )

        return stored.pipe(ops.flat_map(hook))

    def write_stop_records(
        self,
        context: Callable[[], InvocationContext | None],
        reason: str,
        code: str | None,
        author: str,
        records: list[Event] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Observable[Any]:
        """Waits for the append in flight, then answers the open calls (``{"error":
        reason}``) and, with a ``code``, stores the event that records the stop.

        Args:
            context: the invocation's context, asked once the append in flight is over;
                None when there is nothing to record (the user's message was not stored).
            reason: the error the open calls are answered with.
            code: ``CANCELLED``, ``TIMEOUT`` or ``BUDGET_EXCEEDED``; None answers the calls
                only.
            author: the root agent (the stop record's author when no agent spoke).
            records: receives the events written.
            metadata: the stop record's ``custom_metadata``.
        """

        def write(_: Any) -> Observable[Any]:
            ctx = context()
            if ctx is None:
                return sync.empty()
            events = self.stop_records(ctx.invocation_id, reason, code, author, metadata)
            if ctx.services.is_resumable and code is not None:
                # Resuming decides about calls a stop cut off (run an idempotent tool again,
                # else answer "interrupted"): leave them open; only record the stop.
                events = [e for e in events if not e.get_function_responses()]
            if records is not None:
                records.extend(events)
            return rx.from_iterable(events).pipe(
                ops.concat_map(lambda e: self._service.append_event(ctx.session, e))
            )

        return self.inflight.pipe(
            ops.ignore_elements(),
            ops.catch(lambda *_: sync.empty()),
            ops.concat(rx.defer(write)),
        )
