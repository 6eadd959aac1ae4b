"""What goes into vector memory: turns of a session, passages of a document."""

from __future__ import annotations

from google.genai import types

from adk_rx.events import Event, EventActions
from adk_rx.memory.chunks import document_chunks, session_chunks, split_text
from adk_rx.sessions import Session


def _said(author: str, text: str, timestamp: float = 0.0, **fields: object) -> Event:
    role = "user" if author == "user" else "model"
    content = types.Content(role=role, parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=timestamp, **fields)  # type: ignore[arg-type]


def _session(*events: Event) -> Session:
    return Session(id="s", app_name="app", user_id="u", events=list(events))


def test_a_session_is_cut_into_turns_without_calls_state_partials_or_thoughts() -> None:
    call = types.Part(function_call=types.FunctionCall(name="lookup", args={}))
    answer = types.Part(function_response=types.FunctionResponse(name="lookup", response={}))
    thought = types.Part(text="let me think", thought=True)
    events = [
        _said("user", "what's the weather?", 10.0),
        Event(
            author="bot", content=types.Content(role="model", parts=[thought, call]), timestamp=11.0
        ),
        Event(author="user", content=types.Content(role="user", parts=[answer]), timestamp=12.0),
        Event(author="bot", actions=EventActions(state_delta={"k": 1}), timestamp=13.0),
        _said("bot", "Sun", 14.0, partial=True),
        _said("bot", "Sunny all day.", 15.0),
        _said("user", "thanks", 20.0),
        _said("bot", "You're welcome.", 21.0),
    ]

    chunks = session_chunks(_session(*events))

    assert [(c.text, c.timestamp) for c in chunks] == [
        ("user: what's the weather?\nbot: Sunny all day.", 10.0),
        ("user: thanks\nbot: You're welcome.", 20.0),
    ]


def test_what_an_agent_says_before_the_first_user_message_is_a_turn_of_its_own() -> None:
    chunks = session_chunks(_session(_said("bot", "Welcome!", 1.0), _said("user", "hi", 2.0)))

    assert [c.text for c in chunks] == ["bot: Welcome!", "user: hi"]


def test_a_long_turn_is_cut_into_chunks_that_keep_every_word() -> None:
    long_answer = " ".join(f"word{i}." for i in range(400))
    session = _session(_said("user", "tell me everything", 1.0), _said("bot", long_answer, 2.0))

    chunks = session_chunks(session, max_chars=300)

    assert len(chunks) > 5 and all(len(c.text) <= 300 for c in chunks)
    assert all(c.timestamp == 1.0 for c in chunks)
    words = " ".join(c.text for c in chunks).split()
    assert [w for w in words if w.startswith("word")] == long_answer.split()
    assert len({c.key for c in chunks}) == len(chunks)


def test_keys_follow_text_and_time() -> None:
    [a] = session_chunks(_session(_said("user", "same", 1.0)))
    [b] = session_chunks(_session(_said("user", "same", 1.0)))
    [c] = session_chunks(_session(_said("user", "same", 2.0)))

    assert a.key == b.key != c.key


def test_split_text_prefers_paragraphs_then_sentences_then_words() -> None:
    assert split_text("One two.\n\nThree four.", 15) == ["One two.", "Three four."]
    assert split_text("First sentence. Second one.", 20) == ["First sentence.", "Second one."]
    assert split_text("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert split_text("   ", 10) == []


def test_a_document_is_cut_at_headings_and_packed_by_paragraph() -> None:
    text = "# Intro\n\nShort one.\n\nShort two.\n\n## Setup\n\nInstall it.\n"

    chunks = document_chunks(text, max_chars=1000)

    assert [c.text for c in chunks] == [
        "# Intro\n\nShort one.\n\nShort two.",
        "## Setup\n\nInstall it.",
    ]
