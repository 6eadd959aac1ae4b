"""``--allow-origins``: the other origins whose pages may call the API (CORS), off by default.

An entry is an origin (``https://ui.example.com``), ``*`` (any origin), or ``regex:PATTERN``
matched against the whole Origin, as in google-adk's ``--allow_origins``. A request from an
allowed origin passes the Origin check and gets CORS headers (preflights included, which need
no bearer token); everything else about it is checked as usual: its Host must still be one of
the server's names, and with tokens on it still needs one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

__all__ = ["AllowedOrigins", "with_cors"]

REGEX_PREFIX = "regex:"


@dataclass(frozen=True, slots=True)
class AllowedOrigins:
    """Literal origins and one combined pattern."""

    literal: tuple[str, ...]
    pattern: str | None

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowedOrigins:
        """Splits ``--allow-origins`` entries into literal origins and ``regex:`` patterns."""
        literal: list[str] = []
        patterns: list[str] = []
        for entry in (e.strip() for e in entries):
            if entry.startswith(REGEX_PREFIX):
                if entry[len(REGEX_PREFIX) :]:
                    patterns.append(entry[len(REGEX_PREFIX) :])
            elif entry:
                literal.append(entry.rstrip("/"))
        return cls(tuple(literal), "|".join(f"(?:{p})" for p in patterns) or None)

    def allows(self, origin: str) -> bool:
        """True when ``origin`` is listed, matches a pattern, or ``*`` is listed."""
        if "*" in self.literal or origin in self.literal:
            return True
        return self.pattern is not None and re.fullmatch(self.pattern, origin) is not None


def with_cors(app: ASGIApp, origins: AllowedOrigins) -> ASGIApp:
    """``app`` behind Starlette's CORS middleware for ``origins`` (any method and header)."""
    return CORSMiddleware(
        app,
        allow_origins=list(origins.literal),
        allow_origin_regex=origins.pattern,
        allow_methods=["*"],
        allow_headers=["*"],
        expose_headers=["Location"],
    )
