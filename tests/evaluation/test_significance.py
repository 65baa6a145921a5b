"""Tests of ``spacy_depner.evaluation.significance``: F1 from counts, per-item counts,
the paired bootstrap (Koehn 2004) and approximate randomization (Noreen 1989;
Yeh 2000) on entity F1.

The vectorised tests are compared with slow pure-Python references that
consume the documented random draws (``rng.integers(0, M, size=(n, M))`` for
the bootstrap, ``rng.random((n, M)) < 0.5`` for randomization), and the
randomization test with the exact permutation test on small inputs.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_depner.evaluation.significance import (
    approximate_randomization,
    f1_from_counts,
    item_counts,
    paired_bootstrap,
)

# --------------------------------------------------------------------------
# slow references


def ref_f1(tp, fp, fn):
    den = 2 * tp + fp + fn
    return 2 * tp / den if den else 0.0


def ref_sum(rows):
    tp = fp = fn = 0
    for r in rows:
        tp += int(r[0])
        fp += int(r[1])
        fn += int(r[2])
    return tp, fp, fn


def ref_delta(a_rows, b_rows):
    return ref_f1(*ref_sum(a_rows)) - ref_f1(*ref_sum(b_rows))


def ref_approximate_randomization(a, b, n, seed):
    """Item-by-item loop over the documented swap mask."""
    a, b = np.asarray(a).tolist(), np.asarray(b).tolist()
    m = len(a)
    mask = np.random.default_rng(seed).random((n, m)) < 0.5
    obs = abs(ref_delta(a, b))
    count = 0
    for i in range(n):
        a_rows, b_rows = [], []
        for j in range(m):
            if mask[i, j]:
                a_rows.append(b[j])
                b_rows.append(a[j])
            else:
                a_rows.append(a[j])
                b_rows.append(b[j])
        if abs(ref_delta(a_rows, b_rows)) >= obs * (1 - 1e-12):
            count += 1
    return ref_delta(a, b), (count + 1) / (n + 1)


def ref_paired_bootstrap(a, b, n, seed):
    """Item-by-item loop over the documented resample indices."""
    a, b = np.asarray(a).tolist(), np.asarray(b).tolist()
    m = len(a)
    idx = np.random.default_rng(seed).integers(0, m, size=(n, m))
    obs = ref_delta(a, b)
    pos = neg = 0
    for i in range(n):
        d = ref_delta([a[j] for j in idx[i]], [b[j] for j in idx[i]])
        pos += d > 0
        neg += d < 0
    if obs > 0:
        p = (n - pos) / n
    elif obs < 0:
        p = (n - neg) / n
    else:
        p = 1.0
    return obs, p, pos / n


def exact_permutation_p(a, b):
    """Exact two-sided permutation p-value over all 2^M swap patterns
    (without the +1 of the sampled test)."""
    a, b = np.asarray(a).tolist(), np.asarray(b).tolist()
    m = len(a)
    obs = abs(ref_delta(a, b))
    count = 0
    for pattern in itertools.product((False, True), repeat=m):
        a_rows = [b[j] if s else a[j] for j, s in enumerate(pattern)]
        b_rows = [a[j] if s else b[j] for j, s in enumerate(pattern)]
        count += abs(ref_delta(a_rows, b_rows)) >= obs * (1 - 1e-12)
    return count / 2**m


def random_counts(rng, m, high=5):
    return rng.integers(0, high, size=(m, 3))


def perfect_vs_mostly_wrong(m=200, n_wrong=150):
    a = np.tile([2, 0, 0], (m, 1))  # every entity found, nothing spurious
    b = a.copy()
    b[:n_wrong] = [0, 1, 2]  # both entities missed, one spurious
    return a, b


def medium_effect(m=200):
    """A is better on 14 items, B on 6: p-values strictly between the
    extremes, so that they depend on the seed."""
    rng = np.random.default_rng(42)
    a = rng.integers(1, 4, size=(m, 3))
    b = a.copy()
    b[:14, 0] -= 1
    b[:14, 2] += 1
    a[14:20, 0] -= 1
    a[14:20, 2] += 1
    return a, b


# --------------------------------------------------------------------------
# f1_from_counts, item_counts


def test_f1_from_counts_hand_computed():
    assert f1_from_counts([3, 1, 1]) == pytest.approx(6 / 8)
    assert f1_from_counts([5, 0, 0]) == 1.0
    assert f1_from_counts([0, 2, 3]) == 0.0
    assert f1_from_counts([0, 0, 0]) == 0.0  # no gold, no prediction
    assert f1_from_counts(np.zeros((0, 3), dtype=int)) == 0.0
    # summed over items (micro), not averaged per item
    assert f1_from_counts([[1, 0, 1], [2, 1, 0]]) == pytest.approx(6 / 8)
    assert f1_from_counts([[1, 0, 0], [0, 0, 3]]) == pytest.approx(2 / 5)
    # P = 2/3, R = 2/4 -> F = 2PR/(P+R) = 4/7
    assert f1_from_counts(np.array([[2, 1, 2]], dtype=np.int32)) == pytest.approx(4 / 7)
    assert isinstance(f1_from_counts([3, 1, 1]), float)


@pytest.mark.parametrize(
    "bad",
    [[1, 2], [[1, 2, 3, 4]], [[-1, 0, 0]], [[1.5, 0, 0]], np.zeros((2, 3, 1), dtype=int)],
)
def test_f1_from_counts_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        f1_from_counts(bad)


def test_item_counts_hand_example():
    gold = [
        {(0, 2, "PER"), (5, 6, "LOC")},
        [(1, 3, "ORG")],
        [],
        [(0, 1, "MISC"), (3, 4, "PER")],
        [(2, 4, "LOC")],
    ]
    pred = [
        {(0, 2, "PER"), (5, 6, "ORG")},  # one right, one wrong label
        [(1, 3, "ORG"), (1, 3, "ORG")],  # duplicate counts once
        [(7, 8, "PER")],  # spurious
        [],  # all missed
        [(2, 5, "LOC")],  # wrong boundary
    ]
    counts = item_counts(gold, pred)
    assert counts.shape == (5, 3)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, [[1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 2], [0, 1, 1]])
    assert f1_from_counts(counts) == pytest.approx(2 * 2 / (2 * 2 + 3 + 4))
    assert item_counts([], []).shape == (0, 3)
    with pytest.raises(ValueError, match="length"):
        item_counts([[]], [[], []])


# --------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("test", [paired_bootstrap, approximate_randomization])
def test_validation(test):
    good = np.ones((4, 3), dtype=int)
    with pytest.raises(ValueError, match="shape"):
        test(good, np.ones((5, 3), dtype=int))
    with pytest.raises(ValueError, match="shape"):
        test(np.ones((4, 2), dtype=int), np.ones((4, 2), dtype=int))
    with pytest.raises(ValueError, match="shape"):
        test(np.ones(3, dtype=int), np.ones(3, dtype=int))
    with pytest.raises(ValueError, match="M >= 1"):
        test(np.zeros((0, 3), dtype=int), np.zeros((0, 3), dtype=int))
    neg = good.copy()
    neg[2, 1] = -1
    with pytest.raises(ValueError, match="non-negative"):
        test(good, neg)
    with pytest.raises(ValueError, match="integer"):
        test(good, good + 0.5)
    with pytest.raises(ValueError, match="integer"):
        test(good.astype(str), good)
    with pytest.raises(ValueError, match="positive integer"):
        test(good, good, 0)
    with pytest.raises(ValueError, match="positive integer"):
        test(good, good, 10.0)
    # integral floats and nested lists are accepted
    test(good.astype(float), good.tolist(), 5)


# --------------------------------------------------------------------------
# behaviour


def test_identical_systems():
    a = random_counts(np.random.default_rng(1), 50)
    ar = approximate_randomization(a, a.copy())
    assert ar == {"delta": 0.0, "p_value": 1.0, "n_iterations": 1000}
    bs = paired_bootstrap(a, a.copy())
    assert bs["delta"] == 0.0
    assert bs["p_value"] == 1.0
    assert bs["wins"] == 0.0
    assert bs["n_samples"] == 1000


def test_clear_difference_is_significant():
    a, b = perfect_vs_mostly_wrong()
    ar = approximate_randomization(a, b)
    bs = paired_bootstrap(a, b)
    expected_delta = 1.0 - ref_f1(2 * 50, 150, 2 * 150)
    assert ar["delta"] == pytest.approx(expected_delta)
    assert bs["delta"] == pytest.approx(expected_delta)
    assert ar["p_value"] < 0.01
    assert ar["p_value"] == 1 / 1001  # the smallest attainable, as in Krishnan & Manning
    assert bs["p_value"] < 0.01
    assert bs["wins"] == 1.0 and bs["better"] == "a"
    # the same evidence in favour of B
    ar2 = approximate_randomization(b, a)
    bs2 = paired_bootstrap(b, a)
    assert ar2["delta"] == -ar["delta"] and ar2["p_value"] == ar["p_value"]
    assert bs2["delta"] == -bs["delta"] and bs2["p_value"] == bs["p_value"]
    assert bs2["wins"] == 0.0 and bs2["better"] == "b"


def test_difference_on_one_item_is_not_significant():
    rng = np.random.default_rng(3)
    a = rng.integers(1, 5, size=(200, 3))
    b = a.copy()
    b[17] += [-1, 0, 1]  # B misses one entity of one sentence
    ar = approximate_randomization(a, b)
    bs = paired_bootstrap(a, b)
    assert ar["delta"] > 0 and bs["delta"] == ar["delta"]
    # swapping the single differing item only flips the sign: every shuffle ties
    assert ar["p_value"] == 1.0
    # item 17 is absent from a resample with probability (199/200)^200 ~ 0.37
    assert 0.05 < bs["p_value"] < 0.5
    assert bs["p_value"] == pytest.approx((199 / 200) ** 200, abs=0.05)


def test_small_mixed_difference_is_not_significant():
    rng = np.random.default_rng(4)
    a = rng.integers(1, 5, size=(200, 3))
    b = a.copy()
    b[:6] += [-1, 0, 1]  # A better on six items
    a[6:10] += [-1, 0, 1]  # B better on four
    assert approximate_randomization(a, b)["p_value"] > 0.05
    assert paired_bootstrap(a, b)["p_value"] > 0.05


def test_medium_difference_is_intermediate():
    a, b = medium_effect()
    ar = approximate_randomization(a, b)
    bs = paired_bootstrap(a, b)
    assert ar["delta"] > 0
    assert 0.001 < ar["p_value"] < 0.9
    assert 0.0 < bs["p_value"] < 0.9


def test_deterministic_for_a_seed_and_different_for_another():
    a, b = medium_effect()
    assert approximate_randomization(a, b, seed=7) == approximate_randomization(a, b, seed=7)
    assert paired_bootstrap(a, b, seed=7) == paired_bootstrap(a, b, seed=7)
    ar_p = {approximate_randomization(a, b, seed=s)["p_value"] for s in range(4)}
    bs_p = {paired_bootstrap(a, b, seed=s)["p_value"] for s in range(4)}
    assert len(ar_p) > 1
    assert len(bs_p) > 1
    assert approximate_randomization(a, b, seed=0) != approximate_randomization(a, b, seed=1)
    assert paired_bootstrap(a, b, seed=0) != paired_bootstrap(a, b, seed=1)


@pytest.mark.parametrize("seed", [0, 5])
def test_approximate_randomization_matches_reference_loop(seed):
    a, b = medium_effect(60)
    n = 300
    delta, p = ref_approximate_randomization(a, b, n, seed)
    for chunk_rows in (None, 1, 7, n):
        res = approximate_randomization(a, b, n, seed, chunk_rows=chunk_rows)
        assert res["delta"] == pytest.approx(delta, abs=1e-15)
        assert res["p_value"] == p
        assert res["n_iterations"] == n
    assert 1 / (n + 1) < p < 1.0  # a non-trivial case


@pytest.mark.parametrize("seed", [0, 5])
def test_paired_bootstrap_matches_reference_loop(seed):
    a, b = medium_effect(60)
    n = 300
    delta, p, wins = ref_paired_bootstrap(a, b, n, seed)
    for chunk_rows in (None, 1, 7, n):
        res = paired_bootstrap(a, b, n, seed, chunk_rows=chunk_rows)
        assert res["delta"] == pytest.approx(delta, abs=1e-15)
        assert res["p_value"] == p
        assert res["wins"] == wins
        assert res["n_samples"] == n
    assert 0 < p < 1.0


def test_reference_loop_on_random_counts_with_b_better():
    rng = np.random.default_rng(11)
    a = random_counts(rng, 25)
    b = random_counts(rng, 25)
    if ref_delta(a.tolist(), b.tolist()) > 0:
        a, b = b, a
    assert ref_delta(a.tolist(), b.tolist()) < 0
    delta, p, wins = ref_paired_bootstrap(a, b, 200, 3)
    res = paired_bootstrap(a, b, 200, 3, chunk_rows=9)
    assert (res["p_value"], res["wins"], res["better"]) == (p, wins, "b")
    assert res["delta"] == pytest.approx(delta, abs=1e-15)
    _, p = ref_approximate_randomization(a, b, 200, 3)
    assert approximate_randomization(a, b, 200, 3, chunk_rows=9)["p_value"] == p


def test_approximate_randomization_converges_to_exact_permutation_test():
    rng = np.random.default_rng(8)
    a = random_counts(rng, 10)
    b = random_counts(rng, 10)
    exact = exact_permutation_p(a, b)
    assert 0.05 < exact < 0.95
    n = 20000  # standard error of the estimate <= 0.0036
    res = approximate_randomization(a, b, n_iterations=n, seed=0)
    assert res["p_value"] == pytest.approx(exact, abs=0.015)


def test_default_chunking_on_many_items():
    """M = 20,000 forces several blocks; the draws do not depend on them."""
    rng = np.random.default_rng(9)
    m = 20000
    a = rng.integers(0, 3, size=(m, 3))
    b = a.copy()
    b[: m // 50] += [-1, 1, 1]
    b = np.maximum(b, 0)
    n = 100
    ar = approximate_randomization(a, b, n, seed=2)
    assert ar == approximate_randomization(a, b, n, seed=2, chunk_rows=37)
    assert ar["p_value"] == 1 / (n + 1)
    bs = paired_bootstrap(a, b, n, seed=2)
    assert bs == paired_bootstrap(a, b, n, seed=2, chunk_rows=37)
    assert bs["p_value"] == 0.0 and bs["wins"] == 1.0


def test_single_item():
    a, b = np.array([[3, 1, 0]]), np.array([[2, 1, 1]])
    # the only resample is the item itself
    bs = paired_bootstrap(a, b, 50)
    assert bs["p_value"] == 0.0 and bs["wins"] == 1.0
    # the only swap flips the sign: always as extreme
    assert approximate_randomization(a, b, 50)["p_value"] == 1.0


# --------------------------------------------------------------------------
# properties

counts_pairs = st.integers(1, 25).flatmap(
    lambda m: st.tuples(
        st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=m, max_size=m),
        st.lists(st.tuples(*[st.integers(0, 6)] * 3), min_size=m, max_size=m),
    )
)


@settings(max_examples=60, deadline=None)
@given(pair=counts_pairs, seed=st.integers(0, 2**32 - 1))
def test_properties(pair, seed):
    a, b = (np.array(x, dtype=np.int64) for x in pair)
    n = 60
    ar = approximate_randomization(a, b, n, seed)
    ar_swapped = approximate_randomization(b, a, n, seed)
    assert 0.0 < ar["p_value"] <= 1.0
    assert ar["p_value"] >= 1 / (n + 1)
    assert ar_swapped["p_value"] == ar["p_value"]
    assert ar_swapped["delta"] == -ar["delta"]
    assert ar["delta"] == pytest.approx(f1_from_counts(a) - f1_from_counts(b), abs=1e-15)

    bs = paired_bootstrap(a, b, n, seed)
    bs_swapped = paired_bootstrap(b, a, n, seed)
    assert 0.0 <= bs["p_value"] <= 1.0
    assert 0.0 <= bs["wins"] <= 1.0
    assert bs["delta"] == ar["delta"]
    assert bs_swapped["p_value"] == bs["p_value"]
    if bs["delta"] > 0:
        assert bs["p_value"] == pytest.approx(1.0 - bs["wins"])
    elif bs["delta"] == 0:
        assert bs["p_value"] == 1.0 and bs["better"] is None
    # resamples where A wins are those where swapped-B loses
    assert bs["wins"] + bs_swapped["wins"] <= 1.0 + 1e-12
    if np.array_equal(a, b):
        assert ar["p_value"] == 1.0 and bs["p_value"] == 1.0
