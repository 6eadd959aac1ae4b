"""What goes into vector memory: a session cut into turns, a document cut into passages.

A session becomes one chunk per turn: the user's message and everything said until the next
one, one ``author: text`` line per event::

    user: my dog is called Rex          <- a turn starts at each user message
    helper: Nice name!
    user: and my cat is Tom             <- the next turn
    helper: Noted.

Left out: partial events (streamed fragments of an event that is stored whole), events
without text (function calls and responses, state-only events) and thought parts. A turn
longer than ``max_chars`` is cut at line, paragraph, sentence or word boundaries into several
chunks. Each chunk is keyed by a hash of its text and time, so adding a session again only
embeds the chunks that are new.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from adk_rx.events import Event
from adk_rx.sessions.session import Session

__all__ = ["DEFAULT_MAX_CHARS", "Chunk", "document_chunks", "session_chunks", "split_text"]

DEFAULT_MAX_CHARS = 2000
"""About 500 tokens: what small sentence models read whole (longer input is truncated)."""

_HEADING = re.compile(r"^#{1,6}\s")
_BOUNDARIES = ("\n\n", "\n", ". ", " ")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of text to embed and remember.

    Attributes:
        text: what is embedded, and what a search hands back.
        timestamp: when it was said (seconds; 0 for documents).
        key: identifies the chunk among its source's chunks (text and time hashed).
    """

    text: str
    timestamp: float
    key: str


def _chunk(text: str, timestamp: float) -> Chunk:
    key = hashlib.sha256(f"{timestamp!r}\x00{text}".encode()).hexdigest()
    return Chunk(text, timestamp, key)


def _said(event: Event) -> str:
    """The event's text for memory: '' for partial, thought-only and textless events."""
    if event.partial or event.content is None or not event.content.parts:
        return ""
    texts = [part.text for part in event.content.parts if part.text and not part.thought]
    return "\n".join(texts).strip()


def split_text(text: str, max_chars: int) -> list[str]:
    """``text`` cut into pieces of at most ``max_chars``, at the widest boundary that fits
    (paragraph, line, sentence, word; mid-word only for a word longer than ``max_chars``)."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > max_chars:
        end = max_chars
        for boundary in _BOUNDARIES:
            cut = rest.rfind(boundary, 0, max_chars + 1)
            if cut > 0:
                end = cut + len(boundary.rstrip(" "))  # a sentence keeps its full stop
                break
        pieces.append(rest[:end].strip())
        rest = rest[end:].strip()
    if rest:
        pieces.append(rest)
    return [piece for piece in pieces if piece]


def _pack(lines: list[str], max_chars: int, joiner: str = "\n") -> list[str]:
    """Lines joined by ``joiner`` into pieces of at most ``max_chars``."""
    pieces: list[str] = []
    current = ""
    for line in lines:
        for part in split_text(line, max_chars):
            if current and len(current) + len(joiner) + len(part) > max_chars:
                pieces.append(current)
                current = part
            else:
                current = f"{current}{joiner}{part}" if current else part
    if current:
        pieces.append(current)
    return pieces


def session_chunks(session: Session, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """The session's turns as chunks, oldest first (see the module docstring)."""
    turns: list[tuple[float, list[str]]] = []
    for event in session.events:
        text = _said(event)
        if not text:
            continue
        if event.author == "user" or not turns:
            turns.append((event.timestamp, []))
        turns[-1][1].append(f"{event.author}: {text}")
    return [
        _chunk(piece, timestamp) for timestamp, lines in turns for piece in _pack(lines, max_chars)
    ]


def document_chunks(text: str, *, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """A text or markdown document as passages: paragraphs packed up to ``max_chars``, a new
    passage at each markdown heading."""
    sections: list[list[str]] = [[]]
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if _HEADING.match(paragraph) and sections[-1]:
            sections.append([])
        sections[-1].append(paragraph)
    pieces = [piece for section in sections for piece in _pack(section, max_chars, "\n\n")]
    return [_chunk(piece, 0.0) for piece in pieces]
