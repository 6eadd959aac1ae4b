"""The dev page with apps that fail to load, end to end in headless Chromium: it opens on an
app that loads, shows a broken app's traceback as ``adk-rx run`` prints it, names the extra a
missing dependency needs, and keeps what the user typed."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import AGENT_SOURCE, live_server, unique_app, write_agents
from tests.cli.test_server_broken_app import BROKEN
from tests.cli.test_web_browser import WAIT_MS, browser, shots, sync_api

__all__ = ["browser", "shots"]


@pytest.fixture
def apps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str, str, str]]:
    """(url, an app needing mcp, a broken app, an app that loads), sorted in that order; the
    agents folder is ``tmp_path / "agents"``."""
    monkeypatch.setitem(sys.modules, "mcp", None)  # as after the base install
    needs_mcp, broken, fine = unique_app("a_notes"), unique_app("b_broken"), unique_app("c_chat")
    root = write_agents(tmp_path / "agents", fine)
    for name, source in ((needs_mcp, "from mcp import StdioServerParameters\n"), (broken, BROKEN)):
        (root / name).mkdir()
        (root / name / "agent.py").write_text(source)
    server = create_app(root, web=True, session_service=InMemorySessionService())
    with live_server(server) as live:
        yield live.url, needs_mcp, broken, fine


def _page(browser: Any, url: str) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    sync_api.expect.set_options(timeout=WAIT_MS)
    page.goto(url)
    return page


def test_the_page_opens_on_an_app_that_loads(browser: Any, apps: tuple[str, str, str, str]) -> None:
    url, needs_mcp, broken, fine = apps
    expect = sync_api.expect
    page = _page(browser, url)
    try:
        expect(page.locator("#app")).to_have_value(fine)
        expect(page.locator(f'#app option[value="{needs_mcp}"]')).to_contain_text("fails to load")
        expect(page.locator(f'#app option[value="{broken}"]')).to_contain_text("fails to load")
        expect(page.locator("#chat .empty-state")).to_contain_text(fine)
        page.fill("#message", "hello")
        page.click("#send")
        expect(page.locator("#chat .msg.model").last).to_contain_text("echo: hello")
    finally:
        page.close()


def test_a_broken_app_shows_its_traceback_and_keeps_the_typed_message(
    browser: Any, apps: tuple[str, str, str, str], shots: Path, tmp_path: Path
) -> None:
    url, needs_mcp, broken, _ = apps
    expect = sync_api.expect
    page = _page(browser, url)
    try:
        page.select_option("#app", needs_mcp)
        failure = page.locator("#chat .failure.load-error")
        expect(failure).to_contain_text("it needs the mcp extra: pip install 'adk_rx[mcp]'")
        expect(failure.locator("pre.traceback")).to_contain_text("from mcp import")

        page.select_option("#app", broken)
        expect(failure).to_contain_text(f"app {broken!r} failed to load")
        traceback = failure.locator("pre.traceback")
        expect(traceback).to_contain_text('agent.py", line 2, in configure')
        expect(traceback).to_contain_text("RuntimeError: the app is broken on purpose")
        page.fill("#message", "are you there?")
        page.click("#send")
        expect(page.locator("#status")).to_contain_text("failed to load")
        expect(page.locator("#message")).to_have_value("are you there?")
        expect(page.locator("#send")).to_be_enabled()
        page.screenshot(path=str(shots / "web_broken_app.png"))

        # Fixed, the app loads on the next request: the kept message is sent as it is.
        (tmp_path / "agents" / broken / "agent.py").write_text(AGENT_SOURCE)
        page.click("#send")
        expect(page.locator("#chat .msg.model").last).to_contain_text("echo: are you there?")
        expect(failure).to_have_count(0)
        expect(page.locator("#agent-tree")).to_contain_text("assistant")
    finally:
        page.close()
