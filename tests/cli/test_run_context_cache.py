"""``adk-rx run`` shows the tokens a context cache served on each turn's summary line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.models._fakes import serving
from tests.models._gemini_server import GeminiProtocolServer

REPO = Path(__file__).resolve().parents[2]

AGENT = """
import os

from adk_rx import App, LlmAgent
from adk_rx.apps import ContextCacheConfig
from adk_rx.models.gemini import GeminiLlm

model = GeminiLlm("gemini-test", http_options={"base_url": os.environ["DESK_GEMINI_URL"]})
root_agent = LlmAgent(name="desk", model=model, static_instruction="Refunds take 5 days. " * 200)
app = App(name="desk", root_agent=root_agent, context_cache_config=ContextCacheConfig())
"""


def test_the_turn_line_counts_the_cached_tokens(tmp_path: Path) -> None:
    folder = tmp_path / "desk"
    folder.mkdir()
    (folder / "agent.py").write_text(AGENT)
    with serving(GeminiProtocolServer()) as server:
        env = {
            **os.environ,
            "GOOGLE_API_KEY": "local",
            "DESK_GEMINI_URL": server.url,
            "ADK_RX_ALLOW_REAL_MODEL_CALLS": "0",
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        }
        result = subprocess.run(
            [sys.executable, "-m", "adk_rx.cli", "run", str(folder), "-m", "Refund time?"],
            cwd=tmp_path,
            env=env,
            text=True,
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        served = dict(server.caches)

    assert result.returncode == 0, result.stderr
    assert "desk: Answer 1." in result.stdout
    assert server.cache_hits == 1
    cached = served["cachedContents/c1"]["tokens"]  # what the server served from it
    assert cached > 1000 and f", {cached} cached)" in result.stdout
