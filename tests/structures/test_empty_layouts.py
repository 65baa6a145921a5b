"""Empty layouts under every kind of evidence, for every structure of the
protocol table (``test_protocol.TABLE``), against the brute-force twins.

An empty layout is a batch of units with no token (offsets [0], [0, 0], ...)
or, in the nested spaces, units whose tokens have no candidate span (the
mask excludes every span): each unit has exactly one analysis, the empty
one, of weight 0. Under gold (``nll``), missing tokens (``constrained``,
``partial_nll``, ``conditioned``), rejected mentions and accepted mentions,
every operation gives what enumeration gives (log Z 0, zero gradients, no
mention), or a ValueError where the evidence names a mention no analysis
can hold (an accepted one) or a token outside the batch; never an
IndexError or a numba crash. A rejected mention that no analysis can
contain changes nothing."""

import itertools
import math

import brute_analyses
import numpy as np
import pytest
from test_partial import touches
from test_protocol import TABLE, logsumexp, parts

from spacy_depner.structures import chain, hypergraph
from spacy_depner.structures.lattice import layout as lattice_layout
from spacy_depner.structures.nested import layout as nested_layout

UNIT_COUNTS = (0, 1, 3)  # units per batch
NO_SPAN_LENGTHS = ((1,), (2,), (0, 3), (1, 0, 2))  # nested: unit lengths of batches whose tokens have no span


def empty_batches(name):
    """(scores, layout, options) of the row ``name``: every empty layout of
    ``UNIT_COUNTS`` units, and for the nested rows the batches of
    ``NO_SPAN_LENGTHS`` with no span at all."""
    batches = []
    for units in UNIT_COUNTS:
        offsets = np.zeros(units + 1, dtype=np.int64)
        if name.startswith("lattice"):
            K = 3
            batches.append(((np.zeros((0, K)), np.ones((K + 1, K + 1))), lattice_layout(np.zeros((0, 2)), offsets), {}))
        elif name.startswith("chain"):
            scheme = name.split()[1]
            T = 1 + (2 if scheme == "BIO" else 4) * 2
            batches.append(((np.zeros((0, T)), np.ones((T + 1, T + 1))), chain.layout(offsets), {"scheme": scheme}))
        elif name.startswith("nested"):
            batches.append((np.zeros((0, 2)), nested_layout(np.zeros((0, 2)), offsets), {"space": name.split()[1]}))
        else:
            heads = name.endswith("heads")
            K = 17 if heads else 5
            options = {"mention_penalty": -0.5, "heads": heads}
            batches.append((np.zeros((0, 1, K)), hypergraph.layout(offsets), options))
    if name.startswith("nested"):
        for lengths in NO_SPAN_LENGTHS:
            offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            batches.append((np.zeros((0, 2)), nested_layout(np.zeros((0, 2)), offsets), {"space": name.split()[1]}))
    return batches


def missing_masks(n_tokens):
    return [np.array(bits, dtype=bool) for bits in itertools.product([False, True], repeat=n_tokens)]


def every_mention(offsets, n_labels):
    """Every mention [first, last, label] within a unit of the batch ``offsets``."""
    return [
        (a, b, k)
        for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist())
        for a in range(lo, hi)
        for b in range(a, hi)
        for k in range(n_labels)
    ]


def n_labels_of(name, scores):
    if name.startswith("lattice"):
        return scores[0].shape[1] - 1
    if name.startswith("chain"):
        return (scores[0].shape[1] - 1) // (2 if name.endswith("BIO") else 4)
    return np.shape(scores)[1]


def expected(units, allowed, scores):
    """(log Z, expected indicator per part of ``scores``) of the analyses
    ``allowed`` keeps, from the enumeration ``units``."""
    log_z, counts = 0.0, [np.zeros(np.shape(p)) for p in parts(scores)]
    for unit in units:
        kept = [a for a in unit if allowed(a)]
        z = logsumexp([a.weight for a in kept])
        log_z += z
        for a in kept:
            share = [math.exp(a.weight - z) * c for c in a.counts]
            counts = [c + s for c, s in zip(counts, share)]
    return log_z, counts


