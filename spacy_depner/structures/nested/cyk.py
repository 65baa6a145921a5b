"""CYK-like structure of ``nested.mentions`` (Corro 2023, sec. 4.2): the
analyses are laminar families of mentions, at most one per span (space 2),
built by the rules

    (c) [|->, i, k] [<->, k, j] => [|->, i, j]   (i < k)
    (d) [|->, i, j - 1] => [|->, i, j]
    (e) [<->, i, k] [<->, k, j] => [|->, i, j]
    (f) [<->, i, j - 1] => [|->, i, j]
    (g) [|->, i, j] [t, i, j] => [<->, i, j]     (i < j)
    (h) [->, i] [<->, i, j] => [->, j]           (i) [->, j - 1] => [->, j]

((g)-(i) are in ``charts``): the inside pass (log or max semiring),
its outside pass (mention marginals) and the back-trace of [|->, i, j]
through (c)-(f). O(n W^2 + n W T) per document, O(n^3 T) unbounded.
"""
from numba import njit

from ..shared import logaddexp
from .charts import NEG_INF, _close_mention, _expand_ready, _first_level, _mention_marginals, _outside_first_level, _plus, _record, _start_outside


@njit(cache=True)
def _inside_cyk(n, W, mention, part, full, ready, prefix, use_max):
    """CYK-like algorithm (Corro 2023, sec. 4.2), rules (c)-(i) of the module
    docstring.

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


@njit(cache=True)
def _outside_cyk(scores, row0, n, W, mention, part, full, ready, prefix,
                 out_full, out_ready, out_prefix, log_z, marginals):
    """Outside of rules (c)-(i), visiting the items of ``_inside_cyk`` in
    reverse order (columns j descending, starts i ascending): when (i, j) is
    reached, every item it feeds has pushed its outside weight into it."""
    _start_outside(n, W, out_prefix, out_full, out_ready)
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
