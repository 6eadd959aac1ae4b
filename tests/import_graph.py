"""The runtime import graph of the adk_rx package, read from its source with ``ast``.

An edge ``a -> b`` means that importing module ``a`` runs module ``b``: every ``import`` and
``from ... import`` of an adk_rx module counts, at module level and inside functions (a
deferred import still runs, only later), except those under ``if TYPE_CHECKING:``, which never
run. Importing ``adk_rx.x.y`` also runs the package ``adk_rx.x`` (its ``__init__``), so that
package is an edge too, unless the importer lives inside it already. The root package
``adk_rx`` (which re-exports the public names) is left out: every module would depend on it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Import", "cycles", "modules", "runtime_imports"]


@dataclass(frozen=True)
class Import:
    """One runtime import of an adk_rx module by another."""

    source: str
    target: str
    line: int
    deferred: bool  # inside a function: runs when the function is called


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root`` (its parent is the source tree), by name."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _runtime_nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every node that runs (those under ``if TYPE_CHECKING:`` never do), with whether it is
    inside a function."""
    pending: list[tuple[ast.AST, bool]] = [(tree, False)]
    while pending:
        node, deferred = pending.pop()
        yield node, deferred
        inner = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                pending.extend((other, inner) for other in child.orelse)
            else:
                pending.append((child, inner))


def _targets(name: str, is_package: bool, node: ast.AST, known: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join([*base, *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    # ``from package import module`` imports the module; ``from module import name`` the module
    return [
        f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix
        for alias in node.names
    ]


def _module_of(target: str, known: dict[str, Path]) -> str | None:
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def runtime_imports(root: Path) -> list[Import]:
    """The runtime imports between modules of the package under ``root``."""
    known = modules(root)
    package = root.name
    found: dict[tuple[str, str], Import] = {}
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        for node, deferred in _runtime_nodes(ast.parse(path.read_text())):
            for raw in _targets(name, is_package, node, known):
                target = _module_of(raw, known)
                if target is None or target == name or not target.startswith(package + "."):
                    continue
                # the packages the import runs on the way (those the importer is not inside)
                parts = target.split(".")
                chain = [".".join(parts[:i]) for i in range(2, len(parts) + 1)]
                for module in chain:
                    if module == name or name.startswith(module + "."):
                        continue
                    key = (name, module)
                    line = getattr(node, "lineno", 0)
                    previous = found.get(key)
                    if previous is None or (previous.deferred and not deferred):
                        found[key] = Import(name, module, line, deferred)
    return sorted(found.values(), key=lambda i: (i.source, i.target))


def cycles(imports: list[Import]) -> list[list[str]]:
    """The import cycles: strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for one in imports:
        graph.setdefault(one.source, set()).add(one.target)
        graph.setdefault(one.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
