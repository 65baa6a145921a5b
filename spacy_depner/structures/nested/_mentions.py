"""Span-based (nested) mention CRFs: semi-Markov, CYK-like and Corro's O(n^2).

Corro (2023), "A Dynamic Programming Algorithm for Span-based Nested
Named-entity Recognition in O(n^2)" (ACL 2023): the deduction systems of its
sections 4.1 (semi-Markov, Sarawagi & Cohen 2004), 4.2 (CYK-like) and 5 (the
quadratic algorithm), run in the log semiring (log Z, and an outside pass for
the marginals) and in the max semiring (MAP, with a back-trace). Pure
numpy/numba, no spaCy.

Mentions and analyses. A document has n words; a mention is a labelled span
<t, i, j> (fenceposts 0 <= i < j <= n, words i..j-1, label t in 0..T-1). There
is no O label: a word outside every mention costs nothing, and the empty
analysis (no mention) has weight exp(0) in every space. The weight of an
analysis is the sum of its mentions' scores. Following the paper (sec. 3.1),
<t', i', j'> is *inside* <t, i, j> when i < i' < j' <= j or i <= i' < j' < j
(strict containment), the *children* of a mention are the mentions inside it
that are not inside another mention inside it, and the three spaces are:

* ``"semi_markov"`` (space 1, rules (a), (b)): sets of pairwise disjoint
  mentions.
* ``"cyk"`` (space 2, rules (c)-(i)): sets of mentions whose spans are
  pairwise disjoint or strictly nested (a laminar family), with at most one
  mention (so one label) per span. Two labels on one span are excluded: the
  paper's Table 5 note says no algorithm covers mentions "with exactly the
  same span", and no rule builds [<->, i, j] from an item that already holds
  a mention on (i, j): (c) needs i < k, (e) and (f) a strictly shorter left
  child, so a mention's only child may share its left border or its right
  border, never both. Children of length one are unlimited.
* ``"quadratic"`` (space 3, rules (d), (f)-(i), (j)-(p)): the ``cyk``
  analyses in which every mention has at most one child longer than one word
  (its length-one children are unlimited; the long child may share the left
  border, the right border or neither). First-level mentions (not inside any
  other) are not restricted: rules (h), (i) chain any number of them.

Batch layout (dense, per document). For D documents of n_d words, document d
has n_d (n_d + 1) / 2 spans, listed as rows span_offsets[d]:span_offsets[d+1]
of ``scores``, sorted by (last word, first word): the span of words
first..last (inclusive; fenceposts i = first, j = last + 1) is row
``span_offsets[d] + last * (last + 1) / 2 + first``. This is the order of
``candidate_spans.all_spans(doc_offsets, None)`` (and of ``dense_spans``), so
the batch is sorted by (last, first) and ``candidate_spans.span_index`` or
``dense_rows`` map spans (e.g. a parser's DGM valid spans, or gold mentions)
to rows. Memory is O(sum n_d^2 T) for the scores; the charts are O(n W) per
document, W the longest allowed span.

Inputs:
    scores (S, T) float: the score of each span for each label, S =
        dense_span_offsets(doc_offsets)[-1]. Must be finite everywhere (also
        on excluded spans, whose values are ignored). Real scores of any type
        (float32 from a thinc model) are read as float64, so that every
        kernel is compiled for one signature; the charts and every sum are
        float64.
    doc_offsets (D + 1,) int: words of document d are
        doc_offsets[d]:doc_offsets[d+1] (starts at 0, never decreases; empty
        documents allowed: they have the empty analysis only).
    structure: "semi_markov", "cyk" or "quadratic".
    max_length: None, or an int >= 1: longer spans cannot be mentions.
    mask: None, or (S,) bool: spans whose entry is False cannot be mentions
        (e.g. keep the DGM valid spans of the parser's trees).
Excluded spans (masked or too long) are removed from the deduction system:
no rule ever reads their items, so they contribute exactly nothing, their
marginals are exactly 0 and Viterbi never picks them.

Operations: ``log_partition`` (log Z (D,)), ``marginals`` (log Z and the
mention marginals (S, T), the exact gradient of sum(log Z) with respect to
``scores``, by an outside pass over the same rules), ``viterbi`` (the MAP
score (D,) and the label of each span (S,) int64, -1 for no mention),
``posterior_decode`` (the minimum-Bayes-risk analysis, ``shared``: the
Viterbi of the same space with marginal - penalty as the mention scores).

Modules: this one holds the public operations and the input checks;
``drivers`` the compiled batch drivers, one set per structure (a structure
compiles only its own passes on first use); ``charts`` the shared
layout, axioms, charts and rules (g)-(i); ``semi_markov``, ``cyk`` and
``quadratic`` the inside and outside passes (and back-traces) of
each structure. The charts are described in ``charts``.

Complexity per document, W <= n the longest allowed span length: semi_markov
O(n W T); cyk O(n W^2 + n W T), i.e. O(n^3 T) unbounded; quadratic
O(n W T), i.e. O(n^2 T): every quadratic rule has at most two free positions.
"""

