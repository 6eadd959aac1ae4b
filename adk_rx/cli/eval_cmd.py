"""``adk-rx eval AGENT EVALSET...``: score an agent on eval sets; exit 0 when every case passes.

Prints a table per eval set (one row per case, one column per metric: score / threshold),
``--print-detailed-results`` adds every turn's expected and actual tool calls and responses,
and writes google-adk's eval set result JSON beside each eval set (or in ``--results-dir``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from adk_rx.errors import AdkRxError, ConfigurationError

__all__ = ["add_eval_parser", "eval_command"]

EXIT_FAILED = 1
EXIT_USAGE = 2


def add_eval_parser(commands: Any) -> None:
    """Adds the ``eval`` subcommand to the ``adk-rx`` parser."""
    parser = commands.add_parser(
        "eval",
        help="score an agent on google-adk eval sets (exit 0 when every case passes)",
        description="Run every case of each EVALSET (google-adk's *.evalset.json, or a folder "
        "of them) against AGENT on fresh sessions, score tool_trajectory_avg_score and "
        "response_match_score, and exit 0 when every case meets the thresholds, 1 otherwise.",
    )
    parser.add_argument("agent", metavar="AGENT", help="an agent folder, .py file or module")
    parser.add_argument("evalsets", metavar="EVALSET", nargs="+")
    parser.add_argument(
        "--config",
        metavar="CONFIG_JSON",
        help='thresholds, {"criteria": {metric: threshold}} (default: test_config.json beside '
        "each eval set, else 1.0 and 0.8)",
    )
    parser.add_argument(
        "--print-detailed-results", action="store_true", help="show every turn of every case"
    )
    parser.add_argument(
        "--results-dir", metavar="DIR", help="write the result JSON here (default: beside the set)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="cases at once (default 4)")
    parser.add_argument(
        "--case-timeout", type=float, default=120.0, help="seconds per case (default 120)"
    )


def eval_command(args: argparse.Namespace) -> int:
    """Runs ``adk-rx eval``; returns the exit status."""
    from adk_rx.cli.loader import load_agent
    from adk_rx.evaluation.agent_evaluator import (
        find_eval_sets,
        load_eval_file,
        read_config_beside,
    )
    from adk_rx.evaluation.evaluator import criteria_from_config, evaluate

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False)
    try:
        agent = load_agent(args.agent)
        config = _read_config(args.config) if args.config else None
        files = [f for target in args.evalsets for f in find_eval_sets(target)]
        sets = [(f, load_eval_file(f)) for f in files]
        criteria = [criteria_from_config(config or read_config_beside(f)) for f, _ in sets]
    except AdkRxError as exc:
        err.print(escape(f"error: {exc}"), style="bold red")  # brackets stay text
        return EXIT_USAGE
    all_passed = True
    for (file, eval_set), thresholds in zip(sets, criteria, strict=True):
        result = evaluate(
            agent,
            eval_set,
            thresholds,
            concurrency=args.concurrency,
            case_timeout=args.case_timeout,
        )
        all_passed &= result.passed
        out.print(_table(file, result))
        if args.print_detailed_results:
            _details(out, result)
        written = _write(result.to_dict(), file, args.results_dir, eval_set.eval_set_id)
        out.print(escape(f"results: {written}"), style="dim")
    return 0 if all_passed else EXIT_FAILED


def _read_config(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read the eval config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigurationError(f"{path}: the eval config must be a JSON object")
    return data


def _table(file: Path, result: Any) -> Table:
    metrics = list(result.criteria)
    table = Table(title=escape(f"{result.eval_set_id} ({file})"), title_justify="left")
    table.add_column("case")
    for name in metrics:
        table.add_column(escape(name), justify="right")
    table.add_column("result")
    for case in result.cases:
        cells = [
            f"{case.scores[m]:.2f} / {case.thresholds[m]:.2f}" if m in case.scores else "-"
            for m in metrics
        ]
        verdict = "[green]PASS[/]" if case.passed else f"[red]FAIL[/] {escape(case.error or '')}"
        table.add_row(escape(case.eval_id), *cells, verdict)
    passed = sum(c.passed for c in result.cases)
    table.caption = f"{passed} of {len(result.cases)} cases passed"
    return table


def _details(out: Console, result: Any) -> None:
    from adk_rx.evaluation.agent_evaluator import describe_case

    for case in result.cases:
        out.print(describe_case(case, all_turns=True), markup=False)


def _write(data: dict[str, Any], file: Path, results_dir: str | None, set_id: str) -> Path:
    folder = Path(results_dir) if results_dir else file.parent
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{set_id}.evalset_result.json"
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target
