"""Forward-backward of the segment lattice in scaled probabilities: log Z and
the marginals with a cost that is, but for K^2 multiply-adds per token, one
exp and K multiply-adds per candidate span (inputs as ``segment_lattice``).

The log-space recursions of ``kernels`` spend an exp or a log on every term
of every log-sum, K^2 of them per token for the transitions. Here (the
scaling of Rabiner 1989, section V.A, applied to the semi-Markov forward of
Sarawagi & Cohen 2004) the forward values of a position are kept as
probabilities times one log-scale per position:

    alpha[p, y] = c[p] + log m[p, y]          (max_y m[p, y] = 1)
    gamma[q, y] = c[q] + t + log g[q, y],     g[q, y] = sum_z m[q, z] E[z, y]

with E = exp(T - t) (t the largest transition), so the transition step is a
K x K matrix-vector product with no exp or log. A segment (s, y) from i to
p - 1 adds g[i, y] e[s, y] w[s] to the scaled sum of alpha[p, y], where
e[s, y] = exp(scores[s, y] - smax[s]) (smax[s] the span's best label score:
one vectorised exp per score, ``_span_exps``) and w[s] = exp(c[i] + t +
smax[s] - top[p]) (top[p] the largest c[i] + t + smax[s] of the spans
ending at p - 1: one exp per span). One log per position folds the largest
sum into c[p].

Exactness: every term that underflows is below exp(-708) of the largest
term it is compared with; when the transitions (boundary row and column
included) spread over at most ``SCALED_SPREAD`` = 200, E >= exp(-200) and a
dropped term weighs less than K exp(2 x 200 - 708) of a kept term of any sum
it reaches, nothing at float64 precision. Wider transitions (far outside
what a trained model produces) go to the log-space recursions of
``kernels``. The backward pass is the reverse mode of the forward in
probabilities (no exp or log): ending[p, y], the probability that a segment
y ends at p, and starting[i, y], that one starts at i.
"""

import numpy as np
from numba import njit

from ..shared import max_doc_length

NEG_INF = -np.inf
SCALED_SPREAD = 200.0  # the widest spread of the transitions the scaled recursions take


def transitions_fit(transitions: np.ndarray) -> bool:
    """Whether every transition (boundary row and column included) lies
    within ``SCALED_SPREAD`` of the largest (the module's exactness)."""
    return transitions.size == 0 or float(transitions.max() - transitions.min()) <= SCALED_SPREAD


@njit(cache=True)
def _span_exps(spans, scores):
    """(smax (S,), e (S, K)): each span's largest score over the labels it
    may take (column 0, O, on one-token spans only) and exp(scores - smax),
    0 for a label the span may not take or a forbidden one (-inf); smax is
    -inf where every label is forbidden (the span then weighs 0)."""
    S, K = scores.shape
    smax = np.empty(S)
    exps = np.zeros((S, K))
    for s in range(S):
        y0 = 0 if spans[s, 0] == spans[s, 1] else 1
        top = NEG_INF
        for y in range(y0, K):
            top = max(top, scores[s, y])
        smax[s] = top
        if top > NEG_INF:
            for y in range(y0, K):
                exps[s, y] = np.exp(scores[s, y] - top)
    return smax, exps


@njit(cache=True)
def _forward(spans, lo, hi, first, n, smax, exps, E, shift, m, g, c, acc_of, terms):
    """Scaled forward of one document (module docstring): fills m, g, c
    (positions 0..n), acc_of[p, y] the scaled sum of alpha[p, y] before
    normalisation (divided by its maximum: m[p] = acc_of[p] / max), and
    terms[s, y] each segment's scaled term. Returns log Z."""
    K = exps.shape[1]
    B = K
    for y in range(K):
        g[0, y] = E[B, y]
    c[0] = 0.0
    s = lo
    for p in range(1, n + 1):
        q = p - 1
        if q > 0:
            for y in range(K):
                g[q, y] = 0.0
            for z in range(K):
                mz = m[q, z]
                for y in range(K):
                    g[q, y] += mz * E[z, y]
        end = s
        top = NEG_INF
        while end < hi and spans[end, 1] - first == q:
            v = c[spans[end, 0] - first] + smax[end]
            if v > top:
                top = v
            end += 1
        for y in range(K):
            acc_of[p, y] = 0.0
        for r in range(s, end):
            i = spans[r, 0] - first
            w = np.exp(c[i] + smax[r] - top) if smax[r] > NEG_INF else 0.0
            for y in range(K):
                t = g[i, y] * exps[r, y] * w
                terms[r, y] = t
                acc_of[p, y] += t
        largest = 0.0
        for y in range(K):
            largest = max(largest, acc_of[p, y])
        inverse = 1.0 / largest
        for y in range(K):
            m[p, y] = acc_of[p, y] * inverse
        c[p] = top + shift + np.log(largest)
        s = end
    total = 0.0
    for y in range(K):
        total += m[n, y] * E[y, B]
    return c[n] + shift + np.log(total)


@njit(cache=True)
def _backward(spans, lo, hi, first, n, E, m, g, acc_of, terms, ending, starting, transition_marginals):
    """Reverse mode of ``_forward`` in probabilities: turns ``terms`` into
    the span marginals and adds the expected transitions."""
    K = m.shape[1]
    B = K
    starting[: n + 1, :] = 0.0
    total = 0.0
    for y in range(K):
        total += m[n, y] * E[y, B]
    for y in range(K):
        ending[n, y] = m[n, y] * E[y, B] / total
        transition_marginals[y, B] += ending[n, y]
    share = np.empty(K)
    flow = np.zeros((K, K))  # sum over positions of m[p, z] share[y]: the expected transitions z -> y over E[z, y]
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
    for z in range(K):
        for y in range(K):
            transition_marginals[z, y] += flow[z, y] * E[z, y]
    for y in range(K):
        transition_marginals[B, y] += starting[0, y]


@njit(cache=True)
def _scaled(spans, span_offsets, doc_offsets, smax, exps, transitions, backward):
    D = doc_offsets.shape[0] - 1
    K = exps.shape[1]
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
    terms = np.zeros(exps.shape)
    log_z = np.zeros(D)
    transition_marginals = np.zeros(transitions.shape)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        lo, hi = span_offsets[d], span_offsets[d + 1]
        log_z[d] = _forward(spans, lo, hi, first, n, smax, exps, E, shift, m, g, c, acc_of, terms)
        if backward:
            _backward(spans, lo, hi, first, n, E, m, g, acc_of, terms, ending, starting, transition_marginals)
    return log_z, terms, transition_marginals


def scaled_log_partition(spans, span_offsets, doc_offsets, scores, transitions) -> np.ndarray:
    """log Z (D,) by the scaled forward (transitions that ``transitions_fit``)."""
    smax, exps = _span_exps(spans, scores)
    return _scaled(spans, span_offsets, doc_offsets, smax, exps, transitions, False)[0]


def scaled_marginals(spans, span_offsets, doc_offsets, scores, transitions):
    """(log Z (D,), span marginals (S, K), expected transitions (K + 1, K + 1))
    by the scaled forward-backward (transitions that ``transitions_fit``)."""
    smax, exps = _span_exps(spans, scores)
    return _scaled(spans, span_offsets, doc_offsets, smax, exps, transitions, True)
