"""Inside, outside and max-product recursions of ``mention_hypergraph``
(Lu & Roth 2015, sec. 3.3-3.4), in numba: log Z (the denominator of eq. 1),
the hyperedge marginals (the expectation of eq. 3, the gradient of
sum(log Z)) and the MAP sub-hypergraph, one compiled call per batch, with
the mention penalty (sec. 3.5) added once per I node a T hyperedge opens.

Algorithm (sec. 3.4). The types do not share hyperedges below E, so log Z
is the sum over types of a chain of two half steps per token, over the set
of I nodes (B, W, A with heads) in the sub-hypergraph: *carried* (reached
from token k - 1) -> T hyperedge -> *included* at k -> one hyperedge per
included node -> carried at k + 1; empty at both ends of the document. The
half steps are enumerated once (``_half_steps``): 4 + 4 without heads, 32 +
128 with heads, so a document costs O(n T), the same for the outside and
the max-product pass.
"""

import itertools

import numpy as np
from numba import njit

from ..shared import max_doc_length
from .kinds import _KINDS, _N_SLOTS

NEG_INF = -np.inf


# ---------------------------------------------------------------------------
# Half steps of a token (sec. 3.4)
# ---------------------------------------------------------------------------


def _half_steps(heads):
    """The two half steps of a token (see the module docstring), as one table
    of rows: src state, dst state, kinds used (padded with -1), penalty count.
    Rows [0, split) go from the carried to the included I nodes through the
    T hyperedge; rows [split, R) from the included nodes to the carried ones
    of the next token, one hyperedge per included node. States are bit sets
    of slots. Order matters only for Viterbi ties (first row wins)."""
    kinds = _KINDS[heads]
    n_slots = _N_SLOTS[heads]
    slot_mask = (1 << n_slots) - 1
    rows = []
    for carried in range(1 << n_slots):
        for kind, (owner, bits) in enumerate(kinds):
            if owner < 0:
                rows.append((carried, carried | bits, [kind], bin(bits).count("1")))
    split = len(rows)
    for included in range(1 << n_slots):
        choices = [[k for k, (owner, _) in enumerate(kinds) if owner == s] for s in range(n_slots) if included >> s & 1]
        for chosen in itertools.product(*choices):
            carried = 0
            for k in chosen:
                carried |= kinds[k][1] & slot_mask
            rows.append((included, carried, list(chosen), 0))
    table_kinds = np.full((len(rows), n_slots), -1, dtype=np.int64)  # <= one hyperedge per slot
    for r, (_, _, used, _) in enumerate(rows):
        table_kinds[r, : len(used)] = used
    src = np.array([row[0] for row in rows], dtype=np.int64)
    dst = np.array([row[1] for row in rows], dtype=np.int64)
    pen = np.array([row[3] for row in rows], dtype=np.int64)
    return src, dst, table_kinds, pen, split


_TABLES = {heads: _half_steps(heads) for heads in (False, True)}


# ---------------------------------------------------------------------------
# Chains: inside, outside, max-product (sec. 3.4)
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _weight(scores, k, t, kinds, pen, r, penalty):
    """Score of the half-step row r at token k, type t: its hyperedges' scores
    (float64 sums, float32 input included) and the penalty per opened I node."""
    w = pen[r] * penalty
    for j in range(kinds.shape[1]):
        kind = kinds[r, j]
        if kind < 0:
            break
        w += np.float64(scores[k, t, kind])
    return w


@njit(cache=True, inline="always")
def _log_sum_into(values, keys, lo, hi, top, acc, out):
    """out[s] = log sum of exp(values[r]) over the rows r in [lo, hi) with
    keys[r] = s (-inf for none), given top[s] = their maximum: one exp per
    row (the logsumexp shift)."""
    acc[:] = 0.0
    for r in range(lo, hi):
        if values[r] != NEG_INF:
            acc[keys[r]] += np.exp(values[r] - top[keys[r]])
    for s in range(out.shape[0]):
        out[s] = top[s] + np.log(acc[s]) if top[s] != NEG_INF else NEG_INF


