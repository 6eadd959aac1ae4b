"""SqlArtifactService's own bounds: ids and names longer than its columns are refused before
any statement runs (the conformance suite in test_services.py covers the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.genai import types

from adk_rx import SqlArtifactService
from adk_rx.errors import ConfigurationError


def test_over_long_names_and_ids_are_refused_before_the_database(tmp_path: Path):
    store = SqlArtifactService(f"sqlite:///{tmp_path / 'a.db'}")
    text = types.Part(text="x")
    with pytest.raises(ConfigurationError):
        store.save_artifact(
            app_name="a", user_id="u", session_id="s", filename="n" * 2000, artifact=text
        ).run()
    with pytest.raises(ConfigurationError):
        store.save_artifact(
            app_name="a", user_id="u" * 300, session_id="s", filename="n", artifact=text
        ).run()
    with pytest.raises(ConfigurationError):
        store.load_artifact(app_name="a", user_id="u", session_id="", filename="n").run()
    store.close()
