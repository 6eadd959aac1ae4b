"""BaseNode, the START sentinel and JoinNode: the vertices of a workflow graph.

A node turns its input into items (``_run_impl``): events, or plain values that become its
output. The engine (``node_run.py``) gives each run its context, its retries and timeout,
and stamps its events with the node's path; nodes never see each other.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.errors import ConfigurationError
from adk_rx.workflow.items import items_of
from adk_rx.workflow.retry import RetryConfig

if TYPE_CHECKING:
    from adk_rx.workflow.context import Context

__all__ = ["START", "BaseNode", "JoinNode"]


def check_node_name(name: Any) -> str:
    """``name`` when it is a Python identifier; raises ConfigurationError otherwise."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigurationError(f"Node name '{name}' must be a valid Python identifier.")
    return name


class BaseNode:
    """A vertex of a workflow graph: turns its input into events and an output.

    Subclasses implement :meth:`_run_impl`, returning (or yielding, or emitting) items: an
    ``Event``, ``None`` (skipped), a ``types.Content`` (an event with that content), or any
    other value, which becomes the node's output (``Event.output``; a pydantic model is
    dumped to a dict). A node produces at most one output per run.

    Args:
        name: a Python identifier, unique in its graph.
        description: what the node does.
        rerun_on_resume: run again (instead of taking the answer as output) when a resumed
            invocation answers what the node waited for.
        wait_for_output: a run that ends without output or route leaves the node waiting
            (its successors are not triggered) until a later run produces one.
        retry_config: try a failed run again (None: a failure fails the workflow).
        timeout: seconds a run may take; past it the run is cancelled and fails with
            :class:`~adk_rx.errors.NodeTimeoutError` (which a retry config may retry).
    """

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        rerun_on_resume: bool = False,
        wait_for_output: bool = False,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ConfigurationError(f"timeout of node {name!r} must be > 0, got {timeout}")
        self.name = check_node_name(name)
        self.description = description
        self.rerun_on_resume = rerun_on_resume
        self.wait_for_output = wait_for_output
        self.retry_config = retry_config
        self.timeout = timeout

    @property
    def requires_all_predecessors(self) -> bool:
        """True for a join: it runs once every predecessor has completed."""
        return False

    def run(self, ctx: Context, node_input: Any) -> Observable[Any]:
        """The cold Observable of one run's items."""
        return items_of(lambda: self._run_impl(ctx=ctx, node_input=node_input))

    def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:
        """The node's own behaviour: a value, a generator, a coroutine, an async generator
        or an Observable of items (see the class docstring)."""
        raise NotImplementedError(f"_run_impl for {type(self).__name__} is not implemented.")

    def model_copy(self, *, update: dict[str, Any] | None = None) -> BaseNode:
        """A copy with some fields changed (google-adk's name for it)."""
        copied = copy.copy(self)
        for field, value in (update or {}).items():
            if field == "name":
                value = check_node_name(value)
            setattr(copied, field, value)
        return copied

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class _Start(BaseNode):
    def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:
        raise ConfigurationError("START marks where a workflow begins; it never runs")


START: BaseNode = _Start(name="__START__")
"""The entry of every graph: its successors receive the workflow's input (the user's
message when the workflow is the agent of a turn). Edges from START carry no route."""


class JoinNode(BaseNode):
    """Waits for every predecessor, then outputs ``{predecessor name: its output}``.

    A join fires once each predecessor has completed since it last fired, so in a loop it
    waits for every predecessor's next run.
    """

    @property
    def requires_all_predecessors(self) -> bool:
        """A join waits for all of them."""
        return True

    def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:
        return node_input
