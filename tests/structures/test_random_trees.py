"""Random trees, and Theorem 1 of Jie et al. (2017) as a check of valid_spans."""

import itertools

import numpy as np
import pytest
from brute_candidate_spans import is_tree

from experiments.bench.random_trees import _prufer_heads, random_forest, random_tree
from spacy_depner.structures.trees.candidate_spans import valid_spans


@pytest.mark.parametrize("n", [1, 2, 3, 10, 57])
def test_random_tree_is_a_tree(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        assert is_tree(random_tree(n, rng))


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_valid_spans_over_all_trees_number_n_plus_1_to_the_n_minus_1(n):
    """Theorem 1's bijection: over all n^(n-2) labelled trees on n nodes, the
    valid spans number exactly (n+1)^(n-1) (the Prüfer codes enumerate every tree once)."""
    total = 0
    trees = set()
    for code in itertools.product(range(n), repeat=n - 2):
        heads = _prufer_heads(np.array(code, dtype=np.int64), 0, n)
        trees.add(tuple(heads))
        total += valid_spans(heads, [0, n]).shape[0]
    assert len(trees) == n ** (n - 2)
    assert total == (n + 1) ** (n - 1)


def test_random_forest_offsets_and_roots():
    rng = np.random.default_rng(0)
    heads, offsets = random_forest([3, 1, 5], rng)
    assert offsets.tolist() == [0, 3, 4, 9]
    for a, b in zip(offsets[:-1], offsets[1:]):
        sentence = heads[a:b]
        assert is_tree(np.where(sentence >= 0, sentence - a, -1))
