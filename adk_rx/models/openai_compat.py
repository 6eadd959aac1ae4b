"""OpenAiCompatibleLlm: any server that speaks OpenAI chat completions, over httpx.

OpenAI itself, Ollama, vLLM, llama.cpp's server, LM Studio. Each call runs as a task on the
runtime loop (:func:`adk_rx.rx.from_async`); disposing the subscription cancels it and
closes the HTTP response. Message conversion lives in :mod:`adk_rx.models.openai_messages`.

Streaming sends ``stream: true`` and reads the SSE frames: text deltas become
``partial=True`` responses; tool-call fragments (a name and id first, then argument pieces,
keyed by ``index``) are reassembled and appear whole in the final aggregated response.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from google.genai import types
from reactivex import abc

from adk_rx.errors import MissingCredentialsError, ModelError
from adk_rx.models.aggregation import StreamAggregator
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.openai_messages import (
    body_from_request,
    finish_reason_from_openai,
    function_call_part,
    invalid_response,
    response_from_completion,
    usage_from_openai,
)
from adk_rx.models.provider_errors import (
    error_message_from_body,
    http_status_error,
    transport_error,
)
from adk_rx.models.provider_llm import ProviderLlm
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy
from adk_rx.models.response_metadata import citations_from_openai, logprobs_from_openai
from adk_rx.models.safety import check_real_call

__all__ = ["DEFAULT_BASE_URL", "CompletionStream", "OpenAiCompatibleLlm"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"

_DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)


class OpenAiCompatibleLlm(ProviderLlm):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        model: the model name the server knows (``"gpt-4o-mini"``, ``"llama3.2"``).
        base_url: the API root, ``/chat/completions`` is appended (e.g.
            ``"http://localhost:11434/v1"`` for Ollama). Default: ``OPENAI_BASE_URL``, else
            OpenAI's.
        api_key: the bearer token. Default: ``OPENAI_API_KEY``. Only api.openai.com insists
            on one; a local server is called without.
        retry: the retry policy; ``None`` turns retries off (one attempt per call).
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry (e.g. to log or count them).
        timeout: httpx timeout for one attempt.
        headers: extra HTTP headers sent with every request.
    """

    def __init__(
        self,
        model: str = "",
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        timeout: float | httpx.Timeout = _DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(model=model, retry=retry, scheduler=scheduler, on_retry=on_retry)
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout
        self.headers = dict(headers or {})
        # One connection pool per event loop: an httpx pool must not cross loops.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient]
        self._clients = weakref.WeakKeyDictionary()
        self._clients_lock = threading.Lock()

    # -- configuration, resolved at call time --------------------------------------------

    def _endpoint(self) -> tuple[str, dict[str, str]]:
        """The URL and headers of one call; raises before any traffic when refused."""
        base_url = (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )
        key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if not key and urlsplit(base_url).hostname == "api.openai.com":
            raise MissingCredentialsError(
                f"{self.provider} calls api.openai.com and needs an API key: set OPENAI_API_KEY "
                "or pass api_key=... (or point base_url / OPENAI_BASE_URL at a local server)"
            )
        check_real_call(base_url, provider=self.provider)
        headers = {"accept": "application/json", **self.headers}
        if key:
            headers["authorization"] = f"Bearer {key}"
        return f"{base_url}/chat/completions", headers

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None:
                client = httpx.AsyncClient(timeout=self.timeout)
                self._clients[loop] = client
            return client

    # -- one attempt ---------------------------------------------------------------------

    async def _complete(self, llm_request: LlmRequest) -> LlmResponse:
        url, headers = self._endpoint()
        body = body_from_request(llm_request, self.model, stream=False)
        try:
            response = await self._client().post(url, json=body, headers=headers)
            await self._raise_for_status(response)
            try:
                data = json.loads(response.content)
            except ValueError as exc:
                raise invalid_response(
                    self.provider, f"the body is not JSON: {response.text[:200]!r}"
                ) from exc
            return response_from_completion(self.provider, data)
        except httpx.TransportError as exc:
            raise transport_error(self.provider, exc) from exc

    async def _stream(self, llm_request: LlmRequest) -> AsyncIterator[LlmResponse]:
        url, headers = self._endpoint()
        body = body_from_request(llm_request, self.model, stream=True)
        headers["accept"] = "text/event-stream"
        state = CompletionStream(self.provider)
        try:
            # ``async with`` closes the response however the generator ends: done, error,
            # or closed by a disposed subscription.
            async with self._client().stream("POST", url, json=body, headers=headers) as response:
                await self._raise_for_status(response)
                async for data in _sse_data(response):
                    if data.strip() == "[DONE]":
                        break
                    partial = state.add_chunk(data)
                    if partial is not None:
                        yield partial
        except httpx.TransportError as exc:
            raise transport_error(self.provider, exc) from exc
        yield state.complete()

    async def _raise_for_status(self, response: httpx.Response) -> None:
        if response.is_success:
            return
        text = (await response.aread()).decode(errors="replace")
        try:
            response.raise_for_status()
        except httpx.HTTPStatusError as exc:
            # From the httpx error, so Retry-After stays reachable through __cause__.
            raise http_status_error(
                self.provider, response.status_code, error_message_from_body(text)
            ) from exc


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event (multi-line data joined by newlines)."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if lines:
                yield "\n".join(lines)
                lines = []
            continue
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        # Comments (":"), "event:", "id:" and "retry:" lines carry nothing we need.
    if lines:
        yield "\n".join(lines)


@dataclass
class _ToolCallDraft:
    """A streamed tool call being reassembled from its fragments."""

    call_id: Any = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class CompletionStream:
    """Everything a chat-completions stream has said so far; :meth:`complete` builds the
    final response."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.aggregator = StreamAggregator()
        self.tool_calls: dict[int, _ToolCallDraft] = {}

    def add_chunk(self, data: str) -> LlmResponse | None:
        """Takes the JSON text of one ``chat.completion.chunk``; returns a partial response for
        its text."""
        try:
            chunk: Any = json.loads(data)
        except ValueError as exc:
            raise invalid_response(
                self.provider, f"an SSE frame is not JSON: {data[:200]!r}"
            ) from exc
        return self.add(chunk, data)

    def add(self, chunk: Any, data: str = "") -> LlmResponse | None:
        """Takes one parsed ``chat.completion.chunk`` (``data``: its text, for errors)."""
        data = data or repr(chunk)
        if not isinstance(chunk, Mapping):
            raise invalid_response(self.provider, f"an SSE frame is not an object: {data[:200]!r}")
        if chunk.get("error"):
            error: Any = chunk["error"]
            message = error.get("message") if isinstance(error, Mapping) else error
            raise ModelError(f"{self.provider} reported an error mid-stream: {message}")
        aggregator = self.aggregator
        aggregator.usage_metadata = (
            usage_from_openai(chunk.get("usage")) or aggregator.usage_metadata
        )
        if isinstance(chunk.get("model"), str):
            aggregator.model_version = chunk["model"]
        choices: Any = chunk.get("choices") or []
        if not isinstance(choices, list) or not choices:
            return None  # the usage-only chunk at the end
        choice: Any = choices[0]
        delta: Any = choice.get("delta") if isinstance(choice, Mapping) else None
        if not isinstance(delta, Mapping):
            raise invalid_response(self.provider, f"a chunk without a delta: {data[:200]!r}")
        reason = finish_reason_from_openai(choice.get("finish_reason"))
        if reason is not None:
            aggregator.finish_reason = reason
        aggregator.metadata.add_logprobs(logprobs_from_openai(choice.get("logprobs")))
        aggregator.metadata.add_citations(citations_from_openai(delta.get("annotations")))
        parts: list[types.Part] = []
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            aggregator.add_text(reasoning, thought=True)
            parts.append(types.Part(text=reasoning, thought=True))
        text = delta.get("content")
        if isinstance(text, str) and text:
            aggregator.add_text(text)
            parts.append(types.Part(text=text))
        self._add_tool_fragments(delta.get("tool_calls"))
        if not parts:
            return None
        return LlmResponse(content=types.Content(role="model", parts=parts), partial=True)

    def _add_tool_fragments(self, fragments: Any) -> None:
        if fragments is None:
            return
        if not isinstance(fragments, list):
            raise invalid_response(self.provider, f"tool_calls is not a list: {fragments!r}")
        for position, fragment in enumerate(fragments):
            function: Any = fragment.get("function") if isinstance(fragment, Mapping) else None
            if function is not None and not isinstance(function, Mapping):
                raise invalid_response(self.provider, f"a tool call of unknown shape: {fragment!r}")
            index = fragment.get("index", position)
            if not isinstance(index, int):
                raise invalid_response(self.provider, f"a tool call index {index!r}")
            draft = self.tool_calls.setdefault(index, _ToolCallDraft())
            if fragment.get("id"):
                draft.call_id = fragment["id"]
            function = function or {}
            if isinstance(function.get("name"), str):
                # Servers send the name once; a few repeat it on every fragment.
                draft.name = function["name"] if not draft.name else draft.name
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                draft.arguments.append(arguments)
            elif isinstance(arguments, Mapping):
                draft.arguments.append(json.dumps(arguments))

    def complete(self) -> LlmResponse:
        """The aggregated response: text first, then the reassembled tool calls in order."""
        for index in sorted(self.tool_calls):
            draft = self.tool_calls[index]
            self.aggregator.add_part(
                function_call_part(
                    self.provider, draft.call_id, draft.name, "".join(draft.arguments)
                )
            )
        return self.aggregator.complete()
