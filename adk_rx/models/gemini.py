"""GeminiLlm: Gemini (Google AI or Vertex AI) through google-genai's async client.

Each call runs as a task on the runtime loop (:func:`adk_rx.rx.from_async`), so disposing
the subscription cancels the task and closes the HTTP response. Failures are translated once
into ``ModelError`` (status, message, retryable) and retried by :func:`retrying`.

Streaming emits a ``partial=True`` response for every chunk that carries parts, then one
aggregated response (see :mod:`adk_rx.models.aggregation`). A call whose arguments are
streamed in pieces (``partial_args``) appears once, whole, when its last piece has arrived
(:mod:`adk_rx.models.streamed_calls`). Function calls get an ``adk-``
id when the API sends none, in the partial and the aggregate alike; those client-side ids
are removed again from the history sent back to the API.

A request with a ``cache_config`` names a cached content holding its stable prefix and sends
only the rest (:mod:`adk_rx.models.gemini_cache`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from reactivex import abc

from adk_rx.errors import AdkRxError, MissingCredentialsError, ModelError
from adk_rx.models.aggregation import StreamAggregator, ensure_function_call_ids, finish_error
from adk_rx.models.gemini_cache import GeminiContextCache
from adk_rx.models.gemini_live import GeminiLiveConnection
from adk_rx.models.live import BaseLlmConnection
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.provider_errors import TRANSPORT_ERRORS, http_status_error, transport_error
from adk_rx.models.provider_llm import ProviderLlm
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy
from adk_rx.models.response_metadata import candidate_fields
from adk_rx.models.safety import check_real_call
from adk_rx.models.streamed_calls import StreamedCalls
from adk_rx.rx import timer_scheduler

__all__ = ["GeminiLlm", "response_from_genai"]

_PROVIDER = "Gemini"
_log = logging.getLogger("adk_rx.models")
# What Gemini answers for a request naming a cache it no longer has.
_STALE_CACHE = frozenset({400, 403, 404})
_KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")


class GeminiLlm(ProviderLlm):
    """A Gemini model.

    The client is built at the first call, so constructing a ``GeminiLlm`` never fails for a
    missing key; the call does, with ``MissingCredentialsError``.

    Args:
        model: the model name, e.g. ``"gemini-2.5-flash"``.
        client: a ready ``google.genai.Client``; its own configuration is used as is.
        retry: the retry policy; ``None`` turns retries off (one attempt per call).
        scheduler: where backoff timers run, and the clock that expires context caches
            (default: the shared timer scheduler).
        on_retry: called before each retry (e.g. to log or count them).
        **client_options: passed to ``genai.Client`` when ``client`` is not given:
            ``api_key``, ``vertexai``, ``project``, ``location``, ``credentials``,
            ``http_options`` (``{"base_url": ...}`` points the client elsewhere).
            Without ``api_key`` or ``vertexai``, the key comes from ``GOOGLE_API_KEY``,
            else ``GEMINI_API_KEY``.
    """

    def __init__(
        self,
        model: str = "gemini-2.5-flash",
        client: genai.Client | None = None,
        *,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        **client_options: Any,
    ) -> None:
        super().__init__(model=model, retry=retry, scheduler=scheduler, on_retry=on_retry)
        self._client = client
        self._client_options = client_options
        self._client_lock = threading.Lock()
        self._cache = GeminiContextCache(scheduler or timer_scheduler())

    def connect(self, llm_request: LlmRequest) -> BaseLlmConnection:
        """Opens a Gemini Live session (``client.aio.live``) when ``receive()`` is subscribed.

        Raises:
            MissingCredentialsError: no API key (and no client or Vertex AI settings).
        """
        return GeminiLiveConnection(self._get_client(), self.model, llm_request)

    # -- the client --------------------------------------------------------------------

    def _base_url(self) -> str | None:
        if self._client is not None:
            api_client = getattr(self._client, "_api_client", None)
            options = getattr(api_client, "_http_options", None)
            return getattr(options, "base_url", None)
        options = self._client_options.get("http_options")
        if isinstance(options, Mapping):
            return options.get("base_url") or options.get("baseUrl")  # type: ignore[return-value]
        if isinstance(options, types.HttpOptions):
            return options.base_url
        return None

    def _get_client(self) -> genai.Client:
        """The client, built on first use; raises before any network traffic when refused."""
        with self._client_lock:
            if self._client is None:
                options = dict(self._client_options)
                uses_vertex = bool(options.get("vertexai")) or _env_flag(
                    "GOOGLE_GENAI_USE_VERTEXAI"
                )
                if not options.get("api_key") and not uses_vertex:
                    key = next((os.environ[v] for v in _KEY_VARIABLES if os.environ.get(v)), None)
                    if key is None:
                        raise MissingCredentialsError(
                            f"GeminiLlm({self.model!r}) needs an API key: set GOOGLE_API_KEY or "
                            "GEMINI_API_KEY, or pass api_key=... (or vertexai=True, or a client)"
                        )
                    options["api_key"] = key
                self._client = genai.Client(**options)
            client = self._client
        # Checked on every call: the switch may change while the model object lives.
        check_real_call(self._base_url(), provider=self.provider)
        return client

    def _arguments(self, llm_request: LlmRequest) -> dict[str, Any]:
        # The flow runs tools itself: the SDK's automatic function calling stays off.
        config = llm_request.config.model_copy(
            update={
                "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True)
            }
        )
        contents = [_without_client_ids(c) for c in llm_request.contents]
        return {"model": self.model, "contents": contents, "config": config}

    # -- one attempt ---------------------------------------------------------------------

    async def _send(self, client: genai.Client, llm_request: LlmRequest, send: Any) -> Any:
        """``send(**arguments)``, through the context cache when the request asks for one."""
        arguments = self._arguments(llm_request)
        cache = llm_request.cache_config
        if cache is None:
            return await send(**arguments)
        prefix = await self._cache.prefix(
            client, self.model, cache, arguments["config"], arguments["contents"]
        )
        if prefix is None:
            return await send(**arguments)
        try:
            return await send(**{**arguments, "config": prefix.config, "contents": prefix.contents})
        except genai_errors.ClientError as exc:
            if exc.code not in _STALE_CACHE or "cache" not in str(exc.message).lower():
                raise
            # Gone before our clock said so (deleted, or the server's clock is ahead).
            _log.info("Gemini cache %s is gone (%s); sending the request whole", prefix.name, exc)
            self._cache.forget(prefix.name)
            return await send(**arguments)

    async def _complete(self, llm_request: LlmRequest) -> LlmResponse:
        client = self._get_client()
        try:
            response = await self._send(client, llm_request, client.aio.models.generate_content)
        except Exception as exc:
            raise _translate(exc) from exc
        return response_from_genai(response)

    async def _stream(self, llm_request: LlmRequest) -> AsyncIterator[LlmResponse]:
        client = self._get_client()
        aggregator = StreamAggregator()
        calls = StreamedCalls()
        blocked: tuple[str, str] | None = None
        saw_candidate = False
        try:
            chunks = await self._send(
                client, llm_request, client.aio.models.generate_content_stream
            )
            try:
                async for chunk in chunks:
                    aggregator.usage_metadata = chunk.usage_metadata or aggregator.usage_metadata
                    aggregator.model_version = chunk.model_version or aggregator.model_version
                    if not chunk.candidates:
                        blocked = _prompt_block(chunk) or blocked
                        continue
                    saw_candidate = True
                    candidate = chunk.candidates[0]
                    aggregator.metadata.add_candidate(candidate)
                    if candidate.finish_reason is not None:
                        aggregator.finish_reason = _enum_value(candidate.finish_reason)
                        aggregator.finish_message = candidate.finish_message
                    parts = _assembled(calls, candidate.content)
                    if parts:
                        yield _partial(aggregator, parts)
            finally:
                # Closing the SDK's generator closes the HTTP response (on cancel too).
                await chunks.aclose()  # type: ignore[attr-defined]
        except Exception as exc:
            raise _translate(exc) from exc
        unclosed = calls.finish()
        if unclosed:
            yield _partial(aggregator, unclosed)
        if not saw_candidate and blocked is None:
            blocked = ("UNKNOWN_ERROR", "the model returned no candidates")
        yield aggregator.complete(error=blocked)


def _assembled(calls: StreamedCalls, content: types.Content | None) -> list[types.Part]:
    """A chunk's parts, with the pieces of streamed calls replaced by the calls they complete."""
    parts: list[types.Part] = []
    for part in content.parts or [] if content is not None else []:
        if calls.takes(part):
            parts.extend(calls.add(part))
        else:
            parts.append(part)
    with_ids = ensure_function_call_ids(types.Content(role="model", parts=parts))
    return list(with_ids.parts or []) if with_ids is not None else []


