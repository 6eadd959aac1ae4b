"""Plugins: hooks that apply to every agent, model call and tool call of a Runner.

A plugin subclasses :class:`BasePlugin` and overrides the hooks it needs, as plain or
``async def`` methods (or methods returning an Observable). Hooks are called with keyword
arguments. Plugins run in registration order, before the agent's own callbacks; for hooks
that can replace a step, the first non-None result wins and later plugins and callbacks
are not called.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.callbacks import first_result, lift_result
from adk_rx.errors import AdkRxError, CallbackError, ConfigurationError
from adk_rx.rx._engine import sync

if TYPE_CHECKING:
    from google.genai import types

    from adk_rx.agents.base import BaseAgent
    from adk_rx.context import CallbackContext, InvocationContext, ToolContext
    from adk_rx.events import Event
    from adk_rx.models.llm_request import LlmRequest
    from adk_rx.models.llm_response import LlmResponse
    from adk_rx.tools.base import BaseTool

__all__ = ["HOOKS", "BasePlugin", "PluginManager"]


class BasePlugin:
    """A plugin with no-op hooks; override the ones you need.

    Args:
        name: unique among the Runner's plugins.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"a plugin needs a non-empty name, got {name!r}")
        self.name = name

    # -- runner level ----------------------------------------------------------------------
    def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> Any:
        """Before the user message is stored; a returned Content replaces it."""

    def before_run_callback(self, *, invocation_context: InvocationContext) -> Any:
        """Before the agent runs; a returned Content ends the run with one "model" event."""

    def on_event_callback(self, *, invocation_context: InvocationContext, event: Event) -> Any:
        """After an event is stored; a returned Event is emitted instead (the original stays)."""

    def after_run_callback(self, *, invocation_context: InvocationContext) -> Any:
        """After the last event of a successful run."""

    def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: BaseException
    ) -> Any:
        """When the run fails (before the error reaches the subscriber)."""

    # -- agent level -----------------------------------------------------------------------
    def before_agent_callback(self, *, agent: BaseAgent, callback_context: CallbackContext) -> Any:
        """Before an agent runs; a returned Content replaces the agent's run."""

    def after_agent_callback(self, *, agent: BaseAgent, callback_context: CallbackContext) -> Any:
        """After an agent ran; a returned Content is emitted as one more event."""

    def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> Any:
        """Before a model call; a returned LlmResponse is used instead of calling the model."""

    def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> Any:
        """After each model response; a returned LlmResponse replaces it."""

    def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> Any:
        """When the model call fails; a returned LlmResponse recovers."""

    def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> Any:
        """Before a tool runs (``tool_args`` may be edited); a returned dict is the result."""

    def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> Any:
        """After a tool ran; a returned dict replaces its result."""

    def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> Any:
        """When a tool fails; a returned dict becomes its result."""

    def close(self) -> Any:
        """Releases what the plugin holds."""


HOOKS = tuple(name for name in vars(BasePlugin) if name.endswith("_callback"))
"""The names of the plugin hooks, in the order BasePlugin declares them."""


class PluginManager:
    """The plugins of one Runner, in registration order."""

    def __init__(self, plugins: Sequence[BasePlugin] | None = None) -> None:
        self._plugins: list[BasePlugin] = []
        self._by_hook: dict[str, list[Callable[..., Any]]] = {hook: [] for hook in HOOKS}
        self._aliased: set[Callable[..., Any]] = set()  # hooks that name an argument by alias
        # The hooks some plugin overrides: the runtime asks ``hook in plugins.hooks`` on every
        # turn and step, without a call.
        self.hooks: set[str] = set()
        for plugin in plugins or ():
            self.register_plugin(plugin)

    def register_plugin(self, plugin: BasePlugin) -> None:
        """Adds a plugin; a second plugin with the same name raises ConfigurationError."""
        if not isinstance(plugin, BasePlugin):
            raise ConfigurationError(f"{plugin!r} is not a BasePlugin")
        if any(p.name == plugin.name for p in self._plugins):
            raise ConfigurationError(f"a plugin named {plugin.name!r} is already registered")
        self._plugins.append(plugin)
        for hook in HOOKS:
            # Only overridden hooks are called: a no-op hook costs nothing per event.
            if getattr(type(plugin), hook) is not getattr(BasePlugin, hook):
                method = getattr(plugin, hook)
                self._by_hook[hook].append(method)
                self.hooks.add(hook)
                if _uses_alias(method):
                    self._aliased.add(method)

    def get_plugin(self, name: str) -> BasePlugin | None:
        """The plugin with that name, if any."""
        return next((p for p in self._plugins if p.name == name), None)

    @property
    def plugins(self) -> list[BasePlugin]:
        """The registered plugins, in order."""
        return list(self._plugins)

    def has(self, hook: str) -> bool:
        """True when some plugin overrides ``hook``."""
        return hook in self.hooks

    def thunks(self, hook: str, **kwargs: Any) -> list[Callable[[], Any]]:
        """Zero-argument calls of ``hook`` on every plugin that overrides it."""
        return [
            _bind(fn, _renamed(fn, kwargs)) if fn in self._aliased else _bind(fn, kwargs)
            for fn in self._by_hook[hook]
        ]

    def first(self, hook: str, **kwargs: Any) -> Observable[Any]:
        """Runs ``hook`` plugin by plugin; emits the first non-None result."""
        return first_result(self.thunks(hook, **kwargs))

    def all(self, hook: str, **kwargs: Any) -> Observable[Any]:
        """Runs ``hook`` on every plugin in order (results ignored); an error stops the chain."""
        calls = self._by_hook[hook]
        if not calls:
            return sync.empty()

        def one(fn: Callable[..., Any]) -> Observable[Any]:
            def run(_: Any) -> Observable[Any]:
                try:
                    lifted = lift_result(fn(**kwargs))
                except AdkRxError:
                    raise
                except Exception as exc:
                    raise CallbackError(
                        f"plugin hook {fn.__qualname__} raised {type(exc).__name__}: {exc}"
                    ) from exc
                return sync.empty() if lifted is None else lifted.pipe(ops.ignore_elements())

            return rx.defer(run)

        return rx.from_iterable(calls).pipe(ops.concat_map(one))

    def close(self) -> None:
        """Closes every plugin; raises the first error after all were closed."""
        first_error: Exception | None = None
        for plugin in self._plugins:
            try:
                plugin.close()
            except Exception as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error


# Keyword aliases a plugin hook may use instead of the documented name (ADK for Python calls
# the after-tool result ``result``; the agent-level table calls it ``tool_response``).
_ALIASES = {"result": "tool_response", "tool_args": "args"}


def _uses_alias(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return any(alias in params for alias in _ALIASES.values())


def _renamed(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return kwargs
    renamed = {}
    for key, value in kwargs.items():
        alias = _ALIASES.get(key)
        if key not in params and alias is not None and alias in params:
            renamed[alias] = value
        else:
            renamed[key] = value
    return renamed


def _bind(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Callable[[], Any]:
    def call() -> Any:
        return fn(**kwargs)

    call.__adk_callback__ = fn  # type: ignore[attr-defined]
    return call
