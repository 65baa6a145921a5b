"""Every structure against its brute-force twin through the one protocol
(``structures.protocol``): one table of (structure, options, random batch,
enumeration of its analyses) drives the same contract checks for all of
them. Adding a structure means adding a row.

For each random batch: log Z is the log-sum of the weights of the analyses
of each unit; the marginals are the expected indicators (the gradient of
sum(log Z)); the mention marginals are the probability of each mention;
Viterbi reaches the best weight with the mentions of the best analysis;
posterior decoding reaches the largest sum of (marginal - penalty) over
the mentions of any analysis, with the mention set of one analysis; the
negative log-likelihood of the Viterbi analysis is log Z - its weight, and
its gradient marginals - its indicator. Example budget: ``budgets``."""

import math
from typing import Callable, NamedTuple

import brute_analyses
import numpy as np
import pytest
from budgets import cases

from experiments.bench.random_trees import random_forest
from spacy_depner.structures import chain, hypergraph
from spacy_depner.structures.chain import CHAIN
from spacy_depner.structures.hypergraph import HYPERGRAPH
from spacy_depner.structures.lattice import LATTICE
from spacy_depner.structures.lattice import layout as lattice_layout
from spacy_depner.structures.nested import NESTED
from spacy_depner.structures.nested import layout as nested_layout
from spacy_depner.structures.protocol import Layout
from spacy_depner.structures.trees.candidate_spans import all_spans, candidate_spans, merge_spans


def unit_offsets(rng, max_length, min_length=0):
    lengths = rng.integers(min_length, max_length + 1, int(rng.integers(1, 4)))
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def lattice_batch(rng, kind):
    offsets = unit_offsets(rng, 5, min_length=0 if kind == "semi_markov" else 1)  # a random tree has a token
    n = int(offsets[-1])
    if kind == "semi_markov":
        spans = all_spans(offsets, int(rng.integers(1, 4)))
    else:
        heads, sentence_offsets = random_forest(np.diff(offsets).tolist(), rng)
        spans = candidate_spans(kind, heads, sentence_offsets, None)
    tokens = np.arange(n, dtype=np.int64)
    spans = merge_spans(spans, np.stack([tokens, tokens], axis=1), n)
    K = int(rng.integers(2, 4))
    scale = rng.uniform(0.3, 3.0)
    layout = lattice_layout(spans, offsets)
    return (rng.normal(0, scale, (spans.shape[0], K)), rng.normal(0, scale, (K + 1, K + 1))), layout, {}


def chain_batch(rng, scheme):
    offsets = unit_offsets(rng, 4)
    T = 1 + (2 if scheme == "BIO" else 4) * int(rng.integers(1, 3))
    scale = rng.uniform(0.3, 3.0)
    return (
        (rng.normal(0, scale, (int(offsets[-1]), T)), rng.normal(0, scale, (T + 1, T + 1))),
        chain.layout(offsets),
        {"scheme": scheme},
    )


def nested_batch(rng, space):
    offsets = unit_offsets(rng, 4)
    spans = all_spans(offsets, None)
    if spans.shape[0] and rng.random() < 0.5:  # a subset of the spans: a mask
        keep = rng.random(spans.shape[0]) < 0.7
        spans = spans[keep]
    T = int(rng.integers(1, 3))
    max_length = [None, 1, 2, 3][int(rng.integers(4))]
    return (
        rng.normal(0, rng.uniform(0.3, 3.0), (spans.shape[0], T)),
        nested_layout(spans, offsets),
        {"space": space, "max_length": max_length},
    )


def hypergraph_batch(rng, heads):
    offsets = unit_offsets(rng, 3 if not heads else 2)
    T = int(rng.integers(1, 3)) if not heads else 1
    K = 17 if heads else 5
    options = {"mention_penalty": float(rng.normal()), "heads": heads}
    return rng.normal(0, rng.uniform(0.3, 2.0), (int(offsets[-1]), T, K)), hypergraph.layout(offsets), options


class Row(NamedTuple):
    structure: object
    batch: Callable  # rng -> (scores, layout, options)
    brute: Callable  # (scores, layout, **options) -> per unit [brute_analyses.Analysis]
    posterior: bool = True  # mention marginals (Marginals.mentions, Marginals.of) and posterior decoding are defined


