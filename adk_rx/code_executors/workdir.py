"""A run's private directory: its program, the files handed in, the files it left.

    <temp>/program.py      the code (outside the working directory: never an output file)
    <temp>/work/           the working directory: the input files, then whatever it wrote
    <temp>/tmp/            its TMPDIR (in the sandbox)

A file it created, or changed from its input, is an output file. Names that are not plain
file names (a path, ``..``, a hidden file) are not written in nor read out, and a name with a
``:`` is not read out (``user:x`` would be saved in the user's scope, beyond the session);
files past the limits are left out, and the result says nothing of them.
"""

from __future__ import annotations

import mimetypes
import shutil
import tempfile
from pathlib import Path

from reactivex.disposable import Disposable

from adk_rx.code_executors.values import File

__all__ = ["RunDirectory", "is_plain_name"]

MAX_OUTPUT_FILES = 32
MAX_OUTPUT_FILE_BYTES = 16 * 1024 * 1024


def is_plain_name(name: str) -> bool:
    """True for a name that stays inside the directory it is written to."""
    return bool(name) and "/" not in name and "\\" not in name and not name.startswith(".")


class RunDirectory(Disposable):
    """A fresh temporary directory for one run (or one stateful interpreter), removed when
    disposed."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="adk-rx-code-"))
        super().__init__(lambda: shutil.rmtree(self.root, ignore_errors=True))
        self.program = self.root / "program.py"
        self.work = self.root / "work"
        self.work.mkdir()
        self.tmp = self.root / "tmp"
        self.tmp.mkdir()

    def prepare(self, code: str, input_files: tuple[File, ...]) -> dict[str, bytes]:
        """Writes the program and the input files; returns what the directory holds now."""
        self.program.write_text(code, encoding="utf-8")
        for file in input_files:
            if is_plain_name(file.name):
                path = self.work / file.name
                if not path.is_symlink():
                    path.write_bytes(file.content)
        return {f.name: f.content for f in self._files()}

    def output_files(self, before: dict[str, bytes]) -> tuple[File, ...]:
        """The files created or changed since ``before`` (sorted by name, within limits)."""
        found = [f for f in self._files() if before.get(f.name) != f.content]
        return tuple(found[:MAX_OUTPUT_FILES])

    def _files(self) -> list[File]:
        found: list[File] = []
        for path in sorted(self.work.iterdir()):
            if path.is_symlink() or not path.is_file() or not is_plain_name(path.name):
                continue
            if ":" in path.name:
                continue
            if path.stat().st_size > MAX_OUTPUT_FILE_BYTES:
                continue
            mime_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            found.append(File(name=path.name, content=path.read_bytes(), mime_type=mime_type))
        return found
