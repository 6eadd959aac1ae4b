"""The checks the project keeps clean run with the test suite: ruff (lint and format) on the
code and the tests, basedpyright on the package (configured in pyproject.toml), and the shape
of the package: imports down the layers without cycles, modules of at most 450 lines,
observers only in ``adk_rx/rx/``, exported names documented."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.import_graph import cycles, modules, runtime_imports

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_ruff_finds_no_lint_problem() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", "adk_rx", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_formatted_as_ruff_formats_it() -> None:
    result = _run(
        sys.executable, "-m", "ruff", "format", "--check", "adk_rx", "tests", "benchmarks"
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)  # a cold type check of the package takes a minute or two
def test_basedpyright_finds_no_type_error_in_the_package() -> None:
    result = _run(str(BIN / "basedpyright"), "adk_rx")
    assert result.returncode == 0, result.stdout + result.stderr


# -- architecture (ARCHITECTURE contract 12; docs/architecture.md draws the same layers) -------

PACKAGE = ROOT / "adk_rx"
ROOT_PACKAGE = "adk_rx"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # The one error tree: every layer raises it, rx included.
    ("errors", ("adk_rx.errors",)),
    # The reactive engine (rx/_engine) and the operators users may call (rx/).
    ("rx", ("adk_rx.rx",)),
    # Immutable values: what a run produces and is configured with.
    (
        "values",
        (
            "adk_rx.events",
            "adk_rx.event_actions",
            "adk_rx.state",
            "adk_rx.run_config",
            "adk_rx.pricing",
        ),
    ),
    # The seams and what they are called with: stores, models, tools, the contexts callbacks
    # and tools see, callbacks and plugins, planners, token usage, telemetry; the parts of
    # compaction the flows read (summaries in requests) and the Runner calls.
    (
        "services",
        (
            "adk_rx.sessions",
            "adk_rx.artifacts",
            "adk_rx.memory",
            "adk_rx.models",
            "adk_rx.tools",
            "adk_rx.code_executors",
            "adk_rx.context",
            "adk_rx.invocation_context",
            "adk_rx.services",
            "adk_rx.invocation_shared",
            "adk_rx.budget",
            "adk_rx.callbacks",
            "adk_rx.callback_types",
            "adk_rx.plugins",
            "adk_rx.instructions",
            "adk_rx.planners",
            "adk_rx.usage",
            "adk_rx.telemetry",
            "adk_rx.compaction",
            "adk_rx.auth",
        ),
    ),
    # An LlmAgent's step loop, and resuming it where a stopped invocation left it (or where
    # it waited for a user's credential).
    ("flows", ("adk_rx.flows", "adk_rx.resumability", "adk_rx.auth.resume")),
    # The agent tree; an App around it and the loader that imports one from a folder; the
    # live flow; compaction's default summarizer (it reads the tree's models).
    (
        "agents",
        (
            "adk_rx.agents",
            "adk_rx.workflow",
            "adk_rx.apps",
            "adk_rx.loading",
            "adk_rx.live",
            "adk_rx.compaction.default",
        ),
    ),
    # The Runner, AgentTool, which runs a child Runner, and A2A, which serves Runners and calls
    # remote agents.
    ("runner", ("adk_rx.runner", "adk_rx.agent_tool", "adk_rx.a2a")),
    # Built on whole runs: the test kit and evaluation.
    ("tooling", ("adk_rx.testing", "adk_rx.evaluation")),
    # The command line and the server; the root package (only it) re-exports the public names.
    ("cli", ("adk_rx.cli", ROOT_PACKAGE)),
]

# Upward imports that are known and have to go; listing one that no longer exists fails too.
KNOWN_UPWARD: set[tuple[str, str]] = set()

# Deferred (function-local) imports of adk_rx modules outside the CLI, each with its reason.
# The CLI defers its subcommands so that ``adk-rx --help`` stays quick.
DEFERRED_OK = {
    ("adk_rx.telemetry.setup", "adk_rx.telemetry.span_store"): "needs the optional SDK",
    ("adk_rx.models.registry", "adk_rx.models.anthropic_llm"): "needs the anthropic extra",
}


def _listed(source: str, target: str, entries: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """The entry that covers an import of ``target`` (or of a package on the way to it)."""
    for entry in entries:
        if entry[0] == source and (entry[1] == target or entry[1].startswith(target + ".")):
            return entry
    return None


def _layer(module: str) -> int:
    best, found = -1, -1
    for level, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (
                prefix != ROOT_PACKAGE and module.startswith(prefix + ".")
            )
            if inside and len(prefix) > best:
                best, found = len(prefix), level
    assert found >= 0, f"{module} is in no layer: add it to LAYERS (and docs/architecture.md)"
    return found


def test_every_module_sits_in_a_layer() -> None:
    for module in modules(PACKAGE):
        _layer(module)


def test_imports_point_down_the_layers() -> None:
    imports = runtime_imports(PACKAGE)
    upward = {
        (one.source, one.target): one for one in imports if _layer(one.target) > _layer(one.source)
    }
    new = [
        f"{one.source}:{one.line} imports {one.target} "
        f"({LAYERS[_layer(one.source)][0]} -> {LAYERS[_layer(one.target)][0]})"
        for one in upward.values()
        if _listed(one.source, one.target, KNOWN_UPWARD) is None
    ]
    assert new == [], "imports must point down the layers:\n" + "\n".join(new)
    gone = KNOWN_UPWARD - set(upward)
    assert not gone, f"fixed, remove from KNOWN_UPWARD: {sorted(gone)}"


def test_no_import_cycle() -> None:
    found = cycles(runtime_imports(PACKAGE))
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_adk_rx_modules_are_imported_at_module_level_outside_the_cli() -> None:
    deferred = [
        f"{one.source}:{one.line} imports {one.target} inside a function"
        for one in runtime_imports(PACKAGE)
        if one.deferred
        and not one.source.startswith("adk_rx.cli")
        and _listed(one.source, one.target, DEFERRED_OK) is None
    ]
    assert deferred == []


def test_the_graph_sees_deferred_imports_and_skips_type_checking_ones(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub import low\n")
    (package / "sub" / "low.py").write_text("def f():\n    from pkg import top\n")
    (package / "top.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pkg.sub.low import f\n"
        "if TYPE_CHECKING:\n    from pkg import other\n"
    )
    (package / "other.py").write_text("")
    imports = {(i.source, i.target, i.deferred) for i in runtime_imports(package)}
    assert imports == {
        ("pkg.sub", "pkg.sub.low", False),
        ("pkg.sub.low", "pkg.top", True),
        ("pkg.top", "pkg.sub", False),  # importing pkg.sub.low runs pkg.sub first
        ("pkg.top", "pkg.sub.low", False),
    }
    assert cycles(runtime_imports(package)) == [["pkg.sub", "pkg.sub.low", "pkg.top"]]


# -- shape of the code (STYLE.md; contract 12) --------------------------------------------------

MAX_MODULE_LINES = 450
OBSERVER_METHODS = {"on_next", "on_error", "on_completed"}


def _sources() -> dict[str, Path]:
    return {name: path for name, path in modules(PACKAGE).items()}


def test_every_module_is_at_most_450_lines() -> None:
    long = {
        name: length
        for name, path in _sources().items()
        if (length := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, "split these by concept"


def test_observers_and_hand_made_subscriptions_live_in_rx() -> None:
    found: list[str] = []
    for name, path in _sources().items():
        if name == "adk_rx.rx" or name.startswith("adk_rx.rx."):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                methods = {
                    item.name
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                }
                if methods & OBSERVER_METHODS:
                    found.append(f"{name}:{node.lineno} class {node.name} is an observer")
            elif isinstance(node, ast.Attribute) and node.attr == "_subscribe_core":
                found.append(f"{name}:{node.lineno} calls _subscribe_core")
    assert found == [], "make it an operator in adk_rx/rx/:\n" + "\n".join(found)


def test_each_module_of_rx_outside_its_engine_defines_public_operators() -> None:
    import adk_rx.rx

    public = set(adk_rx.rx.__all__)
    private = [
        name
        for name in _sources()
        if name.startswith("adk_rx.rx.")
        and not name.startswith("adk_rx.rx._engine")
        and not public & set(importlib.import_module(name).__all__)
    ]
    assert private == [], "move to adk_rx/rx/_engine/ or export from adk_rx.rx"


def _documented_constants(package: str) -> set[str]:
    """Names assigned with a docstring (a string right after the assignment) in the package."""
    names: set[str] = set()
    for name, path in _sources().items():
        if name != package and not name.startswith(package + "."):
            continue
        body = ast.parse(path.read_text()).body
        for node, after in itertools.pairwise(body):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            if (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def test_every_name_a_package_exports_has_a_docstring() -> None:
    missing: list[str] = []
    for name, path in sorted(_sources().items()):
        if path.name != "__init__.py":
            continue
        package = importlib.import_module(name)
        constants: set[str] | None = None
        for exported in getattr(package, "__all__", ()):
            value = getattr(package, exported)
            if inspect.isclass(value) or inspect.isfunction(value) or inspect.ismodule(value):
                if not (value.__doc__ or "").strip():
                    missing.append(f"{name}.{exported}")
                continue
            if constants is None:
                constants = _documented_constants(name)
            if exported not in constants:
                missing.append(f"{name}.{exported} (a value: document it where it is assigned)")
    assert missing == []