TABLE = {
    "lattice semi_markov": Row(
        LATTICE, lambda rng: lattice_batch(rng, "semi_markov"), lambda s, l: brute_analyses.lattice(s, l)
    ),
    "lattice dgm": Row(LATTICE, lambda rng: lattice_batch(rng, "dgm"), lambda s, l: brute_analyses.lattice(s, l)),
    "chain BIO": Row(CHAIN, lambda rng: chain_batch(rng, "BIO"), brute_analyses.chain),
    "chain BILOU": Row(CHAIN, lambda rng: chain_batch(rng, "BILOU"), brute_analyses.chain),
    "nested semi_markov": Row(NESTED, lambda rng: nested_batch(rng, "semi_markov"), brute_analyses.nested),
    "nested cyk": Row(NESTED, lambda rng: nested_batch(rng, "cyk"), brute_analyses.nested),
    "nested quadratic": Row(NESTED, lambda rng: nested_batch(rng, "quadratic"), brute_analyses.nested),
    "hypergraph": Row(HYPERGRAPH, lambda rng: hypergraph_batch(rng, False), brute_analyses.hypergraph),
    "hypergraph heads": Row(
        HYPERGRAPH, lambda rng: hypergraph_batch(rng, True), brute_analyses.hypergraph, posterior=False
    ),
}


def parts(scores):
    return scores if isinstance(scores, tuple) else (scores,)


def logsumexp(values):
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def check_row(row: Row, rng) -> None:
    scores, layout, options = row.batch(rng)
    units = row.brute(scores, layout, **options)
    log_z = np.array([logsumexp([a.weight for a in unit]) for unit in units])
    probabilities = [[math.exp(a.weight - z) for a in unit] for unit, z in zip(units, log_z)]
    np.testing.assert_allclose(row.structure.log_partition(scores, layout, **options), log_z, rtol=1e-9, atol=1e-9)

    marginals = row.structure.marginals(scores, layout, **options)
    np.testing.assert_allclose(marginals.log_z, log_z, rtol=1e-9, atol=1e-9)
    expected = [np.zeros(np.shape(part)) for part in parts(scores)]
    mention_marginals = {}
    for unit, ps in zip(units, probabilities):
        for analysis, p in zip(unit, ps):
            for e, c in zip(expected, analysis.counts):
                e += p * c
            for m in analysis.mentions:
                mention_marginals[m] = mention_marginals.get(m, 0.0) + p
    for got, want in zip(parts(marginals.scores), expected):
        np.testing.assert_allclose(got, want, atol=1e-9)
    if row.posterior:
        found, values = marginals.mentions(-1.0)
        got = dict(zip(map(tuple, found.tolist()), values.tolist()))
        assert {m for m, p in mention_marginals.items() if p > 1e-12} <= set(got)
        for m, p in got.items():
            assert abs(p - mention_marginals.get(m, 0.0)) < 1e-9
    if row.posterior and mention_marginals:
        queries = np.array(sorted(mention_marginals), dtype=np.int64).reshape(len(mention_marginals), -1)
        want = [mention_marginals[tuple(q)] for q in queries.tolist()]
        np.testing.assert_allclose(marginals.of(queries), want, atol=1e-9)

    entropy = -sum(p * (a.weight - z) for unit, ps, z in zip(units, probabilities, log_z) for a, p in zip(unit, ps))
    assert abs(row.structure.entropy(scores, layout, marginals, **options) - entropy) < 1e-8 * max(
        1.0, abs(log_z).sum()
    )

    best = row.structure.viterbi(scores, layout, **options)
    top = [max(range(len(unit)), key=lambda i: unit[i].weight) for unit in units]
    np.testing.assert_allclose(best.score, [unit[i].weight for unit, i in zip(units, top)], rtol=1e-9, atol=1e-9)
    assert {tuple(m) for m in best.mentions.tolist()} == set().union(*(unit[i].mentions for unit, i in zip(units, top)))
    assert abs(row.structure.score(scores, layout, best.encoding, **options) - best.score.sum()) < 1e-8

    loss, gradient = row.structure.nll(scores, layout, best.encoding, **options)
    assert abs(loss - (log_z.sum() - best.score.sum())) < 1e-8
    for g, e, c in zip(parts(gradient), expected, zip(*(unit[i].counts for unit, i in zip(units, top)))):
        np.testing.assert_allclose(g, e - sum(c), atol=1e-9)

    if row.posterior:
        penalty = float(rng.choice([0.0, 0.5, rng.random()]))
        decoded = row.structure.posterior_decode(marginals, layout, penalty=penalty, **options)
        gains = [max(sum(mention_marginals[m] - penalty for m in a.mentions) for a in unit) for unit in units]
        np.testing.assert_allclose(decoded.score, gains, atol=1e-9)
        chosen = {tuple(m) for m in decoded.mentions.tolist()}
        for u, unit in enumerate(units):
            lo, hi = layout.offsets[u], layout.offsets[u + 1]
            mine = frozenset(m for m in chosen if lo <= m[0] < hi)
            assert any(mine == a.mentions for a in unit), "the posterior mentions are no analysis of the space"
            assert abs(sum(mention_marginals[m] - penalty for m in mine) - gains[u]) < 1e-9


