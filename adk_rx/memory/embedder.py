"""The embedder seam: texts in, one unit-length vector per text out.

An :class:`Embedder` has a ``name`` (stored with the vectors, so a store never mixes two
models' vectors), a ``dimension`` and one method, ``embed``, which returns a cold Single of
the vectors. Remote embedders send the texts in batches, one after the other, each batch
retried like a model call (:func:`adk_rx.models.resilience.retrying`); disposing the
subscription cancels the request in flight and sends no further batch::

    embed([t1 .. t250]), batch_size=100:
        --batch 1--#~~1s~~--batch 1--batch 2--batch 3--[v1 .. v250]|
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, cast, runtime_checkable

import reactivex as rx
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError, ModelError
from adk_rx.models.resilience import RetryNotice, RetryPolicy, retrying

__all__ = ["Embedder", "Vector", "batched", "check_vectors", "unit"]

Vector = list[float]
"""One embedding: ``dimension`` floats of unit length."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors whose cosine similarity says how related the texts are.

    Attributes:
        name: identifies the model and its settings (``"hashing-256"``,
            ``"gemini/gemini-embedding-001@768"``); a store keeps it with its vectors and
            refuses another embedder's queries.
        dimension: the length of every vector.
    """

    name: str
    dimension: int

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        """A cold Single: one unit vector per text, in order.

        Args:
            texts: what to embed (an empty list gives an empty list).
            is_query: the texts are search queries rather than documents (some models embed
                the two differently).
        """
        ...


def unit(vector: Sequence[float]) -> Vector:
    """``vector`` scaled to length 1 (the zero vector stays zero)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm == 0.0:
        return [0.0] * len(vector)
    return [x / norm for x in vector]


def check_vectors(
    provider: str, vectors: Sequence[Sequence[float]], count: int, dimension: int
) -> list[Vector]:
    """Unit vectors from a provider's answer, after checking their number and length.

    Raises:
        ModelError: the provider sent another number of vectors, or vectors of another
            length than the embedder's ``dimension`` (not retried: it would answer the same).
    """
    if len(vectors) != count:
        raise ModelError(
            f"{provider} returned {len(vectors)} embeddings for {count} texts",
            status="invalid_response",
        )
    for vector in vectors:
        if len(vector) != dimension:
            raise ModelError(
                f"{provider} returned a vector of {len(vector)} numbers; the embedder is set "
                f"up for {dimension} (pass dimension= to match the model)",
                status="invalid_response",
            )
    return [unit(vector) for vector in vectors]


def batched(
    texts: Sequence[str],
    batch_size: int,
    call: Callable[[list[str]], Observable[list[Vector]]],
    *,
    name: str,
    retry: RetryPolicy | None,
    scheduler: abc.SchedulerBase | None = None,
    on_retry: Callable[[RetryNotice], None] | None = None,
) -> Observable[list[Vector]]:
    """Embeds ``texts`` in batches of ``batch_size``, one batch at a time, each retried.

    Args:
        texts: all the texts.
        batch_size: the most texts one request carries.
        call: one cold attempt for one batch.
        name: the embedder's name, in retry logs and errors.
        retry: the retry policy per batch (None: one attempt).
        scheduler: where backoff timers run (default the shared timer scheduler).
        on_retry: called before each retry.
    """
    if batch_size < 1:
        raise ConfigurationError(f"batch_size must be at least 1, got {batch_size}")
    batches = [list(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
    if not batches:
        return rx.just([])

    def one(batch: list[str]) -> Observable[list[Vector]]:
        # retrying() is typed for model responses; it only looks at the errors.
        attempt = cast(Any, lambda: call(batch))
        return cast(
            Observable[list[Vector]],
            retrying([(name, attempt)], retry, scheduler=scheduler, on_retry=on_retry),
        )

    return rx.from_iterable(batches).pipe(
        ops.concat_map(one),
        ops.to_list(),
        ops.map(lambda answers: [vector for answer in answers for vector in answer]),
    )
