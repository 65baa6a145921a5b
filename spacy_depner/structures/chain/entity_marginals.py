"""Entity marginals and posterior (minimum Bayes risk) decoding of the linear
chain of ``linear_chain`` over the BIO / BILOU tags of ``tag_schemes``.

The marginal of an entity <first, last, label k> is the probability that the
tag sequence spells exactly that entity (as ``tags_to_spans`` reads it): with
the tags of ``tag_schemes.span_tags`` [unit, begin, inside, last], a unit tag
at first (length 1), or begin at first, inside on first+1..last-1 and last at
last; then a next tag other than inside (or the document end). From the
forward and backward log-sums alpha, beta of ``linear_chain`` it is

    exp(alpha[first, begin] + sum of the path's transitions and tag scores
        + closing(last) - log Z),

closing(t) the log-sum of the completions after position t whose next tag
is not inside. An entity of k on first..last' (last' > last) needs begin at
first and inside on first+1..last, of probability exp(alpha + path +
beta[last, inside] - log Z): a bound that only falls as last grows, so the
enumeration of a start stops when it is at most ``floor``.

Inputs as ``linear_chain`` (scores (N, T), doc_offsets (D + 1,), transitions
(T + 1, T + 1)) and the ``scheme``, whose ``allowed_transitions`` the chain
uses (T = 1 + 2K or 1 + 4K tags). Operations: ``span_marginals`` (every
entity whose marginal exceeds ``floor``) and ``entity_marginals`` (of given
entities); the chain's ``posterior_decode`` (``structure``) selects from the
first. Each document costs
O(n T^2) for forward-backward plus O(1) per entity enumerated.
"""

from typing import Tuple

import numpy as np
from numba import njit

from ..score_range import check_scores
from ._linear_chain import _check
from .kernels import _charts, _forward_backward, _sparse
from .tag_schemes import SCHEMES, allowed_transitions, span_tags

__all__ = ["span_marginals", "entity_marginals"]

NEG_INF = -np.inf


@njit(cache=True)
def _closing(scores, first, n, t, y, excluded, transitions, allowed, succ_ptr, succ, beta):
    """log-sum of the completions after tag y at position t whose next tag
    is not ``excluded`` (the end transition at the last position)."""
    B = scores.shape[1]
    if t == n - 1:
        return transitions[y, B] if allowed[y, B] else NEG_INF
    top = NEG_INF
    for k in range(succ_ptr[y], succ_ptr[y + 1]):
        b = succ[k]
        if b != excluded:
            top = max(top, transitions[y, b] + scores[first + t + 1, b] + beta[t + 1, b])
    if top == NEG_INF:
        return NEG_INF
    acc = 0.0
    for k in range(succ_ptr[y], succ_ptr[y + 1]):
        b = succ[k]
        if b != excluded:
            acc += np.exp(transitions[y, b] + scores[first + t + 1, b] + beta[t + 1, b] - top)
    return top + np.log(acc)


@njit(cache=True)
def _entity_log_weight(scores, first, n, i, j, roles, k, transitions, allowed, succ_ptr, succ, alpha, beta):
    """log of the unnormalised probability of the entity of label k on
    positions i..j of the document starting at ``first``."""
    unit, begin, inside, last = roles[k, 0], roles[k, 1], roles[k, 2], roles[k, 3]
    if i == j:
        return alpha[i, unit] + _closing(scores, first, n, i, unit, inside, transitions, allowed, succ_ptr, succ, beta)
    w = alpha[i, begin]
    prev = begin
    for t in range(i + 1, j):
        if not allowed[prev, inside]:
            return NEG_INF
        w += transitions[prev, inside] + scores[first + t, inside]
        prev = inside
    if not allowed[prev, last]:
        return NEG_INF
    w += transitions[prev, last] + scores[first + j, last]
    return w + _closing(scores, first, n, j, last, inside, transitions, allowed, succ_ptr, succ, beta)


@njit(cache=True)
def _grow(spans, labels, values, m):
    """The output buffers, doubled when full at row m."""
    if m < spans.shape[0]:
        return spans, labels, values
    bigger = np.empty((2 * spans.shape[0], 2), dtype=np.int64)
    more_labels = np.empty(2 * spans.shape[0], dtype=np.int64)
    more_values = np.empty(2 * spans.shape[0])
    for r in range(m):  # element by element: an array-to-slice copy compiles numba's shape-error formatting
        bigger[r, 0] = spans[r, 0]
        bigger[r, 1] = spans[r, 1]
        more_labels[r] = labels[r]
        more_values[r] = values[r]
    return bigger, more_labels, more_values


