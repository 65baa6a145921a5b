"""The nested mention CRFs of Corro (2023) (``mentions``: semi-Markov, CYK-like
and quadratic spaces) under the structure protocol (``protocol``).

scores (S, T): one score per label for each span of ``layout.spans`` (a
subset of the dense spans of the units: ``layout`` gives their dense rows
and the mask that excludes the others); layout: offsets (U + 1,) of the
sentences; options ``space`` ("semi_markov", "cyk", "quadratic") and
``max_length``. A mention is a labelled span. Encoding: the label of each
span of the layout (S,), -1 for no mention.
"""

from dataclasses import replace
from typing import Optional

import numpy as np

from ..partial import Conditioned, forbidden_in_runs, gold_touches_missing, missing_mask, runs_of
from ..protocol import Analysis, Layout, Marginals, Structure
from ..shared import check_doc_offsets
from . import _mentions as nested_mentions


def layout(spans: np.ndarray, offsets: np.ndarray) -> Layout:
    """The Layout of ``spans`` (S, 2) (within the units ``offsets``, sorted by
    (last, first)): their dense rows and mask, or none when they are every
    span of the units."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    offsets = check_doc_offsets(offsets)
    n_dense = int(nested_mentions.dense_span_offsets(offsets)[-1])
    if spans.shape[0] == n_dense:
        return Layout(offsets, spans)
    rows = nested_mentions.dense_rows(spans, offsets)
    mask = np.zeros(n_dense, dtype=bool)
    mask[rows] = True
    return Layout(offsets, spans, rows=rows, mask=mask)


def _dense(scores, layout: Layout):
    scores = np.asarray(scores)
    if layout.rows is None:
        return scores
    if scores.ndim != 2 or scores.shape[0] != layout.rows.shape[0]:
        raise ValueError(
            f"scores must have one row per span of the layout ({layout.rows.shape[0]}), not shape {scores.shape}"
        )
    dense = np.zeros((layout.mask.shape[0], scores.shape[1]), dtype=scores.dtype)
    dense[layout.rows] = scores
    return dense


def _sparse(dense, layout: Layout):
    return dense if layout.rows is None else dense[layout.rows]


def _mentions(labels: np.ndarray, layout: Layout) -> np.ndarray:
    rows = np.flatnonzero(labels >= 0)
    return np.concatenate([layout.spans[rows], labels[rows, None]], axis=1).astype(np.int64).reshape(-1, 3)


def _forbidden(layout: Layout):
    """``layout.forbidden`` (S, T) in the dense rows, or None."""
    return None if layout.forbidden is None else _dense(layout.forbidden, layout)


class NestedMentions(Structure):
    name = "nested"
    takes_rejected = True
    takes_accepted = True

    def log_partition(
        self, scores, layout: Layout, *, space: str = "quadratic", max_length: Optional[int] = None
    ) -> np.ndarray:
        return nested_mentions.log_partition(
            _dense(scores, layout), layout.offsets, space, max_length, layout.mask, _forbidden(layout)
        )

    def marginals(
        self, scores, layout: Layout, *, space: str = "quadratic", max_length: Optional[int] = None
    ) -> Marginals:
        log_z, dense = nested_mentions.marginals(
            _dense(scores, layout), layout.offsets, space, max_length, layout.mask, _forbidden(layout)
        )
        sparse = _sparse(dense, layout)

        def above(floor: float):
            rows, labels = np.nonzero(sparse > floor)
            return np.concatenate([layout.spans[rows], labels[:, None]], axis=1).astype(np.int64).reshape(
                -1, 3
            ), sparse[rows, labels]

        def of(mentions: np.ndarray) -> np.ndarray:
            return dense[nested_mentions.dense_rows(mentions[:, :2], layout.offsets), mentions[:, 2]]

        return Marginals(log_z, sparse, above, of)

    def viterbi(
        self, scores, layout: Layout, *, space: str = "quadratic", max_length: Optional[int] = None
    ) -> Analysis:
        best, labels = nested_mentions.viterbi(
            _dense(scores, layout), layout.offsets, space, max_length, layout.mask, _forbidden(layout)
        )
        labels = _sparse(labels, layout)
        return Analysis(best, _mentions(labels, layout), labels)

    def posterior_decode(
        self,
        marginals: Marginals,
        layout: Layout,
        *,
        penalty: float = 0.5,
        space: str = "quadratic",
        max_length: Optional[int] = None,
    ) -> Analysis:
        gain, labels = nested_mentions.posterior_decode(
            _dense(marginals.scores, layout), layout.offsets, space, max_length, layout.mask, penalty
        )
        labels = _sparse(labels, layout)
        return Analysis(gain, _mentions(labels, layout), labels)

    def counts(
        self, encoding, scores, layout: Layout, *, space: str = "quadratic", max_length: Optional[int] = None
    ) -> np.ndarray:
        """The mention indicator (S, T); ValueError unless ``encoding`` is an
        analysis of ``space``."""
        labels = self._gold(encoding, scores, layout, space, max_length)
        indicator = np.zeros(np.shape(scores))
        rows = np.flatnonzero(labels >= 0)
        indicator[rows, labels[rows]] = 1.0
        return indicator

    def conditioned(
        self,
        scores,
        layout: Layout,
        gold,
        missing: np.ndarray,
        *,
        space: str = "quadratic",
        max_length: Optional[int] = None,
        rejected=None,
    ) -> Conditioned:
        """``partial.Conditioned`` (whence ``constrained``): the gold mentions
        (``gold``, per-span labels, one analysis of ``space``) are fixed, each
        run of missing tokens is a unit of the spans inside it (no
        transitions: the weight of an analysis is the sum of its mentions').
        ``rejected`` (R, 3) [first, last, label] or None: mentions no agreeing
        analysis holds; one inside a run is a forbidden mention of the run's
        problem (``Layout.forbidden``), one that touches an annotated token is
        already excluded unless it is gold (a ValueError)."""
        nested_mentions.check(_dense(scores, layout), layout.offsets, space, max_length, layout.mask)
        labels = self._gold(gold, scores, layout, space, max_length)
        return _condition(scores, layout, labels, missing, rejected)

    @property
    def spaces(self):
        """The nested spaces, the values of the option ``space``."""
        return nested_mentions.SPACES

    def _gold(self, encoding, scores, layout: Layout, space: str, max_length: Optional[int]) -> np.ndarray:
        """``encoding`` (per-span labels) as int64; ValueError unless its
        mentions are one analysis of ``space``."""
        labels = np.asarray(encoding, dtype=np.int64)
        n_spans, n_labels = np.shape(scores)
        if labels.shape != (n_spans,) or np.any((labels < -1) | (labels >= n_labels)):
            raise ValueError(f"nested: the gold labels must be ({n_spans},) integers in [-1, {n_labels}), one per span")
        mentions = _mentions(labels, layout)
        if not self.largest_subset(mentions, layout.offsets, space=space, max_length=max_length).all():
            raise ValueError(
                f"nested: the gold mentions are no analysis of the space {space!r}"
                + (f" with max_length {max_length}" if max_length is not None else "")
                + " (keep their largest subset in the space: NESTED.largest_subset)"
            )
        return labels

    def largest_subset(
        self, mentions: np.ndarray, offsets: np.ndarray, *, space: str = "quadratic", max_length: Optional[int] = None
    ) -> np.ndarray:
        """Which of ``mentions`` (M, 3) [first, last, label] (each inside one unit
        of ``offsets``) form the largest subset one analysis of ``space`` holds:
        (M,) bool. The structure's own Viterbi on the layout of their spans only,
        +1 per mention and -1 for the other labels (ties as ``viterbi``); a
        mention given twice is kept at most once."""
        mentions = np.asarray(mentions, dtype=np.int64).reshape(-1, 3)
        kept = np.zeros(mentions.shape[0], dtype=bool)
        if mentions.shape[0] == 0:
            return kept
        n_tokens = int(offsets[-1])
        keys = np.unique(mentions[:, 1] * (n_tokens + 1) + mentions[:, 0])
        spans = np.stack([keys % (n_tokens + 1), keys // (n_tokens + 1)], axis=1)
        rows = np.searchsorted(keys, mentions[:, 1] * (n_tokens + 1) + mentions[:, 0])
        scores = -np.ones((spans.shape[0], int(mentions[:, 2].max()) + 1))
        scores[rows, mentions[:, 2]] = 1.0
        labels = self.viterbi(scores, layout(spans, offsets), space=space, max_length=max_length).encoding
        first = np.zeros(mentions.shape[0], dtype=bool)
        first[np.unique(rows * scores.shape[1] + mentions[:, 2], return_index=True)[1]] = True
        return first & (labels[rows] == mentions[:, 2])


def _condition(scores, full: Layout, labels: np.ndarray, missing, rejected=None):
    """``NestedMentions.conditioned``."""
    missing = missing_mask(missing, full.offsets, "nested")
    rows = np.flatnonzero(labels >= 0)
    gold_touches_missing(full.spans[rows], missing, "nested")
    runs = runs_of(missing, full.offsets)
    free = np.flatnonzero(runs.inside(full.spans))
    indicator = np.zeros(np.shape(scores))
    indicator[rows, labels[rows]] = 1.0

    def expand(run_counts):
        counts = np.zeros(np.shape(scores))
        counts[free] = run_counts
        return counts

    run_layout = layout(runs.compact(full.spans[free]), runs.offsets)
    if rejected is not None:
        n_labels = np.shape(scores)[1]
        forbidden = forbidden_in_runs(rejected, full.spans, labels, missing, free, n_labels, 0, "nested")
        run_layout = replace(run_layout, forbidden=forbidden)
    return Conditioned(
        _mentions(labels, full),
        float(np.asarray(scores, dtype=np.float64)[rows, labels[rows]].sum()),
        np.asarray(scores)[free],
        run_layout,
        runs.tokens,
        indicator,
        expand,
    )


NESTED = NestedMentions()
