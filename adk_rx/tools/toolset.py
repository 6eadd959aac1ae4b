"""BaseToolset: a set of tools that comes from elsewhere, asked for at every model step.

A subclass implements :meth:`BaseToolset.get_tools`; the flow calls
:meth:`BaseToolset.resolve_tools` when it builds each request, so the list may change from one
step to the next::

    step 1: get_tools -> [a, b]        request declares a, b
    step 2: get_tools -> [a, b, c]     request declares a, b, c

``tool_filter`` keeps some tools (a list of names, or a predicate
``(tool, readonly_context) -> bool``); ``tool_name_prefix`` renames each kept tool to
``{prefix}_{name}``. The filter sees the original names.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import ReadonlyContext
from adk_rx.rx import from_async
from adk_rx.rx._engine.sync import just
from adk_rx.tools.base import BaseTool, check_tool_name

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.context import InvocationContext, ToolContext
    from adk_rx.models.llm_request import LlmRequest

__all__ = [
    "BaseToolset",
    "ToolFilter",
    "ToolsResult",
    "toolset_tools",
]

ToolFilter = Sequence[str] | Callable[[BaseTool, "ReadonlyContext"], bool]
"""Which tools of a toolset the model sees: names, or a predicate."""

ToolsResult = Sequence[BaseTool] | Awaitable[Sequence[BaseTool]] | Observable[Any]
"""What :meth:`BaseToolset.get_tools` may return."""


class BaseToolset(ABC):
    """A source of tools for an :class:`~adk_rx.agents.llm.LlmAgent` (``tools=[toolset]``).

    Args:
        tool_filter: the names of the tools to keep, or a predicate
            ``(tool, readonly_context) -> bool``; None keeps every tool.
        tool_name_prefix: when given, each tool is renamed ``{prefix}_{name}``.
    """

    def __init__(
        self, *, tool_filter: ToolFilter | None = None, tool_name_prefix: str | None = None
    ) -> None:
        if tool_name_prefix is not None:
            check_tool_name(f"{tool_name_prefix}_x")
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix
        self._renamed: dict[int, BaseTool] = {}

    @abstractmethod
    def get_tools(self, readonly_context: ReadonlyContext | None = None) -> ToolsResult:
        """The toolset's tools now: a list, an awaitable of one, or an Observable.

        An Observable may emit the tools one by one or as lists.
        """

    def close(self) -> Any:
        """Releases what the toolset holds (connections, processes); by default nothing.

        May return None, an awaitable or an Observable; ``Runner.close()`` waits for it.
        """
        return None

    def resolve_tools(self, readonly_context: ReadonlyContext) -> Observable[list[BaseTool]]:
        """A cold Single of the tools the model sees this step (filtered, prefixed)."""
        try:
            result = self.get_tools(readonly_context)
        except Exception as exc:
            return rx.throw(exc)
        if isinstance(result, Observable):
            source: Observable[Any] = result.pipe(ops.to_list())
        elif inspect.isawaitable(result):
            awaitable = result

            async def wait() -> Any:
                return await awaitable

            source = from_async(wait)
        else:
            return just(self._shape(result, readonly_context))
        return source.pipe(ops.map(lambda found: self._shape(_flatten(found), readonly_context)))

    def _shape(self, tools: Sequence[Any], readonly_context: ReadonlyContext) -> list[BaseTool]:
        kept: list[BaseTool] = []
        for tool in tools:
            if not isinstance(tool, BaseTool):
                raise TypeError(
                    f"{type(self).__name__}.get_tools returned {tool!r}, which is not a BaseTool"
                )
            if self._keeps(tool, readonly_context):
                kept.append(self._prefixed(tool))
        return kept

    def _keeps(self, tool: BaseTool, readonly_context: ReadonlyContext) -> bool:
        keep = self.tool_filter
        if keep is None:
            return True
        if callable(keep):
            return bool(keep(tool, readonly_context))
        return tool.name in keep

    def _prefixed(self, tool: BaseTool) -> BaseTool:
        if not self.tool_name_prefix:
            return tool
        renamed = self._renamed.get(id(tool))
        if renamed is None or renamed.inner is not tool:  # type: ignore[attr-defined]
            renamed = _Renamed(f"{self.tool_name_prefix}_{tool.name}", tool)
            self._renamed[id(tool)] = renamed
        return renamed

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def toolset_tools(agent: LlmAgent, ctx: InvocationContext) -> Observable[list[BaseTool]]:
    """A cold Single of the tools of every toolset of ``agent``, in order, for this step."""
    readonly = ReadonlyContext(ctx)
    return rx.concat(*(ts.resolve_tools(readonly) for ts in agent.toolsets)).pipe(
        ops.to_list(), ops.map(lambda lists: [tool for found in lists for tool in found])
    )


def _flatten(found: list[Any]) -> list[Any]:
    flat: list[Any] = []
    for item in found:
        if isinstance(item, list | tuple):
            flat.extend(item)
        else:
            flat.append(item)
    return flat


class _Renamed(BaseTool):
    """A toolset's tool under its prefixed name; everything else is the inner tool's."""

    def __init__(self, name: str, inner: BaseTool) -> None:  # pyright: ignore[reportMissingSuperCall]
        # Every attribute of the inner tool, whatever it is (idempotence, deadline,
        # bulkhead, one added later): nothing is forwarded by name.
        vars(self).update(vars(inner))
        self.name = check_tool_name(name)
        self.inner = inner
        declaration = inner.declaration()
        self._declaration = (
            None if declaration is None else declaration.model_copy(update={"name": name})
        )

    @property
    def reports_progress(self) -> bool:  # pyright: ignore[reportIncompatibleVariableOverride]
        return getattr(self.inner, "reports_progress", False)

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Runs the inner tool."""
        return self.inner.run_async(args=args, tool_context=tool_context)

    def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> Observable[None] | None:
        """Declares the tool under its prefixed name."""
        llm_request.append_tools([self])
        return None
