"""Mention marginals and posterior (minimum Bayes risk) decoding of the
mention hypergraph of ``mention_hypergraph`` (Lu & Roth 2015), without heads.

Mentions of a sub-hypergraph are what ``edges_to_mentions`` reads from it
(the type-I bracket reading of ``encoding``), so the marginal of
a mention <first, last, type t> is the probability that this reading holds
it. Per type the reading is a stack: T -> I at k pushes a mention; I -> I,X
pops the innermost open one (when it is alone it ends and stays open);
I -> X pops them all. The mention pushed at i is read as [i, j] when it is
still open at j and either I -> X at j, or I -> I,X at j with no mention
opened after it still open. So, from the chart of the inside pass (the
weight of everything left of i) and the outside pass (the weight of
everything right of j), a forward pass from i over (token, number of open
mentions above it, whether one is open below it) sums the weights of the
hyperedges in between: O(length^2) per start, stopped as soon as the
probability that the mention is still open (which bounds every later
marginal) is at most ``floor``.

The posterior decoder over the readings: ``readings.best_reading``.

With heads (``heads=True``) the reading also assigns heads, and neither
operation is available.
"""

from typing import Tuple

import numpy as np
from numba import njit

from ..score_range import check_scores
from ..shared import logaddexp, max_doc_length
from ._mention_hypergraph import _check as _check_hypergraph
from .kinds import KIND_I_I, KIND_I_IX, KIND_I_X, KIND_T_I, KIND_T_X
from .readings import best_reading
from .recursions import _charts, _inside, _outside

__all__ = ["mention_marginals", "marginals_of", "best_reading"]

NEG_INF = -np.inf


@njit(cache=True)
def _append(rows, values, m, first, last, t, value):
    """rows (M, 3) and values (M,) with row m set, doubled when full."""
    if m == rows.shape[0]:
        bigger = np.empty((2 * m, 3), dtype=np.int64)
        bigger[:m] = rows[:m]
        more = np.empty(2 * m)
        more[:m] = values[:m]
        rows, values = bigger, more
    rows[m, 0], rows[m, 1], rows[m, 2], values[m] = first, last, t, value
    return rows, values


@njit(cache=True)
def _walk(scores, first, n, t, i, last, penalty, floor, chart, outside, f, g, read):
    """The marginal read[k] of the mention [first + i, first + k] of type t
    for k = i..last, by the forward pass from i (module docstring): f[b, a],
    g[b, a] log weights of the open mention with a mentions open above it,
    b = 1 if one is open below it. Stops early once the probability that
    the mention is still open is at most ``floor`` (or 0); returns the last
    k whose read[k] is set."""
    z = chart[2 * n, t, 0]
    f[:, :] = NEG_INF
    for b in range(2):
        f[b, 0] = chart[2 * i, t, b] + np.float64(scores[first + i, t, KIND_T_I]) + penalty
    reached = i - 1
    for k in range(i, last + 1):
        top = k - i  # f[:, a] is -inf for a > top
        alive = NEG_INF
        for b in range(2):
            for a in range(top + 1):
                alive = logaddexp(alive, f[b, a])
        if alive == NEG_INF or np.exp(alive + outside[2 * k + 1, t, 1] - z) <= floor:
            break
        x = np.float64(scores[first + k, t, KIND_I_X])
        ix = np.float64(scores[first + k, t, KIND_I_IX])
        value = alive + x + outside[2 * k + 2, t, 0]  # I -> X ends every open mention
        for b in range(2):  # I -> I,X ends the innermost one
            value = logaddexp(value, f[b, 0] + ix + outside[2 * k + 2, t, 1])
        read[k] = np.exp(value - z)
        reached = k
        if k + 1 == n or k == last:
            break
        ii = np.float64(scores[first + k, t, KIND_I_I])
        for b in range(2):
            for a in range(top + 1):
                v = f[b, a] + ii
                if a + 1 <= top:
                    v = logaddexp(v, f[b, a + 1] + ix)  # one above it ends
                g[b, a] = v
        g[0, 0] = logaddexp(g[0, 0], f[0, 0] + ix)  # alone: ends and stays open
        tx = np.float64(scores[first + k + 1, t, KIND_T_X])
        ti = np.float64(scores[first + k + 1, t, KIND_T_I]) + penalty
        for b in range(2):
            f[b, 0] = g[b, 0] + tx
            for a in range(1, top + 2):
                f[b, a] = logaddexp(g[b, a] + tx if a <= top else NEG_INF, g[b, a - 1] + ti)
    return reached


@njit(cache=True)
def _starts(scores, first, n, t, penalty, floor, chart, outside, f, g, read, rows, values, m):
    """Append every mention of type t of the document at ``first`` whose
    marginal exceeds ``floor`` (``_walk`` from every start)."""
    for i in range(n):
        reached = _walk(scores, first, n, t, i, n - 1, penalty, floor, chart, outside, f, g, read)
        for k in range(i, reached + 1):
            if read[k] > floor:
                rows, values = _append(rows, values, m, first + i, first + k, t, read[k])
                m += 1
    return rows, values, m


@njit(cache=True)
def _buffers(scores, doc_offsets, S, n_edges):
    """The inside charts (``recursions._charts``), the outside chart, its
    scratch, and the f, g, read arrays of ``_walk``, for the batch's longest document."""
    chart, back, values_, top, acc = _charts(doc_offsets, scores.shape[1], S, n_edges)
    m_max = max_doc_length(doc_offsets) + 2
    return (
        chart,
        back,
        values_,
        top,
        acc,
        np.empty(chart.shape),
        np.zeros(scores.shape),
        np.empty((2, m_max)),
        np.empty((2, m_max)),
        np.empty(m_max),
    )


