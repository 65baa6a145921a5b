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
its reverse mode in probabilities (mention marginals, ``_marginals_cyk``) and the back-trace of [|->, i, j]
through (c)-(f). O(n W^2 + n W T) per document, O(n^3 T) unbounded.

The marginals run first in scaled probabilities (``_marginals_cyk_scaled``,
``scaled``): one product per split point (c), (e) and exp(score) once per
label, instead of an exp per split point and a log per item; a document out
of that pass's range goes to the log-space ``_marginals_cyk``.
"""

import numpy as np
from numba import njit

from .charts import (
    NEG_INF,
    _close_mention,
    _expand_ready,
    _first_level,
    _first_level_log,
    _plus,
    _reach_first_level,
    _record,
    _scale_labels,
    _softplus,
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


STASH_LIMIT = 1 << 22  # entries (32 MB) of the exps ``_marginals_cyk`` keeps at most; longer documents take them again


@njit(cache=True)
def _stash_size(n, W):
    """Entries of the stash of a document of n words, spans of at most W:
    for each item (i, w), w >= 2, one over the sum, then up to w terms."""
    return n * (W + 2) * (W + 1) // 2 + 1


@njit(cache=True)
def _marginals_cyk(
    n,
    W,
    row0,
    mention,
    part,
    full,
    ready,
    lift,
    prefix,
    first_level,
    reach_full,
    reach_ready,
    reach,
    marginals,
    stash,
    where,
):
    """Mention marginals of the CYK-like system without log-space sums in
    the outside pass: the inside pass of ``_inside_cyk`` in the log semiring
    with one exp per term (max, then a sum of exps; ready = part +
    softplus(mention), kept in ``lift``), then its reverse mode in
    probabilities: reach_* [i, w] is the probability that the analysis uses
    the item, which flows back through each rule with one exp per term and
    no log. ``marginals`` holds the label softmax of each span
    (``_mention_axioms_weights``) and leaves with the mention marginals.
    ``first_level``: the shares of rules (h), (i) (``_first_level_log``).
    When ``stash`` holds n W^2 / 2 entries (``_stash_size``), the exps of
    rules (c)-(f) are kept there (one over their sum first, at where[i, w])
    and the reverse mode reads them instead of taking them again.
    Returns log Z = prefix[n]."""
    terms, skips, inverse = first_level
    keep = stash.shape[0] >= _stash_size(n, W)
    at = 0
    prefix[0] = 0.0
    for j in range(1, n + 1):
        for i in range(j - 1, max(0, j - W) - 1, -1):
            w = j - i
            if w == 1:
                p = 0.0  # (d) from the axiom
            elif keep:
                top = ready[i, w - 1]  # (d), (f)
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:
                        top = max(top, ready[i, k - i] + full[k, j - k])  # (c), (e)
                where[i, w] = at
                e = np.exp(ready[i, w - 1] - top)
                stash[at + 1] = e
                total = e
                q = at + 2
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:
                        e = np.exp(ready[i, k - i] + full[k, j - k] - top)
                        stash[q] = e
                        q += 1
                        total += e
                stash[at] = 1.0 / total
                at = q
                p = top + np.log(total)
            else:
                top = ready[i, w - 1]  # (d), (f)
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:
                        top = max(top, ready[i, k - i] + full[k, j - k])  # (c), (e)
                total = np.exp(ready[i, w - 1] - top)
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:
                        total += np.exp(ready[i, k - i] + full[k, j - k] - top)
                p = top + np.log(total)
            part[i, w] = p
            if mention[i, w] > NEG_INF:  # (g)
                full[i, w] = p + mention[i, w]
                lift[i, w] = _softplus(mention[i, w])
                ready[i, w] = p + lift[i, w]
            else:
                full[i, w] = NEG_INF
                ready[i, w] = p
        _first_level_log(j, W, mention, full, prefix, terms, skips, inverse)
    reach[: n + 1] = 0.0
    reach[n] = 1.0
    for i in range(n + 1):
        for w in range(W + 1):
            reach_full[i, w] = 0.0
            reach_ready[i, w] = 0.0
    for j in range(n, 0, -1):
        _reach_first_level(j, W, mention, terms, skips, inverse, reach, reach_full)  # (h), (i)
        for i in range(max(0, j - W), j):
            w = j - i
            c = reach_ready[i, w]  # ready = part (+) full
            if mention[i, w] > NEG_INF:
                f = reach_full[i, w] + c * np.exp(mention[i, w] - lift[i, w])
                _scale_labels(row0, i, j, f, marginals)
                c = c * np.exp(-lift[i, w]) + f  # (g)
            if w >= 2 and c != 0.0 and keep:
                q = where[i, w]
                c *= stash[q]
                reach_ready[i, w - 1] += c * stash[q + 1]  # (d), (f)
                q += 2
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:  # (c), (e)
                        m = c * stash[q]
                        q += 1
                        reach_ready[i, k - i] += m
                        reach_full[k, j - k] += m
            elif w >= 2 and c != 0.0:
                p = part[i, w]
                reach_ready[i, w - 1] += c * np.exp(ready[i, w - 1] - p)  # (d), (f)
                for k in range(i + 1, j):
                    if mention[k, j - k] > NEG_INF:  # (c), (e)
                        m = c * np.exp(ready[i, k - i] + full[k, j - k] - p)
                        reach_ready[i, k - i] += m
                        reach_full[k, j - k] += m
    return prefix[n]


@njit(cache=True)
def _marginals_cyk_scaled(scores, mask, row0, n, W, scaled, marginals):
    """log Z and the mention marginals of one document (rows from ``row0``)
    by rules (c)-(i) in scaled probabilities (``scaled``): part[j, w] of the
    span (i, j) = (j - w, j) is ready[i, w - 1] + sum_{u < w} ready[i, u]
    full[j, w - u] ((d), (f); (c), (e) at k = i + u), before column j's
    scaling; full = part weight, ready = part + full. part and full are
    stored [j, w] (by last fencepost), ready and its adjoint by first
    fencepost, ready[i, u] for the span (i, i + u), so that the sum over
    split points reads two contiguous rows. The reverse mode visits the
    items in the reverse order (columns descending, widths descending).
    ``scaled``: the charts of ``scaled._scaled_charts``. Returns (log Z, ok);
    when ok is False (a weight or a part out of range) the rows of
    ``marginals`` are not finished and the caller runs the log-space
    ``_marginals_cyk``."""
    (weight, part, full, ready, _), adjoints, scale = scaled
    if not _mention_weights(scores, mask, row0, n, W, weight, marginals):
        return 0.0, False
    log_z = 0.0
    for j in range(1, n + 1):
        top = min(W, j)
        total = _open_column(j, weight, part, full)  # (d) from the axiom, (g); (h), (i)
        for w in range(2, top + 1):
            i = j - w
            p0 = ready[i, w - 1]  # (d), (f)
            p1 = 0.0
            u = 1
            while u + 1 < w:  # (c), (e) at k = i + u, two running sums
                p0 += ready[i, u] * full[j, w - u]
                p1 += ready[i, u + 1] * full[j, w - u - 1]
                u += 2
            if u < w:
                p0 += ready[i, u] * full[j, w - u]
            p = p0 + p1
            part[j, w] = p
            f = p * weight[j, w]  # (g)
            full[j, w] = f
            total += f  # (h)
        log_total, ok = _close_column(j, top, total, part, full, scale)
        log_z += log_total
        if not ok:
            return log_z, False
        for w in range(1, top + 1):
            ready[j - w, w] = part[j, w] + full[j, w]
    _clear_adjoints(n, W, adjoints)
    a_full, a_ready, _, a_prefix = adjoints
    for j in range(n, 0, -1):
        top = min(W, j)
        _first_level_outside(j, top, full, scale, a_full, a_prefix)  # (h), (i)
        for w in range(top, 0, -1):
            i = j - w
            ap = a_ready[i, w] + _mention_outside(j, w, a_full[j, w] + a_ready[i, w], weight, part, a_full)
            if w == 1:
                continue
            a_ready[i, w - 1] += ap * scale[j]  # (d), (f)
            for u in range(1, w):  # (c), (e)
                a_ready[i, u] += ap * full[j, w - u]
                a_full[j, w - u] += ap * ready[i, u]
    _label_marginals(row0, n, W, weight, a_full, marginals)
    return log_z, True
