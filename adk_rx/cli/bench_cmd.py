"""``adk-rx bench AGENT``: turns/s, events/s, latency percentiles and CPU per turn.

A progress bar shows on a terminal (stderr), never when the output is piped. ``--json``
writes every figure and each turn's timing; ``--plot`` draws a latency histogram and the
throughput over time (matplotlib, the ``plot`` extra).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from adk_rx.agents.base import BaseAgent
from adk_rx.errors import AdkRxError

__all__ = ["add_bench_parser", "bench_command", "default_message"]

EXIT_USAGE = 2
DEFAULT_MESSAGE = "Hello!"


def add_bench_parser(commands: Any) -> None:
    """Adds the ``bench`` subcommand to the ``adk-rx`` parser."""
    parser = commands.add_parser(
        "bench",
        help="measure an agent's throughput and latency",
        description="Run TURNS turns of AGENT on fresh in-memory sessions, CONCURRENCY in "
        "flight at once, and print turns/s, events/s, p50/p95/p99 time to first event and to "
        "the end, and CPU per turn. Loading the agent and one warm-up turn are not measured.",
    )
    parser.add_argument("agent", metavar="AGENT", help="an agent folder, .py file or module")
    parser.add_argument("-n", "--turns", type=int, default=100, help="turns (default 100)")
    parser.add_argument(
        "-c", "--concurrency", type=int, default=1, help="turns in flight at once (default 1)"
    )
    parser.add_argument(
        "-m",
        "--message",
        help="the user message (default: the first one a replayed recording answers, else "
        f"{DEFAULT_MESSAGE!r})",
    )
    parser.add_argument(
        "--replay",
        metavar="FILE",
        help="serve the model from a RecordingLlm JSONL file (every turn replays it)",
    )
    parser.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    parser.add_argument("--plot", metavar="OUT.png", help="latency histogram + throughput chart")


def bench_command(args: argparse.Namespace) -> int:
    """Runs ``adk-rx bench``; returns the exit status (1 when a turn failed)."""
    from adk_rx.cli.bench import run_bench
    from adk_rx.cli.models import check_override, override_model
    from adk_rx.loading.loader import app_name_for, load_agent

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False)
    try:
        if args.plot:
            _require_matplotlib()
        override = override_model(None, args.replay, reuse=True)
        agent = load_agent(args.agent)
        if override is not None:
            check_override(agent, override)
        message = args.message or default_message(agent)
        with _progress(args.turns) as advance:
            result = run_bench(
                agent,
                app_name=app_name_for(args.agent, agent),
                turns=args.turns,
                concurrency=args.concurrency,
                message=message,
                on_turn=advance,
            )
    except AdkRxError as exc:
        err.print(escape(f"error: {exc}"), style="bold red")  # brackets stay text
        return EXIT_USAGE
    figures = result.to_dict()
    out.print(_table(figures))
    if result.errors:
        first = next(t.error for t in result.timings if t.error)
        err.print(escape(f"{result.errors} turns failed; the first: {first}"), style="bold red")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.plot:
        from adk_rx.cli.bench_plot import plot

        plot(result, args.plot)
    return 1 if result.errors else 0


def default_message(agent: BaseAgent) -> str:
    """The first user message the root agent's replayed recording answers, else "Hello!"."""
    from adk_rx.agents.llm import LlmAgent
    from adk_rx.models.recording import ReplayLlm

    try:
        model = agent.canonical_model if isinstance(agent, LlmAgent) else None
    except AdkRxError:  # no model here: the run says so
        model = None
    if isinstance(model, ReplayLlm) and model.recorded_user_messages:
        return model.recorded_user_messages[0]
    return DEFAULT_MESSAGE


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401  # pyright: ignore[reportUnusedImport]
    except ImportError as exc:
        from adk_rx.errors import ConfigurationError

        raise ConfigurationError("--plot needs matplotlib: pip install 'adk_rx[plot]'") from exc


class _progress:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing."""

    def __init__(self, total: int) -> None:
        self._total = total
        self._bar: Any = None

    def __enter__(self) -> Any:
        if not sys.stderr.isatty():
            return lambda _timing: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self._bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.__enter__()
        task = self._bar.add_task("turns", total=self._total)
        return lambda _timing: self._bar.advance(task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)


def _table(figures: dict[str, Any]) -> Table:
    table = Table(
        title=escape(
            f"{figures['agent']}: {figures['turns']} turns, {figures['concurrency']} at a time"
        ),
        title_justify="left",
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("turns/s", f"{figures['turns_per_second']:.1f}")
    table.add_row("events/s", f"{figures['events_per_second']:.1f}")
    for name, key in (("time to first event", "time_to_first_event_ms"), ("turn", "latency_ms")):
        p = figures[key]
        table.add_row(
            f"{name} p50 / p95 / p99", f"{p['p50']:.2f} / {p['p95']:.2f} / {p['p99']:.2f} ms"
        )
    table.add_row("CPU per turn", f"{figures['cpu_ms_per_turn']:.2f} ms")
    table.add_row("errors", str(figures["errors"]))
    table.add_row("wall time", f"{figures['wall_seconds']:.3f} s")
    return table
