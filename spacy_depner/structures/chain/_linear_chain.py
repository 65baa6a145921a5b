"""Linear-chain CRF over BIO / BILOU tags (Lafferty, McCallum & Pereira 2001).

The flat baseline beside the segment lattice: one tag per token, a first-order
Markov chain of tags with transition scores and a boundary tag at both ends.
The same ``viterbi`` and ``transition_counts`` serve the structured perceptron
(Collins 2002; Daiber & Klaussner, "Named Entity Recognition as Structured
Prediction", sec. 3.1): the update is gold counts minus Viterbi counts.
Pure numpy/numba.

Tags: ``tag_schemes`` (re-exported here) holds the BIO and BILOU tag sets
(``SCHEMES``, ``tag_names``, ``n_tags``), the transitions each allows
(``allowed_transitions``) and the conversions ``tags_to_spans`` /
``spans_to_tags``. Index T of the transition matrices is the
boundary B: row T is the document start, column T the document end.

Score of a tag sequence y_1..y_n of a document (positions in the document):

    score(y) = sum_t scores[t, y_t] + trans[B, y_1] + sum_t trans[y_t, y_t+1] + trans[y_n, B]

A sequence is in the space only when every transition it uses (the start
B -> y_1 and the end y_n -> B included) is allowed; the others have
probability zero. The empty document has exactly one (empty) sequence, of
score 0, which uses no transition at all (not even B -> B).

Inputs, for a batch of D documents over N tokens:
    scores (N, T) float: per-token tag scores, documents one after another.
    doc_offsets (D + 1,) int: tokens of document d are doc_offsets[d]:doc_offsets[d+1]
        (starts at 0, never decreases, ends at N; empty documents allowed).
    transitions (T + 1, T + 1) float: trans[a, b] for tag a followed by b.
        Must be finite everywhere; forbid a transition with ``allowed``, not -inf.
    allowed (T + 1, T + 1) bool: allowed[a, b] for tag a followed by b, usually
        ``allowed_transitions(K, scheme)``; any matrix is accepted as long as
        every non-empty document has at least one allowed sequence.

Operations: ``log_partition`` (log Z per document), ``marginals`` (log Z,
tag marginals and expected transition counts: exactly the gradient of
sum(log Z) with respect to ``scores`` and ``transitions``; 0 on disallowed
transitions and on the B -> B entry), ``viterbi`` (the MAP sequence, always
allowed), ``transition_counts`` (of a given tag sequence), and the conversions
``tags_to_spans`` / ``spans_to_tags``. The recursions run over the allowed
pairs only (a sparse list of predecessors / successors per tag), so a
document costs O(n * #allowed) <= O(n T^2), in one compiled call per batch.
"""

from typing import Tuple

import numpy as np

from ..score_range import check_scores
from ..shared import check_doc_offsets
from .kernels import _first_infeasible_doc, _log_partition, _marginals, _viterbi
from .tag_schemes import SCHEMES, _as_tags, _pairs, allowed_transitions, n_tags, spans_to_tags, tag_names, tags_to_spans

__all__ = [
    "log_partition",
    "marginals",
    "viterbi",
    "transition_counts",
    "SCHEMES",
    "allowed_transitions",
    "n_tags",
    "spans_to_tags",
    "tag_names",
    "tags_to_spans",
]

# ---------------------------------------------------------------------------
# Input checks and public operations
# ---------------------------------------------------------------------------


def _check(scores, doc_offsets, transitions, allowed):
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    transitions = np.ascontiguousarray(transitions, dtype=np.float64)
    allowed = np.asarray(allowed)
    if scores.ndim != 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must have shape (n_tokens, n_tags >= 1), not {scores.shape}")
    T = scores.shape[1]
    if transitions.shape != (T + 1, T + 1):
        raise ValueError(
            f"transitions must have shape (n_tags + 1, n_tags + 1) = {(T + 1, T + 1)}, not {transitions.shape}"
        )
    if allowed.shape != (T + 1, T + 1):
        raise ValueError(f"allowed must have shape (n_tags + 1, n_tags + 1) = {(T + 1, T + 1)}, not {allowed.shape}")
    if allowed.dtype != np.bool_:
        raise ValueError(f"allowed must be a boolean matrix, not {allowed.dtype}")
    allowed = np.ascontiguousarray(allowed)
    doc_offsets = check_doc_offsets(doc_offsets, scores.shape[0])
    if not (np.isfinite(scores).all() and np.isfinite(transitions).all()):
        raise ValueError(
            "scores and transitions must be finite (the model produced NaN or inf; forbid transitions with `allowed`)"
        )
    d = _first_infeasible_doc(doc_offsets, allowed)
    if d >= 0:
        n = int(doc_offsets[d + 1] - doc_offsets[d])
        raise ValueError(f"document {d} ({n} tokens) has no tag sequence whose transitions are all allowed")
    return scores, doc_offsets, transitions, allowed


def check(scores, doc_offsets, transitions, allowed) -> None:
    """The ValueError ``marginals`` would raise for these inputs, if any."""
    args = _check(scores, doc_offsets, transitions, allowed)
    check_scores("linear_chain.marginals", args[1], args[0], args[2])


def log_partition(scores, doc_offsets, transitions, allowed) -> np.ndarray:
    """log Z of each document over its allowed tag sequences. Returns (D,).
    Scores and transitions out of range are refused (``score_range``)."""
    args = _check(scores, doc_offsets, transitions, allowed)
    check_scores("linear_chain.log_partition", args[1], args[0], args[2])
    return _log_partition(*args)


def marginals(scores, doc_offsets, transitions, allowed) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward-backward: (log Z (D,), tag marginals (N, T), expected transition
    counts summed over the batch (T + 1, T + 1), boundary row and column
    included). They are the gradient of sum(log Z) with respect to ``scores``
    and ``transitions``. Scores and transitions out of range are refused
    (``score_range``)."""
    args = _check(scores, doc_offsets, transitions, allowed)
    check_scores("linear_chain.marginals", args[1], args[0], args[2])
    return _marginals(*args)


def viterbi(scores, doc_offsets, transitions, allowed) -> Tuple[np.ndarray, np.ndarray]:
    """MAP tag sequence: (best score (D,), tags (N,) int64). The sequence uses
    allowed transitions only. Ties are broken towards lower tag indices,
    deciding from the last token backwards (all-zero scores give all O).
    Not bounded by ``score_range``: a maximum of float64 sums, right at any magnitude."""
    return _viterbi(*_check(scores, doc_offsets, transitions, allowed))


def transition_counts(tags, doc_offsets, n_tags: int) -> np.ndarray:
    """Counts (T + 1, T + 1) of the transitions of the tag sequence ``tags``
    (N,), start and end of every non-empty document included, summed over the
    batch. score(y) = scores[arange(N), y].sum() + (counts * transitions).sum()."""
    T = int(n_tags)
    if T < 1:
        raise ValueError(f"n_tags must be >= 1, not {n_tags}")
    tags = _as_tags(tags, T)
    doc_offsets = check_doc_offsets(doc_offsets, tags.shape[0])
    a, b = _pairs(tags, doc_offsets, T)
    return np.bincount(a * (T + 1) + b, minlength=(T + 1) ** 2).reshape(T + 1, T + 1).astype(np.float64)
