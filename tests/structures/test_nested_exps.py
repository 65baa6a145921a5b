"""The vectorised exp of the nested scaled passes (``nested.exps``) against
NumPy's ``np.exp``: within 2 ulps where the result is normal, exact below
``LOW`` (subnormal results, -inf to 0), above ``scaled.HUGE`` beyond
``HIGH``, at every length around the block size."""

import numpy as np
import pytest

from spacy_depner.structures.nested import exps, scaled


def exp_into(values):
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty_like(values)
    exps._exp_into(values, out, np.empty(exps.BLOCK, dtype=np.int64))
    return out


def test_within_two_ulps_of_numpy_over_the_normal_range():
    rng = np.random.default_rng(0)
    values = np.concatenate(
        [np.linspace(exps.LOW, exps.HIGH, 400_001), rng.normal(0.0, 5.0, 100_000), [0.0, 1e-300, -1e-300, 1.0]]
    )
    got, expected = exp_into(values), np.exp(values)
    assert np.all(np.abs(got - expected) <= 2 * np.spacing(expected))


def test_values_below_low_are_numpys_and_above_high_exceed_huge():
    low = np.array([-np.inf, -1000.0, -745.2, -745.0, -720.0, -708.5, np.nextafter(exps.LOW, -np.inf)])
    np.testing.assert_array_equal(exp_into(low), np.exp(low))
    assert exp_into(np.array([-np.inf]))[0] == 0.0
    high = np.array([709.5, 709.8, 710.0, 1e6])
    assert np.all(np.isfinite(exp_into(high))) and np.all(exp_into(high) > scaled.HUGE)


@pytest.mark.parametrize("size", [0, 1, 7, exps.BLOCK - 1, exps.BLOCK, exps.BLOCK + 1, 3 * exps.BLOCK + 5])
def test_every_length_around_the_block_size(size):
    values = np.random.default_rng(size).normal(0.0, 30.0, size)
    values[::11] = -np.inf
    values[5::13] = -730.0
    expected = np.exp(values)
    assert np.all(np.abs(exp_into(values) - expected) <= 2 * np.spacing(expected))
