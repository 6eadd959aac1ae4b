"""Contexts: a callback or tool context's actions and state, made when first used."""

from __future__ import annotations

import dataclasses

from adk_rx.context import ActionsBuilder, CallbackContext, InvocationContext, ToolContext
from adk_rx.events import EMPTY_ACTIONS
from adk_rx.sessions import InMemorySessionService, Session
from tests.spine_support import services_of


@dataclasses.dataclass
class _Agent:
    name: str = "helper"


def _invocation() -> InvocationContext:
    session = Session(id="s1", app_name="app", user_id="u1", state={"seen": 1})
    return InvocationContext(
        session=session,
        agent=_Agent(),  # type: ignore[arg-type]
        services=services_of(InMemorySessionService(), {}),
    )


def test_a_context_that_recorded_nothing_freezes_to_the_shared_empty_actions() -> None:
    tc = ToolContext(_invocation(), function_call_id="call-1", tool_name="save")

    assert tc.frozen_actions() is EMPTY_ACTIONS
    assert tc.state["seen"] == 1  # reading makes the state view, and records nothing
    assert tc.frozen_actions() is EMPTY_ACTIONS


def test_state_writes_and_actions_set_later_are_in_the_frozen_actions() -> None:
    tc = ToolContext(_invocation(), function_call_id="call-1", tool_name="save")

    tc.state["k"] = "v"
    tc.actions.escalate = True

    frozen = tc.frozen_actions()
    assert frozen.state_delta == {"k": "v"}
    assert frozen.escalate is True


def test_a_context_given_a_builder_records_into_it() -> None:
    shared = ActionsBuilder()
    cc = CallbackContext(_invocation(), shared)

    cc.state["k"] = 1

    assert cc.actions is shared
    assert shared.state_delta == {"k": 1}
