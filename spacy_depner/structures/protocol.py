"""One protocol for every structure (after pytorch-struct's ``_Struct`` and
supar's ``StructuredDistribution``): the same operations, the same argument
order (scores, then a ``Layout``, then keyword options) and the same results.

A structure is a family of analyses of a batch: the segmentations of a
lattice (``lattice``), the tag sequences of a linear chain (``chain``), the
nested mention sets of Corro's deduction systems (``nested``), the
sub-hypergraphs of Lu & Roth's mention hypergraph (``hypergraph``). Every
analysis reads as mentions (M, 3) [first, last, label] in batch coordinates,
labels from 0 (with heads (M, 5): and head_first, head_last).

Operations of ``Structure`` (``options`` are the structure's own, e.g. the
tag scheme, the nested space, the mention penalty):

* ``log_partition(scores, layout, **options)``: log Z (U,) of each unit.
* ``marginals(scores, layout, **options)``: ``Marginals``: log Z, the
  gradient of sum(log Z) with respect to each part of ``scores`` (same
  shapes), and the mention marginals on demand.
* ``viterbi(scores, layout, **options)``: the MAP ``Analysis``.
* ``posterior_decode(marginals, layout, *, penalty, **options)``: the
  ``Analysis`` of the structure's space with the largest sum over its
  mentions of (marginal - penalty) (``shared``), from ``marginals``.
* ``counts(encoding, scores, layout, **options)``: the indicator of an
  analysis (its ``encoding``) in the shape of ``scores``; its score is the
  inner product (``score``, plus what ``options`` add), so
  ``nll`` = log Z - score(gold) has gradient marginals - counts.
* ``entropy(scores, layout, marginals, **options)``: the entropy of the
  distribution over analyses, from the marginals.
* ``constrained(scores, layout, gold, missing, **options)``: the log-sum
  over units of the weights of the analyses that agree with a partial
  annotation (``partial``), and its gradient (the expected indicators under
  them); ``partial_nll`` = log Z - that, with gradient marginals - those.
* ``conditioned(scores, layout, gold, missing, **options)``: those agreeing
  analyses as a problem of their own (``partial.Conditioned``): the fixed
  gold mentions and the runs of missing tokens as units, on which every
  other operation (Viterbi, marginals, posterior decoding) is the
  conditional one; e.g. decoding given the entities a Doc already has.
"""

from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import interval_selection
from .score_range import SCORE_LENGTH_BOUND, derived_from_checked, entropy_rounding, score_length
from .shared import check_penalty

Scores = Union[np.ndarray, Tuple[np.ndarray, ...]]


@dataclass(frozen=True)
class Layout:
    """Where the scores of a batch sit, in batch token coordinates. Built by
    the family's constructor (``chain.layout(offsets)``,
    ``lattice.layout(spans, offsets)``, ``nested.layout(spans, offsets)``,
    ``hypergraph.layout(offsets)``), which sets the fields the family reads.

    offsets (U + 1,) int64: the independent units the structure decodes
        (documents, sentences or chains): tokens offsets[u]:offsets[u+1].
    spans (S, 2) int64 or None: [first, last] of each scored span, sorted by
        (last, first), each listed once (lattice and nested structures; the
        lattice refuses a span listed twice, which would count the analyses
        through it twice).
    span_offsets (U + 1,) or None: the spans of unit u (lattice).
    rows (S,) int64 or None: the dense row of each span, when the spans are
        a subset of all the spans of the units (nested; None: all of them).
    mask (n_dense,) bool or None: the dense rows that may be mentions (nested).
    forbidden (S, K) bool or None: the span labels no analysis may use
        (lattice and nested: rejected mentions, ``conditioned``'s ``rejected``).
    rejected (R, 3) int64 or None: mentions no analysis may hold, where that
        is no mask on scores (chain: a rejected entity is a pattern of tags).
    """

    offsets: np.ndarray
    spans: Optional[np.ndarray] = None
    span_offsets: Optional[np.ndarray] = None
    rows: Optional[np.ndarray] = None
    mask: Optional[np.ndarray] = None
    forbidden: Optional[np.ndarray] = None
    rejected: Optional[np.ndarray] = None

    @property
    def n_tokens(self) -> int:
        return int(self.offsets[-1])


