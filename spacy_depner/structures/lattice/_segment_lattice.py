"""Semi-Markov CRF over a lattice of candidate segments (Jie, Muis & Lu 2017).

One structure serves the semi-Markov CRF (eq. 5), DGM and DGM-S (eq. 6): they
differ only in the candidate spans (see ``candidate_spans``). Pure numpy/numba.

A segmentation of a document tiles its tokens with segments. An entity segment
is any candidate span with an entity label 1..K-1; an O segment (label 0) is a
single word. Its score is the sum of the segment scores plus a transition score
between consecutive segment labels, with a boundary label at both ends:

    score(y) = sum_m scores[s_m, y_m] + T[B, y_1] + sum_m T[y_m, y_m+1] + T[y_M, B]

Inputs, for a batch of D documents over N tokens:
    spans (S, 2) int64: first and last token (inclusive) of each candidate span,
        in batch coordinates, sorted by document, then last token (within a
        document, the order ``candidate_spans`` returns). Every token must be
        a span of its own so that a segmentation exists.
    span_offsets (D + 1,) int64: spans of document d are span_offsets[d]:span_offsets[d+1].
    doc_offsets (D + 1,) int64: tokens of document d are doc_offsets[d]:doc_offsets[d+1].
    scores (S, K) float: column 0 is the O score (used for one-word spans only).
    transitions (K + 1, K + 1) float: T[a, b] for label a followed by b; index
        K is the boundary B (row K: document start, column K: document end).
An empty document has the empty segmentation only, of score 0.

Operations: ``log_partition`` (log Z per document), ``marginals`` (the
gradient of sum(log Z) with respect to scores and transitions), ``viterbi``
(the MAP segmentation), ``transition_counts`` (of a given segmentation),
``posterior_decode`` (the minimum-Bayes-risk segmentation, ``shared``).
The forward recursion shares the transition sum over all spans that start at
the same position, so a document costs O(n K^2 + S K): in the scaled
probabilities of ``scaled`` (log Z and the marginals), K^2 multiply-adds per
token and one exp per span label, no exp or log per transition term; in log
space (``kernels``) for transitions spread wider than ``scaled.SCALED_SPREAD``.
"""

from typing import Tuple

import numpy as np

from .. import interval_selection
from ..score_range import SCORE_LENGTH_BOUND, check_scores
from ..shared import check_marginals, check_penalty
from .kernels import _log_partition, _marginals, _transition_counts, _viterbi
from .layout_check import FINITE_MESSAGE, LAYOUT_PROBLEMS, NOT_FINITE, batch_problem, layout_problem
from .scaled import (
    OUT_OF_RANGE,
    TOO_WIDE,
    checked_scaled,
    scaled_log_partition,
    scaled_marginals,
    transitions_fit,
)


def _layout_arrays(spans, span_offsets, doc_offsets):
    """spans, span_offsets, doc_offsets as contiguous int64, or a ValueError
    unless the offsets have one shape, ending at the number of spans."""
    spans = np.ascontiguousarray(spans, dtype=np.int64).reshape(-1, 2)
    span_offsets = np.ascontiguousarray(span_offsets, dtype=np.int64)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if (
        span_offsets.ndim != 1
        or span_offsets.shape != doc_offsets.shape
        or span_offsets.shape[0] == 0
        or span_offsets[-1] != spans.shape[0]
    ):
        raise ValueError("span_offsets and doc_offsets must both have n_docs + 1 entries, ending at n_spans")
    return spans, span_offsets, doc_offsets


def _raise_problem(problem: int, row: int, spans: np.ndarray) -> None:
    """The ValueError of a problem code of ``layout_check`` (``NOT_FINITE`` or a layout problem at span ``row``)."""
    if problem == NOT_FINITE:
        raise ValueError(FINITE_MESSAGE)
    where = f" (span row {row}: {spans[row].tolist()})" if 0 <= row < spans.shape[0] else ""
    raise ValueError(LAYOUT_PROBLEMS[problem] + where)


def _check_layout(spans, span_offsets, doc_offsets):
    """spans, span_offsets, doc_offsets as contiguous int64, or a ValueError
    that says what is wrong with the batch layout."""
    spans, span_offsets, doc_offsets = _layout_arrays(spans, span_offsets, doc_offsets)
    problem, row = layout_problem(spans, span_offsets, doc_offsets)
    if problem:
        _raise_problem(problem, row, spans)
    return spans, span_offsets, doc_offsets