@pytest.mark.parametrize("name", sorted(TABLE))
def test_every_structure_equals_its_brute_force_twin(name):
    rng = np.random.default_rng(sorted(TABLE).index(name))
    for _ in range(cases("protocol.random")):
        check_row(TABLE[name], rng)


def one_unit(scores, layout: Layout, u: int):
    """The scores and layout of unit ``u`` alone, in its own coordinates."""
    lo, hi = int(layout.offsets[u]), int(layout.offsets[u + 1])
    offsets = np.array([0, hi - lo], dtype=np.int64)
    if layout.spans is None:  # one row per token: chain, hypergraph
        rows = slice(lo, hi)
        new_layout = chain.layout(offsets)
    else:
        inside = np.flatnonzero((layout.spans[:, 0] >= lo) & (layout.spans[:, 1] < hi))
        rows, spans = inside, layout.spans[inside] - lo
        new_layout = (
            lattice_layout(spans, offsets) if layout.span_offsets is not None else nested_layout(spans, offsets)
        )
    first, *rest = parts(scores)
    unit_scores = (first[rows], *rest)
    return (unit_scores if isinstance(scores, tuple) else unit_scores[0]), new_layout


@pytest.mark.parametrize("name", sorted(TABLE))
def test_a_batch_equals_its_units_one_by_one(name):
    row, rng = TABLE[name], np.random.default_rng(100 + sorted(TABLE).index(name))
    for _ in range(cases("protocol.random") // 10):
        scores, layout, options = row.batch(rng)
        log_z = row.structure.log_partition(scores, layout, **options)
        best = row.structure.viterbi(scores, layout, **options)
        mentions = []
        for u in range(len(layout.offsets) - 1):
            unit_scores, unit_layout = one_unit(scores, layout, u)
            np.testing.assert_allclose(
                row.structure.log_partition(unit_scores, unit_layout, **options),
                log_z[u : u + 1],
                rtol=1e-12,
                atol=1e-12,
            )
            unit_best = row.structure.viterbi(unit_scores, unit_layout, **options)
            np.testing.assert_allclose(unit_best.score, best.score[u : u + 1], rtol=1e-12, atol=1e-12)
            shifted = unit_best.mentions.copy()
            shifted[:, [0, 1] + ([3, 4] if shifted.shape[1] == 5 else [])] += layout.offsets[u]
            mentions += [tuple(m) for m in shifted.tolist()]
        assert sorted(mentions) == sorted(tuple(m) for m in best.mentions.tolist())


@pytest.mark.parametrize("name", sorted(TABLE))
def test_marginals_are_the_finite_difference_gradient_of_log_z(name):
    row, rng = TABLE[name], np.random.default_rng(200 + sorted(TABLE).index(name))
    for _ in range(cases("protocol.random") // 10):
        scores, layout, options = row.batch(rng)
        gradient = parts(row.structure.marginals(scores, layout, **options).scores)
        for p, part in enumerate(parts(scores)):
            if part.size == 0:
                continue
            index = tuple(int(rng.integers(d)) for d in part.shape)
            shifted = []
            for eps in (1e-5, -1e-5):
                moved = [np.array(x, dtype=np.float64) for x in parts(scores)]
                moved[p][index] += eps
                moved = tuple(moved) if isinstance(scores, tuple) else moved[0]
                shifted.append(row.structure.log_partition(moved, layout, **options).sum())
            assert abs((shifted[0] - shifted[1]) / 2e-5 - gradient[p][index]) < 1e-6


@pytest.mark.parametrize("name", sorted(TABLE))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_are_value_errors(name, bad):
    """In any part of the scores, for every operation (a NaN or an infinity
    is never a numba crash, a NaN result or a silent answer)."""
    row, rng = TABLE[name], np.random.default_rng(300)
    scores, layout, options = row.batch(rng)
    while not all(part.size for part in parts(scores)):
        scores, layout, options = row.batch(rng)
    for p in range(len(parts(scores))):
        broken = [np.array(x, dtype=np.float64) for x in parts(scores)]
        broken[p].flat[int(rng.integers(broken[p].size))] = bad
        broken = tuple(broken) if isinstance(scores, tuple) else broken[0]
        for operation in (row.structure.log_partition, row.structure.marginals, row.structure.viterbi):
            with pytest.raises(ValueError, match="finite"):
                operation(broken, layout, **options)
