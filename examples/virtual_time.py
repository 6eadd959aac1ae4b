"""Deadlines and retries in virtual time: a TestScheduler drives every timer, nothing sleeps.

Two experiments on one ``reactivex.testing.TestScheduler``:

1. Retries: a model fails twice with a retryable error (a 503) and then answers; a
   ``ResilientLlm`` waits 1 s and then 2 s (virtual) between attempts.
2. A deadline: a model that never answers, under ``RunConfig(timeout=30)``; at virtual
   second 30 the invocation is cancelled, its stream errors with InvocationTimeoutError and
   the session records TIMEOUT.

Run: ``python examples/virtual_time.py`` (prints the virtual times; takes milliseconds).
"""

from __future__ import annotations

import reactivex as rx
from reactivex.testing import TestScheduler

from adk_rx import InvocationTimeoutError, LlmAgent, ModelError, RunConfig, Runner
from adk_rx.models import LlmRequest, LlmResponse
from adk_rx.models.base import BaseLlm
from adk_rx.models.resilience import ResilientLlm, RetryNotice, RetryPolicy
from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.testing import ScriptedLlm


class SilentLlm(BaseLlm):
    """A model that never answers (a hung connection)."""

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> rx.Observable[LlmResponse]:
        return rx.never()


def _waits(scheduler: TestScheduler, notice: RetryNotice) -> str:
    return f"t={scheduler.clock:g}s retry in {notice.delay:g}s"


def retries(scheduler: TestScheduler) -> list[str]:
    """Two 503s, then an answer; returns what happened, with virtual timestamps."""
    log: list[str] = []
    unavailable = ModelError("503 unavailable", status=503, retryable=True)
    flaky = ScriptedLlm([unavailable, unavailable, "back online"])
    model = ResilientLlm(
        flaky,
        retry=RetryPolicy(max_attempts=3, initial_delay=1.0, multiplier=2.0, jitter=0.0),
        scheduler=scheduler,
        on_retry=lambda notice: log.append(_waits(scheduler, notice)),
    )
    model.generate_content(LlmRequest(model="flaky")).subscribe(
        on_next=lambda r: log.append(f"t={scheduler.clock:g}s answer: {r.content.parts[0].text}")
    )
    scheduler.advance_by(10)
    return log


def deadline(scheduler: TestScheduler) -> list[str]:
    """A run that hits RunConfig.timeout; returns what happened and what was stored."""
    log: list[str] = []
    sessions = InMemorySessionService()
    agent = LlmAgent(name="waiter", model=SilentLlm(model="silent"))
    runner = Runner(
        app_name="demo", agent=agent, session_service=sessions, timer_scheduler=scheduler
    )
    session = sessions.create_session(app_name="demo", user_id="u").run()

    def failed(error: Exception) -> None:
        kind = "timed out" if isinstance(error, InvocationTimeoutError) else "failed"
        log.append(f"t={scheduler.clock:g}s the run {kind}: {error}")

    runner.run_async(
        user_id="u", session_id=session.id, new_message="hello?", run_config=RunConfig(timeout=30)
    ).subscribe(on_error=failed)
    scheduler.advance_to(29.999)
    log.append(f"t={scheduler.clock:g}s still waiting")
    scheduler.advance_to(30)
    runner.when_idle(user_id="u", session_id=session.id).run()
    stored = sessions.get_session(app_name="demo", user_id="u", session_id=session.id).run()
    log.append(f"stored: {[e.error_code or e.author for e in stored.events]}")
    return log


if __name__ == "__main__":
    for line in retries(TestScheduler()) + deadline(TestScheduler()):
        print(line)
