"""``adk-rx web`` with a workflow app in headless Chromium: the running node is highlighted in
the agent tree, node outputs show in the chat, a streaming AgentTool's events are indented."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import live_server, unique_app
from tests.cli.test_web_browser import _open, _say, browser, shots, sync_api

__all__ = ["browser", "shots"]

pytestmark = pytest.mark.timeout(120)


def test_the_running_node_is_highlighted_and_child_events_are_indented(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    app = unique_app("flow")
    folder = tmp_path / "agents" / app
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("web_workflow_agent.py"), folder / "agent.py")
    server = create_app(folder.parent, web=True, session_service=InMemorySessionService())
    expect = sync_api.expect
    with live_server(server) as live:
        page = _open(browser, live.url, app)
        try:
            tree = page.locator("#agent-tree")
            expect(tree.locator("li[data-agent=pipeline] .nodes")).to_contain_text("plan, slow")
            _say(page, "the moon")
            running = page.locator("#agents .running")
            expect(running).to_have_text(["slow"])  # plan is done, slow waits for the gate
            page.screenshot(path=str(shots / "web_workflow_running.png"))
            agent = next(
                m for n, m in sys.modules.items() if n.startswith(app) and hasattr(m, "GATE")
            )
            agent.GATE.set()
            expect(page.locator("#chat .msg.model").last).to_contain_text("the report")
            expect(page.locator("#chat .chip.resp").first).to_contain_text(
                '\u25c6 plan \u2192 "plan for the moon"'
            )
            child = page.locator("#chat .child")
            expect(child.first).to_contain_text("helper")
            expect(child.last).to_contain_text("helper: three facts")
            expect(page.locator("#events tr.ev.child")).to_have_count(1)
            expect(page.locator("#agents .running")).to_have_count(0)
            page.screenshot(path=str(shots / "web_workflow_done.png"))
        finally:
            page.close()
