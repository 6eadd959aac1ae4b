"""What the benchmark scripts print besides their figures.

* progress on stderr while they measure (``progress``), so a run is never silent;
* a verdict per aim (``verdict``): ``met`` or ``MISSED``, from the measured value and an aim
  written as ``"<= 100 us"`` or ``">= 300,000"``;
* where a google-adk figure comes from (``QUOTED``): the scripts do not run google-adk; its
  figures are quoted from one earlier measurement and are marked as such wherever they appear.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["QUOTED", "print_table", "progress", "repeat", "verdict"]

T = TypeVar("T")

QUOTED = (
    "google-adk figures marked (quoted) were measured once on google-adk 2.13 on a 2-vCPU "
    "machine like this project's, with the same scripted turn; this run did not measure them, "
    "so compare them as orders of magnitude only"
)


def progress(text: str) -> None:
    """One progress line on stderr (stdout keeps only the results)."""
    print(f"... {text}", file=sys.stderr, flush=True)


def repeat(label: str, fn: Callable[[], T], runs: int) -> list[T]:
    """Calls ``fn`` ``runs`` times, reporting each run on stderr."""
    results: list[T] = []
    for index in range(runs):
        progress(f"{label}: run {index + 1}/{runs}")
        results.append(fn())
    return results


_AIM = re.compile(r"^\s*(<=|>=|<|>)\s*([0-9][0-9,]*\.?[0-9]*)")


def verdict(value: float, aim: str) -> str:
    """``met`` / ``MISSED`` for ``value`` against ``aim`` (``"<= 1.5x"``); ``""`` without one."""
    match = _AIM.match(aim)
    if match is None:
        return ""
    op, number = match.group(1), float(match.group(2).replace(",", ""))
    met = {
        "<=": value <= number,
        ">=": value >= number,
        "<": value < number,
        ">": value > number,
    }[op]
    return "met" if met else "MISSED"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Left-aligned columns, the first one as wide as its longest cell."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, *rows]:
        print(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)
            ).rstrip()
        )
