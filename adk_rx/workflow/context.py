"""Context: what a workflow node's code sees while one run of it goes on.

It is a :class:`~adk_rx.context.CallbackContext` (state writes become the next event's
``state_delta``, artifacts) plus the node's place in the graph (``node_path``, ``run_id``,
``attempt_count``), its result (``output``, ``route``: set them, or return / yield them) and
:meth:`Context.run_node`, which runs another node as a child of this run.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reactivex import Observable
from reactivex.disposable import CompositeDisposable, SingleAssignmentDisposable

from adk_rx.context import CallbackContext, InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event, RouteValue

if TYPE_CHECKING:
    from adk_rx.workflow.nodes import BaseNode

__all__ = ["Context", "Done"]


class Done:
    """The end of one node run, as the engine passes it on: output, route, branch, waiting."""

    __slots__ = ("branch", "name", "output", "path", "route", "run_id", "waiting")

    def __init__(
        self,
        name: str,
        run_id: str,
        path: str,
        output: Any,
        route: Any,
        branch: str | None,
        waiting: bool,
    ) -> None:
        self.name = name
        self.run_id = run_id
        self.path = path
        self.output = output
        self.route = route
        self.branch = branch
        self.waiting = waiting


DynamicRunner = Callable[["Context", Any, Any, bool], Observable[Any]]
"""(parent context, node-like, input, use_sub_branch) -> the child's events, then its Done."""


class Context(CallbackContext):
    """The context of one run of a workflow node.

    Attributes:
        node: the node that runs.
        node_path: its path, ``"<workflow>@<run>/<node>@<run>"``.
        run_id: which run of the node this is in its workflow (``"1"``, ``"2"``...).
        attempt_count: which attempt of the run (1-based; a retry counts up).
        resume_inputs: answers a resumed invocation brought, by interrupt id.
    """

    __slots__ = (
        "_children",
        "_dynamic",
        "_output",
        "_output_emitted",
        "_route",
        "_route_emitted",
        "_sink",
        "attempt_count",
        "node",
        "node_path",
        "resume_inputs",
        "run_id",
    )

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        node: BaseNode,
        node_path: str,
        run_id: str,
        attempt_count: int = 1,
        dynamic: DynamicRunner | None = None,
    ) -> None:
        super().__init__(invocation_context)
        self.node = node
        self.node_path = node_path
        self.run_id = run_id
        self.attempt_count = attempt_count
        self.resume_inputs: dict[str, Any] = {}
        self._output: Any = None
        self._output_emitted = False
        self._route: RouteValue | list[RouteValue] | None = None
        self._route_emitted = False
        self._dynamic = dynamic
        self._sink: Callable[[Any], None] | None = None
        self._children = CompositeDisposable()

    # -- the run's result ----------------------------------------------------------------------
    @property
    def output(self) -> Any:
        """The run's output: set it (once), or return / yield the value."""
        return self._output

    @output.setter
    def output(self, value: Any) -> None:
        if self._output is not None:
            raise ConfigurationError("Output already set. A node can produce at most one output.")
        self._output = value

    @property
    def route(self) -> RouteValue | list[RouteValue] | None:
        """The route(s) the run takes: its successors on matching routed edges run next."""
        return self._route

    @route.setter
    def route(self, value: RouteValue | list[RouteValue]) -> None:
        self._route = value
        self._route_emitted = False

    @property
    def branch(self) -> str | None:
        """The branch the run's events are in (a fan-out gives each target its own)."""
        return self._ctx.branch

    @property
    def session(self) -> Any:
        """The invocation's session view."""
        return self._ctx.session

    # -- engine side ---------------------------------------------------------------------------
    def take_delta(self) -> dict[str, Any]:
        """The state writes not yet carried by an event (and forget them)."""
        delta = dict(self.actions.state_delta)
        self.actions.state_delta.clear()
        return delta

    def track(self, event: Event) -> None:
        """Notes the output and route an event of this run carries."""
        if event.output is not None:
            if self._output is not None and self._output is not event.output:
                raise ConfigurationError(
                    "Output already set. A node can produce at most one output."
                )
            self._output = event.output
            self._output_emitted = True
        elif event.node_info is not None and event.node_info.message_as_output:
            self._output_emitted = True
        if event.actions.route is not None:
            self._route = event.actions.route
            self._route_emitted = True

    def set_message_output(self, value: Any) -> None:
        """An agent's answer, carried as its event's content, is the run's output."""
        self._output = value
        self._output_emitted = True

    def unflushed(self) -> tuple[Any, Any]:
        """(output, route) set on the context but not carried by any event yet."""
        output = None if self._output_emitted else self._output
        route = None if self._route_emitted else self._route
        return output, route

    def attach(self, sink: Callable[[Any], None]) -> None:
        """Where a dynamic child's events go: into this run's stream."""
        self._sink = sink

    def close(self) -> None:
        """Cancels every dynamic child still running (the run ended or was disposed)."""
        self._children.dispose()

    # -- dynamic nodes -------------------------------------------------------------------------
    def run_node(
        self, node: Any, node_input: Any = None, *, use_sub_branch: bool = False
    ) -> asyncio.Future[Any]:
        """Runs ``node`` (a node, function or agent) as a child of this run; await its output.

        The child's events appear in the workflow's stream as they happen, with the path
        ``<this node's path>/<child>@<n>``; disposing the workflow cancels it. Call it from
        an ``async def`` node and ``await`` it directly.

        Raises:
            ConfigurationError: outside a running workflow node's event loop.
        """
        if self._dynamic is None or self._sink is None:
            raise ConfigurationError("run_node needs a running workflow node")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise ConfigurationError(
                "await ctx.run_node(...) from an async def node (it runs on the event loop)"
            ) from None
        future: asyncio.Future[Any] = loop.create_future()
        sink = self._sink
        lock = threading.Lock()

        def settle(fn: Callable[[], None]) -> None:
            with lock:
                if not future.done():
                    loop.call_soon_threadsafe(lambda: None if future.done() else fn())

        def on_next(item: Any) -> None:
            if isinstance(item, Done):
                settle(lambda: future.set_result(item.output))
            else:
                sink(item)

        def on_error(error: Exception) -> None:
            settle(lambda: future.set_exception(error))

        child = SingleAssignmentDisposable()
        self._children.add(child)
        child.disposable = self._dynamic(self, node, node_input, use_sub_branch).subscribe(
            on_next, on_error
        )
        return future
