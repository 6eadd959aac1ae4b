"""Memory services and embedders by name (``--memory-service-uri``, ``--memory-embedder``)."""

from __future__ import annotations

import pytest

from adk_rx.errors import ConfigurationError
from adk_rx.memory import (
    GeminiEmbedder,
    HashingEmbedder,
    LocalEmbedder,
    OpenAiEmbedder,
    VectorMemoryService,
)
from adk_rx.memory.uri import embedder_from_name, memory_service_from_uri


@pytest.mark.parametrize(
    ("name", "kind", "identity"),
    [
        ("hashing", HashingEmbedder, "hashing-256"),
        ("hashing:512", HashingEmbedder, "hashing-512"),
        ("local", LocalEmbedder, "local/all-MiniLM-L6-v2"),
        ("gemini", GeminiEmbedder, "gemini/gemini-embedding-001@768"),
        ("gemini:text-embedding-004@256", GeminiEmbedder, "gemini/text-embedding-004@256"),
        ("openai", OpenAiEmbedder, "openai/text-embedding-3-small@1536"),
        ("openai:nomic-embed-text@768", OpenAiEmbedder, "openai/nomic-embed-text@768"),
    ],
)
def test_an_embedder_by_name(name: str, kind: type, identity: str) -> None:
    embedder = embedder_from_name(name)

    assert isinstance(embedder, kind) and embedder.name == identity


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("word2vec", "unknown embedder"),
        ("hashing:big", "is not a vector length"),
        ("local:x", "unknown embedder"),
        ("openai:nomic-embed-text", "pass dimension="),
    ],
)
def test_a_bad_embedder_name_is_refused(name: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        embedder_from_name(name)


def test_a_memory_service_by_uri() -> None:
    service = memory_service_from_uri("memory://", "hashing:64")
    assert isinstance(service, VectorMemoryService) and service.embedder.dimension == 64
    service.close()
    with pytest.raises(ConfigurationError, match="must be memory://, sqlite:///PATH"):
        memory_service_from_uri("redis://localhost/0")
