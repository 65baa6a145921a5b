"""What is particular to the mention hypergraph of Lu & Roth (2015)
(``structures.hypergraph``; its agreement with enumeration is
``test_protocol``'s table): the sub-hypergraphs as the paper defines them
(``brute_mention_hypergraph``, written from the paper, not from the code),
the largest enumerated documents, the penalty, batching by documents and
types, float32 scores, the readings of mention sets (types I and II, heads),
the start probabilities (``HypergraphMarginals.starts``) and bad input.
"""

import itertools

import numpy as np
import pytest
from brute_mention_hypergraph import (
    all_mention_sets,
    brute,
    cross,
    documented_reading,
    overlap,
    paper_unambiguous,
    sub_hypergraphs,
    union_of_paths,
)

from spacy_depner.structures.hypergraph import HYPERGRAPH
from spacy_depner.structures.hypergraph import _mention_hypergraph as mh
from spacy_depner.structures.hypergraph._mention_hypergraph import (
    edges_to_mentions,
    log_partition,
    marginals,
    mentions_to_edges,
    n_kinds,
    representable,
    viterbi,
)

RTOL = 1e-9
# longest enumerated document per (heads, n_types)
MAX_WORDS = {(False, 1): 6, (False, 2): 4, (True, 1): 3, (True, 2): 2}
LARGEST = {**MAX_WORDS, (True, 1): 4}  # a few documents only: 528896 sub-hypergraphs

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def assert_rel(got, expected, what, rtol=RTOL):
    """|got - expected| <= rtol max(|expected|, 1e-300) elementwise (0 stays exactly 0)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.isfinite(got)), (what, got)
    assert np.all(np.abs(got - expected) <= rtol * np.abs(expected)), f"{what}:\ngot {got}\nexpected {expected}"


def assert_rel_or_abs(got, expected, what, rtol=RTOL):
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.abs(got - expected) <= rtol * np.maximum(np.abs(expected), 1.0)), (
        f"{what}:\ngot {got}\nexpected {expected}"
    )


def offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def random_batch(rng, heads=None, n_types=None, max_words=None):
    """1-3 documents (empty ones likely), T in {1, 2}, scores ~ normal of a
    random scale up to 5, penalty ~ normal(0, 2)."""
    heads = bool(rng.integers(2)) if heads is None else heads
    T = n_types or int(rng.integers(1, 3))
    top = MAX_WORDS[(heads, T)] if max_words is None else max_words
    lengths = rng.integers(0, top + 1, int(rng.integers(1, 4)))
    doc_offsets = offsets(lengths)
    scores = rng.normal(0.0, rng.uniform(0.05, 5.0), (int(doc_offsets[-1]), T, n_kinds(heads)))
    return scores, doc_offsets, float(rng.normal(0.0, 2.0)), heads


def check_against_brute_force(scores, doc_offsets, penalty, heads, exact_map=True):
    log_z, marg = marginals(scores, doc_offsets, penalty, heads)
    np.testing.assert_array_equal(log_partition(scores, doc_offsets, penalty, heads), log_z)
    best, edges = viterbi(scores, doc_offsets, penalty, heads)
    assert edges.dtype == np.int8 and edges.shape == scores.shape
    pens = (
        edges[:, :, mh.KIND_T_I].astype(float)
        if not heads
        else (edges[:, :, mh.HEAD_T_B] + edges[:, :, mh.HEAD_T_W] + 2.0 * edges[:, :, mh.HEAD_T_BW])
    )
    for d in range(len(doc_offsets) - 1):
        lo, hi = doc_offsets[d], doc_offsets[d + 1]
        z, m, top, top_edges = brute(scores[lo:hi], penalty, heads)
        what = f"doc {d} n={hi - lo} heads={heads}"
        assert_rel_or_abs(log_z[d], z, f"log Z {what}")
        assert_rel(marg[lo:hi], m, f"marginals {what}")
        assert_rel_or_abs(best[d], top, f"MAP score {what}")
        assert_rel_or_abs(
            (scores[lo:hi] * edges[lo:hi]).sum() + penalty * pens[lo:hi].sum(),
            best[d],
            f"score of the MAP edges {what}",
        )
        if exact_map:
            np.testing.assert_array_equal(edges[lo:hi], top_edges, err_msg=what)
        if hi > lo:  # the MAP edges are a sub-hypergraph: they decode and map back to themselves
            one = [0, hi - lo]
            np.testing.assert_array_equal(
                mentions_to_edges(edges_to_mentions(edges[lo:hi], one), one, scores.shape[1]), edges[lo:hi]
            )


# ---------------------------------------------------------------------------
# The enumeration itself
# ---------------------------------------------------------------------------


def test_sub_hypergraphs_are_the_unions_of_paths_of_mention_sets():
    """Theorem 3.1 and its failing converse, on the enumeration (one type,
    n <= 5): every mention set's union of paths is an enumerated
    sub-hypergraph, and every enumerated sub-hypergraph is one (1, 2, 8, 40,
    208, 1088 of them: fewer than the 2^(n(n+1)/2) mention sets). With two
    types (n <= 3), or heads (n <= 3, at most 3 mentions), every union of
    paths is enumerated."""
    for n in range(6):
        K = n_kinds(False)
        indices, _ = sub_hypergraphs(n, 1, False)
        enumerated = set()
        for row in indices:
            edges = np.zeros(n * K + 1, dtype=np.int8)
            edges[row] = 1
            enumerated.add(edges[:-1].tobytes())
        unions = {union_of_paths([(b, e, 0) for b, e in s], n, 1, False).tobytes() for s in all_mention_sets(n)}
        assert unions == enumerated and len(enumerated) == len(indices)
        assert len(indices) == [1, 2, 8, 40, 208, 1088][n]
    for heads, T, n, most in [(False, 2, 3, 4), (True, 1, 3, 3)]:
        indices, _ = sub_hypergraphs(n, T, heads)
        K = n_kinds(heads)
        enumerated = set()
        for row in indices:
            edges = np.zeros(n * T * K + 1, dtype=np.int8)
            edges[row] = 1
            enumerated.add(edges[:-1].tobytes())
        assert len(enumerated) == len(indices)
        candidates = [
            (b, e, t) + ((hf, hl) if heads else ())
            for b in range(n)
            for e in range(b, n)
            for t in range(T)
            for hf in range(b, e + 1)
            for hl in range(hf, e + 1)
            if heads or (hf, hl) == (b, e)
        ]
        for r in range(most + 1):
            for s in itertools.combinations(candidates, r):
                assert union_of_paths(s, n, T, heads).tobytes() in enumerated


def test_types_are_independent_below_e():
    """The enumeration with two types is the product of the one-type ones
    (the T_t subtrees share no node): the counts multiply."""
    for heads in (False, True):
        for n in range(MAX_WORDS[(heads, 2)] + 1):
            assert len(sub_hypergraphs(n, 2, heads)[1]) == len(sub_hypergraphs(n, 1, heads)[1]) ** 2


# ---------------------------------------------------------------------------
# Exactness against brute force
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_largest_enumerated_documents():
    rng = np.random.default_rng(5)
    for (heads, T), n in LARGEST.items():
        for _ in range(3):
            scores = rng.normal(0.0, rng.uniform(0.5, 5.0), (n, T, n_kinds(heads)))
            check_against_brute_force(scores, np.array([0, n]), float(rng.normal(0, 2)), heads)


def test_all_zero_scores_count_the_sub_hypergraphs():
    for (heads, T), n_max in MAX_WORDS.items():
        for n in range(n_max + 1):
            z = np.exp(log_partition(np.zeros((n, T, n_kinds(heads))), [0, n], heads=heads))[0]
            assert z == pytest.approx(len(sub_hypergraphs(n, T, heads)[1]), rel=1e-13)


@pytest.mark.parametrize("heads", [False, True])
def test_penalty_is_a_bias_on_the_t_to_i_hyperedges(heads):
    rng = np.random.default_rng(8)
    scores, doc_offsets, penalty, _ = random_batch(rng, heads, n_types=3, max_words=9)
    shifted = scores.copy()
    if heads:
        shifted[:, :, [mh.HEAD_T_B, mh.HEAD_T_W]] += penalty
        shifted[:, :, mh.HEAD_T_BW] += 2 * penalty
    else:
        shifted[:, :, mh.KIND_T_I] += penalty
    for a, b in zip(
        marginals(scores, doc_offsets, penalty, heads) + viterbi(scores, doc_offsets, penalty, heads),
        marginals(shifted, doc_offsets, 0.0, heads) + viterbi(shifted, doc_offsets, 0.0, heads),
    ):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # sec. 3.7: a very negative penalty predicts no mention, a very large one opens mentions everywhere
    counts = [len(edges_to_mentions(viterbi(scores, doc_offsets, p, heads)[1], doc_offsets)) for p in (-1e3, 1e3)]
    assert counts[0] == 0 and counts[1] >= scores.shape[0] * scores.shape[1]


# ---------------------------------------------------------------------------
# Batches, types, dtypes, long documents
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("heads", [False, True])
def test_batch_equals_documents_one_by_one_and_types_one_by_one(heads):
    """Documents are independent; so are types (below E, the hypergraph is
    one chain per type): log Z is the sum of the one-type log Zs."""
    rng = np.random.default_rng(31)
    for _ in range(20):
        scores, doc_offsets, penalty, _ = random_batch(rng, heads, n_types=3, max_words=15)
        log_z, marg = marginals(scores, doc_offsets, penalty, heads)
        best, edges = viterbi(scores, doc_offsets, penalty, heads)
        for d in range(len(doc_offsets) - 1):
            lo, hi = doc_offsets[d], doc_offsets[d + 1]
            z1, m1 = marginals(scores[lo:hi], [0, hi - lo], penalty, heads)
            b1, e1 = viterbi(scores[lo:hi], [0, hi - lo], penalty, heads)
            assert z1[0] == log_z[d] and b1[0] == best[d]
            np.testing.assert_array_equal(m1, marg[lo:hi])
            np.testing.assert_array_equal(e1, edges[lo:hi])
        per_type = [marginals(scores[:, t : t + 1], doc_offsets, penalty, heads) for t in range(3)]
        np.testing.assert_allclose(sum(z for z, _ in per_type), log_z, rtol=1e-12)
        np.testing.assert_allclose(np.concatenate([m for _, m in per_type], axis=1), marg, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("heads", [False, True])
def test_float32_scores_are_read_exactly(heads):
    rng = np.random.default_rng(17)
    for _ in range(20):
        scores, doc_offsets, penalty, _ = random_batch(rng, heads, max_words=12)
        single = scores.astype(np.float32)
        exact = single.astype(np.float64)
        got = marginals(single, doc_offsets, penalty, heads) + viterbi(single, doc_offsets, penalty, heads)
        expected = marginals(exact, doc_offsets, penalty, heads) + viterbi(exact, doc_offsets, penalty, heads)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)
        assert got[1].dtype == np.float64


def test_empty_documents_and_empty_batches():
    for heads in (False, True):
        K = n_kinds(heads)
        for doc_offsets in ([0], [0, 0, 0]):
            D = len(doc_offsets) - 1
            np.testing.assert_array_equal(log_partition(np.zeros((0, 2, K)), doc_offsets, 1.0, heads), np.zeros(D))
            z, m = marginals(np.zeros((0, 2, K)), doc_offsets, heads=heads)
            assert z.shape == (D,) and m.shape == (0, 2, K)
            best, edges = viterbi(np.zeros((0, 2, K)), doc_offsets, heads=heads)
            assert best.shape == (D,) and edges.shape == (0, 2, K)
            assert edges_to_mentions(edges, doc_offsets).shape == (0, 5 if heads else 3)
        assert mentions_to_edges(np.zeros((0, 5 if heads else 3), dtype=int), [0, 3], 2).shape == (3, 2, K)
    np.testing.assert_array_equal(representable(np.zeros((0, 3), dtype=int), [0, 0, 2], 1), [True, True])


@pytest.mark.parametrize("heads", [False, True])
def test_long_documents(heads):
    """2000 tokens, 10 types: finite, marginals in [0, 1] with the T
    hyperedges of each node summing to 1, Viterbi below log Z; huge scores
    stay finite. (Linear in n T: one fixed table of half steps per token and
    type; no timing here.)"""
    rng = np.random.default_rng(1)
    for scale in (1.0, 1e3):
        scores = rng.normal(0.0, scale, (2000, 10, n_kinds(heads)))
        doc_offsets = [0, 700, 700, 2000]
        log_z, m = marginals(scores, doc_offsets, 0.5, heads)
        # log weights ~ 1e7 at scale 1e3: their rounding (~1e-9) shows in the exponent
        assert np.all(np.isfinite(log_z)) and np.all(m >= 0) and np.all(m <= 1 + 1e-9 * scale)
        t_kinds = [mh.KIND_T_X, mh.KIND_T_I] if not heads else [mh.HEAD_T_X, mh.HEAD_T_B, mh.HEAD_T_W, mh.HEAD_T_BW]
        np.testing.assert_allclose(m[:, :, t_kinds].sum(axis=2), 1.0, rtol=1e-9 * scale)
        best, edges = viterbi(scores, doc_offsets, 0.5, heads)
        assert np.all(best <= log_z + 1e-9 * scale)
        np.testing.assert_array_equal(mentions_to_edges(edges_to_mentions(edges, doc_offsets), doc_offsets, 10), edges)
    src, _, _, _, split = mh._TABLES[heads]
    assert (split, src.shape[0]) == ((4, 8) if not heads else (32, 160))


# ---------------------------------------------------------------------------
# Mentions <-> sub-hypergraphs
# ---------------------------------------------------------------------------


def batch_of_sets(sets, n, T=1):
    """One document of n tokens per mention set; rows in batch coordinates."""
    rows = [
        (m[0] + d * n, m[1] + d * n) + tuple(m[2:3]) + tuple(x + d * n for x in m[3:])
        for d, s in enumerate(sets)
        for m in s
    ]
    width = max([len(m) for s in sets for m in s], default=3)
    return np.array(rows, dtype=np.int64).reshape(-1, width), np.arange(len(sets) + 1) * n


def test_type_i_reading_on_every_mention_set():
    """Every mention set of one type, n <= 5 (32768 sets for n = 5), in one
    batch: mentions_to_edges is the union of paths; edges_to_mentions reads a
    set with the same sub-hypergraph and no crossing pair; it reads back
    exactly the sets of the documented characterisation (``representable``),
    which holds for exactly one set per sub-hypergraph; the paper's
    unambiguous sets are among them."""
    for n in range(1, 6):
        sets = [[(b, e, 0) for b, e in s] for s in all_mention_sets(n)]
        rows, doc_offsets = batch_of_sets(sets, n)
        edges = mentions_to_edges(rows, doc_offsets, 1)
        back = edges_to_mentions(edges, doc_offsets)
        np.testing.assert_array_equal(mentions_to_edges(back, doc_offsets, 1), edges)
        ok = representable(rows, doc_offsets, 1)
        bounds = np.searchsorted(back[:, 0], doc_offsets)  # back is sorted by first token
        keys = {}
        for d, s in enumerate(sets):
            spans = [m[:2] for m in s]
            if n < 5 or d % 16 == 0:
                np.testing.assert_array_equal(edges[d * n : (d + 1) * n], union_of_paths(s, n, 1, False))
            read = [(int(a) - d * n, int(b) - d * n) for a, b in back[bounds[d] : bounds[d + 1], :2]]
            assert not any(cross(a, b) for a, b in itertools.combinations(read, 2)), read
            assert documented_reading(read)
            assert ok[d] == (sorted(read) == sorted(spans)) == documented_reading(spans), spans
            assert ok[d] or not paper_unambiguous(spans), spans
            key = edges[d * n : (d + 1) * n].tobytes()
            keys[key] = keys.get(key, 0) + documented_reading(spans)
        assert set(keys.values()) == {1}


def test_figure_3_ambiguity_reads_type_i():
    """A B C D: {B C, A B C D} (type I) and {A B C, B C D} (type II) of one
    type share a sub-hypergraph, which reads as the type-I pair; other types
    are independent."""
    doc_offsets = [0, 4, 8]
    type_i = np.array([[1, 2, 0], [0, 3, 0], [4 + 1, 4 + 2, 1], [4 + 0, 4 + 3, 1]])
    type_ii = np.array([[0, 2, 0], [1, 3, 0], [4 + 0, 4 + 2, 1], [4 + 1, 4 + 3, 1]])
    edges = mentions_to_edges(type_i, doc_offsets, 2)
    np.testing.assert_array_equal(mentions_to_edges(type_ii, doc_offsets, 2), edges)
    np.testing.assert_array_equal(edges_to_mentions(edges, doc_offsets), [[0, 3, 0], [1, 2, 0], [4, 7, 1], [5, 6, 1]])
    np.testing.assert_array_equal(representable(type_i, doc_offsets, 2), [True, True])
    np.testing.assert_array_equal(representable(type_ii, doc_offsets, 2), [False, False])
    # different types never interact: the crossing pair of two types is exact
    np.testing.assert_array_equal(representable([[0, 2, 0], [1, 3, 1]], [0, 4], 2), [True])
    # Figure 2: "he also talked with the egyptian president", PER = 0, GPE = 1
    figure_2 = np.array([[0, 0, 0], [4, 6, 0], [5, 5, 1]])
    e = mentions_to_edges(figure_2, [0, 7], 2)
    assert e[:, :, mh.KIND_T_I].tolist() == [[1, 0], [0, 0], [0, 0], [0, 0], [1, 0], [0, 1], [0, 0]]
    assert e[5, 1, mh.KIND_I_X] == 1 and e[5, 0, mh.KIND_I_I] == 1 and e[6, 0, mh.KIND_I_X] == 1
    np.testing.assert_array_equal(edges_to_mentions(e, [0, 7]), figure_2)


def random_mentions(rng, doc_offsets, T, heads, nested_only=False):
    """Random overlapping / nested mentions; nested_only keeps, per type, a
    set of pairwise disjoint or nested spans with distinct starts and ends
    (and, with heads, each nested mention inside one part of its container:
    before, within or after the head)."""
    rows = []
    for d in range(len(doc_offsets) - 1):
        lo, hi = int(doc_offsets[d]), int(doc_offsets[d + 1])
        for t in range(T):
            chosen = []
            for _ in range(int(rng.integers(0, 2 + (hi - lo) // 2))):
                if hi == lo:
                    break
                b = int(rng.integers(lo, hi))
                e = int(min(hi - 1, b + rng.geometric(0.35) - 1))
                hf = int(rng.integers(b, e + 1))
                hl = int(rng.integers(hf, e + 1))
                m = (b, e, t, hf, hl)
                if nested_only:

                    def fits(o, i):
                        part = [0 if x < o[3] else (1 if x <= o[4] else 2) for x in (i[0], i[1])]
                        return o[0] <= i[0] and i[1] <= o[1] and (not heads or part[0] == part[1])

                    if any(
                        m[0] == c[0] or m[1] == c[1] or (overlap(m, c) and not (fits(m, c) or fits(c, m)))
                        for c in chosen
                    ):
                        continue
                chosen.append(m)
            rows.extend(chosen)
    rows = np.array(rows, dtype=np.int64).reshape(-1, 5)
    return rows if heads else rows[:, :3]


@pytest.mark.parametrize("heads", [False, True])
def test_round_trip_of_representable_sets(heads):
    """Random batches of 1-4 documents (up to 30 tokens, 3 types): the
    decoding always maps back to the same sub-hypergraph and is itself
    representable; disjoint-or-nested sets with distinct starts and ends
    (with heads: nested within one part of the container) read back exactly;
    without heads, ``representable`` is the documented characterisation and
    covers the paper's unambiguous sets."""
    rng = np.random.default_rng(7 + heads)
    for _ in range(150):
        lengths = rng.integers(0, 31, int(rng.integers(1, 5)))
        doc_offsets = offsets(lengths)
        for nested_only in (False, True):
            rows = random_mentions(rng, doc_offsets, 3, heads, nested_only)
            edges = mentions_to_edges(rows, doc_offsets, 3)
            back = edges_to_mentions(edges, doc_offsets)
            np.testing.assert_array_equal(mentions_to_edges(back, doc_offsets, 3), edges)
            assert representable(back, doc_offsets, 3).all()
            ok = representable(rows, doc_offsets, 3)
            if nested_only:
                assert ok.all()
                np.testing.assert_array_equal(back, np.unique(rows, axis=0))
            if heads:
                continue
            for d in range(len(doc_offsets) - 1):
                mine = rows[(rows[:, 0] >= doc_offsets[d]) & (rows[:, 0] < doc_offsets[d + 1])]
                per_type = [list({tuple(m[:2]) for m in mine if m[2] == t}) for t in range(3)]
                assert ok[d] == all(documented_reading(s) for s in per_type)
                if all(paper_unambiguous(s) for s in per_type):
                    assert ok[d]


