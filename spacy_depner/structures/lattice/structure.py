"""The segment lattice (``segment_lattice``: the semi-Markov CRF, DGM and
DGM-S of Jie, Muis & Lu 2017) under the structure protocol (``protocol``).

scores = (span scores (S, K), transitions (K + 1, K + 1)), column 0 the O
score; layout: offsets (U + 1,) of the chains, spans (S, 2) sorted by
(last, first) with span_offsets (U + 1,) (``layout``). A mention is an
entity segment, label k - 1 for column k. Encoding: the label of each span
(S,), -1 where the span is not a segment.
"""
from typing import Tuple

import numpy as np

from ..protocol import Analysis, Layout, Marginals, Structure
from ..trees.candidate_spans import span_index
from . import segment_lattice


def layout(spans: np.ndarray, offsets: np.ndarray) -> Layout:
    """The Layout of a lattice: ``spans`` (S, 2) sorted by (last, first), cut
    into the units ``offsets`` (U + 1,)."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    return Layout(offsets, spans, np.searchsorted(spans[:, 1], offsets, side="left").astype(np.int64))


def _mentions(spans: np.ndarray, labels: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero(labels > 0)
    return np.concatenate([spans[rows], (labels[rows] - 1)[:, None]], axis=1).astype(np.int64).reshape(-1, 3)


class SegmentLattice(Structure):
    name = "lattice"

    def _args(self, scores, layout: Layout) -> Tuple:
        span_scores, transitions = scores
        return layout.spans, layout.span_offsets, layout.offsets, span_scores, transitions

    def log_partition(self, scores, layout: Layout, **options) -> np.ndarray:
        return segment_lattice.log_partition(*self._args(scores, layout))

    def marginals(self, scores, layout: Layout, **options) -> Marginals:
        log_z, span_marginals, transition_marginals = segment_lattice.marginals(*self._args(scores, layout))

        def above(floor: float):
            rows, columns = np.nonzero(span_marginals[:, 1:] > floor)
            mentions = np.concatenate([layout.spans[rows], columns[:, None]], axis=1).astype(np.int64).reshape(-1, 3)
            return mentions, span_marginals[rows, columns + 1]

        def of(mentions: np.ndarray) -> np.ndarray:
            rows = span_index(layout.spans, mentions[:, :2], layout.n_tokens)
            return np.where(rows >= 0, span_marginals[rows, mentions[:, 2] + 1], 0.0)

        return Marginals(log_z, (span_marginals, transition_marginals), above, of)

    def viterbi(self, scores, layout: Layout, **options) -> Analysis:
        best, labels = segment_lattice.viterbi(*self._args(scores, layout))
        return Analysis(best, _mentions(layout.spans, labels), labels)

    def posterior_decode(self, marginals: Marginals, layout: Layout, *, penalty: float = 0.5, **options) -> Analysis:
        gain, labels = segment_lattice.posterior_decode(layout.spans, layout.span_offsets, layout.offsets,
                                                        marginals.scores[0], penalty)
        return Analysis(gain, _mentions(layout.spans, labels), labels)

    def counts(self, encoding, scores, layout: Layout, **options):
        """(span-label indicator (S, K), transition counts (K + 1, K + 1))."""
        labels = np.asarray(encoding, dtype=np.int64)
        K = scores[0].shape[1]
        indicator = np.zeros((layout.spans.shape[0], K))
        rows = np.flatnonzero(labels >= 0)
        indicator[rows, labels[rows]] = 1.0
        return indicator, segment_lattice.transition_counts(layout.spans, layout.span_offsets, labels, K)


LATTICE = SegmentLattice()
