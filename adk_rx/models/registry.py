"""LlmRegistry: model names (regex patterns) to model factories."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from adk_rx.errors import ConfigurationError, UnknownModelError
from adk_rx.models.base import BaseLlm
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.lite_llm import LiteLlm
from adk_rx.models.openai_compat import OpenAiCompatibleLlm

__all__ = ["LlmRegistry"]

LlmFactory = Callable[[str], BaseLlm]


class _OnDefault:
    """Binds a method to the instance, or to the default registry when called on the class."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._fn = fn
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __get__(self, obj: LlmRegistry | None, cls: type[LlmRegistry]) -> Callable[..., Any]:
        return functools.partial(self._fn, obj if obj is not None else cls.default())


class LlmRegistry:
    """Maps model-name patterns to factories.

    ``LlmRegistry.register(...)`` / ``LlmRegistry.resolve(...)`` on the class use the
    process-wide default registry; an instance (``LlmRegistry()``) is an independent
    registry, e.g. for a test. Nothing is cached: ``resolve`` calls the factory each time,
    so a later registration takes effect at once. The most recent matching registration
    wins, so an application can override a built-in pattern.
    """

    _default: ClassVar[LlmRegistry | None] = None
    _default_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, *, builtins: bool = False) -> None:
        self._lock = threading.Lock()
        self._entries: list[tuple[str, re.Pattern[str], LlmFactory]] = []
        if builtins:
            _register_builtins(self)

    @classmethod
    def default(cls) -> LlmRegistry:
        """The process-wide registry (with the built-in providers registered)."""
        if cls._default is None:
            with cls._default_lock:
                if cls._default is None:
                    cls._default = LlmRegistry(builtins=True)
        return cls._default

    @_OnDefault
    def register(self, pattern: str, factory: LlmFactory) -> None:
        """Registers ``factory`` for model names that fully match ``pattern``."""
        compiled = re.compile(pattern)
        with self._lock:
            self._entries.append((pattern, compiled, factory))

    @_OnDefault
    def resolve(self, name: str) -> BaseLlm:
        """A model for ``name`` from the latest matching factory.

        Raises:
            UnknownModelError: no pattern matches; the message lists the patterns.
        """
        with self._lock:
            entries = list(self._entries)
        for _, compiled, factory in reversed(entries):
            if compiled.fullmatch(name):
                return factory(name)
        patterns = ", ".join(p for p, _, _ in entries) or "(none)"
        hint = _did_you_mean(name, [compiled for _, compiled, _ in entries])
        raise UnknownModelError(
            f"no model is registered for {name!r}{hint}; registered patterns: {patterns}. "
            "Register one with LlmRegistry.register(pattern, factory) or pass a BaseLlm."
        )

    @_OnDefault
    def patterns(self) -> list[str]:
        """The registered patterns, oldest first."""
        with self._lock:
            return [p for p, _, _ in self._entries]


def _did_you_mean(name: str, patterns: list[re.Pattern[str]]) -> str:
    """`` (did you mean 'openai/gpt-4o-mini'?)`` when a spelling close to ``name`` resolves."""
    if name.startswith(("models/", "google/")):
        candidates = [name.split("/", 1)[1]]  # a Gemini name as other SDKs spell it
    else:
        candidates = [] if "/" in name else [f"openai/{name}"]  # a chat-completions model
    for candidate in candidates:
        if any(p.fullmatch(candidate) for p in patterns):
            return f" (did you mean {candidate!r}?)"
    return ""


def _gemini(name: str) -> BaseLlm:
    return GeminiLlm(model=name)


def _openai(name: str) -> BaseLlm:
    return OpenAiCompatibleLlm(model=name.removeprefix("openai/"))


def _claude(name: str) -> BaseLlm:
    try:
        from adk_rx.models.anthropic_llm import AnthropicLlm
    except ImportError as exc:  # the anthropic package is an extra
        raise ConfigurationError(
            f"model {name!r} needs the anthropic package: pip install 'adk_rx[anthropic]'"
        ) from exc
    return AnthropicLlm(model=name)


def _lite_llm(name: str) -> BaseLlm:
    return LiteLlm(model=name)  # litellm itself is imported at the first call


# google-adk's LiteLLM prefixes, but ``openai/`` (OpenAiCompatibleLlm serves it without LiteLLM).
_LITELLM_PREFIXES = (
    "azure",
    "azure_ai",
    "groq",
    "anthropic",
    "bedrock",
    "ollama",
    "ollama_chat",
    "together_ai",
    "vertex_ai",
    "mistral",
    "deepseek",
    "fireworks_ai",
    "cohere",
    "databricks",
    "ai21",
)


def _register_builtins(registry: LlmRegistry) -> None:
    registry.register(r"gemini-.*", _gemini)
    registry.register(r"openai/.+", _openai)
    registry.register(r"claude-.*", _claude)
    registry.register(rf"(?:{'|'.join(_LITELLM_PREFIXES)})/.+", _lite_llm)
