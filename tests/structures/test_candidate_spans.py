"""Exactness of ``spacy_depner.structures.trees.candidate_spans`` against brute force.

Every span function is compared, as a set and as a sorted array, with the
references of ``brute_candidate_spans`` (explicit path search in the undirected
dependency graph, Definition 1 of Jie, Muis & Lu 2017 taken literally) on
random batches: non-projective random recursive trees, forests, trees whose
arcs cross sentence ends, roots written as -1 or as the token itself, empty
sentences, and bounded and unbounded ``max_length``.
"""

import itertools

import numpy as np
import pytest
from brute_candidate_spans import (
    brute_all_spans,
    brute_single_arc_spans,
    brute_valid_spans,
    is_projective,
    is_tree,
    is_valid_by_covering,
    is_valid_by_increasing_path,
    neighbours_of,
    random_recursive_tree,
    sorted_span_array,
    undirected_arcs,
)
from budgets import cases
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_depner.structures.trees.candidate_spans import (
    all_spans,
    candidate_spans,
    merge_spans,
    single_arc_spans,
    span_index,
    valid_spans,
)

MAX_LENGTHS = [None, 1, 2, 3, 4, 6]


def assert_span_array(spans, expected):
    """``spans`` is an (S, 2) int64 array, strictly increasing in (last, first)
    (so sorted and without duplicates), holding exactly the set ``expected``."""
    assert isinstance(spans, np.ndarray)
    assert spans.dtype == np.int64
    assert spans.ndim == 2 and spans.shape == (len(expected), 2), (spans.shape, len(expected))
    keys = [(int(v), int(u)) for u, v in spans]
    assert all(a < b for a, b in zip(keys, keys[1:])), f"not strictly sorted by (last, first): {spans.tolist()}"
    assert all(u <= v for u, v in spans.tolist())
    got = {(int(u), int(v)) for u, v in spans}
    assert got == expected, f"missing {sorted(expected - got)}, extra {sorted(got - expected)}"
    np.testing.assert_array_equal(spans, sorted_span_array(expected))


def write_roots(heads, rng):
    """Write each root (-1) as -1 or as its own index, at random."""
    heads = heads.copy()
    for t in np.flatnonzero(heads == -1):
        if rng.random() < 0.5:
            heads[t] = t
    return heads


def random_sentence_lengths(rng, max_sentences=4, max_length=9):
    """Sentence lengths, empty sentences allowed."""
    n_sentences = int(rng.integers(0, max_sentences + 1))
    return [int(rng.integers(0, max_length + 1)) for _ in range(n_sentences)]


def random_batch(rng):
    """(heads, sentence_offsets, kind): a random batch of one of four kinds.

    tree:   one random recursive tree per sentence, positions permuted (non-projective)
    forest: as tree, but some arcs dropped (several roots in a sentence)
    batch:  one tree over the whole batch, so that some arcs cross sentence ends
    shape:  chains to the left or right, or stars (the best and worst cases of Figure 3)
    """
    lengths = random_sentence_lengths(rng)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n = int(offsets[-1])
    kind = ["tree", "forest", "batch", "shape"][int(rng.integers(4))]
    if kind == "batch":
        heads = random_recursive_tree(n, rng) if n else np.zeros(0, dtype=np.int64)
    else:
        parts = []
        for length, first in zip(lengths, offsets[:-1]):
            if kind == "shape" and length:
                form = int(rng.integers(3))
                if form == 0:  # each word's head is the next word
                    local = np.append(np.arange(1, length), -1)
                elif form == 1:  # each word's head is the previous word
                    local = np.arange(-1, length - 1)
                else:  # star around a random centre
                    centre = int(rng.integers(length))
                    local = np.full(length, centre)
                    local[centre] = -1
            else:
                local = random_recursive_tree(length, rng)
                if kind == "forest":
                    local[rng.random(length) < 0.3] = -1
            parts.append(np.where(local >= 0, local + first, -1))
        heads = np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    return write_roots(heads, rng), offsets, kind


def check_all_three(heads, offsets, max_length):
    assert_span_array(valid_spans(heads, offsets, max_length), brute_valid_spans(heads, offsets, max_length))
    assert_span_array(single_arc_spans(heads, offsets, max_length), brute_single_arc_spans(heads, offsets, max_length))
    assert_span_array(all_spans(offsets, max_length), brute_all_spans(offsets, max_length))


def test_brute_force_covering_definition_equals_increasing_path():
    """Sanity of the reference: in a forest, 'no arc of the u..v chain covers
    another' (Definition 1) holds exactly when the path visits increasing
    positions (the module docstring's reformulation)."""
    rng = np.random.default_rng(7)
    for _ in range(cases("candidate_spans.small")):
        heads, offsets, _ = random_batch(rng)
        adjacency = neighbours_of(undirected_arcs(heads, offsets), len(heads))
        for u, v in itertools.combinations_with_replacement(range(len(heads)), 2):
            assert is_valid_by_covering(adjacency, u, v) == is_valid_by_increasing_path(adjacency, u, v)


