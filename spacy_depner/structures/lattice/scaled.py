"""Forward-backward of the segment lattice in scaled probabilities: log Z and
the marginals with a cost that is, but for K^2 multiply-adds per token, one
exp and a few multiply-adds per span label (inputs as ``segment_lattice``).

The log-space recursions of ``kernels`` spend an exp or a log on every term
of every log-sum, K^2 of them per token for the transitions. Here (the
scaling of Rabiner 1989, section V.A, applied to the semi-Markov forward of
Sarawagi & Cohen 2004) the forward values of a position are kept as
probabilities times one log-scale per position:

    alpha[p, y] = c[p] + log m[p, y]          (1/2 <= max_y m[p, y] < 1)
    gamma[q, y] = c[q] + t + log g[q, y],     g[q, y] = sum_z m[q, z] E[z, y]

with E = exp(T - t) (t the largest transition), so the transition step is a
K x K matrix-vector product with no exp or log. A segment (s, y) from i to
p - 1 adds g[i, y] exp(c[i] + scores[s, y] - top[p]) to the scaled sum of
alpha[p, y] (top[p] the largest c[i] + scores[s, y] of the span labels
ending at p - 1): one exp per span label. The largest sum of a position,
largest = f 2^k with 1/2 <= f < 1, is folded into its scale by the power of
two alone, c[p] = top[p] + t + k log 2, and m[p] = sums x 2^-k (an exact
scaling): no log per position, one per document for log Z.

Exactness: every term that underflows is below exp(-708) of the largest
term it is compared with; when the transitions (boundary row and column
included) spread over at most ``SCALED_SPREAD`` = 200, E >= exp(-200) and a
dropped term (of a sum over labels, spans or previous labels: each holds a
term of at least exp(-200) / 2 of its scale) weighs less than 4 K exp(2 x
200 - 708) of a kept term of any sum it reaches, nothing at float64 precision. Wider transitions (far outside
what a trained model produces) go to the log-space recursions of
``kernels``. The backward pass is the reverse mode of the forward in
probabilities (no exp or log): ending[p, y], the probability that a segment
y ends at p, and starting[i, y], that one starts at i.
"""

import math

import numpy as np
from numba import njit

from ..shared import max_doc_length
from .layout_check import batch_problem

NEG_INF = -np.inf
LOG_2 = math.log(2.0)
SCALED_SPREAD = 200.0  # the widest spread of the transitions the scaled recursions take
OUT_OF_RANGE = 7  # problem codes after ``layout_check``'s: |score| x length above the bound,
TOO_WIDE = 8  # transitions spread wider than SCALED_SPREAD (the log-space recursions take them)


def transitions_fit(transitions: np.ndarray) -> bool:
    """Whether every transition (boundary row and column included) lies
    within ``SCALED_SPREAD`` of the largest (the module's exactness)."""
    return transitions.size == 0 or float(transitions.max() - transitions.min()) <= SCALED_SPREAD


@njit(cache=True)
def _forward(spans, lo, hi, first, n, scores, E, shift, m, g, c, acc_of, terms):
    """Scaled forward of one document (module docstring): fills m, g, c
    (positions 0..n), acc_of[p, y] the scaled sum of alpha[p, y] before
    normalisation (m[p] = acc_of[p] x 2^-k, 2^k the power of two of its
    maximum), and
    terms[s, y] each segment's scaled term g[i, y] exp(c[i] + scores[s, y]
    - top[p]) (0 for O on a span longer than one token, and for a forbidden
    label: -inf). Returns log Z."""
    K = scores.shape[1]
    B = K
    for y in range(K):
        g[0, y] = E[B, y]
    c[0] = 0.0
    s = lo
    for p in range(1, n + 1):
        q = p - 1
        if q > 0:
            for y in range(K):  # a scalar sum per label: no store per term
                acc = 0.0
                for z in range(K):
                    acc += m[q, z] * E[z, y]
                g[q, y] = acc
        end = s
        top = NEG_INF
        while end < hi and spans[end, 1] - first == q:
            i = spans[end, 0] - first
            for y in range(0 if i == q else 1, K):
                top = max(top, c[i] + scores[end, y])
            end += 1
        for y in range(K):
            acc_of[p, y] = 0.0
        for r in range(s, end):
            i = spans[r, 0] - first
            terms[r, 0] = 0.0
            for y in range(0 if i == q else 1, K):
                t = g[i, y] * np.exp(c[i] + scores[r, y] - top)
                terms[r, y] = t
                acc_of[p, y] += t
        largest = 0.0
        for y in range(K):
            largest = max(largest, acc_of[p, y])
        exponent = math.frexp(largest)[1]
        inverse = math.ldexp(1.0, -exponent)  # exact: m[p] is acc_of[p] to the last bit, rescaled
        for y in range(K):
            m[p, y] = acc_of[p, y] * inverse
        c[p] = top + shift + exponent * LOG_2
        s = end
    total = 0.0
    for y in range(K):
        total += m[n, y] * E[y, B]
    return c[n] + shift + np.log(total)


