"""examples/oauth_notes in ``adk-rx run`` (a subprocess): the sign-in link is printed, the
URL the browser lands on is pasted back, and the call goes through with the user's token."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from adk_rx.testing.oauth_server import LocalOAuthServer, serve

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "oauth_notes"

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def server() -> Iterator[LocalOAuthServer]:
    with serve(
        LocalOAuthServer(client_id="notes-example", client_secret="notes-example-secret")
    ) as s:
        yield s


def _read_until(stream, marker: str) -> str:
    seen = ""
    while marker not in seen:
        char = stream.read(1)
        assert char, f"stdout ended before {marker!r}: {seen!r}"
        seen += char
    return seen


def test_the_sign_in_is_answered_in_adk_rx_run(server: LocalOAuthServer, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env.pop("ADK_RX_MODEL", None)
    env.update(
        NOTES_API_URL=server.url,
        ADK_RX_ALLOW_REAL_MODEL_CALLS="0",
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_rx.cli", "run", str(EXAMPLE), "--in-memory"],
        cwd=tmp_path,
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("note buy milk\n")
        process.stdin.flush()
        asked = _read_until(process.stdout, "sent back to")
        (link,) = {w for w in asked.split() if w.startswith(server.url + "/authorize?")}
        landed = httpx.get(link, timeout=5).headers["location"]
        process.stdin.write(landed + "\n")
        process.stdin.close()
        rest = process.stdout.read()
        process.wait(timeout=60)
        err = process.stderr.read() if process.stderr else ""
    finally:
        process.kill()

    assert process.returncode == 0, err
    assert "? notes asks you to sign in: " + server.url + "/authorize?" in asked
    assert '"pending": true' in asked
    assert '← add_note: {"id": "1", "title": "buy milk", "body": null}' in rest
    assert server.exchanges == 1
    assert landed not in rest + err  # the code is not echoed back
