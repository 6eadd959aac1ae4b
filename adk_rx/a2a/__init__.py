"""Remote agents over A2A: serving adk_rx agents to any A2A client, calling any A2A agent.

Built on the official ``a2a-sdk`` (the ``a2a`` extra), mapping events to A2A messages, tasks
and artifacts as google-adk 2.13 does, so either ADK serves the other.

Serving one task, followed through the modules of this package:

1. ``serve.py``: :func:`to_a2a` (or ``adk-rx api-server --a2a``, which mounts the same parts
   at ``/a2a/{app_name}``) answers JSON-RPC with the SDK's dispatcher and request handler;
   the SDK keeps the tasks, scoped to their owner. ``card.py`` builds the agent card.
2. ``executor.py``: each message becomes a run (``runs.py``, the seam: a Runner for
   :func:`to_a2a`, a server-owned invocation under the server): the A2A context is the
   session, the authenticated caller the user.
3. ``task_events.py``: the run's events become the task's updates (streamed chunks as
   artifact updates, the answer as the task's artifact); ``parts.py`` converts the parts.
4. ``tasks/cancel`` disposes the run; the session stores ``CANCELLED``, the task ends
   ``canceled``.

Calling one remote agent:

5. ``remote_agent.py``: :class:`RemoteA2aAgent` is an agent like any other (root, sub-agent,
   AgentTool child, workflow node). Each turn sends what the session said since the remote
   agent last answered (``history.py``) in the conversation's remote context, through an SDK
   client (``client.py``: the card, one HTTP client per event loop, ``traceparent`` on every
   request, remote errors as :class:`~adk_rx.errors.RemoteAgentError`).
6. ``replies.py``: the remote task's updates become events: chunks as partial events, the
   answer as the one stored event, which keeps the remote context id for the next turn.
7. Disposing the turn (a cancel, a deadline, a parent that gives up) sends ``tasks/cancel``
   and waits for its answer, bounded, so the remote work stops too.
"""

try:
    import a2a.types  # noqa: F401  (the SDK: an optional extra)
except ModuleNotFoundError as exc:  # pragma: no cover - the dev install has it
    raise ModuleNotFoundError(
        'adk_rx.a2a needs the a2a-sdk package: pip install "adk_rx[a2a]"', name=exc.name
    ) from exc

from adk_rx.a2a.card import agent_card
from adk_rx.a2a.executor import A2aAgentExecutor
from adk_rx.a2a.remote_agent import RemoteA2aAgent
from adk_rx.a2a.serve import to_a2a

__all__ = ["A2aAgentExecutor", "RemoteA2aAgent", "agent_card", "to_a2a"]
