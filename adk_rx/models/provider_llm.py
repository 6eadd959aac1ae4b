"""ProviderLlm: what every adapter of a model provider shares, so each says only what differs.

An adapter (Gemini, Claude, an OpenAI-compatible server, LiteLLM) implements two coroutines,
one whole answer and one stream; :meth:`ProviderLlm.generate_content` runs the one asked for
as a task on the runtime loop (:func:`adk_rx.rx.from_async`, so disposing the subscription
cancels the task and closes the HTTP response) and retries it under the adapter's policy
(:func:`~adk_rx.models.resilience.retrying`).
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable

from reactivex import Observable, abc

from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy, retrying
from adk_rx.rx import from_async

__all__ = ["ProviderLlm"]


class ProviderLlm(BaseLlm):
    """A model a provider's API answers: each call a task, retried by :func:`retrying`.

    Subclasses implement :meth:`_complete` and :meth:`_stream`, translating the provider's
    failures into ``ModelError`` (which :func:`retrying` reads to decide a retry).

    Args:
        model: the model name sent to the provider.
        retry: the retry policy; ``None`` turns retries off (one attempt per call).
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry (e.g. to log or count them).
    """

    def __init__(
        self,
        model: str,
        *,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
    ) -> None:
        super().__init__(model=model)
        self.retry = retry
        self.scheduler = scheduler
        self.on_retry = on_retry

    @property
    def provider(self) -> str:
        """How this model is named in error messages."""
        return f"{type(self).__name__}({self.model!r})"

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Calls the provider; see :meth:`BaseLlm.generate_content` for the protocol."""
        return retrying(
            [(self.model, _Attempt(self, llm_request, stream))],
            self.retry,
            scheduler=self.scheduler,
            on_retry=self.on_retry,
            later=True,  # each attempt is a task (from_async): it never answers at once
        )

    @abstractmethod
    async def _complete(self, llm_request: LlmRequest) -> LlmResponse:
        """One call for the whole answer."""

    @abstractmethod
    def _stream(self, llm_request: LlmRequest) -> AsyncIterator[LlmResponse]:
        """One streamed call: ``partial=True`` chunks, then the aggregated answer."""


class _Attempt:
    """One try of a call: a task of the model's ``_complete`` or ``_stream``. One object
    (not closures, partials and a bound method) kept for as long as the call waits."""

    __slots__ = ("model", "request", "stream")

    def __init__(self, model: ProviderLlm, request: LlmRequest, stream: bool) -> None:
        self.model = model
        self.request = request
        self.stream = stream

    def __call__(self) -> Observable[LlmResponse]:
        model = self.model
        call = model._stream if self.stream else model._complete  # pyright: ignore[reportPrivateUsage]
        return from_async(functools.partial(call, self.request))
