"""What every structure shares: the flat batch layout (documents of a batch
are consecutive token ranges, doc_offsets (D + 1,)) and log-space addition."""
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
