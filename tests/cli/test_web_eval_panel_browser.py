"""The dev page's eval panel in headless Chromium: the app's shipped eval set is listed and
runs, each case shows expected against actual per turn, and adding a session that waits for
an approval warns that the case holds no approval."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import live_server, unique_app
from tests.cli.test_web_browser import WAIT_MS, browser, shots, sync_api

__all__ = ["browser", "shots"]

FILES_AGENT = '''
from google.genai import types
from adk_rx import FunctionTool, LlmAgent, LlmResponse
from adk_rx.testing import ScriptedLlm

def delete_file(path: str) -> dict:
    """Deletes a file."""
    return {"deleted": path}

def lookup(name: str) -> dict:
    """Looks a file up."""
    return {"name": name, "size": 12}

def answer(request):
    part = request.contents[-1].parts[0]
    if part.function_response is not None:
        body = part.function_response.response or {}
        if "size" in body:
            return LlmResponse.text(f"{body['name']} has 12 bytes.")
        return LlmResponse.text("Waiting for your approval.")
    text = part.text or ""
    tool, arg = ("delete_file", "path") if text.startswith("delete") else ("lookup", "name")
    call = types.FunctionCall(name=tool, args={arg: text.split()[-1]})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))

root_agent = LlmAgent(
    name="files",
    model=ScriptedLlm([answer] * 100),
    tools=[FunctionTool(delete_file, require_confirmation=True), lookup],
)
'''


def _turn(text: str, answer: str, *calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {"tool_uses": list(calls)},
    }


def _lookup(name: str) -> dict[str, Any]:
    return {"name": "lookup", "args": {"name": name}}


SHIPPED = {
    "eval_set_id": "shipped_checks",
    "eval_cases": [
        {
            "eval_id": "size_ok",
            "conversation": [_turn("size a.txt", "a.txt has 12 bytes.", _lookup("a.txt"))],
        },
        {
            "eval_id": "size_changed",
            "conversation": [_turn("size b.txt", "b.txt has 99 bytes.", _lookup("c.txt"))],
        },
    ],
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    app_name = unique_app("webevalpanel")
    folder = tmp_path / "agents" / app_name
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(FILES_AGENT)
    (folder / "shipped_checks.evalset.json").write_text(json.dumps(SHIPPED))
    app = create_app(
        tmp_path / "agents",
        web=True,
        session_service=InMemorySessionService(),
        data_dir=tmp_path / "data",
    )
    with live_server(app) as live:
        yield live.url, app_name


def test_the_shipped_set_runs_and_each_case_shows_expected_against_actual(
    browser: Any, served: tuple[str, str], shots: Path
) -> None:
    url, app_name = served
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    try:
        page.goto(url)
        page.select_option("#app", app_name)
        expect(page.locator("#evalsets li")).to_contain_text("shipped_checks")

        page.locator("#evalsets li .run-eval").first.click()

        expect(page.locator("#inspector h2")).to_contain_text("1 of 2 passed")
        changed = page.locator("#eval-results tr.eval-diff").nth(1)
        expect(changed.locator("details")).to_have_attribute("open", "")
        expect(changed.locator(".expected del.diff").first).to_have_text("99")
        expect(changed.locator(".actual ins.diff").first).to_have_text("12")
        expect(changed.locator(".expected")).to_contain_text(['lookup({"name":"c.txt"})'])
        expect(changed.locator(".actual")).to_contain_text(['lookup({"name":"b.txt"})'])
        passing = page.locator("#eval-results tr.eval-diff").first
        expect(passing.locator("details")).not_to_have_attribute("open", "")
        page.screenshot(path=str(shots / "web_eval_panel_diffs.png"))
    finally:
        page.close()


def test_adding_a_session_that_waits_for_an_approval_warns(
    browser: Any, served: tuple[str, str], shots: Path
) -> None:
    url, app_name = served
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    answers = iter(["mine", "pending_delete"])
    page.on("dialog", lambda dialog: dialog.accept(next(answers)))
    try:
        page.goto(url)
        page.select_option("#app", app_name)
        page.fill("#message", "delete a.txt")
        page.click("#send")
        expect(page.locator("#chat")).to_contain_text("Waiting for your approval.")
        expect(page.locator("#send")).to_be_enabled()

        page.click("#add-eval")

        warning = page.locator("#eval-warning")
        expect(warning).to_contain_text("pending_delete")
        expect(warning).to_contain_text("approval of delete_file")
        expect(page.locator("#evalsets li")).to_contain_text(["mine", "shipped_checks"])
        page.screenshot(path=str(shots / "web_eval_panel_warning.png"))
    finally:
        page.close()
