"""The schedule of one workflow run: which node runs next, with which input, on which branch.

Plain state, no Rx and no threads: the engine calls it from one place at a time (the
projection of ``expand``), so it needs no lock. google-adk 2.13's rules:

* a completed run triggers its successors (routed edges by the route it emitted, with
  ``DEFAULT_ROUTE`` when no other route matched), each with the run's output as input; when
  it triggers more than one, each runs on a sub-branch ``<branch>.<node>@<run>``;
* a join fires once every predecessor completed since it last fired, with
  ``{predecessor: output}`` and the branches' common prefix;
* a node runs one trigger at a time (the next one waits for the run to end), triggers are
  taken in the order they arrived, and at most ``max_concurrency`` runs go on at once;
* a run that ends waiting (a pending long-running call, or ``wait_for_output`` without an
  output) triggers nothing.

Resuming, :meth:`Schedule.replay` plays the stored completions back in order, which leaves
exactly the triggers that were still to run.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from adk_rx.workflow.graph import Graph
from adk_rx.workflow.nodes import START

__all__ = ["Schedule", "Start"]


@dataclass(frozen=True, slots=True)
class _Trigger:
    input: Any
    use_sub_branch: bool
    branch: str | None


@dataclass(frozen=True, slots=True)
class Start:
    """A node run to start: its node, run id, input and branch."""

    name: str
    run_id: str
    input: Any
    branch: str | None


def _common_prefix(branches: list[str]) -> str:
    paths = [b.split(".") if b else [] for b in branches]
    prefix: list[str] = []
    for segments in zip(*paths, strict=False):
        if len(set(segments)) != 1:
            break
        prefix.append(segments[0])
    return ".".join(prefix)


class Schedule:
    """The triggers, joins and running nodes of one workflow run.

    Args:
        graph: the workflow's graph.
        branch: the branch the workflow runs on.
        max_concurrency: graph-scheduled runs at once (None or <= 0: no limit).
    """

    def __init__(self, graph: Graph, branch: str | None, max_concurrency: int | None) -> None:
        self.graph = graph
        self.branch = branch
        self.limit = max_concurrency if max_concurrency and max_concurrency > 0 else None
        self._buffer: OrderedDict[str, list[_Trigger]] = OrderedDict()
        self._running: set[str] = set()
        self._completed: set[str] = set()
        self.outputs: dict[str, Any] = {}
        self._branches: dict[str, str] = {}
        self._arrivals: dict[str, set[str]] = {}
        self._runs: dict[str, int] = {}

    # -- triggers ------------------------------------------------------------------------------
    def seed(self, node_input: Any) -> None:
        """Triggers START's successors with the workflow's input."""
        targets = self.graph.next_nodes(START.name, None)
        self.outputs[START.name] = node_input
        self._branches[START.name] = self.branch or ""
        self._completed.add(START.name)
        for target in targets:
            if self.graph.by_name[target].requires_all_predecessors:
                self._arrive(target, START.name)
            else:
                self._push(target, _Trigger(node_input, len(targets) > 1, None))

    def complete(self, name: str, output: Any, route: Any, branch: str | None) -> None:
        """Records a completed run of ``name`` and triggers its successors."""
        self._running.discard(name)
        self._completed.add(name)
        if output is None:
            self.outputs.pop(name, None)
        else:
            self.outputs[name] = output
        self._branches[name] = branch or ""
        targets = self.graph.next_nodes(name, route)
        for target in targets:
            if self.graph.by_name[target].requires_all_predecessors:
                self._arrive(target, name)
            else:
                self._push(target, _Trigger(output, len(targets) > 1, branch))

    def wait(self, name: str) -> None:
        """Records a run of ``name`` that ended waiting: nothing is triggered."""
        self._running.discard(name)

    def _push(self, target: str, trigger: _Trigger) -> None:
        self._buffer.setdefault(target, []).append(trigger)

    def _arrive(self, join: str, predecessor: str) -> None:
        arrivals = self._arrivals.setdefault(join, set())
        arrivals.add(predecessor)
        predecessors = self.graph.predecessors.get(join, [])
        if not all(p == START.name or p in arrivals for p in predecessors):
            return
        del self._arrivals[join]
        inputs = {p: self.outputs.get(p) for p in predecessors}
        branch = _common_prefix([self._branches.get(p, "") for p in predecessors])
        self._push(join, _Trigger(inputs, False, branch))

    # -- starts --------------------------------------------------------------------------------
    def ready(self) -> list[Start]:
        """Pops the triggers that may start now, in arrival order; their nodes are running."""
        starts: list[Start] = []
        for name in list(self._buffer):
            if name in self._running:
                continue
            if self.limit is not None and len(self._running) >= self.limit:
                break
            trigger = self._pop(name)
            self._running.add(name)
            starts.append(self._start(name, trigger))
        return starts

    def _pop(self, name: str) -> _Trigger:
        queue = self._buffer[name]
        trigger = queue.pop(0)
        if not queue:
            del self._buffer[name]
        return trigger

    def _start(self, name: str, trigger: _Trigger) -> Start:
        run = self._runs.get(name, 0) + 1
        self._runs[name] = run
        base = trigger.branch if trigger.branch is not None else self.branch
        branch = base
        if trigger.use_sub_branch:
            segment = f"{name}@{run}"
            branch = f"{base}.{segment}" if base else segment
        elif branch == "":
            branch = None
        return Start(name, str(run), trigger.input, branch)

    # -- resuming ------------------------------------------------------------------------------
    def replay(self, name: str, output: Any, route: Any, branch: str | None) -> None:
        """Plays back a stored completion of ``name``: its trigger is taken, its run counted
        and its successors triggered, as when it first ran."""
        if name in self._buffer:
            self._start(name, self._pop(name))
        self.complete(name, output, route, branch)

    @property
    def is_idle(self) -> bool:
        """True when nothing runs and no trigger waits."""
        return not self._running and not self._buffer

    def terminal_outputs(self) -> list[Any]:
        """The outputs of terminal nodes that produced one."""
        return [self.outputs[n] for n in self.graph.terminal_names if n in self.outputs]
