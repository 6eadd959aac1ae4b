"""Vector memory on SQLite with sqlite-vec: searching 100,000 memories, adding a session.

    python benchmarks/memory_search.py [--memories 100000] [--queries 60] [--adds 20]

Builds a temporary SQLite store of ``--memories`` memories of one user (the worst case: a
search reads every memory of its user; 1,000 more belong to another user), as
``VectorMemoryService(url, HashingEmbedder())`` would hold them: sentences of 8 to 20 words
drawn from a vocabulary of 5,000, in sources of 50 chunks. Then it measures, end to end
through the service:

* a search (``search_memory(...).run()``: embed the query, the binary pass over the user's
  vectors in sqlite-vec, the exact cosine of the candidates, the entries): p50 and p95;
* adding a new 50-event session (25 turns, each a user message and an answer) with
  ``HashingEmbedder``: chunking, embedding, one write transaction; p50;
* how often a search finds the memory its query was drawn from (4 of that memory's words)
  among its 10 results, beside the same figure for an exact float scan (sqlite-vec's
  ``vec_distance_cosine`` over all of the user's vectors): what the binary pass costs in
  quality, so its speed is not bought blind.

Prints the machine's load (``os.getloadavg``) with the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from google.genai import types
from reactivex import operators as ops
from report import print_table, progress, verdict

from adk_rx.events import Event
from adk_rx.memory import HashingEmbedder, VectorMemoryService
from adk_rx.memory.chunks import document_chunks
from adk_rx.memory.vector import memory_scope
from adk_rx.memory.vector_sqlite import sqlite_vec_driver, to_blob
from adk_rx.memory.vector_store import NewChunk
from adk_rx.sessions.session import Session

SEARCH_AIM = "<= 20 ms"
ADD_AIM = "<= 50 ms"
PER_SOURCE = 50


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pu", "do", "fi", "gra"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _sentence(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choice(words) for _ in range(rng.randint(8, 20)))


def _fill(
    service: VectorMemoryService, count: int, rng: random.Random, words: list[str]
) -> list[str]:
    """Stores ``count`` memories of user ``u`` (and 1,000 of another); returns u's texts."""
    embedder = service.embedder
    assert isinstance(embedder, HashingEmbedder)
    stored: list[str] = []
    for user, total in (("u", count), ("other", 1_000)):
        scope = memory_scope("bench", user)
        for start in range(0, total, PER_SOURCE):
            texts = [_sentence(rng, words) for _ in range(min(PER_SOURCE, total - start))]
            chunks = [c for text in texts for c in document_chunks(text)]
            new = {
                c.key: NewChunk(c.key, float(start), c.text, embedder.vector(c.text))
                for c in chunks
            }
            service.store.replace(scope, f"seed-{start}", [c.key for c in chunks], new)
            if user == "u":
                stored.extend(texts)
            if user == "u" and start % 10_000 == 0:
                progress(f"stored {start:,} of {total:,} memories")
    return stored


def _session(rng: random.Random, words: list[str], index: int) -> Session:
    events: list[Event] = []
    for turn in range(25):
        for author in ("user", "assistant"):
            role = "user" if author == "user" else "model"
            content = types.Content(role=role, parts=[types.Part(text=_sentence(rng, words))])
            events.append(Event(author=author, content=content, timestamp=1e9 + turn))
    return Session(id=f"new-{index}", app_name="bench", user_id="u", events=events)


def _exact_top10(path: Path, query: str, embedder: HashingEmbedder) -> list[str]:
    driver = sqlite_vec_driver()
    assert driver is not None
    conn = driver.connect(str(path))
    conn.enable_load_extension(True)
    import sqlite_vec  # pyright: ignore[reportMissingImports]

    sqlite_vec.load(conn)
    rows = conn.execute(
        "SELECT text FROM adk_vector_chunks WHERE scope = ? "
        "ORDER BY vec_distance_cosine(embedding, ?), id LIMIT 10",
        (memory_scope("bench", "u"), to_blob(embedder.vector(query))),
    ).fetchall()
    conn.close()
    return [row[0] for row in rows]


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--adds", type=int, default=20)
    args = parser.parse_args()
    if sqlite_vec_driver() is None:
        print('sqlite-vec cannot be loaded here: pip install "adk_rx[vector]"', file=sys.stderr)
        return 2
    rng = random.Random(20_251_203)
    words = _vocabulary(rng, 5_000)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.db"
        service = VectorMemoryService(f"sqlite:///{path}", HashingEmbedder(), top_k=10)
        assert service.store.method == "sqlite-vec", service.store.method
        progress(f"building a store of {args.memories:,} memories")
        stored = _fill(service, args.memories, rng, words)
        targets = rng.sample(stored, args.queries)
        queries = [" ".join(rng.sample(target.split(), 4)) for target in targets]
        for query in queries[:5]:  # warm the page cache and the code paths
            service.search_memory(app_name="bench", user_id="u", query=query).run()
        progress(f"{args.queries} searches")
        timings: list[float] = []
        found_by_search = found_by_scan = 0
        for query, target in zip(queries, targets, strict=True):
            started = time.perf_counter()
            found = service.search_memory(app_name="bench", user_id="u", query=query).run()
            timings.append(time.perf_counter() - started)
            got = {part.text for m in found.memories for part in m.content.parts or []}
            found_by_search += target in got
            found_by_scan += target in _exact_top10(path, query, service.embedder)  # type: ignore[arg-type]
        progress(f"{args.adds} adds of a 50-event session")
        adds: list[float] = []
        for index in range(args.adds):
            session = _session(rng, words, index)
            started = time.perf_counter()
            service.add_session_to_memory(session).pipe(ops.to_list()).run()
            adds.append(time.perf_counter() - started)
        service.close()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    search_p50, add_p50 = _ms(timings, 0.5), _ms(adds, 0.5)
    print(f"{args.memories:,} memories of one user, HashingEmbedder(dim=256), SQLite + sqlite-vec")
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs\n")
    print_table(
        ["figure", "value", "aim", "verdict"],
        [
            ["search p50 (ms)", f"{search_p50:.1f}", SEARCH_AIM, verdict(search_p50, SEARCH_AIM)],
            ["search p95 (ms)", f"{_ms(timings, 0.95):.1f}", "", ""],
            ["source found in top 10: search", f"{found_by_search / len(queries):.2f}", "", ""],
            ["source found in top 10: exact scan", f"{found_by_scan / len(queries):.2f}", "", ""],
            ["add 50-event session p50 (ms)", f"{add_p50:.1f}", ADD_AIM, verdict(add_p50, ADD_AIM)],
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
