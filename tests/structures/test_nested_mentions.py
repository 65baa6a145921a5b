"""What is particular to the nested mention spaces of Corro (2023)
(``structures.nested``; their agreement with enumeration, masks and
max_length included, is ``test_protocol``'s table): the spaces as the paper
defines them (``brute_nested_mentions`` enumerates from sec. 3.1, not from
the deduction rules), the largest enumerated documents, counting, masks and
excluded spans, the dense layout, hand-computed and paper examples, long
documents and bad input.
"""

import itertools
import math

import numpy as np
import pytest
from brute_nested_mentions import (
    COUNTS,
    IN_SPACE,
    allowed_rows,
    brute,
    children,
    count_cyk,
    count_quadratic,
    family_of,
    inside,
    labelled_analyses,
    laminar_families,
    length,
    span_families,
    span_list,
)

from spacy_depner.structures.nested._mentions import (
    SPACES,
    dense_rows,
    dense_span_offsets,
    dense_spans,
    log_partition,
    marginals,
    viterbi,
)
from spacy_depner.structures.trees.candidate_spans import all_spans, span_index

RTOL = 1e-9
MAX_WORDS = {1: 6, 2: 5}  # longest enumerated document per number of labels

# ---------------------------------------------------------------------------
# Random batches and comparison
# ---------------------------------------------------------------------------


def assert_rel(got, expected, what, rtol=RTOL):
    """|got - expected| <= rtol |expected| elementwise (so exactly 0 where expected is 0)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.isfinite(got)), (what, got)
    error = np.abs(got - expected)
    assert np.all(error <= rtol * np.abs(expected)), (
        f"{what}: max relative error {np.max(error / np.maximum(np.abs(expected), 1e-300))}\ngot {got}\nexpected {expected}"
    )


def assert_rel_or_abs(got, expected, what, rtol=RTOL):
    """Relative error with an absolute floor of rtol (for log Z and scores near 0)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.abs(got - expected) <= rtol * np.maximum(np.abs(expected), 1.0)), (
        f"{what}:\ngot {got}\nexpected {expected}"
    )


def random_batch(rng, n_labels=None, max_words=None):
    """1-3 documents of 0..MAX_WORDS[T] words, T in {1, 2}, scores ~ normal
    of a random scale up to 5, a random mask (or None) and max_length."""
    T = n_labels or int(rng.integers(1, 3))
    top = max_words if max_words is not None else MAX_WORDS[T]
    lengths = rng.integers(0, top + 1, int(rng.integers(1, 4)))
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    S = int(dense_span_offsets(doc_offsets)[-1])
    scores = rng.normal(0.0, rng.uniform(0.05, 5.0), (S, T))
    mask = None if rng.random() < 0.3 else rng.random(S) < rng.uniform(0.2, 1.0)
    max_length = None if rng.random() < 0.4 else int(rng.integers(1, max(top, 1) + 1))
    return scores, doc_offsets, max_length, mask


def check_against_brute_force(structure, scores, doc_offsets, max_length, mask, exact_map=True):
    log_z, marg = marginals(scores, doc_offsets, structure, max_length, mask)
    assert_rel_or_abs(
        log_partition(scores, doc_offsets, structure, max_length, mask), log_z, "log_partition vs marginals", 1e-12
    )
    best, labels = viterbi(scores, doc_offsets, structure, max_length, mask)
    span_offsets = dense_span_offsets(doc_offsets)
    for d in range(len(doc_offsets) - 1):
        lo, hi = span_offsets[d], span_offsets[d + 1]
        n = int(doc_offsets[d + 1] - doc_offsets[d])
        doc_mask = None if mask is None else mask[lo:hi]
        z, m, top, top_labels = brute(structure, scores[lo:hi], max_length, doc_mask)
        what = f"{structure} doc {d} n={n}"
        assert_rel_or_abs(log_z[d], z, f"log Z {what}")
        assert_rel(marg[lo:hi], m, f"marginals {what}")
        assert_rel_or_abs(best[d], top, f"MAP score {what}")
        chosen = labels[lo:hi]
        family = family_of(chosen, n)
        assert IN_SPACE[structure](family), (what, family)
        allowed = allowed_rows(n, max_length, doc_mask)
        assert np.all(allowed[chosen >= 0]), what
        rows = np.flatnonzero(chosen >= 0)
        assert_rel_or_abs(scores[lo:hi][rows, chosen[rows]].sum(), best[d], f"score of the Viterbi labels {what}")
        if exact_map:
            np.testing.assert_array_equal(chosen, top_labels, err_msg=what)