@njit(cache=True)
def _mention_marginals(scores, doc_offsets, penalty, floor, src, dst, kinds, pen, split, S):
    """Every mention of marginal > floor: rows (M, 3) [first, last, type]
    and marginals (M,), by document, type, first and last token."""
    T = scores.shape[1]
    chart, back, values_, top, acc, outside, scratch, f, g, read = _buffers(scores, doc_offsets, S, src.shape[0])
    rows = np.empty((16, 3), dtype=np.int64)
    values = np.empty(16)
    m = 0
    for d in range(doc_offsets.shape[0] - 1):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        _inside(scores, first, n, penalty, src, dst, kinds, pen, split, False, chart, back, values_, top, acc)
        _outside(scores, first, n, penalty, src, dst, kinds, pen, split, chart, outside, scratch, values_, top, acc)
        for t in range(T):
            rows, values, m = _starts(scores, first, n, t, penalty, floor, chart, outside, f, g, read, rows, values, m)
    return rows[:m], values[:m]


@njit(cache=True)
def _marginals_of(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S, queries, docs):
    """The marginal (M,) of each of ``queries`` (M, 3) [first, last, type],
    sorted by document (``docs`` (M,)), type, first and last token: one
    inside and outside pass per document that holds one, then per (type,
    first) queried one ``_walk`` up to its longest queried mention."""
    chart, back, values_, top, acc, outside, scratch, f, g, read = _buffers(scores, doc_offsets, S, src.shape[0])
    out = np.zeros(queries.shape[0])
    M = queries.shape[0]
    q = 0
    while q < M:
        d = docs[q]
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        _inside(scores, first, n, penalty, src, dst, kinds, pen, split, False, chart, back, values_, top, acc)
        _outside(scores, first, n, penalty, src, dst, kinds, pen, split, chart, outside, scratch, values_, top, acc)
        while q < M and docs[q] == d:
            t, i = queries[q, 2], queries[q, 0] - first
            r = q
            while r < M and docs[r] == d and queries[r, 2] == t and queries[r, 0] - first == i:
                r += 1
            reached = _walk(
                scores, first, n, t, i, queries[r - 1, 1] - first, penalty, -1.0, chart, outside, f, g, read
            )
            for h in range(q, r):
                k = queries[h, 1] - first
                out[h] = read[k] if k <= reached else 0.0
            q = r
    return out


def _check(scores, doc_offsets, penalty, heads, what):
    if heads:
        raise ValueError(
            f"hypergraph.posterior.{what}: not available with heads (the reading of a sub-hypergraph "
            "also assigns heads); use heads=False"
        )
    args = _check_hypergraph(scores, doc_offsets, penalty, False)
    check_scores(f"hypergraph.posterior.{what}", args[1], args[0], args[2])
    return (np.ascontiguousarray(args[0], dtype=np.float64), *args[1:])  # float64: one signature per kernel


def mention_marginals(
    scores, doc_offsets, penalty: float = 0.0, heads: bool = False, floor: float = -1.0
) -> Tuple[np.ndarray, np.ndarray]:
    """The marginal of every mention whose marginal exceeds ``floor`` (the
    default -1: every mention [first, last] of every type, O(n^2 T) of
    them): (mentions (M, 3) [first, last, type] in batch coordinates,
    marginals (M,)), sorted by document, type, first and last token. scores
    (N, T, 5), doc_offsets (D + 1,) and penalty as ``mention_hypergraph``."""
    args = _check(scores, doc_offsets, penalty, heads, "mention_marginals")
    if not np.isfinite(floor):
        raise ValueError(f"floor must be a finite number, not {floor!r}")
    rows, values = _mention_marginals(*args[:3], float(floor), *args[3:])
    order = np.lexsort((rows[:, 1], rows[:, 0], rows[:, 2], np.searchsorted(args[1], rows[:, 0], side="right")))
    return rows[order], values[order]


def marginals_of(scores, doc_offsets, mentions, penalty: float = 0.0, heads: bool = False) -> np.ndarray:
    """The marginal (M,) of each of ``mentions`` (M, 3) [first, last, type]
    (batch coordinates; 0 for a mention across a document end or of no
    type), at the cost of one inside and outside pass per document that
    holds one, plus O(length^2) per distinct (type, first token) up to its
    longest queried mention. scores, doc_offsets and penalty as ``mention_marginals``."""
    args = _check(scores, doc_offsets, penalty, heads, "marginals_of")
    mentions = np.asarray(mentions, dtype=np.int64).reshape(-1, 3)
    doc_offsets, T = args[1], args[0].shape[1]
    doc = np.searchsorted(doc_offsets, mentions[:, 0], side="right") - 1
    D = doc_offsets.shape[0] - 1
    valid = (mentions[:, 0] >= 0) & (mentions[:, 0] <= mentions[:, 1]) & (doc < D) & (mentions[:, 2] >= 0)
    valid &= mentions[:, 2] < T
    valid[valid] &= mentions[valid, 1] < doc_offsets[doc[valid] + 1]
    rows = np.flatnonzero(valid)
    rows = rows[np.lexsort((mentions[rows, 1], mentions[rows, 0], mentions[rows, 2], doc[rows]))]
    out = np.zeros(mentions.shape[0])
    if rows.shape[0]:
        queries = np.ascontiguousarray(mentions[rows])
        out[rows] = _marginals_of(*args, queries, np.ascontiguousarray(doc[rows]))
    return out
