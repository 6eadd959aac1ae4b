"""RecordingLlm / ReplayLlm: record real-protocol traffic, replay it offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import reactivex.operators as ops
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent, RunConfig, StreamingMode
from adk_rx.errors import ConfigurationError, ModelError, ReplayMismatchError
from adk_rx.models.gemini import GeminiLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.recording import RecordingLlm, ReplayLlm
from adk_rx.testing import ScriptedLlm, simplify_events

from ._fakes import FakeServer, json_reply, sse_reply


@pytest.fixture(autouse=True)
def _gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


def gemini(server: FakeServer) -> GeminiLlm:
    return GeminiLlm("gemini-test", http_options={"base_url": server.url}, retry=None)


def request(text: str) -> LlmRequest:
    llm_request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text=text)])])
    llm_request.append_instructions(["Be brief."])
    return llm_request


def run(observable: Any) -> list[LlmResponse]:
    return observable.pipe(ops.to_list()).run()


def text_candidate(text: str, finish: str | None = "STOP") -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish:
        body["finishReason"] = finish
    return body


def test_replay_serves_the_recorded_responses_without_a_server(
    server: FakeServer, tmp_path: Path
) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(
        json_reply(
            {
                "candidates": [text_candidate("Four.")],
                "usageMetadata": {"promptTokenCount": 4, "totalTokenCount": 6},
            }
        ),
        sse_reply(
            [
                {"candidates": [text_candidate("Fi", finish=None)]},
                {"candidates": [text_candidate("ve.")]},
            ]
        ),
    )
    recorder = RecordingLlm(gemini(server), path)
    recorded_plain = run(recorder.generate_content(request("2+2?")))
    recorded_stream = run(recorder.generate_content(request("2+3?"), stream=True))

    replay = ReplayLlm(path)
    # Asked in the other order: matching is on the request, not the position.
    replayed_stream = run(replay.generate_content(request("2+3?"), stream=True))
    replayed_plain = run(replay.generate_content(request("2+2?")))

    assert replayed_plain == recorded_plain
    assert replayed_stream == recorded_stream
    assert [r.partial for r in replayed_stream] == [True, True, False]
    assert replay.model == "gemini-test" and replay.remaining == 0
    assert len(path.read_text().splitlines()) == 2
    assert len(server.exchanges) == 2


def test_a_streamed_recording_replayed_without_stream_gives_the_final_response(
    tmp_path: Path, server: FakeServer
) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(
        sse_reply(
            [{"candidates": [text_candidate("a", None)]}, {"candidates": [text_candidate("b")]}]
        )
    )
    run(RecordingLlm(gemini(server), path).generate_content(request("q"), stream=True))

    [response] = run(ReplayLlm(path).generate_content(request("q")))

    assert (response.partial, response.get_text()) == (False, "ab")


def test_a_mismatch_names_the_difference(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(json_reply({"candidates": [text_candidate("Four.")]}))
    run(RecordingLlm(gemini(server), path).generate_content(request("What is 2+2?")))

    with pytest.raises(ReplayMismatchError) as caught:
        run(ReplayLlm(path).generate_content(request("What is 2+5?")))

    message = str(caught.value)
    assert "no recorded call matches" in message
    assert '-     "text": "What is 2+2?"' in message
    assert '+     "text": "What is 2+5?"' in message


def test_running_past_the_recording_is_a_mismatch(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(json_reply({"candidates": [text_candidate("ok")]}))
    run(RecordingLlm(gemini(server), path).generate_content(request("q")))
    replay = ReplayLlm(path)
    run(replay.generate_content(request("q")))

    with pytest.raises(ReplayMismatchError, match="already served"):
        run(replay.generate_content(request("q")))


def test_a_mismatch_lists_the_user_messages_the_recording_covers(
    server: FakeServer, tmp_path: Path
) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(
        json_reply({"candidates": [text_candidate("Four.")]}),
        json_reply({"candidates": [text_candidate("Six.")]}),
    )
    recorder = RecordingLlm(gemini(server), path)
    run(recorder.generate_content(request("What is 2+2?")))
    run(recorder.generate_content(request("What is 3+3?")))

    with pytest.raises(ReplayMismatchError) as caught:
        run(ReplayLlm(path).generate_content(request("What is 2+5?")))

    message = str(caught.value)
    assert "The recording answers these user messages" in message
    assert "  - 'What is 2+2?'\n  - 'What is 3+3?'" in message
    assert ReplayLlm(path).recorded_user_messages == ["What is 2+2?", "What is 3+3?"]


def test_reuse_serves_a_recorded_call_every_time_it_is_asked(
    server: FakeServer, tmp_path: Path
) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(json_reply({"candidates": [text_candidate("ok")]}))
    run(RecordingLlm(gemini(server), path).generate_content(request("q")))
    replay = ReplayLlm(path, reuse=True)

    answers = [run(replay.generate_content(request("q")))[0].get_text() for _ in range(3)]

    assert answers == ["ok", "ok", "ok"]
    assert len(server.exchanges) == 1
    with pytest.raises(ReplayMismatchError, match="'q'"):
        run(replay.generate_content(request("other")))


def test_a_recorded_failure_fails_the_same_way(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(json_reply({"error": {"code": 400, "message": "bad request"}}, 400))
    with pytest.raises(ModelError):
        run(RecordingLlm(gemini(server), path).generate_content(request("q")))

    with pytest.raises(ModelError, match="bad request") as caught:
        run(ReplayLlm(path).generate_content(request("q")))

    assert caught.value.status == 400 and not caught.value.retryable


def test_function_call_ids_do_not_take_part_in_matching(server: FakeServer, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    server.push(json_reply({"candidates": [text_candidate("ok")]}))

    def with_call(call_id: str) -> LlmRequest:
        llm_request = request("q")
        llm_request.contents.append(
            types.Content(
                role="model",
                parts=[types.Part(function_call=types.FunctionCall(id=call_id, name="f", args={}))],
            )
        )
        return llm_request

    run(RecordingLlm(gemini(server), path).generate_content(with_call("adk-first-run")))
    [response] = run(ReplayLlm(path).generate_content(with_call("adk-second-run")))

    assert response.get_text() == "ok"


def test_an_unreadable_recording_is_a_configuration_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"request": {}}\nnot json\n')

    with pytest.raises(ConfigurationError, match=r"broken\.jsonl:2"):
        ReplayLlm(broken)
    with pytest.raises(ConfigurationError, match="cannot read"):
        ReplayLlm(tmp_path / "missing.jsonl")


def get_weather(city: str) -> dict[str, str]:
    """Returns the weather for a city."""
    return {"city": city, "sky": "sunny"}


def run_agent(model: Any, streaming: bool) -> list[Any]:
    agent = LlmAgent(
        name="weather", model=model, instruction="Answer briefly.", tools=[get_weather]
    )
    runner = InMemoryRunner(agent=agent, app_name="recording")
    mode = StreamingMode.SSE if streaming else StreamingMode.NONE
    return list(
        runner.run(
            user_id="u",
            session_id="s",
            new_message="Weather in Oslo?",
            run_config=RunConfig(auto_create_session=True, streaming_mode=mode),
        )
    )


def comparable(events: list[Any]) -> list[dict[str, Any]]:
    """Events without what differs between two runs of the same conversation."""
    drop = {"id", "invocationId", "timestamp"}
    return [{k: v for k, v in e.to_dict().items() if k not in drop} for e in events]


@pytest.mark.parametrize("streaming", [False, True])
def test_a_recorded_session_replays_with_identical_events(
    server: FakeServer, tmp_path: Path, streaming: bool
) -> None:
    path = tmp_path / "session.jsonl"
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}
    answer = text_candidate("Sunny in Oslo.")
    if streaming:
        server.push(
            sse_reply([{"candidates": [{"content": {"role": "model", "parts": [call]}}]}]),
            sse_reply(
                [
                    {"candidates": [text_candidate("Sunny ", None)]},
                    {"candidates": [text_candidate("in Oslo.")]},
                ]
            ),
        )
    else:
        server.push(
            json_reply({"candidates": [{"content": {"role": "model", "parts": [call]}}]}),
            json_reply({"candidates": [answer]}),
        )

    recorded = run_agent(RecordingLlm(gemini(server), path), streaming)
    replay = ReplayLlm(path)
    replayed = run_agent(replay, streaming)

    final = [e for e in recorded if not e.partial]
    assert simplify_events(final) == [
        'weather: FunctionCall(get_weather, {"city": "Oslo"})',
        'weather: FunctionResponse(get_weather, {"city": "Oslo", "sky": "sunny"})',
        "weather: Sunny in Oslo.",
    ]
    assert comparable(replayed) == comparable(recorded)
    assert replay.remaining == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["request"]["tools"] for r in lines] == [["get_weather"], ["get_weather"]]
    assert len(server.exchanges) == 2


def conversation(*texts: str, instruction: str = "Be brief.") -> LlmRequest:
    """A request whose contents alternate user and model texts, starting with the user."""
    roles = ("user", "model")
    contents = [
        types.Content(role=roles[i % 2], parts=[types.Part(text=t)]) for i, t in enumerate(texts)
    ]
    llm_request = LlmRequest(contents=contents)
    llm_request.append_instructions([instruction])
    return llm_request


def record_alone(path: Path, *questions: str) -> None:
    """Records each question in a session of its own, answered with its text upper-cased."""
    recorder = RecordingLlm(ScriptedLlm([q.upper() for q in questions]), path)
    for question in questions:
        run(recorder.generate_content(request(question)))


def test_a_question_recorded_alone_is_answered_anywhere_in_a_conversation(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    record_alone(path, "first?", "second?")
    replay = ReplayLlm(path, reuse=True)

    later = run(replay.generate_content(conversation("first?", "FIRST?", "second?")))
    other_order = run(replay.generate_content(conversation("second?", "SECOND?", "first?")))
    # An instruction templated from state that the earlier turn changed still matches the turn.
    edited = conversation("first?", "FIRST?", "second?", instruction="Be brief. Order: 1234.")

    assert [r.get_text() for r in later + other_order] == ["SECOND?", "FIRST?"]
    assert run(replay.generate_content(edited))[0].get_text() == "SECOND?"
    assert replay.remaining == 0


def test_the_whole_request_is_preferred_to_the_turn(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    recorder = RecordingLlm(ScriptedLlm(["alone", "after hello"]), path)
    run(recorder.generate_content(request("q")))
    run(recorder.generate_content(conversation("hello", "hi", "q")))

    replay = ReplayLlm(path, reuse=True)

    assert run(replay.generate_content(conversation("hello", "hi", "q")))[0].get_text() == (
        "after hello"
    )
    assert run(replay.generate_content(conversation("bye", "ok", "q")))[0].get_text() == "alone"


def test_a_mismatch_under_reuse_counts_the_calls_served_so_far(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    record_alone(path, "first?", "second?", "third?")
    replay = ReplayLlm(path, reuse=True)
    for _ in range(2):  # the same call served twice counts once
        run(replay.generate_content(request("first?")))

    with pytest.raises(ReplayMismatchError) as caught:
        run(replay.generate_content(conversation("first?", "FIRST?", "fourth?")))

    message = str(caught.value)
    assert "(1 of the 3 recorded calls served so far)" in message
    assert "wherever it comes in the session" in message
    assert "in this order" not in message
    assert '+     "text": "fourth?"' in message
    assert '"text": "FIRST?"' not in message  # the diff is of this turn, not the history


def test_a_fallback_answers_what_the_recording_does_not_hold_and_lists_what_it_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "calls.jsonl"
    record_alone(path, "first?", "second?")
    replay = ReplayLlm(path, reuse=True, fallback="Not recorded. Try:")

    (answer,) = run(replay.generate_content(request("third?")))

    assert answer.get_text() == "Not recorded. Try:\n- first?\n- second?"
    assert run(replay.generate_content(request("first?")))[0].get_text() != answer.get_text()
