"""The segment lattice (``segment_lattice``: the semi-Markov CRF, DGM and
DGM-S of Jie, Muis & Lu 2017) under the structure protocol (``protocol``).

scores = (span scores (S, K), transitions (K + 1, K + 1)), column 0 the O
score; layout: offsets (U + 1,) of the chains, spans (S, 2) sorted by
(last, first) with span_offsets (U + 1,) (``layout``). A mention is an
entity segment, label k - 1 for column k. Encoding: the label of each span
(S,), -1 where the span is not a segment.
"""

from dataclasses import replace
from typing import Tuple

import numpy as np

from ..partial import (
    Borders,
    Conditioned,
    covering,
    drop_borders,
    forbidden_in_runs,
    gold_touches_missing,
    missing_mask,
    runs_of,
    touching_missing,
)
from ..protocol import Analysis, Layout, Marginals, Structure, inner_product
from ..shared import check_doc_offsets
from ..trees.candidate_spans import span_index
from . import _segment_lattice as segment_lattice
from .likelihood import fused_nll
from .mentions import entity_segments


def layout(spans: np.ndarray, offsets: np.ndarray) -> Layout:
    """The Layout of a lattice: ``spans`` (S, 2) sorted by (last, first), cut
    into the units ``offsets`` (U + 1,)."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    offsets = check_doc_offsets(offsets)
    return Layout(offsets, spans, np.searchsorted(spans[:, 1], offsets, side="left").astype(np.int64))


class SegmentLattice(Structure):
    name = "lattice"
    takes_rejected = True

    def _args(self, scores, layout: Layout) -> Tuple:
        span_scores, transitions = scores
        return layout.spans, layout.span_offsets, layout.offsets, span_scores, transitions

    def log_partition(self, scores, layout: Layout, **options) -> np.ndarray:
        return segment_lattice.log_partition(*self._args(scores, layout), layout.forbidden)

    def marginals(self, scores, layout: Layout, **options) -> Marginals:
        log_z, span_marginals, transition_marginals = segment_lattice.marginals(
            *self._args(scores, layout), layout.forbidden
        )

        def above(floor: float):
            rows, columns = np.nonzero(span_marginals[:, 1:] > floor)
            mentions = np.concatenate([layout.spans[rows], columns[:, None]], axis=1).astype(np.int64).reshape(-1, 3)
            return mentions, span_marginals[rows, columns + 1]

        def of(mentions: np.ndarray) -> np.ndarray:
            rows = span_index(layout.spans, mentions[:, :2], layout.n_tokens)
            return np.where(rows >= 0, span_marginals[rows, mentions[:, 2] + 1], 0.0)

        return Marginals(log_z, (span_marginals, transition_marginals), above, of)

    def nll(self, scores, layout: Layout, gold, **options):
        """``Structure.nll`` in one compiled call where it applies (``likelihood``), else composed."""
        if layout.forbidden is None:
            fused = fused_nll(*segment_lattice._arrays(*self._args(scores, layout)), gold)
            if fused is not None:
                return fused
        return super().nll(scores, layout, gold, **options)

    def viterbi(self, scores, layout: Layout, **options) -> Analysis:
        best, labels = segment_lattice.viterbi(*self._args(scores, layout), layout.forbidden)
        return Analysis(best, entity_segments(layout.spans, labels), labels)

    def posterior_decode(self, marginals: Marginals, layout: Layout, *, penalty: float = 0.5, **options) -> Analysis:
        gain, labels = segment_lattice.posterior_decode(
            layout.spans, layout.span_offsets, layout.offsets, marginals.scores[0], penalty
        )
        return Analysis(gain, entity_segments(layout.spans, labels), labels)

    def counts(self, encoding, scores, layout: Layout, **options):
        """(span-label indicator (S, K), transition counts (K + 1, K + 1));
        labels that are no segmentation of every chain (``check_segmentation``)
        are a ValueError."""
        K = scores[0].shape[1]
        labels = check_segmentation(encoding, layout, K)
        indicator = np.zeros((layout.spans.shape[0], K))
        rows = np.flatnonzero(labels >= 0)
        indicator[rows, labels[rows]] = 1.0
        return indicator, segment_lattice.transition_counts(layout.spans, layout.span_offsets, labels, K)

    def conditioned(self, scores, layout: Layout, gold, missing: np.ndarray, rejected=None, **options) -> Conditioned:
        """``partial.Conditioned`` (whence ``constrained``): ``gold`` the
        per-span labels, read on the annotated tokens (its O segments on
        missing tokens are ignored; an entity there is an error). Each run of
        missing tokens is a lattice of its spans, its start transitions those
        from the gold label before it (B at the unit's start), its end
        transitions those to the gold label after it; the gold part is scored
        with its transitions inside the stretches of annotated tokens (and
        the units' own start and end). ``rejected`` (R, 3) [first, last,
        label from 0], batch coordinates, or None: mentions no agreeing
        analysis contains. One inside a run is a forbidden span label of the
        run's lattice (``Layout.forbidden``); one that touches an annotated
        token is already excluded unless it is gold (a ValueError); one that
        is no candidate span excludes nothing. An *accepted* mention needs no
        option: it is a gold mention on annotated tokens, which no other
        segment may then touch."""
        return _condition(scores, layout, np.asarray(gold, dtype=np.int64), missing, rejected)


def check_o_segments(spans: np.ndarray, outside: np.ndarray) -> None:
    """ValueError if a span (S, 2) that ``outside`` (S,) marks as an O segment is longer than one token."""
    long = np.flatnonzero(outside & (spans[:, 0] != spans[:, 1]))
    if long.shape[0]:
        first, last = (int(t) for t in spans[long[0]])
        raise ValueError(
            f"lattice: the gold segments are no analysis of the lattice: the span {first}..{last} is labelled O, "
            "and an O segment is one token"
        )


def check_segmentation(encoding, layout: Layout, n_labels: int) -> np.ndarray:
    """The encoding (S,) as int64 labels in [-1, K), checked: its segments
    (labels >= 0) cover every token exactly once, a segmentation of each
    chain, and its O segments (label 0) are one token each; else a
    ValueError naming the first span or token that is not."""
    labels = np.asarray(encoding)
    n_spans = layout.spans.shape[0]
    if labels.shape != (n_spans,) or (labels.size and labels.dtype.kind not in "iu"):
        raise ValueError(f"lattice: the gold labels must be ({n_spans},) integers in [-1, {n_labels}), one per span")
    labels = labels.astype(np.int64)
    if labels.size and (labels.min() < -1 or labels.max() >= n_labels):
        raise ValueError(f"lattice: the gold labels must be ({n_spans},) integers in [-1, {n_labels}), one per span")
    check_o_segments(layout.spans, labels == 0)
    segments = layout.spans[labels >= 0]
    cover = np.zeros(layout.n_tokens + 1, dtype=np.int64)
    np.add.at(cover, segments[:, 0], 1)
    np.add.at(cover, segments[:, 1] + 1, -1)
    times = np.cumsum(cover[:-1])
    if np.any(times != 1):
        token = int(np.flatnonzero(times != 1)[0])
        raise ValueError(
            f"lattice: the gold segments are no analysis of the lattice: token {token} is covered "
            f"{int(times[token])} times, not once (a segmentation labels every token: O segments included)"
        )
    return labels


def _condition(scores, full: Layout, labels: np.ndarray, missing, rejected=None):
    """``SegmentLattice.conditioned``."""
    segment_lattice.check(full.spans, full.span_offsets, full.offsets, *scores)
    span_scores, transitions = scores
    K = B = span_scores.shape[1]
    spans = full.spans
    missing = missing_mask(missing, full.offsets, "lattice")
    if labels.shape != (spans.shape[0],) or np.any((labels < -1) | (labels >= K)):
        raise ValueError(f"lattice: the gold labels must be ({spans.shape[0]},) integers in [-1, {K}), one per span")
    rows = np.flatnonzero(labels > 0)
    gold_touches_missing(spans[rows], missing, "lattice")
    rows = np.flatnonzero((labels >= 0) & ~touching_missing(spans, missing))
    check_o_segments(spans[rows], labels[rows] == 0)
    token_label = covering(spans[rows], labels[rows], full.n_tokens)
    if np.any((token_label < 0) & ~missing):
        raise ValueError(
            f"lattice: the gold segments leave the annotated token "
            f"{int(np.flatnonzero((token_label < 0) & ~missing)[0])} uncovered"
        )
    runs = runs_of(missing, full.offsets)
    free = np.flatnonzero(runs.inside(spans))
    run = runs.run_of[spans[free, 0]]
    starts = np.flatnonzero(spans[free, 0] == runs.first[run])
    ends = np.flatnonzero(spans[free, 1] == runs.last[run])
    borders = Borders(
        starts,
        run[starts],
        ends,
        run[ends],
        np.where(runs.before >= 0, token_label[np.maximum(runs.before, 0)], B),
        np.where(runs.after >= 0, token_label[np.maximum(runs.after, 0)], B),
    )
    stretches = runs_of(~missing, full.offsets)
    fixed = stretches.compact(spans[rows])
    fixed_transitions = segment_lattice.transition_counts(
        fixed, np.searchsorted(fixed[:, 1], stretches.offsets, side="left"), labels[rows], K
    )
    drop_borders(fixed_transitions, stretches, token_label[stretches.first], token_label[stretches.last])
    indicator = np.zeros(np.shape(span_scores))
    indicator[rows, labels[rows]] = 1.0

    def expand(run_counts):
        spans_counts = np.zeros(np.shape(span_scores))
        spans_counts[free] = run_counts[0]
        return spans_counts, borders.move(run_counts[0], run_counts[1])

    run_layout = layout(runs.compact(spans[free]), runs.offsets)
    forbidden = None if rejected is None else forbidden_in_runs(rejected, spans, labels, missing, free, K, 1, "lattice")
    return Conditioned(
        entity_segments(spans[rows], labels[rows]),
        inner_product(scores, (indicator, fixed_transitions)),
        (borders.scores(span_scores[free], transitions), transitions),
        run_layout if forbidden is None else replace(run_layout, forbidden=forbidden),
        runs.tokens,
        (indicator, fixed_transitions),
        expand,
    )


LATTICE = SegmentLattice()