# ---------------------------------------------------------------------------
# The enumerations themselves
# ---------------------------------------------------------------------------


def test_pruned_enumeration_equals_filtering_all_subsets():
    """For n <= 5, the backtracking enumeration is exactly the subsets of
    spans that pass ``in_cyk``, and each space is its predicate's filter."""
    for n in range(6):
        spans = span_list(n)
        every = [c for k in range(len(spans) + 1) for c in itertools.combinations(range(len(spans)), k)]
        for structure, predicate in IN_SPACE.items():
            expected = {c for c in every if predicate([spans[r] for r in c])}
            assert set(span_families(structure, n)) == expected, (structure, n)
        assert len(set(laminar_families(n))) == len(laminar_families(n))


def test_spaces_are_nested_as_the_paper_says():
    """On the enumerations (n <= 6): semi_markov = the cyk analyses without
    nesting; quadratic = the cyk analyses where every mention has at most one
    child longer than one word; semi_markov within quadratic within cyk; no
    span twice; and the counts match the counting recursions."""
    for n in range(7):
        spans = span_list(n)
        cyk = set(span_families("cyk", n))
        no_nesting = {f for f in cyk if not any(inside(spans[a], spans[b]) for a in f for b in f)}
        assert set(span_families("semi_markov", n)) == no_nesting
        one_long_child = {
            f for f in cyk if all(sum(length(c) > 1 for c in children([spans[r] for r in f], spans[m])) <= 1 for m in f)
        }
        assert set(span_families("quadratic", n)) == one_long_child
        assert no_nesting <= one_long_child <= cyk
        for T in (1, 2, 3):
            for structure in SPACES:
                labelled = sum(T ** len(f) for f in span_families(structure, n))
                assert labelled == COUNTS[structure](n, T), (structure, n, T)
    # the first length where the quadratic space is strictly smaller: a 4-word
    # mention with two 2-word children
    assert count_quadratic(3, 1) == count_cyk(3, 1) and count_quadratic(4, 1) < count_cyk(4, 1)


def test_dynamic_programs_recognise_exactly_their_space():
    """Every laminar span set of n <= 6 words (one document each, mask = the
    set, every score 1) and every subset of spans for n <= 4: Viterbi keeps the
    whole set iff it is in the structure's space (a maximal-size analysis
    within the set), and always returns an analysis of the space."""
    for n in range(1, 7):
        spans = span_list(n)
        S = len(spans)
        if n <= 4:
            families = [c for k in range(S + 1) for c in itertools.combinations(range(S), k)]
        else:
            families = list(laminar_families(n))
        doc_offsets = np.arange(len(families) + 1, dtype=np.int64) * n
        mask = np.zeros((len(families), S), dtype=bool)
        for d, f in enumerate(families):
            mask[d, list(f)] = True
        scores = np.ones((mask.size, 1))
        for structure in SPACES:
            space = set(span_families(structure, n))
            best, labels = viterbi(scores, doc_offsets, structure, mask=mask.ravel())
            chosen = labels.reshape(len(families), S) >= 0
            assert not np.any(chosen & ~mask)
            np.testing.assert_array_equal(best, chosen.sum(axis=1))
            for d, f in enumerate(families):
                assert tuple(np.flatnonzero(chosen[d])) in space
                assert (len(f) == best[d]) == (f in space), (structure, [spans[r] for r in f])


# ---------------------------------------------------------------------------
# Exactness against brute force
# ---------------------------------------------------------------------------