from typing import Optional, Tuple

import numpy as np

from ...numba_runtime import background_compile
from ..score_range import check_scores
from ..shared import check_doc_offsets, check_marginals, check_penalty
from .charts import dense_rows, dense_span_offsets, dense_spans
from .drivers import DRIVERS, SPACES

__all__ = [
    "SPACES",
    "log_partition",
    "marginals",
    "viterbi",
    "posterior_decode",
    "dense_span_offsets",
    "dense_spans",
    "dense_rows",
]

# ---------------------------------------------------------------------------
# Input checks and public operations
# ---------------------------------------------------------------------------


def _check(scores, doc_offsets, structure, max_length, mask):
    if structure not in SPACES:
        raise ValueError(f"unknown structure {structure!r}: expected one of {SPACES}")
    scores = np.asarray(scores)
    if scores.ndim != 2 or scores.shape[1] < 1:
        raise ValueError(f"scores must have shape (n_spans, n_labels >= 1), not {scores.shape}")
    if scores.dtype.kind not in "iuf":
        raise ValueError(f"scores must be real numbers, not {scores.dtype}")
    scores = np.ascontiguousarray(scores, dtype=np.float64)  # one compiled signature per kernel
    doc_offsets = check_doc_offsets(doc_offsets)
    span_offsets = dense_span_offsets(doc_offsets)
    if scores.shape[0] != span_offsets[-1]:
        raise ValueError(
            f"scores must have one row per span of the dense layout: {int(span_offsets[-1])} rows for "
            f"documents of {np.diff(doc_offsets).tolist()} words, not {scores.shape[0]}"
        )
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite (the model produced NaN or inf; exclude spans with mask, not -inf)")
    if max_length is None:
        bound = -1
    elif isinstance(max_length, (bool, np.bool_)) or not isinstance(max_length, (int, np.integer)) or max_length < 1:
        raise ValueError(f"max_length must be None or an integer >= 1, not {max_length!r}")
    else:
        bound = int(max_length)
    if mask is None:
        mask = np.ones(scores.shape[0], dtype=np.bool_)
    else:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"mask must be boolean, not {mask.dtype}")
        if mask.shape != (scores.shape[0],):
            raise ValueError(f"mask must have shape ({scores.shape[0]},) like the rows of scores, not {mask.shape}")
        mask = np.ascontiguousarray(mask)
    return structure, scores, doc_offsets, span_offsets, mask, bound


def check(scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None) -> None:
    """The ValueError ``marginals`` would raise for these inputs, if any."""
    args = _check(scores, doc_offsets, structure, max_length, mask)
    check_scores(f"nested.mentions.marginals ({structure})", args[2], args[1])


def _run(operation: int, args):
    """Call the compiled driver ``operation`` (0 log_partition, 1 marginals,
    2 viterbi) of the space ``args[0]`` on the rest of the checked arguments."""
    return DRIVERS[args[0]][operation](*args[1:])


def _forbid(args, forbidden):
    """The checked arguments with the mentions that ``forbidden`` (S, T) bool
    marks given the semiring zero (-inf) as score: no analysis holds them (a
    span whose every label is forbidden is as one the mask excludes)."""
    if forbidden is None:
        return args
    scores = args[1]
    forbidden = np.asarray(forbidden)
    if forbidden.shape != scores.shape or forbidden.dtype != np.bool_:
        raise ValueError(f"forbidden must be a bool array of the scores' shape {scores.shape}, not {forbidden.shape}")
    return (args[0], np.where(forbidden, -np.inf, scores).astype(scores.dtype), *args[2:])