def assert_counts(got, want):
    for g, w in zip(parts(got), want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(g, w, atol=1e-12)


def check_unconditioned(name, row, scores, layout, options, units):
    log_z, counts = expected(units, lambda a: True, scores)
    np.testing.assert_allclose(row.structure.log_partition(scores, layout, **options), [0.0] * len(units))
    marginals = row.structure.marginals(scores, layout, **options)
    np.testing.assert_allclose(marginals.log_z, [0.0] * len(units))
    assert_counts(marginals.scores, counts)
    best = row.structure.viterbi(scores, layout, **options)
    assert best.mentions.shape[0] == 0 and np.all(best.score == 0.0)
    loss, gradient = row.structure.nll(scores, layout, best.encoding, **options)  # gold: the empty analysis
    assert loss == pytest.approx(log_z)
    assert_counts(gradient, [np.zeros(np.shape(p)) for p in parts(scores)])
    if row.posterior:
        found, values = marginals.mentions(-1.0)
        assert found.shape[0] == 0 and values.shape[0] == 0
        queries = np.array(every_mention(layout.offsets, n_labels_of(name, scores)), dtype=np.int64)
        np.testing.assert_allclose(marginals.of(queries.reshape(-1, 3)), np.zeros(queries.shape[0]))
        decoded = row.structure.posterior_decode(marginals, layout, penalty=0.5, **options)
        assert decoded.mentions.shape[0] == 0 and np.all(decoded.score == 0.0)
    assert row.structure.entropy(scores, layout, marginals, **options) == 0.0
    return best.encoding


def check_evidence(name, row, scores, layout, options, units, gold):
    """Missing tokens and rejected mentions (every subset of one mention or
    all of them), against the agreeing analyses; accepted mentions refused."""
    n_tokens, n_labels = layout.n_tokens, n_labels_of(name, scores)
    mentions = every_mention(layout.offsets, n_labels)
    for missing in missing_masks(n_tokens):
        for rejected in [set()] + [{m} for m in mentions] + [set(mentions)]:
            as_array = np.array(sorted(rejected), dtype=np.int64).reshape(-1, 3)
            log_z, counts = expected(
                units,
                lambda a: not {m for m in a.mentions if touches(m, missing)} and not (set(a.mentions) & rejected),
                scores,
            )
            got, gradient = row.structure.constrained(scores, layout, gold, missing, as_array, **options)
            assert got == pytest.approx(log_z)
            assert_counts(gradient, counts)
            loss, gradient = row.structure.partial_nll(scores, layout, gold, missing, as_array, **options)
            assert loss == pytest.approx(0.0)
            assert_counts(gradient, [np.zeros(np.shape(p)) for p in parts(scores)])
            conditioned = row.structure.conditioned(scores, layout, gold, missing, rejected=as_array, **options)
            assert conditioned.fixed.shape[0] == 0 and conditioned.fixed_score == 0.0
            if conditioned.tokens.shape[0]:
                assert row.structure.viterbi(conditioned.scores, conditioned.layout, **options).mentions.shape[0] == 0
        for accepted in mentions:
            with pytest.raises(ValueError, match="accepted"):
                row.structure.constrained(scores, layout, gold, missing, None, np.array([accepted]), **options)
    if not n_tokens:  # a mention in a batch with no tokens lies outside it
        with pytest.raises(ValueError, match="rejected mention"):
            row.structure.constrained(scores, layout, gold, np.zeros(0, bool), np.array([[0, 0, 0]]), **options)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_empty_layouts_under_every_kind_of_evidence(name):
    row = TABLE[name]
    for scores, layout, options in empty_batches(name):
        units = row.brute(scores, layout, **options)
        assert [len(unit) for unit in units] == [1] * (len(layout.offsets) - 1)
        gold = check_unconditioned(name, row, scores, layout, options, units)
        if row.structure.takes_rejected:
            check_evidence(name, row, scores, layout, options, units, gold)


def test_the_brute_force_twins_enumerate_the_empty_analysis():
    """The twins themselves: a unit with no token, or no span, has one analysis, of weight 0."""
    scores, layout, options = empty_batches("nested quadratic")[-1]
    units = brute_analyses.nested(scores, layout, **options)
    assert [[(a.weight, a.mentions) for a in unit] for unit in units] == [[(0.0, frozenset())]] * 3
