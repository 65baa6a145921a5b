"""The range of scores in which log Z and the marginals are accurate.

Every structure computes in log space: an inside value is the log-sum of
the scores along partial paths, so its magnitude grows to about
|score| x length, and a marginal exp(inside + score + outside - log Z) is
the exponential of a difference of such values. float64 rounds each of them
to about 1e-16 of its magnitude, so a marginal's relative error grows as
|score| x length^1.5 (log Z's absolute error likewise), in every structure:
measured against exact enumeration (3-9 tokens) and 80-100-digit references
(up to 100 tokens), and on offsets that leave the marginals unchanged (up
to 3000 tokens), it stays within 6 x 1.1e-16 x |score| x length^1.5; at
|score| 1e30 marginals come out as inf or 0 instead of 1.

The bound: the largest |score| (token, span or hyperedge scores,
transitions, the penalty) times the length of the longest document of the
batch must not exceed ``SCORE_LENGTH_BOUND`` = 1e7. At the bound the
measured relative error of the marginals is at most 1e-7 for documents of
up to 1000 tokens and 2e-7 at 3000 (it grows as the square root of the
length: about 1e-6 near 1e5 tokens); 1e8 would be the edge of 1e-6 at 300
to 1000 tokens. A trained model's scores stay in the tens; scores of 1e5
on sentences of a hundred tokens mean a diverged model, whose marginals
(confidences and gradients) would be meaningless.

``check_scores`` is called by every structure's ``log_partition`` and
``marginals`` and refuses scores out of range with a ValueError (NaN and
inf included). ``viterbi`` is not bounded: the MAP is a maximum of float64
path sums, with no exp/log cancellation, so it stays right at any magnitude
(as long as the sums stay below 1e308).

The entropy (``Structure.entropy``) is log Z minus the inner product of the
scores with the marginals, two values of magnitude |score| x length whose
difference is small for a peaked distribution. In the lattice, the chain
and the nested spaces its error stays that of those two values (measured at
most 4e-9 nats at |score| x length = 1e7, against enumeration), bounded by
``entropy_rounding``: 64 x 2.2e-16 x (the sum of |log Z| + |score| x length
per unit). In the mention hypergraph the marginals' error times the scores
makes it grow as the square, measured below ``ENTROPY_ROUNDING`` = 1e-15 x
(|score| x length)^2 nats (0.04 at 1e7, 3.4e-6 at 1e5, from 3 to 100
tokens): its ``entropy`` accepts |score| x length up to
``ENTROPY_SCORE_LENGTH_BOUND`` = 1e5 only (scores of 1000 on sentences of a
hundred tokens), where that error is below 1e-5 nats, and refuses more with
a ValueError. ``Structure.entropy`` returns a result below 0 by no more
than its structure's bound as 0 (the true entropy is then within the bound
of 0): the entropy is never negative.

One range for every operation: the bound is on the scores as given, and
an operation that builds a problem of its own from them (``constrained``
and ``partial_nll``: the runs of missing tokens, whose border spans or tags
fold in the transitions across the run's borders, up to |score| + 4
|transition|) takes what ``log_partition`` takes. A folded path's weight is
the weight of the same path in the given problem, so its rounding is that of
the given scores: the derived problem is checked for NaN and inf only
(``derived_from_checked``).
"""

import contextlib
import contextvars
from typing import Tuple

import numpy as np

SCORE_LENGTH_BOUND = 1e7
ENTROPY_SCORE_LENGTH_BOUND = 1e5
ENTROPY_ROUNDING = 1e-15  # nats per (|score| x length)^2


def score_bound(length: int) -> float:
    """The largest |score| accepted for documents of ``length`` tokens."""
    return SCORE_LENGTH_BOUND / max(int(length), 1)


def _largest_and_length(name: str, doc_offsets: np.ndarray, arrays) -> Tuple[float, int]:
    """The largest |entry| of ``arrays`` (ValueError naming ``name`` if one
    is NaN or inf) and the length of the longest unit of ``doc_offsets``."""
    largest = 0.0
    for array in arrays:
        array = np.asarray(array)
        if array.size:
            top = float(np.max(np.abs(array)))  # NaN if any is NaN
            if not np.isfinite(top):
                raise ValueError(
                    f"{name}: scores must be finite, not NaN or inf (the model produced NaN or inf: "
                    "it has diverged; lower the learning rate and check the input features)"
                )
            largest = max(largest, top)
    doc_offsets = np.asarray(doc_offsets)
    return largest, int(np.max(np.diff(doc_offsets))) if doc_offsets.shape[0] > 1 else 0


def score_length(name: str, doc_offsets: np.ndarray, bound: float, *arrays) -> float:
    """The largest |entry| of ``arrays`` times the longest unit of
    ``doc_offsets`` (D + 1,); ValueError naming ``name`` (e.g.
    "hypergraph.entropy") when it exceeds ``bound``."""
    largest, length = _largest_and_length(name, doc_offsets, arrays)
    if largest * length > bound:
        raise ValueError(
            f"{name}: scores out of range: the largest |score| is {largest:.3g}; for the longest unit of the batch "
            f"({length} tokens) the bound is {bound / max(length, 1):.3g} (|score| x length <= {bound:.0e}), above "
            "which the result loses its accuracy (structures.score_range). Check the model for divergence (lower "
            "the learning rate), and split very long documents into sentences."
        )
    return largest * length


def entropy_rounding(log_z: np.ndarray, score_length: float) -> float:
    """The rounding error of an entropy whose units have log Z ``log_z`` (U,)
    and whose largest |score| x length is ``score_length``, as that of log Z
    and of the inner product of the scores with the marginals."""
    log_z = np.asarray(log_z, dtype=np.float64)
    return 64 * np.finfo(float).eps * (max(1.0, float(np.abs(log_z).sum())) + log_z.shape[0] * score_length)


_DERIVED = contextvars.ContextVar("derived_from_checked", default=False)


@contextlib.contextmanager
def derived_from_checked():
    """Within this context ``check_scores`` refuses NaN and inf only: the
    scores are derived (folded) from scores already checked against the
    bound, whose range they share (module docstring)."""
    token = _DERIVED.set(True)
    try:
        yield
    finally:
        _DERIVED.reset(token)


def check_scores(name: str, doc_offsets: np.ndarray, *arrays) -> None:
    """ValueError unless every entry of ``arrays`` (score arrays of any shape,
    or scalars such as a penalty) is finite and the largest |entry| times the
    longest document of ``doc_offsets`` (D + 1,) is at most
    ``SCORE_LENGTH_BOUND`` (finite only, within ``derived_from_checked``). ``name`` (e.g. "linear_chain.marginals") is named
    in the message. One pass over each array."""
    largest, length = _largest_and_length(name, doc_offsets, arrays)
    if largest * length > SCORE_LENGTH_BOUND and not _DERIVED.get():
        raise ValueError(
            f"{name}: scores out of range: the model has diverged. The largest |score| is {largest:.3g}; for the "
            f"longest document of the batch ({length} tokens) the bound is {score_bound(length):.3g} (|score| x length "
            f"<= {SCORE_LENGTH_BOUND:.0e}), above which log Z and the marginals lose their accuracy. Lower the learning "
            "rate, check the training for divergence (growing losses, exploding weights: clip the gradients), "
            "and split very long documents into sentences."
        )
