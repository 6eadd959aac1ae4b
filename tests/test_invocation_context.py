"""InvocationContext: its copies keep every field but the changed ones and ``end_invocation``."""

from __future__ import annotations

import dataclasses

import pytest

from adk_rx import InMemorySessionService, LlmAgent
from adk_rx.context import InvocationContext
from adk_rx.services import InvocationServices
from adk_rx.testing import ScriptedLlm


def _context() -> InvocationContext:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u").run()
    return InvocationContext(
        session=session,
        agent=LlmAgent(name="a", model=ScriptedLlm([])),
        services=InvocationServices(session_service=service),
        branch="a",
    )


def test_a_copy_keeps_every_field_and_shares_the_invocation_state() -> None:
    ctx = _context()
    ctx.end_invocation = True
    copy = ctx.copy()
    for field in dataclasses.fields(InvocationContext):
        if field.name != "end_invocation":
            assert getattr(copy, field.name) is getattr(ctx, field.name), field.name
    assert copy.end_invocation is False  # per copy: an agent's end is not its child's


def test_a_copy_changes_the_fields_it_names_and_no_others() -> None:
    ctx = _context()
    other = LlmAgent(name="b", model=ScriptedLlm([]))
    copy = ctx.copy(agent=other, branch="a.b")
    assert copy.agent is other and copy.branch == "a.b"
    assert ctx.agent.name == "a" and ctx.branch == "a"
    with pytest.raises(AttributeError):
        ctx.copy(no_such_field=1)


def test_cancelled_reads_the_invocation_wide_flag() -> None:
    ctx = _context()
    copy = ctx.copy()
    assert not copy.cancelled
    ctx.shared.cancelled = True
    assert copy.cancelled
