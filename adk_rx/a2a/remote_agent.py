"""RemoteA2aAgent: an agent whose turns run on a remote A2A server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from a2a.types import AgentCard, Message, Role, SendMessageRequest
from reactivex import Observable

from adk_rx.a2a.client import RemoteConnection, translate
from adk_rx.a2a.history import outgoing
from adk_rx.a2a.parts import to_a2a_part
from adk_rx.a2a.replies import Replies
from adk_rx.a2a.task_stream import TaskStream
from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.rx import from_async

if TYPE_CHECKING:
    from adk_rx.callback_types import AfterAgentCallback, BeforeAgentCallback, Callbacks

__all__ = ["RemoteA2aAgent"]


class RemoteA2aAgent(BaseAgent):
    """An agent served elsewhere over A2A, used like any other agent of the tree.

    Each turn sends what the session said since the remote agent last answered, in the
    conversation's remote context (kept in the stored answer's ``custom_metadata``), and
    streams the remote task: its chunks are partial events, its answer the one stored event.
    Disposing the turn (a cancel, a deadline, a parent that stops) sends ``tasks/cancel``
    for the remote task and waits for the answer, at most ``cancel_timeout`` seconds.

    Args:
        name: the agent's name in this tree.
        agent_card: the remote agent's card: its URL (the server's base URL, or the card's
            own ``.../agent-card.json`` URL), a path to a card file, or an ``AgentCard``.
        description: what the agent does, for transfers; default the card's description
            once it has been read (an empty one until then).
        cancel_timeout: seconds a disposed turn waits for the remote cancel's answer.
        before_agent_callback, after_agent_callback: as for every agent.

    Errors of the remote side end the turn with :class:`~adk_rx.errors.RemoteAgentError`:
    :class:`~adk_rx.errors.RemoteAgentUnavailableError` when the card or endpoint cannot be
    reached, :class:`~adk_rx.errors.RemoteTaskFailedError` when the task fails.
    """

    agent_card: str | AgentCard
    cancel_timeout: float
    _connection: RemoteConnection

    def __init__(
        self,
        *,
        name: str,
        agent_card: str | AgentCard,
        description: str | None = None,
        cancel_timeout: float = 5.0,
        before_agent_callback: Callbacks[BeforeAgentCallback] = None,
        after_agent_callback: Callbacks[AfterAgentCallback] = None,
    ) -> None:
        if not isinstance(agent_card, str | AgentCard) or not agent_card:
            raise ConfigurationError(
                f"agent_card of {name!r} must be a URL, a card file's path or an AgentCard, "
                f"got {agent_card!r}"
            )
        if isinstance(agent_card, AgentCard) and description is None:
            description = agent_card.description
        super().__init__(
            name=name,
            description=description or "",
            before_agent_callback=before_agent_callback,
            after_agent_callback=after_agent_callback,
        )
        self._set("agent_card", agent_card)
        self._set("cancel_timeout", cancel_timeout)
        self._set("_connection", RemoteConnection(name, agent_card))

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        return from_async(lambda: self._turn(ctx))

    async def _turn(self, ctx: InvocationContext) -> AsyncIterator[Event]:
        parts, context_id = outgoing(ctx, self.name)
        if not parts:
            return  # nothing new was said: the remote agent has nothing to answer
        connection = self._connection
        try:
            client = await connection.client()
        except Exception as exc:
            raise translate(exc, self.name) from exc
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=[p for p in (to_a2a_part(part) for part in parts) if p is not None],
            context_id=context_id or "",
        )
        replies = Replies(self.name, ctx)
        stream = TaskStream(client.send_message(SendMessageRequest(message=message)))
        read_all = False
        try:
            async for item in stream:
                event = replies.read(item)
                if event is not None:
                    yield event
            read_all = True
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            raise translate(exc, self.name) from exc
        finally:
            if not (read_all and replies.ended):
                # Given up (or cut off) before the remote task ended: stop it there too.
                await asyncio.shield(self._cancel_remote(stream, replies))
            await stream.close()
        yield replies.final()

    async def _cancel_remote(self, stream: TaskStream, replies: Replies) -> None:
        task_id = await stream.task_id_within(self.cancel_timeout)
        if task_id and not replies.ended:
            await self._connection.cancel(task_id, self.cancel_timeout)