def test_largest_enumerated_documents():
    """The largest documents, unmasked, unbounded and all masks, each space."""
    rng = np.random.default_rng(5)
    for T, n in MAX_WORDS.items():
        S = n * (n + 1) // 2
        for structure in SPACES:
            for _ in range(3):
                scores = rng.normal(0.0, rng.uniform(0.5, 5.0), (S, T))
                check_against_brute_force(structure, scores, np.array([0, n]), None, None)
                check_against_brute_force(structure, scores, np.array([0, n]), None, rng.random(S) < 0.7)


# ---------------------------------------------------------------------------
# Counting, gradients, batching, layout
# ---------------------------------------------------------------------------


def test_all_zero_scores_count_the_analyses():
    """With every score 0, exp(log Z) is the number of analyses: the
    enumeration for small n, the counting recursions up to 60 words."""
    for T in (1, 2):
        for n in range(MAX_WORDS[T] + 1):
            S = n * (n + 1) // 2
            for structure in SPACES:
                z = np.exp(log_partition(np.zeros((S, T)), [0, n], structure))[0]
                assert z == pytest.approx(labelled_analyses(structure, n, T)[0].shape[0], rel=1e-13)
    lengths = np.arange(0, 61, 3)
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)])
    for T in (1, 3):
        S = int(dense_span_offsets(doc_offsets)[-1])
        for structure in SPACES:
            log_z = log_partition(np.zeros((S, T)), doc_offsets, structure)
            expected = [math.log(COUNTS[structure](int(n), T)) for n in lengths]
            np.testing.assert_allclose(log_z, expected, rtol=1e-12)


@pytest.mark.parametrize("structure", SPACES)
def test_empty_documents_and_fully_masked_documents(structure):
    """Empty documents, and documents with no allowed span, have the empty
    analysis only: log Z 0, MAP 0, marginals 0, no mention."""
    for T in (1, 3):
        empty = (np.zeros((0, T)), [0, 0, 0], structure)
        np.testing.assert_array_equal(log_partition(*empty), [0.0, 0.0])
        z, m = marginals(*empty)
        np.testing.assert_array_equal(z, [0.0, 0.0])
        assert m.shape == (0, T)
        best, labels = viterbi(*empty)
        np.testing.assert_array_equal(best, [0.0, 0.0])
        assert labels.shape == (0,)
    none = (np.arange(12 * 2, dtype=float).reshape(12, 2) - 10, [0, 0, 3, 3, 6], structure)
    mask = np.zeros(12, dtype=bool)
    np.testing.assert_array_equal(log_partition(*none, mask=mask), np.zeros(4))
    z, m = marginals(*none, mask=mask)
    assert np.all(z == 0) and np.all(m == 0)
    best, labels = viterbi(*none, mask=mask)
    assert np.all(best == 0) and np.all(labels == -1)
    # an empty document between two others does not disturb them
    mask[6:] = True
    z, m = marginals(*none, mask=mask)
    assert z[0] == 0 and z[1] == 0 and z[3] != 0 and np.all(m[:6] == 0)


def test_excluded_spans_get_exactly_zero_and_extreme_scores_stay_finite():
    """Excluded spans (masked or too long) have marginal exactly 0 and never
    enter Viterbi, whatever their (finite) scores; huge scores (scale 1e3)
    give no NaN and marginals within rounding of [0, 1]."""
    rng = np.random.default_rng(3)
    n, T = 9, 2
    S = n * (n + 1) // 2
    spans = dense_spans([0, n])
    for structure in SPACES:
        for _ in range(20):
            scores = rng.normal(0, 1e3, (S, T))
            mask = rng.random(S) < 0.5
            max_length = int(rng.integers(1, n + 1))
            z, m = marginals(scores, [0, n], structure, max_length, mask)
            excluded = ~mask | (spans[:, 1] - spans[:, 0] + 1 > max_length)
            assert np.all(np.isfinite(z)) and np.all(np.isfinite(m))
            # scores ~ 1e3 make log weights ~ 1e4, whose rounding (~1e-12) shows in the exponent
            assert np.all(m[excluded] == 0) and np.all(m >= 0) and np.all(m <= 1 + 1e-10)
            _, labels = viterbi(scores, [0, n], structure, max_length, mask)
            assert np.all(labels[excluded] == -1)


