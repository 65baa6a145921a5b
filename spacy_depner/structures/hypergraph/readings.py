"""Posterior (minimum Bayes risk) decoding of the mention hypergraph of
Lu & Roth (2015), without heads: the reading of the largest sum of
(mention marginal - penalty), from the marginals of ``posterior``.

Representable sets. Not every mention set is a reading (two crossing
mentions of one type are read as the nested pair), so the posterior
decoder maximises over the readings, the sets that ``representable``
accepts: per type, no two mentions cross, and in each run (a top mention
[p, q] with the mentions inside it) every start other than p and every end
other than q belongs to one mention only. Removing a mention keeps a set
representable, so only mentions of positive gain (marginal > penalty) are
candidates. Per type and per cluster of overlapping candidates an interval
program finds the best set: H[x, y] the best set of free subtrees
(children sharing neither border with their parent) in x..y, and per
candidate the best subtree under it when its children may share its start
(G10, the left spine of a run), its end (G01, the right spine) or both (G11,
a run's top). O(L^2 + L C) per cluster of L tokens and C candidates.
"""

from typing import Tuple

import numpy as np
from numba import njit

from ..shared import check_doc_offsets, check_marginals, check_penalty


@njit(cache=True)
def _best_in_cluster(starts, ends, gains, L, chosen):
    """Mark in ``chosen`` the best representable subset of the candidates
    (local starts, ends in 0..L-1, sorted by (start, end), gains > 0) of one
    type whose union is the token range 0..L-1; returns its gain."""
    C = starts.shape[0]
    by_start = np.zeros(L + 1, dtype=np.int64)  # CSR: candidates starting at x, by end
    for c in range(C):
        by_start[starts[c] + 1] += 1
    for x in range(L):
        by_start[x + 1] += by_start[x]
    H = np.zeros((L + 2, L + 1))  # H[x, y + 1]: best free subtrees within x..y (0 when empty)
    H_pick = np.full((L + 2, L + 1), -1, dtype=np.int64)
    g00 = np.zeros(C)
    g10 = np.zeros(C)
    g01 = np.zeros(C)
    g11 = np.zeros(C)
    pick10 = np.full(C, -1, dtype=np.int64)
    pick01 = np.full(C, -1, dtype=np.int64)
    pick11 = np.full((C, 2), -1, dtype=np.int64)
    by_end_order = np.argsort(ends * (L + 1) + (L - starts), kind="mergesort")  # by end, then start descending
    by_end = np.zeros(L + 1, dtype=np.int64)
    for c in range(C):
        by_end[ends[c] + 1] += 1
    for y in range(L):
        by_end[y + 1] += by_end[y]
    for y in range(L):
        # the candidates ending at y, shortest first: each needs H of its inside only
        for q in range(by_end[y], by_end[y + 1]):
            c = by_end_order[q]
            s = starts[c]
            inner = H[s + 1, y] if s + 1 <= y else 0.0  # H over s+1..y-1
            g00[c] = gains[c] + inner
            best, pick = inner, -1
            for c2 in range(by_start[s], by_start[s + 1]):  # left child [s, e2], e2 < y
                e2 = ends[c2]
                if e2 >= y:
                    break
                v = g10[c2] + H[e2 + 1, y]
                if v > best:
                    best, pick = v, c2
            g10[c], pick10[c] = gains[c] + best, pick
            best, pick = inner, -1
            for q2 in range(by_end[y], by_end[y + 1]):  # right child [s2, y], s2 > s
                c2 = by_end_order[q2]
                s2 = starts[c2]
                if s2 > s:
                    v = g01[c2] + H[s + 1, s2]
                    if v > best:
                        best, pick = v, c2
            g01[c], pick01[c] = gains[c] + best, pick
            best, pl, pr = inner, -1, -1
            for c2 in range(by_start[s], by_start[s + 1] + 1):  # left child or none (the last pass)
                left = c2 < by_start[s + 1]
                if left and ends[c2] >= y:
                    continue
                lx = ends[c2] + 1 if left else s + 1
                lv = g10[c2] if left else 0.0
                for q2 in range(by_end[y], by_end[y + 1] + 1):  # right child or none
                    right = q2 < by_end[y + 1]
                    r = by_end_order[q2] if right else -1
                    if right and (starts[r] <= s or starts[r] < lx):
                        continue
                    ry = starts[r] if right else y  # exclusive end of the middle
                    v = lv + (g01[r] if right else 0.0) + (H[lx, ry] if lx <= ry else 0.0)
                    if v > best:
                        best, pl, pr = v, (c2 if left else -1), r
            g11[c], pick11[c, 0], pick11[c, 1] = gains[c] + best, pl, pr
        # H[x, y + 1] for x = y down to 0: skip x, or a free subtree starting at x
        for x in range(y, -1, -1):
            best, pick = H[x + 1, y + 1], -1
            for c in range(by_start[x], by_start[x + 1]):
                if ends[c] > y:
                    break
                v = g00[c] + H[ends[c] + 1, y + 1]
                if v > best:
                    best, pick = v, c
            H[x, y + 1], H_pick[x, y + 1] = best, pick
    # the runs: disjoint tops (G11) over 0..L-1
    run = np.zeros(L + 1)
    run_pick = np.full(L + 1, -1, dtype=np.int64)
    for x in range(L - 1, -1, -1):
        run[x] = run[x + 1]
        for c in range(by_start[x], by_start[x + 1]):
            v = g11[c] + run[ends[c] + 1]
            if v > run[x]:
                run[x], run_pick[x] = v, c
    # back-trace: tasks (kind, a, b): 0 H over a..b-1, 1 G00 c, 2 G10 c, 3 G01 c, 4 G11 c
    stack = np.empty((4 * C + 4, 3), dtype=np.int64)
    size = 0
    x = 0
    while x < L:
        c = run_pick[x]
        if c < 0:
            x += 1
            continue
        stack[size, 0], stack[size, 1] = 4, c
        size += 1
        x = ends[c] + 1
    while size > 0:
        size -= 1
        kind, a, b = stack[size, 0], stack[size, 1], stack[size, 2]
        if kind == 0:
            x = a
            while x < b:
                c = H_pick[x, b]
                if c < 0:
                    x += 1
                    continue
                stack[size, 0], stack[size, 1] = 1, c
                size += 1
                x = ends[c] + 1
            continue
        c = a
        chosen[c] = True
        lx, ry = starts[c] + 1, ends[c]
        if kind == 2 and pick10[c] >= 0:
            stack[size, 0], stack[size, 1] = 2, pick10[c]
            size += 1
            lx = ends[pick10[c]] + 1
        if kind == 3 and pick01[c] >= 0:
            stack[size, 0], stack[size, 1] = 3, pick01[c]
            size += 1
            ry = starts[pick01[c]]
        if kind == 4:
            if pick11[c, 0] >= 0:
                stack[size, 0], stack[size, 1] = 2, pick11[c, 0]
                size += 1
                lx = ends[pick11[c, 0]] + 1
            if pick11[c, 1] >= 0:
                stack[size, 0], stack[size, 1] = 3, pick11[c, 1]
                size += 1
                ry = starts[pick11[c, 1]]
        stack[size, 0], stack[size, 1], stack[size, 2] = 0, lx, ry
        size += 1
    return run[0]


