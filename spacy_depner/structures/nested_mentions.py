"""Span-based (nested) mention CRFs: semi-Markov, CYK-like and Corro's O(n^2).

Corro (2023), "A Dynamic Programming Algorithm for Span-based Nested
Named-entity Recognition in O(n^2)" (ACL 2023): the deduction systems of its
sections 4.1 (semi-Markov, Sarawagi & Cohen 2004), 4.2 (CYK-like) and 5 (the
quadratic algorithm), run in the log semiring (log Z, and an outside pass for
the marginals) and in the max semiring (MAP, with a back-trace). Pure
numpy/numba, no spaCy.

Mentions and analyses. A document has n words; a mention is a labelled span
<t, i, j> (fenceposts 0 <= i < j <= n, words i..j-1, label t in 0..T-1). There
is no O label: a word outside every mention costs nothing, and the empty
analysis (no mention) has weight exp(0) in every space. The weight of an
analysis is the sum of its mentions' scores. Following the paper (sec. 3.1),
<t', i', j'> is *inside* <t, i, j> when i < i' < j' <= j or i <= i' < j' < j
(strict containment), the *children* of a mention are the mentions inside it
that are not inside another mention inside it, and the three spaces are:

* ``"semi_markov"`` (space 1, rules (a), (b)): sets of pairwise disjoint
  mentions.
* ``"cyk"`` (space 2, rules (c)-(i)): sets of mentions whose spans are
  pairwise disjoint or strictly nested (a laminar family), with at most one
  mention (so one label) per span. Two labels on one span are excluded: the
  paper's Table 5 note says no algorithm covers mentions "with exactly the
  same span", and no rule builds [<->, i, j] from an item that already holds
  a mention on (i, j): (c) needs i < k, (e) and (f) a strictly shorter left
  child, so a mention's only child may share its left border or its right
  border, never both. Children of length one are unlimited.
* ``"quadratic"`` (space 3, rules (d), (f)-(i), (j)-(p)): the ``cyk``
  analyses in which every mention has at most one child longer than one word
  (its length-one children are unlimited; the long child may share the left
  border, the right border or neither). First-level mentions (not inside any
  other) are not restricted: rules (h), (i) chain any number of them.

Batch layout (dense, per document). For D documents of n_d words, document d
has n_d (n_d + 1) / 2 spans, listed as rows span_offsets[d]:span_offsets[d+1]
of ``scores``, sorted by (last word, first word): the span of words
first..last (inclusive; fenceposts i = first, j = last + 1) is row
``span_offsets[d] + last * (last + 1) / 2 + first``. This is the order of
``candidate_spans.all_spans(doc_offsets, None)`` (and of ``dense_spans``), so
the batch is sorted by (last, first) and ``candidate_spans.span_index`` or
``dense_rows`` map spans (e.g. a parser's DGM valid spans, or gold mentions)
to rows. Memory is O(sum n_d^2 T) for the scores; the charts are O(n W) per
document, W the longest allowed span.

Inputs:
    scores (S, T) float: the score of each span for each label, S =
        dense_span_offsets(doc_offsets)[-1]. Must be finite everywhere (also
        on excluded spans, whose values are ignored). float32 scores (what a
        thinc model produces) are read as they are, other real types as
        float64; the charts and every sum are float64 either way.
    doc_offsets (D + 1,) int: words of document d are
        doc_offsets[d]:doc_offsets[d+1] (starts at 0, never decreases; empty
        documents allowed: they have the empty analysis only).
    structure: "semi_markov", "cyk" or "quadratic".
    max_length: None, or an int >= 1: longer spans cannot be mentions.
    mask: None, or (S,) bool: spans whose entry is False cannot be mentions
        (e.g. keep the DGM valid spans of the parser's trees).
Excluded spans (masked or too long) are removed from the deduction system:
no rule ever reads their items, so they contribute exactly nothing, their
marginals are exactly 0 and Viterbi never picks them.

Operations: ``log_partition`` (log Z (D,)), ``marginals`` (log Z and the
mention marginals (S, T), the exact gradient of sum(log Z) with respect to
``scores``, by an outside pass over the same rules), ``viterbi`` (the MAP
score (D,) and the label of each span (S,) int64, -1 for no mention).

Complexity per document, W <= n the longest allowed span length: semi_markov
O(n W T); cyk O(n W^2 + n W T), i.e. O(n^3 T) unbounded; quadratic
O(n W T), i.e. O(n^2 T): every quadratic rule has at most two free positions.

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
from typing import Optional, Tuple

import numpy as np
from numba import njit

from .batch_layout import logaddexp, check_doc_offsets, max_doc_length

NEG_INF = -np.inf
STRUCTURES = ("semi_markov", "cyk", "quadratic")
SEMI_MARKOV, CYK, QUADRATIC = 0, 1, 2


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
            if use_max:
                mention[i, w] = top
            else:
                acc = 0.0
                for t in range(T):
                    acc += np.exp(scores[r, t] - top)
                mention[i, w] = top + np.log(acc)


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
# Inside passes (log or max semiring)
# ---------------------------------------------------------------------------


@njit(cache=True)
def _inside_semi_markov(n, W, mention, prefix, use_max):
    """Semi-Markov (Corro 2023, sec. 4.1), rules (a) and (b):

        (a) [->, i] [t, i, j] => [->, j]        (b) [->, j - 1] => [->, j]

    prefix[j] = [->, j], axiom prefix[0] = 0; goal prefix[n]. O(n W T)."""
    prefix[0] = 0.0
    for j in range(1, n + 1):
        if use_max:
            prefix[j] = max(prefix[j - 1], _best_extension(j, W, mention, prefix))  # (b), (a)
            continue
        acc = prefix[j - 1]  # (b)
        for i in range(max(0, j - W), j):
            if mention[i, j - i] > NEG_INF:
                acc = _plus(acc, prefix[i] + mention[i, j - i], use_max)  # (a)
        prefix[j] = acc
    return prefix[n]


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


@njit(cache=True)
def _inside_cyk(n, W, mention, part, full, ready, prefix, use_max):
    """CYK-like algorithm (Corro 2023, sec. 4.2), rules (c)-(i):

        (c) [|->, i, k] [<->, k, j] => [|->, i, j]   (i < k)
        (d) [|->, i, j - 1] => [|->, i, j]
        (e) [<->, i, k] [<->, k, j] => [|->, i, j]
        (f) [<->, i, j - 1] => [|->, i, j]
        (g) [|->, i, j] [t, i, j] => [<->, i, j]     (i < j)
        (h), (i): first-level mentions, as in ``_first_level``.

    With ready[i, k] = part (+) full at (i, k), k > i: part[i, j] = ready[i,
    j - 1] ((d), (f)) (+) sum_{i<k<j} ready[i, k] full[k, j] ((c), (e)); axiom
    part[i, i] = 0, so part[i, i + 1] = 0 (rule (d) only). Columns j ascend,
    starts i descend, so every antecedent is ready. O(n W^2 + n W T)."""
    prefix[0] = 0.0
    for j in range(1, n + 1):
        for i in range(j - 1, max(0, j - W) - 1, -1):
            w = j - i
            if w == 1:
                p = 0.0  # (d) from the axiom [|->, i, i]
            else:
                p = ready[i, w - 1]  # (d) and (f)
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:
                        p = _plus(p, ready[i, k - i] + full[k, j - k], use_max)  # (c) and (e)
            _close_mention(i, w, p, mention, part, full, ready, use_max)
        _first_level(j, W, mention, full, prefix, use_max)
    return prefix[n]


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


@njit(cache=True)
def _inside_quadratic(n, W, mention, part, full, ready, left, unit, prefix, use_max):
    """Corro's O(n^2) algorithm (Corro 2023, sec. 5), rules (d), (f)-(i), (j)-(p):

        (d) [|->, i, j - 1] => [|->, i, j]
        (j) [|->, i, j - 1] [<->, j - 1, j] => [|->, i, j]    (i < j - 1)
        (f) [<->, i, j - 1] => [|->, i, j]
        (k) [<->, i, j - 1] [<->, j - 1, j] => [|->, i, j]
        (l) [<->, i, i + 1] [<->, i + 1, j] => [<-|, i, j]    (i + 2 < j)
        (m) [<->, i + 1, j] => [<-|, i, j]                    (i + 2 < j)
        (n) [<-|, i + 1, j] => [<-|, i, j]
        (o) [<->, i, i + 1] [<-|, i + 1, j] => [<-|, i, j]
        (p) [<-|, i, j] => [|->, i, j]
        (g) [|->, i, j] [t, i, j] => [<->, i, j]; (h), (i) as in ``_first_level``.

    With unit[j] = 1 (+) full[j - 1, j] (gap or one-word mention at word j - 1):
    left[i, j] = unit[i + 1] (full[i + 1, j] (+) left[i + 1, j]) for j - i >= 3
    ((l)-(o); left[i + 1, j] exists for j - i - 1 >= 3 only), and for j - i >= 2
    part[i, j] = ready[i, j - 1] unit[j] ((d), (j), (f), (k)) (+) left[i, j] ((p)).
    O(1) per item: O(n W T).

    Items are visited by width (w = j - i ascending), then start: every
    antecedent of an item is narrower, so the items of one width are
    independent of each other and the loop has no carried dependency; rules
    (h), (i) read the finished chart afterwards."""
    for i in range(n):  # width 1: rule (d) from the axiom [|->, i, i]; (g)
        left[i, 1] = NEG_INF
        _close_mention(i, 1, 0.0, mention, part, full, ready, use_max)
        unit[i + 1] = _plus(0.0, full[i, 1], use_max) if mention[i, 1] > NEG_INF else 0.0
    for w in range(2, W + 1):
        for i in range(n - w + 1):
            j = i + w
            q = NEG_INF
            if w >= 3:
                y = full[i + 1, w - 1] if mention[i + 1, w - 1] > NEG_INF else NEG_INF  # (l), (m)
                if w - 1 >= 3:
                    y = _plus(y, left[i + 1, w - 1], use_max)  # (n), (o)
                q = unit[i + 1] + y
            left[i, w] = q
            p = _plus(ready[i, w - 1] + unit[j], q, use_max)  # (d), (j), (f), (k); (p)
            _close_mention(i, w, p, mention, part, full, ready, use_max)
    prefix[0] = 0.0
    for j in range(1, n + 1):
        _first_level(j, W, mention, full, prefix, use_max)
    return prefix[n]


@njit(cache=True)
def _inside(code, n, W, mention, part, full, ready, left, unit, prefix, use_max):
    """Dispatch to the inside pass of the structure ``code``; returns the goal [->, n]."""
    if code == SEMI_MARKOV:
        return _inside_semi_markov(n, W, mention, prefix, use_max)
    if code == CYK:
        return _inside_cyk(n, W, mention, part, full, ready, prefix, use_max)
    return _inside_quadratic(n, W, mention, part, full, ready, left, unit, prefix, use_max)


# ---------------------------------------------------------------------------
# Outside passes (log semiring): marginals
# ---------------------------------------------------------------------------


@njit(cache=True)
def _outside_semi_markov(scores, row0, n, W, mention, prefix, out_prefix, log_z, marginals):
    """Outside of rules (a) and (b), in reverse order. The marginal of
    <t, i, j> is exp(prefix[i] + w_t + out_prefix[j] - log Z)."""
    T = scores.shape[1]
    out_prefix[: n + 1] = NEG_INF
    out_prefix[n] = 0.0
    for j in range(n, 0, -1):
        b = out_prefix[j]  # complete: [->, j] feeds only positions > j
        out_prefix[j - 1] = logaddexp(out_prefix[j - 1], b)  # (b)
        for i in range(max(0, j - W), j):
            if mention[i, j - i] > NEG_INF:
                r = _row(row0, i, j)
                for t in range(T):
                    marginals[r, t] = np.exp(prefix[i] + scores[r, t] + b - log_z)  # (a)
                    out_prefix[i] = logaddexp(out_prefix[i], b + scores[r, t])


@njit(cache=True, inline="always")
def _outside_first_level(j, W, mention, full, prefix, out_prefix, out_full):
    """Outside of rules (h) and (i) for the column j."""
    b = out_prefix[j]
    out_prefix[j - 1] = logaddexp(out_prefix[j - 1], b)  # (i)
    for i in range(max(0, j - W), j):
        if mention[i, j - i] > NEG_INF:  # (h)
            out_prefix[i] = logaddexp(out_prefix[i], b + full[i, j - i])
            out_full[i, j - i] = logaddexp(out_full[i, j - i], b + prefix[i])


@njit(cache=True, inline="always")
def _mention_marginals(scores, row0, i, j, part, of, log_z, marginals):
    """Rule (g): the marginal of <t, i, j> is exp(part + w_t + out(full) - log Z)."""
    r = _row(row0, i, j)
    for t in range(scores.shape[1]):
        marginals[r, t] = np.exp(part + scores[r, t] + of - log_z)


@njit(cache=True)
def _outside_cyk(scores, row0, n, W, mention, part, full, ready, prefix,
                 out_full, out_ready, out_prefix, log_z, marginals):
    """Outside of rules (c)-(i), visiting the items of ``_inside_cyk`` in
    reverse order (columns j descending, starts i ascending): when (i, j) is
    reached, every item it feeds has pushed its outside weight into it."""
    out_prefix[: n + 1] = NEG_INF
    out_prefix[n] = 0.0
    for i in range(n + 1):
        for w in range(W + 1):
            out_full[i, w] = NEG_INF
            out_ready[i, w] = NEG_INF
    for j in range(n, 0, -1):
        _outside_first_level(j, W, mention, full, prefix, out_prefix, out_full)  # (h), (i)
        for i in range(max(0, j - W), j):
            w = j - i
            op = out_ready[i, w]  # ready = part (+) full
            if mention[i, w] > NEG_INF:
                of = logaddexp(out_full[i, w], out_ready[i, w])
                _mention_marginals(scores, row0, i, j, part[i, w], of, log_z, marginals)
                op = logaddexp(op, of + mention[i, w])  # (g)
            if w >= 2 and op != NEG_INF:
                out_ready[i, w - 1] = logaddexp(out_ready[i, w - 1], op)  # (d), (f)
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:  # (c), (e)
                        out_ready[i, k - i] = logaddexp(out_ready[i, k - i], op + full[k, j - k])
                        out_full[k, j - k] = logaddexp(out_full[k, j - k], op + ready[i, k - i])


@njit(cache=True)
def _outside_quadratic(scores, row0, n, W, mention, part, full, ready, left, unit, prefix,
                       out_full, out_ready, out_left, out_unit, out_prefix, log_z, marginals):
    """Outside of rules (d), (f)-(i), (j)-(p), visiting the items of
    ``_inside_quadratic`` in reverse order (columns j descending, starts i
    ascending). unit[j] is read by part[i, j] (i < j - 1, visited before
    (j - 1, j)) and by left[j - 1, j'] (j' > j, earlier columns), so its
    outside weight is complete when full[j - 1, j] is reached."""
    out_prefix[: n + 1] = NEG_INF
    out_prefix[n] = 0.0
    out_unit[: n + 1] = NEG_INF
    for i in range(n + 1):
        for w in range(W + 1):
            out_full[i, w] = NEG_INF
            out_ready[i, w] = NEG_INF
            out_left[i, w] = NEG_INF
    for j in range(n, 0, -1):
        _outside_first_level(j, W, mention, full, prefix, out_prefix, out_full)  # (h), (i)
        for i in range(max(0, j - W), j):
            w = j - i
            op = out_ready[i, w]
            if mention[i, w] > NEG_INF:
                of = logaddexp(out_full[i, w], out_ready[i, w])
                if w == 1:
                    of = logaddexp(of, out_unit[j])  # unit[j] = 1 (+) full[j - 1, j]
                _mention_marginals(scores, row0, i, j, part[i, w], of, log_z, marginals)
                op = logaddexp(op, of + mention[i, w])  # (g)
            oq = out_left[i, w]
            if w >= 2 and op != NEG_INF:
                out_ready[i, w - 1] = logaddexp(out_ready[i, w - 1], op + unit[j])  # (d), (j), (f), (k)
                out_unit[j] = logaddexp(out_unit[j], op + ready[i, w - 1])
                oq = logaddexp(oq, op)  # (p)
            if w >= 3 and oq != NEG_INF:
                fl = full[i + 1, w - 1] if mention[i + 1, w - 1] > NEG_INF else NEG_INF
                y = fl
                if w - 1 >= 3:
                    y = logaddexp(y, left[i + 1, w - 1])
                out_unit[i + 1] = logaddexp(out_unit[i + 1], oq + y)  # (l), (o): the one-word part
                oy = oq + unit[i + 1]
                if mention[i + 1, w - 1] > NEG_INF:
                    out_full[i + 1, w - 1] = logaddexp(out_full[i + 1, w - 1], oy)  # (l), (m)
                if w - 1 >= 3:
                    out_left[i + 1, w - 1] = logaddexp(out_left[i + 1, w - 1], oy)  # (n), (o)


# ---------------------------------------------------------------------------
# Viterbi back-traces (max semiring)
# ---------------------------------------------------------------------------


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


@njit(cache=True)
def _expand_cyk(scores, row0, i, j, mention, part, full, ready, labels, stack, top):
    """Back-trace of part[i, j] (j - i >= 2) through rules (c)-(f)."""
    best = ready[i, j - i - 1]  # (d), (f)
    split = -1
    for k in range(i + 1, j):
        if mention[k, j - k] > NEG_INF:
            v = ready[i, k - i] + full[k, j - k]  # (c), (e)
            if v > best:
                best = v
                split = k
    if split < 0:
        return _expand_ready(scores, row0, i, j - 1, mention, part, full, labels, stack, top)
    top = _record(scores, row0, split, j, labels, stack, top)
    return _expand_ready(scores, row0, i, split, mention, part, full, labels, stack, top)


@njit(cache=True)
def _expand_quadratic(scores, row0, i, j, mention, part, full, ready, left, unit, labels, stack, top):
    """Back-trace of part[i, j] (j - i >= 2) through rules (d), (f), (j)-(p)."""
    w = j - i
    if w >= 3 and left[i, w] > ready[i, w - 1] + unit[j]:  # (p)
        while True:  # left[i, j] = unit[i + 1] (full[i + 1, j] (+) left[i + 1, j])
            if mention[i, 1] > NEG_INF and full[i, 1] > 0.0:  # (l), (o)
                top = _record(scores, row0, i, i + 1, labels, stack, top)
            fl = full[i + 1, w - 1] if mention[i + 1, w - 1] > NEG_INF else NEG_INF
            if w - 1 >= 3 and left[i + 1, w - 1] > fl:  # (n), (o)
                i += 1
                w -= 1
                continue
            return _record(scores, row0, i + 1, j, labels, stack, top)  # (l), (m)
    if mention[j - 1, 1] > NEG_INF and full[j - 1, 1] > 0.0:  # (j), (k)
        top = _record(scores, row0, j - 1, j, labels, stack, top)
    return _expand_ready(scores, row0, i, j - 1, mention, part, full, labels, stack, top)  # (d), (f) / (j), (k)


@njit(cache=True)
def _backtrack(code, scores, row0, n, W, mention, part, full, ready, left, unit, prefix, labels, stack):
    """Follow the max-semiring charts from the goal [->, n]: rules (a)/(b)
    (semi-Markov) or (h)/(i), then each mention's internal structure."""
    top = 0
    j = n
    while j > 0:
        if prefix[j] == prefix[j - 1]:  # (b) / (i) won (ties prefer no mention)
            j -= 1
            continue
        start = max(0, j - W)  # the first start that reaches the max by (a) / (h)
        while start < j - 1 and prefix[start] + (mention[start, j - start] if code == SEMI_MARKOV else full[start, j - start]) != prefix[j]:
            start += 1
        if code == SEMI_MARKOV:
            labels[_row(row0, start, j)] = _best_label(scores, _row(row0, start, j))
        else:
            top = _record(scores, row0, start, j, labels, stack, top)
        j = start
    while top > 0:
        top -= 1
        i = stack[top, 0]
        k = stack[top, 1]
        if code == CYK:
            top = _expand_cyk(scores, row0, i, k, mention, part, full, ready, labels, stack, top)
        else:
            top = _expand_quadratic(scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top)


