"""EvalSetStore and its files: ids checked before any path, whole files only (a writer killed
mid-save leaves the previous file), and concurrent writers that take turns."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adk_rx.errors import ConfigurationError
from adk_rx.evaluation import EvalCase, EvalSet
from adk_rx.evaluation.eval_store import EvalSetStore, check_eval_id

SIZE = 8_000_000  # characters of description: a save takes milliseconds, long enough to hit

WRITER = textwrap.dedent(
    f"""
    import sys
    from adk_rx.evaluation import EvalSet

    sets = [EvalSet(eval_set_id=name, description=name * {SIZE}) for name in ("a", "b")]
    print("ready", flush=True)
    n = 0
    while True:
        sets[n % 2].save(sys.argv[1])
        n += 1
    """
)


def test_a_writer_killed_mid_save_leaves_the_previous_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.evalset.json"
    EvalSet(eval_set_id="a", description="a" * SIZE).save(path)
    whole = path.stat().st_size  # both versions have this size
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
        # Kill the writer the moment the file is seen partly written (a save that writes in
        # place), or after two seconds of saves (each then replaced the file whole).
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and path.stat().st_size == whole:
            pass
    finally:
        writer.kill()
        writer.wait()

    loaded = EvalSet.load(path)
    assert loaded.description == loaded.eval_set_id * SIZE
    assert [p.name for p in tmp_path.glob("*.evalset.json")] == [path.name]


def test_concurrent_updates_from_threads_keep_every_change(tmp_path: Path) -> None:
    store = EvalSetStore(tmp_path, "app")
    assert store.create(EvalSet(eval_set_id="s"))

    def add(n: int) -> None:
        case = EvalCase(eval_id=f"c{n:02}")
        store.update("s", lambda eval_set: eval_set.add_case(case))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(add, range(40)))

    loaded = store.load("s")
    assert loaded is not None
    assert sorted(c.eval_id for c in loaded.eval_cases) == [f"c{n:02}" for n in range(40)]


def test_create_refuses_an_existing_id_and_update_a_missing_one(tmp_path: Path) -> None:
    store = EvalSetStore(tmp_path, "app")

    assert store.create(EvalSet(eval_set_id="s", description="first"))
    assert not store.create(EvalSet(eval_set_id="s", description="second"))
    assert store.update("nope", lambda eval_set: eval_set) is None

    loaded = store.load("s")
    assert loaded is not None and loaded.description == "first"
    assert store.ids() == ["s"]


def test_an_update_that_raises_leaves_the_set_as_it_was(tmp_path: Path) -> None:
    store = EvalSetStore(tmp_path, "app")
    store.create(EvalSet(eval_set_id="s", eval_cases=[EvalCase(eval_id="c")]))

    with pytest.raises(ConfigurationError, match="already has"):
        store.update("s", lambda eval_set: eval_set.add_case(EvalCase(eval_id="c")))

    loaded = store.load("s")
    assert loaded is not None and [c.eval_id for c in loaded.eval_cases] == ["c"]


def test_results_of_the_same_second_keep_distinct_ids(tmp_path: Path) -> None:
    store = EvalSetStore(tmp_path, "app")
    result = {"eval_set_result_id": "s_1700000000", "eval_set_result_name": "s_1700000000"}

    ids = [store.save_result(result) for _ in range(3)]

    assert ids == ["s_1700000000", "s_1700000000_2", "s_1700000000_3"]
    assert store.result_ids() == sorted(ids)
    third = store.load_result("s_1700000000_3")
    assert third is not None and third["eval_set_result_name"] == "s_1700000000_3"
    assert store.load_result("s_1") is None
    assert (tmp_path / ".adk" / "eval_history" / "app_s_1700000000.evalset_result.json").is_file()


@pytest.mark.parametrize(
    "bad", ["", "..", "a..b", ".hidden", "-x", "a/b", "a\\b", "a\x00b", "é", "x" * 129, 5, None]
)
def test_ids_that_are_not_plain_file_names_are_refused(tmp_path: Path, bad: object) -> None:
    store = EvalSetStore(tmp_path, "app")

    with pytest.raises(ConfigurationError, match="must be 1 to 128"):
        check_eval_id(bad, "eval_set_id")
    with pytest.raises(ConfigurationError):
        store.load(bad)  # type: ignore[arg-type]  # what a caller might pass
    assert list(tmp_path.iterdir()) == []
