"""Plugins: hooks that apply to every agent, model call and tool call of a Runner.

:class:`BasePlugin` and :class:`PluginManager` are in :mod:`adk_rx.plugins.base`; the
built-in plugins mirror google-adk's of the same names:

* :class:`GlobalInstructionPlugin`: one instruction put before every agent's own;
* :class:`ContextFilterPlugin`: keeps the last N invocations (or a custom filter) of what
  the model is sent;
* :class:`ReflectAndRetryToolPlugin`: a failing tool's error goes back to the model with
  guidance to reflect and retry, up to a limit;
* :class:`SaveFilesAsArtifactsPlugin`: files in the user's message become artifacts.
"""

from typing import TYPE_CHECKING, Any

from adk_rx.plugins.base import HOOKS, BasePlugin, PluginManager

if TYPE_CHECKING:
    from adk_rx.plugins.context_filter import ContextFilterPlugin
    from adk_rx.plugins.global_instruction import GlobalInstructionPlugin
    from adk_rx.plugins.reflect_retry import (
        REFLECT_AND_RETRY_RESPONSE_TYPE,
        ReflectAndRetryToolPlugin,
        ToolFailureResponse,
        TrackingScope,
    )
    from adk_rx.plugins.save_files import SaveFilesAsArtifactsPlugin

__all__ = [
    "HOOKS",
    "REFLECT_AND_RETRY_RESPONSE_TYPE",
    "BasePlugin",
    "ContextFilterPlugin",
    "GlobalInstructionPlugin",
    "PluginManager",
    "ReflectAndRetryToolPlugin",
    "SaveFilesAsArtifactsPlugin",
    "ToolFailureResponse",
    "TrackingScope",
]

# The built-in plugins use the contexts, which import this package's base (for the
# PluginManager): they load on first use, once adk_rx.context is complete.
_BUILT_IN = {
    "ContextFilterPlugin": "context_filter",
    "GlobalInstructionPlugin": "global_instruction",
    "REFLECT_AND_RETRY_RESPONSE_TYPE": "reflect_retry",
    "ReflectAndRetryToolPlugin": "reflect_retry",
    "SaveFilesAsArtifactsPlugin": "save_files",
    "ToolFailureResponse": "reflect_retry",
    "TrackingScope": "reflect_retry",
}


def __getattr__(name: str) -> Any:
    module = _BUILT_IN.get(name)
    if module is None:
        raise AttributeError(f"module 'adk_rx.plugins' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"adk_rx.plugins.{module}"), name)