# ---------------------------------------------------------------------------
# Batch drivers: one compiled call per batch
# ---------------------------------------------------------------------------


@njit(cache=True)
def _charts(doc_offsets, widths):
    """Charts for the longest document, stored [i, j - i] up to the widest
    allowed span of the batch: O(n W) memory, reused by every document."""
    m = max_doc_length(doc_offsets) + 1
    Wm = 1
    for d in range(widths.shape[0]):
        Wm = max(Wm, widths[d])
    mention = np.empty((Wm + 1, m)).T
    part = np.empty((Wm + 1, m)).T
    full = np.empty((Wm + 1, m)).T
    ready = np.empty((Wm + 1, m)).T
    left = np.empty((Wm + 1, m)).T
    unit = np.empty(m)
    prefix = np.empty(m)
    return mention, part, full, ready, left, unit, prefix


@njit(cache=True)
def _log_partition(code, scores, doc_offsets, span_offsets, mask, max_length):
    """log Z of every document (rules of ``code``'s inside pass)."""
    D = doc_offsets.shape[0] - 1
    widths = _widths(doc_offsets, span_offsets, mask, max_length)
    mention, part, full, ready, left, unit, prefix = _charts(doc_offsets, widths)
    log_z = np.zeros(D)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        W = widths[d]
        if W == 0:
            continue  # no allowed span: the empty analysis only
        _mention_axioms(scores, mask, span_offsets[d], n, W, False, mention)
        log_z[d] = _inside(code, n, W, mention, part, full, ready, left, unit, prefix, False)
    return log_z


