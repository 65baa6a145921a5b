"""The compiled recursions of the linear chain (``linear_chain``, whose
docstring describes the inputs): forward and backward log-sums, log Z, the
marginals (a forward pass that keeps each term's share, then its reverse
mode in probabilities) and Viterbi, one compiled call per batch."""

import numpy as np
from numba import njit

from ..shared import max_doc_length

NEG_INF = -np.inf
EXP_SPREAD = 300.0  # see ``_exp_transitions``


@njit(cache=True)
def _sparse(allowed):
    """Allowed pairs among the tags 0..T-1 as CSR lists: predecessors of each
    tag (pred[pred_ptr[b]:pred_ptr[b+1]], ascending) and successors of each tag."""
    T = allowed.shape[0] - 1
    pred_ptr = np.zeros(T + 1, dtype=np.int64)
    succ_ptr = np.zeros(T + 1, dtype=np.int64)
    for a in range(T):
        for b in range(T):
            if allowed[a, b]:
                pred_ptr[b + 1] += 1
                succ_ptr[a + 1] += 1
    for y in range(T):
        pred_ptr[y + 1] += pred_ptr[y]
        succ_ptr[y + 1] += succ_ptr[y]
    pred = np.empty(pred_ptr[T], dtype=np.int64)
    succ = np.empty(succ_ptr[T], dtype=np.int64)
    fill_pred = pred_ptr[:T].copy()
    fill_succ = succ_ptr[:T].copy()
    for a in range(T):
        for b in range(T):
            if allowed[a, b]:
                pred[fill_pred[b]] = a
                fill_pred[b] += 1
                succ[fill_succ[a]] = b
                fill_succ[a] += 1
    return pred_ptr, pred, succ_ptr, succ


@njit(cache=True)
def _first_infeasible_doc(doc_offsets, allowed):
    """Index of the first non-empty document of a length for which no allowed
    sequence exists, or -1. Reachability over lengths 1..max: O(max_n T^2)."""
    T = allowed.shape[0] - 1
    B = T
    longest = max_doc_length(doc_offsets)
    feasible = np.zeros(longest + 1, dtype=np.bool_)
    feasible[0] = True
    reach = np.zeros(T, dtype=np.bool_)
    step = np.zeros(T, dtype=np.bool_)
    for y in range(T):
        reach[y] = allowed[B, y]
    for n in range(1, longest + 1):
        if n > 1:
            for y in range(T):
                step[y] = False
                for z in range(T):
                    if reach[z] and allowed[z, y]:
                        step[y] = True
                        break
            reach, step = step, reach  # (an array copy would compile numba's shape-error formatting)
        for y in range(T):
            if reach[y] and allowed[y, B]:
                feasible[n] = True
                break
    for d in range(doc_offsets.shape[0] - 1):
        if not feasible[doc_offsets[d + 1] - doc_offsets[d]]:
            return d
    return -1


@njit(cache=True, inline="always")
def _log_sum(buffer, count, top):
    """log(sum(exp(buffer[:count]))) given their maximum ``top`` (-inf when
    every term is -inf)."""
    if top == NEG_INF:
        return NEG_INF
    acc = 0.0
    for k in range(count):
        acc += np.exp(buffer[k] - top)
    return top + np.log(acc)


@njit(cache=True)
def _forward(scores, first, n, transitions, allowed, pred_ptr, pred, alpha, buffer):
    """alpha[t, y]: log-sum of the allowed prefixes y_1..y_t+1 ending in y at
    position t, their token scores included. Returns log Z."""
    T = scores.shape[1]
    B = T
    for y in range(T):
        alpha[0, y] = transitions[B, y] + scores[first, y] if allowed[B, y] else NEG_INF
    for t in range(1, n):
        for y in range(T):
            lo = pred_ptr[y]
            hi = pred_ptr[y + 1]
            top = NEG_INF
            for k in range(lo, hi):
                z = pred[k]
                v = alpha[t - 1, z] + transitions[z, y]
                buffer[k - lo] = v
                if v > top:
                    top = v
            alpha[t, y] = _log_sum(buffer, hi - lo, top) + scores[first + t, y]
    top = NEG_INF
    for y in range(T):
        if allowed[y, B]:
            v = alpha[n - 1, y] + transitions[y, B]
            buffer[y] = v
            if v > top:
                top = v
        else:
            buffer[y] = NEG_INF
    return _log_sum(buffer, T, top)


