"""LlmRequest: what the flow sends to a model; callbacks may edit it before the call."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.genai import types

from adk_rx.errors import ConfigurationError
from adk_rx.models.context_cache import ContextCacheConfig

if TYPE_CHECKING:
    from adk_rx.tools.base import BaseTool

__all__ = ["LlmRequest"]

# Validated once; copies with a new text skip pydantic validation (a request is built per step).
_PART = types.Part(text="")
_CONTENT = types.Content(role="user", parts=[])
_TOOL = types.Tool(function_declarations=[])


def _system_content(text: str) -> types.Content:
    return _CONTENT.model_copy(update={"parts": [_PART.model_copy(update={"text": text})]})


def empty_config() -> types.GenerateContentConfig:
    """A fresh, empty GenerateContentConfig (a copy of a validated template)."""
    return _CONFIG.model_copy()


_CONFIG = types.GenerateContentConfig()


@dataclass(slots=True)
class LlmRequest:
    """A model request under construction.

    Mutable on purpose: request processors and ``before_model`` callbacks edit it in place.

    Attributes:
        model: the model name.
        contents: the conversation, oldest first.
        config: generation settings; holds the system instruction and tool declarations.
        tools_dict: tool name -> tool, for the tools declared in ``config.tools``.
        live_connect_config: live-only settings (modalities, voice, transcription) for
            ``BaseLlm.connect``; None outside a live session.
        cache_config: the app's context caching; a model that caches prefixes caches the
            stable prefix of this request (see :mod:`adk_rx.models.context_cache`).
    """

    model: str | None = None
    contents: list[types.Content] = field(default_factory=list)
    config: types.GenerateContentConfig = field(default_factory=lambda: empty_config())
    tools_dict: dict[str, BaseTool] = field(default_factory=dict)
    live_connect_config: types.LiveConnectConfig | None = None
    cache_config: ContextCacheConfig | None = None

    def append_instructions(self, instructions: list[str]) -> None:
        """Adds instructions to the single system-instruction text, joined by blank lines."""
        texts = [t for t in instructions if t]
        if not texts:
            return
        current = self.system_instruction_text()
        joined = "\n\n".join([current, *texts] if current else texts)
        self.config.system_instruction = _system_content(joined)

    def system_instruction_text(self) -> str:
        """The system instruction as plain text ('' when there is none)."""
        si: Any = self.config.system_instruction
        if si is None:
            return ""
        if isinstance(si, str):
            return si
        if isinstance(si, types.Part):
            return si.text or ""
        if isinstance(si, types.Content):
            return "\n\n".join(p.text for p in si.parts or [] if p.text)
        return str(si)

    def append_tools(self, tools: list[BaseTool]) -> None:
        """Declares ``tools`` to the model; a name already declared raises."""
        declarations: list[types.FunctionDeclaration] = []
        for tool in tools:
            if tool.name in self.tools_dict:
                raise ConfigurationError(
                    f"two tools are named {tool.name!r} on one request; tool names must be unique"
                )
            self.tools_dict[tool.name] = tool
            declaration = tool.declaration()
            if declaration is not None:
                declarations.append(declaration)
        if not declarations:
            return
        config_tools = list(self.config.tools or [])
        for existing in config_tools:
            if isinstance(existing, types.Tool) and existing.function_declarations is not None:
                existing.function_declarations = [*existing.function_declarations, *declarations]
                break
        else:
            config_tools.append(_TOOL.model_copy(update={"function_declarations": declarations}))
        self.config.tools = config_tools

    def function_declarations(self) -> list[types.FunctionDeclaration]:
        """Every function declaration in ``config.tools``."""
        found: list[types.FunctionDeclaration] = []
        for tool in self.config.tools or []:
            if isinstance(tool, types.Tool) and tool.function_declarations:
                found.extend(tool.function_declarations)
        return found
