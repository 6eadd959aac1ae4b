"""No secret of a sign-in reaches the stored events, the database files, logs or spans."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from reactivex import operators as ops

from adk_rx import LlmAgent, Runner, SqlSessionService
from adk_rx.auth import SqlCredentialService
from adk_rx.sessions.codec import encode_event
from adk_rx.testing import ScriptedLlm
from adk_rx.testing.oauth_server import serve
from tests.auth.support import answer, credential_request, sign_in, whoami_tool
from tests.tool_harness import call, calls


def test_a_whole_sign_in_leaves_no_secret_in_events_files_logs_or_spans(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "app.db"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    # Everything at DEBUG but the test's own browser: httpcore's DEBUG lines show the response
    # headers of the sign-in page, whose redirect carries the code (that is the browser's view).
    with (
        serve() as server,
        caplog.at_level(logging.DEBUG),
        caplog.at_level(logging.INFO, "httpcore"),
    ):
        llm = ScriptedLlm(
            [calls(call("whoami", {}, "c1")), "you are ada", calls(call("whoami", {}, "c2")), "ok"]
        )
        runner = Runner(
            agent=LlmAgent(name="root", model=llm, tools=[whoami_tool(server)]),
            app_name="app",
            session_service=SqlSessionService(f"sqlite:///{db}"),
            credential_service=SqlCredentialService(
                f"sqlite:///{db}", key=Fernet.generate_key().decode()
            ),
            tracer_provider=provider,
        )

        def turn(message: object) -> list[object]:
            return (
                runner.run_async(
                    user_id="u1", session_id="s1", new_message=message, run_config=None
                )
                .pipe(ops.to_list())
                .run()
            )

        runner.session_service.create_session(app_name="app", user_id="u1", session_id="s1").run()
        request_id, args = credential_request(turn("who am I?"))  # type: ignore[arg-type]
        redirect = sign_in(args)
        turn(answer(request_id, args, redirect))
        turn("and again?")
        secrets = server.secrets_issued()
        assert server.exchanges == 1 and len(secrets) >= 4  # client secret, code, 2 tokens

        session = runner.session_service.get_session(
            app_name="app", user_id="u1", session_id="s1"
        ).run()
        assert session is not None
        stored = "".join(encode_event(event) for event in session.events)
        files = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
        spans = "".join(span.to_json() for span in exporter.get_finished_spans())
        for secret in secrets:
            assert secret not in stored, "a secret in the stored events"
            assert secret.encode() not in files, "a secret in the database files"
            assert secret not in caplog.text, "a secret in the logs"
            assert secret not in spans, "a secret in a span"
        assert redirect not in stored
        assert '"user": "ada"' in stored.replace('"user":"ada"', '"user": "ada"')
