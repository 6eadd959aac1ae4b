"""``adk-rx web`` shows the code a model ran and its output (headless Chromium, as
test_web_browser.py: Debian's chromium and the playwright package, skipped without them)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import live_server, unique_app
from tests.cli.test_web_browser import _open, _say, browser, sync_api

__all__ = ["browser"]  # the fixture, shared with test_web_browser.py

pytestmark = pytest.mark.timeout(120)


def test_code_and_its_output_show_in_the_chat(browser: Any, tmp_path: Path) -> None:
    app = unique_app("code")
    folder = tmp_path / "agents" / app
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("web_code_agent.py"), folder / "agent.py")
    server = create_app(folder.parent, web=True, session_service=InMemorySessionService())
    with live_server(server) as live:
        page = _open(browser, live.url, app)
        try:
            _say(page, "letters in banana?")
            expect = sync_api.expect
            expect(page.locator("#chat .msg.model").last).to_contain_text("banana has 6 letters.")
            expect(page.locator("#chat .chip.call.code")).to_contain_text("print(len('banana'))")
            expect(page.locator("#chat .chip.resp.code")).to_contain_text("output \u2192 6")
        finally:
            page.close()
