"""EvalSetStore: the eval sets of one folder and their results, safe with concurrent writers.

The layout is google-adk's, so ``adk-rx eval FOLDER`` runs the sets and google-adk reads
them::

    <folder>/<eval_set_id>.evalset.json
    <folder>/.adk/eval_history/<app>_<result_id>.evalset_result.json
    <folder>/.adk/eval.lock                  held by a writer (see below)

Every file is written whole (a temporary file renamed over the old one), and every change
(read the set, change it, write it) holds the folder's lock, so threads and processes sharing
the folder take turns: twenty concurrent adds keep twenty cases, and a crash mid-write leaves
the previous file (see :mod:`adk_rx.evaluation.atomic_files`). Reads take no lock: a rename
never shows a half-written file.

Ids become file names, so they are checked before any path is built (:func:`check_eval_id`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from adk_rx.errors import ConfigurationError
from adk_rx.evaluation.atomic_files import exclusive, write_atomically
from adk_rx.evaluation.evalset import EvalSet

__all__ = ["EvalSetStore", "check_eval_id"]

SET_SUFFIX = ".evalset.json"
RESULT_SUFFIX = ".evalset_result.json"
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


def check_eval_id(value: object, what: str) -> str:
    """An eval set, case or result id that is safe as a file name.

    Raises:
        ConfigurationError: not a string of 1 to 128 letters, digits, ``_``, ``-`` or ``.``
            starting with a letter, digit or ``_``, or it holds ``..``.
    """
    if not isinstance(value, str) or not _ID.fullmatch(value) or ".." in value:
        shown = repr(value) if isinstance(value, str) else f"a {type(value).__name__}"
        raise ConfigurationError(
            f"{what} must be 1 to 128 letters, digits, '_', '-' or '.' (starting with a "
            f"letter, digit or '_', no '..'), got {shown[:80]}"
        )
    return value


class EvalSetStore:
    """The eval sets and eval results of one folder (blocking calls; thread-safe).

    Args:
        folder: where the sets are (created on the first write).
        app_name: the app the results belong to (it prefixes their file names).
    """

    def __init__(self, folder: str | os.PathLike[str], app_name: str) -> None:
        self.folder = Path(folder)
        self.app_name = app_name
        self._history = self.folder / ".adk" / "eval_history"
        self._lock_file = self.folder / ".adk" / "eval.lock"

    def path(self, eval_set_id: str) -> Path:
        """The file of a set (which may not exist)."""
        return self.folder / f"{check_eval_id(eval_set_id, 'eval_set_id')}{SET_SUFFIX}"

    def ids(self) -> list[str]:
        """The ids of the sets, sorted."""
        return sorted(
            p.name.removesuffix(SET_SUFFIX)
            for p in self.folder.glob(f"*{SET_SUFFIX}")
            if _ID.fullmatch(p.name.removesuffix(SET_SUFFIX))
        )

    def load(self, eval_set_id: str) -> EvalSet | None:
        """The set, or None when there is none.

        Raises:
            ConfigurationError: the id is not a valid one, or the file is not an eval set.
        """
        path = self.path(eval_set_id)
        if not path.is_file():
            return None
        return EvalSet.load(path)

    def create(self, eval_set: EvalSet) -> bool:
        """Writes a new set; False (and nothing written) when one with its id exists."""
        path = self.path(eval_set.eval_set_id)
        with exclusive(self._lock_file):
            if path.exists():
                return False
            eval_set.save(path)
        return True

    def update(self, eval_set_id: str, change: Callable[[EvalSet], EvalSet]) -> EvalSet | None:
        """Replaces the set with ``change(set)``, holding the folder's lock throughout.

        Returns the new set, or None (nothing written) when there is no such set. An error
        ``change`` raises propagates and leaves the set as it was.
        """
        path = self.path(eval_set_id)
        with exclusive(self._lock_file):
            if not path.is_file():
                return None
            changed = change(EvalSet.load(path))
            changed.save(path)
        return changed

    def save_result(self, result: Mapping[str, Any]) -> str:
        """Stores an eval set result (``EvalResult.to_dict()``); returns its id.

        The id is the result's ``eval_set_result_id``; when a result with that id is already
        stored (two runs in the same second), ``_2``, ``_3``... is appended, so no result
        replaces another.
        """
        wanted = check_eval_id(result["eval_set_result_id"], "eval_set_result_id")
        with exclusive(self._lock_file):
            result_id, n = wanted, 1
            while self._result_path(result_id).exists():
                n += 1
                result_id = f"{wanted}_{n}"
            stored = {**result, "eval_set_result_id": result_id}
            if "eval_set_result_name" in stored:
                stored["eval_set_result_name"] = result_id
            write_atomically(self._result_path(result_id), json.dumps(stored, indent=2))
        return result_id

    def result_ids(self) -> list[str]:
        """The ids of the stored results, sorted."""
        prefix = f"{self.app_name}_"
        return sorted(
            p.name.removeprefix(prefix).removesuffix(RESULT_SUFFIX)
            for p in self._history.glob(f"{prefix}*{RESULT_SUFFIX}")
        )

    def load_result(self, result_id: str) -> dict[str, Any] | None:
        """A stored result, or None.

        Raises:
            ConfigurationError: the id is not a valid one, or the file is not JSON.
        """
        path = self._result_path(check_eval_id(result_id, "eval_set_result_id"))
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError as exc:
            raise ConfigurationError(f"{path} is not an eval set result: {exc}") from exc

    def _result_path(self, result_id: str) -> Path:
        return self._history / f"{self.app_name}_{result_id}{RESULT_SUFFIX}"