def test_random_batches_equal_brute_force():
    """3000 random batches x 6 values of max_length: valid_spans,
    single_arc_spans and all_spans each equal the brute-force set, as an int64
    (S, 2) array sorted by (last, first) without duplicates. Also checks that
    the generator really produces non-projective trees and cross-sentence arcs."""
    rng = np.random.default_rng(20170101)
    non_projective = 0
    cross_sentence = 0
    self_roots = 0
    for _ in range(cases("candidate_spans.random")):
        heads, offsets, kind = random_batch(rng)
        non_projective += not is_projective(heads)
        self_roots += int(np.any(heads == np.arange(len(heads))))
        if kind == "batch" and len(heads):
            sentence = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
            cross_sentence += int(np.any((heads >= 0) & (sentence[np.maximum(heads, 0)] != sentence)))
        for max_length in MAX_LENGTHS:
            check_all_three(heads, offsets, max_length)
    # the generator's variety, as shares of the cases("candidate_spans.random") batches
    assert non_projective > cases("candidate_spans.random") // 5
    assert cross_sentence > cases("candidate_spans.random") // 30
    assert self_roots > cases("candidate_spans.random") // 5


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_every_rooted_tree_up_to_five_words(n):
    """Exhaustively, every rooted labelled tree on n <= 5 words (all n^(n-1) of
    them), as one sentence and with the root written both ways: all three span
    functions equal brute force for max_length None, 2 and 3."""
    n_trees = 0
    for heads in itertools.product(range(-1, n), repeat=n):
        heads = np.array(heads, dtype=np.int64)
        if np.count_nonzero(heads == -1) != 1 or np.any(heads == np.arange(n)):
            continue
        if not is_tree(heads):
            continue
        n_trees += 1
        root = int(np.flatnonzero(heads == -1)[0])
        self_root = heads.copy()
        self_root[root] = root
        for h in (heads, self_root):
            for max_length in (None, 2, 3):
                check_all_three(h, np.array([0, n]), max_length)
    assert n_trees == n ** (n - 1)


# "Lee Ann Womack won Single of the Year award" (Figure 2 of the paper), with
# a hand-made tree:
#
#   0 Lee    <- 2 Womack  (compound)
#   1 Ann    <- 2 Womack  (compound)
#   2 Womack <- 3 won     (nsubj)
#   3 won       root
#   4 Single <- 8 award   (compound)
#   5 of     <- 4 Single  (prep)
#   6 the    <- 7 Year    (det)
#   7 Year   <- 5 of      (pobj)
#   8 award  <- 3 won     (obj)
#
# Undirected neighbours: 0:{2} 1:{2} 2:{0,1,3} 3:{2,8} 4:{5,8} 5:{4,7} 6:{7}
# 7:{5,6} 8:{3,4}. A multi-word span u..v is valid when one can walk from v
# to u through strictly decreasing positions. By hand, for each last word v:
#   v=1 Ann:    none (its only neighbour 2 is larger)
#   v=2 Womack: 2->0 [0,2] "Lee Ann Womack", 2->1 [1,2] "Ann Womack"
#   v=3 won:    3->2 [2,3], 3->2->0 [0,3], 3->2->1 [1,3] "Ann Womack won"
#   v=4 Single: none (neighbours 5 and 8 are larger)
#   v=5 of:     5->4 [4,5]
#   v=6 the:    none
#   v=7 Year:   7->5 [5,7] "of the Year", 7->6 [6,7], 7->5->4 [4,7] "Single of the Year"
#   v=8 award:  8->4 [4,8], 8->3 [3,8], 8->3->2 [2,8], 8->3->2->0 [0,8], 8->3->2->1 [1,8]
# "Ann Womack won Single" [1,4] is not valid: its path 1-2-3-8-4 turns back at 8.
FIGURE_2_WORDS = "Lee Ann Womack won Single of the Year award".split()
FIGURE_2_HEADS = np.array([2, 2, 3, -1, 8, 4, 7, 5, 3])
FIGURE_2_MULTIWORD_VALID = {
    (0, 2),
    (1, 2),
    (2, 3),
    (0, 3),
    (1, 3),
    (4, 5),
    (5, 7),
    (6, 7),
    (4, 7),
    (4, 8),
    (3, 8),
    (2, 8),
    (0, 8),
    (1, 8),
}
FIGURE_2_SINGLE_ARC = {(0, 2), (1, 2), (2, 3), (4, 5), (5, 7), (6, 7), (4, 8), (3, 8)}


