"""Semi-Markov structure of ``nested.mentions`` (Corro 2023, sec. 4.1;
Sarawagi & Cohen 2004): the analyses are sets of pairwise disjoint mentions
(space 1), built left to right by the rules

    (a) [->, i] [t, i, j] => [->, j]        (b) [->, j - 1] => [->, j]

from the axiom [->, 0] to the goal [->, n]. The inside pass runs in the log
or the max semiring; ``_marginals_semi_markov`` gives the mention marginals
by the reverse mode of the same rules; the Viterbi back-trace of (a)/(b) is the first-level loop of
``drivers._backtrack``. O(n W T) per document.

The marginals run first in scaled probabilities
(``_marginals_semi_markov_scaled``, ``scaled``): exp(score) once per label
and one log per word instead of T + 2 exps and a log per span; a document
out of that pass's range goes to the log-space ``_marginals_semi_markov``.
"""

import numpy as np
from numba import njit

from .charts import NEG_INF, _first_level, _scale_labels
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
def _inside_semi_markov(n, W, mention, prefix, use_max):
    """Semi-Markov (Corro 2023, sec. 4.1), rules (a) and (b):

        (a) [->, i] [t, i, j] => [->, j]        (b) [->, j - 1] => [->, j]

    prefix[j] = [->, j], axiom prefix[0] = 0; goal prefix[n]. O(n W T)."""
    prefix[0] = 0.0
    for j in range(1, n + 1):
        # (a), (b) are rules (h), (i) with the mention axioms for the full mentions
        _first_level(j, W, mention, mention, prefix, use_max)
    return prefix[n]


@njit(cache=True)
def _marginals_semi_markov(n, W, row0, mention, prefix, terms, skips, inverse, reach, marginals):
    """Inside pass of rules (a), (b) keeping the softmax weights of each
    log-sum (one exp per term: max, then a sum of exps), then its reverse
    mode in probabilities: reach[j], the probability that the analysis
    passes fencepost j, flows back through the weights with no exp or log.
    ``marginals`` holds the label softmax of each span
    (``_mention_axioms_weights``) and leaves with the mention marginals.
    terms[i, w] (rule (a)) and skips[j] (rule (b)) hold the exps, inverse[j]
    one over their sum. Returns log Z = prefix[n]."""
    prefix[0] = 0.0
    for j in range(1, n + 1):
        top = prefix[j - 1]
        for i in range(max(0, j - W), j):
            if mention[i, j - i] > NEG_INF:
                top = max(top, prefix[i] + mention[i, j - i])
        e = np.exp(prefix[j - 1] - top)
        skips[j] = e
        total = e
        for i in range(max(0, j - W), j):
            if mention[i, j - i] > NEG_INF:
                e = np.exp(prefix[i] + mention[i, j - i] - top)
                terms[i, j - i] = e
                total += e
        prefix[j] = top + np.log(total)
        inverse[j] = 1.0 / total
    reach[: n + 1] = 0.0
    reach[n] = 1.0
    for j in range(n, 0, -1):
        c = reach[j] * inverse[j]
        reach[j - 1] += c * skips[j]  # (b)
        for i in range(max(0, j - W), j):
            if mention[i, j - i] > NEG_INF:
                m = c * terms[i, j - i]  # (a)
                reach[i] += m
                _scale_labels(row0, i, j, m, marginals)
    return prefix[n]


@njit(cache=True)
def _marginals_semi_markov_scaled(scores, mask, row0, n, W, scaled, marginals):
    """log Z and the mention marginals of one document (rows from ``row0``)
    by rules (a), (b) in scaled probabilities (``scaled``): part[j, w] is
    the empty inside of the span (j - w, j), prod_{k = j - w + 1}^{j}
    scale[k] (part[j, w] = scale[j] part[j - 1, w - 1], part[j, 1] =
    scale[j]), full[j, w] = part weight its mention (rule (a) into [->, j]);
    the reverse mode flows a_prefix through rules (a), (b) to the mentions
    (part, a product of the scales, is a constant of the reverse mode). ``scaled``: the charts of
    ``scaled._scaled_charts``. Returns (log Z, ok); when ok is False (a
    weight or a part out of range) the rows of ``marginals`` are not
    finished and the caller runs the log-space ``_marginals_semi_markov``."""
    (weight, part, full, _, _), adjoints, scale = scaled
    if not _mention_weights(scores, mask, row0, n, W, weight, marginals):
        return 0.0, False
    log_z = 0.0
    for j in range(1, n + 1):
        top = min(W, j)
        total = _open_column(j, weight, part, full)  # (b) and (a) from [->, j - 1]
        for w in range(2, top + 1):
            p = part[j - 1, w - 1]
            part[j, w] = p
            f = p * weight[j, w]
            full[j, w] = f
            total += f  # (a)
        log_total, ok = _close_column(j, top, total, part, full, scale)
        log_z += log_total
        if not ok:
            return log_z, False
    _clear_adjoints(n, W, adjoints)
    a_full, _, _, a_prefix = adjoints
    for j in range(n, 0, -1):
        top = min(W, j)
        _first_level_outside(j, top, full, scale, a_full, a_prefix)  # (a), (b)
        for w in range(1, top + 1):  # part is a product of scales, held constant: no adjoint
            _mention_outside(j, w, a_full[j, w], weight, part, a_full)
    _label_marginals(row0, n, W, weight, a_full, marginals)
    return log_z, True
