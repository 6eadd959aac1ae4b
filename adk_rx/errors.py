"""The one error tree of adk_rx.

Every error adk_rx raises or signals through ``on_error`` is an :class:`AdkRxError`.
Misuse (fix your code), run failures (something went wrong while running) and
control flow (a run was cancelled or ran out of budget) are kept apart::

    AdkRxError
    ├── ConfigurationError          misuse found at construction or call time (also ValueError)
    │   ├── InvalidAgentError       bad agent name, second parent, duplicate sub-agent / tool
    │   ├── UnknownModelError       no LlmRegistry pattern matches a model name
    │   ├── MissingCredentialsError a provider needs an API key that is not set
    │   ├── SessionExistsError      create_session with an id that is taken
    │   ├── StateValueError         a state key that is not a string, a value no store can keep
    │   ├── GraphValidationError    a workflow graph that cannot run (unreachable node, cycle...)
    │   ├── AgentLoadError          an agent folder or module has no usable ``root_agent``
    │   └── SandboxUnavailableError a code sandbox asked for isolation this OS does not allow
    ├── SessionNotFoundError        no such session (and auto_create_session is off); LookupError
    ├── InvocationNotFoundError     resuming an invocation the session does not hold; LookupError
    ├── RunError                    a failure while an invocation runs
    │   ├── ModelError              the model call failed (status, message); vendor errors end here
    │   │   ├── ReplayMismatchError a replayed model got a request it did not record
    │   │   └── CircuitOpenError    a circuit breaker fails the call at once: the model kept failing
    │   ├── CallbackError           a user callback or plugin hook raised
    │   ├── InstructionError        an instruction template names a missing state key
    │   ├── AgentNotFoundError      transfer to an agent that is not in the tree
    │   ├── ToolArgumentsError      the model's arguments do not fit a tool's parameters
    │   ├── ToolResultError         a tool returned a value JSON cannot hold
    │   ├── McpConnectionError      an MCP server was unreachable, did not start or list its tools
    │   ├── CredentialError         a token request failed (wrong code, revoked refresh token)
    │   ├── StoreError              a session / artifact / memory store failed
    │   │   └── StoreBusyError      the store has no connection to spare now; try again (503)
    │   ├── OutputSchemaError       the final answer did not fit output_schema, even after a repair
    │   ├── NodeTimeoutError        a workflow node ran past its timeout (also TimeoutError)
    │   ├── RemoteAgentError        a remote A2A agent answered with an error, or not as A2A
    │   │   ├── RemoteAgentUnavailableError its card or endpoint could not be reached
    │   │   └── RemoteTaskFailedError the remote task ended failed, rejected or cancelled
    │   ├── BackpressureError       a bounded hand-off overflowed (strategy "error")
    │   └── BulkheadFullError       a bulkhead's permits and waiting places were all taken
    └── StopError                   the run was stopped on purpose
        ├── InvocationCancelledError the subscription was disposed
        ├── InvocationTimeoutError  RunConfig.timeout expired (also TimeoutError)
        ├── BudgetExceededError     a RunConfig budget (calls, tool calls, tokens, cost) ran out
        │   └── LlmCallsLimitExceededError RunConfig.max_llm_calls was reached
        └── RunnerClosedError       the Runner was closed: it starts no new run
    ServerError (also under AdkRxError) a request the API server refuses
    ├── BrokerUnavailableError      the servers' shared Redis does not answer (503)
    ├── AppNotFoundError            no app of that name in the agents folder (404; LookupError)
    ├── SessionBusyError            the session already has a run in this process (409)
    └── TooManyRunsError            the server's limit of running invocations is reached (429)

Vendor exceptions are translated once, at the seam where they enter (``raise ... from exc``).
"""

from __future__ import annotations

