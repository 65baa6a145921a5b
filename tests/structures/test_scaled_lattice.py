"""The two forward-backward recursions of the segment lattice: the scaled
probabilities of ``lattice.scaled`` (transitions within ``SCALED_SPREAD``)
and the log-space recursions of ``lattice.kernels`` (any transitions),
each against enumeration (``brute_segment_lattice``), including forbidden
span labels (-inf scores) and scores far apart, and against each other on
documents too long to enumerate."""

import numpy as np
import pytest
from brute_segment_lattice import brute_lattice
from test_segment_lattice import random_lattice_batch

from spacy_depner.structures.lattice import kernels
from spacy_depner.structures.lattice._segment_lattice import _check, _forbid
from spacy_depner.structures.lattice.scaled import (
    SCALED_SPREAD,
    scaled_log_partition,
    scaled_marginals,
    transitions_fit,
)


def forbidden_labels(rng, spans, K):
    """Random forbidden entity labels (never O, as ``_forbid`` requires)."""
    forbidden = rng.random((spans.shape[0], K)) < rng.choice([0.0, 0.3, 0.8])
    forbidden[:, 0] = False
    return forbidden


def checked(batch, forbidden):
    return _forbid(_check(*batch.args), forbidden)


@pytest.mark.parametrize("recursion", ["scaled", "log space"])
def test_each_forward_backward_equals_enumeration(recursion):
    rng = np.random.default_rng(11 if recursion == "scaled" else 12)
    for _ in range(150):
        batch = random_lattice_batch(rng, max_doc_length=6, scale=float(rng.choice([0.5, 5.0, 60.0])))
        args = checked(batch, forbidden_labels(rng, batch.spans, batch.n_labels))
        if recursion == "log space":
            log_z, span_marginals, transition_marginals = kernels._marginals(*args)
            np.testing.assert_allclose(kernels._log_partition(*args), log_z, rtol=1e-12, atol=1e-12)
        else:
            assert transitions_fit(args[4])
            log_z, span_marginals, transition_marginals = scaled_marginals(*args)
            np.testing.assert_allclose(scaled_log_partition(*args), log_z, rtol=1e-12, atol=1e-12)
        expected = brute_lattice(*args)
        np.testing.assert_allclose(log_z, expected["log_z"], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(span_marginals, expected["span_marginals"], atol=1e-9)
        np.testing.assert_allclose(transition_marginals, expected["transition_marginals"], atol=1e-9)


def test_the_recursions_agree_on_long_documents():
    """Up to 300 tokens, with scores up to hundreds (a term far below the
    largest of its sum underflows in the scaled recursion, as it rounds away
    in log space)."""
    rng = np.random.default_rng(13)
    for _ in range(60):
        batch = random_lattice_batch(rng, max_doc_length=300, scale=float(rng.choice([1.0, 30.0, 300.0])))
        args = checked(batch, forbidden_labels(rng, batch.spans, batch.n_labels))
        want = kernels._marginals(*args)
        got = scaled_marginals(*args)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-11, atol=1e-9)
        np.testing.assert_allclose(got[1], want[1], atol=1e-8)
        np.testing.assert_allclose(got[2], want[2], rtol=1e-9, atol=1e-7)


def test_wide_transitions_take_the_log_space_recursions():
    """Transitions spread over more than ``SCALED_SPREAD``: the structure's
    marginals still equal enumeration (through the log-space recursions)."""
    from spacy_depner.structures.lattice._segment_lattice import marginals

    rng = np.random.default_rng(14)
    for _ in range(30):
        batch = random_lattice_batch(rng, max_doc_length=5)
        transitions = batch.transitions.copy()
        transitions.flat[int(rng.integers(transitions.size))] = -(SCALED_SPREAD + 50.0)
        assert not transitions_fit(transitions)
        args = (*batch.args[:4], transitions)
        log_z, span_marginals, transition_marginals = marginals(*args)
        expected = brute_lattice(*args)
        np.testing.assert_allclose(log_z, expected["log_z"], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(span_marginals, expected["span_marginals"], atol=1e-9)
        np.testing.assert_allclose(transition_marginals, expected["transition_marginals"], atol=1e-9)
