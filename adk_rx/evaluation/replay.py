"""Running a case's user side against the agent: recorded turns, or a simulated user.

A recorded turn whose user content answers a call (a function response to an approval
request ``adk_request_confirmation``, a credential request ``adk_request_credential``, or a
long-running tool's call) cannot be sent as recorded: the call it answers was made again in
this run, under a new id. :func:`answering_this_run` gives each such response the id of the
call of the same name that this run left unanswered, in order, so the approval (or result, or
credential) reaches the call it was recorded for. An answer that finds no such call is sent
as recorded, and the turn then shows what the agent did with it.

Each run's events get the user's message in front (with the run's invocation id), as google-
adk's eval does, so the turns can be grouped by invocation.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.evaluation.evalset import EvalCase
from adk_rx.evaluation.intermediate import RUNTIME_REQUESTS
from adk_rx.evaluation.simulation import LlmBackedUserSimulator, LlmBackedUserSimulatorConfig
from adk_rx.events import Event
from adk_rx.runner import Runner

__all__ = ["answering_this_run", "play_case", "unanswered_calls", "waiting_for"]


def unanswered_calls(events: Sequence[Event]) -> list[types.FunctionCall]:
    """The calls of agents in ``events`` that no function response answered yet, in order."""
    answered = {r.id for event in events for r in event.get_function_responses() if r.id}
    return [
        call
        for event in events
        if event.author != "user"
        for call in event.get_function_calls()
        if call.id and call.id not in answered
    ]


def waiting_for(events: Sequence[Event]) -> list[types.FunctionCall]:
    """The calls a session waits for the user to answer: approval and credential requests and
    long-running calls without a response (a case made from it would not hold the answer)."""
    waiting = {i for event in events for i in event.long_running_tool_ids or ()}
    return [
        call
        for call in unanswered_calls(events)
        if call.name in RUNTIME_REQUESTS or call.id in waiting
    ]


def answering_this_run(message: types.Content, events: Sequence[Event]) -> types.Content:
    """``message`` with each function response's id set to the unanswered call it answers."""
    parts = message.parts or []
    if not any(p.function_response for p in parts):
        return message
    waiting = unanswered_calls(events)
    remapped: list[types.Part] = []
    for part in parts:
        response = part.function_response
        match = None
        if response is not None:
            match = next((c for c in waiting if c.name == response.name), None)
        if response is None or match is None:
            remapped.append(part)
            continue
        waiting.remove(match)
        answer = response.model_copy(update={"id": match.id})
        remapped.append(part.model_copy(update={"function_response": answer}))
    return message.model_copy(update={"parts": remapped})


def _one_run(
    runner: Runner, user_id: str, session_id: str, message: types.Content
) -> Observable[list[Event]]:
    def with_user(events: list[Event]) -> list[Event]:
        invocation_id = events[0].invocation_id if events else f"e-{uuid.uuid4()}"
        return [Event(author="user", invocation_id=invocation_id, content=message), *events]

    return runner.run_async(user_id=user_id, session_id=session_id, new_message=message).pipe(
        ops.filter(lambda event: not event.partial), ops.to_list(), ops.map(with_user)
    )


def play_case(
    runner: Runner,
    case: EvalCase,
    user_id: str,
    session_id: str,
    simulator_config: LlmBackedUserSimulatorConfig | None = None,
) -> Observable[list[Event]]:
    """Every event of the case's runs, each run's user message first (one list)."""
    scenario = case.conversation_scenario
    if scenario is None:
        so_far: list[Event] = []

        def turn(message: types.Content) -> Observable[list[Event]]:
            # deferred: the answer is matched to the calls of the turns before, once they ran
            return rx.defer(
                lambda _: _one_run(
                    runner, user_id, session_id, answering_this_run(message, so_far)
                ).pipe(ops.do_action(so_far.extend))
            )

        return rx.from_iterable([t.user_content for t in case.turns]).pipe(
            ops.concat_map(turn), ops.to_list(), ops.map(lambda runs: [e for r in runs for e in r])
        )
    user = LlmBackedUserSimulator(simulator_config or LlmBackedUserSimulatorConfig(), scenario)

    def step(events: list[Event]) -> Observable[list[Event]]:
        def then(message: types.Content | None) -> Observable[list[Event]]:
            if message is None:
                return rx.just(events)
            return _one_run(runner, user_id, session_id, message).pipe(
                ops.flat_map(lambda new: step([*events, *new]))
            )

        return user.next_message(events).pipe(ops.flat_map(then))

    return rx.defer(lambda _: step([]))