@pytest.mark.slow
def test_heads_decode_every_sub_hypergraph():
    """Every enumerated sub-hypergraph with heads (one type, n <= 4; two
    types, n <= 2) decodes to mentions whose union of paths is itself, with
    heads inside their mentions."""
    for T, n_max in ((1, 4), (2, 2)):
        for n in range(1, n_max + 1):
            indices, _ = sub_hypergraphs(n, T, True)
            K = n_kinds(True)
            edges = np.zeros((len(indices), n * T * K + 1), dtype=np.int8)
            np.put_along_axis(edges, indices, 1, axis=1)
            edges = edges[:, :-1].reshape(-1, T, K)
            doc_offsets = np.arange(len(indices) + 1) * n
            back = edges_to_mentions(edges, doc_offsets)
            assert np.all((back[:, 0] <= back[:, 3]) & (back[:, 3] <= back[:, 4]) & (back[:, 4] <= back[:, 1]))
            np.testing.assert_array_equal(mentions_to_edges(back, doc_offsets, T), edges)
            for d in range(0, len(indices), max(1, len(indices) // 50)):
                mine = back[back[:, 0] // n == d] - np.array([d * n, d * n, 0, d * n, d * n])
                np.testing.assert_array_equal(union_of_paths(mine.tolist(), n, T, True), edges[d * n : (d + 1) * n])


def test_heads_examples():
    """[the [US] president] with heads 'president' and 'US' (one type) reads
    back; a mention and its head that is the whole mention; a mention whose
    head ends before it; two mentions sharing a start whose heads could be
    swapped read with the W-opened mention innermost."""
    exact = np.array([[0, 2, 0, 2, 2], [1, 1, 0, 1, 1], [3, 3, 0, 3, 3], [4, 6, 0, 4, 4]])
    edges = mentions_to_edges(exact, [0, 7], 1)
    np.testing.assert_array_equal(edges_to_mentions(edges, [0, 7]), exact)
    assert edges[0, 0, mh.HEAD_T_B] and edges[0, 0, mh.HEAD_B_B] and edges[1, 0, mh.HEAD_T_W]
    assert edges[1, 0, mh.HEAD_B_W] and edges[1, 0, mh.HEAD_W_X] and edges[2, 0, mh.HEAD_W_X]
    assert edges[4, 0, mh.HEAD_W_A] and edges[5, 0, mh.HEAD_A_A] and edges[6, 0, mh.HEAD_A_X]
    swapped = np.array([[0, 1, 0, 1, 1], [0, 2, 0, 0, 1]])
    e = mentions_to_edges(swapped, [0, 3], 1)
    np.testing.assert_array_equal(edges_to_mentions(e, [0, 3]), [[0, 1, 0, 0, 1], [0, 2, 0, 1, 1]])
    assert not representable(swapped, [0, 3], 1)[0]


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def small_case(heads=False):
    doc_offsets = np.array([0, 2, 2, 5])
    return np.random.default_rng(0).normal(size=(5, 2, n_kinds(heads))), doc_offsets


BAD_SCORES = {
    "nan": lambda s, o: dict(scores=np.where(s > 1, np.nan, s)),
    "inf": lambda s, o: dict(scores=np.where(s > 1, np.inf, s)),
    "-inf": lambda s, o: dict(scores=np.where(s > 1, -np.inf, s)),
    "2-d scores": lambda s, o: dict(scores=s[:, 0]),
    "4-d scores": lambda s, o: dict(scores=s[..., None]),
    "no types": lambda s, o: dict(scores=s[:, :0]),
    "head kinds without heads": lambda s, o: dict(scores=np.zeros((5, 2, 17))),
    "kinds without heads, heads=True": lambda s, o: dict(heads=True),
    "string scores": lambda s, o: dict(scores=s.astype(str)),
    "complex scores": lambda s, o: dict(scores=s.astype(complex)),
    "extra token": lambda s, o: dict(scores=np.zeros((6, 2, 5))),
    "doc_offsets not from 0": lambda s, o: dict(doc_offsets=o + 1),
    "decreasing doc_offsets": lambda s, o: dict(doc_offsets=np.array([0, 3, 2, 5])),
    "2-d doc_offsets": lambda s, o: dict(doc_offsets=o[None]),
    "empty doc_offsets": lambda s, o: dict(doc_offsets=np.zeros(0, dtype=int)),
    "float doc_offsets": lambda s, o: dict(doc_offsets=o.astype(float)),
    "nan penalty": lambda s, o: dict(penalty=np.nan),
    "inf penalty": lambda s, o: dict(penalty=np.inf),
    "string penalty": lambda s, o: dict(penalty="1"),
    "array penalty": lambda s, o: dict(penalty=np.ones(2)),
    "boolean penalty": lambda s, o: dict(penalty=True),
    "None penalty": lambda s, o: dict(penalty=None),
    "string heads": lambda s, o: dict(heads="yes"),
    "integer heads": lambda s, o: dict(heads=1),
}


@pytest.mark.parametrize("operation", [log_partition, marginals, viterbi])
@pytest.mark.parametrize("case", sorted(BAD_SCORES))
def test_bad_scores_raise_value_error(operation, case):
    scores, doc_offsets = small_case()
    arguments = dict(scores=scores, doc_offsets=doc_offsets, penalty=0.5, heads=False)
    arguments.update(BAD_SCORES[case](scores, doc_offsets))
    with pytest.raises(ValueError):
        operation(**arguments)


def test_accepted_argument_forms():
    scores, doc_offsets = small_case()
    expected = log_partition(scores, doc_offsets, 0.5)
    np.testing.assert_array_equal(log_partition(scores.tolist(), doc_offsets.tolist(), np.float32(0.5)), expected)
    np.testing.assert_array_equal(log_partition(scores, doc_offsets.astype(np.uint8), 0.5, np.bool_(False)), expected)
    np.testing.assert_array_equal(
        log_partition(np.zeros((5, 2, 5), dtype=int), doc_offsets, 1),
        log_partition(np.zeros((5, 2, 5)), doc_offsets, 1.0),
    )
    _, edges = viterbi(scores, doc_offsets)
    np.testing.assert_array_equal(
        edges_to_mentions(edges.astype(bool), doc_offsets), edges_to_mentions(edges, doc_offsets)
    )


def test_bad_edges_raise_value_error():
    scores, doc_offsets = small_case()
    _, edges = viterbi(scores, doc_offsets)
    bad = {
        "wrong kinds": edges[:, :, :4],
        "2-d": edges[:, 0],
        "value 2": edges * 2,
        "float": edges.astype(float),
        "no T hyperedge": np.where(np.arange(5)[None, None, :] < 2, 0, edges).astype(np.int8),
        "extra token": np.concatenate([edges, edges[:1]]),
    }
    two_t = edges.copy()
    two_t[0, 0, [mh.KIND_T_X, mh.KIND_T_I]] = 1
    bad["two T hyperedges"] = two_t
    continues_past_end = np.zeros_like(edges)
    continues_past_end[:, :, mh.KIND_T_I] = 1
    continues_past_end[:, :, mh.KIND_I_I] = 1  # the last token of each document would need token n
    bad["I past the end"] = continues_past_end
    orphan = np.zeros_like(edges)
    orphan[:, :, mh.KIND_T_X] = 1
    orphan[3, 1, mh.KIND_I_X] = 1  # an I hyperedge whose parent is not in the sub-hypergraph
    bad["I node not reached"] = orphan
    across = np.zeros_like(edges)
    across[:, :, mh.KIND_T_X] = 1
    across[1, 0, [mh.KIND_T_X, mh.KIND_T_I]] = [0, 1]
    across[1, 0, mh.KIND_I_I] = 1  # continues from document 0 into document 2
    across[2, 0, mh.KIND_I_X] = 1
    bad["continuing across documents"] = across
    for what, e in bad.items():
        with pytest.raises(ValueError):
            edges_to_mentions(e, doc_offsets)
            pytest.fail(what)
    with pytest.raises(ValueError):
        edges_to_mentions(edges, [0, 2, 4])


@pytest.mark.parametrize("operation", [mentions_to_edges, representable])
def test_bad_mentions_raise_value_error(operation):
    doc_offsets = [0, 2, 2, 5]
    good = np.array([[0, 1, 0], [2, 4, 1]])
    operation(good, doc_offsets, 2)
    operation(np.array([[0, 1, 0, 1, 1], [2, 4, 1, 3, 4]]), doc_offsets, 2)
    bad = [
        (np.array([[1, 0, 0]]), 2),  # reversed
        (np.array([[1, 2, 0]]), 2),  # across documents
        (np.array([[4, 5, 0]]), 2),  # past the batch
        (np.array([[-1, 0, 0]]), 2),
        (np.array([[0, 1, 2]]), 2),  # unknown type
        (np.array([[0, 1, -1]]), 2),
        (np.array([[0, 1, 0, 0]]), 2),  # 4 columns
        (np.array([0, 1, 0]), 2),  # 1-d
        (np.array([[0.0, 1.0, 0.0]]), 2),  # floats
        (np.array([[2, 4, 0, 1, 3]]), 2),  # head before the mention
        (np.array([[2, 4, 0, 3, 5]]), 2),  # head after it
        (np.array([[2, 4, 0, 4, 3]]), 2),  # reversed head
        (good, 0),
        (good, 1.5),
        (good, True),
    ]
    for mentions, n_types in bad:
        with pytest.raises(ValueError):
            operation(mentions, doc_offsets, n_types)
    with pytest.raises(ValueError):
        operation(good, [1, 2, 5], 2)


@pytest.mark.parametrize("name", ["hypergraph", "hypergraph heads"])
def test_start_probabilities_are_those_of_a_mention_of_the_type_at_the_token(name):
    """``HypergraphMarginals.starts``: for every token and type, the
    probability (by enumeration) that the analysis holds a mention of that
    type starting at that token, whatever its end (and head)."""
    from test_protocol import TABLE, logsumexp

    row, rng = TABLE[name], np.random.default_rng(11)
    for _ in range(30):
        scores, layout, options = row.batch(rng)
        units = row.brute(scores, layout, **options)
        N, T = scores.shape[:2]
        want = np.zeros((N, T))
        for unit in units:
            z = logsumexp([a.weight for a in unit])
            for a in unit:
                for first, label in {(m[0], m[2]) for m in a.mentions}:
                    want[first, label] += np.exp(a.weight - z)
        tokens, labels = np.nonzero(np.ones((N, T), dtype=bool))
        queries = np.stack([tokens, tokens, labels] + ([tokens, tokens] if options["heads"] else []), axis=1)
        got = row.structure.marginals(scores, layout, **options).starts(queries)
        np.testing.assert_allclose(got, want[tokens, labels], atol=1e-9)


def test_mention_marginals_are_not_given_with_heads():
    from test_protocol import TABLE

    scores, layout, options = TABLE["hypergraph heads"].batch(np.random.default_rng(0))
    marginals = HYPERGRAPH.marginals(scores, layout, **options)
    for read in (lambda: marginals.mentions(0.0), lambda: marginals.of(np.zeros((1, 5), dtype=np.int64))):
        with pytest.raises(ValueError, match="not available with heads"):
            read()
