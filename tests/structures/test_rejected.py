"""Accepted and rejected mentions (an annotator's "accept" or "reject" of one
proposed entity) in the constrained log-partition, against enumeration.
Rejected: for random batches of every
structure that takes them, a random partial annotation (as in
``test_partial``) and random rejected mentions (some inside the runs of
missing tokens, some elsewhere); the constrained log Z is the log-sum of the
weights of the analyses that agree with the annotation and contain no
rejected mention, its gradient their expected indicator, and ``conditioned``
gives their best analysis and mention marginals (the chain: not its entity
marginals). Accepted, in the flat spaces: a gold mention on annotated tokens
with every other token missing holds exactly the analyses that contain it.
In the nested spaces an accepted mention says nothing of the mentions inside
or around it, so it is no annotated region: ``structures.accepted`` sums the
analyses that hold the accepted mentions by inclusion-exclusion over
forbidden ones; against enumeration with a random partial annotation,
rejected mentions and one or more accepted mentions per unit, and the
errors for accepted mentions no analysis holds together."""

import math

import numpy as np
import pytest
from budgets import cases
from test_partial import drawn_case, encoding_of, touches
from test_protocol import TABLE, logsumexp, parts

ROWS = sorted(name for name in TABLE if TABLE[name].structure.takes_rejected)


def rejected_case(name, rng):
    """A partial-annotation case with rejected mentions: (row, scores, layout,
    options, units, gold, missing, kept, rejected set), or None."""
    case = drawn_case(name, rng)
    if case is None:
        return None
    row, scores, layout, options, units, gold, missing, kept = case
    seen = sorted({m for unit in units for a in unit for m in a.mentions} - kept)
    if not seen:
        return None
    chosen = rng.random(len(seen)) < rng.choice([0.2, 0.5, 1.0])
    rejected = {m for m, c in zip(seen, chosen) if c}
    return (*case, rejected)


def agreeing(unit, kept, missing, rejected):
    wanted = kept & set().union(*(a.mentions for a in unit))
    return [
        a for a in unit if {m for m in a.mentions if touches(m, missing)} == wanted and not (set(a.mentions) & rejected)
    ]


def as_array(rejected):
    return np.array(sorted(rejected), dtype=np.int64).reshape(-1, 3)


def check_rejected(name, rng):
    case = rejected_case(name, rng)
    if case is None:
        return False
    row, scores, layout, options, units, gold, missing, kept, rejected = case
    log_z, expected, best, probability = 0.0, [np.zeros(np.shape(p)) for p in parts(scores)], set(), {}
    for unit in units:
        allowed = agreeing(unit, kept, missing, rejected)
        assert allowed, "the gold analysis has no rejected mention"
        z = logsumexp([a.weight for a in allowed])
        log_z += z
        best |= set(max(allowed, key=lambda a: a.weight).mentions)
        for a in allowed:
            for e, c in zip(expected, a.counts):
                e += math.exp(a.weight - z) * c
            for m in a.mentions:
                probability[m] = probability.get(m, 0.0) + math.exp(a.weight - z)
    got, gradient = row.structure.constrained(scores, layout, gold, missing, as_array(rejected), **options)
    assert abs(got - log_z) < 1e-8 * max(1.0, abs(log_z))
    for g, e in zip(parts(gradient), expected):
        np.testing.assert_allclose(g, e, atol=1e-9)
    loss, _ = row.structure.partial_nll(scores, layout, gold, missing, as_array(rejected), **options)
    full = row.structure.log_partition(scores, layout, **options).sum()
    assert abs(loss - (full - log_z)) < 1e-8 * max(1.0, abs(full))
    conditioned = row.structure.conditioned(scores, layout, gold, missing, rejected=as_array(rejected), **options)
    got_best = set(kept)
    if conditioned.tokens.shape[0]:
        analysis = row.structure.viterbi(conditioned.scores, conditioned.layout, **options)
        got_best |= {tuple(int(v) for v in m) for m in conditioned.lift(analysis.mentions)}
        free = sorted(set(probability) - kept | (rejected & {m for m in rejected if not touches(m, missing)}))
        compact = np.array([[*np.searchsorted(conditioned.tokens, m[:2]), m[2]] for m in free], dtype=np.int64)
        marginals = row.structure.marginals(conditioned.scores, conditioned.layout, **options)
        inside = conditioned.layout.rejected is not None and conditioned.layout.rejected.shape[0] > 0
        if name.startswith("chain") and inside:  # its log Z and tag marginals only (the gradient above)
            with pytest.raises(ValueError, match="entity marginals of a chain with rejected entities"):
                marginals.of(compact.reshape(-1, 3))
        else:
            for m, value in zip(free, marginals.of(compact.reshape(-1, 3))):
                assert abs(value - probability.get(m, 0.0)) < 1e-9, m
    assert got_best == best
    return True


