"""Agent Config: an agent tree written in YAML (google-adk's ``root_agent.yaml`` schema).

An agent folder may hold ``root_agent.yaml`` instead of ``agent.py``::

    name: desk
    model: gemini-2.5-flash            # or model_code: {name: my_app.models.offline}
    description: The front desk.
    instruction: Answer briefly. The user is {user:name?}.
    output_key: last_answer
    tools:
      - name: my_app.tools.get_weather  # a function, tool, toolset, or tool class (+ args)
      - name: exit_loop                 # a name without a dot: adk_rx.tools' built-in
    sub_agents:
      - config_path: billing.yaml       # another config, relative to this file's folder
      - code: my_app.agents.shipping    # an agent built in Python
    before_model_callbacks:
      - name: my_app.callbacks.log_request

``agent_class`` picks the class: ``LlmAgent`` (the default), ``SequentialAgent``,
``ParallelAgent``, ``LoopAgent`` (with ``max_iterations``), or the dotted name of a
BaseAgent subclass. Dotted names are imported with the agents folder on ``sys.path``, so
``my_app.tools`` is ``tools.py`` in the folder ``my_app``. A ``config_path`` may not be
absolute nor leave the folder of the file naming it. An unknown key, a wrong type or a name
that cannot be imported is an :class:`~adk_rx.errors.AgentLoadError` naming the file.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from google.genai import types

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.agents.loop import LoopAgent
from adk_rx.agents.parallel import ParallelAgent
from adk_rx.agents.sequential import SequentialAgent
from adk_rx.errors import AgentLoadError, ConfigurationError

__all__ = ["CONFIG_FILE", "from_config"]

CONFIG_FILE = "root_agent.yaml"
"""The file name of an agent folder's config (google-adk's)."""

_CLASSES: dict[str, type[BaseAgent]] = {
    "LlmAgent": LlmAgent,
    "Agent": LlmAgent,
    "SequentialAgent": SequentialAgent,
    "ParallelAgent": ParallelAgent,
    "LoopAgent": LoopAgent,
}
_COMMON = {"agent_class", "name", "description", "sub_agents"}
_AGENT_CALLBACKS = ("before_agent_callbacks", "after_agent_callbacks")
_LLM_CALLBACKS = (
    "before_model_callbacks",
    "after_model_callbacks",
    "before_tool_callbacks",
    "after_tool_callbacks",
)
_LLM_FIELDS = {
    "model",
    "model_code",
    "instruction",
    "static_instruction",
    "disallow_transfer_to_parent",
    "disallow_transfer_to_peers",
    "output_key",
    "include_contents",
    "tools",
    "generate_content_config",
    "output_schema",
    "input_schema",
}
_MAX_CONFIG_BYTES = 1024 * 1024


def from_config(config_path: str | os.PathLike[str]) -> BaseAgent:
    """The agent tree a YAML config file describes.

    Raises:
        AgentLoadError: the file is missing, not YAML, or not a valid agent config.
    """
    path = Path(config_path).resolve()
    try:
        if path.stat().st_size > _MAX_CONFIG_BYTES:
            raise AgentLoadError(f"{path}: larger than {_MAX_CONFIG_BYTES} bytes")
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AgentLoadError(f"{path}: cannot be read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise AgentLoadError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, Mapping):
        raise AgentLoadError(f"{path}: an agent config is a mapping of fields (name: ...)")
    try:
        return _build(dict(data), path)
    except AgentLoadError as exc:
        if Path(str(exc).split(":", 1)[0]).is_absolute():
            raise  # a nested config's error names its own file
        raise AgentLoadError(f"{path}: {exc}") from exc
    except (ConfigurationError, TypeError, ValueError, ImportError, AttributeError) as exc:
        raise AgentLoadError(f"{path}: {exc}") from exc


def _build(data: dict[str, Any], path: Path) -> BaseAgent:
    cls = _agent_class(str(data.get("agent_class") or "LlmAgent"))
    allowed = set(_COMMON) | set(_AGENT_CALLBACKS)
    if issubclass(cls, LlmAgent):
        allowed |= _LLM_FIELDS | set(_LLM_CALLBACKS)
    if issubclass(cls, LoopAgent):
        allowed.add("max_iterations")
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise AgentLoadError(f"{path}: unknown field(s) for {cls.__name__}: {', '.join(unknown)}")
    if not isinstance(data.get("name"), str):
        raise AgentLoadError(f"{path}: name is required (a string)")
    kwargs: dict[str, Any] = {"name": data["name"]}
    for key, value in data.items():
        if key in ("agent_class", "name"):
            continue
        if key == "sub_agents":
            kwargs[key] = [_sub_agent(ref, path) for ref in _list(value, key)]
        elif key == "tools":
            kwargs[key] = [_tool(ref) for ref in _list(value, key)]
        elif key in _AGENT_CALLBACKS or key in _LLM_CALLBACKS:
            kwargs[key.removesuffix("s")] = [_code(ref, key) for ref in _list(value, key)]
        elif key == "model_code":
            kwargs["model"] = _code(value, key)
        elif key in ("output_schema", "input_schema"):
            kwargs[key] = _code(value, key)
        elif key == "generate_content_config":
            kwargs[key] = types.GenerateContentConfig.model_validate(value)
        elif key == "static_instruction":
            kwargs[key] = value if isinstance(value, str) else types.Content.model_validate(value)
        else:
            kwargs[key] = value
    return cls(**kwargs)


def _agent_class(name: str) -> type[BaseAgent]:
    cls = _CLASSES.get(name) if "." not in name else _resolve(name)
    if not (inspect.isclass(cls) and issubclass(cls, BaseAgent)):
        raise AgentLoadError(
            f"agent_class {name!r} is not an agent class (LlmAgent, SequentialAgent, "
            "ParallelAgent, LoopAgent, or the dotted name of a BaseAgent subclass)"
        )
    return cls


def _list(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise AgentLoadError(f"{key} must be a list")
    return value


def _resolve(dotted: str) -> Any:
    module_name, _, attr = dotted.rpartition(".")
    if not module_name or not all(part.isidentifier() for part in dotted.split(".")):
        raise AgentLoadError(f"{dotted!r} is not a dotted name (package.module.name)")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise AgentLoadError(f"cannot import {dotted!r}: {exc}") from exc


def _code(ref: Any, key: str) -> Any:
    if not isinstance(ref, Mapping) or set(ref) != {"name"} or not isinstance(ref["name"], str):
        raise AgentLoadError(f"{key}: each entry is {{name: package.module.name}}")
    return _resolve(ref["name"])


def _tool(ref: Any) -> Any:
    if not isinstance(ref, Mapping) or not isinstance(ref.get("name"), str):
        raise AgentLoadError("tools: each entry is {name: ..., args: {...}?}")
    if set(ref) - {"name", "args"}:
        raise AgentLoadError(f"tools: unknown key(s) in {dict(ref)!r}")
    name, args = ref["name"], ref.get("args")
    if "." in name:
        found = _resolve(name)
    else:
        found = getattr(importlib.import_module("adk_rx.tools"), name, None)
        if found is None:
            raise AgentLoadError(f"tools: {name!r} is not one of adk_rx.tools' built-in tools")
    if args is None:
        return found
    if not isinstance(args, Mapping):
        raise AgentLoadError(f"tools: the args of {name!r} must be a mapping")
    maker: Callable[..., Any] = found
    return maker(**args) if inspect.isclass(found) else maker(dict(args))


def _sub_agent(ref: Any, path: Path) -> BaseAgent:
    if not isinstance(ref, Mapping) or len(ref) != 1 or not set(ref) <= {"config_path", "code"}:
        raise AgentLoadError("sub_agents: each entry is {config_path: FILE} or {code: NAME}")
    if "code" in ref:
        agent = _resolve(str(ref["code"]))
        if not isinstance(agent, BaseAgent):
            raise AgentLoadError(f"sub_agents: {ref['code']!r} is not an agent")
        return agent
    relative = str(ref["config_path"])
    if os.path.isabs(relative):
        raise AgentLoadError(f"sub_agents: config_path {relative!r} must be relative")
    target = (path.parent / relative).resolve()
    if not target.is_relative_to(path.parent):
        raise AgentLoadError(f"sub_agents: config_path {relative!r} leaves {path.parent}")
    return from_config(target)
