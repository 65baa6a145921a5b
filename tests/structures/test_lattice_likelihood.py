"""The lattice's fused negative log-likelihood (``lattice.likelihood``) and
its Viterbi with the batch checked in the compiled call, against
enumeration (``brute_analyses.lattice``): every gold segmentation of random
batches (not only the best), the cases the fused call leaves to the
composed operations (which must then give the same answer or the same
ValueError), and Viterbi on scores with ties."""

import math

import brute_analyses
import numpy as np
import pytest
from test_protocol import lattice_batch

from spacy_depner.structures.lattice import LATTICE
from spacy_depner.structures.lattice import _segment_lattice as segment_lattice
from spacy_depner.structures.lattice.likelihood import fused_nll
from spacy_depner.structures.protocol import Structure


def logsumexp(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def encoding_of(analyses, n_spans):
    """The encoding (S,) of one analysis per unit: the label of each of its segments, -1 elsewhere."""
    labels = np.full(n_spans, -1, dtype=np.int64)
    for analysis in analyses:
        indicator = analysis.counts[0]
        rows, columns = np.nonzero(indicator)
        labels[rows] = columns
    return labels


@pytest.mark.parametrize("kind", ["semi_markov", "dgm", "dgm_s"])
def test_fused_nll_of_every_gold_equals_enumeration(kind):
    rng = np.random.default_rng(["semi_markov", "dgm", "dgm_s"].index(kind))
    for _ in range(60):
        scores, layout, _ = lattice_batch(rng, kind)
        units = brute_analyses.lattice(scores, layout)
        log_z = [logsumexp([a.weight for a in unit]) for unit in units]
        expected = [np.zeros(np.shape(part)) for part in scores]
        for unit, z in zip(units, log_z):
            for analysis in unit:
                for e, c in zip(expected, analysis.counts):
                    e += math.exp(analysis.weight - z) * c
        for _ in range(3):
            picked = [unit[int(rng.integers(len(unit)))] for unit in units]
            gold = encoding_of(picked, layout.spans.shape[0])
            args = segment_lattice._arrays(layout.spans, layout.span_offsets, layout.offsets, *scores)
            fused = fused_nll(*args, gold)
            assert fused is not None, "the fused call refused a valid batch"
            loss, gradient = fused
            assert abs(loss - (sum(log_z) - sum(a.weight for a in picked))) < 1e-8
            for g, e, c in zip(gradient, expected, zip(*(a.counts for a in picked))):
                np.testing.assert_allclose(g, e - sum(c), atol=1e-9)
            composed_loss, composed_gradient = Structure.nll(LATTICE, scores, layout, gold)
            assert abs(loss - composed_loss) < 1e-9
            for g, c in zip(gradient, composed_gradient):
                np.testing.assert_allclose(g, c, atol=1e-12)


def some_batch(rng):
    scores, layout, _ = lattice_batch(rng, "dgm")
    while layout.spans.shape[0] < 3:
        scores, layout, _ = lattice_batch(rng, "dgm")
    gold = np.where(layout.spans[:, 0] == layout.spans[:, 1], 0, -1)
    return scores, layout, gold


def test_cases_the_fused_call_leaves_to_the_composed_operations():
    """Wide transitions (the log-space recursions), forbidden span labels and
    scores out of range: the same answer or ValueError as composed."""
    rng = np.random.default_rng(7)
    scores, layout, gold = some_batch(rng)
    wide = (scores[0], scores[1] * 0 + np.linspace(0, 300, scores[1].size).reshape(scores[1].shape))
    args = segment_lattice._arrays(layout.spans, layout.span_offsets, layout.offsets, *wide)
    assert fused_nll(*args, gold) is None
    loss, gradient = LATTICE.nll(wide, layout, gold)
    composed_loss, composed_gradient = Structure.nll(LATTICE, wide, layout, gold)
    assert loss == composed_loss and all(np.array_equal(g, c) for g, c in zip(gradient, composed_gradient))
    huge = (scores[0] * 1e9, scores[1])
    args = segment_lattice._arrays(layout.spans, layout.span_offsets, layout.offsets, *huge)
    assert fused_nll(*args, gold) is None
    with pytest.raises(ValueError, match="out of range"):
        LATTICE.nll(huge, layout, gold)


@pytest.mark.parametrize(
    "break_gold",
    [
        lambda spans, gold: np.full_like(gold, -1),  # covers nothing
        lambda spans, gold: np.zeros_like(gold),  # every span O: long O segments, overlaps
        lambda spans, gold: np.where(gold == 0, 7, gold),  # a label out of range
        lambda spans, gold: gold.astype(float),  # not integers
        lambda spans, gold: gold[:-1],  # one label short
    ],
)
def test_a_bad_gold_is_the_composed_value_error(break_gold):
    rng = np.random.default_rng(8)
    scores, layout, gold = some_batch(rng)
    bad = break_gold(layout.spans, gold)
    with pytest.raises(ValueError) as composed:
        Structure.nll(LATTICE, scores, layout, bad)
    with pytest.raises(ValueError) as fused:
        LATTICE.nll(scores, layout, bad)
    assert str(fused.value) == str(composed.value)


def test_viterbi_with_ties_reaches_the_best_weight_with_one_best_analysis():
    """Integer scores in {0, 1} tie many segmentations: the result is one of
    the best, its weight the best weight, in every unit."""
    rng = np.random.default_rng(9)
    for _ in range(100):
        scores, layout, _ = lattice_batch(rng, str(rng.choice(["semi_markov", "dgm"])))
        scores = tuple(rng.integers(0, 2, np.shape(part)).astype(float) for part in scores)
        units = brute_analyses.lattice(scores, layout)
        best = LATTICE.viterbi(scores, layout)
        np.testing.assert_allclose(best.score, [max(a.weight for a in unit) for unit in units], atol=1e-12)
        assert abs(LATTICE.score(scores, layout, best.encoding) - best.score.sum()) < 1e-9
        chosen = {tuple(m) for m in best.mentions.tolist()}
        for u, unit in enumerate(units):
            lo, hi = layout.offsets[u], layout.offsets[u + 1]
            mine = frozenset(m for m in chosen if lo <= m[0] < hi)
            assert any(mine == a.mentions and a.weight == best.score[u] for a in unit)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_viterbi_checks_the_values_in_its_compiled_call(bad):
    rng = np.random.default_rng(10)
    scores, layout, _ = some_batch(rng)
    broken = scores[0].copy()
    broken[-1, -1] = bad
    with pytest.raises(ValueError, match="must be finite"):
        LATTICE.viterbi((broken, scores[1]), layout)
    spans = layout.spans.copy()
    spans[[0, 1]] = spans[[1, 0]]  # out of order, or a one-token span out of place
    with pytest.raises(ValueError, match="span row"):
        segment_lattice.viterbi(spans, layout.span_offsets, layout.offsets, *scores)
