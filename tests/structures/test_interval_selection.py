"""``spacy_depner.structures.interval_selection`` against brute force
(``brute_interval_selection``) on random span sets of up to 9 spans over up to
8 tokens, seeded and hypothesis-drawn: with continuous weights (a unique
optimum) the kept set of ``most_probable`` is the brute-force one; with
weights in quarters (many exact ties) its (weight, coverage) is the optimum;
``outermost`` equals the definition on every set, and on laminar sets it
keeps exactly the spans inside no other."""

import numpy as np
import pytest
from brute_interval_selection import brute_most_probable, brute_outermost, overlap, strictly_inside, subset_key
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_depner.structures.interval_selection import most_probable, outermost


def random_spans(rng, n_spans, n_tokens):
    first = rng.integers(0, n_tokens, n_spans)
    last = first + rng.integers(0, 4, n_spans)
    return np.stack([first, np.minimum(last, n_tokens - 1)], axis=1).astype(np.int64)


def kept_set(mask):
    return set(np.flatnonzero(mask).tolist())


def assert_disjoint(spans, mask):
    chosen = [tuple(spans[m]) for m in np.flatnonzero(mask)]
    assert all(not overlap(a, b) for i, a in enumerate(chosen) for b in chosen[i + 1 :])


@pytest.mark.parametrize("seed", range(300))
def test_random_sets_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    spans = random_spans(rng, int(rng.integers(0, 10)), int(rng.integers(1, 9)))
    rank = rng.permutation(spans.shape[0])
    weights = rng.random(spans.shape[0])
    kept = most_probable(spans, weights, rank)
    assert_disjoint(spans, kept)
    best, subsets = brute_most_probable(spans, weights)
    got = subset_key(kept_set(kept), spans, weights)
    assert got[0] == pytest.approx(best[0], rel=1e-12) and got[1] == best[1]
    assert len(subsets) == 1 and kept_set(kept) == subsets[0]  # continuous weights: one optimum
    assert kept_set(outermost(spans, rank)) == brute_outermost(spans, rank)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 4)), max_size=9), st.randoms())
def test_hypothesis_ties_equal_brute_force(rows, random):
    """Weights in quarters: sums are exact, so many subsets tie on weight."""
    spans = np.array([[f, f + length] for f, length, _ in rows], dtype=np.int64).reshape(-1, 2)
    weights = np.array([q / 4 for _, _, q in rows])
    rank = np.array(random.sample(range(len(rows)), len(rows)), dtype=np.int64)
    kept = most_probable(spans, weights, rank)
    assert_disjoint(spans, kept)
    best, subsets = brute_most_probable(spans, weights)
    assert subset_key(kept_set(kept), spans, weights) == best
    assert kept_set(outermost(spans, rank)) == brute_outermost(spans, rank)


def test_identical_ranges_go_to_the_lower_rank():
    spans = np.array([[0, 2], [0, 2], [1, 1], [0, 2]])
    for rank in ([2, 0, 3, 1], [0, 1, 3, 2], [1, 2, 0, 3]):
        expected = {int(np.argmin(np.where(np.arange(4) == 2, 99, rank)))}
        assert kept_set(outermost(spans, np.array(rank))) == expected
        assert kept_set(most_probable(spans, np.array([0.5, 0.5, 0.2, 0.5]), np.array(rank))) == expected
    # a more probable duplicate beats a lower rank in most_probable
    assert kept_set(most_probable(spans, np.array([0.5, 0.7, 0.2, 0.5]), np.array([0, 1, 2, 3]))) == {1}


def test_laminar_sets_keep_exactly_the_outermost():
    rng = np.random.default_rng(1)
    for _ in range(200):
        spans = random_spans(rng, 12, 10)
        spans = np.unique(spans, axis=0)
        chosen = []
        for s in spans.tolist():  # drop the spans that cross one already chosen
            if all(not overlap(s, o) or strictly_inside(s, o) or strictly_inside(o, s) for o in chosen):
                chosen.append(s)
        spans = np.array(chosen, dtype=np.int64)
        kept = kept_set(outermost(spans, np.arange(len(spans))))
        assert kept == {m for m, s in enumerate(chosen) if not any(strictly_inside(s, o) for o in chosen)}


def test_sure_outer_mention_beats_one_sure_inner_but_not_two():
    """With weights 1.0, (weight, coverage) prefers the outer span over one
    inner span, and two inner spans over the outer one."""
    outer_and_inner = np.array([[0, 4], [0, 1]])
    assert kept_set(most_probable(outer_and_inner, np.ones(2), np.arange(2))) == {0}
    two_inner = np.array([[0, 4], [0, 1], [3, 4]])
    assert kept_set(most_probable(two_inner, np.ones(3), np.arange(3))) == {1, 2}
    assert kept_set(outermost(two_inner, np.arange(3))) == {0}


def test_crossing_spans_longer_then_earlier():
    spans = np.array([[0, 2], [1, 4], [3, 5], [0, 1]])  # [1, 4] is the longest; [0, 1] is inside [0, 2]
    assert kept_set(outermost(spans, np.arange(4))) == {1}
    spans = np.array([[2, 4], [0, 2], [4, 6]])  # equal lengths: the earliest start, then what is left
    assert kept_set(outermost(spans, np.arange(3))) == {1, 2}


def test_far_apart_coordinates_and_empty_input():
    spans = np.array([[10**12, 10**12 + 5], [10**12 + 3, 10**12 + 3], [5, 9]])
    assert kept_set(outermost(spans, np.arange(3))) == {0, 2}
    assert kept_set(most_probable(spans, np.array([0.1, 0.9, 0.3]), np.arange(3))) == {1, 2}
    for empty in (np.zeros((0, 2), dtype=np.int64), []):
        assert outermost(empty, np.zeros(0, dtype=np.int64)).shape == (0,)
        assert most_probable(empty, [], np.zeros(0, dtype=np.int64)).shape == (0,)


@pytest.mark.parametrize(
    "spans, weights, rank, message",
    [
        (np.array([[0, 1, 2]]), [0.5], [0], "shape"),
        (np.array([[0.0, 1.0]]), [0.5], [0], "integer"),
        (np.array([[2, 1]]), [0.5], [0], "span 0 is"),
        (np.array([[-1, 1]]), [0.5], [0], "0 <= first"),
        (np.array([[0, 1]]), [np.nan], [0], "finite"),
        (np.array([[0, 1]]), [0.5, 0.5], [0], "weights"),
        (np.array([[0, 1]]), [0.5], [0, 1], "rank"),
    ],
)
def test_bad_input_is_a_clear_error(spans, weights, rank, message):
    with pytest.raises(ValueError, match=message):
        most_probable(spans, weights, np.array(rank))
    if message not in ("finite", "weights"):
        with pytest.raises(ValueError, match=message):
            outermost(spans, np.array(rank))
