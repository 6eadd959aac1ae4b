"""``--artifact-service-uri``: every scheme names its store; without it artifacts and memory
follow ``--session-service-uri`` (the same database, or memory with ``memory://``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_rx import (
    FileArtifactService,
    InMemoryArtifactService,
    InMemorySessionService,
    SqlArtifactService,
    SqlMemoryService,
    SqlSessionService,
)
from adk_rx.cli.main import build_parser
from adk_rx.cli.server.stores import artifact_service_from_uri, follow_sessions
from adk_rx.errors import ConfigurationError


def test_each_scheme_names_its_store(tmp_path: Path) -> None:
    assert isinstance(artifact_service_from_uri("memory://"), InMemoryArtifactService)
    files = artifact_service_from_uri(f"file://{tmp_path / 'art'}")
    assert isinstance(files, FileArtifactService) and files.root_dir == tmp_path / "art"
    sql = artifact_service_from_uri(f"sqlite:///{tmp_path / 'a.db'}")
    assert isinstance(sql, SqlArtifactService)
    sql.close()


@pytest.mark.parametrize("uri", ["s3://bucket", "file://", "gs://x", "nonsense"])
def test_unknown_or_incomplete_uris_are_refused(uri: str) -> None:
    with pytest.raises(ConfigurationError):
        artifact_service_from_uri(uri)


def test_artifacts_and_memory_follow_a_sql_session_database(tmp_path: Path) -> None:
    sessions = SqlSessionService(f"sqlite:///{tmp_path / 's.db'}")
    artifacts, memory = follow_sessions(sessions, None, None)
    assert isinstance(artifacts, SqlArtifactService) and isinstance(memory, SqlMemoryService)
    saved = artifacts.save_artifact(
        app_name="a", user_id="u", session_id="s", filename="f.txt", artifact=_text("x")
    ).run()
    assert saved == 0
    again = SqlArtifactService(f"sqlite:///{tmp_path / 's.db'}")  # the very same database
    assert again.list_versions(
        app_name="a", user_id="u", session_id="s", filename="f.txt"
    ).run() == [0]
    for service in (again, artifacts, memory, sessions):
        service.close()


def test_given_services_win_and_memory_sessions_keep_artifacts_in_memory(tmp_path: Path) -> None:
    mine = FileArtifactService(tmp_path / "art")
    assert follow_sessions(SqlSessionService("sqlite://"), mine, None)[0] is mine
    artifacts, memory = follow_sessions(InMemorySessionService(), None, None)
    assert isinstance(artifacts, InMemoryArtifactService) and memory is None


@pytest.mark.parametrize("command", ["api-server", "web"])
def test_the_flag_and_its_environment_variable(command: str, monkeypatch) -> None:
    args = build_parser().parse_args([command, "agents", "--artifact-service-uri", "memory://"])
    assert args.artifact_service_uri == "memory://"
    monkeypatch.setenv("ADK_RX_ARTIFACT_SERVICE_URI", "file:///srv/art")
    assert build_parser().parse_args([command, "agents"]).artifact_service_uri == "file:///srv/art"


def _text(value: str):
    from google.genai import types

    return types.Part(text=value)
