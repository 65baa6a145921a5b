"""Corro's O(n^2) structure of ``nested.mentions`` (Corro 2023, sec. 5): the
CYK-like analyses in which every mention has at most one child longer than
one word (space 3), built by the rules

    (d) [|->, i, j - 1] => [|->, i, j]
    (j) [|->, i, j - 1] [<->, j - 1, j] => [|->, i, j]    (i < j - 1)
    (f) [<->, i, j - 1] => [|->, i, j]
    (k) [<->, i, j - 1] [<->, j - 1, j] => [|->, i, j]
    (l) [<->, i, i + 1] [<->, i + 1, j] => [<-|, i, j]    (i + 2 < j)
    (m) [<->, i + 1, j] => [<-|, i, j]                    (i + 2 < j)
    (n) [<-|, i + 1, j] => [<-|, i, j]
    (o) [<->, i, i + 1] [<-|, i + 1, j] => [<-|, i, j]
    (p) [<-|, i, j] => [|->, i, j]

and (g)-(i) as in ``charts``: the inside pass (log or max semiring),
its reverse mode in probabilities (mention marginals, ``_marginals_quadratic``) and the back-trace of [|->, i, j].
Every rule has at most two free positions: O(n W T) per document, O(n^2 T)
unbounded.

The marginals run first in scaled probabilities (``_marginals_scaled``):
the same rules with products and sums instead of log-sums, each column of
the chart (the items ending at fencepost j) divided by the first level's
growth at j, so that every item lies in [0, 1] and the goal weighs 1; its
reverse mode is plain differentiation of those products and sums. That is
exp(score) once per label and one log per word, against T + 4 exps and
four logs per span in the log semiring (T labels), and it is exact to float64 rounding
while no weight exceeds ``HUGE`` and no item that matters leaves the normal
float64 range (every part[i, j] at least ``scaled.TINY``). A document outside
that range (scores of hundreds) goes to the log-space ``_marginals_quadratic``.
The pieces that the three spaces' scaled passes share are in ``scaled``.
"""

from numba import njit

from .charts import (
    NEG_INF,
    _close_mention,
    _expand_ready,
    _first_level,
    _first_level_log,
    _log_add_weights,
    _plus,
    _reach_first_level,
    _record,
    _scale_labels,
)
from .scaled import (
    _clear_adjoints,
    _close_column,
    _first_level_outside,
    _label_marginals,
    _mention_outside,
    _mention_weights,
    _open_column,
)


