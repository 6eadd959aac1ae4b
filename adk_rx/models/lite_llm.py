"""LiteLlm: any model LiteLLM reaches (the ``litellm`` extra), as google-adk has it.

``LiteLlm(model="anthropic/claude-3-haiku", **kwargs)``: the keyword arguments go to
``litellm.acompletion`` with every call (``api_base``, ``api_key``, ``drop_params``, ...).
Messages are built as for OpenAI-compatible servers (:mod:`adk_rx.models.openai_messages`),
which is the format LiteLLM takes, and answers are read the same way; streamed chunks go
through the same reassembly of tool-call fragments. Each call runs as a task on the runtime
loop, so disposing the subscription cancels it and closes LiteLLM's stream; failures are
translated once into ``ModelError`` and retried by :func:`retrying`.

Importing LiteLLM takes seconds and, by default, loads a ``.env`` file and fetches a price
list from the network. The first call imports it off the event loop, with
``LITELLM_MODE=PRODUCTION`` and ``LITELLM_LOCAL_MODEL_COST_MAP=True`` unless they are set.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Callable
from types import ModuleType
from typing import Any

from reactivex import abc

from adk_rx.errors import AdkRxError, ConfigurationError
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.models.openai_compat import CompletionStream
from adk_rx.models.openai_messages import body_from_request, response_from_completion
from adk_rx.models.provider_errors import TRANSPORT_ERRORS, http_status_error, transport_error
from adk_rx.models.provider_llm import ProviderLlm
from adk_rx.models.resilience import DEFAULT_RETRY, RetryNotice, RetryPolicy
from adk_rx.models.safety import check_real_call

__all__ = ["LiteLlm"]

_import_lock = threading.Lock()

# Arguments the request itself decides.
_OWN_ARGUMENTS = frozenset({"model", "messages", "tools", "stream", "stream_options"})


def _import_litellm() -> ModuleType:
    with _import_lock:
        os.environ.setdefault("LITELLM_MODE", "PRODUCTION")  # no .env loaded behind our back
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch at import
        try:
            import litellm
        except ImportError as exc:
            raise ConfigurationError(
                "LiteLlm needs the litellm package: pip install 'adk_rx[litellm]'"
            ) from exc
        return litellm


class LiteLlm(ProviderLlm):
    """A model called through LiteLLM.

    Args:
        model: LiteLLM's model name, ``provider/model`` (``"ollama_chat/llama3.2"``).
        retry: the retry policy; ``None`` turns retries off (one attempt per call).
        scheduler: where backoff timers run (default: the shared timer scheduler).
        on_retry: called before each retry.
        **kwargs: passed to ``litellm.acompletion`` on every call (``api_base``,
            ``api_key``, ``timeout``, ``drop_params``, ...); ``messages``, ``tools`` and
            ``stream`` are the request's own and are ignored here. LiteLLM's own retries
            stay off (``num_retries=0``) unless set.
    """

    def __init__(
        self,
        model: str,
        *,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        scheduler: abc.SchedulerBase | None = None,
        on_retry: Callable[[RetryNotice], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model=model, retry=retry, scheduler=scheduler, on_retry=on_retry)
        self.additional_args = {k: v for k, v in kwargs.items() if k not in _OWN_ARGUMENTS}
        self.additional_args.setdefault("num_retries", 0)

    def _arguments(self, llm_request: LlmRequest, stream: bool) -> dict[str, Any]:
        base_url = self.additional_args.get("api_base") or self.additional_args.get("base_url")
        # No base URL: LiteLLM picks the provider's hosted endpoint.
        check_real_call(base_url, provider=self.provider)
        return {**body_from_request(llm_request, self.model, stream=stream), **self.additional_args}

    async def _complete(self, llm_request: LlmRequest) -> LlmResponse:
        arguments = self._arguments(llm_request, stream=False)
        litellm = await asyncio.to_thread(_import_litellm)
        try:
            response = await litellm.acompletion(**arguments)
        except Exception as exc:
            raise self._translate(litellm, exc) from exc
        return response_from_completion(self.provider, response.model_dump())

    async def _stream(self, llm_request: LlmRequest) -> AsyncIterator[LlmResponse]:
        arguments = self._arguments(llm_request, stream=True)
        litellm = await asyncio.to_thread(_import_litellm)
        state = CompletionStream(self.provider)
        try:
            chunks = await litellm.acompletion(**arguments)
            try:
                async for chunk in chunks:
                    partial = state.add(chunk.model_dump())
                    if partial is not None:
                        yield partial
            finally:
                await chunks.aclose()  # closes the provider's HTTP response, on cancel too
        except Exception as exc:
            raise self._translate(litellm, exc) from exc
        yield state.complete()

    def _translate(self, litellm: ModuleType, exc: Exception) -> Exception:
        """The one place where LiteLLM's errors become ModelError."""
        if isinstance(exc, AdkRxError):
            return exc
        if isinstance(exc, (litellm.Timeout, litellm.APIConnectionError, *TRANSPORT_ERRORS)):
            return transport_error(self.provider, exc)
        status = getattr(exc, "status_code", None)
        if isinstance(status, int) and status >= 400:
            message = getattr(exc, "message", None) or str(exc)
            return http_status_error(self.provider, status, str(message))
        return exc
