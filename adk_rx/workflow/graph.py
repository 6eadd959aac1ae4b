"""Edges and the graph they make: google-adk 2.13's chain syntax, validation and routing.

``Workflow(edges=[...])`` takes explicit :class:`Edge` objects and chains (tuples)::

    (START, a, b)                      START -> a -> b
    (START, a, (b, c), join)           fan-out from a to b and c, both into join
    (START, router, {"x": b, "y": c})  routed: b when router's route is "x", c for "y"
    {DEFAULT_ROUTE: d}                 d when no other route of the node matched

Functions become FunctionNodes and agents agent nodes (``build.py``); the same object used
twice is the same node. The graph is checked once, when the workflow is built.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from adk_rx.errors import ConfigurationError, GraphValidationError
from adk_rx.events import RouteValue
from adk_rx.workflow.build import build_node, is_node_like
from adk_rx.workflow.nodes import START, BaseNode

__all__ = ["DEFAULT_ROUTE", "Edge", "Graph"]

DEFAULT_ROUTE = "__DEFAULT__"
"""The route of an edge followed when none of its source's other routes matched."""

Route = RouteValue | list[RouteValue] | None


@dataclass(frozen=True)
class Edge:
    """An edge of a workflow graph.

    Args:
        from_node: the node (or function, or agent) the edge leaves.
        to_node: the node it leads to.
        route: followed only when the source node emits a matching route (one value or a
            list of values); None: always followed.
    """

    from_node: Any
    to_node: Any
    route: Route = None


def _flatten(element: Any) -> list[Any]:
    if isinstance(element, dict):
        found: list[Any] = []
        for target in element.values():
            found.extend(target if isinstance(target, tuple) else [target])
        return found
    return list(element) if isinstance(element, tuple) else [element]


class Graph:
    """The nodes and edges of a workflow, checked, with the routing rule.

    Args:
        edge_items: :class:`Edge` objects and chains, as ``Workflow(edges=...)`` takes them.

    Raises:
        GraphValidationError: duplicate node names, no START, a route on an edge from START,
            a node START cannot reach, an edge into START, a duplicate edge, DEFAULT_ROUTE in
            a list, or a cycle without a routed edge.
        ConfigurationError: an item that is not a node, an edge or a chain.
    """

    def __init__(self, edge_items: list[Any]) -> None:
        self._built: dict[int, BaseNode] = {}
        self.edges: list[Edge] = []
        for item in edge_items:
            if isinstance(item, Edge):
                self.edges.append(self._edge(item.from_node, item.to_node, item.route))
            elif isinstance(item, tuple):
                self._chain(item)
            else:
                raise ConfigurationError(f"Invalid edge type: {type(item)}")
        nodes: dict[int, BaseNode] = {}
        for edge in self.edges:
            nodes.setdefault(id(edge.from_node), edge.from_node)
            nodes.setdefault(id(edge.to_node), edge.to_node)
        self.nodes: list[BaseNode] = list(nodes.values())
        self.by_name: dict[str, BaseNode] = {n.name: n for n in self.nodes}
        self._outgoing: dict[str, list[Edge]] = {}
        self.predecessors: dict[str, list[str]] = {}
        for edge in self.edges:
            self._outgoing.setdefault(edge.from_node.name, []).append(edge)
            preds = self.predecessors.setdefault(edge.to_node.name, [])
            if edge.from_node.name not in preds:
                preds.append(edge.from_node.name)
        self.terminal_names: frozenset[str] = _validate(self.nodes, self.edges)

    # -- building ------------------------------------------------------------------------------
    def _node(self, node_like: Any) -> BaseNode:
        if isinstance(node_like, str) and node_like == "START":
            return START
        built = self._built.get(id(node_like))
        if built is None:
            built = build_node(node_like)
            self._built[id(node_like)] = built
        return built

    def _edge(self, from_node: Any, to_node: Any, route: Route) -> Edge:
        for end in (from_node, to_node):
            if not is_node_like(end):
                raise ConfigurationError(
                    f"Invalid node {end!r} (type {type(end).__name__}): a node must be a "
                    "BaseNode, an agent, a callable or 'START'."
                )
        return Edge(self._node(from_node), self._node(to_node), route)

    def _chain(self, chain: tuple[Any, ...]) -> None:
        for source, target in itertools.pairwise(chain):
            if isinstance(target, dict):
                if isinstance(source, dict):
                    raise ConfigurationError(
                        "Consecutive routing maps are not allowed in a chain. Split them into "
                        "separate edge items."
                    )
                if not target:
                    raise ConfigurationError("Routing map must not be empty.")
                for route, to in target.items():
                    if not isinstance(route, bool | int | str):
                        raise ConfigurationError(
                            f"Invalid routing map key: {route!r}: keys are str, int or bool."
                        )
                    for a in _flatten(source):
                        for b in _flatten(to):
                            self.edges.append(self._edge(a, b, route))
            else:
                for a in _flatten(source):
                    for b in _flatten(target):
                        self.edges.append(self._edge(a, b, None))

    # -- routing -------------------------------------------------------------------------------
    def next_nodes(self, name: str, route: Route) -> list[str]:
        """The nodes a completed run of ``name`` triggers, given the route(s) it emitted."""
        chosen: list[str] = []
        defaults: list[str] = []
        matched = False
        wanted = set(route) if isinstance(route, list) else {route}
        for edge in self._outgoing.get(name, ()):
            if edge.route is None:
                chosen.append(edge.to_node.name)
            elif edge.route == DEFAULT_ROUTE:
                defaults.append(edge.to_node.name)
            elif wanted & (set(edge.route) if isinstance(edge.route, list) else {edge.route}):
                chosen.append(edge.to_node.name)
                matched = True
        if not matched:
            chosen.extend(defaults)
        return chosen

    def walk(self) -> Iterator[BaseNode]:
        """The nodes other than START, in the order edges first name them."""
        return (n for n in self.nodes if n is not START)