@njit(cache=True)
def _span_marginals(scores, doc_offsets, transitions, allowed, roles, floor):
    """Every entity of marginal > floor: spans (M, 2), labels (M,), marginals
    (M,), by document, then first token, label and last token."""
    sparse = _sparse(allowed)
    succ_ptr, succ = sparse[2], sparse[3]
    alpha, beta, buffer = _charts(doc_offsets, scores.shape[1])
    spans = np.empty((16, 2), dtype=np.int64)
    labels = np.empty(16, dtype=np.int64)
    values = np.empty(16)
    count = np.int64(0)  # not the literal 0: _grow would be compiled for Literal[int](0) and for int64
    for d in range(doc_offsets.shape[0] - 1):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        if n == 0:
            continue
        z = _forward_backward(scores, first, n, transitions, allowed, sparse, alpha, beta, buffer)
        for i in range(n):
            for k in range(roles.shape[0]):
                unit, begin, inside, last = roles[k, 0], roles[k, 1], roles[k, 2], roles[k, 3]
                p = np.exp(
                    alpha[i, unit]
                    + _closing(scores, first, n, i, unit, inside, transitions, allowed, succ_ptr, succ, beta)
                    - z
                )
                if p > floor:
                    spans, labels, values = _grow(spans, labels, values, count)
                    spans[count, 0], spans[count, 1], labels[count], values[count] = first + i, first + i, k, p
                    count += 1
                w = alpha[i, begin]
                if np.exp(w + beta[i, begin] - z) <= floor:  # bounds every longer entity from i
                    continue
                prev = begin
                for j in range(i + 1, n):
                    if allowed[prev, last]:
                        close = _closing(scores, first, n, j, last, inside, transitions, allowed, succ_ptr, succ, beta)
                        p = np.exp(w + transitions[prev, last] + scores[first + j, last] + close - z)
                        if p > floor:
                            spans, labels, values = _grow(spans, labels, values, count)
                            spans[count, 0], spans[count, 1], labels[count], values[count] = first + i, first + j, k, p
                            count += 1
                    if not allowed[prev, inside]:
                        break
                    w += transitions[prev, inside] + scores[first + j, inside]
                    prev = inside
                    if np.exp(w + beta[j, inside] - z) <= floor:
                        break
    return spans[:count], labels[:count], values[:count]


@njit(cache=True)
def _entity_marginals(scores, doc_offsets, transitions, allowed, roles, spans, labels, entity_offsets):
    """The marginal of each entity; the entities of document d are rows
    entity_offsets[d]:entity_offsets[d + 1]."""
    sparse = _sparse(allowed)
    succ_ptr, succ = sparse[2], sparse[3]
    alpha, beta, buffer = _charts(doc_offsets, scores.shape[1])
    values = np.zeros(spans.shape[0])
    for d in range(doc_offsets.shape[0] - 1):
        if entity_offsets[d] == entity_offsets[d + 1]:
            continue
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        z = _forward_backward(scores, first, n, transitions, allowed, sparse, alpha, beta, buffer)
        for e in range(entity_offsets[d], entity_offsets[d + 1]):
            values[e] = np.exp(
                _entity_log_weight(
                    scores,
                    first,
                    n,
                    spans[e, 0] - first,
                    spans[e, 1] - first,
                    roles,
                    labels[e],
                    transitions,
                    allowed,
                    succ_ptr,
                    succ,
                    alpha,
                    beta,
                )
                - z
            )
    return values


def _chain(name, scores, doc_offsets, transitions, scheme):
    """The checked chain arguments (``linear_chain`` checks, the score range),
    the scheme's allowed transitions and its entity tags (K, 4)."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tagging scheme {scheme!r}: expected one of {sorted(SCHEMES)}")
    scores = np.asarray(scores)
    width = len(SCHEMES[scheme])
    T = scores.shape[1] if scores.ndim == 2 else 0
    if T < 1 or (T - 1) % width:
        raise ValueError(
            f"scores must have 1 + {width} K tag columns for the {scheme} scheme, not shape {scores.shape}"
        )
    n_labels = (T - 1) // width
    scores, doc_offsets, transitions, allowed = _check(
        scores, doc_offsets, transitions, allowed_transitions(n_labels, scheme)
    )
    check_scores(f"entity_marginals.{name}", doc_offsets, scores, transitions)
    return scores, doc_offsets, transitions, allowed, span_tags(n_labels, scheme)


def span_marginals(
    scores, doc_offsets, transitions, scheme: str, floor: float = -1.0
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every entity whose marginal exceeds ``floor`` (the default -1: every
    entity of every document, O(n^2 K) of them): (spans (M, 2) first and last
    token in batch coordinates, labels (M,) from 0, marginals (M,)), sorted by
    document, first token, label, last token. Scores out of range are
    refused (``score_range``)."""
    *args, roles = _chain("span_marginals", scores, doc_offsets, transitions, scheme)
    if not np.isfinite(floor):
        raise ValueError(f"floor must be a finite number, not {floor!r}")
    return _span_marginals(*args, roles, float(floor))


def entity_marginals(scores, doc_offsets, transitions, scheme: str, spans, labels) -> np.ndarray:
    """(M,) the marginal of each entity ``spans`` (M, 2) (first, last token in
    batch coordinates, inside one document) with ``labels`` (M,) from 0, e.g.
    the Viterbi entities of ``tags_to_spans``."""
    *args, roles = _chain("entity_marginals", scores, doc_offsets, transitions, scheme)
    doc_offsets = args[1]
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    doc = np.searchsorted(doc_offsets, spans[:, 0], side="right") - 1
    if (
        labels.shape != (spans.shape[0],)
        or np.any(labels < 0)
        or np.any(labels >= roles.shape[0])
        or np.any(spans[:, 0] > spans[:, 1])
        or np.any(spans[:, 0] < 0)
        or np.any(doc >= doc_offsets.shape[0] - 1)
        or np.any(spans[:, 1] >= doc_offsets[np.minimum(doc + 1, doc_offsets.shape[0] - 1)])
    ):
        raise ValueError(
            f"entities must be (M, 2) first <= last inside one document with (M,) labels in 0..{roles.shape[0] - 1}"
        )
    order = np.argsort(doc, kind="stable")
    entity_offsets = np.searchsorted(doc[order], np.arange(doc_offsets.shape[0]), side="left").astype(np.int64)
    values = np.empty(spans.shape[0])
    values[order] = _entity_marginals(
        *args, roles, np.ascontiguousarray(spans[order]), np.ascontiguousarray(labels[order]), entity_offsets
    )
    return values
