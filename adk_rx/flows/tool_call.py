"""One function call: before-tool callbacks, the tool, error recovery, after-tool callbacks.

:func:`run_call` emits exactly one item: the response dict the model will see, or
:data:`NO_RESPONSE` (a long-running tool without a result yet). Errors the model can recover
from (invalid arguments, a tool that raises or times out, a result JSON cannot hold) become
``{"error": "..."}`` after the on-tool-error callbacks had their chance; a stop (cancellation)
errors the stream.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pydantic_core
import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.callbacks import callback_chain, has_callbacks
from adk_rx.context import InvocationContext, ToolContext
from adk_rx.errors import BudgetExceededError, StopError, ToolResultError
from adk_rx.flows.dedupe import earlier_answer, remember_answer
from adk_rx.flows.tool_errors import error_text, format_tool_error, log_tool_error
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.blocking import Blocking
from adk_rx.rx._engine.first_or_recover import first_or_recover
from adk_rx.rx._engine.settle import settle
from adk_rx.rx._engine.sync import SyncObservable
from adk_rx.rx._engine.sync import just as rx_just
from adk_rx.tools.base import tool_result_dict

if TYPE_CHECKING:
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.telemetry.span_watchers import ToolSpan
    from adk_rx.tools.base import BaseTool

__all__ = ["NO_RESPONSE", "Call", "is_governed", "is_plain", "run_call"]

NO_RESPONSE = object()  # a long-running tool that has no result yet


# Values JSON holds as they are: a dict of str keys to these is its own JSON form (what
# pydantic_core.to_jsonable_python would give, as a copy), with no conversion.
_AS_IS = frozenset({str, int, float, bool, type(None)})


class _ToolTimeout(Exception):
    """The call's deadline (the tool's ``timeout``, else RunConfig.tool_timeout) expired."""


def _jsonable(tool: BaseTool, value: Any) -> Any:
    """``value`` as JSON-compatible Python; ToolResultError when JSON cannot hold it."""
    if value is None or value is NO_RESPONSE:
        return value
    try:
        return pydantic_core.to_jsonable_python(value)
    except (pydantic_core.PydanticSerializationError, ValueError, TypeError) as exc:
        raise ToolResultError(
            f"tool {tool.name!r} returned a value JSON cannot hold ({type(value).__name__}): {exc}"
        ) from exc


def _error_text(item: Call, exc: BaseException) -> str:
    """The model-facing error text; the traceback goes to the log and to ``item.traceback``."""
    ctx = item.context
    log_tool_error(item.call.name, item.call.id, ctx.invocation_id, exc)
    item.traceback = format_tool_error(exc)
    return error_text(exc)


class Call:
    """One function call being executed (``traceback``: set when the tool raised)."""

    __slots__ = ("args", "call", "context", "deduplicated_from", "span", "tool", "traceback")

    def __init__(
        self, call: types.FunctionCall, tool: BaseTool | None, context: ToolContext
    ) -> None:
        self.call = call
        self.tool = tool
        self.context = context
        self.args: dict[str, Any] = dict(call.args or {})
        self.span: ToolSpan | None = None  # set while traced; told when the tool raises
        self.traceback: str | None = None
        self.deduplicated_from: str | None = None  # answered from this earlier call's response


def run_call(agent: LlmAgent, ctx: InvocationContext, item: Call) -> Observable[Any]:
    """Emits exactly one item: the response dict, or NO_RESPONSE; errors with
    BudgetExceededError when the invocation's budget allows no further tool run."""
    tool = item.tool
    if ctx.run_config.dedupe_tool_calls and tool is not None and tool.is_idempotent:
        return _deduplicated(agent, ctx, item)
    return _counted_call(agent, ctx, item)


def _deduplicated(agent: LlmAgent, ctx: InvocationContext, item: Call) -> Observable[Any]:
    earlier = earlier_answer(ctx, item)
    if earlier is not None:
        return sync.just(earlier)
    return _counted_call(agent, ctx, item).pipe(
        ops.do_action(lambda response: remember_answer(ctx, item, response))
    )


