"""google-adk 2.13 as the oracle for adk_rx.workflow: the same graph, built by the same code
against either package, run by either Runner, reduced to what a user observes.

A graph is a function of a :class:`Kit` (the package's names, a scripted model factory) that
returns a workflow. :func:`run_both` runs it on google-adk and on adk_rx with the same user
message and returns each side's :class:`Observed`: per event (author, node path, output,
route, error code, text, branch), the final state, the authors of the stored history and the error
the run ended with.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk import workflow as adk_workflow
from google.adk.agents import LlmAgent as AdkLlmAgent
from google.adk.agents.context import Context as AdkContext
from google.adk.models.base_llm import BaseLlm as AdkBaseLlm
from google.adk.models.llm_request import LlmRequest as AdkLlmRequest
from google.adk.models.llm_response import LlmResponse as AdkLlmResponse
from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
from google.genai import types

from adk_rx import InMemoryRunner, LlmAgent
from adk_rx import workflow as rx_workflow
from adk_rx.testing import ScriptedLlm


class AdkScripted(AdkBaseLlm):
    """A google-adk model that answers each call with the next text of its script."""

    script: list[str] = []
    calls: int = 0

    async def generate_content_async(
        self, llm_request: AdkLlmRequest, stream: bool = False
    ) -> AsyncGenerator[AdkLlmResponse, None]:
        text = self.script[self.calls]
        self.calls += 1
        yield AdkLlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


@dataclass
class Kit:
    """The names a graph is built from, from one package."""

    side: str
    Workflow: Any
    FunctionNode: Any
    JoinNode: Any
    Edge: Any
    START: Any
    DEFAULT_ROUTE: Any
    RetryConfig: Any
    node: Any
    Context: Any
    LlmAgent: Any
    model: Callable[[list[str]], Any]


ADK = Kit(
    "google-adk",
    adk_workflow.Workflow,
    adk_workflow.FunctionNode,
    adk_workflow.JoinNode,
    adk_workflow.Edge,
    adk_workflow.START,
    adk_workflow.DEFAULT_ROUTE,
    adk_workflow.RetryConfig,
    adk_workflow.node,
    AdkContext,
    AdkLlmAgent,
    lambda script: AdkScripted(model="scripted", script=list(script)),
)
RX = Kit(
    "adk_rx",
    rx_workflow.Workflow,
    rx_workflow.FunctionNode,
    rx_workflow.JoinNode,
    rx_workflow.Edge,
    rx_workflow.START,
    rx_workflow.DEFAULT_ROUTE,
    rx_workflow.RetryConfig,
    rx_workflow.node,
    rx_workflow.Context,
    LlmAgent,
    lambda script: ScriptedLlm(list(script)),
)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, sort_keys=True))


@dataclass
class Observed:
    """What a user of one package observes of one run."""

    events: list[tuple[Any, ...]] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    history_authors: list[str] = field(default_factory=list)
    error: str | None = None

    def add(self, event: Any) -> None:
        info = event.node_info
        text = "".join(p.text or "" for p in (event.content.parts or ())) if event.content else ""
        self.events.append(
            (
                event.author,
                info.path if info is not None else None,
                _plain(event.output),
                _plain(event.actions.route),
                event.error_code,
                text or None,
                event.branch or None,
            )
        )

    @property
    def outputs(self) -> dict[str, Any]:
        """Node path -> output, for the events that carry one."""
        return {e[1]: e[2] for e in self.events if e[2] is not None}

    @property
    def routes(self) -> list[tuple[str, Any]]:
        """(node path, route) in order."""
        return [(e[1], e[3]) for e in self.events if e[3] is not None]


async def _run_adk(workflow: Any, message: str) -> Observed:
    seen = Observed()
    runner = AdkInMemoryRunner(node=workflow)
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    content = types.Content(role="user", parts=[types.Part(text=message)])
    try:
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=content
        ):
            seen.add(event)
    except Exception as exc:
        seen.error = type(exc).__name__
    stored = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session.id
    )
    assert stored is not None
    seen.state = _plain(dict(stored.state))
    seen.history_authors = [e.author for e in stored.events]
    return seen


def _run_rx(workflow: Any, message: str) -> Observed:
    seen = Observed()
    runner = InMemoryRunner(agent=workflow, app_name="oracle")
    session = runner.session_service.create_session(app_name="oracle", user_id="u").run()
    content = types.Content(role="user", parts=[types.Part(text=message)])
    try:
        for event in runner.run(user_id="u", session_id=session.id, new_message=content):
            seen.add(event)
    except Exception as exc:
        seen.error = type(exc).__name__
    stored = runner.session_service.get_session(
        app_name="oracle", user_id="u", session_id=session.id
    ).run()
    seen.state = _plain(dict(stored.state))
    seen.history_authors = [e.author for e in stored.events]
    return seen


def run_both(graph: Callable[[Kit], Any], message: str = "hi") -> tuple[Observed, Observed]:
    """(google-adk's, adk_rx's) observations of ``graph`` run on ``message``."""
    adk = asyncio.run(_run_adk(graph(ADK), message))
    rx = _run_rx(graph(RX), message)
    return adk, rx
