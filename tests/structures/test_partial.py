"""The constrained log-partition of a partial annotation (``partial``,
``Structure.constrained``) against enumeration: for random batches of every
structure that learns from partial annotation, a random analysis is the
gold, some of its mentions are dropped and their tokens (and other random
tokens outside the rest) made missing; the constrained log Z is the log-sum
of the weights of the analyses whose mentions touching an annotated token
are exactly the kept ones, its gradient their expected indicator, and
``partial_nll`` log Z minus it (``nll`` when nothing is missing)."""

import math

import numpy as np
import pytest
from budgets import cases
from test_protocol import TABLE, logsumexp, parts

from spacy_depner.structures import chain
from spacy_depner.structures.chain import CHAIN
from spacy_depner.structures.partial import runs_of

ROWS = sorted(name for name in TABLE if not name.startswith("hypergraph"))


def encoding_of(name, counts):
    """The structure's encoding of an analysis from its indicator."""
    indicator = counts[0]
    if name.startswith("chain"):
        return indicator.argmax(axis=1)
    return np.where(indicator.any(axis=1), indicator.argmax(axis=1), -1)


def touches(mention, missing):
    return not all(missing[mention[0] : mention[1] + 1])


def partial_case(rng, name, units, n_tokens):
    """(gold analysis per unit, missing (N,) bool, kept mentions) or None when
    the kept mentions are no analysis of the space."""
    missing = np.zeros(n_tokens, dtype=bool)
    kept, chosen = set(), []
    for unit in units:
        analysis = unit[int(rng.integers(len(unit)))]
        for m in analysis.mentions:
            if rng.random() < 0.4:
                missing[m[0] : m[1] + 1] = True
            else:
                kept.add(m)
    kept = {m for m in kept if not missing[m[0] : m[1] + 1].any()}  # nested: a mention over a dropped one goes too
    covered = np.zeros(n_tokens, dtype=bool)
    for m in kept:
        covered[m[0] : m[1] + 1] = True
    missing |= ~covered & (rng.random(n_tokens) < rng.choice([0.0, 0.3, 0.7, 1.0]))
    for unit in units:
        wanted = frozenset(kept & set().union(*(a.mentions for a in unit)))
        matches = [a for a in unit if a.mentions == wanted]
        if not matches:
            return None
        chosen.append(matches[0])
    return chosen, missing, kept


def drawn_case(name, rng):
    """A random batch of the row ``name`` with its enumeration and a random
    partial annotation of it: (row, scores, layout, options, units, gold,
    missing, kept), or None when the kept mentions are no analysis."""
    row = TABLE[name]
    scores, layout, options = row.batch(rng)
    units = row.brute(scores, layout, **options)
    case = partial_case(rng, name, units, layout.n_tokens)
    if case is None:
        return None
    chosen, missing, kept = case
    gold = encoding_of(name, tuple(sum(c) for c in zip(*(a.counts for a in chosen))))
    return row, scores, layout, options, units, gold, missing, kept


def check_partial(name, rng):
    case = drawn_case(name, rng)
    if case is None:
        return False
    row, scores, layout, options, units, gold, missing, kept = case
    log_z, expected = 0.0, [np.zeros(np.shape(p)) for p in parts(scores)]
    for unit in units:
        wanted = kept & set().union(*(a.mentions for a in unit))
        agreeing = [a for a in unit if {m for m in a.mentions if touches(m, missing)} == wanted]
        assert agreeing, "the gold analysis agrees with itself"
        z = logsumexp([a.weight for a in agreeing])
        log_z += z
        for a in agreeing:
            for e, c in zip(expected, a.counts):
                e += math.exp(a.weight - z) * c
    got, gradient = row.structure.constrained(scores, layout, gold, missing, **options)
    assert abs(got - log_z) < 1e-8 * max(1.0, abs(log_z))
    for g, e in zip(parts(gradient), expected):
        np.testing.assert_allclose(g, e, atol=1e-9)
    full = row.structure.log_partition(scores, layout, **options).sum()
    loss, nll_gradient = row.structure.partial_nll(scores, layout, gold, missing, **options)
    assert abs(loss - (full - log_z)) < 1e-8 * max(1.0, abs(full))
    marginals = row.structure.marginals(scores, layout, **options)
    for g, m, e in zip(parts(nll_gradient), parts(marginals.scores), expected):
        np.testing.assert_allclose(g, m - e, atol=1e-9)
    if not missing.any():
        reference, reference_gradient = row.structure.nll(scores, layout, gold, **options)
        assert abs(loss - reference) < 1e-8 * max(1.0, abs(reference))
        for g, r in zip(parts(nll_gradient), parts(reference_gradient)):
            np.testing.assert_allclose(g, r, atol=1e-9)
    return True


