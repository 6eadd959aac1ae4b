"""SIGTERM to a real ``adk-rx api-server``: a run still going ends before the process does."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from adk_rx import SqlSessionService
from tests.cli.server_process import api_server_process
from tests.cli.server_support import unique_app, user_text, write_agents


def test_sigterm_lets_a_running_run_finish_and_store_its_reply(tmp_path: Path) -> None:
    app = unique_app("drain")
    agents = write_agents(tmp_path / "agents", app)
    with api_server_process(agents, tmp_path) as server:
        base = f"{server.url}/apps/{app}/users/u1/sessions"
        with httpx.Client(timeout=30) as http:
            assert http.post(base, json={"session_id": "s1"}).status_code == 200
            started = http.post(
                f"{base}/s1/invocations", json={"new_message": user_text("slow 40 0.025")}
            )
            assert started.status_code == 202, started.text
        server.process.send_signal(signal.SIGTERM)  # about one second of the run is left
        # uvicorn exits by raising the signal again once the application shut down
        assert server.process.wait(30) in (0, -signal.SIGTERM), server.output()
        assert "Application shutdown complete" in server.output()

    store = SqlSessionService(f"sqlite:///{tmp_path / '.adk_rx' / 'sessions.db'}")
    session = store.get_session(app_name=app, user_id="u1", session_id="s1").run()
    last = session.events[-1]
    assert last.error_code is None, last
    assert last.text() == "".join(f"tok{i} " for i in range(40))
    store.close()
