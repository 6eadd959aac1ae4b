"""A conformance suite for session services: what every store must do the same way.

Run it from pytest, one test per check, so a failure names the behaviour::

    @pytest.mark.parametrize("check", SESSION_SERVICE_CHECKS)
    def test_my_store_conforms(check: str) -> None:
        check_session_service(lambda: MyStore(...), checks=[check])

The checks live in modules by what they check (``crud.py``, ``events.py``, ``state.py``,
``concurrency.py``). Each check gets a fresh service from the factory, uses an app name of
its own (so stores backed by one database do not see each other's data) and closes the
service afterwards.
A failed check raises ``AssertionError`` naming the check and what was expected.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable

from adk_rx.sessions.base import BaseSessionService
from adk_rx.testing.conformance import concurrency, crud, events, state
from adk_rx.testing.conformance.support import CHECKS

__all__ = ["SESSION_SERVICE_CHECKS", "check_session_service"]


def check_session_service(
    make_service: Callable[[], BaseSessionService], *, checks: Iterable[str] | None = None
) -> None:
    """Runs the named checks (all of them by default) against fresh services.

    Args:
        make_service: builds the service under test; called once per check.
        checks: names from :data:`SESSION_SERVICE_CHECKS`.

    Raises:
        AssertionError: a check failed; the message names it.
        KeyError: an unknown check name.
    """
    for name in SESSION_SERVICE_CHECKS if checks is None else list(checks):
        check = CHECKS[name]
        service = make_service()
        try:
            check(service, f"conformance-{name}-{uuid.uuid4().hex[:8]}")
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from exc
        finally:
            service.close()


# Each module registers its checks when imported; they run module by module, in this order.
SESSION_SERVICE_CHECKS: tuple[str, ...] = tuple(
    name
    for module in (crud, events, state, concurrency)
    for name, check in CHECKS.items()
    if check.__module__ == module.__name__
)
"""The names of every check, in the order :func:`check_session_service` runs them."""
