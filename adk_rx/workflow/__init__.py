"""Graph workflows (google-adk 2.13's ``google.adk.workflow``) on Rx operators.

``Workflow(name=..., edges=[(START, a, (b, c), JoinNode(name="join"), d)])`` runs functions,
agents and other workflows as the nodes of a graph. One run, followed through the modules:

1. ``graph.py``: the edges (``Edge`` objects and chains; ``build.py`` turns functions into
   ``FunctionNode``\\ s and agents into agent nodes) are checked once, at construction.
2. ``workflow.py``: a :class:`Workflow` is an agent; its run is a :class:`~run.GraphRun`.
3. ``run.py``: the run is one stream grown by ``adk_rx.rx.expand``: each node start becomes
   the node's run, each node end asks ``schedule.py`` which nodes start next (routes,
   joins, ``max_concurrency``).
4. ``node_run.py``: one node run: a :class:`Context` per attempt (``context.py``), what the
   node yields turned into events stamped with its path, its ``timeout`` and
   ``RetryConfig`` (``retry.py``) as operators on the timer scheduler.
5. ``function_node.py``, ``agent_node.py``, ``nodes.py``: what runs inside a node.
6. ``progress.py``: in a resumable app, node starts and ends are recorded as events, and a
   resumed run plays the ends back instead of running those nodes again.

Disposing the run disposes every node run in flight (an async node's task is cancelled, an
agent node's model call too) and starts no other.
"""

from adk_rx.errors import GraphValidationError, NodeTimeoutError
from adk_rx.workflow.agent_node import AgentNode
from adk_rx.workflow.context import Context
from adk_rx.workflow.decorator import node
from adk_rx.workflow.function_node import FunctionNode
from adk_rx.workflow.graph import DEFAULT_ROUTE, Edge
from adk_rx.workflow.nodes import START, BaseNode, JoinNode
from adk_rx.workflow.retry import RetryConfig
from adk_rx.workflow.workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "AgentNode",
    "BaseNode",
    "Context",
    "Edge",
    "FunctionNode",
    "GraphValidationError",
    "JoinNode",
    "NodeTimeoutError",
    "RetryConfig",
    "Workflow",
    "node",
]
