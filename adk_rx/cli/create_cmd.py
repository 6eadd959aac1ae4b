"""``adk-rx create NAME [--model M]``: a runnable agent folder, offline by default.

The folder holds ``agent.py`` (the agent, its model picked from the environment),
``tools.py`` (one tool), ``test_agent.py`` (tests on a scripted model, with the testing kit),
``evals/`` (an eval set and its criteria) and ``trajectory.jsonl``: the model traffic of one
conversation, recorded here from a scripted model, which the agent replays when no model is
configured. So ``adk-rx run NAME``, ``adk-rx web .``, ``adk-rx eval NAME NAME/evals`` and
``python -m pytest NAME`` work at once, without a key. With ``--model M`` the agent calls M
instead (its credentials, e.g. ``GOOGLE_API_KEY``, are needed then); the recording stays,
for ``adk-rx run NAME --replay NAME/trajectory.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from google.genai import types

__all__ = ["add_create_parser", "create_agent_folder", "create_command"]

EXIT_OK, EXIT_USAGE = 0, 2
QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny in Paris, 21 °C."
_RECORDER = "adk-rx-create-recorder"

_AGENT = '''"""{name}: an agent that answers weather questions with one tool.

The model, in this order: ``ADK_RX_MODEL`` (set by ``adk-rx run --model NAME`` or
``--replay FILE``), then {default_doc}.
"""

from __future__ import annotations

import os
from pathlib import Path

from adk_rx import BaseLlm, LlmAgent
from adk_rx.models.recording import ReplayLlm

from .tools import get_weather

TRAJECTORY = Path(__file__).with_name("trajectory.jsonl")
MODEL = {model!r}


def pick_model() -> str | BaseLlm:
    """The model name or object, from the environment (see the module docstring)."""
    if name := os.environ.get("ADK_RX_MODEL"):
        return name
    if MODEL:
        return MODEL
    return ReplayLlm(TRAJECTORY, reuse=True)  # offline: any number of sessions replay it


def build(model: str | BaseLlm) -> LlmAgent:
    """The agent on ``model``."""
    return LlmAgent(
        name={name!r},
        model=model,
        description="Answers weather questions.",
        instruction="Answer weather questions. Call get_weather for the city, then say what "
        "it found in one sentence.",
        tools=[get_weather],
        output_key="last_answer",
    )


root_agent = build(pick_model())
'''

_TOOLS = '''"""The tools of {name}."""

from __future__ import annotations

from adk_rx import ToolContext

WEATHER = {{"paris": {{"sky": "sunny", "celsius": 21}}, "oslo": {{"sky": "snow", "celsius": -3}}}}


def get_weather(city: str, tool_context: ToolContext) -> dict:
    """Returns the weather in a city.

    Args:
        city: the city's name, e.g. "Paris".
    """
    found = WEATHER.get(city.strip().lower())
    if found is None:
        return {{"error": f"no weather for {{city}}"}}
    tool_context.state["last_city"] = city
    return {{"city": city, **found}}
'''

_TEST = '''"""Tests of {name} on a scripted model: no network, milliseconds.