def _partial(aggregator: StreamAggregator, parts: list[types.Part]) -> LlmResponse:
    for part in parts:
        aggregator.add_part(part)
    return LlmResponse(content=types.Content(role="model", parts=parts), partial=True)


def response_from_genai(response: types.GenerateContentResponse) -> LlmResponse:
    """An LlmResponse from the first candidate of a google-genai response.

    A non-STOP finish becomes ``error_code``/``error_message`` (the content, if any, is
    kept); a response without candidates reports the prompt feedback's block reason.
    """
    usage, version = response.usage_metadata, response.model_version
    if not response.candidates:
        code, message = _prompt_block(response) or (
            "UNKNOWN_ERROR",
            "the model returned no candidates",
        )
        return LlmResponse(
            error_code=code, error_message=message, usage_metadata=usage, model_version=version
        )
    candidate = response.candidates[0]
    reason = _enum_value(candidate.finish_reason)
    error = finish_error(reason, candidate.finish_message)
    content = ensure_function_call_ids(candidate.content)
    if content is not None and not content.parts:
        content = None
    if content is not None and content.role != "model":
        content = content.model_copy(update={"role": "model"})
    return LlmResponse(
        content=content,
        turn_complete=True,
        finish_reason=reason,
        usage_metadata=usage,
        model_version=version,
        error_code=error[0] if error else None,
        error_message=error[1] if error else None,
        **candidate_fields(candidate),
    )