def test_dense_layout_helpers():
    """dense_spans is all_spans(doc_offsets, None); span_offsets follow it;
    dense_rows and candidate_spans.span_index invert it."""
    doc_offsets = np.array([0, 3, 3, 7, 8])
    spans = dense_spans(doc_offsets)
    np.testing.assert_array_equal(spans, all_spans(doc_offsets, None))
    np.testing.assert_array_equal(dense_span_offsets(doc_offsets), [0, 6, 6, 16, 17])
    np.testing.assert_array_equal(dense_rows(spans, doc_offsets), np.arange(17))
    np.testing.assert_array_equal(span_index(spans, spans[::-1], 8), np.arange(17)[::-1])
    for first, end in [(0, 3), (3, 7)]:
        local = [(a + first, b + first) for a, b in span_list(end - first)]
        np.testing.assert_array_equal(spans[dense_rows(np.array(local), doc_offsets)], local)
    for bad in ([[2, 3]], [[3, 2]], [[-1, 0]], [[7, 8]], [[0, 0.5]]):
        with pytest.raises(ValueError):
            dense_rows(np.array(bad), doc_offsets)
    assert dense_rows(np.zeros((0, 2), dtype=np.int64), doc_offsets).shape == (0,)


def test_hand_computed_two_word_document():
    """Two words, one label: spans [0,0] (row 0), [0,1] (row 1), [1,1] (row 2)."""
    scores = np.array([[0.3], [-0.7], [1.1]])
    nested = [(), (0,), (2,), (0, 2), (1,), (0, 1), (1, 2), (0, 1, 2)]
    spaces = {"semi_markov": nested[:5], "cyk": nested, "quadratic": nested}
    for structure, analyses in spaces.items():
        weights = np.array([scores[list(rows), 0].sum() for rows in analyses])
        log_z = np.logaddexp.reduce(weights)
        assert log_partition(scores, [0, 2], structure)[0] == pytest.approx(log_z, rel=1e-15)
        _, m = marginals(scores, [0, 2], structure)
        for row in range(3):
            holding = [w for w, rows in zip(weights, analyses) if row in rows]
            assert m[row, 0] == pytest.approx(np.exp(np.logaddexp.reduce(holding) - log_z), rel=1e-13)
        best, labels = viterbi(scores, [0, 2], structure)
        assert best[0] == pytest.approx(weights.max(), rel=1e-15)
        np.testing.assert_array_equal(labels, [0, -1, 0])
    np.testing.assert_array_equal(viterbi(scores + 1, [0, 2], "cyk")[1], [0, 0, 0])
    np.testing.assert_array_equal(viterbi(scores + 1, [0, 2], "semi_markov")[1], [0, -1, 0])
    np.testing.assert_array_equal(viterbi(scores + [[0], [3], [0]], [0, 2], "semi_markov")[1], [-1, 0, -1])


def test_corro_figure_1_sentence_4_needs_the_left_neighbourhood_rules():
    """'I am Fabian from Bonn , Germany' as in the paper's Table 4 (its
    Figure 1 spans, fenceposts: Per 0-1, Per 2-6, Gpe 4-6, Gpe 5-6 over 6
    words): a long child that does not share its parent's left border (Gpe
    4-6 inside Per 2-6, via rules (m), (n), (p)) is found by the quadratic
    Viterbi, and the nested Gpe 5-6 inside it too."""
    n, T = 6, 2  # labels: 0 Per, 1 Gpe
    S = n * (n + 1) // 2
    scores = np.full((S, T), -3.0)
    gold = {(0, 0): 0, (2, 5): 0, (4, 5): 1, (5, 5): 1}  # (first, last) -> label
    rows = dense_rows(np.array(list(gold)), [0, n])
    scores[rows, list(gold.values())] = 2.0
    for structure in ("cyk", "quadratic"):
        best, labels = viterbi(scores, [0, n], structure)
        assert best[0] == 8.0
        np.testing.assert_array_equal(np.flatnonzero(labels >= 0), np.sort(rows))
        assert [labels[r] for r in rows] == list(gold.values())
    best, _ = viterbi(scores, [0, n], "semi_markov")
    assert best[0] == 4.0  # Per 0-1 and Per 2-6 (or Gpe), no nesting


