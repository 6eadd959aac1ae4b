"""``adk-rx web`` end to end in headless Chromium: chat, streamed text, inspector, Stop, rejoin.

Needs Debian's ``chromium`` package (or ``CHROMIUM=/path/to/chromium``) and the ``playwright``
Python package; Playwright's own browser download is never used. Screenshots go to
``ADK_RX_SHOTS_DIR`` (default: ``adk_rx_shots`` in the system temp folder).
"""

from __future__ import annotations

import logging
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


@pytest.fixture
def dev_loop(tmp_path: Path) -> Iterator[tuple[str, str, InMemorySessionService]]:
    """The server on an app made for answers, failures and a transfer (web_dev_loop_agent)."""
    app = unique_app("dev")
    folder = tmp_path / "agents" / app
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("web_dev_loop_agent.py"), folder / "agent.py")
    service = InMemorySessionService()
    server = create_app(folder.parent, web=True, session_service=service)
    with live_server(server) as live:
        yield live.url, app, service


def _open(browser: Any, url: str, app: str) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    sync_api.expect.set_options(timeout=WAIT_MS)
    page.goto(url)
    sync_api.expect(page.locator("#app option")).to_have_text([app])
    return page


def _say(page: Any, text: str) -> None:
    page.fill("#message", text)
    page.click("#send")


def _confirmation_answers(service: InMemorySessionService, app: str) -> list[Any]:
    return [
        r.response
        for e in stored_events(service, app, "user")
        for r in e.get_function_responses()
        if r.name == "adk_request_confirmation"
    ]


