"""``spacy_depner.evaluation.metrics``: the one P/R/F and UAS/LAS, fractions."""

import numpy as np
import pytest

from spacy_depner.evaluation.metrics import f1, prf, prf_from_counts, uas_las
from spacy_depner.evaluation.significance import f1_from_counts


def test_prf_by_hand():
    assert prf(3, 1, 2) == pytest.approx({"p": 0.75, "r": 0.6, "f": 2 * 0.75 * 0.6 / 1.35})
    assert prf(0, 0, 0) == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert prf(0, 2, 0) == {"p": 0.0, "r": 0.0, "f": 0.0}
    assert prf(4, 0, 0) == {"p": 1.0, "r": 1.0, "f": 1.0}


def test_prf_from_counts_sums_the_items():
    counts = np.array([[1, 0, 1], [2, 1, 1], [0, 0, 0]])
    assert prf_from_counts(counts) == prf(3, 1, 2)
    assert prf_from_counts(np.zeros((0, 3), dtype=np.int64)) == prf(0, 0, 0)
    assert prf_from_counts([3, 1, 2]) == prf(3, 1, 2)
    with pytest.raises(ValueError, match="shape"):
        prf_from_counts(np.zeros((2, 2)))


def test_f1_is_elementwise_and_the_significance_tests_use_it():
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, size=(50, 3))
    values = f1(counts[:, 0], counts[:, 1], counts[:, 2])
    for row, value in zip(counts, values):
        assert value == prf(*row)["f"] == f1_from_counts(row)


def test_uas_las_fractions():
    scores = uas_las([0, 0, 1, 3], ["root", "nsubj", "obj", "punct"], [0, 0, 0, 3], ["root", "nsubj", "obj", "det"])
    assert scores == {"uas": 0.75, "las": 0.5}
    assert uas_las([], [], [], []) == {"uas": 0.0, "las": 0.0}