class Analysis(NamedTuple):
    """One analysis per unit: score (U,) (its weight for ``viterbi``, its gain
    for ``posterior_decode``); mentions (M, 3) [first, last, label from 0]
    (M, 5 with heads), sorted as the structure gives them; encoding, the
    structure's own form of it (per-span labels, tags, hyperedges), what
    ``counts`` reads."""

    score: np.ndarray
    mentions: np.ndarray
    encoding: object


class Marginals:
    """The result of ``marginals``: ``log_z`` (U,), ``scores`` the gradient
    of sum(log Z) with respect to the scores (same parts and shapes), and two
    views of the mention marginals, computed on demand: ``mentions(floor)``
    every mention whose marginal exceeds ``floor`` (mentions (M, 3),
    marginals (M,)), and ``of(mentions)`` the marginal (M,) of given ones.
    ``log_z`` and ``scores`` may be given as functions of no argument, called
    once when first read (a structure whose ``of`` needs no gradient, e.g. in
    prediction, then never computes it)."""

    def __init__(
        self,
        log_z,
        scores,
        mentions: Callable[[float], Tuple[np.ndarray, np.ndarray]],
        of: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        self._log_z = log_z
        self._scores = scores
        self._mentions = mentions
        self._of = of

    @property
    def log_z(self) -> np.ndarray:
        if callable(self._log_z):
            self._log_z = self._log_z()
        return self._log_z

    @property
    def scores(self) -> Scores:
        if callable(self._scores):
            self._scores = self._scores()
        return self._scores

    def mentions(self, floor: float = -1.0) -> Tuple[np.ndarray, np.ndarray]:
        return self._mentions(floor)

    def of(self, mentions: np.ndarray) -> np.ndarray:
        return self._of(np.asarray(mentions, dtype=np.int64))


class Structure:
    """The protocol (module docstring). Subclasses write ``log_partition``,
    ``marginals``, ``viterbi``, ``posterior_decode`` and ``counts`` (and
    ``bias`` if options weigh an analysis); ``score`` and ``nll`` follow."""

    name = ""
    takes_rejected = False  # whether ``conditioned`` takes the option ``rejected``
    takes_accepted = False  # whether ``constrained`` takes ``accepted`` mentions (``accepted.held``)
    entropy_bound = SCORE_LENGTH_BOUND  # the largest |score| x length for which ``entropy`` is accurate (score_range)

    def entropy_rounding(self, score_length: float) -> float:
        """The rounding error of ``entropy`` beyond that of log Z, for the largest
        |score| x length ``score_length`` (score_range): none by default."""
        return 0.0

    def log_partition(self, scores: Scores, layout: Layout, **options) -> np.ndarray:
        raise NotImplementedError

    def marginals(self, scores: Scores, layout: Layout, **options) -> Marginals:
        raise NotImplementedError

    def viterbi(self, scores: Scores, layout: Layout, **options) -> Analysis:
        raise NotImplementedError

    def posterior_decode(self, marginals: Marginals, layout: Layout, *, penalty: float = 0.5, **options) -> Analysis:
        raise NotImplementedError

    def counts(self, encoding, scores: Scores, layout: Layout, **options) -> Scores:
        raise NotImplementedError

    def bias(self, encoding, layout: Layout, **options) -> float:
        """What ``options`` add to an analysis's weight beyond its scores (0 by
        default; the hypergraph's mention penalty)."""
        return 0.0

    def score(self, scores: Scores, layout: Layout, encoding, **options) -> float:
        """The total weight of the batch's analysis ``encoding``: the inner
        product of the scores with its ``counts``, plus its ``bias``."""
        return inner_product(scores, self.counts(encoding, scores, layout, **options)) + self.bias(
            encoding, layout, **options
        )

    def nll(self, scores: Scores, layout: Layout, gold, **options) -> Tuple[float, Scores]:
        """Negative log-likelihood of the analysis ``gold`` (an encoding) and its
        gradient with respect to ``scores``: (sum(log Z) - score(gold),
        marginals - counts(gold)), float64, in the parts of ``scores``."""
        marginals = self.marginals(scores, layout, **options)
        counts = self.counts(gold, scores, layout, **options)
        loss = float(marginals.log_z.sum()) - inner_product(scores, counts) - self.bias(gold, layout, **options)
        gradient = tuple(m - c for m, c in zip(_parts(marginals.scores), _parts(counts)))
        return loss, gradient if isinstance(scores, tuple) else gradient[0]

    def entropy(self, scores: Scores, layout: Layout, marginals: Optional[Marginals] = None, **options) -> float:
        """The entropy of the distribution over the analyses of the batch (the
        sum over its units): sum(log Z) - E[weight], where E[weight] is the
        inner product of the scores with the marginals plus the ``bias`` of the
        expected indicator (``bias`` is linear in it). ``marginals``: those of
        ``scores``, if computed already. Over the analyses of the structure (the
        hypergraph's analyses are sub-hypergraphs, several of which may read
        as one mention set). Exact to the bound of ``score_range`` (its
        ``entropy_rounding`` plus the structure's) and never negative; ValueError
        for |score| x length above ``entropy_bound``."""
        if marginals is None:
            marginals = self.marginals(scores, layout, **options)
        log_z = marginals.log_z
        weights = [v for v in options.values() if isinstance(v, float)]  # the numbers that weigh an analysis
        x = score_length(f"{self.name}.entropy", layout.offsets, self.entropy_bound, *_parts(scores), *weights)
        rounding = entropy_rounding(log_z, x) + self.entropy_rounding(x)
        expected = marginals.scores
        entropy = float(log_z.sum()) - inner_product(scores, expected) - self.bias(expected, layout, **options)
        return 0.0 if -rounding <= entropy < 0.0 else entropy

    def constrained(
        self, scores: Scores, layout: Layout, gold, missing: np.ndarray, rejected=None, accepted=None, **options
    ) -> Tuple[float, Scores]:
        """The sum over units of log Z over the analyses that agree with the
        partial annotation (``gold``, an encoding, and ``missing`` (N,) bool:
        ``partial``), contain none of the ``rejected`` mentions (R, 3) and all
        of the ``accepted`` mentions (A, 3) (None: none; on missing tokens, in
        a structure that takes them: ``takes_accepted``), and its gradient
        with respect to ``scores`` (the expected indicator of those
        analyses), float64: from ``conditioned``, the gold part's weight plus
        the runs' log Z, the gold part's indicator plus the runs' marginals
        moved back (``Conditioned.expected_counts``); with accepted mentions
        the runs' sums over the analyses holding them (``accepted.held``).
        The range of the scores is that of ``log_partition`` (``score_range``:
        the runs' folded border scores are not checked against it again)."""
        weights = [v for v in options.values() if isinstance(v, float)]  # the numbers that weigh an analysis
        score_length(f"{self.name}.constrained", layout.offsets, SCORE_LENGTH_BOUND, *_parts(scores), *weights)
        conditioned = self.conditioned(scores, layout, gold, missing, **self._with_rejected(rejected, options))
        with derived_from_checked():  # the runs' folded scores share the given scores' range (score_range)
            return self._constrained_runs(conditioned, missing, accepted, options)

    def _constrained_runs(self, conditioned, missing: np.ndarray, accepted, options: dict) -> Tuple[float, Scores]:
        """``constrained`` from ``conditioned``: the gold part's weight plus the runs' log Z (or their sums
        over the analyses holding the ``accepted`` mentions), and the expected indicator."""
        if accepted is not None and np.asarray(accepted).size:
            from .accepted import held, in_runs

            if not self.takes_accepted:
                raise ValueError(
                    f"the {self.name} structure takes no accepted mentions: give an accepted mention as gold on "
                    "annotated tokens (its own), every other token missing"
                )
            compact = in_runs(accepted, conditioned, missing, self.name)
            log_z, counts = held(self, conditioned.scores, conditioned.layout, compact, options)
            return conditioned.fixed_score + float(log_z.sum()), conditioned.expected_counts(counts)
        if not conditioned.tokens.shape[0]:
            return conditioned.fixed_score, conditioned.expected_counts(None)
        marginals = self.marginals(conditioned.scores, conditioned.layout, **options)
        return (conditioned.fixed_score + float(marginals.log_z.sum()), conditioned.expected_counts(marginals.scores))

    def conditioned(self, scores: Scores, layout: Layout, gold, missing: np.ndarray, **options):
        """The analyses that agree with the partial annotation (``gold``, an
        encoding; ``missing`` (N,) bool), and contain no mention of the option
        ``rejected`` (R, 3) [first, last, label] where the structure takes it
        (``partial.rejected_mentions``), as a problem of their own:
        ``partial.Conditioned``."""
        raise NotImplementedError(f"the {self.name} structure cannot learn from partial annotation or decode given one")

    def _with_rejected(self, rejected, options: dict) -> dict:
        """``options`` with ``rejected`` when there are rejected mentions, for a
        structure that takes them (``takes_rejected``); a ValueError for one that does not."""
        if rejected is None or np.asarray(rejected).size == 0:
            return options
        if not self.takes_rejected:
            raise ValueError(
                f"the {self.name} structure cannot learn from rejected mentions: train on the reviewed regions "
                "only (drop the incorrect_spans_key group), or use a component on the segment lattice (dgm_ner)"
            )
        return {**options, "rejected": rejected}

    def partial_nll(
        self, scores: Scores, layout: Layout, gold, missing: np.ndarray, rejected=None, accepted=None, **options
    ) -> Tuple[float, Scores]:
        """Negative log-probability of the analyses that agree with a partial
        annotation, avoid the ``rejected`` mentions and hold the ``accepted``
        ones (``constrained``): sum(log Z) - constrained log Z, and its
        gradient marginals - their expected indicators. With nothing missing,
        rejected or accepted, ``nll``."""
        marginals = self.marginals(scores, layout, **options)
        log_z, expected = self.constrained(scores, layout, gold, missing, rejected, accepted, **options)
        gradient = tuple(m - e for m, e in zip(_parts(marginals.scores), _parts(expected)))
        return float(marginals.log_z.sum()) - log_z, gradient if isinstance(scores, tuple) else gradient[0]


def inner_product(scores: Scores, counts: Scores) -> float:
    """sum over the parts of (scores * counts), in float64."""
    return float(sum((np.asarray(s, dtype=np.float64) * c).sum() for s, c in zip(_parts(scores), _parts(counts))))


def _parts(scores: Scores) -> Tuple[np.ndarray, ...]:
    return scores if isinstance(scores, tuple) else (scores,)


def lookup(mentions: np.ndarray, every: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The value (M,) of each of ``mentions`` (M, 3) among ``every`` (E, 3)
    with ``values`` (E,), 0 for a mention not there."""
    mentions = np.asarray(mentions, dtype=np.int64).reshape(-1, 3)
    every = np.asarray(every, dtype=np.int64)[:, :3].reshape(-1, 3)
    if every.shape[0] == 0 or mentions.shape[0] == 0:
        return np.zeros(mentions.shape[0])
    top = int(max(every.max(), mentions.max())) + 1
    keys = (every[:, 0] * top + every[:, 1]) * top + every[:, 2]
    queries = (mentions[:, 0] * top + mentions[:, 1]) * top + mentions[:, 2]
    order = np.argsort(keys)
    position = np.minimum(np.searchsorted(keys[order], queries), keys.shape[0] - 1)
    return np.where(keys[order][position] == queries, np.asarray(values)[order][position], 0.0)


def select_disjoint(mentions: np.ndarray, marginals: np.ndarray, offsets: np.ndarray, penalty: float) -> Analysis:
    """The posterior analysis of a flat structure, whose space holds every set
    of disjoint mentions: the disjoint subset of ``mentions`` (M, 3) with the
    largest sum of (marginal - ``penalty``), ties to the lower label
    (``interval_selection.most_probable``). Returns the Analysis (gain (U,),
    chosen mentions sorted by first token, their rows in ``mentions`` as the
    encoding)."""
    penalty = check_penalty(penalty)
    candidates = np.flatnonzero(marginals - penalty > 0)
    kept = interval_selection.most_probable(
        mentions[candidates, :2], marginals[candidates] - penalty, mentions[candidates, 2]
    )
    chosen = candidates[kept]
    chosen = chosen[np.argsort(mentions[chosen, 0], kind="stable")]
    gain = np.zeros(offsets.shape[0] - 1)
    np.add.at(gain, np.searchsorted(offsets, mentions[chosen, 0], side="right") - 1, marginals[chosen] - penalty)
    return Analysis(gain, mentions[chosen], chosen)
