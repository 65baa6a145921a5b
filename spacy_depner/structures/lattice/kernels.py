"""The compiled recursions of the segment lattice (``segment_lattice``,
whose docstring describes the inputs): the forward log-sums, log Z, the
marginals (a forward pass that keeps each term's share, then its reverse
mode in probabilities), Viterbi and the transition counts of a
segmentation, one compiled call per batch."""

import numpy as np
from numba import njit

from ..shared import logaddexp, max_doc_length
from .layout_check import batch_problem

NEG_INF = -np.inf
EXP_SPREAD = 600.0  # the widest spread of the transitions whose exps ``_exp_transitions`` precomputes


@njit(cache=True)
def _forward(spans, lo, hi, first, n, scores, transitions, alpha, gamma):
    """alpha[p, y]: log-sum of segmentations of tokens [0, p) whose last label is y.
    gamma[p, y]: log-sum of those that may be followed by a segment y starting at p.
    """
    K = scores.shape[1]
    B = K
    alpha[: n + 1, :] = NEG_INF
    gamma[: n + 1, :] = NEG_INF
    for y in range(K):
        gamma[0, y] = transitions[B, y]
    s = lo
    for p in range(1, n + 1):
        if p > 1:
            for y in range(K):
                acc = NEG_INF
                for z in range(K):
                    acc = logaddexp(acc, alpha[p - 1, z] + transitions[z, y])
                gamma[p - 1, y] = acc
        while s < hi and spans[s, 1] - first == p - 1:
            i = spans[s, 0] - first
            y0 = 0 if i == p - 1 else 1
            for y in range(y0, K):
                alpha[p, y] = logaddexp(alpha[p, y], gamma[i, y] + scores[s, y])
            s += 1
    log_z = NEG_INF
    for y in range(K):
        log_z = logaddexp(log_z, alpha[n, y] + transitions[y, B])
    return log_z


@njit(cache=True)
def _log_partition(spans, span_offsets, doc_offsets, scores, transitions):
    D = doc_offsets.shape[0] - 1
    K = scores.shape[1]
    m = max_doc_length(doc_offsets) + 1
    alpha = np.empty((m, K))
    gamma = np.empty((m, K))
    log_z = np.zeros(D)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        if n > 0:
            log_z[d] = _forward(
                spans, span_offsets[d], span_offsets[d + 1], doc_offsets[d], n, scores, transitions, alpha, gamma
            )
    return log_z


@njit(cache=True)
def _forward_weights(
    spans,
    lo,
    hi,
    first,
    n,
    scores,
    transitions,
    exp_transitions,
    shift,
    fast,
    alpha,
    gamma,
    weights,
    norm,
    span_weights,
):
    """The forward pass of ``_forward`` that keeps the weight of each term of
    each log-sum within its sum (a softmax, in [0, 1]), one exp per term:
    weights[p, z, y] = exp(alpha[p, z] + T[z, y] - gamma[p, y]) (1 <= p < n)
    and span_weights[s, y] = exp(gamma[i, y] + scores[s, y] - top[p, y]),
    norm[p, y] = 1 / sum of those over the spans ending at p - 1 (so that
    their product is the softmax of alpha[p, y]). Returns log Z.

    With ``fast`` (``_exp_transitions``), gamma[p, y] = max_z alpha[p, z] +
    shift + log sum_z exp(alpha[p, z] - max) exp_transitions[z, y]: K exps
    per position instead of K^2, exact up to rounding (see there)."""
    K = scores.shape[1]
    B = K
    top = np.empty(K)
    shifted = np.empty(K)
    acc = np.empty(K)
    for y in range(K):
        gamma[0, y] = transitions[B, y]
    s = lo
    for p in range(1, n + 1):
        if p > 1 and fast:
            q = p - 1
            best = NEG_INF
            for z in range(K):
                best = max(best, alpha[q, z])
            for z in range(K):
                shifted[z] = np.exp(alpha[q, z] - best)
            for y in range(K):
                total = 0.0
                for z in range(K):
                    total += shifted[z] * exp_transitions[z, y]
                gamma[q, y] = best + shift + np.log(total)
                inverse = 1.0 / total
                for z in range(K):
                    weights[q, z, y] = shifted[z] * exp_transitions[z, y] * inverse
        elif p > 1:
            q = p - 1
            for y in range(K):
                best = NEG_INF
                for z in range(K):
                    v = alpha[q, z] + transitions[z, y]
                    weights[q, z, y] = v
                    if v > best:
                        best = v
                total = 0.0
                for z in range(K):
                    e = np.exp(weights[q, z, y] - best)
                    weights[q, z, y] = e
                    total += e
                gamma[q, y] = best + np.log(total)
                inverse = 1.0 / total
                for z in range(K):
                    weights[q, z, y] *= inverse
        end = s
        while end < hi and spans[end, 1] - first == p - 1:
            end += 1
        top[:] = NEG_INF
        for r in range(s, end):
            i = spans[r, 0] - first
            y0 = 0 if i == p - 1 else 1
            for y in range(y0, K):
                v = gamma[i, y] + scores[r, y]
                span_weights[r, y] = v
                if v > top[y]:
                    top[y] = v
        acc[:] = 0.0
        for r in range(s, end):
            y0 = 0 if spans[r, 0] - first == p - 1 else 1
            for y in range(y0, K):
                # top[y] = -inf: every segment y ending here is forbidden (``Layout.forbidden``).
                e = np.exp(span_weights[r, y] - top[y]) if top[y] > NEG_INF else 0.0
                span_weights[r, y] = e
                acc[y] += e
        for y in range(K):
            alpha[p, y] = top[y] + np.log(acc[y]) if acc[y] > 0.0 else NEG_INF
            norm[p, y] = 1.0 / acc[y] if acc[y] > 0.0 else 0.0
        s = end
    best = NEG_INF
    for y in range(K):
        best = max(best, alpha[n, y] + transitions[y, B])
    total = 0.0
    for y in range(K):
        total += np.exp(alpha[n, y] + transitions[y, B] - best)
    return best + np.log(total)


