"""Tree spans of long chains (``candidate_spans``): a right-branching chain,
whose every path decreases, holds n (n + 1) / 2 valid spans, far more per
token than the random trees of ``test_candidate_spans``; chains among other
sentences against the brute-force sets (``brute_candidate_spans``)."""

import numpy as np
import pytest
from brute_candidate_spans import brute_single_arc_spans, brute_valid_spans, sorted_span_array

from spacy_depner.structures.trees.candidate_spans import single_arc_spans, valid_spans


def chain_batch(lengths, rng):
    """Sentences of ``lengths`` tokens, each a right-branching chain (head of
    token t is t - 1) or, at random, a random recursive tree."""
    heads, first = [], 0
    for n in lengths:
        if rng.random() < 0.5:
            local = np.arange(-1, n - 1)
        else:
            local = np.array([-1] + [int(rng.integers(0, t)) for t in range(1, n)], dtype=np.int64)
        heads.append(np.where(local >= 0, local + first, -1))
        first += n
    return np.concatenate(heads).astype(np.int64), np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


@pytest.mark.parametrize("max_length", [None, 3, 30])
def test_long_chains_equal_brute_force(max_length):
    rng = np.random.default_rng(11)
    for lengths in ([40], [1, 60, 2], [5, 33, 1, 47], [70]):
        heads, offsets = chain_batch(lengths, rng)
        want = sorted_span_array(brute_valid_spans(heads, offsets, max_length))
        np.testing.assert_array_equal(valid_spans(heads, offsets, max_length), want)
        want = sorted_span_array(brute_single_arc_spans(heads, offsets, max_length))
        np.testing.assert_array_equal(single_arc_spans(heads, offsets, max_length), want)


def test_a_chain_holds_every_span():
    n = 120
    spans = valid_spans(np.arange(-1, n - 1), np.array([0, n]))
    assert spans.shape == (n * (n + 1) // 2, 2)
