"""``spacy_depner.evaluation.setting_search``: the one grid search, the
threshold counts against brute force, the threshold search on a
constructed case, and judging predicted spans against gold."""

from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_depner.evaluation.setting_search import (
    data_kind,
    docbin_gold_key,
    file_examples,
    grid_search,
    grid_values,
    judge,
    threshold_counts,
    threshold_png,
    tune_threshold,
)

DATA = Path(__file__).parents[1] / "data"


def test_grid_search_picks_the_best_value_and_the_first_on_ties():
    f_of = {0.0: 0.2, 0.5: 0.7, 1.0: 0.7, 1.5: 0.1}
    best, curve = grid_search([0.0, 0.5, 1.0, 1.5], lambda v: {"p": 0.0, "r": 0.0, "f": f_of[v]}, "penalty")
    assert best == {"penalty": 0.5, "p": 0.0, "r": 0.0, "f": 0.7}
    assert [record["penalty"] for record in curve] == [0.0, 0.5, 1.0, 1.5]
    with pytest.raises(ValueError, match="no value"):
        grid_search([], lambda v: {}, "penalty")


def test_grid_values():
    assert grid_values(-1.0, 1.0, 0.5).tolist() == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert grid_values(0.0, 1.0, 0.01)[[0, 37, 100]].tolist() == [0.0, 0.37, 1.0]
    for step, low, high in ((0.0, 0.0, 1.0), (0.1, 1.0, 0.0), (float("nan"), 0.0, 1.0)):
        with pytest.raises(ValueError, match="step > 0"):
            grid_values(low, high, step)


def brute_counts(p, correct, n_gold, threshold):
    kept = [c for q, c in zip(p, correct) if q >= threshold]
    return sum(kept), len(kept) - sum(kept), n_gold - sum(kept)


def test_threshold_counts_match_brute_force_and_recall_falls_with_the_threshold():
    rng = np.random.default_rng(1)
    for _ in range(50):
        m = int(rng.integers(0, 12))
        p = np.round(rng.random(m), 1)  # ties, and probabilities equal to thresholds
        correct = rng.random(m) < 0.6
        n_gold = int(correct.sum() + rng.integers(0, 4))
        thresholds = np.round(np.arange(0, 1.01, 0.05), 10)
        counts = threshold_counts(p, correct, n_gold, thresholds)
        assert counts.tolist() == [list(brute_counts(p, correct, n_gold, t)) for t in thresholds]
        tp, fp, _ = counts.T
        assert (np.diff(tp) <= 0).all() and (np.diff(tp + fp) <= 0).all()  # recall and predictions never rise
    # compared in float32, as attrs["scores"] holds the probabilities: float32(0.7) < 0.7 is kept at 0.7
    assert threshold_counts(np.array([np.float32(0.7)]), np.array([True]), 1, [0.7]).tolist() == [[1, 0, 0]]


def test_tune_threshold_finds_the_known_best_threshold():
    # 4 gold spans; predicted: 0.9 right, 0.8 right, 0.6 wrong, 0.55 wrong, 0.3 right, 0.1 wrong. F1 of the
    # spans kept: all 6/10; t in (0.1, 0.3] 6/9; (0.3, 0.55] 4/8; (0.55, 0.6] 4/7; (0.6, 0.8] 4/6 (a tie with
    # 6/9); (0.8, 0.9] 2/5. The first best on the grid 0, 0.01, ...: 0.11.
    p = np.array([0.9, 0.8, 0.6, 0.55, 0.3, 0.1])
    correct = np.array([True, True, False, False, True, False])
    result, curve = tune_threshold(p, correct, 4, step=0.01, before=0.0)
    assert result["tuned_threshold"] == 0.11 and result["tuned_f"] == pytest.approx(2 / 3)
    assert result["tuned_p"] == pytest.approx(0.6) and result["tuned_r"] == pytest.approx(0.75)
    assert result["before_threshold"] == 0.0 and result["before_f"] == pytest.approx(0.6)
    assert len(curve) == 101 and max(record["f"] for record in curve) == pytest.approx(2 / 3)
    assert [r["r"] for r in curve] == sorted((r["r"] for r in curve), reverse=True)
    with pytest.raises(ValueError, match="step"):
        tune_threshold(p, correct, 4, step=1.5)


def test_threshold_png(tmp_path):
    pytest.importorskip("matplotlib")
    _, curve = tune_threshold(np.array([0.9, 0.3]), np.array([True, False]), 2, step=0.1)
    path = threshold_png(curve, 0.4, tmp_path / "pr.png", "test")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_judge_marks_exact_matches_of_span_and_label():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="a b c d e".split())
    doc.spans["k"] = [Span(doc, 0, 2, "PER"), Span(doc, 2, 3, "LOC"), Span(doc, 3, 5, "ORG")]
    doc.spans["k"].attrs["scores"] = np.array([0.9, 0.4, 0.7], dtype=np.float32)
    empty = Doc(nlp.vocab, words=["x"])
    empty.spans["k"] = []  # an empty group without scores (spaCy's spancat writes such)
    gold = [{(0, 2, "PER"), (2, 3, "ORG"), (3, 4, "ORG")}, {(0, 1, "LOC")}]
    p, correct, n_gold = judge([doc, empty], gold, "k", "comp")
    assert p.tolist() == pytest.approx([0.9, 0.4, 0.7]) and correct.tolist() == [True, False, False] and n_gold == 4
    del doc.spans["k"].attrs["scores"]
    with pytest.raises(ValueError, match="without probabilities"):
        judge([doc], gold[:1], "k", "comp")
    with pytest.raises(ValueError, match="no span group 'other'"):
        judge([doc], gold[:1], "other", "comp")


def test_data_kinds_and_docbin_gold(tmp_path):
    assert [data_kind(Path(n)) for n in ("a.jsonl", "a.conllu", "a.spacy")] == ["genia", "gum", "docbin"]
    assert data_kind(Path("a.conllu"), Path("a.iob2")) == "uner"
    with pytest.raises(ValueError, match="unknown data file kind '.txt'"):
        data_kind(Path("a.txt"))
    with pytest.raises(ValueError, match="goes with a UD CoNLL-U file"):
        data_kind(Path("a.jsonl"), Path("a.iob2"))
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="a b c".split(), heads=[1, 1, 1], deps=["x", "ROOT", "y"])
    doc.spans["mentions"] = [Span(doc, 0, 2, "X")]
    doc.spans["mentions_heads"] = [Span(doc, 1, 2, "X")]
    assert docbin_gold_key([doc], "f", None) == "mentions"
    with pytest.raises(ValueError, match="no Doc has the span group 'k'"):
        docbin_gold_key([doc], "f", "k")
    DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "d.spacy")
    examples, gold = file_examples(nlp, tmp_path / "d.spacy")
    assert gold == [{(0, 2, "X")}] and [t.head.i for t in examples[0].predicted] == [1, 1, 1]
    assert not examples[0].predicted.spans
    examples, gold = file_examples(nlp, DATA / "nested_genia.jsonl")
    assert len(examples) == len(gold) and sum(map(len, gold)) > 0
