"""A graph workflow, offline: triage a customer message, gather facts in parallel, let an agent
decide, answer.

    START -> classify --"refund"--> (fetch_order, check_policy) -> facts (join) -> decider -> reply
                      \\--"status"--> order_status

``fetch_order`` fails on its first attempt (a flaky backend) and is retried after 50 ms;
``check_policy`` runs beside it; the ``facts`` join waits for both; ``decider`` is an
LlmAgent node (a scripted model) that reads the facts as its input.

Run it (one command, no API key)::

    adk-rx run examples/order_graph -m "I want a refund for order 42" --in-memory

``adk-rx web examples`` draws the graph and highlights the nodes running now.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from adk_rx import LlmAgent, LlmRequest, LlmResponse
from adk_rx.testing import ScriptedLlm
from adk_rx.workflow import START, Context, JoinNode, RetryConfig, Workflow, node

_attempts = {"fetch_order": 0}


def classify(ctx: Context, node_input: str) -> dict[str, Any]:
    """Finds the order number and what the customer wants."""
    found = re.search(r"\d+", node_input)
    ctx.state["order_id"] = int(found.group()) if found else 0
    ctx.route = "refund" if "refund" in node_input.lower() else "status"
    return {"order_id": ctx.state["order_id"], "message": node_input}


@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.05, jitter=0.0))
async def fetch_order(order_id: int) -> dict[str, Any]:
    """Reads the order from a backend that times out once."""
    _attempts["fetch_order"] += 1
    await asyncio.sleep(0.01)
    if _attempts["fetch_order"] == 1:
        raise ConnectionError("orders backend timed out")
    return {"order_id": order_id, "item": "kettle", "paid": 39.0, "days_ago": 12}


def check_policy(node_input: dict[str, Any]) -> dict[str, Any]:
    """Refunds are allowed within 30 days."""
    return {"refund_window_days": 30}


def _decide(request: LlmRequest) -> LlmResponse:
    facts = json.loads(request.contents[-1].parts[0].text or "{}")  # type: ignore[index]
    order, policy = facts["fetch_order"], facts["check_policy"]
    verdict = "approve" if order["days_ago"] <= policy["refund_window_days"] else "decline"
    return LlmResponse.text(
        f"{verdict}: the {order['item']} was bought {order['days_ago']} days ago"
    )


decider = LlmAgent(
    name="decider",
    model=ScriptedLlm([_decide] * 1000),
    instruction="Decide whether to refund, from the facts you are given.",
    output_key="decision",
)


def reply(node_input: str) -> str:
    """Words the decision for the customer."""
    verdict, _, reason = node_input.partition(": ")
    if verdict == "approve":
        return f"Your refund is on its way ({reason})."
    return f"Sorry, we cannot refund this order ({reason})."


def order_status(order_id: int) -> str:
    return f"Order {order_id} has shipped."


root_agent = Workflow(
    name="order_desk",
    description="Triage, facts in parallel, an agent's decision, a reply.",
    edges=[
        (START, classify, {"refund": (fetch_order, check_policy), "status": order_status}),
        ((fetch_order, check_policy), JoinNode(name="facts"), decider, reply),
    ],
)
