"""ROUGE-1 F1 and the exact tool trajectory match."""

from __future__ import annotations

import pytest
from google.genai import types

from adk_rx.evaluation.scoring import rouge1_f1, tokens, trajectory_matches


def test_identical_texts_score_one_and_disjoint_texts_zero() -> None:
    assert rouge1_f1("Order 1234 shipped.", "order 1234 SHIPPED") == 1.0
    assert rouge1_f1("apples", "oranges") == 0.0
    assert rouge1_f1("", "anything") == 0.0


def test_partial_overlap_is_the_f1_of_unigram_precision_and_recall() -> None:
    # candidate: the cat sat (3), reference: the cat sat on the mat (6), overlap 3
    assert rouge1_f1("the cat sat", "the cat sat on the mat") == pytest.approx(2 / 3)


def test_words_are_stemmed_like_google_adk_rouge() -> None:
    assert tokens("Shipped orders arriving") == ["ship", "order", "arriv"]
    assert rouge1_f1("the order shipped", "orders ship") == pytest.approx(0.8)


def call(name: str, **args: object) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


def test_trajectories_match_only_with_the_same_calls_arguments_and_order() -> None:
    assert trajectory_matches([call("a", x=1), call("b")], [call("a", x=1.0), call("b")])
    assert not trajectory_matches([call("a", x=1)], [call("a", x=2)])
    assert not trajectory_matches([call("b"), call("a")], [call("a"), call("b")])
    assert not trajectory_matches([call("a")], [])
    assert trajectory_matches([], [])
