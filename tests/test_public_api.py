"""The top-level package exports exactly the public names of the contract, all documented."""

from __future__ import annotations

import inspect

import adk_rx
import adk_rx.errors

CONTRACT_NAMES = {
    # agents
    "BaseAgent", "LlmAgent", "SequentialAgent", "ParallelAgent", "LoopAgent",
    # running
    "Runner", "InMemoryRunner", "RunConfig", "StreamingMode", "ToolExecutionMode",
    # events
    "Event", "EventActions",
    # sessions
    "Session", "State", "GetSessionConfig", "InMemorySessionService", "SqlSessionService",
    # contexts
    "InvocationContext", "ReadonlyContext", "CallbackContext", "ToolContext",
    # tools
    "BaseTool", "FunctionTool", "LongRunningFunctionTool", "AgentTool", "BaseToolset",
    # models
    "BaseLlm", "LlmRequest", "LlmResponse", "LlmRegistry",
    # artifacts / memory
    "InMemoryArtifactService", "FileArtifactService", "InMemoryMemoryService",
    # plugins
    "BasePlugin",
    # live
    "LiveRequestQueue",
    # apps
    "App", "ResumabilityConfig", "EventsCompactionConfig",
}  # fmt: skip

# Services exported beside the contract's siblings (SqlSessionService, InMemoryMemoryService),
# so no public service class is reachable only by its module path.
SERVICE_NAMES = {"SqlArtifactService", "SqlMemoryService", "VectorMemoryService"}


def error_classes() -> set[str]:
    return {
        name
        for name, value in vars(adk_rx.errors).items()
        if inspect.isclass(value) and issubclass(value, adk_rx.AdkRxError)
    }


def test_all_is_exactly_the_contract_names_plus_the_error_tree() -> None:
    expected = CONTRACT_NAMES | SERVICE_NAMES | error_classes()
    assert set(adk_rx.__all__) == expected
    assert len(adk_rx.__all__) == len(set(adk_rx.__all__))


def test_error_tree_has_the_named_errors_under_one_root() -> None:
    errors = error_classes()
    assert {
        "AdkRxError",
        "LlmCallsLimitExceededError",
        "SessionNotFoundError",
        "InvocationTimeoutError",
    } <= errors
    for name in errors:
        assert issubclass(getattr(adk_rx, name), adk_rx.AdkRxError)


def test_every_exported_name_resolves() -> None:
    for name in adk_rx.__all__:
        assert getattr(adk_rx, name, None) is not None, name


def test_no_other_public_module_level_names_leak_from_the_package() -> None:
    public = {
        name
        for name, value in vars(adk_rx).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public == set(adk_rx.__all__)


def test_every_public_name_and_its_public_methods_have_docstrings() -> None:
    missing: list[str] = []
    for name in adk_rx.__all__:
        value = getattr(adk_rx, name)
        if not inspect.getdoc(value):
            missing.append(name)
        if not inspect.isclass(value):
            continue
        for attr, member in vars(value).items():
            if attr.startswith("_") or not (
                inspect.isfunction(member)
                or isinstance(member, property | classmethod | staticmethod)
            ):
                continue
            target = member.fget if isinstance(member, property) else member
            if not inspect.getdoc(target):
                missing.append(f"{name}.{attr}")
    assert missing == []


def test_every_public_service_class_is_a_top_level_name() -> None:
    import adk_rx.artifacts
    import adk_rx.memory
    import adk_rx.sessions

    services = {
        name
        for package in (adk_rx.sessions, adk_rx.artifacts, adk_rx.memory)
        for name in package.__all__
        if name.endswith("Service") and not name.startswith("Base")
    }
    assert services <= set(adk_rx.__all__)