@njit(cache=True)
def _marginals(code, scores, doc_offsets, span_offsets, mask, max_length):
    """log Z and mention marginals: inside pass, then its outside pass."""
    D = doc_offsets.shape[0] - 1
    widths = _widths(doc_offsets, span_offsets, mask, max_length)
    mention, part, full, ready, left, unit, prefix = _charts(doc_offsets, widths)
    out_full = np.empty(part.shape)
    out_ready = np.empty(part.shape)
    out_left = np.empty(part.shape)
    out_unit = np.empty(unit.shape)
    out_prefix = np.empty(prefix.shape)
    log_z = np.zeros(D)
    marginals = np.zeros(scores.shape)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        W = widths[d]
        if W == 0:
            continue
        row0 = span_offsets[d]
        _mention_axioms(scores, mask, row0, n, W, False, mention)
        z = _inside(code, n, W, mention, part, full, ready, left, unit, prefix, False)
        log_z[d] = z
        if code == SEMI_MARKOV:
            _outside_semi_markov(scores, row0, n, W, mention, prefix, out_prefix, z, marginals)
        elif code == CYK:
            _outside_cyk(scores, row0, n, W, mention, part, full, ready, prefix,
                         out_full, out_ready, out_prefix, z, marginals)
        else:
            _outside_quadratic(scores, row0, n, W, mention, part, full, ready, left, unit, prefix,
                               out_full, out_ready, out_left, out_unit, out_prefix, z, marginals)
    return log_z, marginals


