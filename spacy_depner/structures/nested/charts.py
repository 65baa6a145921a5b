"""Shared part of the nested mention CRFs of ``nested.mentions`` (Corro 2023):
the dense span layout, the mention axioms, the charts, and the rules that
several structures share.

* Layout: ``dense_span_offsets``, ``dense_spans``, ``dense_rows`` (public,
  re-exported by ``nested.mentions``, whose docstring describes the layout)
  and ``_row``, the row of a span.
* Axioms: ``_widths`` (the widest allowed span of each document),
  ``_mention_axioms`` (the label axioms [t, i, j] combined as in rule (g):
  log-sum or max over t; ``_mention_axioms_weights`` also keeps each
  label's share) and ``_best_label`` (the label that wins it).
* Rules of the CYK-like (sec. 4.2) and quadratic (sec. 5) systems alike:
  (g) [|->, i, j] [t, i, j] => [<->, i, j] (``_close_mention``), the
  first-level mentions (h) [->, i] [<->, i, j] => [->, j] and (i) [->, j -
  1] => [->, j] (``_first_level``; ``_first_level_log`` in the log semiring
  and its reverse mode in probabilities ``_reach_first_level``;
  ``_best_extension`` is the max of rule (h), and of rule (a) of the
  semi-Markov system), and the back-trace steps ``_record`` and
  ``_expand_ready``.
* Marginals: each system's marginals run its inside pass in the log
  semiring keeping the share of each term of each log-sum, then the
  reverse mode of the same rules in probabilities (the probability that
  the analysis uses each item flows back through the shares; one exp per
  term at most, no log): ``_log_add_weights``, ``_scale_labels``. Every
  space first runs its rules in scaled probabilities instead (``scaled``:
  exp(score) once per label, no exp or log per term), and this pass only for
  the documents whose scores leave that pass's range.
* ``_charts``: the chart buffers of a batch, reused by every document.

Charts (log weights), fenceposts, stored at [i, j - i]:
    prefix[j] = [->, j]; part[i, j] = [|->, i, j]; full[i, j] = [<->, i, j];
    left[i, j] = [<-|, i, j] (quadratic); mention[i, j] = the label axioms
    [t, i, j] combined by rule (g) (log-sum or max over t), -inf exactly
    where the span is excluded (scores are finite, so a span is allowed iff
    mention > -inf). Charts are column-major (i contiguous): the quadratic
    inside pass runs along widths. Two derived
    quantities merge rules with the same shape: ready[i, k] = part[i, k] (+)
    full[i, k] (k > i), the antecedent "[|->, i, k] or [<->, i, k]" of rules
    (c)/(e) and (d)/(f) (and (j)/(k) + (d)/(f) in the quadratic system), and
    unit[j] = 1 (+) full[j - 1, j], "word j - 1 is a gap or a one-word child".
"""

import numpy as np
from numba import njit

from ..shared import check_doc_offsets, logaddexp, max_doc_length

NEG_INF = -np.inf


# ---------------------------------------------------------------------------
# Semiring helpers
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _plus(a, b, use_max):
    """Semiring sum: max (Viterbi; ties keep ``a``) or log-sum-exp."""
    if use_max:
        return a if a >= b else b
    return logaddexp(a, b)


# ---------------------------------------------------------------------------
# Layout and mention axioms
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _row(row0, i, j):
    """Dense row of the span of fenceposts (i, j), i.e. words i..j-1."""
    return row0 + (j - 1) * j // 2 + i