__all__ = [
    "AdkRxError",
    "AgentLoadError",
    "AgentNotFoundError",
    "AppNotFoundError",
    "BackpressureError",
    "BrokerUnavailableError",
    "BudgetExceededError",
    "BulkheadFullError",
    "CallbackError",
    "CircuitOpenError",
    "ConfigurationError",
    "CredentialError",
    "GraphValidationError",
    "InstructionError",
    "InvalidAgentError",
    "InvocationCancelledError",
    "InvocationNotFoundError",
    "InvocationTimeoutError",
    "LlmCallsLimitExceededError",
    "McpConnectionError",
    "MissingCredentialsError",
    "ModelError",
    "NodeTimeoutError",
    "OutputSchemaError",
    "RemoteAgentError",
    "RemoteAgentUnavailableError",
    "RemoteTaskFailedError",
    "ReplayMismatchError",
    "RunError",
    "RunnerClosedError",
    "SandboxUnavailableError",
    "ServerError",
    "SessionBusyError",
    "SessionExistsError",
    "SessionNotFoundError",
    "StateValueError",
    "StopError",
    "StoreBusyError",
    "StoreError",
    "TooManyRunsError",
    "ToolArgumentsError",
    "ToolResultError",
    "UnknownModelError",
]


class AdkRxError(Exception):
    """Root of every error adk_rx raises."""


class ConfigurationError(AdkRxError, ValueError):
    """The caller used adk_rx wrongly; the message says what to change."""


class InvalidAgentError(ConfigurationError):
    """An agent tree cannot be built as given (name, parent, duplicate)."""


class UnknownModelError(ConfigurationError):
    """No registered pattern matches the model name."""


class MissingCredentialsError(ConfigurationError):
    """A model provider needs a credential that is not configured."""


class SessionExistsError(ConfigurationError):
    """A session with that id already exists for this app and user."""


class StateValueError(ConfigurationError, TypeError):
    """A state write that no store could keep: a non-string key or a value JSON cannot hold."""

    def __init__(self, key: object, problem: str, writer: str | None = None) -> None:
        by = f" (written by {writer})" if writer else ""
        super().__init__(f"state key {key!r}{by} {problem}")
        self.key, self.problem, self.writer = key, problem, writer

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.key, self.problem, self.writer))


class AgentLoadError(ConfigurationError):
    """An agent target could not be found, imported, or exposes no ``root_agent``."""


class SandboxUnavailableError(ConfigurationError):
    """A code sandbox was asked for an isolation (no network) that this machine cannot give."""


class GraphValidationError(ConfigurationError):
    """A workflow graph that cannot run: an unreachable node, an unconditional cycle, two
    nodes of one name, a route on an edge from START."""


class SessionNotFoundError(AdkRxError, LookupError):
    """The session does not exist for this app and user."""


class InvocationNotFoundError(AdkRxError, LookupError):
    """The session holds no invocation with that id (nothing to resume)."""


class RunError(AdkRxError):
    """Something failed while an invocation was running."""


