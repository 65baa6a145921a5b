"""Numba kernels that turn per-token label scores into span-label scores.

No spaCy, no thinc. With T entity labels, ``token_scores`` (N, 1 + 3T) holds
per token: column 0 the O score, then T begin, T end and T inside scores. A
span a..b (inclusive) gets

    score[s, 0]   = O[a]                                    (used for a == b)
    score[s, 1+y] = begin[a, y] + end[b, y] + sum_{t=a..b} inside[t, y] + width[min(b-a, W-1), y]

so its cost is O(1) per span and label, whatever its length (prefix sums).
"""
import numpy as np
from numba import njit


@njit(cache=True)
def assemble_span_scores(token_scores, spans, width_scores):
    """token_scores (N, 1+3T), spans (S, 2), width_scores (W, T) -> (S, 1+T) float32."""
    N = token_scores.shape[0]
    T = width_scores.shape[1]
    W = width_scores.shape[0]
    prefix = np.zeros((N + 1, T))
    for t in range(N):
        for y in range(T):
            prefix[t + 1, y] = prefix[t, y] + token_scores[t, 1 + 2 * T + y]
    out = np.empty((spans.shape[0], T + 1), dtype=np.float32)
    for s in range(spans.shape[0]):
        a = spans[s, 0]
        b = spans[s, 1]
        w = min(b - a, W - 1)
        out[s, 0] = token_scores[a, 0]
        for y in range(T):
            out[s, 1 + y] = (
                token_scores[a, 1 + y]
                + token_scores[b, 1 + T + y]
                + (prefix[b + 1, y] - prefix[a, y])
                + width_scores[w, y]
            )
    return out


@njit(cache=True)
def assemble_span_scores_backward(d_scores, spans, n_tokens, n_widths):
    """Gradient of ``assemble_span_scores``: d_scores (S, 1+T) ->
    (d_token_scores (N, 1+3T), d_width_scores (W, T)), float32."""
    T = d_scores.shape[1] - 1
    d_tokens = np.zeros((n_tokens, 1 + 3 * T), dtype=np.float32)
    d_prefix = np.zeros((n_tokens + 1, T))
    d_widths = np.zeros((n_widths, T), dtype=np.float32)
    for s in range(spans.shape[0]):
        a = spans[s, 0]
        b = spans[s, 1]
        w = min(b - a, n_widths - 1)
        d_tokens[a, 0] += d_scores[s, 0]
        for y in range(T):
            g = d_scores[s, 1 + y]
            d_tokens[a, 1 + y] += g
            d_tokens[b, 1 + T + y] += g
            d_prefix[b + 1, y] += g
            d_prefix[a, y] -= g
            d_widths[w, y] += g
    for y in range(T):
        running = 0.0
        for t in range(n_tokens - 1, -1, -1):
            running += d_prefix[t + 1, y]
            d_tokens[t, 1 + 2 * T + y] = running
    return d_tokens, d_widths