def _words(span):
    return " ".join(FIGURE_2_WORDS[span[0] : span[1] + 1])


def test_figure_2_sentence_by_hand():
    """The hand-derived valid spans of the Figure 2 sentence, with L unbounded
    and with the paper's L = 4; the examples quoted in the paper hold."""
    offsets = np.array([0, 9])
    singles = {(t, t) for t in range(9)}
    assert_span_array(valid_spans(FIGURE_2_HEADS, offsets), singles | FIGURE_2_MULTIWORD_VALID)
    within_4 = {(u, v) for u, v in FIGURE_2_MULTIWORD_VALID if v - u + 1 <= 4}
    assert within_4 == {(0, 2), (1, 2), (2, 3), (0, 3), (1, 3), (4, 5), (5, 7), (6, 7), (4, 7)}
    spans_4 = valid_spans(FIGURE_2_HEADS, offsets, 4)
    assert_span_array(spans_4, singles | within_4)
    assert_span_array(single_arc_spans(FIGURE_2_HEADS, offsets), singles | FIGURE_2_SINGLE_ARC)
    found = {_words(s) for s in spans_4}
    assert "Lee Ann Womack" in found
    assert "Ann Womack won" in found
    assert "Womack" in found
    assert "of the Year" in found
    assert "Single of the Year" in found
    assert "Ann Womack won Single" not in {_words(s) for s in valid_spans(FIGURE_2_HEADS, offsets)}
    assert "Ann Womack won Single" in {_words(s) for s in all_spans(offsets, 4)}
    assert "of the Year" in {_words(s) for s in single_arc_spans(FIGURE_2_HEADS, offsets, 4)}
    assert "Single of the Year" not in {_words(s) for s in single_arc_spans(FIGURE_2_HEADS, offsets)}


def test_figure_2_sentence_twice_in_a_batch_with_self_root():
    """The same sentence twice in one batch (second copy shifted by 9, root
    written as its own index) gives the same spans shifted, none crossing."""
    heads = np.concatenate([FIGURE_2_HEADS, np.where(FIGURE_2_HEADS >= 0, FIGURE_2_HEADS + 9, 12)])
    offsets = np.array([0, 9, 18])
    one = {(t, t) for t in range(9)} | FIGURE_2_MULTIWORD_VALID
    assert_span_array(valid_spans(heads, offsets), one | {(u + 9, v + 9) for u, v in one})


def test_all_spans_default_max_length_is_8():
    """all_spans(offsets) bounds spans at 8 words by default."""
    offsets = np.array([0, 12, 12, 15])
    assert_span_array(all_spans(offsets), brute_all_spans(offsets, 8))


def test_empty_batch():
    """No token: no span, shape (0, 2), int64."""
    for spans in (
        valid_spans(np.zeros(0, dtype=np.int64), np.array([0])),
        single_arc_spans([], [0, 0]),
        all_spans(np.array([0]), None),
    ):
        assert spans.shape == (0, 2) and spans.dtype == np.int64


