"""The nested spaces' marginals in scaled probabilities: the pieces that the
scaled passes of the three spaces (``semi_markov._marginals_semi_markov_scaled``,
``cyk._marginals_cyk_scaled``, ``quadratic._marginals_scaled``) share.

Each space's rules run with products and sums instead of log-sums, column
by column (the items that end at fencepost j), each column divided by the
growth of the first level at j (rules (h), (i) of ``charts``, rules (a), (b)
of the semi-Markov system): the first level [->, j] weighs 1 after every
column, so every item lies in [0, 1] and the goal weighs 1. An item of the
span (j - w, j) holds exp(its log weight) prod_{k = j - w + 1}^{j} scale[k],
scale[j] = 1 / total[j], total[j] = 1 + sum_w full[j, w] before the scaling
(the two rules into [->, j], relative to [->, j - 1]); log Z = sum_j log
total[j]. The reverse mode is plain differentiation of those products and
sums, the scales held constant (they multiply every analysis of the
document alike): the label marginals of a span are exp(score) times
d log Z / d weight.

That is exp(score) once per label (vectorised, ``exps``) and one log per
word, against one exp per term of every log-sum in the log semiring. It is exact to float64 rounding
while no mention weight exceeds ``HUGE`` and no part[j, w] leaves [``TINY``,
2] (no item that matters is subnormal or overflows; ``_close_column`` checks
it): a document outside that range (scores of hundreds, or a first level
that outgrows an unbounded span's inside by 1e250) goes to its space's
log-space pass, per document, in the drivers.

Charts (``_scaled_charts``) are [j, w] for the span (j - w, j), C-contiguous
(a column's items in a row), 1 <= w <= min(W, j); scale and a_prefix are
[j]. Shared here: the mention weights (``_mention_weights``), the first
item and the scaling of a column (``_open_column``, ``_close_column``), the
reverse mode of the first level (``_first_level_outside``) and of rule (g)
(``_mention_outside``, then ``_label_marginals``), the adjoints' reset
(``_clear_adjoints``).
"""

import numpy as np
from numba import njit

from .charts import _row
from .exps import BLOCK, _exp_into

TINY = 1e-250  # the smallest scaled part[j, w] the scaled passes accept (else the log-space pass runs)
HUGE = 1e300  # the largest mention weight sum_t exp(score) they accept


@njit(cache=True)
def _mention_weights(scores, mask, row0, n, W, weight, marginals):
    """weight[j, w] = sum_t exp(scores[r, t]) for the span (j - w, j) of row r,
    1 <= w <= min(W, j) (0 where the span is excluded), and exp(scores[r, t])
    into the rows of ``marginals`` (S, T) (0 on excluded spans). The exps
    are taken in vectorised calls (``exps._exp_into``; scores and marginals
    C-contiguous) on consecutive rows: the document's, or where spans of at
    most W words are fewer than half of them, each column's (the spans (j -
    w, j) of column j are consecutive rows, ``_row``). False if a weight
    exceeds ``HUGE`` (or is NaN): the scaled pass cannot take the document."""
    T = scores.shape[1]
    values = scores.reshape(-1)
    exps = marginals.reshape(-1)
    powers = np.empty(BLOCK, dtype=np.int64)
    lo, hi = row0 * T, _row(row0, 0, n + 1) * T  # the document's rows
    whole = 4 * W * n - 2 * W * (W - 1) >= n * (n + 1)  # spans of at most W words: W n - W (W - 1) / 2 >= n (n + 1) / 4
    if whole:
        _exp_into(values[lo:hi], exps[lo:hi], powers)
    for j in range(1, n + 1):
        top = min(W, j)
        first, end = _row(row0, j - top, j) * T, _row(row0, 0, j + 1) * T  # column j's spans of at most W words
        if whole:
            exps[_row(row0, 0, j) * T : first] = 0.0  # the longer spans: excluded
        else:
            _exp_into(values[first:end], exps[first:end], powers)
        for w in range(1, top + 1):
            r = _row(row0, j - w, j)
            if not mask[r]:
                weight[j, w] = 0.0
                for t in range(T):
                    marginals[r, t] = 0.0
                continue
            total = 0.0
            for t in range(T):
                total += marginals[r, t]
            if not total <= HUGE:
                exps[lo:hi] = 0.0  # as the log-space pass expects the rows
                return False
            weight[j, w] = total
    return True


