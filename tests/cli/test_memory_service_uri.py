"""``adk-rx api-server --memory-service-uri URL --memory-embedder NAME``: a real server process
whose agent recalls, in a new session, what another session said; the memory outlives it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from adk_rx.memory import HashingEmbedder, VectorMemoryService
from tests.cli.adk_client import run_body
from tests.cli.server_process import REPO, api_server_process

RECALL_AGENT = textwrap.dedent("""
    from adk_rx import LlmAgent
    from adk_rx.testing import ScriptedLlm
    from adk_rx.tools import preload_memory


    def recall(request):
        for content in request.contents:
            text = content.parts[0].text or ""
            if "<PAST_CONVERSATIONS>" in text:
                return "remembered: " + text.split("<PAST_CONVERSATIONS>")[1].strip()
        return "nothing remembered"


    root_agent = LlmAgent(name="recall", model=ScriptedLlm([recall] * 100), tools=[preload_memory])
""")


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    (tmp_path / "agents" / "recall").mkdir(parents=True)
    (tmp_path / "agents" / "recall" / "agent.py").write_text(RECALL_AGENT)
    return tmp_path / "agents"


def _last_text(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    return response.json()[-1]["content"]["parts"][0]["text"]


def test_a_new_session_recalls_what_an_earlier_one_said(agents: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    options = ("--memory-service-uri", url, "--memory-embedder", "hashing:128")
    with (
        api_server_process(agents, tmp_path, *options) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        for sid in ("s1", "s2"):
            http.post("/apps/recall/users/u/sessions", json={"session_id": sid})
        first = http.post("/run", json=run_body("recall", "My dog is called Rex", user="u"))
        assert _last_text(first) == "nothing remembered"
        added = http.patch("/apps/recall/users/u/memory", json={"session_id": "s1"})
        assert added.status_code == 200, added.text

        later = http.post("/run", json=run_body("recall", "what is my dog called?", "u", "s2"))

        assert "user: My dog is called Rex" in _last_text(later)
    memory = VectorMemoryService(url, HashingEmbedder(dim=128))
    found = memory.search_memory(app_name="recall", user_id="u", query="dog Rex").run()
    memory.close()
    assert "My dog is called Rex" in (found.memories[0].content.parts[0].text or "")  # type: ignore[index]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--memory-service-uri", "ftp://example/memory", "memory service URI must be memory://"),
        ("--memory-embedder", "word2vec", "unknown embedder 'word2vec'"),
    ],
)
def test_a_bad_memory_option_stops_the_server_with_a_clear_message(
    agents: Path, tmp_path: Path, option: str, value: str, message: str
) -> None:
    options = ["--memory-service-uri", "memory://", option, value]
    result = subprocess.run(
        [sys.executable, "-m", "adk_rx.cli", "api-server", str(agents), "--port", "0", *options],
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 2, result.stderr
    assert message in result.stderr
