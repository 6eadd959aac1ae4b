"""The offline support desk in the page (headless Chromium): both recorded questions in one chat.

Needs Debian's ``chromium`` package (or ``CHROMIUM=/path/to/chromium``) and the ``playwright``
Python package, as ``test_web_browser.py`` does.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adk_rx import InMemorySessionService
from adk_rx.cli.server import create_app
from tests.cli.server_support import live_server, unique_app
from tests.cli.test_web_browser import WAIT_MS, browser, shots, sync_api

__all__ = ["browser", "shots"]

SUPPORT_DESK = Path(__file__).resolve().parents[2] / "examples" / "support_desk"
WHERE = "Where is my order 1234?"
REFUND = "Please refund order 1234, it arrived broken."
_PROVIDER_ENV = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL", "ADK_RX_MODEL")


@pytest.fixture
def support_desk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, InMemorySessionService]]:
    """The page on a copy of the example (offline: it replays its recording)."""
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    app = unique_app("desk")
    folder = tmp_path / "agents" / app
    folder.mkdir(parents=True)
    for name in ("agent.py", "trajectory.jsonl"):
        shutil.copy(SUPPORT_DESK / name, folder / name)
    service = InMemorySessionService()
    server = create_app(folder.parent, web=True, session_service=service)
    with live_server(server) as live:
        yield live.url, app, service


def _say(page: Any, text: str) -> None:
    page.fill("#message", text)
    page.click("#send")


@pytest.mark.parametrize("questions", [(WHERE, REFUND), (REFUND, WHERE)], ids=["where", "refund"])
def test_both_recorded_questions_are_answered_in_one_chat(
    browser: Any,
    support_desk: tuple[str, str, InMemorySessionService],
    shots: Path,
    questions: tuple[str, str],
):
    url, app, service = support_desk
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    try:
        page.goto(url)
        expect(page.locator("#app option")).to_have_text([app])
        answers = 0
        for question in questions:
            _say(page, question)
            if question == REFUND:
                card = page.locator("#chat .card.confirm:not(.answered)")
                expect(card).to_contain_text("asks to confirm issue_refund")
                card.locator("button.approve").click()
                answers += 2
                expect(page.locator("#chat .msg.model").nth(answers - 1)).to_contain_text(
                    "Done: 59.90 EUR for order 1234"
                )
            else:
                answers += 1
                expect(page.locator("#chat .msg.model").nth(answers - 1)).to_contain_text(
                    "Order 1234 shipped with DHL"
                )
            expect(page.locator("#send")).to_be_enabled()
        page.screenshot(path=str(shots / f"web_demo_{questions[0][:5].lower()}_first.png"))
        # The one red chip is the refund's "requires confirmation" answer, not a failure.
        expect(page.locator("#chat")).not_to_contain_text("Error")
        (session,) = service.list_sessions(app_name=app, user_id="user").run().sessions
        stored = service.get_session(app_name=app, user_id="user", session_id=session.id).run()
        assert not [e.error_code for e in stored.events if e.error_code]
        assert stored.state["last_refund"]["refund_id"] == "R-1234-1"
        assert stored.state["shipping_answer"].startswith("Order 1234 shipped with DHL")
    finally:
        page.close()


def test_rewind_takes_the_chat_back_and_the_question_can_be_asked_again(
    browser: Any, support_desk: tuple[str, str, InMemorySessionService], shots: Path
):
    url, app, service = support_desk
    expect = sync_api.expect
    expect.set_options(timeout=WAIT_MS)
    page = browser.new_page(viewport={"width": 1400, "height": 860})
    chat = page.locator("#chat")

    def refund() -> None:
        _say(page, REFUND)
        card = page.locator("#chat .card.confirm:not(.answered)")
        expect(card).to_contain_text("asks to confirm issue_refund")
        card.locator("button.approve").click()
        expect(chat).to_contain_text("Done: 59.90 EUR for order 1234")
        expect(page.locator("#send")).to_be_enabled()

    try:
        page.goto(url)
        expect(page.locator("#app option")).to_have_text([app])
        _say(page, WHERE)
        expect(chat).to_contain_text("Order 1234 shipped with DHL")
        expect(page.locator("#send")).to_be_enabled()
        refund()

        page.locator("#chat .msg.user", has_text=REFUND).locator("button.rewind").click()

        expect(chat).not_to_contain_text("Done: 59.90 EUR")
        expect(chat).to_contain_text("Order 1234 shipped with DHL")
        expect(page.locator("#chat .msg.user")).to_have_count(1)
        page.screenshot(path=str(shots / "web_rewound.png"))
        (session,) = service.list_sessions(app_name=app, user_id="user").run().sessions
        stored = service.get_session(app_name=app, user_id="user", session_id=session.id).run()
        assert stored.state.get("last_refund") is None
        assert stored.state["shipping_answer"].startswith("Order 1234 shipped")

        refund()  # the rewound question is answered again, from the same place
        expect(page.locator("#chat .msg.user")).to_have_count(2)
    finally:
        page.close()
