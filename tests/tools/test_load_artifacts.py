"""load_artifacts: artifacts listed in the instruction and attached to the next request."""

from __future__ import annotations

from google.genai import types

from adk_rx import LlmAgent
from adk_rx.testing import ScriptedLlm, simplify_content
from adk_rx.tools import load_artifacts
from adk_rx.tools.load_artifacts import artifact_as_part
from tests.tool_harness import Harness, call, calls


def blob(data: bytes, mime_type: str) -> types.Part:
    return types.Part(inline_data=types.Blob(data=data, mime_type=mime_type))


def _harness(llm: ScriptedLlm, **artifacts: types.Part) -> Harness:
    harness = Harness(LlmAgent(name="reader", model=llm, tools=[load_artifacts]))
    service = harness.runner.artifact_service
    assert service is not None
    for name, part in artifacts.items():
        service.save_artifact(
            app_name="app",
            user_id="u1",
            session_id="s1",
            filename=name.replace("_", "."),
            artifact=part,
        ).run()
    return harness


def test_the_instruction_lists_the_session_artifacts() -> None:
    llm = ScriptedLlm(["ok"])
    _harness(llm, notes_txt=types.Part(text="n"), photo_png=blob(b"\x89PNG", "image/png")).turn()

    instruction = llm.requests[0].system_instruction_text()
    assert 'You have a list of artifacts:\n  ["notes.txt", "photo.png"]' in instruction
    assert "load_artifacts" in llm.requests[0].tools_dict


def test_no_artifacts_means_no_artifact_instruction() -> None:
    llm = ScriptedLlm(["ok"])
    _harness(llm).turn()

    assert "list of artifacts" not in llm.requests[0].system_instruction_text()
    assert "load_artifacts" in llm.requests[0].tools_dict


def test_requested_artifacts_are_attached_to_the_next_request_only() -> None:
    names = ["notes.txt", "report.json", "photo.png", "data.bin", "missing.txt"]
    llm = ScriptedLlm([calls(call("load_artifacts", {"artifact_names": names})), "seen", "bye"])
    harness = _harness(
        llm,
        notes_txt=blob(b"buy milk", "text/plain"),
        report_json=blob(b'{"total": 3}', "application/json"),
        photo_png=blob(b"\x89PNG", "image/png"),
        data_bin=blob(b"\x00" * 2048, "application/octet-stream"),
    )

    events = harness.turn()

    assert events[1].get_function_responses()[0].response == {"artifact_names": names}
    attached = llm.requests[1].contents[-1]
    assert attached.role == "user"
    assert simplify_content(attached) == (
        '[Artifact notes.txt is:, buy milk, Artifact report.json is:, {"total": 3}, '
        "Artifact photo.png is:, Blob(image/png), Artifact data.bin is:, "
        "[Binary artifact: data.bin, type: application/octet-stream, size: 2.0 KB. "
        "Its content cannot be shown inline.], Artifact missing.txt was not found.]"
    )
    stored = [simplify_content(e.content) for e in harness.session().events]
    assert not any("buy milk" in s for s in stored)

    harness.turn("thanks")

    assert simplify_content(llm.requests[2].contents[-1]) == "thanks"


def test_artifact_parts_by_mime_type() -> None:
    text = types.Part(text="plain")
    assert artifact_as_part("a", text) is text
    assert artifact_as_part("a", blob(b"a,b", "text/csv")).text == "a,b"
    assert artifact_as_part("a", blob(b"<x/>", "application/atom+xml")).text == "<x/>"
    pdf = blob(b"%PDF", "application/pdf")
    assert artifact_as_part("a", pdf) is pdf
    audio = blob(b"RIFF", "audio/wav")
    assert artifact_as_part("a", audio) is audio
    placeholder = artifact_as_part("z.zip", blob(b"PK", "application/zip")).text or ""
    assert placeholder.startswith("[Binary artifact: z.zip, type: application/zip")


def test_names_that_are_not_a_list_of_strings_are_an_error_response() -> None:
    llm = ScriptedLlm([calls(call("load_artifacts", {"artifact_names": "notes.txt"})), "ok"])

    events = _harness(llm).turn()

    response = events[1].get_function_responses()[0].response or {}
    assert "artifact_names" in response["error"]
    assert events[-1].text() == "ok"
