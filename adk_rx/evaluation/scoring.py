"""The two scores of an eval case: the tool trajectory and the final response.

``tool_trajectory_avg_score``: per turn 1.0 when the agent called exactly the expected tools
with exactly the expected arguments, in the expected order, else 0.0; averaged over turns.
``response_match_score``: ROUGE-1 F1 of the final text against the expected one, as
google-adk computes it (lowercased alphanumeric tokens, Porter-stemmed when longer than three
characters, unigram overlap), averaged over the turns that expect a response.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import snowballstemmer
from google.genai import types

__all__ = ["rouge1_f1", "tokens", "trajectory_matches"]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_STEMMER = snowballstemmer.stemmer("porter")


def tokens(text: str) -> list[str]:
    """ROUGE's tokens: lowercase alphanumeric words, stemmed when longer than 3 letters."""
    words = _NON_ALNUM.sub(" ", text.lower()).split()
    return [_STEMMER.stemWord(w) if len(w) > 3 else w for w in words]


def rouge1_f1(candidate: str, reference: str) -> float:
    """The ROUGE-1 F1 of ``candidate`` against ``reference`` (0.0 when either is empty)."""
    got, want = Counter(tokens(candidate)), Counter(tokens(reference))
    overlap = sum((got & want).values())
    if not overlap:
        return 0.0
    precision = overlap / sum(got.values())
    recall = overlap / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def trajectory_matches(
    actual: Sequence[types.FunctionCall], expected: Sequence[types.FunctionCall]
) -> bool:
    """True when the calls have the same names and arguments, in the same order."""
    return [_call_key(c) for c in actual] == [_call_key(c) for c in expected]


def _call_key(call: types.FunctionCall) -> tuple[str, Any]:
    return call.name or "", _normalized(call.args or {})


def _normalized(value: Any) -> Any:
    # 3 and 3.0 are the same argument; JSON round trips may turn one into the other.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    return value
