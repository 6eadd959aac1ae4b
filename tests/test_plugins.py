"""Plugins: every hook through a Runner (scenario 52) and the PluginManager (scenario 76)."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from adk_rx import (
    BasePlugin,
    ConfigurationError,
    Event,
    LlmAgent,
    LlmResponse,
    ModelError,
)
from adk_rx.errors import CallbackError
from adk_rx.plugins import PluginManager
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.spine_support import (
    call_response,
    collect,
    create_session,
    new_context,
    new_runner,
    stored,
    text,
    turn,
)


def echo_tool(args_name: str) -> dict[str, Any]:
    """Echoes its argument.

    Args:
        args_name: any text.
    """
    return {"result": {"args_name": args_name}}


def broken_tool(args_name: str) -> dict[str, Any]:
    """Always fails.

    Args:
        args_name: any text.
    """
    raise RuntimeError("tool broke")


class Recording(BasePlugin):
    """A plugin that records the keyword arguments of its one overridden hook."""

    calls: list[dict[str, Any]]


def HookPlugin(hook: str, result: Any = None, name: str = "hook_plugin") -> Recording:
    """A plugin overriding ``hook``: returns ``result`` (raises it when it is an exception)."""

    def method(self: Recording, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if isinstance(result, BaseException):
            raise result
        return result

    plugin = type(f"Hook_{hook}", (Recording,), {hook: method})(name=name)
    plugin.calls = []
    return plugin


def run_with(plugins: list[BasePlugin], script: list[Any], tools: Any = ()) -> tuple[Any, Any]:
    llm = ScriptedLlm(script)
    runner = new_runner(LlmAgent(name="test_agent", model=llm, tools=list(tools)), plugins=plugins)
    create_session(runner)
    return runner, llm


FROM_PLUGIN_RESPONSE = LlmResponse.text("from plugin")
TOOL_TURN = [call_response("echo_tool", {"args_name": "args_value"}), "done"]
TOOL_EVENTS = [
    'test_agent: FunctionCall(echo_tool, {"args_name": "args_value"})',
    'test_agent: FunctionResponse(echo_tool, {"result": "from plugin"})',
    "test_agent: done",
]


# -- scenario 52 --------------------------------------------------------------------------


def test_plugin_that_overrides_nothing_changes_nothing() -> None:
    runner, _ = run_with([BasePlugin(name="noop")], ["from llm"])
    assert simplify_events(turn(runner, "from user")) == ["test_agent: from llm"]


def test_before_run_content_ends_the_run_with_a_model_event_and_skips_the_agent() -> None:
    first = HookPlugin("before_run_callback", text("from plugin", "model"), name="p1")
    second = HookPlugin("before_run_callback", text("second", "model"), name="p2")
    runner, llm = run_with([first, second], ["from llm"])
    assert simplify_events(turn(runner, "from user")) == ["model: from plugin"]
    assert llm.requests == []
    assert second.calls == []


def test_before_run_event_is_persisted_like_every_emitted_event() -> None:
    plugin = HookPlugin("before_run_callback", text("from plugin", "model"))
    runner, _ = run_with([plugin], [])
    events = turn(runner, "from user")
    assert [e.id for e in stored(runner).events[1:]] == [e.id for e in events]


def test_before_agent_plugin_content_replaces_the_agent_run() -> None:
    plugin = HookPlugin("before_agent_callback", text("from plugin", "model"))
    runner, llm = run_with([plugin], ["from llm"])
    assert simplify_events(turn(runner, "from user")) == ["test_agent: from plugin"]
    assert llm.requests == []
    assert plugin.calls[0]["agent"] is runner.agent


def test_after_agent_plugin_content_is_emitted_after_the_agent_output() -> None:
    plugin = HookPlugin("after_agent_callback", text("from plugin", "model"))
    runner, _ = run_with([plugin], ["from llm"])
    assert simplify_events(turn(runner, "from user")) == [
        "test_agent: from llm",
        "test_agent: from plugin",
    ]


@pytest.mark.parametrize(
    ("hook", "script"),
    [
        ("before_model_callback", []),
        ("after_model_callback", ["from llm"]),
        ("on_model_error_callback", [RuntimeError("model broke")]),
    ],
)
def test_model_plugin_hooks_replace_the_model_response(hook: str, script: list[Any]) -> None:
    runner, _ = run_with([HookPlugin(hook, FROM_PLUGIN_RESPONSE)], script)
    assert simplify_events(turn(runner, "from user")) == ["test_agent: from plugin"]


@pytest.mark.parametrize("hook", ["before_tool_callback", "after_tool_callback"])
def test_tool_plugin_hooks_replace_the_tool_result(hook: str) -> None:
    runner, _ = run_with([HookPlugin(hook, {"result": "from plugin"})], TOOL_TURN, [echo_tool])
    assert simplify_events(turn(runner, "from user")) == TOOL_EVENTS


def test_on_tool_error_plugin_result_becomes_the_function_response() -> None:
    plugin = HookPlugin("on_tool_error_callback", {"result": "from plugin"})
    script = [call_response("broken_tool", {"args_name": "args_value"}), "done"]
    runner, _ = run_with([plugin], script, [broken_tool])
    events = turn(runner, "from user")
    assert simplify_events(events)[1:] == [
        'test_agent: FunctionResponse(broken_tool, {"result": "from plugin"})',
        "test_agent: done",
    ]
    assert "tool broke" in str(plugin.calls[0]["error"])


def test_tool_error_without_recovery_becomes_an_error_response_and_the_run_goes_on() -> None:
    plugin = HookPlugin("on_tool_error_callback", None)
    script = [call_response("broken_tool", {"args_name": "args_value"}), "done"]
    runner, llm = run_with([plugin], script, [broken_tool])
    events = turn(runner, "from user")
    response = events[1].get_function_responses()[0].response
    assert list(response) == ["error"]
    assert "tool broke" in response["error"]
    assert simplify_events(events)[-1] == "test_agent: done"
    assert len(llm.requests) == 2


def test_on_event_replacement_is_emitted_and_the_original_is_persisted() -> None:
    class Replace(BasePlugin):
        def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event:
            return event.replace(content=text("replaced", "model"))

    runner, _ = run_with([Replace(name="replace")], ["from llm"])
    events = turn(runner, "from user")
    assert simplify_events(events) == ["test_agent: replaced"]
    assert simplify_events(stored(runner).events) == ["user: from user", "test_agent: from llm"]


@pytest.mark.parametrize("hook", ["before_run_callback", "after_run_callback"])
def test_run_hook_error_fails_the_run_with_the_error_as_cause(hook: str) -> None:
    runner, _ = run_with([HookPlugin(hook, ValueError("hook broke"))], ["from llm"])
    with pytest.raises(CallbackError, match="hook broke") as info:
        turn(runner, "from user")
    assert isinstance(info.value.__cause__, ValueError)


def test_on_run_error_is_called_with_the_model_error() -> None:
    plugin = HookPlugin("on_run_error_callback")
    runner, _ = run_with([plugin], [RuntimeError("model broke")])
    with pytest.raises(ModelError):
        turn(runner, "from user")
    assert len(plugin.calls) == 1
    assert isinstance(plugin.calls[0]["error"], ModelError)
    assert isinstance(plugin.calls[0]["error"].__cause__, RuntimeError)


def test_on_user_message_sees_the_original_message_and_may_replace_it() -> None:
    plugin = HookPlugin("on_user_message_callback", text("rewritten"))
    runner, llm = run_with([plugin], ["from llm"])
    turn(runner, "from user")
    assert plugin.calls[0]["user_message"].parts[0].text == "from user"
    assert simplify_events(stored(runner).events)[0] == "user: rewritten"
    assert llm.requests[0].contents[-1].parts[0].text == "rewritten"


def test_run_hooks_see_the_state_delta_and_before_run_sees_the_user_message() -> None:
    seen: dict[str, Any] = {}

    class Look(BasePlugin):
        def on_user_message_callback(self, *, invocation_context: Any, user_message: Any) -> None:
            seen["on_user_message"] = dict(invocation_context.session.state)

        def before_run_callback(self, *, invocation_context: Any) -> None:
            seen["before_run"] = dict(invocation_context.session.state)
            seen["events"] = simplify_events(invocation_context.session.events)

    runner, _ = run_with([Look(name="look")], ["from llm"])
    turn(runner, "from user", state_delta={"k": "v"})
    assert seen == {
        "on_user_message": {"k": "v"},
        "before_run": {"k": "v"},
        "events": ["user: from user"],
    }


def test_plugin_hooks_run_before_the_agent_callbacks() -> None:
    order: list[str] = []

    class Order(BasePlugin):
        def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            order.append("plugin")

    agent = LlmAgent(
        name="test_agent",
        model=ScriptedLlm(["from llm"]),
        before_model_callback=lambda cc, req: order.append("agent") and None,
    )
    runner = new_runner(agent, plugins=[Order(name="order")])
    create_session(runner)
    turn(runner, "from user")
    assert order == ["plugin", "agent"]


def test_plugin_on_model_error_wins_over_the_agent_callback() -> None:
    agent_calls: list[Any] = []
    agent = LlmAgent(
        name="test_agent",
        model=ScriptedLlm([RuntimeError("model broke")]),
        on_model_error_callback=lambda cc, req, err: agent_calls.append(err),
    )
    plugin = HookPlugin("on_model_error_callback", FROM_PLUGIN_RESPONSE)
    runner = new_runner(agent, plugins=[plugin])
    create_session(runner)
    assert simplify_events(turn(runner, "from user")) == ["test_agent: from plugin"]
    assert agent_calls == []


def test_async_plugin_hooks_are_awaited() -> None:
    class Async(BasePlugin):
        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            return LlmResponse.text("from async plugin")

    runner, llm = run_with([Async(name="async")], [])
    assert simplify_events(turn(runner, "from user")) == ["test_agent: from async plugin"]
    assert llm.requests == []


# -- PluginManager (scenario 76) --------------------------------------------------------------


def test_first_plugin_returning_a_value_wins_and_later_plugins_are_not_called() -> None:
    first = HookPlugin("on_user_message_callback", text("one"), name="p1")
    second = HookPlugin("on_user_message_callback", text("two"), name="p2")
    manager = PluginManager([first, second])
    found = collect(
        manager.first("on_user_message_callback", invocation_context=None, user_message=text("hi"))
    )
    assert [c.parts[0].text for c in found] == ["one"]
    assert second.calls == []


def test_after_run_error_stops_the_chain() -> None:
    first = HookPlugin("after_run_callback", RuntimeError("p1 broke"), name="p1")
    second = HookPlugin("after_run_callback", name="p2")
    manager = PluginManager([first, second])
    with pytest.raises(CallbackError, match="p1 broke"):
        collect(manager.all("after_run_callback", invocation_context=None))
    assert second.calls == []


def test_close_closes_every_plugin_then_raises_the_first_error() -> None:
    closed: list[str] = []

    class Closing(BasePlugin):
        def close(self) -> None:
            closed.append(self.name)
            if self.name == "p1":
                raise RuntimeError("p1 close failed")

    manager = PluginManager([Closing(name="p1"), Closing(name="p2")])
    with pytest.raises(RuntimeError, match="p1 close failed"):
        manager.close()
    assert closed == ["p1", "p2"]


def test_registering_two_plugins_with_one_name_raises() -> None:
    manager = PluginManager([BasePlugin(name="same")])
    with pytest.raises(ConfigurationError, match="already registered"):
        manager.register_plugin(BasePlugin(name="same"))
    assert len(manager.plugins) == 1


def test_plugin_needs_a_name() -> None:
    with pytest.raises(ConfigurationError, match="non-empty name"):
        BasePlugin(name="")


def test_agent_level_plugin_hooks_apply_without_a_runner() -> None:
    plugin = HookPlugin(
        "before_agent_callback", types.Content(role="model", parts=[types.Part(text="plugin")])
    )
    agent = LlmAgent(name="test_agent", model=ScriptedLlm([]))
    ctx = new_context(agent, plugins=PluginManager([plugin]))
    assert simplify_events(collect(agent.run_async(ctx))) == ["test_agent: plugin"]