@njit(cache=True)
def _viterbi(code, scores, doc_offsets, span_offsets, mask, max_length):
    """MAP score and labels: max-semiring inside pass, then the back-trace."""
    D = doc_offsets.shape[0] - 1
    widths = _widths(doc_offsets, span_offsets, mask, max_length)
    mention, part, full, ready, left, unit, prefix = _charts(doc_offsets, widths)
    stack = np.empty((prefix.shape[0] + 1, 2), dtype=np.int64)
    best = np.zeros(D)
    labels = np.full(scores.shape[0], -1, dtype=np.int64)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        W = widths[d]
        if W == 0:
            continue
        row0 = span_offsets[d]
        _mention_axioms(scores, mask, row0, n, W, True, mention)
        best[d] = _inside(code, n, W, mention, part, full, ready, left, unit, prefix, True)
        _backtrack(code, scores, row0, n, W, mention, part, full, ready, left, unit, prefix, labels, stack)
    return best, labels


# ---------------------------------------------------------------------------
# Layout helpers, input checks and public operations
# ---------------------------------------------------------------------------


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


def _check(scores, doc_offsets, structure, max_length, mask):
    if structure not in STRUCTURES:
        raise ValueError(f"unknown structure {structure!r}: expected one of {STRUCTURES}")
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must have shape (n_spans, n_labels >= 1), not {scores.shape}")
    if scores.dtype.kind not in "iuf":
        raise ValueError(f"scores must be real numbers, not {scores.dtype}")
    scores = np.ascontiguousarray(scores, dtype=np.float32 if scores.dtype == np.float32 else np.float64)
    doc_offsets = check_doc_offsets(doc_offsets)
    span_offsets = dense_span_offsets(doc_offsets)
    if scores.shape[0] != span_offsets[-1]:
        raise ValueError(
            f"scores must have one row per span of the dense layout: {int(span_offsets[-1])} rows for "
            f"documents of {np.diff(doc_offsets).tolist()} words, not {scores.shape[0]}"
        )
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite (the model produced NaN or inf; exclude spans with mask, not -inf)")
    if max_length is None:
        bound = -1
    elif isinstance(max_length, (bool, np.bool_)) or not isinstance(max_length, (int, np.integer)) or max_length < 1:
        raise ValueError(f"max_length must be None or an integer >= 1, not {max_length!r}")
    else:
        bound = int(max_length)
    if mask is None:
        mask = np.ones(scores.shape[0], dtype=np.bool_)
    else:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"mask must be boolean, not {mask.dtype}")
        if mask.shape != (scores.shape[0],):
            raise ValueError(f"mask must have shape ({scores.shape[0]},) like the rows of scores, not {mask.shape}")
        mask = np.ascontiguousarray(mask)
    return STRUCTURES.index(structure), scores, doc_offsets, span_offsets, mask, bound


def log_partition(scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None) -> np.ndarray:
    """log Z of each document over the analyses of ``structure``. Returns (D,)."""
    return _log_partition(*_check(scores, doc_offsets, structure, max_length, mask))


def marginals(scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None) -> Tuple[np.ndarray, np.ndarray]:
    """(log Z (D,), mention marginals (S, T)): the marginal of label t on a
    span is the probability that the analysis holds that mention, exactly
    the gradient of sum(log Z) with respect to ``scores`` (0 on excluded
    spans). Computed by the outside pass of the same deduction rules."""
    return _marginals(*_check(scores, doc_offsets, structure, max_length, mask))


def viterbi(scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None) -> Tuple[np.ndarray, np.ndarray]:
    """MAP analysis: (best score (D,), label of each span (S,) int64, -1 where
    the span is not a mention). Ties go to the first candidate tried (first
    label, no mention rather than a mention of score 0)."""
    return _viterbi(*_check(scores, doc_offsets, structure, max_length, mask))
