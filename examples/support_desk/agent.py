"""Support desk: a router agent with billing and shipping specialists.

``support_root`` sends each question to ``shipping`` (where is my order) or ``billing``
(charges, refunds). Both look orders up; billing can refund, but only after the user
approves the call (``require_confirmation``) and saves a receipt as an artifact. The tools
write state (``last_order_id``, ``last_refund``) and each specialist keeps its final answer in
state (``output_key``).

The model, in this order:

* ``ADK_RX_MODEL`` (set by ``adk-rx run --model NAME`` or ``--replay FILE``);
* Gemini (``gemini-2.5-flash``) when ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` is set;
* an OpenAI-compatible server when ``OPENAI_BASE_URL`` is set (model ``OPENAI_MODEL``,
  default ``gpt-4o-mini``);
* otherwise offline: the recorded trajectory ``trajectory.jsonl`` next to this file, which
  answers the questions it was recorded with (see ``record.py``), alone or in one chat in
  either order: "Where is my order 1234?" and "Please refund order 1234, it arrived broken."
  (approve).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from google.genai import types

from adk_rx import (
    BaseLlm,
    ConfigurationError,
    FunctionTool,
    LlmAgent,
    ToolContext,
)
from adk_rx.models.recording import ReplayLlm

TRAJECTORY = Path(__file__).with_name("trajectory.jsonl")
OFFLINE_HINT = (
    "I am the offline demo: I replay a recorded conversation, and that question is not in it "
    "(set GOOGLE_API_KEY or OPENAI_BASE_URL for a real model). Ask me one of these:"
)

ORDERS: dict[str, dict[str, Any]] = {
    "1234": {
        "status": "shipped",
        "carrier": "DHL",
        "tracking": "JD0146000032",
        "eta": "2026-12-03",
        "items": ["Kettle"],
        "total_eur": 59.90,
    },
    "5678": {
        "status": "processing",
        "carrier": None,
        "tracking": None,
        "eta": "2026-12-08",
        "items": ["Toaster", "Mug"],
        "total_eur": 84.50,
    },
}


def lookup_order(order_id: str, tool_context: ToolContext) -> dict[str, Any]:
    """Looks up an order: its status, carrier, tracking number, delivery date and total.

    Args:
        order_id: the order number, e.g. "1234".
    """
    order = ORDERS.get(order_id.strip().lstrip("#"))
    if order is None:
        return {"error": f"no order {order_id}"}
    tool_context.state["last_order_id"] = order_id
    return {"order_id": order_id, **order}


def issue_refund(
    order_id: str, amount_eur: float, reason: str, tool_context: ToolContext
) -> dict[str, Any]:
    """Refunds (part of) an order to the customer's original payment method.

    Args:
        order_id: the order number.
        amount_eur: how much to refund, in euros; at most the order's total.
        reason: why, in a few words.
    """
    order = ORDERS.get(order_id)
    if order is None:
        return {"error": f"no order {order_id}"}
    if amount_eur <= 0 or amount_eur > order["total_eur"]:
        return {"error": f"the amount must be between 0 and {order['total_eur']} EUR"}
    refund = {
        "order_id": order_id,
        "amount_eur": amount_eur,
        "reason": reason,
        "refund_id": f"R-{order_id}-1",
    }
    tool_context.state["last_refund"] = refund
    receipt = f"Refund {refund['refund_id']}: {amount_eur:.2f} EUR for order {order_id} ({reason})"
    # The receipt becomes an artifact of the session (none without an artifact service).
    with contextlib.suppress(ConfigurationError):
        name = f"receipt-{refund['refund_id']}.txt"
        tool_context.save_artifact(name, types.Part(text=receipt)).run()
    return {"status": "refunded", **refund}


def pick_model() -> str | BaseLlm:
    """The model name or object, from the environment (see the module docstring)."""
    if name := os.environ.get("ADK_RX_MODEL"):
        return name
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return "gemini-2.5-flash"
    if os.environ.get("OPENAI_BASE_URL"):
        return "openai/" + os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    # Any number of sessions replay it; a question it does not hold gets the ones it does.
    return ReplayLlm(TRAJECTORY, reuse=True, fallback=OFFLINE_HINT)


def build(model: str | BaseLlm) -> LlmAgent:
    """The agent tree on ``model`` (the specialists use their parent's model)."""
    shipping = LlmAgent(
        name="shipping",
        description="Answers questions about deliveries: where an order is, when it arrives.",
        instruction=(
            "You handle shipping questions for Acme. Look the order up with lookup_order "
            "before answering; give the carrier, the tracking number and the delivery date. "
            "Be brief. Questions about money go back to support_root."
        ),
        tools=[lookup_order],
        output_key="shipping_answer",
    )
    billing = LlmAgent(
        name="billing",
        description="Handles charges and refunds.",
        instruction=(
            "You handle billing for Acme. Look the order up with lookup_order first. Refund "
            "with issue_refund only for damaged or missing items, at most the order total; "
            "the user must approve each refund. Be brief. "
            "The last order looked up: {last_order_id?}."
        ),
        tools=[lookup_order, FunctionTool(issue_refund, require_confirmation=True)],
        output_key="billing_answer",
    )
    return LlmAgent(
        name="support_root",
        model=model,
        description="The front desk of Acme support.",
        instruction=(
            "You are the front desk of Acme support. Transfer questions about deliveries to "
            "shipping and questions about charges or refunds to billing. Answer anything "
            "else yourself in one sentence."
        ),
        sub_agents=[shipping, billing],
    )


root_agent = build(pick_model())
