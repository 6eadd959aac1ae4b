"""App, its configs, and Runner(app=...): what an app carries reaches every invocation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from adk_rx import (
    App,
    BasePlugin,
    ConfigurationError,
    EventsCompactionConfig,
    InMemoryRunner,
    InMemorySessionService,
    LlmAgent,
    ResumabilityConfig,
    RunConfig,
    Runner,
)
from adk_rx.loading.loader import load_app, load_target_app
from adk_rx.testing import ScriptedLlm, simplify_events
from tests.cli.test_run import adk_rx


class Counting(BasePlugin):
    def __init__(self) -> None:
        super().__init__("counting")
        self.runs = 0

    def before_run_callback(self, *, invocation_context):
        self.runs += 1


def _agent(*replies: str) -> LlmAgent:
    return LlmAgent(name="helper", model=ScriptedLlm(list(replies)))


def test_runner_takes_its_name_agent_and_plugins_from_the_app():
    plugin = Counting()
    app = App(name="desk", root_agent=_agent("hello"), plugins=[plugin])
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = runner.session_service.create_session(app_name="desk", user_id="u").run()

    events = list(runner.run(user_id="u", session_id=session.id, new_message="hi"))

    assert runner.app_name == "desk"
    assert runner.agent is app.root_agent
    assert simplify_events(events) == ["helper: hello"]
    assert plugin.runs == 1


def test_in_memory_runner_accepts_an_app():
    runner = InMemoryRunner(app=App(name="desk", root_agent=_agent("hello")))

    assert runner.app_name == "desk"
    assert runner.app.root_agent.name == "helper"


@pytest.mark.parametrize(
    "extra",
    [{"agent": _agent()}, {"app_name": "other"}, {"plugins": [Counting()]}],
)
def test_app_is_exclusive_with_agent_app_name_and_plugins(extra):
    app = App(name="desk", root_agent=_agent())

    with pytest.raises(ConfigurationError, match="either app= or agent="):
        Runner(app=app, session_service=InMemorySessionService(), **extra)


def test_a_runner_without_app_or_agent_is_refused():
    with pytest.raises(ConfigurationError, match="app_name"):
        Runner(session_service=InMemorySessionService())


@pytest.mark.parametrize("name", ["user", "not an identifier", "", 3])
def test_app_names_must_be_identifiers_other_than_user(name):
    with pytest.raises(ConfigurationError, match="app"):
        App(name=name, root_agent=_agent())


def test_app_checks_its_parts():
    with pytest.raises(ConfigurationError, match="root_agent"):
        App(name="desk", root_agent="agent")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="plugins"):
        App(name="desk", root_agent=_agent(), plugins=["p"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="resumability_config"):
        App(name="desk", root_agent=_agent(), resumability_config=True)  # type: ignore[arg-type]


def test_app_is_immutable_and_reports_resumability():
    app = App(name="desk", root_agent=_agent())
    resumable = app.replace(resumability_config=ResumabilityConfig(is_resumable=True))

    with pytest.raises(AttributeError):
        app.name = "other"  # type: ignore[misc]
    assert not app.is_resumable
    assert resumable.is_resumable
    assert resumable.name == "desk"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "needs compaction_interval and overlap_size, or token_threshold"),
        ({"compaction_interval": 3}, "together"),
        ({"token_threshold": 1000}, "together"),
        ({"compaction_interval": 0, "overlap_size": 1}, "compaction_interval must be"),
        ({"compaction_interval": 2, "overlap_size": -1}, "overlap_size must be"),
        ({"token_threshold": 10, "event_retention_size": 1.5}, "event_retention_size must"),
    ],
)
def test_compaction_config_needs_a_complete_pair(options, message):
    with pytest.raises(ConfigurationError, match=message):
        EventsCompactionConfig(**options)


def test_compaction_config_accepts_either_pair_or_both():
    window = EventsCompactionConfig(compaction_interval=3, overlap_size=0)
    tokens = EventsCompactionConfig(token_threshold=1000, event_retention_size=2)
    both = EventsCompactionConfig(
        compaction_interval=3, overlap_size=1, token_threshold=1000, event_retention_size=2
    )

    assert window.has_window and not window.has_token_trigger
    assert tokens.has_token_trigger and not tokens.has_window
    assert both.has_window and both.has_token_trigger


APP_FOLDER = """
from adk_rx import App, BasePlugin, LlmAgent, LlmResponse, ResumabilityConfig
from adk_rx.models.llm_response import model_content
from google.genai import types
from adk_rx.testing import ScriptedLlm


