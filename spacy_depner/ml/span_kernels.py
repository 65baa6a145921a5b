"""Numba kernels that turn per-token label scores into span-label scores: the
CPU fast path of ``span_scorer.assemble_span_scores`` (which has the same
numbers in ``model.ops`` array operations for any device).

No spaCy, no thinc. With T entity labels and ``o`` outside columns (1 for the
O score of ``SpanScorer``, 0 for ``MentionScorer``), ``token_scores``
(N, o + 3T) holds per token: the O score if o == 1, then T begin, T end and T
inside scores. A span a..b (inclusive) gets

    score[s, 0]   = O[a]                                    (if o == 1; used for a == b)
    score[s, o+y] = begin[a, y] + end[b, y] + sum_{t=a..b} inside[t, y] + width[min(b-a, W-1), y]

so its cost is O(1) per span and label, whatever its length (prefix sums, in
float64). With an endpoint width d > 0, d columns per label follow: a start
vector u[t, y] (T*d columns, label-major) and an end vector v[t, y] (T*d),
and the span's label score gains their interaction (``endpoint_products``)

    score[s, o+y] += sum_{k<d} u[a, y, k] * v[b, y, k]

a per-label dot product of the first token's start vector and the last
token's end vector, O(d) per span and label.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def assemble_span_scores(token_scores, spans, width_scores, o):
    """token_scores (N, o+3T or more: later columns are not read), spans (S, 2),
    width_scores (W, T) -> (S, o+T) float32."""
    N = token_scores.shape[0]
    T = width_scores.shape[1]
    W = width_scores.shape[0]
    prefix = np.zeros((N + 1, T))
    for t in range(N):
        for y in range(T):
            prefix[t + 1, y] = prefix[t, y] + token_scores[t, o + 2 * T + y]
    out = np.empty((spans.shape[0], o + T), dtype=np.float32)
    for s in range(spans.shape[0]):
        a = spans[s, 0]
        b = spans[s, 1]
        w = min(b - a, W - 1)
        for c in range(o):
            out[s, c] = token_scores[a, c]
        for y in range(T):
            out[s, o + y] = (
                token_scores[a, o + y]
                + token_scores[b, o + T + y]
                + (prefix[b + 1, y] - prefix[a, y])
                + width_scores[w, y]
            )
    return out


@njit(cache=True)
def assemble_span_scores_backward(d_scores, spans, n_tokens, n_widths, o):
    """Gradient of ``assemble_span_scores``: d_scores (S, o+T) ->
    (d_token_scores (N, o+3T), d_width_scores (W, T)), float32."""
    T = d_scores.shape[1] - o
    d_tokens = np.zeros((n_tokens, o + 3 * T), dtype=np.float32)
    d_prefix = np.zeros((n_tokens + 1, T))
    d_widths = np.zeros((n_widths, T), dtype=np.float32)
    for s in range(spans.shape[0]):
        a = spans[s, 0]
        b = spans[s, 1]
        w = min(b - a, n_widths - 1)
        for c in range(o):
            d_tokens[a, c] += d_scores[s, c]
        for y in range(T):
            g = d_scores[s, o + y]
            d_tokens[a, o + y] += g
            d_tokens[b, o + T + y] += g
            d_prefix[b + 1, y] += g
            d_prefix[a, y] -= g
            d_widths[w, y] += g
    for y in range(T):
        running = 0.0
        for t in range(n_tokens - 1, -1, -1):
            running += d_prefix[t + 1, y]
            d_tokens[t, o + 2 * T + y] = running
    return d_tokens, d_widths


@njit(cache=True)
def endpoint_products(token_scores, spans, first, T, d):
    """token_scores (N, first + 2Td), spans (S, 2) -> (S, T) float32:
    sum_k u[a, y, k] * v[b, y, k], u at columns first + y*d + k and v at
    first + T*d + y*d + k of token_scores."""
    out = np.zeros((spans.shape[0], T), dtype=np.float32)
    for s in range(spans.shape[0]):
        a = spans[s, 0]
        b = spans[s, 1]
        for y in range(T):
            u = first + y * d
            v = first + (T + y) * d
            total = 0.0
            for k in range(d):
                total += token_scores[a, u + k] * token_scores[b, v + k]
            out[s, y] = total
    return out


@njit(cache=True)
def endpoint_products_backward(d_products, token_scores, spans, first, T, d):
    """Gradient of ``endpoint_products``: d_products (S, T) -> d of the 2Td
    columns of token_scores from ``first`` on, (N, 2Td) float32."""
    d_tokens = np.zeros((token_scores.shape[0], 2 * T * d), dtype=np.float32)
    for s in range(spans.shape[0]):
        a = spans[s, 0]
        b = spans[s, 1]
        for y in range(T):
            g = d_products[s, y]
            u = y * d
            v = (T + y) * d
            for k in range(d):
                d_tokens[a, u + k] += g * token_scores[b, first + v + k]
                d_tokens[b, v + k] += g * token_scores[a, first + u + k]
    return d_tokens
