"""The dev page's live text mode (over /run_live) and its eval sets (add this session, run,
read the results), end to end in headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server.routes.test_live_route import LIVE_AGENT
from tests.cli.server_support import live_server, unique_app, write_agents
from tests.cli.test_web_browser import WAIT_MS, browser, shots, sync_api

__all__ = ["browser", "shots"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, str, InMemorySessionService]]:
    chat_app, voice_app = unique_app("webeval"), unique_app("weblive")
    root = write_agents(tmp_path / "agents", chat_app)
    (root / voice_app).mkdir()
    (root / voice_app / "agent.py").write_text(LIVE_AGENT)
    service = InMemorySessionService()
    app = create_app(root, web=True, session_service=service, data_dir=tmp_path / "data")
    with live_server(app) as live:
        yield live.url, chat_app, voice_app, service


def test_live_text_mode_talks_over_the_websocket(
    browser: Any, served: tuple[str, str, str, InMemorySessionService], shots: Path
) -> None:
    url, _, voice_app, service = served
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    try:
        page.goto(url)
        page.select_option("#app", voice_app)
        page.click("#new-session")
        expect(page.locator("#sessions li")).to_have_count(1)
        page.check("#live")
        expect(page.locator("#status")).to_contain_text("live")

        page.fill("#message", "hello there")
        page.click("#send")

        expect(page.locator("#chat .msg.model").last).to_contain_text("echo: hello there")
        page.fill("#message", "weather Oslo")
        page.click("#send")
        expect(page.locator("#chat .msg.model").last).to_contain_text("It is sunny in Oslo.")
        page.screenshot(path=str(shots / "web_live_text.png"))
        page.uncheck("#live")
        expect(page.locator("#status")).to_have_text("idle")
        listed = service.list_sessions(app_name=voice_app, user_id="user").run()
        (session,) = listed.sessions
        stored = service.get_session(app_name=voice_app, user_id="user", session_id=session.id)
        texts = [e.text() for e in stored.run().events if e.text()]
        assert texts == ["hello there", "echo: hello there", "weather Oslo", "It is sunny in Oslo."]
    finally:
        page.close()


def test_live_started_while_a_new_session_is_on_its_way_joins_that_session(
    browser: Any, served: tuple[str, str, str, InMemorySessionService]
) -> None:
    url, _, voice_app, service = served
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    try:
        page.goto(url)
        page.select_option("#app", voice_app)
        page.click("#new-session")
        page.check("#live")  # before the new session is open: the live start must not make another
        expect(page.locator("#status")).to_contain_text("live")
        expect(page.locator("#sessions li")).to_have_count(1)
        page.uncheck("#live")
        expect(page.locator("#status")).to_have_text("idle")
        listed = service.list_sessions(app_name=voice_app, user_id="user").run()
        assert len(listed.sessions) == 1
    finally:
        page.close()


def test_a_session_is_added_to_an_eval_set_and_the_set_runs_in_the_page(
    browser: Any, served: tuple[str, str, str, InMemorySessionService], shots: Path
) -> None:
    url, chat_app, _, _ = served
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    answers = iter(["smoke", "oslo_weather"])
    page.on("dialog", lambda dialog: dialog.accept(next(answers)))
    try:
        page.goto(url)
        page.select_option("#app", chat_app)
        page.fill("#message", "weather Oslo")
        page.click("#send")
        expect(page.locator("#chat .msg.model").last).to_contain_text("It is sunny in Oslo.")
        expect(page.locator("#send")).to_be_enabled()

        page.click("#add-eval")
        expect(page.locator("#evalsets li")).to_contain_text("smoke")
        page.locator("#evalsets li .run-eval").first.click()

        results = page.locator("#eval-results")
        expect(results).to_contain_text("oslo_weather")
        expect(results).to_contain_text("PASS")
        expect(page.locator("#inspector h2")).to_contain_text("1 of 1 passed")
        page.screenshot(path=str(shots / "web_eval_results.png"))
    finally:
        page.close()
