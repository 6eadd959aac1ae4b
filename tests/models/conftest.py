"""Fixtures for the model tests: a scripted provider server, and no real model calls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from adk_rx.models import safety

from ._fakes import FakeServer, serving_fake


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """A fresh scripted server on 127.0.0.1:<free port>, stopped after the test."""
    with serving_fake() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _refuse_real_calls() -> Iterator[None]:
    """No test here may reach a real provider, whatever the environment says."""
    with safety.real_model_calls(False):
        yield
