"""RunConfig(dedupe_tool_calls=True): a repeated call of an idempotent tool is answered from the
earlier response, not run again, and its response event says which call it repeats."""

from __future__ import annotations

from typing import Any

import pytest
from reactivex import operators as ops

from adk_rx import FunctionTool, InMemoryRunner, LlmAgent, RunConfig
from adk_rx.events import Event
from adk_rx.testing import ScriptedLlm
from tests.reactive_support import call_response

pytestmark = pytest.mark.timeout(30)


class Lookup:
    def __init__(self, fail_first: bool = False) -> None:
        self.runs: list[str] = []
        self.fail_first = fail_first

    def __call__(self, city: str) -> str:
        """Looks a city up."""
        self.runs.append(city)
        if self.fail_first and len(self.runs) == 1:
            raise RuntimeError("flaky")
        return f"{city}: sunny"


def turn(tool: FunctionTool, script: list[Any], **config: Any) -> list[Event]:
    runner = InMemoryRunner(
        agent=LlmAgent(name="root", model=ScriptedLlm(script), tools=[tool]), app_name="app"
    )
    runner.session_service.create_session(app_name="app", user_id="u", session_id="s").run()
    return (
        runner.run_async(
            user_id="u", session_id="s", new_message="go", run_config=RunConfig(**config)
        )
        .pipe(ops.to_list())
        .run()
    )


def answers(events: list[Event]) -> list[Event]:
    return [e for e in events if e.get_function_responses()]


SCRIPT = [
    call_response("lookup", {"city": "Oslo"}, "c1"),
    call_response("lookup", {"city": "Oslo"}, "c2"),
    "done",
]


def test_a_repeated_call_of_an_idempotent_tool_is_answered_from_the_earlier_one() -> None:
    lookup = Lookup()
    tool = FunctionTool(lookup, name="lookup", idempotent=True)

    events = turn(tool, SCRIPT, dedupe_tool_calls=True)

    assert lookup.runs == ["Oslo"]
    first, second = answers(events)
    assert second.get_function_responses()[0].response == {"result": "Oslo: sunny"}
    assert second.get_function_responses()[0].id == "c2"
    assert second.custom_metadata == {"deduplicated_from": "c1"}
    assert first.custom_metadata is None


@pytest.mark.parametrize(
    ("idempotent", "dedupe", "script"),
    [
        (False, True, SCRIPT),
        (True, False, SCRIPT),
        (
            True,
            True,
            [
                call_response("lookup", {"city": "Oslo"}, "c1"),
                call_response("lookup", {"city": "Rome"}, "c2"),
                "done",
            ],
        ),
    ],
    ids=["not idempotent", "dedupe off", "other arguments"],
)
def test_other_calls_run(idempotent: bool, dedupe: bool, script: list[Any]) -> None:
    lookup = Lookup()
    tool = FunctionTool(lookup, name="lookup", idempotent=idempotent)

    events = turn(tool, script, dedupe_tool_calls=dedupe)

    assert len(lookup.runs) == 2
    assert all(e.custom_metadata is None for e in answers(events))


def test_an_error_is_not_reused() -> None:
    lookup = Lookup(fail_first=True)
    tool = FunctionTool(lookup, name="lookup", idempotent=True)

    events = turn(tool, SCRIPT, dedupe_tool_calls=True)

    assert lookup.runs == ["Oslo", "Oslo"]
    assert answers(events)[1].get_function_responses()[0].response == {"result": "Oslo: sunny"}


def test_a_repeat_costs_no_tool_call_of_the_budget() -> None:
    lookup = Lookup()
    tool = FunctionTool(lookup, name="lookup", idempotent=True)

    events = turn(tool, SCRIPT, dedupe_tool_calls=True, max_tool_calls=1)

    assert events[-1].text() == "done"
