"""The server's limits as ``adk-rx api-server`` options, against a real server process:
sizes, depth and the run deadline, each set from the command line or the environment."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.cli.server_process import REPO, ServerProcess, api_server_process
from tests.cli.server_support import user_text, write_agents

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("limits")
    agents = write_agents(root / "agents", "chat")
    options = ("--max-body-bytes", "4096", "--run-timeout", "1")
    env = {"ADK_RX_MAX_PARTS": "2", "ADK_RX_MAX_JSON_ITEMS": "100"}
    with api_server_process(agents, root, *options, env=env) as process:
        yield process


@pytest.fixture
def http(server: ServerProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def run_body(sid: str, text: str = "hi", **extra) -> dict:
    body = {"app_name": "chat", "user_id": "u1", "session_id": sid}
    return {**body, "new_message": user_text(text), **extra}


def new_session(http: httpx.Client, sid: str) -> None:
    assert http.post("/apps/chat/users/u1/sessions", json={"session_id": sid}).status_code == 200


def test_help_lists_every_limit_with_its_default_and_variable():
    shown = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "api-server", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    for flag, env in [
        ("--max-body-bytes", "ADK_RX_MAX_BODY_BYTES"),
        ("--max-parts", "ADK_RX_MAX_PARTS"),
        ("--max-state-bytes", "ADK_RX_MAX_STATE_BYTES"),
        ("--max-json-depth", "ADK_RX_MAX_JSON_DEPTH"),
        ("--max-json-items", "ADK_RX_MAX_JSON_ITEMS"),
        ("--body-timeout", "ADK_RX_BODY_TIMEOUT"),
        ("--run-timeout", "ADK_RX_RUN_TIMEOUT"),
        ("--invocation-retention", "ADK_RX_INVOCATION_RETENTION"),
        ("--kept-per-user", "ADK_RX_KEPT_PER_USER"),
        ("--kept-log-bytes", "ADK_RX_KEPT_LOG_BYTES"),
    ]:
        assert flag in shown and env in shown
    assert "default: 300.0" in shown  # the run deadline


def test_a_100k_deep_body_answers_400_and_the_connection_stays_usable(http: httpx.Client):
    new_session(http, "deep")
    nested = "[" * 100_000 + "]" * 100_000
    body = json.dumps(run_body("deep", state_delta={"k": 0})).replace('"k": 0', f'"k": {nested}')
    # Larger than the 4096-byte limit: 413 first; with the limit out of the way, a 400.
    assert http.post("/run", content=body).status_code == 413
    small = "[" * 1500 + "]" * 1500
    body = json.dumps(run_body("deep", state_delta={"k": 0})).replace('"k": 0', f'"k": {small}')
    answer = http.post("/run", content=body)
    assert answer.status_code == 400
    assert "nested deeper" in answer.json()["detail"]
    assert http.post("/run", json=run_body("deep")).status_code == 200  # same connection


def test_body_and_parts_limits_come_from_the_option_and_the_environment(http: httpx.Client):
    new_session(http, "sizes")
    answer = http.post("/run", json=run_body("sizes", "x" * 5000))
    assert answer.status_code == 413 and "4096 bytes" in answer.json()["detail"]
    message = {"role": "user", "parts": [{"text": "a"}, {"text": "b"}, {"text": "c"}]}
    answer = http.post("/run", json={**run_body("sizes"), "new_message": message})
    assert answer.status_code == 400 and "limit (2)" in answer.json()["detail"]
    events = http.get("/apps/chat/users/u1/sessions/sizes").json()["events"]
    assert events == []


def test_the_item_limit_comes_from_the_environment(http: httpx.Client):
    new_session(http, "items")
    within = http.post("/run", json=run_body("items", state_delta={"k": list(range(80))}))
    assert within.status_code == 200, within.text
    answer = http.post("/run", json=run_body("items", state_delta={"k": list(range(120))}))
    assert answer.status_code == 413 and "more than 100 items" in answer.json()["detail"]


def test_a_hung_model_is_cut_by_the_run_deadline_and_frees_the_session(http: httpx.Client):
    new_session(http, "hung")
    started = http.post(
        "/apps/chat/users/u1/sessions/hung/invocations",
        json={"new_message": user_text("slow 1 3600")},  # the one chunk comes in an hour
    )
    assert started.status_code == 202
    url = f"/apps/chat/users/u1/sessions/hung/invocations/{started.json()['invocation_id']}"
    frames = http.get(f"{url}/events").text  # ends when the run ends
    end = json.loads(frames.rsplit("data: ", 1)[1])
    assert end["status"] == "timeout"
    assert "InvocationTimeoutError" in end["error"]
    stored = http.get("/apps/chat/users/u1/sessions/hung").json()["events"]
    assert stored[-1]["errorCode"] == "TIMEOUT"
    assert http.post("/run", json=run_body("hung")).status_code == 200  # not 409
