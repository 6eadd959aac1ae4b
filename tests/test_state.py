"""State: a view that records writes as a delta; REMOVED deletes; temp: keys are not stored."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from adk_rx import (
    CallbackContext,
    InMemorySessionService,
    LlmAgent,
    SqlSessionService,
    State,
    StateValueError,
    ToolContext,
)
from adk_rx.sessions.base import BaseSessionService
from adk_rx.state import REMOVED, apply_delta, persistent_delta
from adk_rx.testing import ScriptedLlm
from tests.spine_support import (
    USER,
    call_response,
    collect,
    create_session,
    new_runner,
    stored,
    text,
)


def test_prefix_constants() -> None:
    assert (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX) == ("app:", "user:", "temp:")


def test_writes_go_to_the_delta_and_reads_see_them_first() -> None:
    committed = {"a": 1, "b": 2}
    state = State(committed)
    state["a"] = 10
    state["c"] = 3
    assert committed == {"a": 1, "b": 2}
    assert state.delta == {"a": 10, "c": 3}
    assert (state["a"], state["b"], state["c"]) == (10, 2, 3)
    assert state.to_dict() == {"a": 10, "b": 2, "c": 3}
    assert state.has_delta()


def test_a_fresh_view_has_no_delta() -> None:
    state = State({"a": 1})
    assert not state.has_delta()
    assert state.get("a") == 1


def test_setting_none_or_deleting_records_removed() -> None:
    state = State({"a": 1, "b": 2})
    state["a"] = None
    del state["b"]
    assert state.delta == {"a": REMOVED, "b": REMOVED}
    assert "a" not in state and "b" not in state
    with pytest.raises(KeyError):
        state["a"]
    assert len(state) == 0


def test_deleting_a_missing_key_raises_key_error() -> None:
    with pytest.raises(KeyError):
        del State({})["missing"]


def test_apply_delta_sets_values_and_removed_deletes() -> None:
    target = {"a": 1, "b": 2}
    apply_delta(target, {"a": REMOVED, "c": 3, "gone": REMOVED})
    assert target == {"b": 2, "c": 3}


def test_persistent_delta_drops_temp_keys_only() -> None:
    delta = {"temp:x": 1, "app:y": 2, "user:z": 3, "plain": 4}
    assert persistent_delta(delta) == {"app:y": 2, "user:z": 3, "plain": 4}


def test_removed_sentinel_is_plain_json() -> None:
    assert isinstance(REMOVED, str)
    assert State.REMOVED == REMOVED


# -- writes no store can keep fail when they are made, the same for every store ------------


def test_a_value_json_cannot_hold_fails_at_write_time_naming_key_and_writer() -> None:
    state = State({}, writer="tool 'save'")
    with pytest.raises(StateValueError, match=r"state key 'when' \(written by tool 'save'\)"):
        state["when"] = datetime.datetime(2026, 1, 1)
    assert state.delta == {}


def test_a_non_string_key_fails_at_write_time() -> None:
    with pytest.raises(StateValueError, match=r"state key 1 .*must be strings"):
        State({})[1] = "x"  # type: ignore[index]


def test_a_shared_key_no_store_can_keep_fails_at_write_time_naming_the_writer() -> None:
    state = State({}, writer="tool 'save'")
    with pytest.raises(StateValueError, match=r"'user:a\\x00b' \(written by tool 'save'\) .*NUL"):
        state["user:a\x00b"] = 1
    with pytest.raises(StateValueError, match=r"513 characters long; .* at most 512"):
        state["app:" + "k" * 509] = 1
    assert state.delta == {}
    state["a\x00b"] = state["temp:a\x00b"] = 1  # a session key is stored inside JSON
    state["app:" + "k" * 508] = 1
    assert len(state.delta) == 3


def test_temp_keys_may_hold_anything_they_are_never_stored() -> None:
    state = State({})
    marker = object()
    state["temp:handle"] = marker
    assert state["temp:handle"] is marker


def _stores(tmp_path: Path) -> list[BaseSessionService]:
    return [InMemorySessionService(), SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")]


@pytest.mark.parametrize("store", ["in_memory", "sqlite"])
def test_a_tool_writing_a_datetime_gets_an_error_naming_it_in_every_store(
    store: str, tmp_path: Path
) -> None:
    def save(tool_context: ToolContext) -> dict[str, bool]:
        """Saves the time."""
        tool_context.state["when"] = datetime.datetime(2026, 1, 1)
        return {"saved": True}

    service = _stores(tmp_path)[0 if store == "in_memory" else 1]
    llm = ScriptedLlm([call_response("save"), "done"])
    runner = new_runner(LlmAgent(name="a", model=llm, tools=[save]), session_service=service)
    create_session(runner)
    events = collect(runner.run_async(user_id=USER, session_id="s1", new_message=text("go")))
    (response,) = events[1].get_function_responses()
    assert "state key 'when' (written by tool 'save')" in response.response["error"]
    assert "when" not in stored(runner).state


@pytest.mark.parametrize("store", ["in_memory", "sqlite"])
def test_a_callback_writing_an_object_fails_the_run_naming_the_callback(
    store: str, tmp_path: Path
) -> None:
    def remember(callback_context: CallbackContext) -> None:
        callback_context.state["thing"] = object()

    service = _stores(tmp_path)[0 if store == "in_memory" else 1]
    agent = LlmAgent(name="a", model=ScriptedLlm(["hi"]), before_agent_callback=remember)
    runner = new_runner(agent, session_service=service)
    create_session(runner)
    with pytest.raises(StateValueError, match=r"'thing' \(written by callback .*remember\)"):
        collect(runner.run_async(user_id=USER, session_id="s1", new_message=text("go")))


def test_a_state_delta_with_a_non_string_key_is_refused_when_the_run_is_built() -> None:
    runner = new_runner(LlmAgent(name="a", model=ScriptedLlm(["hi"])))
    with pytest.raises(StateValueError, match=r"state key 1 .*state_delta"):
        runner.run_async(
            user_id=USER,
            session_id="s1",
            new_message=text("go"),
            state_delta={1: "x"},  # type: ignore[dict-item]
        )
