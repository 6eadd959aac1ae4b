"""The memory conformance suite on every memory service adk_rx ships, ranking included for
the vector service on SQLite (in memory, a file with sqlite-vec, a file without) and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adk_rx.memory import (
    BaseMemoryService,
    HashingEmbedder,
    InMemoryMemoryService,
    SqlMemoryService,
    VectorMemoryService,
)
from adk_rx.memory.vector_sqlite import sqlite_vec_driver
from adk_rx.testing.memory_conformance import (
    MEMORY_SERVICE_CHECKS,
    RANKED_MEMORY_CHECKS,
    check_memory_service,
)
from tests.sessions.postgres import fresh_postgres_url, postgres_url

__all__ = ["fresh_postgres_url", "postgres_url"]  # fixtures, used by name

ALL_CHECKS = (*MEMORY_SERVICE_CHECKS, *RANKED_MEMORY_CHECKS)


def _vector(url: str, **options: Any) -> Callable[[], BaseMemoryService]:
    return lambda: VectorMemoryService(url, HashingEmbedder(), **options)


@pytest.mark.parametrize("check", MEMORY_SERVICE_CHECKS)
def test_in_memory_keyword_memory_conforms(check: str) -> None:
    check_memory_service(InMemoryMemoryService, checks=[check])


@pytest.mark.parametrize("check", MEMORY_SERVICE_CHECKS)
def test_sqlite_keyword_memory_conforms(check: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    check_memory_service(lambda: SqlMemoryService(url), checks=[check])


@pytest.mark.parametrize("check", MEMORY_SERVICE_CHECKS)
def test_postgresql_keyword_memory_conforms(check: str, postgres_url: str) -> None:
    check_memory_service(lambda: SqlMemoryService(postgres_url), checks=[check])


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_vector_memory_in_process_conforms_and_ranks(check: str) -> None:
    check_memory_service(_vector("memory://"), checks=[check])


@pytest.mark.parametrize("exact_up_to", [5000, 0], ids=["exact scan", "binary index"])
@pytest.mark.parametrize("check", ALL_CHECKS)
def test_vector_memory_on_sqlite_vec_conforms_and_ranks(
    check: str, exact_up_to: int, tmp_path: Path
) -> None:
    if sqlite_vec_driver() is None:
        pytest.skip('sqlite-vec cannot be loaded here: pip install "adk_rx[vector]"')
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    check_memory_service(_vector(url, exact_up_to=exact_up_to), checks=[check])


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_vector_memory_on_sqlite_without_index_conforms_and_ranks(
    check: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    check_memory_service(_vector(url, use_index=False), checks=[check])


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_vector_memory_on_postgresql_sql_conforms_and_ranks(
    check: str, fresh_postgres_url: str
) -> None:
    check_memory_service(_vector(fresh_postgres_url, use_index=False), checks=[check])


@pytest.mark.parametrize("check", ALL_CHECKS)
def test_vector_memory_on_pgvector_conforms_and_ranks(check: str, fresh_postgres_url: str) -> None:
    probe = VectorMemoryService(fresh_postgres_url, HashingEmbedder())
    method = probe.store.method
    probe.close()
    if method != "pgvector":
        pytest.skip("the PostgreSQL server has no pgvector extension (CREATE EXTENSION vector)")
    check_memory_service(_vector(fresh_postgres_url), checks=[check])


def test_the_suite_rejects_a_memory_that_leaks_across_users() -> None:
    class Leaky(InMemoryMemoryService):
        def search_memory(self, *, app_name, user_id, query):  # type: ignore[no-untyped-def]
            return super().search_memory(app_name=app_name, user_id="alice", query=query)

    with pytest.raises(AssertionError, match="search_is_scoped_to_app_and_user"):
        check_memory_service(Leaky, checks=["search_is_scoped_to_app_and_user"])


def test_the_suite_rejects_a_keyword_memory_as_a_ranking_one() -> None:
    with pytest.raises(AssertionError, match="entries_carry_scores"):
        check_memory_service(
            InMemoryMemoryService, checks=["entries_carry_scores_most_similar_first"]
        )
