"""Memory services and embedders by name, for configuration strings and the command line.

``adk-rx api-server --memory-service-uri URL --memory-embedder NAME``::

    URL                          the service
    memory://                    VectorMemoryService in this process
    sqlite:///PATH               VectorMemoryService in a SQLite file (sqlite-vec when installed)
    postgresql://USER@HOST/DB    VectorMemoryService in PostgreSQL (pgvector when the server has it)

    NAME                         the embedder
    hashing[:DIM]                HashingEmbedder (the default: offline, word matching)
    local                        LocalEmbedder (all-MiniLM-L6-v2; the embed extra)
    gemini[:MODEL][@DIM]         GeminiEmbedder (GOOGLE_API_KEY)
    openai[:MODEL][@DIM]         OpenAiEmbedder (OPENAI_API_KEY, OPENAI_BASE_URL)
"""

from __future__ import annotations

from adk_rx.errors import ConfigurationError
from adk_rx.memory.embedder import Embedder
from adk_rx.memory.gemini_embedder import GeminiEmbedder
from adk_rx.memory.hashing import HashingEmbedder
from adk_rx.memory.local_embedder import LocalEmbedder
from adk_rx.memory.openai_embedder import OpenAiEmbedder
from adk_rx.memory.vector import VectorMemoryService

__all__ = ["embedder_from_name", "memory_service_from_uri"]

_EMBEDDERS = "hashing[:DIM], local, gemini[:MODEL][@DIM] or openai[:MODEL][@DIM]"


def _dimension(name: str, text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ConfigurationError(f"embedder {name!r}: {text!r} is not a vector length")
    return int(text)


def embedder_from_name(name: str) -> Embedder:
    """The embedder a name like ``hashing``, ``local`` or ``openai:nomic-embed-text@768`` gives.

    Raises:
        ConfigurationError: an unknown kind or a malformed name.
    """
    kind, _, rest = name.strip().partition(":")
    model, _, size = rest.partition("@")
    kind = kind.lower()
    if kind == "hashing" and not size:
        return HashingEmbedder(_dimension(name, model)) if model else HashingEmbedder()
    if kind == "local" and not rest:
        return LocalEmbedder()
    dimension = _dimension(name, size) if size else None
    if kind == "gemini":
        return GeminiEmbedder(model or "gemini-embedding-001", dimension=dimension or 768)
    if kind == "openai":
        return OpenAiEmbedder(model or "text-embedding-3-small", dimension=dimension)
    raise ConfigurationError(f"unknown embedder {name!r}: use {_EMBEDDERS}")


def memory_service_from_uri(uri: str, embedder: str = "hashing") -> VectorMemoryService:
    """The memory service a ``--memory-service-uri`` names, with the embedder named ``embedder``.

    Raises:
        ConfigurationError: another scheme, or a bad embedder name.
    """
    scheme = uri.partition(":")[0].lower().split("+")[0]
    if scheme not in ("memory", "sqlite", "postgresql", "postgres"):
        raise ConfigurationError(
            f"the memory service URI must be memory://, sqlite:///PATH or postgresql://..., "
            f"got {uri!r}"
        )
    return VectorMemoryService(uri, embedder_from_name(embedder))
