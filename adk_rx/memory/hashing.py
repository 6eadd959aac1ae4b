"""HashingEmbedder: deterministic vectors from the words of a text, offline and instant.

Each word (case-folded, a plural ``s`` dropped, common English function words left out)
gets a fixed pseudo-random vector of +1/-1 signs, drawn from its BLAKE2 hash; a text's
vector is the sum of its words' vectors, scaled to length 1 (random indexing). Two texts
that share words point the same way; texts without a shared word are close to orthogonal
(their cosine is noise of about ``1/sqrt(dim)``). The signs are dense, so the binary
quantization that the SQLite index uses for its first pass keeps the ranking (SimHash).

It understands no meaning (a paraphrase without shared words scores like unrelated text):
it is for tests, examples and offline use; :class:`~adk_rx.memory.LocalEmbedder` runs a
real sentence model without a network either.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

from reactivex import Observable

from adk_rx.errors import ConfigurationError
from adk_rx.memory.embedder import Vector, unit
from adk_rx.rx._engine.sync import single

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"[^\W_]+")
# Words that carry no topic: without them "what is my name" and "what is the weather" share
# nothing, as they should.
_STOPWORD_TEXT = """
a an and are as at be been but by can could did do does for from had has have he her his how
i if in into is it its me my no not of on or our s she so t that the their them then there
these they this to was we were what when where which who why will with would you your
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# The +1/-1 signs of the 8 bits of each byte value, most significant bit first.
_BYTE_SIGNS = tuple(
    tuple(1 if byte >> (7 - bit) & 1 else -1 for bit in range(8)) for byte in range(256)
)


def _features(text: str) -> list[str]:
    found: list[str] = []
    for word in _WORD.findall(text.casefold()):
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]  # "names" finds "name"
        found.append(word)
    return found


@lru_cache(maxsize=1 << 13)  # about 2 KB a word at dim=256: at most ~17 MB
def _signs(word: str, dimension: int) -> tuple[int, ...]:
    digest = b""
    counter = 0
    while len(digest) * 8 < dimension:  # 512 bits per hash; longer vectors take more
        salt = counter.to_bytes(16, "little")
        digest += hashlib.blake2b(word.encode(), digest_size=64, salt=salt).digest()
        counter += 1
    signs = chain.from_iterable(_BYTE_SIGNS[byte] for byte in digest[: dimension // 8])
    return tuple(signs)


class HashingEmbedder:
    """Deterministic word-hashing vectors; no model, no network, the same on every machine.

    Args:
        dim: the vector length (a multiple of 8, at least 64).
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 64 or dim % 8:
            raise ConfigurationError(f"dim must be a multiple of 8 and at least 64, got {dim!r}")
        self.dimension = dim
        self.name = f"hashing-{dim}"

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> Observable[list[Vector]]:
        """A Single of the texts' vectors, computed on the subscribing thread."""
        return single(lambda: [self.vector(text) for text in texts])

    def vector(self, text: str) -> Vector:
        """The unit vector of one text (zero when it has no word outside the stopwords)."""
        total: list[int] = [0] * self.dimension
        for word in _features(text):
            total = list(map(operator.add, total, _signs(word, self.dimension)))
        return unit(total)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self.dimension})"
