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
its outside pass (mention marginals) and the back-trace of [|->, i, j].
Every rule has at most two free positions: O(n W T) per document, O(n^2 T)
unbounded.
"""
from numba import njit

from ..shared import logaddexp
from .charts import NEG_INF, _close_mention, _expand_ready, _first_level, _mention_marginals, _outside_first_level, _plus, _record, _start_outside


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
def _outside_quadratic(scores, row0, n, W, mention, part, full, ready, left, unit, prefix,
                       out_full, out_ready, out_left, out_unit, out_prefix, log_z, marginals):
    """Outside of rules (d), (f)-(i), (j)-(p), visiting the items of
    ``_inside_quadratic`` in reverse order (columns j descending, starts i
    ascending). unit[j] is read by part[i, j] (i < j - 1, visited before
    (j - 1, j)) and by left[j - 1, j'] (j' > j, earlier columns), so its
    outside weight is complete when full[j - 1, j] is reached."""
    _start_outside(n, W, out_prefix, out_full, out_ready)
    out_unit[: n + 1] = NEG_INF
    for i in range(n + 1):
        for w in range(W + 1):
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