def _validate(nodes: list[BaseNode], edges: list[Edge]) -> frozenset[str]:
    """Checks the graph (google-adk's rules and messages); returns the terminal node names."""
    names = [n.name for n in nodes]
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise GraphValidationError(
            f"Graph validation failed. Duplicate node names found: {duplicates}. Pass the same "
            "object to reuse a node, or give distinct nodes distinct names."
        )
    if START.name not in names:
        raise GraphValidationError("Graph validation failed. START node not found in graph nodes.")
    adjacency: dict[str, set[str]] = {name: set() for name in names}
    seen: dict[tuple[str, str], set[Any]] = {}
    for edge in edges:
        a, b, route = edge.from_node.name, edge.to_node.name, edge.route
        if a == START.name and route is not None:
            raise GraphValidationError(
                "Graph validation failed. Edges from START must not have routes"
                f" (edge to {b} has route {route})."
            )
        if b == START.name:
            raise GraphValidationError(
                "Graph validation failed. START node must not have incoming edges."
            )
        if isinstance(route, list) and DEFAULT_ROUTE in route:
            raise GraphValidationError(
                "Graph validation failed. DEFAULT_ROUTE cannot be combined with other routes "
                f"in a list (edge from={a}, to={b})."
            )
        routes: set[Any] = set(route) if isinstance(route, list) else {route}
        earlier = seen.setdefault((a, b), set())
        if earlier and (None in earlier or None in routes or earlier & routes):
            raise GraphValidationError(
                f"Graph validation failed. Duplicate edge found: from={a}, to={b}"
            )
        earlier.update(routes)
        adjacency[a].add(b)
    reachable: set[str] = set()
    stack = [START.name]
    while stack:
        name = stack.pop()
        if name not in reachable:
            reachable.add(name)
            stack.extend(adjacency[name] - reachable)
    unreachable = sorted(set(names) - reachable)
    if unreachable:
        raise GraphValidationError(
            f"Graph validation failed. The following nodes are unreachable from START: "
            f"{unreachable}"
        )
    _no_unconditional_cycle(edges, names)
    sources = {edge.from_node.name for edge in edges}
    return frozenset(n for n in names if n != START.name and n not in sources)


def _no_unconditional_cycle(edges: list[Edge], names: list[str]) -> None:
    plain: dict[str, list[str]] = {name: [] for name in names}
    for edge in edges:
        if edge.route is None:
            plain[edge.from_node.name].append(edge.to_node.name)
    done: set[str] = set()
    for root in names:
        if root in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, Iterator[str]]] = [(root, iter(plain[root]))]
        path.append(root)
        on_path.add(root)
        while stack:
            name, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                on_path.discard(name)
                done.add(name)
            elif child in on_path:
                cycle = [*path[path.index(child) :], child]
                raise GraphValidationError(
                    "Graph validation failed. Unconditional cycle detected: "
                    f"{' -> '.join(cycle)}. Cycles must include at least one conditional "
                    "(routed) edge to avoid infinite loops."
                )
            elif child not in done:
                stack.append((child, iter(plain[child])))
                path.append(child)
                on_path.add(child)
