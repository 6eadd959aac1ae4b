"""FunctionTool: a Python function (sync, async, or returning an Observable) as a tool.

How a call runs::

    run_async(args)  --(validate args)--(confirmation?)--(call)--(map the result)--r|

* a sync function runs on the I/O scheduler (``from_blocking``): it never blocks the
  caller, and several calls overlap; one that says it never blocks (``blocking=False``, or
  the :func:`never_blocks` decorator) runs inline on the subscribing thread instead, with no
  hand-off at all, as ADK for Java runs function tools;
* a coroutine function (or async generator) runs as a task on the runtime loop
  (``from_async``); disposing cancels it;
* an async generator, or a function returning an Observable, reports every item before its
  last as progress (a partial event of the calling agent); the last item is the result;
* a function annotated to return an ``Observable`` is called at subscribe time and its
  Observable is used as it is (an unannotated sync function that returns one is waited
  for on its I/O worker, and cannot be cancelled there).

Result mapping: a dict is kept; ``None`` becomes ``{}`` (a long-running tool keeps ``None``:
"no response yet"); a pydantic model or dataclass becomes its JSON dict; any other value
``v`` becomes ``{"result": v}``. A value JSON cannot hold is a :class:`ToolResultError`. When a
stream or an async generator emits several values, the last one is the result and the
earlier ones are progress reports.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, TypeVar

import pydantic
import pydantic_core
from google.genai import types
from pydantic_core import ErrorDetails
from reactivex import Observable, abc, defer
from reactivex import operators as ops

from adk_rx.context import ToolContext
from adk_rx.errors import ConfigurationError, ToolArgumentsError, ToolResultError
from adk_rx.rx import from_async, single
from adk_rx.rx._engine.blocking import Blocking
from adk_rx.rx._engine.sync import SyncObservable
from adk_rx.tools.base import BaseTool
from adk_rx.tools.docstrings import parse_docstring
from adk_rx.tools.schema import BoundCall, callable_target, function_schema

__all__ = [
    "REJECTED",
    "REQUIRES_CONFIRMATION",
    "ConfirmationPolicy",
    "FunctionTool",
    "ToolArgumentsError",
    "ToolResultError",
    "as_tool",
    "never_blocks",
    "parse_docstring",
]

REQUIRES_CONFIRMATION = "This tool call requires confirmation, please approve or reject."
"""The error a confirmation-required tool answers until the user has confirmed."""

REJECTED = "This tool call is rejected."
"""The error a confirmation-required tool answers when the user rejected the call."""

ConfirmationPolicy = bool | Callable[[dict[str, Any]], bool]
"""``require_confirmation``: always/never, or decided per call from the validated arguments."""


def _validation_message(tool_name: str, error: pydantic.ValidationError) -> str:
    """A message the model can act on: which argument was wrong and why."""
    problems = "; ".join(_describe(detail) for detail in error.errors(include_url=False))
    return f"invalid arguments for tool {tool_name!r}: {problems}"


def _describe(detail: ErrorDetails) -> str:
    where = ".".join(str(part) for part in detail["loc"]) or "arguments"
    message = f"argument {where!r}: {detail['msg']}"
    if detail["type"] != "missing":
        got = repr(detail["input"])
        message += f" (got {got if len(got) <= 80 else got[:77] + '...'})"
    return message


class FunctionTool(BaseTool):
    """Wraps a function as a tool; see the module docstring for how it runs.

    The name is the function's name, the description its docstring without the
    ``Args:``/``Returns:``/``Raises:`` sections, and the parameters' JSON schema comes from
    the type hints (see :mod:`adk_rx.tools.schema` for the rules). A parameter named
    ``tool_context`` receives the call's :class:`~adk_rx.context.ToolContext`.

    Args:
        func: a sync function, a coroutine function, or a function returning an Observable.
        name: the tool name instead of the function's name.
        description: the description instead of the docstring's.
        require_confirmation: ask the user to approve each call (or the calls for which
            this callable, given the validated arguments, returns True) before running it.
        idempotent: calling the function twice with the same arguments does no harm; a
            resumed invocation may then run again a call that was cut off.
        blocking: for a sync function: whether it may block (I/O, waits, long work). True
            (the default) runs it on the I/O scheduler; False says it never blocks, so it
            runs inline on the thread that runs the agent, which saves the thread hand-off.
            A function that blocks while running inline holds up the whole invocation (and
            the event loop, when the run was started from one). ``None`` (the default)
            takes the :func:`never_blocks` mark of the function, else True.
        timeout: seconds one call may take (waiting for a permit included); on expiry
            the call's work is cancelled (a coroutine's task, an Observable's subscription;
            a sync function sees ``tool_context.cancelled`` become true) and the model gets
            an error naming the tool. Wins over ``RunConfig.tool_timeout``.
        max_concurrency: at most this many calls of this tool run at once in the process,
            across invocations; more wait first come, first served.

    Raises:
        ConfigurationError: the name is not a valid tool name, a parameter's type cannot
            be described as JSON schema, or ``blocking=False`` is given for a function
            that is not a plain sync function.
    """

    _IS_LONG_RUNNING = False

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        require_confirmation: ConfirmationPolicy = False,
        idempotent: bool = False,
        blocking: bool | None = None,
        timeout: float | None = None,
        max_concurrency: int | None = None,
    ) -> None:
        if not callable(func):
            raise ConfigurationError(f"FunctionTool needs a callable, got {func!r}")
        if blocking is None:
            blocking = not getattr(func, NEVER_BLOCKS_MARK, False)
        doc, param_descriptions = parse_docstring(inspect.getdoc(callable_target(func)) or "")
        schema = function_schema(func, name=name, param_descriptions=param_descriptions)
        super().__init__(
            name=schema.name,
            description=self._described(doc if description is None else description),
            is_long_running=self._IS_LONG_RUNNING,
            is_idempotent=idempotent,
            timeout=timeout,
            max_concurrency=max_concurrency,
        )
        self.func = func
        self.require_confirmation = require_confirmation
        self._schema = schema
        self._kind = _kind(func)
        # Every item before the last of a stream or async generator is reported as progress.
        self.reports_progress = self._kind == "async_generator" or schema.returns_observable
        if not blocking and (self._kind != "sync" or schema.returns_observable):
            raise ConfigurationError(
                f"tool {self.name!r}: blocking=False is for plain sync functions; a "
                "coroutine, async generator or Observable never blocks the caller anyway"
            )
        self.blocking = blocking
        self._plain = self._kind == "sync" and not schema.returns_observable
        self._declaration = types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=schema.parameters_json_schema,
        )

    def _described(self, description: str) -> str:
        """The description the model sees; subclasses may add to it."""
        return description

    def run_async(self, *, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        """Validates ``args``, checks confirmation, calls the function; a cold Single.

        Emits the response dict (``None`` for a long-running tool without a result yet).
        Errors with :class:`ToolArgumentsError` for invalid arguments, with
        :class:`ToolResultError` for a result JSON cannot hold, and with whatever the
        function raised.
        """
        if self._plain:  # a plain sync function: bound, checked and called in one go
            if not self.blocking:  # it said it never blocks: answered while subscribed

                def answer_now() -> tuple[Any]:
                    return (self._call_now(args, tool_context),)

                return SyncObservable(None, answer_now)  # (single(), without its lambda)

            # (a partial: its call on the worker is the method's, with no frame around it)
            call_now = partial(self._call_now, args, tool_context)
            return Blocking(call_now, tool_context.invocation_context.services.io_scheduler)
        return defer(lambda _: self._run(args, tool_context))

    def _run(self, args: Mapping[str, Any], tool_context: ToolContext) -> Observable[Any]:
        call = self._bind(args, tool_context)
        refusal = self._check_confirmation(call, tool_context)
        if refusal is not None:
            return single(lambda: refusal)
        func, to_response = self.func, self._to_response
        if self._kind == "coroutine":

            async def answer() -> dict[str, Any] | None:
                return to_response(await func(*call.args, **call.kwargs))

            return from_async(answer)
        if self._kind == "async_generator":
            stream = from_async(lambda: func(*call.args, **call.kwargs))
            return _reporting(stream, to_response, tool_context)
        return _reporting(func(*call.args, **call.kwargs), to_response, tool_context)

    def _call_now(self, args: Mapping[str, Any], tool_context: ToolContext) -> Any:
        """Validates ``args``, checks confirmation and calls the function, on this thread.

        For a plain sync function; raises what ``run_async`` errors with. The result is
        mapped here too, on the worker for a blocking tool: an operator after the hand-off
        would cost more than the whole call.
        """
        try:  # (_bind, inline)
            call = self._schema.bind(args, tool_context)
        except pydantic.ValidationError as exc:
            raise ToolArgumentsError(_validation_message(self.name, exc)) from None
        if self.require_confirmation is not False:  # (False, the default: never asks)
            refusal = self._check_confirmation(call, tool_context)
            if refusal is not None:
                return refusal
        value = self.func(*call.args, **call.kwargs)
        # (a plain value's type first: the check against the Observable ABC costs 3 calls)
        if type(value) not in _PLAIN_VALUES and isinstance(value, Observable):  # rare
            value = value.pipe(ops.last_or_default(None)).run()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        return self._to_response(value)

    def _bind(self, args: Mapping[str, Any], tool_context: ToolContext) -> BoundCall:
        try:
            return self._schema.bind(args, tool_context)
        except pydantic.ValidationError as exc:
            raise ToolArgumentsError(_validation_message(self.name, exc)) from None

    def _check_confirmation(
        self, call: BoundCall, tool_context: ToolContext
    ) -> dict[str, Any] | None:
        policy = self.require_confirmation
        required = policy(call.arguments) if callable(policy) else policy
        if not required:
            return None
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(
                hint=f"Please approve or reject the call of {self.name} with arguments "
                f"{call.arguments!r}."
            )
            return {"error": REQUIRES_CONFIRMATION}
        if not confirmation.confirmed:
            return {"error": REJECTED}
        return None

    def _to_response(self, value: Any) -> dict[str, Any] | None:
        if value is None:
            return None if self.is_long_running else {}
        if type(value) in _JSON_SCALARS:  # JSON as it is
            return {"result": value}
        try:
            if isinstance(value, pydantic.BaseModel):
                return value.model_dump(mode="json")
            jsonable = pydantic_core.to_jsonable_python(value)
        except (pydantic_core.PydanticSerializationError, ValueError, TypeError) as exc:
            raise ToolResultError(
                f"tool {self.name!r} returned a value JSON cannot hold "
                f"({type(value).__name__}): {exc}"
            ) from exc
        if isinstance(jsonable, dict) and (
            isinstance(value, dict) or dataclasses.is_dataclass(value)
        ):
            return jsonable  # pyright: ignore[reportUnknownVariableType]
        return {"result": jsonable}


def _reporting(
    stream: Observable[Any],
    to_response: Callable[[Any], dict[str, Any] | None],
    tool_context: ToolContext,
) -> Observable[Any]:
    """The last item of ``stream`` as the response; every earlier one reported as progress.

    Marble diagram::

        stream:    --a--b--c|
        reported:  -----a--b
        result:    ---------r(c)|
    """

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        held: list[Any] = []

        def on_next(value: Any) -> None:
            if held:
                tool_context.report_progress(held[0])
            held[:] = [value]

        def on_completed() -> None:
            try:
                response = to_response(held[0] if held else None)
            except Exception as exc:
                observer.on_error(exc)
                return
            observer.on_next(response)
            observer.on_completed()

        return stream.subscribe(on_next, observer.on_error, on_completed, scheduler=scheduler)

    return Observable(subscribe)


# Results that JSON holds as they are (not float: JSON has no NaN or infinity).
_JSON_SCALARS = frozenset({str, int, bool})

# Results that are no Observable, told apart without the ABC check (an unannotated function
# may return an Observable).
_PLAIN_VALUES = frozenset({dict, list, str, int, float, bool, type(None)})

NEVER_BLOCKS_MARK = "__adk_rx_never_blocks__"

F = TypeVar("F", bound=Callable[..., Any])


def never_blocks(func: F) -> F:
    """Marks a sync tool function as never blocking, so it runs inline (no thread hop).

    Use it on quick, pure functions (arithmetic, lookups in memory, formatting); anything
    that does I/O or waits must stay on the I/O scheduler. Same as
    ``FunctionTool(func, blocking=False)``, for functions passed to ``tools=[...]`` as they
    are::

        @never_blocks
        def add(a: int, b: int) -> int:
            return a + b
    """
    setattr(func, NEVER_BLOCKS_MARK, True)
    return func


def _kind(func: Callable[..., Any]) -> str:
    # A partial of a coroutine function counts too (inspect unwraps partials).
    for target in (func, callable_target(func)):
        if inspect.iscoroutinefunction(target):
            return "coroutine"
        if inspect.isasyncgenfunction(target):
            return "async_generator"
    return "sync"


def as_tool(tool: BaseTool | Callable[..., Any]) -> BaseTool:
    """Returns ``tool`` if it is a tool, else wraps the function as a :class:`FunctionTool`.

    Raises:
        ConfigurationError: ``tool`` is neither a tool nor callable.
    """
    if isinstance(tool, BaseTool):
        return tool
    if callable(tool):
        return FunctionTool(tool)
    raise ConfigurationError(f"not a tool or a function: {tool!r}")