@pytest.mark.parametrize("name", ROWS)
def test_constrained_log_partition_equals_the_agreeing_analyses(name):
    rng = np.random.default_rng(100 + ROWS.index(name))
    checked = sum(check_partial(name, rng) for _ in range(cases("partial.random")))
    assert checked >= cases("partial.random") // 2


def check_conditioned(name, rng):
    """``conditioned`` against enumeration: its fixed mentions plus the lifted
    Viterbi of the runs are the best agreeing analysis, the runs' marginals
    the conditional marginals of the mentions, and fixed_score plus the runs'
    log Z the constrained log Z."""
    case = drawn_case(name, rng)
    if case is None:
        return False
    row, scores, layout, options, units, gold, missing, kept = case
    conditioned = row.structure.conditioned(scores, layout, gold, missing, **options)
    best, log_z, probability = set(), 0.0, {}
    for unit in units:
        wanted = kept & set().union(*(a.mentions for a in unit))
        agreeing = [a for a in unit if {m for m in a.mentions if touches(m, missing)} == wanted]
        best |= set(max(agreeing, key=lambda a: a.weight).mentions)
        z = logsumexp([a.weight for a in agreeing])
        log_z += z
        for a in agreeing:
            for m in a.mentions:
                probability[m] = probability.get(m, 0.0) + math.exp(a.weight - z)
    assert {tuple(int(v) for v in m) for m in conditioned.fixed} == kept
    got_z, got_best, got_probability = conditioned.fixed_score, set(kept), dict.fromkeys(kept, 1.0)
    if conditioned.tokens.shape[0]:
        got_z += float(row.structure.log_partition(conditioned.scores, conditioned.layout, **options).sum())
        analysis = row.structure.viterbi(conditioned.scores, conditioned.layout, **options)
        got_best |= {tuple(int(v) for v in m) for m in conditioned.lift(analysis.mentions)}
        free = [m for m in probability if m not in kept]
        compact = np.array([[*np.searchsorted(conditioned.tokens, m[:2]), m[2]] for m in free], dtype=np.int64)
        values = row.structure.marginals(conditioned.scores, conditioned.layout, **options).of(compact.reshape(-1, 3))
        got_probability.update(zip(free, values))
    assert abs(got_z - log_z) < 1e-8 * max(1.0, abs(log_z))
    assert got_best == best
    assert set(got_probability) == set(probability)
    for m, p in probability.items():
        assert abs(got_probability[m] - p) < 1e-9, m
    return True


@pytest.mark.parametrize("name", ROWS)
def test_conditioned_viterbi_and_marginals_are_those_of_the_agreeing_analyses(name):
    rng = np.random.default_rng(200 + ROWS.index(name))
    checked = sum(check_conditioned(name, rng) for _ in range(cases("partial.random")))
    assert checked >= cases("partial.random") // 2


def test_runs_are_the_maximal_stretches_within_units():
    missing = np.array([1, 1, 0, 1, 1, 1, 0, 0, 1], dtype=bool)
    runs = runs_of(missing, np.array([0, 4, 9]))
    assert runs.offsets.tolist() == [0, 2, 3, 5, 6]  # 0-1 | 3 (unit 0 ends) | 4-5 | 8
    assert runs.before.tolist() == [-1, 2, -1, 7]
    assert runs.after.tolist() == [2, -1, 6, -1]
    assert runs.inside(np.array([[0, 1], [3, 4], [4, 5], [1, 2]])).tolist() == [True, False, True, False]


@pytest.mark.parametrize("name", ["chain BILOU", "lattice semi_markov", "nested cyk"])
def test_a_gold_mention_on_missing_tokens_is_refused(name):
    rng = np.random.default_rng(7)
    row = TABLE[name]
    for _ in range(200):
        scores, layout, options = row.batch(rng)
        units = row.brute(scores, layout, **options)
        long = [(a, m) for unit in units for a in unit for m in a.mentions if m[1] > m[0]]
        if long:
            break
    analysis, (first, last, _) = long[0]
    gold = encoding_of(name, analysis.counts)
    missing = np.ones(layout.n_tokens, dtype=bool)
    missing[first : last + 1] = False
    missing[last] = True
    with pytest.raises(ValueError, match="gold"):
        row.structure.constrained(scores, layout, gold, missing, **options)


