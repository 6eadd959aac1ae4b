"""What goes into a code run and what comes out of it (google-adk's names, frozen values)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CodeExecutionInput", "CodeExecutionResult", "File"]


@dataclass(frozen=True, slots=True)
class File:
    """A file handed to the code or written by it.

    Attributes:
        name: a plain file name with its extension (``data.csv``), never a path.
        content: the file's bytes.
        mime_type: its media type (``text/csv``, ``image/png``).
    """

    name: str
    content: bytes
    mime_type: str = "text/plain"


@dataclass(frozen=True, slots=True)
class CodeExecutionInput:
    """One program to run.

    Attributes:
        code: the Python source.
        input_files: files placed in the program's working directory before it starts.
        execution_id: the key of a stateful executor's interpreter (None: a fresh one).
    """

    code: str
    input_files: tuple[File, ...] = ()
    execution_id: str | None = None


@dataclass(frozen=True, slots=True)
class CodeExecutionResult:
    """What one program did.

    A non-empty ``stderr`` marks the run failed (google-adk's rule): the model is told
    ``OUTCOME_FAILED`` and the run counts against ``error_retry_attempts``.

    Attributes:
        stdout: what it printed (capped by the executor).
        stderr: the error it reported, or why it was stopped (timeout, limit); '' on success.
        output_files: the files it created or changed in its working directory.
        exit_code: its exit status; None when it did not get to exit (killed or never started).
    """

    stdout: str = ""
    stderr: str = ""
    output_files: tuple[File, ...] = field(default=())
    exit_code: int | None = None
