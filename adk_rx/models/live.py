"""The live model seam: ``BaseLlm.connect(llm_request)`` opens a bidirectional connection.

A connection carries a whole live session: the history once (``send_history``), then
contents, realtime blobs and activity markers in, and a stream of :class:`LlmResponse` out
(``receive``): partial text or audio as it is produced, a complete response per model turn,
transcriptions, ``interrupted`` when the user barged in, ``turn_complete`` when the model
yields the floor, and function calls, whose responses go back with ``send_content``.

Every ``send_*`` returns a cold Completable (an Observable that emits nothing); ``receive()``
is the one stream of the connection. ``close()`` ends it: ``receive()`` completes and the
provider's socket closes. Disposing the subscription to ``receive()`` must close it too.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from google.genai import types
from reactivex import Observable

from adk_rx.models.llm_response import LlmResponse
from adk_rx.rx._engine import sync

__all__ = ["BaseLlmConnection"]


class BaseLlmConnection(ABC):
    """One open live session with a model."""

    @abstractmethod
    def send_history(self, contents: Sequence[types.Content]) -> Observable[None]:
        """Sends the conversation so far (a Completable); the model does not answer it."""

    @abstractmethod
    def send_content(self, content: types.Content) -> Observable[None]:
        """Sends a user turn or function responses; the model answers (a Completable)."""

    @abstractmethod
    def send_realtime(self, blob: types.Blob) -> Observable[None]:
        """Sends an audio or video frame (a Completable)."""

    def send_activity_start(self) -> Observable[None]:
        """Tells the model the user started speaking (manual activity detection)."""
        return sync.empty()

    def send_activity_end(self) -> Observable[None]:
        """Tells the model the user stopped speaking."""
        return sync.empty()

    @abstractmethod
    def receive(self) -> Observable[LlmResponse]:
        """The model's responses for the whole session; completes when the connection ends."""

    @abstractmethod
    def close(self) -> None:
        """Closes the connection (idempotent); ``receive()`` completes."""
