"""Posterior decoding of ``nested.mentions`` against brute force, for each
structure: every labelled analysis of each document (``brute_nested_mentions``,
from the definitions of Corro 2023, not from the deduction rules) is scored
by the objective, the sum over its mentions of (marginal - penalty), and the
best objective must equal the decoder's gain, with a decoded analysis that
is in the space, uses allowed spans only and attains it. Random "marginals"
in [0, 1], penalties in [0, 1], random masks and max_length."""

import numpy as np
import pytest
from brute_nested_mentions import IN_SPACE, allowed_rows, family_of, labelled_analyses

from spacy_depner.structures.nested._mentions import SPACES, dense_span_offsets, marginals, posterior_decode

MAX_WORDS = {1: 6, 2: 5}


def brute_best(structure, gains, max_length, mask):
    """The largest sum of gains over every labelled analysis of one document
    (the empty analysis gains 0), mentions on excluded spans left out."""
    S, T = gains.shape
    if S == 0:
        return 0.0
    n = int(round((np.sqrt(8 * S + 1) - 1) / 2))
    columns, _ = labelled_analyses(structure, n, T)
    allowed = np.repeat(allowed_rows(n, max_length, mask), T)
    usable = np.all(np.append(allowed, True)[columns], axis=1)
    return float(np.append(gains.ravel(), 0.0)[columns[usable]].sum(axis=1).max())


@pytest.mark.parametrize("structure", SPACES)
@pytest.mark.parametrize("seed", range(25))
def test_equals_the_best_analysis_of_the_space(structure, seed):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 3))
    lengths = rng.integers(0, MAX_WORDS[T] + 1, int(rng.integers(1, 4)))
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    S = int(dense_span_offsets(doc_offsets)[-1])
    span_marginals = rng.random((S, T))
    mask = None if rng.random() < 0.3 else rng.random(S) < rng.uniform(0.2, 1.0)
    max_length = None if rng.random() < 0.4 else int(rng.integers(1, MAX_WORDS[T] + 1))
    penalty = float(rng.choice([0.0, 1.0, rng.random()]))
    gain, labels = posterior_decode(span_marginals, doc_offsets, structure, max_length, mask, penalty)
    span_offsets = dense_span_offsets(doc_offsets)
    for d in range(len(doc_offsets) - 1):
        lo, hi = span_offsets[d], span_offsets[d + 1]
        n = int(lengths[d])
        doc_mask = None if mask is None else mask[lo:hi]
        expected = brute_best(structure, span_marginals[lo:hi] - penalty, max_length, doc_mask)
        assert abs(gain[d] - expected) <= 1e-12, (structure, d, gain[d], expected)
        chosen = labels[lo:hi]
        assert IN_SPACE[structure](family_of(chosen, n))
        assert np.all(allowed_rows(n, max_length, doc_mask)[chosen >= 0])
        rows = np.flatnonzero(chosen >= 0)
        assert abs((span_marginals[lo:hi][rows, chosen[rows]] - penalty).sum() - gain[d]) <= 1e-12


@pytest.mark.parametrize("seed", range(10))
def test_semi_markov_penalty_one_half_keeps_exactly_the_mentions_more_likely_than_not(seed):
    """Disjoint mentions only: overlapping mentions (or two labels of one
    span) exclude each other, so penalty 1/2 keeps exactly those above 1/2."""
    rng = np.random.default_rng(seed)
    doc_offsets = np.array([0, 9, 20])
    S = int(dense_span_offsets(doc_offsets)[-1])
    scores = rng.normal(0.0, 3.0, (S, 3))
    _, span_marginals = marginals(scores, doc_offsets, "semi_markov")
    _, labels = posterior_decode(span_marginals, doc_offsets, "semi_markov", penalty=0.5)
    likely = {(int(r), int(t)) for r, t in zip(*np.nonzero(span_marginals > 0.5))}
    assert {(int(r), int(labels[r])) for r in np.flatnonzero(labels >= 0)} == likely


def test_nested_spaces_keep_nested_mentions_more_likely_than_not():
    """In the nested spaces two nested mentions can both be above 1/2. An
    analysis of these spaces minus one mention is still in the space (its
    children join its parent, which keeps at most one long child), so a
    mention of negative gain is never worth keeping: every decoded mention
    is above 1/2."""
    rng = np.random.default_rng(7)
    doc_offsets = np.array([0, 8])
    S = int(dense_span_offsets(doc_offsets)[-1])
    for structure in ("cyk", "quadratic"):
        scores = rng.normal(0.0, 3.0, (S, 2))
        _, span_marginals = marginals(scores, doc_offsets, structure)
        _, labels = posterior_decode(span_marginals, doc_offsets, structure, penalty=0.5)
        chosen = np.flatnonzero(labels >= 0)
        assert np.all(span_marginals[chosen, labels[chosen]] > 0.5)


@pytest.mark.parametrize(
    "marginals_, penalty, message",
    [
        (np.full((3, 1), 2.0), 0.5, "probabilities"),
        (np.full((3, 1), np.nan), 0.5, "probabilities"),
        (np.zeros((3, 1)), -1.0, "penalty"),
        (np.zeros((4, 1)), 0.5, "one row per span"),
    ],
)
def test_bad_input_is_a_value_error(marginals_, penalty, message):
    with pytest.raises(ValueError, match=message):
        posterior_decode(marginals_, [0, 2], "cyk", penalty=penalty)
