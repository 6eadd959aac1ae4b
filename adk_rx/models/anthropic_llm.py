"""AnthropicLlm: Claude through the official ``anthropic`` package (the ``anthropic`` extra).

Each call runs as a task on the runtime loop (:func:`adk_rx.rx.from_async`), so disposing the
subscription cancels the task and closes the HTTP response. The SDK's own retries are off:
failures are translated once into ``ModelError`` and retried by :func:`retrying`, like every
other provider; :class:`~adk_rx.models.RateLimitedLlm` and
:class:`~adk_rx.models.CircuitBreakerLlm` wrap it as they wrap any model.

Conversion lives in :mod:`adk_rx.models.anthropic_messages`, the streaming state in
:mod:`adk_rx.models.anthropic_stream`.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import pydantic
from reactivex import abc

from adk_rx.errors import AdkRxError, MissingCredentialsError, ModelError
from adk_rx.models.aggregation import finish_error
from adk_rx.models.anthropic_messages import (
    finish_reason_from_anthropic,
    params_from_request,
    part_from_block,
    usage_from_anthropic,
)
from adk_rx.models.anthropic_stream import ClaudeStream
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse, model_content
from adk_rx.models.provider_errors import TRANSPORT_ERRORS, http_status_error, transport_error
from adk_rx.models.provider_llm import ProviderLlm
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy
from adk_rx.models.safety import check_real_call

__all__ = ["AnthropicLlm"]

# An error event in the middle of a stream arrives on a 200 response: its type says what it is.
_ERROR_TYPES = {
    "overloaded_error": 529,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
}


class AnthropicLlm(ProviderLlm):
    """A Claude model.

    The client is built at the first call (one per event loop, as an HTTP pool must not cross
    loops), so constructing an ``AnthropicLlm`` never fails for a missing key; the call does,
    with ``MissingCredentialsError``.

    Args:
        model: the model name, e.g. ``"claude-sonnet-4-5"``.
        client: a ready ``anthropic.AsyncAnthropic``; used as is (its own retries too).
        max_tokens: the answer's token limit when the request's config sets none (Claude
            requires one).
        retry: the retry policy; ``None`` turns retries off (one attempt per call).
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry (e.g. to log or count them).
        **client_options: passed to ``anthropic.AsyncAnthropic`` when ``client`` is not
            given: ``api_key`` (default ``ANTHROPIC_API_KEY``), ``base_url`` (default
            ``ANTHROPIC_BASE_URL``, else Anthropic's), ``timeout``, ``default_headers``.
    """

    def __init__(
        self,
        model: str = "claude-sonnet-4-5",
        client: anthropic.AsyncAnthropic | None = None,
        *,
        max_tokens: int = 8192,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        **client_options: Any,
    ) -> None:
        super().__init__(model=model, retry=retry, scheduler=scheduler, on_retry=on_retry)
        self.max_tokens = max_tokens
        self._client = client
        self._client_options = client_options
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, anthropic.AsyncAnthropic
        ] = weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()

    # -- the client --------------------------------------------------------------------

    def _get_client(self) -> anthropic.AsyncAnthropic:
        """The client of the running loop; raises before any traffic when refused."""
        client = self._client
        if client is None:
            loop = asyncio.get_running_loop()
            with self._clients_lock:
                client = self._clients.get(loop)
                if client is None:
                    options = {"max_retries": 0, **self._client_options}
                    client = anthropic.AsyncAnthropic(**options)
                    self._clients[loop] = client
            if not (client.api_key or client.auth_token or getattr(client, "credentials", None)):
                raise MissingCredentialsError(
                    f"{self.provider} needs an API key: set ANTHROPIC_API_KEY or pass api_key=... "
                    "(or a client)"
                )
        check_real_call(str(client.base_url), provider=self.provider)
        return client

    def _params(self, llm_request: LlmRequest) -> dict[str, Any]:
        return params_from_request(llm_request, self.model, self.max_tokens)

    # -- one attempt ---------------------------------------------------------------------

    async def _complete(self, llm_request: LlmRequest) -> LlmResponse:
        client = self._get_client()
        params = self._params(llm_request)
        try:
            message = await client.messages.create(**params)
        except Exception as exc:
            raise self._translate(exc) from exc
        parts = [p for block in message.content if (p := part_from_block(block)) is not None]
        usage, custom = usage_from_anthropic(message.usage)
        reason = finish_reason_from_anthropic(message.stop_reason)
        error = finish_error(reason, None)
        return LlmResponse(
            content=model_content(*parts) if parts else None,
            turn_complete=True,
            finish_reason=reason,
            usage_metadata=usage,
            custom_metadata=custom,
            model_version=message.model,
            error_code=error[0] if error else None,
            error_message=error[1] if error else None,
        )

    async def _stream(self, llm_request: LlmRequest) -> AsyncIterator[LlmResponse]:
        client = self._get_client()
        params = self._params(llm_request)
        state = ClaudeStream(self.provider)
        try:
            events = await client.messages.create(**params, stream=True)
            try:
                async for event in events:
                    partial = state.add(event)
                    if partial is not None:
                        yield partial
            finally:
                # Closing the SDK's stream closes the HTTP response (on cancel too).
                await events.close()
        except Exception as exc:
            raise self._translate(exc) from exc
        yield state.complete()

    def _translate(self, exc: Exception) -> Exception:
        """The one place where anthropic and HTTP errors become ModelError."""
        if isinstance(exc, AdkRxError):
            return exc
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            if status < 400:  # an error event inside a stream
                status = _ERROR_TYPES.get(str(exc.type), 500)
            return http_status_error(self.provider, status, exc.api_message or str(exc))
        if isinstance(exc, (anthropic.APIConnectionError, *TRANSPORT_ERRORS)):
            return transport_error(self.provider, exc)
        if isinstance(
            exc,
            anthropic.APIResponseValidationError | pydantic.ValidationError | json.JSONDecodeError,
        ):
            return ModelError(
                f"{self.provider} sent a response that could not be read: {exc}",
                status="invalid_response",
            )
        return exc
