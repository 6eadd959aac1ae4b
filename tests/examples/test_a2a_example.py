"""The A2A example runs offline as its docstring says: ``shouter`` served by one
``adk-rx api-server --a2a`` process on 127.0.0.1, ``desk`` run by ``adk-rx run`` in another."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.cli.server_process import api_server_process
from tests.examples.test_examples import EXAMPLES, REPO

pytestmark = pytest.mark.timeout(180)


def test_the_desk_hands_the_message_to_the_shouter_in_another_process(tmp_path):
    with api_server_process(
        EXAMPLES / "a2a", tmp_path, "--a2a", "--session-service-uri", "memory://"
    ) as server:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["ADK_RX_ALLOW_REAL_MODEL_CALLS"] = "0"
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
        env["SHOUTER_URL"] = f"{server.url}/a2a/shouter"
        result = subprocess.run(
            [
                *(sys.executable, "-m", "adk_rx.cli", "run", str(EXAMPLES / "a2a" / "desk")),
                *("--in-memory", "--jsonl", "-m", "hello over there"),
            ],
            cwd=tmp_path,
            env=env,
            text=True,
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    assert result.returncode == 0, result.stdout + result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    answer = events[-1]
    assert answer["author"] == "shouter"
    assert answer["content"]["parts"][0]["text"] == "HELLO OVER THERE!"
    assert answer["customMetadata"]["a2a:context_id"]