@njit(cache=True)
def _exp_transitions(transitions, K):
    """exp(T[z, y] - max T) over the labels (the boundary row and column
    left out), the max, and whether the transitions spread over at most
    ``EXP_SPREAD``: then every entry is at least exp(-EXP_SPREAD), a normal
    float64, and a term exp(alpha[z] - max alpha) that underflows (below
    exp(-708)) weighs less than exp(EXP_SPREAD - 708) of the largest term of
    its sum: dropping it changes nothing at float64 precision. Wider
    transitions (scores far outside what a trained model produces) take the
    K^2 exps of the plain log-sum."""
    top = NEG_INF
    low = np.inf
    for a in range(K):
        for b in range(K):
            top = max(top, transitions[a, b])
            low = min(low, transitions[a, b])
    out = np.empty((K, K))
    for a in range(K):
        for b in range(K):
            out[a, b] = np.exp(transitions[a, b] - top)
    return out, top, top - low <= EXP_SPREAD


@njit(cache=True)
def _adjoint(
    spans, lo, hi, first, n, transitions, z, alpha, weights, norm, span_weights, ending, starting, transition_marginals
):
    """Reverse mode of ``_forward_weights`` in probabilities: ending[p, y]
    (the probability that a segment y ends at p) and starting[p, y] (that
    one starts at p) flow back through the stored softmax weights, with no
    exp or log but the end's. Turns span_weights into the span marginals and
    adds the expected transitions into ``transition_marginals``."""
    K = alpha.shape[1]
    B = K
    starting[: n + 1, :] = 0.0
    for y in range(K):
        ending[n, y] = np.exp(alpha[n, y] + transitions[y, B] - z)
        transition_marginals[y, B] += ending[n, y]
    s = hi - 1
    for p in range(n, 0, -1):
        if p < n:
            for a in range(K):
                ending[p, a] = 0.0
            for b in range(K):
                g = starting[p, b]
                for a in range(K):
                    m = g * weights[p, a, b]
                    ending[p, a] += m
                    transition_marginals[a, b] += m
        for y in range(K):
            ending[p, y] *= norm[p, y]
        while s >= lo and spans[s, 1] - first == p - 1:
            i = spans[s, 0] - first
            y0 = 0 if i == p - 1 else 1
            for y in range(y0, K):
                m = span_weights[s, y] * ending[p, y]
                span_weights[s, y] = m
                starting[i, y] += m
            s -= 1
    for y in range(K):
        transition_marginals[B, y] += starting[0, y]


