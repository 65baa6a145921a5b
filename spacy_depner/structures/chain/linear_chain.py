"""Linear-chain CRF over BIO / BILOU tags (Lafferty, McCallum & Pereira 2001).

The flat baseline beside the segment lattice: one tag per token, a first-order
Markov chain of tags with transition scores and a boundary tag at both ends.
The same ``viterbi`` and ``transition_counts`` serve the structured perceptron
(Collins 2002; Daiber & Klaussner, "Named Entity Recognition as Structured
Prediction", sec. 3.1): the update is gold counts minus Viterbi counts.
Pure numpy/numba.

Tags: ``tag_schemes`` (re-exported here) holds the BIO and BILOU tag sets
(``SCHEMES``, ``tag_names``, ``n_tags``), the transitions each allows
(``allowed_transitions``) and the conversions ``tags_to_spans`` /
``spans_to_tags``. Index T of the transition matrices is the
boundary B: row T is the document start, column T the document end.

Score of a tag sequence y_1..y_n of a document (positions in the document):

    score(y) = sum_t scores[t, y_t] + trans[B, y_1] + sum_t trans[y_t, y_t+1] + trans[y_n, B]

A sequence is in the space only when every transition it uses (the start
B -> y_1 and the end y_n -> B included) is allowed; the others have
probability zero. The empty document has exactly one (empty) sequence, of
score 0, which uses no transition at all (not even B -> B).

Inputs, for a batch of D documents over N tokens:
    scores (N, T) float: per-token tag scores, documents one after another.
    doc_offsets (D + 1,) int: tokens of document d are doc_offsets[d]:doc_offsets[d+1]
        (starts at 0, never decreases, ends at N; empty documents allowed).
    transitions (T + 1, T + 1) float: trans[a, b] for tag a followed by b.
        Must be finite everywhere; forbid a transition with ``allowed``, not -inf.
    allowed (T + 1, T + 1) bool: allowed[a, b] for tag a followed by b, usually
        ``allowed_transitions(K, scheme)``; any matrix is accepted as long as
        every non-empty document has at least one allowed sequence.

Operations: ``log_partition`` (log Z per document), ``marginals`` (log Z,
tag marginals and expected transition counts: exactly the gradient of
sum(log Z) with respect to ``scores`` and ``transitions``; 0 on disallowed
transitions and on the B -> B entry), ``viterbi`` (the MAP sequence, always
allowed), ``transition_counts`` (of a given tag sequence), and the conversions
``tags_to_spans`` / ``spans_to_tags``. The recursions run over the allowed
pairs only (a sparse list of predecessors / successors per tag), so a
document costs O(n * #allowed) <= O(n T^2), in one compiled call per batch.
"""
from typing import Tuple

import numpy as np
from numba import njit

from ..shared import check_doc_offsets, max_doc_length
from ..score_range import check_scores
from .tag_schemes import SCHEMES, _as_tags, _pairs, allowed_transitions, n_tags, spans_to_tags, tag_names, tags_to_spans

__all__ = [
    "log_partition", "marginals", "viterbi", "transition_counts",
    "SCHEMES", "allowed_transitions", "n_tags", "spans_to_tags", "tag_names", "tags_to_spans",
]

NEG_INF = -np.inf
EXP_SPREAD = 300.0  # see ``_exp_transitions``


# ---------------------------------------------------------------------------
# Compiled recursions
# ---------------------------------------------------------------------------


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
            reach[:] = step
        for y in range(T):
            if reach[y] and allowed[y, B]:
                feasible[n] = True
                break
    for d in range(doc_offsets.shape[0] - 1):
        if not feasible[doc_offsets[d + 1] - doc_offsets[d]]:
            return d
    return -1


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
            if top == NEG_INF:
                alpha[t, y] = NEG_INF
                continue
            acc = 0.0
            for k in range(hi - lo):
                acc += np.exp(buffer[k] - top)
            alpha[t, y] = top + np.log(acc) + scores[first + t, y]
    top = NEG_INF
    for y in range(T):
        if allowed[y, B]:
            v = alpha[n - 1, y] + transitions[y, B]
            buffer[y] = v
            if v > top:
                top = v
        else:
            buffer[y] = NEG_INF
    if top == NEG_INF:
        return NEG_INF
    acc = 0.0
    for y in range(T):
        acc += np.exp(buffer[y] - top)
    return top + np.log(acc)


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
            if top == NEG_INF:
                beta[t, a] = NEG_INF
                continue
            acc = 0.0
            for k in range(hi - lo):
                acc += np.exp(buffer[k] - top)
            beta[t, a] = top + np.log(acc)


