"""Mention hypergraphs (Lu & Roth 2015, "Joint Mention Extraction and
Classification with Mention Hypergraphs", EMNLP 2015), in numba.

A log-linear model over the sub-hypergraphs of the mention hypergraph of a
document (sec. 3.2-3.3): overlapping and nested mentions of unbounded length,
with an inside pass (log Z), an outside pass (edge marginals, the exact
gradient of sum(log Z)) and a max-product pass (MAP), all O(n T) per document
(sec. 3.4), the mention penalty (sec. 3.5, 3.7) and optional heads (sec. 3.6).
Pure numpy/numba, no spaCy; one compiled call per batch.

Modules: this one holds the public operations on scores (``log_partition``,
``marginals``, ``viterbi``) and their input checks, and re-exports the rest:
``kinds`` the hypergraph (sec. 3.2, Figure 1; heads, sec. 3.6) and
its hyperedge kinds KIND_* / HEAD_*; ``recursions`` the inside,
outside and max-product passes (sec. 3.4); ``encoding`` mentions
<-> sub-hypergraphs (Theorem 3.1, the ambiguity of Figure 3 and its decoding
rule): ``mentions_to_edges``, ``edges_to_mentions``, ``representable``.

Scores. ``scores`` (N, T, K) float: scores[k, t, kind] is the score of the
hyperedge ``kind`` whose parent is the type-t node at token k (batch
coordinates; K = N_KINDS = 5, or N_HEAD_KINDS = 17 with heads). The weight of
a sub-hypergraph is the sum of the scores of its hyperedges, plus
``penalty`` for each T -> I hyperedge (sec. 3.5: the mention penalty, "the
number of such hyperedges that exactly connect one T node and one I node";
sec. 3.7 tunes it on the development set to trade precision for recall).
p(y) = exp(weight(y)) / Z (sec. 3.3, eq. 1). Scores must be finite; float32
scores are read as they are, every sum and chart is float64.

Heads (sec. 3.6, ``heads=True``). The penalty is added once per I child of a T
hyperedge (twice for T -> B, W: it opens two mentions).
"""

from typing import Tuple

import numpy as np

from ...util.numbers import is_finite_number
from ..score_range import check_scores
from ..shared import check_doc_offsets
from .encoding import edges_to_mentions, mentions_to_edges, representable
from .kinds import (  # the kinds, re-exported: scores[..., kind] and edges use them
    _N_SLOTS,
    HEAD_A_A,
    HEAD_A_AX,
    HEAD_A_X,
    HEAD_B_B,
    HEAD_B_BW,
    HEAD_B_W,
    HEAD_KIND_NAMES,
    HEAD_T_B,
    HEAD_T_BW,
    HEAD_T_W,
    HEAD_T_X,
    HEAD_W_A,
    HEAD_W_AX,
    HEAD_W_W,
    HEAD_W_WA,
    HEAD_W_WAX,
    HEAD_W_WX,
    HEAD_W_X,
    KIND_I_I,
    KIND_I_IX,
    KIND_I_X,
    KIND_NAMES,
    KIND_T_I,
    KIND_T_X,
    N_HEAD_KINDS,
    N_KINDS,
    n_kinds,
)
from .recursions import _TABLES, _log_partition, _marginals, _viterbi

__all__ = [
    "log_partition",
    "marginals",
    "viterbi",
    "edges_to_mentions",
    "mentions_to_edges",
    "representable",
    "n_kinds",
    "N_KINDS",
    "N_HEAD_KINDS",
    "KIND_NAMES",
    "HEAD_KIND_NAMES",
    "KIND_T_X",
    "KIND_T_I",
    "KIND_I_I",
    "KIND_I_IX",
    "KIND_I_X",
    "HEAD_T_X",
    "HEAD_T_B",
    "HEAD_T_W",
    "HEAD_T_BW",
    "HEAD_B_B",
    "HEAD_B_W",
    "HEAD_B_BW",
    "HEAD_W_W",
    "HEAD_W_A",
    "HEAD_W_X",
    "HEAD_W_WA",
    "HEAD_W_WX",
    "HEAD_W_AX",
    "HEAD_W_WAX",
    "HEAD_A_A",
    "HEAD_A_X",
    "HEAD_A_AX",
]


# ---------------------------------------------------------------------------
# Input checks and public operations
# ---------------------------------------------------------------------------


def _check_heads(heads):
    if not isinstance(heads, (bool, np.bool_)):
        raise ValueError(f"heads must be True or False, not {heads!r}")
    return bool(heads)


def _check(scores, doc_offsets, penalty, heads):
    heads = _check_heads(heads)
    scores = np.asarray(scores)
    K = n_kinds(heads)
    if scores.ndim != 3 or scores.shape[1] < 1 or scores.shape[2] != K:
        raise ValueError(f"scores must have shape (n_tokens, n_types >= 1, {K}) (heads={heads}), not {scores.shape}")
    if scores.dtype.kind not in "iuf":
        raise ValueError(f"scores must be real numbers, not {scores.dtype}")
    scores = np.ascontiguousarray(scores, dtype=np.float32 if scores.dtype == np.float32 else np.float64)
    doc_offsets = check_doc_offsets(doc_offsets, scores.shape[0])
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite (the model produced NaN or inf)")
    if not is_finite_number(penalty):
        raise ValueError(f"penalty must be a finite real number, not {penalty!r}")
    src, dst, kinds, pen, split = _TABLES[heads]
    return scores, doc_offsets, float(penalty), src, dst, kinds, pen, split, 1 << _N_SLOTS[heads]


def log_partition(scores, doc_offsets, penalty: float = 0.0, heads: bool = False) -> np.ndarray:
    """log Z (D,) of each document: the log-sum over its sub-hypergraphs y of
    exp(weight(y)) (sec. 3.3, the denominator of eq. 1), by the inside pass
    (sec. 3.4). scores (N, T, K), doc_offsets (D + 1,); empty documents have
    log Z = 0 (one empty sub-hypergraph). Scores and penalty out of range
    are refused (``score_range``)."""
    args = _check(scores, doc_offsets, penalty, heads)
    check_scores("mention_hypergraph.log_partition", args[1], args[0], args[2])
    return _log_partition(*args)


def marginals(scores, doc_offsets, penalty: float = 0.0, heads: bool = False) -> Tuple[np.ndarray, np.ndarray]:
    """(log Z (D,), marginals (N, T, K) float64): the probability that each
    hyperedge is in the sub-hypergraph, exactly the gradient of sum(log Z)
    with respect to ``scores`` (the expectation of eq. 3), by the outside
    pass (sec. 3.4). Scores and penalty out of range are refused
    (``score_range``)."""
    args = _check(scores, doc_offsets, penalty, heads)
    check_scores("mention_hypergraph.marginals", args[1], args[0], args[2])
    return _marginals(*args)


def viterbi(scores, doc_offsets, penalty: float = 0.0, heads: bool = False) -> Tuple[np.ndarray, np.ndarray]:
    """(best (D,), edges (N, T, K) int8 0/1): the weight of the MAP
    sub-hypergraph of each document and its hyperedges, by the max-product
    pass. Ties go to the first half step of the table (e.g. T -> X before
    T -> I). Decode the mentions with ``edges_to_mentions``. Not bounded by
    ``score_range``: a maximum of float64 sums, right at any magnitude."""
    return _viterbi(*_check(scores, doc_offsets, penalty, heads))
