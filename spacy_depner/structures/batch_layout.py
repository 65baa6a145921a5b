"""Helpers on the flat batch layout that every structure shares: documents
of a batch are consecutive token ranges, doc_offsets (D + 1,)."""
from numba import njit


@njit(cache=True)
def max_doc_length(doc_offsets):
    """Length of the longest document of the batch (0 for no documents)."""
    longest = 0
    for d in range(doc_offsets.shape[0] - 1):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    return longest
