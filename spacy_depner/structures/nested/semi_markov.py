"""Semi-Markov structure of ``nested.mentions`` (Corro 2023, sec. 4.1;
Sarawagi & Cohen 2004): the analyses are sets of pairwise disjoint mentions
(space 1), built left to right by the rules

    (a) [->, i] [t, i, j] => [->, j]        (b) [->, j - 1] => [->, j]

from the axiom [->, 0] to the goal [->, n]. The inside pass runs in the log
or the max semiring, the outside pass of the same rules gives the mention
marginals; the Viterbi back-trace of (a)/(b) is the first-level loop of
``nested_mentions._backtrack``. O(n W T) per document.
"""
import numpy as np
from numba import njit

from ..shared import logaddexp
from .charts import NEG_INF, _first_level, _row


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
