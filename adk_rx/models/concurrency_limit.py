"""ConcurrencyLimitedLlm: at most N calls of one model in flight in the process, the rest in line.

Beside the rate limiter (calls per minute), a bulkhead bounds how many calls are open at once,
whatever their pace: a provider's concurrent-request quota, a local model server with few
slots. Every call takes a permit of one :class:`~adk_rx.rx.Bulkhead` when it starts and gives
it back when its response stream ends, fails or is disposed; the others wait first come, first
served, holding no thread. ::

    max_concurrent=1
    calls:     a  b
    a:         --a1--a2--|
    b:         ..........--b1--|     (b's call starts when a's stream ends)

By default every wrapper of one model name shares one bulkhead in the process, so all runs,
agents and wrappers calling that model count against the same limit.
"""

from __future__ import annotations

import threading

from reactivex import Observable
from reactivex import defer as rx_defer

from adk_rx.errors import ConfigurationError
from adk_rx.models.base import BaseLlm
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse
from adk_rx.rx import Bulkhead

__all__ = ["ConcurrencyLimitedLlm", "shared_bulkhead"]

_SHARED: dict[str, Bulkhead] = {}
_SHARED_LOCK = threading.Lock()


def shared_bulkhead(model: str, max_concurrent: int, max_waiting: int | None = None) -> Bulkhead:
    """The process-wide bulkhead of ``model`` (created with these limits on first use).

    Raises:
        ConfigurationError: the model's bulkhead exists with other limits.
    """
    with _SHARED_LOCK:
        bulkhead = _SHARED.get(model)
        if bulkhead is None:
            bulkhead = _SHARED[model] = Bulkhead(max_concurrent, max_waiting)
        elif (bulkhead.max_concurrent, bulkhead.max_waiting) != (max_concurrent, max_waiting):
            raise ConfigurationError(
                f"model {model!r} is already limited to {bulkhead.max_concurrent} concurrent "
                f"calls ({bulkhead.max_waiting} waiting); pass bulkhead=Bulkhead(...) to give "
                "this wrapper a limit of its own"
            )
        return bulkhead


class ConcurrencyLimitedLlm(BaseLlm):
    """Wraps a model so at most ``max_concurrent`` of its calls are open at once.

    Args:
        inner: the model to limit; this model reports its name.
        max_concurrent: calls in flight at most.
        max_waiting: calls that may wait for a permit; one more fails at once with
            BulkheadFullError (None: any number wait).
        bulkhead: the limit to share; default the process-wide one of ``inner.model``
            (:func:`shared_bulkhead`).
    """

    def __init__(
        self,
        inner: BaseLlm,
        max_concurrent: int = 1,
        max_waiting: int | None = None,
        *,
        bulkhead: Bulkhead | None = None,
    ) -> None:
        super().__init__(model=inner.model)
        self.inner = inner
        self.bulkhead = bulkhead or shared_bulkhead(inner.model, max_concurrent, max_waiting)

    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Waits for a permit (first come, first served), then calls the inner model."""
        inner = self.inner
        call = rx_defer(lambda _: inner.generate_content(llm_request, stream))
        return call.pipe(self.bulkhead)
