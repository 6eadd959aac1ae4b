"""Every example runs offline, as a user runs it (a subprocess), and shows what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def run(*args: str, timeout: float = 120) -> str:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.pop("OPENAI_BASE_URL", None)
    env["ADK_RX_ALLOW_REAL_MODEL_CALLS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=env,
        text=True,
        capture_output=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_quickstart_runs() -> None:
    assert run(str(EXAMPLES / "quickstart.py")).strip()


def test_the_testing_example_is_a_passing_pytest_file() -> None:
    out = run("-m", "pytest", str(EXAMPLES / "testing"), "-q", "-p", "no:cacheprovider")
    assert "2 passed" in out


def test_virtual_time_retries_and_deadline_happen_at_their_virtual_seconds() -> None:
    out = run(str(EXAMPLES / "virtual_time.py")).splitlines()
    assert out[:3] == ["t=0s retry in 1s", "t=1s retry in 2s", "t=3s answer: back online"]
    assert out[3] == "t=29.999s still waiting"
    assert out[4].startswith("t=30s the run timed out")
    assert out[5] == "stored: ['user', 'TIMEOUT']"


def test_dispose_after_k_reports_what_the_producer_did() -> None:
    out = dict(
        line.split(": ", 1) for line in run(str(EXAMPLES / "dispose_after_k.py"), "7").splitlines()
    )
    assert out["received"] == "7"
    assert out["producer_finally_ran"] == "True"
    assert out["stored"] == "['user', 'CANCELLED']"
    assert int(out["produced_after_dispose"]) < 1000 - int(out["produced_at_dispose"])


def test_structured_output_validates_after_one_retry() -> None:
    out = run(str(EXAMPLES / "structured_output.py"))
    assert "mime type sent: 'application/json'" in out
    assert "model calls: 2" in out
    assert "Ticket(category='billing', priority=1, summary='Charged twice for 1234')" in out


def test_workflow_loops_until_the_reviewer_approves() -> None:
    out = run(str(EXAMPLES / "workflow.py"))
    assert "reviser: Our kettle boils water in 90 seconds." in out
    assert "reviewer: FunctionCall(exit_loop, {})" in out
    assert out.strip().endswith("final draft: Our kettle boils water in 90 seconds.")


def test_asyncio_service_runs_requests_concurrently_and_cancels_one_by_timeout() -> None:
    out = run(str(EXAMPLES / "asyncio_service.py"))
    assert "answers: ['It is sunny.', 'It is sunny.', 'It is sunny.']" in out
    assert "dee's request timed out: True" in out
    assert "dee's session ends with: CANCELLED" in out
    assert "most lookups running at once: 1\n" not in out  # the tools overlapped


def test_the_offline_evaluation_example_passes_its_recorded_and_simulated_cases() -> None:
    out = run(str(EXAMPLES / "evaluation_offline.py"))
    assert "recorded cases: 3 of 3 passed" in out
    assert "simulated case: passed" in out


def test_context_cache_reads_the_handbook_from_the_cache_every_turn() -> None:
    lines = run(str(EXAMPLES / "context_cache.py")).splitlines()

    assert [line.split(":")[0] for line in lines] == ["turn 1", "turn 2", "turn 3"]
    assert all(" cached)]" in line for line in lines)


def test_the_governing_example_hits_each_limit() -> None:
    out = run(str(EXAMPLES / "governing.py")).splitlines()
    assert out[0] == "1. budget: BudgetExceededError(max_tool_calls, allowed=2, used=2)"
    assert "BUDGET_EXCEEDED" in out[1] and "'used': 2" in out[1]
    assert out[2] == "   refused call answered: {'error': 'budget exceeded: max_tool_calls'}"
    assert out[3] == "   next turn: ok"
    assert out[4].startswith("2. cost: BudgetExceededError(max_cost")
    assert out[6] == "3. deadline: {'error': \"tool 'crunch' timed out after 2 s\"}"
    assert out[7] == "4. bulkhead: ['start 1', 'end 1', 'start 2', 'end 2']"
    assert out[8] == "5. scoped exit: ['publish: chapter 1 out', 'publish: chapter 2 out']"
    assert out[9].startswith("6. dedupe: ran 1 time(s); repeat {'deduplicated_from': ")
