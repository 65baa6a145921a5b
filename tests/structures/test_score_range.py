"""Scores exact or refused: ``structures.score_range`` and every structure's
log Z and marginals at magnitudes from 1e3 to 1e30.

The reference is exact at any magnitude: the brute-force modules enumerate
every analysis of a small document as the list of the parameters it uses
(scores, transitions, penalty); the score of each analysis relative to the
best one is summed exactly (``math.fsum`` over both lists of floats, one
correctly rounded result), so exp() of it, and the marginals, are right to
about 1e-13 even where the scores are 1e30 and float64 sums lose everything.
Below the bound (|score| x length <= 1e7, here |score| <= 1e6 on documents
of <= 5 tokens), log Z and every marginal equal the reference to a relative
1e-6 (they do to about 1e-9); above it (1e10, 1e16, 1e30), log_partition and
marginals raise the "diverged" ValueError, and viterbi still finds the
exact MAP.
"""

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from brute_linear_chain import valid_sequences
from brute_mention_hypergraph import sub_hypergraphs
from brute_nested_mentions import labelled_analyses
from brute_segment_lattice import labelled_segmentations_of_document

from spacy_depner.structures.chain import _linear_chain as linear_chain
from spacy_depner.structures.hypergraph import _mention_hypergraph as mention_hypergraph
from spacy_depner.structures.lattice import _segment_lattice as segment_lattice
from spacy_depner.structures.nested import _mentions as nested_mentions
from spacy_depner.structures.score_range import SCORE_LENGTH_BOUND, check_scores, entropy_rounding, score_bound
from spacy_depner.structures.trees.candidate_spans import all_spans

ACCEPTED = (1e3, 1e6)
REFUSED = (1e10, 1e16, 1e30)
DIVERGED = "scores out of range: the model has diverged"


# ---------------------------------------------------------------------------
# The exact reference
# ---------------------------------------------------------------------------


def exact(parts, params, extra=None):
    """Exact log Z, marginals (P,) and MAP analysis of a distribution
    p(a) ~ exp(sum of params[parts[a]] + sum of extra[a]): ``parts`` (A, L)
    int indices into ``params`` (P,), padded with P, repeats counted;
    ``extra`` (A,) lists of further terms (a penalty per opened mention)."""
    P = params.shape[0]
    terms = [
        [float(params[i]) for i in row if i < P] + (extra[a] if extra is not None else [])
        for a, row in enumerate(parts)
    ]
    best = int(np.argmax([sum(t) for t in terms]))  # within rounding of the best: refined below
    for _ in range(2):
        minus_best = [-x for x in terms[best]]
        relative = np.array([math.fsum(t + minus_best) for t in terms])  # exact sums, rounded once
        best = int(np.argmax(relative))
    minus_best = [-x for x in terms[best]]
    weights = np.exp(np.array([math.fsum(t + minus_best) for t in terms]))
    total = math.fsum(weights)
    counts = np.bincount(parts.ravel(), weights=np.repeat(weights, parts.shape[1]), minlength=P + 1)[:P]
    return math.fsum(terms[best]) + math.log(total), counts / total, best


@dataclass
class Case:
    """One document of ``n`` tokens of a structure: what it computes, with
    the marginals flattened in the order of ``params`` (every score, then
    the transitions), and its analyses as parameter indices."""

    name: str
    n: int
    params: np.ndarray
    parts: np.ndarray
    extra: object
    log_partition: Callable[[], np.ndarray]
    marginals: Callable[[], tuple]  # () -> (log Z (1,), marginals (P,))
    viterbi: Callable[[], tuple]  # () -> (best (1,), indices of the MAP's parameters)


def chain_case(rng, mag, scheme="BIO", n=5):
    allowed = linear_chain.allowed_transitions(1, scheme)
    T = allowed.shape[0] - 1
    scores, trans = rng.uniform(-mag, mag, (n, T)), rng.uniform(-mag, mag, (T + 1, T + 1))
    sequences = valid_sequences(scheme, 1, n)
    full = np.pad(sequences, ((0, 0), (1, 1)), constant_values=T)
    parts = np.concatenate([np.arange(n) * T + sequences, n * T + full[:, :-1] * (T + 1) + full[:, 1:]], axis=1)
    args = (scores, [0, n], trans, allowed)

    def map_parts():
        best, tags = linear_chain.viterbi(*args)
        path = np.concatenate([[T], tags, [T]])
        return best, np.concatenate([np.arange(n) * T + tags, n * T + path[:-1] * (T + 1) + path[1:]])

    return Case(
        f"linear_chain {scheme}",
        n,
        np.concatenate([scores.ravel(), trans.ravel()]),
        parts,
        None,
        lambda: linear_chain.log_partition(*args),
        lambda: (lambda z, m, t: (z, np.concatenate([m.ravel(), t.ravel()])))(*linear_chain.marginals(*args)),
        map_parts,
    )