@njit(cache=True)
def _marginals(spans, span_offsets, doc_offsets, scores, transitions):
    """Forward pass keeping its softmax weights, then their reverse mode
    (``_adjoint``): the gradient of log Z in probabilities, one exp per term
    of the forward's log-sums and none in the backward."""
    D = doc_offsets.shape[0] - 1
    K = scores.shape[1]
    m = max_doc_length(doc_offsets) + 1
    alpha = np.empty((m, K))
    gamma = np.empty((m, K))
    norm = np.empty((m, K))
    weights = np.empty((m, K, K))
    ending = np.empty((m, K))
    starting = np.empty((m, K))
    log_z = np.zeros(D)
    span_marginals = np.zeros(scores.shape)
    transition_marginals = np.zeros(transitions.shape)
    exp_transitions, shift, fast = _exp_transitions(transitions, K)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        lo = span_offsets[d]
        hi = span_offsets[d + 1]
        z = _forward_weights(
            spans,
            lo,
            hi,
            first,
            n,
            scores,
            transitions,
            exp_transitions,
            shift,
            fast,
            alpha,
            gamma,
            weights,
            norm,
            span_marginals,
        )
        log_z[d] = z
        _adjoint(
            spans,
            lo,
            hi,
            first,
            n,
            transitions,
            z,
            alpha,
            weights,
            norm,
            span_marginals,
            ending,
            starting,
            transition_marginals,
        )
    return log_z, span_marginals, transition_marginals


@njit(cache=True)
def _viterbi(spans, span_offsets, doc_offsets, scores, transitions, check):
    """(problem, row, best score (D,), label of each span (S,), -1 off the
    best segmentation): problem 0 and the MAP segmentation of every
    document, or, with ``check``, the code of what is wrong with the batch
    (``layout_check.batch_problem``, with its span row) and nothing
    computed, in the same compiled call. Without ``check`` the caller has
    checked the batch (scores may then hold -inf: forbidden span labels)."""
    D = doc_offsets.shape[0] - 1
    K = scores.shape[1]
    B = K
    if check:
        problem, row = batch_problem(spans, span_offsets, doc_offsets, scores, transitions)
        if problem:
            return problem, row, np.zeros(max(D, 0)), np.full(spans.shape[0], -1, dtype=np.int64)
    m = max_doc_length(doc_offsets) + 1
    best = np.empty((m, K))  # best[p, y]: best segmentation of [0, p) ending in y
    best_span = np.empty((m, K), dtype=np.int64)
    entry = np.empty((m, K))  # entry[p, y]: best score before a segment y at p
    entry_label = np.empty((m, K), dtype=np.int64)
    labels = np.full(spans.shape[0], -1, dtype=np.int64)
    best_scores = np.zeros(D)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        best[: n + 1, :] = NEG_INF
        best_span[: n + 1, :] = -1
        for y in range(K):
            entry[0, y] = transitions[B, y]
            entry_label[0, y] = B
        s = span_offsets[d]
        hi = span_offsets[d + 1]
        for p in range(1, n + 1):
            if p > 1:
                for y in range(K):
                    top = NEG_INF
                    arg = -1
                    for z in range(K):
                        v = best[p - 1, z] + transitions[z, y]
                        if v > top:
                            top = v
                            arg = z
                    entry[p - 1, y] = top
                    entry_label[p - 1, y] = arg
            # the entity labels of every span ending at p - 1, and O of the one-token span alone
            # (found without a branch: which spans are one token follows the trees, unpredictably)
            single = s
            while s < hi and spans[s, 1] - first == p - 1:
                i = spans[s, 0] - first
                single = s if i == p - 1 else single
                for y in range(1, K):
                    v = entry[i, y] + scores[s, y]
                    if v > best[p, y]:
                        best[p, y] = v
                        best_span[p, y] = s
                s += 1
            best[p, 0] = entry[p - 1, 0] + scores[single, 0]
            best_span[p, 0] = single
        top = NEG_INF
        y = -1
        for z in range(K):
            v = best[n, z] + transitions[z, B]
            if v > top:
                top = v
                y = z
        best_scores[d] = top
        p = n
        while p > 0:
            s = best_span[p, y]
            labels[s] = y
            i = spans[s, 0] - first
            y = entry_label[i, y]
            p = i
    return 0, -1, best_scores, labels


@njit(cache=True)
def _transition_counts(spans, span_offsets, labels, n_labels):
    B = n_labels
    counts = np.zeros((n_labels + 1, n_labels + 1))
    for d in range(span_offsets.shape[0] - 1):
        previous = B
        for s in range(span_offsets[d], span_offsets[d + 1]):
            if labels[s] >= 0:
                counts[previous, labels[s]] += 1.0
                previous = labels[s]
        if previous != B:
            counts[previous, B] += 1.0
    return counts