def _prompt_block(response: types.GenerateContentResponse) -> tuple[str, str] | None:
    feedback = response.prompt_feedback
    if feedback is None or feedback.block_reason is None:
        return None
    reason = _enum_value(feedback.block_reason) or "BLOCKED"
    return reason, feedback.block_reason_message or f"the prompt was blocked: {reason}"


def _enum_value(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes"}


def _without_client_ids(content: types.Content) -> types.Content:
    """The content without the ``adk-`` ids this adapter invented (the API never saw them)."""
    if not content.parts or not any(_has_client_id(p) for p in content.parts):
        return content
    parts: list[types.Part] = []
    for part in content.parts:
        update: dict[str, Any] = {}
        if part.function_call is not None and _is_client_id(part.function_call.id):
            update["function_call"] = part.function_call.model_copy(update={"id": None})
        if part.function_response is not None and _is_client_id(part.function_response.id):
            update["function_response"] = part.function_response.model_copy(update={"id": None})
        parts.append(part.model_copy(update=update) if update else part)
    return content.model_copy(update={"parts": parts})


def _is_client_id(call_id: str | None) -> bool:
    return call_id is not None and call_id.startswith("adk-")


def _has_client_id(part: types.Part) -> bool:
    return (part.function_call is not None and _is_client_id(part.function_call.id)) or (
        part.function_response is not None and _is_client_id(part.function_response.id)
    )


def _translate(exc: Exception) -> Exception:
    """The one place where google-genai and httpx errors become ModelError."""
    if isinstance(exc, AdkRxError):
        return exc
    if isinstance(exc, genai_errors.APIError):
        message = exc.message or str(exc)
        return http_status_error(_PROVIDER, int(exc.code), str(message))
    if isinstance(exc, TRANSPORT_ERRORS):
        return transport_error(_PROVIDER, exc)
    if isinstance(
        exc,
        genai_errors.UnknownApiResponseError | json.JSONDecodeError | pydantic.ValidationError,
    ):
        return ModelError(
            f"{_PROVIDER} sent a response that could not be read: {exc}",
            status="invalid_response",
        )
    return exc
