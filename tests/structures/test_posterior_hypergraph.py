"""Mention marginals and posterior decoding of the mention hypergraph
(``hypergraph.posterior``) against brute force.

* Marginals: every sub-hypergraph of a small document is enumerated
  (``brute_mention_hypergraph``, from the paper's definitions), read into
  mentions by ``edges_to_mentions``, and each mention's marginal is the total
  probability of the sub-hypergraphs whose reading holds it.
* The space: not every mention set is a reading (with or without heads), so
  keeping the mentions of marginal above the penalty is not the posterior
  decoding; the decoder must reach the best objective over the sets that
  ``representable`` accepts (enumerated among all mention sets), and over
  the readings of all sub-hypergraphs for the model's own marginals.
"""

import functools

import numpy as np
import pytest
from brute_mention_hypergraph import all_mention_sets, sub_hypergraphs

from spacy_depner.structures.hypergraph import HYPERGRAPH
from spacy_depner.structures.hypergraph import _mention_hypergraph as mh
from spacy_depner.structures.hypergraph import layout as hypergraph_layout
from spacy_depner.structures.hypergraph.posterior import best_reading, mention_marginals


def posterior_decode(scores, doc_offsets, penalty=0.0, heads=False, posterior_penalty=0.5):
    """The hypergraph's posterior decoding through the protocol: (gain (D,),
    mentions (M, 3), their mention marginals (M,))."""
    layout = hypergraph_layout(doc_offsets)
    options = {"mention_penalty": penalty, "heads": heads}
    marginals = None if heads else HYPERGRAPH.marginals(scores, layout, **options)
    analysis = HYPERGRAPH.posterior_decode(marginals, layout, penalty=posterior_penalty, **options)
    rows, values = marginals.mentions(posterior_penalty)  # every decoded mention is above it
    value_of = dict(zip(map(tuple, rows.tolist()), values.tolist()))
    return analysis.score, analysis.mentions, np.array([value_of[tuple(m)] for m in analysis.mentions.tolist()])


def readings(scores, penalty):
    """[(reading as a frozenset of (first, last, type), probability)] of
    every sub-hypergraph of one document (scores (n, T, 5))."""
    n, T, K = scores.shape
    indices, pens = sub_hypergraphs(n, T, False)
    weights = np.append(scores.ravel(), 0.0)[indices].sum(axis=1) + penalty * pens
    probabilities = np.exp(weights - weights.max())
    probabilities /= probabilities.sum()
    out = []
    for row, p in zip(indices, probabilities):
        edges = np.zeros(n * T * K + 1, dtype=np.int8)
        edges[row] = 1
        found = mh.edges_to_mentions(edges[:-1].reshape(n, T, K), [0, n])
        out.append((frozenset(map(tuple, found.tolist())), p))
    return out


def brute_marginals(scores, penalty):
    marginals = {}
    for found, p in readings(scores, penalty):
        for mention in found:
            marginals[mention] = marginals.get(mention, 0.0) + p
    return marginals


@functools.lru_cache(maxsize=None)
def representable_sets(n):
    """Every set of one-type mentions of an n-token document that ``representable`` accepts."""
    return [s for s in all_mention_sets(n) if mh.representable([(a, b, 0) for a, b in s], [0, n], 1)[0] or not s]


@pytest.mark.parametrize("seed", range(25))
def test_marginals_equal_enumeration_of_the_readings(seed):
    rng = np.random.default_rng(seed)
    T = int(rng.integers(1, 3))
    n = int(rng.integers(1, 5 if T == 1 else 4))
    scores = rng.normal(0.0, rng.uniform(0.3, 3.0), (n, T, 5))
    penalty = float(rng.normal())
    expected = brute_marginals(scores, penalty)
    rows, values = mention_marginals(scores, [0, n], penalty)
    got = {tuple(r): v for r, v in zip(rows.tolist(), values)}
    every = {(a, b, t) for a in range(n) for b in range(a, n) for t in range(T)}
    assert set(got) == every and len(got) == len(rows)
    for mention in every:
        assert abs(got[mention] - expected.get(mention, 0.0)) <= 1e-9, (mention, got[mention], expected.get(mention))
    floor = float(rng.random())
    above, _ = mention_marginals(scores, [0, n], penalty, floor=floor)
    assert set(map(tuple, above.tolist())) == {m for m in every if got[m] > floor}