@njit(cache=True)
def _charts(doc_offsets, T):
    """Scratch for one document at a time: alpha (m, T), beta (m, T) and a
    buffer (T,), m the longest document (at least 1)."""
    m = max(max_doc_length(doc_offsets), 1)
    return np.empty((m, T)), np.empty((m, T)), np.empty(T)


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _forward_weights(scores, first, n, transitions, allowed, pred_ptr, pred, exp_transitions, shift, fast, alpha,
                     weights, shifted):
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
        z = _forward_weights(scores, first, n, transitions, allowed, pred_ptr, pred, exp_transitions, shift, fast,
                             alpha, weights, shifted)
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


# ---------------------------------------------------------------------------
# Input checks and public operations
# ---------------------------------------------------------------------------


def _check(scores, doc_offsets, transitions, allowed):
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    transitions = np.ascontiguousarray(transitions, dtype=np.float64)
    allowed = np.asarray(allowed)
    if scores.ndim != 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must have shape (n_tokens, n_tags >= 1), not {scores.shape}")
    T = scores.shape[1]
    if transitions.shape != (T + 1, T + 1):
        raise ValueError(f"transitions must have shape (n_tags + 1, n_tags + 1) = {(T + 1, T + 1)}, not {transitions.shape}")
    if allowed.shape != (T + 1, T + 1):
        raise ValueError(f"allowed must have shape (n_tags + 1, n_tags + 1) = {(T + 1, T + 1)}, not {allowed.shape}")
    if allowed.dtype != np.bool_:
        raise ValueError(f"allowed must be a boolean matrix, not {allowed.dtype}")
    allowed = np.ascontiguousarray(allowed)
    doc_offsets = check_doc_offsets(doc_offsets, scores.shape[0])
    if not (np.isfinite(scores).all() and np.isfinite(transitions).all()):
        raise ValueError("scores and transitions must be finite (the model produced NaN or inf; forbid transitions with `allowed`)")
    d = _first_infeasible_doc(doc_offsets, allowed)
    if d >= 0:
        n = int(doc_offsets[d + 1] - doc_offsets[d])
        raise ValueError(f"document {d} ({n} tokens) has no tag sequence whose transitions are all allowed")
    return scores, doc_offsets, transitions, allowed


def log_partition(scores, doc_offsets, transitions, allowed) -> np.ndarray:
    """log Z of each document over its allowed tag sequences. Returns (D,).
    Scores and transitions out of range are refused (``score_range``)."""
    args = _check(scores, doc_offsets, transitions, allowed)
    check_scores("linear_chain.log_partition", args[1], args[0], args[2])
    return _log_partition(*args)


def marginals(scores, doc_offsets, transitions, allowed) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward-backward: (log Z (D,), tag marginals (N, T), expected transition
    counts summed over the batch (T + 1, T + 1), boundary row and column
    included). They are the gradient of sum(log Z) with respect to ``scores``
    and ``transitions``. Scores and transitions out of range are refused
    (``score_range``)."""
    args = _check(scores, doc_offsets, transitions, allowed)
    check_scores("linear_chain.marginals", args[1], args[0], args[2])
    return _marginals(*args)


def viterbi(scores, doc_offsets, transitions, allowed) -> Tuple[np.ndarray, np.ndarray]:
    """MAP tag sequence: (best score (D,), tags (N,) int64). The sequence uses
    allowed transitions only. Ties are broken towards lower tag indices,
    deciding from the last token backwards (all-zero scores give all O).
    Not bounded by ``score_range``: a maximum of float64 sums, right at any magnitude."""
    return _viterbi(*_check(scores, doc_offsets, transitions, allowed))


def transition_counts(tags, doc_offsets, n_tags: int) -> np.ndarray:
    """Counts (T + 1, T + 1) of the transitions of the tag sequence ``tags``
    (N,), start and end of every non-empty document included, summed over the
    batch. score(y) = scores[arange(N), y].sum() + (counts * transitions).sum()."""
    T = int(n_tags)
    if T < 1:
        raise ValueError(f"n_tags must be >= 1, not {n_tags}")
    tags = _as_tags(tags, T)
    doc_offsets = check_doc_offsets(doc_offsets, tags.shape[0])
    a, b = _pairs(tags, doc_offsets, T)
    return np.bincount(a * (T + 1) + b, minlength=(T + 1) ** 2).reshape(T + 1, T + 1).astype(np.float64)