def test_candidate_spans_dispatches_by_structure():
    """candidate_spans("dgm" | "dgm_s" | "semi_markov") is the matching function;
    an unknown structure is a ValueError."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        heads, offsets, _ = random_batch(rng)
        for max_length in (None, 3):
            np.testing.assert_array_equal(
                candidate_spans("dgm", heads, offsets, max_length), valid_spans(heads, offsets, max_length)
            )
            np.testing.assert_array_equal(
                candidate_spans("dgm_s", heads, offsets, max_length), single_arc_spans(heads, offsets, max_length)
            )
            np.testing.assert_array_equal(
                candidate_spans("semi_markov", heads, offsets, max_length), all_spans(offsets, max_length)
            )
    with pytest.raises(ValueError):
        candidate_spans("crf", FIGURE_2_HEADS, [0, 9], None)


def test_merge_spans_is_the_sorted_union():
    """merge_spans(spans, extra, n) is the union of both sets, sorted by (last,
    first), without duplicates, whatever the order and repetitions of extra."""
    rng = np.random.default_rng(11)
    for _ in range(cases("candidate_spans.small")):
        heads, offsets, _ = random_batch(rng)
        n = len(heads)
        spans = valid_spans(heads, offsets, int(rng.integers(1, 5)))
        k = int(rng.integers(0, 6))
        if n:
            first = rng.integers(0, n, k)
            extra = np.stack([first, np.minimum(first + rng.integers(0, 4, k), n - 1)], axis=1)
            extra = np.concatenate([extra, extra[: k // 2]])  # repeated extras
        else:
            extra = np.zeros((0, 2), dtype=np.int64)
        expected = {tuple(map(int, s)) for s in spans} | {tuple(map(int, s)) for s in extra}
        assert_span_array(merge_spans(spans, extra, n), expected)


def test_span_index_finds_rows_and_minus_one_for_absent():
    """span_index gives the row of each query in the sorted spans, -1 if absent."""
    rng = np.random.default_rng(12)
    for _ in range(cases("candidate_spans.small")):
        heads, offsets, _ = random_batch(rng)
        n = len(heads)
        spans = valid_spans(heads, offsets, None)
        row_of = {(int(u), int(v)): r for r, (u, v) in enumerate(spans)}
        queries = [(u, v) for u in range(n) for v in range(u, n)]
        got = span_index(spans, np.array(queries, dtype=np.int64).reshape(-1, 2), n)
        assert [int(g) for g in got] == [row_of.get(q, -1) for q in queries]
    assert span_index(np.zeros((0, 2), dtype=np.int64), np.array([[0, 0]]), 1).tolist() == [-1]


@pytest.mark.parametrize(
    "heads, offsets",
    [
        ([0, -2, 1], [0, 3]),  # head below -1
        ([1, 3, -1], [0, 3]),  # head past the last token
        ([1, -1, 1], [1, 3]),  # offsets do not start at 0
        ([1, -1, 1], [0, 2]),  # offsets do not end at the number of tokens
        ([1, -1, 1], [0, 2, 1, 3]),  # offsets decrease
        ([1, -1, 1], []),  # no offsets at all
    ],
)
def test_bad_batches_raise_value_error(heads, offsets):
    """Heads out of range and malformed sentence offsets are ValueErrors."""
    for function in (valid_spans, single_arc_spans):
        with pytest.raises(ValueError):
            function(np.array(heads), np.array(offsets, dtype=np.int64))


@pytest.mark.parametrize("max_length", [0, -1, -3])
def test_non_positive_max_length_raises_value_error(max_length):
    """max_length 0 or negative is a ValueError for all three functions."""
    with pytest.raises(ValueError):
        valid_spans(FIGURE_2_HEADS, [0, 9], max_length)
    with pytest.raises(ValueError):
        single_arc_spans(FIGURE_2_HEADS, [0, 9], max_length)
    with pytest.raises(ValueError):
        all_spans([0, 9], max_length)


@pytest.mark.parametrize("offsets", [[1, 4], [0, 3, 2], []])
def test_all_spans_bad_offsets_raise_value_error(offsets):
    """all_spans rejects offsets that do not start at 0 or decrease."""
    with pytest.raises(ValueError):
        all_spans(np.array(offsets, dtype=np.int64), 3)


@st.composite
def batches(draw):
    """A batch of 0-4 sentences of 0-8 words. Each sentence's tree is a random
    recursive tree (parent of node i drawn below i) with positions permuted; a
    few arcs may be cut (forest) or redirected to another sentence; roots are
    -1 or the token itself."""
    lengths = draw(st.lists(st.integers(0, 8), max_size=4))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n = int(offsets[-1])
    heads = np.full(n, -1, dtype=np.int64)
    for length, first in zip(lengths, offsets[:-1]):
        if not length:
            continue
        parent = [draw(st.integers(0, i - 1)) for i in range(1, length)]
        position = draw(st.permutations(range(length)))
        for node in range(1, length):
            heads[first + position[node]] = first + position[parent[node - 1]]
    for t in draw(st.lists(st.integers(0, n - 1), max_size=3)) if n else []:
        heads[t] = draw(st.sampled_from([-1, t, draw(st.integers(0, n - 1))]))
    for t in np.flatnonzero(heads == -1):
        if draw(st.booleans()):
            heads[t] = t
    return heads, offsets


@settings(max_examples=cases("candidate_spans.hypothesis"), deadline=None)
@given(batches(), st.sampled_from(MAX_LENGTHS))
def test_hypothesis_batches_equal_brute_force(batch, max_length):
    """Hypothesis-drawn batches (possibly with a cycle when an arc was
    redirected: then only acyclic cases are compared): the three span functions
    equal brute force."""
    heads, offsets = batch
    if not _is_forest(heads, offsets):
        return
    check_all_three(heads, offsets, max_length)


def _is_forest(heads, offsets):
    """The within-sentence arcs form a forest: no two tokens head each other
    and the undirected arcs have no cycle (so paths are unique)."""
    arcs = undirected_arcs(heads, offsets)
    sentence = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    n_directed = sum(1 for t, h in enumerate(heads) if h >= 0 and h != t and sentence[h] == sentence[t])
    if n_directed != len(arcs):
        return False
    parent = list(range(len(heads)))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for arc in arcs:
        a, b = tuple(arc)
        ra, rb = find(a), find(b)
        if ra == rb:
            return False
        parent[ra] = rb
    return True