def test_batch_equals_documents_one_by_one():
    rng = np.random.default_rng(3)
    lengths = [3, 0, 5, 1]
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)])
    scores = rng.normal(0.0, 2.0, (int(doc_offsets[-1]), 2, 5))
    rows, values = mention_marginals(scores, doc_offsets, 0.4, floor=0.01)
    for d in range(len(lengths)):
        first, end = doc_offsets[d], doc_offsets[d + 1]
        alone, alone_values = mention_marginals(scores[first:end], [0, end - first], 0.4, floor=0.01)
        mine = (rows[:, 0] >= first) & (rows[:, 0] < end)
        np.testing.assert_array_equal(rows[mine] - [first, first, 0], alone)
        np.testing.assert_allclose(values[mine], alone_values, rtol=1e-12)


def test_not_every_mention_set_is_a_reading_with_or_without_heads():
    """So "keep the mentions above the penalty" is not the posterior decoding."""
    crossing = [(0, 1, 0), (1, 2, 0)]  # the type-II pair, read as the nested pair
    assert not mh.representable(crossing, [0, 3], 1)[0]
    assert not mh.representable([(0, 1, 0, 0, 1), (1, 2, 0, 1, 2)], [0, 3], 1)[0]
    assert not mh.representable([(0, 1, 0, 1, 1), (0, 2, 0, 0, 1)], [0, 3], 1)[0]  # heads swapped on reading
    # and it happens with the model's own marginals: the mentions above the
    # penalty are not always a reading, and then the decoder does better
    penalty, seen = 0.3, 0
    for seed in range(60):
        scores = np.random.default_rng(seed).normal(0.0, 2.5, (4, 1, 5))
        rows, values = mention_marginals(scores, [0, 4], 0.0)
        likely = rows[values > penalty]
        if likely.shape[0] and not mh.representable(likely, [0, 4], 1)[0]:
            seen += 1
            gain, decoded, _ = posterior_decode(scores, [0, 4], 0.0, False, penalty)
            assert mh.representable(decoded, [0, 4], 1)[0]
            assert gain[0] < (values[values > penalty] - penalty).sum()
    assert seen >= 3


@pytest.mark.parametrize("seed", range(60))
def test_best_reading_equals_the_best_representable_set(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 6))
    spans = [(a, b) for a in range(n) for b in range(a, n)]
    marginals = rng.random(len(spans)) ** rng.choice([0.3, 1.0, 3.0])
    penalty = float(rng.choice([0.0, 1.0, rng.random()]))
    value = dict(zip(spans, marginals - penalty))
    best = max(sum(value[s] for s in found) for found in representable_sets(n))
    rows = np.array([(a, b, 0) for a, b in spans])
    order = rng.permutation(len(spans))  # any row order
    gain, chosen = best_reading(rows[order], marginals[order], [0, n], penalty)
    assert abs(gain[0] - best) <= 1e-12, (gain, best)
    picked = rows[order][chosen]
    assert mh.representable(picked, [0, n], 1)[0] or picked.shape[0] == 0
    assert abs(sum(value[(a, b)] for a, b, _ in picked.tolist()) - best) <= 1e-12


def test_best_reading_treats_types_and_documents_apart():
    """Two types and two documents: the sum of the per-(document, type) bests."""
    rng = np.random.default_rng(11)
    doc_offsets = [0, 4, 8]
    rows, marginals, expected = [], [], np.zeros(2)
    for d, first in enumerate(doc_offsets[:-1]):
        for t in range(2):
            spans = [(a, b) for a in range(4) for b in range(a, 4)]
            m = rng.random(len(spans))
            value = dict(zip(spans, m - 0.4))
            expected[d] += max(sum(value[s] for s in found) for found in representable_sets(4))
            rows += [(first + a, first + b, t) for a, b in spans]
            marginals += m.tolist()
    gain, chosen = best_reading(np.array(rows), np.array(marginals), doc_offsets, 0.4)
    np.testing.assert_allclose(gain, expected, atol=1e-12)
    assert mh.representable(np.array(rows)[chosen], doc_offsets, 2).all()