@njit(cache=True)
def _backward(spans, lo, hi, first, n, E, m, g, acc_of, terms, ending, starting, share, flow):
    """Reverse mode of ``_forward`` in probabilities: turns ``terms`` into
    the span marginals and adds into ``flow`` (K, K) the sum over positions
    of m[p, z] share[y] (the expected transitions z -> y over E[z, y]), the
    start transitions into its row K and the end ones into its column K."""
    K = m.shape[1]
    B = K
    starting[: n + 1, :] = 0.0
    total = 0.0
    for y in range(K):
        total += m[n, y] * E[y, B]
    for y in range(K):
        ending[n, y] = m[n, y] * E[y, B] / total
        flow[y, B] += ending[n, y]
    s = hi - 1
    for p in range(n, 0, -1):
        if p < n:
            for y in range(K):
                share[y] = starting[p, y] / g[p, y] if g[p, y] > 0.0 else 0.0
            for z in range(K):
                mz = m[p, z]
                e = 0.0
                for y in range(K):
                    flow[z, y] += mz * share[y]
                    e += share[y] * E[z, y]
                ending[p, z] = mz * e
        for y in range(K):
            share[y] = ending[p, y] / acc_of[p, y] if acc_of[p, y] > 0.0 else 0.0
        while s >= lo and spans[s, 1] - first == p - 1:
            i = spans[s, 0] - first
            for y in range(K):
                v = terms[s, y] * share[y]
                terms[s, y] = v
                starting[i, y] += v
            s -= 1
    for y in range(K):
        flow[B, y] += starting[0, y]


@njit(cache=True)
def _scaled(spans, span_offsets, doc_offsets, scores, transitions, backward):
    D = doc_offsets.shape[0] - 1
    K = scores.shape[1]
    shift = NEG_INF
    for a in range(K + 1):
        for b in range(K + 1):
            shift = max(shift, transitions[a, b])
    E = np.exp(transitions - shift)
    size = max_doc_length(doc_offsets) + 1
    m = np.empty((size, K))
    g = np.empty((size, K))
    c = np.empty(size)
    acc_of = np.empty((size, K))
    ending = np.empty((size, K))
    starting = np.empty((size, K))
    share = np.empty(K)
    terms = np.zeros(scores.shape)
    log_z = np.zeros(D)
    flow = np.zeros(transitions.shape)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        lo, hi = span_offsets[d], span_offsets[d + 1]
        log_z[d] = _forward(spans, lo, hi, first, n, scores, E, shift, m, g, c, acc_of, terms)
        if backward:
            _backward(spans, lo, hi, first, n, E, m, g, acc_of, terms, ending, starting, share, flow)
    for a in range(K):
        for b in range(K):
            flow[a, b] *= E[a, b]  # the label-to-label flow was summed over E[a, b]
    return log_z, terms, flow


def scaled_log_partition(spans, span_offsets, doc_offsets, scores, transitions) -> np.ndarray:
    """log Z (D,) by the scaled forward (transitions that ``transitions_fit``)."""
    return _scaled(spans, span_offsets, doc_offsets, scores, transitions, False)[0]


def scaled_marginals(spans, span_offsets, doc_offsets, scores, transitions):
    """(log Z (D,), span marginals (S, K), expected transitions (K + 1, K + 1))
    by the scaled forward-backward (transitions that ``transitions_fit``)."""
    return _scaled(spans, span_offsets, doc_offsets, scores, transitions, True)


@njit(cache=True)
def _largest(values):
    """The largest |entry| of a C-contiguous 2-d array (0 if empty)."""
    top = 0.0
    for x in values.ravel():
        top = max(top, abs(x))
    return top


@njit(cache=True)
def scaled_problem(spans, span_offsets, doc_offsets, scores, transitions, score_length_bound):
    """(0, -1) if the scaled recursions take the batch as it is, else
    ``layout_check.batch_problem``'s code and row, ``OUT_OF_RANGE`` (the
    largest |score| or |transition| times the longest document above
    ``score_length_bound``, the test of ``score_range.check_scores``) or
    ``TOO_WIDE`` (not ``transitions_fit``), with row -1."""
    problem, row = batch_problem(spans, span_offsets, doc_offsets, scores, transitions)
    if problem:
        return problem, row
    if max(_largest(scores), _largest(transitions)) * max_doc_length(doc_offsets) > score_length_bound:
        return OUT_OF_RANGE, -1
    if transitions.max() - transitions.min() > SCALED_SPREAD:
        return TOO_WIDE, -1
    return 0, -1


@njit(cache=True)
def checked_scaled(spans, span_offsets, doc_offsets, scores, transitions, backward, score_length_bound):
    """(problem, row, log Z, span marginals, expected transitions): ``_scaled``
    after ``scaled_problem`` in the same compiled call (problem 0), or the
    problem and empty arrays."""
    problem, row = scaled_problem(spans, span_offsets, doc_offsets, scores, transitions, score_length_bound)
    if problem:
        return problem, row, np.zeros(0), np.zeros((0, 0)), np.zeros((0, 0))
    log_z, terms, flow = _scaled(spans, span_offsets, doc_offsets, scores, transitions, backward)
    return 0, -1, log_z, terms, flow
