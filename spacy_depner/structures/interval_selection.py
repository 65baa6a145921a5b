"""Non-overlapping subsets of a set of spans: the flat views of nested or
overlapping mentions.

A batch is one set of M spans, ``spans`` (M, 2) int64 first and last token
(inclusive) in batch coordinates; spans of different documents never overlap,
so the documents of a batch need no separation. ``rank`` (M,) breaks the ties
between spans of the same range (lower wins). Both functions return ``kept``
(M,) bool, a set of pairwise disjoint spans.

* ``outermost``: the spans inside no other span (strictly: the other range
  contains theirs and differs from it). Those that still overlap (crossing
  spans, or one range given twice) are resolved as spaCy's ``filter_spans``
  does: the longer span wins, then the one that starts first, then the lower
  rank. On a laminar set (any two spans disjoint or nested, each range once)
  the result is exactly the spans inside no other. O(M log M).
* ``most_probable``: weighted interval scheduling, exact: the disjoint subset
  with the largest sum of ``weights``; among those of equal sum, the one that
  covers the most tokens; among identical ranges, the lower rank. With
  marginal probabilities as weights, the sum is the expected number of
  correct spans. O(M log M).
"""

from typing import Tuple

import numpy as np
from numba import njit

__all__ = ["outermost", "most_probable"]


def _check(spans, rank, weights=None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """spans (M, 2) int64, rank (M,) int64 and weights (M,) float64 (zeros if
    None), contiguous, or a ValueError that says what is wrong."""
    spans = np.asarray(spans)
    if spans.size == 0 and spans.ndim < 2:
        spans = spans.reshape(0, 2)
    if spans.ndim != 2 or spans.shape[1] != 2:
        raise ValueError(f"spans must have shape (M, 2) (first, last token), not {spans.shape}")
    if spans.shape[0] and spans.dtype.kind not in "iu":
        raise ValueError(f"spans must be integer token indices, not {spans.dtype}")
    spans = np.ascontiguousarray(spans, dtype=np.int64)
    if spans.shape[0] and (spans.min() < 0 or np.any(spans[:, 1] < spans[:, 0])):
        bad = int(np.flatnonzero((spans[:, 0] < 0) | (spans[:, 1] < spans[:, 0]))[0])
        raise ValueError(f"span {bad} is {spans[bad].tolist()}: a span is [first, last] with 0 <= first <= last")
    rank = np.asarray(rank)
    if rank.shape != (spans.shape[0],) or (rank.size and rank.dtype.kind not in "iu"):
        raise ValueError(
            f"rank must hold one integer per span ({spans.shape[0]},), not {rank.dtype} of shape {rank.shape}"
        )
    if weights is None:
        weights = np.zeros(spans.shape[0])
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (spans.shape[0],):
        raise ValueError(f"weights must hold one number per span ({spans.shape[0]},), not shape {weights.shape}")
    if not np.all(np.isfinite(weights)):
        raise ValueError(
            f"weights must be finite numbers; span {int(np.flatnonzero(~np.isfinite(weights))[0])} has "
            f"{weights[~np.isfinite(weights)][0]}"
        )
    return spans, np.ascontiguousarray(rank, dtype=np.int64), np.ascontiguousarray(weights)


def outermost(spans, rank) -> np.ndarray:
    """(M,) bool: the spans inside no other, their overlaps resolved by
    length, then start, then ``rank`` (module docstring)."""
    spans, rank, _ = _check(spans, rank)
    if spans.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    first, last = spans[:, 0], spans[:, 1]
    # the endpoints as ranks among all endpoints: a span marks at most 2M points
    points = np.unique(spans)
    compressed = np.searchsorted(points, spans)
    by_start = np.lexsort((rank, -last, first))
    by_length = np.lexsort((rank, first, first - last))
    return _outermost(spans, compressed, by_start, by_length, points.shape[0])


@njit(cache=True)
def _outermost(spans, compressed, by_start, by_length, n_points):
    """by_start: the spans by (first, -last, rank); by_length: by (-length,
    first, rank). A span is inside another iff an earlier span of by_start
    with another range ends at or after it; the outermost ones are then taken
    longest first unless an endpoint is already covered (they contain no
    other taken span, so an overlap covers an endpoint)."""
    M = spans.shape[0]
    inside = np.zeros(M, dtype=np.bool_)
    reach = -1  # the largest last token of the spans before the current run of one range
    run_reach = -1
    for k in range(M):
        m = by_start[k]
        if k > 0 and (spans[m, 0] != spans[by_start[k - 1], 0] or spans[m, 1] != spans[by_start[k - 1], 1]):
            reach = max(reach, run_reach)
        inside[m] = reach >= spans[m, 1]
        run_reach = spans[m, 1]
    covered = np.zeros(n_points, dtype=np.bool_)
    kept = np.zeros(M, dtype=np.bool_)
    for k in range(M):
        m = by_length[k]
        a, b = compressed[m, 0], compressed[m, 1]
        if inside[m] or covered[a] or covered[b]:
            continue
        kept[m] = True
        covered[a : b + 1] = True
    return kept


def most_probable(spans, weights, rank) -> np.ndarray:
    """(M,) bool: the disjoint subset with the largest sum of ``weights``
    (M,), then the most tokens covered, then lower ``rank`` among identical
    ranges (module docstring)."""
    spans, rank, weights = _check(spans, rank, weights)
    if spans.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((rank, spans[:, 0], spans[:, 1]))
    ends = spans[order, 1]
    # previous[j]: the number of spans (in order) that end before span order[j] starts
    previous = np.searchsorted(ends, spans[order, 0], side="left")
    return _most_probable(spans, weights, order, previous)


@njit(cache=True)
def _most_probable(spans, weights, order, previous):
    """Weighted interval scheduling over the spans sorted by (last, first,
    rank): best[j] = the best (weight, covered tokens) of the first j spans;
    best[j + 1] = max(best[j], best[previous[j]] + span j), taking span j only
    if strictly better; then the back-trace."""
    M = order.shape[0]
    best_weight = np.zeros(M + 1)
    best_cover = np.zeros(M + 1, dtype=np.int64)
    take = np.zeros(M, dtype=np.bool_)
    for j in range(M):
        m = order[j]
        weight = best_weight[previous[j]] + weights[m]
        cover = best_cover[previous[j]] + spans[m, 1] - spans[m, 0] + 1
        if weight > best_weight[j] or (weight == best_weight[j] and cover > best_cover[j]):
            best_weight[j + 1], best_cover[j + 1], take[j] = weight, cover, True
        else:
            best_weight[j + 1], best_cover[j + 1] = best_weight[j], best_cover[j]
    kept = np.zeros(M, dtype=np.bool_)
    j = M
    while j > 0:
        if take[j - 1]:
            kept[order[j - 1]] = True
            j = previous[j - 1]
        else:
            j -= 1
    return kept