@njit(cache=True)
def _select(rows, gains, doc_offsets, chosen, gain):
    """The best representable subset of ``rows`` (M, 3), sorted by (document,
    type, first, last), cluster by cluster of overlapping same-type rows."""
    M = rows.shape[0]
    lo = 0
    while lo < M:
        hi = lo + 1
        reach = rows[lo, 1]
        while (
            hi < M
            and rows[hi, 2] == rows[lo, 2]
            and rows[hi, 0] <= reach
            and np.searchsorted(doc_offsets, rows[hi, 0], side="right")
            == np.searchsorted(doc_offsets, rows[lo, 0], side="right")
        ):
            reach = max(reach, rows[hi, 1])
            hi += 1
        base = rows[lo, 0]
        gain[np.searchsorted(doc_offsets, base, side="right") - 1] += _best_in_cluster(
            rows[lo:hi, 0] - base, rows[lo:hi, 1] - base, gains[lo:hi], reach - base + 1, chosen[lo:hi]
        )
        lo = hi


def best_reading(mentions, marginals, doc_offsets, penalty: float = 0.5) -> Tuple[np.ndarray, np.ndarray]:
    """The subset of ``mentions`` (M, 3) [first, last, type] (batch
    coordinates, each row once) that ``representable`` accepts with the
    largest sum of (marginal - ``penalty``), ``marginals`` (M,) in [0, 1]:
    (gain (D,), chosen (M,) bool). Only rows of positive gain are chosen."""
    penalty = check_penalty(penalty)
    doc_offsets = check_doc_offsets(doc_offsets)
    mentions = np.asarray(mentions, dtype=np.int64).reshape(-1, 3)
    marginals = check_marginals(marginals, mentions.shape[0])
    doc = np.searchsorted(doc_offsets, mentions[:, 0], side="right") - 1
    if mentions.shape[0] and (
        mentions[:, 0].min() < 0
        or np.any(mentions[:, 0] > mentions[:, 1])
        or mentions[:, 2].min() < 0
        or np.any(doc >= doc_offsets.shape[0] - 1)
        or np.any(mentions[:, 1] >= doc_offsets[np.minimum(doc + 1, doc_offsets.shape[0] - 1)])
    ):
        raise ValueError(
            "mentions must be rows [first, last, type] with first <= last inside one document and type >= 0"
        )
    if np.unique(mentions, axis=0).shape[0] != mentions.shape[0]:
        raise ValueError("each mention must be given once")
    candidates = np.flatnonzero(marginals - penalty > 0)
    candidates = candidates[
        np.lexsort((mentions[candidates, 1], mentions[candidates, 0], mentions[candidates, 2], doc[candidates]))
    ]
    chosen = np.zeros(candidates.shape[0], dtype=np.bool_)
    gain = np.zeros(doc_offsets.shape[0] - 1)
    if candidates.shape[0]:
        _select(np.ascontiguousarray(mentions[candidates]), marginals[candidates] - penalty, doc_offsets, chosen, gain)
    kept = np.zeros(mentions.shape[0], dtype=bool)
    kept[candidates[chosen]] = True
    return gain, kept
