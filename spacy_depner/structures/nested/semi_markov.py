"""Semi-Markov structure of ``nested.mentions`` (Corro 2023, sec. 4.1;
Sarawagi & Cohen 2004): the analyses are sets of pairwise disjoint mentions
(space 1), built left to right by the rules

    (a) [->, i] [t, i, j] => [->, j]        (b) [->, j - 1] => [->, j]

from the axiom [->, 0] to the goal [->, n]. The inside pass runs in the log
or the max semiring; ``_marginals_semi_markov`` gives the mention marginals
by the reverse mode of the same rules; the Viterbi back-trace of (a)/(b) is the first-level loop of
``drivers._backtrack``. O(n W T) per document.
"""

import numpy as np
from numba import njit

from .charts import NEG_INF, _first_level, _scale_labels


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