Run them with ``python -m pytest {name}``; ``adk-rx eval {name} {name}/evals`` runs the eval
set against the agent's own model (offline: the recording).
"""

from __future__ import annotations

from google.genai import types

from adk_rx import InMemoryRunner, LlmResponse, RunConfig
from adk_rx.testing import ScriptedLlm, simplify_events, with_model

from .agent import root_agent


def call(name: str, **args: object) -> LlmResponse:
    """A model response that calls one tool."""
    part = types.Part(function_call=types.FunctionCall(name=name, args=args))
    return LlmResponse(content=types.Content(role="model", parts=[part]))


def test_the_agent_looks_the_weather_up_and_answers() -> None:
    llm = ScriptedLlm([call("get_weather", city="Paris"), {answer!r}])
    runner = InMemoryRunner(agent=with_model(root_agent, llm), app_name={name!r})
    config = RunConfig(auto_create_session=True)

    events = list(
        runner.run(user_id="u", session_id="s", new_message={question!r}, run_config=config)
    )

    assert simplify_events(events)[-1] == {final!r}
    (weather,) = [r for e in events for r in e.get_function_responses()]
    assert weather.response == {{"city": "Paris", "sky": "sunny", "celsius": 21}}
    session = runner.session_service.get_session(
        app_name={name!r}, user_id="u", session_id="s"
    ).run()
    assert session.state["last_city"] == "Paris"
    assert llm.requests[0].contents[-1].parts[0].text == {question!r}


def test_an_unknown_city_comes_back_to_the_model_as_an_error() -> None:
    llm = ScriptedLlm([call("get_weather", city="Atlantis"), "I do not know Atlantis."])
    runner = InMemoryRunner(agent=with_model(root_agent, llm), app_name={name!r})
    config = RunConfig(auto_create_session=True)

    events = list(
        runner.run(user_id="u", session_id="s", new_message="Atlantis?", run_config=config)
    )

    (weather,) = [r for e in events for r in e.get_function_responses()]
    assert weather.response == {{"error": "no weather for Atlantis"}}
'''


def add_create_parser(commands: Any) -> None:
    """Adds the ``create`` subcommand to the ``adk-rx`` parser."""
    parser = commands.add_parser(
        "create",
        help="write a runnable agent folder (offline by default)",
        description="Write the agent folder NAME: agent.py, tools.py, test_agent.py, an eval "
        "set, and a recorded conversation the agent replays when no model is configured.",
    )
    parser.add_argument("name", metavar="NAME", help="the folder (and app) name, an identifier")
    parser.add_argument(
        "--model",
        metavar="M",
        help="the model the agent calls (e.g. gemini-2.5-flash); default: offline replay",
    )


def create_command(args: argparse.Namespace) -> int:
    """Runs ``adk-rx create``; returns the exit status."""
    from adk_rx.errors import AdkRxError

    try:
        folder = create_agent_folder(Path(args.name), model=args.model)
    except AdkRxError as exc:
        print(f"adk-rx: {exc}", file=sys.stderr)
        return EXIT_USAGE
    name = folder.name
    print(f"created {folder}/: agent.py, tools.py, test_agent.py, evals/, trajectory.jsonl")
    print(f"  adk-rx run {args.name} -m {QUESTION!r}")
    print(f"  python -m pytest {args.name}")
    print(f"  adk-rx eval {args.name} {args.name}/evals")
    print(f"  adk-rx web {folder.parent}   (then pick {name})")
    return EXIT_OK


def create_agent_folder(folder: Path, *, model: str | None = None) -> Path:
    """Writes the agent folder and records its conversation; returns the folder.

    Raises:
        ConfigurationError: the name is not an identifier, or the folder exists and is not
            empty.
    """
    from adk_rx.errors import ConfigurationError

    name = folder.name
    if not name.isidentifier():
        raise ConfigurationError(
            f"{name!r} is not a Python identifier: use letters, digits and underscores"
        )
    if folder.exists() and any(folder.iterdir()):
        raise ConfigurationError(f"{folder} exists and is not empty; pick another name")
    default_doc = f"``{model}``" if model else "the recording ``trajectory.jsonl`` (offline)"
    final = f"{name}: {ANSWER}"
    files = {
        "__init__.py": f'"""The {name} agent folder."""\n',
        "agent.py": _AGENT.format(name=name, model=model, default_doc=default_doc),
        "tools.py": _TOOLS.format(name=name),
        "test_agent.py": _TEST.format(name=name, answer=ANSWER, question=QUESTION, final=final),
    }
    (folder / "evals").mkdir(parents=True, exist_ok=True)
    for file_name, text in files.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    evals = folder / "evals"
    (evals / f"{name}.evalset.json").write_text(_evalset(name), encoding="utf-8")
    criteria = {"criteria": {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}}
    (evals / "test_config.json").write_text(json.dumps(criteria, indent=2) + "\n")
    _record(folder)
    return folder


def _record(folder: Path) -> None:
    """Runs the conversation on a scripted model through ``RecordingLlm`` (streamed)."""
    from adk_rx import InMemoryRunner, LlmRegistry, LlmResponse, RunConfig, StreamingMode
    from adk_rx.loading.loader import load_agent
    from adk_rx.models.recording import RecordingLlm
    from adk_rx.testing import ScriptedLlm

    call = types.Part(function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"}))
    scripted = ScriptedLlm(
        [
            LlmResponse(content=types.Content(role="model", parts=[call])),
            ["It is sunny in Paris, ", "21 °C."],
        ],
        model="gemini-2.5-flash",
    )
    recorder = RecordingLlm(scripted, folder / "trajectory.jsonl")
    LlmRegistry.register(_RECORDER, lambda _name: recorder)
    previous = os.environ.get("ADK_RX_MODEL")
    os.environ["ADK_RX_MODEL"] = _RECORDER  # agent.py's first choice
    try:
        agent = load_agent(str(folder))
    finally:
        if previous is None:
            os.environ.pop("ADK_RX_MODEL", None)
        else:
            os.environ["ADK_RX_MODEL"] = previous
    runner = InMemoryRunner(agent=agent, app_name=folder.name)
    config = RunConfig(streaming_mode=StreamingMode.SSE, auto_create_session=True)
    list(
        runner.run(user_id="user", session_id="recording", new_message=QUESTION, run_config=config)
    )


def _evalset(name: str) -> str:
    user = types.Content(role="user", parts=[types.Part(text=QUESTION)])
    final = types.Content(role="model", parts=[types.Part(text=ANSWER)])
    weather = {"city": "Paris", "sky": "sunny", "celsius": 21}
    case = {
        "eval_id": "weather_in_paris",
        "conversation": [
            {
                "invocation_id": "e-created-0",
                "user_content": user.model_dump(mode="json", exclude_none=True),
                "final_response": final.model_dump(mode="json", exclude_none=True),
                "intermediate_data": {
                    "tool_uses": [
                        {"id": "call-1", "args": {"city": "Paris"}, "name": "get_weather"}
                    ],
                    "tool_responses": [
                        {"id": "call-1", "name": "get_weather", "response": weather}
                    ],
                    "intermediate_responses": [],
                },
                "creation_timestamp": 0.0,
            }
        ],
        "session_input": {"app_name": name, "user_id": "user", "state": {}},
        "creation_timestamp": 0.0,
    }
    body = {
        "eval_set_id": name,
        "name": name,
        "description": "The question the recording answers.",
        "eval_cases": [case],
    }
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"
