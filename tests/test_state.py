"""State: a view that records writes as a delta; REMOVED deletes; temp: keys are not stored."""

from __future__ import annotations

import pytest

from adk_rx import State
from adk_rx.state import REMOVED, apply_delta, persistent_delta


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