def lattice_case(rng, mag, n=5, K=2):
    spans = all_spans(np.array([0, n]), None)
    S = spans.shape[0]
    scores, trans = rng.uniform(-mag, mag, (S, K)), rng.uniform(-mag, mag, (K + 1, K + 1))
    P = S * K + (K + 1) ** 2
    blocks = []
    for rows, labels in labelled_segmentations_of_document(spans, 0, S, 0, n, K):
        sequence = np.pad(labels, ((0, 0), (1, 1)), constant_values=K)
        blocks.append(np.concatenate([rows * K + labels, S * K + sequence[:, :-1] * (K + 1) + sequence[:, 1:]], axis=1))
    width = max(b.shape[1] for b in blocks)
    parts = np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[1])), constant_values=P) for b in blocks])
    args = (spans, [0, S], [0, n], scores, trans)

    def map_parts():
        best, labels = segment_lattice.viterbi(*args)
        rows = np.flatnonzero(labels >= 0)
        rows = rows[np.argsort(spans[rows, 0])]
        path = np.concatenate([[K], labels[rows], [K]])
        return best, np.concatenate([rows * K + labels[rows], S * K + path[:-1] * (K + 1) + path[1:]])

    return Case(
        "segment_lattice",
        n,
        np.concatenate([scores.ravel(), trans.ravel()]),
        parts,
        None,
        lambda: segment_lattice.log_partition(*args),
        lambda: (lambda z, m, t: (z, np.concatenate([m.ravel(), t.ravel()])))(*segment_lattice.marginals(*args)),
        map_parts,
    )