@njit(cache=True)
def _inside_quadratic(n, W, mention, part, full, ready, left, unit, prefix, use_max):
    """Corro's O(n^2) algorithm (Corro 2023, sec. 5), rules (d), (f)-(i), (j)-(p)
    of the module docstring.

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
def _marginals_quadratic(
    n,
    W,
    row0,
    mention,
    part,
    full,
    ready,
    left,
    unit,
    prefix,
    first_level,
    shares,
    reach_full,
    reach_ready,
    reach_left,
    reach_unit,
    reach,
    marginals,
):
    """Mention marginals of the quadratic system without log-space sums in
    the outside pass: the inside pass of ``_inside_quadratic`` in the log
    semiring, each two-term log-sum keeping the share of each term
    (``_log_add_weights``) in ``shares`` (6 charts: ready = part (+) full,
    part = ready unit (+) left, left = unit (full (+) left)), then its
    reverse mode in probabilities: reach_* is the probability that the
    analysis uses the item, which flows back through the shares with no
    exp or log. ``marginals`` holds the label softmax of each span
    (``_mention_axioms_weights``) and leaves with the mention marginals.
    ``first_level``: the shares of rules (h), (i) (``_first_level_log``).
    Returns log Z = prefix[n]."""
    terms, skips, inverse = first_level
    ready_part, ready_full, part_ready, part_left, left_full, left_left = shares
    for i in range(n):  # width 1: rule (d) from the axiom; (g); unit[i + 1] = 1 (+) full[i, i + 1] = ready[i, 1]
        left[i, 1] = NEG_INF
        part[i, 1] = 0.0
        full[i, 1] = mention[i, 1]
        ready[i, 1], ready_part[i, 1], ready_full[i, 1] = _log_add_weights(0.0, mention[i, 1])
        unit[i + 1] = ready[i, 1]
    for w in range(2, W + 1):
        for i in range(n - w + 1):
            j = i + w
            q = NEG_INF
            if w >= 3:  # (l)-(o)
                y, left_full[i, w], left_left[i, w] = _log_add_weights(full[i + 1, w - 1], left[i + 1, w - 1])
                q = unit[i + 1] + y
            left[i, w] = q
            p, part_ready[i, w], part_left[i, w] = _log_add_weights(
                ready[i, w - 1] + unit[j], q
            )  # (d), (j), (f), (k); (p)
            part[i, w] = p
            if mention[i, w] > NEG_INF:  # (g)
                full[i, w] = p + mention[i, w]
                ready[i, w], ready_part[i, w], ready_full[i, w] = _log_add_weights(p, full[i, w])
            else:
                full[i, w] = NEG_INF
                ready[i, w] = p
                ready_part[i, w] = 1.0
                ready_full[i, w] = 0.0
    prefix[0] = 0.0
    for j in range(1, n + 1):
        _first_level_log(j, W, mention, full, prefix, terms, skips, inverse)
    reach[: n + 1] = 0.0
    reach[n] = 1.0
    reach_unit[: n + 1] = 0.0
    for i in range(n + 1):
        for w in range(W + 1):
            reach_full[i, w] = 0.0
            reach_ready[i, w] = 0.0
            reach_left[i, w] = 0.0
    for j in range(n, 0, -1):
        _reach_first_level(j, W, mention, terms, skips, inverse, reach, reach_full)  # (h), (i)
    for w in range(W, 0, -1):  # every item an item feeds is wider (or first-level, done): widths descending
        for i in range(n - w + 1):
            j = i + w
            a = reach_ready[i, w]
            c = a * ready_part[i, w]
            if mention[i, w] > NEG_INF:
                f = reach_full[i, w] + a * ready_full[i, w]
                if w == 1:
                    f += reach_unit[j] * ready_full[i, 1]  # unit[j] = 1 (+) full[j - 1, j], complete here
                _scale_labels(row0, i, j, f, marginals)
                c += f  # (g)
            if w >= 2:
                g = c * part_ready[i, w]  # (d), (j), (f), (k)
                reach_ready[i, w - 1] += g
                reach_unit[j] += g
                o = reach_left[i, w] + c * part_left[i, w]  # (p)
                if w >= 3 and o != 0.0:  # (l)-(o)
                    reach_unit[i + 1] += o
                    reach_full[i + 1, w - 1] += o * left_full[i, w]
                    reach_left[i + 1, w - 1] += o * left_left[i, w]
    return prefix[n]


# ---------------------------------------------------------------------------
# Marginals in scaled probabilities (no log-sum per item; shared pieces in ``scaled``)
# ---------------------------------------------------------------------------


@njit(cache=True)
def _inside_scaled(n, W, weight, part, full, ready, left, scale):
    """The inside pass of ``_inside_quadratic`` in probabilities, column by
    column (fencepost j ascending, then width w ascending: every antecedent of
    an item (j - w, j) is in an earlier column or narrower in column j), each
    column scaled so that the first level [->, j] weighs 1 (``scaled``):
    item X[j, w] holds exp(X(j - w, j)) prod_{k = j - w + 1}^{j} scale[k].
    Charts [j, w] (row j contiguous): part, full = part weight, ready = part +
    full, left, all in [0, 1] (each is a sum of analyses of the words j -
    w..j - 1 that the first level also counts); unit[j] = ready[j, 1].

    Returns (log Z, ok): ok is False unless every part lies in [TINY, 2]
    (``scaled._close_column``): then the caller runs the log-space pass."""
    log_z = 0.0
    for j in range(1, n + 1):
        top = min(W, j)
        total = _open_column(j, weight, part, full)  # width 1: (d) from the axiom, (g); (i), (h)
        unit = 1.0 + full[j, 1]
        ready[j, 1] = unit
        left[j, 1] = 0.0
        for w in range(2, top + 1):
            q = 0.0
            if w >= 3:  # (l)-(o): unit[i + 1] (full (+) left)[i + 1, j]
                q = ready[j - w + 1, 1] * (full[j, w - 1] + left[j, w - 1])
            left[j, w] = q
            p = ready[j - 1, w - 1] * unit + q  # (d), (j), (f), (k); (p)
            part[j, w] = p
            f = p * weight[j, w]  # (g)
            full[j, w] = f
            ready[j, w] = p + f
            total += f  # (h)
        log_total, ok = _close_column(j, top, total, part, full, scale)
        log_z += log_total
        c = scale[j]
        for w in range(1, top + 1):
            ready[j, w] *= c
            left[j, w] *= c
        if not ok:
            return log_z, False
    return log_z, True


@njit(cache=True)
def _outside_scaled(n, W, row0, weight, part, full, ready, left, scale, adjoints, marginals):
    """Reverse mode of ``_inside_scaled``: adjoints (a_full, a_ready, a_left
    [j, w], a_prefix [j]) hold d log Z / d item, the scales held constant;
    items are visited in the reverse order of the inside pass (columns
    descending, widths descending). The label marginals of span (i, j) are
    exp(score) (in ``marginals`` from ``_mention_weights``) times
    d log Z / d weight = (a_full + a_ready) part (``_mention_outside``,
    ``_label_marginals``)."""
    _clear_adjoints(n, W, adjoints)
    a_full, a_ready, a_left, a_prefix = adjoints
    for j in range(n, 0, -1):
        top = min(W, j)
        _first_level_outside(j, top, full, scale, a_full, a_prefix)  # (h), (i)
        for w in range(top, 0, -1):
            ap = a_ready[j, w] + _mention_outside(j, w, a_full[j, w] + a_ready[j, w], weight, part, a_full)
            if w == 1:
                continue
            a_ready[j - 1, w - 1] += ap * ready[j, 1]  # (d), (j), (f), (k): ready[i, j - 1] unit[j]
            a_ready[j, 1] += ap * ready[j - 1, w - 1]
            if w >= 3:  # (l)-(o), (p): left = unit[i + 1] (full + left)[i + 1, j]
                al = a_left[j, w] + ap
                a_ready[j - w + 1, 1] += al * (full[j, w - 1] + left[j, w - 1])
                u = al * ready[j - w + 1, 1]
                a_full[j, w - 1] += u
                a_left[j, w - 1] += u
    _label_marginals(row0, n, W, weight, a_full, marginals)


@njit(cache=True)
def _marginals_scaled(scores, mask, row0, n, W, scaled, marginals):
    """log Z and the mention marginals of one document (rows from ``row0``)
    in scaled probabilities (``scaled._mention_weights``, ``_inside_scaled``,
    ``_outside_scaled``): no exp or log per item, exp(score) once per label.
    ``scaled``: the charts of ``scaled._scaled_charts``. Returns (log Z,
    ok); when ok is False (a weight or a scaled item out of range: scores of
    hundreds) the rows of ``marginals`` are not finished and the caller runs
    the log-space ``_marginals_quadratic``."""
    (weight, part, full, ready, left), adjoints, scale = scaled
    if not _mention_weights(scores, mask, row0, n, W, weight, marginals):
        return 0.0, False
    log_z, ok = _inside_scaled(n, W, weight, part, full, ready, left, scale)
    if ok:
        _outside_scaled(n, W, row0, weight, part, full, ready, left, scale, adjoints, marginals)
    return log_z, ok