@pytest.mark.parametrize("name", ROWS)
def test_rejected_mentions_leave_the_analyses_without_them(name):
    rng = np.random.default_rng(300 + ROWS.index(name))
    checked = sum(check_rejected(name, rng) for _ in range(cases("partial.random")))
    assert checked >= cases("partial.random") // 3


def test_every_row_but_the_hypergraph_takes_rejected_mentions():
    assert ROWS == [
        "chain BILOU",
        "chain BIO",
        "lattice dgm",
        "lattice semi_markov",
        "nested cyk",
        "nested quadratic",
        "nested semi_markov",
    ]


@pytest.mark.parametrize("name", ["hypergraph"])
def test_a_structure_without_rejected_mentions_says_so(name):
    rng = np.random.default_rng(5)
    row = TABLE[name]
    scores, layout, options = row.batch(rng)
    missing = np.ones(layout.n_tokens, dtype=bool)
    gold = np.zeros(0)
    with pytest.raises(ValueError, match="cannot learn from rejected mentions"):
        row.structure.constrained(scores, layout, gold, missing, np.array([[0, 0, 0]]), **options)


def test_a_rejected_gold_mention_is_refused():
    rng = np.random.default_rng(9)
    for _ in range(200):
        case = drawn_case("lattice semi_markov", rng)
        if case is not None and case[-1]:
            break
    row, scores, layout, options, units, gold, missing, kept = case
    with pytest.raises(ValueError, match="also a gold mention"):
        row.structure.constrained(scores, layout, gold, missing, as_array({next(iter(kept))}), **options)


def test_a_rejected_mention_outside_the_batch_is_refused():
    rng = np.random.default_rng(11)
    row = TABLE["lattice dgm"]
    scores, layout, options = row.batch(rng)
    missing = np.ones(layout.n_tokens, dtype=bool)
    gold = np.where(layout.spans[:, 0] == layout.spans[:, 1], 0, -1)
    with pytest.raises(ValueError, match="is not \\[first, last, label\\]"):
        row.structure.constrained(scores, layout, gold, missing, np.array([[0, layout.n_tokens, 0]]), **options)


FLAT = [name for name in ROWS if not name.startswith("nested")]


def accepted_case(name, rng):
    """A batch, accepted mentions (those of a random analysis kept at random)
    and rejected ones (others seen in the enumeration): (row, scores, layout,
    options, units, gold, missing, accepted, rejected) with ``gold`` the
    analysis holding exactly the accepted mentions and every other token missing."""
    row = TABLE[name]
    scores, layout, options = row.batch(rng)
    units = row.brute(scores, layout, **options)
    accepted, chosen = set(), []
    for unit in units:
        analysis = unit[int(rng.integers(len(unit)))]
        mine = {m for m in analysis.mentions if rng.random() < 0.5}
        accepted |= mine
        chosen.append(next(a for a in unit if set(a.mentions) == mine))
    missing = np.ones(layout.n_tokens, dtype=bool)
    for first, last, _ in accepted:
        missing[first : last + 1] = False
    seen = sorted({m for unit in units for a in unit for m in a.mentions} - accepted)
    rejected = {m for m in seen if rng.random() < 0.3}
    gold = encoding_of(name, tuple(sum(c) for c in zip(*(a.counts for a in chosen))))
    return row, scores, layout, options, units, gold, missing, accepted, rejected