@njit(cache=True)
def _backward(scores, first, n, transitions, allowed, succ_ptr, succ, beta, buffer):
    """beta[t, y]: log-sum of the allowed completions after tag y at position
    t (scores of positions > t and the end transition included)."""
    T = scores.shape[1]
    B = T
    for y in range(T):
        beta[n - 1, y] = transitions[y, B] if allowed[y, B] else NEG_INF
    for t in range(n - 2, -1, -1):
        for a in range(T):
            lo = succ_ptr[a]
            hi = succ_ptr[a + 1]
            top = NEG_INF
            for k in range(lo, hi):
                b = succ[k]
                v = transitions[a, b] + scores[first + t + 1, b] + beta[t + 1, b]
                buffer[k - lo] = v
                if v > top:
                    top = v
            beta[t, a] = _log_sum(buffer, hi - lo, top)


@njit(cache=True, inline="always")
def _charts(doc_offsets, T):
    """Scratch for one document at a time: alpha (m, T), beta (m, T) and a
    buffer (T,), m the longest document (at least 1)."""
    m = max(max_doc_length(doc_offsets), 1)
    return np.empty((m, T)), np.empty((m, T)), np.empty(T)


@njit(cache=True, inline="always")
def _forward_backward(scores, first, n, transitions, allowed, sparse, alpha, beta, buffer):
    """alpha and beta of the document of n tokens at ``first`` (``sparse``:
    ``_sparse(allowed)``); its log-partition."""
    pred_ptr, pred, succ_ptr, succ = sparse
    z = _forward(scores, first, n, transitions, allowed, pred_ptr, pred, alpha, buffer)
    _backward(scores, first, n, transitions, allowed, succ_ptr, succ, beta, buffer)
    return z


@njit(cache=True)
def _log_partition(scores, doc_offsets, transitions, allowed):
    D = doc_offsets.shape[0] - 1
    T = scores.shape[1]
    pred_ptr, pred, _, _ = _sparse(allowed)
    m = max(max_doc_length(doc_offsets), 1)
    alpha = np.empty((m, T))
    buffer = np.empty(T)
    log_z = np.zeros(D)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        if n > 0:
            log_z[d] = _forward(scores, doc_offsets[d], n, transitions, allowed, pred_ptr, pred, alpha, buffer)
    return log_z


@njit(cache=True, inline="always")
def _exp_transitions(transitions, allowed):
    """exp(T[z, y] - max) over the allowed pairs of tags (0 elsewhere), the
    max, and whether they spread over at most ``EXP_SPREAD``. When they do,
    and the finite alpha of a position spread over at most ``EXP_SPREAD`` too,
    every term exp(alpha[z] - max alpha) exp(T[z, y] - max T) of a log-sum is
    at least exp(-2 EXP_SPREAD), a normal float64: the sum is exact up to
    rounding with T exps per position instead of one per allowed pair
    (``_forward_weights``); otherwise that position takes the plain log-sum."""
    T = allowed.shape[0] - 1
    top = NEG_INF
    low = np.inf
    for a in range(T):
        for b in range(T):
            if allowed[a, b]:
                top = max(top, transitions[a, b])
                low = min(low, transitions[a, b])
    out = np.zeros((T, T))
    for a in range(T):
        for b in range(T):
            if allowed[a, b]:
                out[a, b] = np.exp(transitions[a, b] - top)
    return out, top, top - low <= EXP_SPREAD


@njit(cache=True, inline="always")
def _forward_weights(
    scores, first, n, transitions, allowed, pred_ptr, pred, exp_transitions, shift, fast, alpha, weights, shifted
):
    """``_forward`` keeping the softmax weight of each term of each log-sum:
    weights[t, k] = exp(alpha[t - 1, z] + T[z, y] + scores[t, y] - alpha[t, y])
    for the allowed pair k = (z = pred[k], y) (0 where alpha[t, y] is -inf).
    Returns log Z."""
    T = scores.shape[1]
    B = T
    for y in range(T):
        alpha[0, y] = transitions[B, y] + scores[first, y] if allowed[B, y] else NEG_INF
    for t in range(1, n):
        top = NEG_INF
        low = np.inf
        for z in range(T):
            v = alpha[t - 1, z]
            if v > top:
                top = v
            if v != NEG_INF and v < low:
                low = v
        if fast and top - low <= EXP_SPREAD:
            for z in range(T):
                shifted[z] = np.exp(alpha[t - 1, z] - top)
            for y in range(T):
                total = 0.0
                for k in range(pred_ptr[y], pred_ptr[y + 1]):
                    e = shifted[pred[k]] * exp_transitions[pred[k], y]
                    weights[t, k] = e
                    total += e
                if total > 0.0:
                    alpha[t, y] = top + shift + np.log(total) + scores[first + t, y]
                    inverse = 1.0 / total
                    for k in range(pred_ptr[y], pred_ptr[y + 1]):
                        weights[t, k] *= inverse
                else:
                    alpha[t, y] = NEG_INF
            continue
        for y in range(T):
            lo = pred_ptr[y]
            hi = pred_ptr[y + 1]
            best = NEG_INF
            for k in range(lo, hi):
                v = alpha[t - 1, pred[k]] + transitions[pred[k], y]
                weights[t, k] = v
                if v > best:
                    best = v
            if best == NEG_INF:
                alpha[t, y] = NEG_INF
                for k in range(lo, hi):
                    weights[t, k] = 0.0
                continue
            total = 0.0
            for k in range(lo, hi):
                e = np.exp(weights[t, k] - best)
                weights[t, k] = e
                total += e
            alpha[t, y] = best + np.log(total) + scores[first + t, y]
            inverse = 1.0 / total
            for k in range(lo, hi):
                weights[t, k] *= inverse
    best = NEG_INF
    for y in range(T):
        if allowed[y, B]:
            best = max(best, alpha[n - 1, y] + transitions[y, B])
    if best == NEG_INF:
        return NEG_INF
    total = 0.0
    for y in range(T):
        if allowed[y, B]:
            total += np.exp(alpha[n - 1, y] + transitions[y, B] - best)
    return best + np.log(total)


