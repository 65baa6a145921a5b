"""``spacy_depner.evaluation.threshold_tuning``: the threshold counts
against brute force, the threshold search on a constructed case, the PNG."""

import numpy as np
import pytest

from spacy_depner.evaluation.threshold_tuning import threshold_counts, threshold_png, tune_threshold


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


def test_threshold_png(tmp_path):
    pytest.importorskip("matplotlib")
    _, curve = tune_threshold(np.array([0.9, 0.3]), np.array([True, False]), 2, step=0.1)
    path = threshold_png(curve, 0.4, tmp_path / "pr.png", "test")
    assert path.read_bytes()[:4] == b"\x89PNG"


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
