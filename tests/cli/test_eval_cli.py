"""``adk-rx eval`` for CI: exit codes, ``--parallel``, ``--junit``, google-adk's result JSON,
a progress bar, and a judged metric whose judge the agent's folder registers."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from google.adk.evaluation.eval_result import EvalSetResult

from tests.cli.test_run import SUPPORT_DESK, _env, adk_rx

EVALS = SUPPORT_DESK / "evals"

# Two cases whose tool waits for the other case's call: they pass only when run together.
TOGETHER_AGENT = '''
import threading
from google.genai import types
from adk_rx import LlmAgent, LlmRegistry, LlmResponse
from adk_rx.testing import ScriptedLlm

both = threading.Barrier(2, timeout=20)

def meet(who: str) -> dict:
    """Waits for the other case."""
    both.wait()
    return {"met": who}

def answer(request):
    part = request.contents[-1].parts[0]
    if part.function_response is not None:
        return LlmResponse.text("met " + part.function_response.response["met"])
    call = types.FunctionCall(name="meet", args={"who": part.text})
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))

root_agent = LlmAgent(name="together", model=ScriptedLlm([answer] * 20), tools=[meet])

def judge(request):
    prompt = request.contents[0].parts[0].text
    label = "valid" if '"Agent response": met ann' in prompt else "invalid"
    return LlmResponse.text('{"reasoning": "-", "is_the_agent_response_valid": "%s"}' % label)

LlmRegistry.register("folder-judge", lambda name: ScriptedLlm([judge] * 20, model=name))
'''


def _case(eval_id: str, who: str) -> dict[str, object]:
    return {
        "eval_id": eval_id,
        "conversation": [
            {
                "user_content": {"role": "user", "parts": [{"text": who}]},
                "final_response": {"role": "model", "parts": [{"text": f"met {who}"}]},
                "intermediate_data": {"tool_uses": [{"name": "meet", "args": {"who": who}}]},
            }
        ],
    }


def together(tmp_path: Path, criteria: dict[str, object] | None = None) -> tuple[Path, Path]:
    folder = tmp_path / "together"
    folder.mkdir()
    (folder / "agent.py").write_text(TOGETHER_AGENT)
    evalset = {"eval_set_id": "pair", "eval_cases": [_case("ann", "ann"), _case("bob", "bob")]}
    (folder / "pair.evalset.json").write_text(json.dumps(evalset))
    if criteria is not None:
        (folder / "test_config.json").write_text(json.dumps({"criteria": criteria}))
    return folder, folder / "pair.evalset.json"


def test_parallel_cases_run_at_once_and_results_load_as_google_adks_eval_set_result(
    tmp_path: Path,
) -> None:
    folder, evalset = together(tmp_path)

    done = adk_rx(tmp_path, "eval", str(folder), str(evalset), "--parallel", "2")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 of 2 cases passed" in done.stdout
    written = folder / "pair.evalset_result.json"
    loaded = EvalSetResult.model_validate_json(written.read_text())
    assert [c.eval_id for c in loaded.eval_case_results] == ["ann", "bob"]
    assert [c.final_eval_status.value for c in loaded.eval_case_results] == [1, 1]
    first = loaded.eval_case_results[0].eval_metric_result_per_invocation[0]
    assert first.actual_invocation.final_response.parts[0].text == "met ann"  # type: ignore[union-attr,index]


def test_junit_has_a_testcase_per_case_and_failures_carry_the_scores(tmp_path: Path) -> None:
    data = json.loads((EVALS / "support_desk.evalset.json").read_text())
    data["eval_cases"][1]["conversation"][0]["final_response"]["parts"][0]["text"] = "Nope."
    changed = tmp_path / "changed.evalset.json"
    changed.write_text(json.dumps(data))
    report = tmp_path / "reports" / "eval.xml"

    done = adk_rx(
        tmp_path, "eval", str(SUPPORT_DESK), str(changed), "--junit", str(report),
        "--results-dir", str(tmp_path),
    )  # fmt: skip

    assert done.returncode == 1, done.stderr
    root = ET.parse(report).getroot()
    assert (root.tag, root.get("tests"), root.get("failures"), root.get("errors")) == (
        "testsuites", "3", "1", "0"
    )  # fmt: skip
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "support_desk"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["where_is_my_order", "refund_asks_for_confirmation", "refund_approved"]
    failure = cases["refund_asks_for_confirmation"].find("failure")
    assert failure is not None
    assert "response_match_score 0.00/0.80" in (failure.get("message") or "")
    assert "tool_trajectory_avg_score 1.00/1.00" in (failure.get("message") or "")
    assert "'Nope.'" in (failure.text or "")
    assert cases["where_is_my_order"].find("failure") is None


def test_a_judged_metric_uses_the_judge_the_agents_folder_registers(tmp_path: Path) -> None:
    criteria = {
        "final_response_match_v2": {
            "threshold": 1.0,
            "judge_model_options": {"judge_model": "folder-judge", "num_samples": 3},
        }
    }
    folder, evalset = together(tmp_path, criteria)

    done = adk_rx(tmp_path, "eval", str(folder), str(evalset), "--junit", str(tmp_path / "j.xml"))

    assert done.returncode == 1, done.stdout + done.stderr  # the judge finds bob's answer invalid
    assert "1 of 2 cases passed" in done.stdout
    result = json.loads((folder / "pair.evalset_result.json").read_text())
    scores = [c["overall_eval_metric_results"][0]["score"] for c in result["eval_case_results"]]
    assert scores == [1.0, 0.0]


def test_usage_errors_exit_2_with_the_reason(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"criteria": {"safety_v1": 0.8}}))

    cloud = adk_rx(tmp_path, "eval", str(SUPPORT_DESK), str(EVALS), "--config", str(config))
    zero = adk_rx(tmp_path, "eval", str(SUPPORT_DESK), str(EVALS), "--parallel", "0")

    assert cloud.returncode == 2 and "Vertex AI" in cloud.stderr
    assert zero.returncode == 2 and "--parallel" in zero.stderr


def test_a_progress_bar_counts_the_cases_on_a_terminal(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_rx.cli", "eval", str(SUPPORT_DESK), str(EVALS),
         "--results-dir", str(tmp_path)],
        cwd=tmp_path, env={**_env(), "COLUMNS": "100"}, stdout=subprocess.DEVNULL,
        stderr=secondary, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(secondary)
    seen = b""
    try:
        while select.select([primary], [], [], 60)[0]:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
    finally:
        process.wait(timeout=60)
        os.close(primary)

    assert process.returncode == 0
    assert b"cases" in seen and b"/3" in seen