@pytest.mark.parametrize("name", FLAT)
def test_accepted_mentions_are_annotated_tokens_in_the_flat_spaces(name):
    """In a flat space an accepted mention covers its tokens alone, so the
    analyses that hold it are those that agree with its tokens annotated as
    it: the partial-annotation log-partition with every other token missing
    is the log-sum over the analyses holding every accepted mention (and no
    rejected one), its gradient their expected indicator."""
    rng = np.random.default_rng(400 + FLAT.index(name))
    for _ in range(cases("partial.random")):
        row, scores, layout, options, units, gold, missing, accepted, rejected = accepted_case(name, rng)
        log_z, expected = 0.0, [np.zeros(np.shape(p)) for p in parts(scores)]
        for unit in units:
            mine = accepted & set().union(*(a.mentions for a in unit))
            holding = [a for a in unit if mine <= set(a.mentions) and not (set(a.mentions) & rejected)]
            z = logsumexp([a.weight for a in holding])
            log_z += z
            for a in holding:
                for e, c in zip(expected, a.counts):
                    e += math.exp(a.weight - z) * c
        got, gradient = row.structure.constrained(scores, layout, gold, missing, as_array(rejected), **options)
        assert abs(got - log_z) < 1e-8 * max(1.0, abs(log_z))
        for g, e in zip(parts(gradient), expected):
            np.testing.assert_allclose(g, e, atol=1e-9)


NESTED_ROWS = [name for name in ROWS if name.startswith("nested")]


@pytest.mark.parametrize("name", NESTED_ROWS)
def test_accepted_mentions_in_the_nested_spaces_hold_exactly(name):
    """Nested spaces: a random partial annotation, rejected mentions, and
    accepted ones (a random subset of the mentions of one agreeing analysis
    that lie wholly on missing tokens); the constrained log-partition is the
    log-sum over the agreeing analyses that hold every accepted mention and
    no rejected one, its gradient their expected indicator."""
    rng = np.random.default_rng(500 + NESTED_ROWS.index(name))
    checked, several = 0, 0
    for _ in range(3 * cases("partial.random")):
        case = rejected_case(name, rng)
        if case is None:
            continue
        row, scores, layout, options, units, gold, missing, kept, rejected = case
        accepted = set()
        for unit in units:
            allowed = agreeing(unit, kept, missing, rejected)
            analysis = allowed[int(rng.integers(len(allowed)))]
            accepted |= {m for m in analysis.mentions if not touches(m, missing) and rng.random() < 0.6}
        if not accepted:
            continue
        log_z, expected = 0.0, [np.zeros(np.shape(p)) for p in parts(scores)]
        for unit in units:
            mine = accepted & set().union(*(a.mentions for a in unit))
            holding = [a for a in agreeing(unit, kept, missing, rejected) if mine <= set(a.mentions)]
            z = logsumexp([a.weight for a in holding])
            log_z += z
            for a in holding:
                for e, c in zip(expected, a.counts):
                    e += math.exp(a.weight - z) * c
        got, gradient = row.structure.constrained(
            scores, layout, gold, missing, as_array(rejected), as_array(accepted), **options
        )
        assert abs(got - log_z) < 1e-8 * max(1.0, abs(log_z))
        for g, e in zip(parts(gradient), expected):
            np.testing.assert_allclose(g, e, atol=1e-9)
        full = row.structure.log_partition(scores, layout, **options).sum()
        loss, _ = row.structure.partial_nll(
            scores, layout, gold, missing, as_array(rejected), as_array(accepted), **options
        )
        assert abs(loss - (full - log_z)) < 1e-8 * max(1.0, abs(full))
        checked += 1
        several += len(accepted) > 1
    assert checked >= cases("partial.random") // 2 and several >= checked // 5