class Stamp(BasePlugin):
    def after_model_callback(self, *, callback_context, llm_response):
        text = llm_response.content.parts[0].text + " [stamped]"
        return LlmResponse(content=model_content(types.Part(text=text)))


app = App(
    name="named_in_code",
    root_agent=LlmAgent(name="helper", model=ScriptedLlm(["hello"] * 10)),
    plugins=[Stamp("stamp")],
    resumability_config=ResumabilityConfig(is_resumable=True),
)
"""


def _app_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(APP_FOLDER)
    return folder


def test_a_folder_exposing_app_loads_as_that_app_named_after_the_folder(tmp_path: Path):
    folder = _app_folder(tmp_path / "agents", "app_folder_a")

    app = load_target_app(str(folder))
    served = load_app(tmp_path / "agents", "app_folder_a")

    assert app.name == served.name == "app_folder_a"
    assert app.is_resumable and served.is_resumable
    assert [p.name for p in app.plugins] == ["stamp"]


def test_adk_rx_run_runs_a_folder_exposing_app_with_its_plugins(tmp_path: Path):
    folder = _app_folder(tmp_path / "agents", "app_folder_b")

    done = adk_rx(tmp_path, "run", str(folder), "-m", "hi", "--jsonl", "--in-memory")

    assert done.returncode == 0, done.stderr
    assert "hello [stamped]" in done.stdout


@pytest.mark.asyncio
async def test_api_server_serves_a_folder_exposing_app(tmp_path: Path):
    from adk_rx.cli.server import create_app

    _app_folder(tmp_path / "agents", "app_folder_c")
    server = create_app(tmp_path / "agents", session_service=InMemorySessionService())
    transport = httpx.ASGITransport(app=server)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        apps = (await client.get("/list-apps")).json()
        created = await client.post("/apps/app_folder_c/users/u/sessions", json={})
        session_id = created.json()["id"]
        ran = await client.post(
            "/run",
            json={
                "app_name": "app_folder_c",
                "user_id": "u",
                "session_id": session_id,
                "new_message": {"role": "user", "parts": [{"text": "hi"}]},
            },
        )

    assert "app_folder_c" in apps
    assert ran.status_code == 200, ran.text
    replies = [e for e in ran.json() if "content" in e]
    assert replies[-1]["content"]["parts"][0]["text"] == "hello [stamped]"
    assert ran.json()[-1]["actions"]["endOfAgent"] is True  # the app is resumable


def test_the_durable_app_example_pauses_resumes_and_deletes(tmp_path: Path):
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "examples" / "durable_app.py"
    spec = importlib.util.spec_from_file_location("durable_app_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    said = module.main(f"sqlite:///{tmp_path / 'refunds.db'}")

    assert said == [
        "check: Order 1234 qualifies for a refund.",
        "approve: Approved: refunding 40 EUR.",
        "notify: Customer notified.",
    ]


def test_the_apps_pricing_prices_a_run_whose_run_config_has_none() -> None:
    from adk_rx.usage import ModelPrice, Pricing

    pricing = Pricing({".*": ModelPrice(input_per_million=1.0, output_per_million=1.0)})
    seen: list[object] = []

    class Look(BasePlugin):
        def before_model_callback(self, *, callback_context: Any, **_: Any) -> None:
            seen.append(callback_context.invocation_context.run_config.pricing)

    app = App(
        name="desk",
        root_agent=_agent("hello", "again"),
        plugins=[Look(name="look")],
        pricing=pricing,
    )
    runner = InMemoryRunner(app=app)
    own = Pricing({".*": ModelPrice(input_per_million=5.0, output_per_million=5.0)})
    for config in (RunConfig(auto_create_session=True), RunConfig(pricing=own)):
        list(runner.run(user_id="u", session_id="s", new_message="hi", run_config=config))

    assert seen == [pricing, own]
    with pytest.raises(ConfigurationError, match="pricing"):
        App(name="desk", root_agent=_agent("hello"), pricing={"x": 1})  # type: ignore[arg-type]
