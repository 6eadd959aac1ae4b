"""The graph workflow example runs offline in one command and takes the route it promises."""

from __future__ import annotations

import json

from tests.examples.test_examples import EXAMPLES, run


def _events(message: str) -> list[dict[str, object]]:
    out = run(
        "-m",
        "adk_rx.cli",
        "run",
        str(EXAMPLES / "order_graph"),
        "-m",
        message,
        "--in-memory",
        "--jsonl",
    )
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _outputs(events: list[dict[str, object]]) -> dict[str, object]:
    return {
        str(e["nodeInfo"]["path"]).rsplit("/", 1)[-1]: e["output"]  # type: ignore[index]
        for e in events
        if "output" in e
    }


def test_a_refund_gathers_facts_in_parallel_retries_and_lets_the_agent_decide() -> None:
    events = _events("I want a refund for order 42")

    outputs = _outputs(events)
    assert outputs["facts@1"] == {
        "fetch_order": {"order_id": 42, "item": "kettle", "paid": 39.0, "days_ago": 12},
        "check_policy": {"refund_window_days": 30},
    }
    assert outputs["reply@1"] == "Your refund is on its way (the kettle was bought 12 days ago)."
    assert [e["errorCode"] for e in events if "errorCode" in e] == ["ConnectionError"]  # retried
    assert [e["author"] for e in events if e["author"] != "order_desk"] == ["decider"]


def test_a_status_question_takes_the_other_route() -> None:
    outputs = _outputs(_events("where is order 7?"))
    assert outputs == {
        "classify@1": {"order_id": 7, "message": "where is order 7?"},
        "order_status@1": "Order 7 has shipped.",
    }


def test_the_human_readable_run_shows_each_node() -> None:
    out = run(
        "-m",
        "adk_rx.cli",
        "run",
        str(EXAMPLES / "order_graph"),
        "-m",
        "refund order 42",
        "--in-memory",
    )
    assert "◆ facts:" in out and "decider: approve" in out and "◆ reply: Your refund" in out