def test_a_bio_gold_entity_running_into_a_missing_token_is_refused():
    """B-X then a missing token whose gold tag is I-X: the entity would be
    cut at the run (BILOU refuses it by its transitions, BIO by this check)."""
    scores = (np.zeros((2, 3)), np.zeros((4, 4)))  # O, B-X, I-X
    for operation in (CHAIN.constrained, CHAIN.conditioned):
        with pytest.raises(ValueError, match="gold entity continues into the missing tokens 1..1"):
            operation(scores, chain.layout([0, 2]), np.array([1, 2]), np.array([False, True]), scheme="BIO")
    log_z, _ = CHAIN.constrained(scores, chain.layout([0, 2]), np.array([1, 0]), np.array([False, True]), scheme="BIO")
    assert abs(log_z - math.log(2)) < 1e-12  # B-X, then O or B-X (I-X would extend the gold entity)


def some_partial_case(name, rng):
    """(scores, layout, options, gold, missing) of a random partial annotation with missing tokens."""
    row = TABLE[name]
    while True:
        scores, layout, options = row.batch(rng)
        units = row.brute(scores, layout, **options)
        case = partial_case(rng, name, units, layout.n_tokens)
        if case is not None and case[1].any():
            chosen, missing, _ = case
            return (
                scores,
                layout,
                options,
                encoding_of(name, tuple(sum(c) for c in zip(*(a.counts for a in chosen)))),
                missing,
            )


@pytest.mark.parametrize("name", ROWS)
def test_a_numeric_missing_mask_is_read_as_bool_or_refused(name):
    rng = np.random.default_rng(300 + ROWS.index(name))
    row = TABLE[name]
    for _ in range(5):
        scores, layout, options, gold, missing = some_partial_case(name, rng)
        log_z, gradient = row.structure.constrained(scores, layout, gold, missing, **options)
        conditioned = row.structure.conditioned(scores, layout, gold, missing, **options)
        for numeric in (missing.astype(np.int64), missing.astype(np.uint8), missing.astype(np.float64)):
            got, got_gradient = row.structure.constrained(scores, layout, gold, numeric, **options)
            assert got == log_z
            for g, e in zip(parts(got_gradient), parts(gradient)):
                np.testing.assert_array_equal(g, e)
            again = row.structure.conditioned(scores, layout, gold, numeric, **options)
            assert again.fixed_score == conditioned.fixed_score
            np.testing.assert_array_equal(again.tokens, conditioned.tokens)
        for bad in (missing.astype(np.int64) * 2, np.append(missing, False), missing[:, None]):
            for operation in (row.structure.constrained, row.structure.conditioned, row.structure.partial_nll):
                with pytest.raises(ValueError, match="mask of missing tokens"):
                    operation(scores, layout, gold, bad, **options)


