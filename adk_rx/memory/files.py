"""FileIndex: the text and markdown files of a folder as passages in vector memory.

The folder is indexed on first use and checked again before each search, incrementally::

    refresh():  --stat every file--read the changed ones--store their passages--forget the gone--|

A file whose modification time and size are those it was indexed with is not read. One that
changed is read and hashed: the same content (a file only touched) just gets its new
fingerprint; new content is cut into passages (:func:`~adk_rx.memory.chunks.document_chunks`)
and only the passages not stored yet are embedded. Files that disappeared are forgotten.

Only files inside the folder are read: hidden files and folders (``.git``) and links that
lead out of the folder are skipped, and so are files larger than ``max_file_bytes``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import reactivex as rx
from reactivex import Observable
from reactivex import operators as ops

from adk_rx.errors import ConfigurationError
from adk_rx.memory.chunks import Chunk, document_chunks
from adk_rx.memory.vector import VectorMemoryService
from adk_rx.memory.vector_store import Hit
from adk_rx.rx import from_blocking

__all__ = ["DEFAULT_EXTENSIONS", "FileIndex"]

DEFAULT_EXTENSIONS = (".md", ".markdown", ".txt", ".rst")
"""The files indexed unless told otherwise."""

_log = logging.getLogger("adk_rx.memory")


@dataclass(frozen=True, slots=True)
class _Changed:
    source: str
    chunks: list[Chunk]
    fingerprint: str


class FileIndex:
    """The passages of a folder's files, in a :class:`VectorMemoryService`'s store.

    Args:
        folder: the folder to index (its sub-folders too).
        memory: the store and embedder to use (it may also hold the users' memories: the
            passages live in a scope of their own).
        name: names the index in the store (two folders need two names).
        extensions: the file name endings to index.
        max_file_bytes: larger files are skipped (with a warning).
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        memory: VectorMemoryService,
        *,
        name: str = "files",
        extensions: Iterable[str] = DEFAULT_EXTENSIONS,
        max_file_bytes: int = 2_000_000,
    ) -> None:
        self.folder = Path(folder).resolve()
        if not self.folder.is_dir():
            raise ConfigurationError(f"{folder} is not a folder")
        self.memory = memory
        self.scope = json.dumps(["files", name])
        self.extensions = tuple(e.lower() for e in extensions)
        self.max_file_bytes = max_file_bytes

    def refresh(self) -> Observable[None]:
        """A Completable: brings the index up to date with the folder (see the module)."""

        def apply(plan: tuple[list[_Changed], list[str]]) -> Observable[None]:
            changed, gone = plan
            steps = [
                *(
                    self.memory.store_chunks(
                        self.scope, c.source, c.chunks, fingerprint=c.fingerprint
                    )
                    for c in changed
                ),
                *(self.memory.forget_source(self.scope, source) for source in gone),
            ]
            return rx.concat(*steps) if steps else rx.empty()

        return self.memory.fingerprints(self.scope).pipe(
            ops.flat_map(lambda stored: from_blocking(lambda: self._changes(stored))),
            ops.flat_map(apply),
            ops.ignore_elements(),
        )

    def search(self, query: str, k: int) -> Observable[list[Hit]]:
        """A Single: the index refreshed, then the ``k`` passages nearest to ``query``."""
        return self.refresh().pipe(
            ops.to_list(),  # the one (empty) list once the refresh is done
            ops.flat_map(lambda _: self.memory.search_scope(self.scope, query, k)),
        )

    def files(self) -> list[Path]:
        """The files the index covers now, in name order."""
        found: list[Path] = []
        for path in sorted(self.folder.rglob("*")):
            relative = path.relative_to(self.folder)
            if any(part.startswith(".") for part in relative.parts):
                continue
            if path.suffix.lower() not in self.extensions or not path.is_file():
                continue
            if not path.resolve().is_relative_to(self.folder):
                continue  # a link out of the folder
            found.append(path)
        return found

    def _changes(self, stored: dict[str, str]) -> tuple[list[_Changed], list[str]]:
        """The files to (re)store, and the sources of files that are gone. Blocking."""
        changed: list[_Changed] = []
        present: set[str] = set()
        for path in self.files():
            source = path.relative_to(self.folder).as_posix()
            info = path.stat()
            if info.st_size > self.max_file_bytes:
                _log.warning("not indexing %s: %d bytes is over max_file_bytes", path, info.st_size)
                continue
            present.add(source)
            quick = f"{info.st_mtime_ns}:{info.st_size}:"
            previous = stored.get(source, "")
            if previous.startswith(quick):
                continue
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            chunks = document_chunks(data.decode("utf-8", errors="replace"))
            # The same content again (a touched file) keeps its chunks: nothing is embedded.
            changed.append(_Changed(source, chunks, quick + digest))
        gone = sorted(set(stored) - present)
        return changed, gone
