"""FilesRetrieval: a folder of text and markdown files, indexed on first use and again as it
changes, searched by the model."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from reactivex import Observable
from reactivex import operators as ops

from adk_rx import LlmAgent
from adk_rx.errors import ConfigurationError
from adk_rx.memory import HashingEmbedder, VectorMemoryService
from adk_rx.memory.embedder import Vector
from adk_rx.memory.files import FileIndex
from adk_rx.testing import ScriptedLlm
from adk_rx.tools.files_retrieval import NOTHING_FOUND, FilesRetrieval
from tests.tool_harness import Harness, call, calls


class Counting(HashingEmbedder):
    """Records the documents it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        if not is_query:
            self.documents.extend(texts)
        return super().embed(texts, is_query=is_query)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "policies").mkdir(parents=True)
    (folder / "policies" / "refunds.md").write_text(
        "# Refunds\n\nRefunds are paid within 14 days of the return.\n\n"
        "## Exceptions\n\nGift cards are never refunded.\n"
    )
    (folder / "shipping.txt").write_text("Parcels ship from Lyon every weekday.\n")
    (folder / "logo.png").write_bytes(b"\x89PNG refunds refunds")
    (folder / ".git").mkdir()
    (folder / ".git" / "notes.md").write_text("refunds refunds refunds")
    return folder


def _search(tool: FilesRetrieval, query: str) -> dict[str, Any]:
    return tool.run_async(args={"query": query}, tool_context=None).run()  # type: ignore[arg-type]


def _touch_later(path: Path) -> None:
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 5_000_000_000))


def test_the_model_gets_the_best_passages_with_their_file(docs: Path) -> None:
    tool = FilesRetrieval(name="search_docs", description="The shop's policies.", input_dir=docs)
    llm = ScriptedLlm([calls(call("search_docs", {"query": "when are refunds paid?"})), "14 days."])

    Harness(LlmAgent(name="assistant", model=llm, tools=[tool])).turn("refund delay?")

    declared = llm.requests[0].function_declarations()
    assert [(d.name, d.description) for d in declared] == [("search_docs", "The shop's policies.")]
    response = llm.requests[1].contents[-1].parts[0].function_response  # type: ignore[index]
    assert response is not None and response.response is not None
    best = response.response["results"][0]
    assert best["source"] == "policies/refunds.md"
    assert best["text"] == "# Refunds\n\nRefunds are paid within 14 days of the return."
    assert best["score"] > 0.3


def test_only_text_files_inside_the_folder_are_indexed(docs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("refunds secret")
    (docs / "link.md").symlink_to(outside)
    index = FileIndex(docs, VectorMemoryService("memory://", HashingEmbedder()))

    assert [p.relative_to(docs).as_posix() for p in index.files()] == [
        "policies/refunds.md",
        "shipping.txt",
    ]


def test_changes_are_indexed_incrementally(docs: Path) -> None:
    embedder = Counting()
    tool = FilesRetrieval(
        name="search_docs",
        description="docs",
        input_dir=docs,
        memory=VectorMemoryService("memory://", embedder),
    )
    _search(tool, "refunds")
    assert len(embedder.documents) == 3  # two passages of refunds.md, one of shipping.txt

    _touch_later(docs / "shipping.txt")  # newer, same content: nothing to embed
    refunds = docs / "policies" / "refunds.md"
    refunds.write_text(refunds.read_text() + "\n## Deadline\n\nAsk within 30 days.\n")
    _touch_later(refunds)
    (docs / "returns.md").write_text("Returns go to the Lyon warehouse.")
    found = _search(tool, "deadline to ask")

    assert embedder.documents[3:] == [
        "## Deadline\n\nAsk within 30 days.",
        "Returns go to the Lyon warehouse.",
    ]
    assert found["results"][0]["text"] == "## Deadline\n\nAsk within 30 days."

    (docs / "shipping.txt").unlink()
    sources = {r["source"] for r in _search(tool, "parcels ship Lyon weekday")["results"]}
    assert "shipping.txt" not in sources and "returns.md" in sources


def test_the_index_persists_in_the_store(docs: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'index.db'}"
    first = Counting()
    _search(
        FilesRetrieval(
            name="d", description="d", input_dir=docs, memory=VectorMemoryService(url, first)
        ),
        "x",
    )
    again = Counting()
    tool = FilesRetrieval(
        name="d", description="d", input_dir=docs, memory=VectorMemoryService(url, again)
    )

    assert _search(tool, "gift cards")["results"][0]["text"].startswith("## Exceptions")
    assert len(first.documents) == 3 and again.documents == []  # nothing re-embedded


def test_nothing_found_says_so_and_a_missing_query_is_an_error(docs: Path) -> None:
    memory = VectorMemoryService("memory://", HashingEmbedder(), min_score=0.5)
    tool = FilesRetrieval(name="d", description="d", input_dir=docs, memory=memory)

    assert _search(tool, "zebra") == {"results": [], "message": NOTHING_FOUND}
    with pytest.raises(ValueError, match="'query'"):
        tool.run_async(args={}, tool_context=None).pipe(ops.to_list()).run()  # type: ignore[arg-type]


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="is not a folder"):
        FilesRetrieval(name="d", description="d", input_dir=tmp_path / "nope")