def _counted_call(agent: LlmAgent, ctx: InvocationContext, item: Call) -> Observable[Any]:
    tool = item.tool
    budget = ctx.shared.budget
    if budget.checks_tools and tool is not None:
        try:
            budget.count_tool_call()
        except BudgetExceededError as exc:
            return rx.throw(exc)
    if ctx.trace is not None:  # an execute_tool span around callbacks and tool
        return ctx.trace.execute_tool(item, lambda: _run_call(agent, ctx, item))
    if tool is not None and tool.timeout is None and tool.bulkhead is None and is_plain(agent, ctx):
        return _plain_call(agent, ctx, item, tool)  # (_run_call's test, one call less per call)
    return _run_call_with_callbacks(agent, ctx, item)


def _run_call(agent: LlmAgent, ctx: InvocationContext, item: Call) -> Observable[Any]:
    if item.tool is not None and is_plain(agent, ctx) and not is_governed(item.tool):
        return _plain_call(agent, ctx, item, item.tool)
    return _run_call_with_callbacks(agent, ctx, item)


def is_plain(agent: LlmAgent, ctx: InvocationContext) -> bool:
    """No tool callbacks and no tool timeout: a call is the tool plus result mapping."""
    plugins = ctx.services.plugins
    return (
        ctx.run_config.tool_timeout is None
        and not agent.before_tool_callback
        and not agent.after_tool_callback
        and (
            plugins is None
            or (
                "before_tool_callback" not in plugins.hooks
                and "after_tool_callback" not in plugins.hooks
            )
        )
    )


def is_governed(tool: BaseTool) -> bool:
    """The tool has its own deadline or a concurrency limit: its calls take the general path."""
    return tool.timeout is not None or tool.bulkhead is not None


def _plain_call(
    agent: LlmAgent, ctx: InvocationContext, item: Call, tool: BaseTool
) -> Observable[Any]:
    """The tool's first result mapped to its response, in one layer.

    Same as the general path without callbacks: one item (the response or NO_RESPONSE); an
    error goes through the on-tool-error callbacks to an ``{"error": ...}`` response; a stop
    (cancellation) errors the stream. A tool that answers while subscribed gives a
    SyncObservable (the call was a plain call); any other answer is continued as it runs.
    """

    def response(value: Any) -> Any:
        if type(value) is dict:  # (a loop, inline: the common answer costs no call)
            for key in value:  # pyright: ignore[reportUnknownVariableType]
                if type(key) is not str or type(value[key]) not in _AS_IS:
                    break
            else:  # JSON as it is: a copy, as the conversion would make
                return dict(value)  # pyright: ignore[reportUnknownArgumentType]
        if value is None and tool.is_long_running:
            return NO_RESPONSE
        return tool_result_dict(_jsonable(tool, value))

    def recover(exc: Exception) -> Observable[Any]:
        if isinstance(exc, StopError):
            return rx.throw(exc)
        return _tool_error(agent, ctx, item, tool, exc)

    if ctx.shared.cancelled:  # (ctx.cancelled, without the property)
        return rx.throw(StopError("invocation cancelled"))
    try:
        answered = tool.run_async(args=item.args, tool_context=item.context)
        if type(answered) is Blocking:  # a call on a pool: mapped (or recovered) by its job
            return answered.first_or_recover(response, recover)
        if type(answered) is not SyncObservable:  # (settle passes one on as it is)
            answered = settle(answered)
    except Exception as exc:
        return settle(recover(exc))
    if type(answered) is not SyncObservable:
        return first_or_recover(lambda: answered, response, recover)
    try:
        values = answered.items_now()
        return SyncObservable((response(values[0] if values else None),))
    except Exception as exc:
        return settle(recover(exc))


def _tool_error(
    agent: LlmAgent, ctx: InvocationContext, item: Call, tool: BaseTool, exc: Exception
) -> Observable[Any]:
    """On-tool-error callbacks (plugins first), else ``{"error": "..."}``."""
    if item.span is not None:
        item.span.tool_failed(exc)
    plugins = ctx.services.plugins
    tc = item.context
    if not has_callbacks(plugins, "on_tool_error_callback", agent.on_tool_error_callback):
        return rx_just({"error": _error_text(item, exc)})
    return callback_chain(
        plugins,
        "on_tool_error_callback",
        agent.on_tool_error_callback,
        (tool, item.args, tc, exc),
        tool=tool,
        tool_args=item.args,
        tool_context=tc,
        error=exc,
    ).pipe(
        ops.map(lambda value: _checked(tool, value)),
        ops.default_if_empty({"error": _error_text(item, exc)}),
    )


