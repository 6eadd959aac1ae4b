"""The body of a turn: the agent that takes it, and its events through the session writer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import reactivex as rx
from google.genai import types
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.context import InvocationContext
from adk_rx.errors import ConfigurationError
from adk_rx.events import Event
from adk_rx.live.flow import run_live_agent
from adk_rx.resumability.invocation import resume_from_log
from adk_rx.runner.routing import agent_to_run
from adk_rx.runner.session_writer import SessionWriter
from adk_rx.rx._engine.concat_map_direct import concat_map_direct

if TYPE_CHECKING:
    from adk_rx.runner.runner import Runner

__all__ = ["agent_events", "reply_instead"]


def agent_events(
    runner: Runner,
    ctx: InvocationContext,
    writer: SessionWriter,
    *,
    resume_id: str | None,
    live: bool,
) -> Observable[Event]:
    """The events of the agent that takes the turn, each applied, stored (not a partial one)
    and shown to the plugins' on_event_callback in order; then after_run_callback."""
    if resume_id is None:
        agent = agent_to_run(runner.agent, ctx.session)
    else:
        agent = resume_from_log(ctx, runner.agent)
    writer.open_calls.last_author = agent.name  # a stop before any event
    plugins = runner.plugin_manager
    body = run_live_agent(agent, ctx) if live else agent.run_async(ctx)

    def store(event: Event) -> Observable[Event] | tuple[Event, ...]:
        # Called in order, once the previous event is stored and emitted.
        return (event,) if event.partial else writer.persist_now(event)

    def store_and_hook(event: Event) -> Observable[Event]:
        return writer.persist_then_hook(event, plugins, ctx)

    events = body.pipe(
        concat_map_direct(
            store_and_hook if plugins.has("on_event_callback") else store,
            on_arrival=writer.apply,
        )
    )
    if plugins.has("after_run_callback"):
        events = events.pipe(
            ops.concat(
                rx.defer(lambda _: plugins.all("after_run_callback", invocation_context=ctx))
            )
        )
    return events


def reply_instead(ctx: InvocationContext, writer: SessionWriter, content: Any) -> Observable[Event]:
    """A before_run_callback's answer, in place of the agent's run: one model event, stored
    like every emitted event (unlike ADK for Java)."""
    if not isinstance(content, types.Content):
        return rx.throw(ConfigurationError("before_run_callback must return types.Content or None"))
    event = Event(author="model", content=content, invocation_id=ctx.invocation_id)
    ctx.session.mark_applied(event)
    return writer.persist(event)
