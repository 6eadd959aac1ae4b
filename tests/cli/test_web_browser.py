"""``adk-rx web`` end to end in headless Chromium: chat, streamed text, inspector, Stop, rejoin.

Needs Debian's ``chromium`` package (or ``CHROMIUM=/path/to/chromium``) and the ``playwright``
Python package; Playwright's own browser download is never used. Screenshots go to
``ADK_RX_SHOTS_DIR`` (default: ``adk_rx_shots`` in the system temp folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import live_server, unique_app, write_agents

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 20_000

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)
if not Path(CHROMIUM).is_file():
    pytest.skip(
        f"no Chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM)",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def shots() -> Path:
    folder = Path(
        os.environ.get("ADK_RX_SHOTS_DIR") or Path(tempfile.gettempdir()) / "adk_rx_shots"
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str, InMemorySessionService]]:
    app = unique_app("web")
    service = InMemorySessionService()
    server = create_app(write_agents(tmp_path / "agents", app), web=True, session_service=service)
    with live_server(server) as live:
        yield live.url, app, service


def stored_events(service: InMemorySessionService, app: str, user: str) -> list[Any]:
    listed = service.list_sessions(app_name=app, user_id=user).run()
    (session,) = listed.sessions
    return service.get_session(app_name=app, user_id=user, session_id=session.id).run().events


def test_chat_streams_inspects_a_tool_call_and_stops_a_slow_stream(
    browser: Any, served: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, service = served
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    try:
        page.goto(url)
        expect(page.locator("#app option")).to_have_text([app])
        page.fill("#user", "alice")
        page.dispatch_event("#user", "change")

        # A tool turn: the call, its response and the streamed answer.
        page.fill("#message", "weather Paris")
        page.click("#send")
        expect(page.locator("#chat .msg.model").last).to_contain_text("It is sunny in Paris.")
        expect(page.locator("#send")).to_be_enabled()
        page.locator("#chat .chip.call").first.click()
        inspector = page.locator("#inspector")
        expect(inspector).to_contain_text("Function call get_weather")
        expect(inspector.locator("pre.call")).to_contain_text('"city": "Paris"')
        expect(inspector).to_contain_text("author")
        expect(inspector).to_contain_text("partial")
        expect(page.locator("#timeline .bar.tool")).to_have_count(1)
        expect(page.locator("#timeline .bar.model")).to_have_count(2)
        page.screenshot(path=str(shots / "web_tool_call_inspector.png"))
        page.click("#tab-state")
        expect(page.locator("#state")).to_be_visible()
        page.locator("#events tr.ev").last.click()
        expect(page.locator("#state")).to_contain_text('"last_reply": "It is sunny in Paris."')
        page.screenshot(path=str(shots / "web_state_as_of_event.png"))
        page.click("#tab-inspector")

        # A slow stream: text arrives token by token; Stop cancels the invocation.
        page.fill("#message", "slow 2000 0.02")
        page.click("#send")
        streaming = page.locator("#chat .msg.streaming")
        expect(streaming).to_contain_text("tok5 ")
        expect(page.locator("#stop")).to_be_enabled()
        expect(page.locator("#events tr.ev.partial").first).to_be_visible()
        page.screenshot(path=str(shots / "web_streaming.png"))
        page.click("#stop")
        expect(page.locator("#chat .chip.error")).to_contain_text("CANCELLED")
        expect(page.locator("#stop")).to_be_disabled()
        expect(page.locator("#status")).to_have_text("idle")
        # What streamed before Stop stays on screen, marked as not stored.
        expect(page.locator("#chat .msg.interrupted")).to_contain_text("tok0 tok1 tok2 tok3 tok4 ")
        page.screenshot(path=str(shots / "web_stopped.png"))
        events = stored_events(service, app, "alice")
        assert events[-1].error_code == "CANCELLED"
        assert not any(e.partial for e in events)
    finally:
        page.close()


def test_a_refresh_rejoins_the_running_invocation(
    browser: Any, served: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, service = served
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    try:
        page.goto(url)
        expect(page.locator("#app option")).to_have_text([app])
        page.fill("#message", "slow 2000 0.02")
        page.click("#send")
        expect(page.locator("#chat .msg.streaming")).to_contain_text("tok3 ")
        running = page.evaluate("sessionStorage.getItem('adk_rx.running')")
        assert running and '"iid":"e-' in running

        page.reload()
        # The page rejoins from the saved cursor: the stream goes on in the same bubble.
        expect(page.locator("#status")).to_contain_text("running")
        expect(page.locator("#chat .msg.streaming")).to_contain_text("tok40 ")
        text = page.locator("#chat .msg.streaming").inner_text()
        assert "tok0 tok1 tok2 tok3 " in text  # nothing streamed before the refresh is lost
        page.screenshot(path=str(shots / "web_rejoined.png"))
        page.click("#stop")
        expect(page.locator("#chat .chip.error")).to_contain_text("CANCELLED")
        assert page.evaluate("sessionStorage.getItem('adk_rx.running')") is None
        assert stored_events(service, app, "user")[-1].error_code == "CANCELLED"
    finally:
        page.close()