def _arrays(spans, span_offsets, doc_offsets, scores, transitions):
    """The inputs as contiguous int64 and float64 arrays, or a ValueError
    naming a wrong shape: the checks that read no more than the shapes (the
    values are ``layout_check``'s, in one compiled pass)."""
    spans = np.ascontiguousarray(spans, dtype=np.int64).reshape(-1, 2)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    transitions = np.ascontiguousarray(transitions, dtype=np.float64)
    K = scores.shape[1] if scores.ndim == 2 else -1
    if scores.shape != (spans.shape[0], K) or K < 1:
        raise ValueError(f"scores must have shape (n_spans={spans.shape[0]}, n_labels), not {scores.shape}")
    if transitions.shape != (K + 1, K + 1):
        raise ValueError(f"transitions must have shape {(K + 1, K + 1)}, not {transitions.shape}")
    return (*_layout_arrays(spans, span_offsets, doc_offsets), scores, transitions)


def _check(spans, span_offsets, doc_offsets, scores, transitions):
    """The inputs as ``_arrays``, checked: a ValueError for a NaN or an
    infinity, or for a layout the recursions cannot run on."""
    args = _arrays(spans, span_offsets, doc_offsets, scores, transitions)
    problem, row = batch_problem(*args)
    if problem:
        _raise_problem(problem, row, args[0])
    return args


def _forbid(args, forbidden):
    """The checked arguments with the span-label scores that ``forbidden``
    (S, K) bool marks set to the semiring zero (-inf): no segmentation uses
    them. The O column may not be forbidden, so that every document keeps a
    segmentation (all O) and log Z stays finite."""
    if forbidden is None:
        return args
    scores = args[3]
    forbidden = np.asarray(forbidden)
    if forbidden.shape != scores.shape or forbidden.dtype != bool:
        raise ValueError(f"forbidden must be a bool array of the scores' shape {scores.shape}, not {forbidden.shape}")
    if forbidden[:, :1].any():
        raise ValueError("forbidden may not forbid O segments (column 0): every token must keep a segmentation")
    return (*args[:3], np.where(forbidden, -np.inf, scores), args[4])


def _checked_scaled(spans, span_offsets, doc_offsets, scores, transitions, backward: bool):
    """(log Z, span marginals, expected transitions) of the scaled recursions,
    the batch checked in the same compiled call (``scaled.checked_scaled``);
    the ValueError of a batch that is wrong; None for scores out of range or
    transitions too wide for them, which the caller checks and computes as
    it does with forbidden labels (``score_range``, the log-space kernels)."""
    args = _arrays(spans, span_offsets, doc_offsets, scores, transitions)
    problem, row, log_z, span_marginals, transition_marginals = checked_scaled(*args, backward, SCORE_LENGTH_BOUND)
    if problem in (OUT_OF_RANGE, TOO_WIDE):
        return None
    if problem:
        _raise_problem(problem, row, args[0])
    return log_z, span_marginals, transition_marginals


def check(spans, span_offsets, doc_offsets, scores, transitions) -> None:
    """The ValueError ``marginals`` would raise for these inputs, if any."""
    args = _check(spans, span_offsets, doc_offsets, scores, transitions)
    check_scores("segment_lattice.marginals", args[2], args[3], args[4])


def log_partition(spans, span_offsets, doc_offsets, scores, transitions, forbidden=None) -> np.ndarray:
    """log Z of each document (eq. 6 for DGM spans, eq. 5 for all spans). Returns (D,).
    Scores and transitions out of range are refused (``score_range``).
    ``forbidden`` (S, K) bool or None: span labels no segmentation may use (``_forbid``)."""
    if forbidden is None:
        checked = _checked_scaled(spans, span_offsets, doc_offsets, scores, transitions, False)
        if checked is not None:
            return checked[0]
    args = _check(spans, span_offsets, doc_offsets, scores, transitions)
    check_scores("segment_lattice.log_partition", args[2], args[3], args[4])
    args = _forbid(args, forbidden)
    return scaled_log_partition(*args) if transitions_fit(args[4]) else _log_partition(*args)