class ModelError(RunError):
    """A model call failed.

    Attributes:
        status: the provider's HTTP status or error code, when there is one.
        retryable: whether trying again may succeed (rate limits, 5xx, lost connections).
    """

    def __init__(
        self, message: str, *, status: int | str | None = None, retryable: bool = False
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ReplayMismatchError(ModelError):
    """A replayed model received a request that the recording does not hold."""


class CircuitOpenError(ModelError):
    """A circuit breaker refused the call without trying: the model failed too often in a
    row and its cooldown has not passed (see ``adk_rx.models.CircuitBreakerLlm``)."""


class CallbackError(RunError):
    """A callback or plugin hook raised; the original exception is ``__cause__``."""


class InstructionError(RunError):
    """An instruction template could not be filled from the session state."""


class AgentNotFoundError(RunError):
    """A transfer named an agent that is not in the agent tree."""


class ToolArgumentsError(RunError):
    """The model's arguments do not fit the tool's parameters; the message names them."""


class ToolResultError(RunError):
    """A tool returned a value that cannot be sent to the model as JSON."""


class McpConnectionError(RunError):
    """An MCP server could not be reached or initialised, or did not list its tools."""


class CredentialError(RunError):
    """A token request failed: a wrong or used code, a revoked refresh token, no endpoint."""


class StoreError(RunError):
    """A session, artifact or memory store failed; nothing half-written was kept."""


class OutputSchemaError(RunError):
    """The agent's final answer did not validate against its output_schema after one repair."""


class NodeTimeoutError(RunError, TimeoutError):
    """A workflow node ran past its ``timeout``; it was cancelled (a retry may run it again).

    Attributes:
        node_name: the node that timed out.
        timeout: its timeout, in seconds.
    """

    def __init__(self, *, node_name: str, timeout: float) -> None:
        self.node_name = node_name
        self.timeout = timeout
        super().__init__(f"Node '{node_name}' timed out after {timeout} seconds.")


class RemoteAgentError(RunError):
    """A remote agent (``adk_rx.a2a.RemoteA2aAgent``) failed: its server answered with an
    A2A error or with something that is not A2A. ``agent`` names the local agent."""

    def __init__(self, message: str, *, agent: str = "") -> None:
        super().__init__(message)
        self.agent = agent


class RemoteAgentUnavailableError(RemoteAgentError):
    """The remote agent's card or endpoint could not be reached (connection, HTTP status,
    timeout); nothing ran there, or nothing more can be known about it."""


class RemoteTaskFailedError(RemoteAgentError):
    """The remote task ended without an answer: ``state`` is ``"failed"``, ``"rejected"`` or
    ``"cancelled"``, and the message holds what the remote server said."""

    def __init__(self, message: str, *, agent: str = "", state: str = "failed") -> None:
        super().__init__(message, agent=agent)
        self.state = state


class StoreBusyError(StoreError):
    """The store could not serve the request now: its connection pool stayed exhausted for
    the pool timeout, or the database refused a new connection (too many clients).

    Nothing was written; the same request may succeed later. Servers answer it with 503.
    """


class BackpressureError(RunError):
    """A bounded buffer overflowed under the ``"error"`` strategy."""


class BulkheadFullError(RunError):
    """A bulkhead (``adk_rx.rx.Bulkhead``) had no permit free and no waiting place left."""


class StopError(AdkRxError):
    """The invocation was stopped on purpose (cancel, deadline, budget)."""


class InvocationCancelledError(StopError):
    """The invocation was cancelled by disposing its subscription."""


class InvocationTimeoutError(StopError, TimeoutError):
    """``RunConfig.timeout`` expired; the invocation was cancelled."""


class BudgetExceededError(StopError):
    """A budget of ``RunConfig`` ran out; the invocation stopped before the next call.

    Attributes:
        limit: the setting that ran out (``"max_llm_calls"``, ``"max_tool_calls"``,
            ``"max_tokens"`` or ``"max_cost"``).
        allowed: its value.
        used: what the invocation had used when the call was refused.
    """

    def __init__(self, message: str, *, limit: str, allowed: float, used: float) -> None:
        super().__init__(message)
        self.limit = limit
        self.allowed = allowed
        self.used = used

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_budget_error, (type(self), str(self), self.limit, self.allowed, self.used))


def _rebuild_budget_error(
    cls: type[BudgetExceededError], message: str, limit: str, allowed: float, used: float
) -> BudgetExceededError:
    return cls(message, limit=limit, allowed=allowed, used=used)


class LlmCallsLimitExceededError(BudgetExceededError):
    """The invocation would exceed ``RunConfig.max_llm_calls``."""


class RunnerClosedError(StopError):
    """The Runner was closed (``Runner.close()``); it starts no new run."""


class ServerError(AdkRxError):
    """The API server refuses a request; the subclass says which answer it gets."""


class BrokerUnavailableError(ServerError):
    """The Redis that several server processes share does not answer (try again)."""


class AppNotFoundError(ServerError, LookupError):
    """No app of that name in the agents folder."""


class SessionBusyError(ServerError):
    """The session already has a run in this process."""


class TooManyRunsError(ServerError):
    """``Limits.max_running`` runs are in progress."""
