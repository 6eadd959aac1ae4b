"""One run of a node: its attempts, its timeout, its events stamped, its end.

The run is a cold Observable of the node's events followed by one :class:`Done`::

    attempt(1) = defer(node.run(ctx, input))          a fresh Context per attempt
                   .map(to_event).concat(flush)        values become output events; a route
                                                       or output set on ctx, or state writes
                                                       left over, become one last event
                   .timeout(deadline, timer)           the whole attempt, on the timer scheduler
                   .catch(e -> error event,            google-adk's per-attempt error event
                          then timer(delay).flat_map(attempt(n + 1)) if the retry config
                          allows it, else the error)
    run        = attempt(1).concat(Done)

Everything waits on the timer scheduler (``ctx.services.timer_scheduler``), so a test with a
``TestScheduler`` runs retries and timeouts in virtual time. Disposing the run disposes the
attempt in flight (an async node's task is cancelled, an agent node's model call too) and
the dynamic children it started; a run whose workflow was stopped never calls the node.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any, cast

import reactivex as rx
from google.genai import types
from pydantic import BaseModel
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.errors import NodeTimeoutError
from adk_rx.events import EMPTY_ACTIONS, Event, EventActions, NodeInfo
from adk_rx.resumability.progress import PendingCalls
from adk_rx.rx import with_sink
from adk_rx.rx._engine import sync
from adk_rx.workflow.context import Context, Done
from adk_rx.workflow.items import is_lazy, items_of
from adk_rx.workflow.nodes import BaseNode
from adk_rx.workflow.retry import retry_delay, should_retry

__all__ = ["NodeRun", "Passed"]


_present = cast(
    Callable[[Observable[Event | None]], Observable[Event]],
    ops.filter(lambda event: event is not None),
)


class Passed:
    """A dynamic child's event passed through its parent's stream as it is."""

    __slots__ = ("event",)

    def __init__(self, event: Event) -> None:
        self.event = event


def _with_delta(ctx: Context, event: Event) -> Event:
    """An event a node yielded, with the state writes not yet carried attached."""
    if not ctx.actions.state_delta:
        return event
    merged = {**event.actions.state_delta, **ctx.take_delta()}
    return event.replace(actions=event.actions.replace(state_delta=merged))


class NodeRun:
    """Runs nodes of one workflow run: stamps, retries, timeouts and ends.

    Args:
        author: the workflow's name (the author of events that have none).
        ctx: the workflow's invocation context.
        timer: where delays and deadlines wait.
        stopped: True once the workflow run was disposed (no node starts after that).
        dynamic: runs a dynamic child (``Context.run_node``).
    """

    def __init__(
        self,
        author: str,
        ctx: InvocationContext,
        timer: abc.SchedulerBase,
        stopped: Callable[[], bool],
        dynamic: Callable[[Context, Any, Any, bool], Observable[Any]],
    ) -> None:
        self.author = author
        self.ctx = ctx
        self.timer = timer
        self.stopped = stopped
        self.dynamic = dynamic

    def start(
        self,
        node: BaseNode,
        run_id: str,
        path: str,
        node_input: Any,
        branch: str | None,
        output_for: tuple[str, ...] = (),
    ) -> Observable[Any]:
        """:meth:`run`, started now: a node whose code answers with a plain value (a plain
        function, a join) runs here, as plain calls, and its events and end are returned as
        items already here; anything else is the Rx run of :meth:`run`."""
        ictx = self.ctx if branch == self.ctx.branch else self.ctx.copy(branch=branch)
        plain = node.timeout is None and node.retry_config is None
        if not plain or type(node).run is not BaseNode.run or self.stopped() or ictx.cancelled:
            return self.run(node, run_id, path, node_input, branch, output_for)
        ctx = Context(ictx, node=node, node_path=path, run_id=run_id, dynamic=self.dynamic)
        try:
            result = node._run_impl(ctx=ctx, node_input=node_input)  # pyright: ignore[reportPrivateUsage]
            if is_lazy(result):  # a generator, a coroutine, an Observable: the Rx run
                first = (ctx, items_of(lambda: result))
                return self.run(node, run_id, path, node_input, branch, output_for, first)
            events = [e for e in (self._stamp(ctx, result, output_for),) if e is not None]
            flushed = self._flushed(ctx, output_for)
            if flushed is not None:
                events.append(flushed)
        except Exception as exc:  # the run failed: its error event, then the error
            ctx.close()
            return rx.concat(sync.just(self._error_event(path, branch, exc)), rx.throw(exc))
        ctx.close()
        pending = PendingCalls()
        for event in events:
            pending.observe(event)
        waiting = pending.paused or (node.wait_for_output and ctx.output is None and not ctx.route)
        end = Done(node.name, run_id, path, ctx.output, ctx.route, ictx.branch, waiting)
        return sync.items([*events, end])

    def run(
        self,
        node: BaseNode,
        run_id: str,
        path: str,
        node_input: Any,
        branch: str | None,
        output_for: tuple[str, ...] = (),
        first: tuple[Context, Observable[Any]] | None = None,
    ) -> Observable[Any]:
        """The events of one run of ``node``, then its :class:`Done`.

        ``output_for``: paths of the enclosing nodes this run's output also stands for (a
        terminal node's output is its workflow's). ``first``: the context and items of a
        first attempt already started (by :meth:`start`).
        """
        ictx = self.ctx if branch == self.ctx.branch else self.ctx.copy(branch=branch)
        last: list[Context] = []
        pending = PendingCalls()

        def attempt(number: int) -> Observable[Any]:
            def build(_: Any) -> Observable[Any]:
                started = first if number == 1 else None
                if started is None and (self.stopped() or ictx.cancelled):
                    return rx.empty()
                ctx = (
                    started[0]
                    if started is not None
                    else Context(
                        ictx,
                        node=node,
                        node_path=path,
                        run_id=run_id,
                        attempt_count=number,
                        dynamic=self.dynamic,
                    )
                )
                last[:] = [ctx]

                def body(sink: Callable[[Any], None]) -> Observable[Any]:
                    ctx.attach(lambda event: sink(Passed(event)))
                    return started[1] if started is not None else node.run(ctx, node_input)

                stamped: Observable[Event] = with_sink(body).pipe(
                    ops.map(lambda item: self._stamp(ctx, item, output_for)),
                    _present,
                    ops.concat(rx.defer(lambda _: self._flush(ctx, output_for))),
                    ops.do_action(pending.observe),
                    ops.finally_action(ctx.close),
                )
                if node.timeout is None:
                    return stamped
                deadline = self.timer.now + timedelta(seconds=node.timeout)
                late = rx.defer(
                    lambda _: rx.throw(NodeTimeoutError(node_name=node.name, timeout=node.timeout))  # type: ignore[arg-type]
                )
                return stamped.pipe(ops.timeout(deadline, other=late, scheduler=self.timer))

            def failed(error: Exception, _: Any) -> Observable[Any]:
                event = self._error_event(path, branch, error)
                if not should_retry(error, node.retry_config, number):
                    return rx.concat(rx.just(event), rx.throw(error))
                assert node.retry_config is not None
                delay = retry_delay(node.retry_config, number)
                again = rx.timer(delay, scheduler=self.timer).pipe(
                    ops.flat_map(lambda _: attempt(number + 1))
                )
                return rx.concat(rx.just(event), again)

            return rx.defer(build).pipe(ops.catch(failed))

        def done(_: Any) -> Observable[Any]:
            if not last:
                return rx.empty()  # stopped before it started
            ctx = last[0]
            waiting = pending.paused or (
                node.wait_for_output and ctx.output is None and ctx.route is None
            )
            end = Done(node.name, run_id, path, ctx.output, ctx.route, ictx.branch, waiting)
            return rx.just(end)

        return attempt(1).pipe(ops.concat(rx.defer(done)))

    # -- events --------------------------------------------------------------------------------
    def _stamp(self, ctx: Context, item: Any, output_for: tuple[str, ...]) -> Event | None:
        if isinstance(item, Passed):
            return item.event  # a dynamic child's event: stamped by its own run
        if not isinstance(item, Event):
            return self._new_event(ctx, item, output_for)
        event = _with_delta(ctx, item)
        path = ctx.node_path
        info = event.node_info
        changes: dict[str, Any] = {}
        if not event.author:
            changes["author"] = self.author
        if not event.invocation_id:
            changes["invocation_id"] = self.ctx.invocation_id
        if event.branch is None and ctx.branch is not None:
            changes["branch"] = ctx.branch
        own = info is None or info.path is None or info.path == path
        if own:
            stamped = NodeInfo(
                path=path,
                output_for=(path, *output_for) if event.output is not None else None,
                message_as_output=info.message_as_output if info is not None else None,
            )
            if stamped != info:
                changes["node_info"] = stamped
        elif event.output is not None and info is not None and path in (info.output_for or ()):
            changes["node_info"] = NodeInfo(
                path=info.path,
                output_for=(*(info.output_for or ()), *output_for),
                message_as_output=info.message_as_output,
            )
            own = True  # the nested workflow's result is this node's output
        if changes:
            event = event.replace(**changes)
        if own:
            ctx.track(event)
        return event

    def _new_event(self, ctx: Context, item: Any, output_for: tuple[str, ...]) -> Event | None:
        """google-adk's normalization of a value a node yielded (None: nothing, unless state
        was written; a Content: an event with it; anything else: the output), stamped."""
        delta = ctx.take_delta() if ctx.actions.state_delta else None
        if item is None and not delta:
            return None
        actions = EventActions(state_delta=delta) if delta else EMPTY_ACTIONS
        content = item if isinstance(item, types.Content) else None
        output = None if content is not None else item
        if isinstance(output, BaseModel):
            output = output.model_dump()
        path = ctx.node_path
        event = Event(
            author=self.author,
            invocation_id=self.ctx.invocation_id,
            branch=ctx.branch,
            content=content,
            actions=actions,
            output=output,
            node_info=NodeInfo(
                path=path, output_for=(path, *output_for) if output is not None else None
            ),
        )
        ctx.track(event)
        return event

    def _flush(self, ctx: Context, output_for: tuple[str, ...]) -> Observable[Any]:
        event = self._flushed(ctx, output_for)
        return sync.empty() if event is None else sync.just(event)

    def _flushed(self, ctx: Context, output_for: tuple[str, ...]) -> Event | None:
        """The last event of a run: an output or route set on the context and not carried
        by an event yet, and state writes left over (None when there is nothing)."""
        output, route = ctx.unflushed()
        delta = ctx.take_delta()
        if output is None and route is None and not delta:
            return None
        event = Event(output=output, actions=EventActions(state_delta=delta, route=route))
        return self._stamp(ctx, event, output_for)  # an Event: stamped, not normalized

    def _error_event(self, path: str, branch: str | None, error: Exception) -> Event:
        status = getattr(error, "status", None)
        return Event(
            author=self.author,
            invocation_id=self.ctx.invocation_id,
            branch=branch,
            error_code=status if isinstance(status, str) else type(error).__name__,
            error_message=str(error),
            node_info=NodeInfo(path=path),
        )
