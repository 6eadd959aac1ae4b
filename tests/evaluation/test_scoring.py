"""ROUGE-1 F1 with google-adk's tokens: NLTK's Porter stems, Unicode words kept."""

from __future__ import annotations

import pytest

from adk_rx.evaluation.scoring import rouge1_f1, tokens


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


def test_stems_are_nltk_porter_stems_as_rouge_score_makes_them() -> None:
    # the original Porter algorithm says "us", "sai", "kei"; NLTK's (and google-adk's) do not
    assert tokens("used says keys dying") == ["use", "say", "key", "die"]


def test_words_outside_ascii_are_kept_and_cjk_characters_are_words_of_their_own() -> None:
    assert tokens("Café NAÏVE") == ["café", "naïve"]
    assert tokens("東京タワー ok") == ["東", "京", "タ", "ワ", "ー", "ok"]
    assert rouge1_f1("東京", "京都") == 0.5
