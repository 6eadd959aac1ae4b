"""A data question answered by running code, offline: which region sold the most?

The user's spreadsheet (``sales.csv``, beside this file) is saved as an artifact of the
session before the agent runs, as an upload would be. The agent has a code executor: the
model answers with a Python block; the block runs in a sandbox whose working directory holds
the session's artifacts, so it reads ``sales.csv``, prints the totals and writes
``totals.csv``, which comes back as a new artifact. The model is called again with the
printed output and answers from it. The model is scripted (no API key), but its final answer
is read from the real output of the code.

Run it (one command)::

    adk-rx run examples/sales_analyst -m "Which region sold the most?" --in-memory

The executor is a :class:`~adk_rx.code_executors.SandboxedCodeExecutor` without network; on
a machine that cannot take the network away, the example says so and runs with it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from google.genai import types

from adk_rx import CallbackContext, LlmAgent, LlmRequest, SandboxUnavailableError
from adk_rx.code_executors import SandboxedCodeExecutor
from adk_rx.testing import ScriptedLlm

SALES = Path(__file__).with_name("sales.csv")

CODE = """```python
import csv
totals = {}
with open("sales.csv") as f:
    for row in csv.DictReader(f):
        amount = int(row["units"]) * float(row["unit_price"])
        totals[row["region"]] = totals.get(row["region"], 0) + amount
with open("totals.csv", "w") as out:
    out.write("region,revenue\\n")
    for region, revenue in sorted(totals.items(), key=lambda kv: -kv[1]):
        out.write(f"{region},{revenue:.2f}\\n")
        print(f"{region}: {revenue:.2f}")
```"""


def _answer(request: LlmRequest) -> str:
    """The model's second answer, from the output the code printed (the last message)."""
    output = request.contents[-1].parts[0].text or ""  # type: ignore[index]
    best = re.search(r"^(\w+): ([\d.]+)$", output, re.MULTILINE)
    if best is None:
        return "The code did not print the totals."
    return (
        f"{best.group(1)} sold the most: {best.group(2)} in revenue. "
        "The totals per region are in the artifact totals.csv."
    )


def upload_sales(callback_context: CallbackContext) -> None:
    """Saves the spreadsheet as an artifact of the session, once (an upload, offline)."""
    if "sales.csv" not in callback_context.list_artifacts().run():
        data = types.Part.from_bytes(data=SALES.read_bytes(), mime_type="text/csv")
        callback_context.save_artifact("sales.csv", data).run()


def _executor() -> SandboxedCodeExecutor:
    try:
        return SandboxedCodeExecutor(timeout=30, memory_mb=512, cpu_seconds=10)
    except SandboxUnavailableError as exc:
        print(f"note: {exc}", file=sys.stderr)
        return SandboxedCodeExecutor(timeout=30, memory_mb=512, cpu_seconds=10, network=True)


root_agent = LlmAgent(
    name="analyst",
    model=ScriptedLlm(
        [f"I will total the revenue per region.\n{CODE}\nThe totals follow.", _answer] * 20
    ),
    instruction="Answer questions about the user's files by writing and running Python.",
    code_executor=_executor(),
    before_agent_callback=upload_sales,
)