@njit(cache=True)
def _marginals(scores, doc_offsets, transitions, allowed):
    """Forward pass keeping its softmax weights (``_forward_weights``), then
    their reverse mode in probabilities: the marginal of tag y at t is the
    adjoint of alpha[t, y], which flows back through the weights with no exp
    or log (the end's aside)."""
    D = doc_offsets.shape[0] - 1
    T = scores.shape[1]
    B = T
    pred_ptr, pred, _, _ = _sparse(allowed)
    m = max(max_doc_length(doc_offsets), 1)
    alpha = np.empty((m, T))
    weights = np.empty((m, max(pred.shape[0], 1)))
    shifted = np.empty(T)
    exp_transitions, shift, fast = _exp_transitions(transitions, allowed)
    log_z = np.zeros(D)
    tag_marginals = np.zeros(scores.shape)
    transition_marginals = np.zeros(transitions.shape)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        z = _forward_weights(
            scores,
            first,
            n,
            transitions,
            allowed,
            pred_ptr,
            pred,
            exp_transitions,
            shift,
            fast,
            alpha,
            weights,
            shifted,
        )
        log_z[d] = z
        last = first + n - 1
        for y in range(T):
            if allowed[y, B] and alpha[n - 1, y] != NEG_INF:
                p = np.exp(alpha[n - 1, y] + transitions[y, B] - z)
                tag_marginals[last, y] = p
                transition_marginals[y, B] += p
        for t in range(n - 1, 0, -1):
            for y in range(T):
                g = tag_marginals[first + t, y]
                if g == 0.0:
                    continue
                for k in range(pred_ptr[y], pred_ptr[y + 1]):
                    p = g * weights[t, k]
                    tag_marginals[first + t - 1, pred[k]] += p
                    transition_marginals[pred[k], y] += p
        for y in range(T):
            if allowed[B, y]:
                transition_marginals[B, y] += tag_marginals[first, y]
    return log_z, tag_marginals, transition_marginals


@njit(cache=True)
def _viterbi(scores, doc_offsets, transitions, allowed):
    D = doc_offsets.shape[0] - 1
    T = scores.shape[1]
    B = T
    pred_ptr, pred, _, _ = _sparse(allowed)
    m = max(max_doc_length(doc_offsets), 1)
    best = np.empty((m, T))  # best[t, y]: best allowed prefix ending in y at t
    back = np.empty((m, T), dtype=np.int64)
    tags = np.zeros(scores.shape[0], dtype=np.int64)
    best_scores = np.zeros(D)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        for y in range(T):
            best[0, y] = transitions[B, y] + scores[first, y] if allowed[B, y] else NEG_INF
            back[0, y] = B
        for t in range(1, n):
            for y in range(T):
                top = NEG_INF
                arg = -1
                for k in range(pred_ptr[y], pred_ptr[y + 1]):
                    z = pred[k]
                    v = best[t - 1, z] + transitions[z, y]
                    if v > top:
                        top = v
                        arg = z
                best[t, y] = top + scores[first + t, y] if arg >= 0 else NEG_INF
                back[t, y] = arg
        top = NEG_INF
        y = -1
        for z in range(T):
            if allowed[z, B]:
                v = best[n - 1, z] + transitions[z, B]
                if v > top:
                    top = v
                    y = z
        best_scores[d] = top
        for t in range(n - 1, -1, -1):  # feasibility was checked: y >= 0 all along
            tags[first + t] = y
            y = back[t, y]
    return best_scores, tags
