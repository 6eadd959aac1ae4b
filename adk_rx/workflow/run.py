"""One run of a Workflow's graph, as one stream grown by ``expand``.

The stream's items are node starts, events and node ends. ``expand`` emits each and feeds
it back: a start becomes the node's run (``node_run.py``: its events, then its end), an end
tells the :class:`~adk_rx.workflow.schedule.Schedule` what completed and becomes the starts
it made ready. Fan-out is simply several runs merged; a join is the schedule holding a
trigger until every predecessor arrived; ``max_concurrency`` is the schedule releasing
no more starts than that::

    START -> a -> (b, c) -> join:

    starts:   a-------------b--c--------------join---------|
    events:     a.out         b.out  c.out         join.out
    ends:            a.end          b.end  c.end            join.end

Disposing the subscription disposes every node run in flight and starts no other. In a
resumable app each start and end is also recorded (``progress.py``), and a resumed run plays
the recorded ends back instead of running those nodes again. When the run streams
(``StreamingMode.SSE``), each node start and end is also announced by a partial event (never
stored) with ``custom_metadata["workflow_node"] = {"status": "running" | "done"}``, so a UI
can show which nodes run now.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops
from reactivex.scheduler import TimeoutScheduler

from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event, NodeInfo
from adk_rx.run_config import StreamingMode
from adk_rx.rx import expand
from adk_rx.rx._engine import sync
from adk_rx.workflow.build import build_node
from adk_rx.workflow.context import Context, Done
from adk_rx.workflow.node_run import NodeRun
from adk_rx.workflow.progress import completed_runs, end_record, start_record
from adk_rx.workflow.schedule import Schedule, Start

if TYPE_CHECKING:
    from adk_rx.workflow.workflow import Workflow

__all__ = ["WORKFLOW_NODE", "GraphRun"]

WORKFLOW_NODE = "workflow_node"
"""The ``custom_metadata`` key of a streamed node start or end."""

_EMPTY: Observable[Any] = sync.empty()


class GraphRun:
    """The run of ``workflow``'s graph in ``ctx``, from ``node_input``, at node path ``path``."""

    def __init__(self, workflow: Workflow, ctx: InvocationContext, node_input: Any, path: str):
        assert workflow.graph is not None
        self.workflow = workflow
        self.ctx = ctx
        self.path = path
        self.node_input = node_input
        self.schedule = Schedule(workflow.graph, ctx.branch, workflow.max_concurrency)
        self._stopped = threading.Event()
        self._dynamic_runs: dict[str, int] = {}
        self._dynamic_lock = threading.Lock()
        timer = ctx.services.timer_scheduler or TimeoutScheduler.singleton()
        self.nodes = NodeRun(workflow.name, ctx, timer, self._stopped.is_set, self._run_dynamic)
        self.resumable = ctx.services.is_resumable
        self.streaming = ctx.run_config.streaming_mode is not StreamingMode.NONE

    def events(self) -> Observable[Event]:
        """The cold-at-subscribe stream of the graph's events."""
        self.schedule.seed(self.node_input)
        if self.ctx.resume is not None:
            for record in completed_runs(self.ctx, self.workflow.name, self.path):
                self.schedule.replay(
                    record["node"], record.get("output"), record.get("route"), record.get("branch")
                )
        first: list[Any] = list(self.schedule.ready())
        return rx.from_iterable(first).pipe(
            expand(self._project),
            ops.filter(lambda item: isinstance(item, Event)),
            ops.concat(rx.defer(lambda _: self._finish())),
            ops.finally_action(self._stopped.set),
        )

    # -- the feedback ------------------------------------------------------------------------
    def _project(self, item: Any) -> Observable[Any]:
        if isinstance(item, Start):
            return self._start(item)
        if isinstance(item, Done):
            return self._end(item)
        return _EMPTY

    def _start(self, start: Start) -> Observable[Any]:
        graph = self.schedule.graph
        node = graph.by_name[start.name]
        path = f"{self.path}/{start.name}@{start.run_id}"
        terminal = (self.path,) if start.name in graph.terminal_names else ()
        run = self.nodes.start(node, start.run_id, path, start.input, start.branch, terminal)
        before: list[Event] = []
        if self.resumable:
            before.append(start_record(self.ctx, self.workflow.name, self.path, start))
        if self.streaming:
            before.append(self._marker(path, start.branch, "running"))
        return rx.concat(sync.items(before), run) if before else run

    def _end(self, done: Done) -> Observable[Any]:
        if done.waiting:
            self.schedule.wait(done.name)
        else:
            self.schedule.complete(done.name, done.output, done.route, done.branch)
        starts: list[Any] = list(self.schedule.ready())
        if self.resumable:
            starts.insert(0, end_record(self.ctx, self.workflow.name, self.path, done))
        if self.streaming:
            status = "waiting" if done.waiting else "done"
            starts.insert(0, self._marker(done.path, done.branch, status))
        return sync.items(starts) if starts else _EMPTY

    def _marker(self, path: str, branch: str | None, status: str) -> Event:
        """The partial event announcing a node run's start or end to a streaming client."""
        return Event(
            author=self.workflow.name,
            invocation_id=self.ctx.invocation_id,
            branch=branch,
            partial=True,
            node_info=NodeInfo(path=path),
            custom_metadata={WORKFLOW_NODE: {"status": status}},
        )

    def _finish(self) -> Observable[Event]:
        outputs = self.schedule.terminal_outputs()
        if len(outputs) <= 1:
            return _EMPTY
        error = ConfigurationError(
            f"Workflow {self.workflow.name}: multiple terminal nodes produced output "
            f"({len(outputs)}). A workflow must have at most one terminal output."
        )
        event = Event(
            author=self.workflow.name,
            invocation_id=self.ctx.invocation_id,
            branch=self.ctx.branch,
            error_code="WorkflowConfigurationError",
            error_message=str(error),
            node_info=NodeInfo(path=self.path),
        )
        return rx.concat(rx.just(event), rx.throw(error))

    # -- dynamic nodes -----------------------------------------------------------------------
    def _run_dynamic(
        self, parent: Context, node_like: Any, node_input: Any, use_sub_branch: bool
    ) -> Observable[Any]:
        node = build_node(node_like)
        key = f"{parent.node_path}/{node.name}"
        with self._dynamic_lock:
            run = self._dynamic_runs.get(key, 0) + 1
            self._dynamic_runs[key] = run
        branch = parent.branch
        if use_sub_branch:
            segment = f"{node.name}@{run}"
            branch = f"{branch}.{segment}" if branch else segment
        return self.nodes.run(node, str(run), f"{key}@{run}", node_input, branch)
