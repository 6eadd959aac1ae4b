"""The body of a turn: the agent that takes it, and its events through the session writer.

Once the turn is open (``turn.py``), the plugins' ``before_run_callback`` may answer in the
agent's place; otherwise the agent the session's history points to (``routing.py``), or the
one a resumed invocation started with, runs, and each of its events is applied, stored (not a
partial one) and shown to the plugins' ``on_event_callback``, in order, before it is emitted.
"""

from __future__ import annotations

from typing import Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.agents.base import BaseAgent
from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.flows.light_event import CHUNK_EVENT
from adk_rx.live.flow import run_live_agent
from adk_rx.resumability.invocation import resume_from_log
from adk_rx.runner.request import TurnRequest
from adk_rx.runner.routing import agent_to_run
from adk_rx.runner.services import TurnServices
from adk_rx.runner.session_writer import SessionWriter
from adk_rx.rx._engine import sync
from adk_rx.rx._engine.concat_map_direct import concat_map_direct

__all__ = ["agent_events", "before_run_or_agent_events", "turn_agent", "written"]


def before_run_or_agent_events(
    services: TurnServices, request: TurnRequest, ctx: InvocationContext, writer: SessionWriter
) -> Observable[Event]:
    """The turn's events when a plugin has a ``before_run_callback``: its answer (one stored
    event), or, when it answers None, :func:`agent_events`."""

    def run_or_reply(found: list[Any]) -> Observable[Event]:
        if not found:
            return agent_events(services, request, ctx, writer)
        return _reply_instead(ctx, writer, found[0])

    return services.plugins.first("before_run_callback", invocation_context=ctx).pipe(
        ops.to_list(), ops.flat_map(run_or_reply)
    )


def turn_agent(
    services: TurnServices, request: TurnRequest, ctx: InvocationContext, writer: SessionWriter
) -> BaseAgent:
    """The agent that takes the turn (the one a resumed invocation started with)."""
    root = services.app.root_agent
    if request.resume_id is None:
        agent = agent_to_run(root, ctx.session)
    else:
        agent = resume_from_log(ctx, root)
    writer.last_author = agent.name  # a stop before any event
    return agent


def agent_events(
    services: TurnServices,
    request: TurnRequest,
    ctx: InvocationContext,
    writer: SessionWriter,
    agent: BaseAgent | None = None,
) -> Observable[Event]:
    """The events of the agent that takes the turn (``agent``, else :func:`turn_agent`'s),
    each applied, stored (not a partial one) and shown to the plugins' on_event_callback in
    order; then after_run_callback."""
    if agent is None:
        agent = turn_agent(services, request, ctx, writer)
    body = run_live_agent(agent, ctx) if request.live_queue is not None else agent.run_async(ctx)
    return written(services, ctx, writer, body)


def written(
    services: TurnServices, ctx: InvocationContext, writer: SessionWriter, body: Observable[Event]
) -> Observable[Event]:
    """``body``'s events, each applied, stored (not a partial one) and shown to the plugins'
    on_event_callback in order; then after_run_callback."""
    plugins = services.plugins

    def store(event: Event) -> Observable[Event]:
        # Called in order, once the previous event is stored and emitted.
        return sync.just(event) if event.partial else writer.persist(event)

    def store_and_hook(event: Event) -> Observable[Event]:
        return writer.persist_then_hook(event, plugins, ctx)

    hooked = "on_event_callback" in plugins.hooks
    # The operator applied directly: ``Observable.pipe`` costs ten calls per turn.
    events = concat_map_direct(
        store_and_hook if hooked else store,
        on_arrival=writer.apply,
        # An error ends the run only after what the run produced before it is stored and
        # emitted (a budget stop keeps the calls it refused too): a step that ran ahead of a
        # slow store must not drop the events still waiting for their append.
        drain_on=Exception,
        # A streamed chunk's light event (neither applied nor stored), with no plugin to
        # show it to, goes on as a plain call.
        passes=None if hooked else CHUNK_EVENT,
    )(body)
    if "after_run_callback" in plugins.hooks:
        events = events.pipe(
            ops.concat(
                rx.defer(lambda _: plugins.all("after_run_callback", invocation_context=ctx))
            )
        )
    return events


def _reply_instead(
    ctx: InvocationContext, writer: SessionWriter, content: Any
) -> Observable[Event]:
    """A before_run_callback's answer, in place of the agent's run: one model event, stored
    like every emitted event (unlike ADK for Java)."""
    if not isinstance(content, types.Content):
        return rx.throw(ConfigurationError("before_run_callback must return types.Content or None"))
    event = Event(author="model", content=content, invocation_id=ctx.invocation_id)
    ctx.session.mark_applied(event)
    return writer.persist(event)
