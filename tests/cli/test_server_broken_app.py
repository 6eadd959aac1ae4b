"""An app that fails to load: the server logs its traceback, and ``adk-rx web`` answers it
to the page (which shows it as ``adk-rx run`` prints it); an api-server answers the message
alone."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.cli.adk_client import client_for
from tests.cli.server_process import api_server_process
from tests.cli.server_support import unique_app

BROKEN = """\
def configure():
    raise RuntimeError("the app is broken on purpose")


configure()
"""


def _app(agents: Path, name: str, source: str) -> None:
    (agents / name).mkdir(parents=True)
    (agents / name / "agent.py").write_text(source)


def test_web_logs_the_traceback_of_an_app_that_fails_to_import_and_answers_it(tmp_path: Path):
    agents, app = tmp_path / "agents", unique_app("broken")
    _app(agents, app, BROKEN)

    with api_server_process(agents, tmp_path, command="web") as server:
        answer = httpx.get(f"{server.url}/apps/{app}/users/user/sessions", timeout=30)
        logged = server.wait_for("RuntimeError: the app is broken on purpose")

    assert answer.status_code == 500
    body = answer.json()
    assert body["detail"].startswith(f"app {app!r} failed to load: importing ")
    assert "RuntimeError('the app is broken on purpose')" in body["detail"]
    traceback = body["traceback"]
    assert traceback.startswith("Traceback (most recent call last):\n")
    assert 'agent.py", line 5, in <module>' in traceback  # the user's own frames ...
    assert 'agent.py", line 2, in configure' in traceback
    assert "importlib" not in traceback and "loader.py" not in traceback  # ... only
    assert traceback.endswith("RuntimeError: the app is broken on purpose\n")
    assert f"app {app!r} failed to load" in logged
    assert 'agent.py", line 2, in configure' in logged


@pytest.mark.asyncio
async def test_an_api_server_answers_the_load_error_without_the_traceback(tmp_path: Path):
    broken, rootless = unique_app("broken"), unique_app("rootless")
    _app(tmp_path, broken, BROKEN)
    _app(tmp_path, rootless, "agent = None\n")

    async with client_for(tmp_path) as http:
        raised = await http.post(f"/apps/{broken}/users/user/sessions", json={})
        empty = await http.get(f"/dev/apps/{rootless}/build_graph")
    async with client_for(tmp_path, web=True) as http:
        empty_on_the_page = await http.get(f"/dev/apps/{rootless}/build_graph")

    assert raised.status_code == 500
    assert "RuntimeError('the app is broken on purpose')" in raised.json()["detail"]
    assert "traceback" not in raised.json()  # the server's files stay its own
    assert empty.status_code == 500
    assert "defines no 'root_agent'" in empty.json()["detail"]
    assert "traceback" not in empty.json()
    # The page tells a load error by its traceback, empty when none of the app's code raised.
    assert empty_on_the_page.json()["traceback"] == ""
