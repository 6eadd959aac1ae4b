"""The calling side's connection to one remote agent: its card, its SDK client, its errors.

One ``httpx.AsyncClient`` per event loop (a client belongs to the loop it was made on, and
making one costs milliseconds: every turn reuses it), whose request hook puts the current
trace's ``traceparent`` on every request, so the remote run joins the caller's trace. Errors
of the SDK or of the transport are translated here, once, into
:class:`~adk_rx.errors.RemoteAgentError` and its subclasses.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from pathlib import Path

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.client.errors import A2AClientError, A2AClientTimeoutError
from a2a.types import AgentCard, CancelTaskRequest
from a2a.utils.errors import A2AError
from opentelemetry import propagate

from adk_rx.errors import RemoteAgentError, RemoteAgentUnavailableError

__all__ = ["RemoteConnection", "translate"]

CARD_PATH = "/.well-known/agent-card.json"
_TIMEOUT = httpx.Timeout(30.0, read=None)  # a turn reads as long as the run goes on
_TRANSPORT_ERRORS = ("Network communication error", "HTTP Error", "Client Request timed out")


async def _traceparent(request: httpx.Request) -> None:
    # Runs in the task that sends, whose context holds the agent's span.
    propagate.inject(request.headers)


def _new_http() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=_TIMEOUT, event_hooks={"request": [_traceparent]})


def translate(error: BaseException, agent: str) -> RemoteAgentError:
    """The adk_rx error for what the SDK or httpx raised while talking to ``agent``."""
    if isinstance(error, RemoteAgentError):
        return error
    if isinstance(error, httpx.HTTPError | A2AClientTimeoutError | OSError):
        return RemoteAgentUnavailableError(
            f"remote agent {agent!r} is unreachable: {error}", agent=agent
        )
    if isinstance(error, A2AClientError) and str(error).startswith(_TRANSPORT_ERRORS):
        return RemoteAgentUnavailableError(
            f"remote agent {agent!r} is unreachable: {error}", agent=agent
        )
    if isinstance(error, A2AError):
        kind = type(error).__name__
        return RemoteAgentError(f"remote agent {agent!r} answered {kind}: {error}", agent=agent)
    return RemoteAgentError(f"remote agent {agent!r}: {type(error).__name__}: {error}", agent=agent)


def _card_url(where: str) -> str:
    return where if where.rstrip("/").endswith(".json") else where.rstrip("/") + CARD_PATH


class RemoteConnection:
    """The card and clients of one remote agent (``agent_card``: URL, file path or card)."""

    def __init__(self, agent: str, agent_card: str | AgentCard) -> None:
        self.agent = agent
        self._source = agent_card
        self._card: AgentCard | None = agent_card if isinstance(agent_card, AgentCard) else None
        self._loops: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx.AsyncClient, Client | None]
        ] = weakref.WeakKeyDictionary()

    def _http(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        found = self._loops.get(loop)
        if found is None:
            found = (_new_http(), None)
            self._loops[loop] = found
        return found[0]

    async def card(self) -> AgentCard:
        """The remote agent's card, fetched once."""
        if self._card is not None:
            return self._card
        source = self._source
        assert isinstance(source, str)
        try:
            if source.startswith(("http://", "https://")):
                response = await self._http().get(_card_url(source))
                response.raise_for_status()
                raw = response.text
            else:
                raw = Path(source).read_text(encoding="utf-8")
        except (httpx.HTTPError, OSError) as exc:
            raise RemoteAgentUnavailableError(
                f"the agent card of remote agent {self.agent!r} could not be read from "
                f"{source!r}: {exc}",
                agent=self.agent,
            ) from exc
        try:
            self._card = parse_agent_card(json.loads(raw))
        except Exception as exc:  # the SDK's parse errors are of several kinds
            raise RemoteAgentError(
                f"{source!r} holds no valid agent card for remote agent {self.agent!r}: "
                f"{type(exc).__name__}: {exc}",
                agent=self.agent,
            ) from exc
        return self._card

    async def client(self) -> Client:
        """The SDK client for this loop (streaming when the card says the agent streams)."""
        card = await self.card()
        loop = asyncio.get_running_loop()
        http = self._http()
        _, client = self._loops[loop]
        if client is None:
            config = ClientConfig(
                streaming=True, httpx_client=http, supported_protocol_bindings=["JSONRPC"]
            )
            try:
                client = ClientFactory(config).create(card)
            except ValueError as exc:
                raise RemoteAgentError(
                    f"remote agent {self.agent!r} offers no JSON-RPC interface: {exc}",
                    agent=self.agent,
                ) from exc
            self._loops[loop] = (http, client)
        return client

    async def cancel(self, task_id: str, timeout: float) -> bool:
        """Asks the remote agent to cancel ``task_id``; waits at most ``timeout`` seconds.
        True when it answered (whatever the task's state), False otherwise."""
        client = await self.client()
        try:
            await asyncio.wait_for(client.cancel_task(CancelTaskRequest(id=task_id)), timeout)
        except (TimeoutError, A2AError, httpx.HTTPError, OSError):
            return False
        return True
