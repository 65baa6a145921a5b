"""``spacy_depner.evaluation.setting_search``: the one grid search picks the
F1-best value, the first on ties, over the grid of values."""

import pytest

from spacy_depner.evaluation.setting_search import grid_search, grid_values


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
