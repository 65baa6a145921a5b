"""The two passes of every nested space's marginals (``nested.scaled``):
the scaled pass in probabilities, and the log-space pass it hands a document
to when a scaled item would leave its range (scores of hundreds). Both are
held to enumeration (``brute_nested_mentions``, from the paper's
definitions), in one batch and at every score scale up to the largest
weight the scaled pass accepts; the protocol table (``test_protocol``)
holds the spaces to enumeration at ordinary scales.
"""

import numpy as np
import pytest
from brute_nested_mentions import brute

from spacy_depner.structures.nested import cyk, quadratic, scaled, semi_markov
from spacy_depner.structures.nested._mentions import dense_span_offsets, marginals

RTOL = 1e-9
SPACES = ("semi_markov", "cyk", "quadratic")
SCALED_PASSES = {
    "semi_markov": semi_markov._marginals_semi_markov_scaled,
    "cyk": cyk._marginals_cyk_scaled,
    "quadratic": quadratic._marginals_scaled,
}


def assert_like_enumeration(scores, doc_offsets, max_length=None, mask=None, space="quadratic"):
    """log Z (relative, floor 1) and every marginal (relative, floor 1e-300:
    below it float64 is subnormal) of each document against enumeration, to
    RTOL."""
    log_z, got = marginals(scores, doc_offsets, space, max_length, mask)
    span_offsets = dense_span_offsets(doc_offsets)
    for d in range(len(doc_offsets) - 1):
        lo, hi = span_offsets[d], span_offsets[d + 1]
        z, expected, _, _ = brute(space, scores[lo:hi], max_length, None if mask is None else mask[lo:hi])
        assert abs(log_z[d] - z) <= RTOL * max(abs(z), 1.0), (d, log_z[d], z)
        error = np.abs(got[lo:hi] - expected)
        assert np.all(error <= RTOL * expected + 1e-300), (d, np.max(error / np.maximum(expected, 1e-300)))


def scaled_pass(scores, space="quadratic", width=None):
    """(log Z, ok) of the scaled pass of ``space`` on the one document of
    these dense scores (every span allowed, spans of up to ``width`` words)."""
    n = int(round((np.sqrt(8 * scores.shape[0] + 1) - 1) / 2))
    width = n if width is None else width
    charts = scaled._scaled_charts(n + 1, width + 1)
    mask = np.ones(scores.shape[0], dtype=bool)
    return SCALED_PASSES[space](scores, mask, 0, n, width, charts, np.zeros(scores.shape))


def scaled_pass_takes(scores, space="quadratic"):
    """Whether the scaled pass of ``space`` takes the document of these dense
    scores (every span allowed, no max_length)."""
    return scaled_pass(scores, space)[1]


