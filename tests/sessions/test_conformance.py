"""The session-service conformance suite on every store adk_rx ships."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_rx.sessions.in_memory import InMemorySessionService
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.testing.conformance import SESSION_SERVICE_CHECKS, check_session_service


@pytest.mark.parametrize("check", SESSION_SERVICE_CHECKS)
def test_in_memory_store_conforms(check: str) -> None:
    check_session_service(InMemorySessionService, checks=[check])


@pytest.mark.parametrize("check", SESSION_SERVICE_CHECKS)
def test_sqlite_store_conforms(check: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    check_session_service(lambda: SqlSessionService(url), checks=[check])


@pytest.mark.parametrize("check", SESSION_SERVICE_CHECKS)
def test_postgresql_store_conforms(check: str, postgres_url: str) -> None:
    check_session_service(lambda: SqlSessionService(postgres_url), checks=[check])


def test_the_suite_rejects_a_store_that_loses_events() -> None:
    class Forgetful(InMemorySessionService):
        def append_event(self, session, event):  # type: ignore[no-untyped-def]
            return super().append_event(session, event.replace(partial=True))

    with pytest.raises(AssertionError, match="appended_events_read_back"):
        check_session_service(
            Forgetful, checks=["appended_events_read_back_in_append_order_and_update_the_view"]
        )
