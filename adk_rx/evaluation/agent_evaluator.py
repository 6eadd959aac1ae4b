"""``AgentEvaluator``: eval sets as pytest tests, the way google-adk users write them.

.. code-block:: python

    from adk_rx.evaluation import AgentEvaluator

    def test_support_desk():
        AgentEvaluator.evaluate("examples/support_desk", "examples/support_desk/evals")

A failing case fails the test with an ``AssertionError`` that shows, per turn, the expected
and the actual tool calls and responses. Inside a running event loop (an ``async def`` test),
``evaluate`` returns an awaitable instead, so google-adk's ``await AgentEvaluator.evaluate(...)``
works unchanged.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.case_result import CaseResult, EvalResult, TurnResult
from adk_rx.evaluation.config import EvalConfig, criteria_from_config
from adk_rx.evaluation.evalset import EvalCase, EvalInvocation, EvalSet, IntermediateData
from adk_rx.evaluation.evaluator import evaluate
from adk_rx.loading.loader import load_agent

__all__ = [
    "AgentEvaluator",
    "describe_case",
    "describe_failures",
    "find_eval_sets",
    "load_eval_file",
    "read_config_beside",
]

CONFIG_FILE = "test_config.json"


class AgentEvaluator:
    """Runs eval sets against an agent and fails the calling test when a case fails."""

    @staticmethod
    def evaluate(
        agent_module: str | BaseAgent,
        eval_dataset_file_path_or_dir: str | Path,
        num_runs: int = 1,
        *,
        criteria: Mapping[str, Any] | None = None,
    ) -> Awaitable[None] | None:
        """Evaluates the agent on every eval set found at the path.

        Args:
            agent_module: an agent folder, ``.py`` file or module path exposing ``root_agent``
                (as ``adk-rx run`` takes it), or the agent itself.
            eval_dataset_file_path_or_dir: an ``*.evalset.json`` (or google-adk's older
                ``*.test.json``) file, or a folder searched for them. Thresholds come from a
                ``test_config.json`` beside each file, else the defaults.
            num_runs: how many times each set runs (every run must pass).
            criteria: thresholds that override the config files.

        Raises:
            AssertionError: a case failed; the message shows what differed.
        """

        def work() -> None:
            agent = (
                agent_module if isinstance(agent_module, BaseAgent) else load_agent(agent_module)
            )
            failures: list[str] = []
            for path in find_eval_sets(eval_dataset_file_path_or_dir):
                eval_set = load_eval_file(path)
                config = (
                    EvalConfig(criteria=criteria_from_config({"criteria": criteria}))
                    if criteria
                    else EvalConfig.from_mapping(read_config_beside(path))
                )
                for _ in range(num_runs):
                    result = evaluate(agent, eval_set, config)
                    if not result.passed:
                        failures.append(f"{path}:\n{describe_failures(result)}")
            if failures:
                raise AssertionError("\n\n".join(failures))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            work()
            return None
        return asyncio.to_thread(work)  # never block the test's own loop


def find_eval_sets(path: str | Path) -> list[Path]:
    """The eval set files at ``path``: the file itself, or those below the folder, sorted.

    Raises:
        ConfigurationError: the path does not exist or holds no eval set.
    """
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise ConfigurationError(f"{path}: no such eval set file or folder")
    found = sorted({*root.rglob("*.evalset.json"), *root.rglob("*.test.json")})
    if not found:
        raise ConfigurationError(f"{path}: no *.evalset.json or *.test.json file in it")
    return found


def load_eval_file(path: str | Path) -> EvalSet:
    """An eval set file, or google-adk's older list-of-queries ``*.test.json`` format."""
    file = Path(path)
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read the eval set {file}: {exc}") from exc
    if isinstance(data, list):
        return _from_legacy(file, data)
    return EvalSet.load(file)


def describe_failures(result: EvalResult) -> str:
    """A readable account of every failed case: scores, then each turn that differed."""
    return "\n".join(describe_case(case) for case in result.cases if not case.passed)


def describe_case(case: CaseResult, *, all_turns: bool = False) -> str:
    """A case's scores, then each turn that differed (every turn with ``all_turns``)."""
    if case.error:
        return f"case {case.eval_id!r} failed to run: {case.error}"
    scores = ", ".join(
        f"{name} {_score(case.scores.get(name))} (needs {threshold:.2f})"
        for name, threshold in case.thresholds.items()
    )
    lines = [f"case {case.eval_id!r}: {scores}"]
    lines += [f"  {name} could not score: {error}" for name, error in case.metric_errors.items()]
    for number, turn in enumerate(case.turns, 1):
        lines += _turn_lines(number, turn, all_turns)
    return "\n".join(lines)


def _score(score: float | None) -> str:
    return "not evaluated" if score is None else f"{score:.2f}"


def _turn_lines(number: int, turn: TurnResult, all_turns: bool) -> list[str]:
    lines: list[str] = []
    if all_turns or turn.trajectory_match is False:
        verdict = "tool calls match" if turn.trajectory_match else "tool calls differ"
        lines.append(f"  turn {number} ({turn.user_text!r}): {verdict}")
        lines.append(f"    - expected: {_calls(turn.expected_tool_uses)}")
        lines.append(f"    + actual:   {_calls(turn.actual_tool_uses)}")
    if turn.response_score is not None and turn.expected_response is not None:
        lines.append(f"  turn {number} response (ROUGE-1 F1 {turn.response_score:.2f}):")
        lines.append(f"    - expected: {turn.expected_response!r}")
        lines.append(f"    + actual:   {turn.actual_response!r}")
    return lines


def _calls(calls: list[Any]) -> str:
    return (
        "["
        + ", ".join(f"{c.name}({json.dumps(c.args or {}, sort_keys=True)})" for c in calls)
        + "]"
    )


def read_config_beside(path: Path) -> dict[str, Any] | None:
    """The ``test_config.json`` beside an eval set file, if there is one."""
    config = path.parent / CONFIG_FILE
    if not config.is_file():
        return None
    try:
        return json.loads(config.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigurationError(f"{config} is not JSON: {exc}") from exc


def _from_legacy(file: Path, entries: list[Any]) -> EvalSet:
    from google.genai import types

    turns = []
    for entry in entries:
        if not isinstance(entry, Mapping) or "query" not in entry:
            raise ConfigurationError(f"{file}: an entry without a query: {entry!r}")
        uses = [
            types.FunctionCall(name=u.get("tool_name"), args=u.get("tool_input") or {})
            for u in entry.get("expected_tool_use") or []
        ]
        reference = entry.get("reference")
        turns.append(
            EvalInvocation(
                user_content=types.Content(role="user", parts=[types.Part(text=entry["query"])]),
                final_response=types.Content(role="model", parts=[types.Part(text=reference)])
                if isinstance(reference, str)
                else None,
                intermediate_data=IntermediateData(tool_uses=uses),
            )
        )
    case = EvalCase(eval_id=file.name.removesuffix(".test.json"), conversation=turns)
    return EvalSet(eval_set_id=case.eval_id, eval_cases=[case])
