"""The agent tree as google-adk's dev UI draws it: a serialised tree and Graphviz DOT source.

``build_graph`` answers ``{name, root_agent, readme?}`` where each agent is ``{name,
agent_class, description, model?, instruction?, tools: [{name, type}], sub_agents: [...]}``;
``build_graph_image`` answers ``{"": {"dotSrc": "digraph ..."}}``. The UI renders the DOT
source itself, so no Graphviz binary (or Python package) is needed on the server.

A :class:`~adk_rx.workflow.Workflow` is drawn as its graph: START, its nodes (functions as
ellipses, joins as diamonds, agents as boxes with their own tools and sub-agents) and its
edges, labelled with their routes; its tree entry lists ``nodes`` and ``edges``.
"""

from __future__ import annotations

import json
from typing import Any

from adk_rx.agents.base import BaseAgent
from adk_rx.agents.llm import LlmAgent
from adk_rx.workflow import START, AgentNode, JoinNode, Workflow
from adk_rx.workflow.nodes import BaseNode

__all__ = ["app_graph", "dot_source", "serialize_agent"]


def serialize_agent(agent: BaseAgent) -> dict[str, Any]:
    """One agent and its sub-agents, in google-adk's ``build_graph`` shape."""
    data: dict[str, Any] = {
        "name": agent.name,
        "agent_class": type(agent).__name__,
        "description": agent.description,
    }
    if isinstance(agent, LlmAgent):
        model = agent.model
        if model is not None:
            data["model"] = model if isinstance(model, str) else getattr(model, "model", "")
        if isinstance(agent.instruction, str):
            data["instruction"] = agent.instruction
        data["tools"] = [
            {"name": getattr(tool, "name", type(tool).__name__), "type": "tool"}
            for tool in agent.tools
        ]
    data["sub_agents"] = [serialize_agent(sub) for sub in agent.sub_agents]
    if isinstance(agent, Workflow) and agent.graph is not None:
        data["nodes"] = [
            {"name": node.name, "type": _node_type(node)} for node in agent.graph.walk()
        ]
        data["edges"] = [
            {"from": e.from_node.name, "to": e.to_node.name, "route": e.route}
            for e in agent.graph.edges
        ]
    return data


def _node_type(node: BaseNode) -> str:
    if isinstance(node, AgentNode):
        return "agent"
    return "join" if isinstance(node, JoinNode) else "function"


def app_graph(name: str, root: BaseAgent, readme: str | None) -> dict[str, Any]:
    """google-adk's ``build_graph`` answer for an app."""
    graph: dict[str, Any] = {"name": name, "root_agent": serialize_agent(root)}
    if readme:
        graph["readme"] = readme
    return graph


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a quoted DOT ID escapes like JSON


def dot_source(
    root: BaseAgent, *, dark_mode: bool = False, highlight: frozenset[str] = frozenset()
) -> str:
    """Graphviz DOT of the agent tree: agents as boxes, tools as ellipses, edges parent->child;
    a workflow as its graph of nodes.

    Agents, tools and workflow nodes named in ``highlight`` are filled (an event's author,
    its calls, the node it comes from).
    """
    background = "#333537" if dark_mode else "#ffffff"
    ink = "#e8eaed" if dark_mode else "#202124"
    lines = [
        "digraph {",
        f'  graph [bgcolor="{background}" rankdir=LR];',
        f'  node [color="{ink}" fontcolor="{ink}" fontname="Helvetica"];',
        f'  edge [color="{ink}"];',
    ]

    def style(name: str) -> str:
        return ' style=filled fillcolor="#0f5223"' if name in highlight else ""

    def visit(agent: BaseAgent) -> None:
        if isinstance(agent, Workflow) and agent.graph is not None:
            workflow(agent)
            return
        label = _quote("🤖 " + agent.name)
        lines.append(f"  {_quote(agent.name)} [shape=box label={label}{style(agent.name)}];")
        if isinstance(agent, LlmAgent):
            for tool in agent.tools:
                tool_name = getattr(tool, "name", type(tool).__name__)
                node = _quote(f"{agent.name}/{tool_name}")
                label = _quote("🔧 " + tool_name)
                lines.append(f"  {node} [shape=ellipse label={label}{style(tool_name)}];")
                lines.append(f"  {_quote(agent.name)} -> {node};")
        for sub in agent.sub_agents:
            visit(sub)
            lines.append(f"  {_quote(agent.name)} -> {_quote(sub.name)};")

    def workflow(flow: Workflow) -> None:
        assert flow.graph is not None
        label = _quote("🔀 " + flow.name)
        lines.append(
            f"  {_quote(flow.name)} [shape=box style=rounded label={label}{style(flow.name)}];"
        )
        start = _quote(f"{flow.name}/{START.name}")
        lines.append(f'  {start} [shape=circle label="START" fontsize=9];')
        lines.append(f"  {_quote(flow.name)} -> {start} [style=dotted];")
        ids = {START.name: start}
        for node in flow.graph.walk():
            if isinstance(node, AgentNode):
                visit(node.agent)
                ids[node.name] = _quote(node.agent.name)
                continue
            ids[node.name] = _quote(f"{flow.name}/{node.name}")
            shape = "diamond" if isinstance(node, JoinNode) else "ellipse"
            text = _quote(("⋈ " if shape == "diamond" else "ƒ ") + node.name)
            lines.append(f"  {ids[node.name]} [shape={shape} label={text}{style(node.name)}];")
        for edge in flow.graph.edges:
            route = "" if edge.route is None else f" [label={_quote(str(edge.route))}]"
            lines.append(f"  {ids[edge.from_node.name]} -> {ids[edge.to_node.name]}{route};")

    visit(root)
    lines.append("}")
    return "\n".join(lines)
