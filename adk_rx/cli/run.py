"""``adk-rx run``: terminal chat with an agent (being written)."""

from __future__ import annotations

import argparse
import sys

__all__ = ["run_command"]


def run_command(args: argparse.Namespace) -> int:
    """Runs ``adk-rx run``; returns the exit code."""
    print("adk-rx run: not available yet", file=sys.stderr)
    return 2
