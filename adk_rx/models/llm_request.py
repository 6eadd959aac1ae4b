"""LlmRequest: what the flow sends to a model; callbacks may edit it before the call.

A request built by the flow holds its instructions and tool declarations as plain values
and makes its google-genai ``config`` the first time someone reads it (a callback, a plugin,
the provider that sends it): a model that never looks at the config (a scripted one, a
model that only reads the contents) costs no config at all, and the agent's own
``generate_content_config`` is copied once, not per edit.
"""

from __future__ import annotations

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


def _text_of(si: Any) -> str:
    if si is None:
        return ""
    if isinstance(si, str):
        return si
    if isinstance(si, types.Part):
        return si.text or ""
    if isinstance(si, types.Content):
        return "\n\n".join(p.text for p in si.parts or [] if p.text)
    return str(si)


def _declarations_of(config: types.GenerateContentConfig) -> list[types.FunctionDeclaration]:
    found: list[types.FunctionDeclaration] = []
    for tool in config.tools or []:
        if isinstance(tool, types.Tool) and tool.function_declarations:
            found.extend(tool.function_declarations)
    return found


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

    __slots__ = (
        "_base",
        "_config",
        "_declarations",
        "_instructions",
        "cache_config",
        "contents",
        "live_connect_config",
        "model",
        "tools_dict",
    )

    def __init__(
        self,
        model: str | None = None,
        contents: list[types.Content] | None = None,
        config: types.GenerateContentConfig | None = None,
        tools_dict: dict[str, BaseTool] | None = None,
        live_connect_config: types.LiveConnectConfig | None = None,
        cache_config: ContextCacheConfig | None = None,
    ) -> None:
        self.model = model
        self.contents: list[types.Content] = [] if contents is None else contents
        self.tools_dict: dict[str, BaseTool] = {} if tools_dict is None else tools_dict
        self.live_connect_config = live_connect_config
        self.cache_config = cache_config
        self._config: types.GenerateContentConfig | None = (
            empty_config() if config is None else config
        )
        self._base: types.GenerateContentConfig | None = None
        self._instructions: list[str] = []
        self._declarations: list[types.FunctionDeclaration] = []

    @classmethod
    def deferred(
        cls,
        model: str | None,
        contents: list[types.Content],
        base: types.GenerateContentConfig | None,
    ) -> LlmRequest:
        """A request whose config is made when first read: a copy of ``base`` (never
        changed) or an empty one, with the instructions and tools added until then."""
        request = cls(model, contents, _CONFIG)
        request._config = None
        request._base = base
        return request

    @property
    def config(self) -> types.GenerateContentConfig:
        """Generation settings, with the system instruction and the tool declarations."""
        config = self._config
        if config is None:
            config = self._config = self._make_config()
        return config

    @config.setter
    def config(self, value: types.GenerateContentConfig) -> None:
        self._config = value
        self._instructions, self._declarations = [], []

    def _make_config(self) -> types.GenerateContentConfig:
        base = self._base
        # A copy: tools and the system instruction are added per request, never to the agent's.
        config = empty_config() if base is None else base.model_copy(deep=bool(base.tools))
        if self._instructions:
            config.system_instruction = _system_content(self.system_instruction_text())
        if self._declarations:
            _declare(config, self._declarations)
        self._instructions, self._declarations = [], []
        return config

    def append_instructions(self, instructions: list[str]) -> None:
        """Adds instructions to the single system-instruction text, joined by blank lines."""
        texts = [t for t in instructions if t]
        if not texts:
            return
        if self._config is None:
            self._instructions.extend(texts)
            return
        current = self.system_instruction_text()
        joined = "\n\n".join([current, *texts] if current else texts)
        self._config.system_instruction = _system_content(joined)

    def system_instruction_text(self) -> str:
        """The system instruction as plain text ('' when there is none)."""
        config = self._config
        if config is not None:
            return _text_of(config.system_instruction)
        base = "" if self._base is None else _text_of(self._base.system_instruction)
        return "\n\n".join([base, *self._instructions] if base else self._instructions)

    def append_tools(self, tools: list[BaseTool]) -> None:
        """Declares ``tools`` to the model; a name already declared raises."""
        declarations: list[types.FunctionDeclaration] = []
        tools_dict = self.tools_dict
        for tool in tools:
            if tool.name in tools_dict:
                raise ConfigurationError(
                    f"two tools are named {tool.name!r} on one request; tool names must be unique"
                )
            tools_dict[tool.name] = tool
            declaration = tool.declaration()
            if declaration is not None:
                declarations.append(declaration)
        if not declarations:
            return
        if self._config is None:
            self._declarations.extend(declarations)
        else:
            _declare(self._config, declarations)

    def function_declarations(self) -> list[types.FunctionDeclaration]:
        """Every function declaration in ``config.tools``."""
        config = self._config
        if config is not None:
            return _declarations_of(config)
        base = [] if self._base is None else _declarations_of(self._base)
        return [*base, *self._declarations]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LlmRequest):
            return NotImplemented
        return _compared(self) == _compared(other)

    __hash__ = None  # type: ignore[assignment]  (mutable)

    def __repr__(self) -> str:
        return (
            f"LlmRequest(model={self.model!r}, contents={self.contents!r}, "
            f"config={self.config!r}, tools_dict={self.tools_dict!r}, "
            f"live_connect_config={self.live_connect_config!r}, "
            f"cache_config={self.cache_config!r})"
        )


def _compared(request: LlmRequest) -> tuple[Any, ...]:
    return (
        request.model,
        request.contents,
        request.config,
        request.tools_dict,
        request.live_connect_config,
        request.cache_config,
    )


def _declare(
    config: types.GenerateContentConfig, declarations: list[types.FunctionDeclaration]
) -> None:
    """Adds ``declarations`` to the config's first function tool (or a new one)."""
    config_tools = list(config.tools or [])
    for existing in config_tools:
        if isinstance(existing, types.Tool) and existing.function_declarations is not None:
            existing.function_declarations = [*existing.function_declarations, *declarations]
            break
    else:
        config_tools.append(_TOOL.model_copy(update={"function_declarations": declarations}))
    config.tools = config_tools