def _run_call_with_callbacks(
    agent: LlmAgent, ctx: InvocationContext, item: Call
) -> Observable[Any]:
    tool = item.tool
    tc = item.context
    if tool is None:
        known = ", ".join(sorted(agent.tools_by_name(ctx))) or "(none)"
        return sync.just(
            {"error": f"tool {item.call.name!r} does not exist; available tools: {known}"}
        )
    plugins = ctx.services.plugins

    def before() -> Observable[Any]:
        return callback_chain(
            plugins,
            "before_tool_callback",
            agent.before_tool_callback,
            (tool, item.args, tc),
            tool=tool,
            tool_args=item.args,
            tool_context=tc,
        )

    def run_tool() -> Observable[Any]:
        if ctx.cancelled:
            return rx.throw(StopError("invocation cancelled"))
        try:  # run_tool is called at subscribe time already: no defer needed
            obs = tool.run_async(args=item.args, tool_context=tc)
        except Exception as exc:
            obs = rx.throw(exc)
        if tool.bulkhead is not None:  # waits for a permit; the wait counts toward the deadline
            obs = obs.pipe(tool.bulkhead)
        timeout = tool.timeout if tool.timeout is not None else ctx.run_config.tool_timeout
        if timeout is not None:
            obs = obs.pipe(
                ops.timeout(
                    timeout, rx.throw(_ToolTimeout(timeout)), scheduler=ctx.services.timer_scheduler
                )
            )
        return obs.pipe(
            ops.take(1),
            ops.default_if_empty(None),
            ops.map(lambda value: _jsonable(tool, value)),
            ops.catch(lambda exc, _: on_error(exc)),
        )

    def on_error(exc: Exception) -> Observable[Any]:
        if isinstance(exc, StopError):
            return rx.throw(exc)
        if isinstance(exc, _ToolTimeout):
            tc.expired = True  # a sync tool still running sees tool_context.cancelled
            if item.span is not None:
                item.span.tool_failed(exc)
            seconds = exc.args[0]
            return sync.just({"error": f"tool {tool.name!r} timed out after {seconds:g} s"})
        return _tool_error(agent, ctx, item, tool, exc)

    def plain_after(result: Any) -> Any:
        if result is None and tool.is_long_running:
            return NO_RESPONSE
        return tool_result_dict(result)

    def after(result: Any) -> Observable[Any]:
        if result is None and tool.is_long_running:
            return sync.just(NO_RESPONSE)
        response = tool_result_dict(result)
        return callback_chain(
            plugins,
            "after_tool_callback",
            agent.after_tool_callback,
            (tool, item.args, tc, response),
            tool=tool,
            tool_args=item.args,
            tool_context=tc,
            result=response,
        ).pipe(ops.default_if_empty(response), ops.map(lambda value: _checked(tool, value)))

    has_before = has_callbacks(plugins, "before_tool_callback", agent.before_tool_callback)
    result = (
        before().pipe(
            ops.take(1),
            ops.to_list(),
            ops.flat_map(
                lambda found: sync.just(_checked(tool, found[0])) if found else run_tool()
            ),
        )
        if has_before
        else run_tool()  # _run_call itself runs at subscribe time
    )
    has_after = has_callbacks(plugins, "after_tool_callback", agent.after_tool_callback)
    return result.pipe(ops.flat_map(after) if has_after else ops.map(plain_after))


def _checked(tool: BaseTool, response: Any) -> Any:
    """A callback's result, or an error response when JSON cannot hold it."""
    if response is NO_RESPONSE:
        return response
    try:
        return _jsonable(tool, tool_result_dict(response))
    except ToolResultError as exc:
        return {"error": str(exc)}
