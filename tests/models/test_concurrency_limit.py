"""ConcurrencyLimitedLlm: at most N calls of a model open at once, the rest in line."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex as rx
from google.genai import types
from reactivex import operators as ops
from reactivex.subject import Subject

from adk_rx.errors import ConfigurationError
from adk_rx.models import ConcurrencyLimitedLlm, LlmRequest, LlmResponse
from adk_rx.models.concurrency_limit import shared_bulkhead
from adk_rx.rx import Bulkhead
from adk_rx.testing import ScriptedLlm


def _request() -> LlmRequest:
    return LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])])


class Held:
    """Script items whose responses come when the test says (one Subject per call)."""

    def __init__(self) -> None:
        self.calls: list[Subject[LlmResponse]] = []
        self.closed = 0

    def answer(self, index: int) -> None:
        reply = LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))
        self.calls[index].on_next(reply)
        self.calls[index].on_completed()


class HeldLlm(ScriptedLlm):
    def __init__(self) -> None:
        super().__init__(model="held")
        self.held = Held()

    def generate_content(self, llm_request: LlmRequest, stream: bool = False) -> Any:
        def start(_: Any) -> Any:
            subject: Subject[LlmResponse] = Subject()
            self.held.calls.append(subject)
            return subject.pipe(ops.finally_action(self._closed))

        return rx.defer(start)

    def _closed(self) -> None:
        self.held.closed += 1


def test_a_second_call_waits_until_the_first_stream_ends() -> None:
    inner = HeldLlm()
    llm = ConcurrencyLimitedLlm(inner, bulkhead=Bulkhead(1))
    done: list[int] = []

    llm.generate_content(_request()).subscribe(on_completed=lambda: done.append(1))
    llm.generate_content(_request()).subscribe(on_completed=lambda: done.append(2))
    assert len(inner.held.calls) == 1

    inner.held.answer(0)
    assert len(inner.held.calls) == 2
    inner.held.answer(1)
    assert done == [1, 2]


def test_disposing_a_waiting_call_means_the_model_is_never_called() -> None:
    inner = HeldLlm()
    llm = ConcurrencyLimitedLlm(inner, bulkhead=Bulkhead(1))

    llm.generate_content(_request()).subscribe()
    waiting = llm.generate_content(_request()).subscribe()
    waiting.dispose()
    inner.held.answer(0)

    assert len(inner.held.calls) == 1


def test_wrappers_of_one_model_share_its_bulkhead() -> None:
    one = ConcurrencyLimitedLlm(ScriptedLlm(model="shared-model-x"), 2)
    two = ConcurrencyLimitedLlm(ScriptedLlm(model="shared-model-x"), 2)

    assert one.bulkhead is two.bulkhead is shared_bulkhead("shared-model-x", 2)
    with pytest.raises(ConfigurationError, match="already limited"):
        ConcurrencyLimitedLlm(ScriptedLlm(model="shared-model-x"), 3)
