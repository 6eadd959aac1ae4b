"""The real-call switch, and how model names resolve to the provider adapters."""

from __future__ import annotations

import pytest

from adk_rx.errors import ConfigurationError, UnknownModelError
from adk_rx.models import safety
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.openai_compat import OpenAiCompatibleLlm
from adk_rx.models.registry import LlmRegistry


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://127.5.0.1", True),
        ("http://[::1]:11434", True),
        ("http://localhost:11434/v1", True),
        ("127.0.0.1:9000", True),
        ("https://api.openai.com/v1", False),
        ("https://generativelanguage.googleapis.com/", False),
        ("http://127.0.0.1.example.com", False),
        ("http://10.0.0.5:8000", False),
    ],
)
def test_loopback_urls_are_recognised(url: str, local: bool) -> None:
    assert safety.is_loopback_url(url) is local


def test_local_calls_are_always_allowed() -> None:
    safety.check_real_call("http://127.0.0.1:1/v1", provider="test")  # does not raise


def test_remote_calls_are_refused_with_a_message_that_says_how_to_allow_them() -> None:
    with pytest.raises(ConfigurationError) as caught:
        safety.check_real_call("https://api.openai.com/v1", provider="test")

    assert "allow_real_model_calls(True)" in str(caught.value)
    assert safety.ENV_VAR in str(caught.value)


def test_the_environment_decides_when_the_process_has_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with safety.real_model_calls(False):
        safety.allow_real_model_calls(None)  # hand the decision back to the environment
        monkeypatch.setenv(safety.ENV_VAR, "1")
        assert safety.real_model_calls_allowed()
        safety.check_real_call(None, provider="test")
        monkeypatch.setenv(safety.ENV_VAR, "no")
        assert not safety.real_model_calls_allowed()
        monkeypatch.delenv(safety.ENV_VAR)
        assert safety.real_model_calls_allowed()  # an application just works by default
        monkeypatch.setenv(safety.ENV_VAR, "maybe")
        with pytest.raises(ConfigurationError, match="maybe"):
            safety.real_model_calls_allowed()


def test_the_process_switch_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(safety.ENV_VAR, "1")
    with safety.real_model_calls(False):
        assert not safety.real_model_calls_allowed()
        with safety.real_model_calls(True):
            assert safety.real_model_calls_allowed()
        assert not safety.real_model_calls_allowed()


def test_model_names_resolve_to_the_provider_adapters() -> None:
    registry = LlmRegistry(builtins=True)

    gemini = registry.resolve("gemini-2.5-flash")
    local = registry.resolve("openai/llama3.2")

    assert isinstance(gemini, GeminiLlm) and gemini.model == "gemini-2.5-flash"
    assert isinstance(local, OpenAiCompatibleLlm) and local.model == "llama3.2"


def test_an_unknown_model_name_lists_the_registered_patterns() -> None:
    with pytest.raises(UnknownModelError) as caught:
        LlmRegistry(builtins=True).resolve("llama-3-70b")

    message = str(caught.value)
    assert "'llama-3-70b'" in message
    assert "gemini-.*" in message and "openai/.+" in message