def test_accepted_mentions_that_cannot_hold_together_are_refused():
    from spacy_depner.structures.nested.structure import NESTED
    from spacy_depner.structures.nested.structure import layout as nested_layout

    offsets = np.array([0, 4])
    spans = np.array([[f, l] for l in range(4) for f in range(l + 1)])
    scores = np.random.default_rng(3).normal(size=(spans.shape[0], 2))
    missing = np.ones(4, dtype=bool)
    gold = -np.ones(spans.shape[0], dtype=np.int64)
    for space in ("semi_markov", "cyk", "quadratic"):
        with pytest.raises(ValueError, match="no analysis holds the accepted mentions"):  # 0..2 and 1..3 cross
            NESTED.constrained(
                scores,
                nested_layout(spans, offsets),
                gold,
                missing,
                None,
                np.array([[0, 2, 0], [1, 3, 1]]),
                space=space,
            )
    annotated = missing.copy()
    annotated[0] = False
    with pytest.raises(ValueError, match="not wholly on missing tokens"):
        NESTED.constrained(scores, nested_layout(spans, offsets), gold, annotated, None, np.array([[0, 1, 0]]))
    with pytest.raises(ValueError, match="also rejected"):
        NESTED.constrained(
            scores, nested_layout(spans, offsets), gold, missing, np.array([[1, 2, 0]]), np.array([[1, 2, 0]])
        )
    chain = TABLE["chain BIO"]
    chain_scores, chain_layout, chain_options = chain.batch(np.random.default_rng(1))
    with pytest.raises(ValueError, match="takes no accepted mentions"):
        chain.structure.constrained(
            chain_scores,
            chain_layout,
            np.zeros(chain_layout.n_tokens, dtype=np.int64),
            np.ones(chain_layout.n_tokens, dtype=bool),
            None,
            np.array([[0, 0, 0]]),
            **chain_options,
        )


@pytest.mark.parametrize("name", NESTED_ROWS)
def test_an_accepted_mention_of_tiny_probability_is_still_exact(name):
    """Scores 12 times the table's, and in each unit the least probable
    mention accepted (probabilities down to about 1e-50): the signed sum's
    shifts keep log Z and the gradient exact against enumeration."""
    rng = np.random.default_rng(600 + NESTED_ROWS.index(name))
    row, smallest, checked = TABLE[name], 1.0, 0
    budget = cases("partial.random") // 5
    # the budget's random batches, and more (a bounded number) until one holds a mention below 1e-20
    for drawn in range(10 * budget):
        if drawn >= budget and smallest < 1e-20:
            break
        scores, layout, options = row.batch(rng)
        scores = 12.0 * np.asarray(scores)
        units = row.brute(scores, layout, **options)
        accepted = set()
        for unit in units:
            z = logsumexp([a.weight for a in unit])
            probability = {}
            for a in unit:
                for m in a.mentions:
                    probability[m] = probability.get(m, 0.0) + math.exp(a.weight - z)
            if probability:
                least = min(probability, key=probability.get)
                accepted.add(least)
                smallest = min(smallest, probability[least])
        if not accepted:
            continue
        log_z, expected = 0.0, np.zeros(np.shape(scores))
        for unit in units:
            mine = accepted & set().union(*(a.mentions for a in unit))
            holding = [a for a in unit if mine <= set(a.mentions)]
            z = logsumexp([a.weight for a in holding])
            log_z += z
            for a in holding:
                expected += math.exp(a.weight - z) * a.counts[0]
        missing = np.ones(layout.n_tokens, dtype=bool)
        gold = -np.ones(np.shape(scores)[0], dtype=np.int64)
        got, gradient = row.structure.constrained(scores, layout, gold, missing, None, as_array(accepted), **options)
        assert abs(got - log_z) < 1e-8 * max(1.0, abs(log_z))
        np.testing.assert_allclose(gradient, expected, atol=1e-9)
        checked += 1
    assert checked >= budget // 2 and smallest < 1e-20