def rows_of(n, spans):
    """Dense rows (one document of n words) of (first, last) spans."""
    return [last * (last + 1) // 2 + first for first, last in spans]


def two_long_children_document(score):
    """Five words; mentions [0, 4], [0, 1] and [3, 4] at ``score``, every other
    span at -50: the outer mention may hold one of the inner ones but not both
    (its long children), while the first level holds both; so the outer
    mention's inner chart weighs about exp(-score) of the first level, and
    each of the three mentions has marginal 2/3 (to exp(-50))."""
    scores = np.full((15, 1), -50.0)
    scores[rows_of(5, [(0, 4), (0, 1), (3, 4)])] = score
    return scores


def test_a_batch_of_both_passes_agrees_with_enumeration():
    """One batch: ordinary scores (scaled pass), the two-long-children
    document at 600 (its outer mention's inner chart would be 1e-261 of the
    first level: the log-space pass), and spans at -700 (weights below 1e-304,
    the scaled pass)."""
    rng = np.random.default_rng(0)
    ordinary = rng.normal(size=(21, 1))
    refused = two_long_children_document(600.0)
    tiny = rng.normal(size=(15, 1))
    tiny[rows_of(5, [(0, 2), (1, 1), (2, 4)])] = -700.0
    assert scaled_pass_takes(ordinary) and scaled_pass_takes(tiny) and not scaled_pass_takes(refused)
    scores = np.concatenate([ordinary, refused, tiny])
    assert_like_enumeration(scores, np.array([0, 6, 11, 16]))
    _, got = marginals(refused, [0, 5], "quadratic")
    np.testing.assert_allclose(got[rows_of(5, [(0, 4), (0, 1), (3, 4)]), 0], [2 / 3] * 3, rtol=1e-12)


def straddled_document(score):
    """Three words, the mention [0, 1] at ``score``, every other span at 0: in
    every space the first level grows by exp(score) at fencepost 2 while the
    inside of the span (1, 3), which the mention straddles, does not, so its
    scaled part is about exp(-score)."""
    scores = np.zeros((6, 2))
    scores[rows_of(3, [(0, 1)])] = score
    return scores


@pytest.mark.parametrize("space", SPACES)
def test_a_batch_of_both_passes_agrees_with_enumeration_in_every_space(space):
    """One batch: ordinary scores (scaled pass), a mention at 600 straddling a
    span (its scaled part would be 1e-261: the log-space pass), a mention at
    700 (its weight exceeds HUGE: the log-space pass) and spans at -700
    (weights below 1e-304, the scaled pass)."""
    rng = np.random.default_rng(2)
    ordinary = rng.normal(size=(15, 2))
    straddled = straddled_document(600.0)
    huge = rng.normal(size=(10, 2))
    huge[rows_of(4, [(1, 2)]), 1] = 700.0
    tiny = rng.normal(size=(15, 2))
    tiny[rows_of(5, [(0, 2), (1, 1), (2, 4)])] = -700.0
    assert scaled_pass_takes(ordinary, space) and scaled_pass_takes(tiny, space)
    assert not scaled_pass_takes(straddled, space) and not scaled_pass_takes(huge, space)
    scores = np.concatenate([ordinary, straddled, huge, tiny])
    assert_like_enumeration(scores, np.array([0, 5, 8, 12, 17]), space=space)


@pytest.mark.parametrize("space", SPACES)
def test_a_weight_above_huge_with_excluded_spans_agrees_with_enumeration(space):
    """A weight above HUGE found in an early column (the log-space pass
    takes the document) in a document with excluded spans and spans longer
    than max_length in later columns: their marginals are exactly 0, the
    rest enumeration's."""
    rng = np.random.default_rng(3)
    scores = rng.normal(size=(15, 2))
    scores[rows_of(5, [(0, 1)]), 0] = 700.0
    mask = np.ones(15, dtype=bool)
    mask[rows_of(5, [(0, 0), (3, 3), (3, 4)])] = False
    log_z, got = marginals(scores, [0, 5], space, 2, mask)
    lengths = np.array([last - first + 1 for last in range(5) for first in range(last + 1)])
    assert np.all(got[~mask | (lengths > 2)] == 0.0)
    assert_like_enumeration(scores, np.array([0, 5]), 2, mask, space)


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("scale", [0.1, 3.0, 30.0, 150.0, 300.0, 650.0])
def test_scores_up_to_hundreds_agree_with_enumeration(scale, space):
    """Random scores of every scale up to the largest weight the scaled pass
    takes (exp(690)), some spans at +-300..690: whichever pass takes each
    document, log Z and the marginals are those of enumeration."""
    rng = np.random.default_rng(int(scale * 10))
    for _ in range(25):
        T = int(rng.integers(1, 3))
        lengths = rng.integers(0, (6 if T == 1 else 5) + 1, int(rng.integers(1, 4)))
        doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        S = int(dense_span_offsets(doc_offsets)[-1])
        scores = rng.normal(0.0, scale, (S, T))
        if S:
            extreme = rng.integers(0, S, 3)
            scores[extreme] = rng.choice([-1.0, 1.0], size=(3, 1)) * rng.uniform(300.0, 690.0, size=(3, 1))
        mask = None if rng.random() < 0.5 else rng.random(S) < 0.7
        max_length = None if rng.random() < 0.5 else int(rng.integers(1, 7))
        assert_like_enumeration(scores, doc_offsets, max_length, mask, space)


@pytest.mark.parametrize("space", SPACES)
def test_the_scaled_pass_takes_long_documents_of_ordinary_scores(space):
    """Each column is scaled to the first level, so a long document of
    ordinary scores stays in range (no log-space pass): 400 words, spans of up
    to 30, normal scores of scale 3."""
    n, width = 400, 30
    rng = np.random.default_rng(1)
    scores = rng.normal(0.0, 3.0, (n * (n + 1) // 2, 2))
    log_z, ok = scaled_pass(scores, space, width)
    assert ok and np.isfinite(log_z)