def nested_case(rng, mag, structure, n=5, T=1):
    scores = rng.uniform(-mag, mag, (n * (n + 1) // 2, T))
    args = (scores, [0, n], structure)

    def map_parts():
        best, labels = nested_mentions.viterbi(*args)
        rows = np.flatnonzero(labels >= 0)
        return best, rows * T + labels[rows]

    return Case(
        f"nested_mentions {structure}",
        n,
        scores.ravel(),
        labelled_analyses(structure, n, T)[0],
        None,
        lambda: nested_mentions.log_partition(*args),
        lambda: (lambda z, m: (z, m.ravel()))(*nested_mentions.marginals(*args)),
        map_parts,
    )


def hypergraph_case(rng, mag, heads, n=None):
    n = n or (3 if heads else 4)
    scores = rng.uniform(-mag, mag, (n, 1, mention_hypergraph.n_kinds(heads)))
    penalty = float(rng.uniform(-mag, mag))
    parts, opened = sub_hypergraphs(n, 1, heads)
    args = (scores, [0, n], penalty, heads)

    def map_parts():
        best, edges = mention_hypergraph.viterbi(*args)
        return best, np.flatnonzero(edges.ravel())

    return Case(
        f"mention_hypergraph heads={heads}",
        n,
        scores.ravel(),
        parts,
        [[penalty] * int(k) for k in opened],
        lambda: mention_hypergraph.log_partition(*args),
        lambda: (lambda z, m: (z, m.ravel()))(*mention_hypergraph.marginals(*args)),
        map_parts,
    )


CASES = {
    "chain_bio": lambda rng, mag: chain_case(rng, mag, "BIO", 5),
    "chain_bilou": lambda rng, mag: chain_case(rng, mag, "BILOU", 4),
    "lattice": lattice_case,
    "semi_markov": lambda rng, mag: nested_case(rng, mag, "semi_markov"),
    "cyk": lambda rng, mag: nested_case(rng, mag, "cyk"),
    "quadratic": lambda rng, mag: nested_case(rng, mag, "quadratic"),
    "cyk_two_labels": lambda rng, mag: nested_case(rng, mag, "cyk", n=4, T=2),
    "hypergraph": lambda rng, mag: hypergraph_case(rng, mag, False),
    "hypergraph_heads": lambda rng, mag: hypergraph_case(rng, mag, True),
}


def check_map(case, what):
    """viterbi: the best score of the exact MAP (to float64 rounding of a
    sum) and exactly its parameters."""
    _, _, best = exact(case.parts, case.params, case.extra)
    chosen = case.parts[best]
    expected = math.fsum(
        [float(case.params[i]) for i in chosen if i < case.params.shape[0]] + (case.extra[best] if case.extra else [])
    )
    score, used = case.viterbi()
    assert abs(score[0] - expected) <= 1e-14 * case.n * max(abs(expected), 1.0), (what, score, expected)
    np.testing.assert_array_equal(np.sort(used), np.sort(chosen[chosen < case.params.shape[0]]), err_msg=what)


# ---------------------------------------------------------------------------
# Per structure and magnitude
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mag", ACCEPTED)
@pytest.mark.parametrize("structure", sorted(CASES))
def test_accurate_below_the_bound(structure, mag):
    """|score| <= mag on documents of <= 5 tokens: log Z (of log_partition and
    of marginals) to a relative 1e-12 and every marginal (transitions
    included) to a relative 1e-6 of the exact reference."""
    rng = np.random.default_rng(int(math.log10(mag)) + 100 * sorted(CASES).index(structure))
    for _ in range(4):
        case = CASES[structure](rng, mag)
        log_z, expected, _ = exact(case.parts, case.params, case.extra)
        z, got = case.marginals()
        what = f"{case.name} at {mag:g}"
        assert abs(z[0] - log_z) <= 1e-12 * max(abs(log_z), 1.0), (what, z, log_z)
        assert abs(case.log_partition()[0] - log_z) <= 1e-12 * max(abs(log_z), 1.0), what
        error = np.abs(got - expected)
        assert np.all(error <= 1e-6 * expected + 1e-300), (
            f"{what}: relative error {np.max(error / np.maximum(expected, 1e-300)):.2e}"
        )
        check_map(case, what)


@pytest.mark.parametrize("mag", REFUSED)
@pytest.mark.parametrize("structure", sorted(CASES))
def test_refused_above_the_bound_while_viterbi_stays_exact(structure, mag):
    """log_partition and marginals refuse the scores with the "diverged"
    message naming the largest |score| and the bound; viterbi gives the
    exact MAP."""
    case = CASES[structure](np.random.default_rng(7), mag)
    largest = float(np.max(np.abs(case.params)))
    if case.extra:
        largest = max(largest, max(abs(x) for terms in case.extra for x in terms[:1]))
    for run in (case.marginals, case.log_partition):
        with pytest.raises(ValueError, match=DIVERGED) as error:
            run()
        message = str(error.value)
        assert (
            f"largest |score| is {largest:.3g}" in message
            and f"the bound is {SCORE_LENGTH_BOUND / case.n:.3g}" in message
        )
        assert "learning rate" in message
    check_map(case, f"{case.name} at {mag:g}")


def test_the_reported_scores_are_refused_and_their_scaled_down_marginals_are_right():
    """BIO over one label, zero transitions, scores ~1e30: token 0 got [0, inf, 0]
    instead of [0, 1, 0]; now an error. The same scores / 1e24 (~1e6) are
    accepted, with the exact marginals (their B tag at token 0 wins by 1.1e6)."""
    scores = np.array([[-1.5e29, 9.6e29, -4.7e29], [2.34e30, -1.25e30, -3.8e29], [8.9e29, -4e29, 7.4e29]])
    allowed = linear_chain.allowed_transitions(1, "BIO")
    with pytest.raises(ValueError, match=DIVERGED):
        linear_chain.marginals(scores, [0, 3], np.zeros((4, 4)), allowed)
    _, tags = linear_chain.viterbi(scores, [0, 3], np.zeros((4, 4)), allowed)
    np.testing.assert_array_equal(tags, [1, 0, 0])  # B O O: 9.6 + 23.4 + 8.9 beats every other allowed sequence
    _, m, _ = linear_chain.marginals(scores / 1e24, [0, 3], np.zeros((4, 4)), allowed)
    np.testing.assert_array_equal(m, [[0, 1, 0], [1, 0, 0], [1, 0, 0]])  # the others are below exp(-1e5)


# ---------------------------------------------------------------------------
# The bound itself
# ---------------------------------------------------------------------------


EDGE = {  # a structure's marginals on one 4-token document with one entry set to ``value``
    "linear_chain scores": lambda value: linear_chain.marginals(
        np.full((4, 3), 1.0) + np.eye(4, 3) * (value - 1.0),
        [0, 4],
        np.zeros((4, 4)),
        linear_chain.allowed_transitions(1, "BIO"),
    ),
    "linear_chain transitions": lambda value: linear_chain.marginals(
        np.zeros((4, 3)), [0, 4], np.full((4, 4), -value), linear_chain.allowed_transitions(1, "BIO")
    ),
    "segment_lattice transitions": lambda value: segment_lattice.marginals(
        all_spans(np.array([0, 4]), None), [0, 10], [0, 4], np.zeros((10, 2)), np.eye(3) * value
    ),
    "nested_mentions": lambda value: nested_mentions.marginals(np.eye(10, 2) * -value, [0, 4], "quadratic"),
    "mention_hypergraph penalty": lambda value: mention_hypergraph.marginals(np.zeros((4, 2, 5)), [0, 4], -value),
}


@pytest.mark.parametrize("where", sorted(EDGE))
def test_the_edge_of_the_bound(where):
    """On 4 tokens the bound is 2.5e6 (exactly representable): an entry of
    exactly 2.5e6 (scores, transitions or penalty) is accepted, the next
    float above is refused; 4 tokens split over two documents of 2 allow
    twice as much (the longest document counts)."""
    assert score_bound(4) == 2.5e6 == SCORE_LENGTH_BOUND / 4
    z, *_ = EDGE[where](2.5e6)
    assert np.all(np.isfinite(z))
    with pytest.raises(ValueError, match=DIVERGED):
        EDGE[where](np.nextafter(2.5e6, np.inf))


def test_the_longest_document_sets_the_bound():
    scores = np.zeros((4, 3))
    scores[0, 1] = 4e6
    allowed = linear_chain.allowed_transitions(1, "BIO")
    z, m, _ = linear_chain.marginals(scores, [0, 2, 4], np.zeros((4, 4)), allowed)
    np.testing.assert_allclose(m[:2], [[0, 1, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)  # B wins; then O, B, I tie
    with pytest.raises(ValueError, match=DIVERGED):
        linear_chain.marginals(scores, [0, 1, 4], np.zeros((4, 4)), allowed)
    # only empty documents: nothing is computed, any finite transitions are fine
    np.testing.assert_array_equal(
        linear_chain.log_partition(np.zeros((0, 3)), [0, 0, 0], np.full((4, 4), 1e300), allowed), [0, 0]
    )


def test_check_scores_on_its_own():
    """Arrays of any shape and scalars, the bound itself accepted; NaN and
    inf are refused whatever the length."""
    check_scores("f", [0, 5], np.full((2, 3), 2e6), 2e6, np.zeros(0))
    with pytest.raises(ValueError, match=rf"f: {DIVERGED}.*largest \|score\| is 2\.5e\+06.*5 tokens.*bound is 2e\+06"):
        check_scores("f", [0, 5], np.full((2, 3), 2e6), -2.5e6)
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match="f: scores must be finite, not NaN or inf"):
            check_scores("f", [0, 0], np.array([[0.0, bad], [1.0, 2.0]]))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_inf_are_refused_by_every_operation(bad):
    """The structures' own finiteness checks: log_partition, marginals and
    viterbi alike, for scores, transitions and the penalty."""
    allowed = linear_chain.allowed_transitions(1, "BIO")
    spans = all_spans(np.array([0, 2]), None)
    calls = []
    for op in ("log_partition", "marginals", "viterbi"):
        calls += [
            lambda op=op: getattr(linear_chain, op)(
                np.array([[0, bad, 0], [0, 0, 0.0]]), [0, 2], np.zeros((4, 4)), allowed
            ),
            lambda op=op: getattr(linear_chain, op)(np.zeros((2, 3)), [0, 2], np.full((4, 4), bad), allowed),
            lambda op=op: getattr(segment_lattice, op)(spans, [0, 3], [0, 2], np.full((3, 2), bad), np.zeros((3, 3))),
            lambda op=op: getattr(nested_mentions, op)(np.full((3, 1), bad), [0, 2], "cyk"),
            lambda op=op: getattr(mention_hypergraph, op)(np.full((2, 1, 5), bad), [0, 2]),
        ]
    for call in calls:
        with pytest.raises(ValueError, match="finite"):
            call()
    with pytest.raises(ValueError, match="penalty must be a finite"):
        mention_hypergraph.marginals(np.zeros((2, 1, 5)), [0, 2], bad)


# ---------------------------------------------------------------------------
# The entropy: exact to its documented bound, never negative, refused above
# its structure's range
# ---------------------------------------------------------------------------


def scaled_to(row, rng, score_length):
    """A batch of the row whose largest |score| (penalty included) times its longest unit is ``score_length``."""
    from test_protocol import parts

    while True:
        scores, layout, options = row.batch(rng)
        length = int(np.max(np.diff(layout.offsets)))
        top = max(
            [float(np.abs(p).max()) for p in parts(scores) if p.size]
            + [abs(v) for v in options.values() if isinstance(v, float)]
            + [0.0]
        )
        if length and top:
            break
    f = score_length / length / top
    scores = tuple(p * f for p in scores) if isinstance(scores, tuple) else scores * f
    return scores, layout, {k: (v * f if isinstance(v, float) else v) for k, v in options.items()}


def reference_entropy(units):
    """-sum p log p per unit, log p = (w - max w) - log sum exp(w - max w): no cancellation of large values."""
    total = 0.0
    for unit in units:
        w = np.array([a.weight for a in unit])
        log_p = (w - w.max()) - math.log(np.exp(w - w.max()).sum())
        total -= float((np.exp(log_p) * log_p).sum())
    return total


def entropy_cases():
    from test_protocol import TABLE

    return sorted(TABLE)


@pytest.mark.parametrize("name", entropy_cases())
def test_entropy_is_exact_and_never_negative_up_to_the_edge_of_its_range(name):
    from test_protocol import TABLE

    row, rng = TABLE[name], np.random.default_rng(entropy_cases().index(name))
    edge = min(row.structure.entropy_bound, SCORE_LENGTH_BOUND) * 0.999
    for score_length in (edge, edge / 10, 1e3, 1.0):
        for _ in range(20):
            scores, layout, options = scaled_to(row, rng, score_length)
            units = row.brute(scores, layout, **options)
            log_z = row.structure.log_partition(scores, layout, **options)
            entropy = row.structure.entropy(scores, layout, **options)
            bound = entropy_rounding(log_z, score_length) + row.structure.entropy_rounding(score_length)
            reference = reference_entropy(units)
            assert entropy >= 0.0
            assert abs(entropy - reference) <= bound + 4 * np.finfo(float).eps * score_length * len(units), (
                entropy,
                reference,
                bound,
            )


def test_the_hypergraph_entropy_is_refused_above_its_range():
    """Its error grows as (|score| x length)^2 (``score_range``): above 1e5
    a ValueError, while log Z and the marginals are still accepted."""
    from test_protocol import TABLE

    from spacy_depner.structures.score_range import ENTROPY_SCORE_LENGTH_BOUND

    rng = np.random.default_rng(7)
    for name in ("hypergraph", "hypergraph heads"):
        row = TABLE[name]
        assert row.structure.entropy_bound == ENTROPY_SCORE_LENGTH_BOUND
        scores, layout, options = scaled_to(row, rng, ENTROPY_SCORE_LENGTH_BOUND * 10)
        marginals = row.structure.marginals(scores, layout, **options)
        with pytest.raises(ValueError, match=r"hypergraph.entropy: scores out of range.*1e\+05"):
            row.structure.entropy(scores, layout, marginals, **options)


@pytest.mark.parametrize("name", ["chain BIO", "chain BILOU", "lattice semi_markov", "lattice dgm", "nested quadratic"])
def test_constrained_takes_the_range_log_partition_takes(name):
    """One range: scores scaled to just inside the bound, which
    ``log_partition`` accepts, are accepted by ``constrained`` too (its runs
    fold border transitions into their scores, up to |score| + 4 |transition|,
    and once refused them), and its value is the log-sum over the agreeing
    analyses; scores beyond the bound are refused by both."""
    from test_partial import drawn_case, touches
    from test_protocol import logsumexp

    rng = np.random.default_rng(700 + len(name))
    checked = 0
    for _ in range(60):
        case = drawn_case(name, rng)
        if case is None:
            continue
        row, scores, layout, options, _, gold, missing, kept = case
        parts = scores if isinstance(scores, tuple) else (scores,)
        longest = int(np.diff(layout.offsets).max())
        largest = max((float(np.abs(p).max()) for p in parts if p.size), default=0.0)
        if not missing.any() or longest == 0 or largest == 0:
            continue
        for factor, accepted in ((0.99, True), (1.5, False)):
            scale = factor * SCORE_LENGTH_BOUND / (largest * longest)
            scaled = tuple(p * scale for p in parts) if isinstance(scores, tuple) else scores * scale
            if not accepted:
                for operation in (
                    row.structure.log_partition,
                    lambda s, lay, **o: row.structure.constrained(s, lay, gold, missing, **o),
                ):
                    with pytest.raises(ValueError, match="out of range"):
                        operation(scaled, layout, **options)
                continue
            row.structure.log_partition(scaled, layout, **options)
            got, _ = row.structure.constrained(scaled, layout, gold, missing, **options)
            units = row.brute(scaled, layout, **options)
            want = 0.0
            for unit in units:
                wanted = kept & set().union(*(a.mentions for a in unit))
                want += logsumexp([a.weight for a in unit if {m for m in a.mentions if touches(m, missing)} == wanted])
            assert abs(got - want) <= 1e-9 * max(1.0, abs(want))
        checked += 1
    assert checked >= 10
