"""``adk-rx eval AGENT EVALSET...``: score an agent on eval sets; exit 0 when every case passes.

Runs ``--parallel`` cases at once with a progress bar on stderr, prints a table per eval set
(one row per case, one column per metric: score / threshold), ``--print-detailed-results``
adds every turn's expected and actual tool calls and responses, writes google-adk's eval set
result JSON (``EvalSetResult``) beside each eval set (or in ``--results-dir``), and with
``--junit FILE`` a JUnit XML report for CI. Exit status: 0 every case passed, 1 a case failed,
2 bad usage (an unreadable set or config, an unknown metric).
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from adk_rx.errors import AdkRxError

__all__ = ["add_eval_parser", "eval_command"]

EXIT_FAILED = 1
EXIT_USAGE = 2


def add_eval_parser(commands: Any) -> None:
    """Adds the ``eval`` subcommand to the ``adk-rx`` parser."""
    parser = commands.add_parser(
        "eval",
        help="score an agent on google-adk eval sets (exit 0 when every case passes)",
        description="Run every case of each EVALSET (google-adk's *.evalset.json, or a folder "
        "of them) against AGENT on fresh sessions, score the metrics of the eval config "
        "(default tool_trajectory_avg_score 1.0 and response_match_score 0.8), and exit 0 "
        "when every case meets the thresholds, 1 otherwise.",
    )
    parser.add_argument("agent", metavar="AGENT", help="an agent folder, .py file or module")
    parser.add_argument("evalsets", metavar="EVALSET", nargs="+")
    parser.add_argument(
        "--config",
        metavar="CONFIG_JSON",
        help='google-adk\'s eval config, {"criteria": {metric: threshold | criterion}} '
        "(default: test_config.json beside each eval set, else the defaults)",
    )
    parser.add_argument(
        "--print-detailed-results", action="store_true", help="show every turn of every case"
    )
    parser.add_argument(
        "--results-dir", metavar="DIR", help="write the result JSON here (default: beside the set)"
    )
    parser.add_argument(
        "--parallel",
        "--concurrency",
        dest="parallel",
        type=_positive,
        default=4,
        metavar="N",
        help="cases run at once (default 4)",
    )
    parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report here")
    parser.add_argument(
        "--case-timeout", type=float, default=120.0, help="seconds per case (default 120)"
    )


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def eval_command(args: argparse.Namespace) -> int:
    """Runs ``adk-rx eval``; returns the exit status."""
    from adk_rx.evaluation.agent_evaluator import (
        find_eval_sets,
        load_eval_file,
        read_config_beside,
    )
    from adk_rx.evaluation.config import EvalConfig
    from adk_rx.evaluation.evaluator import evaluate
    from adk_rx.evaluation.junit import junit_xml
    from adk_rx.loading.loader import load_agent

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False)
    try:
        agent = load_agent(args.agent)
        config = EvalConfig.load(args.config) if args.config else None
        files = [f for target in args.evalsets for f in find_eval_sets(target)]
        sets = [(f, load_eval_file(f)) for f in files]
        configs = [config or EvalConfig.from_mapping(read_config_beside(f)) for f, _ in sets]
    except AdkRxError as exc:
        err.print(escape(f"error: {exc}"), style="bold red")  # brackets stay text
        return EXIT_USAGE
    results = []
    total = sum(len(eval_set.eval_cases) for _, eval_set in sets)
    with _progress(err, total) as advance:
        for (_, eval_set), eval_config in zip(sets, configs, strict=True):
            results.append(
                evaluate(
                    agent,
                    eval_set,
                    eval_config,
                    concurrency=args.parallel,
                    case_timeout=args.case_timeout,
                    on_case=advance,
                )
            )
    for (file, eval_set), result in zip(sets, results, strict=True):
        out.print(_table(file, result))
        if args.print_detailed_results:
            _details(out, result)
        written = _write(result.to_dict(), file, args.results_dir, eval_set.eval_set_id)
        out.print(escape(f"results: {written}"), style="dim")
    if args.junit:
        Path(args.junit).parent.mkdir(parents=True, exist_ok=True)
        Path(args.junit).write_text(junit_xml(results), encoding="utf-8")
        out.print(escape(f"junit: {args.junit}"), style="dim")
    return 0 if all(result.passed for result in results) else EXIT_FAILED


@contextlib.contextmanager
def _progress(err: Console, total: int) -> Iterator[Callable[[Any], None]]:
    """A progress bar of the cases on stderr; yields the callback that advances it."""
    bar = Progress(
        TextColumn("eval"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("cases"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = bar.add_task("eval", total=total)
    with bar:
        yield lambda _: bar.advance(task)


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
        problem = case.error or "; ".join(f"{m}: {e}" for m, e in case.metric_errors.items())
        verdict = "[green]PASS[/]" if case.passed else f"[red]FAIL[/] {escape(problem)}"
        if not case.passed and not problem and case.status.name == "NOT_EVALUATED":
            verdict = "[yellow]NOT EVALUATED[/]"
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
