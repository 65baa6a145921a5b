"""Posterior (minimum Bayes risk) decoding of ``segment_lattice`` against
brute force: on random lattices (every single token, plus random longer
spans), random "marginals" in [0, 1] and penalties in [0, 1], every labelled
segmentation of each document is enumerated (``brute_segment_lattice``), its
objective (the sum over its entity segments of marginal - penalty) computed,
and the best one's objective must equal the decoder's gain; the decoded
labels must be a labelled segmentation that attains it."""

import numpy as np
import pytest
from brute_segment_lattice import labelled_segmentations_of_document

from spacy_depner.structures.lattice._segment_lattice import marginals, posterior_decode


def random_lattice(rng, max_doc_length=6):
    """(spans, span_offsets, doc_offsets): 1-3 documents of 0..max_doc_length
    tokens, every token a span, and each longer span with probability 0.4,
    sorted by (last, first) in each document."""
    lengths = rng.integers(0, max_doc_length + 1, int(rng.integers(1, 4)))
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    spans, span_offsets = [], [0]
    for first, end in zip(doc_offsets[:-1].tolist(), doc_offsets[1:].tolist()):
        for last in range(first, end):
            spans += [(i, last) for i in range(first, last + 1) if i == last or rng.random() < 0.4]
        span_offsets.append(len(spans))
    return np.array(spans, dtype=np.int64).reshape(-1, 2), np.array(span_offsets, dtype=np.int64), doc_offsets


def brute_best(spans, span_offsets, doc_offsets, span_marginals, penalty):
    """Per document, the largest objective over every labelled segmentation."""
    K = span_marginals.shape[1]
    best = []
    for d in range(len(doc_offsets) - 1):
        groups = labelled_segmentations_of_document(
            spans, int(span_offsets[d]), int(span_offsets[d + 1]), int(doc_offsets[d]), int(doc_offsets[d + 1]), K
        )
        values = []
        for rows, labels in groups:
            gains = (
                np.where(labels > 0, span_marginals[rows[None, :], labels] - penalty, 0.0)
                if rows.size
                else np.zeros((1, 0))
            )
            values.append(gains.sum(axis=1).max())
        best.append(max(values))
    return np.array(best)


def check_segmentation(spans, span_offsets, doc_offsets, labels, n_labels):
    """The spans labelled >= 0 tile each document; O (0) only on one-token spans."""
    for d in range(len(doc_offsets) - 1):
        rows = [s for s in range(span_offsets[d], span_offsets[d + 1]) if labels[s] >= 0]
        position = int(doc_offsets[d])
        for s in sorted(rows, key=lambda r: spans[r, 0]):
            assert spans[s, 0] == position and labels[s] < n_labels
            assert labels[s] > 0 or spans[s, 0] == spans[s, 1]
            position = int(spans[s, 1]) + 1
        assert position == doc_offsets[d + 1]


@pytest.mark.parametrize("seed", range(40))
def test_equals_the_best_labelled_segmentation(seed):
    rng = np.random.default_rng(seed)
    spans, span_offsets, doc_offsets = random_lattice(rng)
    K = int(rng.integers(1, 4))
    span_marginals = rng.random((spans.shape[0], K))
    penalty = float(rng.choice([0.0, 1.0, rng.random()]))
    gain, labels = posterior_decode(spans, span_offsets, doc_offsets, span_marginals, penalty)
    np.testing.assert_allclose(
        gain, brute_best(spans, span_offsets, doc_offsets, span_marginals, penalty), rtol=0, atol=1e-12
    )
    check_segmentation(spans, span_offsets, doc_offsets, labels, K)
    entity = np.flatnonzero(labels > 0)
    doc_of = np.searchsorted(doc_offsets, spans[entity, 0], side="right") - 1
    attained = np.bincount(
        doc_of, weights=span_marginals[entity, labels[entity]] - penalty, minlength=len(doc_offsets) - 1
    )
    np.testing.assert_allclose(attained, gain, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_penalty_one_half_keeps_exactly_the_entities_more_likely_than_not(seed):
    """Two segments of one segmentation that overlap cannot both be in it, so
    under the lattice's own marginals at most one of any overlapping spans
    (or labels of a span) has a marginal above 1/2: posterior decoding with
    penalty 1/2 predicts exactly the span-labels whose marginal exceeds 1/2."""
    rng = np.random.default_rng(seed)
    spans, span_offsets, doc_offsets = random_lattice(rng, max_doc_length=12)
    K = int(rng.integers(2, 5))
    scores = rng.normal(0.0, 3.0, (spans.shape[0], K))
    transitions = rng.normal(0.0, 1.0, (K + 1, K + 1))
    _, span_marginals, _ = marginals(spans, span_offsets, doc_offsets, scores, transitions)
    _, labels = posterior_decode(spans, span_offsets, doc_offsets, span_marginals, 0.5)
    likely = {(s, k) for s, k in zip(*np.nonzero(span_marginals[:, 1:] > 0.5))}
    assert {(s, labels[s] - 1) for s in np.flatnonzero(labels > 0)} == likely


def test_no_entity_label_or_no_span_decodes_to_all_outside():
    spans = np.array([[0, 0], [1, 1]])
    gain, labels = posterior_decode(spans, [0, 2], [0, 2], np.ones((2, 1)), 0.5)
    assert gain.tolist() == [0.0] and labels.tolist() == [0, 0]
    gain, labels = posterior_decode(np.zeros((0, 2), np.int64), [0, 0], [0, 0], np.zeros((0, 3)), 0.5)
    assert gain.tolist() == [0.0] and labels.tolist() == []


@pytest.mark.parametrize(
    "marginals_, penalty, message",
    [
        (np.full((2, 2), 1.5), 0.5, "probabilities"),
        (np.full((2, 2), np.nan), 0.5, "probabilities"),
        (np.zeros((3, 2)), 0.5, "one row per span"),
        (np.zeros((2, 2)), -0.1, "penalty"),
        (np.zeros((2, 2)), float("inf"), "penalty"),
    ],
)
def test_bad_input_is_a_value_error(marginals_, penalty, message):
    with pytest.raises(ValueError, match=message):
        posterior_decode(np.array([[0, 0], [1, 1]]), [0, 2], [0, 2], marginals_, penalty)
    with pytest.raises(ValueError, match="every token must be a candidate span"):
        posterior_decode(np.array([[0, 0]]), [0, 1], [0, 2], np.zeros((1, 2)), 0.5)
