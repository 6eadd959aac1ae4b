"""GeminiEmbedder: Gemini's embedding models through google-genai's ``embed_content``.

Texts go in batches (``batch_size`` per request), each a task on the runtime loop (so
disposing the subscription cancels it) and retried like a Gemini model call: errors are
translated once into ``ModelError`` by the model adapter's translation, and 429 / 5xx / lost
connections are retried with backoff. Documents are embedded with the ``RETRIEVAL_DOCUMENT``
task type and queries with ``RETRIEVAL_QUERY``; ``output_dimensionality`` asks for vectors of
``dimension`` numbers, which are scaled to unit length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from google import genai
from google.genai import types
from reactivex import Observable, abc

from adk_rx.memory.embedder import Vector, batched, check_vectors
from adk_rx.models.gemini import GeminiLlm, _translate  # pyright: ignore[reportPrivateUsage]
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy
from adk_rx.rx import from_async

__all__ = ["GeminiEmbedder"]


class GeminiEmbedder:
    """Embeddings from a Gemini model (Google AI or Vertex AI).

    The client is built at the first call, as :class:`~adk_rx.models.GeminiLlm` builds it
    (the key from ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``), and a missing key fails the call
    with MissingCredentialsError.

    Args:
        model: the embedding model, e.g. ``"gemini-embedding-001"``.
        dimension: the vector length asked for (``output_dimensionality``).
        client: a ready ``google.genai.Client``.
        batch_size: texts per request.
        retry: the retry policy per request; None for one attempt.
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry.
        **client_options: passed to ``genai.Client`` (``api_key``, ``vertexai``,
            ``http_options``, ...), as for GeminiLlm.
    """

    def __init__(
        self,
        model: str = "gemini-embedding-001",
        *,
        dimension: int = 768,
        client: genai.Client | None = None,
        batch_size: int = 100,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        **client_options: Any,
    ) -> None:
        self.model = model
        self.dimension = dimension
        self.name = f"gemini/{model}@{dimension}"
        self.batch_size = batch_size
        self.retry = retry
        self.scheduler = scheduler
        self.on_retry = on_retry
        # The model adapter owns the client's set-up: keys, Vertex AI, the real-call switch.
        self._llm = GeminiLlm(model, client, retry=None, **client_options)

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        """A cold Single of the texts' unit vectors (see the module docstring)."""
        task = "RETRIEVAL_QUERY" if is_query else "RETRIEVAL_DOCUMENT"
        return batched(
            texts,
            self.batch_size,
            lambda batch: from_async(lambda: self._request(batch, task)),
            name=self.name,
            retry=self.retry,
            scheduler=self.scheduler,
            on_retry=self.on_retry,
        )

    async def _request(self, batch: list[str], task: str) -> list[Vector]:
        client = self._llm._get_client()  # pyright: ignore[reportPrivateUsage]
        config = types.EmbedContentConfig(task_type=task, output_dimensionality=self.dimension)
        try:
            response = await client.aio.models.embed_content(
                model=self.model, contents=list(batch), config=config
            )
        except Exception as exc:
            raise _translate(exc) from exc
        vectors = [list(e.values or []) for e in response.embeddings or []]
        return check_vectors(
            f"Gemini embeddings ({self.model})", vectors, len(batch), self.dimension
        )

    def __repr__(self) -> str:
        return f"GeminiEmbedder({self.model!r}, dimension={self.dimension})"
