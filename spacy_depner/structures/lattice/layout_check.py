"""The values of a batch of the segment lattice (``_segment_lattice``'s
inputs) checked in compiled passes, which the recursions call first, in the
same compiled call: ``batch_problem`` (finite scores and transitions, then
``layout_problem``) returns a problem code, 0 if none, and
``LAYOUT_PROBLEMS`` and ``FINITE_MESSAGE`` say it to the user."""

import numpy as np
from numba import njit

EXPONENT = 0x7FF0000000000000  # the exponent bits of a float64
NOT_FINITE = 6  # the problem code of a NaN or an infinity in the scores or transitions
FINITE_MESSAGE = "scores and transitions must be finite (the model produced NaN or inf)"
LAYOUT_PROBLEMS = {
    1: "span_offsets and doc_offsets must start at 0 and never decrease",
    2: "every span must lie inside its own document and have first <= last",
    3: "the spans of a document must be sorted by their last token",
    4: "every token must be a candidate span of its own, exactly once, in its own document",
    5: (
        "a span is listed twice: each segmentation would count once per copy (a wrong log Z); list each "
        "candidate span once (merge_spans), and check that the heads the spans came from form a forest "
        "(trees.forest.check: a cycle of heads lists spans twice)"
    ),
}


@njit(cache=True)
def layout_problem(spans, span_offsets, doc_offsets):
    """(0, -1) if the batch layout is one the recursions can run on, else
    (a key of ``LAYOUT_PROBLEMS``, the first span row at fault or -1). O(S + N)."""
    D = doc_offsets.shape[0] - 1
    if D < 0 or span_offsets[0] != 0 or doc_offsets[0] != 0:
        return 1, -1
    for d in range(D):
        if span_offsets[d + 1] < span_offsets[d] or doc_offsets[d + 1] < doc_offsets[d]:
            return 1, -1
    last_with_first = np.full(doc_offsets[D], -1, dtype=np.int64)  # the last token of the latest span from each token
    for d in range(D):
        first, end = doc_offsets[d], doc_offsets[d + 1]
        expected = first  # the next token whose one-token span is due
        for s in range(span_offsets[d], span_offsets[d + 1]):
            i, j = spans[s, 0], spans[s, 1]
            if i < first or j >= end or i > j:
                return 2, s
            if s > span_offsets[d] and j < spans[s - 1, 1]:
                return 3, s
            if last_with_first[i] == j:
                return 5, s
            last_with_first[i] = j
            if i == j:
                if i != expected:
                    return 4, s
                expected += 1
        if expected != end:
            return 4, -1
    return 0, -1


@njit(cache=True)
def all_finite(values):
    """Whether every entry of the C-contiguous float64 2-d array ``values``
    is finite (IEEE 754: the infinities and NaN are the numbers whose
    exponent bits are all set), in one branch-free pass over their bits."""
    exponents = 0  # how many entries have every exponent bit set: the infinities and NaN
    for bits in values.ravel().view(np.int64):
        exponents += (bits & EXPONENT) == EXPONENT
    return exponents == 0


@njit(cache=True)
def batch_problem(spans, span_offsets, doc_offsets, scores, transitions):
    """(0, -1) if the scores and transitions are finite and the layout one
    the recursions can run on, else (``NOT_FINITE``, -1) or the
    ``layout_problem``."""
    if not (all_finite(scores) and all_finite(transitions)):
        return NOT_FINITE, -1
    return layout_problem(spans, span_offsets, doc_offsets)
