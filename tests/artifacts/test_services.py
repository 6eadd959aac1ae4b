"""The artifact-service contract, run against the in-memory, file and SQL (SQLite and
PostgreSQL) services."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.artifacts import (
    BaseArtifactService,
    FileArtifactService,
    InMemoryArtifactService,
    SqlArtifactService,
)
from adk_rx.errors import ConfigurationError

IDS = {"app_name": "app", "user_id": "u1", "session_id": "s1"}


@pytest.fixture(params=["in_memory", "file", "sqlite", "postgresql"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseArtifactService]:
    if request.param == "in_memory":
        yield InMemoryArtifactService()
    elif request.param == "file":
        yield FileArtifactService(tmp_path / "artifacts")
    else:
        url = (
            f"sqlite:///{tmp_path / 'artifacts.db'}"
            if request.param == "sqlite"
            else request.getfixturevalue("fresh_postgres_url")
        )
        sql = SqlArtifactService(url)
        yield sql
        sql.close()


def _text(text: str) -> types.Part:
    return types.Part(text=text)


def _save(svc: BaseArtifactService, filename: str, part: types.Part, **ids: str) -> int:
    return svc.save_artifact(**{**IDS, **ids}, filename=filename, artifact=part).run()


def _load(
    svc: BaseArtifactService, filename: str, version: int | None = None, **ids: str
) -> list[types.Part]:
    return (
        svc.load_artifact(**{**IDS, **ids}, filename=filename, version=version)
        .pipe(ops.to_list())
        .run()
    )


def _keys(svc: BaseArtifactService, **ids: str) -> list[str]:
    return svc.list_artifact_keys(**{**IDS, **ids}).run()


def _versions(svc: BaseArtifactService, filename: str, **ids: str) -> list[int]:
    return svc.list_versions(**{**IDS, **ids}, filename=filename).run()


def _complete(completable: Observable[None]) -> None:
    assert completable.pipe(ops.to_list()).run() == []


def test_saves_are_numbered_from_zero_and_load_defaults_to_the_latest(
    service: BaseArtifactService,
) -> None:
    assert [_save(service, "notes.txt", _text(f"v{i}")) for i in range(3)] == [0, 1, 2]

    assert _load(service, "notes.txt") == [_text("v2")]
    assert _load(service, "notes.txt", version=0) == [_text("v0")]
    assert _versions(service, "notes.txt") == [0, 1, 2]


def test_binary_parts_keep_bytes_and_mime_type(service: BaseArtifactService) -> None:
    blob = types.Part(inline_data=types.Blob(data=b"\x89PNG\x00\xff", mime_type="image/png"))
    _save(service, "pic.png", blob)

    [loaded] = _load(service, "pic.png")

    assert loaded.inline_data is not None
    assert loaded.inline_data.data == b"\x89PNG\x00\xff"
    assert loaded.inline_data.mime_type == "image/png"


def test_missing_files_and_out_of_range_versions_load_empty(service: BaseArtifactService) -> None:
    _save(service, "a.txt", _text("a"))

    assert _load(service, "missing.txt") == []
    assert _load(service, "a.txt", version=1) == []
    assert _load(service, "a.txt", version=-1) == []
    assert _versions(service, "missing.txt") == []


def test_reads_of_unknown_names_leave_no_phantom_keys(service: BaseArtifactService) -> None:
    _load(service, "ghost.txt")
    _versions(service, "ghost.txt")
    _complete(service.delete_artifact(**IDS, filename="ghost.txt"))

    assert _keys(service) == []


def test_keys_are_sorted_and_include_the_users_files(service: BaseArtifactService) -> None:
    for name in ["b.txt", "user:profile.json", "a.txt"]:
        _save(service, name, _text(name))

    assert _keys(service) == ["a.txt", "b.txt", "user:profile.json"]


def test_user_files_are_shared_across_sessions_of_the_user_only(
    service: BaseArtifactService,
) -> None:
    _save(service, "user:profile.json", _text("p0"), session_id="s1")
    assert _save(service, "user:profile.json", _text("p1"), session_id="s2") == 1
    _save(service, "draft.txt", _text("d"), session_id="s1")

    assert _load(service, "user:profile.json", session_id="s3") == [_text("p1")]
    assert _keys(service, session_id="s2") == ["user:profile.json"]
    assert _keys(service, user_id="u2") == []
    assert _load(service, "user:profile.json", user_id="u2") == []
    assert _load(service, "draft.txt", session_id="s2") == []


def test_scopes_do_not_leak_across_apps_and_users(service: BaseArtifactService) -> None:
    _save(service, "a.txt", _text("mine"))

    assert _keys(service, app_name="other") == []
    assert _keys(service, user_id="u2") == []
    assert _load(service, "a.txt", user_id="u2") == []


def test_delete_removes_every_version(service: BaseArtifactService) -> None:
    _save(service, "a.txt", _text("0"))
    _save(service, "a.txt", _text("1"))
    _save(service, "b.txt", _text("b"))

    _complete(service.delete_artifact(**IDS, filename="a.txt"))

    assert _keys(service) == ["b.txt"]
    assert _load(service, "a.txt") == []
    assert _versions(service, "a.txt") == []
    assert _save(service, "a.txt", _text("again")) == 0


def test_operations_are_cold(service: BaseArtifactService) -> None:
    saving = service.save_artifact(**IDS, filename="a.txt", artifact=_text("x"))
    assert _keys(service) == []

    assert saving.run() == 0
    assert saving.run() == 1  # subscribing again saves again


@pytest.mark.parametrize(
    "filename",
    [
        "",
        "..",
        "../escape.txt",
        "a/b.txt",
        "a\\b.txt",
        "nul\x00.txt",
        "user:",
        ".",
        "user:../x",
        "x..y",
    ],
)
def test_unsafe_filenames_are_rejected(service: BaseArtifactService, filename: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid artifact filename"):
        _save(service, filename, _text("x"))
    with pytest.raises(ConfigurationError):
        _load(service, filename)

    assert _keys(service) == []


def test_concurrent_saves_get_distinct_versions(service: BaseArtifactService) -> None:
    results: list[int] = []
    lock = threading.Lock()

    def save(i: int) -> None:
        version = _save(service, "log.txt", _text(str(i)))
        with lock:
            results.append(version)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(results) == list(range(8))
    assert _versions(service, "log.txt") == list(range(8))


def test_a_missing_file_and_a_delete_run_and_await_to_none(service: BaseArtifactService) -> None:
    assert service.load_artifact(**IDS, filename="missing.txt").run() is None
    _save(service, "a.txt", _text("x"))
    assert service.delete_artifact(**IDS, filename="a.txt").run() is None

    async def awaited() -> tuple[object, object]:
        return (
            await service.load_artifact(**IDS, filename="a.txt"),
            await service.delete_artifact(**IDS, filename="a.txt"),
        )

    assert asyncio.run(awaited()) == (None, None)
