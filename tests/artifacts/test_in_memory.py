"""InMemoryArtifactService specifics: stored versions are isolated from callers."""

from __future__ import annotations

from google.genai import types

from adk_rx.artifacts import InMemoryArtifactService

IDS = {"app_name": "app", "user_id": "u1", "session_id": "s1"}


def test_changing_a_saved_or_loaded_part_does_not_change_the_stored_version() -> None:
    service = InMemoryArtifactService()
    part = types.Part(text="original")
    service.save_artifact(**IDS, filename="a.txt", artifact=part).run()

    part.text = "changed by the caller"
    loaded = service.load_artifact(**IDS, filename="a.txt").run()
    loaded.text = "changed by a reader"

    assert service.load_artifact(**IDS, filename="a.txt").run() == types.Part(text="original")
