"""A plugin that notes, per invocation, each agent's instructions and tool declarations as
its first model request had them (google-adk's request interceptor), so the judges see the
agents as the model saw them."""

from __future__ import annotations

import threading
from typing import Any

from adk_rx.evaluation.intermediate import AgentDetails, AppDetails
from adk_rx.models.llm_request import LlmRequest
from adk_rx.plugins import BasePlugin

__all__ = ["AppDetailsPlugin"]


class AppDetailsPlugin(BasePlugin):
    """Collects :class:`AppDetails` by invocation id; read them with :meth:`details_of`."""

    def __init__(self) -> None:
        super().__init__(name="eval_app_details")
        self._lock = threading.Lock()
        self._seen: dict[str, dict[str, AgentDetails]] = {}

    def before_model_callback(self, *, callback_context: Any, llm_request: LlmRequest) -> Any:
        """Notes the agent's instructions and tools on its first request of the invocation."""
        agents = self._agents(callback_context.invocation_id)
        name = callback_context.agent_name
        with self._lock:
            if name not in agents:
                agents[name] = AgentDetails(
                    name=name,
                    instructions=llm_request.system_instruction_text(),
                    tool_declarations=list(llm_request.config.tools or []),
                )
        return None

    def _agents(self, invocation_id: str) -> dict[str, AgentDetails]:
        with self._lock:
            return self._seen.setdefault(invocation_id, {})

    def details_of(self, invocation_id: str) -> AppDetails | None:
        """The agents seen in that invocation (None when no model was called)."""
        with self._lock:
            agents = self._seen.get(invocation_id)
            return AppDetails(agent_details=dict(agents)) if agents else None