def marginals(
    spans, span_offsets, doc_offsets, scores, transitions, forbidden=None
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forward-backward: (log Z (D,), span-label marginals (S, K), expected
    transition counts summed over the batch (K + 1, K + 1)). The marginals are
    the gradient of sum(log Z) with respect to ``scores`` and ``transitions``.
    Scores and transitions out of range are refused (``score_range``).
    ``forbidden`` (S, K) bool or None: span labels no segmentation may use (their marginals are 0)."""
    if forbidden is None:
        checked = _checked_scaled(spans, span_offsets, doc_offsets, scores, transitions, True)
        if checked is not None:
            return checked
    args = _check(spans, span_offsets, doc_offsets, scores, transitions)
    check_scores("segment_lattice.marginals", args[2], args[3], args[4])
    args = _forbid(args, forbidden)
    return scaled_marginals(*args) if transitions_fit(args[4]) else _marginals(*args)


def viterbi(spans, span_offsets, doc_offsets, scores, transitions, forbidden=None) -> Tuple[np.ndarray, np.ndarray]:
    """MAP segmentation: (best score (D,), label of each span (S,), -1 where the
    span is not a segment of the best segmentation). Not bounded by
    ``score_range``: a maximum of float64 sums, right at any magnitude.
    ``forbidden`` (S, K) bool or None: span labels no segmentation may use."""
    if forbidden is None:
        args = _arrays(spans, span_offsets, doc_offsets, scores, transitions)
        problem, row, best, labels = _viterbi(*args, True)  # the values checked in the same compiled call
        if problem:
            _raise_problem(problem, row, args[0])
        return best, labels
    return _viterbi(*_forbid(_check(spans, span_offsets, doc_offsets, scores, transitions), forbidden), False)[2:]


def transition_counts(spans, span_offsets, labels, n_labels: int) -> np.ndarray:
    """Transition counts (K + 1, K + 1) of the segmentation given by ``labels``
    (S,) (-1: not a segment), summed over the batch."""
    return _transition_counts(
        np.ascontiguousarray(spans, dtype=np.int64).reshape(-1, 2),
        np.ascontiguousarray(span_offsets, dtype=np.int64),
        np.ascontiguousarray(labels, dtype=np.int64),
        int(n_labels),
    )


def posterior_decode(
    spans, span_offsets, doc_offsets, span_marginals, penalty: float = 0.5
) -> Tuple[np.ndarray, np.ndarray]:
    """Posterior (minimum Bayes risk) segmentation, exact (``shared``): the
    segmentation of the lattice that maximises the sum over its entity
    segments of (marginal - ``penalty``); O segments gain 0. Every token is a
    span of its own, so any set of disjoint lattice spans with entity labels
    is a segmentation: a span's gain is the max over entity labels of
    marginal - penalty, and the best set is the weighted interval scheduling
    of the spans of positive gain (``interval_selection.most_probable``).
    span_marginals (S, K) from ``marginals``, penalty >= 0. Returns (gain
    (D,), labels (S,)): the entity label of each chosen span, 0 on the
    one-token spans outside them, -1 on the other spans, as ``viterbi``."""
    spans, span_offsets, doc_offsets = _check_layout(spans, span_offsets, doc_offsets)
    span_marginals = check_marginals(span_marginals, spans.shape[0], "span_marginals")
    if span_marginals.ndim != 2 or span_marginals.shape[1] < 1:
        raise ValueError(f"span_marginals must have shape (n_spans, n_labels >= 1), not {span_marginals.shape}")
    penalty = check_penalty(penalty)
    labels = np.where(spans[:, 0] == spans[:, 1], 0, -1).astype(np.int64)
    gain = np.zeros(doc_offsets.shape[0] - 1)
    if span_marginals.shape[1] < 2 or spans.shape[0] == 0:
        return gain, labels
    best = 1 + np.argmax(span_marginals[:, 1:], axis=1)
    gains = span_marginals[np.arange(spans.shape[0]), best] - penalty
    candidates = np.flatnonzero(gains > 0)
    chosen = candidates[interval_selection.most_probable(spans[candidates], gains[candidates], best[candidates])]
    covered = np.zeros(int(doc_offsets[-1]) + 1, dtype=np.int64)
    np.add.at(covered, spans[chosen, 0], 1)
    np.add.at(covered, spans[chosen, 1] + 1, -1)
    singles = np.flatnonzero(spans[:, 0] == spans[:, 1])
    labels[singles[np.cumsum(covered)[spans[singles, 0]] > 0]] = -1
    labels[chosen] = best[chosen]
    np.add.at(gain, np.searchsorted(doc_offsets, spans[chosen, 0], side="right") - 1, gains[chosen])
    return gain, labels