# ---------------------------------------------------------------------------
# Longer documents
# ---------------------------------------------------------------------------


def test_invariants_on_longer_documents():
    """Documents of up to 40 words: log Z(semi_markov) <= log Z(quadratic)
    <= log Z(cyk); quadratic equals cyk when max_length <= 3 (a mention of at
    most 3 words cannot have two long children) and all equal when
    max_length = 1; marginals lie in [0, 1] and, for semi_markov, sum to at
    most 1 over the spans covering a word; Viterbi returns an analysis of the
    space that scores the MAP, which is at most log Z."""
    rng = np.random.default_rng(77)
    for _ in range(30):
        T = int(rng.integers(1, 4))
        lengths = rng.integers(0, 41, int(rng.integers(1, 4)))
        doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        S = int(dense_span_offsets(doc_offsets)[-1])
        scores = rng.normal(0.0, rng.uniform(0.1, 3.0), (S, T))
        mask = None if rng.random() < 0.5 else rng.random(S) < 0.6
        max_length = [None, 1, 2, 3, 5, 10][int(rng.integers(6))]
        z = {s: marginals(scores, doc_offsets, s, max_length, mask) for s in SPACES}
        assert np.all(z["semi_markov"][0] <= z["quadratic"][0] + 1e-9)
        assert np.all(z["quadratic"][0] <= z["cyk"][0] + 1e-9)
        if max_length is not None and max_length <= 3:
            np.testing.assert_allclose(z["quadratic"][0], z["cyk"][0], rtol=1e-12)
            np.testing.assert_allclose(z["quadratic"][1], z["cyk"][1], rtol=1e-9, atol=1e-300)
        if max_length == 1:
            np.testing.assert_allclose(z["semi_markov"][0], z["cyk"][0], rtol=1e-12)
        spans = dense_spans(doc_offsets)
        for structure in SPACES:
            log_z, m = z[structure]
            assert np.all(m >= 0) and np.all(m <= 1 + 1e-12)
            if structure == "semi_markov":
                coverage = np.zeros(int(doc_offsets[-1]))
                for (u, v), p in zip(spans, m.sum(axis=1)):
                    coverage[u : v + 1] += p
                assert np.all(coverage <= 1 + 1e-9)
            best, labels = viterbi(scores, doc_offsets, structure, max_length, mask)
            assert np.all(best <= log_z + 1e-9)
            rows = np.flatnonzero(labels >= 0)
            for d in range(len(doc_offsets) - 1):
                inside_doc = rows[(spans[rows, 0] >= doc_offsets[d]) & (spans[rows, 1] < doc_offsets[d + 1])]
                assert_rel_or_abs(scores[inside_doc, labels[inside_doc]].sum(), best[d], "Viterbi score")
                assert IN_SPACE[structure]([tuple(s) for s in spans[inside_doc]])
            assert mask is None or np.all(mask[rows])
            if max_length is not None:
                assert np.all(spans[rows, 1] - spans[rows, 0] + 1 <= max_length)


def test_three_hundred_words():
    """One 300-word document with 4 labels: every structure runs and agrees
    with the others where the spaces coincide (max_length 3: quadratic =
    cyk; max_length 1: all three). Speed is measured by a benchmark, not here."""
    rng = np.random.default_rng(300)
    n, T = 300, 4
    S = n * (n + 1) // 2
    scores = rng.normal(0.0, 1.0, (S, T))
    for structure in SPACES:
        assert np.isfinite(log_partition(scores, [0, n], structure)).all()
    z3 = {s: log_partition(scores, [0, n], s, max_length=3) for s in SPACES}
    np.testing.assert_allclose(z3["quadratic"], z3["cyk"], rtol=1e-12)
    z1 = {s: log_partition(scores, [0, n], s, max_length=1) for s in SPACES}
    np.testing.assert_allclose(z1["semi_markov"], z1["cyk"], rtol=1e-12)
    np.testing.assert_allclose(z1["quadratic"], z1["cyk"], rtol=1e-12)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

OPERATIONS = [log_partition, marginals, viterbi]


