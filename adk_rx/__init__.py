"""adk_rx: an agent runtime on RxPY that mirrors the core of Google's ADK for Java.

Every agent returns a cold ``Observable[Event]``; a :class:`Runner` subscribes to it,
persists each event and re-emits it. See docs/guides/model.md for the model in one page.
"""

from adk_rx.agent_tool import AgentTool
from adk_rx.agents import BaseAgent, LlmAgent, LoopAgent, ParallelAgent, SequentialAgent
from adk_rx.apps import App, EventsCompactionConfig, ResumabilityConfig
from adk_rx.artifacts.file import FileArtifactService
from adk_rx.artifacts.in_memory import InMemoryArtifactService
from adk_rx.artifacts.sql import SqlArtifactService
from adk_rx.context import CallbackContext, InvocationContext, ReadonlyContext, ToolContext
from adk_rx.errors import (
    AdkRxError,
    AgentLoadError,
    AgentNotFoundError,
    AppNotFoundError,
    BackpressureError,
    BrokerUnavailableError,
    BudgetExceededError,
    BulkheadFullError,
    CallbackError,
    CircuitOpenError,
    ConfigurationError,
    CredentialError,
    GraphValidationError,
    InstructionError,
    InvalidAgentError,
    InvocationCancelledError,
    InvocationNotFoundError,
    InvocationTimeoutError,
    LlmCallsLimitExceededError,
    McpConnectionError,
    MissingCredentialsError,
    ModelError,
    NodeTimeoutError,
    OutputSchemaError,
    RemoteAgentError,
    RemoteAgentUnavailableError,
    RemoteTaskFailedError,
    ReplayMismatchError,
    RunError,
    RunnerClosedError,
    SandboxUnavailableError,
    ServerError,
    SessionBusyError,
    SessionExistsError,
    SessionNotFoundError,
    StateValueError,
    StopError,
    StoreBusyError,
    StoreError,
    ToolArgumentsError,
    ToolResultError,
    TooManyRunsError,
    UnknownModelError,
)
from adk_rx.events import Event, EventActions
from adk_rx.live.queue import LiveRequestQueue
from adk_rx.memory.in_memory import InMemoryMemoryService
from adk_rx.memory.sql import SqlMemoryService
from adk_rx.memory.vector import VectorMemoryService
from adk_rx.models import BaseLlm, LlmRegistry, LlmRequest, LlmResponse
from adk_rx.plugins import BasePlugin
from adk_rx.run_config import RunConfig, StreamingMode, ToolExecutionMode
from adk_rx.runner import InMemoryRunner, Runner
from adk_rx.sessions import GetSessionConfig, InMemorySessionService, Session
from adk_rx.sessions.sql import SqlSessionService
from adk_rx.state import State
from adk_rx.tools import BaseTool, FunctionTool, LongRunningFunctionTool
from adk_rx.tools.toolset import BaseToolset

__all__ = [
    "AdkRxError",
    "AgentLoadError",
    "AgentNotFoundError",
    "AgentTool",
    "App",
    "AppNotFoundError",
    "BackpressureError",
    "BaseAgent",
    "BaseLlm",
    "BasePlugin",
    "BaseTool",
    "BaseToolset",
    "BrokerUnavailableError",
    "BudgetExceededError",
    "BulkheadFullError",
    "CallbackContext",
    "CallbackError",
    "CircuitOpenError",
    "ConfigurationError",
    "CredentialError",
    "Event",
    "EventActions",
    "EventsCompactionConfig",
    "FileArtifactService",
    "FunctionTool",
    "GetSessionConfig",
    "GraphValidationError",
    "InMemoryArtifactService",
    "InMemoryMemoryService",
    "InMemoryRunner",
    "InMemorySessionService",
    "InstructionError",
    "InvalidAgentError",
    "InvocationCancelledError",
    "InvocationContext",
    "InvocationNotFoundError",
    "InvocationTimeoutError",
    "LiveRequestQueue",
    "LlmAgent",
    "LlmCallsLimitExceededError",
    "LlmRegistry",
    "LlmRequest",
    "LlmResponse",
    "LongRunningFunctionTool",
    "LoopAgent",
    "McpConnectionError",
    "MissingCredentialsError",
    "ModelError",
    "NodeTimeoutError",
    "OutputSchemaError",
    "ParallelAgent",
    "ReadonlyContext",
    "RemoteAgentError",
    "RemoteAgentUnavailableError",
    "RemoteTaskFailedError",
    "ReplayMismatchError",
    "ResumabilityConfig",
    "RunConfig",
    "RunError",
    "Runner",
    "RunnerClosedError",
    "SandboxUnavailableError",
    "SequentialAgent",
    "ServerError",
    "Session",
    "SessionBusyError",
    "SessionExistsError",
    "SessionNotFoundError",
    "SqlArtifactService",
    "SqlMemoryService",
    "SqlSessionService",
    "State",
    "StateValueError",
    "StopError",
    "StoreBusyError",
    "StoreError",
    "StreamingMode",
    "TooManyRunsError",
    "ToolArgumentsError",
    "ToolContext",
    "ToolExecutionMode",
    "ToolResultError",
    "UnknownModelError",
    "VectorMemoryService",
]
