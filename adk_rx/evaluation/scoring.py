"""ROUGE-1 F1, tokenized exactly as google-adk 2.13's ``response_match_score`` tokenizes.

google-adk scores with ``rouge_score``'s ROUGE-1 and its own Unicode-aware tokenizer:

1. NFKC-normalize and lowercase the text;
2. CJK characters become words of their own; Thai, Lao, Khmer and Myanmar letters start a
   new word at each base letter (combining marks stay attached); any other character that
   is neither alphanumeric nor a combining mark separates words;
3. ASCII words go through ``rouge_score``'s default tokenizer (``[a-z0-9]`` runs, Porter-
   stemmed by NLTK's stemmer when longer than three letters); other words are kept as they
   are.

F1 = 2PR/(P+R) with P = overlap / candidate tokens and R = overlap / reference tokens (0.0
when there is no overlap). NLTK's Porter stemmer differs from the original algorithm
("used" -> "use", not "us"), so it is NLTK's that runs here.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from typing import Any

__all__ = ["rouge1_f1", "tokens"]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@functools.cache
def _stemmer() -> Any:
    from nltk.stem.porter import PorterStemmer  # imported on first use: it takes a second

    return PorterStemmer()


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3040 <= code <= 0x309F
        or 0x30A0 <= code <= 0x30FF
        or 0xAC00 <= code <= 0xD7AF
    )


def _is_non_spaced(char: str) -> bool:
    code = ord(char)
    return 0x0E00 <= code <= 0x0EFF or 0x1780 <= code <= 0x17FF or 0x1000 <= code <= 0x109F


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def _ascii_tokens(word: str) -> list[str]:
    found = [w for w in _NON_ALNUM.sub(" ", word.lower()).split() if w]
    return [_stemmer().stem(w) if len(w) > 3 else w for w in found]


def tokens(text: str) -> list[str]:
    """google-adk's ROUGE tokens of ``text``."""
    chars: list[str] = []
    for char in unicodedata.normalize("NFKC", text).lower():
        if _is_cjk(char):
            chars += [" ", char, " "]
        elif _is_non_spaced(char):
            chars += [char] if _is_mark(char) else [" ", char]
        elif char.isalnum() or _is_mark(char):
            chars.append(char)
        else:
            chars.append(" ")
    out: list[str] = []
    for word in "".join(chars).split():
        out += _ascii_tokens(word) if word.isascii() else [word]
    return out


def rouge1_f1(candidate: str, reference: str) -> float:
    """The ROUGE-1 F1 of ``candidate`` against ``reference`` (0.0 when either is empty)."""
    got, want = Counter(tokens(candidate)), Counter(tokens(reference))
    overlap = sum((got & want).values())
    if not overlap:
        return 0.0
    precision = overlap / max(sum(got.values()), 1)
    recall = overlap / max(sum(want.values()), 1)
    return 2 * precision * recall / (precision + recall)