def small_case():
    doc_offsets = np.array([0, 2, 2, 5])
    S = int(dense_span_offsets(doc_offsets)[-1])  # 3 + 0 + 6
    return np.random.default_rng(0).normal(size=(S, 3)), doc_offsets


BAD_ARGUMENTS = {
    "scores with an extra row": lambda s, o: dict(scores=np.zeros((s.shape[0] + 1, 3))),
    "scores with a missing row": lambda s, o: dict(scores=s[:-1]),
    "1-d scores": lambda s, o: dict(scores=s[:, 0]),
    "3-d scores": lambda s, o: dict(scores=s[:, :, None]),
    "scores without labels": lambda s, o: dict(scores=np.zeros((s.shape[0], 0))),
    "string scores": lambda s, o: dict(scores=s.astype(str)),
    "doc_offsets not starting at 0": lambda s, o: dict(doc_offsets=o + 1),
    "decreasing doc_offsets": lambda s, o: dict(doc_offsets=np.array([0, 2, 1, 5])),
    "2-d doc_offsets": lambda s, o: dict(doc_offsets=o[None, :]),
    "empty doc_offsets": lambda s, o: dict(doc_offsets=np.zeros(0, dtype=np.int64)),
    "float doc_offsets": lambda s, o: dict(doc_offsets=o.astype(float)),
    "doc_offsets of other lengths": lambda s, o: dict(doc_offsets=np.array([0, 3, 6])),
    "unknown structure": lambda s, o: dict(structure="crf"),
    "mask of the wrong length": lambda s, o: dict(mask=np.ones(s.shape[0] - 1, dtype=bool)),
    "integer mask": lambda s, o: dict(mask=np.ones(s.shape[0], dtype=np.int64)),
    "2-d mask": lambda s, o: dict(mask=np.ones((s.shape[0], 1), dtype=bool)),
    "max_length 0": lambda s, o: dict(max_length=0),
    "negative max_length": lambda s, o: dict(max_length=-2),
    "float max_length": lambda s, o: dict(max_length=2.5),
    "boolean max_length": lambda s, o: dict(max_length=True),
}


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("case", sorted(BAD_ARGUMENTS))
def test_bad_arguments_raise_value_error(operation, case):
    scores, doc_offsets = small_case()
    arguments = dict(scores=scores, doc_offsets=doc_offsets, structure="cyk", max_length=None, mask=None)
    arguments.update(BAD_ARGUMENTS[case](scores, doc_offsets))
    with pytest.raises(ValueError):
        operation(**arguments)


def test_accepted_argument_forms():
    """Lists, numpy integer max_length, integer scores and uint offsets work."""
    scores, doc_offsets = small_case()
    expected = log_partition(scores, doc_offsets, "quadratic", 2)
    np.testing.assert_array_equal(
        log_partition(scores.tolist(), doc_offsets.tolist(), "quadratic", np.int32(2)), expected
    )
    np.testing.assert_array_equal(log_partition(scores, doc_offsets.astype(np.uint8), "quadratic", 2), expected)
    np.testing.assert_array_equal(
        log_partition(np.zeros((9, 1), dtype=int), doc_offsets, "cyk"),
        log_partition(np.zeros((9, 1)), doc_offsets, "cyk"),
    )


@pytest.mark.parametrize("structure", SPACES)
def test_float32_scores_are_read_exactly(structure):
    """float32 scores (as a thinc model produces them) are not copied to
    float64 but give the results of their exact float64 values."""
    rng = np.random.default_rng(17)
    for _ in range(30):
        scores, doc_offsets, max_length, mask = random_batch(rng, max_words=12)
        single = scores.astype(np.float32)
        exact = single.astype(np.float64)
        np.testing.assert_array_equal(
            log_partition(single, doc_offsets, structure, max_length, mask),
            log_partition(exact, doc_offsets, structure, max_length, mask),
        )
        for a, b in zip(
            marginals(single, doc_offsets, structure, max_length, mask)
            + viterbi(single, doc_offsets, structure, max_length, mask),
            marginals(exact, doc_offsets, structure, max_length, mask)
            + viterbi(exact, doc_offsets, structure, max_length, mask),
        ):
            np.testing.assert_array_equal(a, b)