def dense_span_offsets(doc_offsets) -> np.ndarray:
    """(D + 1,) int64: the spans (rows of ``scores``) of document d are
    span_offsets[d]:span_offsets[d+1], n_d (n_d + 1) / 2 of them."""
    doc_offsets = check_doc_offsets(doc_offsets)
    n = np.diff(doc_offsets)
    return np.concatenate([[0], np.cumsum(n * (n + 1) // 2)]).astype(np.int64)


def dense_spans(doc_offsets) -> np.ndarray:
    """(S, 2) int64: first and last word (inclusive, batch coordinates) of
    every row of the dense layout, sorted by document then (last, first);
    the same array as ``candidate_spans.all_spans(doc_offsets, None)``."""
    doc_offsets = check_doc_offsets(doc_offsets)
    pieces = [np.zeros((0, 2), dtype=np.int64)]
    for first, end in zip(doc_offsets[:-1].tolist(), doc_offsets[1:].tolist()):
        last, start = np.tril_indices(end - first)  # row-major: (last, first) with first <= last
        pieces.append(np.stack([start + first, last + first], axis=1).astype(np.int64))
    return np.concatenate(pieces)


def dense_rows(spans, doc_offsets) -> np.ndarray:
    """(M,) int64: the row of each span (M, 2) (first and last word,
    inclusive, batch coordinates) in the dense layout. A span that is
    reversed or not inside a single document is a ValueError."""
    doc_offsets = check_doc_offsets(doc_offsets)
    spans = np.asarray(spans)
    if spans.size == 0:
        return np.zeros(0, dtype=np.int64)
    if spans.ndim != 2 or spans.shape[1] != 2 or spans.dtype.kind not in "iu":
        raise ValueError(f"spans must be an integer array of shape (M, 2), not {spans.dtype} {spans.shape}")
    spans = spans.astype(np.int64)
    first, last = spans[:, 0], spans[:, 1]
    doc = np.searchsorted(doc_offsets, first, side="right") - 1
    doc_end = doc_offsets[np.minimum(doc + 1, doc_offsets.shape[0] - 1)]
    if np.any(first < 0) or np.any(first > last) or np.any(last >= doc_end) or np.any(doc >= doc_offsets.shape[0] - 1):
        raise ValueError("every span must have first <= last inside a single document")
    start = doc_offsets[doc]
    a, b = first - start, last - start
    return dense_span_offsets(doc_offsets)[doc] + b * (b + 1) // 2 + a


@njit(cache=True)
def _widths(doc_offsets, span_offsets, mask, max_length):
    """Per document, the length of its longest allowed span (0 if none)."""
    D = doc_offsets.shape[0] - 1
    widths = np.zeros(D, dtype=np.int64)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        row0 = span_offsets[d]
        top = n if max_length < 0 else min(n, max_length)
        W = 0
        for j in range(1, n + 1):
            for i in range(max(0, j - top), j - W):  # only spans longer than W can raise it
                if mask[_row(row0, i, j)]:
                    W = j - i
                    break
        widths[d] = W
    return widths


@njit(cache=True)
def _mention_axioms(scores, mask, row0, n, W, use_max, mention):
    """mention[i, w] for the spans (i, i + w), 1 <= w <= W (-inf where the span is excluded):
    the axioms [t, i, i + w] of every label, combined as in rule (g): log-sum
    (or max) over t. Spans longer than W are not allowed (W already accounts
    for max_length)."""
    T = scores.shape[1]
    for j in range(1, n + 1):
        for i in range(max(0, j - W), j):
            w = j - i
            r = _row(row0, i, j)
            ok = mask[r]
            if not ok:
                mention[i, w] = NEG_INF
                continue
            top = np.float64(scores[r, 0])  # float64 arithmetic for float32 scores too
            for t in range(1, T):
                top = max(top, np.float64(scores[r, t]))
            if top == NEG_INF:  # every label of the span forbidden: as an excluded span
                mention[i, w] = NEG_INF
                continue
            if use_max:
                mention[i, w] = top
            else:
                acc = 0.0
                for t in range(T):
                    acc += np.exp(scores[r, t] - top)
                mention[i, w] = top + np.log(acc)


@njit(cache=True)
def _mention_axioms_weights(scores, mask, row0, n, W, mention, weights):
    """``_mention_axioms`` in the log semiring that also keeps, in the rows
    of ``weights`` (S, T), the softmax of each allowed span's labels,
    exp(scores[r, t] - mention[i, w]): the share of each label in the
    span's marginal (0 on excluded spans, left as they are)."""
    T = scores.shape[1]
    for j in range(1, n + 1):
        for i in range(max(0, j - W), j):
            w = j - i
            r = _row(row0, i, j)
            if not mask[r]:
                mention[i, w] = NEG_INF
                continue
            top = np.float64(scores[r, 0])
            for t in range(1, T):
                top = max(top, np.float64(scores[r, t]))
            if top == NEG_INF:  # every label of the span forbidden: as an excluded span
                mention[i, w] = NEG_INF
                continue
            acc = 0.0
            for t in range(T):
                e = np.exp(scores[r, t] - top)
                weights[r, t] = e
                acc += e
            mention[i, w] = top + np.log(acc)
            inverse = 1.0 / acc
            for t in range(T):
                weights[r, t] *= inverse


@njit(cache=True, inline="always")
def _scale_labels(row0, i, j, probability, marginals):
    """The label marginals of span (i, j): its label softmax (kept by
    ``_mention_axioms_weights``) times the probability that it is a mention."""
    r = _row(row0, i, j)
    for t in range(marginals.shape[1]):
        marginals[r, t] *= probability


@njit(cache=True, inline="always")
def _softplus(x):
    """log(1 + exp(x)), -inf -> 0: what a mention adds to ready = part (+) full."""
    if x == NEG_INF:
        return 0.0
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True, inline="always")
def _log_add_weights(a, b):
    """(log(exp(a) + exp(b)), exp(a - it), exp(b - it)): the log-sum of two
    terms (-inf allowed) and the share of each, with one exp and one log
    (log(1 + e) rather than log1p: the log-sum is exact to one ulp of its
    larger term, all a log-space value needs)."""
    if b == NEG_INF:
        if a == NEG_INF:
            return NEG_INF, 0.0, 0.0
        return a, 1.0, 0.0
    if a == NEG_INF:
        return b, 0.0, 1.0
    if a >= b:
        e = np.exp(b - a)
        inverse = 1.0 / (1.0 + e)
        return a + np.log(1.0 + e), inverse, e * inverse
    e = np.exp(a - b)
    inverse = 1.0 / (1.0 + e)
    return b + np.log(1.0 + e), e * inverse, inverse


@njit(cache=True, inline="always")
def _first_level_log(j, W, mention, full, prefix, terms, skips, inverse):
    """Rules (h), (i) in the log semiring: one max, then a sum of exps, kept
    for the reverse mode: terms[i, j - i] (rule (h)) and skips[j] (rule
    (i)), and inverse[j], one over their sum."""
    top = prefix[j - 1]
    for i in range(max(0, j - W), j):
        if mention[i, j - i] > NEG_INF:
            top = max(top, prefix[i] + full[i, j - i])
    total = np.exp(prefix[j - 1] - top)
    skips[j] = total
    for i in range(max(0, j - W), j):
        if mention[i, j - i] > NEG_INF:
            e = np.exp(prefix[i] + full[i, j - i] - top)
            terms[i, j - i] = e
            total += e
    prefix[j] = top + np.log(total)
    inverse[j] = 1.0 / total


@njit(cache=True, inline="always")
def _reach_first_level(j, W, mention, terms, skips, inverse, reach, reach_full):
    """Reverse mode of rules (h), (i) in probabilities: reach[j] (the
    probability that the first level passes fencepost j) flows to reach[j -
    1] and to the first-level mentions ending at j (reach_full), through the
    shares ``_first_level_log`` kept."""
    c = reach[j] * inverse[j]
    if c == 0.0:
        return
    reach[j - 1] += c * skips[j]
    for i in range(max(0, j - W), j):
        if mention[i, j - i] > NEG_INF:
            m = c * terms[i, j - i]
            reach[i] += m
            reach_full[i, j - i] += m


@njit(cache=True, inline="always")
def _best_label(scores, r):
    """The label of the axiom [t, i, j] that won rule (g) in the max semiring
    (first maximum, as ``_mention_axioms``)."""
    T = scores.shape[1]
    best = 0
    for t in range(1, T):
        if scores[r, t] > scores[r, best]:
            best = t
    return best


# ---------------------------------------------------------------------------
# Rules shared by the CYK-like and the quadratic systems: (g), (h), (i)
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _best_extension(j, W, chart, prefix):
    """max over i of prefix[i] + chart[i, j - i] (the best last segment of
    [->, j] by rule (a) or (h)), in four independent running maxima so that
    the loop is not one chain of dependent max operations; max is exact, so
    the value is the one of a left-to-right scan. Excluded spans hold -inf
    in ``mention`` and ``full``."""
    a0 = a1 = a2 = a3 = NEG_INF
    i = max(0, j - W)
    while i + 3 < j:
        a0 = max(a0, prefix[i] + chart[i, j - i])
        a1 = max(a1, prefix[i + 1] + chart[i + 1, j - i - 1])
        a2 = max(a2, prefix[i + 2] + chart[i + 2, j - i - 2])
        a3 = max(a3, prefix[i + 3] + chart[i + 3, j - i - 3])
        i += 4
    while i < j:
        a0 = max(a0, prefix[i] + chart[i, j - i])
        i += 1
    return max(max(a0, a1), max(a2, a3))


@njit(cache=True, inline="always")
def _first_level(j, W, mention, full, prefix, use_max):
    """Rules (h) [->, i] [<->, i, j] => [->, j] and (i) [->, j - 1] => [->, j]."""
    if use_max:
        prefix[j] = max(prefix[j - 1], _best_extension(j, W, full, prefix))
        return
    acc = prefix[j - 1]  # (i)
    for i in range(max(0, j - W), j):
        if mention[i, j - i] > NEG_INF:
            acc = _plus(acc, prefix[i] + full[i, j - i], use_max)  # (h)
    prefix[j] = acc


@njit(cache=True, inline="always")
def _close_mention(i, w, p, mention, part, full, ready, use_max):
    """Rule (g): [|->, i, j] [t, i, j] => [<->, i, j] for the span of width w
    at i, whose partial analysis (inside weight p) is complete; ``ready`` is
    the span as a left antecedent: with or without the mention."""
    part[i, w] = p
    if mention[i, w] > NEG_INF:
        f = p + mention[i, w]
        full[i, w] = f
        ready[i, w] = _plus(p, f, use_max)
    else:
        full[i, w] = NEG_INF
        ready[i, w] = p


@njit(cache=True, inline="always")
def _record(scores, row0, i, j, labels, stack, top):
    """Mark the mention on (i, j) with its best label; push its [|->, i, j]
    for expansion when it may have children (j - i >= 2)."""
    r = _row(row0, i, j)
    labels[r] = _best_label(scores, r)
    if j - i >= 2:
        stack[top, 0] = i
        stack[top, 1] = j
        top += 1
    return top


@njit(cache=True, inline="always")
def _expand_ready(scores, row0, i, k, mention, part, full, labels, stack, top):
    """ready[i, k] = part (+) full: a mention on (i, k) iff full won the max."""
    w = k - i
    if mention[i, w] > NEG_INF and full[i, w] > part[i, w]:
        return _record(scores, row0, i, k, labels, stack, top)
    if w >= 2:
        stack[top, 0] = i
        stack[top, 1] = k
        top += 1
    return top


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------


@njit(cache=True)
def _chart_shape(doc_offsets, widths):
    """(rows, columns) of the charts: the longest document's words + 1, the
    widest allowed span of the batch + 1."""
    m = max_doc_length(doc_offsets) + 1
    Wm = 1
    for d in range(widths.shape[0]):
        Wm = max(Wm, widths[d])
    return m, Wm + 1


@njit(cache=True)
def _charts(doc_offsets, widths):
    """Charts for the longest document, stored [i, j - i] up to the widest
    allowed span of the batch: O(n W) memory, reused by every document."""
    m, columns = _chart_shape(doc_offsets, widths)
    mention = np.empty((columns, m)).T
    part = np.empty((columns, m)).T
    full = np.empty((columns, m)).T
    ready = np.empty((columns, m)).T
    left = np.empty((columns, m)).T
    unit = np.empty(m)
    prefix = np.empty(m)
    return mention, part, full, ready, left, unit, prefix
