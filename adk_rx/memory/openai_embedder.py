"""OpenAiEmbedder: any server that speaks OpenAI's ``/embeddings`` (OpenAI, Ollama, vLLM, ...).

Texts go in batches (``batch_size`` per request) over httpx, each a task on the runtime loop
(disposing the subscription cancels it and closes the response) and retried like a model
call: 429 / 5xx / lost connections with backoff, honouring ``Retry-After``.

OpenAI's ``text-embedding-3`` models can return shorter vectors: a ``dimension`` below a
known model's own size is sent as ``dimensions``. Other models return their own size, which
``dimension`` must give (an answer of another length fails the call).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx
from reactivex import Observable, abc

from adk_rx.errors import ConfigurationError, MissingCredentialsError, ModelError
from adk_rx.memory.embedder import Vector, batched, check_vectors
from adk_rx.models.openai_compat import DEFAULT_BASE_URL
from adk_rx.models.provider_errors import (
    error_message_from_body,
    http_status_error,
    transport_error,
)
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy
from adk_rx.models.safety import check_real_call
from adk_rx.rx import from_async

__all__ = ["OpenAiEmbedder"]

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""The vector length of OpenAI's embedding models."""

_SHORTENABLE = ("text-embedding-3-small", "text-embedding-3-large")


class OpenAiEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: the model name the server knows.
        base_url: the API root (``/embeddings`` is appended). Default: ``OPENAI_BASE_URL``,
            else OpenAI's.
        api_key: the bearer token. Default: ``OPENAI_API_KEY`` (only api.openai.com needs one).
        dimension: the vector length; required for models not in :data:`KNOWN_DIMENSIONS`.
        batch_size: texts per request.
        retry: the retry policy per request; None for one attempt.
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry.
        timeout: httpx timeout of one request.
        headers: extra HTTP headers sent with every request.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        dimension: int | None = None,
        batch_size: int = 256,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        timeout: float | httpx.Timeout = 60.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        native = KNOWN_DIMENSIONS.get(model)
        if dimension is None and native is None:
            raise ConfigurationError(
                f"OpenAiEmbedder({model!r}): pass dimension= (the length of its vectors)"
            )
        self.model = model
        self.dimension = dimension or native or 0
        self._sends_dimensions = model in _SHORTENABLE and self.dimension != native
        self.name = f"openai/{model}@{self.dimension}"
        self.base_url = base_url
        self.api_key = api_key
        self.batch_size = batch_size
        self.retry = retry
        self.scheduler = scheduler
        self.on_retry = on_retry
        self.timeout = timeout
        self.headers = dict(headers or {})
        # One connection pool per event loop: an httpx pool must not cross loops.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
        self._clients = weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()

    @property
    def provider(self) -> str:
        """How this embedder is named in error messages."""
        return f"OpenAiEmbedder({self.model!r})"

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        """A cold Single of the texts' unit vectors (see the module docstring)."""
        return batched(
            texts,
            self.batch_size,
            lambda batch: from_async(lambda: self._request(batch)),
            name=self.name,
            retry=self.retry,
            scheduler=self.scheduler,
            on_retry=self.on_retry,
        )

    def _endpoint(self) -> tuple[str, dict[str, str]]:
        base_url = self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        base_url = base_url.rstrip("/")
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key and urlsplit(base_url).hostname == "api.openai.com":
            raise MissingCredentialsError(
                f"{self.provider} calls api.openai.com and needs an API key: set "
                "OPENAI_API_KEY or pass api_key=... (or point base_url at a local server)"
            )
        check_real_call(base_url, provider=self.provider)
        headers = {"accept": "application/json", **self.headers}
        if key:
            headers["authorization"] = f"Bearer {key}"
        return f"{base_url}/embeddings", headers

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None:
                client = self._clients[loop] = httpx.AsyncClient(timeout=self.timeout)
            return client

    async def _request(self, batch: list[str]) -> list[Vector]:
        url, headers = self._endpoint()
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self._sends_dimensions:
            body["dimensions"] = self.dimension
        try:
            response = await self._client().post(url, json=body, headers=headers)
        except httpx.TransportError as exc:
            raise transport_error(self.provider, exc) from exc
        if not response.is_success:
            try:
                response.raise_for_status()
            except httpx.HTTPStatusError as exc:  # kept as the cause: Retry-After is read there
                message = error_message_from_body(response.text)
                raise http_status_error(self.provider, response.status_code, message) from exc
        try:
            items = sorted(json.loads(response.content)["data"], key=lambda d: d.get("index", 0))
            vectors = [item["embedding"] for item in items]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ModelError(
                f"{self.provider} sent an answer that is not an embeddings list: "
                f"{response.text[:200]!r}",
                status="invalid_response",
            ) from exc
        return check_vectors(self.provider, vectors, len(batch), self.dimension)

    def __repr__(self) -> str:
        return f"OpenAiEmbedder({self.model!r}, dimension={self.dimension})"
