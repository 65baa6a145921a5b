"""``spacy_depner.evaluation.calibration``: ECE and reliability bins against
values computed by hand, the temperature fit on synthetic probabilities
of known temperature, and the reliability diagram."""

import math
from pathlib import Path

import numpy as np
import pytest

from spacy_depner.evaluation.calibration import (
    calibration_summary,
    data_files,
    ece_floor,
    expected_calibration_error,
    fit_temperature,
    png_names,
    reliability_bins,
    reliability_png,
    span_nll,
)


def test_perfectly_calibrated_spans_have_ece_zero():
    # bin (0.2, 0.4] holds 10 spans of 0.3 with 3 correct, bin (0.8, 1] 4 spans of 1.0, all correct, 5 bins
    p = [0.3] * 10 + [1.0] * 4
    correct = [True] * 3 + [False] * 7 + [True] * 4
    assert expected_calibration_error(p, correct, n_bins=5) == pytest.approx(0.0)


def test_confident_wrong_spans_have_ece_one_and_known_mixtures_their_value():
    assert expected_calibration_error([1.0, 1.0, 0.99], [False, False, False]) == pytest.approx((1 + 1 + 0.99) / 3)
    # 4 bins: spans 0.1, 0.2 (bin 0, conf 0.15, acc 0.5), 0.9 (bin 3, conf 0.9, acc 0): 2/3 * 0.35 + 1/3 * 0.9
    assert expected_calibration_error([0.1, 0.2, 0.9], [True, False, False], n_bins=4) == pytest.approx(
        2 / 3 * 0.35 + 1 / 3 * 0.9
    )
    # one bin: |mean confidence - accuracy|
    assert expected_calibration_error([0.2, 0.6, 0.7], [1, 1, 0], n_bins=1) == pytest.approx(abs(0.5 - 2 / 3))
    assert expected_calibration_error([], []) == 0.0


def test_ece_floor_is_the_sampling_error_of_a_calibrated_model():
    # M spans all of probability 0.5 share one bin: the floor is E|k/M - 0.5| for k ~ Binomial(M, 0.5),
    # about sqrt(0.25 / M) * sqrt(2 / pi) (the normal approximation), 0.0126 for M = 1000
    assert ece_floor([0.5] * 1000, draws=2000) == pytest.approx(
        math.sqrt(0.25 / 1000) * math.sqrt(2 / math.pi), rel=0.05
    )
    # a quarter of the spans: the floor doubles
    assert ece_floor([0.5] * 250, draws=2000) == pytest.approx(2 * ece_floor([0.5] * 1000, draws=2000), rel=0.08)
    # certain spans have no sampling error; no spans, no floor
    assert ece_floor([0.0, 1.0, 1.0]) == 0.0 and ece_floor([]) == 0.0
    assert ece_floor([0.3, 0.8] * 50, seed=3) == ece_floor([0.3, 0.8] * 50, seed=3)
    with pytest.raises(ValueError, match="draws"):
        ece_floor([0.5], draws=0)
    with pytest.raises(ValueError, match=r"not in \[0, 1\]"):
        ece_floor([1.5])


def test_summary_reports_the_floor_beside_the_ece():
    summary = calibration_summary([0.5] * 400, [True] * 200 + [False] * 200, n_bins=5)
    assert summary["ece"] == pytest.approx(0.0)
    assert 0.01 < summary["ece_floor"] < 0.03  # sqrt(0.25 / 400) * sqrt(2 / pi) = 0.0199


def test_reliability_bins_edges_counts_and_empty_bins():
    bins = reliability_bins([0.0, 0.2, 0.2000001, 0.5, 1.0], [1, 0, 1, 1, 0], n_bins=5)
    assert bins["lower"].tolist() == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8])
    # bin 0 is [0, 0.2], bin b > 0 is (b/5, (b+1)/5]
    assert bins["count"].tolist() == [2, 1, 1, 0, 1]
    assert bins["accuracy"].tolist() == pytest.approx([0.5, 1.0, 1.0, 0.0, 0.0])
    assert bins["confidence"][0] == pytest.approx(0.1) and bins["confidence"][3] == 0.0
    records = calibration_summary([0.0, 0.2, 0.5], [1, 0, 1], n_bins=5)["reliability"]
    assert records[3] == {"lower": 0.6, "upper": 0.8, "count": 0, "confidence": None, "accuracy": None}


@pytest.mark.parametrize(
    "p, correct, bins, match",
    [
        ([0.5, 1.2], [1, 0], 15, "not in \\[0, 1\\]"),
        ([0.5, float("nan")], [1, 0], 15, "not in \\[0, 1\\]"),
        ([0.5], [1, 0], 15, "1 probabilities but 2"),
        ([0.5], [2], 15, "boolean"),
        ([0.5], [1], 0, "positive integer"),
    ],
)
def test_bad_input_is_a_clear_error(p, correct, bins, match):
    with pytest.raises(ValueError, match=match):
        expected_calibration_error(p, correct, n_bins=bins)


def test_span_nll_by_hand_and_clipped():
    assert span_nll([0.8, 0.4], [True, False]) == pytest.approx(-(math.log(0.8) + math.log(0.6)) / 2)
    assert np.isfinite(span_nll([1.0, 0.0], [False, True]))
    with pytest.raises(ValueError, match="no predicted spans"):
        span_nll([], [])


@pytest.mark.parametrize("true_temperature", [0.4, 1.0, 2.5])
def test_fit_temperature_recovers_a_known_temperature(true_temperature):
    rng = np.random.default_rng(0)
    z = rng.normal(0.0, 3.0, 40_000)
    correct = rng.random(z.shape[0]) < 1.0 / (1.0 + np.exp(-z / true_temperature))
    calls = []

    def nll_at(t):
        calls.append(t)
        return span_nll(1.0 / (1.0 + np.exp(-z / t)), correct)

    t, value, tried = fit_temperature(nll_at)
    assert t == pytest.approx(true_temperature, rel=0.05)
    assert value == min(v for _, v in tried) and len(tried) == len(calls) < 40
    assert all(0.05 <= x <= 20.0 for x, _ in tried)


def test_fit_temperature_stops_at_the_bound_and_checks_its_range():
    t, _, _ = fit_temperature(lambda t: t, low=0.1, high=10.0)
    assert t == pytest.approx(0.1, rel=1e-2)
    with pytest.raises(ValueError, match="0 < low < high"):
        fit_temperature(lambda t: t, low=0.0)
    with pytest.raises(ValueError, match="is nan"):
        fit_temperature(lambda t: float("nan"))


def test_reliability_png_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    path = reliability_png(reliability_bins([0.1, 0.5, 0.9, 0.95], [0, 1, 1, 1]), tmp_path / "sub" / "r.png", "dgm_ner")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in path.parent.iterdir()] == ["r.png"]


def test_data_files_pair_uner_files_with_conllu_files_in_order():
    pairs = data_files(["a.conllu", "g.jsonl", "b.conllu"], ["a.iob2", "b.iob2"])
    assert [(str(p), str(u) if u else None) for p, u in pairs] == [
        ("a.conllu", "a.iob2"),
        ("g.jsonl", None),
        ("b.conllu", "b.iob2"),
    ]
    with pytest.raises(ValueError, match="one --iob2 per"):
        data_files(["a.conllu", "b.conllu"], ["a.iob2"])
    names = png_names(["ner"], [Path(p) for p in ("x/dev.jsonl", "y/dev.jsonl", "t.conllu")])
    assert len(set(names.values())) == 4 and names["ner", -1] == "ner-all.png"