@pytest.mark.parametrize("name", ROWS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_scores_are_refused_with_or_without_missing_tokens(name, bad):
    rng = np.random.default_rng(400 + ROWS.index(name))
    row = TABLE[name]
    scores, layout, options, gold, missing = some_partial_case(name, rng)
    for mask in (missing, np.zeros_like(missing)):
        for p in range(len(parts(scores))):
            broken = [np.array(x, dtype=np.float64) for x in parts(scores)]
            if broken[p].size == 0:
                continue
            broken[p].flat[int(rng.integers(broken[p].size))] = bad
            broken = tuple(broken) if isinstance(scores, tuple) else broken[0]
            for operation in (row.structure.constrained, row.structure.conditioned, row.structure.partial_nll):
                with pytest.raises(ValueError, match="finite"):
                    operation(broken, layout, gold, mask, **options)


def nll_or_refused(row, scores, layout, options, units, encoding, analyses, message, partial_message=None) -> bool:
    """With ``analyses`` an analysis of each unit (by enumeration) whose
    encoding is ``encoding``: its nll is log Z minus their weight (True).
    With one of them None: nll and score are a ValueError matching
    ``message``, constrained and conditioned (nothing missing) one matching
    ``partial_message`` (default ``message``) (False). ``units``: the
    enumerated analyses of each unit."""
    if all(a is not None for a in analyses):
        loss, _ = row.structure.nll(scores, layout, encoding, **options)
        log_z = sum(logsumexp([a.weight for a in unit]) for unit in units)
        assert abs(loss - (log_z - sum(a.weight for a in analyses))) < 1e-8 * max(1.0, abs(log_z))
        return True
    for operation in (row.structure.nll, row.structure.score):
        with pytest.raises(ValueError, match=message):
            operation(scores, layout, encoding, **options)
    missing = np.zeros(layout.n_tokens, dtype=bool)
    for operation in (row.structure.constrained, row.structure.conditioned):
        with pytest.raises(ValueError, match=partial_message or message):
            operation(scores, layout, encoding, missing, **options)
    return False


@pytest.mark.parametrize("name", [name for name in ROWS if name.startswith("nested")])
def test_a_gold_analysis_outside_the_nested_space_is_refused(name):
    """Random label sets on the spans: those that are an analysis of the
    space (by enumeration) have nll log Z - their weight; the others are a
    ValueError for nll, score, constrained and conditioned."""
    rng = np.random.default_rng(500 + ROWS.index(name))
    row = TABLE[name]
    inside = outside = 0
    for _ in range(cases("partial.random") // 2):
        scores, layout, options = row.batch(rng)
        units = row.brute(scores, layout, **options)
        labels = np.where(rng.random(scores.shape[0]) < 0.4, rng.integers(0, scores.shape[1], scores.shape[0]), -1)
        mentions = {(int(f), int(l), int(k)) for (f, l), k in zip(layout.spans.tolist(), labels) if k >= 0}
        analyses = [
            next((a for a in unit if a.mentions == {m for m in mentions if lo <= m[0] < hi}), None)
            for unit, lo, hi in zip(units, layout.offsets[:-1], layout.offsets[1:])
        ]
        if nll_or_refused(row, scores, layout, options, units, labels, analyses, "no analysis of the space"):
            inside += 1
        else:
            outside += 1
    assert min(inside, outside) >= cases("partial.random") // 50


@pytest.mark.parametrize("name", [name for name in ROWS if not name.startswith("nested")])
def test_a_gold_encoding_that_is_no_analysis_is_refused(name):
    """Random encodings (chain: random tags; lattice: random labels on random
    spans): those that are an analysis (by enumeration: one with the same
    indicator) have nll log Z - its weight; the others are a ValueError for
    nll, score, constrained and conditioned, never a finite nll."""
    rng = np.random.default_rng(600 + ROWS.index(name))
    row = TABLE[name]
    inside = outside = 0
    for _ in range(cases("partial.random") // 2):
        scores, layout, options = row.batch(rng)
        units = row.brute(scores, layout, **options)
        if layout.n_tokens == 0:
            continue
        # an analysis of the batch: one of each unit
        analyses = [tuple(sum(c) for c in zip(*(unit[int(rng.integers(len(unit)))].counts for unit in units)))]
        if name.startswith("chain"):
            encoding = rng.integers(0, scores[0].shape[1], layout.n_tokens)
            if rng.random() < 0.5:  # near a valid one: one tag changed
                encoding = encoding_of(name, analyses[0])
                encoding[int(rng.integers(layout.n_tokens))] = int(rng.integers(scores[0].shape[1]))
        else:
            n_spans = scores[0].shape[0]
            encoding = np.where(rng.random(n_spans) < 0.5, rng.integers(0, scores[0].shape[1], n_spans), -1)
            if rng.random() < 0.5:  # a valid one, with a segment dropped or added
                encoding = encoding_of(name, analyses[0])
                encoding[int(rng.integers(n_spans))] = int(rng.integers(-1, scores[0].shape[1]))
        offsets = layout.offsets if name.startswith("chain") else layout.span_offsets
        per_unit = []  # the analysis of each unit whose encoding is the encoding's, on the unit's tokens or spans
        for u, unit in enumerate(units):
            part = slice(int(offsets[u]), int(offsets[u + 1]))
            match = [a for a in unit if np.array_equal(encoding_of(name, a.counts)[part], encoding[part])]
            per_unit.append(match[0] if match else None)
        # constrained and conditioned refuse it with their own message, which names the gold analysis
        if nll_or_refused(
            row, scores, layout, options, units, encoding, per_unit, "no analysis of the", "gold|no analysis of the"
        ):
            inside += 1
        else:
            outside += 1
    assert min(inside, outside) >= 1