def compile_pass(kind: str, structure: str) -> None:
    """Run the pass ``kind`` ("viterbi" or "marginals") of ``structure`` once
    on a three-word document, so that numba compiles it (and caches it): what
    a background compilation runs (``background_compile``)."""
    if kind not in ("viterbi", "marginals"):
        raise ValueError(f"the pass must be 'viterbi' or 'marginals', not {kind!r}")
    doc_offsets = np.array([0, 3], dtype=np.int64)
    scores = np.zeros((int(dense_span_offsets(doc_offsets)[-1]), 1))
    (viterbi if kind == "viterbi" else marginals)(scores, doc_offsets, structure)


RUNNER = f"{__name__}:compile_pass"


def log_partition(
    scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None, forbidden=None
) -> np.ndarray:
    """log Z of each document over the analyses of ``structure``. Returns (D,).
    Scores out of range (excluded spans included) are refused (``score_range``).
    ``forbidden`` (S, T) bool or None: mentions no analysis may hold (``_forbid``)."""
    args = _check(scores, doc_offsets, structure, max_length, mask)
    check_scores(f"nested.mentions.log_partition ({structure})", args[2], args[1])
    return _run(0, _forbid(args, forbidden))


def marginals(
    scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None, forbidden=None
) -> Tuple[np.ndarray, np.ndarray]:
    """(log Z (D,), mention marginals (S, T)): the marginal of label t on a
    span is the probability that the analysis holds that mention, exactly
    the gradient of sum(log Z) with respect to ``scores`` (0 on excluded
    spans). Computed by the outside pass of the same deduction rules. Scores
    out of range (excluded spans included) are refused (``score_range``).
    ``forbidden`` (S, T) bool or None: mentions no analysis may hold (marginal 0)."""
    args = _check(scores, doc_offsets, structure, max_length, mask)
    check_scores(f"nested.mentions.marginals ({structure})", args[2], args[1])
    background_compile.start("viterbi", structure, DRIVERS[structure][2], RUNNER)  # cold: side by side
    background_compile.wait("marginals", structure)
    return _run(1, _forbid(args, forbidden))


def viterbi(
    scores, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None, forbidden=None
) -> Tuple[np.ndarray, np.ndarray]:
    """MAP analysis: (best score (D,), label of each span (S,) int64, -1 where
    the span is not a mention). Ties go to the first candidate tried (first
    label, no mention rather than a mention of score 0). Not bounded by
    ``score_range``: a maximum of float64 sums, right at any magnitude.
    ``forbidden`` (S, T) bool or None: mentions no analysis may hold."""
    args = _forbid(_check(scores, doc_offsets, structure, max_length, mask), forbidden)
    background_compile.start("marginals", structure, DRIVERS[structure][1].scaled, RUNNER)  # cold: side by side
    background_compile.wait("viterbi", structure)
    return _run(2, args)


def posterior_decode(
    marginals, doc_offsets, structure: str, max_length: Optional[int] = None, mask=None, penalty: float = 0.5
) -> Tuple[np.ndarray, np.ndarray]:
    """Posterior (minimum Bayes risk) analysis (``shared``): the analysis of
    ``structure`` with the largest sum over its mentions of (marginal -
    ``penalty``), penalty >= 0; no mention gains 0. marginals (S, T) from
    ``marginals`` (same layout, max_length and mask). In every space the
    weight of an analysis is the sum of its mentions' scores (the items
    that are not mentions, [|->, i, j] and [<->, i, j] built by the other
    rules, carry no weight of their own), so this is exactly ``viterbi``
    with the gains as scores. Returns (gain (D,), label of each span (S,)
    int64, -1 for no mention)."""
    penalty = check_penalty(penalty)
    marginals = check_marginals(marginals, np.asarray(marginals).shape[0] if np.ndim(marginals) else -1)
    return viterbi(marginals - penalty, doc_offsets, structure, max_length, mask)