@njit(cache=True)
def _inside(scores, first, n, penalty, src, dst, kinds, pen, split, use_max, chart, back, values, top, acc):
    """chart[h, t, state] for half steps h = 0..2n of the document starting at
    token ``first``: log-sum (or max, with the row in ``back``) over the
    partial sub-hypergraphs of type t left of h that end in ``state`` (even h:
    I nodes carried into token h / 2, odd h: I nodes included at token
    (h - 1) / 2). Sec. 3.4: O(n T) per document (the table is constant).
    Returns log Z (or the MAP weight): the sum over types of chart[2n, t, 0]
    (no I node carried past the last token)."""
    T = scores.shape[1]
    chart[0, :, :] = NEG_INF
    chart[0, :, 0] = 0.0
    for h in range(2 * n):
        k = first + h // 2
        lo, hi = (0, split) if h % 2 == 0 else (split, src.shape[0])
        for t in range(T):
            top[:] = NEG_INF
            for r in range(lo, hi):
                v = chart[h, t, src[r]]
                if v != NEG_INF:
                    v += _weight(scores, k, t, kinds, pen, r, penalty)
                values[r] = v
                if v > top[dst[r]]:
                    top[dst[r]] = v
                    back[h + 1, t, dst[r]] = r  # first maximum
            if use_max:
                for c in range(top.shape[0]):  # not chart[h + 1, t, :] = top (numba's shape-error formatting)
                    chart[h + 1, t, c] = top[c]
            else:
                _log_sum_into(values, dst, lo, hi, top, acc, chart[h + 1, t])
    total = 0.0
    for t in range(T):
        total += chart[2 * n, t, 0]
    return total


@njit(cache=True)
def _outside(scores, first, n, penalty, src, dst, kinds, pen, split, chart, outside, marginals, values, top, acc):
    """Outside pass (sec. 3.4, the hypergraph inside-outside): outside[h, t,
    state] is the log-sum over the completions right of half step h; each
    row's posterior exp(inside + weight + outside - log Z_t) is added to the
    marginal of each of its hyperedges."""
    T = scores.shape[1]
    outside[2 * n, :, :] = NEG_INF
    outside[2 * n, :, 0] = 0.0
    for h in range(2 * n - 1, -1, -1):
        k = first + h // 2
        lo, hi = (0, split) if h % 2 == 0 else (split, src.shape[0])
        for t in range(T):
            z = chart[2 * n, t, 0]
            top[:] = NEG_INF
            for r in range(lo, hi):
                v = outside[h + 1, t, dst[r]]
                if v != NEG_INF:
                    v += _weight(scores, k, t, kinds, pen, r, penalty)
                values[r] = v
                top[src[r]] = max(top[src[r]], v)
                a = chart[h, t, src[r]]
                if a == NEG_INF or v == NEG_INF:
                    continue
                p = np.exp(a + v - z)
                for j in range(kinds.shape[1]):
                    if kinds[r, j] < 0:
                        break
                    marginals[k, t, kinds[r, j]] += p
            _log_sum_into(values, src, lo, hi, top, acc, outside[h, t])


@njit(cache=True)
def _charts(doc_offsets, T, S, R):
    """Charts for the longest document and per-row buffers (R rows, S states)."""
    m = 2 * max_doc_length(doc_offsets) + 1
    return (np.empty((m, T, S)), np.zeros((m, T, S), dtype=np.int64), np.empty(R), np.empty(S), np.empty(S))


@njit(cache=True)
def _log_partition(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S):
    """log Z (D,): the inside pass of every document (sec. 3.3-3.4)."""
    D = doc_offsets.shape[0] - 1
    chart, back, values, top, acc = _charts(doc_offsets, scores.shape[1], S, src.shape[0])
    log_z = np.zeros(D)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        log_z[d] = _inside(
            scores, doc_offsets[d], n, penalty, src, dst, kinds, pen, split, False, chart, back, values, top, acc
        )
    return log_z


@njit(cache=True)
def _marginals(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S):
    """log Z (D,) and edge marginals (N, T, K): inside, then outside pass (sec. 3.4)."""
    D = doc_offsets.shape[0] - 1
    chart, back, values, top, acc = _charts(doc_offsets, scores.shape[1], S, src.shape[0])
    outside = np.empty(chart.shape)
    log_z = np.zeros(D)
    marginals = np.zeros(scores.shape)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        log_z[d] = _inside(scores, first, n, penalty, src, dst, kinds, pen, split, False, chart, back, values, top, acc)
        _outside(scores, first, n, penalty, src, dst, kinds, pen, split, chart, outside, marginals, values, top, acc)
    return log_z, marginals


@njit(cache=True)
def _viterbi(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S):
    """MAP weight (D,) and edges (N, T, K) int8: max-product inside pass,
    then the back-trace of each type's chain from the empty final state."""
    D = doc_offsets.shape[0] - 1
    T = scores.shape[1]
    chart, back, values, top, acc = _charts(doc_offsets, T, S, src.shape[0])
    best = np.zeros(D)
    edges = np.zeros(scores.shape, dtype=np.int8)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        best[d] = _inside(scores, first, n, penalty, src, dst, kinds, pen, split, True, chart, back, values, top, acc)
        for t in range(T):
            state = 0
            for h in range(2 * n, 0, -1):
                r = back[h, t, state]
                for j in range(kinds.shape[1]):
                    if kinds[r, j] < 0:
                        break
                    edges[first + (h - 1) // 2, t, kinds[r, j]] = 1
                state = src[r]
    return best, edges
