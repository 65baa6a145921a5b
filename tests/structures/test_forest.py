"""``spacy_depner.structures.trees.forest`` against brute force: random forests (from
``random_trees`` and random recursive trees, roots written as -1 or as the
token itself, several roots, crossing arcs) stay valid; the same forests with
random corruptions (a head moved below its token, making a cycle; a head in
another sentence or outside the batch; arbitrary heads) give the brute-force
first fault."""

import itertools

import numpy as np
import pytest
from brute_candidate_spans import random_recursive_tree
from brute_forest import CYCLE, HEAD_OUTSIDE_SENTENCE, NO_FAULT, brute_faults, brute_first_fault
from budgets import cases
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.bench.random_trees import random_forest
from spacy_depner.structures.trees import forest
from spacy_depner.structures.trees.candidate_spans import valid_spans


def test_fault_codes_match_the_reference():
    assert (forest.NO_FAULT, forest.HEAD_OUTSIDE_SENTENCE, forest.CYCLE) == (NO_FAULT, HEAD_OUTSIDE_SENTENCE, CYCLE)


def test_the_reported_cycle_is_found():
    """Heads [1, 2, 0] once made valid_spans list [0, 2] twice: it is a cycle
    through token 0, which valid_spans now refuses."""
    heads = np.array([1, 2, 0])
    with pytest.raises(ValueError, match="form a cycle"):
        valid_spans(heads, [0, 3])
    assert forest.first_fault(heads, [0, 3]) == (0, forest.CYCLE)


@pytest.mark.parametrize(
    "heads, offsets, expected",
    [
        ([], [0], (-1, NO_FAULT)),
        ([-1], [0, 1], (-1, NO_FAULT)),
        ([0], [0, 1], (-1, NO_FAULT)),  # a root written as its own head
        ([0, 1, 2], [0, 3], (-1, NO_FAULT)),  # three roots in one sentence
        ([2, 3, -1, 2], [0, 4], (-1, NO_FAULT)),  # crossing arcs 0-2 and 1-3
        ([-1, 0, -1, 2], [0, 2, 4], (-1, NO_FAULT)),
        ([-1, 0, 0, 2], [0, 2, 4], (2, HEAD_OUTSIDE_SENTENCE)),
        ([-1, 4], [0, 2], (1, HEAD_OUTSIDE_SENTENCE)),  # beyond the batch
        ([-1, -2], [0, 2], (1, HEAD_OUTSIDE_SENTENCE)),  # below -1
        ([-1, 2, 1], [0, 3], (1, CYCLE)),
        ([1, 2, 1], [0, 3], (1, CYCLE)),  # token 0 hangs from the cycle, not on it
        ([-1, -1, 3, 2, 5, 4], [0, 2, 4, 6], (2, CYCLE)),
        ([-1, 0, 0, 0, 7, 4, 5, 6, 4], [0, 9], (4, CYCLE)),  # 4 -> 7 -> 6 -> 5 -> 4; 8 hangs from it
        ([-1, 9, 1], [0, 3], (1, HEAD_OUTSIDE_SENTENCE)),
        ([-1, 2, 1, 7], [0, 3, 3, 4], (1, CYCLE)),  # an empty sentence; token 3 out of its sentence too
    ],
)
def test_known_cases(heads, offsets, expected):
    assert forest.first_fault(np.array(heads, dtype=np.int64), np.array(offsets)) == expected
    assert brute_first_fault(heads, offsets) == expected


def random_sentences(rng):
    """Random recursive trees (non-projective) of 0-9 tokens, some arcs cut
    (several roots): heads (N,) absolute, -1 for roots, and sentence_offsets."""
    lengths = rng.integers(0, 10, int(rng.integers(1, 5)))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    parts = []
    for n, first in zip(lengths, offsets[:-1]):
        local = random_recursive_tree(int(n), rng)
        local[rng.random(int(n)) < 0.15] = -1
        parts.append(np.where(local >= 0, local + first, -1))
    return np.concatenate(parts).astype(np.int64), offsets


def roots_written_as_self(heads, rng):
    heads = heads.copy()
    roots = np.flatnonzero(heads == -1)
    chosen = roots[rng.random(roots.shape[0]) < 0.5]
    heads[chosen] = chosen
    return heads


def ancestors(heads, offsets, t):
    """The heads above t within its sentence, at most n of them (the heads may
    already hold a cycle)."""
    sentence = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    chain = []
    while len(chain) < heads.shape[0]:
        h = int(heads[t])
        if h == -1 or h == t or not 0 <= h < heads.shape[0] or sentence[h] != sentence[t] or h in chain:
            break
        chain.append(h)
        t = h
    return chain


