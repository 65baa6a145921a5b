"""What every structure shares: the flat batch layout (documents of a batch
are consecutive token ranges, doc_offsets (D + 1,)), log-space addition, and
the checks of the posterior (minimum Bayes risk) decoders.

Posterior decoding picks, in a structure's own space of analyses, the one
that maximises

    gain(y) = sum over the spans (mentions) of y of (marginal - penalty),

the expected number of correct spans of y minus ``penalty`` per predicted
span (a span outside every analysis gains 0: "no mention" is free). With
penalty 0.5 a span is worth predicting when it is more likely right than
wrong. Each structure has its decoder beside its marginals
(``posterior_decode`` of ``protocol.Structure``).
"""

from typing import Optional

import numpy as np
from numba import njit

NEG_INF = -np.inf


@njit(cache=True, inline="always")
def logaddexp(a, b):
    """log(exp(a) + exp(b)), exact when either is -inf (the semiring zero)."""
    if a == NEG_INF:
        return b
    if b == NEG_INF:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


def check_doc_offsets(doc_offsets, n_tokens: Optional[int] = None) -> np.ndarray:
    """doc_offsets as contiguous int64, or a ValueError saying what is wrong."""
    doc_offsets = np.asarray(doc_offsets)
    if doc_offsets.ndim != 1 or doc_offsets.shape[0] == 0:
        raise ValueError(f"doc_offsets must be 1-d with n_docs + 1 >= 1 entries, not of shape {doc_offsets.shape}")
    if doc_offsets.dtype.kind not in "iu":
        raise ValueError(f"doc_offsets must be integers, not {doc_offsets.dtype}")
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if doc_offsets[0] != 0 or np.any(np.diff(doc_offsets) < 0):
        raise ValueError("doc_offsets must start at 0 and never decrease")
    if n_tokens is not None and doc_offsets[-1] != n_tokens:
        raise ValueError(f"doc_offsets must end at the number of tokens {n_tokens}, not {doc_offsets[-1]}")
    return doc_offsets


@njit(cache=True)
def max_doc_length(doc_offsets):
    """Length of the longest document of the batch (0 for no documents)."""
    longest = 0
    for d in range(doc_offsets.shape[0] - 1):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    return longest


def check_penalty(penalty) -> float:
    """``penalty`` as a float, or a ValueError unless it is finite and >= 0."""
    if (
        isinstance(penalty, (bool, np.bool_))
        or not isinstance(penalty, (int, float, np.integer, np.floating))
        or not np.isfinite(penalty)
        or penalty < 0
    ):
        raise ValueError(f"the posterior penalty must be a finite number >= 0, not {penalty!r}")
    return float(penalty)


def check_marginals(marginals, rows: int, what: str = "marginals") -> np.ndarray:
    """``marginals`` as contiguous float64 with ``rows`` rows, or a ValueError
    unless every entry is a probability (finite, in [0, 1] up to rounding)."""
    marginals = np.asarray(marginals)
    if marginals.ndim < 1 or marginals.shape[0] != rows or marginals.dtype.kind not in "iuf":
        raise ValueError(
            f"{what} must be real numbers with one row per span ({rows}), not {marginals.dtype} "
            f"of shape {marginals.shape}"
        )
    marginals = np.ascontiguousarray(marginals, dtype=np.float64)
    if marginals.size and not (
        np.isfinite(marginals).all() and marginals.min() >= -1e-9 and marginals.max() <= 1 + 1e-9
    ):
        raise ValueError(
            f"{what} must be probabilities in [0, 1] (the marginals of the same structure), "
            f"not values from {marginals.min()} to {marginals.max()}"
        )
    return marginals
