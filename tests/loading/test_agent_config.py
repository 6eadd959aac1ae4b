"""Agent Config (root_agent.yaml): the same file through google-adk 2.13's from_config and ours,
hostile configs, and the commands that load an agent folder (subprocesses)."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from adk_rx.errors import AgentLoadError
from adk_rx.loading.agent_config import from_config
from tests.cli.test_run import adk_rx

TOOLS = '''
def get_weather(city: str) -> dict:
    """Returns the weather in a city."""
    return {"city": city, "sky": "sunny"}


def note(callback_context):
    return None
'''

MODELS = """
import reactivex as rx
from google.genai import types

from adk_rx import BaseLlm, LlmResponse


def _said(request):
    last = request.contents[-1].parts[-1]
    if last.function_response is not None:
        return LlmResponse.text(f"It is {last.function_response.response['sky']}.")
    call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))


class Offline(BaseLlm):
    def generate_content(self, llm_request, stream=False):
        return rx.just(_said(llm_request))


offline = Offline(model="offline")
"""


def _package(root: Path, model_line: str) -> tuple[Path, str]:
    name = f"cfg_{uuid.uuid4().hex[:8]}"
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "tools.py").write_text(TOOLS)
    (folder / "models.py").write_text(MODELS)
    (folder / "root_agent.yaml").write_text(
        textwrap.dedent(f"""\
            name: desk
            {model_line}
            description: The front desk.
            instruction: Answer weather questions for {{user:name?}}.
            output_key: last_answer
            tools:
              - name: {name}.tools.get_weather
            before_agent_callbacks:
              - name: {name}.tools.note
            sub_agents:
              - config_path: steps.yaml
            """)
    )
    (folder / "steps.yaml").write_text(
        textwrap.dedent("""\
            agent_class: SequentialAgent
            name: steps
            description: Two steps.
            sub_agents:
              - config_path: sub/first.yaml
              - config_path: sub/loop.yaml
            """)
    )
    (folder / "sub").mkdir()
    (folder / "sub" / "first.yaml").write_text("name: first\ninstruction: Go first.\n")
    (folder / "sub" / "loop.yaml").write_text(
        "agent_class: LoopAgent\nname: again\nmax_iterations: 2\nsub_agents:\n"
        "  - config_path: first_again.yaml\n"
    )
    (folder / "sub" / "first_again.yaml").write_text("name: first_again\ninstruction: Again.\n")
    return folder, name


def _tree(agent: Any) -> dict[str, Any]:
    """What both libraries must agree on, per agent."""
    return {
        "class": type(agent).__name__.replace("Agent", "") or "Llm",
        "name": agent.name,
        "description": agent.description or "",
        "instruction": getattr(agent, "instruction", None) or "",
        "model": (agent.model or None) if isinstance(getattr(agent, "model", None), str) else None,
        "output_key": getattr(agent, "output_key", None),
        "tools": sorted(
            getattr(t, "__name__", getattr(t, "name", "")) for t in getattr(agent, "tools", [])
        ),
        "max_iterations": getattr(agent, "max_iterations", None),
        "callbacks": len(_callbacks(agent)),
        "sub_agents": [_tree(a) for a in agent.sub_agents],
    }


def _callbacks(agent: Any) -> list[Any]:
    found = agent.before_agent_callback
    if found is None:
        return []
    return list(found) if isinstance(found, list | tuple) else [found]


def test_a_config_builds_the_same_tree_as_google_adk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from google.adk.agents.config_agent_utils import from_config as adk_from_config

    folder, _ = _package(tmp_path, "model: gemini-2.5-flash")
    monkeypatch.syspath_prepend(str(tmp_path))

    theirs = _tree(adk_from_config(str(folder / "root_agent.yaml")))
    ours = _tree(from_config(folder / "root_agent.yaml"))

    assert ours == theirs
    assert ours["sub_agents"][0]["sub_agents"][1]["max_iterations"] == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[1, 2]", "a mapping of fields"),
        ("name: a\nmodle: x\n", "unknown field(s) for LlmAgent: modle"),
        ("instruction: x\n", "name is required"),
        ("name: a\nagent_class: os.system\n", "is not an agent class"),
        ("name: a\ntools:\n  - name: no_such.module.fn\n", "cannot import 'no_such.module.fn'"),
        ("name: a\ntools:\n  - name: not_a_tool\n", "not one of adk_rx.tools' built-in tools"),
        ("name: a\nsub_agents:\n  - config_path: /etc/passwd\n", "must be relative"),
        ("name: a\nsub_agents:\n  - config_path: ../../outside.yaml\n", "leaves"),
        ("name: a\nsub_agents:\n  - code: x\n    config_path: y\n", "each entry is"),
        ("name: a\nmodel_code: {name: '__import__(\"os\")'}\n", "not a dotted name"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_a_bad_config_is_an_agent_load_error_naming_the_file(
    tmp_path: Path, text: str, message: str
):
    config = tmp_path / "deep" / "root_agent.yaml"
    config.parent.mkdir()
    config.write_text(text)

    with pytest.raises(AgentLoadError) as raised:
        from_config(config)

    assert message in str(raised.value)
    assert str(config) in str(raised.value)


# -- the commands -----------------------------------------------------------------------------


def test_run_eval_and_bench_load_a_config_folder(tmp_path: Path):
    folder, name = _package(tmp_path / "agents", "model_code: {name: placeholder}")
    config = (folder / "root_agent.yaml").read_text()
    (folder / "root_agent.yaml").write_text(
        config.replace(
            "model_code: {name: placeholder}", f"model_code:\n  name: {name}.models.offline"
        ).replace("sub_agents:\n  - config_path: steps.yaml\n", "")
    )
    evals = folder / "evals"
    evals.mkdir()
    case = {
        "eval_id": "paris",
        "conversation": [
            {
                "invocation_id": "e-0",
                "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                "final_response": {"role": "model", "parts": [{"text": "It is sunny."}]},
                "intermediate_data": {
                    "tool_uses": [{"id": "c", "name": "get_weather", "args": {"city": "Paris"}}],
                    "tool_responses": [],
                    "intermediate_responses": [],
                },
                "creation_timestamp": 0.0,
            }
        ],
        "session_input": {"app_name": name, "user_id": "user", "state": {}},
        "creation_timestamp": 0.0,
    }
    body = {"eval_set_id": "cfg", "name": "cfg", "eval_cases": [case]}
    (evals / "cfg.evalset.json").write_text(json.dumps(body))

    ran = adk_rx(tmp_path, "run", f"agents/{name}", "--in-memory", "-m", "Weather in Paris?")
    evaluated = adk_rx(tmp_path, "eval", f"agents/{name}", str(evals / "cfg.evalset.json"))
    benched = adk_rx(tmp_path, "bench", f"agents/{name}", "-n", "3", "-m", "Weather in Paris?")

    assert ran.returncode == 0, ran.stderr
    assert '→ desk calls get_weather(city="Paris")' in ran.stdout
    assert "desk: It is sunny." in ran.stdout
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert "1 of 1 cases passed" in evaluated.stdout
    assert benched.returncode == 0, benched.stderr
    assert "turns/s" in benched.stdout


def test_the_server_lists_and_runs_a_config_folder(tmp_path: Path):
    from adk_rx import InMemorySessionService
    from adk_rx.cli.server import create_app
    from tests.cli.server_support import live_server

    folder, name = _package(tmp_path / "agents", "model_code: {name: placeholder}")
    config = (folder / "root_agent.yaml").read_text()
    (folder / "root_agent.yaml").write_text(
        config.replace(
            "model_code: {name: placeholder}", f"model_code:\n  name: {name}.models.offline"
        ).replace("sub_agents:\n  - config_path: steps.yaml\n", "")
    )
    import httpx

    server = create_app(folder.parent, web=True, session_service=InMemorySessionService())
    with live_server(server) as live:
        apps = httpx.get(f"{live.url}/list-apps", timeout=10).json()
        body = {
            "app_name": name,
            "user_id": "u",
            "session_id": "s",
            "new_message": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
        }
        httpx.post(f"{live.url}/apps/{name}/users/u/sessions", json={"session_id": "s"}, timeout=10)
        events = httpx.post(f"{live.url}/run", json=body, timeout=30).json()

    assert name in apps
    assert events[-1]["content"]["parts"][0]["text"] == "It is sunny."


@pytest.mark.parametrize("command", ["api-server", "web"])
def test_the_server_processes_run_a_config_folder(tmp_path: Path, command: str):
    import httpx

    from tests.cli.server_process import api_server_process

    folder, name = _package(tmp_path / "agents", "model_code: {name: placeholder}")
    config = (folder / "root_agent.yaml").read_text()
    (folder / "root_agent.yaml").write_text(
        config.replace("placeholder", f"{name}.models.offline").replace(
            "sub_agents:\n  - config_path: steps.yaml\n", ""
        )
    )
    body = {
        "app_name": name,
        "user_id": "u",
        "session_id": "s",
        "new_message": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
    }
    with api_server_process(folder.parent, tmp_path, command=command) as server:
        apps = httpx.get(f"{server.url}/list-apps", timeout=10).json()
        httpx.post(
            f"{server.url}/apps/{name}/users/u/sessions", json={"session_id": "s"}, timeout=10
        )
        events = httpx.post(f"{server.url}/run", json=body, timeout=30).json()

    assert apps == [name]
    assert events[-1]["content"]["parts"][0]["text"] == "It is sunny."