@pytest.mark.parametrize("seed", range(20))
def test_posterior_decode_equals_the_best_reading_of_any_sub_hypergraph(seed):
    rng = np.random.default_rng(500 + seed)
    T = int(rng.integers(1, 3))
    n = int(rng.integers(1, 5 if T == 1 else 4))
    scores = rng.normal(0.0, rng.uniform(0.3, 3.0), (n, T, 5))
    penalty, posterior_penalty = float(rng.normal()), float(rng.choice([0.0, 1.0, rng.random()]))
    marginals = brute_marginals(scores, penalty)
    best = max(sum(marginals[m] - posterior_penalty for m in found) for found, _ in readings(scores, penalty))
    gain, decoded, values = posterior_decode(scores, [0, n], penalty, False, posterior_penalty)
    assert abs(gain[0] - best) <= 1e-9, (gain, best)
    assert mh.representable(decoded, [0, n], T)[0] or decoded.shape[0] == 0
    np.testing.assert_allclose(values, [marginals[tuple(m)] for m in decoded.tolist()], atol=1e-9)
    assert abs((values - posterior_penalty).sum() - gain[0]) <= 1e-12


def test_a_long_sentence_with_a_penalty():
    """The enumeration from each start stops once the mention is unlikely
    to be open, so a 3,000-token sentence of 3 types decodes (its speed is
    the benchmark's, not a test's)."""
    scores = np.random.default_rng(1).normal(0.0, 4.0, (3000, 3, 5))
    gain, decoded, values = posterior_decode(scores, [0, 3000], 0.0, False, 0.5)
    assert decoded.shape[0] > 100 and np.all(values > 0.5)
    assert abs(gain.sum() - (values - 0.5).sum()) < 1e-9


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda s: mention_marginals(s, [0, 3], heads=True), "not available with heads"),
        (lambda s: posterior_decode(s, [0, 3], 0.0, True), "not available with heads"),
        (lambda s: posterior_decode(s, [0, 3], 0.0, False, -0.1), "penalty"),
        (lambda s: mention_marginals(s, [0, 3], floor=float("nan")), "floor"),
        (lambda s: mention_marginals(np.full_like(s, np.inf), [0, 3]), "finite"),
        (lambda s: best_reading([[0, 1, 0]], [1.5], [0, 3]), "probabilities"),
        (lambda s: best_reading([[0, 3, 0]], [0.5], [0, 3]), "inside one document"),
        (lambda s: best_reading([[0, 1, 0], [0, 1, 0]], [0.5, 0.5], [0, 3]), "once"),
    ],
)
def test_bad_input_is_a_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call(np.zeros((3, 2, 5)))


def test_marginals_of_given_mentions_equal_every_mention_marginal():
    """``Marginals.of`` (``posterior.marginals_of``: one inside and outside
    pass, then a walk from each queried start up to its longest queried
    mention only) equals the marginal ``mention_marginals`` gives every
    mention, on longer sentences than enumeration reaches; queries in any
    order, repeated, across a sentence end, reversed or of no type read 0."""
    rng = np.random.default_rng(77)
    for _ in range(40):
        lengths = rng.integers(0, 12, int(rng.integers(1, 4)))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        N, T = int(offsets[-1]), int(rng.integers(1, 4))
        scores = rng.normal(0, rng.uniform(0.3, 3.0), (N, T, HYPERGRAPH.n_kinds()))
        penalty = float(rng.normal())
        every, values = mention_marginals(scores, offsets, penalty)
        reference = dict(zip(map(tuple, every.tolist()), values.tolist()))
        queries = [
            tuple(int(v) for v in rng.integers(0, max(N, 1), 2)) + (int(rng.integers(0, T + 1)),) for _ in range(30)
        ]
        queries += [m for m in reference if rng.random() < 0.3] * 2
        queries = np.array(queries, dtype=np.int64).reshape(-1, 3)[rng.permutation(len(queries))]
        marginals = HYPERGRAPH.marginals(scores, hypergraph_layout(offsets), mention_penalty=penalty)
        want = [reference.get(tuple(q), 0.0) for q in queries.tolist()]
        np.testing.assert_allclose(marginals.of(queries), want, atol=1e-12)