@njit(cache=True, inline="always")
def _open_column(j, weight, part, full):
    """The one-word item of column j, span (j - 1, j): part 1 (rule (d) from
    the axiom, the semi-Markov empty inside), full = its mention weight
    (rule (g)). Returns the column's total so far: 1 (rule (i)) + that full
    (rule (h))."""
    part[j, 1] = 1.0
    f = weight[j, 1]
    full[j, 1] = f
    return 1.0 + f


@njit(cache=True, inline="always")
def _close_column(j, top, total, part, full, scale):
    """Divide column j's part and full [j, 1..top] by ``total`` (rules (h),
    (i) into [->, j], relative to [->, j - 1]): scale[j] = 1 / total. Returns
    (log total, ok): ok is False unless every part lies in [TINY, 2]."""
    c = 1.0 / total
    scale[j] = c
    ok = True
    for w in range(1, top + 1):
        p = part[j, w] * c
        part[j, w] = p
        full[j, w] *= c
        ok &= TINY <= p <= 2.0
    return np.log(total), ok


@njit(cache=True, inline="always")
def _first_level_outside(j, top, full, scale, a_full, a_prefix):
    """Reverse mode of rules (h), (i) (the semi-Markov (a), (b)) into the
    scaled [->, j] = scale[j] [->, j - 1] + sum_w [->, j - w] full[j, w],
    every [->, k] weighing 1: a_prefix[j] flows to a_prefix[j - 1] and
    [j - w], and to a_full[j, w]."""
    a = a_prefix[j]
    a_prefix[j - 1] += a * scale[j]  # (i)
    for w in range(1, top + 1):  # (h)
        a_prefix[j - w] += a * full[j, w]
        a_full[j, w] += a


@njit(cache=True, inline="always")
def _mention_outside(j, w, af, weight, part, a_full):
    """Reverse mode of rule (g), full = part weight, for the span (j - w, j)
    whose full item has adjoint ``af`` (read no more once the span is
    visited): a_full[j, w] becomes d log Z / d weight = af part, which
    ``_label_marginals`` turns into the span's label marginals. Returns the
    adjoint that flows to part: af weight."""
    a_full[j, w] = af * part[j, w]
    return af * weight[j, w]


@njit(cache=True)
def _label_marginals(row0, n, W, weight, a_full, marginals):
    """The label marginals of every allowed span (j - w, j) of a document:
    exp(score) (in ``marginals`` from ``_mention_weights``) times d log Z /
    d weight (in a_full[j, w], from ``_mention_outside``). One pass after
    the reverse mode, row by row."""
    for j in range(1, n + 1):
        for w in range(1, min(W, j) + 1):
            if weight[j, w] > 0.0:
                g = a_full[j, w]
                r = _row(row0, j - w, j)
                for t in range(marginals.shape[1]):
                    marginals[r, t] *= g


@njit(cache=True)
def _clear_adjoints(n, W, adjoints):
    """Zero the adjoints (a_full, a_ready, a_left [j, w], a_prefix [j]) of a
    document of n words, spans of at most W; a_prefix[n] = 1 (the scaled
    goal weighs 1: d log Z / d goal = 1)."""
    a_full, a_ready, a_left, a_prefix = adjoints
    for j in range(n + 1):
        a_prefix[j] = 0.0
        for w in range(W + 1):
            a_full[j, w] = 0.0
            a_ready[j, w] = 0.0
            a_left[j, w] = 0.0
    a_prefix[n] = 1.0


@njit(cache=True)
def _scaled_charts(rows, width):
    """The charts of the scaled passes for documents of up to rows - 1
    words and spans of up to width - 1 words: (weight, part, full, ready,
    left) and the adjoints (a_full, a_ready, a_left) [j, w] C-contiguous,
    then a_prefix and scale [j]."""
    charts = (
        np.empty((rows, width)),
        np.empty((rows, width)),
        np.empty((rows, width)),
        np.empty((rows, width)),
        np.empty((rows, width)),
    )
    adjoints = (np.empty((rows, width)), np.empty((rows, width)), np.empty((rows, width)), np.empty(rows))
    return charts, adjoints, np.empty(rows)
