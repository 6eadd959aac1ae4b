"""The model seam: one method, ``generate_content``, returning a cold Observable.

``connect`` is the optional second seam, for live (bidirectional) sessions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from reactivex import Observable

from adk_rx.errors import ConfigurationError
from adk_rx.models.llm_request import LlmRequest
from adk_rx.models.llm_response import LlmResponse

if TYPE_CHECKING:
    from adk_rx.models.live import BaseLlmConnection

__all__ = ["BaseLlm"]


class BaseLlm(ABC):
    """A model. Subclasses implement :meth:`generate_content` and nothing else.

    Construct as ``MyLlm(model="name")``.

    Attributes:
        model: the model name sent to the provider.
    """

    def __init__(self, model: str = "", **_: Any) -> None:
        self.model = model

    @abstractmethod
    def generate_content(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> Observable[LlmResponse]:
        """Calls the model; cold (nothing happens before subscription).

        Without ``stream``: exactly one response. With ``stream``: ``partial=True`` chunks as
        they arrive, then one aggregated complete response. Disposing the subscription must
        stop the call (cancel the task, close the HTTP response).

        A model that has its answer at once (a script, a cache) emits it while subscribed
        (``rx.just``, ``rx.of``, ``rx.create`` calling ``on_next`` at once): the run then
        goes on as plain calls on the subscribing thread, with no hand-off.
        """

    def connect(self, llm_request: LlmRequest) -> BaseLlmConnection:
        """Opens a live, bidirectional connection for ``llm_request`` (``Runner.run_live``).

        The request carries the system instruction, tools and config; the history is sent
        with ``send_history``. Models without a live API keep this default, which raises.

        Raises:
            ConfigurationError: this model has no live connection.
        """
        raise ConfigurationError(
            f"model {self.model!r} ({type(self).__name__}) has no live connection; run_live "
            "needs a model that implements connect() (GeminiLlm, ScriptedLiveLlm)"
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"
