"""The negative log-likelihood of a segmentation of the lattice and its
gradient in one compiled call (inputs as ``_segment_lattice``): a training
iteration of the structure, span scores to loss and gradient, as Jie, Muis
& Lu (2017) time it.

``Structure.nll`` composes the protocol's operations: the marginals (a
check of the batch, a check of the score range, the scaled forward-backward
of ``scaled``), the gold segmentation's counts (a check of the
segmentation, its indicator and transition counts) and their difference,
each a numpy pass or a compiled call of its own over S x K floats. Here
one compiled call checks the batch, the score range and the gold
segmentation, runs the same forward-backward and subtracts the gold's
indicator and transition counts in place, reading the gold's weight on the
way: the cost of the forward-backward and O(S) beside it.

It takes the common case only: no forbidden span labels, transitions that
the scaled recursions take (``scaled.transitions_fit``), scores within
``score_range``'s bound (within ``derived_from_checked`` too, where the
composed operations take more) and a well-formed gold. For
anything else ``fused_nll`` returns None and the caller runs the composed
operations, which then compute the same values, or raise their ValueError.
"""

from typing import Optional, Tuple

import numpy as np
from numba import njit

from ..score_range import SCORE_LENGTH_BOUND
from .scaled import _scaled, scaled_problem


@njit(cache=True)
def _segments(span_offsets, labels, n_labels):
    """(rows, offsets): the rows of the spans that ``labels`` (S,) makes
    segments (label >= 0), in order, and where each document's start
    (offsets (D + 1,)); or offsets of length 0 if a label lies outside
    [-1, K). Gathered without a branch on which spans are segments (the
    trees decide it, unpredictably): every row is written, the count grows
    by whether it is one."""
    S = labels.shape[0]
    D = span_offsets.shape[0] - 1
    rows = np.empty(S, dtype=np.int64)
    offsets = np.empty(D + 1, dtype=np.int64)
    count = 0
    lowest = 0
    highest = 0
    for d in range(D):
        offsets[d] = count
        for s in range(span_offsets[d], span_offsets[d + 1]):
            y = labels[s]
            lowest = min(lowest, y)
            highest = max(highest, y)
            rows[count] = s
            count += y >= 0
    offsets[D] = count
    if lowest < -1 or highest >= n_labels:
        return rows, offsets[:0]
    return rows, offsets


@njit(cache=True)
def _is_segmentation(spans, doc_offsets, labels, rows, offsets):
    """Whether the segments ``rows`` (by document, ``offsets``) tile every
    document, their O segments (label 0) one token each. The spans of a
    document are sorted by last token, so its segments come in the order
    they tile it: each starts where the one before ended."""
    for d in range(doc_offsets.shape[0] - 1):
        expected = doc_offsets[d]
        for r in range(offsets[d], offsets[d + 1]):
            s = rows[r]
            if (spans[s, 0] != expected) | ((labels[s] == 0) & (spans[s, 1] != spans[s, 0])):
                return False
            expected = spans[s, 1] + 1
        if expected != doc_offsets[d + 1]:
            return False
    return True


@njit(cache=True)
def _fused_nll(spans, span_offsets, doc_offsets, scores, transitions, labels, score_length_bound):
    """(taken, loss, span gradient (S, K), transition gradient (K + 1, K + 1)):
    taken False (and nothing computed) unless the batch is valid, its
    |score| x length within ``score_length_bound``, its transitions within
    ``SCALED_SPREAD`` (``scaled.scaled_problem``) and ``labels`` a
    segmentation (module docstring)."""
    K = scores.shape[1]
    B = K
    nothing = np.zeros((0, 0))
    problem, _ = scaled_problem(spans, span_offsets, doc_offsets, scores, transitions, score_length_bound)
    if problem:
        return False, 0.0, nothing, nothing
    rows, offsets = _segments(span_offsets, labels, K)
    if offsets.shape[0] == 0 or not _is_segmentation(spans, doc_offsets, labels, rows, offsets):
        return False, 0.0, nothing, nothing
    backward = np.bool_(True)  # a boolean, not the literal True: the one signature of ``_scaled``
    log_z, gradient, transition_gradient = _scaled(spans, span_offsets, doc_offsets, scores, transitions, backward)
    gold = 0.0
    for d in range(doc_offsets.shape[0] - 1):
        previous = B
        for r in range(offsets[d], offsets[d + 1]):
            s = rows[r]
            y = labels[s]
            gold += scores[s, y] + transitions[previous, y]
            gradient[s, y] -= 1.0
            transition_gradient[previous, y] -= 1.0
            previous = y
        if previous != B:
            gold += transitions[previous, B]
            transition_gradient[previous, B] -= 1.0
    return True, log_z.sum() - gold, gradient, transition_gradient


def fused_nll(
    spans, span_offsets, doc_offsets, scores, transitions, gold
) -> Optional[Tuple[float, Tuple[np.ndarray, np.ndarray]]]:
    """(sum of log Z - the gold's weight, (span gradient (S, K), transition
    gradient (K + 1, K + 1))) of the segmentation ``gold`` (S,) (the label
    of each span, -1 off it), as ``Structure.nll``; None where the fused
    call does not apply (module docstring): then the composed operations
    give the answer or the ValueError. The inputs as ``_segment_lattice``'s
    ``_arrays`` returns them (contiguous int64 and float64, shapes checked)."""
    gold = np.asarray(gold)
    if gold.shape != (spans.shape[0],) or gold.dtype.kind not in "iu":
        return None
    taken, loss, gradient, transition_gradient = _fused_nll(
        spans,
        span_offsets,
        doc_offsets,
        scores,
        transitions,
        np.ascontiguousarray(gold, dtype=np.int64),
        SCORE_LENGTH_BOUND,
    )
    return (float(loss), (gradient, transition_gradient)) if taken else None
