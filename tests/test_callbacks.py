"""Callbacks: sync, async or Observable; the first non-None result wins; errors are typed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import reactivex as rx

from adk_rx import AdkRxError, ConfigurationError, LlmAgent, ModelError
from adk_rx.callbacks import as_callback_list, first_result
from adk_rx.errors import CallbackError
from adk_rx.testing import ScriptedLlm
from tests.spine_support import collect


class Calls:
    """Records which thunks ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def returning(self, name: str, value: Any) -> Any:
        def thunk() -> Any:
            self.ran.append(name)
            return value

        return thunk


def test_first_non_none_result_wins_and_later_callbacks_are_not_called() -> None:
    calls = Calls()
    thunks = [calls.returning("a", None), calls.returning("b", "B"), calls.returning("c", "C")]
    assert collect(first_result(thunks)) == ["B"]
    assert calls.ran == ["a", "b"]


def test_all_none_completes_empty() -> None:
    calls = Calls()
    assert collect(first_result([calls.returning("a", None), calls.returning("b", None)])) == []
    assert calls.ran == ["a", "b"]
    assert collect(first_result([])) == []


def test_nothing_runs_before_subscription_and_each_subscription_runs_again() -> None:
    calls = Calls()
    chain = first_result([calls.returning("a", "A")])
    assert calls.ran == []
    collect(chain)
    collect(chain)
    assert calls.ran == ["a", "a"]


def test_async_result_is_awaited_and_an_empty_one_falls_through() -> None:
    calls = Calls()

    async def nothing() -> None:
        await asyncio.sleep(0)
        calls.ran.append("async-none")

    async def value() -> str:
        await asyncio.sleep(0)
        return "async"

    thunks = [nothing, value, calls.returning("never", "x")]
    assert collect(first_result(thunks)) == ["async"]
    assert calls.ran == ["async-none"]


def test_observable_result_takes_its_first_item_and_an_empty_one_falls_through() -> None:
    calls = Calls()
    thunks = [lambda: rx.empty(), lambda: rx.of("x", "y"), calls.returning("never", "z")]
    assert collect(first_result(thunks)) == ["x"]
    assert calls.ran == []


def test_raising_callback_becomes_callback_error_naming_it_with_the_cause() -> None:
    def broken() -> Any:
        raise ValueError("bad value")

    with pytest.raises(CallbackError, match=r"broken.*ValueError: bad value") as info:
        collect(first_result([broken]))
    assert isinstance(info.value.__cause__, ValueError)


def test_failing_async_callback_becomes_callback_error() -> None:
    async def broken() -> Any:
        raise KeyError("k")

    with pytest.raises(CallbackError, match="KeyError"):
        collect(first_result([broken]))


def test_adk_rx_errors_pass_through_unchanged() -> None:
    error = ModelError("model down")

    def broken() -> Any:
        raise error

    with pytest.raises(AdkRxError) as info:
        collect(first_result([broken]))
    assert info.value is error


def test_as_callback_list_accepts_none_one_callable_or_a_list() -> None:
    def f() -> None: ...

    assert as_callback_list(None) == ()
    assert as_callback_list(f) == (f,)
    assert as_callback_list([f, f]) == (f, f)


@pytest.mark.parametrize("value", [3, "callback", [print, 3]])
def test_as_callback_list_rejects_what_is_not_callable(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="callable"):
        as_callback_list(value)


def test_agent_given_a_non_callable_callback_raises_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="not callable"):
        LlmAgent(name="agent", model=ScriptedLlm(), before_model_callback=[print, "oops"])


def test_a_callback_chain_calls_plugins_by_keyword_then_the_agent_callbacks_in_order() -> None:
    from adk_rx.callbacks import callback_chain
    from adk_rx.plugins import BasePlugin, PluginManager

    calls: list[object] = []

    class Recorder(BasePlugin):
        def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            calls.append(("plugin", callback_context, llm_request))

    def first(cc: Any, request: Any) -> None:
        calls.append(("first", cc, request))

    def second(cc: Any, request: Any) -> str:
        calls.append(("second", cc, request))
        return "answer"

    def never(cc: Any, request: Any) -> str:
        raise AssertionError("the chain stops at the first result")

    plugins = PluginManager([Recorder("recorder")])
    got = collect(
        callback_chain(
            plugins,
            "before_model_callback",
            (first, second, never),
            ("cc", "req"),
            callback_context="cc",
            llm_request="req",
        )
    )
    assert got == ["answer"]
    assert calls == [("plugin", "cc", "req"), ("first", "cc", "req"), ("second", "cc", "req")]
