"""FileArtifactService specifics: persistence, layout on disk, staying inside the root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from google.genai import types
from reactivex import operators as ops

from adk_rx.artifacts import FileArtifactService
from adk_rx.errors import ConfigurationError

IDS = {"app_name": "app", "user_id": "u1", "session_id": "s1"}


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def test_a_new_service_on_the_same_directory_sees_saved_versions(tmp_path: Path) -> None:
    first = FileArtifactService(tmp_path)
    first.save_artifact(**IDS, filename="a.txt", artifact=types.Part(text="one")).run()
    first.save_artifact(
        **IDS,
        filename="user:p.bin",
        artifact=types.Part(
            inline_data=types.Blob(data=b"\x00\x01", mime_type="application/octet-stream")
        ),
    ).run()

    second = FileArtifactService(tmp_path)

    assert second.list_artifact_keys(**IDS).run() == ["a.txt", "user:p.bin"]
    assert second.load_artifact(**IDS, filename="a.txt").run() == types.Part(text="one")
    assert second.save_artifact(**IDS, filename="a.txt", artifact=types.Part(text="two")).run() == 1


def test_each_version_is_a_file_with_json_metadata(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    blob = types.Part(inline_data=types.Blob(data=b"PDF", mime_type="application/pdf"))
    service.save_artifact(**IDS, filename="doc.pdf", artifact=blob).run()

    version_dir = tmp_path / "app" / "u1" / "sessions" / "s1" / "doc.pdf"
    assert (version_dir / "0").read_bytes() == b"PDF"
    meta = json.loads((version_dir / "0.json").read_text())
    assert meta["mime_type"] == "application/pdf"


def test_non_text_non_blob_parts_round_trip(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    part = types.Part(
        file_data=types.FileData(file_uri="gs://b/x.pdf", mime_type="application/pdf")
    )
    service.save_artifact(**IDS, filename="ref", artifact=part).run()

    assert service.load_artifact(**IDS, filename="ref").run() == part


def test_ids_with_separators_are_encoded_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    service = FileArtifactService(root)
    ids = {"app_name": "../app", "user_id": "a/b", "session_id": "..\\s"}

    service.save_artifact(**ids, filename="f.txt", artifact=types.Part(text="x")).run()

    assert service.list_artifact_keys(**ids).run() == ["f.txt"]
    assert set(os.listdir(tmp_path)) == {"root"}
    assert all(".." not in Path(name).parts for name in _files(root))


@pytest.mark.parametrize("bad", ["", ".", ".."])
def test_ids_that_name_a_directory_itself_are_rejected(tmp_path: Path, bad: str) -> None:
    service = FileArtifactService(tmp_path)

    with pytest.raises(ConfigurationError):
        service.save_artifact(
            app_name="app",
            user_id=bad,
            session_id="s1",
            filename="f.txt",
            artifact=types.Part(text="x"),
        ).run()
    assert _files(tmp_path) == set()


@pytest.mark.parametrize(
    ("what", "ids", "filename"),
    [
        ("session_id", {**IDS, "session_id": "s" * 256}, "f.txt"),
        ("user_id", {**IDS, "user_id": "\u00e9" * 43}, "f.txt"),  # 258 bytes percent-encoded
        ("filename", IDS, "f" * 256),
        ("filename", IDS, "user:" + "f" * 256),
    ],
)
def test_a_name_longer_than_a_file_name_is_refused_as_misuse_not_a_store_failure(
    tmp_path: Path, what: str, ids: dict[str, str], filename: str
) -> None:
    service = FileArtifactService(tmp_path)
    part = types.Part(text="x")

    for call in (
        service.save_artifact(**ids, filename=filename, artifact=part),
        service.load_artifact(**ids, filename=filename),
        service.list_versions(**ids, filename=filename),
        service.delete_artifact(**ids, filename=filename),
    ):
        with pytest.raises(ConfigurationError, match=f"{what} .* too long for a file artifact"):
            call.run()
    assert _files(tmp_path) == set()
    # 255 bytes once encoded is the longest name a file system takes; it is kept.
    service.save_artifact(**IDS, filename="f" * 255, artifact=part).run()


def test_a_symlink_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "app" / "u1" / "sessions" / "s1").mkdir(parents=True)
    outside.mkdir()
    (root / "app" / "u1" / "sessions" / "s1" / "evil").symlink_to(outside)
    service = FileArtifactService(root)

    with pytest.raises(ConfigurationError, match="outside the root"):
        service.save_artifact(**IDS, filename="evil", artifact=types.Part(text="x")).run()
    assert os.listdir(outside) == []


def test_a_half_written_version_stays_invisible(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    service.save_artifact(**IDS, filename="a.txt", artifact=types.Part(text="zero")).run()
    # A writer that died after the bytes but before the metadata left version 1 behind.
    (tmp_path / "app" / "u1" / "sessions" / "s1" / "a.txt" / "1").write_bytes(b"partial")

    assert service.list_versions(**IDS, filename="a.txt").run() == [0]
    assert service.load_artifact(**IDS, filename="a.txt").run() == types.Part(text="zero")
    assert service.save_artifact(**IDS, filename="a.txt", artifact=types.Part(text="t")).run() == 2
    assert service.load_artifact(**IDS, filename="a.txt", version=1).pipe(ops.to_list()).run() == []
