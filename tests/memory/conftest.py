"""Fixtures for the memory tests: a scripted provider server for the embedders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_rx.models import safety
from tests.models._fakes import FakeServer, serving_fake


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """A fresh scripted server on 127.0.0.1:<free port>, stopped after the test."""
    with serving_fake() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _refuse_real_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test here may reach a real provider, whatever the environment says."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with safety.real_model_calls(False):
        yield