def test_a_confirmation_is_approved_then_another_rejected_in_the_page(
    browser: Any, dev_loop: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, service = dev_loop
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        _say(page, "refund 5")
        card = page.locator("#chat .card.confirm").first
        expect(card).to_contain_text("asks to confirm issue_refund")
        expect(card).to_contain_text("Please approve or reject the call of issue_refund")
        expect(card.locator("button.approve")).to_be_enabled()
        page.screenshot(path=str(shots / "web_confirmation.png"))
        card.locator("button.approve").click()
        expect(page.locator("#chat .msg.model").last).to_contain_text("Refunded 5.0.")
        expect(page.locator("#chat .card.confirm").first).to_contain_text("approved")
        expect(page.locator("#chat .card.confirm button")).to_have_count(0)

        _say(page, "refund 7")
        pending = page.locator("#chat .card.confirm:not(.answered)")
        expect(pending).to_have_count(1)
        pending.locator("button.reject").click()
        expect(page.locator("#chat .msg.model").last).to_contain_text("The refund was not made.")
        expect(page.locator("#chat .card.confirm").last).to_contain_text("rejected")
        assert _confirmation_answers(service, app) == [{"confirmed": True}, {"confirmed": False}]
        refunds = [
            r.response
            for e in stored_events(service, app, "user")
            for r in e.get_function_responses()
            if r.name == "issue_refund"
        ]
        assert {"status": "refunded", "amount": 5.0} in refunds
        assert "rejected" in refunds[-1]["error"]  # the rejected call never ran
    finally:
        page.close()


def test_a_long_running_call_stays_pending_until_its_result_is_sent(
    browser: Any, dev_loop: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, service = dev_loop
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        _say(page, "deploy staging")
        card = page.locator("#chat .card.pending-tool")
        expect(card).to_contain_text('start_deploy({"env":"staging"}) is pending')
        expect(page.locator("#send")).to_be_enabled()
        card.locator("textarea").fill('{"status": "done"}')
        page.screenshot(path=str(shots / "web_long_running.png"))
        card.locator("button.send-result").click()
        expect(page.locator("#chat .msg.model").last).to_contain_text("Deploy finished: done.")
        expect(card).to_contain_text("answered")
        events = stored_events(service, app, "user")
        (answer,) = [r for e in events for r in e.get_function_responses()]
        assert (answer.name, answer.response) == ("start_deploy", {"status": "done"})
    finally:
        page.close()


def test_a_failed_run_and_a_raising_tool_show_their_errors(
    browser: Any,
    dev_loop: tuple[str, str, InMemorySessionService],
    shots: Path,
    caplog: pytest.LogCaptureFixture,
):
    url, app, _ = dev_loop
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        with caplog.at_level(logging.WARNING, logger="adk_rx"):
            _say(page, "fail")
            failure = page.locator("#chat .failure")
            expect(failure).to_contain_text("run failed: ModelError")
            expect(failure).to_contain_text("the model failed on purpose")
            expect(page.locator("#status")).to_have_text("idle")
        invocation = failure.get_attribute("data-invocation")
        assert invocation and invocation.startswith("e-")
        logged = [r.getMessage() for r in caplog.records if r.name == "adk_rx.server"]
        assert any(invocation in line and "failed" in line for line in logged), logged
        page.screenshot(path=str(shots / "web_failed_run.png"))

        # The page keeps showing the failure after the next turn, under its own invocation.
        _say(page, "crash")
        expect(page.locator("#chat .msg.model").last).to_contain_text("The tool failed.")
        expect(page.locator("#chat .failure")).to_have_count(1)
        page.locator("#chat .chip.resp.error").click()
        inspector = page.locator("#inspector")
        expect(inspector).to_contain_text("Traceback of explode")
        traceback = inspector.locator("pre.traceback")
        expect(traceback).to_contain_text("agent.py")
        expect(traceback).to_contain_text("RuntimeError: the tool exploded on purpose")
        page.screenshot(path=str(shots / "web_tool_traceback.png"))
    finally:
        page.close()


def test_empty_state_agent_tree_folded_chunks_and_transfer_marker(
    browser: Any, dev_loop: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, _ = dev_loop
    expect = sync_api.expect
    page = _open(browser, url, app)
    try:
        expect(page.locator("#chat .empty-state")).to_contain_text("Type a message below")
        tree = page.locator("#agent-tree")
        expect(tree.locator("li[data-agent=assistant] > b")).to_have_text("assistant")
        expect(tree.locator("li[data-agent=helper]")).to_contain_text("LlmAgent")
        expect(tree).to_contain_text("issue_refund")

        _say(page, "hello")  # "echo: " and "hello" stream as two chunks
        expect(page.locator("#chat .msg.model").last).to_contain_text("echo: hello")
        head = page.locator("#events tr.ev.chunks")
        expect(head).to_have_count(1)
        expect(head).to_contain_text("2 chunks")
        expect(page.locator("#events tr.ev.chunk.open")).to_have_count(0)
        head.locator(".toggle").click()
        expect(page.locator("#events tr.ev.chunk.open")).to_have_count(1)
        # The end of the run, or opening the session again, redraws the table: the chunks
        # stay open.
        expect(page.locator("#status")).to_have_text("idle")
        page.locator("#sessions li.selected").click()
        expect(page.locator("#events tr.ev.chunks.expanded")).to_have_count(1)
        expect(page.locator("#events tr.ev.chunk.open")).to_have_count(1)

        _say(page, "handoff")
        transfer = page.locator("#chat .chip.transfer")
        expect(transfer).to_contain_text("assistant")
        expect(transfer).to_contain_text("\u21e2 transfer to helper")
        expect(page.locator("#chat .msg.model").last).to_contain_text("helper here:")
        expect(page.locator("#chat .msg.model .who").last).to_have_text("helper")
        page.screenshot(path=str(shots / "web_transfer_and_tree.png"))
        labels = page.locator("#timeline .lane .label")
        expect(labels.first).to_be_visible()
        for index in range(labels.count()):  # each label sits in its own column
            label, bar = (
                labels.nth(index).bounding_box(),
                page.locator("#timeline .lane .bar").nth(index).bounding_box(),
            )
            assert label is not None and bar is not None
            assert label["x"] + label["width"] <= bar["x"] + 1
    finally:
        page.close()


def test_tool_progress_shows_in_the_chat_as_it_comes(browser: Any, tmp_path: Path) -> None:
    app = unique_app("progress")
    folder = tmp_path / "agents" / app
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("web_progress_agent.py"), folder / "agent.py")
    service = InMemorySessionService()
    server = create_app(folder.parent, web=True, session_service=service)
    with live_server(server) as live:
        page = _open(browser, live.url, app)
        try:
            _say(page, "fetch a.txt")
            expect = sync_api.expect
            expect(page.locator("#chat .msg.model").last).to_contain_text("downloaded a.txt")
            progress = page.locator("#chat .chip.progress")
            expect(progress).to_have_count(2)
            expect(progress.first).to_contain_text('download \u2026 {"percent":40}')
            expect(page.locator("#chat .chip.resp")).to_contain_text('"bytes":42')
            assert not any(e.partial for e in stored_events(service, app, "user"))
        finally:
            page.close()
