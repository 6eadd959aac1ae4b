"""BaseAgent: an immutable node of the agent tree that turns a context into events.

``agent.run_async(ctx)`` is cold. Subscribing runs, in order: the before-agent callbacks
(plugins first; a returned Content replaces the whole run, a state write alone becomes a
state-only event), the agent's ``_run_async_impl``, and the after-agent callbacks (a
returned Content or a state write becomes one more event).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import reactivex as rx
from google.genai import types
from reactivex import Observable, abc
from reactivex import operators as ops

from adk_rx.callbacks import as_callback_list, callback_chain, has_callbacks
from adk_rx.context import CallbackContext, InvocationContext
from adk_rx.errors import CallbackError, InvalidAgentError
from adk_rx.events import Event
from adk_rx.resumability.progress import with_end_of_agent
from adk_rx.rx._engine import sync

if TYPE_CHECKING:
    from adk_rx.callback_types import AfterAgentCallback, BeforeAgentCallback, Callbacks

__all__ = ["AgentBuilder", "BaseAgent"]

A = TypeVar("A", bound="BaseAgent")


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise InvalidAgentError(
            f"invalid agent name {name!r}: an agent name must be a Python identifier "
            "(letters, digits and underscores, not starting with a digit)"
        )
    if name == "user":
        raise InvalidAgentError(
            "an agent cannot be named 'user': the name is reserved for the end user's events"
        )
    return name


class BaseAgent:
    """The root of every agent. Subclasses implement :meth:`_run_async_impl`.

    Args:
        name: a Python identifier, unique in the tree, not ``"user"``.
        description: what the agent does; other agents read it when choosing a transfer.
        sub_agents: child agents; each may have only one parent.
        before_agent_callback: callable or list, ``(callback_context) -> Content | None``.
        after_agent_callback: callable or list, ``(callback_context) -> Content | None``.

    Agents are immutable: assigning an attribute after construction raises.
    """

    # Fields a builder may set, in addition to those of subclasses.
    _list_fields: ClassVar[frozenset[str]] = frozenset({"sub_agents"})
    _frozen: bool

    def __init__(
        self,
        *,
        name: str,
        description: str = "",
        sub_agents: Sequence[BaseAgent] | None = None,
        before_agent_callback: Callbacks[BeforeAgentCallback] = None,
        after_agent_callback: Callbacks[AfterAgentCallback] = None,
    ) -> None:
        self._set("name", _check_name(name))
        self._set("description", description or "")
        self._set("parent_agent", None)
        subs = tuple(sub_agents or ())
        seen: set[str] = set()
        for sub in subs:
            if not isinstance(sub, BaseAgent):
                raise InvalidAgentError(f"sub-agent {sub!r} of {name!r} is not an agent")
            if sub.name in seen:
                raise InvalidAgentError(f"agent {name!r} has two sub-agents named {sub.name!r}")
            if sub.parent_agent is not None:
                raise InvalidAgentError(
                    f"agent {sub.name!r} already has parent {sub.parent_agent.name!r}; "
                    f"it cannot also be a sub-agent of {name!r} (build a second agent instead)"
                )
            seen.add(sub.name)
        for sub in subs:
            sub._set("parent_agent", self)
        self._set("sub_agents", subs)
        self._set("before_agent_callback", as_callback_list(before_agent_callback))
        self._set("after_agent_callback", as_callback_list(after_agent_callback))
        self._set("_frozen", True)

    # -- immutability ------------------------------------------------------------------------
    def _set(self, attr: str, value: Any) -> None:
        object.__setattr__(self, attr, value)

    def __setattr__(self, attr: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(
                f"agents are immutable: cannot set {attr!r} on {self.name!r}; build a new agent"
            )
        object.__setattr__(self, attr, value)

    # -- tree --------------------------------------------------------------------------------
    name: str
    description: str
    parent_agent: BaseAgent | None
    sub_agents: tuple[BaseAgent, ...]
    before_agent_callback: tuple[Callable[..., Any], ...]
    after_agent_callback: tuple[Callable[..., Any], ...]

    @property
    def root_agent(self) -> BaseAgent:
        """The top of the tree this agent belongs to."""
        agent = self
        while agent.parent_agent is not None:
            agent = agent.parent_agent
        return agent

    def may_take_next_turn(self) -> bool:
        """Whether this agent, having spoken last, takes the session's next turn (instead of
        the root). Only LlmAgents that may transfer back up to the root do."""
        return False

    def find_agent(self, name: str) -> BaseAgent | None:
        """This agent or the first descendant (depth first) with that name."""
        if self.name == name:
            return self
        return self.find_sub_agent(name)

    def find_sub_agent(self, name: str) -> BaseAgent | None:
        """The first descendant (depth first) with that name."""
        for sub in self.sub_agents:
            found = sub.find_agent(name)
            if found is not None:
                return found
        return None

    # -- running -----------------------------------------------------------------------------
    def run_async(self, parent_context: InvocationContext) -> Observable[Event]:
        """Runs the agent; a cold Observable of its events."""

        def subscribe(
            observer: abc.ObserverBase[Event], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            ctx = self._own_context(parent_context)
            build = self._run_resumable if ctx.services.is_resumable else self._run_with_callbacks
            if ctx.trace is not None:  # an invoke_agent span around the run
                return ctx.trace.run_agent(self, ctx, build, observer, scheduler)
            # A defer whose observer is already guarded by this Observable's subscribe.
            return sync.forward(build(ctx), observer, scheduler)

        return Observable(subscribe)

    def _own_context(self, parent_context: InvocationContext) -> InvocationContext:
        """The context this agent runs in: the parent's, on the agent's own branch."""
        branch = parent_context.branch
        call = parent_context.node_call
        if branch and (call is None or call.agent is not self):
            branch = f"{branch}.{self.name}"  # a workflow node keeps the node's branch
        ctx = parent_context.copy()
        ctx.agent = self  # (set here, not as copy's keyword arguments: a setattr call each)
        ctx.branch = branch
        return ctx

    def _run_resumable(self, ctx: InvocationContext) -> Observable[Event]:
        """A resumable app's run: skipped when it had finished, else ends with end_of_agent."""
        if ctx.resume is not None and ctx.resume.take_ended(self.name):
            return sync.empty()
        return with_end_of_agent(self, ctx, self._run_with_callbacks(ctx))

    def _run_async_impl(self, ctx: InvocationContext) -> Observable[Event]:
        """The agent's own behaviour; subclasses return a cold Observable of events."""
        raise NotImplementedError(f"{type(self).__name__} must implement _run_async_impl")

    def _run_with_callbacks(self, ctx: InvocationContext) -> Observable[Event]:
        plugins = ctx.services.plugins
        has_before = has_callbacks(plugins, "before_agent_callback", self.before_agent_callback)
        has_after = has_callbacks(plugins, "after_agent_callback", self.after_agent_callback)
        if not has_before and not has_after:
            return self._run_async_impl(ctx)  # run_async already defers: called at subscribe
        main = rx.defer(lambda _: self._run_async_impl(ctx))
        if has_after:
            main = main.pipe(ops.concat(rx.defer(lambda _: self._agent_callbacks(ctx, "after"))))
        if not has_before:
            return main
        return self._agent_callbacks(ctx, "before", main)

    def _agent_callbacks(
        self, ctx: InvocationContext, which: str, then: Observable[Event] | None = None
    ) -> Observable[Event]:
        """Runs before/after callbacks; emits their event (if any), then ``then``."""
        cc = CallbackContext(ctx)
        hook = f"{which}_agent_callback"

        def decide(content: Any) -> Observable[Event]:
            if content is not None:
                if not isinstance(content, types.Content):
                    raise CallbackError(
                        f"{hook} of agent {self.name!r} must return types.Content or None, "
                        f"got {type(content).__name__}"
                    )
                if which == "before":
                    ctx.end_invocation = True
                return sync.just(self._callback_event(ctx, cc, content))
            state_only = (
                sync.just(self._callback_event(ctx, cc, None))
                if cc.state.has_delta() or cc.actions.artifact_delta
                else sync.empty()
            )
            return state_only if then is None else state_only.pipe(ops.concat(then))

        chain = callback_chain(
            ctx.services.plugins, hook, getattr(self, hook), (cc,), agent=self, callback_context=cc
        )
        return chain.pipe(ops.default_if_empty(None), ops.flat_map(decide))

    def _callback_event(
        self, ctx: InvocationContext, cc: CallbackContext, content: types.Content | None
    ) -> Event:
        return Event(
            author=self.name,
            content=content,
            invocation_id=ctx.invocation_id,
            branch=ctx.branch,
            actions=cc.actions.freeze(),
        )

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def builder(cls: type[A]) -> AgentBuilder[A]:
        """A fluent builder: ``Agent.builder().name("x").sub_agents(a, b).build()``."""
        return AgentBuilder(cls)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class AgentBuilder(Generic[A]):
    """Collects constructor arguments through methods named after the fields."""

    def __init__(self, cls: type[A]) -> None:
        self._cls = cls
        self._kwargs: dict[str, Any] = {}
        params: dict[str, inspect.Parameter] = {}
        for klass in reversed(cls.__mro__):
            init = klass.__dict__.get("__init__")
            if init is not None and klass is not object:
                params.update(inspect.signature(init).parameters)
        self._fields = {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
        self._lists: frozenset[str] = frozenset().union(
            *(getattr(k, "_list_fields", frozenset()) for k in cls.__mro__)
        )

    def __getattr__(self, field: str) -> Callable[..., AgentBuilder[A]]:
        if field.startswith("_") or field not in self._fields:
            raise AttributeError(
                f"{self._cls.__name__}.builder() has no field {field!r}; "
                f"fields: {', '.join(sorted(self._fields))}"
            )

        def setter(*values: Any) -> AgentBuilder[A]:
            if field in self._lists or field.endswith("_callback"):
                items: list[Any] = []
                for v in values:
                    if isinstance(v, list | tuple):
                        items.extend(v)
                    else:
                        items.append(v)
                previous = self._kwargs.get(field, [])
                self._kwargs[field] = [*previous, *items]
            else:
                if len(values) != 1:
                    raise TypeError(f"{field}() takes one value, got {len(values)}")
                self._kwargs[field] = values[0]
            return self

        return setter

    def build(self) -> A:
        """Builds the immutable agent."""
        return self._cls(**self._kwargs)
