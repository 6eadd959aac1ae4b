"""PostgreSQL for tests: a throwaway schema on the server ``ADK_RX_TEST_POSTGRES_URL`` names.

Unset variable: the PostgreSQL tests skip and say why. Set but unreachable: they fail, so a CI
job that is meant to test PostgreSQL cannot pass without it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

from adk_rx.sessions.sql_engine import normalize_url

ENV = "ADK_RX_TEST_POSTGRES_URL"


def server_url() -> str:
    """The server's URL from the environment, or a skip with the reason."""
    url = os.environ.get(ENV, "").strip()
    if not url:
        pytest.skip(
            f"{ENV} is not set; set it (e.g. postgresql://postgres@127.0.0.1:5432/test) "
            "to run the PostgreSQL tests"
        )
    return url


@contextmanager
def scratch_schema() -> Iterator[str]:
    """Yields a URL whose connections use a fresh schema; drops the schema afterwards."""
    url = normalize_url(server_url())
    name = f"adk_rx_test_{uuid.uuid4().hex[:12]}"
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
    except sa.exc.OperationalError as exc:
        pytest.fail(f"{ENV} is set but PostgreSQL is unreachable: {exc}")
    try:
        scoped = url.update_query_dict({"options": f"-csearch_path={name}"})
        yield scoped.render_as_string(hide_password=False)
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA "{name}" CASCADE')
        engine.dispose()


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL URL on a schema shared by the tests of one module."""
    with scratch_schema() as url:
        yield url


@pytest.fixture
def fresh_postgres_url() -> Iterator[str]:
    """A PostgreSQL URL on a schema of this test's own (for tests that break tables)."""
    with scratch_schema() as url:
        yield url
