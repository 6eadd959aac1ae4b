"""LlmRegistry: resolving model names, and what an unknown name tells the user."""

from __future__ import annotations

import pytest

from adk_rx.errors import UnknownModelError
from adk_rx.models.registry import LlmRegistry
from adk_rx.testing import ScriptedLlm


def test_a_bare_openai_model_name_suggests_the_openai_prefix() -> None:
    with pytest.raises(UnknownModelError, match=r"did you mean 'openai/gpt-4o-mini'\?"):
        LlmRegistry(builtins=True).resolve("gpt-4o-mini")


def test_a_gemini_name_spelled_with_models_prefix_suggests_the_bare_name() -> None:
    with pytest.raises(UnknownModelError, match=r"did you mean 'gemini-2.0-flash'\?"):
        LlmRegistry(builtins=True).resolve("models/gemini-2.0-flash")


def test_no_suggestion_when_nothing_close_resolves() -> None:
    registry = LlmRegistry()
    registry.register(r"scripted-.*", lambda name: ScriptedLlm(["hi"]))
    with pytest.raises(UnknownModelError) as raised:
        registry.resolve("gpt-4o-mini")
    assert "did you mean" not in str(raised.value)
    assert "scripted-.*" in str(raised.value)