def corrupt(heads, offsets, rng):
    """One random corruption of a forest: (heads, what was done)."""
    heads = heads.copy()
    n = heads.shape[0]
    sentence = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    t = int(rng.integers(n))
    first, end = offsets[sentence[t]], offsets[sentence[t] + 1]
    what = int(rng.integers(4))
    if what == 0:  # an ancestor of t (or, for a root, t's sentence-mate) gets a head below it: a cycle
        above = ancestors(heads, offsets, t)
        if above:
            heads[above[int(rng.integers(len(above)))]] = t
        else:
            heads[t] = int(rng.integers(first, end))  # may be itself: still a root
        return heads, "cycle"
    if what == 1:  # a head in another sentence, or outside the batch
        others = np.flatnonzero(sentence != sentence[t])
        choices = [-2, -7, n, n + 5] + ([int(rng.choice(others))] if others.size else [])
        heads[t] = choices[int(rng.integers(len(choices)))]
        return heads, "outside"
    if what == 2:  # arbitrary heads within the sentence (mostly cycles)
        heads[first:end] = rng.integers(first - 1, end, end - first)
        heads[first:end][heads[first:end] == first - 1] = -1
        return heads, "arbitrary"
    heads[t] = t  # a self-loop: a root
    return heads, "self"


def test_random_forests_are_valid():
    """2,000 batches of random_trees.random_forest and of random recursive trees
    with cut arcs, roots written either way: no fault, and brute force agrees."""
    rng = np.random.default_rng(14)
    for i in range(cases("forest.random")):
        if i % 2:
            heads, offsets = random_forest(rng.integers(1, 12, int(rng.integers(1, 5))), rng)
        else:
            heads, offsets = random_sentences(rng)
        heads = roots_written_as_self(heads, rng)
        assert brute_faults(heads, offsets) == {}
        assert forest.first_fault(heads, offsets) == (-1, NO_FAULT)


def test_random_corruptions_equal_brute_force():
    """4,000 random forests with one to three corruptions each: first_fault
    equals the brute-force lowest faulty token and its kind. The corruptions
    really make every kind of fault, and leave some batches valid (a
    self-loop is a root)."""
    rng = np.random.default_rng(2017)
    kinds = {NO_FAULT: 0, HEAD_OUTSIDE_SENTENCE: 0, CYCLE: 0}
    for _ in range(cases("forest.cycles")):
        heads, offsets = (
            random_sentences(rng)
            if rng.random() < 0.5
            else random_forest(rng.integers(1, 12, int(rng.integers(1, 5))), rng)
        )
        if heads.shape[0] == 0:
            continue
        for _ in range(int(rng.integers(1, 4))):
            heads, _ = corrupt(heads, offsets, rng)
        heads = roots_written_as_self(heads, rng)
        expected = brute_first_fault(heads, offsets)
        assert forest.first_fault(heads, offsets) == expected, (heads.tolist(), offsets.tolist())
        kinds[expected[1]] += 1
    assert min(kinds.values()) > cases("forest.cycles") // 13, kinds


@settings(max_examples=cases("forest.hypothesis"), derandomize=True, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=4).flatmap(
        lambda lengths: st.tuples(
            st.just(lengths), st.lists(st.integers(-3, sum(lengths) + 1), min_size=sum(lengths), max_size=sum(lengths))
        )
    )
)
def test_arbitrary_heads_equal_brute_force(case):
    lengths, heads = case
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    assert forest.first_fault(np.array(heads, dtype=np.int64), offsets) == brute_first_fault(heads, offsets)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_every_head_function_up_to_four_tokens(n):
    """Exhaustively, every heads array over -1..n-1 as one sentence and split in two."""
    for heads in itertools.product(range(-1, n), repeat=n):
        for offsets in ([0, n], [0, n // 2, n]):
            assert forest.first_fault(np.array(heads), offsets) == brute_first_fault(heads, offsets)


def test_long_chains_and_cycles_are_linear():
    """A right-branching chain of 10^6 tokens is a tree; closing it makes a
    cycle through token 0 (no recursion, no quadratic walk)."""
    n = 1_000_000
    chain = np.arange(1, n + 1, dtype=np.int64)
    chain[-1] = -1
    assert forest.first_fault(chain, [0, n]) == (-1, NO_FAULT)
    chain[-1] = 0
    assert forest.first_fault(chain, [0, n]) == (0, forest.CYCLE)


def test_check_message_names_token_head_and_cycle():
    forest.check(np.array([-1, 0, 1]), [0, 3])
    with pytest.raises(
        ValueError,
        match=r"not a forest: token 1 of sentence 0 has head 2: "
        r"the heads 1 -> 2 -> 1 form a cycle",
    ):
        forest.check(np.array([-1, 2, 1]), [0, 3])
    with pytest.raises(
        ValueError,
        match=r"token 2 of sentence 1 has head 0: "
        r"its head 0 is not a token of its sentence \(2-3\)",
    ):
        forest.check(np.array([-1, 0, 0, 2]), [0, 2, 4])


def test_cycle_through_is_cut_for_long_cycles():
    heads = np.roll(np.arange(100), -1)  # 0 -> 1 -> ... -> 99 -> 0
    assert forest.cycle_through(heads, 0, limit=4) == [0, 1, 2, 3, 4]
    assert forest.cycle_through(heads, 98, limit=4) == [98, 99, 0, 1, 2]
    assert forest.cycle_through(np.array([1, 0]), 0) == [0, 1, 0]


@pytest.mark.parametrize("offsets", [[], [1, 3], [0, 2], [0, 3, 2, 3]])
def test_bad_sentence_offsets_are_value_errors(offsets):
    with pytest.raises(ValueError, match="sentence_offsets"):
        forest.first_fault(np.array([-1, 0, 0]), offsets)
