"""Code blocks in a model's answer, and the parts a code run is told back with.

Pure functions over contents, as google-adk 2.13's ``CodeExecutionUtils`` (same rules, same
texts), except that they return new contents: a stored event's content is never changed.

* :func:`extract_code`: the first code to run in an answer. An ``executable_code`` part not
  followed by its ``code_execution_result`` wins; otherwise the earliest block enclosed by one of
  the delimiter pairs in the answer's text parts (joined with newlines). The content is cut after
  that block, which becomes an ``executable_code`` part::

      "Let me see.\\n```python\\nprint(1)\\n```\\nIt is 1."
      -> [text "Let me see.\\n", executable_code "print(1)"]

* :func:`result_part`: ``OUTCOME_FAILED`` with the error when there is one, else
  ``OUTCOME_OK`` with ``Code execution result:`` and the output, and the saved files' names.
* :func:`as_text_for_model`: how an earlier run is sent back to a model that runs no code
  itself: a trailing ``executable_code`` part as a fenced block, a lone
  ``code_execution_result`` as a user message fenced with the result delimiters.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.genai import types

from adk_rx.code_executors.values import CodeExecutionResult

__all__ = ["as_text_for_model", "extract_code", "result_part"]


def extract_code(
    content: types.Content, delimiters: Sequence[tuple[str, str]]
) -> tuple[str, types.Content] | None:
    """The first code block of ``content`` and the content cut after it; None if it has none."""
    parts = content.parts or []
    if not parts:
        return None
    for index, part in enumerate(parts):
        if part.executable_code is not None and (
            index == len(parts) - 1 or parts[index + 1].code_execution_result is None
        ):
            kept = content.model_copy(update={"parts": parts[: index + 1]})
            return part.executable_code.code or "", kept
    texts = [p for p in parts if p.text]
    if not texts:
        return None
    text = "\n".join(p.text or "" for p in texts)
    best_start, best_end, best_lead = -1, -1, 0
    for lead, trail in delimiters:
        start = text.find(lead)
        if start == -1:
            continue
        end = text.find(trail, start + len(lead))
        if end == -1:
            continue
        if best_start == -1 or start < best_start:
            best_start, best_end, best_lead = start, end, len(lead)
    if best_start == -1:
        return None
    code = text[best_start + best_lead : best_end]
    if not code:
        return None
    new_parts: list[types.Part] = []
    prefix = text[:best_start]
    if prefix:
        new_parts.append(texts[0].model_copy(update={"text": prefix}))
    new_parts.append(types.Part.from_executable_code(code=code, language=types.Language.PYTHON))
    return code, content.model_copy(update={"parts": new_parts})


def result_part(result: CodeExecutionResult) -> types.Part:
    """The ``code_execution_result`` part that tells the model what the run did."""
    if result.stderr:
        return types.Part.from_code_execution_result(
            outcome=types.Outcome.OUTCOME_FAILED, output=result.stderr
        )
    pieces: list[str] = []
    if result.stdout or not result.output_files:
        pieces.append(f"Code execution result:\n{result.stdout}\n")
    if result.output_files:
        names = ",".join(f"`{f.name}`" for f in result.output_files)
        pieces.append(f"Saved artifacts:\n{names}")
    return types.Part.from_code_execution_result(
        outcome=types.Outcome.OUTCOME_OK, output="\n\n".join(pieces)
    )


def as_text_for_model(
    content: types.Content,
    code_delimiter: tuple[str, str],
    result_delimiters: tuple[str, str],
) -> types.Content:
    """``content`` with its trailing code part or its lone result part turned into text."""
    parts = content.parts or []
    if not parts:
        return content
    last = parts[-1]
    if last.executable_code is not None:
        text = code_delimiter[0] + (last.executable_code.code or "") + code_delimiter[1]
        return content.model_copy(update={"parts": [*parts[:-1], types.Part(text=text)]})
    if len(parts) == 1 and last.code_execution_result is not None:
        output = last.code_execution_result.output
        text = "" if output is None else result_delimiters[0] + output + result_delimiters[1]
        return types.Content(role="user", parts=[types.Part(text=text)])
    return content
