"""FunctionNode: a Python function as a workflow node, its parameters bound google-adk's way.

Binding (``parameter_binding="state"``, the default): a parameter named ``ctx`` (or annotated
:class:`~adk_rx.workflow.Context`) gets the run's context, ``node_input`` the node's input,
and every other parameter the state value of its name (its default when the state has none).
With ``"node_input"``, the parameters are read from the input dict instead. Annotated values
are coerced with pydantic (a dict into a model); a ``types.Content`` (the user's message, at
START) becomes its text for a ``str`` parameter and its parsed JSON for a structured one.

The function's shape decides where it runs (``items.py``): a plain function or generator
inline on the thread that starts the node, a coroutine or async generator on the runtime
loop (cancelled by disposal), an Observable as it is. Write blocking work as ``async def``
(or return ``adk_rx.rx.from_blocking(...)``) so fan-out branches overlap.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from typing import Any, Literal

from google.genai import types
from pydantic import BaseModel, TypeAdapter

from adk_rx.errors import ConfigurationError
from adk_rx.workflow.context import Context
from adk_rx.workflow.nodes import BaseNode
from adk_rx.workflow.retry import RetryConfig

__all__ = ["FunctionNode"]


def _expects_str(annotation: Any) -> bool:
    if annotation is str:
        return True
    return str in typing.get_args(annotation)


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    """The function's resolvable annotations, one by one (one that names a local class is
    left out: its parameter is bound without coercion)."""
    try:
        return typing.get_type_hints(func)
    except Exception:
        pass
    found: dict[str, Any] = {}
    namespace = getattr(func, "__globals__", {})
    for name, annotation in inspect.get_annotations(func).items():
        try:
            found[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation
        except Exception:
            continue
    return found


def _content_text(content: types.Content) -> str:
    return "".join(p.text for p in content.parts or () if p.text and not p.thought)


class FunctionNode(BaseNode):
    """A node that calls a function (sync, async, generator or async generator).

    Its return value (or each yielded item) is the run's output, an ``Event``, a
    ``types.Content`` or None (nothing); see :class:`~adk_rx.workflow.nodes.BaseNode`.

    Args:
        func: the function.
        name: the node's name (default: the function's ``__name__``).
        rerun_on_resume, retry_config, timeout: as on ``BaseNode``.
        auth_config, require_confirmation: google-adk's human-in-the-loop gates; not
            supported yet (a clear error rather than a silent no-op).
        parameter_binding: ``"state"`` (parameters from state) or ``"node_input"``
            (parameters from the input dict).
        state_schema: accepted for google-adk compatibility; not enforced.
    """

    def __init__(
        self,
        *,
        func: Callable[..., Any],
        name: str | None = None,
        rerun_on_resume: bool = False,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
        auth_config: Any = None,
        require_confirmation: bool | Callable[..., bool] = False,
        parameter_binding: Literal["state", "node_input"] = "state",
        state_schema: type[BaseModel] | None = None,
    ) -> None:
        if not callable(func):
            raise ConfigurationError("Function must be callable.")
        if auth_config is not None or require_confirmation:
            raise ConfigurationError(
                "FunctionNode: auth_config and require_confirmation are not supported by "
                "adk_rx yet; gate the node with a tool confirmation inside an agent node"
            )
        if parameter_binding not in ("state", "node_input"):
            raise ConfigurationError(
                f"parameter_binding must be 'state' or 'node_input', got {parameter_binding!r}"
            )
        inferred = name or getattr(func, "__name__", None)
        if not inferred:
            raise ConfigurationError(
                "FunctionNode must have a name: the callable has no __name__, pass name="
            )
        super().__init__(
            name=inferred,
            description=inspect.getdoc(func) or "",
            rerun_on_resume=rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
        )
        self.func = func
        self.parameter_binding = parameter_binding
        self.state_schema = state_schema
        self._signature = inspect.signature(func)
        hints = _hints(func)
        self._ctx_param = next(
            (
                p
                for p in self._signature.parameters
                if p == "ctx" or (isinstance(hints.get(p), type) and issubclass(hints[p], Context))
            ),
            None,
        )
        self._hints = {k: v for k, v in hints.items() if k not in ("return", self._ctx_param)}
        self._adapters: dict[str, TypeAdapter[Any]] = {}

    def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:
        return self.func(**self._bind(ctx, node_input))

    # -- binding -------------------------------------------------------------------------------
    def _bind(self, ctx: Context, node_input: Any) -> dict[str, Any]:
        by_input = self.parameter_binding == "node_input"
        source: Any = node_input if by_input else ctx.state
        if by_input and not isinstance(source, dict | BaseModel):
            source = {}
        kwargs: dict[str, Any] = {}
        for name, param in self._signature.parameters.items():
            if name == self._ctx_param:
                kwargs[name] = ctx
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                if param.kind is param.VAR_KEYWORD and by_input and isinstance(source, dict):
                    kwargs.update(
                        {k: v for k, v in source.items() if k not in self._signature.parameters}
                    )
                continue
            if name == "node_input" and not by_input:
                kwargs[name] = self._coerce(name, node_input)
                continue
            if isinstance(source, BaseModel):
                present, value = hasattr(source, name), getattr(source, name, None)
            else:
                present = name in source
                value = source[name] if present else None
            if present:
                kwargs[name] = self._coerce(name, value)
            elif param.default is not param.empty:
                kwargs[name] = param.default
            else:
                where = "node_input" if by_input else "state"
                raise ConfigurationError(
                    f'Missing value for parameter "{name}" of function "{self.name}". It was '
                    f"not found in {where} and has no default value."
                )
        return kwargs

    def _coerce(self, name: str, value: Any) -> Any:
        hint = self._hints.get(name)
        if hint is None or hint is Any:
            return value
        if isinstance(value, types.Content):
            text = _content_text(value)
            if _expects_str(hint):
                return text
            try:
                value = json.loads(text)
            except ValueError:
                value = text
        adapter = self._adapters.get(name)
        if adapter is None:
            adapter = self._adapters[name] = TypeAdapter(hint)
        return adapter.validate_python(value)
